"""Recognising torch operations in their several spellings.

``torch.softmax(x, 1)``, ``F.softmax(x, dim=1)``, ``x.softmax(1)``, ``nn.Softmax(dim=1)(x)`` and a layer
built earlier (``self.act = nn.Softmax(1)`` ... ``self.act(x)``) are all one operation; these helpers
return a small description (:class:`OpUse`) so rules can both detect the pattern and rewrite it.
Method forms (``x.softmax()``) are only trusted in files that import torch.
"""
from __future__ import annotations

from dataclasses import dataclass
import struct
from typing import FrozenSet, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext, arg
from torchlint.analysis.mode_layers import number

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
    if method in _WRAPPABLE:
        return _wrapper_use(ctx, expr, funcs, method)
    return None


# helpers that only wrap one of these are the operation itself: `def _log(t): return torch.log(t)`
_WRAPPABLE = frozenset({"log", "exp"})


def _wrapper_use(ctx: FileContext, call: cst.Call, funcs: FrozenSet[str], method: str) -> Optional[OpUse]:
    """``my_log(x)`` where ``my_log`` is a function (or method) of this module whose whole body is
    ``return torch.log(<its parameter>)`` (or ``<parameter>.log()``): the operation, with ``x`` as its
    operand.  A helper that adds anything (an eps, a clamp) is not a wrapper."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    function = ctx.function_for_call(call)
    if function is None or not isinstance(function.body, cst.IndentedBlock) or len(function.body.body) != 1:
        return None
    params = list(function.params.params)
    if isinstance(call.func, cst.Attribute) and params:
        params = params[1:]  # self / cls
    if len(params) != 1 or function.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or \
            function.params.kwonly_params or params[0].default is not None:
        return None
    stmt = function.body.body[0]
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return)):
        return None
    value = stmt.body[0].value
    if not isinstance(value, cst.Call):
        return None
    name = params[0].name.value
    inner: Optional[cst.BaseExpression] = None
    if ctx.names.matches(value.func, funcs) and len(value.args) == 1:
        inner = value.args[0].value
    elif isinstance(value.func, cst.Attribute) and value.func.attr.value == method and not value.args:
        inner = value.func.value
    if not (isinstance(inner, cst.Name) and inner.value == name):
        return None
    return OpUse("helper", call, call.args[0].value)


def softmax_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return op_use(ctx, expr, SOFTMAX_FUNCS, "softmax", SOFTMAX_LAYERS)


#: methods that return the module they are called on
MOVES = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_"})


def strip_moves(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``Net().to(device).eval()`` -> ``Net()``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MOVES:
        expr = expr.func.value
    return expr


def same_reference(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two names or attribute chains spell the same reference (``model``, ``self.net.head``)."""
    while isinstance(a, cst.Attribute) and isinstance(b, cst.Attribute):
        if a.attr.value != b.attr.value:
            return False
        a, b = a.value, b.value
    return isinstance(a, cst.Name) and isinstance(b, cst.Name) and a.value == b.value


def moves_itself(value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """``model.to(device)``, ``net.cuda().eval()`` assigned to ``model`` / ``net``: the module the name already
    held, moved or switched (a module's ``to``, ``cuda``, ``eval``, ... return the module itself)."""
    moved = strip_moves(value)
    return moved is not value and same_reference(moved, target)


def sequential_ending_in(ctx: FileContext, model: cst.BaseExpression, layers: FrozenSet[str]) -> Optional[cst.Call]:
    """When ``model`` was built as ``nn.Sequential(..., <layer>(...))``, that last layer call."""
    candidates = [model] if isinstance(model, cst.Call) else ctx.names.values_before(model)
    for value in reversed(candidates):
        if moves_itself(value, model):
            continue  # `model = model.to(device)`: the same module, built before
        if not (isinstance(value, cst.Call) and ctx.names.matches(value.func, SEQUENTIAL)):
            return None  # the name holds something else by now (`model = MyModule()` after a `Sequential`)
        grown = _grown_last(ctx, model, value) if isinstance(model, cst.Name) else None
        if grown is not None:  # `m.add_module("out", nn.Sigmoid())` after `m = nn.Sequential()`
            return grown if isinstance(grown, cst.Call) and ctx.names.matches(grown.func, layers) else None
        positional = [a for a in value.args if a.keyword is None and not a.star]
        if positional:
            last = positional[-1].value
            if isinstance(last, cst.Call) and ctx.names.matches(last.func, layers):
                return last
        return None
    return None


def _grown_last(ctx: FileContext, model: cst.Name, built: cst.Call) -> Optional[cst.BaseExpression]:
    """The layer the last ``model.add_module(name, layer)`` / ``model.append(layer)`` between the construction
    ``built`` and the read ``model`` adds (its scope's, in source order), or None when none does."""
    grown = grown_layers(ctx, model, built)
    return grown[-1] if grown else None


def grown_layers(ctx: FileContext, model: cst.Name, built: cst.Call) -> List[cst.BaseExpression]:
    """The layers ``model.add_module(name, layer)`` / ``model.append(layer)`` add between the construction
    ``built`` and the read ``model`` (its scope's), in source order: what a container built empty holds."""
    scope = ctx.enclosing(model, cst.FunctionDef) or ctx.module
    start, at = ctx.names.position(built), ctx.names.position(model)
    found: List[Tuple[int, cst.BaseExpression]] = []
    for name in ctx.names_in(scope, model.value):
        call = ctx.parent(ctx.parent(name))
        attr = ctx.parent(name)
        if not (isinstance(attr, cst.Attribute) and attr.value is name and isinstance(call, cst.Call)
                and call.func is attr and attr.attr.value in ("add_module", "append")):
            continue
        where = ctx.names.position(call)
        if not start < where < at:
            continue
        args = [a for a in call.args if a.keyword is None and not a.star]
        if args:
            found.append((where, args[-1].value))
    return [layer for _, layer in sorted(found, key=lambda f: f[0])]


#: containers built empty and filled afterwards (``add_module``, ``append``)
EMPTY_GROWN = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList"})


def built_empty(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``nn.Sequential()``, ``nn.ModuleList()``, ``nn.ModuleList([])``: a container built with nothing in it
    (what it holds is what the code adds later)."""
    core = strip_moves(value)
    if not isinstance(core, cst.Call) or not ctx.names.qualified_names_at(core.func) & EMPTY_GROWN:
        return False
    if not core.args:
        return True
    only = core.args[0].value
    return len(core.args) == 1 and not core.args[0].star and core.args[0].keyword is None \
        and isinstance(only, (cst.List, cst.Tuple)) and not only.elements


def grown_content(ctx: FileContext, read: cst.BaseExpression, built: cst.BaseExpression) -> List[cst.BaseExpression]:
    """What the module ``built`` holds when it is a container built empty (``nn.Sequential()``,
    ``nn.ModuleList()``) that the name ``read`` holds: the layers added to it before the read
    (:func:`grown_layers`); empty for any other construction or read."""
    core = strip_moves(built)
    if not isinstance(read, cst.Name) or not isinstance(core, cst.Call) or not built_empty(ctx, core):
        return []
    return grown_layers(ctx, read, core)


def is_cross_entropy_call(ctx: FileContext, call: cst.Call) -> bool:
    if ctx.names.matches(call.func, CROSS_ENTROPY_FUNCS):
        return True
    return not ctx.names.instance_of(call.func).isdisjoint(CROSS_ENTROPY_LAYERS)


# -- elementwise and reduction ops used by the numerical-stability rules (TL2) --------------------
# Function spellings resolve through imports (``torch.exp``, ``from torch import exp``,
# ``torch.special.expit``); numpy and ``math`` names resolve to ``numpy.*``/``math.*`` and never match.
EXP_FUNCS = frozenset({"torch.exp", "torch.Tensor.exp"})
LOG_FUNCS = frozenset({"torch.log", "torch.Tensor.log"})
LOG1P_FUNCS = frozenset({"torch.log1p", "torch.special.log1p", "torch.Tensor.log1p"})
SUM_FUNCS = frozenset({"torch.sum", "torch.Tensor.sum"})
MEAN_FUNCS = frozenset({"torch.mean", "torch.Tensor.mean"})
SIGMOID_FUNCS = frozenset(
    {"torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit", "torch.Tensor.sigmoid"}
)
SIGMOID_LAYERS = frozenset({"torch.nn.Sigmoid", "torch.nn.modules.activation.Sigmoid", "torch.nn.modules.Sigmoid"})
TANH_FUNCS = frozenset({"torch.tanh", "torch.nn.functional.tanh", "torch.Tensor.tanh"})
TANH_LAYERS = frozenset({"torch.nn.Tanh", "torch.nn.modules.activation.Tanh", "torch.nn.modules.Tanh"})
LOG_SOFTMAX_FUNCS = frozenset(
    {
        "torch.log_softmax",
        "torch.nn.functional.log_softmax",
        "torch.special.log_softmax",
        "torch.Tensor.log_softmax",
    }
)
LOG_SOFTMAX_LAYERS = frozenset(
    {"torch.nn.LogSoftmax", "torch.nn.modules.activation.LogSoftmax", "torch.nn.modules.LogSoftmax"}
)
BCE_FUNCS = frozenset({"torch.nn.functional.binary_cross_entropy"})
BCE_LAYERS = frozenset({"torch.nn.BCELoss", "torch.nn.modules.loss.BCELoss"})

# Tensor methods of these names take no argument; a call with arguments (``self.log("loss", v)`` in
# Lightning, ``wandb.log({...})``) is something else.
_NULLARY_METHODS = frozenset({"exp", "log", "log1p", "expm1", "sigmoid", "tanh", "abs"})


def unary_use(
    ctx: FileContext,
    expr: cst.BaseExpression,
    funcs: FrozenSet[str],
    method: Optional[str] = None,
    layers: FrozenSet[str] = frozenset(),
) -> Optional[OpUse]:
    """Like :func:`op_use`, for elementwise ops whose tensor method takes no argument."""
    use = op_use(ctx, expr, funcs, method, layers)
    if use is None:
        return None
    if use.kind == "method" and method in _NULLARY_METHODS and use.node.args:
        return None
    if use.operand is None:
        return None
    return use


def exp_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return unary_use(ctx, expr, EXP_FUNCS, "exp")


def log_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return unary_use(ctx, expr, LOG_FUNCS, "log")


def log1p_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return unary_use(ctx, expr, LOG1P_FUNCS, "log1p")


def sigmoid_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return unary_use(ctx, expr, SIGMOID_FUNCS, "sigmoid", SIGMOID_LAYERS)


def tanh_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return unary_use(ctx, expr, TANH_FUNCS, "tanh", TANH_LAYERS)


def sum_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return op_use(ctx, expr, SUM_FUNCS, "sum")


def mean_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return op_use(ctx, expr, MEAN_FUNCS, "mean")


def log_softmax_use(ctx: FileContext, expr: cst.BaseExpression) -> Optional[OpUse]:
    return op_use(ctx, expr, LOG_SOFTMAX_FUNCS, "log_softmax", LOG_SOFTMAX_LAYERS)


def is_bce_call(ctx: FileContext, call: cst.Call) -> bool:
    """``F.binary_cross_entropy(...)`` or a call of an ``nn.BCELoss`` instance."""
    if ctx.names.matches(call.func, BCE_FUNCS):
        return True
    return not ctx.names.instance_of(call.func).isdisjoint(BCE_LAYERS)


def op_arg(use: OpUse, position: int, keyword: str) -> Optional[cst.Arg]:
    """Argument ``keyword`` of an op, at ``position`` in the function spelling (where the tensor is the
    first argument) and ``position - 1`` in the method spelling; layers take only the tensor."""
    if use.kind == "layer":
        return None
    if use.kind == "method":
        return arg(use.node, position - 1, keyword)
    return arg(use.node, position, keyword)


def _constant(expr: cst.BaseExpression) -> Optional[float]:
    """The value of a number written out: ``1``, ``1e-20``, ``-0.5`` (:func:`mode_layers.number`), or a sum or
    difference of such (``1 - 1e-20``); None for anything else."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        a, b = _constant(expr.left), _constant(expr.right)
        if a is None or b is None:
            return None
        return a + b if isinstance(expr.operator, cst.Add) else a - b
    return number(expr)


def idle_cap(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """``p`` of ``p.clamp(max=1 - 1e-20)`` / ``torch.clamp(p, max=1.0)`` (also ``clip``): a clamp of
    probabilities from above only, whose cap is 1 or more in float32 (``1 - 1e-20`` rounds to 1): it changes
    no probability, so ``p`` keeps every property it had (zeros, ones).  None for any other call, a lower
    bound, or a cap below 1 (which does keep ``1 - p`` away from 0)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("clamp", "clip") \
            and not ctx.names.qualified_names(func):
        operand, rest = func.value, list(call.args)
    elif ctx.names.matches(func, frozenset({"torch.clamp", "torch.clip"})) and call.args \
            and call.args[0].keyword is None and not call.args[0].star:
        operand, rest = call.args[0].value, list(call.args[1:])
    else:
        return None
    if len(rest) != 1 or rest[0].keyword is None or rest[0].keyword.value != "max":
        return None
    cap = _constant(rest[0].value)
    if cap is None or struct.unpack("f", struct.pack("f", cap))[0] < 1.0:
        return None
    return operand
