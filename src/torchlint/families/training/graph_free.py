"""Results without an autograd graph, by construction: whether a call of a project function (or of a
method of the project class its receiver is built from) returns values that carry no graph — computed
under ``no_grad``, taken off the graph (``loss.item()``, ``float(loss)``) or built without one
(``argmax``, a comparison, ``len``) in every return (:func:`returns_without_graph`,
:func:`element_without_graph`, :func:`without_graph`).

The training family asks this of the values a training step accumulates and of what an evaluation
reads.  Queries are made once the file's walk is done (``leave_Module``).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from torchlint.analysis.context import FileContext, assignment_targets
from torchlint.analysis.definitions import (
    MAX_DEPTH,
    base_classes,
    built_values,
    called_function,
    definition_of,
    find_method,
    function_returns,
    local_definition,
    strip_moves,
)
from torchlint.analysis.training import is_detached, under_no_grad
from torchlint.analysis.walk import iter_nodes


def returns_without_graph(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` runs a function of the project whose result carries no autograd graph: the
    function is decorated with ``no_grad``/``inference_mode``, or everything it returns is computed under
    one (``with torch.no_grad(): loss = ...`` then ``return loss`` or ``return {"loss": loss}``) or taken
    off the graph (``return loss.item()``, ``return float(loss)``, ``total = loss.item(); return total``)
    or made without one (see :func:`without_graph`)."""
    target = called_function(ctx, call)
    if target is None:
        return False
    if under_no_grad(target[0], target[1].body):
        return any(r.value is not None for r in function_returns(target[1]))
    return _returns_graph_free(target[0], target[1], None)


def element_without_graph(ctx: FileContext, call: cst.Call, index: Optional[int]) -> bool:
    """Whether element ``index`` of what ``call`` returns (the whole result for None) carries no autograd
    graph, by construction in every return of the function it runs: a project function, or a method of
    the project class every value of the receiver is an instance of (``model.forward(batch)`` with
    ``model = Net(...)``, or ``Net.load_from_checkpoint(path)`` for a Lightning module that does not
    define that classmethod itself).  ``_, acc = model.forward(batch)`` where ``forward`` ends in
    ``return loss, (pred == y).float().mean()``: element 1 is a number-like tensor without a graph.
    A function that disables grad as a whole (a ``no_grad`` decorator) answers False: what it returns
    is graph-free because grad is off, not by construction (ask :func:`under_no_grad` for that)."""
    target = called_function(ctx, call) or _instance_method(ctx, call)
    if target is None or under_no_grad(target[0], target[1].body):
        return False
    return _returns_graph_free(target[0], target[1], index)


_LIGHTNING_MODULES = frozenset({"pytorch_lightning.LightningModule", "lightning.LightningModule",
                                "lightning.pytorch.LightningModule"})


def _instance_method(ctx: FileContext, call: cst.Call):
    """``(file context, FunctionDef, 1)`` of the method ``owner.name(...)`` calls, when every value
    ``owner`` (a name) is given builds an instance of one project class."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return None
    values = built_values(ctx, func.value)
    found = None
    for v in values:
        core = strip_moves(v)
        if not isinstance(core, cst.Call):
            return None
        d = definition_of(ctx, core.func)
        if d is None and isinstance(core.func, cst.Attribute) and core.func.attr.value == "load_from_checkpoint":
            d = definition_of(ctx, core.func.value)  # Lightning's classmethod builds an instance of the class
            if d is None or not isinstance(d[1], cst.ClassDef) or not _lightning_class(d[0], d[1]) or find_method(
                    d[0], d[1], "load_from_checkpoint") is not None:
                return None
        if d is None or not isinstance(d[1], cst.ClassDef) or (found is not None and found[1] is not d[1]):
            return None
        found = d
    if found is None:
        return None
    m = find_method(found[0], found[1], func.attr.value)
    if m is None or m[1].decorators:
        return None
    return m[0], m[1], 1


def _lightning_class(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    for expr, definition in base_classes(ctx, cls, depth):
        if definition is not None and isinstance(definition[1], cst.ClassDef):
            if depth < MAX_DEPTH and _lightning_class(definition[0], definition[1], depth + 1):
                return True
        elif ctx.names.qualified_names_at(expr) & _LIGHTNING_MODULES:
            return True
    return False


def _returns_graph_free(fctx: FileContext, function: cst.FunctionDef, index: Optional[int]) -> bool:
    returns = [r for r in function_returns(function) if r.value is not None]
    if not returns:
        return False
    bound: Dict[str, List[cst.CSTNode]] = {}
    for a in fctx.contents(function).assigns:
        for t in assignment_targets(a):
            for n in iter_nodes(t):
                if isinstance(n, cst.Name):
                    bound.setdefault(n.value, []).append(a)
    for r in returns:
        value = r.value
        if index is not None:
            if not isinstance(value, cst.Tuple) or index >= len(value.elements) or any(
                    isinstance(e, cst.StarredElement) for e in value.elements):
                return False
            value = value.elements[index].value
        if not without_graph(fctx, bound, value, 3, value):
            return False
    return True


def builds_state_only(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` runs a method of a project model class (``net.init_hidden(batch_size)`` with ``net =
    Net(...)``) that only makes new tensors: every call in its body builds a tensor without a graph
    (``torch.zeros(...)``, ``weight.new(...).zero_()``, ``x.new_zeros(...)``), reads the parameters
    (``next(self.parameters()).data``), moves or casts, or is a builtin (``tuple``, ``next``): it runs no layer,
    so there is no forward pass in it for ``no_grad`` or ``eval()`` to change."""
    target = _instance_method(ctx, call)
    if target is None or target[1].name.value == "forward":
        return False
    fctx, function = target[0], target[1]
    if not any(r.value is not None for r in function_returns(function)):
        return False
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, cst.Call) and not _makes_state(fctx, node):
            return False
    return True


#: methods that make a new tensor without a graph, fill one in place, read the parameters, or move or cast
_STATE_METHODS = frozenset({"new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "zero_", "fill_",
                            "normal_", "uniform_", "parameters", "named_parameters", "buffers", "detach", "to",
                            "cuda", "cpu", "float", "double", "half", "long", "int", "bool", "contiguous", "size"})
#: torch functions that make a tensor without a graph (unless told ``requires_grad=True``)
_STATE_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
                              "torch.randint", "torch.arange", "torch.eye", "torch.zeros_like", "torch.ones_like",
                              "torch.empty_like", "torch.randn_like", "torch.tensor", "torch.device",
                              "torch.cuda.is_available"})
_STATE_BUILTINS = frozenset({"next", "iter", "tuple", "list", "len", "range", "int", "float", "isinstance"})


def _makes_state(fctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in call.args):
        return False
    if isinstance(func, cst.Attribute) and func.attr.value in _STATE_METHODS and \
            not fctx.names.qualified_names_at(func):
        return True
    if fctx.names.qualified_names_at(func) & _STATE_FACTORIES:
        return True
    return isinstance(func, cst.Name) and func.value in _STATE_BUILTINS and not fctx.names.qualified_names_at(
        func) and not local_definition(fctx, func.value)


#: tensor methods whose result never requires grad (indices, booleans, integers, Python values)
_GRAPH_FREE_METHODS = frozenset({"argmax", "argmin", "long", "int", "bool", "short", "byte", "item", "tolist",
                                 "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite"})
#: tensor methods whose result carries a graph only when their receiver does
_GRAPH_KEEPING_METHODS = frozenset({"sum", "mean", "float", "double", "half", "to", "cpu", "cuda", "squeeze",
                                    "unsqueeze", "view", "reshape", "flatten", "clone", "contiguous"})


def without_graph(fctx: FileContext, bound: Dict[str, List[cst.CSTNode]], expr: cst.BaseExpression, depth: int,
                  root: cst.BaseExpression) -> bool:
    """Whether ``expr`` (in a function whose assignments by name are ``bound``) carries no autograd graph
    by construction: computed under ``no_grad``, a literal, detached or a Python number (``.item()``,
    ``float(x)``, ``x.size(0)``, ``len(batch)``), a comparison or an index (``pred == y``, ``argmax``,
    ``.long()``: integer and boolean tensors never require grad), a name that indexes a tensor in the
    same expression ``root`` (``x[mask]``: an index is an integer or boolean tensor), a sum, mean, cast
    or reshape of such a value, arithmetic of such values, or a local name every assignment gives one."""
    if under_no_grad(fctx, expr):
        return True
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Comparison)):
        return True
    if is_detached(fctx, expr):
        return True  # `return loss.item()`, `float(loss)`, `loss.detach()`: a number or a graph-free tensor
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _NUMBER_METHODS | _GRAPH_FREE_METHODS:
            return True  # `x.size(0)`, `logits.argmax(1)`, `(pred == y)`: a number, an index, a boolean
        if isinstance(func, cst.Name) and func.value in _NUMBER_FUNCS and not fctx.names.qualified_names_at(
                func) and not local_definition(fctx, func.value):
            return True  # `len(batch)`, `round(total, 4)`: a number
        if isinstance(func, cst.Attribute) and func.attr.value in _GRAPH_KEEPING_METHODS:
            return without_graph(fctx, bound, func.value, depth, root)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return without_graph(fctx, bound, expr.left, depth, root) and without_graph(fctx, bound, expr.right, depth,
                                                                                      root)
    if isinstance(expr, cst.UnaryOperation):
        return without_graph(fctx, bound, expr.expression, depth, root)
    if isinstance(expr, cst.Name):
        if expr.value in ("None", "True", "False"):
            return True
        if any(isinstance(n, cst.Subscript) and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index)
               and isinstance(n.slice[0].slice.value, cst.Name) and n.slice[0].slice.value.value == expr.value
               for n in iter_nodes(root)):
            return True  # `x[mask]` in the same expression: `mask` is an integer or boolean index
        stmts = bound.get(expr.value)
        if not stmts or depth <= 0:
            return False  # a parameter or a global: whatever the caller passed
        for stmt in stmts:
            if under_no_grad(fctx, stmt):
                continue
            value = getattr(stmt, "value", None)
            if isinstance(stmt, cst.AugAssign) or value is None or not without_graph(fctx, bound, value, depth - 1,
                                                                                      value):
                return False
        return True
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(without_graph(fctx, bound, e.value, depth, root) for e in expr.elements)
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and without_graph(fctx, bound, e.value, depth, root)
                   for e in expr.elements)
    return False


#: methods and builtins whose result is a plain number
_NUMBER_METHODS = frozenset({"size", "numel", "dim", "ndimension", "nelement"})
_NUMBER_FUNCS = frozenset({"len", "round", "int", "float", "abs"})


__all__ = [
    "builds_state_only",
    "element_without_graph",
    "returns_without_graph",
]
