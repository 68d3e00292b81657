"""Recognising torch operations in their several spellings.

``torch.softmax(x, 1)``, ``F.softmax(x, dim=1)``, ``x.softmax(1)``, ``nn.Softmax(dim=1)(x)`` and a layer
built earlier (``self.act = nn.Softmax(1)`` ... ``self.act(x)``) are all one operation; these helpers
return a small description (:class:`OpUse`) so rules can both detect the pattern and rewrite it.
Method forms (``x.softmax()``) are only trusted in files that import torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional

import libcst as cst

from torchlint.analysis.context import FileContext, arg

SOFTMAX_FUNCS = frozenset(
    {
        "torch.softmax",
        "torch.nn.functional.softmax",
        "torch.special.softmax",
        "torch.Tensor.softmax",
    }
)
SOFTMAX_LAYERS = frozenset({"torch.nn.Softmax", "torch.nn.modules.activation.Softmax", "torch.nn.modules.Softmax"})
CROSS_ENTROPY_FUNCS = frozenset({"torch.nn.functional.cross_entropy"})
CROSS_ENTROPY_LAYERS = frozenset({"torch.nn.CrossEntropyLoss", "torch.nn.modules.loss.CrossEntropyLoss"})
SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})


@dataclass(frozen=True)
class OpUse:
    """One use of an operation: ``node`` is the call, ``operand`` the tensor it applies to."""

    kind: str  # "function" | "method" | "layer"
    node: cst.Call
    operand: Optional[cst.BaseExpression]


def _is_module_like(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """True when ``expr`` names an imported module or object (``np``, ``scipy.special``), not a tensor."""
    return bool(ctx.names.qualified_names(expr))


def op_use(
    ctx: FileContext,
    expr: cst.BaseExpression,
    funcs: FrozenSet[str],
    method: Optional[str] = None,
    layers: FrozenSet[str] = frozenset(),
) -> Optional[OpUse]:
    """Describe ``expr`` when it is a call of the operation given by its function names, its tensor
    method name and its ``nn`` layer classes; None otherwise."""
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if ctx.names.matches(func, funcs):
        first = arg(expr, 0, "input")
        return OpUse("function", expr, first.value if first is not None else None)
    if (
        method is not None
        and isinstance(func, cst.Attribute)
        and func.attr.value == method
        and ctx.names.imports_torch
        and not _is_module_like(ctx, func.value)
    ):
        return OpUse("method", expr, func.value)
    if layers and not ctx.names.instance_of(func).isdisjoint(layers):
        first = arg(expr, 0, "input")
        return OpUse("layer", expr, first.value if first is not None else None)
    return None


def softmax_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return op_use(ctx, expr, SOFTMAX_FUNCS, "softmax", SOFTMAX_LAYERS)


def sequential_ending_in(ctx: FileContext, model: cst.BaseExpression, layers: FrozenSet[str]) -> Optional[cst.Call]:
    """When ``model`` was built as ``nn.Sequential(..., <layer>(...))``, that last layer call."""
    candidates = [model] if isinstance(model, cst.Call) else ctx.names.values(model)
    for value in reversed(candidates):
        if isinstance(value, cst.Call) and ctx.names.matches(value.func, SEQUENTIAL):
            positional = [a for a in value.args if a.keyword is None and not a.star]
            if positional:
                last = positional[-1].value
                if isinstance(last, cst.Call) and ctx.names.matches(last.func, layers):
                    return last
            return None
    return None


def is_cross_entropy_call(ctx: FileContext, call: cst.Call) -> bool:
    if ctx.names.matches(call.func, CROSS_ENTROPY_FUNCS):
        return True
    return not ctx.names.instance_of(call.func).isdisjoint(CROSS_ENTROPY_LAYERS)
