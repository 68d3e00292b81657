"""What reaches a loss, and the findings of a softmax or sigmoid output given to a loss that applies its
own: the numerics family's reading of the program model.

- :func:`loss_inputs`: every input of a cross-entropy or binary cross-entropy call of the file whose
  kind (softmax, log-softmax, sigmoid) is known, directly or through a loss helper's parameter
  (:func:`loss_params`), in this file or a project module;
- :func:`call_findings`: the loss calls whose input is a model's or helper's output of the wrong kind,
  followed through calls (:func:`~torchlint.analysis.values.value_fact`,
  :func:`~torchlint.analysis.values.loss_fact`) at most :data:`MAX_FOLLOWED_CALLS` calls per file, each
  with the message pieces saying where the output and the loss come from (:class:`LossFinding`).

Queries are made once the file's walk is done (``leave_Module``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg, assignment_targets
from torchlint.analysis.definitions import (
    argument_for,
    bind_arguments,
    called_function,
    class_body,
    definition_of,
    find_method,
    local_definition,
    maybe_project_function,
)
from torchlint.analysis.ops import BCE_FUNCS, BCE_LAYERS, CROSS_ENTROPY_FUNCS, CROSS_ENTROPY_LAYERS
from torchlint.analysis.roles import Kind, LOG_SOFTMAX, SIGMOID, SOFTMAX, module_class, output_kind
from torchlint.analysis.values import (
    At,
    Evidence,
    Frame,
    MAX_CALL_DEPTH,
    NLL,
    Why,
    argument_fact,
    is_attribute,
    loss_fact,
    open_frame,
    project_function,
    render,
    self_name,
    subclass_frames,
    value_fact,
)
from torchlint.analysis.walk import iter_nodes

#: function -> its parameters that reach a loss (see :func:`loss_params`)
_LOSS_PARAMS: Fact[Dict[cst.FunctionDef, Dict[int, Tuple[str, str]]]] = Fact("numerics.loss_params", lambda ctx: {})
#: see :func:`loss_inputs`
_LOSS_INPUTS: "Fact[List[LossInput]]" = Fact("numerics.loss_inputs")


# -- loss helpers ---------------------------------------------------------------------------------
def loss_kind(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """"ce" for a cross-entropy call, "bce" for a (probability) binary cross-entropy call."""
    names = ctx.names.qualified_names_at(call.func)
    if names & CROSS_ENTROPY_FUNCS:
        return "ce"
    if names & BCE_FUNCS:
        return "bce"
    if isinstance(call.func, cst.Name):  # the constructions that may reach the call
        built = set(ctx.names.instance_of(call.func))
    else:
        built = set()
        for v in ctx.names.values_at(call.func) if not isinstance(call.func, cst.Call) else [call.func]:
            if isinstance(v, cst.Call):
                built |= ctx.names.qualified_names_at(v.func)
    if built & CROSS_ENTROPY_LAYERS:
        return "ce"
    if built & BCE_LAYERS:
        return "bce"
    return None


def loss_params(ctx: FileContext, function: cst.FunctionDef) -> Dict[int, Tuple[str, str]]:
    """Positional index -> (loss kind, parameter name) for the parameters of ``function`` that are passed
    as the input of a cross-entropy or binary cross-entropy in its body (and never reassigned)."""
    cache = _LOSS_PARAMS.of(ctx)
    if function in cache:
        return cache[function]
    out: Dict[int, Tuple[str, str]] = {}
    params = list(function.params.posonly_params) + list(function.params.params)
    names = {p.name.value: i for i, p in enumerate(params)}
    reassigned = set()
    for a in ctx.contents(function).assigns:
        for t in assignment_targets(a):
            reassigned.update(n.value for n in iter_nodes(t) if isinstance(n, cst.Name))
    for call in ctx.calls_in(function):
        kind = loss_kind(ctx, call)
        if kind is None:
            continue
        first = arg(call, 0, "input")
        if first is not None and isinstance(first.value, cst.Name):
            n = first.value.value
            if n in names and n not in reassigned:
                out[names[n]] = (kind, n)
    cache[function] = out
    return out


@dataclass(frozen=True)
class LossInput:
    """A value given to a loss: ``node`` is the input expression (or the argument of a loss helper),
    ``kind`` what it is (softmax, sigmoid, ...), ``loss`` "ce" or "bce", ``helper`` the helper's name when
    the loss is computed inside a function the value is passed to."""

    node: cst.BaseExpression
    kind: Kind
    loss: str
    helper: Optional[str] = None


def loss_inputs(ctx: FileContext) -> List[LossInput]:
    """Every loss input of the file whose kind is known: direct inputs of cross-entropy / binary
    cross-entropy calls, and arguments passed to a helper (same file or a project module) whose parameter
    reaches such a call.  Computed once per file, after the walk."""
    found = _LOSS_INPUTS.get(ctx)
    if found is not None:
        return found
    found = []
    for call in ctx.calls_in(ctx.module):
        loss = loss_kind(ctx, call)
        if loss is not None:
            first = arg(call, 0, "input")
            if first is not None:
                kind = output_kind(ctx, first.value)
                if kind is not None:
                    found.append(LossInput(first.value, kind, loss))
            continue
        if not call.args or not maybe_project_function(ctx, call.func):
            continue
        # the kinds of the arguments first: most calls pass nothing known, and then the called
        # function (maybe in another file) is never looked up
        kinds = {}
        for a in call.args:
            if a.star or not isinstance(a.value, (cst.Name, cst.Call, cst.Subscript)):
                continue
            kind = output_kind(ctx, a.value)
            if kind in (SOFTMAX, SIGMOID, LOG_SOFTMAX):
                kinds[id(a)] = kind
        if not kinds:
            continue
        target = called_function(ctx, call)
        if target is None:
            continue
        fctx, function, offset = target
        for index, (loss, pname) in sorted(loss_params(fctx, function).items()):
            if index < offset:
                continue
            a = argument_for(call, index, pname, offset)
            if a is not None and id(a) in kinds:
                found.append(LossInput(a.value, kinds[id(a)], loss, function.name.value))
    _LOSS_INPUTS.put(ctx, found)
    return found


#: how many calls of one file are followed into project functions for the loss rules
MAX_FOLLOWED_CALLS = 200
#: loss -> the kinds of input that are the bug (a sigmoid before cross-entropy is the softmax mistake
#: with the wrong squashing: the loss applies log-softmax to values in (0, 1))
MISMATCH = {"ce": (SOFTMAX, SIGMOID), "bce": (SIGMOID,), NLL: (SOFTMAX,)}


@dataclass(frozen=True)
class LossFinding:
    """A loss given the wrong kind of input, decided through calls: ``node`` is where it is reported
    (in the file asked about), ``loss`` and ``kind`` as in :class:`LossInput`, ``why`` the evidence."""

    node: cst.CSTNode
    kind: str
    loss: str
    why: Why

    @property
    def message(self) -> str:
        return render(self.why)


def _loss_mismatch(frame: Frame, call: cst.Call, loss: Optional[Tuple[str, Why]] = None
                   ) -> Optional[Tuple[str, Evidence, Why]]:
    loss = loss or loss_fact(frame, call)
    if loss is None:
        return None
    first = arg(call, 0, "input")
    if first is None:
        return None
    fact = value_fact(frame, first.value)
    if fact is None or fact.kind not in MISMATCH[loss[0]]:
        return None
    return loss[0], fact, loss[1]


def _loss_calls(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """The calls in ``function`` that may compute a loss or call another function (cheap, by shape)."""
    return [c for c in ctx.calls_in(function) if c.args]


_LOSS_WORD = {"ce": "cross-entropy", "bce": "binary cross-entropy", NLL: "NLL loss"}


def _describe(loss: str, fact: Evidence, how: Why, helpers: List[str], at: Optional[At] = None) -> Why:
    through: Why = ()
    if helpers:
        through = (" through " + " then ".join(f"`{h}`" for h in helpers),)
        if at is not None:
            through = (*through, " (the loss at ", at, ")")
    return (*fact.why, f"; it reaches {_LOSS_WORD[loss]}", *((" ",) + tuple(how) if how else ()), *through)


def _label(frame: Frame) -> str:
    name = frame.function.name.value if frame.function is not None else "?"
    return f"{frame.cls[1].name.value}.{name}" if frame.cls is not None else name


def _search(frame: Frame, found: List[Tuple[str, Evidence, Why, List[str], At]], helpers: List[str],
            budget: List[int]) -> None:
    """The loss calls of ``frame``'s function (and of the project functions it calls, bound in turn)
    that get the wrong kind of input with ``frame``'s bindings but not in an open frame."""
    if budget[0] <= 0 or frame.function is None:
        return
    budget[0] -= 1
    ctx = frame.ctx
    for call in _loss_calls(ctx, frame.function):
        mismatch = _loss_mismatch(frame, call)
        if mismatch is not None:
            if _loss_mismatch(open_frame(ctx, call), call) is None:
                found.append((mismatch[0], mismatch[1], mismatch[2], helpers, At(ctx, call)))
            continue
        imported_name = isinstance(call.func, cst.Name) and ctx.names.qualified_names_at(call.func)
        if frame.depth < MAX_CALL_DEPTH and not imported_name:
            inner = project_function(frame, call)
            if inner is not None and inner.function is not frame.function:
                _search(inner, found, helpers + [_label(inner)], budget)


def call_findings(ctx: FileContext) -> List[LossFinding]:
    """Losses given the wrong input where the evidence comes through calls, for this file, after the
    walk: a model, criterion or probability passed as an argument to a project function (followed
    :data:`MAX_CALL_DEPTH` calls deep, with each call's own arguments: a helper called with two models is
    judged per call), a parameter known by its default (``criterion=nn.CrossEntropyLoss()``) or its
    annotation (``model: Net``), ``self.<attr>`` set in the class or a base, and a base class's method
    calling ``self`` where a subclass in the file returns probabilities from ``forward``."""
    cached = _CALL_FINDINGS.get(ctx)
    if cached is not None:
        return cached
    out: List[LossFinding] = []
    seen: Set[int] = set()
    reached: Set[int] = set()  # the values (a model built in a constructor call) findings came from
    budget = [MAX_FOLLOWED_CALLS]
    for call in ctx.calls_in(ctx.module):
        if not call.args:
            continue
        frame = open_frame(ctx, call)
        # in the function itself: defaults, annotations, `self`
        loss = loss_fact(frame, call)
        mismatch = _loss_mismatch(frame, call, loss) if loss is not None else None
        if mismatch is not None:
            loss, fact, how = mismatch
            first = arg(call, 0, "input")
            node = first.value if first is not None else call
            if id(node) not in seen:
                seen.add(id(node))
                out.append(LossFinding(node, fact.kind, loss, _describe(loss, fact, how, [])))
            continue
        if loss is not None:
            for sub in subclass_frames(ctx, frame):
                mismatch = _loss_mismatch(sub, call)
                if mismatch is not None:
                    loss, fact, how = mismatch
                    first = arg(call, 0, "input")
                    node = first.value if first is not None else call
                    if id(node) not in seen:
                        seen.add(id(node))
                        why = (*_describe(loss, fact, how, []), f" when `self` is a `{sub.cls[1].name.value}`")
                        out.append(LossFinding(node, fact.kind, loss, why))
                    break
            continue
        if budget[0] <= 0:
            continue
        func = call.func
        on_self = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name(
            frame)
        if on_self:
            if frame.cls is None or is_attribute(frame.cls[0], frame.cls[1], func.attr.value):
                continue  # `self.conv(x)`: a submodule, not a method
            # through a call: only when an argument carries a fact (most calls pass nothing known)
            if not any(argument_fact(frame, a.value) for a in call.args if not a.star):
                continue
            if find_method(frame.cls[0], frame.cls[1], func.attr.value) is None:
                continue
        elif isinstance(func, cst.Name) and not ctx.names.qualified_names_at(func):
            local = local_definition(ctx, func.value, func)
            if local is None or not isinstance(local[1], cst.FunctionDef):
                continue  # a class built, or no function of this file
            if not any(argument_fact(frame, a.value) for a in call.args if not a.star):
                continue
        elif maybe_project_function(ctx, call.func):
            if not any(argument_fact(frame, a.value) for a in call.args if not a.star):
                continue
        elif not isinstance(call.func, cst.Attribute) or not isinstance(call.func.value, cst.Name):
            continue
        inner = project_function(frame, call)
        if inner is None or inner.function is None:
            continue
        found: List[Tuple[str, Evidence, Why, List[str], At]] = []
        _search(inner, found, [_label(inner)], budget)
        for loss, fact, how, helpers, at in found:
            node = fact.origin if fact.origin is not None and _inside(ctx, fact.origin, call) else call
            if fact.origin is not None:
                reached.add(id(fact.origin))
            if id(node) in seen:
                continue
            seen.add(id(node))
            out.append(LossFinding(node, fact.kind, loss, _describe(loss, fact, how, helpers, at)))
    _constructed_findings(ctx, out, seen | reached, budget)
    _CALL_FINDINGS.put(ctx, out)
    return out


def _constructed_findings(ctx: FileContext, out: List["LossFinding"], seen: Set[int], budget: List[int]) -> None:
    """An object built from a project class (``Trainer(Net())``) whose methods give what the constructor
    received to a loss: each method is judged with ``self`` bound to that construction, whether or not
    this file calls it (a trainer built here may be run from another file, or through ``fit``). Reported
    at the constructor's argument, unless a call of a method already reported that argument."""
    for call in ctx.calls_in(ctx.module):
        if budget[0] <= 0:
            return
        if not call.args or not maybe_project_function(ctx, call.func):
            continue
        frame = open_frame(ctx, call)
        if not any(argument_fact(frame, a.value) for a in call.args if not a.star):
            continue
        d = definition_of(ctx, call.func)
        if d is None or not isinstance(d[1], cst.ClassDef) or module_class(d[0], d[1]):
            continue  # a function, or a model class (its own methods are judged where they are defined)
        found_init = find_method(d[0], d[1], "__init__")
        if found_init is None:
            continue
        bound = bind_arguments(call, found_init[1], 1)
        if bound is None:
            continue
        init = Frame(found_init[0], found_init[1], bound, frame, call, d, frame.depth + 1)
        for stmt in class_body(d[1]):
            if not isinstance(stmt, cst.FunctionDef) or stmt.name.value == "__init__" or budget[0] <= 0:
                continue
            method = Frame(d[0], stmt, {}, frame, call, d, frame.depth + 1, init)
            found: List[Tuple[str, Evidence, Why, List[str], At]] = []
            _search(method, found, [_label(method)], budget)
            for loss, fact, how, helpers, at in found:
                if fact.origin is None or not _inside(ctx, fact.origin, call):
                    continue
                node = fact.origin
                if id(node) in seen:
                    continue
                seen.add(id(node))
                why = (*_describe(loss, fact, how, helpers, at), f" when `{d[1].name.value}` is built here")
                out.append(LossFinding(node, fact.kind, loss, why))


_CALL_FINDINGS: "Fact[List[LossFinding]]" = Fact("numerics.call_findings")


def _inside(ctx: FileContext, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return node is container or ctx.is_inside(node, container)


__all__ = [
    "LossFinding",
    "LossInput",
    "MAX_FOLLOWED_CALLS",
    "call_findings",
    "loss_inputs",
    "loss_kind",
    "loss_params",
]
