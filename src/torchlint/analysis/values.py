"""Values through calls, the interprocedural part of the program model (:func:`value_fact`,
:func:`model_fact`, :func:`loss_fact`, :func:`caller_value_fact`).

A :class:`Frame` is a function as one call runs it, its parameters bound to that call's arguments (read
in the caller's frame), to their defaults, or known by their annotations; ``self`` is an instance of the
class the method is read for (a subclass, for a base class's method), and ``self.<attr>`` set from
``__init__``'s parameters reads the constructor's arguments.  Returns of project functions are followed
with their arguments bound, :data:`MAX_CALL_DEPTH` calls deep.  Each fact says where it comes from
(:class:`Evidence`, places as :class:`At`), for the rules' messages.

What a name holds in one scope is the names layer's answer (``ctx.names``); definitions and the call
graph are :mod:`torchlint.analysis.definitions`, roles and class summaries
:mod:`torchlint.analysis.roles`.  Queries are made once the file's walk is done (``leave_Module``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, assignment_targets, run_object
from torchlint.analysis.definitions import (
    MAX_DEPTH,
    bases_spelling,
    bind_arguments,
    call_offset,
    returned_values,
    built_values,
    called_function,
    callers_arguments,
    calls_of_function,
    list_growth,
    constructions,
    definition_of,
    depends_on,
    find_method,
    function_params,
    function_returns,
    inherit_dependencies,
    local_definition,
    maybe_project_function,
    method_of,
    project_call_sites,
    project_class_method_calls,
    strip_moves,
)
from torchlint.analysis.positions import line_of
from torchlint.analysis.ops import BCE_FUNCS, BCE_LAYERS, CROSS_ENTROPY_FUNCS, CROSS_ENTROPY_LAYERS, idle_cap
from torchlint.analysis.project import project_of
from torchlint.analysis.roles import (
    KIND_WORDS,
    Kind,
    LOG_SOFTMAX,
    SHAPE_METHODS,
    SIGMOID,
    SOFTMAX,
    built_output,
    class_summary,
    handwritten_sigmoid,
    op_kind,
)
from torchlint.analysis.walk import iter_nodes, target_names


def caller_value_fact(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Evidence]:
    """:func:`value_fact` of ``expr`` where it is read; for a parameter the function does not reassign, or a
    name computed from parameters (``probs = net(states)``), what it is in every call of the function in this
    file (:func:`caller_frames`: ``self._cost(y, self.forward(x))``, the method's own returns followed), or,
    called from no code of its file, in every call from the project's other files
    (:func:`project_caller_frames`), when all of them agree and none is left out."""
    frame = open_frame(ctx, expr)
    fact = value_fact(frame, expr)
    if fact is not None or not isinstance(expr, cst.Name) or frame.function is None:
        return fact
    function = frame.function
    params = function_params(function)
    if not params:
        return None
    is_param = any(p.name.value == expr.value for p in params)
    sites = calls_of_function(ctx, function, frame.cls)
    if not sites:
        frames = project_caller_frames(ctx, expr)
        if not frames or is_param and any(expr.value not in f.bound for f in frames):
            return None
        return _unanimous([value_fact(f, expr) for f in frames])
    if len(sites) > MAX_CALLERS or any(ctx.is_inside(site, function) for site in sites):
        return None  # calls not all seen, or a recursion: not followed
    frames = caller_frames(ctx, expr)
    if len(frames) != len(sites) or is_param and any(expr.value not in f.bound for f in frames):
        return None
    return _unanimous([value_fact(f, expr) for f in frames])


# -- values through calls: arguments, defaults, annotations, `self` and returns ---------------------
#: how many calls deep a value is followed into project functions (caller -> helper -> helper)
MAX_CALL_DEPTH = 3

NLL = "nll"
_NLL_FUNCS = frozenset({"torch.nn.functional.nll_loss"})
_NLL_LAYERS = frozenset({"torch.nn.NLLLoss", "torch.nn.modules.loss.NLLLoss"})
_LOSS_FUNCS = ((CROSS_ENTROPY_FUNCS, "ce"), (BCE_FUNCS, "bce"), (_NLL_FUNCS, NLL))
_LOSS_LAYERS = ((CROSS_ENTROPY_LAYERS, "ce"), (BCE_LAYERS, "bce"), (_NLL_LAYERS, NLL))
#: words one of which a module spelling a loss holds (checked on its text before it is parsed)
_LOSS_TEXT = ("Loss", "cross_entropy", "nll_loss")
_KIND_WORD = {SOFTMAX: "softmax", LOG_SOFTMAX: "log-softmax", SIGMOID: "a sigmoid"}


class Frame:
    """One function as a call runs it: ``bound`` maps its parameters to the arguments of the call (read
    in the ``caller`` frame), ``cls`` is what ``self`` is an instance of.  An open frame (no caller)
    knows its parameters only by their defaults and annotations."""

    __slots__ = ("ctx", "function", "bound", "caller", "call", "cls", "depth", "init")

    def __init__(self, ctx: FileContext, function: Optional[cst.FunctionDef], bound=None,
                 caller: Optional["Frame"] = None, call: Optional[cst.Call] = None, cls=None, depth: int = 0,
                 init: Optional["Frame"] = None):
        self.ctx = ctx
        self.function = function
        self.bound: Dict[str, cst.BaseExpression] = bound or {}
        self.caller = caller
        self.call = call
        self.cls = cls  # (file context, ClassDef) or None
        self.depth = depth
        #: the frame of ``__init__`` as the object ``self`` is was built (``Trainer(net, loss)``), if known
        self.init = init


@dataclass(frozen=True)
class Evidence:
    """What a value is (``kind``) and why: ``why`` says where the fact comes from; ``origin`` is the
    expression of the outermost frame it was read from (the argument of the call the rule reports)."""

    kind: Kind
    why: Why
    origin: Optional[cst.BaseExpression] = None

    @property
    def message(self) -> str:
        return render(self.why)


class At:
    """A place in a file, rendered ``file:line`` only when a message is made."""

    __slots__ = ("ctx", "node")

    def __init__(self, ctx: FileContext, node: cst.CSTNode) -> None:
        self.ctx, self.node = ctx, node

    def __str__(self) -> str:
        name = os.path.basename(self.ctx.path) if self.ctx.path else "<source>"
        if name.endswith(".ipynb"):
            return name  # lines of the joined cells would not be the notebook's
        line = line_of(self.ctx, self.node)
        return f"{name}:{line}" if line is not None else name


Why = Tuple[object, ...]  # pieces of a message: strings and places (:class:`At`)


def render(why: Why) -> str:
    return "".join(str(p) for p in why)


def open_frame(ctx: FileContext, node: cst.CSTNode) -> Frame:
    """The frame of the function around ``node`` with no caller: parameters known only by their
    defaults and annotations, ``self`` an instance of the class the method is defined in."""
    function = ctx.enclosing(node, cst.FunctionDef)
    function = function if isinstance(function, cst.FunctionDef) else None
    cls = None
    if function is not None:
        owner = ctx.parent(ctx.parent(function) or function)
        if isinstance(owner, cst.ClassDef):
            cls = (ctx, owner)
    return Frame(ctx, function, cls=cls)


#: how many calls of one function in its own file are followed back into their callers
MAX_CALLERS = 8


def caller_frames(ctx: FileContext, node: cst.CSTNode, levels: int = 1) -> List[Frame]:
    """For the function around ``node``: one frame per call of it in this file (:func:`calls_of_function`),
    its parameters bound to that call's arguments, read in the caller's own open frame (calls that bind
    nothing are left out).  A helper called with two different models is judged per call.  With
    ``levels`` 2, a call made inside a function that is called itself is read in each of that function's
    caller frames (``nll(decoder(x), y)`` in ``train_step(x, y, decoder)``, called with ``dec = Dec()``),
    at most :data:`MAX_CALLERS` frames in all."""
    base = open_frame(ctx, node)
    function = base.function
    if function is None:
        return []
    out: List[Frame] = []
    for call in calls_of_function(ctx, function, base.cls)[:MAX_CALLERS]:
        offset = call_offset(call, function) if base.cls is not None else 0
        bound = bind_arguments(call, function, offset)
        if not bound:
            continue
        outer = caller_frames(ctx, call, levels - 1) if levels > 1 else []
        for caller in outer or [open_frame(ctx, call)]:
            if len(out) < MAX_CALLERS:
                out.append(Frame(ctx, function, bound, caller, call, base.cls, caller.depth + 1))
    return out


def project_caller_frames(ctx: FileContext, node: cst.CSTNode) -> List[Frame]:
    """For the function around ``node``, called from no code of its file: one frame per call of it in the
    project's other files (a module-level function imported there, a class method called through its
    class), its parameters bound to that call's arguments, read in the caller's file; empty when a call
    binds nothing, none is found, or there are more than :data:`MAX_CALLERS`."""
    base = open_frame(ctx, node)
    function = base.function
    if function is None or calls_of_function(ctx, function, base.cls):
        return []
    if function in ctx.module.body:
        calls: Optional[List[Tuple[FileContext, cst.Call]]] = project_call_sites(ctx, function)
    else:
        calls = project_class_method_calls(ctx, function)
    if not calls or len(calls) > MAX_CALLERS:
        return []
    out: List[Frame] = []
    for octx, call in calls:
        bound = bind_arguments(call, function, 0 if function in ctx.module.body else call_offset(call, function))
        if not bound:
            return []
        out.append(Frame(ctx, function, bound, open_frame(octx, call), call, base.cls, 1))
    return out


def self_name(frame: Frame) -> Optional[str]:
    f = frame.function
    if f is None or frame.cls is None or f.decorators:
        return None
    params = list(f.params.posonly_params) + list(f.params.params)
    return params[0].name.value if params else None




def _holds(frame: Frame, name: cst.Name, at: cst.CSTNode, decide: bool = True):
    """What ``name`` holds at ``at`` in ``frame``: ``("value", frame, expr, index)`` for an assigned or
    bound value, ``("annotation", frame, expr, None)`` for a parameter known only by its annotation,
    ``("module", frame, values, None)`` for a name with several possible values (a module-level name,
    or a local assigned on branches: the caller joins them), ``("imported", frame, name, None)`` for
    a name imported at module level (see :func:`_imported_value`); None when unknown.  With ``decide``,
    a value assigned in a branch the code's literal defaults rule out (``if args.loss == "mse":`` with
    ``default="ce"``, see :func:`_ruled_out`) is left out."""
    ctx, function = frame.ctx, frame.function
    if function is not None:
        found = ctx.names.reaching_assignment(name.value, at, function)
        if found is not None:
            return ("value", frame, *_element(found[0].value, found[1]))
        for p in function_params(function):
            if p.name.value != name.value:
                continue
            if _rebinds(ctx, function, name.value):
                return None  # reassigned on some path: not the argument any more
            if name.value in frame.bound and frame.caller is not None:
                return ("value", frame.caller, frame.bound[name.value], None)
            if p.default is not None:
                return ("value", Frame(ctx, function, cls=frame.cls, depth=frame.depth), p.default, None)
            if p.annotation is not None:
                return ("annotation", frame, p.annotation.annotation, None)
            return None
        b = ctx.names.binding_at(name, name.value)
        if b is not None and b.imports and b is ctx.names.module_scope.bindings.get(name.value):
            return ("imported", frame, name, None)
        if b is None or b.imports or b is not ctx.names.module_scope.bindings.get(name.value):
            # a local assigned on some paths only: the values of the branches that may run
            return _branch_values(frame, name, at, function) if decide and b is not None and not b.imports else None
    else:
        found = ctx.names.reaching_assignment(name.value, at, None)
        if found is not None:
            return ("value", frame, *_element(found[0].value, found[1]))
        b = ctx.names.binding_at(name, name.value)
        if b is not None and b.imports and not b.values:
            return ("imported", frame, name, None)
    values = built_values(ctx, name)
    if decide and len(values) > 1:
        module_frame = Frame(ctx, None)
        values = [v for v in values if not _ruled_out(module_frame, v, ctx.module)]
    return ("module", frame, values, None) if values else None


def _rebinds(ctx: FileContext, function: cst.FunctionDef, name: str) -> bool:
    """Whether an assignment in ``function`` binds the name ``name`` again (``args = ...``, ``for args in``,
    ``args += ...``); writing one of its attributes (``args.start_epoch = 1``) keeps the object it holds."""
    if name not in ctx.assigned_names(function):
        return False
    return any(n.value == name for a in ctx.contents(function).assigns for t in assignment_targets(a)
               for n in target_names(t))


def _attribute_written(ctx: FileContext, attr: str) -> bool:
    """Whether the file assigns an attribute named ``attr`` anywhere (``args.model = "resnet18"``)."""
    return any(isinstance(t, cst.Attribute) and t.attr.value == attr
               for a in ctx.contents(ctx.module).assigns for t in assignment_targets(a))


def _branch_values(frame: Frame, name: cst.Name, at: cst.CSTNode, function: cst.FunctionDef):
    """A local assigned on some paths only (``if args.loss == "ce": crit = nn.CrossEntropyLoss()``
    ``elif ...``): the values of its bindings before ``at`` in the branches the literal defaults do not
    rule out, one (``("value", ...)``) or several (``("module", ...)``, to be joined); None when a
    binding's value is unknown (a parameter, a loop target, an unpacked element)."""
    bound = frame.ctx.names.bound_values(name, at)
    if not bound or any(v is None for v in bound):
        return None
    kept = [v for v in bound if v is not None and not _ruled_out(frame, v, function)]
    if not kept:
        return None
    return ("value", frame, kept[0], None) if len(kept) == 1 else ("module", frame, kept, None)


def _ruled_out(frame: Frame, value: cst.CSTNode, stop: cst.CSTNode) -> bool:
    """Whether ``value`` sits in a branch of an ``if`` (inside ``stop``) whose test the code's literal
    defaults decide against it (:func:`_literal_test`)."""
    ctx = frame.ctx
    node: cst.CSTNode = value
    parent = ctx.parent(node)
    while parent is not None and parent is not stop:
        if isinstance(parent, cst.If) and node is not parent.test:
            decided = _literal_test(frame, parent.test)
            if decided is not None and decided != (node is parent.body):
                return True
        node, parent = parent, ctx.parent(parent)
    return False


def _literal_test(frame: Frame, test: cst.BaseExpression) -> Optional[bool]:
    """The outcome of ``key == "ce"`` (``!=``, ``in``/``not in`` a tuple, list or set of strings, ``not``)
    when the code runs with its literal defaults (:func:`_literal_key`: a string, an argparse
    ``default=``); None when not decided."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _literal_test(frame, test.expression)
        return None if inner is None else not inner
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, (cst.Equal, cst.NotEqual)):
        for key_expr, literal in ((test.left, right), (right, test.left)):
            if isinstance(literal, cst.SimpleString) and isinstance(literal.evaluated_value, str):
                key = _literal_key(frame, key_expr)
                return None if key is None else (key == literal.evaluated_value) == isinstance(op, cst.Equal)
        return None
    if isinstance(op, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        options = [e.value for e in right.elements]
        if not options or not all(isinstance(o, cst.SimpleString) and isinstance(o.evaluated_value, str) for o in options):
            return None
        key = _literal_key(frame, test.left)
        if key is None:
            return None
        return (key in {o.evaluated_value for o in options}) == isinstance(op, cst.In)  # type: ignore[union-attr]
    return None


def _imported_value(frame: Frame, name: cst.Name, words: Tuple[str, ...]):
    """``from losses import criterion``: ``("module", frame of that module, values, None)`` for a name a
    project module binds at its top level by plain assignments (``criterion = nn.CrossEntropyLoss()``);
    None for a class, a function, a library name, or a name that module imports in turn.  The module is
    parsed only when its text assigns the name at top level and spells one of ``words``."""
    ctx = frame.ctx
    for q in sorted(ctx.names.qualified_names_at(name)):
        level = len(q) - len(q.lstrip("."))
        module, _, attr = q.lstrip(".").rpartition(".")
        if not attr or not (module or level) or q.startswith(("torch.", "numpy.")):
            continue
        path = project_of(ctx).module_file(ctx.path, module, level)
        if path is None:
            continue
        depends_on(ctx, os.path.abspath(path))
        text = project_of(ctx).module_text(path)
        if text is None or not any(w in text for w in words) or not re.search(
                rf"^{re.escape(attr)}[ \t]*(?::[^=\n]*)?=[^=]", text, re.MULTILINE):
            continue  # no top-level assignment of the name: a class, a function, or not there (no parse)
        other = project_of(ctx).load(path)
        if other is None:
            continue
        inherit_dependencies(ctx, other)
        b = other.names.module_scope.bindings.get(attr)
        if b is None or b.imports or not b.values or any(v is None for v in b.values):
            continue
        if local_definition(other, attr, imported=True) is not None:
            continue  # a class or a function, not a value
        return ("module", Frame(other, None), list(b.values), None)
    return None


def _element(value: cst.BaseExpression, index: Optional[int]) -> Tuple[cst.BaseExpression, Optional[int]]:
    """``a, b = A(), B()``: the element a name is given, when the value is spelled as a tuple."""
    if index is not None and isinstance(value, (cst.Tuple, cst.List)) and index < len(value.elements) and not any(
            isinstance(e, cst.StarredElement) for e in value.elements):
        return value.elements[index].value, None
    return value, index


def _rebase(e: Optional[Evidence], frame: Frame, expr: cst.BaseExpression) -> Optional[Evidence]:
    if e is not None and e.origin is None and frame.caller is None:
        return Evidence(e.kind, e.why, expr)
    return e


def _class_evidence(ctx: FileContext, cls: cst.ClassDef, kind: Kind, how: str = "") -> Optional[Evidence]:
    if kind is None:
        return None
    if not isinstance(kind, str):
        return Evidence(kind, (f"{how}`{cls.name.value}` (", At(ctx, cls), ")"))
    forward = method_of(cls, "forward")
    at = At(ctx, forward if forward is not None else cls)
    return Evidence(kind, (f"{how}`forward` of `{cls.name.value}` (", at, f") ends in {_KIND_WORD[kind]}"))


def _built_evidence(ctx: FileContext, value: cst.BaseExpression, how: str = "", depth: int = 0) -> Optional[Evidence]:
    kind = built_output(ctx, value)
    if kind is None:
        return _factory_evidence(ctx, value, how, depth)
    core = strip_moves(value)
    if isinstance(core, cst.Call):
        d = definition_of(ctx, core.func, 0, KIND_WORDS)
        if d is not None and isinstance(d[1], cst.ClassDef):
            return _class_evidence(d[0], d[1], kind, how)
    if not isinstance(kind, str):
        return Evidence(kind, (f"{how}`{_short(ctx, core)}` (", At(ctx, value), ")"))
    return Evidence(kind, (f"{how}`{_short(ctx, core)}` (", At(ctx, value), f") ends in {_KIND_WORD[kind]}"))


def _factory_evidence(ctx: FileContext, value: cst.BaseExpression, how: str, depth: int) -> Optional[Evidence]:
    """``get_model(name)`` of a project function every ``return`` of which builds a model whose output is
    of one kind (an ``if``/``elif`` chain of model classes whose ``forward`` each ends in a sigmoid)."""
    core = strip_moves(value)
    if not isinstance(core, cst.Call) or depth >= MAX_DEPTH:
        return None
    d = definition_of(ctx, core.func, 0, KIND_WORDS)
    if d is None or not isinstance(d[1], cst.FunctionDef):
        return None
    returned = returned_values(d[0], d[1], None, depth + 1)
    if not returned:
        return None
    return _unanimous([_built_evidence(rctx, v, how, depth + 1) for rctx, v in returned])


def _short(ctx: FileContext, node: cst.CSTNode) -> str:
    code = " ".join(ctx.code(node).split())
    if len(code) > 40 and isinstance(node, cst.Call):
        code = ctx.code(node.func) + "(...)"
    return code if len(code) <= 60 else code[:57] + "..."


def _unanimous(facts: List[Optional[Evidence]]) -> Optional[Evidence]:
    if not facts or any(f is None for f in facts):
        return None
    kinds = {f.kind for f in facts if f is not None}
    return facts[0] if len(kinds) == 1 else None


def model_fact(frame: Frame, callee: cst.BaseExpression, hops: int = 0) -> Optional[Evidence]:
    """What calling the module ``callee`` returns in ``frame``, following parameters to the arguments
    of the call, defaults, annotations (``model: Net``), ``self`` and ``self.<attr>``."""
    if hops > 6:
        return None
    ctx = frame.ctx
    if run_object(callee) is not callee:  # `model.forward`, `model.__call__`
        return model_fact(frame, run_object(callee), hops + 1)
    if isinstance(callee, cst.Call):
        return _built_evidence(ctx, callee)
    if isinstance(callee, cst.Name):
        if callee.value == self_name(frame) and frame.cls is not None:
            cctx, cls = frame.cls
            s = class_summary(cctx, cls)
            return _class_evidence(cctx, cls, s.output) if s.is_module else None
        held = _holds(frame, callee, callee)
        if held is not None and held[0] == "imported":
            held = _imported_value(frame, callee, KIND_WORDS)
        if held is None:
            return None
        how, f, value, index = held
        if index is not None:
            return None
        if how == "annotation":
            d = definition_of(f.ctx, value, 0, KIND_WORDS)
            if d is None or not isinstance(d[1], cst.ClassDef):
                return None
            s = class_summary(d[0], d[1])
            if not s.is_module:
                return None
            return _class_evidence(d[0], d[1], s.output, f"`{callee.value}` is annotated `{d[1].name.value}`: ")
        if how == "module":
            return _unanimous([_built_evidence(f.ctx, v) for v in value])
        if isinstance(value, (cst.Name, cst.Attribute)):
            found = model_fact(f, value, hops + 1)
        else:
            found = _built_evidence(f.ctx, value)
        return _rebase(found, f, value) if f is not frame else found
    if (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name)
            and callee.value.value == self_name(frame) and frame.cls is not None):
        cctx, cls = frame.cls
        values = _class_attr(cctx, cls, callee.attr.value)
        if not values:
            return None
        return _unanimous([_built_evidence(cctx, v) if not isinstance(v, cst.Name)
                           else _through_init(frame, v, lambda f, e: model_fact(f, e, hops + 1)) for v in values])
    return None


def _class_attr(ctx: FileContext, cls: cst.ClassDef, attr: str, depth: int = 0) -> List[cst.BaseExpression]:
    """The values ``self.<attr>`` is given in ``cls`` (or, when it gives none, in its base classes of the
    same file: a base imported from another module is not read for attributes, which keeps the cost of
    the many ``self.<layer>(x)`` calls of a model low); asked once per class and name."""
    cache = _CLASS_ATTRS.of(ctx)
    key = (cls, attr)
    if key not in cache:
        cache[key] = []  # a cycle of bases finds nothing
        scope = ctx.names.scope_of(cls)
        values = list(scope.attrs.get(attr, ())) if scope is not None else []
        if not values and depth < MAX_DEPTH and method_of(cls, attr) is None:
            for found in bases_spelling(ctx, cls, depth, attr, local=True):
                values = _class_attr(found[0], found[1], attr, depth + 1)
                if values:
                    break
        cache[key] = values
    return cache[key]


#: (class, attribute) -> the values ``self.<attribute>`` is given, per file
_CLASS_ATTRS: Fact[dict] = Fact("values.class_attrs", lambda ctx: {})


def is_attribute(ctx: FileContext, cls: cst.ClassDef, name: str) -> bool:
    """``self.<name> = ...`` somewhere in ``cls``: a value (a submodule), not a method."""
    scope = ctx.names.scope_of(cls)
    return scope is not None and name in scope.attrs and method_of(cls, name) is None


def value_fact(frame: Frame, expr: cst.BaseExpression, hops: int = 0, follow: bool = True) -> Optional[Evidence]:
    """Whether the tensor ``expr`` is a softmax, log-softmax or sigmoid output in ``frame``: an op, a
    model's output (see :func:`model_fact`), a name assigned from one, or what a project function
    called here returns (its returns followed with the call's arguments bound; not with ``follow`` off)."""
    if hops > 8:
        return None
    ctx = frame.ctx
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            inner = value_fact(frame, expr.value, hops + 1, follow)
            i = int(index.value.value, 0)
            if inner is not None and isinstance(inner.kind, tuple) and -len(inner.kind) <= i < len(inner.kind):
                k = inner.kind[i]
                return Evidence(k, inner.why, inner.origin) if k is not None else None
            if inner is not None or not isinstance(expr.value, cst.Name):
                return None
        if isinstance(index, cst.Index) and isinstance(expr.value, cst.Name):
            return _appended_fact(frame, expr.value, hops, follow)  # `probs[t]` of a list built by `append`
        return None
    if isinstance(expr, cst.Tuple):
        facts = [value_fact(frame, el.value, hops + 1, follow) for el in expr.elements]
        kinds = tuple(f.kind if f is not None else None for f in facts)
        known = [f for f in facts if f is not None]
        return Evidence(kinds, known[0].why, known[0].origin) if known else None
    if isinstance(expr, cst.Name):
        held = _holds(frame, expr, expr)
        if held is None:
            return None
        how, f, value, index = held
        if how != "value":
            return None
        fact = value_fact(f, value, hops + 1, follow)
        fact = _rebase(fact, f, value) if f is not frame else fact
        if index is not None:
            if fact is None or not isinstance(fact.kind, tuple) or index >= len(fact.kind):
                return None
            k = fact.kind[index]
            return Evidence(k, fact.why, fact.origin) if k is not None else None
        return fact
    if not isinstance(expr, cst.Call):
        if handwritten_sigmoid(ctx, expr) is not None:  # `1 / (1 + torch.exp(-z))`
            return Evidence(SIGMOID, (f"the sigmoid written by hand `{_short(ctx, expr)}` (", At(ctx, expr), ")"))
        return None
    func = expr.func
    kind = op_kind(ctx, expr, methods_of_self=True)
    if kind is not None:
        return Evidence(kind, (f"`{_short(ctx, expr)}` (", At(ctx, expr), ")"))
    if isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS:
        inner = value_fact(frame, func.value, hops + 1, follow)
        return inner if inner is not None and isinstance(inner.kind, str) else None
    capped = idle_cap(ctx, expr)
    if capped is not None:
        # `p.clamp(max=1 - 1e-20)`: a cap that is 1 in float32 changes no probability
        inner = value_fact(frame, capped, hops + 1, follow)
        return inner if inner is not None and isinstance(inner.kind, str) else None
    target = project_function(frame, expr) if follow else None
    if target is not None:
        return _return_fact(target, hops)
    return model_fact(frame, func, hops + 1)


def _appended_fact(frame: Frame, name: cst.Name, hops: int, follow: bool) -> Optional[Evidence]:
    """The fact every element of the list ``name`` shares when the list starts empty where it is bound
    (``probs = []``) and is only grown by ``probs.append(v)`` in the same function: what ``v`` is, where it
    is appended, when all appended values agree."""
    ctx = frame.ctx
    held = _holds(frame, name, name)
    if held is None or held[0] != "value" or held[3] is not None:
        return None
    if held[1] is not frame:
        # a parameter the call binds to the caller's list (`policy_loss(policies, ...)`): that list's elements
        passed = held[2]
        return _appended_fact(held[1], passed, hops + 1, follow) if isinstance(passed, cst.Name) and hops < 8 else None
    start = held[2]
    if not (isinstance(start, cst.List) and not start.elements):
        return None
    appended, changed = list_growth(ctx, name)
    if changed:
        return None  # grown otherwise (`extend`, `probs[i] = ...`): not each element one appended value
    facts = [value_fact(frame, v, hops + 1, follow) for v in appended]
    return _unanimous(facts) if facts else None


def project_function(frame: Frame, call: cst.Call) -> Optional[Frame]:
    """The frame of a project function ``call`` runs, its arguments bound; None when ``call`` calls no
    function of the project or the depth limit is reached."""
    if frame.depth >= MAX_CALL_DEPTH:
        return None
    ctx = frame.ctx
    func = call.func
    cls = None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == self_name(frame):
        if frame.cls is None:
            return None
        cctx, c = frame.cls
        method = find_method(cctx, c, func.attr.value)
        if method is None:
            return None
        fctx, function = method
        cls, offset = frame.cls, 1
    elif maybe_project_function(ctx, func):
        target = called_function(ctx, call)
        if target is None:
            return None
        fctx, function, offset = target
    else:
        return _instance_method_frame(frame, call)
    bound = bind_arguments(call, function, offset)
    if bound is None:
        return None
    return Frame(fctx, function, bound, frame, call, cls, frame.depth + 1, frame.init if cls is not None else None)


def _constructor(frame: Frame, receiver: cst.BaseExpression) -> Optional[Tuple[Frame, cst.Call]]:
    """The call that built the object ``receiver`` holds (``t = Trainer(net)``), and the frame it runs in."""
    if not isinstance(receiver, cst.Name):
        return None
    held = _holds(frame, receiver, receiver)
    if held is None:
        return None
    how, f, value, index = held
    if how == "module":
        if len(value) != 1:
            return None
        value = value[0]
    elif how != "value" or index is not None:
        return None
    value = strip_moves(value)
    if not isinstance(value, cst.Call) or isinstance(value.func, cst.Attribute) and isinstance(
            value.func.value, cst.Name) and value.func.value.value == "self":
        return None
    if not maybe_project_function(f.ctx, value.func):
        return None  # not built from a class of the project (a library object, a submodule's output)
    return f, value


def _instance_method_frame(frame: Frame, call: cst.Call) -> Optional[Frame]:
    """``obj.method(...)`` where ``obj`` was built from a project class (``t = Trainer(net, loss)``):
    the method's frame with ``self`` that class and ``__init__`` bound to the constructor's arguments.
    Followed only when the constructor or the call passes something known (a model, a probability)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    built = _constructor(frame, func.value)
    if built is None:
        return None
    f, ctor = built
    if not any(argument_fact(f, a.value) for a in ctor.args if not a.star) and not any(
            argument_fact(frame, a.value) for a in call.args if not a.star):
        return None
    d = definition_of(f.ctx, ctor.func)
    if d is None or not isinstance(d[1], cst.ClassDef):
        return None
    method = find_method(d[0], d[1], func.attr.value)
    if method is None:
        return None
    mctx, function = method
    init = None
    found_init = find_method(d[0], d[1], "__init__")
    if found_init is not None:
        bound = bind_arguments(ctor, found_init[1], 1)
        if bound is not None:
            init = Frame(found_init[0], found_init[1], bound, f, ctor, d, frame.depth + 1)
    bound = bind_arguments(call, function, 1)
    if bound is None:
        return None
    return Frame(mctx, function, bound, frame, call, d, frame.depth + 1, init)


def _through_init(frame: Frame, value: cst.Name, follow):
    """``self.net = net`` in ``__init__``: what the constructor's argument is, where it is known; with
    no construction in view, the parameter's default when no construction of the class passes that
    parameter (:func:`_unpassed_default`).  ``self.loss_op = loss_op`` in another method (a setter,
    ``model.add_loss_op(nn.NLLLoss())``): what every call of it passes, when they agree
    (:func:`_through_setter`)."""
    if isinstance(value, cst.Name) and frame.cls is not None:
        found = _through_setter(frame.cls[0], value, follow)
        if found is not _NOT_A_SETTER:
            return found
    init = frame.init
    if init is None:
        if isinstance(value, (cst.IfExp, cst.BooleanOperation)):
            # `criterion if criterion is not None else nn.CrossEntropyLoss()`, `criterion or ...`
            operands = (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value.left, value.right)
            if all(_leads_nowhere(frame, e, follow) for e in operands):
                return None  # whichever operand is taken gives nothing: no need to read the constructions
            chosen = _none_choice(value, lambda e: _unpassed_default(frame, e))
            if chosen is None:
                return None
            if isinstance(chosen, cst.Call) and frame.cls is not None:
                return follow(Frame(frame.cls[0], None), chosen)
            return _through_init(frame, chosen, follow)
        # what the default gives first: the constructions (other files) are read only when it matters
        found = _init_default(frame, value)
        if found is None:
            return None
        result = follow(found[0], found[1])
        return result if result is not None and _never_passed(*found[2:]) else None
    if init.function is None or not init.ctx.is_inside(value, init.function):
        return None
    return follow(init, value)


#: :func:`_through_setter` for a value that is not a setter's parameter
_NOT_A_SETTER = object()


def _through_setter(ctx: FileContext, value: cst.Name, follow):
    """For ``value``, read in a plain method of its class (not ``__init__``) where it names the method's
    parameter: what ``follow`` finds for the argument each call of the method passes (through
    instances, in this file and the project's others: :func:`callers_arguments`), when every call's is
    found and all are of one kind; None when not; :data:`_NOT_A_SETTER` when ``value`` is no such
    parameter."""
    function = ctx.enclosing(value, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef) or function.name.value == "__init__" \
            or not isinstance(ctx.parent(ctx.parent(function) or function), cst.ClassDef) \
            or not ctx.names.is_param_at(value):
        return _NOT_A_SETTER
    passed = callers_arguments(ctx, value)
    found = [follow(Frame(actx, None), a) for actx, a in passed]
    if not found or any(f is None for f in found):
        return None
    kinds = {f.kind if isinstance(f, Evidence) else f[0] for f in found}
    return found[0] if len(kinds) == 1 else None


def _leads_nowhere(frame: Frame, operand: cst.BaseExpression, follow) -> bool:
    """Whether :func:`_through_init` surely gives nothing for ``operand`` of a choice, whichever way the
    choice goes: read without the constructions of the class (an operand that is neither a call nor a
    name gives nothing there; a nested choice is not judged here)."""
    if isinstance(operand, (cst.IfExp, cst.BooleanOperation)):
        return False
    if isinstance(operand, cst.Call):
        return frame.cls is None or follow(Frame(frame.cls[0], None), operand) is None
    if isinstance(operand, cst.Name):
        found = _init_default(frame, operand)
        return found is None or follow(found[0], found[1]) is None
    return True


def _none_choice(expr: cst.BaseExpression, held) -> Optional[cst.BaseExpression]:
    """The operand ``x if x is not None else d`` (``is None``, ``x if x else d``, ``not x``) or ``x or d``
    evaluates to, when what the name ``x`` holds (``held(x)``: a pair whose second item is its value)
    is known to be ``None`` or an object; None when not decided."""

    def is_none(e: cst.BaseExpression) -> Optional[bool]:
        if not isinstance(e, cst.Name):
            return None
        found = held(e)
        if found is None:
            return None
        value = found[1]
        if isinstance(value, cst.Name) and value.value == "None":
            return True
        return False if isinstance(value, cst.Call) else None

    def truth(test: cst.BaseExpression) -> Optional[bool]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = truth(test.expression)
            return None if inner is None else not inner
        if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
                and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"):
            none = is_none(test.left)
            return None if none is None else none == isinstance(test.comparisons[0].operator, cst.Is)
        none = is_none(test)
        return None if none is None else not none

    if isinstance(expr, cst.IfExp):
        decided = truth(expr.test)
        return None if decided is None else expr.body if decided else expr.orelse
    if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
        decided = truth(expr.left)
        return None if decided is None else expr.left if decided else expr.right
    return None


def _unpassed_default(frame: Frame, value: cst.BaseExpression) -> Optional[Tuple[Frame, cst.BaseExpression]]:
    """``def __init__(self, model, criterion=nn.CrossEntropyLoss())`` then ``self.criterion = criterion``:
    the default (with the frame it is read in) when ``value`` reads an ``__init__`` parameter the
    function does not reassign and no construction of the class (:func:`constructions`: this file and the
    project files that name it) passes that parameter; None otherwise."""
    found = _init_default(frame, value)
    if found is None or not _never_passed(*found[2:]):
        return None
    return found[0], found[1]


def _init_default(frame: Frame, value: cst.BaseExpression):
    """The part of :func:`_unpassed_default` read in this function alone: ``(frame, default, class file,
    class, __init__, parameter)`` when ``value`` reads an ``__init__`` parameter with a default that the
    function does not reassign; None otherwise."""
    if frame.cls is None or not isinstance(value, cst.Name):
        return None
    ctx = frame.cls[0]
    function = ctx.enclosing(value, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef) or function.name.value != "__init__" or function.decorators:
        return None
    owner = ctx.parent(ctx.parent(function) or function)
    if not isinstance(owner, cst.ClassDef):
        return None
    param = next((p for p in function_params(function) if p.name.value == value.value), None)
    if param is None or param.default is None:
        return None
    held = _holds(Frame(ctx, function, cls=(ctx, owner), depth=frame.depth), value, value)
    if held is None or held[0] != "value" or held[2] is not param.default:
        return None  # reassigned, or read after another binding
    return held[1], held[2], ctx, owner, function, param


def _never_passed(ctx: FileContext, owner: cst.ClassDef, function: cst.FunctionDef, param: cst.Param) -> bool:
    """Whether no construction of ``owner`` in view passes ``param`` of its ``__init__`` (other files read)."""
    built = constructions(ctx, owner)
    if built is None:
        return False
    return not any(_may_pass(cctx, call, function, param.name.value) for cctx, call in built)


def _may_pass(ctx: FileContext, call: cst.Call, function: cst.FunctionDef, name: str) -> bool:
    """Whether ``call`` of ``function`` (a method: ``self`` is filled) passes an argument for the parameter
    ``name``: by position or keyword, or through ``*args``; through ``**kwargs`` only when those are the
    ``**kwargs`` of the function around the call and some call of that function in its file passes
    ``name`` as a keyword (or a ``*``/``**`` argument of its own), or no call of it is seen."""
    rest = [a for a in call.args if a.star != "**"]
    spread = [a for a in call.args if a.star == "**"]
    bound = bind_arguments(call.with_changes(args=rest), function, 1)
    if bound is None or name in bound:
        return True
    if not spread:
        return False
    outer = ctx.enclosing(call, cst.FunctionDef)
    star = outer.params.star_kwarg if isinstance(outer, cst.FunctionDef) else None
    if len(spread) != 1 or star is None or not (isinstance(spread[0].value, cst.Name)
                                                and spread[0].value.value == star.name.value):
        return True
    if any(isinstance(n, cst.Name) and n.value == star.name.value for a in ctx.contents(outer).assigns
           for t in assignment_targets(a) for n in iter_nodes(t)):
        return True  # the dict is rebound or added to
    if any(isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name)
           and c.func.value.value == star.name.value for c in ctx.calls_in(outer)):
        return True  # `kwargs.update(...)`, `kwargs.setdefault(...)`
    callers = calls_of_function(ctx, outer)
    if not callers:
        return True
    return any(a.star or (a.keyword is not None and a.keyword.value == name) for c in callers for a in c.args)


def _return_fact(frame: Frame, hops: int) -> Optional[Evidence]:
    function = frame.function
    if function is None:
        return None
    returns = function_returns(function)
    if not returns or any(r.value is None for r in returns):
        return None
    facts = [value_fact(frame, r.value, hops + 1) for r in returns]
    return _unanimous(facts)


def loss_fact(frame: Frame, call: cst.Call, hops: int = 0) -> Optional[Tuple[str, Why]]:
    """``(loss, how)`` when ``call`` computes a cross-entropy (``"ce"``), a binary cross-entropy
    (``"bce"``) or an NLL loss (``"nll"``) in ``frame``: a torch function, a loss module built in place,
    or a name, parameter (its argument or default) or ``self.<attr>`` holding one."""
    ctx = frame.ctx
    func = call.func
    names = ctx.names.qualified_names_at(func)
    for funcs, loss in _LOSS_FUNCS:
        if names & funcs:
            return loss, ()
    return _loss_object(frame, func, hops)


def _loss_object(frame: Frame, func: cst.BaseExpression, hops: int) -> Optional[Tuple[str, Why]]:
    if hops > 6:
        return None
    ctx = frame.ctx
    if isinstance(func, cst.Call):
        core = strip_moves(func)
        names = ctx.names.qualified_names_at(core.func) if isinstance(core, cst.Call) else set()
        for layers, loss in _LOSS_LAYERS:
            if names & layers:
                return loss, (f"`{_short(ctx, func)}` (", At(ctx, func), ")")
        if isinstance(core, cst.Call) and isinstance(core.func, cst.Subscript):
            # `LOSSES[args.loss]()`: a dict of loss classes keyed by literal strings
            entries = subscript_values(frame, core.func)
            return _same_loss([_loss_class(f, v) for f, v in entries or ()])
        if (isinstance(core, cst.Call) and frame.depth < MAX_CALL_DEPTH
                and maybe_project_function(ctx, core.func) and called_function(ctx, core, _LOSS_TEXT) is not None):
            # `criterion = make_criterion()`: what a project function returns (its module read only when
            # it spells a loss)
            target = project_function(frame, core)
            if target is not None and target.function is not None:
                returns = function_returns(target.function)
                if returns and all(r.value is not None for r in returns):
                    found = [_loss_object(target, r.value, hops + 1) for r in returns]  # type: ignore[arg-type]
                    kinds = {x[0] if x else None for x in found}
                    if len(kinds) == 1 and None not in kinds:
                        return found[0]
        return None
    if isinstance(func, cst.Subscript):
        # `LOSSES[args.loss]`: a dict of losses keyed by literal strings (see :func:`subscript_values`)
        entries = subscript_values(frame, func)
        return _same_loss([_loss_object(f, v, hops + 1) for f, v in entries or ()])
    if isinstance(func, (cst.Name, cst.Attribute)):
        # a loss function passed or stored as a value (`loss_fn=F.cross_entropy`)
        names = ctx.names.qualified_names_at(func)
        for funcs, loss in _LOSS_FUNCS:
            if names & funcs:
                return loss, (f"`{_short(ctx, func)}` (", At(ctx, func), ")")
    if isinstance(func, cst.Name):
        held = _holds(frame, func, func)
        if held is not None and held[0] == "imported":
            held = _imported_value(frame, func, _LOSS_TEXT)
        if held is None:
            return None
        how, f, value, index = held
        if how == "module":
            found = {_loss_object(f, v, hops + 1) if isinstance(v, (cst.Call, cst.Subscript)) else None for v in value}
            found_kinds = {x[0] if x else None for x in found}
            return next(iter(found)) if len(found_kinds) == 1 and None not in found_kinds else None
        if how != "value" or index is not None:
            return None
        return _loss_object(f, value, hops + 1)
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value == self_name(frame) and frame.cls is not None):
        cctx, cls = frame.cls
        values = _class_attr(cctx, cls, func.attr.value)
        found = [_loss_object(Frame(cctx, None), v, hops + 1) if isinstance(v, cst.Call)
                 else _through_init(frame, v, lambda f, e: _loss_object(f, e, hops + 1)) for v in values]
        kinds = {x[0] if x else None for x in found}
        return found[0] if found and len(kinds) == 1 and None not in kinds else None
    return None


def _loss_class(frame: Frame, expr: cst.BaseExpression) -> Optional[Tuple[str, Why]]:
    """The loss a class reference names (``nn.CrossEntropyLoss`` as a value, to be called)."""
    ctx = frame.ctx
    names = ctx.names.qualified_names_at(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else set()
    for layers, loss in _LOSS_LAYERS:
        if names & layers:
            return loss, (f"`{_short(ctx, expr)}` (", At(ctx, expr), ")")
    return None


def _same_loss(found: List[Optional[Tuple[str, Why]]]) -> Optional[Tuple[str, Why]]:
    """The join of several possible losses: the first, when every one is known and of the same kind."""
    kinds = {x[0] if x else None for x in found}
    return found[0] if found and len(kinds) == 1 and None not in kinds else None


def _frame_value(frame: Frame, expr: cst.BaseExpression, decide: bool = True) -> Optional[Tuple[Frame, cst.BaseExpression]]:
    """The one value a name holds in ``frame``, with the frame it is read in: across calls (a parameter is
    the argument its caller passes, see :func:`_holds`), the names layer's answers within one function
    (the assignment that reaches it on every path, not a tuple element) or at module level (its only
    value, moves aside); an expression that is no name is its own value."""
    if not isinstance(expr, cst.Name):
        return frame, expr
    held = _holds(frame, expr, expr, decide)
    if held is None:
        return None
    how, f, value, index = held
    if how == "module":
        return (f, value[0]) if len(value) == 1 else None
    return (f, value) if how == "value" and index is None else None


def _literal_key(frame: Frame, index: cst.BaseExpression) -> Optional[str]:
    """The string a key expression holds when the code runs with its literal defaults: a string literal, a
    name assigned one, ``cfg["loss"]`` of a dict literal, or ``args.loss`` of ``parser.parse_args()`` where
    ``parser.add_argument("--loss", default="ce")`` (argparse's dest: dashes become underscores)."""
    found = _frame_value(frame, index, decide=False)  # the key is read as assigned: no branch decided by it
    if found is None:
        return None
    f, value = found
    if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
        return value.evaluated_value
    if isinstance(value, cst.Subscript):
        chosen = literal_choice(f, value)
        return _literal_key(chosen[0], chosen[1]) if chosen is not None and chosen[1] is not value else None
    if not isinstance(value, cst.Attribute):
        return None
    parsed = _frame_value(f, value.value, decide=False)
    for _ in range(3):  # `args` handed on by callers: the name each passes, in its own frame
        if parsed is None or not isinstance(parsed[1], cst.Name) or parsed[1] is value.value:
            break
        parsed = _frame_value(parsed[0], parsed[1], decide=False)
    if parsed is None:
        return None
    pf, call = parsed
    dest = value.attr.value
    if isinstance(call, cst.Call) and not _parses_args(call):
        # `opt = parse_option()`: a project function that returns what its parser parsed, leaving `dest` as is
        returned = _options_returned(pf.ctx, call)
        if returned is None:
            return None
        pf, call = returned
    if not (isinstance(call, cst.Call) and _parses_args(call) and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)):
        return None
    if _attribute_written(f.ctx, dest) or _attribute_written(pf.ctx, dest):
        return None  # `args.model = ...` somewhere: the option's default may not be what is read
    parser = call.func.value.value
    defaults = set()
    for c in pf.ctx.calls_in(pf.ctx.module):
        func = c.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"
                and isinstance(func.value, cst.Name) and func.value.value == parser):
            continue
        flags = [a.value.evaluated_value for a in c.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
        explicit = next((a.value for a in c.args if a.keyword is not None and a.keyword.value == "dest"), None)
        names = ({explicit.evaluated_value} if isinstance(explicit, cst.SimpleString)
                 else {str(x).lstrip("-").replace("-", "_") for x in flags if str(x).startswith("--")} or
                 {str(x).lstrip("-") for x in flags})
        if dest not in names:
            continue
        default = next((a.value for a in c.args if a.keyword is not None and a.keyword.value == "default"), None)
        if not isinstance(default, cst.SimpleString) or not isinstance(default.evaluated_value, str):
            return None
        required = next((a.value for a in c.args if a.keyword is not None and a.keyword.value == "required"), None)
        if not (required is None or isinstance(required, cst.Name) and required.value == "False"):
            return None  # `required=True`: every run names it, the default is never read
        defaults.add(default.evaluated_value)
    return defaults.pop() if len(defaults) == 1 else None


def _parses_args(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "parse_args"


def _options_returned(ctx: FileContext, call: cst.Call) -> Optional[Tuple[Frame, cst.Call]]:
    """For ``call`` of a project function whose every return gives ``parser.parse_args()`` (through a
    local name): that ``parse_args`` call in the function's frame; else None.  (Whether some code sets
    ``<options>.<dest>`` is :func:`_literal_key`'s question, for the whole file.)"""
    found = definition_of(ctx, call.func)
    if found is None or not isinstance(found[1], cst.FunctionDef):
        return None
    fctx, function = found
    returned = returned_values(fctx, function)
    if not returned or len({id(v) for _c, v in returned}) != 1:
        return None
    rctx, value = returned[0]
    if rctx is not fctx or not isinstance(value, cst.Call) or not _parses_args(value):
        return None
    return Frame(fctx, function), value


def _string_table(frame: Frame, sub: cst.Subscript) -> Optional[Tuple[Frame, Dict[str, cst.BaseExpression]]]:
    """The entries of the dict ``sub`` indexes, with the frame they are read in: a dict literal whose keys
    are all string literals (``{"ce": nn.CrossEntropyLoss(), ...}``, or ``dict(ce=...)``), held by a name
    the file never adds entries to (``LOSSES[k] = ...``, ``LOSSES.update(...)``); None otherwise."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    container = _frame_value(frame, sub.value)
    name = sub.value if isinstance(sub.value, cst.Name) else None
    held_as = name.value if name is not None else None
    if container is None and name is not None:
        # `from models import model_dict`: the dict a project module binds at its top level
        held = _holds(frame, name, name)
        imported = _imported_value(frame, name, ("{", "dict(")) if held is not None and held[0] == "imported" else None
        if imported is None or len(imported[2]) != 1 or _entries_added(frame.ctx, name.value):
            return None
        container = imported[1], imported[2][0]
        held_as = _bound_name(imported[1].ctx, imported[2][0])
    if container is None:
        return None
    f, table = container
    entries: Dict[str, cst.BaseExpression] = {}
    if isinstance(table, cst.Dict):
        for e in table.elements:
            if not isinstance(e, cst.DictElement) or not isinstance(e.key, cst.SimpleString):
                return None
            key = e.key.evaluated_value
            if not isinstance(key, str):
                return None
            entries[key] = e.value
    elif (isinstance(table, cst.Call) and isinstance(table.func, cst.Name) and table.func.value == "dict"
          and f.ctx.names.binding_at(table.func, "dict") is None and table.args):
        for a in table.args:
            if a.keyword is None or a.star:
                return None
            entries[a.keyword.value] = a.value
    else:
        return None
    if held_as is None and isinstance(sub.value, cst.Name) or held_as is not None and _entries_added(f.ctx, held_as):
        return None
    return f, entries


def _bound_name(ctx: FileContext, value: cst.BaseExpression) -> Optional[str]:
    """The name a module-level assignment of ``value`` binds (``model_dict = {...}``), else None."""
    parent = ctx.parent(value)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    if isinstance(parent, cst.AnnAssign) and isinstance(parent.target, cst.Name):
        return parent.target.value
    return None


def module_entry(ctx: FileContext, sub: cst.Subscript) -> Optional[str]:
    """``models.__dict__[args.arch]``, a builder picked from a module by name: the qualified name of the
    entry the key's literal default picks (``torchvision.models.resnet50`` for ``default="resnet50"``);
    None when the key has no one literal value where the code runs with its defaults, or the subscripted
    value is not the namespace of an imported module."""
    table = sub.value
    if not isinstance(table, cst.Attribute) or table.attr.value != "__dict__" or len(sub.slice) != 1:
        return None
    index = sub.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    modules = ctx.names.qualified_names_at(table.value)
    if len(modules) != 1:
        return None
    key = _literal_key(open_frame(ctx, sub), index.value)
    if key is None:  # `args` a parameter: what the calls of the function pass (`main_worker(gpu, args)`)
        keys = {_literal_key(f, index.value) for f in caller_frames(ctx, sub)}
        key = keys.pop() if len(keys) == 1 else None
    if key is None or not key.isidentifier():
        return None
    return f"{next(iter(modules))}.{key}"


def _entries_added(ctx: FileContext, name: str) -> bool:
    """Whether the file stores into a dict held by ``name`` (``name[k] = v``, ``name.update(...)``,
    ``name.setdefault(...)``, ``name |= ...``)."""
    for a in ctx.contents(ctx.module).assigns:
        for t in assignment_targets(a):
            if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name:
                return True
            if isinstance(a, cst.AugAssign) and isinstance(t, cst.Name) and t.value == name:
                return True
    for c in ctx.calls_in(ctx.module):
        func = c.func
        if (isinstance(func, cst.Attribute) and func.attr.value in ("update", "setdefault", "__setitem__")
                and isinstance(func.value, cst.Name) and func.value.value == name):
            return True
    return False


def literal_choice(frame: Frame, sub: cst.Subscript) -> Optional[Tuple[Frame, cst.BaseExpression]]:
    """``LOSSES[args.loss]``: the element a dict literal with string keys gives for the key the code
    holds by its literal defaults (:func:`_literal_key`); None when either is unknown."""
    table = _string_table(frame, sub)
    if table is None:
        return None
    f, entries = table
    key = _literal_key(frame, sub.slice[0].slice.value)  # type: ignore[union-attr]
    return (f, entries[key]) if key in entries else None


def subscript_values(frame: Frame, sub: cst.Subscript) -> Optional[List[Tuple[Frame, cst.BaseExpression]]]:
    """What ``LOSSES[key]`` may hold, each value with the frame it is read in: for a dict literal of
    string keys (:func:`_string_table`), the entry the key picks when the code holds it by its literal
    defaults (:func:`_literal_key`: ``parser.add_argument("--loss", default="ce")``), and every entry
    when the key is not known (the caller joins them: one answer only when all agree); None when the
    dict is not such a literal, or the known key is not one of its keys."""
    table = _string_table(frame, sub)
    if table is None:
        return None
    f, entries = table
    key = _literal_key(frame, sub.slice[0].slice.value)  # type: ignore[union-attr]
    if key is not None:
        return [(f, entries[key])] if key in entries else None
    return [(f, v) for v in entries.values()] or None


def argument_fact(frame: Frame, value: cst.BaseExpression) -> bool:
    """Whether ``value`` (an argument) is known to be a model, a module or a probability in ``frame``
    (in an open frame, asked once per node)."""
    if frame.caller is not None or frame.bound:
        return _find_argument_fact(frame, value)
    cache = _ARGUMENT_FACTS.of(frame.ctx)
    if value not in cache:
        cache[value] = _find_argument_fact(frame, value)
    return cache[value]


#: argument -> :func:`argument_fact` in its open frame, per file
_ARGUMENT_FACTS: "Fact[Dict[cst.CSTNode, bool]]" = Fact("values.argument_facts", lambda ctx: {})


def _find_argument_fact(frame: Frame, value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Name, cst.Attribute)):
        if model_fact(frame, value) is not None:
            return True
    if isinstance(value, cst.Call) and _built_evidence(frame.ctx, value) is not None:
        return True
    if isinstance(value, (cst.Name, cst.Call, cst.Subscript)):
        return value_fact(frame, value, follow=False) is not None
    return False


def subclass_frames(ctx: FileContext, frame: Frame) -> List[Frame]:
    """For a method of a class: one frame per subclass in the same file (subclasses of those included)
    that inherits the method, with ``self`` an instance of that subclass."""
    if frame.cls is None or frame.function is None or frame.cls[0] is not ctx:
        return []
    base = frame.cls[1]
    name = frame.function.name.value
    table = _SUBCLASSES.get(ctx)
    if table is None:
        table = {}
        for stmt in ctx.module.body:
            if not isinstance(stmt, cst.ClassDef):
                continue
            for arg_ in stmt.bases:
                expr = arg_.value
                if isinstance(expr, cst.Name) and not ctx.names.qualified_names_at(expr):
                    found = local_definition(ctx, expr.value, stmt)
                    if found is not None and isinstance(found[1], cst.ClassDef) and found[1] is not stmt:
                        table.setdefault(found[1], []).append(stmt)
        _SUBCLASSES.put(ctx, table)
    out: List[Frame] = []
    stack, seen = list(table.get(base, ())), {base}
    while stack and len(seen) <= 32:  # subclasses of subclasses too, while they inherit the method
        sub = stack.pop(0)
        if sub in seen or method_of(sub, name) is not None:
            continue
        seen.add(sub)
        out.append(Frame(ctx, frame.function, cls=(ctx, sub)))
        stack.extend(table.get(sub, ()))
    return out


#: class -> the classes of the same file that name it as a base
_SUBCLASSES: "Fact[Dict[cst.ClassDef, List[cst.ClassDef]]]" = Fact("values.subclasses")


__all__ = [
    "project_caller_frames",
    "module_entry",
    "At",
    "Evidence",
    "Frame",
    "MAX_CALLERS",
    "MAX_CALL_DEPTH",
    "NLL",
    "Why",
    "argument_fact",
    "caller_frames",
    "caller_value_fact",
    "is_attribute",
    "loss_fact",
    "model_fact",
    "open_frame",
    "project_function",
    "render",
    "self_name",
    "subclass_frames",
    "subscript_values",
    "value_fact",
]
