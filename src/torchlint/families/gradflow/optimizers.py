"""Optimizers stepped after a backward pass whose loss does not reach their parameters.

Both sides are decided from construction, never from names:

- an optimizer (``opt = torch.optim.Adam(G.parameters())``) holds the parameters of the models whose
  ``.parameters()`` its first argument is built from (``chain(a.parameters(), b.parameters())``,
  ``[{"params": a.parameters()}, ...]``, ``filter(f, a.parameters())``, ``list(...) + list(...)``);
  each model is the construction call its name is bound to where the optimizer is built
  (``G = Generator().to(device)``), together with the models passed to that construction
  (``DataParallel(net)`` holds ``net``);
- a loss (``d_loss`` in ``d_loss.backward()``) reaches the models it is computed from through local
  names, the calls of those models, the tensors they return, and the returns of the file's module-level
  helper functions it calls (their parameters read as the call's arguments), except through
  ``.detach()``, ``.item()``, ``.data`` and values computed under ``torch.no_grad()``.

What library calls do comes from :mod:`torchlint.analysis.effects`: a name rebound to the same module
(``D = D.cuda()``, under an ``if`` too) holds its one construction, ``apply(weights_init)`` initialises,
wrappers hold their module, ``add_param_group`` adds a source.  Objects hold models and optimizers
too: ``self.D``/``self.opt_d`` of a class set once by its constructor (or a method it calls) stand for
that construction (or for the constructor's argument), and so do the entries of a dict literal keyed by
literal strings.  A parameter of a function or method is what its calls in the file pass (only when it
is never called on an instance).

Anything else on either side — a call of a function of another module or of a method, an attribute set
outside the constructor, a parameter of a function without a call in the file, a model built by a call
that is not a module construction — makes the answer unknown.

The second question (:func:`untrained_models`) turns the first around: a model whose forward pass a
loss runs through (so that backward fills its gradients) while no optimizer of the file holds its
parameters.  It is asked only when every optimizer of the file, and every step of one, is known, and
only of a model that holds parameters by construction (a ``torch.nn`` layer with weights, a
``Sequential`` of such, a project ``nn.Module`` class building such layers) and whose name is used for
nothing but being called and moved: any other use (``requires_grad_(False)``, ``.parameters()`` in a
loop, ``.eval()``, ``load_state_dict``, ``copy.deepcopy``, passing it to a function or a wrapper) may
freeze it, fill it from another model or train it elsewhere, and keeps the answer unknown.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import re

import libcst as cst

from torchlint.analysis.context import RUN_METHODS, Fact, FileContext, arg, method_name, receiver, run_object
from torchlint.analysis import effects
from torchlint.analysis.mode_layers import CONTAINER_CLASSES
from torchlint.analysis.definitions import (appended_values, bind_arguments, built_values, call_sites, called_function,
                                          callers_arguments, class_body, constructions, constructor_arguments,
                                          definition_of, function_returns, returned_argument, returned_values,
                                          same_reference, strip_moves)
from torchlint.analysis.ops import grown_content
from torchlint.analysis.roles import is_module_value, plain_class
from torchlint.analysis.training import backward_operand, is_backward, optimizer_of_step, under_no_grad
from torchlint.analysis.names import dotted_name, root_name
from torchlint.analysis.walk import iter_nodes, target_names
from torchlint.families.gradflow.submodules import may_be_subclassed

_MAX_HOPS = 12
#: methods that cut the value off the graph: nothing is reached through them
_CUTTING = frozenset({"detach", "item", "numpy", "tolist", "detach_"})
#: tensor methods whose result is a tensor (never a module)
_TENSOR_METHODS = frozenset({"reshape", "view", "flatten", "unsqueeze", "squeeze", "permute", "transpose", "float",
                             "long", "contiguous", "type", "expand", "repeat", "clone", "detach", "mean", "sum"})
#: module methods that return the module (or its parameters) without running it
_MODULE_PLUMBING = frozenset({"parameters", "named_parameters", "state_dict", "train", "eval", "to", "cuda", "cpu",
                              "modules", "children", "zero_grad", "requires_grad_"})
#: the roots of calls that compute nothing from a model by themselves (they only pass tensors on)
_LIBRARY_ROOTS = ("torch.", "numpy.", "math.", "builtins.")
#: torch functions that build a new tensor from sizes or numbers: their arguments carry no graph
_NEW_TENSORS = frozenset("torch." + n for n in ("randn", "rand", "zeros", "ones", "empty", "full", "arange",
                                               "linspace", "logspace", "randint", "randperm", "eye", "tensor"))
#: the legacy tensor constructors (``torch.LongTensor(indexes)``, ``torch.cuda.FloatTensor(n, 3)``): a new
#: tensor from data or sizes, never on the graph
_LEGACY_TENSOR = re.compile(r"torch\.(cuda\.)?[A-Z][a-z]*Tensor$")
_BUILTINS = frozenset({"len", "float", "int", "sum", "max", "min", "abs", "range", "zip", "enumerate", "list",
                       "tuple", "isinstance", "print"})


#: the names of the models the losses asked about call (for messages)
_CALLED: Fact[Set[str]] = Fact("gradflow.called_models", lambda ctx: set())
#: the helper functions being followed, innermost last, each with its parameters' arguments
_BOUND: "Fact[List[Tuple[cst.FunctionDef, dict]]]" = Fact("gradflow.bound_helpers", lambda ctx: [])
#: each model call the losses asked about reach: the name called and the constructions it holds
_UNITS: "Fact[List[Tuple[cst.Name, FrozenSet[cst.Call]]]]" = Fact("gradflow.called_units", lambda ctx: [])
#: set (one element) while a loss is followed only for the models it surely runs through: a part of it
#: that cannot be followed is skipped instead of making the whole answer unknown (a model called on the
#: graph stays on it whatever the other parts reach)
_LENIENT: "Fact[List[bool]]" = Fact("gradflow.lenient", lambda ctx: [])


#: the call of a function of the file that the steps inside it are asked about, one call at a time: the
#: function, and the argument each of its parameters is bound to there (``update(model, optimizer)`` and
#: ``update(meta_model, meta_optimizer)``)
_SITE: "Fact[Dict[cst.FunctionDef, Dict[str, cst.BaseExpression]]]" = Fact("gradflow.call_site", lambda ctx: {})
#: the loop targets of ``for net, opt in zip(nets, opts):`` stood for by one element of each list, while
#: the steps of that loop are asked about one iteration at a time
_ZIPPED: "Fact[Dict[cst.For, Dict[str, Tuple[cst.BaseExpression, str]]]]" = Fact("gradflow.zipped", lambda ctx: {})
#: ``self.<attr>`` of a class whose constructor builds its optimizer on each path of an ``if`` stood for by
#: one of those constructions, while a step of it is asked about one construction at a time
_CHOSEN: "Fact[Dict[Tuple[cst.ClassDef, str], cst.Call]]" = Fact("gradflow.chosen_optimizer", lambda ctx: {})

Unknown = effects.Unknown  # the answer cannot be known from the code


@dataclass(frozen=True)
class StrayStep:
    """``step``: the optimizer step; ``optimizer``: the optimizer's code; ``backwards``: the backward calls
    whose gradients it applies; ``held``/``reached``: the codes of the models on each side."""

    step: cst.Call
    optimizer: str
    backwards: Tuple[cst.Call, ...]
    held: Tuple[str, ...]
    reached: Tuple[str, ...]
    #: for the optimizer of a zip loop, the element of the list it is in the iteration found
    element: Optional[str] = None


def stray_steps(ctx: FileContext) -> List[StrayStep]:
    """Every optimizer step of the file whose parameters none of the preceding backward passes (in the
    same function, since the previous optimizer step there) reaches.  Ask after the walk."""
    out: List[StrayStep] = []
    calls = ctx.calls_in(ctx.module)
    for call in calls:
        opt = optimizer_of_step(ctx, call)
        if not isinstance(opt, cst.Name) and effects.self_attr(ctx, opt) is None:  # type: ignore[arg-type]
            continue
        backwards = _backwards_before(ctx, call)
        if not backwards or _gradients_written(ctx, backwards[0], call):
            continue
        loop = _zip_loop(ctx, opt) if isinstance(opt, cst.Name) else None
        sites = _sites_passing(ctx, opt) if isinstance(opt, cst.Name) and loop is None else None
        if sites:  # `def update(model, optimizer)` called with different pairs: one call at a time
            found = None
            function, bound_sites = sites
            for site, bound in bound_sites:
                _SITE.of(ctx)[function] = bound
                try:
                    found = _stray_step(ctx, call, opt, backwards, _short_code(ctx, site))
                finally:
                    _SITE.of(ctx).pop(function, None)
                if found is not None:
                    break
        elif loop is None and _branch_optimizers(ctx, opt):
            found = None  # `if gda: self.optimizer = SGD(...)` / `else: ...`: one construction at a time
            chosen = _CHOSEN.of(ctx)
            key = effects.self_attr(ctx, opt)
            for value in _branch_optimizers(ctx, opt):
                chosen[key] = value  # type: ignore[index]
                try:
                    found = _stray_step(ctx, call, opt, backwards, _short_code(ctx, value))
                finally:
                    chosen.pop(key, None)  # type: ignore[arg-type]
                if found is not None:
                    break
        elif loop is None:
            found = _stray_step(ctx, call, opt, backwards)
        else:  # `for net, opt in zip(nets, opts):` one iteration at a time
            found = None
            zipped = _ZIPPED.of(ctx)
            for binding in loop[1]:
                zipped[loop[0]] = binding
                try:
                    found = _stray_step(ctx, call, opt, backwards, binding[opt.value][1])  # type: ignore[union-attr]
                finally:
                    zipped.pop(loop[0], None)
                if found is not None:
                    break
        if found is not None:
            out.append(found)
    return out


def _stray_step(ctx: FileContext, call: cst.Call, opt: cst.BaseExpression, backwards: List[cst.Call],
                label: Optional[str] = None) -> Optional[StrayStep]:
    try:
        held = _held_models(ctx, opt)
        reached: Set[cst.Call] = set()
        _CALLED.of(ctx).clear()
        for b in backwards:
            operand = backward_operand(ctx, b)
            if operand is None:
                raise Unknown
            found = _reached(ctx, operand, 0, set())
            reached |= found
        if not held or not reached or held & reached or _member_owners(ctx, opt) & reached:
            return None
        owners = sorted({ctx.code(receiver(c)) for c in iter_nodes(_optimizer_call(ctx, opt))  # type: ignore[arg-type]
                         if isinstance(c, cst.Call) and method_name(c) in ("parameters", "named_parameters")
                         and receiver(c) is not None} | {ctx.code(s) for s in _added_owners(ctx, opt)})
    except Unknown:
        return None
    if not _CALLED.of(ctx):
        return None
    return StrayStep(call, ctx.code(opt), tuple(backwards), tuple(owners), tuple(sorted(_CALLED.of(ctx))), label)


def _member_owners(ctx: FileContext, opt: cst.BaseExpression) -> FrozenSet[cst.Call]:
    """The models whose members the optimizer ``opt`` holds the parameters of: for ``model.fc.parameters()``
    (``self.model.head.parameters()``) the constructions of ``model`` (``self.model``, ``self.model.head``)
    themselves.  Such an optimizer steps part of that model (a linear probe on a frozen encoder): the loss
    of ``model(x)`` reaches it when the forward pass runs it.  Empty when not known."""
    value = _optimizer_call(ctx, opt)
    params = arg(value, 0, "params") if isinstance(value, cst.Call) else None
    if params is None:
        return frozenset()
    try:
        sources = effects.parameter_sources(ctx, params.value)
    except Unknown:
        return frozenset()
    out: Set[cst.Call] = set()
    for source in sources:
        while isinstance(source, cst.Attribute) and isinstance(source.value, (cst.Name, cst.Attribute)):
            source = source.value
            try:
                out |= _construction(ctx, source)
            except Unknown:
                pass
    return frozenset(out)


#: methods of a list that change which values it holds
_LIST_WRITES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "__setitem__",
                          "__delitem__", "__iadd__"})


def _zip_loop(ctx: FileContext, name: cst.Name) -> Optional[Tuple[cst.For, List[Dict[str, Tuple[cst.BaseExpression, str]]]]]:
    """For a target of ``for net, opt in zip(nets, opts):`` (or ``enumerate(zip(...))``) read in the loop
    and never rebound there, where each zipped list is a name bound once to a list literal and never
    changed: the loop and, per iteration, the element each target stands for (the targets over other
    iterables stand for nothing), with its spelling (``nets[0]`` where it is no name).  None otherwise."""
    loop = ctx.enclosing(name, cst.For)
    while loop is not None:
        if any(isinstance(n, cst.Name) and n.value == name.value for n in iter_nodes(loop.target)):  # type: ignore[union-attr]
            break
        loop = ctx.enclosing(loop, cst.For)
    if loop is None or not ctx.is_inside(name, loop.body) or _binds_in(loop.body, name.value):  # type: ignore[union-attr]
        return None
    target, it = loop.target, loop.iter  # type: ignore[union-attr]
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate" \
            and not ctx.names.qualified_names_at(it.func) and len(it.args) == 1 \
            and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        it, target = it.args[0].value, target.elements[1].value
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "zip"
            and not ctx.names.qualified_names_at(it.func) and isinstance(target, (cst.Tuple, cst.List))
            and len(target.elements) == len(it.args) and all(a.keyword is None and not a.star for a in it.args)):
        return None
    columns: Dict[str, List[Tuple[cst.BaseExpression, str]]] = {}
    for el, a in zip(target.elements, it.args):
        if isinstance(el.value, cst.Name) and isinstance(a.value, cst.Name):
            values = _fixed_list(ctx, a.value)
            if values is not None:
                columns[el.value.value] = [(v, ctx.code(v) if isinstance(v, cst.Name) else f"{a.value.value}[{i}]")
                                           for i, v in enumerate(values)]
    if name.value not in columns or len({len(v) for v in columns.values()}) != 1:
        return None
    size = len(columns[name.value])
    return loop, [{k: v[i] for k, v in columns.items()} for i in range(size)]  # type: ignore[return-value]


def _binds_in(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is bound anywhere under ``node`` (an assignment, a loop, ``with``, ``:=``)."""
    for n in iter_nodes(node):
        targets: List[cst.CSTNode] = []
        if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            targets = [n.target]
        elif isinstance(n, cst.AsName):
            targets = [n.name]
        elif isinstance(n, (cst.Global, cst.Nonlocal, cst.Del)):
            return True
        if any(t.value == name for x in targets for t in target_names(x)):
            return True
    return False


def _fixed_list(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """The elements of the list or tuple literal ``name`` is bound to once, when nothing changes the list
    (no method that writes it, no item assignment); None otherwise."""
    b = ctx.names.binding_at(name, name.value)
    if b is None or b.imports or b.changed or len(b.values) != 1 or not isinstance(b.values[0], (cst.List, cst.Tuple)):
        return None
    elements = b.values[0].elements
    if not elements or any(isinstance(e, cst.StarredElement) for e in elements):
        return None
    for use in ctx.names_in(ctx.module, name.value):
        if ctx.names.binding_at(use, name.value) is not b:
            continue
        parent = ctx.parent(use)
        if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in _LIST_WRITES:
            return None
        if isinstance(parent, cst.Subscript) and parent.value is use \
                and isinstance(ctx.parent(parent), (cst.AssignTarget, cst.AugAssign, cst.Del)):
            return None
        if isinstance(parent, cst.AugAssign) and parent.target is use:
            return None
    return [e.value for e in elements]


def _listed(ctx: FileContext, expr: cst.Subscript) -> Optional[cst.BaseExpression]:
    """``nets[1]`` of a name bound once to a list or tuple literal never changed: its element."""
    if not isinstance(expr.value, cst.Name) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    index = expr.slice[0].slice.value
    if not isinstance(index, cst.Integer):
        return None
    values = _fixed_list(ctx, expr.value)
    position = int(index.value)
    return values[position] if values is not None and position < len(values) else None


def _zipped_label(ctx: FileContext, name: cst.Name) -> Optional[str]:
    element = _zipped_value(ctx, name)
    if element is None:
        return None
    loop = ctx.enclosing(name, cst.For)
    while loop is not None:
        binding = _ZIPPED.of(ctx).get(loop)  # type: ignore[call-overload]
        if binding is not None:
            return binding[name.value][1]
        loop = ctx.enclosing(loop, cst.For)
    return None


def _zipped_value(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The element a target of a zip loop stands for in the iteration being asked about."""
    zipped = _ZIPPED.of(ctx)
    if not zipped:
        return None
    loop = ctx.enclosing(name, cst.For)
    while loop is not None:
        binding = zipped.get(loop)  # type: ignore[call-overload]
        if binding is not None:
            if name.value in binding and ctx.is_inside(name, loop.body) and not _binds_in(loop.body, name.value):  # type: ignore[union-attr]
                return binding[name.value][0]
            return None
        loop = ctx.enclosing(loop, cst.For)
    return None


def _function_of(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    return ctx.enclosing(node, (cst.FunctionDef, cst.Lambda)) or ctx.module


def _backwards_before(ctx: FileContext, step: cst.Call) -> List[cst.Call]:
    """The backward calls of the function around ``step`` between the previous optimizer step there and
    ``step`` (source order)."""
    scope = _function_of(ctx, step)
    at = ctx.names.position(step)
    found: List[cst.Call] = []
    for call in ctx.calls_in(scope):
        if _function_of(ctx, call) is not scope:
            continue
        pos = ctx.names.position(call)
        if pos >= at:
            break
        if optimizer_of_step(ctx, call) is not None:
            found = []
        elif is_backward(ctx, call):
            found.append(call)
    return found


_GRAD_ATTRS = frozenset({"grad", "_grad"})


def _gradients_written(ctx: FileContext, first: cst.Call, step: cst.Call) -> bool:
    """Another tensor's gradient handed over by hand between the backward pass ``first`` and the ``step``
    (in the function around them): ``shared._grad = local.grad``, ``p.grad = q.grad.clone()``,
    ``p.grad.copy_(q.grad)`` — a step that applies gradients handed over from another model (a worker's copy,
    Hogwild) whatever the loss reached.  Scaling, clipping or clearing a gradient in place (``p.grad *= 0.5``,
    ``p.grad = None``) hands nothing over."""
    scope = _function_of(ctx, step)
    start, end = ctx.names.position(first), ctx.names.position(step)
    writes = _GRAD_WRITES.of(ctx)
    if scope not in writes:
        writes[scope] = _grad_writes(ctx, scope)
    return any(start < ctx.names.position(node) < end for node in writes[scope])


def _grad_writes(ctx: FileContext, scope: cst.CSTNode) -> List[cst.CSTNode]:
    """The statements of ``scope`` (not of functions inside it) that set a gradient from another tensor's."""
    out: List[cst.CSTNode] = []
    for node in iter_nodes(scope):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target, value = node.targets[0].target, node.value
        elif isinstance(node, cst.Call) and method_name(node) == "copy_" and node.args:
            target, value = receiver(node), node.args[0].value
        else:
            continue
        if not (isinstance(target, cst.Attribute) and target.attr.value in _GRAD_ATTRS) \
                or _function_of(ctx, node) is not scope:
            continue
        own = getattr(root_name(target.value, calls=True), "value", None)
        if any(isinstance(n, cst.Attribute) and n.attr.value in _GRAD_ATTRS
               and getattr(root_name(n.value, calls=True), "value", None) != own for n in iter_nodes(value)):
            out.append(node)
    return out


#: function (or module) -> its statements that hand another tensor's gradient over (per file)
_GRAD_WRITES: "Fact[Dict[cst.CSTNode, List[cst.CSTNode]]]" = Fact("optimizers.grad_writes", lambda ctx: {})


def _construction(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> FrozenSet[cst.Call]:
    """The module constructions a name holds where it is: the call it is bound to (through moves such
    as ``.to(device)`` and names), with the models passed to that call."""
    if hops > _MAX_HOPS:
        raise Unknown
    if isinstance(expr, cst.Attribute):
        if _set_elsewhere(ctx, expr):
            raise Unknown
        try:
            return frozenset({effects.self_module(ctx, expr)})  # `self.D`: the module the trainer holds
        except Unknown:
            return frozenset({effects.member_module(ctx, expr)})  # `model.generator`: a module it holds
    if isinstance(expr, cst.Subscript):
        element = _listed(ctx, expr)  # `nets[1]` of `nets = [G, D]`
        core = effects.same_module(ctx, element if element is not None else effects.keyed_value(ctx, expr))  # `nets["D"]`
        if isinstance(core, cst.Name):
            return _construction(ctx, core, hops + 1)
    elif not isinstance(expr, cst.Name):
        raise Unknown
    elif _zipped_value(ctx, expr) is not None:
        core = effects.same_module(ctx, _zipped_value(ctx, expr))  # type: ignore[arg-type]
        if isinstance(core, cst.Name):
            return _construction(ctx, core, hops + 1)
    elif _argument_of(ctx, expr) is not None:  # a parameter of the helper being followed: the call's argument
        core = effects.same_module(ctx, _argument_of(ctx, expr))  # type: ignore[arg-type]
        if isinstance(core, cst.Name):
            return _construction(ctx, core, hops + 1)
    elif _passed(ctx, expr) is not None:  # a parameter: the model every call passes
        return _construction(ctx, _passed(ctx, expr), hops + 1)  # type: ignore[arg-type]
    else:
        try:
            value = _value_of(ctx, expr)
            core = effects.same_module(ctx, value)
            if isinstance(core, cst.Name):
                return _construction(ctx, core, hops + 1)
        except Unknown:
            # `D = D.cuda()` under an `if`: the same model on both paths; a model built again: either
            out_of: Set[cst.Call] = set()
            for built in effects.held_modules(ctx, expr):
                out_of |= _built(ctx, built, hops)
            return frozenset(out_of)
    return frozenset(_built(ctx, core, hops))


def _built(ctx: FileContext, core: cst.BaseExpression, hops: int) -> Set[cst.Call]:
    """The module construction ``core``, with the models passed to it (:func:`_construction`)."""
    if not isinstance(core, cst.Call) or not is_module_value(ctx, core):
        raise Unknown
    out = {core}
    for a in core.args:
        if isinstance(a.value, cst.Name) and ctx.names.value_of(a.value) is not None:
            try:
                out |= _construction(ctx, a.value, hops + 1)
            except Unknown:
                pass
        elif isinstance(a.value, (cst.Name, cst.Attribute, cst.Call)) and not isinstance(a.value, cst.Name):
            if any(isinstance(n, cst.Name) and not ctx.names.qualified_names_at(n) and n.value not in ("self",)
                   and not _attribute_name(ctx, n) and not _layer_setting(ctx, n) and _maybe_model(ctx, n)
                   for n in iter_nodes(a.value)) and not _setting_argument(ctx, core, a):
                raise Unknown  # `Wrapper(model.encoder)`: which models it holds is not followed
    return out


def _attribute_name(ctx: FileContext, name: cst.Name) -> bool:
    """``size`` in ``args.size``: the name of an attribute, no variable that may hold a model."""
    parent = ctx.parent(name)
    return isinstance(parent, cst.Attribute) and parent.attr is name


def _layer_setting(ctx: FileContext, name: cst.Name) -> bool:
    """``z_dim`` in ``nn.Linear(z_dim, 16)``: an argument of a ``torch.nn`` layer (a size, a rate), not a
    model the layer holds."""
    parent = ctx.parent(name)
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return False
    q = ctx.names.qualified_names_at(call.func)
    return bool(q) and not q & CONTAINER_CLASSES and all(
        n.startswith("torch.nn.") and n.count(".") == 2 and n.rsplit(".", 1)[-1][:1].isupper() for n in q)


def _setting_argument(ctx: FileContext, core: cst.Call, given: cst.Arg) -> bool:
    """Whether the construction ``core`` of a project module class uses the argument ``given``
    (``EncoderRNN(lang.n_words, hidden)``) as a setting only: its constructor's parameter is used only as
    a size or rate of ``torch.nn`` layers (through arithmetic too), in comparisons, or stored whole on
    ``self`` under an attribute that the class in turn uses only so; never a module it holds."""
    found = definition_of(ctx, core.func)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return False
    octx, cls = found
    init = next((s for s in class_body(cls) if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    bound = bind_arguments(core, init, 1) if init is not None else None
    if init is None or bound is None:
        return False
    params = [p for p in list(init.params.posonly_params) + list(init.params.params) + list(init.params.kwonly_params)
              if bound.get(p.name.value) is given.value]
    if len(params) != 1 or params[0].star != "" or _rebinds(init, params[0].name.value, ctx):
        return False
    me = _first_param_name(init)
    for use in octx.names_in(init.body, params[0].name.value):
        parent = octx.parent(use)
        if isinstance(parent, cst.Attribute) and parent.attr is use or isinstance(parent, cst.Arg) and parent.keyword is use:
            continue
        if _setting_use(octx, use):
            continue
        target = parent.targets[0].target if isinstance(parent, cst.Assign) and parent.value is use \
            and len(parent.targets) == 1 else None  # `self.input_size = input_size`
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me):
            return False
        for read in _attribute_uses(octx, target.attr.value):
            if read is target or not octx.is_inside(read, cls):
                continue  # (what other code does with the stored number does not make it a module)
            if not isinstance(read.value, cst.Name) or not _setting_use(octx, read):
                return False
    return True


def _setting_use(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """Whether ``node`` is used as a number: through arithmetic, an argument of a ``torch.nn`` layer
    construction (not a container) or of a ``torch`` function, or in a comparison."""
    for _ in range(_MAX_HOPS):
        parent = ctx.parent(node)
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            node = parent
            continue
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget):
            return True
        if not isinstance(parent, cst.Arg) or parent.value is not node:
            return False
        call = ctx.parent(parent)
        q = ctx.names.qualified_names_at(call.func) if isinstance(call, cst.Call) else set()
        return bool(q) and not q & CONTAINER_CLASSES and not q & effects.HOLDERS and not q & effects.COPIES \
            and all(n.startswith("torch.") for n in q)
    return False


def _maybe_model(ctx: FileContext, name: cst.Name, hops: int = 0) -> bool:
    value = ctx.names.value_of(name)
    if value is None and hops < _MAX_HOPS:
        source = effects.unpacked(ctx, name)  # `real, _ = batch`: an element of the batch
        if source is not None:
            value = source[0]
            if isinstance(value, cst.Name):
                return _maybe_model(ctx, value, hops + 1)
        elif _batch_parameter(ctx, name):
            return False
        elif _literal_arguments(ctx, name):
            return False  # `def test(self, folder)` called with `"videos/"`: a string, no model
    return value is None or is_module_value(ctx, strip_moves(value))


_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)


def _literal_arguments(ctx: FileContext, name: cst.Name) -> bool:
    """A parameter every call in view passes a literal string or number for (or a name holding one)."""
    args = callers_arguments(ctx, name) if ctx.names.is_param_at(name) else []
    for actx, a in args:
        if isinstance(a, cst.Name):
            a = actx.names.value_of(a)  # type: ignore[assignment]
        if not isinstance(a, _LITERALS):
            return False
    return bool(args)


def _batch_parameter(ctx: FileContext, name: cst.Name) -> bool:
    """A parameter of an ignite step function read where it is not rebound (the engine or the batch)."""
    function = _function_of(ctx, name)
    return isinstance(function, cst.FunctionDef) and _is_param(function, name.value) \
        and ctx.names.reaching_assignment(name.value, name, function) is None and _engine_step(ctx, function)


def _value_of(ctx: FileContext, name: cst.Name) -> cst.BaseExpression:
    """The one value ``name`` holds where it is (:meth:`NameResolver.reaching_value`); :class:`Unknown`
    when there is none."""
    value = ctx.names.reaching_value(name)
    if value is None:
        raise Unknown
    return value


def _branch_optimizers(ctx: FileContext, opt: cst.BaseExpression) -> List[cst.Call]:
    """For ``self.<attr>`` set by the constructor to an optimizer construction on each of several paths
    (``if gda:`` / ``else:``): those constructions; empty otherwise (one construction, or unknown)."""
    if not isinstance(opt, cst.Attribute):
        return []
    try:
        values = effects.self_optimizers(ctx, opt)
    except Unknown:
        return []
    return values if len(values) > 1 else []


def _optimizer_call(ctx: FileContext, opt: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(opt, cst.Attribute):
        chosen = _CHOSEN.of(ctx).get(effects.self_attr(ctx, opt))  # type: ignore[arg-type]
        if chosen is not None:
            return chosen  # the construction of one path of the constructor being asked about
        return effects.self_optimizer(ctx, opt)  # `self.opt_d`, set once by the constructor
    if not isinstance(opt, cst.Name):
        raise Unknown
    element = _zipped_value(ctx, opt)
    if element is not None:
        return element if isinstance(element, cst.Call) else _optimizer_call(ctx, element)
    passed = _passed(ctx, opt)  # `def train(..., opt_g)` called as `train(..., opt_g)`
    if passed is not None:
        return _optimizer_call(ctx, passed)
    return strip_moves(_value_of(ctx, opt))


def _added_owners(ctx: FileContext, opt: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The modules whose parameters ``opt.add_param_group(...)`` adds (their spelling, for messages)."""
    try:
        return [r for g in effects.added_groups(ctx, opt) for r in effects.parameter_sources(ctx, g)]
    except Unknown:
        return []


def optimizer_holds(ctx: FileContext, opt: cst.BaseExpression, module: cst.BaseExpression) -> bool:
    """Whether the optimizer ``opt`` holds parameters of the model ``module`` (a name, ``self.<attr>``),
    known through the constructions both hold, also through the arguments of a function's callers
    (``def train(disc, d_optim)`` called as ``train(disc, Adam(disc.parameters()))``); False when either is
    not known."""
    try:
        return bool(_held_models(ctx, opt) & _construction(ctx, module))
    except Unknown:
        return False


def _held_models(ctx: FileContext, opt: cst.BaseExpression) -> FrozenSet[cst.Call]:
    if isinstance(opt, cst.Attribute) and _set_elsewhere(ctx, opt):
        raise Unknown
    value = _optimizer_call(ctx, opt)
    if not isinstance(value, cst.Call) or not effects.is_optimizer(ctx, value):
        raise Unknown
    params = arg(value, 0, "params")
    if params is None:
        raise Unknown
    out = _parameter_owners(ctx, params.value, 0)
    for group in effects.added_groups(ctx, opt):  # `opt.add_param_group({"params": D.parameters()})`
        out |= _parameter_owners(ctx, group, 0)
    return out


def _parameter_owners(ctx: FileContext, expr: cst.BaseExpression, hops: int) -> FrozenSet[cst.Call]:
    if hops > _MAX_HOPS:
        raise Unknown
    if not isinstance(expr, cst.Name):
        try:
            sources = effects.parameter_sources(ctx, expr)
        except Unknown:
            sources = None
        if sources is not None and all(isinstance(r, (cst.Name, cst.Attribute, cst.Subscript)) for r in sources):
            owners: FrozenSet[cst.Call] = frozenset()
            for r in sources:
                owners |= _construction(ctx, r)
            return owners
    if isinstance(expr, cst.Call):
        name = method_name(expr)
        if name in ("parameters", "named_parameters") and isinstance(receiver(expr), cst.Name):
            return _construction(ctx, receiver(expr))  # type: ignore[arg-type]
        func = expr.func
        q = ctx.names.qualified_names_at(func)
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and not q and len(expr.args) == 1:
            return _parameter_owners(ctx, expr.args[0].value, hops + 1)
        if isinstance(func, cst.Name) and func.value == "filter" and not q and len(expr.args) == 2:
            return _parameter_owners(ctx, expr.args[1].value, hops + 1)
        if q & {"itertools.chain"}:
            out: FrozenSet[cst.Call] = frozenset()
            for a in expr.args:
                out |= _parameter_owners(ctx, a.value, hops + 1)
            return out
        raise Unknown
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _parameter_owners(ctx, expr.left, hops + 1) | _parameter_owners(ctx, expr.right, hops + 1)
    if isinstance(expr, (cst.List, cst.Tuple)):
        out = frozenset()
        for el in expr.elements:
            v = el.value
            if isinstance(v, cst.Dict):
                found = [e.value for e in v.elements if isinstance(e, cst.DictElement)
                         and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == "params"]
                if len(found) != 1:
                    raise Unknown
                out |= _parameter_owners(ctx, found[0], hops + 1)
            else:
                out |= _parameter_owners(ctx, v, hops + 1)
        return out
    if isinstance(expr, cst.Name):
        return _parameter_owners(ctx, _value_of(ctx, expr), hops + 1)
    raise Unknown


def _reached(ctx: FileContext, expr: cst.BaseExpression, hops: int, visited: Set[int]) -> Set[cst.Call]:
    """The module constructions whose forward pass ``expr`` is computed from, on the graph."""
    if hops > _MAX_HOPS:
        raise Unknown
    if id(expr) in visited:
        return set()
    visited.add(id(expr))
    out: Set[cst.Call] = set()
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        try:
            if isinstance(node, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                raise Unknown
            if isinstance(node, cst.Attribute):
                if node.attr.value == "data":
                    continue
                stack.append(node.value)
                continue
            if isinstance(node, cst.Call):
                name = method_name(node)
                if name in _CUTTING or under_no_grad(ctx, node) or _off_graph(ctx, node):
                    continue
                func = node.func
                callee = run_object(func)
                helper = _helper_of(ctx, node)
                if helper is not None:
                    out |= _through_helper(ctx, node, helper, hops)
                    continue
                if isinstance(callee, cst.Attribute) and _parameter_free_member(ctx, callee):
                    pass  # `self.criterion(out, y)`: a loss the trainer holds (however often set) passes its arguments on
                elif isinstance(callee, cst.Name) and not ctx.names.qualified_names_at(callee) \
                        and callee.value not in _BUILTINS and not _library_alias(ctx, callee):
                    if _plain_class_of(ctx, callee):
                        stack.extend(a.value for a in node.args)  # `Config()`: an object that is no module
                        continue
                    try:
                        models = _construction(ctx, callee)  # a model called (`disc(x)`), else unknown
                    except Unknown:
                        if not _LENIENT.of(ctx):
                            raise
                        stack.extend(a.value for a in node.args)  # a function not followed: its arguments
                        continue
                    out |= models
                    _UNITS.of(ctx).append((_outer_name(ctx, callee), models))
                    if not any(q.endswith("Loss") for m in models for q in ctx.names.qualified_names_at(m.func)):
                        _CALLED.of(ctx).add(_zipped_label(ctx, callee) or _site_label(ctx, callee) or callee.value)  # `net_a`
                elif isinstance(callee, cst.Name):
                    pass  # a builtin or a library function: it only passes its arguments on
                elif isinstance(callee, cst.Attribute) and _instance_member(ctx, callee) is not None:
                    member = _instance_member(ctx, callee)
                    whole = _instance_module(ctx, callee.value)  # type: ignore[arg-type]
                    if whole is not None:
                        out.add(whole)  # `model.pi(x)` runs parameters of `model`, whatever its method reads
                    if isinstance(member, cst.FunctionDef):  # `model.generator_forward(z)`: a method of its class
                        out |= _through_helper(ctx, node, member, hops, 1, callee.value)  # type: ignore[arg-type]
                        continue
                    out.add(member)  # `model.discriminator(x)`: a module the instance holds
                    _UNITS.of(ctx).append((callee, frozenset({member})))
                    if not any(q.endswith("Loss") for q in ctx.names.qualified_names_at(member.func)):
                        _CALLED.of(ctx).add(ctx.code(callee))
                elif isinstance(callee, (cst.Attribute, cst.Subscript)) and _held_by_object(ctx, callee):
                    models = _construction(ctx, callee)  # `self.D(x)`, `nets["D"](x)`: a model an object holds
                    out |= models
                    instance = _instance_of_self(ctx, callee)
                    if instance is not None:  # `self.generator(z)` in `model.generator_forward(z)`
                        _UNITS.of(ctx).append((cst.Attribute(value=instance, attr=callee.attr), models))  # type: ignore[union-attr]
                    elif isinstance(callee, cst.Attribute):
                        _UNITS.of(ctx).append((callee, models))  # `self.actor(state)` in a method of the trainer
                    if not any(q.endswith("Loss") for m in models if isinstance(m, cst.Call)
                               for q in ctx.names.qualified_names_at(m.func)):
                        _CALLED.of(ctx).add(ctx.code(callee) if instance is None else  # `net.trunk`, not `self.trunk`
                                            f"{instance.value}.{callee.attr.value}")  # type: ignore[union-attr]
                elif isinstance(callee, cst.Attribute) and (own := _own_method(ctx, callee)) is not None:
                    # `self.evaluate(s)` in a method: a method of the same class, its `self` the same instance
                    out |= _through_helper(ctx, node, own, hops, 1, _instance_of_self(ctx, callee))
                    continue
                elif isinstance(callee, cst.Attribute):
                    q = ctx.names.qualified_names_at(callee)
                    if q:
                        if not any(n.startswith(_LIBRARY_ROOTS + effects.DATA_LIBRARIES) for n in q):
                            raise Unknown
                    elif name in _MODULE_PLUMBING and _may_be_module(ctx, callee.value):
                        raise Unknown  # `model.to(device)` as a value; `torch.ones(n, 1).to(device)` is a tensor
                    else:
                        stack.append(callee.value)  # a tensor method: `out.view(-1)`, `x.mean()`
                else:
                    stack.append(callee)
                if (name not in ("to", "cuda", "cpu", "type") or not isinstance(func, cst.Attribute)) \
                        and not ctx.names.qualified_names_at(func) & _NEW_TENSORS \
                        and not any(_LEGACY_TENSOR.match(q) for q in ctx.names.qualified_names_at(func)):
                    stack.extend(a.value for a in node.args)  # (a device, a dtype or a size carries no graph)
                continue
            if isinstance(node, cst.Name):
                if node.value in ("None", "True", "False"):
                    continue
                if ctx.names.qualified_names_at(node):
                    continue
                out |= _reached_name(ctx, node, hops, visited)
                continue
            if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Tuple, cst.List,
                                 cst.Comparison, cst.BooleanOperation, cst.IfExp)):
                for c in _direct_expressions(node):
                    stack.append(c)
                continue
            if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                continue
            raise Unknown
        except Unknown:
            if not _LENIENT.of(ctx):
                raise  # strict: anything unknown on the way makes the whole answer unknown
    return out


def _parameter_free_member(ctx: FileContext, callee: cst.Attribute) -> bool:
    """``self.<attr>`` set in the constructor, on every path, to modules without parameters (``nn.BCELoss()``
    or ``nn.BCELoss().cuda()`` under an ``if``): calling it computes from its arguments only."""
    found = effects.self_attr(ctx, callee)
    if found is None:
        return False
    try:
        values = effects.self_values(ctx, found[0], found[1])
    except Unknown:
        return False
    return bool(values) and all(effects.parameter_free(ctx, v) for v in values)


def _off_graph(ctx: FileContext, call: cst.Call) -> bool:
    """A call of numpy (``np.vstack([...])``) or ``torch.from_numpy``: its value is computed off the
    autograd graph, whatever its arguments are."""
    q = ctx.names.qualified_names_at(call.func)
    return bool(q) and all(n.startswith("numpy.") or n == "torch.from_numpy" for n in q)


def _passed(ctx: FileContext, name: cst.Name, hops: int = 0) -> Optional[cst.Name]:
    """For a parameter of a function of the file (not a method) read where it is not rebound
    (``encoder`` in ``def train(x, encoder, ...)``): the name every call of the function in the file
    passes for it, when all of them (one to four, the function used for nothing else, none from
    another file) pass the same variable (``train(x, encoder, ...)`` at module level), through a caller
    that hands on its own parameter too (``train_iters(encoder, ...)`` calling ``train(x, encoder, ...)``,
    two levels); for a name unpacked from such a parameter (``optim_g, optim_d = optims``), the name
    every call puts at its place in the list or tuple it passes (``train([net_g, net_d], [optim_g,
    optim_d])``); None otherwise."""
    function = _function_of(ctx, name)
    if not isinstance(function, cst.FunctionDef) or function.decorators \
            or isinstance(ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
        return None
    index: Optional[Tuple[int, int]] = None
    param = name.value
    if not _plain_param(function, param) or _rebinds(function, param, ctx):
        unpacked = _unpacked_parameter(ctx, name, function)
        if unpacked is None:
            return None
        param, index = unpacked
    at_site = _SITE.of(ctx).get(function)
    if at_site is not None:  # the one call being asked about
        value = _element_at(at_site.get(param), index)
        return value if isinstance(value, cst.Name) else None
    sites = _only_called(ctx, function)
    if sites is None:
        return None
    found: Optional[cst.Name] = None
    for site in sites:
        bound = bind_arguments(site, function, 0)
        value = _element_at(bound.get(param), index) if bound is not None else None
        caller = _function_of(ctx, site)
        if isinstance(value, cst.Name) and isinstance(caller, cst.FunctionDef) and _is_param(caller, value.value):
            value = _passed(ctx, value, hops + 1) if hops < 1 else None  # a parameter handed on: followed once
        if not isinstance(value, cst.Name) or found is not None and (
                value.value != found.value
                or ctx.names.binding_at(value, value.value) is not ctx.names.binding_at(found, found.value)):
            return None
        found = value
    return found


def _plain_param(function: cst.FunctionDef, name: str) -> bool:
    return any(p.name.value == name and p.star == "" for p in
               list(function.params.posonly_params) + list(function.params.params))


def _unpacked_parameter(ctx: FileContext, name: cst.Name, function: cst.FunctionDef
                        ) -> Optional[Tuple[str, Tuple[int, int]]]:
    """For ``name`` bound, on every path to where it is read, by unpacking a parameter of ``function``
    that is never rebound (``optim_g, optim_d = optims``): the parameter and (the name's position, the
    number of targets); None otherwise (a starred target, another value)."""
    found = ctx.names.reaching_assignment(name.value, name, function)
    if found is None or found[1] is None:
        return None
    assign, position = found
    value = assign.value
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    if not isinstance(value, cst.Name) or not isinstance(target, (cst.Tuple, cst.List)) \
            or any(isinstance(e, cst.StarredElement) for e in target.elements) \
            or not _plain_param(function, value.value) or _rebinds(function, value.value, ctx):
        return None
    return value.value, (position, len(target.elements))


def _element_at(value: Optional[cst.BaseExpression], index: Optional[Tuple[int, int]]) -> Optional[cst.BaseExpression]:
    """``value`` itself (no index), or its element at the position of a list or tuple display of the
    expected length (``[net_g, net_d]``); None for anything else."""
    if index is None or value is None:
        return value
    position, count = index
    if not isinstance(value, (cst.List, cst.Tuple)) or len(value.elements) != count \
            or any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return value.elements[position].value


def _only_called(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[cst.Call]]:
    """The calls of a function of the file when there are one to four, none inside the function itself,
    and its name is used for nothing else (not handed on as a value, not called under another name)."""
    sites = call_sites(ctx, function)
    if not sites or len(sites) > 4 or any(ctx.is_inside(site, function) for site in sites):
        return None
    uses = [n for n in ctx.names_in(ctx.module, function.name.value) if n is not function.name]
    if len(uses) != len(sites) or any(not (isinstance(ctx.parent(n), cst.Call) and ctx.parent(n) in sites)
                                      for n in uses):
        return None
    return sites


def _sites_passing(ctx: FileContext, opt: cst.Name
                   ) -> Optional[Tuple[cst.FunctionDef, List[Tuple[cst.Call, Dict[str, cst.BaseExpression]]]]]:
    """For an optimizer that is a parameter of a function of the file (not a method) which the calls
    (one to four, the function used for nothing else) pass different variables for: the function, and
    each call with the argument it binds to each parameter (each call is asked about on its own).  None
    when one variable is passed by every call (:func:`_passed` answers) or the calls are not all known."""
    function = _function_of(ctx, opt)
    if not isinstance(function, cst.FunctionDef) or function in _SITE.of(ctx) or _passed(ctx, opt) is not None \
            or function.decorators or isinstance(ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef) \
            or not _is_param(function, opt.value) or _rebinds(function, opt.value, ctx):
        return None
    sites = _only_called(ctx, function)
    if sites is None or len(sites) < 2:
        return None
    out = []
    for site in sites:
        bound = bind_arguments(site, function, 0)
        if bound is None or not isinstance(bound.get(opt.value), cst.Name):
            return None
        caller = _function_of(ctx, site)
        if isinstance(caller, cst.FunctionDef) and any(isinstance(v, cst.Name) and _is_param(caller, v.value)
                                                       for v in bound.values()):
            return None  # a parameter handed on: one level is followed
        out.append((site, bound))
    return function, out


def _site_label(ctx: FileContext, name: cst.Name) -> Optional[str]:
    """For a parameter of the function whose call is being asked about (:data:`_SITE`): the variable that
    call passes (``worker`` for ``net`` in ``td_update(worker, ...)``)."""
    function = _function_of(ctx, name)
    at_site = _SITE.of(ctx).get(function) if isinstance(function, cst.FunctionDef) else None  # type: ignore[call-overload]
    value = at_site.get(name.value) if at_site is not None else None
    return value.value if isinstance(value, cst.Name) else None


def _short_code(ctx: FileContext, node: cst.CSTNode) -> str:
    code = " ".join(ctx.code(node).split())
    return code if len(code) <= 60 else code[:57] + "..."


def _plain_class_of(ctx: FileContext, name: cst.Name) -> bool:
    """Whether ``name`` is a class of the project that is provably no ``nn.Module`` (a config object)."""
    found = definition_of(ctx, name)
    return found is not None and isinstance(found[1], cst.ClassDef) and plain_class(found[0], found[1])


def _library_alias(ctx: FileContext, name: cst.Name) -> bool:
    """A name every binding of which is a library tensor type or function
    (``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``), or a lambda returning the result
    of one (moved to a device or cast): calling it builds a tensor."""
    b = ctx.names.binding_at(name, name.value)
    if b is None or b.imports or b.changed or not b.values:
        return False

    def library(expr: Optional[cst.BaseExpression], called: bool = False) -> bool:
        if isinstance(expr, cst.IfExp):
            return library(expr.body, called) and library(expr.orelse, called)
        if isinstance(expr, cst.Lambda) and not called:  # `lambda *a, **k: autograd.Variable(*a, **k).cuda()`
            return library(expr.body, True)
        if called:
            while isinstance(expr, cst.Call) and method_name(expr) in ("cuda", "cpu", "to", "float", "double") \
                    and isinstance(expr.func, cst.Attribute):
                expr = expr.func.value
            return isinstance(expr, cst.Call) and library(expr.func)
        return isinstance(expr, (cst.Name, cst.Attribute)) and any(
            q.startswith(("torch.", "numpy.")) and not is_module_value(ctx, cst.Call(func=expr))
            and not q.startswith("torch.nn.") for q in ctx.names.qualified_names_at(expr))

    return all(library(v) for v in b.values)


def _may_be_module(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Whether ``value`` (the receiver of ``.to()``, ``.cuda()``, ...) may be a model rather than a tensor:
    a name that may hold one, an attribute, or a call that builds one; a library call that builds data
    (``torch.ones(...)``) or a tensor method's result (``x.reshape(...)``) is not."""
    if isinstance(value, cst.Name):
        return not _loop_target(ctx, value) and _maybe_model(ctx, value)
    if isinstance(value, cst.Subscript):
        return _may_be_module(ctx, value.value)  # `batch[0].to(device)`: an element of the data
    if isinstance(value, cst.Call):
        if effects.data_value(ctx, value):
            return False
        core = strip_moves(value)
        if isinstance(core, cst.Call) and isinstance(core.func, cst.Attribute) and core.func.attr.value in _TENSOR_METHODS:
            return False
        return is_module_value(ctx, core) or not isinstance(core, cst.Call) or not isinstance(core.func, cst.Attribute)
    return True


def _instance_member(ctx: FileContext, callee: cst.Attribute):
    """For ``obj.<attr>`` with ``obj`` a name holding an instance of a class of this file: the method of
    that class it names (undecorated, not ``forward``), or the module construction its constructor sets
    the attribute to; None otherwise."""
    if not isinstance(callee.value, cst.Name) or callee.value.value == "self":
        return None
    obj = _passed(ctx, callee.value) or callee.value  # a parameter: what the calls pass
    try:
        cls = effects.held_instance_class(ctx, obj)
    except Unknown:
        return None
    for stmt in class_body(cls):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == callee.attr.value:
            if stmt.decorators or stmt.name.value.startswith("__"):
                return None
            return stmt
    try:
        return effects.member_module(ctx, callee if obj is callee.value else cst.Attribute(value=obj, attr=callee.attr))
    except Unknown:
        return None


def _instance_module(ctx: FileContext, obj: cst.Name) -> Optional[cst.Call]:
    """For ``obj`` in ``obj.<attr>`` holding an instance of a module class of this file (``model =
    ActorCritic()``): that construction, whose ``parameters()`` hold every module it sets; None when
    it is no module (a plain trainer object) or not known."""
    try:
        core = effects.held_module(ctx, _passed(ctx, obj) or obj)
    except Unknown:
        return None
    return core if is_module_value(ctx, core) else None


def _held_by_object(ctx: FileContext, callee: cst.BaseExpression) -> bool:
    """``self.D`` in a method (an attribute of the instance, not a method of its class), or ``nets["D"]``
    with ``nets`` a dict literal."""
    if isinstance(callee, cst.Subscript):
        return effects.literal_key(callee) is not None
    found = effects.self_attr(ctx, callee)
    return found is not None and not any(isinstance(s, cst.FunctionDef) and s.name.value == found[1]
                                         for s in class_body(found[0]))


def _own_method(ctx: FileContext, callee: cst.Attribute) -> Optional[cst.FunctionDef]:
    """For ``self.<name>`` in a method: the method ``<name>`` of the same class (undecorated, neither a
    special method nor ``forward``), when no class may override it (none of the project derives from the
    class); None otherwise."""
    found = effects.self_attr(ctx, callee)
    if found is None:
        return None
    cls, name = found
    if name.startswith("__") or name == "forward":
        return None
    methods = [s for s in class_body(cls) if isinstance(s, cst.FunctionDef) and s.name.value == name]
    if len(methods) != 1 or methods[0].decorators or may_be_subclassed(ctx, cls):
        return None
    return methods[0]


def _helper_of(ctx: FileContext, call: cst.Call) -> Optional[cst.FunctionDef]:
    """The module-level function of this file that ``call`` runs (``compute_loss(x, y)``), undecorated."""
    if not isinstance(call.func, cst.Name):
        return None
    function = ctx.function_for_call(call) or _nested_function(ctx, call.func)
    if function is None or function.decorators or isinstance(ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)),
                                                             cst.ClassDef):
        return None
    return function  # a function of the module, or one nested in a function (`get_noise()` inside `main`)


def _nested_function(ctx: FileContext, name: cst.Name) -> Optional[cst.FunctionDef]:
    """The one function defined in the function around ``name`` under that name, when the name is bound
    nothing else there (``def get_noise(): ...`` inside ``main``)."""
    b = ctx.names.binding_at(name, name.value)
    outer = ctx.enclosing(name, cst.FunctionDef)
    while outer is not None and b is not None and len(b.values) == 1:
        found = [n for n in iter_nodes(outer.body) if type(n) is cst.FunctionDef and n.name.value == name.value
                 and ctx.enclosing(n, (cst.FunctionDef, cst.ClassDef)) is outer]
        if found:
            return found[0] if len(found) == 1 and ctx.names.binding_at(found[0].name, name.value) is b else None
        outer = ctx.enclosing(outer, cst.FunctionDef)
    return None


def _through_helper(ctx: FileContext, call: cst.Call, function: cst.FunctionDef, hops: int,
                    offset: int = 0, instance: Optional[cst.Name] = None) -> Set[cst.Call]:
    """What the value ``call`` returns reaches: each ``return`` of the helper, its parameters read as the
    call's arguments (or their defaults); ``offset`` 1 for a method called on an instance (its ``self``
    reads the instance's attributes)."""
    if hops > _MAX_HOPS or isinstance(function.params.star_arg, cst.Param) or function.params.star_kwarg is not None:
        raise Unknown
    bound = bind_arguments(call, function, offset)
    if bound is None:
        raise Unknown
    args = {}
    params = list(function.params.posonly_params) + list(function.params.params) + list(function.params.kwonly_params)
    for p in params[offset:]:
        name = p.name.value
        if name in bound:
            args[name] = bound[name]
        elif p.default is not None:
            args[name] = p.default
        else:
            raise Unknown
    returns = []
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.Yield, cst.Await)):
            raise Unknown
        if isinstance(node, cst.Return) and _function_of(ctx, node) is function:
            if node.value is None:
                raise Unknown
            returns.append(node)
    if not returns:
        raise Unknown
    if instance is not None:
        args[_INSTANCE] = instance
    stack = _BOUND.of(ctx)
    stack.append((function, args))
    try:
        out: Set[cst.Call] = set()
        for r in returns:
            if not under_no_grad(ctx, r):
                out |= _reached(ctx, r.value, hops + 1, set())  # type: ignore[arg-type]
        return out
    finally:
        stack.pop()


#: the key of a followed method's bound arguments that holds the instance it is called on
_INSTANCE = "<instance>"


def _instance_of_self(ctx: FileContext, callee: cst.BaseExpression) -> Optional[cst.Name]:
    """For ``self.<attr>`` in a method being followed from ``obj.method(...)``: the name ``obj``."""
    if not isinstance(callee, cst.Attribute) or not isinstance(callee.value, cst.Name):
        return None
    function = _function_of(ctx, callee)
    for helper, args in reversed(_BOUND.of(ctx)):
        if helper is function:
            found = args.get(_INSTANCE)
            params = list(function.params.posonly_params) + list(function.params.params)  # type: ignore[union-attr]
            if found is not None and params and params[0].name.value == callee.value.value:
                return found
            return None
    return None


def _argument_of(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """For a parameter of a helper being followed, read where it is not rebound: the call's argument."""
    function = _function_of(ctx, name)
    for helper, args in reversed(_BOUND.of(ctx)):
        if helper is function:
            if name.value in args and ctx.names.reaching_assignment(name.value, name, function) is None:
                return args[name.value]
            return None
    return None


def _outer_name(ctx: FileContext, name: cst.Name) -> cst.Name:
    """The name a parameter of the helpers being followed is given by their callers, through the calls
    being followed (``decoder`` in ``batch_loss(encoder, decoder, x, y)``); ``name`` itself otherwise."""
    for _ in range(_MAX_HOPS):
        argument = _argument_of(ctx, name)
        core = effects.same_module(ctx, argument) if argument is not None else None
        if not isinstance(core, cst.Name):
            break
        name = core
    return name


def _direct_expressions(node: cst.CSTNode) -> List[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Subscript):
        out = [node.value]
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                out.append(el.slice.value)
        return out
    if isinstance(node, (cst.Tuple, cst.List)):
        return [el.value for el in node.elements]
    if isinstance(node, cst.Comparison):
        return [node.left] + [c.comparator for c in node.comparisons]
    if isinstance(node, cst.BooleanOperation):
        return [node.left, node.right]
    if isinstance(node, cst.IfExp):
        return [node.test, node.body, node.orelse]
    return []


def _reached_name(ctx: FileContext, name: cst.Name, hops: int, visited: Set[int]) -> Set[cst.Call]:
    """What a local name's value reaches (:func:`_bound_reach`), with what is written into it by item
    (``outputs[t] = decoder_out`` in a loop: an in-place write is on the graph)."""
    out = _bound_reach(ctx, name, hops, visited)
    function = _function_of(ctx, name)
    b = ctx.names.binding_at(name, name.value)
    for use in ctx.names_in(function, name.value):
        parent = ctx.parent(use)
        holder = ctx.parent(parent) if isinstance(parent, cst.Subscript) and parent.value is use else None
        assign = ctx.parent(holder) if isinstance(holder, cst.AssignTarget) and holder.target is parent else None
        if isinstance(assign, cst.Assign) and _function_of(ctx, assign) is function \
                and ctx.names.binding_at(use, name.value) is b:
            out |= _reached(ctx, assign.value, hops + 1, visited)
    return out


def _bound_reach(ctx: FileContext, name: cst.Name, hops: int, visited: Set[int]) -> Set[cst.Call]:
    """What a local name's value reaches: the assignment that reaches it (and the in-place additions to
    it); a loop variable over data reaches nothing; a parameter is unknown."""
    b = ctx.names.binding_at(name, name.value)
    if b is None:
        raise Unknown
    element = _zipped_value(ctx, name)
    if element is not None:
        return _reached(ctx, element, hops + 1, visited)
    value = ctx.names.value_of(name)
    if value is None:
        argument = _argument_of(ctx, name)
        if argument is not None:
            return _reached(ctx, argument, hops + 1, visited)
        if _loop_target(ctx, name):
            return set()
        source = effects.unpacked(ctx, name)  # `h, w = int(a), int(b)`; `out, mu = model(x)`
        if source is not None:
            core = strip_moves(source[0])
            if isinstance(core, cst.Call) and is_module_value(ctx, core):
                raise Unknown  # the name is a model, not a value it computed
            return _reached(ctx, source[0], hops + 1, visited)
        accumulated = _accumulated(ctx, name)  # `loss = 0` then `loss += criterion(...)` in loops and branches
        if accumulated is not None:
            out: Set[cst.Call] = set()
            for v in accumulated:
                out |= _reached(ctx, v, hops + 1, visited)
            return out
        return _from_callers(ctx, name, hops, visited)
    local = _function_of(ctx, name)
    try:
        if local is not ctx.module and name.value not in ctx.names.scope_at(name).bindings:
            value = _value_of(ctx, name)  # a module-level name read in a function: bound once there
        else:
            found = ctx.names.reaching_assignment(name.value, name, None if local is ctx.module else local)
            source = effects.unpacked(ctx, name) if found is not None and found[1] is not None else None
            if source is not None:
                value = source[0]  # `x, y = Variable(x), Variable(y)` after `y = ...`
            elif found is None or found[0].value is not value or found[1] is not None:
                raise Unknown
    except Unknown:
        try:
            return _reached_by_all(ctx, b, hops, visited)  # `device` set in both branches of an `if`
        except Unknown:
            accumulated = _accumulated(ctx, name)  # rebound by a loop's unpacked model call too
            if accumulated is None:
                raise
            out: Set[cst.Call] = set()
            for v in accumulated:
                out |= _reached(ctx, v, hops + 1, visited)
            return out
    if under_no_grad(ctx, value) and not under_no_grad(ctx, name):
        return set()
    core = strip_moves(value)
    if isinstance(core, cst.Call) and is_module_value(ctx, core):
        raise Unknown  # the name is a model, not a value it computed
    out = _reached(ctx, value, hops + 1, visited)
    if isinstance(value, (cst.List, cst.Tuple)):
        for v in appended_values(ctx, name):  # `log_probs = []`, `log_probs.append(m.log_prob(a))` in a loop
            out |= _reached(ctx, v, hops + 1, visited)
    return out


def _accumulated(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """For a local name of a function bound only by plain assignments, augmented ones and flat tuple
    unpackings (``loss = 0``, ``loss += criterion(out, y)`` in a loop or a branch; ``out, ctx_, h =
    decoder(inp, ctx_, h)`` in a loop): every value bound or added (the whole value unpacked), read
    regardless of the path, when none binds a model; None otherwise (a loop target, a parameter,
    ``global``)."""
    function = _function_of(ctx, name)
    if not isinstance(function, cst.FunctionDef) or _is_param(function, name.value):
        return None
    values: List[cst.BaseExpression] = []
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            return None
        target: Optional[cst.CSTNode] = None
        if isinstance(node, cst.AssignTarget):
            target = node.target
            assign = ctx.parent(node)
            if isinstance(target, cst.Name) and target.value == name.value:
                if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or _function_of(ctx, assign) is not function:
                    return None
                if ctx.may_run_before(assign, name):
                    values.append(assign.value)
                continue
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(assign, cst.Assign) \
                    and any(isinstance(e.value, cst.Name) and e.value.value == name.value for e in target.elements):
                if len(assign.targets) != 1 or _function_of(ctx, assign) is not function \
                        or not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
                    return None
                if ctx.may_run_before(assign, name):
                    values.append(assign.value)  # `out, h = decoder(x, h)`: what the whole value reaches
                continue
        elif isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Name) and target.value == name.value:
                if _function_of(ctx, node) is not function or not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
                    return None
                if ctx.may_run_before(node, name):
                    values.append(node.value)
                continue
        elif isinstance(node, (cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor)):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name.value:
            return None
        if target is not None and any(isinstance(n, cst.Name) and n.value == name.value for n in iter_nodes(target)):
            return None
    if not values or any(isinstance(strip_moves(v), cst.Call) and is_module_value(ctx, strip_moves(v))
                         for v in values):
        return None
    return values


def _reached_by_all(ctx: FileContext, b, hops: int, visited: Set[int]) -> Set[cst.Call]:
    """What a name bound on several paths reaches: the union of what each of its values reaches, when
    every value is known and none is a model."""
    if b.changed or not b.values or len(b.values) > 4:
        raise Unknown
    out: Set[cst.Call] = set()
    for value in b.values:
        if value is None:
            raise Unknown
        core = strip_moves(value)
        if isinstance(core, cst.Call) and is_module_value(ctx, core):
            raise Unknown
        out |= _reached(ctx, value, hops + 1, visited)
    return out


def _from_callers(ctx: FileContext, name: cst.Name, hops: int, visited: Set[int]) -> Set[cst.Call]:
    """A parameter of a function or method of the file read where it is not rebound: what the arguments
    of its calls in the file reach (``self.step(real)`` in ``for real in loader:``); unknown without a
    call, or with a call whose arguments cannot be bound."""
    function = _function_of(ctx, name)
    if not isinstance(function, cst.FunctionDef) or function.decorators \
            or ctx.names.reaching_assignment(name.value, name, function) is not None \
            or not any(p.name.value == name.value and p.star == "" for p in
                       list(function.params.posonly_params) + list(function.params.params)
                       + list(function.params.kwonly_params)):
        raise Unknown
    if _engine_step(ctx, function):
        return set()  # `Engine(step)`: ignite calls it with the engine and a batch of data
    method = not isinstance(ctx.parent(function), cst.Module)
    sites = call_sites(ctx, function) + (_instance_sites(ctx, function) if method else [])
    if not sites or len(sites) > 8:
        raise Unknown
    if method and any(method_name(c) == function.name.value and c not in sites for c in ctx.calls_in(ctx.module)):
        raise Unknown  # `trainer.d_step(G(z))`: called on an instance too, with arguments not followed
    out: Set[cst.Call] = set()
    for site in sites:
        bound = bind_arguments(site, function, 1 if method and isinstance(site.func, cst.Attribute) else 0)
        if bound is None:
            raise Unknown
        value = bound.get(name.value)
        if value is None:
            raise Unknown  # its default: not followed
        out |= _reached(ctx, value, hops + 1, visited)
    return out


def _instance_sites(ctx: FileContext, method: cst.FunctionDef) -> List[cst.Call]:
    """The calls ``obj.<method>(...)`` of the file with ``obj`` a name holding an instance of the very
    class that defines ``method`` (``algo = Algo(4, 3)``, then ``algo.update(x, y)``)."""
    cls = ctx.parent(ctx.parent(method)) if isinstance(ctx.parent(method), cst.IndentedBlock) else None
    if not isinstance(cls, cst.ClassDef):
        return []
    out = []
    for call in ctx.calls_in(ctx.module):
        func = call.func
        if method_name(call) != method.name.value or not isinstance(func, cst.Attribute) \
                or not isinstance(func.value, cst.Name) or func.value.value in ("self", "cls"):
            continue
        try:
            if effects.held_instance_class(ctx, func.value) is cls:
                out.append(call)
        except Unknown:
            continue
    return out


#: library constructions that call the function they are given with ``(engine, batch)``
_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})


def _engine_step(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether ``function`` (of two parameters) is handed to ignite's ``Engine`` and called nowhere
    else: its parameters are the engine and a batch of data."""
    params = list(function.params.posonly_params) + list(function.params.params)
    if len(params) != 2 or function.params.kwonly_params:
        return False
    handed = False
    for node in ctx.names_in(ctx.module, function.name.value):
        if ctx.names.binding_at(node, node.value) is not ctx.names.binding_at(function.name, function.name.value):
            continue
        parent = ctx.parent(node)
        if node is function.name:
            continue
        call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(call, cst.Call) and call.args and call.args[0] is parent \
                and ctx.names.qualified_names_at(call.func) & _ENGINES:
            handed = True
            continue
        return False
    return handed


def _loop_target(ctx: FileContext, name: cst.Name) -> bool:
    """``real`` in ``for real in batches:`` where the loop's iterable is a plain name or a call of
    ``enumerate``/``zip``/``range`` (data, not a model's output)."""
    function = _function_of(ctx, name)
    for stmt in ctx.nodes(function):
        if isinstance(stmt, cst.For) and any(isinstance(t, cst.Name) and t.value == name.value
                                             for t in iter_nodes(stmt.target)):
            it = stmt.iter
            while isinstance(it, cst.Call) and it.args and any(
                    q.startswith("tqdm.") for q in ctx.names.qualified_names_at(it.func)):
                it = it.args[0].value  # `tqdm(enumerate(loader))`: a progress bar over the same items
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in ("enumerate", "zip", "range"):
                return True
            return isinstance(it, (cst.Name, cst.Attribute, cst.List, cst.Tuple))
    return False


# -- a model the loss runs through that no optimizer holds ------------------------------------------
#: ``torch.nn`` layers that hold parameters requiring grad as built
_WEIGHTED_LAYER = re.compile(r"(Linear|Bilinear|Conv[123]d|ConvTranspose[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN|"
                             r"LSTMCell|GRUCell|RNNCell|MultiheadAttention|Transformer\w*|PReLU)$")
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList"})
_PLAIN_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: methods of a model whose call neither freezes, fills nor trains it
_HARMLESS = frozenset({"to", "cuda", "cpu", "train", "eval", "forward", "zero_grad", "float", "half", "double",
                       "bfloat16", "__call__", "state_dict"})
#: effects of a module method that leave its parameters trainable
_NOT_FREEZING = frozenset({effects.MOVES, effects.CASTS, effects.MODE, effects.INITIALISES, effects.SHARES,
                           effects.UNFREEZES})
#: words in a model class that may stop its parameters from getting or keeping a gradient
_FREEZING_WORDS = ("requires_grad", "no_grad", "inference_mode", "detach", "eval", "set_grad_enabled", ".data")


@dataclass(frozen=True)
class UntrainedModel:
    """``backward``: a backward call; ``models``: the names of the models its loss runs through that no
    optimizer holds; ``optimizers``: the optimizers stepped after it."""

    backward: cst.Call
    models: Tuple[str, ...]
    optimizers: Tuple[str, ...]


def untrained_models(ctx: FileContext, reported: Set[cst.Call] = frozenset()) -> List[UntrainedModel]:  # type: ignore[assignment]
    """Every backward call of the file whose loss runs through a model with parameters that no optimizer
    of the file holds, that is not frozen, and whose gradients some optimizer step after the backward
    then leaves unused.  ``reported``: backward calls already reported by :func:`stray_steps`.  Ask after
    the walk."""
    calls = ctx.calls_in(ctx.module)
    try:
        held_anywhere = _all_held(ctx, calls)
    except Unknown:
        return []
    steps: List[Tuple[cst.Call, cst.BaseExpression]] = []
    for call in calls:
        if method_name(call) != "step":
            continue
        opt = optimizer_of_step(ctx, call)
        if isinstance(opt, cst.Name) or effects.self_attr(ctx, opt) is not None:  # type: ignore[arg-type]
            try:
                _held_models(ctx, opt)
            except Unknown:
                return []  # an optimizer not built from `torch.optim` here: what it holds is unknown
            steps.append((call, opt))
        elif not any(".lr_scheduler." in q for q in ctx.names.instance_of(receiver(call))) \
                and not _holds_no_parameters(ctx, receiver(call)) and not _project_method(ctx, call):
            return []  # a step of something unknown: another optimizer may hold the model
    out: List[UntrainedModel] = []
    for backward in calls:
        if backward in reported or not is_backward(ctx, backward):
            continue
        after = [opt for step, opt in steps if backward in _backwards_before(ctx, step)]
        if not after:
            continue
        operand = backward_operand(ctx, backward)
        if operand is None:
            continue
        _UNITS.of(ctx).clear()
        _LENIENT.of(ctx).append(True)  # the models the loss surely runs through, whatever else it reaches
        try:
            _reached(ctx, operand, 0, set())
        except Unknown:
            continue
        finally:
            _LENIENT.of(ctx).clear()
        names: Set[str] = set()
        for callee, models in _UNITS.of(ctx):
            if models & held_anywhere or ctx.code(callee) in names:
                continue
            if effects.self_attr(ctx, callee) is not None:  # `self.actor`: a module the trainer holds
                # (built once, or on each path of an `if` that picks its size: every construction has weights)
                if models and all(isinstance(m, cst.Call) and _has_weights(ctx, m, 0) for m in models) \
                        and not _self_member_may_be_frozen(ctx, callee):  # type: ignore[arg-type]
                    names.add(ctx.code(callee))
                continue
            if isinstance(callee, cst.Attribute):  # `model.generator`: a module an instance holds
                if isinstance(callee.value, cst.Name) and _instance_module(ctx, callee.value) in held_anywhere:
                    continue  # its parameters are the instance's, which an optimizer holds
                if len(models) == 1 and _has_weights(ctx, next(iter(models)), 0) \
                        and not _member_may_be_frozen(ctx, callee.value, callee.attr.value):  # type: ignore[arg-type]
                    names.add(ctx.code(callee))
                continue
            try:
                cores = _cores_of(ctx, callee)
            except Unknown:
                continue
            if all(isinstance(core, cst.Call) and _has_weights(ctx, core, 0, callee) for core in cores) \
                    and not _may_be_frozen(ctx, callee.value, callee):
                names.add(callee.value)
        if names:
            out.append(UntrainedModel(backward, tuple(sorted(names)), tuple(sorted({ctx.code(o) for o in after}))))
    return out


def _holds_no_parameters(ctx: FileContext, obj: Optional[cst.BaseExpression]) -> bool:
    """Whether the object whose ``step()`` is called (``env.step(action)``) cannot hold a model's
    parameters: a name (or ``self.<attr>`` set once by the constructor) bound only to what a library
    function that is not torch's builds from arguments none of which may be a model or its parameters
    (``env = gym.make("Pendulum-v1")``)."""
    if isinstance(obj, cst.Name):
        b = ctx.names.binding_at(obj, obj.value)
        if b is None or b.imports or b.changed or not b.values:
            return False
        values = list(b.values)
    elif isinstance(obj, cst.Attribute) and effects.self_attr(ctx, obj) is not None:
        values = _self_assigned(ctx, obj)
        if values is None:
            return False
    else:
        return False
    for value in values:
        if same_reference(value, obj):
            continue  # `self.env = Wrapper(self.env, ...)`: what it held, wrapped
        if isinstance(value, cst.Name) and value is not obj:  # `Agent(env)` with `env = gym.make(...)`
            value = ctx.names.value_of(value)
            if value is not None and same_reference(value, obj):
                continue  # `tmp_env = self.env` ... `self.env = tmp_env`: what it held, put back
        if not isinstance(value, cst.Call):
            return False
        found = definition_of(ctx, value.func)
        if found is not None:
            if not _wraps_library_class(*found):  # type: ignore[arg-type]
                return False
        else:
            q = ctx.names.qualified_names_at(value.func)
            if not q or any(n.startswith("torch") for n in q):
                return False
        for a in value.args:
            if same_reference(a.value, obj):
                continue
            for n in iter_nodes(a.value):
                if isinstance(n, cst.Attribute) and n.attr.value in ("parameters", "named_parameters", "param_groups"):
                    return False
                if isinstance(n, cst.Name) and not (isinstance(ctx.parent(n), cst.Attribute) and ctx.parent(n).attr is n) \
                        and not ctx.names.qualified_names_at(n) and n.value not in ("None", "True", "False") \
                        and _maybe_model(ctx, n):
                    return False
    return True


def _project_method(ctx: FileContext, call: cst.Call) -> bool:
    """``self.step(action)`` of a method the class defines (or ``agent.step(a)`` of an instance of a class
    of the file): the code it runs is the project's, and each step in it is judged where it is."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if isinstance(func.value, cst.Name) and func.value.value == "self":
        found = effects.self_attr(ctx, func)
        return found is not None and any(isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value
                                         for s in class_body(found[0]))
    return isinstance(_instance_member(ctx, func), cst.FunctionDef)


def _self_assigned(ctx: FileContext, obj: cst.Attribute) -> Optional[List[cst.BaseExpression]]:
    """What ``self.<attr>`` is set to anywhere in its class, each plainly (``self.env = env`` in the
    constructor, ``self.env = Wrapper(self.env)`` in another method), the constructor's parameters read
    as the arguments every construction of the class passes; None when some value is not known so (an
    augmented or unpacked assignment, ``setattr``, a construction out of view)."""
    found = effects.self_attr(ctx, obj)
    if found is None:
        return None
    cls, attr = found
    out: List[cst.BaseExpression] = []
    for node in iter_nodes(cls):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr", "delattr"):
            return None
        if not (isinstance(node, cst.Attribute) and node.attr.value == attr and isinstance(node.value, cst.Name)
                and node.value.value == "self"):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.AugAssign) and parent.target is node:
            return None
        if not isinstance(parent, cst.AssignTarget):
            continue
        assign = ctx.parent(parent)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or parent.target is not node:
            return None
        value = assign.value
        passed = constructor_arguments(ctx, value) if isinstance(value, cst.Name) else None
        if passed is not None:  # `self.env = env` in `__init__`: what every construction passes
            if any(cctx is not ctx for cctx, _a in passed):
                return None
            out.extend(a for _c, a in passed)
            continue
        if isinstance(value, cst.Name) and ctx.names.is_param_at(value):
            return None  # a parameter no construction in view explains
        out.append(value)
    return out


def _wraps_library_class(ctx: FileContext, cls: cst.CSTNode) -> bool:
    """A class of the project that derives only from classes of a library other than torch and leaves
    their ``step`` as it is (``class NormalizedActions(gym.ActionWrapper)`` defining ``action``): its
    ``step`` is the library's, which steps no optimizer of this code."""
    if not isinstance(cls, cst.ClassDef) or not cls.bases:
        return False
    for base in cls.bases:
        q = ctx.names.qualified_names_at(base.value)
        if base.keyword is not None or not q or any(n.startswith("torch") or n.startswith("builtins") for n in q) \
                or definition_of(ctx, base.value) is not None:
            return False
    return not any(isinstance(s, cst.FunctionDef) and s.name.value == "step" for s in class_body(cls))


def _cores_of(ctx: FileContext, name: cst.Name, hops: int = 0) -> List[cst.BaseExpression]:
    """The construction the model ``name`` is, through names rebound to the same module (``D = D.to(device)``,
    under an ``if`` too); each of them where it is built more than once (:func:`effects.held_modules`)."""
    if hops > _MAX_HOPS:
        raise Unknown
    passed = _passed(ctx, name)
    if passed is not None:
        return _cores_of(ctx, passed, hops + 1)
    try:
        core = effects.same_module(ctx, _value_of(ctx, name))
    except Unknown:
        return list(effects.held_modules(ctx, name))
    if isinstance(core, cst.Name):
        return _cores_of(ctx, core, hops + 1)
    return [core]


def _all_held(ctx: FileContext, calls: List[cst.Call]) -> FrozenSet[cst.Call]:
    """The models every optimizer built in the file holds; unknown when one of them is not known."""
    out: FrozenSet[cst.Call] = frozenset()
    for call in calls:
        names = ctx.names.qualified_names_at(call.func)
        if not any(q.startswith("torch.optim.") and ".lr_scheduler" not in q and ".swa_utils" not in q
                   for q in names):
            continue
        params = arg(call, 0, "params")
        if params is None:
            raise Unknown
        out |= _parameter_owners(ctx, params.value, 0)
    return out


def _has_weights(ctx: FileContext, core: cst.Call, depth: int, read: Optional[cst.BaseExpression] = None) -> bool:
    """Whether the module construction ``core`` holds parameters that require grad as built: a weighted
    ``torch.nn`` layer, a ``Sequential``/``ModuleList`` of one (built empty and filled by ``add_module``
    before ``read``, the name that holds it, too), a factory every return of which builds one, or a
    project class built directly on ``nn.Module`` whose ``__init__`` builds one and that nothing in it
    freezes or detaches."""
    if depth > 3:
        return False
    grown = grown_content(ctx, read, core) if read is not None else []
    if grown:  # `model = nn.Sequential()`, then `model.add_module("fc", nn.Linear(n, 1))`
        return any(isinstance(strip_moves(g), cst.Call) and _has_weights(ctx, strip_moves(g), depth + 1)  # type: ignore[arg-type]
                   for g in grown)
    names = ctx.names.qualified_names_at(core.func)
    if names & _CONTAINERS:
        for a in core.args:
            value = a.value
            if isinstance(value, cst.Name) and a.star == "*":  # `nn.Sequential(*layers)`
                if any(isinstance(v, cst.Call) and _has_weights(ctx, strip_moves(v), depth + 1)
                       for v in _listed_layers(ctx, value)):
                    return True
                continue
            if isinstance(value, cst.Name):
                return False  # a model built elsewhere put in a container: its uses are not followed
            if isinstance(value, cst.Call) and _has_weights(ctx, strip_moves(value), depth + 1):
                return True
        return False
    for q in names:
        if q.startswith("torch.nn.") and q.count(".") == 2 and _WEIGHTED_LAYER.search(q):
            return not any(a.keyword is not None and a.keyword.value in ("_freeze", "_weight") for a in core.args)
    if any(q.startswith("torch.") for q in names):
        return False
    found = definition_of(ctx, core.func, depth)  # a class of this file, or of a project module it imports
    if found is not None and isinstance(found[1], cst.FunctionDef) and depth < 3:
        passed = returned_argument(ctx, core, found[1])  # `init_net(nn.Sequential(...))` hands its argument back
        if passed is not None:
            frees = any(isinstance(n, cst.Attribute) and n.attr.value in ("requires_grad", "requires_grad_")
                        for n in iter_nodes(found[1].body))  # (a helper that may freeze what it is given)
            moved = strip_moves(passed)
            return not frees and isinstance(moved, cst.Call) and _has_weights(ctx, moved, depth + 1)
        # a factory (`def make_net(n): return nn.Sequential(nn.Linear(n, 1))`): what every return builds
        returned = returned_values(found[0], found[1], None, depth + 1)
        reads = {id(v): r.value for r in function_returns(found[1]) if isinstance(r.value, cst.Name)
                 for v in built_values(found[0], r.value)}  # the name each built value is returned through
        return bool(returned) and all(
            isinstance(strip_moves(v), cst.Call)
            and _has_weights(vctx, strip_moves(v), depth + 1, reads.get(id(v)))  # type: ignore[arg-type]
            for vctx, v in returned)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return False
    octx, cls = found
    if not cls.bases or any(not (octx.names.qualified_names_at(b.value) & _PLAIN_BASES)
                            and not _plain_base(octx, b.value, depth) for b in cls.bases):
        return False
    if _may_freeze(octx, cls):
        return False
    for stmt in class_body(cls):
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            for a in octx.contents(stmt).assigns:
                if isinstance(a, cst.Assign) and any(isinstance(t.target, cst.Attribute) for t in a.targets):
                    value = strip_moves(a.value)
                    if isinstance(value, cst.Call) and (
                            octx.names.qualified_names_at(value.func) & {"torch.nn.Parameter"}
                            or _has_weights(octx, value, depth + 1)):
                        return True
    return False


def _listed_layers(ctx: FileContext, name: cst.Name) -> List[cst.BaseExpression]:
    """The elements of the list a local name of a function holds, when it is built only from list
    literals there (``layers = [nn.Conv2d(...), nn.ReLU()]``, ``layers += [...]``,
    ``layers.append(...)``, ``layers.extend([...])``); empty when anything else binds or changes it."""
    function = ctx.enclosing(name, cst.FunctionDef)
    if function is None:
        return []
    out: List[cst.BaseExpression] = []
    for use in ctx.names_in(function, name.value):
        if use is name:
            continue
        parent = ctx.parent(use)
        if isinstance(parent, cst.AssignTarget) and parent.target is use:
            value = ctx.parent(parent).value  # type: ignore[union-attr]
        elif isinstance(parent, cst.AugAssign) and parent.target is use and isinstance(parent.operator, cst.AddAssign):
            value = parent.value
        elif isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in ("append", "extend") \
                and isinstance(ctx.parent(parent), cst.Call) and len(ctx.parent(parent).args) == 1:  # type: ignore[union-attr]
            value = ctx.parent(parent).args[0].value  # type: ignore[union-attr]
            if parent.attr.value == "append":
                out.append(value)
                continue
        elif isinstance(parent, cst.Arg) and parent.value is use and parent.star == "*":
            continue  # handed to a container
        else:
            return []
        if not isinstance(value, cst.List) or any(not isinstance(e, cst.Element) for e in value.elements):
            return []
        out.extend(e.value for e in value.elements)
    return out


def _may_freeze(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether the code of ``cls`` spells a word that may stop its parameters from getting or keeping a
    gradient (:data:`_FREEZING_WORDS`); ``.data`` counts only where it is not written in place to
    initialise a weight (``m.weight.data.normal_(0.0, 0.02)``, ``m.bias.data.fill_(0)``)."""
    text = ctx.bare_code(cls)
    if any(w in text for w in _FREEZING_WORDS if w != ".data"):
        return True
    if ".data" not in text:
        return False
    for node in iter_nodes(cls):
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            up = ctx.parent(node)
            call = ctx.parent(up) if isinstance(up, cst.Attribute) and up.value is node else None
            if not (isinstance(call, cst.Call) and call.func is up and up.attr.value.endswith("_")  # type: ignore[union-attr]
                    and up.attr.value not in ("copy_", "requires_grad_")):  # type: ignore[union-attr]
                return True
    return False


def _plain_base(ctx: FileContext, base: cst.BaseExpression, depth: int) -> bool:
    """A base class of the project built on ``nn.Module`` (through such bases) that freezes nothing."""
    found = definition_of(ctx, base, depth)
    if depth > 3 or found is None or not isinstance(found[1], cst.ClassDef):
        return False
    octx, cls = found
    return bool(cls.bases) and not _may_freeze(octx, cls) and all(
        octx.names.qualified_names_at(b.value) & _PLAIN_BASES or _plain_base(octx, b.value, depth + 1)
        for b in cls.bases)


def _from_file(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``torch.load(path)`` (or an entry of it): a state read from a file, not another model's."""
    while isinstance(value, cst.Subscript):
        value = value.value
    return isinstance(value, cst.Call) and "torch.load" in ctx.names.qualified_names_at(value.func)


def _member_may_be_frozen(ctx: FileContext, obj: cst.Name, member: Optional[str] = None) -> bool:
    """Whether the module ``obj.<attr>`` (``obj`` holding an instance of a class of this file) may be
    frozen, filled or trained elsewhere: its class spells a freezing word, the instance is used for more
    than calling its methods and modules and being moved, or the member for more than being called,
    moved or having its parameters given to an optimizer."""
    try:
        cls = effects.held_instance_class(ctx, obj)  # type: ignore[arg-type]
    except Unknown:
        return True
    if any(w in ctx.bare_code(cls) for w in _FREEZING_WORDS):
        return True
    methods = {s.name.value for s in class_body(cls) if isinstance(s, cst.FunctionDef)}
    for node in ctx.names_in(ctx.module, obj.value):  # type: ignore[attr-defined]
        if ctx.enclosing(node, cst.ClassDef) is cls:
            continue  # read in its own class: checked by its text
        parent = ctx.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node or _read_only(ctx, node):
            continue
        if isinstance(parent, cst.Attribute) and parent.value is node and _read_only(ctx, parent):
            continue  # `summary(model.generator, ...)`: the member summarised, saved or clipped
        if isinstance(parent, cst.Attribute) and parent.value is node and member is not None \
                and _other_member(ctx, parent, member):
            continue  # `for p in model.discriminator.parameters(): ...`: another module than `member`
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            assign = ctx.parent(parent)
            if isinstance(assign, cst.Assign) and effects.same_module(ctx, assign.value) is not assign.value:
                continue  # `model = model.to(device)`
            if isinstance(assign, cst.Assign) and assign.value is not None and definition_of(ctx, getattr(
                    assign.value, "func", assign.value)) is not None and isinstance(assign.value, cst.Call):
                continue  # `model = GAN()`
            return True
        if not isinstance(parent, cst.Attribute) or parent.value is not node:
            if isinstance(parent, cst.Arg):
                call = ctx.parent(parent)
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "print":
                    continue
            return True
        outer = ctx.parent(parent)
        attr = parent.attr.value
        if isinstance(outer, cst.Call) and outer.func is parent and (
                attr in _HARMLESS or attr in methods or effects.method_effect(ctx, outer) in _NOT_FREEZING):
            continue
        if attr in methods:
            return True
        if isinstance(outer, cst.Call) and outer.func is parent and _held_member(ctx, parent):
            continue  # `model.discriminator(x)` (not `model.parameters()`)
        if isinstance(outer, cst.Attribute) and outer.value is parent:
            call = ctx.parent(outer)
            if isinstance(call, cst.Call) and call.func is outer and (outer.attr.value in _HARMLESS or (
                    outer.attr.value in ("parameters", "named_parameters") and _in_optimizer(ctx, call))):
                continue
        return True
    return False


def _held_member(ctx: FileContext, expr: cst.Attribute) -> bool:
    try:
        effects.member_module(ctx, expr)
    except Unknown:
        return False
    return True


def _other_member(ctx: FileContext, expr: cst.Attribute, member: str) -> bool:
    """Whether ``obj.<attr>`` is a module the instance holds other than ``obj.<member>``: built by its
    class's constructor from a construction that does not read ``member`` (what is done to it does not
    reach ``member``'s parameters)."""
    if expr.attr.value == member:
        return False
    try:
        built = effects.member_module(ctx, expr)
    except Unknown:
        return False
    return not any(isinstance(n, (cst.Name, cst.Attribute)) and (n.value if isinstance(n, cst.Name) else n.attr.value)
                   == member for n in iter_nodes(built))


def _in_optimizer(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` is part of the first argument of a ``torch.optim`` construction."""
    at: cst.CSTNode = call
    for _ in range(_MAX_HOPS):
        parent = ctx.parent(at)
        if parent is None or isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
        at = parent
        if isinstance(at, cst.Call) and effects.is_optimizer(ctx, at):
            first = arg(at, 0, "params")
            return first is not None and (first.value is call or ctx.is_inside(call, first.value))
    return False


#: library calls that read a module they are given and neither freeze, fill nor train it: saving it,
#: printing a summary of it (one forward pass on random input, hooks removed after)
_READERS = frozenset({"torch.save", "torchsummary.summary", "torchsummary.torchsummary.summary", "torchinfo.summary",
                      "torchinfo.torchinfo.summary"})
#: library calls that read or rescale the gradients of the parameters they are given, nothing more
_GRADIENT_READERS = frozenset("torch.nn.utils." + n for n in (
    "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grad.clip_grad_norm_",
    "clip_grad.clip_grad_value_", "parameters_to_vector"))
#: ignite handlers that save the objects of the dict they are built on or called with (``to_save``)
_SAVERS = frozenset({"ignite.handlers.ModelCheckpoint", "ignite.handlers.Checkpoint",
                     "ignite.handlers.checkpoint.ModelCheckpoint", "ignite.handlers.checkpoint.Checkpoint",
                     "ignite.contrib.handlers.ModelCheckpoint"})


def _saver(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is an ignite checkpoint handler: its construction, or a name bound only to one."""
    if isinstance(expr, cst.Call):
        return bool(ctx.names.qualified_names_at(expr.func) & _SAVERS)
    if not isinstance(expr, cst.Name):
        return False
    b = ctx.names.binding_at(expr, expr.value)
    return b is not None and not b.imports and not b.changed and bool(b.values) and all(
        isinstance(v, cst.Call) and bool(ctx.names.qualified_names_at(v.func) & _SAVERS) for v in b.values)


def _read_only(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """Whether the model ``node`` (``G``, ``model.generator``) is only read where it is: given to a call of
    :data:`_READERS` or ``print``, or put in a dict literal an ignite checkpoint handler saves
    (``ModelCheckpoint(...)`` called with it, ``Checkpoint(to_save, ...)``, or
    ``engine.add_event_handler(event, handler, to_save)`` that hands it to such a handler); its
    ``parameters()`` given to gradient clipping."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Element) and parent.value is node:
        display = ctx.parent(parent)
        if isinstance(display, (cst.List, cst.Tuple)) and isinstance(ctx.parent(display), cst.Arg):
            # `torch.save([generator, discriminator], path)`: the list is read as the models are
            return _read_only(ctx, display)
        return False
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in ("parameters",
                                                                                           "named_parameters"):
        call = ctx.parent(parent)
        arg_ = ctx.parent(call) if isinstance(call, cst.Call) and call.func is parent and not call.args else None
        outer = ctx.parent(arg_) if isinstance(arg_, cst.Arg) and arg_.value is call else None
        return isinstance(outer, cst.Call) and bool(ctx.names.qualified_names_at(outer.func) & _GRADIENT_READERS)
    if isinstance(parent, cst.Arg) and parent.value is node:
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return False
        q = ctx.names.qualified_names_at(call.func)
        if q & _READERS:
            return True
        return isinstance(call.func, cst.Name) and call.func.value == "print" and not q \
            and ctx.names.binding_at(call.func, "print") is None
    if not isinstance(parent, cst.DictElement) or parent.value is not node:
        return False
    holder = ctx.parent(parent)
    arg_ = ctx.parent(holder) if isinstance(holder, cst.Dict) else None
    call = ctx.parent(arg_) if isinstance(arg_, cst.Arg) and arg_.value is holder else None
    if not isinstance(call, cst.Call) or any(not isinstance(e, cst.DictElement) for e in holder.elements):  # type: ignore[union-attr]
        return False
    if _saver(ctx, call) or _saver(ctx, call.func):
        return True  # `Checkpoint({"G": G}, ...)`; `handler(engine, {"G": G})`
    return method_name(call) == "add_event_handler" and any(
        _saver(ctx, a.value) for a in call.args if a is not arg_ and (a.keyword is None or a.keyword.value == "handler"))


def _class_members(ctx: FileContext, at: cst.Name) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """For a model built from a class of this file that spells no freezing word: the names of its
    methods (undecorated, not dunder) and of the attributes its constructor sets to settings (a name, a
    number, arithmetic: no call)."""
    try:
        cores = _cores_of(ctx, at)
    except Unknown:
        return frozenset(), frozenset()
    if len(cores) != 1:
        return frozenset(), frozenset()
    core = cores[0]
    found = definition_of(ctx, core.func) if isinstance(core, cst.Call) else None
    if found is None or found[0] is not ctx or not isinstance(found[1], cst.ClassDef) or _may_freeze(ctx, found[1]):
        return frozenset(), frozenset()
    cls = found[1]
    methods = {s.name.value for s in class_body(cls) if isinstance(s, cst.FunctionDef) and not s.decorators
               and not s.name.value.startswith("__")}
    plain: Set[str] = set()
    for s in class_body(cls):
        if isinstance(s, cst.FunctionDef) and s.name.value == "__init__":
            for node in iter_nodes(s.body):
                if isinstance(node, cst.Assign) and len(node.targets) == 1 \
                        and isinstance(node.targets[0].target, cst.Attribute) \
                        and isinstance(node.targets[0].target.value, cst.Name) \
                        and node.targets[0].target.value.value == _first_param_name(s) \
                        and not any(isinstance(n, (cst.Call, cst.Lambda)) for n in iter_nodes(node.value)):
                    plain.add(node.targets[0].target.attr.value)
    return frozenset(methods - plain), frozenset(plain - methods)


def _first_param_name(function: cst.FunctionDef) -> Optional[str]:
    params = list(function.params.posonly_params) + list(function.params.params)
    return params[0].name.value if params else None


def _may_be_frozen(ctx: FileContext, name: str, at: Optional[cst.Name] = None,
                   followed: Optional[cst.CSTNode] = None, depth: int = 0) -> bool:
    """Whether any use of ``name`` in the file is more than calling the model, moving it or binding it
    to a construction: such a use may freeze it (``requires_grad_(False)``, a loop that writes its
    ``parameters()``, ``eval()``), fill it from another model (``load_state_dict``, an EMA update), or
    hand it to code that trains it (a function, a wrapper).  With ``at`` (a read of the model), only the
    uses of the same variable count (a name of another function is another model); restoring it from a
    file (``load_state_dict(torch.load(path))``) neither freezes nor fills it from another model, and
    neither do copying it, reading its parameters in a loop (the source of a soft update) or handing it
    to a function of the file that does nothing more with it (:func:`_harmless_use`).  ``depth``: how
    many such functions are being followed."""
    mine = ctx.names.binding_at(at, name) if at is not None else None
    passed = _passed(ctx, at) if at is not None else None
    if passed is not None and _list_otherwise_used(ctx, at):  # type: ignore[arg-type]
        return True  # `nets[0].requires_grad_(False)` beside `net_g, net_d = nets`
    if passed is not None and _may_be_frozen(ctx, passed.value, passed, _function_of(ctx, at), depth):  # type: ignore[arg-type]
        return True  # a parameter of a function: what is done to the variable every call passes counts too
    methods, plain = _class_members(ctx, at) if at is not None else (frozenset(), frozenset())
    for node in ctx.names_in(ctx.module, name):
        if mine is not None and ctx.names.binding_at(node, name) is not mine:
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Param) and passed is not None:
            continue  # the parameter itself
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue  # `x.model`: another object's attribute
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            continue
        if isinstance(parent, cst.Element):
            element = effects.unpacked_target(ctx, node)
            if element is not None and not any(w in ctx.code(element) for w in _FREEZING_WORDS):
                continue  # `G, D = Generator(), Discriminator()`: bound to its construction
            if passed is not None and _unpacks_parameter(ctx, parent):
                continue  # `net_g, net_d = nets`: bound to what the calls put in the list they pass
            if followed is not None and _listed_for(ctx, parent, followed):
                continue  # `train([net_g, net_d], ...)`: handed in a list to the function being followed
            if _read_only(ctx, node):
                continue  # `torch.save([generator, discriminator], path)`
            return True
        if not _harmless_use(ctx, node, methods, plain, followed, depth):
            return True
    return False


def _list_otherwise_used(ctx: FileContext, name: cst.Name) -> bool:
    """For a name unpacked from a parameter (``net_g, net_d = nets``): whether the function reads that
    parameter anywhere else (it may reach the model through it: ``nets[0].eval()``, ``freeze(nets)``)."""
    function = _function_of(ctx, name)
    unpacked = _unpacked_parameter(ctx, name, function) if isinstance(function, cst.FunctionDef) else None
    if unpacked is None:
        return False
    for use in ctx.names_in(function, unpacked[0]):
        parent = ctx.parent(use)
        if isinstance(parent, cst.Param) or isinstance(parent, cst.Assign) and parent.value is use \
                and isinstance(parent.targets[0].target, (cst.Tuple, cst.List)):
            continue
        return True
    return False


def _unpacks_parameter(ctx: FileContext, element: cst.Element) -> bool:
    """``element`` is a target of an assignment unpacking a parameter of its function (``a, b = pair``)."""
    target = ctx.parent(element)
    holder = ctx.parent(target) if isinstance(target, (cst.Tuple, cst.List)) else None
    assign = ctx.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    function = _function_of(ctx, element)
    return isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Name) \
        and isinstance(function, cst.FunctionDef) and _plain_param(function, assign.value.value)


def _listed_for(ctx: FileContext, element: cst.Element, function: cst.CSTNode) -> bool:
    """``element`` is an element of a list or tuple display passed as an argument to a call of
    ``function`` (``train([net_g, net_d], ...)``)."""
    display = ctx.parent(element)
    holder = ctx.parent(display) if isinstance(display, (cst.Tuple, cst.List)) else None
    call = ctx.parent(holder) if isinstance(holder, cst.Arg) and holder.value is display else None
    return isinstance(call, cst.Call) and ctx.function_for_call(call) is function


def _harmless_use(ctx: FileContext, node: cst.BaseExpression, methods: FrozenSet[str] = frozenset(),
                  plain: FrozenSet[str] = frozenset(), followed: Optional[cst.CSTNode] = None,
                  depth: int = 0) -> bool:
    """Whether the use ``node`` of a model (a name, ``self.<attr>``) neither freezes it, fills it from
    another model nor hands it to code that may train it: it is called, saved, summarised, printed, its
    gradients clipped; moved, cast, switched between train and eval mode, initialised; its state read
    (``state_dict()``) or restored from a file; a method of its class (``methods``) called or a setting
    its constructor stores (``plain``) read; its parameters read in a loop (:func:`_read_parameters`);
    copied (``copy.deepcopy``: a new model from its values); handed to the function being asked about
    (``followed``, checked there) or to a function of the file that does no more with it; bound to a
    plain value."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node or _read_only(ctx, node):
        return True  # called, saved, summarised, its gradients clipped
    if isinstance(parent, cst.Attribute) and parent.value is node:
        outer = ctx.parent(parent)
        attr = parent.attr.value
        called = isinstance(outer, cst.Call) and outer.func is parent
        if called and attr in methods:
            return True  # `encoder.init_hidden()`: a method of its class, which freezes nothing
        if attr in plain and not isinstance(outer, (cst.Attribute, cst.Subscript, cst.AssignTarget, cst.AugAssign,
                                                    cst.Call, cst.Del)):
            return True  # `decoder.hidden_size`: a setting its constructor stores
        if called and (attr in _HARMLESS or effects.method_effect(ctx, outer) in _NOT_FREEZING  # type: ignore[arg-type]
                       or attr == "apply" and _imported_initialiser(ctx, outer)):  # type: ignore[arg-type]
            return True  # moved, switched, initialised (`model.apply(weights_init)`)
        if called and attr == "load_state_dict" and outer.args and _from_file(ctx, outer.args[0].value):  # type: ignore[union-attr]
            return True  # a checkpoint restored: trained on from there
        return called and attr in ("parameters", "named_parameters") and _read_parameters(ctx, outer)  # type: ignore[arg-type]
    if isinstance(parent, cst.Arg) and parent.value is node:
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Name) and call.func.value == "print" and not ctx.names.qualified_names_at(call.func):
            return True
        if followed is not None and call in call_sites(ctx, followed):
            return True  # handed to the function whose parameter is being asked about (checked there)
        if effects.is_copy(ctx, call) and call.args and call.args[0] is parent:
            return True  # `target = copy.deepcopy(net)`: the copy has parameters of its own
        return depth < 2 and _reading_helper(ctx, call, parent, depth, methods, plain)
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        assign = ctx.parent(parent)
        return isinstance(assign, cst.Assign) and not any(w in ctx.code(assign.value) for w in _FREEZING_WORDS)
    return False


def _imported_initialiser(ctx: FileContext, call: cst.Call) -> bool:
    """``model.apply(weights_init_normal)`` with the function imported from a project module that only
    initialises (:func:`effects.initialiser` read in its own file)."""
    fn = arg(call, 0, "fn")
    found = definition_of(ctx, fn.value) if fn is not None and len(call.args) == 1 else None
    return found is not None and found[0] is not ctx and isinstance(found[1], cst.FunctionDef) \
        and effects.initialiser(found[0], found[1].name)


def _reading_helper(ctx: FileContext, call: cst.Call, given: cst.Arg, depth: int,
                    methods: FrozenSet[str] = frozenset(), plain: FrozenSet[str] = frozenset()) -> bool:
    """Whether ``call`` runs a function of the file or the project, or a method of the class through
    ``self`` (``soft_update(net, target)``), whose parameter ``given`` binds is used there for nothing
    that may freeze, fill or train the model (the source of a soft update: its parameters only read;
    ``methods`` and ``plain``: those of the model's class, :func:`_harmless_use`)."""
    fctx: FileContext = ctx
    function = _helper_of(ctx, call)
    offset = 0
    if function is None:
        found = called_function(ctx, call) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        if found is None or found[1].decorators or found[2] == 0 \
                and isinstance(found[0].enclosing(found[1], (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
            return False
        # `utils.print_network(self.G)`: a function of a project module; `self.soft_update(self.actor,
        # self.target, tau)`: a method of the trainer, called through `self`
        fctx, function, offset = found
    param = _given_parameter(call, function, offset, given) if function is not None else None
    if function is None or param is None:
        return False
    for use in fctx.names_in(function, param.name.value):
        if use is param.name:
            continue
        parent = fctx.parent(use)
        if isinstance(parent, cst.Attribute) and parent.attr is use or isinstance(parent, cst.Arg) and parent.keyword is use:
            continue
        if isinstance(parent, cst.Param) or not _harmless_use(fctx, use, methods, plain, depth=depth + 1):
            return False  # (a nested function's own parameter of the same name: not followed)
    return True


def _read_parameters(ctx: FileContext, call: cst.Call) -> bool:
    """Whether the parameters ``call`` lists (``net.parameters()``) are only read: the iterable of a
    ``for`` loop, or one of the lists it zips, whose target for them is used in the function only in the
    loop's body and only as a value (``param.data`` in ``target.data.copy_(tau * param.data + (1 - tau)
    * target.data)``: a soft update of a target network reads the source's parameters)."""
    if call.args:
        return False
    parent = ctx.parent(call)
    loop: Optional[cst.CSTNode] = None
    target: Optional[cst.BaseExpression] = None
    if isinstance(parent, cst.For) and parent.iter is call:
        loop, target = parent, parent.target
    elif isinstance(parent, cst.Arg) and parent.keyword is None and parent.star == "":
        zipped = ctx.parent(parent)
        outer = ctx.parent(zipped)
        if isinstance(zipped, cst.Call) and isinstance(zipped.func, cst.Name) and zipped.func.value == "zip" \
                and not ctx.names.qualified_names_at(zipped.func) and isinstance(outer, cst.For) \
                and outer.iter is zipped and isinstance(outer.target, (cst.Tuple, cst.List)) \
                and len(outer.target.elements) == len(zipped.args) \
                and all(a.keyword is None and a.star == "" for a in zipped.args):
            loop, target = outer, outer.target.elements[list(zipped.args).index(parent)].value
    if method_name(call) == "named_parameters":  # `for name, p in net.named_parameters():`
        target = target.elements[1].value if isinstance(target, (cst.Tuple, cst.List)) \
            and len(target.elements) == 2 else None
    if not isinstance(loop, cst.For) or not isinstance(target, cst.Name) or _binds_in(loop.body, target.value):
        return False
    for use in ctx.names_in(_function_of(ctx, loop), target.value):
        if use is target:
            continue
        if ctx.is_inside(use, loop.body):
            if not _read_value(ctx, use) and not _unfrozen_or_clipped(ctx, use) \
                    and not _frozen_for_a_while(ctx, use, call):
                return False
        elif not _other_loop_variable(ctx, use, loop):
            return False
    return True


def _unfrozen_or_clipped(ctx: FileContext, use: cst.Name) -> bool:
    """``p.requires_grad = True`` (the parameter trains) and ``p.data.clamp_(-c, c)`` (a WGAN critic's
    weights clipped after its step): writes to a parameter that freeze nothing."""
    switched = _requires_grad_set(ctx, use)
    if switched is not None:
        return switched == "True"
    parent = ctx.parent(use)
    if not isinstance(parent, cst.Attribute) or parent.value is not use:
        return False
    outer = ctx.parent(parent)
    if parent.attr.value == "data" and isinstance(outer, cst.Attribute) and outer.value is parent:
        parent, outer = outer, ctx.parent(outer)
    return parent.attr.value == "clamp_" and isinstance(outer, cst.Call) and outer.func is parent


def _requires_grad_set(ctx: FileContext, use: cst.Name) -> Optional[str]:
    """For ``p.requires_grad = <value>``: the code of the value; None for any other use of ``p``."""
    parent = ctx.parent(use)
    outer = ctx.parent(parent) if isinstance(parent, cst.Attribute) and parent.value is use else None
    assign = ctx.parent(outer) if isinstance(outer, cst.AssignTarget) else None
    if not (isinstance(assign, cst.Assign) and parent.attr.value == "requires_grad"):  # type: ignore[union-attr]
        return None
    return ctx.code(assign.value).strip()


def _frozen_for_a_while(ctx: FileContext, use: cst.Name, listing: cst.Call) -> bool:
    """``p.requires_grad = False`` in a loop over ``D.parameters()`` when the file also switches the same
    model's parameters on again (another loop over ``D.parameters()`` setting ``p.requires_grad = True``): a
    critic frozen for the generator's step and trained in its own."""
    if _requires_grad_set(ctx, use) is None or not isinstance(listing.func, cst.Attribute):
        return False
    owner = listing.func.value
    for call in ctx.calls_in(ctx.module):
        loop = ctx.parent(call)
        if call is listing or not isinstance(loop, cst.For) or loop.iter is not call or not isinstance(loop.target, cst.Name) \
                or method_name(call) != "parameters" or call.args or ctx.code(call.func.value) != ctx.code(owner) \
                or not _same_holder(ctx, owner, call.func.value):  # type: ignore[attr-defined]
            continue
        if any(_requires_grad_set(ctx, n) == "True" for n in ctx.names_in(loop.body, loop.target.value)):
            return True
    return False


def _same_holder(ctx: FileContext, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two spellings of one model (``D``, ``self.D``) name the same variable: the same binding of
    their first name, or ``self`` in methods of one class."""
    root_a, root_b = a, b
    while isinstance(root_a, cst.Attribute):
        root_a = root_a.value
    while isinstance(root_b, cst.Attribute):
        root_b = root_b.value
    if not isinstance(root_a, cst.Name) or not isinstance(root_b, cst.Name):
        return False
    if root_a.value == "self" and root_b.value == "self":
        cls = ctx.enclosing(a, cst.ClassDef)
        return cls is not None and cls is ctx.enclosing(b, cst.ClassDef)
    found = ctx.names.binding_at(root_a, root_a.value)
    return found is not None and found is ctx.names.binding_at(root_b, root_b.value)


def _other_loop_variable(ctx: FileContext, use: cst.Name, loop: cst.For) -> bool:
    """Whether ``use`` is the variable of another ``for`` loop than ``loop`` (its target, or read in its
    body, the loop binding it there): the same name for another value (two soft updates in a row)."""
    other = ctx.enclosing(use, cst.For)
    while other is not None:
        if other is not loop and any(isinstance(n, cst.Name) and n.value == use.value for n in iter_nodes(other.target)) \
                and (use is other.target or ctx.is_inside(use, other.target) or ctx.is_inside(use, other.body)) \
                and not _binds_in(other.body, use.value):  # type: ignore[union-attr]
            return True
        other = ctx.enclosing(other, cst.For)
    return False


#: tensor methods whose result is a number or a new tensor (never a view of the parameter)
_NEW_VALUE_READS = frozenset({"numel", "nelement", "size", "dim", "element_size", "norm", "sum", "mean", "std", "var",
                              "abs", "item", "tolist", "pow", "square", "sqrt"})


#: tensor methods that give the same values as a copy or a view to read (followed to where it goes)
_READ_THROUGH = frozenset({"detach", "clone", "cpu", "numpy", "float", "double", "half"})


def _read_value(ctx: FileContext, use: cst.Name, depth: int = 0) -> bool:
    """Whether the parameter ``use`` (through ``.data``, ``.grad``, ``.detach()``, ``.clone()``, ``.cpu()``,
    ``.numpy()``) is only read where it is: an operand of arithmetic, the argument of an in-place method
    of another tensor (``target.data.add_(param.data, alpha=tau)``) or of a ``torch`` function that writes
    nothing, or handed to a function of the project that does no more with it (``self.to_np(p.grad)``
    with ``return x.data.cpu().numpy()``: a value to log)."""
    node: cst.BaseExpression = use
    gradient = False  # the value is the parameter's gradient (``p.grad``), not the parameter or its data
    for _ in range(6):
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in ("data", "grad"):
            gradient = gradient or (parent.attr.value == "grad" and node is use)
            node = parent
            continue
        call = ctx.parent(parent) if isinstance(parent, cst.Attribute) and parent.value is node else None
        if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _READ_THROUGH \
                and not call.args:  # type: ignore[union-attr]
            node = call
            continue
        if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _NEW_VALUE_READS:  # type: ignore[union-attr]
            return True  # `param.numel()`, `p.norm(2)`: a number or a new tensor, not a view to write through
        break
    parent = ctx.parent(node)
    if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(parent, cst.Return) and depth > 0:
        return True  # handed back by a helper that read it (its caller's use was asked about)
    if not isinstance(parent, cst.Arg) or parent.value is not node or parent.star != "" \
            or parent.keyword is not None and parent.keyword.value == "out":
        return False
    call = ctx.parent(parent)
    if not isinstance(call, cst.Call):
        return False
    if (gradient or method_name(call) in effects.LOGGING_METHODS) and not any(n is use for n in iter_nodes(call.func)):
        # `writer.add_histogram(name, p.grad, step)`: whatever the callee does with the gradient, it neither
        # freezes the parameter nor writes its values; a logger's method records the parameter's values
        return True
    q = ctx.names.qualified_names_at(call.func)
    if q:
        return all(n.startswith("torch.") and not n.endswith("_") and not n.startswith("torch.nn.") for n in q)
    if isinstance(call.func, cst.Attribute) and call.func.attr.value.endswith("_") \
            and call.func.attr.value not in ("requires_grad_", "register_hook") \
            and not any(n is use for n in iter_nodes(call.func)):
        return True
    return depth < 2 and _reading_function(ctx, call, parent, depth)


def _reading_function(ctx: FileContext, call: cst.Call, given: cst.Arg, depth: int) -> bool:
    """Whether ``call`` runs a function of the project (``self.to_np(x)``, ``utils.to_image(x)``) whose
    parameter ``given`` binds is only read there (:func:`_read_value`)."""
    found = called_function(ctx, call) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if found is None or found[1].decorators:
        return False
    fctx, function, offset = found
    param = _given_parameter(call, function, offset, given)
    if param is None:
        return False
    uses = [u for u in fctx.names_in(function, param.name.value) if u is not param.name]
    return bool(uses) and all(_read_value(fctx, u, depth + 1) for u in uses)


def _given_parameter(call: cst.Call, function: cst.FunctionDef, offset: int, given: cst.Arg) -> Optional[cst.Param]:
    """The one plain parameter of ``function`` that ``call`` binds to the argument ``given`` and the
    function never rebinds; None otherwise."""
    bound = bind_arguments(call, function, offset)
    if bound is None:
        return None
    params = [p for p in list(function.params.posonly_params) + list(function.params.params)
              + list(function.params.kwonly_params) if bound.get(p.name.value) is given.value]
    if len(params) != 1 or params[0].star != "" or _rebinds(function, params[0].name.value):
        return None
    return params[0]


def _self_member_may_be_frozen(ctx: FileContext, expr: cst.Attribute) -> bool:
    """Whether the module ``self.<attr>`` of a trainer class (``self.actor``, set once by its
    constructor) may be frozen, filled from another model or trained elsewhere: the class may be an
    ``nn.Module`` (its own ``parameters()``, ``eval()`` or ``requires_grad_`` reach the member), the
    instance is handed on as a value in its methods, the attribute is read outside the class's methods
    (``agent.actor``), or one of its uses there is more than :func:`_harmless_use` allows (its one
    assignment in the constructor aside)."""
    found = effects.self_attr(ctx, expr)
    if found is None:
        return True
    module = not plain_class(ctx, found[0])
    if module and not _closed_module_class(ctx, found[0]):
        return True  # its own `parameters()` may be given to an optimizer, frozen or filled elsewhere
    cls, attr = found
    try:
        values = effects.self_values(ctx, cls, attr)
    except Unknown:
        return True
    if len(values) != 1 and not (values and all(isinstance(v, cst.Call) and _has_weights(ctx, v, 0) for v in values)):
        return True  # another model's module put there (`self.target = self.actor`), or unknown
    for use in _attribute_uses(ctx, attr):
        owner = effects.self_attr(ctx, use)
        if owner is None or owner[0] is not cls:
            return True  # read on another object, or in another class
        parent = ctx.parent(use)
        if isinstance(parent, cst.AssignTarget) and parent.target is use:
            continue  # the one assignment in the constructor (`self_values`)
        if not _harmless_use(ctx, use):
            return True
    for function in class_body(cls):
        me = _first_param_name(function) if isinstance(function, cst.FunctionDef) else None
        if me is None:
            continue
        for node in ctx.names_in(function, me):  # type: ignore[arg-type]
            parent = ctx.parent(node)
            if module and isinstance(parent, cst.Attribute) and parent.value is node \
                    and not _own_member(ctx, cls, parent.attr.value):
                return True  # `self.parameters()`, `self.requires_grad_(False)`: reaches every module it holds
            if isinstance(parent, cst.Attribute) and parent.value is node or isinstance(parent, cst.Param):
                continue
            call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "super" \
                    and not ctx.names.qualified_names_at(call.func):
                continue  # `super(Agent, self).__init__()`
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__" \
                    and call.args and call.args[0].value is node and (dotted_name(call.func.value) or "") in {
                        dotted_name(b.value) for b in cls.bases}:
                continue  # `BaseModel.__init__(self, opt)`: a base's constructor, as `super().__init__(opt)`
            return True  # `helper(self)`: the instance handed on
    return False


#: ``nn.Module`` methods that, called on the whole module, neither freeze, fill nor train what it holds
_MODULE_HARMLESS = frozenset({"to", "cuda", "cpu", "train", "eval", "zero_grad", "register_buffer"})


def _own_member(ctx: FileContext, cls: cst.ClassDef, attr: str) -> bool:
    """Whether ``self.<attr>`` in a method of the module class ``cls`` names one of its own methods, an
    attribute its methods set, or a module method of :data:`_MODULE_HARMLESS`; not ``parameters``,
    ``modules``, ``requires_grad_``, ``load_state_dict``, ``apply`` and the like, which reach every
    module it holds."""
    if attr in _MODULE_HARMLESS:
        return True
    for node in iter_nodes(cls):
        if isinstance(node, cst.FunctionDef) and node.name.value == attr and not attr.startswith("__"):
            return True
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) \
                and node.target.attr.value == attr and effects.self_attr(ctx, node.target) is not None:
            return True
    return False


def _closed_module_class(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether the ``nn.Module`` class ``cls`` (built directly on ``torch.nn.Module``) holds its modules
    the way a plain trainer class does: no class of the file derives from it, every instance of it is
    built in this file (none in another file of the project) and bound to a name used for nothing but
    calling the class's own methods and moving it or switching its mode (``algo.update(x, y)``,
    ``algo.to(device)``): its ``parameters()`` are given to no optimizer, nothing freezes, copies or
    fills it, and it is handed to no code that is not followed."""
    if len(cls.bases) != 1 or cls.keywords or cls.decorators \
            or not ctx.names.qualified_names_at(cls.bases[0].value) & _PLAIN_BASES:
        return False
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.ClassDef) and node is not cls and any(
                (definition_of(ctx, b.value) or (None, None))[1] is cls for b in node.bases):
            return False  # a subclass: it may freeze, rebuild or override what the class holds
    built = constructions(ctx, cls)
    if not built or any(f is not ctx or definition_of(ctx, c.func) is None
                        or definition_of(ctx, c.func)[1] is not cls for f, c in built):  # type: ignore[index]
        return False
    methods = {s.name.value for s in class_body(cls) if isinstance(s, cst.FunctionDef) and not s.decorators
               and not s.name.value.startswith("__")}
    for _, call in built:
        assign = ctx.parent(call)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                or not isinstance(assign.targets[0].target, cst.Name):
            return False
        name = assign.targets[0].target.value
        for use in ctx.names_in(ctx.module, name):
            parent = ctx.parent(use)
            if isinstance(parent, cst.AssignTarget) and parent.target is use:
                value = ctx.parent(parent).value  # type: ignore[union-attr]
                if value is call or effects.same_module(ctx, value) is not value:
                    continue  # `algo = Algo(...)`, `algo = algo.to(device)`
                return False
            if isinstance(parent, cst.Attribute) and parent.attr is use:
                continue  # `x.algo`: another object's attribute
            outer = ctx.parent(parent)
            if isinstance(parent, cst.Attribute) and parent.value is use and isinstance(outer, cst.Call) \
                    and outer.func is parent and (parent.attr.value in methods or parent.attr.value in
                                                  ("to", "cuda", "cpu", "train", "eval")):
                continue
            return False
    return True


__all__ = ["StrayStep", "UntrainedModel", "stray_steps", "untrained_models", "stray_lightning_optimizers",
           "ManualFinding", "lightning_manual_steps", "optimizer_holds"]


# -- a LightningModule whose optimizer holds a model its training loss does not run ----------------
#: the LightningModule base classes (automatic optimization: the trainer runs backward on the loss
#: ``training_step`` returns, then steps each optimizer ``configure_optimizers`` returns)
_LIGHTNING_BASES = frozenset({"pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
                              "pytorch_lightning.core.module.LightningModule", "lightning.LightningModule",
                              "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
                              "lightning.pytorch.core.module.LightningModule"})
#: hooks through which a LightningModule takes over or changes what a step applies
_STEP_HOOKS = frozenset({"__call__", "optimizer_step", "backward", "manual_backward", "on_after_backward",
                         "on_before_optimizer_step", "training_step_end", "optimizer_zero_grad", "toggle_optimizer",
                         "lr_scheduler_step", "on_train_batch_end", "on_before_backward"})
#: words in the classes that may switch the automatic loop off or move gradients by hand
_MANUAL_WORDS = ("automatic_optimization", ".grad", "manual_backward", "register_hook", "_modules", "setattr")
#: methods of a copy whose call neither runs nor trains the model it was copied from
_COPY_METHODS = frozenset({"update_parameters", "to", "cuda", "cpu", "train", "eval", "forward", "float", "half"})


@dataclass(frozen=True)
class StrayLightningOptimizer:
    """``optimizer``: the optimizer construction in ``configure_optimizers``; ``cls``: the
    LightningModule class; ``held``: the attributes whose parameters it holds; ``reached``: the
    attributes the training loss is computed from."""

    optimizer: cst.Call
    cls: str
    held: Tuple[str, ...]
    reached: Tuple[str, ...]


def stray_lightning_optimizers(ctx: FileContext) -> List[StrayLightningOptimizer]:
    """Every optimizer that ``configure_optimizers`` of a LightningModule class of this file returns,
    built over ``self.<a>.parameters()``, while the loss its ``training_step`` returns (through
    ``self(x)`` and ``forward``) runs only attributes that are copies of other models
    (``AveragedModel(self.model)``, ``copy.deepcopy(...)``: a new set of parameters).  Only when the
    whole class chain, down to the LightningModule base, is in this file, the loop is Lightning's
    automatic one (no step hook, no ``automatic_optimization``, no gradient moved by hand), and each
    copy is used for nothing but being called and updated.  Ask after the walk."""
    out: List[StrayLightningOptimizer] = []
    for node in ctx.module.body:  # the classes of the module's own body
        if not isinstance(node, cst.ClassDef):
            continue
        chain = _lightning_chain(ctx, node)
        if chain is None:
            continue
        try:
            out.extend(_stray_in(ctx, chain))
        except Unknown:
            continue
    return out


def _lightning_chain(ctx: FileContext, cls: cst.ClassDef) -> Optional[List[cst.ClassDef]]:
    """``cls`` and its bases, each a class of this file with one base, down to a LightningModule."""
    chain = [cls]
    while len(chain) <= 6:
        current = chain[-1]
        if len(current.bases) != 1 or current.keywords:
            return None
        base = current.bases[0].value
        if ctx.names.qualified_names_at(base) & _LIGHTNING_BASES:
            return chain
        found = definition_of(ctx, base)
        if found is None or found[0] is not ctx or not isinstance(found[1], cst.ClassDef) \
                or not isinstance(ctx.parent(found[1]), cst.Module) or found[1] in chain:
            return None
        chain.append(found[1])
    return None


def _method(chain: List[cst.ClassDef], name: str) -> Optional[cst.FunctionDef]:
    for cls in chain:
        for stmt in class_body(cls):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
    return None


def _self_of(function: cst.FunctionDef) -> str:
    params = list(function.params.posonly_params) + list(function.params.params)
    if not params or function.decorators:
        raise Unknown
    return params[0].name.value


def _stray_in(ctx: FileContext, chain: List[cst.ClassDef]) -> List[StrayLightningOptimizer]:
    methods = {s.name.value for cls in chain for s in class_body(cls) if isinstance(s, cst.FunctionDef)}
    if methods & _STEP_HOOKS or not {"training_step", "forward", "configure_optimizers"} <= methods:
        return []
    if any(w in ctx.bare_code(cls) for cls in chain for w in _MANUAL_WORDS):
        return []
    configure = _method(chain, "configure_optimizers")
    optimizers = _returned_optimizers(ctx, configure)  # type: ignore[arg-type]
    if not optimizers:
        return []
    step = _method(chain, "training_step")
    returns = _returns_of(ctx, step)  # type: ignore[arg-type]
    reached: Set[str] = set()
    for r in returns:
        reached |= _self_reached(ctx, chain, step, r, 0)  # type: ignore[arg-type]
    reached = {name for name in reached if not _loss_module(ctx, name)}
    if not reached or not all(_fresh_copy(ctx, name) for name in reached):
        return []
    out = []
    for call, held in optimizers:
        if held & reached or any(_mentions(ctx, h, reached) for h in held):
            continue
        out.append(StrayLightningOptimizer(call, chain[0].name.value, tuple(sorted(held)), tuple(sorted(reached))))
    return out


def _returns_of(ctx: FileContext, function: cst.FunctionDef) -> List[cst.BaseExpression]:
    out = []
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.Yield, cst.Await)):
            raise Unknown
        if isinstance(node, cst.Return) and _function_of(ctx, node) is function:
            if node.value is None:
                raise Unknown
            out.append(node.value)
    if not out:
        raise Unknown
    return out


def _returned_optimizers(ctx: FileContext, function: cst.FunctionDef) -> List[Tuple[cst.Call, FrozenSet[str]]]:
    """The optimizer constructions ``configure_optimizers`` returns (alone, in a list or tuple, as
    ``{"optimizer": ...}``), each with the ``self`` attributes whose parameters it holds; unknown when
    one of them is not such a construction."""
    me = _self_of(function)
    out: List[Tuple[cst.Call, FrozenSet[str]]] = []

    def add(expr: cst.BaseExpression, hops: int) -> None:
        if hops > _MAX_HOPS:
            raise Unknown
        if isinstance(expr, cst.Name):
            found = ctx.names.reaching_assignment(expr.value, expr, function)
            if found is None or found[1] is not None:
                raise Unknown
            add(found[0].value, hops + 1)
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for el in expr.elements:
                add(el.value, hops + 1)
        elif isinstance(expr, cst.Dict):
            for el in expr.elements:
                if not isinstance(el, cst.DictElement) or not isinstance(el.key, cst.SimpleString):
                    raise Unknown
                if el.key.evaluated_value == "optimizer":
                    add(el.value, hops + 1)
                elif el.key.evaluated_value not in ("lr_scheduler", "monitor"):
                    raise Unknown
        elif isinstance(expr, cst.Call):
            names = ctx.names.qualified_names_at(expr.func)
            if any(".lr_scheduler." in q for q in names):
                return  # a scheduler built on an optimizer returned beside it
            if not any(q.startswith("torch.optim.") and ".swa_utils" not in q for q in names):
                raise Unknown
            params = arg(expr, 0, "params")
            if params is None:
                raise Unknown
            out.append((expr, _self_owners(params.value, me, 0)))
        else:
            raise Unknown

    for r in _returns_of(ctx, function):
        add(r, 0)
    return out


def _self_owners(expr: cst.BaseExpression, me: str, hops: int) -> FrozenSet[str]:
    """The attributes ``a`` of ``self.a.parameters()`` an optimizer's parameters are built from."""
    if hops > _MAX_HOPS:
        raise Unknown
    if isinstance(expr, cst.Call):
        func = expr.func
        if method_name(expr) in ("parameters", "named_parameters") and not expr.args:
            owner = receiver(expr)
            if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == me:
                return frozenset({owner.attr.value})
            raise Unknown  # `self.parameters()`: every submodule
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and len(expr.args) == 1:
            return _self_owners(expr.args[0].value, me, hops + 1)
        raise Unknown
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _self_owners(expr.left, me, hops + 1) | _self_owners(expr.right, me, hops + 1)
    raise Unknown


def _self_reached(ctx: FileContext, chain: List[cst.ClassDef], function: cst.FunctionDef,
                  expr: cst.BaseExpression, hops: int) -> Set[str]:
    """The ``self`` attributes the value ``expr`` (in a method) is computed from: ``self.a(x)`` reaches
    ``a``, ``self(x)`` and ``self.forward(x)`` what ``forward`` returns; a parameter of the method is
    data.  Over-approximated (an unpacked tuple reaches all of its value); unknown for a call of
    another method, of a non-library function or anything not followed."""
    if hops > _MAX_HOPS:
        raise Unknown
    me = _self_of(function)
    out: Set[str] = set()
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            if node.value == me:
                raise Unknown  # `self` itself as a value
            if node.value in ("None", "True", "False") or ctx.names.qualified_names_at(node):
                continue
            passed = _self_argument(ctx, function, node)
            if passed is not None:  # a parameter of a method being followed: the call's argument
                out |= _self_reached(ctx, chain, passed[1], passed[0], hops + 1)
                continue
            found = ctx.names.reaching_assignment(node.value, node, function)
            if found is None:
                if _is_param(function, node.value) and not _rebinds(function, node.value, ctx):
                    continue  # the method's argument: the batch
                raise Unknown
            out |= _self_reached(ctx, chain, function, found[0].value, hops + 1)
            continue
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == me:
                stored = _stored_before(ctx, function, node)
                if stored is not None:  # `self.fake = self(z)` earlier in this method
                    out |= _self_reached(ctx, chain, function, stored, hops + 1)
                else:
                    out.add(node.attr.value)
                continue
            stack.append(node.value)
            continue
        if isinstance(node, cst.Call):
            name = method_name(node)
            if name in _CUTTING or under_no_grad(ctx, node):
                continue
            func = node.func
            if isinstance(func, cst.Name) and func.value == me or (
                    isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == me and func.attr.value in RUN_METHODS):
                forward = _method(chain, "forward")
                if forward is None or forward is function:
                    raise Unknown
                for r in _returns_of(ctx, forward):
                    out |= _self_reached(ctx, chain, forward, r, hops + 1)
                stack.extend(a.value for a in node.args)  # the arguments: data or model outputs
                continue
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == me:
                helper = _method(chain, func.attr.value)
                if helper is not None and helper is not function and _MANUAL.of(ctx):
                    out |= _through_method(ctx, chain, function, node, helper, hops)  # `self.loss_of(y_hat, y)`
                    continue
                if helper is not None or func.attr.value in ("log", "log_dict"):
                    raise Unknown  # another method of the class
                out.add(func.attr.value)  # a submodule called
                stack.extend(a.value for a in node.args)
                continue
            q = ctx.names.qualified_names_at(func)
            if q:
                if not any(n.startswith(_LIBRARY_ROOTS) for n in q):
                    raise Unknown
            elif isinstance(func, cst.Attribute):
                stack.append(func.value)  # a tensor method: `out.view(-1)`
            else:
                raise Unknown
            stack.extend(a.value for a in node.args)
            continue
        if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Tuple, cst.List,
                             cst.Comparison, cst.BooleanOperation, cst.IfExp)):
            stack.extend(_direct_expressions(node))
            continue
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            continue
        raise Unknown
    return out


def _is_param(function: cst.FunctionDef, name: str) -> bool:
    p = function.params
    return any(x.name.value == name for x in list(p.posonly_params) + list(p.params) + list(p.kwonly_params))


def _rebinds(function: cst.FunctionDef, name: str, ctx: Optional[FileContext] = None) -> bool:
    """Whether the body of ``function`` binds ``name`` anywhere (an assignment, a loop, ``with``, ``:=``,
    ``del``, an import, a nested definition, a ``global``/``nonlocal`` declaration).  With ``ctx`` (the
    file of ``function``) the names are gathered once per function."""
    bound = _bound_names(function) if ctx is None else ctx.of_code("bound_names", function, _bound_names)
    return name in bound


def _bound_names(function: cst.FunctionDef) -> Set[str]:
    """Every name a target in the body of ``function`` spells, nested functions' included, and every name
    a ``global``/``nonlocal`` statement there declares (those are taken as bound)."""
    out: Set[str] = set()
    for node in iter_nodes(function.body):
        targets: List[cst.CSTNode] = []
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.Del):
            targets = [node.target]
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out.add(node.name.value)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            out.update(item.name.value for item in node.names)
        for t in targets:
            out.update(n.value for n in iter_nodes(t) if isinstance(n, cst.Name))
    return out



def _set_elsewhere(ctx: FileContext, expr: cst.Attribute) -> bool:
    """For ``self.<attr>`` read in a method: whether the attribute is also set outside that class
    (``algo.optimizer = ...``, a subclass's ``self.optimizer = ...``), where the method may then read
    that value instead."""
    found = effects.self_attr(ctx, expr)
    if found is None:
        return False
    for use in _attribute_uses(ctx, found[1]):
        parent = ctx.parent(use)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is use \
                or effects.unpacked_into(ctx, use):
            owner = effects.self_attr(ctx, use)
            if owner is None or owner[0] is not found[0]:
                return True
    return False


def _attribute_uses(ctx: FileContext, name: str) -> List[cst.Attribute]:
    return [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and n.attr.value == name]


def _fresh_copy(ctx: FileContext, name: str) -> bool:
    """Whether the attribute ``name`` is assigned once in the file, in an ``__init__``, to a copy of a
    model (a new set of parameters), and otherwise only called or updated."""
    assigned = 0
    for use in _attribute_uses(ctx, name):
        parent = ctx.parent(use)
        if isinstance(parent, cst.AssignTarget) and parent.target is use:
            assign = ctx.parent(parent)
            function = ctx.enclosing(assign, (cst.FunctionDef, cst.Lambda))
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                    or not isinstance(function, cst.FunctionDef) or function.name.value != "__init__":
                return False
            value = strip_moves(assign.value)
            if not isinstance(value, cst.Call) or not effects.is_copy(ctx, value):
                return False
            assigned += 1
            continue
        if isinstance(parent, cst.Call) and parent.func is use:
            continue
        if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in _COPY_METHODS:
            outer = ctx.parent(parent)
            if isinstance(outer, cst.Call) and outer.func is parent:
                continue
        return False
    return assigned == 1


def _loss_module(ctx: FileContext, name: str) -> bool:
    """Whether every assignment of the attribute ``name`` in the file builds a ``torch.nn`` loss
    (``self.criterion = nn.CrossEntropyLoss()``): a module without parameters."""
    values = []
    for use in _attribute_uses(ctx, name):
        parent = ctx.parent(use)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is use:
            assign = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
            values.append(getattr(assign, "value", None))
    return bool(values) and all(
        isinstance(v, cst.Call) and any(q.startswith("torch.nn.") and q.endswith("Loss") and q.count(".") == 2
                                        for q in ctx.names.qualified_names_at(v.func))
        for v in values)


def _mentions(ctx: FileContext, held: str, reached: Set[str]) -> bool:
    """Whether an assignment of the attribute ``held`` in the file may make it one of the ``reached``
    attributes (its value reads one of them)."""
    for use in _attribute_uses(ctx, held):
        parent = ctx.parent(use)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is use:
            assign = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else parent
            value = getattr(assign, "value", None)
            if value is None or any(isinstance(n, cst.Attribute) and n.attr.value in reached
                                    for n in iter_nodes(value)):
                return True
    return False


__all__ += ["StrayLightningOptimizer", "stray_lightning_optimizers"]


# -- a LightningModule that steps its optimizers by hand ------------------------------------------
#: whether :func:`_self_reached` follows methods of the class (asked for manual optimisation only)
_MANUAL: Fact[List[bool]] = Fact("gradflow.lightning_manual", lambda ctx: [])
#: the methods of the class being followed, each with its parameters' arguments and the method they are read in
_SELF_BOUND: "Fact[List[Tuple[cst.FunctionDef, Dict[str, Tuple[cst.BaseExpression, cst.FunctionDef]]]]]" = Fact(
    "gradflow.lightning_bound", lambda ctx: [])
#: words in the class chain that may freeze a module or change its parameters by hand
_MANUAL_FREEZING = ("requires_grad", "freeze", "no_grad", "inference_mode", "set_grad_enabled", "_modules", "setattr",
                    "load_state_dict", "deepcopy")
#: methods whose call on the LightningModule itself reaches every submodule (a loop that may freeze them)
_EVERY_SUBMODULE = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children",
                              "named_children", "apply"})


@dataclass(frozen=True)
class ManualFinding:
    """In a LightningModule stepping its optimizers by hand: ``node`` the optimizer step (``held`` the
    attributes its optimizer holds, ``optimizer`` its name) or the ``manual_backward`` call (``held``
    empty: the attributes ``reached`` are held by no optimizer)."""

    node: cst.Call
    optimizer: Optional[str]
    held: Tuple[str, ...]
    reached: Tuple[str, ...]


def lightning_manual_steps(ctx: FileContext) -> List[ManualFinding]:
    """In a LightningModule whose ``training_step`` takes its optimizers from ``self.optimizers()`` and runs
    ``self.manual_backward(loss)`` (``automatic_optimization`` switched off), the class chain down to the
    LightningModule in this file: each ``opt.step()`` whose optimizer (by its place in what
    ``configure_optimizers`` returns) holds none of the modules the losses backpropagated since the
    previous step are computed from, and each ``manual_backward`` whose loss runs a module with weights
    (built in ``__init__``, used for nothing but being called, moved or given to an optimizer) that no
    returned optimizer holds.  Ask after the walk."""
    out: List[ManualFinding] = []
    for node in ctx.module.body:  # the classes of the module's own body
        if not isinstance(node, cst.ClassDef):
            continue
        chain = _lightning_chain(ctx, node)
        if chain is None:
            continue
        manual = _MANUAL.of(ctx)
        manual.append(True)
        try:
            out.extend(_manual_in(ctx, chain))
        except Unknown:
            continue
        finally:
            manual.pop()
    return out


def _manual_off(ctx: FileContext, chain: List[cst.ClassDef]) -> bool:
    """Whether ``__init__`` of the chain sets ``self.automatic_optimization = False`` (and nothing else
    sets it)."""
    found = False
    for use in _attribute_uses(ctx, "automatic_optimization"):
        parent = ctx.parent(use)
        assign = ctx.parent(parent) if isinstance(parent, cst.AssignTarget) else None
        function = ctx.enclosing(use, cst.FunctionDef)
        if not isinstance(assign, cst.Assign) or not isinstance(function, cst.FunctionDef) \
                or function.name.value != "__init__" or not any(ctx.is_inside(function, c) for c in chain) \
                or not (isinstance(assign.value, cst.Name) and assign.value.value == "False"):
            return False
        found = True
    return found


def _manual_in(ctx: FileContext, chain: List[cst.ClassDef]) -> List[ManualFinding]:
    step = _method(chain, "training_step")
    configure = _method(chain, "configure_optimizers")
    if step is None or configure is None or not _manual_off(ctx, chain):
        return []
    me = _self_of(step)
    optimizers = _returned_optimizers(ctx, configure)
    if not optimizers:
        return []
    modules = _module_attrs(ctx, chain)
    held_anywhere = frozenset(a for _, held in optimizers for a in held)
    if not held_anywhere <= modules.keys():
        return []
    names: Dict[str, int] = {}  # `opt_g, opt_d = self.optimizers()`: each name's place
    for node in iter_nodes(step.body):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and method_name(node.value) == "optimizers" \
                and isinstance(receiver(node.value), cst.Name) and receiver(node.value).value == me \
                and len(node.targets) == 1:  # type: ignore[union-attr]
            target = node.targets[0].target
            if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(optimizers) \
                    and all(isinstance(e.value, cst.Name) for e in target.elements):
                names.update({e.value.value: i for i, e in enumerate(target.elements)})  # type: ignore[attr-defined]
            elif isinstance(target, cst.Name) and len(optimizers) == 1:
                names[target.value] = 0
            else:
                return []
    if not names or any(_binds_in(step.body, n) and sum(
            1 for x in iter_nodes(step.body) if isinstance(x, cst.AssignTarget)
            and any(isinstance(t, cst.Name) and t.value == n for t in iter_nodes(x.target))) != 1 for n in names):
        return []
    text = "".join(ctx.bare_code(c) for c in chain)
    frozen_somewhere = any(w in text for w in _MANUAL_FREEZING) or any(
        isinstance(n, cst.Call) and method_name(n) in _EVERY_SUBMODULE and isinstance(receiver(n), cst.Name)
        for c in chain for n in iter_nodes(c))
    out: List[ManualFinding] = []
    backwards: List[cst.Call] = []
    for call in ctx.calls_in(step):
        if _function_of(ctx, call) is not step:
            continue
        name = method_name(call)
        owner = receiver(call)
        if name == "manual_backward" and isinstance(owner, cst.Name) and owner.value == me:
            backwards.append(call)
            loss = arg(call, 0, "loss")
            if loss is None:
                raise Unknown
            reached = {a for a in _self_reached(ctx, chain, step, loss.value, 0) if a in modules}
            untrained = sorted(a for a in reached - held_anywhere
                               if not frozen_somewhere and _trainable_attr(ctx, chain, a, modules[a]))
            if untrained:
                out.append(ManualFinding(call, None, (), tuple(untrained)))
        elif name == "step" and isinstance(owner, cst.Name) and owner.value in names and not call.args:
            if backwards:
                held = optimizers[names[owner.value]][1]
                reached = set()
                for b in backwards:
                    reached |= {a for a in _self_reached(ctx, chain, step, arg(b, 0, "loss").value, 0)  # type: ignore[union-attr]
                                if a in modules}
                if held and reached and not held & reached and not any(_mentions(ctx, h, reached) for h in held):
                    out.append(ManualFinding(call, owner.value, tuple(sorted(held)), tuple(sorted(reached))))
            backwards = []
    return out


def _module_attrs(ctx: FileContext, chain: List[cst.ClassDef]) -> Dict[str, cst.Call]:
    """The attributes the chain's ``__init__`` sets once to a module construction (and nothing sets
    otherwise), with that construction."""
    out: Dict[str, cst.Call] = {}
    for cls in chain:
        for stmt in class_body(cls):
            if not isinstance(stmt, cst.FunctionDef) or stmt.name.value != "__init__":
                continue
            me = _self_of(stmt)
            for node in iter_nodes(stmt.body):
                if isinstance(node, cst.Assign) and len(node.targets) == 1:
                    t = node.targets[0].target
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me:
                        value = strip_moves(node.value)
                        if isinstance(value, cst.Call) and is_module_value(ctx, value):
                            assigned = [u for u in _attribute_uses(ctx, t.attr.value)
                                        if isinstance(ctx.parent(u), (cst.AssignTarget, cst.AugAssign, cst.AnnAssign))]
                            if len(assigned) == 1:
                                out[t.attr.value] = value
    return out


def _trainable_attr(ctx: FileContext, chain: List[cst.ClassDef], attr: str, built: cst.Call) -> bool:
    """Whether the module ``self.<attr>`` holds weights by construction and every use of the attribute in
    the file is in the chain and calls it, moves it, gives its parameters to an optimizer, or reads the
    type or device of one of its weights."""
    if not _has_weights(ctx, built, 0):
        return False
    for use in _attribute_uses(ctx, attr):
        if not any(ctx.is_inside(use, c) for c in chain) or not isinstance(use.value, cst.Name):
            return False
        parent = ctx.parent(use)
        if isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Call) and parent.func is use:
            continue
        if isinstance(parent, cst.Attribute) and parent.value is use:
            outer = ctx.parent(parent)
            if isinstance(outer, cst.Call) and outer.func is parent and parent.attr.value in _HARMLESS:
                continue
            if isinstance(outer, cst.Call) and outer.func is parent and parent.attr.value == "parameters" \
                    and _in_optimizer(ctx, outer):
                continue
            if _type_read(ctx, parent):
                continue
        return False
    return True


def _type_read(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``self.g.model[0].weight`` given to ``type_as``/``to``, or its ``.device``/``.dtype`` read: the
    type or place of a weight, nothing that changes it."""
    for _ in range(6):
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if parent.attr.value in ("device", "dtype"):
                return True
            node = parent
        elif isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
        elif isinstance(parent, cst.Arg) and parent.value is node:
            call = ctx.parent(parent)
            return isinstance(call, cst.Call) and method_name(call) in ("type_as", "to") \
                and isinstance(node, cst.Attribute) and node.attr.value in ("weight", "bias")
        else:
            return False
    return False


def _stored_before(ctx: FileContext, function: cst.FunctionDef, node: cst.Attribute) -> Optional[cst.BaseExpression]:
    """For ``self.<attr>`` read in ``function`` after the one statement of its body (not nested in a
    branch) that sets it, where no other method sets it: the value set."""
    found = None
    for use in _attribute_uses(ctx, node.attr.value):
        parent = ctx.parent(use)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is use:
            assign = ctx.parent(parent)
            if found is not None or not isinstance(parent, cst.AssignTarget) or not isinstance(assign, cst.Assign) \
                    or len(assign.targets) != 1 or _function_of(ctx, assign) is not function:
                return None
            line = ctx.parent(assign)
            if not isinstance(line, cst.SimpleStatementLine) or ctx.parent(line) is not function.body:
                return None
            found = assign
    if found is None or ctx.names.position(found) >= ctx.names.position(node):
        return None
    return found.value


def _through_method(ctx: FileContext, chain: List[cst.ClassDef], caller: cst.FunctionDef, call: cst.Call,
                    method: cst.FunctionDef, hops: int) -> Set[str]:
    """What ``self.<method>(...)`` returns reaches: its returns, its parameters read as the call's arguments."""
    if any(m is method for m, _ in _SELF_BOUND.of(ctx)) or method.decorators \
            or isinstance(method.params.star_arg, cst.Param) or method.params.star_kwarg is not None:
        raise Unknown
    bound = bind_arguments(call, method, 1)
    if bound is None:
        raise Unknown
    args: Dict[str, Tuple[cst.BaseExpression, cst.FunctionDef]] = {}
    for p in (list(method.params.posonly_params) + list(method.params.params) + list(method.params.kwonly_params))[1:]:
        if p.name.value in bound:
            args[p.name.value] = (bound[p.name.value], caller)
        elif p.default is None:
            raise Unknown
    stack = _SELF_BOUND.of(ctx)
    stack.append((method, args))
    try:
        out: Set[str] = set()
        for r in _returns_of(ctx, method):
            if not under_no_grad(ctx, r):
                out |= _self_reached(ctx, chain, method, r, hops + 1)
        return out
    finally:
        stack.pop()


def _self_argument(ctx: FileContext, function: cst.FunctionDef,
                   name: cst.Name) -> Optional[Tuple[cst.BaseExpression, cst.FunctionDef]]:
    for method, args in reversed(_SELF_BOUND.of(ctx)):
        if method is function:
            if name.value in args and not _rebinds(function, name.value, ctx):
                return args[name.value]
            return None
    return None

