"""What one iteration of a training loop does to gradients, followed into the helpers it calls.

:func:`loop_events` lists the backward passes, optimizer steps and gradient clears under a loop, also
those inside functions the loop calls (in the same file, methods through ``self``, or functions of the
project's modules, :data:`HELPER_DEPTH` calls deep).  Each event names the optimizer in the loop's terms
(a helper's parameter is mapped to the argument the loop passes), so a rule can pair every step with
the clear of *its* optimizer.  Optimizer objects are read by construction: a
``torch.distributed.optim.DistributedOptimizer`` keeps gradients in the distributed autograd context
(nothing to clear), and a hand-written optimizer class is read for a ``zero_grad`` method or a ``step``
that clears ``p.grad`` itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

import libcst as cst

from torchlint.analysis import effects
from torchlint.analysis.context import FileContext, arg, receiver
from torchlint.analysis.names import dotted_name
from torchlint.analysis.definitions import called_function, class_body, definition_of, position
from torchlint.analysis.training import (
    is_backward,
    is_grad_clear_assign,
    is_grad_clear_call,
    object_kind,
    optimizer_of_step,
)

HELPER_DEPTH = 2

BACKWARD = "backward"
STEP = "step"
CLEAR = "clear"

_DISTRIBUTED = ("torch.distributed.optim.DistributedOptimizer", "torch.distributed.optim.optimizer.DistributedOptimizer")


@dataclass
class LoopEvent:
    kind: str
    call: cst.CSTNode  # the call (or assignment) itself, maybe in a helper or another file
    where: cst.CSTNode  # the node in the loop that runs it: the call itself, or the helper call
    #: the optimizer, as the loop's code spells it (None: unknown, or any)
    optimizer: Optional[str] = None
    expr: Optional[cst.BaseExpression] = None  # the optimizer expression, for direct steps
    has_zero_grad: bool = True
    clears_itself: bool = False
    no_clearing: bool = False


def _map(fctx: FileContext, expr: cst.BaseExpression, mapping: Optional[Dict[str, Optional[str]]]) -> Optional[str]:
    code = dotted_name(expr)
    if code is None:
        return fctx.code(expr) if mapping is None else None
    if mapping is None:
        return code
    root, _, rest = code.partition(".")
    if root in mapping:
        base = mapping[root]
        if base is None:
            return None
        return base + ("." + rest if rest else "")
    return code


def _helper_mapping(fctx: FileContext, call: cst.Call, function: cst.FunctionDef, offset: int,
                    mapping: Optional[Dict[str, Optional[str]]]) -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {}
    params = list(function.params.posonly_params) + list(function.params.params)
    for i, p in enumerate(params):
        if i < offset:
            continue
        a = arg(call, i - offset, p.name.value)
        out[p.name.value] = _map(fctx, a.value, mapping) if a is not None else None
    for p in function.params.kwonly_params:
        a = arg(call, 10_000, p.name.value)
        out[p.name.value] = _map(fctx, a.value, mapping) if a is not None else None
    return out


def optimizer_facts(fctx: FileContext, opt: cst.BaseExpression) -> Dict[str, bool]:
    """has_zero_grad / clears_itself / no_clearing for the object ``opt``, from how it was built."""
    facts = {"has_zero_grad": True, "clears_itself": False, "no_clearing": False}
    for value in fctx.names.values_at(opt):
        if not isinstance(value, cst.Call):
            continue
        names = fctx.names.qualified_names_at(value.func)
        if any(q in _DISTRIBUTED or q.endswith(".DistributedOptimizer") and q.startswith("torch.") for q in names):
            facts["no_clearing"] = True
            continue
        found = definition_of(fctx, value.func)
        if found is None or not isinstance(found[1], cst.ClassDef):
            continue
        cctx, cls = found
        if _derives_from_torch_optimizer(cctx, cls):
            continue
        methods = {s.name.value: s for s in class_body(cls) if isinstance(s, cst.FunctionDef)}
        if "zero_grad" in methods:
            continue
        facts["has_zero_grad"] = False
        step = methods.get("step")
        if step is not None and (
            any(is_grad_clear_assign(a) for a in cctx.contents(step).assigns)
            or any(is_grad_clear_call(c) for c in cctx.calls_in(step))
        ):
            facts["clears_itself"] = True
    return facts


def _derives_from_torch_optimizer(fctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    for base in cls.bases:
        names = fctx.names.qualified_names_at(base.value)
        if any(q.startswith("torch.optim") for q in names):
            return True
        found = definition_of(fctx, base.value)
        if found is not None and isinstance(found[1], cst.ClassDef) and depth < 4:
            if _derives_from_torch_optimizer(found[0], found[1], depth + 1):
                return True
        if not names and found is None:
            return True  # an unknown base: it may well be an optimizer with `zero_grad`
    return False


#: every event of a loop spells one of these: `backward`, an optimizer's `step`, a gradient cleared
#: (`zero_grad`, `.grad = None`, `p.grad.zero_()`, helpers named for clearing gradients)
_EVENT_WORDS = ("backward", "step", "grad", "Grad", "GRAD")


def loop_events(ctx: FileContext, loop: cst.CSTNode, depth: int = HELPER_DEPTH) -> List[LoopEvent]:
    out: List[LoopEvent] = []
    seen: Set[cst.CSTNode] = {loop}

    def visit(fctx: FileContext, node: cst.CSTNode, via: Optional[cst.CSTNode],
              mapping: Optional[Dict[str, Optional[str]]], d: int) -> None:
        contents = fctx.contents(node)
        for a in contents.assigns:
            if is_grad_clear_assign(a):
                out.append(LoopEvent(CLEAR, a, via or a))
        for call in contents.calls:
            where = via or call
            if is_backward(fctx, call):
                out.append(LoopEvent(BACKWARD, call, where))
            opt = optimizer_of_step(fctx, call)
            if opt is not None:
                facts = optimizer_facts(fctx, opt)
                out.append(LoopEvent(STEP, call, where, _map(fctx, opt, mapping), opt if via is None else None,
                                     **facts))
                continue
            if is_grad_clear_call(call):
                recv = receiver(call)
                code = None
                if recv is not None and object_kind(fctx, recv) == "optimizer" and getattr(
                    call.func, "attr", None
                ) is not None and call.func.attr.value == "zero_grad":  # type: ignore[attr-defined]
                    code = _map(fctx, recv, mapping)
                out.append(LoopEvent(CLEAR, call, where, code))
                continue
            if d <= 0:
                continue
            # a helper whose own calls are not followed (the last level) adds events only if its module
            # spells one of them: another module is not read otherwise
            target = called_function(fctx, call, _EVENT_WORDS if d == 1 else ())
            if target is None:
                continue
            tctx, function, offset = target
            if function in seen:
                continue
            seen.add(function)
            visit(tctx, function, where, _helper_mapping(fctx, call, function, offset, mapping), d - 1)

    visit(ctx, loop, None, None, depth)
    return out


def exclusive_branches(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """Whether ``a`` and ``b`` sit in different branches of one ``if`` (only one of them runs)."""
    chain = {}
    prev: cst.CSTNode = a
    for anc in ctx.ancestors(a):
        chain[id(anc)] = prev
        prev = anc
    prev = b
    for anc in ctx.ancestors(b):
        if id(anc) in chain:
            if isinstance(anc, cst.If):
                from_a, from_b = chain[id(anc)], prev
                in_body_a = from_a is anc.body
                in_body_b = prev is anc.body
                in_test = from_a is anc.test or from_b is anc.test  # the test runs before either branch
                return from_a is not from_b and (in_body_a or in_body_b) and not in_test
            return False
        prev = anc
    return False


def source_before(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    return position(ctx, a) < position(ctx, b)


def cleared_modules(ctx: FileContext, optimizer: cst.BaseExpression) -> Optional[Set[str]]:
    """The modules whose parameters the optimizer ``optimizer`` (a name, or ``self.<attr>`` set in the
    constructor) was built over, as this file spells them (``{"self.G", "self.D"}`` for
    ``Adam(chain(self.G.parameters(), self.D.parameters()))``): what its ``zero_grad()`` clears, and what
    a step of it applies.  None when any construction of it, or any of its parameter sources, is unknown."""
    values: List[cst.BaseExpression]
    found = effects.self_attr(ctx, optimizer)
    if found is not None:
        try:
            values = effects.self_values(ctx, found[0], found[1])
        except effects.Unknown:
            return None
    elif isinstance(optimizer, cst.Name):
        value = ctx.names.sole_value(optimizer)
        values = [value] if value is not None else []
    else:
        return None
    out: Set[str] = set()
    for v in values:
        if not isinstance(v, cst.Call) or not effects.is_optimizer(ctx, v):
            return None
        first = arg(v, 0, "params")
        if first is None:
            return None
        try:
            sources = effects.parameter_sources(ctx, first.value)
            for group in effects.added_groups(ctx, optimizer):
                sources += effects.parameter_sources(ctx, group)
        except effects.Unknown:
            return None
        if not sources:
            return None
        out.update(ctx.code(src) for src in sources)
    return out or None


__all__ = [
    "BACKWARD",
    "CLEAR",
    "HELPER_DEPTH",
    "LoopEvent",
    "STEP",
    "cleared_modules",
    "exclusive_branches",
    "loop_events",
    "optimizer_facts",
    "source_before",
]
