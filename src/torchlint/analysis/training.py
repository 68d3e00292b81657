"""What the training-loop rules share: which calls are a backward pass, an optimizer step, a scheduler
step, a gradient reset; what kind of object a receiver is; whether code runs under ``no_grad``.

The heuristics here lean towards silence: an object counts as an optimizer when it was built by
``torch.optim.*`` in view of the rule, or when its name says so (``opt``, ``optimizer``, ``d_optim``);
``env.step()``, ``engine.step()`` (DeepSpeed) or ``trainer.step()`` are not optimizer steps.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Sequence

import libcst as cst

from torchlint.analysis.context import FileContext, arg, method_name, receiver
from torchlint.analysis.names import dotted_name

LOOP_TYPES = (cst.For, cst.While)

_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?($|_)|optimi[sz]er", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"sched|lr_?policy|warmup", re.IGNORECASE)
_SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
_CLEAR_HELPER = re.compile(r"zero_grad|(clear|reset|zero)_?grad|grads?_?(clear|reset|zero)", re.IGNORECASE)

NO_GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})


def object_kind(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """"optimizer", "scheduler", "scaler" or None for the object ``expr`` names."""
    if expr is None:
        return None
    for q in sorted(ctx.names.instance_of(expr)):
        if q.startswith("torch.optim.lr_scheduler.") or ".lr_scheduler." in q:
            return "scheduler"
        if q.startswith("torch.optim.") or q.startswith("torch.optim"):
            return "optimizer"
        if q.endswith("GradScaler"):
            return "scaler"
    name = dotted_name(expr)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    if _SCHEDULER_NAME.search(last):
        return "scheduler"
    if _SCALER_NAME.search(last):
        return "scaler"
    if _OPTIMIZER_NAME.search(last):
        return "optimizer"
    return None


def is_backward(ctx: FileContext, call: cst.Call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``torch.autograd.backward(loss)``."""
    if method_name(call) == "backward":
        return True
    return ctx.names.matches(call.func, ("torch.autograd.backward",))


def optimizer_of_step(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """For an optimizer step (``opt.step()``, ``scaler.step(opt)``) the optimizer expression, else None."""
    if method_name(call) != "step":
        return None
    recv = receiver(call)
    kind = object_kind(ctx, recv)
    if kind == "optimizer":
        return recv
    if kind == "scaler":
        first = arg(call, 0, "optimizer")
        return first.value if first is not None else None
    return None


def is_scheduler_step(ctx: FileContext, call: cst.Call) -> bool:
    return method_name(call) == "step" and object_kind(ctx, receiver(call)) == "scheduler"


def is_grad_clear_call(call: cst.Call) -> bool:
    """``opt.zero_grad()``, ``model.zero_grad(set_to_none=True)``, ``p.grad.zero_()``, helpers named so."""
    name = method_name(call)
    if name is None and isinstance(call.func, cst.Name):
        name = call.func.value
    if name is None:
        return False
    if name == "zero_grad" or _CLEAR_HELPER.search(name):
        return True
    if name in ("zero_", "detach_", "fill_"):
        recv = receiver(call)
        while isinstance(recv, cst.Attribute) and recv.attr.value == "data":
            recv = recv.value
        return isinstance(recv, cst.Attribute) and recv.attr.value == "grad"
    return False


def is_grad_clear_assign(node: cst.CSTNode) -> bool:
    """``p.grad = None`` (or any assignment to a ``.grad`` attribute)."""
    if isinstance(node, cst.Assign):
        return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets)
    return False


def clears_gradients(ctx: FileContext, node: cst.CSTNode, depth: int = 2) -> bool:
    """Whether ``node`` clears gradients, directly or in a same-module helper it calls."""
    contents = ctx.contents(node)
    if any(is_grad_clear_assign(a) for a in contents.assigns):
        return True
    for call in contents.calls:
        if is_grad_clear_call(call):
            return True
    if depth > 0:
        for call in contents.calls:
            target = ctx.function_for_call(call)
            if target is not None and target is not node and clears_gradients(ctx, target, depth - 1):
                return True
    return False


def innermost_loop(ctx: FileContext, node: cst.CSTNode, stop: Optional[cst.CSTNode] = None) -> Optional[cst.CSTNode]:
    """The nearest enclosing for/while loop of ``node``, not crossing a function boundary."""
    for a in ctx.ancestors(node):
        if isinstance(a, LOOP_TYPES):
            return a
        if isinstance(a, (cst.FunctionDef, cst.Lambda)) or a is stop:
            return None
    return None


def common_loop(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The innermost loop that encloses both nodes, within one function."""
    loops_a: List[cst.CSTNode] = []
    for anc in ctx.ancestors(a):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(anc, LOOP_TYPES):
            loops_a.append(anc)
    if not loops_a:
        return None
    ids = set(loops_a)
    for anc in ctx.ancestors(b):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        if anc in ids:
            return anc
    return None


def _grad_disabling(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call is not None else expr
    if ctx.names.matches(target, NO_GRAD_CONTEXTS):
        if call is not None and ctx.names.matches(target, ("torch.inference_mode",)):
            mode = arg(call, 0, "mode")
            if mode is not None and isinstance(mode.value, cst.Name) and mode.value.value == "False":
                return False
        return True
    if call is not None and ctx.names.matches(target, SET_GRAD_ENABLED):
        mode = arg(call, 0, "mode")
        return mode is not None and isinstance(mode.value, cst.Name) and mode.value.value == "False"
    return False


def under_no_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` runs with gradients disabled by an enclosing with-block or decorator."""
    for a in ctx.ancestors(node):
        if isinstance(a, cst.With):
            if any(_grad_disabling(ctx, item.item) for item in a.items):
                return True
        elif isinstance(a, cst.FunctionDef):
            if any(_grad_disabling(ctx, d.decorator) for d in a.decorators):
                return True
    return False


def first(items: Iterable) -> Optional[object]:
    for item in items:
        return item
    return None


def unique_code(ctx: FileContext, exprs: Sequence[cst.CSTNode]) -> Optional[str]:
    """The source of the expressions when they all read the same, else None."""
    codes = {ctx.code(e) for e in exprs}
    return codes.pop() if len(codes) == 1 else None
