"""Values whose precision is known from how they are built, and values nobody reads.

Questions asked after the walk (the names layer answers with the whole scope's assignments):

- :func:`float64_value` -- a tensor that is ``float64`` by construction: a torch factory given
  ``dtype=torch.float64`` (or ``torch.double``), ``.double()``, ``.to(torch.float64)``,
  ``torch.DoubleTensor(...)``, arithmetic of such a tensor with numbers or other ``float64`` tensors,
  a call of a project function or of a method of the instance (``self.levels(n)``) every ``return`` of
  which is one of these (followed through the program model, in this file or a project module it imports), a name every assignment of which is one of these, ``self.<attr>`` assigned or registered as a
  buffer (``self.register_buffer("alpha", torch.zeros(n, dtype=torch.float64))``) only so.  Anything
  else (a parameter, a default dtype, a library call) is not known to be ``float64``.
- :func:`never_read` -- an expression whose value is dropped: a statement of its own in a function, the
  whole value of an assignment to a local name that nothing reads, or the value of a buffer
  (``self.register_buffer("name", value)``) whose name nothing in the project spells again.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg, keyword_arg, method_name, receiver
from torchlint.analysis.definitions import definition_of, find_method, function_returns
from torchlint.analysis.project import project_of
from torchlint.analysis.walk import iter_nodes

#: how many steps (operands, assignments, returns) a value is followed back to its construction
_MAX_DEPTH = 40
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
                              "cpu", "cuda", "cumprod", "cumsum", "cos", "sin", "log", "log2", "log10", "pow",
                              "square", "flip", "roll", "rsqrt", "reciprocal"})
#: ``torch.<op>(x, ...)`` that keep the dtype of ``x``
_KEEPING_FUNCTIONS = frozenset(f"torch.{m}" for m in _KEEPING_METHODS - {"view", "t", "cpu", "cuda", "detach",
                                                                       "contiguous", "expand", "expand_as"})
#: of those, the ones that keep the shape too (not a reduction, not an index)
_SHAPE_KEEPING = frozenset(_KEEPING_METHODS - {"mean", "sum", "squeeze"})
#: factories whose result has at least one dimension when given sizes (``torch.tensor`` of a list too)
_SIZED_FACTORIES = _FACTORIES - {"torch.tensor", "torch.as_tensor"}


def _is_float64_dtype(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> bool:
    return expr is not None and bool(ctx.names.qualified_names_at(expr) & _FLOAT64)


#: per file: node id -> whether it is float64 by construction (True while being decided: a value built
#: from itself, ``a = a / a[0]``, keeps the dtype its other assignments give it)
_FLOAT64_OF: "Fact[Dict[int, bool]]" = Fact("dtypes.float64", lambda ctx: {})
#: per file: node id -> whether it is a float64 tensor with dimensions by construction
_SIZED_OF: "Fact[Dict[int, bool]]" = Fact("dtypes.sized_float64", lambda ctx: {})


def float64_value(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``expr`` is a ``float64`` tensor by construction (see the module docstring)."""
    if depth > _MAX_DEPTH:
        return False
    known = _FLOAT64_OF.of(ctx)
    key = id(expr)
    if key in known:
        return known[key]
    known[key] = True
    answer = known[key] = _float64_value(ctx, expr, depth)
    return answer


def _float64_value(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
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
        if names & _KEEPING_FUNCTIONS:
            first = arg(expr, 0, "input")
            return first is not None and float64_value(ctx, first.value, depth + 1)
        if name in _KEEPING_METHODS:
            inner = receiver(expr)
            return inner is not None and float64_value(ctx, inner, depth + 1)
        return _returns_float64(ctx, expr, depth)
    if isinstance(expr, cst.BinaryOperation):
        sides = [s for s in (expr.left, expr.right) if not isinstance(s, (cst.Integer, cst.Float))]
        if any(_sized_float64(ctx, s, depth + 1) for s in sides):
            return True  # a float64 tensor with dimensions decides the dtype of arithmetic with any real value
        return bool(sides) and all(float64_value(ctx, s, depth + 1) or _scalar_tensor(ctx, s) for s in sides) and any(
            not _scalar_tensor(ctx, s) for s in sides)
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


def _sized_float64(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    """A ``float64`` tensor with at least one dimension by construction: a sized factory given
    ``dtype=torch.float64`` (``torch.tensor`` of a list), arithmetic with such a tensor, element-wise
    functions of one, a name every assignment of which is one.  (Arithmetic of a float64 tensor with
    dimensions and any real tensor or number is float64; a 0-d float64 tensor gives way to a float32
    tensor with dimensions.)"""
    if depth > _MAX_DEPTH:
        return False
    known = _SIZED_OF.of(ctx)
    key = id(expr)
    if key in known:
        return known[key]
    known[key] = True
    answer = known[key] = _sized(ctx, expr, depth)
    return answer


def _sized(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    if isinstance(expr, cst.Call):
        names = ctx.names.qualified_names_at(expr.func)
        if names & _FACTORIES:
            dtype = keyword_arg(expr, "dtype")
            if dtype is None or not _is_float64_dtype(ctx, dtype.value):
                return False
            if names & _SIZED_FACTORIES:
                return bool(expr.args) and expr.args[0].keyword is None
            first = arg(expr, 0, "data")
            return first is not None and isinstance(first.value, (cst.List, cst.Tuple, cst.ListComp))
        if names & _KEEPING_FUNCTIONS:
            first = arg(expr, 0, "input")
            return first is not None and _function_name(names) in _SHAPE_KEEPING and _sized_float64(
                ctx, first.value, depth + 1)
        name = method_name(expr)
        inner = receiver(expr)
        return name in _SHAPE_KEEPING and inner is not None and _sized_float64(ctx, inner, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return any(_sized_float64(ctx, s, depth + 1) for s in (expr.left, expr.right))
    if isinstance(expr, cst.UnaryOperation):
        return _sized_float64(ctx, expr.expression, depth + 1)
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None or b.imports or any(v is None for v in b.values):
            return False
        values = ctx.names.values_at(expr)
        return bool(values) and all(_sized_float64(ctx, v, depth + 1) for v in values)
    return False


def _function_name(names: frozenset) -> str:
    """``torch.clip`` -> "clip" (the first of ``names`` under ``torch.``)."""
    for n in sorted(names):
        if n.startswith("torch."):
            return n[len("torch."):]
    return ""


def _scalar_tensor(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A 0-d tensor by construction (``torch.tensor(start / tau)``, maybe through element-wise methods):
    in arithmetic with a tensor of dimensions it keeps that tensor's float dtype."""
    while isinstance(expr, cst.Call) and method_name(expr) in _SHAPE_KEEPING and receiver(expr) is not None:
        expr = receiver(expr)  # type: ignore[assignment]
    if not isinstance(expr, cst.Call) or not ctx.names.qualified_names_at(expr.func) & {"torch.tensor"}:
        return False
    first = arg(expr, 0, "data")
    return first is not None and isinstance(first.value, (cst.Integer, cst.Float, cst.BinaryOperation,
                                                          cst.UnaryOperation))


def _returns_float64(ctx: FileContext, call: cst.Call, depth: int) -> bool:
    """``helper(...)`` where ``helper`` is a project function (or ``self.helper(...)``, a method of the class
    or of a project base class) every ``return`` of which gives a ``float64``
    tensor by construction (read in the helper's own file); also through a local name every assignment
    of which is such a function (``fn = linear_schedule`` / ``fn = cosine_schedule``)."""
    functions = []
    found = definition_of(ctx, call.func)
    func = call.func
    if found is None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value == "self":
        cls = ctx.enclosing(call, cst.ClassDef)  # `self.levels(n)`: a method of the class (or of a project base)
        found = find_method(ctx, cls, func.attr.value) if isinstance(cls, cst.ClassDef) else None
    if found is not None:
        functions.append(found)
    elif isinstance(call.func, cst.Name):
        b = ctx.names.binding_at(call.func, call.func.value)
        if b is None or b.imports or any(v is None for v in b.values):
            return False
        for value in ctx.names.values_at(call.func):
            found = definition_of(ctx, value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            if found is None:
                return False
            functions.append(found)
    if not functions:
        return False
    for fctx, function in functions:
        if not isinstance(function, cst.FunctionDef):
            return False
        returns = function_returns(function)
        if not returns or any(isinstance(n, (cst.Yield, cst.Await)) for n in iter_nodes(function.body)):
            return False  # a generator or a coroutine gives no tensor
        if not all(r.value is not None and float64_value(fctx, r.value, depth + 1) for r in returns):
            return False
    return True


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
    module level a notebook shows it), the whole value of an assignment to a plain name of a
    function that no code of the function reads (no ``global``/``nonlocal`` for it, no nested function
    or class that could), or the value (through method calls on it and one-argument wrappers) of a
    buffer registered under a name that no other place of the file and no other file of the project
    spells (``getattr(self, "name")`` and ``self.name`` both spell it)."""
    buffer = _buffer_of(ctx, expr)
    if buffer is not None:
        return not _spelled_elsewhere(ctx, buffer)
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


#: how many calls around a value are followed to the ``register_buffer`` it is the value of
_BUFFER_HOPS = 3


def _buffer_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """The name ``expr`` is registered under as a buffer: ``self.register_buffer("name", expr)``, also
    through method calls on it (``expr.float()``) and wrappers of one argument (``to_tensor(expr)``)."""
    node: cst.CSTNode = expr
    for _ in range(_BUFFER_HOPS + 1):
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
            node = call
            continue
        if not isinstance(parent, cst.Arg) or parent.keyword is not None and parent.keyword.value != "tensor":
            return None
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return None
        if method_name(call) == "register_buffer" and len(call.args) >= 2 and parent is arg(call, 1, "tensor"):
            key = arg(call, 0, "name")
            value = key.value if key is not None else None
            if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str) \
                    and value.evaluated_value.isidentifier():
                return value.evaluated_value
            return None
        wrapped = _through_register_helper(ctx, call, parent)
        if wrapped is not None:
            return wrapped
        if len(call.args) != 1 or parent.keyword is not None:
            return None
        node = call
    return None


def _through_register_helper(ctx: FileContext, call: cst.Call, given: cst.Arg) -> Optional[str]:
    """``register(name, value)`` with ``register = lambda n, v: self.register_buffer(n, v.float())``: the
    name ``given`` (an argument of ``call``) is registered under, when the lambda passes its parameters on
    as the buffer's name and value."""
    if not isinstance(call.func, cst.Name) or given.keyword is not None or given not in call.args:
        return None
    b = ctx.names.binding_at(call.func, call.func.value)
    if b is None or b.imports or not b.values or any(not isinstance(v, cst.Lambda) for v in b.values):
        return None
    position = list(call.args).index(given)
    for helper in b.values:
        assert isinstance(helper, cst.Lambda)
        params = [p.name.value for p in helper.params.params]
        body = helper.body
        if not (isinstance(body, cst.Call) and method_name(body) == "register_buffer" and len(body.args) >= 2):
            return None
        name_arg, value_arg = body.args[0].value, body.args[1].value
        if not (isinstance(name_arg, cst.Name) and name_arg.value in params and position < len(params)):
            return None
        mine = params[position]
        if not any(isinstance(n, cst.Name) and n.value == mine for n in iter_nodes(value_arg)):
            return None  # the value given is not the buffer's
        key = arg(call, params.index(name_arg.value))
        value = key.value if key is not None else None
        if not (isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str)
                and value.evaluated_value.isidentifier()):
            return None
    return value.evaluated_value


def _spelled_elsewhere(ctx: FileContext, name: str) -> bool:
    """Whether ``name`` is spelled anywhere but once in this file, or at all in another file of the
    project (a project too large to list: yes)."""
    if len(re.findall(r"\b" + re.escape(name) + r"\b", ctx.bare_code(ctx.module))) > 1:
        return True
    if not ctx.path or ctx.path.startswith("<") or not os.path.isfile(ctx.path):
        return False  # a text of its own (no file on disk, no project around it): the text is all there is
    project = project_of(ctx)
    _, files = project.sources(ctx.path)
    if files is None:
        return True
    here = os.path.abspath(ctx.path)
    for f in files:
        if f == here:
            continue
        words = project.words(f)
        if words is None or name in words:
            return True
    return False
