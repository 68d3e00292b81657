"""Values whose precision is known from how they are built, and values nobody reads.

Questions asked after the walk (the names layer answers with the whole scope's assignments):

- :func:`float64_value` -- a tensor that is ``float64`` by construction: a torch factory given
  ``dtype=torch.float64`` (or ``torch.double``), ``.double()``, ``.to(torch.float64)``,
  ``torch.DoubleTensor(...)``, arithmetic of such a tensor with numbers or other ``float64`` tensors,
  a name every assignment of which is one of these, ``self.<attr>`` assigned or registered as a
  buffer (``self.register_buffer("alpha", torch.zeros(n, dtype=torch.float64))``) only so.  Anything
  else (a parameter, a default dtype, a library call) is not known to be ``float64``.
- :func:`never_read` -- an expression whose value is dropped: a statement of its own in a function, or
  the whole value of an assignment to a local name that nothing reads.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.analysis.context import FileContext, arg, keyword_arg, method_name, receiver
from torchlint.analysis.walk import iter_nodes

_FLOAT64 = frozenset({"torch.float64", "torch.double"})
_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.full", "torch.empty", "torch.rand", "torch.randn", "torch.tensor",
    "torch.as_tensor", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye", "torch.zeros_like",
    "torch.ones_like", "torch.full_like", "torch.empty_like", "torch.rand_like", "torch.randn_like",
})
#: methods and functions that keep the dtype of the tensor they work on
_KEEPING_METHODS = frozenset({"clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "sigmoid", "tanh", "exp",
                              "sqrt", "view", "reshape", "squeeze", "unsqueeze", "flatten", "contiguous", "clone",
                              "detach", "t", "transpose", "permute", "expand", "expand_as", "mean", "sum",
                              "cpu", "cuda"})


def _is_float64_dtype(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> bool:
    return expr is not None and bool(ctx.names.qualified_names_at(expr) & _FLOAT64)


def float64_value(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``expr`` is a ``float64`` tensor by construction (see the module docstring)."""
    if depth > 4:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return False  # a number: the other operand decides
    if isinstance(expr, cst.Call):
        name = method_name(expr)
        if name == "double":
            return True
        if name in ("to", "type"):
            target = arg(expr, 0, "dtype")
            if target is not None and (
                _is_float64_dtype(ctx, target.value)
                or ctx.names.qualified_names_at(target.value) & {"torch.DoubleTensor", "torch.cuda.DoubleTensor"}
            ):
                return True
            dtype = keyword_arg(expr, "dtype")
            if dtype is not None:
                return _is_float64_dtype(ctx, dtype.value)
            inner = receiver(expr)
            return name == "to" and inner is not None and float64_value(ctx, inner, depth + 1)
        names = ctx.names.qualified_names_at(expr.func)
        if names & {"torch.DoubleTensor", "torch.cuda.DoubleTensor"}:
            return True
        if names & _FACTORIES:
            dtype = keyword_arg(expr, "dtype")
            if dtype is not None:
                return _is_float64_dtype(ctx, dtype.value)
            if any(n.endswith("_like") for n in names) and expr.args:
                return float64_value(ctx, expr.args[0].value, depth + 1)
            return False
        if name in _KEEPING_METHODS:
            inner = receiver(expr)
            return inner is not None and float64_value(ctx, inner, depth + 1)
        return False
    if isinstance(expr, cst.BinaryOperation):
        sides = [s for s in (expr.left, expr.right) if not isinstance(s, (cst.Integer, cst.Float))]
        return bool(sides) and all(float64_value(ctx, s, depth + 1) for s in sides)
    if isinstance(expr, cst.UnaryOperation):
        return float64_value(ctx, expr.expression, depth + 1)
    if isinstance(expr, cst.Subscript):
        return float64_value(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None or b.imports or any(v is None for v in b.values):
            return False  # a parameter, a loop variable, an import: its dtype is not known here
    if isinstance(expr, (cst.Name, cst.Attribute)):
        values: List[cst.BaseExpression] = list(ctx.names.values_at(expr))
        if isinstance(expr, cst.Attribute):
            values.extend(_registered_buffers(ctx, expr))
        return bool(values) and all(float64_value(ctx, v, depth + 1) for v in values)
    return False


def _registered_buffers(ctx: FileContext, attr: cst.Attribute) -> List[cst.BaseExpression]:
    """``self.register_buffer("<attr>", value)`` in the class around ``attr``: the values."""
    if not (isinstance(attr.value, cst.Name) and attr.value.value == "self"):
        return []
    cls = ctx.enclosing(attr, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return []
    out: List[cst.BaseExpression] = []
    for call in ctx.calls_in(cls):
        if method_name(call) != "register_buffer" or len(call.args) < 2:
            continue
        key = call.args[0].value
        if isinstance(key, cst.SimpleString) and key.evaluated_value == attr.attr.value:
            out.append(call.args[1].value)
    return out


def never_read(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether the value of ``expr`` is dropped: ``expr`` is a statement of its own inside a function (at
    module level a notebook shows it), or the whole value of an assignment to a plain name of a
    function that no code of the function reads (no ``global``/``nonlocal`` for it, no nested function
    or class that could)."""
    parent = ctx.parent(expr)
    function = ctx.enclosing(expr, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return False
    if isinstance(parent, cst.Expr):
        return True
    if not isinstance(parent, cst.Assign) or parent.value is not expr or len(parent.targets) != 1:
        return False
    target = parent.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    for n in iter_nodes(function.body):
        if isinstance(n, (cst.Global, cst.Nonlocal)) and any(a.name.value == target.value for a in n.names):
            return False  # bound for the module or an outer function: read elsewhere
    for name in ctx.names_in(function.body, target.value):
        if name is target:
            continue
        p = ctx.parent(name)
        if isinstance(p, cst.AssignTarget) and p.target is name:
            continue  # bound again, not read
        return False
    return True
