"""Numerics facts shared by the TL2 rules: what is a softmax (in any spelling, hand-written or behind a
function of the same module), which exponent arguments are already shifted by their maximum, which log
arguments are positive by construction, and which hand-written losses (softmax cross-entropy, sigmoid
binary cross-entropy) a log call belongs to.

Values are followed through local variables by the names layer (:func:`followed`): ``exp =
torch.exp(logits)`` ... ``exp / torch.sum(exp)`` is the same expression as ``torch.exp(logits) /
torch.sum(torch.exp(logits))``, in the function being visited as in another function of the module.

Everything here leans towards silence: an exponent shifted by anything named like a maximum is stable,
``x + eps`` and ``x.clamp(min=...)`` are positive, and a pattern is only matched when every piece of it is
recognised.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import (
    FileContext, arg, callee_name, canonical_keyword, keyword_arg, method_name, module_ref, receiver, written_target,
)
from torchlint.analysis.names import dotted_name, target_names
from torchlint.analysis.ops import (
    OpUse,
    exp_use,
    log_softmax_use,
    log_use,
    mean_use,
    SIGMOID_LAYERS,
    op_arg,
    sequential_ending_in,
    sigmoid_use,
    softmax_use,
    sum_use,
    tanh_use,
)
from torchlint.analysis.definitions import position
from torchlint.families.training.steps import exclusive_branches
from torchlint.analysis.walk import iter_nodes

#: The dim of a softmax called without one (``F.softmax(x)``): torch picks it from the rank.
IMPLICIT = "<implicit>"
#: A dim that depends on something the analysis cannot see.
UNKNOWN = "<unknown>"
#: Dim value meaning "over all elements" (``torch.sum(exp)`` without dim).
ALL = None

DimCode = Optional[str]

_EPS_NAME = re.compile(r"(^|_)(eps|epsilon|tiny|delta|smooth|smoothing)($|_)|eps$", re.IGNORECASE)
_MAX_NAME = re.compile(r"max|lse|logsumexp|logz|log_z|log_norm|logsum", re.IGNORECASE)
_PASS_METHODS = frozenset(
    {"detach", "unsqueeze", "view", "reshape", "expand", "expand_as", "squeeze", "clone", "to", "float",
     "double", "half", "type_as", "contiguous", "view_as", "reshape_as", "flatten", "t", "transpose",
     "permute"}
)
_SELECT_METHODS = frozenset(
    {"gather", "take_along_dim", "index_select", "masked_select", "select", "narrow", "diagonal",
     "diag", "min", "amin", "prod"}
)
_SELECT_FUNCS = frozenset(
    {"torch.gather", "torch.take_along_dim", "torch.index_select", "torch.masked_select", "torch.select",
     "torch.narrow", "torch.diagonal", "torch.diag", "torch.min", "torch.amin", "torch.prod"}
)
_COUNT_FUNCS = frozenset({"torch.bincount", "torch.histc", "torch.count_nonzero"})


# -- small syntax helpers ------------------------------------------------------------------------
def number(expr: Optional[cst.BaseExpression]) -> Optional[float]:
    """The value of a numeric literal (``2``, ``1.0``, ``-1``, ``1e-8``), else None."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return float(expr.evaluated_value)
        except (ValueError, TypeError):  # pragma: no cover - libcst validated it
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = number(expr.expression)
        if inner is None:
            return None
        return -inner if isinstance(expr.operator, cst.Minus) else inner
    return None


def is_one(expr: Optional[cst.BaseExpression]) -> bool:
    return number(expr) == 1.0


def is_binop(expr: cst.CSTNode, op: type) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, op)


def is_negation(expr: cst.CSTNode) -> bool:
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)


def names_of(expr: cst.CSTNode) -> List[cst.Name]:
    """Variable references in a (small) expression."""
    return [n for n in iter_nodes(expr) if type(n) is cst.Name]


def same_code(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    if a is b:
        return True
    return _squash(ctx.code(a)) == _squash(ctx.code(b))


def _squash(code: str) -> str:
    code = re.sub(r"\s+", "", code)
    while code.startswith("(") and code.endswith(")") and _balanced(code[1:-1]):
        code = code[1:-1]
    return code


def _balanced(code: str) -> bool:
    depth = 0
    for ch in code:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


def atom_code(ctx: FileContext, expr: cst.BaseExpression) -> str:
    """Source of ``expr``, parenthesised when a method call on it would bind differently."""
    code = ctx.code(expr)
    if isinstance(expr, _ATOMS) or (expr.lpar and _squash(code) != code):
        if isinstance(expr, (cst.Integer, cst.Float)):
            return f"({code})"
        return code
    return f"({code})"


def neg_code(ctx: FileContext, expr: cst.BaseExpression) -> str:
    """Source of ``-expr``; ``-x`` becomes ``x``."""
    if is_negation(expr) and not expr.lpar:
        return ctx.code(expr.expression)
    return "-" + atom_code(ctx, expr)


def dim_code(ctx: FileContext, a: Optional[cst.Arg]) -> DimCode:
    if a is None:
        return ALL
    if isinstance(a.value, cst.Name) and a.value.value == "None":
        return ALL
    return ctx.code(a.value)


def same_dim(a: DimCode, b: DimCode) -> bool:
    if a in (IMPLICIT, UNKNOWN) or b in (IMPLICIT, UNKNOWN):
        return False
    if a is None or b is None:
        return a is b
    return _squash(a) == _squash(b)


def is_true(a: Optional[cst.Arg]) -> bool:
    return a is not None and isinstance(a.value, cst.Name) and a.value.value == "True"


def is_false_or_absent(a: Optional[cst.Arg]) -> bool:
    """An optional flag argument that is left out or spelled ``False``."""
    return a is None or (isinstance(a.value, cst.Name) and a.value.value == "False")


# -- following values through local variables ----------------------------------------------------
def followed(ctx: FileContext, expr: cst.BaseExpression, depth: int = 4) -> cst.BaseExpression:
    """``expr``, or the value it holds through up to ``depth`` local names (the names layer's
    :meth:`~torchlint.analysis.names.NameResolver.value_of`): ``exp`` after ``exp = torch.exp(x)`` is
    ``torch.exp(x)``."""
    value_of = ctx.names.value_of
    for _ in range(depth):
        nxt = value_of(expr)
        if nxt is None:
            return expr
        expr = nxt
    return expr


#: Where a sigmoid output comes from when a model built as ``nn.Sequential(..., nn.Sigmoid())`` gave it, and
#: what to do about it (the rules that find a sigmoid before a log or a binary cross-entropy say it alike).
SEQUENTIAL_SIGMOID = "comes from an `nn.Sequential` that ends in `nn.Sigmoid`; drop the sigmoid layer"


def from_sequential_sigmoid(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Whether ``value`` (``model(x)``, or a local name holding it) is the output of a model built as
    ``nn.Sequential(..., nn.Sigmoid())``: the sigmoid is its last layer, which the code can drop."""
    value = followed(ctx, value, 2)
    while isinstance(value, cst.Subscript) or isinstance(value, cst.Call) and method_name(value) in (
            "view", "reshape", "squeeze", "flatten", "unsqueeze", "contiguous") and receiver(value) is not None:
        value = value.value if isinstance(value, cst.Subscript) else receiver(value)  # `model(x)[:, 0]`
    return isinstance(value, cst.Call) and sequential_ending_in(ctx, value.func, SIGMOID_LAYERS) is not None


def movable(ctx: FileContext, operand: cst.BaseExpression, source: Optional[cst.BaseExpression], at: cst.CSTNode,
            removed: Optional[cst.Assign] = None) -> bool:
    """Whether ``operand`` (taken from ``source``, the value of an earlier assignment; None when it is
    written at the use site ``at``) still means the same thing at ``at``.

    It must hold no call, and every name in it must be assigned at most once before ``at``, not by the
    assignment it came from (unless that assignment is removed by the fix, and was the name's only one)."""
    if source is None:
        return True
    if any(isinstance(n, cst.Call) for n in iter_nodes(operand)):
        return False  # evaluating a call again may repeat work or side effects (a model's forward)
    origin = ctx.parent(source)
    for name in names_of(operand):
        values = ctx.names.values_before(name, at)
        if not values:
            continue
        if len(values) > 1:
            return False
        if values[0] is source:
            if removed is None or removed is not origin:
                return False
    return True


# -- shapes of stable code -----------------------------------------------------------------------
def _peel(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """Strip shape/detach wrappers: ``m[0]``, ``m.values``, ``m.detach()``, ``m.unsqueeze(1)``."""
    for _ in range(6):
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value in ("values", "data"):
            expr = expr.value
        elif isinstance(expr, cst.Call) and method_name(expr) in _PASS_METHODS:
            expr = receiver(expr)  # type: ignore[assignment]
        else:
            break
    return expr


def _is_max_like(ctx: FileContext, expr: cst.BaseExpression, depth: int = 2) -> bool:
    expr = _peel(ctx, expr)
    if isinstance(expr, cst.Call):
        name = callee_name(expr)
        if name is not None and _MAX_NAME.search(name):
            return True
        return False
    if isinstance(expr, (cst.Name, cst.Attribute)):
        dotted = dotted_name(expr)
        if dotted is not None and _MAX_NAME.search(dotted.rsplit(".", 1)[-1]):
            return True
        if depth > 0:
            nxt = ctx.names.value_of(expr)
            if nxt is not None:
                return _is_max_like(ctx, nxt, depth - 1)
            if isinstance(expr, cst.Name):
                return _unpacked_max(ctx, expr)
    return False


def _unpacked_max(ctx: FileContext, name: cst.Name) -> bool:
    """``m, _ = torch.max(x, dim=1)`` (or ``x.max(1)``): the first element of a maximum along a dimension
    is the maximum."""
    function = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda))
    if isinstance(function, cst.Lambda):
        return False
    found = ctx.names.reaching_assignment(name.value, name, function)
    if found is None or found[1] != 0:
        return False
    value = found[0].value
    return isinstance(value, cst.Call) and callee_name(value) == "max" and bool(value.args)


def _nonnegative(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """Non-negative by construction: squares, even powers, abs, norms, exp, and products and ratios of
    those with positive constants."""
    expr = followed(ctx, expr, 2)
    n = number(expr)
    if n is not None:
        return n >= 0
    if is_binop(expr, cst.Power):
        p = number(expr.right)  # type: ignore[attr-defined]
        return p is not None and p % 2 == 0
    if isinstance(expr, cst.Call):
        name = callee_name(expr)
        if name in ("abs", "square", "relu", "softplus", "norm", "exp", "sigmoid", "softmax", "cdist", "pdist",
                    "sqrt", "vector_norm", "matrix_norm"):
            return True
        if name in ("pow", "float_power"):
            is_method = isinstance(expr.func, cst.Attribute) and not _module_like_prefix(expr.func.value)
            exponent = arg(expr, 0 if is_method else 1, "exponent")
            p = number(exponent.value) if exponent is not None else None
            return p is not None and p % 2 == 0
    if depth <= 0:
        return False
    # shape changes and selections keep the sign: `g.unsqueeze(0)`, `d[:, None]`, `d.view(-1)`
    if isinstance(expr, cst.Call) and method_name(expr) in _PASS_METHODS and receiver(expr) is not None:
        return _nonnegative(ctx, receiver(expr), depth - 1)  # type: ignore[arg-type]
    if isinstance(expr, cst.Subscript):
        return _nonnegative(ctx, expr.value, depth - 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _nonnegative(ctx, expr.left, depth - 1) and _nonnegative(ctx, expr.right, depth - 1)
    if is_binop(expr, cst.Add):
        return _nonnegative(ctx, expr.left, depth - 1) and _nonnegative(ctx, expr.right, depth - 1)  # type: ignore
    return False


#: calls whose values are whole numbers
_INTEGER_CALLS = frozenset({"floor", "ceil", "trunc", "long", "int", "arange", "bincount", "count_nonzero", "argmax",
                            "argmin", "nonzero", "randint", "randperm", "floor_divide", "searchsorted",
                            "bucketize"})
#: calls that keep whole numbers whole
_INTEGER_KEEPING = frozenset({"abs", "neg", "float", "double", "half", "to", "view", "reshape", "permute",
                              "flatten", "contiguous", "unsqueeze", "squeeze", "transpose", "clone", "detach",
                              "type", "t", "expand", "expand_as", "repeat", "flip", "roll", "sign"})
#: functions of several tensors that keep whole numbers whole
_INTEGER_GATHERING = frozenset({"stack", "cat", "meshgrid", "ndgrid", "maximum", "minimum"})


def integer_valued(ctx: FileContext, expr: cst.BaseExpression, depth: int = 16,
                   seen: Optional[Dict[int, bool]] = None) -> bool:
    """Whole numbers by construction: ``torch.floor(...)``, ``.long()``, ``torch.arange(n)``, index and
    count results, and sums, differences, products, selections, casts and stacks of those (``float()``
    keeps the values whole).  ``1 + x`` is exact for such ``x``, so ``log(1 + x)`` loses nothing."""
    if depth <= 0:
        return False
    if seen is None:
        seen = {}  # per question: names that feed each other
    n = number(expr)
    if n is not None:
        return float(n).is_integer()
    if isinstance(expr, cst.Name):
        return _integer_name(ctx, expr, depth, seen)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return integer_valued(ctx, expr.expression, depth - 1, seen)
    if isinstance(expr, cst.Subscript):
        return integer_valued(ctx, expr.value, depth - 1, seen)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)):
            return integer_valued(ctx, expr.left, depth - 1, seen) and integer_valued(ctx, expr.right, depth - 1, seen)
        return False
    if not isinstance(expr, cst.Call):
        return False
    name = callee_name(expr)
    if name == "round":
        return arg(expr, 1, "decimals") is None and len(expr.args) <= (1 if receiver(expr) is None else 0) + 1
    if name in _INTEGER_CALLS:
        return name != "arange" or not any(isinstance(a.value, cst.Float) for a in expr.args)
    if name in _INTEGER_GATHERING:
        values = [a.value for a in expr.args if a.keyword is None]
        if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
            values = [el.value for el in values[0].elements]
        elif len(values) == 1 and isinstance(values[0], cst.Call):
            return integer_valued(ctx, values[0], depth - 1, seen)  # `torch.stack(ndgrid(a, b))`
        return bool(values) and all(integer_valued(ctx, v, depth - 1, seen) for v in values)
    if name in _INTEGER_KEEPING:
        inner = receiver(expr)
        if inner is None or _module_like_prefix(inner):  # `torch.abs(x)`
            first = arg(expr, 0, "input")
            inner = first.value if first is not None else None
        return inner is not None and integer_valued(ctx, inner, depth - 1, seen)
    return False


def _integer_name(ctx: FileContext, name: cst.Name, depth: int, seen: Dict[int, bool]) -> bool:
    """Every value assigned to the name is whole, and no in-place division or scaling by a fraction
    runs before the use on the path to it (a branch exclusive with the use does not count)."""
    if id(name) in seen:
        return seen[id(name)]
    seen[id(name)] = False  # a cycle proves nothing
    seen[id(name)] = found = _integer_name_of(ctx, name, depth, seen)
    return found


def _integer_name_of(ctx: FileContext, name: cst.Name, depth: int, seen: Dict[int, bool]) -> bool:
    # a name inside the expression the walk is visiting has no parent link yet: the visited node stands in
    use = name if ctx.parent(name) is not None or ctx.current is None else ctx.current
    function = ctx.enclosing(use, cst.FunctionDef)
    scope = function if isinstance(function, cst.FunctionDef) else ctx.module
    if isinstance(function, cst.FunctionDef) and any(
        p.name.value == name.value for p in (*function.params.params, *function.params.kwonly_params,
                                             *function.params.posonly_params)
    ):
        return False  # a parameter: its value on entry is unknown, whatever is assigned on some paths
    if any(isinstance(n, (cst.For, cst.CompFor, cst.WithItem)) and _binds_name(n, name.value) for n in iter_nodes(scope)):
        return False  # bound by a loop or a `with` too: values this does not follow
    values = []
    at = position(ctx, use)
    loops: Optional[List[frozenset]] = None  # the nodes of the loops around the use, found when needed
    for a in ctx.contents(scope).assigns:
        if a is use or ctx.is_inside(use, a) or exclusive_branches(ctx, a, use):
            continue
        if position(ctx, a) > at:
            if loops is None:
                loops = [_node_ids(n) for n in ctx.ancestors(use) if isinstance(n, (cst.For, cst.While))]
            if not any(id(a) in ids for ids in loops):
                continue  # runs after the use, and no loop brings it back before it
        if isinstance(a, cst.Assign):
            if any(_reads(t.target, name.value) for t in a.targets):
                values.append(a.value)  # `x = v`, and `x[:, 0] = v`: v must be whole too
        elif isinstance(a, cst.AugAssign) and _reads(a.target, name.value):
            if not isinstance(a.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign)):
                return False
            values.append(a.value)
        elif isinstance(a, cst.AnnAssign) and isinstance(a.target, cst.Name) and a.target.value == name.value:
            if a.value is None:
                continue
            values.append(a.value)
    if not values:
        return False
    return all(integer_valued(ctx, v, depth - 1, seen) for v in values)


def _binds_name(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, (cst.For, cst.CompFor)):
        target: Optional[cst.BaseExpression] = node.target
    else:
        target = node.asname.name if isinstance(node, cst.WithItem) and node.asname is not None else None
    return target is not None and any(n.value == name for n in target_names(target))


def _node_ids(node: cst.CSTNode) -> frozenset:
    """The ids of the nodes under ``node`` (the walk may not have linked them to their parents yet)."""
    return frozenset(id(n) for n in iter_nodes(node))


def _reads(expr: cst.BaseExpression, name: str) -> bool:
    """``expr`` is ``name`` or a selection of it (``name[:, 0]``)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value == name


def _nonpositive(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """Non-positive by construction: ``-x**2``, ``-0.5 * (x / s).pow(2)``, ``-d / T`` with ``d`` >= 0 (a
    denominator that is a name or attribute is taken as a positive scale: a temperature, a sigma)."""
    expr = followed(ctx, expr, 2)
    n = number(expr)
    if n is not None:
        return n <= 0
    if is_negation(expr):
        return _nonnegative(ctx, expr.expression)  # type: ignore[attr-defined]
    if depth <= 0 or not isinstance(expr, cst.BinaryOperation):
        return False
    left, right = expr.left, expr.right
    if isinstance(expr.operator, cst.Multiply):
        return (_nonpositive(ctx, left, depth - 1) and _nonnegative(ctx, right, depth - 1)) or (
            _nonnegative(ctx, left, depth - 1) and _nonpositive(ctx, right, depth - 1)
        )
    if isinstance(expr.operator, cst.Divide):
        return _nonpositive(ctx, left, depth - 1) and (
            _nonnegative(ctx, right, depth - 1) or dotted_name(right) is not None
        )
    if isinstance(expr.operator, cst.Subtract):
        return _nonpositive(ctx, left, depth - 1) and _nonnegative(ctx, right, depth - 1)
    return False


def is_shifted(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """An exponent that cannot overflow: shifted by a maximum or a log-sum-exp (``x - x.max()``), a
    log-probability, the negation of something non-negative, clamped from above, or small numbers the code
    writes out (a worked example)."""
    given, expr = expr, followed(ctx, expr, 3)
    if number(expr) is not None or _nonpositive(ctx, expr):
        return True
    written = written_values(ctx, given)
    if written is not None and max(written) < NO_OVERFLOW_WRITTEN:
        return True  # a worked example's numbers, written out: `torch.exp(torch.tensor([2.0, 0.5, -1.0]))`
    if is_binop(expr, cst.Subtract):
        if _is_max_like(ctx, expr.right):  # type: ignore[attr-defined]
            return True
        if depth > 0 and is_shifted(ctx, expr.left, depth - 1) and _nonnegative(ctx, expr.right):  # type: ignore
            return True
        return False
    if is_binop(expr, cst.Add) and depth > 0:
        return is_shifted(ctx, expr.left, depth - 1) and is_shifted(ctx, expr.right, depth - 1)  # type: ignore
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.Multiply)) and depth > 0:
        # a temperature: (x - max) / T, scale * (x - max)
        left, right = expr.left, expr.right
        if number(left) is None and is_shifted(ctx, left, depth - 1):
            return number(right) is None or number(right) > 0  # type: ignore[operator]
        return (
            isinstance(expr.operator, cst.Multiply)
            and number(right) is None
            and is_shifted(ctx, right, depth - 1)
            and (number(left) is None or number(left) > 0)  # type: ignore[operator]
        )
    if is_negation(expr):
        return _nonnegative(ctx, expr.expression)  # type: ignore[attr-defined]
    if isinstance(expr, cst.Call):
        if log_softmax_use(ctx, expr) is not None:
            return True
        name = callee_name(expr)
        if name in ("logsigmoid", "log_sigmoid", "minimum", "min", "amin"):
            return True
        if name in ("clamp", "clip", "clamp_max"):
            return _clamp_bound(expr, "max") is not None or name == "clamp_max"
        if name in ("log", "log1p", "log2", "log10", "lgamma", "digamma", "tanh", "sin", "cos", "sigmoid", "erf"):
            return True  # exp(log(x)) and friends stay in range
    return False


def _clamp_bound(call: cst.Call, which: str) -> Optional[cst.BaseExpression]:
    """The ``min``/``max`` bound of a clamp in function or method spelling."""
    kw = keyword_arg(call, which)
    if kw is not None:
        return kw.value
    is_method = isinstance(call.func, cst.Attribute) and not _module_like_prefix(call.func.value)
    name = callee_name(call)
    base = 0 if is_method else 1
    if name == "clamp_min" and which == "min":
        a = arg(call, base)
        return a.value if a is not None else None
    if name == "clamp_max" and which == "max":
        a = arg(call, base)
        return a.value if a is not None else None
    if name in ("clamp", "clip"):
        a = arg(call, base + (0 if which == "min" else 1))
        if a is not None and not (isinstance(a.value, cst.Name) and a.value.value == "None"):
            return a.value
    return None


def _module_like_prefix(expr: cst.BaseExpression) -> bool:
    d = dotted_name(expr)
    return d is not None and d.split(".")[0] in ("torch", "th", "F", "nn", "np", "numpy", "math")


def _eps_like(ctx: FileContext, expr: cst.BaseExpression, depth: int = 4) -> bool:
    n = number(expr)
    if n is not None:
        return n > 0
    d = dotted_name(expr)
    if d is not None and _EPS_NAME.search(d.rsplit(".", 1)[-1]):
        return True
    if isinstance(expr, cst.Call):
        name = callee_name(expr)
        if name in ("finfo", "tiny", "eps"):
            return True
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("eps", "tiny"):
        return True  # torch.finfo(x.dtype).eps
    if isinstance(expr, cst.Name) and depth > 0:  # bounded: `x = y; y = x` hops in a cycle
        nxt = ctx.names.value_of(expr)
        if nxt is not None:
            return _eps_like(ctx, nxt, depth - 1)
    return False


def eps_subtracted(ctx: FileContext, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``p - eps`` (through a variable): the guard points the wrong way — it moves the argument of a log
    towards 0, and below it where ``p`` is 0 (``nan``).  Returns ``p``."""
    value = followed(ctx, expr, 3)
    if is_binop(value, cst.Subtract) and _eps_like(ctx, value.right):  # type: ignore[attr-defined]
        n = number(value.right)  # type: ignore[attr-defined]
        if n is None or n < 1e-2:
            return value.left  # type: ignore[attr-defined]
    return None


_ARITH_FUNCS = {
    "add": "+", "sub": "-", "subtract": "-", "div": "/", "divide": "/", "true_divide": "/",
}


def arith_parts(ctx: FileContext, expr: cst.BaseExpression
                ) -> Optional[Tuple[str, cst.BaseExpression, cst.BaseExpression]]:
    """``("+" | "-" | "/", left, right)`` for ``a + b`` and its element-wise spellings ``torch.add(a, b)``
    and ``a.add(b)`` (likewise ``sub``/``div``); None for anything else, and for calls with ``alpha``,
    ``rounding_mode`` or ``out``, which are not the plain operator."""
    if isinstance(expr, cst.BinaryOperation):
        op = {cst.Add: "+", cst.Subtract: "-", cst.Divide: "/"}.get(type(expr.operator))
        return (op, expr.left, expr.right) if op is not None else None
    if not isinstance(expr, cst.Call) or any(a.keyword is not None or a.star for a in expr.args):
        return None
    func = expr.func
    names = ctx.names.qualified_names(func)
    for short, op in _ARITH_FUNCS.items():
        if f"torch.{short}" in names and len(expr.args) == 2:
            return op, expr.args[0].value, expr.args[1].value
    if (isinstance(func, cst.Attribute) and func.attr.value in _ARITH_FUNCS and len(expr.args) == 1
            and not names and not ctx.names.qualified_names(func.value) and ctx.names.imports_torch):
        return _ARITH_FUNCS[func.attr.value], func.value, expr.args[0].value
    return None


def is_log_call(ctx: FileContext, node: cst.Call) -> bool:
    """A ``log`` call in any spelling, a same-module helper that only wraps ``torch.log`` included."""
    if callee_name(node) == "log":
        return True
    return len(node.args) == 1 and log_use(ctx, node) is not None


def tanh_complement(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3
                    ) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """For ``1 - t ** 2`` (``t.pow(2)``, ``t * t``, ``t.square()``) of a tanh output ``t``, maybe scaled
    (``scale * (1 - t.pow(2))``, the Jacobian of a tanh-squashed action): ``(t, the tanh call)``.  It is exactly 0
    wherever the tanh rounds to 1 in magnitude (inputs beyond about 9 in float32, 4.5 in float16)."""
    value = followed(ctx, expr, 3)
    if is_binop(value, cst.Multiply) and depth > 0:
        return tanh_complement(ctx, value.left, depth - 1) or tanh_complement(  # type: ignore[attr-defined]
            ctx, value.right, depth - 1)  # type: ignore[attr-defined]
    if not (is_binop(value, cst.Subtract) and is_one(value.left)):  # type: ignore[attr-defined]
        return None
    square = value.right  # type: ignore[attr-defined]
    base: Optional[cst.BaseExpression] = None
    if is_binop(square, cst.Power) and number(square.right) == 2.0:  # type: ignore[attr-defined]
        base = square.left  # type: ignore[attr-defined]
    elif is_binop(square, cst.Multiply) and ctx.code(square.left) == ctx.code(square.right):  # type: ignore
        base = square.left  # type: ignore[attr-defined]
    elif isinstance(square, cst.Call) and method_name(square) in ("pow", "square") and isinstance(
            square.func, cst.Attribute):
        power = arg(square, 0, "exponent")
        if method_name(square) == "square" and not square.args or power is not None and number(power.value) == 2.0:
            base = square.func.value
    if base is None:
        return None
    t = followed(ctx, base, 3)
    return (base, t) if tanh_use(ctx, t) is not None else None


def positive(ctx: FileContext, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """A log argument that cannot be zero: ``x + eps``, ``x.clamp(min=eps)``, ``clamp_min``, ``exp``,
    ``softplus``, a positive literal or constant tensor, products and ratios of those."""
    if _eps_like(ctx, expr) and not isinstance(expr, cst.Name):
        return True
    value = followed(ctx, expr, 3)
    if value is not expr and depth > 0:
        return positive(ctx, value, depth - 1)
    if is_binop(expr, cst.Add):
        return _eps_like(ctx, expr.left) or _eps_like(ctx, expr.right) or (  # type: ignore[attr-defined]
            depth > 0 and (positive(ctx, expr.left, depth - 1) or positive(ctx, expr.right, depth - 1))  # type: ignore
        )
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide, cst.Power)):
        if isinstance(expr.operator, cst.Power):
            return depth > 0 and positive(ctx, expr.left, depth - 1)
        return depth > 0 and positive(ctx, expr.left, depth - 1) and positive(ctx, expr.right, depth - 1)
    if isinstance(expr, cst.Call):
        name = callee_name(expr)
        if name in ("clamp", "clip", "clamp_min", "clamp_", "clip_", "clamp_min_"):
            bound = _clamp_bound(expr, "min")
            return bound is not None and (_eps_like(ctx, bound) or positive(ctx, bound, 0))
        if name in ("maximum", "fmax") or (name in ("max",) and len(expr.args) >= 2):
            return any(_eps_like(ctx, a.value) for a in expr.args)
        if name in ("exp", "softplus", "ones", "ones_like", "full", "arange", "rsqrt", "cosh", "numel", "size",
                    "len", "exp2"):
            return True
        if name in ("tensor", "as_tensor", "scalar_tensor"):
            first = arg(expr, 0)
            return first is not None and number(first.value) is not None and number(first.value) > 0  # type: ignore
    if isinstance(expr, cst.Subscript):
        return positive(ctx, expr.value, depth - 1) if depth > 0 else False
    return False


# -- softmax in its spellings --------------------------------------------------------------------
@dataclass(frozen=True)
class Softmax:
    """A softmax: ``node`` computes it, ``operand`` is the tensor it normalises (after any shift the code
    applied itself), ``dim`` the code of its dim (None: all elements; IMPLICIT; UNKNOWN)."""

    kind: str  # "torch" | "handwritten" | "function"
    node: cst.BaseExpression
    operand: cst.BaseExpression
    dim: DimCode
    keepdim: bool = True
    stable: bool = True  # hand-written: exponent shifted by its max
    use: Optional[OpUse] = None
    sum_node: Optional[cst.Call] = None
    eps: bool = False  # hand-written with ``sum + eps`` in the denominator
    unsqueezed: bool = False


def _layer_dim(ctx: FileContext, use: OpUse) -> DimCode:
    func = use.node.func
    ctors = [func] if isinstance(func, cst.Call) else list(ctx.names.values_before(func))
    for ctor in reversed(ctors):
        if isinstance(ctor, cst.Call):
            a = arg(ctor, 0, "dim")
            return IMPLICIT if a is None else ctx.code(a.value)
    return UNKNOWN


def torch_softmax(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Softmax]:
    use = softmax_use(ctx, expr)
    if use is None or use.operand is None:
        return None
    if use.kind == "layer":
        dim = _layer_dim(ctx, use)
    else:
        a = op_arg(use, 1, "dim")
        dim = IMPLICIT if a is None else ctx.code(a.value)
    return Softmax("torch", use.node, use.operand, dim, use=use)


def _sum_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[OpUse, bool, bool]]:
    """(sum use, unsqueezed, eps-added) for a softmax denominator."""
    eps = False
    value = followed(ctx, expr, 2)
    if is_binop(value, cst.Add):
        if _eps_like(ctx, value.right):  # type: ignore[attr-defined]
            value, eps = value.left, True  # type: ignore[attr-defined]
        elif _eps_like(ctx, value.left):  # type: ignore[attr-defined]
            value, eps = value.right, True  # type: ignore[attr-defined]
        value = followed(ctx, value, 2)
    unsqueezed = False
    restored = _restored_dim(ctx, value)
    if restored is not None:
        return restored + (eps,)
    if isinstance(value, cst.Call) and method_name(value) == "unsqueeze":
        unsqueezed = True
        inner = receiver(value)
        if inner is None:
            return None
        use = sum_use(ctx, inner)
        if use is None:
            return None
        a = op_arg(use, 1, "dim")
        b = arg(value, 0, "dim")
        if a is None or b is None or not same_code(ctx, a.value, b.value) or is_true(op_arg(use, 2, "keepdim")):
            return None
        return use, True, eps
    use = sum_use(ctx, value)
    if use is None:
        return None
    return use, unsqueezed, eps


def _minus_one_one(call: cst.Call) -> bool:
    """``.view(-1, 1)`` / ``.reshape(-1, 1)`` / ``.view((-1, 1))``."""
    args = call.args
    if len(args) == 1 and isinstance(args[0].value, (cst.Tuple, cst.List)):
        values = [el.value for el in args[0].value.elements]
    else:
        if any(a.keyword is not None or a.star for a in args):
            return False
        values = [a.value for a in args]
    return len(values) == 2 and number(values[0]) == -1 and number(values[1]) == 1


def _restored_dim(ctx: FileContext, value: cst.BaseExpression) -> Optional[Tuple[OpUse, bool]]:
    """A sum over one dim whose reduced dim is put back by another spelling than ``keepdim`` or
    ``unsqueeze``, where the result lines up with the summed tensor exactly as ``keepdim=True`` would:

    - ``s.view(-1, 1)`` / ``s.reshape(-1, 1)`` of ``sum(dim=1)`` or ``sum(dim=-1)``: a 1-D sum
      becomes a column, which is ``keepdim`` for the 2-D input such code is written for;
    - ``s[:, None]`` of ``sum(dim=1)`` (any rank): the new axis lands at position 1;
    - ``s[..., None]`` of ``sum(dim=-1)`` (any rank): the new axis lands last.

    Other combinations (``sum(0).view(-1, 1)``) broadcast the sum along the wrong axis and are
    left alone: they are not a softmax."""
    inner: Optional[cst.BaseExpression] = None
    wanted: Tuple[str, ...] = ()
    if isinstance(value, cst.Call) and method_name(value) in ("view", "reshape") and _minus_one_one(value):
        inner, wanted = receiver(value), ("1", "-1")
    elif isinstance(value, cst.Subscript) and len(value.slice) == 2:
        first, second = value.slice[0].slice, value.slice[1].slice
        if not (isinstance(second, cst.Index) and isinstance(second.value, cst.Name) and second.value.value == "None"):
            return None
        if isinstance(first, cst.Slice) and first.lower is None and first.upper is None and first.step is None:
            inner, wanted = value.value, ("1",)
        elif isinstance(first, cst.Index) and isinstance(first.value, cst.Ellipsis):
            inner, wanted = value.value, ("-1",)
    if inner is None:
        return None
    use = sum_use(ctx, followed(ctx, inner, 2))
    if use is None or is_true(op_arg(use, 2, "keepdim")):
        return None
    dim = dim_code(ctx, op_arg(use, 1, "dim"))
    if dim not in wanted:
        return None
    return use, True


def handwritten_softmax(ctx: FileContext, div: cst.BaseExpression) -> Optional[Softmax]:
    """``exp(x) / exp(x).sum(dim, keepdim=True)`` (any spelling, through variables)."""
    if not is_binop(div, cst.Divide):
        return None
    return softmax_parts(ctx, div, div.left, div.right)  # type: ignore[attr-defined]


def inplace_softmax(ctx: FileContext, node: cst.CSTNode) -> Optional[Softmax]:
    """``e /= e.sum(dim, keepdim=True)`` and ``e.div_(e.sum(...))`` with ``e = torch.exp(x)``: the
    same hand-written softmax, normalised in place."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.DivideAssign):
        if isinstance(node.target, cst.Name):
            return softmax_parts(ctx, node, node.target, node.value)
        return None
    if isinstance(node, cst.Call) and method_name(node) == "div_" and len(node.args) == 1:
        numer = receiver(node)
        if isinstance(numer, cst.Name) and node.args[0].keyword is None:
            return softmax_parts(ctx, node, numer, node.args[0].value)
    return None


def softmax_parts(ctx: FileContext, div: cst.CSTNode, numer: cst.BaseExpression, denom: cst.BaseExpression
                  ) -> Optional[Softmax]:
    numer_val = followed(ctx, numer, 2)
    e = exp_use(ctx, numer_val)
    if e is None or e.operand is None:
        return None
    found = _sum_of(ctx, denom)
    if found is None:
        return None
    s, unsqueezed, eps = found
    if s.operand is None:
        return None
    if not same_code(ctx, s.operand, numer):
        e2 = exp_use(ctx, followed(ctx, s.operand, 2))
        if e2 is None or e2.operand is None or not same_code(ctx, e2.operand, e.operand):
            return None
    dim_arg = op_arg(s, 1, "dim")
    keep = op_arg(s, 2, "keepdim")
    extra = [a for a in s.node.args if a.keyword is not None and canonical_keyword(a.keyword.value) not in ("dim", "keepdim")]
    if extra:
        return None
    dim = dim_code(ctx, dim_arg)
    keepdim = dim is ALL or is_true(keep) or unsqueezed
    return Softmax(
        "handwritten",
        div,
        e.operand,
        dim,
        keepdim=keepdim,
        stable=is_shifted(ctx, e.operand),
        use=e,
        sum_node=s.node,
        eps=eps,
        unsqueezed=unsqueezed,
    )


def _returned(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    body = function.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    last = body.body[-1]
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
        return last.body[0].value
    return None


def _params(function: cst.FunctionDef) -> List[cst.Param]:
    return list(function.params.posonly_params) + list(function.params.params)


def _call_arg_for(call: cst.Call, function: cst.FunctionDef, name: str, is_method: bool
                  ) -> Optional[cst.BaseExpression]:
    params = _params(function)
    if is_method and params:
        params = params[1:]
    for i, p in enumerate(params):
        if p.name.value == name:
            a = arg(call, i, name)
            if a is not None:
                return a.value
            return p.default
    return None


def function_softmax(ctx: FileContext, call: cst.BaseExpression) -> Optional[Softmax]:
    """A call of a function of this module whose body returns a softmax of its first parameter:
    ``def softmax(logits): exp = torch.exp(logits - torch.max(logits)); return exp / torch.sum(exp)``."""
    if not isinstance(call, cst.Call):
        return None
    function = ctx.function_for_call(call)
    if function is None:
        return None
    returned = _returned(function)
    if returned is None:
        return None
    value = followed(ctx, returned, 3)  # the function's own assignments before its return
    info = torch_softmax(ctx, value) or handwritten_softmax(ctx, value)
    if info is None:
        return None
    base = followed(ctx, info.operand, 2)
    if is_binop(base, cst.Subtract) and _is_max_like(ctx, base.right):  # type: ignore[attr-defined]
        base = base.left  # type: ignore[attr-defined]
    is_method = isinstance(call.func, cst.Attribute)
    params = _params(function)
    if is_method and params:
        params = params[1:]
    if not params or not isinstance(base, cst.Name) or base.value != params[0].name.value:
        return None
    first = arg(call, 0, params[0].name.value)
    if first is None:
        return None
    dim: DimCode = info.dim
    if dim not in (ALL, IMPLICIT, UNKNOWN):
        dim_node = cst.parse_expression(dim)  # type: ignore[arg-type]
        if isinstance(dim_node, cst.Name):
            if any(p.name.value == dim_node.value for p in _params(function)):
                mapped = _call_arg_for(call, function, dim_node.value, is_method)
                dim = ctx.code(mapped) if mapped is not None and _is_simple(mapped) else UNKNOWN
            else:
                dim = UNKNOWN
        elif number(dim_node) is None:
            dim = UNKNOWN
    if info.kind == "handwritten" and not info.keepdim:
        dim = UNKNOWN
    return Softmax("function", call, first.value, dim, stable=True)


def _is_simple(expr: cst.BaseExpression) -> bool:
    return number(expr) is not None or isinstance(expr, (cst.Integer, cst.Name))


def softmax_of(ctx: FileContext, expr: cst.BaseExpression, follow: bool = True) -> Optional[Softmax]:
    """The softmax ``expr`` is (through local variables when ``follow``)."""
    value = followed(ctx, expr, 3) if follow else expr
    return (
        torch_softmax(ctx, value)
        or handwritten_softmax(ctx, value)
        or function_softmax(ctx, value)
    )


# -- selections that commute with log ----------------------------------------------------------------
# log(f(p)) == f(log(p)) for these: they pick, reorder, reshape or cast elements, or take a minimum (log
# is increasing).  ``prod`` and arithmetic do not qualify.  A softmax's maximum is at least 1/C and never
# underflows, so ``max`` is not listed: its log is finite.
_COMMUTING_METHODS = (_PASS_METHODS | _SELECT_METHODS) - {"prod"}


def peel_selection(ctx: FileContext, expr: cst.BaseExpression, depth: int = 6) -> Tuple[cst.BaseExpression, bool]:
    """The innermost expression under a chain of element selections (``p[:, 1]``, ``p.gather(1, i)``,
    ``p.max(-1).values``, ``p.view(n, -1)``); the bool says whether anything was peeled."""
    peeled = False
    for _ in range(depth):
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "values":
            expr = expr.value
        elif (
            isinstance(expr, cst.Call)
            and method_name(expr) in _COMMUTING_METHODS
            and not _is_torch_module(ctx, receiver(expr))
        ):
            expr = receiver(expr)  # type: ignore[assignment]
        else:
            break
        peeled = True
    return expr, peeled


# -- probabilities that can be exactly zero ------------------------------------------------------
def probability_source(ctx: FileContext, expr: cst.BaseExpression, depth: int = 4, allow_max: bool = False
                       ) -> Optional[str]:
    """"softmax"/"sigmoid" when ``expr`` is such an output or is derived from one by indexing,
    gathering, reshaping, multiplying, summing, or ``1 - p``; None otherwise.  A softmax's maximum is
    never 0, but ``1 - max`` is: ``allow_max`` admits maxima under ``1 - p``."""
    value = followed(ctx, expr, 3)
    found = softmax_of(ctx, value, follow=False)
    if found is not None:
        return None if written_within_range(ctx, found.operand, "softmax") else "softmax"
    sig = sigmoid_use(ctx, value)
    if sig is not None:
        return None if written_within_range(ctx, sig.operand, "sigmoid") else "sigmoid"
    if depth <= 0:
        return None
    if isinstance(value, cst.Subscript):
        return probability_source(ctx, value.value, depth - 1, allow_max)
    if isinstance(value, cst.Attribute) and value.attr.value in ("values", "T", "mT"):
        return probability_source(ctx, value.value, depth - 1, allow_max)
    if isinstance(value, cst.Call):
        m = method_name(value)
        walk = _PASS_METHODS | _SELECT_METHODS | {"sum", "mean"} | ({"max", "amax"} if allow_max else set())
        if m is not None and m in walk and not _is_torch_module(ctx, receiver(value)):
            return probability_source(ctx, receiver(value), depth - 1, allow_max)  # type: ignore[arg-type]
        funcs = _SELECT_FUNCS | {"torch.sum", "torch.mean"} | ({"torch.max", "torch.amax"} if allow_max else set())
        if ctx.names.matches(value.func, funcs):
            first = arg(value, 0, "input")
            if first is not None:
                return probability_source(ctx, first.value, depth - 1, allow_max)
    if is_binop(value, cst.Multiply):
        return probability_source(ctx, value.left, depth - 1) or probability_source(  # type: ignore
            ctx, value.right, depth - 1  # type: ignore[attr-defined]
        )
    if is_binop(value, cst.Subtract) and is_one(value.left):  # type: ignore[attr-defined]
        return probability_source(ctx, value.right, depth - 1, True)  # type: ignore[attr-defined]
    return None


def _is_torch_module(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> bool:
    if expr is None:
        return True
    return bool(ctx.names.qualified_names(expr))


def is_count(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Counts, which can be zero: ``bincount``, ``histc``, ``count_nonzero``, ``(cond).sum()``."""
    value = followed(ctx, expr, 2)
    if isinstance(value, cst.Call):
        if ctx.names.matches(value.func, _COUNT_FUNCS) or method_name(value) in ("bincount", "count_nonzero"):
            return True
        s = sum_use(ctx, value)
        if s is not None and s.operand is not None:
            inner = followed(ctx, s.operand, 1)
            if isinstance(inner, cst.Comparison):
                return True
    return False


# -- hand-written losses -------------------------------------------------------------------------
def _strip_negation(expr: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    if is_negation(expr):
        return expr.expression, True  # type: ignore[attr-defined]
    return expr, False


def log_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[OpUse, Optional[cst.BaseExpression]]]:
    """(the log use, the value it was read from when through a variable) for ``log(...)`` or a name
    assigned from one."""
    use = log_use(ctx, expr)
    if use is not None:
        return use, None
    value = followed(ctx, expr, 2)
    if value is not expr:
        use = log_use(ctx, value)
        if use is not None:
            return use, value
    return None


@dataclass(frozen=True)
class CrossEntropy:
    """``-sum(labels * log(softmax(logits)))``: ``node`` is the expression to replace, ``inner`` the sum
    call inside it that the fix turns into a call (``node`` is ``inner`` or a negation around a chain of
    reductions over it), ``reduction`` what the fix passes."""

    node: cst.BaseExpression
    inner: cst.Call
    labels: cst.BaseExpression
    log: OpUse
    log_source: Optional[cst.BaseExpression]
    softmax: Softmax
    reduction: str  # "sum" | "none"
    negated_outside: bool


def _outer_negation(ctx: FileContext, node: cst.CSTNode) -> Optional[cst.UnaryOperation]:
    """A minus applied to ``node`` directly or across ``.mean()``/``.sum()``/``torch.mean``/``/ n``."""
    cur = node
    for _ in range(5):
        parent = ctx.parent(cur)
        if parent is None:
            return None
        if is_negation(parent):
            return parent  # type: ignore[return-value]
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in ("mean", "sum"):
                cur = call
                continue
            return None
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.args and call.args[0] is parent and (
                mean_use(ctx, call) is not None or sum_use(ctx, call) is not None
            ):
                cur = call
                continue
            return None
        if is_binop(parent, cst.Divide) and parent.left is cur:  # type: ignore[attr-defined]
            cur = parent
            continue
        return None
    return None


def match_cross_entropy(ctx: FileContext, call: cst.BaseExpression) -> Optional[CrossEntropy]:
    """``call`` is the ``sum`` of a hand-written softmax cross-entropy."""
    found = _cross_entropy(ctx, call, True)
    return found if isinstance(found, CrossEntropy) else None


@dataclass(frozen=True)
class LossOfLog:
    """A negated per-target log-likelihood whose probabilities are not a softmax of this function:
    ``-sum(labels * log(p))``, ``-log(p)[range(n), y].mean()``, ``-log(p.gather(1, y)).mean()``.  ``node``
    is the whole loss, ``log`` the log in it, ``probs`` the expression the log is taken of (before any
    selection): the program model says whether it is a softmax (a model's output, a helper's return)."""

    node: cst.BaseExpression
    log: OpUse
    probs: cst.BaseExpression
    per_target: bool


def cross_entropy_of_log(ctx: FileContext, call: cst.BaseExpression) -> Optional[LossOfLog]:
    """``call`` is the ``sum`` of ``-sum(labels * log(p))`` with ``p`` no softmax this module spells
    (not an entropy ``-sum(p * log(p))``)."""
    found = _cross_entropy(ctx, call, False)
    return found if isinstance(found, LossOfLog) else None


def _per_target_base(ctx: FileContext, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``p[range(n), y]``, ``p[torch.arange(n), y]``, ``p.gather(1, y)``, ``torch.gather(p, 1, y)``: ``p``."""
    if isinstance(expr, cst.Subscript):
        pair = _two_indices(expr)
        return expr.value if pair is not None and _row_index(pair[0]) else None
    if isinstance(expr, cst.Call) and callee_name(expr) == "gather" and expr.args:
        func = expr.func
        if isinstance(func, cst.Attribute) and not ctx.names.qualified_names(func) and len(expr.args) >= 2:
            return func.value
        if "torch.gather" in ctx.names.qualified_names(func) and len(expr.args) >= 3:
            first = arg(expr, 0, "input")
            return first.value if first is not None else None
    return None


def per_target_log(ctx: FileContext, expr: cst.BaseExpression) -> Optional[LossOfLog]:
    """``expr`` is a log of probabilities taken per target, under a minus (across ``.mean()``, ``.sum()``,
    ``/ n``): ``log(p)[range(n), y]``, ``log(p).gather(1, y)`` (the log maybe held in a variable) or
    ``log(p[range(n), y])``, ``log(p.gather(1, y))``."""
    base = _per_target_base(ctx, expr)
    if base is not None:
        found = log_of(ctx, base)
        if found is None or found[0].operand is None:
            return None
        log, probs = found[0], found[0].operand
    else:
        log = log_use(ctx, expr)
        if log is None or log.operand is None:
            return None
        probs = _per_target_base(ctx, followed(ctx, log.operand, 2))
        if probs is None:
            return None
    outer = _outer_negation(ctx, expr)
    if outer is None:
        return None
    return LossOfLog(outer, log, probs, True)


def _cross_entropy(ctx: FileContext, call: cst.BaseExpression, need_softmax: bool):
    s = sum_use(ctx, call)
    if s is None or s.operand is None:
        return None
    product, inner_neg = _strip_negation(s.operand)
    if not is_binop(product, cst.Multiply):
        return None
    sides = [product.left, product.right]  # type: ignore[attr-defined]
    for i, side in enumerate(sides):
        side, neg = _strip_negation(side)
        found = log_of(ctx, side)
        if found is None:
            continue
        log, source = found
        if log.operand is None:
            continue
        sm = softmax_of(ctx, log.operand)
        labels, lneg = _strip_negation(sides[1 - i])
        if sm is None and not need_softmax:
            if same_code(ctx, labels, log.operand) or same_code(ctx, followed(ctx, labels, 2),
                                                                 followed(ctx, log.operand, 2)):
                return None  # an entropy, -sum(p * log(p))
            if int(inner_neg) + int(neg) + int(lneg) + int(_outer_negation(ctx, s.node) is not None) != 1:
                return None
            outer = _outer_negation(ctx, s.node)
            return LossOfLog(outer if outer is not None else s.node, log, log.operand, False)
        if sm is None or (sm.kind == "handwritten" and sm.eps):
            continue
        same = softmax_of(ctx, labels)
        if same is not None and same_code(ctx, same.operand, sm.operand):
            return None  # an entropy, -sum(p * log(p)): the log-of-softmax rule rewrites its log
        negs = int(inner_neg) + int(neg) + int(lneg)
        outer = _outer_negation(ctx, s.node)
        negs += int(outer is not None)
        if negs != 1:
            return None
        dim_arg = op_arg(s, 1, "dim")
        if is_true(op_arg(s, 2, "keepdim")) or any(
            a.keyword is not None and canonical_keyword(a.keyword.value) not in ("dim", "keepdim", "input") for a in s.node.args
        ):
            return None
        reduction = "sum" if dim_arg is None else "none"
        node: cst.BaseExpression = outer if outer is not None else s.node
        return CrossEntropy(node, s.node, labels, log, source, sm, reduction, outer is not None)
    return None


def cross_entropy_dim_ok(ce: CrossEntropy, ctx: FileContext) -> bool:
    """The sum reduces over the softmax dim (or over everything)."""
    s = sum_use(ctx, ce.inner)
    assert s is not None
    dim_arg = op_arg(s, 1, "dim")
    if dim_arg is None:
        return ce.softmax.dim not in (IMPLICIT, UNKNOWN)
    return same_dim(ctx.code(dim_arg.value), ce.softmax.dim)


@dataclass(frozen=True)
class BinaryCrossEntropy:
    """``-(y * log(p) + (1 - y) * log(1 - p))`` with ``p = sigmoid(x)``."""

    node: cst.BaseExpression  # replaced by the fix
    inner: cst.BaseExpression  # the sum of the two terms, inside ``node``
    logits: cst.BaseExpression
    labels: cst.BaseExpression
    logs: Tuple[cst.Call, cst.Call]
    sigmoid_sources: Tuple[Optional[cst.BaseExpression], ...]
    negated_outside: bool


def _term(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, OpUse, Optional[cst.BaseExpression], bool]]:
    """``y * log(p)`` -> (y, log use, the log value source, negated)."""
    expr, neg = _strip_negation(expr)
    if not is_binop(expr, cst.Multiply):
        return None
    for i, side in enumerate((expr.left, expr.right)):  # type: ignore[attr-defined]
        side2, neg2 = _strip_negation(side)
        found = log_of(ctx, side2)
        if found is not None:
            other = (expr.left, expr.right)[1 - i]  # type: ignore[attr-defined]
            other, neg3 = _strip_negation(other)
            return other, found[0], found[1], (neg + neg2 + neg3) % 2 == 1
    return None


def _sigmoid_operand(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]:
    use = sigmoid_use(ctx, expr)
    source = None
    if use is None:
        value = followed(ctx, expr, 2)
        use = sigmoid_use(ctx, value)
        source = value
    if use is None or use.operand is None or use.kind == "layer":
        return None
    return use.operand, source


def match_binary_cross_entropy(ctx: FileContext, expr: cst.BaseExpression) -> Optional[BinaryCrossEntropy]:
    """``expr`` is ``y*log(p) + (1-y)*log(1-p)`` (either order, or ``-a - b``) with p a sigmoid."""
    if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return None
    t1 = _term(ctx, expr.left)
    t2 = _term(ctx, expr.right)
    if t1 is None or t2 is None:
        return None
    if isinstance(expr.operator, cst.Subtract):
        t2 = (t2[0], t2[1], t2[2], not t2[3])
    if t1[3] != t2[3]:
        return None
    negated = t1[3]
    for pos, neg in ((t1, t2), (t2, t1)):
        # neg: (1 - y) * log(1 - p)
        y = pos[0]
        one_minus_y = followed(ctx, neg[0], 1)
        if not (is_binop(one_minus_y, cst.Subtract) and is_one(one_minus_y.left)  # type: ignore[attr-defined]
                and same_code(ctx, one_minus_y.right, y)):  # type: ignore[attr-defined]
            continue
        p_found = _sigmoid_operand(ctx, pos[1].operand) if pos[1].operand is not None else None
        if p_found is None:
            continue
        one_minus_p = followed(ctx, neg[1].operand, 2) if neg[1].operand is not None else None
        if not (is_binop(one_minus_p, cst.Subtract) and is_one(one_minus_p.left)):  # type: ignore[attr-defined]
            continue
        q_found = _sigmoid_operand(ctx, one_minus_p.right)  # type: ignore[attr-defined]
        if q_found is None or not same_code(ctx, q_found[0], p_found[0]):
            continue
        outer = None
        if not negated:
            outer = _outer_negation(ctx, expr)
            if outer is None:
                return None
        node = outer if outer is not None else expr
        return BinaryCrossEntropy(node, expr, p_found[0], y, (pos[1].node, neg[1].node),
                                  (p_found[1], q_found[1]), outer is not None)
    return None


@dataclass(frozen=True)
class IndexedNll:
    """``-log(softmax(x))[range(n), y]`` (or ``-log(p[range(n), y])``): the negative log-likelihood of class
    indices picked by advanced indexing."""

    node: cst.BaseExpression  # the negation (maybe around .mean()/.sum()) that the fix replaces
    inner: cst.BaseExpression  # the negated expression inside ``node``
    log: OpUse
    softmax: Softmax
    rows: cst.BaseExpression
    labels: cst.BaseExpression


def _row_index(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and callee_name(expr) in ("range", "arange")


def _two_indices(sub: cst.Subscript) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    if len(sub.slice) != 2:
        return None
    items = []
    for el in sub.slice:
        if not isinstance(el.slice, cst.Index) or el.slice.star is not None:
            return None
        items.append(el.slice.value)
    return items[0], items[1]


def match_indexed_nll(ctx: FileContext, expr: cst.BaseExpression) -> Optional[IndexedNll]:
    """``expr`` is ``log_probs[range(n), y]`` (``log_probs`` a log of a softmax) or ``log(p[range(n), y])``
    (``p`` a softmax), under a minus."""
    log: Optional[OpUse] = None
    sm: Optional[Softmax] = None
    pair = None
    if isinstance(expr, cst.Subscript):
        pair = _two_indices(expr)
        found = log_of(ctx, expr.value)
        if pair is None or found is None or found[0].operand is None:
            return None
        log = found[0]
        sm = softmax_of(ctx, found[0].operand)
    else:
        log = log_use(ctx, expr)
        if log is None or log.operand is None:
            return None
        sub = followed(ctx, log.operand, 2)
        if not isinstance(sub, cst.Subscript):
            return None
        pair = _two_indices(sub)
        if pair is None:
            return None
        sm = softmax_of(ctx, sub.value)
    if sm is None or (sm.kind == "handwritten" and sm.eps) or not _row_index(pair[0]):
        return None
    outer = _outer_negation(ctx, expr)
    if outer is None:
        return None
    return IndexedNll(outer, expr, log, sm, pair[0], pair[1])


# -- spelling the fixes --------------------------------------------------------------------------
def call_prefix(ctx: FileContext, use: OpUse, module: str = "torch") -> Optional[str]:
    """The prefix a function-spelled op was called through when it names ``module`` (``th`` in
    ``th.exp(x)``), else any name for ``module`` visible here."""
    func = use.node.func
    if use.kind == "function" and isinstance(func, cst.Attribute):
        prefix = dotted_name(func.value)
        if prefix is not None and module in ctx.names.qualified_names(func.value):
            return prefix
    return module_ref(ctx, module)


# -- reporting once the enclosing function is known ------------------------------------------------
class Deferred:
    """Holds reports of log calls until the end of their function (or module), when every reader of
    the log's value has been walked (parents and uses are known then)."""

    def __init__(self) -> None:
        self.pending: Dict[Optional[cst.CSTNode], List[Tuple[cst.Call, cst.CSTNode, Optional[str], object]]] = {}

    def add(self, ctx: FileContext, log_call: cst.Call, node: cst.CSTNode, message: Optional[str], fix: object) -> None:
        scope = ctx.names.function_scope_node()
        self.pending.setdefault(scope, []).append((log_call, node, message, fix))

    def flush(self, ctx: FileContext, scope: Optional[cst.CSTNode]) -> List[Tuple[cst.CSTNode, Optional[str], object]]:
        return [(node, message, fix) for _, node, message, fix in self.pending.pop(scope, [])]


class DeferredLogReports:
    """Mixin for the rules whose log reports wait in ``self.deferred`` for the end of their function:
    it flushes them when a function, a lambda or the module ends."""

    deferred: Deferred

    def _flush(self, scope: Optional[cst.CSTNode]) -> None:
        for node, message, fix in self.deferred.flush(self.ctx, scope):  # type: ignore[attr-defined]
            self.report(node, message, fix=fix)  # type: ignore[attr-defined]

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._flush(node)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._flush(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._flush(None)
        for scope in list(self.deferred.pending):
            self._flush(scope)


#: written logits whose spread is below this have a softmax no element of which underflows to 0 in
#: float32 (``exp(-80)`` is about 1.8e-35, above the smallest normal float32)
NO_UNDERFLOW_SPREAD = 80.0
#: numbers written out below this have an exponential that overflows in no floating dtype (float16's
#: largest value is about exp(11.09))
NO_OVERFLOW_WRITTEN = 11.0
#: written logits below this in magnitude have a sigmoid that rounds to neither 0 nor 1 in float32
#: (``1 - sigmoid(15)`` is about 3e-7)
NO_SATURATION = 15.0
#: torch functions that make a tensor of the numbers written in their first argument
_LITERAL_TENSORS = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor",
                              "torch.as_tensor"})


def written_values(ctx: FileContext, expr: Optional[cst.BaseExpression], hops: int = 0) -> Optional[List[float]]:
    """The numbers of a tensor the code writes out (``torch.tensor([[1.5, 0.8, 2.1]])``), directly or through
    the name holding it where it is read; None when any element is not a number written there."""
    if isinstance(expr, cst.Name) and hops < 2:
        if _changed_in_place(ctx, expr):
            return None  # `logits.mul_(t)`, `logits[0] = v`: other numbers by the read
        return written_values(ctx, ctx.names.value_of(expr), hops + 1)
    if not isinstance(expr, cst.Call) or not expr.args or not ctx.names.qualified_names(expr.func) & _LITERAL_TENSORS:
        return None
    first = expr.args[0]
    if first.keyword is not None or first.star:
        return None
    found: List[float] = []
    stack: List[cst.BaseExpression] = [first.value]
    while stack:
        e = stack.pop()
        if isinstance(e, (cst.List, cst.Tuple)):
            stack.extend(el.value for el in e.elements if not isinstance(el, cst.StarredElement))
            if any(isinstance(el, cst.StarredElement) for el in e.elements):
                return None
            continue
        n = number(e)
        if n is None:
            return None
        found.append(n)
    return found or None


def _changed_in_place(ctx: FileContext, name: cst.Name) -> bool:
    """Whether code of the name's function (or module) changes the tensor it holds in place: an in-place method
    (``x.mul_(t)``), an item or slice written (``x[0] = v``), an augmented assignment."""
    scope = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)) or ctx.module
    for use in ctx.names_in(scope, name.value):
        parent = ctx.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value.endswith("_") \
                and not parent.attr.value.startswith("_"):
            return True
        if isinstance(parent, cst.Subscript) and parent.value is use and written_target(ctx, parent):
            return True
        if isinstance(parent, cst.AugAssign) and parent.target is use:
            return True
    return False


def written_within_range(ctx: FileContext, operand: Optional[cst.BaseExpression], kind: str) -> bool:
    """The input of a softmax (``kind`` "softmax") or a sigmoid ("sigmoid") is numbers the code writes out
    (:func:`written_values`) for which its output can be neither 0 nor, for a sigmoid, 1: a worked
    example's logits, not data."""
    values = written_values(ctx, operand)
    if values is None:
        return False
    if kind == "softmax":
        return max(values) - min(values) < NO_UNDERFLOW_SPREAD
    return max(abs(v) for v in values) < NO_SATURATION


__all__ = [
    "written_values",
    "written_within_range",
    "tanh_complement",
    "arith_parts",
    "is_log_call",
    "is_false_or_absent",
    "eps_subtracted",
    "ALL",
    "DeferredLogReports",
    "IMPLICIT",
    "UNKNOWN",
    "SEQUENTIAL_SIGMOID",
    "from_sequential_sigmoid",
    "BinaryCrossEntropy",
    "CrossEntropy",
    "Deferred",
    "LossOfLog",
    "cross_entropy_of_log",
    "per_target_log",
    "IndexedNll",
    "Softmax",
    "atom_code",
    "call_prefix",
    "cross_entropy_dim_ok",
    "followed",
    "function_softmax",
    "handwritten_softmax",
    "is_count",
    "is_one",
    "is_shifted",
    "log_of",
    "match_binary_cross_entropy",
    "match_cross_entropy",
    "match_indexed_nll",
    "module_ref",
    "movable",
    "neg_code",
    "number",
    "peel_selection",
    "positive",
    "probability_source",
    "same_code",
    "same_dim",
    "softmax_of",
    "torch_softmax",
    "all_elements_code",
    "dim_code",
    "inplace_softmax",
    "integer_valued",
    "is_binop",
    "is_true",
    "removable_assignment",
    "softmax_parts",
    "torch_call_code",
    "uses_elsewhere",
]


# -- building replacement calls --------------------------------------------------------------------
def torch_call_code(ctx: FileContext, template: Optional[OpUse], function: str, operand: cst.BaseExpression,
                    args: Sequence[str] = ()) -> str:
    """``<torch>.<function>(<operand>, <args>)``, or ``<operand>.<function>(<args>)`` when the template op
    was written as a method or no name for ``torch`` is visible here."""
    prefix = None
    if template is not None and template.kind != "method":
        prefix = call_prefix(ctx, template, "torch")
    elif template is None:
        prefix = module_ref(ctx, "torch")
    if prefix is not None:
        return f"{prefix}.{function}({', '.join([ctx.code(operand), *args])})"
    return f"{atom_code(ctx, operand)}.{function}({', '.join(args)})"


def all_elements_code(ctx: FileContext, template: Optional[OpUse], function: str,
                      operand: cst.BaseExpression) -> Optional[str]:
    """``torch.<function>(x.flatten(), dim=0).view_as(x)``: the op over every element, in x's shape.
    None when ``x`` is not a plain name or attribute (it would be evaluated twice)."""
    if dotted_name(operand) is None:
        return None
    x = ctx.code(operand)
    flat = cst.parse_expression(f"{x}.flatten()")
    return torch_call_code(ctx, template, function, flat, ["dim=0"]) + f".view_as({x})"


def uses_elsewhere(ctx: FileContext, assign: cst.Assign, inside: Sequence[cst.CSTNode]) -> bool:
    """Whether the single name ``assign`` binds is read anywhere but inside the ``inside`` nodes
    (which must be visited already) in its function."""
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return True
    scope = ctx.enclosing(assign, (cst.FunctionDef, cst.Lambda)) or ctx.module
    for n in ctx.names_in(scope, target.value):
        if n is target or isinstance(ctx.parent(n), cst.Param):
            continue
        if _contains(ctx, assign.value, n):
            continue  # the old value, read by the assignment itself
        if any(_contains(ctx, node, n) for node in inside):
            continue
        return True
    return False


def _contains(ctx: FileContext, node: cst.CSTNode, name: cst.Name) -> bool:
    return any(m is name for m in ctx.names_in(node, name.value))


def removable_assignment(ctx: FileContext, value: Optional[cst.BaseExpression],
                         inside: Sequence[cst.CSTNode]) -> Optional[cst.SimpleStatementLine]:
    """The statement ``name = value`` when it can be deleted: a single-target assignment alone on its
    line whose name is read only inside ``inside``."""
    if value is None:
        return None
    assign = ctx.parent(value)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    if not isinstance(assign.targets[0].target, cst.Name):
        return None
    stmt = ctx.parent(assign)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    block = ctx.block_of(stmt)
    if block is None or len(block) < 2:
        return None
    if uses_elsewhere(ctx, assign, inside):
        return None
    return stmt
