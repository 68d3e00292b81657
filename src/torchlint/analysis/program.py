"""The program model: what the names of a file are (models, optimizers) and what its model classes and
helper functions do, followed through calls in the file and into the project's own modules.

Roles come from how a value is built, never from its name: ``cnn = CNN()`` is a model because ``CNN``
derives from ``nn.Module``, ``clf = nn.Sequential(...)`` because ``nn.Sequential`` is a module, and a
variable that is only ever a parameter stays unknown.

Summaries:

- a **model class** (:class:`ModelSummary`): whether it is an ``nn.Module``, what ``forward`` returns
  (``"softmax"``, ``"log_softmax"``, ``"sigmoid"`` or unknown, per tuple element) and whether some
  submodule behaves differently in train and eval mode;
- a **loss helper**: which of its parameters reach the input of a cross-entropy (``"ce"``) or binary
  cross-entropy (``"bce"``) directly.

Classes and functions imported from the project (``from models import Net``, ``from .losses import
loss_fn``) are found next to the importing file or under the project root (the folder holding the
configuration, else the nearest folder with ``pyproject.toml``/``setup.py``/``.git``), parsed once per
project and content (:class:`~torchlint.analysis.project.Project`), and summarised the same way.  A
chain of imports is followed at most :data:`MAX_DEPTH` files deep, and a class inheriting from a class
is followed at most that many bases deep, so import cycles and long chains terminate.

Values through calls (:func:`call_findings`, :func:`value_fact`, :func:`model_fact`, :func:`loss_fact`):
a :class:`Frame` is a function as one call runs it, its parameters bound to that call's arguments (read
in the caller's frame), to their defaults, or known by their annotations; ``self`` is an instance of the
class the method is read for (a subclass, for a base class's method), and ``self.<attr>`` set from
``__init__``'s parameters reads the constructor's arguments.  Returns of project functions are followed
with their arguments bound, :data:`MAX_CALL_DEPTH` calls deep.  Each fact says where it comes from
(:class:`Evidence`), for the rules' messages.

Queries are made once the file's walk is done (``leave_Module``): they read the name bindings of any
scope, not only the one the walk is in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg, assignment_targets
from torchlint.analysis.definitions import (
    MAX_DEPTH,
    argument_for,
    base_classes,
    bind_arguments,
    built_values,
    called_function,
    class_body,
    definition_of,
    find_method,
    function_returns,
    local_definition,
    maybe_project_function,
    strip_moves,
)
from torchlint.analysis.ops import BCE_FUNCS, BCE_LAYERS, CROSS_ENTROPY_FUNCS, CROSS_ENTROPY_LAYERS
from torchlint.analysis.roles import Kind, LOG_SOFTMAX, SIGMOID, SOFTMAX, module_class, output_kind
from torchlint.analysis.training import is_detached, under_no_grad
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
_LOSS_PARAMS: Fact[Dict[cst.FunctionDef, Dict[int, Tuple[str, str]]]] = Fact("program.loss_params", lambda ctx: {})
#: see :func:`loss_inputs`
_LOSS_INPUTS: "Fact[List[LossInput]]" = Fact("program.loss_inputs")


# -- loss helpers ---------------------------------------------------------------------------------
def loss_kind(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """"ce" for a cross-entropy call, "bce" for a (probability) binary cross-entropy call."""
    names = ctx.names.qualified_names_at(call.func)
    if names & CROSS_ENTROPY_FUNCS:
        return "ce"
    if names & BCE_FUNCS:
        return "bce"
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


_CALL_FINDINGS: "Fact[List[LossFinding]]" = Fact("program.call_findings")


def _inside(ctx: FileContext, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return node is container or ctx.is_inside(node, container)


__all__ = [
    "LossFinding",
    "LossInput",
    "MAX_FOLLOWED_CALLS",
    "call_findings",
    "element_without_graph",
    "loss_inputs",
    "loss_kind",
    "loss_params",
    "returns_without_graph",
]
