"""What library calls do to modules and their parameters, and the modules values held by objects are.

One table of torch API effects, read by the rules through the questions below (never by the spelling
of a user's identifier):

- **module methods that return the module they are called on** (:data:`SAME_MODULE`): ``to``, ``cuda``,
  ``cpu``, ``float``/``half``/``double``/``bfloat16`` move or cast it, ``train``/``eval`` switch its mode,
  ``requires_grad_`` freezes it (``requires_grad_(False)``) or unfreezes it, ``apply(fn)`` runs ``fn`` on
  each submodule (an initialisation when ``fn`` only writes weights: it neither freezes nor runs a
  layer), ``share_memory`` moves its storage;
- **wrappers that hold a module** (:data:`HOLDERS`): ``DataParallel``, ``DistributedDataParallel``,
  ``torch.compile`` -- the wrapper's parameters are the module's; **copies** (:data:`COPIES`):
  ``copy.deepcopy``, ``AveragedModel`` -- a new set of parameters;
- **optimizer constructions** (``torch.optim.*`` but schedulers and averaging), their first argument a
  **parameter source**: ``m.parameters()``, ``m.named_parameters()``, ``filter(f, ...)``,
  ``itertools.chain(...)``, ``list(...)``/``tuple(...)``, ``+`` of those, a list of parameter groups
  (``[{"params": ...}, ...]``), a comprehension over one; ``opt.add_param_group({"params": ...})``
  adds a source later.

Values held by objects (:func:`held_module`, :func:`self_values`): a name rebound to the same module
(``D = D.cuda()``, also under ``if torch.cuda.is_available():``, where both branches hold the same
model), ``self.<attr>`` of a class set in ``__init__`` or in a method the constructor calls
(``self.build()``), and a dict literal keyed by literal strings (``nets["G"]``).  Names unpacked from an
assignment hold their element of a tuple literal (``G, D = Generator(), Discriminator()``) or a part of
the value they come from (``out, mu = model(x)``: :func:`unpacked`); ``obj.<attr>`` of a name holding an
instance of a class of the file holds what that class's constructor sets (:func:`member_module`); and
whatever an optimizer of the file is given the parameters of is a module (:func:`trained_by_optimizer`).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg, method_name, receiver
from torchlint.analysis.definitions import class_body, definition_of, parameter_owner, strip_moves
from torchlint.analysis.mode_layers import DROPOUT_LAYERS, STATELESS_LAYERS as _STATELESS_LAYERS
from torchlint.analysis.names import dotted_name
from torchlint.analysis.roles import HOLDERS, holds_module, is_model, is_module_value, not_a_module, setting_value
from torchlint.analysis.walk import iter_nodes

MOVES = "moves"
CASTS = "casts"
MODE = "mode"
FREEZES = "freezes"
UNFREEZES = "unfreezes"
INITIALISES = "initialises"
SHARES = "shares"
UNKNOWN = "unknown"

#: module methods that return the module they are called on, and what they change
SAME_MODULE: Dict[str, str] = {
    "to": MOVES, "cuda": MOVES, "cpu": MOVES, "share_memory": SHARES,
    "float": CASTS, "half": CASTS, "double": CASTS, "bfloat16": CASTS,
    "train": MODE, "eval": MODE,
    "requires_grad_": FREEZES,
    "apply": INITIALISES,
}
#: constructions that build a new set of parameters copied from their argument
COPIES = frozenset({"copy.deepcopy", "torch.optim.swa_utils.AveragedModel"})
#: what a function given to ``apply`` may do that is more than initialising weights
_NOT_INITIALISING = frozenset({"requires_grad", "requires_grad_", "forward", "eval", "train", "detach", "detach_",
                               "append", "extend", "add_module", "parameters", "named_parameters", "modules",
                               "children"})
_MAX_HOPS = 8
#: the ``add_param_group`` calls of the file
_ADDED: "Fact[List[cst.Call]]" = Fact("effects.added_groups", lambda ctx: [
    c for c in ctx.calls_in(ctx.module) if method_name(c) == "add_param_group"])
#: the values ``self.<attr>`` is set to, per class and attribute (or the Unknown it raised)
_SELF_VALUES: "Fact[Dict[Tuple[cst.ClassDef, str], object]]" = Fact("effects.self_values", lambda ctx: {})
#: whether each function of the file only initialises the module it is given (asked once per function)
_INITIALISERS: "Fact[Dict[cst.FunctionDef, bool]]" = Fact("effects.initialisers", lambda ctx: {})


class Unknown(Exception):
    """The answer cannot be known from the code."""


# -- the table ----------------------------------------------------------------------------------------
def method_effect(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """What ``module.<method>(...)`` changes, for a method of :data:`SAME_MODULE` (None for any other
    call): ``requires_grad_(False)`` freezes, ``requires_grad_()`` unfreezes, ``apply(fn)`` initialises
    when ``fn`` is a function of this file that only writes weights, else its effect is unknown."""
    name = method_name(call)
    effect = SAME_MODULE.get(name or "")
    if effect is None:
        return None
    if effect == FREEZES:
        flag = arg(call, 0, "requires_grad")
        if flag is None or isinstance(flag.value, cst.Name) and flag.value.value == "True":
            return UNFREEZES
        if isinstance(flag.value, cst.Name) and flag.value.value == "False":
            return FREEZES
        return UNKNOWN
    if effect == INITIALISES:
        fn = arg(call, 0, "fn")
        return INITIALISES if fn is not None and initialiser(ctx, fn.value) else UNKNOWN
    return effect


def initialiser(ctx: FileContext, fn: cst.BaseExpression) -> bool:
    """Whether ``fn`` (given to ``module.apply``) only initialises: a function or method of this file
    (``weights_init``, ``self._init_weights``) or ``torch.nn.init`` function whose code does nothing
    but write parameters (no freezing, no forward pass, no collecting of modules)."""
    if any(q.startswith("torch.nn.init.") for q in ctx.names.qualified_names_at(fn)):
        return True
    name = fn.value if isinstance(fn, cst.Name) else (
        fn.attr.value if isinstance(fn, cst.Attribute) and isinstance(fn.value, cst.Name)
        and fn.value.value in ("self", "cls") else None)
    if name is None or isinstance(fn, cst.Name) and ctx.names.qualified_names_at(fn):
        return False
    found = ctx.functions().get(name) or []
    if len(found) != 1:
        return False
    known = _INITIALISERS.of(ctx)
    if found[0] not in known:
        known[found[0]] = _only_writes_weights(ctx, found[0])
    return known[found[0]]


def _only_writes_weights(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether the body of ``function`` writes weights (``torch.nn.init`` or an in-place method) and does
    nothing of :data:`_NOT_INITIALISING` (freezing, running, collecting, switching mode)."""
    writes = False
    for node in iter_nodes(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal, cst.Yield, cst.Await)):
            return False
        if isinstance(node, cst.Name) and node.value == "no_grad":
            return False
        if isinstance(node, cst.Attribute):
            attr = node.attr.value
            if attr in _NOT_INITIALISING or attr.startswith("register_"):
                return False
            if attr.endswith("_") and not attr.startswith("_"):
                writes = True  # `m.weight.data.normal_(...)`, `nn.init.zeros_(...)`
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value.endswith("_") \
                and any(q.startswith("torch.nn.init.") for q in ctx.names.qualified_names_at(node.func)):
            writes = True  # `zeros_(m.bias)` imported from `torch.nn.init`
    return writes


def initialising_read(ctx: FileContext, node: cst.Attribute) -> bool:
    """Whether the read of the layer ``node`` (``self.fc``, ``model.fc``) only initialises it: its
    ``weight``/``bias`` handed to ``torch.nn.init`` (``nn.init.xavier_uniform_(self.fc.weight)``) or
    written in place (``self.fc.bias.data.zero_()``), the layer handed to ``torch.nn.init`` or to an
    initialising function of the file (``init_layer(self.fc)``), or its ``apply`` given one."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and (
            isinstance(call.func, cst.Name) or isinstance(call.func, cst.Attribute)
            and (call.func.attr.value.endswith("_") or isinstance(call.func.value, cst.Name)
                 and call.func.value.value in ("self", "cls"))) and initialiser(ctx, call.func)
    if not isinstance(parent, cst.Attribute) or parent.value is not node:
        return False
    if parent.attr.value == "apply":
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent and method_effect(ctx, call) == INITIALISES
    if parent.attr.value == "reset_parameters":
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent and not call.args and _torch_layer(ctx, node)
    if parent.attr.value not in ("weight", "bias"):
        return False
    at: cst.CSTNode = parent
    up = ctx.parent(at)
    if isinstance(up, cst.Attribute) and up.value is at and up.attr.value == "data":
        at, up = up, ctx.parent(up)
    if isinstance(up, cst.Arg):
        call = ctx.parent(up)
        return isinstance(call, cst.Call) and call.args and call.args[0] is up \
            and any(q.startswith("torch.nn.init.") for q in ctx.names.qualified_names_at(call.func))
    if isinstance(up, cst.Attribute) and up.value is at:
        name = up.attr.value
        call = ctx.parent(up)
        return isinstance(call, cst.Call) and call.func is up and name.endswith("_") and not name.startswith("_") \
            and name not in ("requires_grad_",)
    return False


def _torch_layer(ctx: FileContext, node: cst.Attribute) -> bool:
    """Whether ``self.<attr>`` holds a layer of ``torch.nn`` wherever it is set (whose ``reset_parameters()``
    only initialises its weights)."""
    found = self_attr(ctx, node)
    if found is None:
        return False
    try:
        values = self_values(ctx, *found)
    except Unknown:
        return False
    return bool(values) and all(
        isinstance(v, cst.Call) and any(q.startswith("torch.nn.") and not q.startswith("torch.nn.functional.")
                                        for q in ctx.names.qualified_names_at(v.func))
        for v in map(strip_moves, values))


def holder(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """For a wrapper that holds a module (``DataParallel(net)``, ``torch.compile(net)``), the module."""
    if ctx.names.qualified_names_at(call.func) & HOLDERS:
        first = arg(call, 0, "module") or arg(call, 0, "model")
        return first.value if first is not None else None
    return None


def is_copy(ctx: FileContext, call: cst.Call) -> bool:
    return bool(ctx.names.qualified_names_at(call.func) & COPIES)


def same_module(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The module ``expr`` is, through the methods that return it and the wrappers that hold it:
    ``nn.DataParallel(G.cuda()).to(device)`` -> ``G``; ``D.apply(weights_init)`` -> ``D``."""
    for _ in range(_MAX_HOPS):
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and (expr.func.attr.value in SAME_MODULE):
                expr = expr.func.value
                continue
            inner = holder(ctx, expr)
            if inner is not None:
                expr = inner
                continue
        return expr
    return expr


def is_optimizer(ctx: FileContext, call: cst.Call) -> bool:
    """``torch.optim.Adam(...)`` and the other ``torch.optim`` optimizers (not schedulers, averaging)."""
    return any(q.startswith("torch.optim.") and ".lr_scheduler" not in q and ".swa_utils" not in q
               for q in ctx.names.qualified_names_at(call.func))


def parameter_sources(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> List[cst.BaseExpression]:
    """The modules whose parameters the parameter source ``expr`` (an optimizer's first argument, a
    parameter group's ``"params"``) holds: the receivers of ``.parameters()``/``.named_parameters()``
    through ``list``/``tuple``, ``filter``, ``itertools.chain``, ``+``, lists of tensors or of groups,
    comprehensions over a source and local names bound once.  :class:`Unknown` for anything else."""
    if hops > _MAX_HOPS:
        raise Unknown
    if isinstance(expr, cst.Call):
        name = method_name(expr)
        if name in ("parameters", "named_parameters") and receiver(expr) is not None:
            return [receiver(expr)]  # type: ignore[list-item]
        func = expr.func
        q = ctx.names.qualified_names_at(func)
        builtin = isinstance(func, cst.Name) and not q and ctx.names.binding_at(func, func.value) is None
        if builtin and func.value in ("list", "tuple") and len(expr.args) == 1:  # type: ignore[attr-defined]
            return parameter_sources(ctx, expr.args[0].value, hops + 1)
        if builtin and func.value == "filter" and len(expr.args) == 2:  # type: ignore[attr-defined]
            return parameter_sources(ctx, expr.args[1].value, hops + 1)
        if q & {"itertools.chain"}:
            out: List[cst.BaseExpression] = []
            for a in expr.args:
                out += parameter_sources(ctx, a.value, hops + 1)
            return out
        raise Unknown
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return parameter_sources(ctx, expr.left, hops + 1) + parameter_sources(ctx, expr.right, hops + 1)
    if isinstance(expr, (cst.List, cst.Tuple)):
        out = []
        for el in expr.elements:
            if isinstance(el, (cst.StarredElement,)):
                out += parameter_sources(ctx, el.value, hops + 1)
            elif isinstance(el.value, cst.Dict):
                out += parameter_sources(ctx, group_params(el.value), hops + 1)
            else:
                out += parameter_sources(ctx, el.value, hops + 1)
        return out
    if isinstance(expr, cst.Dict):
        return parameter_sources(ctx, group_params(expr), hops + 1)
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and expr.for_in.inner_for_in is None \
            and isinstance(expr.elt, cst.Name) and isinstance(expr.for_in.target, cst.Name) \
            and expr.elt.value == expr.for_in.target.value:
        return parameter_sources(ctx, expr.for_in.iter, hops + 1)  # `[p for p in m.parameters() if ...]`
    raise Unknown


def group_params(group: cst.Dict) -> cst.BaseExpression:
    """The ``"params"`` of a parameter group written as a dict literal."""
    found = [e.value for e in group.elements if isinstance(e, cst.DictElement)
             and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == "params"]
    if len(found) != 1 or any(not isinstance(e, cst.DictElement) for e in group.elements):
        raise Unknown
    return found[0]


def trained_receivers(ctx: FileContext) -> Set[Tuple[Optional[cst.ClassDef], str]]:
    """What the file hands an optimizer the parameters of (``Adam(self.net.parameters())``,
    ``SGD(chain(G.parameters(), D.parameters()))``): each receiver of a parameter source of a
    ``torch.optim`` construction, as ``(class, code)`` -- the class of the method for ``self.<attr>``, else
    None and the name's code.  Whatever an optimizer trains the parameters of is a module."""
    return _TRAINED.of(ctx)


def _trained(ctx: FileContext) -> Set[Tuple[Optional[cst.ClassDef], str]]:
    out: Set[Tuple[Optional[cst.ClassDef], str]] = set()
    for call in ctx.calls_in(ctx.module):
        if method_name(call) not in ("parameters", "named_parameters"):
            continue
        recv = receiver(call)
        if recv is None or not isinstance(recv, (cst.Name, cst.Attribute)):
            continue
        at: cst.CSTNode = call
        for _ in range(_MAX_HOPS):  # up through the parameter source to the optimizer's construction
            parent = ctx.parent(at)
            if parent is None or isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
            at = parent
            if isinstance(at, cst.Call) and is_optimizer(ctx, at):
                first = arg(at, 0, "params")
                if first is None:
                    break
                try:
                    if recv not in parameter_sources(ctx, first.value):
                        break
                except Unknown:
                    break
                found = self_attr(ctx, recv)
                out.add((found[0], ctx.code(recv)) if found is not None else (None, ctx.code(recv)))
                if found is None and isinstance(recv, cst.Name):
                    out.update(_kept_as(ctx, recv))
                break
    return out


def _kept_as(ctx: FileContext, name: cst.Name) -> Set[Tuple[Optional[cst.ClassDef], str]]:
    """``(class, "self.<attr>")`` for a parameter ``name`` of a method that keeps it as ``self.<attr> =
    name`` (``self.actor_critic = actor_critic`` in ``__init__``): the same object under both spellings."""
    function = parameter_owner(ctx, name)
    if function is None or not ctx.names.is_param_at(name):
        return set()
    cls = ctx.parent(ctx.parent(function)) if isinstance(ctx.parent(function), cst.IndentedBlock) else None
    first = first_param(function)
    if not isinstance(cls, cst.ClassDef) or first is None:
        return set()
    out: Set[Tuple[Optional[cst.ClassDef], str]] = set()
    for node in ctx.contents(function).assigns:
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Name) \
                and node.value.value == name.value:
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == first:
                out.add((cls, f"self.{target.attr.value}"))
    return out


#: the receivers of the optimizers' parameter sources, per file
_TRAINED: "Fact[Set[Tuple[Optional[cst.ClassDef], str]]]" = Fact("effects.trained_receivers", _trained)


def trained_by_optimizer(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether an optimizer of the file is given the parameters of ``expr`` (a name or an attribute spelled
    the same; ``self.<attr>`` in a method of the same class): ``expr`` holds a module."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    found = self_attr(ctx, expr)
    return ((found[0] if found is not None else None), ctx.code(expr)) in trained_receivers(ctx)


def added_groups(ctx: FileContext, optimizer: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The parameter sources ``opt.add_param_group({"params": ...})`` adds to the optimizer named by the
    Name or ``self.<attr>`` ``optimizer`` anywhere in the file (:class:`Unknown` when a group is not a
    dict literal)."""
    out = []
    spelled = ctx.code(optimizer)
    for call in _ADDED.of(ctx):
        recv = receiver(call)
        if recv is None or ctx.code(recv) != spelled:
            continue
        group = arg(call, 0, "param_group")
        if group is None or not isinstance(group.value, cst.Dict):
            raise Unknown
        out.append(group_params(group.value))
    return out


#: loss classes that hold a buffer when given a tensor (``weight=``, ``pos_weight=``)
_LOSS_BUFFERS = ("weight", "pos_weight")


#: ``torch.nn`` layers without parameters or buffers whose work depends on the training mode
_PARAMETER_FREE_MODE_LAYERS = DROPOUT_LAYERS


def parameter_free(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Whether the module construction ``value`` holds no parameter: :func:`holds_nothing`, or a dropout."""
    core = same_module(ctx, value)
    return holds_nothing(ctx, core) or isinstance(core, cst.Call) and any(
        q.startswith("torch.nn.") and q.count(".") == 2 and q.rsplit(".", 1)[-1] in _PARAMETER_FREE_MODE_LAYERS
        for q in ctx.names.qualified_names_at(core.func))


def holds_nothing(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Whether the module construction ``value`` holds no parameter and no buffer, and computes the same
    in training and evaluation mode: a ``torch.nn`` loss (``nn.MSELoss()``, without a ``weight``
    tensor), an activation, a reshaping, pooling or padding layer, or a ``Sequential`` of those.  Its
    state dict is empty: nothing of it is trained, saved or moved."""
    core = same_module(ctx, value)
    if not isinstance(core, cst.Call):
        return False
    for q in ctx.names.qualified_names_at(core.func):
        if not q.startswith("torch.nn.") or q.startswith(("torch.nn.functional.", "torch.nn.init.")):
            continue
        last = q.rsplit(".", 1)[-1]
        if q.count(".") == 2 and last.endswith("Loss"):
            return not any(a.keyword is not None and a.keyword.value in _LOSS_BUFFERS
                           and not (isinstance(a.value, cst.Name) and a.value.value == "None") for a in core.args)
        if q.count(".") == 2 and last in _STATELESS_LAYERS:
            return True
        if q in ("torch.nn.Sequential", "torch.nn.ModuleList"):
            return bool(core.args) and all(not a.star and isinstance(a.value, cst.Call)
                                           and holds_nothing(ctx, a.value) for a in core.args)
    return _empty_module_class(ctx, core)


#: what a module class of the project may set on ``self`` and still hold nothing: numbers, strings, flags
_PLAIN_SETTINGS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def _empty_module_class(ctx: FileContext, core: cst.Call) -> bool:
    """``Identity()`` of a project class built directly on ``nn.Module`` that sets nothing on itself but
    numbers, strings and flags (:func:`roles.setting_value`) and layers that hold nothing, registers nothing
    and never reads ``self.training``
    (``class Identity(nn.Module): def forward(self, x): return x``)."""
    found = _direct_module_class(ctx, core)
    if found is None:
        return False
    octx, cls = found
    for node in iter_nodes(cls):
        if isinstance(node, cst.Attribute) and node.attr.value in _REGISTERING | {"training", "__setattr__"}:
            return False
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(isinstance(t, (cst.Attribute, cst.Subscript, cst.Tuple, cst.List)) for t in targets) and not (
                    isinstance(node, cst.Assign) and isinstance(node.value, _PLAIN_SETTINGS)
                    or isinstance(node.value, cst.Name) and setting_value(octx, node.value)
                    or isinstance(node, cst.Assign) and len(targets) == 1 and isinstance(targets[0], cst.Attribute)
                    and isinstance(node.value, cst.Call) and _stateless_layer(octx, node.value)):
                return False  # `self.fc = nn.Linear(...)`, `self.w = nn.Parameter(...)`: something held
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr", "vars"):
            return False
    return True


def _direct_module_class(ctx: FileContext, core: cst.Call) -> Optional[Tuple[FileContext, cst.ClassDef]]:
    """The undecorated project class ``core`` builds when it derives from ``nn.Module`` directly (and from
    nothing else): what it holds is only what its own body sets."""
    found = definition_of(ctx, core.func)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return None
    octx, cls = found
    if not cls.bases or cls.decorators or any(
            not octx.names.qualified_names_at(b.value) & {"torch.nn.Module", "torch.nn.modules.module.Module"}
            for b in cls.bases):
        return None
    return octx, cls


def _stateless_layer(ctx: FileContext, call: cst.Call) -> bool:
    """A ``torch.nn`` layer that holds nothing and computes the same in both modes (``nn.AvgPool1d(k)``,
    ``nn.ReLU()``): kept as an attribute, it gives its module nothing to hold."""
    return any(q.startswith("torch.nn.") and q.count(".") == 2 and q.rsplit(".", 1)[-1] in _STATELESS_LAYERS
               for q in ctx.names.qualified_names_at(call.func))


def holds_only_buffers(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """Whether the construction ``value`` is of a project class built directly on ``nn.Module`` that holds
    no parameter and no submodule, only buffers it registers (``self.register_buffer("pe", pe)``: a fixed
    sinusoidal table), and never reads ``self.training``: it computes the same in both modes and nothing
    of it is trained."""
    core = same_module(ctx, value)
    if not isinstance(core, cst.Call):
        return False
    found = _direct_module_class(ctx, core)
    if found is None:
        return False
    octx, cls = found
    buffers = False
    for node in iter_nodes(cls):
        if isinstance(node, cst.Attribute) and node.attr.value in (_REGISTERING - {"register_buffer"}) | {
                "training", "__setattr__"}:
            return False
        if isinstance(node, cst.Attribute) and node.attr.value == "register_buffer":
            buffers = True
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, (cst.Tuple, cst.List)) or isinstance(t, (cst.Attribute, cst.Subscript)) and \
                        dotted_name(t.value if isinstance(t, cst.Attribute) else t) == "self" and not (
                        isinstance(node, cst.Assign) and isinstance(node.value, _PLAIN_SETTINGS)):
                    return False  # `self.fc = nn.Linear(...)`: something held besides the buffers
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr", "vars"):
            return False
    return buffers


#: methods that give a module something to hold
_REGISTERING = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})


#: library packages whose calls build data, never an ``nn.Module`` (frames, arrays, text, paths)
DATA_LIBRARIES = ("pandas.", "numpy.", "PIL.", "cv2.", "json.", "csv.", "re.", "os.", "pathlib.", "math.",
                   "datetime.", "scipy.", "sklearn.", "matplotlib.", "h5py.", "yaml.", "string.", "argparse.",
                   "logging.", "polars.")
#: ``torch`` functions that build tensors (a value that is no module)
_TENSOR_FACTORIES = frozenset({"tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand",
                               "randn", "randint", "randperm", "arange", "linspace", "logspace", "eye", "cat",
                               "stack", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                               "randn_like", "where", "bernoulli", "multinomial", "normal", "Tensor",
                               "FloatTensor", "LongTensor", "BoolTensor", "ByteTensor", "IntTensor", "DoubleTensor"})
#: calls that may return any object, a module among them
_ANY_OBJECT = ("pickle.", "joblib.", "dill.", "cloudpickle.", "copy.", "torch.load", "torch.jit.", "torch.hub.")


def records_nothing(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether an instance of the project class ``cls`` holds nothing autograd records: built directly on
    ``nn.Module`` (or on nothing), nothing in it asks for gradients or registers a parameter
    (``requires_grad``, ``nn.Parameter``), and every value its methods store on ``self`` is plain data: a
    literal, a torch tensor factory, or arithmetic and tensor methods over its own attributes, the method's
    parameters and literals (a parameter stored as it is may be a module: not plain).  A model written with
    plain tensors and hand-written gradients (``self.w = torch.zeros(d, 1)``, ``self.w = self.w - lr *
    self.dw``): its forward pass builds no graph."""
    for base in cls.bases:
        names = ctx.names.qualified_names_at(base.value)
        if dotted_name(base.value) != "object" and not names & {"torch.nn.Module", "torch.nn.modules.module.Module"}:
            return False
    if cls.keywords:
        return False
    methods = [s for s in class_body(cls) if isinstance(s, cst.FunctionDef)]
    for node in iter_nodes(cls):
        if isinstance(node, cst.ClassDef) and node is not cls:
            return False
        if isinstance(node, cst.Name) and node.value in _RECORDING_NAMES or \
                isinstance(node, cst.Attribute) and node.attr.value in _RECORDING_NAMES or \
                isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in _RECORDING_NAMES:
            return False  # (`torch.zeros(d, requires_grad=True)`)
    for method in methods:
        params = method.params.params
        me = params[0].name.value if params else None
        given = {p.name.value for p in [*method.params.posonly_params, *params, *method.params.kwonly_params]} - {me}
        for node in iter_nodes(method.body):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                stored = [t for t in targets if not isinstance(t, cst.Name)]
                if not stored:
                    continue
                if any(not _own_slot(t, me) for t in stored):
                    return False  # `a, self.w = ...`, another object's attribute
                if node.value is None or not _plain_data(ctx, node.value, me, given, bare=True):
                    return False
    return True


#: the names that make a tensor or a module hold something autograd records
_RECORDING_NAMES = frozenset({"requires_grad", "requires_grad_", "Parameter", "register_parameter",
                              "ParameterList", "ParameterDict", "add_module", "register_module", "setattr"})


def _own_slot(target: cst.BaseExpression, me: Optional[str]) -> bool:
    """``self.w`` or an element of it (``self.grads["dw"]``)."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me


def _plain_data(ctx: FileContext, value: cst.BaseExpression, me: Optional[str], given: Set[str],
                bare: bool = False) -> bool:
    """A value :func:`records_nothing` allows on ``self``: see there (``bare``: the value as stored, where a
    parameter of the method as it is may be any object)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None") or not bare and value.value in given
    if isinstance(value, cst.Attribute):
        return isinstance(value.value, cst.Name) and value.value.value == me or \
            _plain_data(ctx, value.value, me, given)  # `self.w`, `(yhat - y).T`
    if isinstance(value, cst.BinaryOperation):
        return _plain_data(ctx, value.left, me, given) and _plain_data(ctx, value.right, me, given)
    if isinstance(value, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _plain_data(ctx, e.key, me, given)
                   and _plain_data(ctx, e.value, me, given, bare) for e in value.elements)
    if isinstance(value, (cst.List, cst.Tuple)):
        return all(isinstance(e, cst.Element) and _plain_data(ctx, e.value, me, given, bare) for e in value.elements)
    if isinstance(value, cst.UnaryOperation):
        return _plain_data(ctx, value.expression, me, given)
    if isinstance(value, cst.Subscript):
        return _plain_data(ctx, value.value, me, given, bare)
    if isinstance(value, cst.Call):
        if any(a.star or not (dotted_name(a.value) is not None or _plain_data(ctx, a.value, me, given))
               for a in value.args):
            return False  # (an argument a name gives, `torch.zeros(dim, dtype=torch.float)`, `.to(device)`, is read, not stored)
        names = ctx.names.qualified_names_at(value.func)
        if names:  # a torch function of plain data (`torch.zeros(d, 1)`, `torch.sigmoid(self.z)`) is plain data
            return any(n.startswith("torch.") and n.count(".") == 1 and not n.startswith(_ANY_OBJECT)
                       or n.startswith("torch.nn.functional.") for n in names)
        func = value.func
        return isinstance(func, cst.Attribute) and _plain_data(ctx, func.value, me, given)  # `x.sum(1)`, `self.w.t()`
    return False


def data_value(ctx: FileContext, value: cst.BaseExpression, hops: int = 0) -> bool:
    """Whether ``value`` is built by a library call that returns data, never a module: a pandas frame
    (``pd.read_csv(...)``), an array, a tensor (``torch.zeros(...)``), a path or a parsed text, or a
    method of such a value (``df.dropna()``, ``x.view(-1)``)."""
    if hops > 4 or not isinstance(value, cst.Call):
        return False
    q = ctx.names.qualified_names_at(value.func)
    if q:
        if any(n.startswith(_ANY_OBJECT) for n in q):
            return False
        if any(n.startswith(DATA_LIBRARIES) for n in q):
            return True
        return any(n.startswith("torch.") and n.count(".") == 1 and n.split(".")[1] in _TENSOR_FACTORIES
                   for n in q)
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value not in SAME_MODULE:
        inner = func.value
        if isinstance(inner, cst.Call):
            return data_value(ctx, inner, hops + 1)
        if isinstance(inner, cst.Name):
            return data_name(ctx, inner, hops + 1, value)
    return False


def data_name(ctx: FileContext, name: cst.Name, hops: int = 0,
              reading: Optional[cst.BaseExpression] = None) -> bool:
    """Whether every binding of the name ``name`` is data built by a library call (:func:`data_value`:
    ``df = pd.read_csv(...)``, then ``df = df.dropna()``); ``reading``, the value being judged that reads
    ``name`` (counted as data)."""
    b = ctx.names.binding_at(name, name.value)
    return b is not None and not b.imports and bool(b.values) and all(
        v is not None and (v is reading or data_value(ctx, v, hops)) for v in b.values)


# -- values held by objects ---------------------------------------------------------------------------
def _keeps(ctx: FileContext, value: cst.BaseExpression, same: cst.BaseExpression) -> bool:
    """Whether ``value`` is the object ``same`` (a Name, or ``self.<attr>``) again: ``D.cuda()``,
    ``nn.DataParallel(D)``, ``D.apply(init)``."""
    core = same_module(ctx, value)
    if isinstance(core, cst.Name) and isinstance(same, cst.Name):
        return core.value == same.value
    return isinstance(core, cst.Attribute) and isinstance(same, cst.Attribute) \
        and ctx.code(core) == ctx.code(same)


def held_module(ctx: FileContext, name: cst.Name) -> cst.Call:
    """The one module construction the name ``name`` holds wherever it is read, where every other
    binding of it rebinds the same module (``G = G.cuda()``, ``D = nn.DataParallel(D)``, under an
    ``if`` too): :class:`Unknown` when it is bound to anything else, to two constructions, to an
    unknown value (a parameter, a loop target) or changed in place."""
    built = held_modules(ctx, name)
    if len(built) != 1:
        raise Unknown
    return built[0]


def held_modules(ctx: FileContext, name: cst.Name) -> List[cst.Call]:
    """Every module construction the name ``name`` may hold where it is read, when each of its bindings
    builds a module or rebinds one it holds (``G = G.cuda()``): one for :func:`held_module`'s case, several
    where it is built again (a notebook that builds the model a second time, moved to the device, read in
    a function that runs after both).  :class:`Unknown` when a binding is anything else, unknown, or the
    name is changed in place."""
    b = ctx.names.binding_at(name, name.value)
    if b is None or b.imports or b.changed or not b.values:
        raise Unknown
    values = list(b.values)
    if any(v is None for v in values):
        values = [v for v in values if v is not None] + _literal_elements(ctx, name, b, len(values) - len(
            [v for v in values if v is not None]))
    built = []
    for value in values:
        if value is None:
            raise Unknown
        if _keeps(ctx, value, name):
            continue
        core = same_module(ctx, value)
        if not isinstance(core, cst.Call) or not is_module_value(ctx, core):
            raise Unknown
        built.append(core)
    if not built or len(built) > 4:
        raise Unknown
    return built


def unpacked(ctx: FileContext, name: cst.Name) -> Optional[Tuple[cst.BaseExpression, bool]]:
    """For a name bound as one element of an unpacked assignment that reaches it on every path
    (``out, mu, logvar = model(x)``; ``G, D = Generator(), Discriminator()``): ``(value, exact)``, the
    element of a tuple or list literal at the name's position (``exact``), else the whole value the
    element is taken from.  None when the name is not bound so (a plain assignment, a loop target, a
    parameter) or when a starred element or a read of a target makes the element unknown."""
    function = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda))
    if isinstance(function, cst.Lambda):
        return None
    found = ctx.names.reaching_assignment(name.value, name, function)
    if found is None or found[1] is None:
        return None
    assign, index = found
    value = assign.value
    if isinstance(value, (cst.Tuple, cst.List)):
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        elements = value.elements
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(elements) \
                or any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        others = {n.value for i, e in enumerate(target.elements) if i != index
                  for n in iter_nodes(e) if isinstance(n, cst.Name)}
        if any(isinstance(n, cst.Name) and n.value in others for n in iter_nodes(elements[index].value)):
            return None  # `a, b = b, a`: the element reads another target, bound before it is read
        return elements[index].value, True  # `x, y = Variable(x), Variable(y)`: each from its own old value
    return value, False


def unpacked_target(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """For a name that is an element of a flat tuple target unpacking a tuple literal
    (``G, D = Generator(), Discriminator()``), the element of the value bound to it; else None."""
    element = ctx.parent(name)
    target = ctx.parent(element) if isinstance(element, cst.Element) else None
    holder = ctx.parent(target) if isinstance(target, (cst.Tuple, cst.List)) else None
    assign = ctx.parent(holder) if isinstance(holder, cst.AssignTarget) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
            or not isinstance(assign.value, (cst.Tuple, cst.List)):
        return None
    elements = assign.value.elements
    if len(elements) != len(target.elements) or any(isinstance(e, cst.StarredElement) for e in elements):  # type: ignore[union-attr]
        return None
    index = next(i for i, e in enumerate(target.elements) if e is element)  # type: ignore[union-attr]
    return elements[index].value


def _literal_elements(ctx: FileContext, name: cst.Name, b, unknown: int) -> List[cst.BaseExpression]:
    """The ``unknown`` values of the binding ``b`` of ``name`` that are not recorded, when each is the
    element of a tuple literal the name is unpacked from (``G, D = Generator(), Discriminator()``);
    :class:`Unknown` when any is something else (a loop target, a parameter, an unpacked call)."""
    scope = ctx.names.scope_at(name)
    while scope is not None and scope.bindings.get(name.value) is not b:
        scope = scope.parent
    found = scope.assigns.get(name.value) if scope is not None else None
    entries = [(a, i) for a, i in (found.entries if found is not None else ()) if i is not None]
    if len(entries) != unknown:
        raise Unknown
    out = []
    for assign, index in entries:
        value = assign.value
        target = assign.targets[0].target
        if not isinstance(value, (cst.Tuple, cst.List)) or not isinstance(target, (cst.Tuple, cst.List)) \
                or len(target.elements) != len(value.elements) \
                or any(isinstance(e, cst.StarredElement) for e in value.elements) \
                or any(isinstance(n, cst.Name) and n.value == name.value for n in iter_nodes(value)):
            raise Unknown
        out.append(value.elements[index].value)
    return out


def literal_key(expr: cst.BaseExpression) -> Optional[Tuple[cst.Name, str]]:
    """``nets["G"]``: the dict name and the literal key."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            key = index.value.evaluated_value
            if isinstance(key, str):
                return expr.value, key
    return None


def keyed_value(ctx: FileContext, expr: cst.Subscript) -> cst.BaseExpression:
    """The value at a literal key of a dict the name is bound to once, as a literal keyed by literal
    strings, never written to by key (``nets = {"G": G, "D": D}``; ``nets["D"]``)."""
    found = literal_key(expr)
    if found is None:
        raise Unknown
    name, key = found
    b = ctx.names.binding_at(name, name.value)
    if b is None or b.imports or b.changed or len(b.values) != 1 or not isinstance(b.values[0], cst.Dict):
        raise Unknown
    for use in ctx.names_in(ctx.module, name.value):
        parent = ctx.parent(use)
        if isinstance(parent, cst.Subscript) and parent.value is use:
            holder_ = ctx.parent(parent)
            if isinstance(holder_, (cst.AssignTarget, cst.AugAssign, cst.Del)):
                raise Unknown
        elif isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in (
                "update", "setdefault", "pop", "__setitem__"):
            raise Unknown
    values = []
    for el in b.values[0].elements:
        if not isinstance(el, cst.DictElement) or not isinstance(el.key, cst.SimpleString):
            raise Unknown
        if el.key.evaluated_value == key:
            values.append(el.value)
    if len(values) != 1:
        raise Unknown
    return values[0]


def _init_methods(cls: cst.ClassDef) -> Tuple[Dict[str, cst.FunctionDef], List[cst.FunctionDef]]:
    """The methods of ``cls`` by name, and ``__init__`` with the methods it calls on ``self`` (one
    level: ``self.build()``, ``self._setup_optimizers()``)."""
    methods = {s.name.value: s for s in class_body(cls) if isinstance(s, cst.FunctionDef)}
    init = methods.get("__init__")
    if init is None:
        return methods, []
    out = [init]
    me = first_param(init)
    for node in iter_nodes(init.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == me:
            called = methods.get(node.func.attr.value)
            if called is not None and called not in out and not called.decorators:
                out.append(called)
    return methods, out


def first_param(function: cst.FunctionDef) -> Optional[str]:
    """The name of a function's first parameter (a method's ``self``), or None."""
    params = list(function.params.posonly_params) + list(function.params.params)
    return params[0].name.value if params else None


def self_values(ctx: FileContext, cls: cst.ClassDef, attr: str) -> List[cst.BaseExpression]:
    """The values assigned to ``self.<attr>`` in the class ``cls``, when every assignment of it in the
    class is a plain one in ``__init__`` or a method ``__init__`` calls, other than those that rebind
    the same module (``self.G = self.G.cuda()``); :class:`Unknown` otherwise (an assignment in another
    method, an augmented or unpacked assignment, ``setattr``)."""
    known = _SELF_VALUES.of(ctx)
    key = (cls, attr)
    if key not in known:
        try:
            known[key] = _self_values(ctx, cls, attr)
        except Unknown as exc:
            known[key] = exc
    found = known[key]
    if isinstance(found, Unknown):
        raise Unknown
    return list(found)  # type: ignore[call-overload]


def _self_values(ctx: FileContext, cls: cst.ClassDef, attr: str) -> List[cst.BaseExpression]:
    methods, setup = _init_methods(cls)
    out: List[cst.BaseExpression] = []
    for node in iter_nodes(cls):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr",
                                                                                                "delattr"):
            raise Unknown
        if not isinstance(node, cst.Attribute) or node.attr.value != attr:
            continue
        parent = ctx.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is node \
                or unpacked_into(ctx, node):
            function = ctx.enclosing(node, (cst.FunctionDef, cst.Lambda))
            if not isinstance(function, cst.FunctionDef) or function not in setup \
                    or not isinstance(node.value, cst.Name) or node.value.value != first_param(function):
                raise Unknown
            assign = ctx.parent(parent)
            if not isinstance(parent, cst.AssignTarget) or not isinstance(assign, cst.Assign) \
                    or len(assign.targets) != 1:
                raise Unknown
            if _keeps(ctx, assign.value, node):
                continue
            out.append(assign.value)
    return out


def unpacked_into(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``a, self.G = ...`` or ``for self.G in ...``: ``node`` is bound as part of a target."""
    child, parent = node, ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        child, parent = parent, ctx.parent(parent)
    if child is node:
        return isinstance(parent, (cst.For, cst.CompFor, cst.WithItem, cst.AsName)) and getattr(
            parent, "target", getattr(parent, "name", None)) is node
    return isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor, cst.AsName)) and getattr(
        parent, "target", getattr(parent, "name", None)) is child


def self_attr(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[cst.ClassDef, str]]:
    """``self.<attr>`` read in a method of a top-level or nested class: the class and the attribute."""
    if not isinstance(expr, cst.Attribute) or not isinstance(expr.value, cst.Name):
        return None
    function = ctx.enclosing(expr, (cst.FunctionDef, cst.Lambda))
    if not isinstance(function, cst.FunctionDef) or first_param(function) != expr.value.value \
            or function.decorators and not all(isinstance(d.decorator, cst.Name) and d.decorator.value == "property"
                                               for d in function.decorators):
        return None
    cls = ctx.parent(ctx.parent(function)) if isinstance(ctx.parent(function), cst.IndentedBlock) else None
    if not isinstance(cls, cst.ClassDef):
        return None
    if ctx.names.reaching_assignment(expr.value.value, expr, function) is not None:
        return None  # `self` rebound
    return cls, expr.attr.value


def self_module(ctx: FileContext, expr: cst.Attribute) -> cst.BaseExpression:
    """The identity of the module ``self.<attr>`` holds in every method of its class: its one
    construction (``self.D = Discriminator().to(device)``; the first, when it is built on each path of an
    ``if``), or the one value it is set to from ``__init__``'s arguments (``self.G = generator``: a node
    standing for that argument); :class:`Unknown` when the attribute is set more than once to anything
    but constructions, outside the constructor, or from another attribute."""
    found = self_attr(ctx, expr)
    if found is None:
        raise Unknown
    cls, attr = found
    values = self_values(ctx, cls, attr)
    if len(values) != 1:
        cores = [same_module(ctx, v) for v in values]
        if cores and all(isinstance(c, cst.Call) and is_module_value(ctx, c) for c in cores):
            return cores[0]  # built on each path of an `if` (its sizes picked by a setting): one module
        raise Unknown
    core = same_module(ctx, values[0])
    if isinstance(core, cst.Call) and is_module_value(ctx, core):
        return core
    if isinstance(core, cst.Name):
        function = ctx.enclosing(core, cst.FunctionDef)
        if isinstance(function, cst.FunctionDef) and ctx.names.reaching_assignment(core.value, core, function) is None:
            params = function.params
            for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
                if p.name.value == core.value and p.default is None:
                    return p  # the argument the constructor is given
        try:
            return held_module(ctx, core)
        except Unknown:
            pass
    raise Unknown


# -- the role of a value: does it hold a model ------------------------------------------------------------
#: how strongly the code says a value holds a model (:func:`model_evidence`): built as one, annotated as
#: one, or trained as one; provably no ``nn.Module``; or used as one (its methods, its mode)
STRONG = "strong"
NO = "no"
WEAK = "weak"


def holds_model(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` holds a model (not a loss) by what the code does with it: built as one or annotated
    with a module class on every assignment (:func:`roles.is_model`), a value whose parameters an
    optimizer of the file is given (``self.net`` in ``Adam(self.net.parameters())``), the value a name is
    assigned where it is read, the element of a tuple of constructions (``G, D = Generator(),
    Discriminator()``), or the one construction a name rebound to the same module holds (``D = D.cuda()``
    under an ``if``).  The strong evidence of :func:`model_evidence`."""
    if is_model(ctx, expr) is True or trained_by_optimizer(ctx, expr):
        return True  # built as a model, or an optimizer is given its parameters
    if isinstance(expr, cst.Name):
        value = ctx.names.value_of(expr)
        if value is None:
            found = unpacked(ctx, expr)
            value = found[0] if found is not None and found[1] else None
        if value is None or isinstance(same_module(ctx, value), cst.Name):
            try:
                value = held_module(ctx, expr)
            except Unknown:
                return False
        return is_module_value(ctx, strip_moves(value)) and not _loss_layer(ctx, value)
    return False


def _loss_layer(ctx: FileContext, value: cst.BaseExpression) -> bool:
    core = strip_moves(value)
    return isinstance(core, cst.Call) and any(q.endswith("Loss") for q in ctx.names.qualified_names_at(core.func))


def model_evidence(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """The one answer to "does ``expr`` hold a model", with how strong the evidence is: :data:`STRONG`
    (built, annotated or trained as one: :func:`holds_model`), :data:`NO` (provably no ``nn.Module``:
    every value an instance of a plain project class, or every caller in the file passes one:
    :func:`roles.not_a_module`), :data:`WEAK` (used as one, nothing above: a module method called on
    it, its mode switched, callers passing modules; :func:`roles.holds_module`), else None.  Its name
    decides nothing.  Ask for the strength a rule needs: a finding that must be sure reads only
    :data:`STRONG`.  After the walk (before it, the weak evidence is not known yet)."""
    if holds_model(ctx, expr):
        return STRONG
    if isinstance(expr, (cst.Name, cst.Attribute)) and not_a_module(ctx, expr):
        return NO
    if isinstance(expr, (cst.Name, cst.Attribute)) and holds_module(ctx, expr):
        return WEAK
    return None


def held_instance_class(ctx: FileContext, name: cst.Name) -> cst.ClassDef:
    """The class of this file whose one instance the name ``name`` holds wherever it is read
    (``model = GAN().to(device)``; rebound to its own moves too); :class:`Unknown` otherwise."""
    core = held_module(ctx, name)
    found = definition_of(ctx, core.func)
    if found is None or found[0] is not ctx or not isinstance(found[1], cst.ClassDef):
        raise Unknown
    return found[1]


def member_module(ctx: FileContext, expr: cst.Attribute) -> cst.Call:
    """The module construction ``obj.<attr>`` holds, for ``obj`` a name holding an instance of a class
    of this file whose constructor sets ``self.<attr>`` once to a module construction
    (``model.generator`` with ``self.generator = nn.Sequential(...)`` in ``GAN.__init__``)."""
    if not isinstance(expr.value, cst.Name):
        raise Unknown
    cls = held_instance_class(ctx, expr.value)
    values = self_values(ctx, cls, expr.attr.value)
    if len(values) != 1:
        raise Unknown
    core = same_module(ctx, values[0])
    if not isinstance(core, cst.Call) or not is_module_value(ctx, core):
        raise Unknown
    return core


def self_optimizer(ctx: FileContext, expr: cst.Attribute) -> cst.Call:
    """The one optimizer construction ``self.<attr>`` holds (set once in the constructor or a method it
    calls)."""
    found = self_attr(ctx, expr)
    if found is None:
        raise Unknown
    values = self_values(ctx, *found)
    if len(values) != 1 or not isinstance(values[0], cst.Call) or not is_optimizer(ctx, values[0]):
        raise Unknown
    return values[0]


def self_optimizers(ctx: FileContext, expr: cst.Attribute) -> List[cst.Call]:
    """Every optimizer construction ``self.<attr>`` may hold: the values it is set to in the constructor
    (or a method it calls), one on each path of an ``if`` (``if gda: self.optimizer = SGD(...)`` /
    ``else: self.optimizer = Adam(...)``); :class:`Unknown` when one of them is no optimizer construction
    or the attribute is set anywhere else."""
    found = self_attr(ctx, expr)
    if found is None:
        raise Unknown
    values = self_values(ctx, *found)
    if not values or not all(isinstance(v, cst.Call) and is_optimizer(ctx, v) for v in values):
        raise Unknown
    return values  # type: ignore[return-value]


#: methods of the logging APIs experiments write to (TensorBoard's ``SummaryWriter.add_*``, which Lightning
#: exposes as ``logger.experiment``; Weights & Biases' and MLflow's ``log_*``): they record the values they
#: are given, take no gradient of them and change nothing in them
LOGGING_METHODS = frozenset({
    "add_scalar", "add_scalars", "add_image", "add_images", "add_figure", "add_histogram", "add_text",
    "add_embedding", "add_pr_curve", "add_video", "add_audio", "add_mesh", "log_image", "log_images",
    "log_metric", "log_metrics", "log_table",
})


__all__ = ["first_param", "SAME_MODULE", "LOGGING_METHODS", "HOLDERS", "COPIES", "MOVES", "CASTS", "MODE", "FREEZES", "UNFREEZES", "INITIALISES",
           "SHARES", "UNKNOWN", "Unknown", "method_effect", "initialiser", "holder", "is_copy", "same_module",
           "is_optimizer", "DATA_LIBRARIES", "parameter_sources", "holds_nothing", "holds_only_buffers", "parameter_free", "data_value", "data_name", "initialising_read", "group_params", "added_groups", "held_module", "held_modules", "unpacked_target", "held_instance_class", "member_module", "unpacked", "trained_receivers", "trained_by_optimizer", "literal_key",
           "keyed_value", "records_nothing", "self_values", "self_attr", "self_module", "self_optimizer", "self_optimizers", "unpacked_into", "STRONG", "NO", "WEAK", "holds_model",
           "model_evidence"]
