"""Roles by construction and class summaries of the program model.

Roles come from how a value is built, never from its name: ``cnn = CNN()`` is a model because ``CNN``
derives from ``nn.Module``, ``clf = nn.Sequential(...)`` because ``nn.Sequential`` is a module, and a
variable that is only ever a parameter stays unknown (:func:`is_module_value`, :func:`module_class`,
:func:`is_model`, :func:`not_a_module`, :func:`plain_class`).

A **model class** is summarised once per file (:class:`ModelSummary`): whether it is an ``nn.Module``,
what ``forward`` returns (``"softmax"``, ``"log_softmax"``, ``"sigmoid"`` or unknown, per tuple element:
:func:`output_kind`, :func:`module_output`, :func:`built_output`) and whether some submodule behaves
differently in train and eval mode (:func:`layer_mode_dependent`, :func:`mode_layer_of`; a whole
model's verdict, through names, callers and factories, is the training family's ``model_mode``).

Definitions and the call graph are :mod:`torchlint.analysis.definitions`.  Queries are made once the
file's walk is done (``leave_Module``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from torchlint.analysis.context import (
    RUN_METHODS,
    Fact,
    FileContext,
    arg,
    assignment_targets,
    canonical_keyword,
    keyword_arg,
    method_name,
    run_object,
)
from torchlint.analysis.definitions import (
    MAX_DEPTH,
    arguments_for_param,
    base_classes,
    built_values,
    callers_arguments,
    class_body,
    defines_method,
    definition_of,
    find_method,
    function_returns,
    held_values,
    instance_class,
    walked_by_loop,
    list_elements,
    method_of,
    returned_argument,
    parameter_owner,
    position,
    returned_values,
    star_imported_names,
    strip_moves,
)
from torchlint.analysis.mode_layers import (
    CONTAINER_CLASSES,
    CONTAINERS,
    combine as combine_modes,
    container_elements,
    PARAMETER_FREE_LAYERS,
    layer_call_mode,
    part_call_mode,
)
from torchlint.analysis.names import dotted_name
from torchlint.analysis.walk import iter_nodes
from torchlint.analysis.ops import (
    LOG_SOFTMAX_FUNCS,
    LOG_SOFTMAX_LAYERS,
    SEQUENTIAL,
    SIGMOID_FUNCS,
    SIGMOID_LAYERS,
    SOFTMAX_FUNCS,
    SOFTMAX_LAYERS,
    idle_cap,
)

SOFTMAX = "softmax"
LOG_SOFTMAX = "log_softmax"
SIGMOID = "sigmoid"
Kind = Union[None, str, Tuple]  # a kind, or a tuple of kinds for a tuple output

_KIND_OF_FUNC = [(SOFTMAX_FUNCS, SOFTMAX), (LOG_SOFTMAX_FUNCS, LOG_SOFTMAX), (SIGMOID_FUNCS, SIGMOID)]
_KIND_OF_LAYER = [(SOFTMAX_LAYERS, SOFTMAX), (LOG_SOFTMAX_LAYERS, LOG_SOFTMAX), (SIGMOID_LAYERS, SIGMOID)]
_KIND_OF_METHOD = {"softmax": SOFTMAX, "log_softmax": LOG_SOFTMAX, "sigmoid": SIGMOID}

#: modules whose classes and factories build ``nn.Module`` instances
_MODULE_FACTORIES = (
    "torch.nn.",
    "torchvision.models.",
    "torchaudio.models.",
    "timm.models.",
)
_MODULE_CALLS = frozenset({"timm.create_model", "torch.hub.load"})
#: capitalised ``torch.nn`` names that build tensors or namespaces, not modules
_NOT_MODULES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                          "torch.nn.parameter.Buffer", "torch.nn.UninitializedParameter",
                          "torch.nn.UninitializedBuffer", "torch.nn.parameter.UninitializedParameter",
                          "torch.nn.parameter.UninitializedBuffer", "torch.nn.init", "torch.nn.utils"})
_MODULE_BASES = (
    "torch.nn.Module",
    "torch.nn.modules.module.Module",
    "torch.nn.Sequential",
    "pytorch_lightning.LightningModule",
    "lightning.LightningModule",
    "lightning.pytorch.LightningModule",
    "transformers.PreTrainedModel",
)


#: the summaries of the model classes asked about, by class (a class being summarised maps to a stand-in)
_SUMMARIES: "Fact[Dict[cst.ClassDef, ModelSummary]]" = Fact("roles.summaries", lambda ctx: {})
#: class -> whether it derives from ``nn.Module``
_MODULE_CLASSES: Fact[Dict[cst.ClassDef, bool]] = Fact("roles.module_classes", lambda ctx: {})


# -- model classes ---------------------------------------------------------------------------------
@dataclass
class ModelSummary:
    name: str
    is_module: bool
    output: Kind = None
    #: True: a submodule (or the class itself) behaves differently in train and eval mode; False: none
    #: does, provably; None: unknown
    mode_dependent: Optional[bool] = None
    #: an instance holds the modules it is built from: a subclass of a torch container (``nn.Sequential``)
    #: that has no ``__init__`` of its own, or one that hands its arguments on to the container's (its
    #: mode then depends on each construction: unknown by the class alone)
    holds_given: bool = False


def _summaries(ctx: FileContext) -> Dict[cst.ClassDef, ModelSummary]:
    return _SUMMARIES.of(ctx)


def class_summary(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> ModelSummary:
    table = _summaries(ctx)
    summary = table.get(cls)
    if summary is not None:
        return summary
    if ctx.names.scope_of(cls) is None:  # asked during the walk, before the class was read: unknown
        return ModelSummary(cls.name.value, module_class(ctx, cls, depth))
    table[cls] = ModelSummary(cls.name.value, False)  # a class reaching itself again sees "not a module"
    summary = _summarise(ctx, cls, depth)
    table[cls] = summary
    return summary


def _summarise(ctx: FileContext, cls: cst.ClassDef, depth: int) -> ModelSummary:
    is_module = False
    inherited: Optional[ModelSummary] = None
    unknown_base = False
    container_base = False
    for expr, found in base_classes(ctx, cls, depth):
        if found is not None and isinstance(found[1], cst.ClassDef) and depth < MAX_DEPTH:
            s = class_summary(found[0], found[1], depth + 1)
            if s.is_module:
                is_module = True
                inherited = inherited or s
                container_base = container_base or s.holds_given
            continue
        names = ctx.names.qualified_names_at(expr) or star_imported_names(ctx, expr)
        container_base = container_base or bool(names & CONTAINER_CLASSES)
        if names & set(_MODULE_BASES) or any(n.startswith("torch.nn.") and n.endswith("Module") for n in names):
            is_module = True
        elif names and any(n.startswith(("torch.nn.", "torchvision.models.", "timm.")) for n in names):
            is_module = True
            unknown_base = True
        elif dotted_name(expr) not in ("object", None):
            unknown_base = True
    summary = ModelSummary(cls.name.value, is_module)
    if not is_module:
        return summary
    methods = {s.name.value: s for s in class_body(cls) if isinstance(s, cst.FunctionDef)}
    summary.holds_given = container_base and ("__init__" not in methods or _hands_arguments_on(ctx, methods["__init__"]))
    forward = methods.get("forward")
    if forward is not None:
        summary.output = _function_output(ctx, cls, forward, depth)
    elif inherited is not None:
        summary.output = inherited.output
    summary.mode_dependent, summary.mode_layer = _mode_dependent(ctx, cls, inherited, unknown_base or summary.holds_given,
                                                                 depth)
    return summary


def _hands_arguments_on(ctx: FileContext, init: cst.FunctionDef) -> bool:
    """Whether ``__init__`` passes one of its parameters (or ``*args``) on to ``super().__init__``."""
    params = {p.name.value for p in [*init.params.posonly_params, *init.params.params, *init.params.kwonly_params]}
    star = init.params.star_arg
    if isinstance(star, cst.Param):
        params.add(star.name.value)
    for call in ctx.calls_in(init):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call) \
                and dotted_name(func.value.func) == "super":
            if any(a.star or isinstance(a.value, cst.Name) and a.value.value in params for a in call.args):
                return True
    return False


def _mode_dependent(ctx: FileContext, cls: cst.ClassDef, inherited: Optional[ModelSummary], unknown_base: bool,
                    depth: int) -> Tuple[Optional[bool], Optional[Tuple[FileContext, cst.CSTNode]]]:
    """Proven by construction: the class reads ``self.training``, or builds a mode-dependent layer
    anywhere in its body (an attribute, a list it appends to, a container's comprehension); provably
    mode-free when every attribute it assigns is; else unknown.  With the verdict True: where it is seen
    (the layer's construction, or the read of ``self.training``)."""
    for node in ctx.nodes(cls.body):
        if type(node) is cst.Attribute and node.attr.value == "training" and dotted_name(node.value) == "self":
            return True, (ctx, node)
    verdicts: List[Optional[bool]] = []
    if inherited is not None:
        if inherited.mode_dependent is True and inherited.mode_layer is not None:
            return True, inherited.mode_layer
        verdicts.append(inherited.mode_dependent)
    if unknown_base:
        verdicts.append(None)
    for call in ctx.contents(cls).calls:
        known, verdict = layer_call_mode(ctx, call, lambda e: _element_mode(ctx, e, depth))
        if known and verdict is True:
            holder = ctx.parent(call)
            if isinstance(holder, cst.Attribute) and part_call_mode(ctx, holder) is False:
                continue  # `models.vgg16(True).features`: only a part without dropout or batch norm is kept
            if _weights_source_only(ctx, call):
                continue  # `donor = vgg16(pretrained=True)` whose weights are copied: no part of the model
            if _put_in_eval_mode(ctx, call):
                verdicts.append(None)  # in eval mode from the start: its mode then depends on the code
                continue  # that may switch the model back, which the class alone does not show
            return True, (mode_layer_of(ctx, call, depth) or (ctx, call))
    scope = ctx.names.scope_of(cls)
    attrs = scope.attrs if scope is not None else {}
    grown: Optional[Set[str]] = None
    for name, values in attrs.items():
        for v in values:
            verdict = layer_mode_dependent(ctx, v, depth)
            if verdict is True and _put_in_eval_mode(ctx, v):
                verdict = None
            if verdict is True:
                return True, (mode_layer_of(ctx, v, depth) or (ctx, v))
            if verdict is False and isinstance(v, cst.Call) and ctx.names.qualified_names_at(v.func) & CONTAINER_CLASSES:
                if grown is None:
                    grown = _grown_members(ctx, cls)
                if name in grown:
                    verdict = None  # `self.stages = nn.ModuleList([])`, then `self.stages.append(...)`: what it holds
            verdicts.append(verdict)
    if True in verdicts:
        return True, None
    if None in verdicts:
        # a project module built anywhere in the body and kept where the attributes do not show it
        # (`layers.append(Block(...))`, then `self.blocks.append(nn.Sequential(*layers))`)
        for call in ctx.contents(cls).calls if depth < MAX_DEPTH else ():
            built = _project_module_built(ctx, call, depth)
            if built is not None and built.mode_dependent is True and not _put_in_eval_mode(ctx, call) \
                    and not _weights_source_only(ctx, call):
                return True, (built.mode_layer or (ctx, call))
        return None, None
    return False, None


_GROWS = frozenset({"append", "extend", "insert", "add_module", "update", "register_module"})


def _grown_members(ctx: FileContext, cls: cst.ClassDef) -> Set[str]:
    """The attributes of ``self`` the class adds modules to after building them (``self.blocks.append(b)``,
    ``self.heads.add_module(name, m)``, ``self.layers += [...]``)."""
    out: Set[str] = set()
    for call in ctx.contents(cls).calls:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GROWS and isinstance(func.value, cst.Attribute) \
                and dotted_name(func.value.value) == "self":
            out.add(func.value.attr.value)
    for a in ctx.contents(cls).assigns:
        if isinstance(a, cst.AugAssign) and isinstance(a.target, cst.Attribute) and dotted_name(a.target.value) == "self":
            out.add(a.target.attr.value)
    return out


def _project_module_built(ctx: FileContext, call: cst.Call, depth: int) -> Optional[ModelSummary]:
    """The summary of the project module class ``call`` constructs (not a method of the class, nor a
    library call); None otherwise."""
    func = call.func
    if not isinstance(func, (cst.Name, cst.Attribute)) or isinstance(func, cst.Attribute) and \
            dotted_name(func.value) in ("self", "cls"):
        return None
    found = definition_of(ctx, func, depth)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return None
    summary = class_summary(found[0], found[1], depth + 1)
    return summary if summary.is_module else None


def _weights_source_only(ctx: FileContext, call: cst.Call) -> bool:
    """``call`` builds a module into a local name of a function whose every read takes weights out of it
    (``donor.features[0].state_dict()``, ``donor.fc.weight``): the module lends its values and is no part of
    what the function builds."""
    statement = ctx.statement_of(call)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or assign.value is not call or len(assign.targets) != 1 \
            or not isinstance(assign.targets[0].target, cst.Name):
        return False
    function = ctx.enclosing(statement, cst.FunctionDef)
    if function is None:
        return False
    target = assign.targets[0].target
    reads = [n for n in ctx.names_in(function, target.value) if n is not target]
    return bool(reads) and all(_takes_weights(ctx, n) for n in reads)


def _takes_weights(ctx: FileContext, name: cst.Name) -> bool:
    """``name.features[0].state_dict()``, ``name.fc.weight.data``: a read of the values of the module
    ``name`` holds, through attributes and items."""
    node: cst.CSTNode = name
    while True:
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            if parent.attr.value in ("weight", "bias"):
                return True
            if parent.attr.value == "state_dict":
                call = ctx.parent(parent)
                return isinstance(call, cst.Call) and call.func is parent and not call.args
            node = parent
        elif isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
        else:
            return False


def _put_in_eval_mode(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``node`` is built into a module its statement puts in eval mode (``self.backbone =
    nn.Sequential(*list(resnet18().children())[:-1]).eval()``), or into a local name only such a
    statement reads (``layers = list(vgg19().features)[:21]`` then ``self.f = nn.ModuleList(layers).eval()``)."""
    statement = ctx.statement_of(node)
    if _evaluated_within(ctx, node, statement):
        return True
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target,
                                                                                      cst.Name):
        return False
    name = assign.targets[0].target.value
    function = ctx.enclosing(statement, cst.FunctionDef)
    reads = [n for n in ctx.names_in(function if function is not None else ctx.module, name)
             if not ctx.is_inside(n, assign.targets[0])]
    return bool(reads) and all(_evaluated_within(ctx, n, ctx.statement_of(n)) for n in reads)


def _evaluated_within(ctx: FileContext, node: cst.CSTNode, statement: Optional[cst.CSTNode]) -> bool:
    """A call around ``node``, inside ``statement``, puts what it is called on in eval mode (``.eval()``,
    ``.train(False)``) and ``node`` is part of that receiver."""
    for a in ctx.ancestors(node):
        if a is statement:
            return False
        if isinstance(a, cst.Call) and isinstance(a.func, cst.Attribute) and (
            node is a.func.value or ctx.is_inside(node, a.func.value)) and (
            a.func.attr.value == "eval" and not a.args
            or a.func.attr.value == "train" and len(a.args) == 1 and isinstance(a.args[0].value, cst.Name)
            and a.args[0].value.value == "False"
        ):
            return True
    return False


def _stored_param_mode(ctx: FileContext, param: cst.Name) -> Optional[bool]:
    """A parameter kept as an attribute (``self.<attr> = param``): unknown (None) when the class uses what
    it keeps as a layer (runs it: ``self.<attr>(x)``, ``self.<attr>.forward(x)``; calls a module method
    on it: ``self.<attr>.eval()``, ``.parameters()``; puts it in a container of layers:
    ``nn.Sequential(self.<attr>, ...)``): the caller may pass one; provably no layer (False) when it only
    reads it as a value (a size, a flag: ``self.hidden_size = hidden_size``).  A parameter anywhere else
    (an element of a container of layers) may be a layer: unknown.  What it is called decides nothing."""
    assign = ctx.parent(param)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, cst.Attribute) or not isinstance(target.value, cst.Name):
        return None
    cls = ctx.enclosing(assign, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef) or not _is_self(ctx, target.value, cls):
        return None
    attr = target.attr.value
    for node in ctx.names_in(cls, target.value.value):
        use = ctx.parent(node)
        if not isinstance(use, cst.Attribute) or use.value is not node or use.attr.value != attr or use is target:
            continue
        holder = ctx.parent(use)
        if isinstance(holder, cst.Call) and holder.func is use:
            return None  # `self.<attr>(x)`: run
        if isinstance(holder, cst.Attribute) and holder.value is use and (
                holder.attr.value in RUN_METHODS or holder.attr.value in _MODULE_ONLY_METHODS
                or holder.attr.value in _MODE_METHODS):
            return None  # `self.<attr>.forward(x)`, `self.<attr>.parameters()`, `self.<attr>.eval()`
        call = ctx.parent(holder) if isinstance(holder, cst.Arg) else None
        if isinstance(call, cst.Call) and any(q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in CONTAINERS
                                              for q in ctx.names.qualified_names_at(call.func)):
            return None  # `nn.Sequential(self.<attr>, head)`
    return False


def mode_layer_of(ctx: FileContext, value: cst.BaseExpression, depth: int = 0
                  ) -> Optional[Tuple[FileContext, cst.CSTNode]]:
    """For a value proven mode-dependent by construction (:func:`layer_mode_dependent` True): the
    innermost construction that proves it (the ``nn.Dropout(0.3)`` inside ``nn.Sequential(...)`` or inside
    a project class), or None when no single node shows it."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, cst.Name) and not ctx.names.is_param_at(value):
        for v in built_values(ctx, value):
            if layer_mode_dependent(ctx, v, depth + 1) is True:
                return mode_layer_of(ctx, v, depth + 1)
        return None
    value = strip_moves(value)
    if not isinstance(value, cst.Call):
        return None
    known, verdict = layer_call_mode(ctx, value, lambda e: _element_mode(ctx, e, depth))
    if known:
        if verdict is not True:
            return None
        for element in container_elements(value):
            if element is not None and _element_mode(ctx, element, depth) is True:
                inner = mode_layer_of(ctx, element, depth + 1)
                if inner is not None:
                    return inner
        return ctx, value
    found = definition_of(ctx, value.func, depth)
    if found is not None and isinstance(found[1], cst.ClassDef) and depth < MAX_DEPTH:
        s = class_summary(found[0], found[1], depth + 1)
        return s.mode_layer if s.mode_dependent is True else None
    if found is not None and isinstance(found[1], cst.FunctionDef) and depth < MAX_DEPTH:
        for rctx, r in returned_values(found[0], found[1], None, depth + 1) or ():  # a factory: what it returns
            if layer_mode_dependent(rctx, r, depth + 1) is True:
                return mode_layer_of(rctx, r, depth + 1)
    return None


def layer_mode_dependent(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> Optional[bool]:
    """For a value assigned as a submodule: True (dropout, batch norm, ...), False (provably the same in
    both modes), None (unknown, or not a module at all but something we cannot tell)."""
    if not isinstance(value, cst.Call):
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString,
                              cst.FormattedString, cst.BinaryOperation, cst.Comparison, cst.Tuple)):
            return False
        if isinstance(value, cst.Attribute):
            return part_call_mode(ctx, value)  # `models.vgg16(True).features`
        if isinstance(value, cst.Name):
            if value.value in ("None", "True", "False"):
                return False
            if ctx.names.is_param_at(value):
                return _stored_param_mode(ctx, value)
        return None
    value = strip_moves(value)
    if not isinstance(value, cst.Call):
        return part_call_mode(ctx, value)  # `models.alexnet(True).features.to(device)`
    known, verdict = layer_call_mode(ctx, value, lambda e: _element_mode(ctx, e, depth))
    if known:
        return verdict
    names = ctx.names.qualified_names_at(value.func)
    for q in names:
        if q.startswith(("torch.", "math.", "numpy.", "builtins.")):
            return False if not q.startswith("torch.nn") else None
    found = definition_of(ctx, value.func, depth)
    if found is not None and isinstance(found[1], cst.ClassDef) and depth < MAX_DEPTH:
        s = class_summary(found[0], found[1], depth + 1)
        return s.mode_dependent if s.is_module else False
    if found is not None and isinstance(found[1], cst.FunctionDef) and depth < MAX_DEPTH and \
            isinstance(found[0].parent(found[1]), cst.Module):
        # a module-level factory (`def conv_bn(i, o): return nn.Sequential(..., nn.BatchNorm2d(o), ...)`):
        # what it returns
        returned = returned_values(found[0], found[1], None, depth + 1)
        return combine_modes(layer_mode_dependent(rctx, r, depth + 1) for rctx, r in returned) if returned else None
    if isinstance(value.func, cst.Name) and value.func.value in ("int", "float", "str", "list", "dict", "tuple",
                                                                  "set", "len", "range", "bool"):
        return False
    return None


def _element_mode(ctx: FileContext, element: Optional[cst.BaseExpression], depth: int) -> Optional[bool]:
    """The verdict for a module held by a container (``nn.Sequential(a, b)``, a comprehension's element):
    a call is judged as a layer; a local name by the values it is built from."""
    if element is None or depth >= MAX_DEPTH:
        return None
    if isinstance(element, cst.StarredElement):
        # `nn.Sequential(*layers)`: the layers the list is given (`layers += [...]` in a loop, `.append(...)`)
        listed, complete = list_elements(ctx, element.value) if isinstance(element.value, cst.Name) else ([], False)
        if not listed:
            return None  # nothing written into it that the file shows
        # a layer added under a condition (`if batch_norm: layers += [conv, nn.BatchNorm2d(v)]`) may be absent:
        # it proves nothing, though it leaves the verdict open
        return combine_modes([_conditional_mode(ctx, e, _element_mode(ctx, e, depth + 1)) for e in listed]
                             + ([] if complete else [None]))
    if isinstance(element, cst.Name) and not ctx.names.is_param_at(element):
        values = built_values(ctx, element)
        if values:
            return combine_modes(layer_mode_dependent(ctx, v, depth + 1) for v in values)
    return layer_mode_dependent(ctx, element, depth)


def _conditional_mode(ctx: FileContext, element: cst.BaseExpression, verdict: Optional[bool]) -> Optional[bool]:
    """``verdict`` for a layer written into a list, unknown instead of True when a branch of its function
    chooses whether it is added."""
    if verdict is not True:
        return verdict
    for a in ctx.ancestors(element):
        if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.Module)):
            return verdict
        if isinstance(a, (cst.If, cst.IfExp, cst.Try, cst.Match, cst.While)):
            return None
    return verdict


def _function_output(ctx: FileContext, cls: Optional[cst.ClassDef], function: cst.FunctionDef, depth: int) -> Kind:
    kinds = []
    returns = function_returns(function)
    if not returns:
        return None
    for ret in returns:
        if ret.value is None:
            return None
        kinds.append(_expr_kind(ctx, cls, function, ret.value, ret, depth, 0))
    first = kinds[0]
    return first if all(k == first for k in kinds) else None


def _compound_ancestors(ctx: FileContext, node: cst.CSTNode, stop: cst.CSTNode) -> List[cst.CSTNode]:
    out = []
    for a in ctx.ancestors(node):
        if a is stop:
            break
        if isinstance(a, (cst.If, cst.For, cst.While, cst.Try, cst.With, cst.Else, cst.ExceptHandler,
                          cst.Finally, cst.IfExp)):
            out.append(a)
    return out


def _expr_kind(ctx: FileContext, cls: Optional[cst.ClassDef], function: Optional[cst.FunctionDef],
               expr: cst.BaseExpression, at: cst.CSTNode, depth: int, hops: int) -> Kind:
    if hops > 6:
        return None
    if isinstance(expr, cst.Tuple):
        kinds = tuple(_expr_kind(ctx, cls, function, el.value, at, depth, hops + 1) for el in expr.elements)
        return kinds if any(k is not None for k in kinds) else None
    if isinstance(expr, cst.Name) and function is not None:
        local = _reaching_value(ctx, expr, at, function)
        if local is None:
            return None
        value, index = local
        kind = _expr_kind(ctx, cls, function, value, at, depth, hops + 1)
        if index is not None:
            return kind[index] if isinstance(kind, tuple) and index < len(kind) else None
        return kind
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            inner = _expr_kind(ctx, cls, function, expr.value, at, depth, hops + 1)
            i = int(index.value.value, 0)
            return inner[i] if isinstance(inner, tuple) and -len(inner) <= i < len(inner) else None
        return None
    averaged = _average_kind(ctx, cls, function, expr, at, depth, hops)
    if averaged is not None:
        return averaged
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    kind = op_kind(ctx, expr, methods_of_self=False)
    if kind is not None:
        return kind
    if isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS:
        inner = _expr_kind(ctx, cls, function, func.value, at, depth, hops + 1)
        return inner if isinstance(inner, str) else None
    capped = idle_cap(ctx, expr)
    if capped is not None:  # `F.softmax(z, 1).clamp(max=1 - 1e-20)`: an idle cap, the same probabilities
        inner = _expr_kind(ctx, cls, function, capped, at, depth, hops + 1)
        return inner if isinstance(inner, str) else None
    # a submodule or a module built in place: `self.head(x)`, `nn.Softmax(1)(x)`
    callee = run_object(func)
    if isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name) and cls is not None:
        if callee.value.value == "self":
            method = method_of(cls, callee.attr.value)
            if method is not None:  # `self.decode(z)`: what the class's own method returns
                return _function_output(ctx, cls, method, depth + 1) if depth < MAX_DEPTH and method is not function else None
        else:
            return instance_member_output(ctx, callee, depth + 1)
    return module_output(ctx, callee, depth, cls)


def _int_literal(expr: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value, 0)
    return None


def _dim_arg(call: cst.Call, position: int) -> Optional[cst.BaseExpression]:
    for i, a in enumerate(call.args):
        if a.keyword is not None and canonical_keyword(a.keyword.value) == "dim":
            return a.value
        if a.keyword is None and i == position:
            return a.value
    return None


def _stack_reduced(ctx: FileContext, call: cst.Call, op: str) -> Optional[cst.BaseExpression]:
    """For ``torch.stack(xs, d).<op>(d)`` or ``torch.<op>(torch.stack(xs, d), d)`` (``op``: ``mean`` or
    ``sum``) reduced over the stacked dimension: ``xs``; else None."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == op and not ctx.names.qualified_names_at(func):
        stacked, dim = func.value, _dim_arg(call, 0)
    elif ctx.names.matches(func, (f"torch.{op}",)) and call.args:
        stacked, dim = call.args[0].value, _dim_arg(call, 1)
    else:
        return None
    if not (isinstance(stacked, cst.Call) and ctx.names.matches(stacked.func, ("torch.stack",)) and stacked.args):
        return None
    stack_dim = _int_literal(_dim_arg(stacked, 1)) if _dim_arg(stacked, 1) is not None else 0
    if stack_dim is None or _int_literal(dim) != stack_dim:
        return None
    return stacked.args[0].value


def _average_kind(ctx: FileContext, cls: Optional[cst.ClassDef], function: Optional[cst.FunctionDef],
                  expr: cst.BaseExpression, at: cst.CSTNode, depth: int, hops: int) -> Kind:
    """The average of several probability outputs is one (an ensemble's ``forward``): ``torch.stack(ps).mean(0)``
    (or ``torch.mean(torch.stack(ps, 1), 1)``, the mean over the stacked dim), ``sum(ps) / len(ps)`` and
    ``(p1 + p2) / 2``, where every element is a softmax (or every one a sigmoid)."""

    def kind_of(e: cst.BaseExpression) -> Kind:
        return _expr_kind(ctx, cls, function, e, at, depth, hops + 1)

    def held(e: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        if isinstance(e, cst.Name) and function is not None:
            local = _reaching_value(ctx, e, at, function)
            if local is None or local[1] is not None:
                return None
            return local[0]
        return e

    def elements(e: cst.BaseExpression) -> Optional[List[cst.BaseExpression]]:
        e = held(e)
        if isinstance(e, (cst.List, cst.Tuple)) and e.elements and not any(isinstance(x, cst.StarredElement) for x in e.elements):
            return [x.value for x in e.elements]
        if isinstance(e, (cst.ListComp, cst.GeneratorExp)) and not e.for_in.inner_for_in:
            return [e.elt]
        return None

    def counts(parts: cst.BaseExpression, count: cst.BaseExpression) -> bool:
        """``count`` is how many elements ``parts`` has: ``len(parts)``, ``len(X)`` of a comprehension
        over ``X`` with no filter, or the literal length of a list."""
        if isinstance(count, cst.Call) and isinstance(count.func, cst.Name) and count.func.value == "len" and len(
                count.args) == 1 and not ctx.names.qualified_names_at(count.func):
            spelled = ctx.code(count.args[0].value)
            if spelled == ctx.code(parts):
                return True
            e = held(parts)
            return (isinstance(e, (cst.ListComp, cst.GeneratorExp)) and not e.for_in.inner_for_in
                    and not e.for_in.ifs and ctx.code(e.for_in.iter) == spelled)
        e = held(parts)
        return isinstance(e, (cst.List, cst.Tuple)) and _int_literal(count) == len(e.elements)

    def accumulated(total: cst.Name, count: cst.BaseExpression) -> Kind:
        """``total = 0`` then ``total += p`` (or ``total = total + p``) once per member in a loop over
        ``X``, divided by ``len(X)``."""
        if function is None or not (isinstance(count, cst.Call) and isinstance(count.func, cst.Name)
                                    and count.func.value == "len" and len(count.args) == 1):
            return None
        over = ctx.code(count.args[0].value)
        starts, terms = [], []
        for a in ctx.contents(function).assigns:
            targets = assignment_targets(a)
            if not any(isinstance(t, cst.Name) and t.value == total.value for t in targets):
                continue
            if len(targets) != 1 or not ctx.is_inside(a, function) or not (ctx.is_inside(at, function)):
                return None
            if isinstance(a, cst.AugAssign) and isinstance(a.operator, cst.AddAssign):
                terms.append(a)
                continue
            value = a.value if isinstance(a, (cst.Assign, cst.AnnAssign)) else None
            if (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
                    and any(isinstance(side, cst.Name) and side.value == total.value for side in (value.left, value.right))):
                terms.append(a)
            elif isinstance(value, (cst.Integer, cst.Float)) and not value.evaluated_value:
                starts.append(a)
            else:
                return None
        if len(starts) != 1 or not terms:
            return None
        parts: List[cst.BaseExpression] = []
        for a in terms:
            loop = ctx.enclosing(a, cst.For)
            if not isinstance(loop, cst.For) or not ctx.is_inside(loop, function) or ctx.code(loop.iter) != over:
                return None
            if ctx.is_inside(starts[0], loop):
                return None
            if isinstance(a, cst.AugAssign):
                parts.append(a.value)
            else:
                value = a.value  # type: ignore[union-attr]
                parts.append(value.right if isinstance(value.left, cst.Name) and value.left.value == total.value
                             else value.left)
        return same(parts)

    def same(parts: Optional[List[cst.BaseExpression]]) -> Kind:
        if not parts:
            return None
        kinds = {kind_of(p) for p in parts}
        kind = kinds.pop() if len(kinds) == 1 else None
        return kind if kind in (SOFTMAX, SIGMOID) else None

    if isinstance(expr, cst.Call):
        members = _stack_reduced(ctx, expr, "mean")
        return same(elements(members)) if members is not None else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        left, right = expr.left, expr.right
        if (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "sum"
                and not ctx.names.qualified_names_at(left.func) and len(left.args) == 1):
            # `sum(ps) / len(ps)`, `sum(F.softmax(m(x), 1) for m in self.members) / len(self.members)`
            summed = left.args[0].value
            return same(elements(summed)) if counts(summed, right) else None
        if isinstance(left, cst.Call):
            # `torch.stack(ps).sum(0) / len(ps)`: the sum over the stacked dim, divided by the count
            members = _stack_reduced(ctx, left, "sum")
            if members is None:
                return None
            return same(elements(members)) if counts(members, right) else None
        if isinstance(left, cst.Name):
            return accumulated(left, right)
        terms: List[cst.BaseExpression] = []
        node = left
        while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            terms.append(node.right)
            node = node.left
        terms.append(node)
        if len(terms) >= 2 and _int_literal(right) == len(terms):
            return same(terms)
    return None


def _literal_one(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value == 1
    if isinstance(expr, cst.Float):
        return expr.evaluated_value == 1.0
    return False


def handwritten_sigmoid(ctx: FileContext, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """For ``1 / (1 + torch.exp(-z))`` (either order of the sum, ``(-z).exp()`` too): ``z``; else None."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)
            and _literal_one(expr.left)):
        return None
    denom = expr.right
    if not (isinstance(denom, cst.BinaryOperation) and isinstance(denom.operator, cst.Add)):
        return None
    for one, other in ((denom.left, denom.right), (denom.right, denom.left)):
        if not _literal_one(one) or not isinstance(other, cst.Call):
            continue
        func = other.func
        if "torch.exp" in ctx.names.qualified_names_at(func) and len(other.args) == 1:
            operand: Optional[cst.BaseExpression] = other.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value == "exp" and not other.args and (
            not ctx.names.qualified_names_at(func.value)
        ):
            operand = func.value
        else:
            continue
        if isinstance(operand, cst.UnaryOperation) and isinstance(operand.operator, cst.Minus):
            return operand.expression
    return None


def op_kind(ctx: FileContext, call: cst.Call, methods_of_self: bool) -> Kind:
    """The kind of a torch operation's result: ``F.softmax(...)``, ``torch.sigmoid(...)``, and the tensor
    methods (``x.softmax(1)``; on ``self`` only when ``methods_of_self``)."""
    func = call.func
    names = ctx.names.qualified_names_at(func)
    for funcs, kind in _KIND_OF_FUNC:
        if names & funcs:
            return kind
    if isinstance(func, cst.Attribute) and func.attr.value in _KIND_OF_METHOD and not names:
        if ctx.names.imports_torch and not ctx.names.qualified_names_at(func.value):
            if methods_of_self or not (isinstance(func.value, cst.Name) and func.value.value == "self"):
                return _KIND_OF_METHOD[func.attr.value]
    return None


def module_output(ctx: FileContext, module: cst.BaseExpression, depth: int = 0,
                  cls: Optional[cst.ClassDef] = None) -> Kind:
    """What calling the module ``module`` returns, from how it was built."""
    candidates: List[cst.BaseExpression]
    if isinstance(module, cst.Call):
        candidates = [module]
    elif isinstance(module, cst.Attribute) and isinstance(module.value, cst.Name) and module.value.value == "self":
        scope = ctx.names.scope_of(cls) if cls is not None else None
        candidates = list(scope.attrs.get(module.attr.value, ())) if scope is not None else ctx.names.values_at(module)
    elif isinstance(module, cst.Name):
        # the module the name holds where it is called, when one assignment reaches the call on every path
        # (a notebook that rebinds `model` to one model after another); else every module it is given
        reaching = ctx.names.reaching_value(module)
        moved = strip_moves(reaching) if reaching is not None else None
        if reaching is not None and not (isinstance(moved, cst.Name) and moved.value == module.value):
            candidates = [reaching]
        else:
            candidates = built_values(ctx, module)
    else:
        return None
    kinds = set()
    for v in candidates:
        kinds.add(built_output(ctx, v, depth))
    if len(kinds) != 1:
        return None
    return kinds.pop()


def built_output(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> Kind:
    if depth:
        return _built_output(ctx, value, depth)
    cache = _BUILT_OUTPUTS.of(ctx)
    if value not in cache:
        cache[value] = _built_output(ctx, value, 0)
    return cache[value]


#: value -> what the module it builds returns (asked at depth 0)
_BUILT_OUTPUTS: "Fact[Dict[cst.CSTNode, Kind]]" = Fact("roles.built_outputs", lambda ctx: {})


def _built_output(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> Kind:
    value = strip_moves(value)
    if not isinstance(value, cst.Call):
        return None
    names = ctx.names.qualified_names_at(value.func)
    for layers, kind in _KIND_OF_LAYER:
        if names & layers:
            return kind
    if names & HOLDERS:
        held = arg(value, 0, "module") or arg(value, 0, "model")  # `nn.DataParallel(net)` returns what `net` does
        return module_output(ctx, held.value, depth + 1) if held is not None and depth < MAX_DEPTH else None
    if names & SEQUENTIAL:
        positional = [a for a in value.args if a.keyword is None]
        if positional and not positional[-1].star:
            return built_output(ctx, positional[-1].value, depth)
        if len(positional) == 1 and positional[0].star == "*" and isinstance(positional[0].value, cst.Name):
            last = _last_appended(ctx, positional[0].value)
            return built_output(ctx, last, depth) if last is not None else None
        return None
    if depth >= MAX_DEPTH:
        return None
    found = definition_of(ctx, value.func, depth, KIND_WORDS)
    if found is not None and isinstance(found[1], cst.ClassDef):
        s = class_summary(found[0], found[1], depth + 1)
        return s.output if s.is_module else None
    return None


#: a project module is parsed for what a model returns only when it spells one of these
KIND_WORDS = ("oftmax", "igmoid")


def _last_appended(ctx: FileContext, layers: cst.Name) -> Optional[cst.BaseExpression]:
    """For ``nn.Sequential(*layers)``: the layer appended last to the list ``layers`` in the same
    function, when that append is not inside a loop or a branch (it is then the last layer)."""
    function = ctx.enclosing(layers, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return None
    last = None
    use = position(ctx, layers)
    for call in ctx.calls_in(function):
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == layers.value) or position(ctx, call) > use:
            continue
        if func.attr.value != "append":
            last = None  # extend, insert, pop, ...: the last layer is no longer known
            continue
        first = arg(call, 0, "object")
        last = first.value if first is not None and not _compound_ancestors(ctx, call, function) else None
    return last


# -- roles -----------------------------------------------------------------------------------------
#: the library classes with a ``from_pretrained`` that build no module (tokenizers, processors, configs,
#: schedulers: their output is no model's), read from the library's own class name (``AutoTokenizer``
#: imported under any alias)
_NOT_MODULE_CLASS = re.compile(r"Tokenizer|Processor|Config|Scheduler|FeatureExtractor|Vocab")


#: the functions of the model packages that return no model: weights, their names, builders
_NOT_MODEL_FUNCTIONS = frozenset({"get_weight", "get_model_weights", "list_models", "get_model_builder",
                                  "list_pretrained", "is_model", "model_entrypoint"})


def _builds_model(qualified: str) -> bool:
    """Whether a call of ``qualified`` in a model package (``torchvision.models.resnet18``,
    ``torchvision.models.detection.FasterRCNN``) builds a model: not a method of a class of the package
    (``EfficientNet_B2_Weights.DEFAULT.transforms()`` makes the weights' preprocessing, no model; only the
    last part of the path may be a class), nor one of its functions that return weights or names."""
    parts = qualified.split(".")
    return not any(part[:1].isupper() for part in parts[:-1]) and parts[-1] not in _NOT_MODEL_FUNCTIONS


def is_module_value(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``value`` builds an ``nn.Module``: a torch/torchvision/timm layer or model, a project
    ``nn.Module`` subclass, ``*.from_pretrained(...)``, ``Cls.load_from_checkpoint(...)`` of such a
    class, ``torch.hub.load``, or ``.to()``/``.cuda()`` of one."""
    value = strip_moves(value)
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    names = ctx.names.qualified_names_at(func)
    if names & _MODULE_CALLS:
        return True
    for q in names:
        if q in _NOT_MODULES or q.startswith(("torch.nn.functional", "torch.nn.init", "torch.nn.utils")):
            return False
        if q.startswith(_MODULE_FACTORIES):
            last = q.rsplit(".", 1)[-1]
            return q.startswith("torch.nn.") and last[:1].isupper() or not q.startswith("torch.nn.") and _builds_model(q)
    if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
        base = ctx.names.qualified_names_at(func.value)
        if any(_NOT_MODULE_CLASS.search(q.rsplit(".", 1)[-1]) for q in base):
            return False  # `GPT2Tokenizer.from_pretrained(...)`: a library class that is no module
        return bool(base)
    if isinstance(func, cst.Attribute) and func.attr.value == "load_from_checkpoint":
        func = func.value  # Lightning's class method: an instance of the class it is called on
    d = definition_of(ctx, func, depth)
    if d is not None and isinstance(d[1], cst.ClassDef):
        return module_class(d[0], d[1], depth + 1)
    if d is not None and isinstance(d[1], cst.FunctionDef) and depth < MAX_DEPTH:
        passed = returned_argument(ctx, value, d[1])  # `init_net(net)`: a helper that hands its argument back
        if passed is not None:
            return is_module_value(ctx, passed, depth + 1)
        returned = returned_values(d[0], d[1], None, depth)  # a project factory: `def create(n): ... return model`
        return bool(returned) and all(is_module_value(rctx, v, depth + 1) for rctx, v in returned)
    if d is None and isinstance(func, cst.Name) and depth < MAX_DEPTH:
        # `net_type = Vgg16` on one branch, `net_type = Alexnet` on another, then `net_type(...)`
        classes = built_values(ctx, func)
        return bool(classes) and all(
            isinstance(c, (cst.Name, cst.Attribute)) and (found := definition_of(ctx, c, depth + 1)) is not None
            and isinstance(found[1], cst.ClassDef) and module_class(found[0], found[1], depth + 1) for c in classes)
    return False


def module_class(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    """Whether ``cls`` derives from ``nn.Module`` (through project classes too).  Reads only the bases and
    the imports, so it may be asked during the walk."""
    table = _MODULE_CLASSES.of(ctx)
    if cls in table:
        return table[cls]
    table[cls] = False  # a cycle of bases is no module
    found = False
    for expr, definition in base_classes(ctx, cls, depth):
        if definition is not None and isinstance(definition[1], cst.ClassDef):
            if depth < MAX_DEPTH and module_class(definition[0], definition[1], depth + 1):
                found = True
                break
            continue
        names = ctx.names.qualified_names_at(expr)
        if names & set(_MODULE_BASES) or any(
            # torch's private bases count too (`class SyncBN(_BatchNorm)` in `torch.nn.modules.batchnorm`)
            n.startswith(("torch.nn.", "torchvision.models.", "timm.")) and n.rsplit(".", 1)[-1].lstrip("_")[:1].isupper()
            for n in names
        ):
            found = True
            break
    table[cls] = found
    return found


_ANNOTATION_MODULES = ("torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.Sequential")


_LAYER_MODEL = re.compile(
    r"(Sequential|ModuleList|ModuleDict|LSTM|GRU|RNN|Transformer\w*|Linear|Bilinear|Conv\w*|Embedding\w*|"
    r"MultiheadAttention)$"
)


def param_is_model(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """The arguments, when every call of the function in this file passes a model for parameter
    ``name`` (``evaluate(cnn, loader)`` with ``cnn = CNN()``), or a parameter of its own that every call
    of its function (in this file, else in the project's other files) is given a model for
    (``_get_detections(data, retinanet)`` inside ``evaluate(data, retinanet)``, which ``train.py`` calls
    with the model it builds).  Call it after the walk."""
    args = arguments_for_param(ctx, name)
    if not args:
        return None
    for a in args:
        if not _given_model(ctx, a, 0):
            return None
    return args


def _given_model(ctx: FileContext, value: cst.BaseExpression, hops: int) -> bool:
    """``value``, an argument, holds a model by construction, or is a parameter every caller gives one."""
    if isinstance(value, cst.Name) and ctx.names.is_param_at(value) and not ctx.names.values_before(value):
        if hops >= 2:
            return False
        given = callers_arguments(ctx, value)
        return bool(given) and all(_given_model(octx, a, hops + 1) for octx, a in given)
    if isinstance(value, (cst.Name, cst.Attribute)):
        return is_model(ctx, value) is True
    return is_model_value(ctx, value)


def is_model_value(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """:func:`is_module_value` for a model: not a loss, an activation or a pooling layer of ``torch.nn``."""
    if not is_module_value(ctx, value):
        return False
    core = strip_moves(value)
    if isinstance(core, cst.Call):
        names = ctx.names.qualified_names_at(core.func)
        if names & _MODULE_WRAPPERS:
            return True  # `nn.DataParallel(net)`: the model it holds, run through it
        for q in names:
            if q.startswith("torch.nn.") and not _LAYER_MODEL.match(q.rsplit(".", 1)[-1]):
                return False
    return True


def is_model(ctx: FileContext, expr: cst.BaseExpression) -> Optional[bool]:
    """True: ``expr`` (a name or ``self.<attr>``) holds a model (an ``nn.Module`` that is not a loss or an
    activation) by construction or by annotation on every assignment seen; None: unknown (a parameter,
    something else)."""
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None or ctx.names.holds_import(expr):
            return None
        if _annotated_module(ctx, expr):
            return True
    values = held_values(ctx, expr)
    if not values:
        return None
    if all(is_model_value(vctx, v) for vctx, v in values):
        return True
    return None


#: methods of ``nn.Module`` that nothing else a training script calls has (a function, a tensor, a
#: tokenizer, a plain object): one called on a value says the value is a module, whatever its name
_MODULE_ONLY_METHODS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children",
                             "named_children", "buffers", "named_buffers", "state_dict", "load_state_dict",
                             "zero_grad", "requires_grad_", "register_forward_hook",
                             "register_forward_pre_hook", "register_full_backward_hook"})
#: ``eval()``, ``train()``, ``train(False)``: a mode switch (an argument list longer than one is some
#: other ``train``, a trainer's or a pipeline's)
_MODE_METHODS = frozenset({"eval", "train"})
#: constructions whose result holds (and trains) the module they are given as their first argument
HOLDERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                     "torch.nn.parallel.data_parallel.DataParallel",
                     "torch.nn.parallel.DistributedDataParallel",
                     "torch.nn.parallel.distributed.DistributedDataParallel",
                     "torch.compile"})
#: the wrappers among them that are modules themselves
_MODULE_WRAPPERS = HOLDERS - {"torch.compile"}


@dataclass
class _ModuleUses:
    names: Set[object]  # the bindings (:class:`names.Binding`) a module method is called on
    members: Set[Tuple[cst.ClassDef, str]]  # ``self.<attr>`` a method of the class calls a module method on
    #: class -> the attributes its methods annotate as a module (``self.detector: Detector = build()``)
    annotated: Dict[cst.ClassDef, Set[str]]
    #: what a mode switch (``eval()``, ``train()``, ``train(flag)``) is called on: bindings, members
    #: ``(class, attr)``, and per function (or the module) the code of any other receiver
    #: (``agent.net.eval()``)
    switched_names: Set[object] = field(default_factory=set)
    switched_free: Set[str] = field(default_factory=set)  # names the file never binds (a notebook's)
    switched_members: Set[Tuple[cst.ClassDef, str]] = field(default_factory=set)
    switched_code: Dict[cst.CSTNode, Set[str]] = field(default_factory=dict)


def _module_uses(ctx: FileContext) -> _ModuleUses:
    uses = _ModuleUses(set(), set(), {})
    for node in ctx.contents(ctx.module).assigns:
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Attribute) and \
                isinstance(node.target.value, cst.Name):
            cls = ctx.enclosing(node, cst.ClassDef)
            if isinstance(cls, cst.ClassDef) and _is_self(ctx, node.target.value, cls) and \
                    _module_annotation(ctx, node.annotation.annotation):
                uses.annotated.setdefault(cls, set()).add(node.target.attr.value)
    for call in ctx.calls_in(ctx.module):
        func = call.func
        target: Optional[cst.BaseExpression] = None
        switch = False
        if isinstance(func, cst.Attribute):
            word = func.attr.value
            switch = word in _MODE_METHODS and len(call.args) <= 1
            if word in _MODULE_ONLY_METHODS or switch:
                target = func.value
        if target is None and call.args and ctx.names.qualified_names_at(func) & _MODULE_WRAPPERS:
            target = call.args[0].value
        member = None
        if isinstance(target, cst.Name):
            b = ctx.names.binding_at(target, target.value)
            if b is not None and not ctx.names.holds_import(target):
                uses.names.add(b)
                if switch:
                    uses.switched_names.add(b)
            elif b is None and switch:
                uses.switched_free.add(target.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            cls = ctx.enclosing(call, cst.ClassDef)
            if isinstance(cls, cst.ClassDef) and _is_self(ctx, target.value, cls):
                member = (cls, target.attr.value)
                uses.members.add(member)
                if switch:
                    uses.switched_members.add(member)
        if switch and target is not None and not isinstance(target, cst.Name) and member is None:
            host = ctx.enclosing(call, cst.FunctionDef) or ctx.module
            uses.switched_code.setdefault(host, set()).add(ctx.code(target))
    return uses


_MODULE_USES: "Fact[_ModuleUses]" = Fact("roles.module_uses", _module_uses)


def holds_module(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> bool:
    """Whether what ``expr`` (a name, or ``self.<attr>`` in a method) holds behaves as an ``nn.Module``
    where it lives: a module method is called on the same binding anywhere in its scope
    (``encoder.eval()``, ``model.parameters()``, ``net.zero_grad()``, ``nn.DataParallel(net)``); or a
    module is built (or a whole pickled object loaded: ``torch.load(path)``) into it on one path and
    nothing else known on the others (``net = sim_net.to(device)`` if given one, else ``net =
    LPIPS()``); or, for a parameter, some call of the function (in this file; where it has none, in the
    project's other files) passes a value that holds one and none passes a value provably no module.
    Weaker than :func:`is_model` (every value built as a model) and behaviour all the same: ``clf``,
    ``f`` and ``model`` are judged alike.  After the walk only (False before)."""
    if not ctx.walked:
        return False  # the bindings of scopes not entered yet are unknown: no table is made from them
    uses = _MODULE_USES.of(ctx)
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None or ctx.names.holds_import(expr) or not_a_module(ctx, expr):
            return False  # an instance of a plain class with its own `eval()`/`train()` is none
        if b in uses.names:
            return True
        values = built_values(ctx, expr)
        if values and any(is_model_value(ctx, v) or _unpickled(ctx, v) for v in values) and not any(
                _no_module(ctx, v) for v in values):
            return True
        if hops >= 2 or not ctx.names.is_param_at(expr):
            return False
        found = callers_arguments(ctx, expr)  # the file's callers, else the project's other files'
        return any(_passes_module(c, a, hops + 1) for c, a in found) and not any(_no_module(c, a) for c, a in found)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        cls = ctx.enclosing(expr, cst.ClassDef)
        if not isinstance(cls, cst.ClassDef) or not _is_self(ctx, expr.value, cls):
            return False
        if (cls, expr.attr.value) in uses.members or expr.attr.value in uses.annotated.get(cls, ()):
            return True
        # `self.eval_net = net` with `net: nn.Module` (or a parameter that holds one) in `__init__`
        values = built_values(ctx, expr)
        return hops < 2 and bool(values) and any(
            isinstance(v, cst.Name) and (_annotated_module(ctx, v) or holds_module(ctx, v, hops + 1))
            or is_model_value(ctx, v) for v in values) and not any(_no_module(ctx, v) for v in values)
    return False


def switches_mode(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> bool:
    """Whether the code switches the mode of what ``expr`` holds (``eval()``, ``train()``,
    ``train(False)``; a ``train`` of more arguments is some other object's): on the same binding of a
    name (or the same name, one the file never binds; for a parameter, on what a caller passes: the
    file's, else the project's), on the same member of the class for ``self.<attr>`` in a method, and
    for another attribute chain (``agent.net``) on the same code in the same function (or at module
    level).  What the code does says it is a module, whatever it is called.  After the walk only (False
    before)."""
    if not ctx.walked:
        return False
    uses = _MODULE_USES.of(ctx)
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None:
            return expr.value in uses.switched_free
        if b in uses.switched_names:
            return True
        if hops >= 2 or not ctx.names.is_param_at(expr):
            return False
        return any(isinstance(a, (cst.Name, cst.Attribute)) and switches_mode(c, a, hops + 1)
                   for c, a in callers_arguments(ctx, expr))
    if not isinstance(expr, cst.Attribute):
        return False
    if isinstance(expr.value, cst.Name):
        cls = ctx.enclosing(expr, cst.ClassDef)
        if isinstance(cls, cst.ClassDef) and _is_self(ctx, expr.value, cls):
            return (cls, expr.attr.value) in uses.switched_members
    host = ctx.enclosing(expr, cst.FunctionDef) or ctx.module
    switched = uses.switched_code.get(host)
    return bool(switched) and ctx.code(expr) in switched


def given_no_module(ctx: FileContext, name: cst.Name) -> bool:
    """Whether some call of the function (in this file, else in the project) passes, for the parameter
    ``name``, a value that is provably no module (a lambda, a plain function's result, a literal)."""
    if not ctx.names.is_param_at(name):
        return False
    return any(_no_module(c, a) for c, a in callers_arguments(ctx, name))


def _passes_module(ctx: FileContext, arg: cst.BaseExpression, hops: int) -> bool:
    if isinstance(arg, (cst.Name, cst.Attribute)):
        return is_model(ctx, arg) is True or holds_module(ctx, arg, hops)
    return is_model_value(ctx, arg)


#: loaders of whole pickled (or scripted) objects: what they return and the code then calls is a module
_UNPICKLERS = frozenset({"torch.load", "torch.jit.load"})


def _unpickled(ctx: FileContext, value: cst.BaseExpression) -> bool:
    core = strip_moves(value)
    return isinstance(core, cst.Call) and bool(ctx.names.qualified_names_at(core.func) & _UNPICKLERS)


#: values that are no module whatever the rest of the program does
NO_MODULE_LITERALS = (cst.BaseNumber, cst.BaseString, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.Lambda, cst.ListComp,
             cst.DictComp, cst.SetComp, cst.GeneratorExp)


def _no_module(ctx: FileContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, NO_MODULE_LITERALS) or (isinstance(value, cst.Name) and value.value in ("None", "True", "False")):
        return True
    if isinstance(value, cst.Name):
        # what the name holds where it is passed, when one assignment reaches it on every path: an
        # instance of a plain class there is no module, whatever the name is bound to later
        reaching = ctx.names.reaching_value(value)
        if reaching is not None and not isinstance(reaching, (cst.Name, cst.Attribute)) and _no_module(ctx, reaching):
            return True
    if isinstance(value, (cst.Name, cst.Attribute)):
        return not_a_module(ctx, value)
    return _plain_instance(ctx, value)


def plain_class(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    """Whether ``cls`` is provably no ``nn.Module``: no bases (or ``object``), or only project classes that
    are plain themselves.  A base that cannot be read (a library class, a variable) is not proof."""
    if depth > MAX_DEPTH:
        return False
    for expr, found in base_classes(ctx, cls, depth):
        if found is not None and isinstance(found[1], cst.ClassDef):
            if not plain_class(found[0], found[1], depth + 1):
                return False
        elif dotted_name(expr) != "object" and not _foreign_base(ctx, expr):
            return False
    return not any(k.keyword is not None and k.keyword.value == "metaclass" for k in cls.keywords)


#: frameworks whose classes are no ``torch.nn.Module``: a class built on one of theirs (``flax.linen.Module``,
#: ``tf.keras.Model``) is plain as far as torch goes
_FOREIGN_FRAMEWORKS = ("flax.", "jax.", "haiku.", "equinox.", "tensorflow.", "keras.", "sklearn.")


def _foreign_base(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    names = ctx.names.qualified_names_at(expr)
    return bool(names) and all(n.startswith(_FOREIGN_FRAMEWORKS) for n in names)


def _plain_instance(ctx: FileContext, value: cst.BaseExpression) -> bool:
    value = strip_moves(value)
    if not isinstance(value, cst.Call):
        return False
    d = definition_of(ctx, value.func)
    return d is not None and isinstance(d[1], cst.ClassDef) and plain_class(d[0], d[1])


def not_a_module(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> bool:
    """Whether ``expr`` provably holds no ``nn.Module``: every value it is built from is an instance of a
    plain project class (``net = MultilayerPerceptron(...)`` with ``class MultilayerPerceptron:``), or, for
    a parameter, every call in the file passes such a value.  Ends the guess from a model-like name."""
    if isinstance(expr, cst.Name) and ctx.names.is_param_at(expr):
        if hops >= 2:
            return False
        args = arguments_for_param(ctx, expr)
        return bool(args) and all(
            not_a_module(ctx, a, hops + 1) if isinstance(a, cst.Name) else _plain_instance(ctx, a) for a in args
        )
    values = built_values(ctx, expr) if isinstance(expr, (cst.Name, cst.Attribute)) else [expr]
    return bool(values) and all(_plain_instance(ctx, v) for v in values)


def _module_annotation(ctx: FileContext, ann: cst.BaseExpression) -> bool:
    """Whether the annotation ``ann`` names ``nn.Module`` (or ``nn.Sequential``) or a module class."""
    if ctx.names.qualified_names_at(ann) & set(_ANNOTATION_MODULES):
        return True
    d = definition_of(ctx, ann)
    return d is not None and isinstance(d[1], cst.ClassDef) and module_class(d[0], d[1])


def _annotated_module(ctx: FileContext, name: cst.Name) -> bool:
    function = parameter_owner(ctx, name)
    if function is None:
        return False
    params = function.params
    for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
        if p.name.value == name.value and p.annotation is not None:
            ann = p.annotation.annotation
            names = ctx.names.qualified_names_at(ann)
            if names & set(_ANNOTATION_MODULES):
                return True
            d = definition_of(ctx, ann)
            if d is not None and isinstance(d[1], cst.ClassDef):
                return module_class(d[0], d[1])
    return False


# -- what a value is, where it is used -----------------------------------------------------------------
def output_kind(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> Kind:
    """Whether ``expr`` is the output of a model (or module) whose ``forward`` ends in softmax,
    log-softmax or sigmoid: ``model(x)``, ``self.net(x)``, ``model(x)[0]``, ``out`` after
    ``out = model(x)`` or ``out, aux = model(x)``.  Call it after the walk."""
    if hops > 4:
        return None
    if isinstance(expr, cst.Subscript):
        inner = output_kind(ctx, expr.value, hops + 1)
        if isinstance(inner, str):
            return inner  # `model(x)[:, 0]`: elements of the same probabilities
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            i = int(index.value.value, 0)
            return inner[i] if isinstance(inner, tuple) and -len(inner) <= i < len(inner) else None
        return None
    if isinstance(expr, cst.Name):
        function = ctx.enclosing(expr, cst.FunctionDef)
        if isinstance(function, cst.FunctionDef):
            local = _reaching_value(ctx, expr, expr, function)
        else:
            local = _reaching_value(ctx, expr, expr, None)
        if local is None:
            walked = walked_by_loop(ctx, expr)
            if walked is None:
                return None
            kind = output_kind(ctx, walked, hops + 1)  # `for p in probs:`: a row of the same probabilities
            return kind if isinstance(kind, str) else None
        value, index = local
        kind = output_kind(ctx, value, hops + 1)
        if index is not None:
            return kind[index] if isinstance(kind, tuple) and index < len(kind) else None
        return kind
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    kind = op_kind(ctx, expr, methods_of_self=True)
    if kind is not None:
        return kind
    if isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS:
        kind = output_kind(ctx, func.value, hops + 1)  # `d(x).view(-1)`: the same probabilities
        return kind if isinstance(kind, str) else None
    capped = idle_cap(ctx, expr)
    if capped is not None:
        kind = output_kind(ctx, capped, hops + 1)  # `d(x).clamp(max=1.0)`: an idle cap
        return kind if isinstance(kind, str) else None
    callee = run_object(func)
    if isinstance(callee, cst.Attribute) and not (isinstance(callee.value, cst.Name) and callee.value.value == "self"):
        return instance_member_output(ctx, callee)
    if isinstance(callee, cst.Name) and (ctx.names.qualified_names_at(callee) or definition_of(ctx, callee) is not None):
        return None  # a function or class called by name (imported or defined here): not a model object
    cls = ctx.enclosing(expr, cst.ClassDef)
    if isinstance(callee, cst.Name) and isinstance(cls, cst.ClassDef) and _is_self(ctx, callee, cls):
        s = class_summary(ctx, cls)  # `self(x)` in a method of the model: its own `forward`
        return s.output if s.is_module else None
    return module_output(ctx, callee, 0, cls if isinstance(cls, cst.ClassDef) else None)


#: tensor methods that keep the values (and so what kind of values they are)
SHAPE_METHODS = frozenset({"view", "reshape", "squeeze", "flatten", "unsqueeze", "contiguous", "view_as",
                            "reshape_as", "float", "double", "to", "cpu", "cuda", "detach", "clone"})


def instance_member_output(ctx: FileContext, callee: cst.Attribute, depth: int = 0) -> Kind:
    """What ``owner.member(x)`` returns where ``owner`` is an instance of a project model class:
    ``member`` a method of the class (``model.discriminator_forward(x)``) or a submodule it builds
    (``model.discriminator(x)`` with ``self.discriminator = nn.Sequential(..., nn.Sigmoid())``)."""
    if depth > MAX_DEPTH:
        return None
    found = instance_class(ctx, callee.value)
    if found is None:
        return None
    dctx, cls = found
    if not class_summary(dctx, cls).is_module:
        return None
    name = callee.attr.value
    method = method_of(cls, name)
    if method is not None:
        return _function_output(dctx, cls, method, depth + 1)
    scope = dctx.names.scope_of(cls)
    values = list(scope.attrs.get(name, ())) if scope is not None else []
    kinds = {built_output(dctx, v, depth + 1) for v in values}
    return kinds.pop() if len(kinds) == 1 else None


def _is_self(ctx: FileContext, name: cst.Name, cls: cst.ClassDef) -> bool:
    function = ctx.enclosing(name, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef) or ctx.parent(ctx.parent(function) or function) is not cls:
        return False
    params = list(function.params.posonly_params) + list(function.params.params)
    return bool(params) and params[0].name.value == name.value and not function.decorators


def _reaching_value(ctx: FileContext, name: cst.Name, at: cst.CSTNode, function: Optional[cst.FunctionDef]):
    """``(value, index)`` of the assignment of ``name`` that reaches ``at`` on every path (the names
    layer's answer, in ``function`` or at module level); None when unknown."""
    found = ctx.names.reaching_assignment(name.value, at, function)
    return (found[0].value, found[1]) if found is not None else None


_PARAMETER_FREE: Fact[Dict[cst.ClassDef, bool]] = Fact("roles.parameter_free", lambda ctx: {})
#: builtins a parameter-free module may call
_BUILTIN_CALLS = frozenset({"super", "isinstance", "len", "float", "int", "bool", "str", "range", "zip", "enumerate",
                            "min", "max", "sum", "abs", "list", "tuple", "dict", "getattr", "hasattr", "print"})
#: a tensor's methods that give it back moved or cast
_CASTS = frozenset({"to", "type_as", "type", "cuda", "cpu", "float", "double", "half", "long", "int", "bool"})
#: torch functions that make a tensor that does not require gradients (unless told so)
_PLAIN_TENSORS = frozenset({"torch.tensor", "torch.ones", "torch.zeros", "torch.full", "torch.arange",
                            "torch.linspace", "torch.eye", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor"})


def holds_no_parameters(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """A module class derived from ``nn.Module`` itself whose instances hold no parameter by construction: a
    loss written as a module (``class FocalLoss(nn.Module)`` keeping ``self.gamma = gamma``).  Every
    attribute it assigns is a number, a string, ``None``, a parameter of the method whose default is one of
    those, arithmetic of such, a torch tensor made without ``requires_grad``, or a parameter-free torch.nn
    module (an activation, dropout, pooling, a loss); nothing registers a parameter or adds a module.  Its
    forward pass records a graph only of inputs that carry one.  Asked once per class."""
    table = _PARAMETER_FREE.of(ctx)
    if cls not in table:
        table[cls] = _holds_no_parameters(ctx, cls)
    return table[cls]


def parameter_free(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Every value ``expr`` may hold (:func:`held_values`) is a module built without parameters: a torch.nn
    module of :data:`PARAMETER_FREE_LAYERS` (``nn.CrossEntropyLoss(weight=w)``) or an instance of a project
    class that :func:`holds_no_parameters`."""
    values = held_values(ctx, expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if not values:
        return False
    for vctx, v in values:
        core = strip_moves(v)
        if not isinstance(core, cst.Call):
            return False
        if parameter_free_layer(vctx, core):
            continue
        found = definition_of(vctx, core.func)
        if found is None or not isinstance(found[1], cst.ClassDef) or not holds_no_parameters(found[0], found[1]):
            return False
    return True


def parameter_free_layer(ctx: FileContext, call: cst.Call) -> bool:
    """``call`` builds a torch.nn module of :data:`PARAMETER_FREE_LAYERS` (``nn.MSELoss()``, ``nn.ReLU()``)."""
    return any(q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in PARAMETER_FREE_LAYERS
               for q in ctx.names.qualified_names_at(call.func))


def _holds_no_parameters(ctx: FileContext, cls: cst.ClassDef) -> bool:
    if not cls.bases or any(a.keyword is not None or not ctx.names.qualified_names_at(a.value) & {
            "torch.nn.Module", "torch.nn.modules.module.Module"} for a in cls.bases):
        return False
    scope = ctx.names.scope_of(cls)
    if scope is None:
        return False
    for call in ctx.contents(cls).calls:
        if method_name(call) in ("register_parameter", "add_module", "register_module") or \
                ctx.names.qualified_names_at(call.func) & {"torch.nn.Parameter", "torch.nn.parameter.Parameter"} or \
                keyword_arg(call, "requires_grad") is not None:
            return False
        func = call.func
        if isinstance(func, cst.Name) and (func.value in ("setattr", "vars") or (
                not ctx.names.qualified_names_at(func) and func.value not in ctx.functions()
                and func.value not in ctx.classes() and func.value not in _BUILTIN_CALLS)):
            return False  # `setattr(self, name, layer)`, or a network of the module run on the inputs
    for a in ctx.contents(cls).assigns:
        for t in assignment_targets(a):
            if isinstance(t, (cst.Tuple, cst.List)) and any(
                    isinstance(e.value, cst.Attribute) for e in t.elements):
                return False  # `self.a, self.b = nn.Linear(...), nn.Linear(...)`: attributes set by unpacking
    for values in scope.attrs.values():
        for v in values:
            if not _plain_setting(ctx, v):
                return False
    return True


def _plain_setting(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """What a parameter-free module may keep on itself: a setting (:func:`setting_value`), arithmetic or a
    choice of such, a tensor made without gradients, its own value cast, a parameter-free torch.nn module."""
    if setting_value(ctx, value):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _plain_setting(ctx, value.expression)
    if isinstance(value, cst.BinaryOperation):
        return _plain_setting(ctx, value.left) and _plain_setting(ctx, value.right)
    if isinstance(value, cst.IfExp):
        return _plain_setting(ctx, value.body) and _plain_setting(ctx, value.orelse)
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CASTS and isinstance(func.value, cst.Attribute) \
                and isinstance(func.value.value, cst.Name) and \
                ctx.names.scope_at(func.value).self_name == func.value.value.value:
            return True  # `self.alpha = self.alpha.type_as(x)`: its own value cast (its other values are judged too)
        names = ctx.names.qualified_names_at(func)
        if names & _PLAIN_TENSORS:
            return True
        return any(q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in PARAMETER_FREE_LAYERS for q in names)
    return False


def setting_value(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``value`` is a setting, no module or tensor: a number, a string, ``None``/``True``/``False``, a name
    that holds a number or a string on every path to it, arithmetic of settings, or a parameter read as the function was called that defaults to one of those or that the function hands to a
    torch.nn constructor (``self.k = k`` beside ``nn.AvgPool1d(kernel_size=k)``)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return setting_value(ctx, value.expression)
    if isinstance(value, cst.BinaryOperation):  # `hidden * 2`, `2 ** depth`: arithmetic of settings
        return setting_value(ctx, value.left) and setting_value(ctx, value.right)
    if not isinstance(value, cst.Name):
        return False
    if value.value in ("None", "True", "False"):
        return True
    held = ctx.names.reaching_value(value)
    if held is not None and isinstance(held, (cst.Integer, cst.Float, cst.SimpleString)):
        return True  # `HIDDEN_SIZE = 512` on every path to it
    default = _param_default(ctx, value)
    if default is not None and not (isinstance(default, cst.Name) and default.value == "None") \
            and setting_value(ctx, default):
        return True  # (`fn=None` says nothing: a caller may hand a module)
    function = ctx.enclosing(value, cst.FunctionDef)
    if function is None or not ctx.names.reads_parameter(value):
        return False
    for call in ctx.calls_in(function):
        names = ctx.names.qualified_names_at(call.func)
        if (names & _PLAIN_TENSORS or any(q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()
                                          for q in names)) and any(
                isinstance(a.value, cst.Name) and a.value.value == value.value for a in call.args):
            return True  # handed to a layer as a size or rate, or made a plain tensor (`torch.Tensor(alpha)`)
    return False


def _param_default(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The default of the parameter ``name`` reads where nothing rebinds it before (``self.gamma = gamma``
    with ``def __init__(self, gamma=2.0)``); None otherwise."""
    if not ctx.names.reads_parameter(name):
        return None
    function = ctx.enclosing(name, cst.FunctionDef)
    if function is None:
        return None
    for p in [*function.params.params, *function.params.kwonly_params]:
        if p.name.value == name.value:
            return p.default
    return None


def plain_object_method(ctx: FileContext, call: cst.Call) -> bool:
    """``net.backward(x, out, y)`` on an instance of a plain Python class (see :func:`not_a_module`), or of a
    project class (a module too) that defines the method itself and whose code runs no autograd (a
    gradient step written by hand): the class's own method, not ``Tensor.backward``.  Ask after the walk."""
    recv = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(recv, (cst.Name, cst.Attribute)):
        return False
    if not_a_module(ctx, recv):
        return True
    found = instance_class(ctx, recv)
    method = find_method(found[0], found[1], call.func.attr.value) if found is not None else None  # type: ignore[union-attr]
    return method is not None and not _AUTOGRAD.search(method[0].bare_code(method[1].body))


#: what code running autograd spells (a backward pass, a gradient read, the autograd API)
_AUTOGRAD = re.compile(r"\bbackward\b|\bautograd\b|\.grad\b")


def method_owner(ctx: FileContext, func: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """For ``model.encoder`` where ``model`` is built from a project class that defines a method
    ``encoder`` (itself or a project base class): ``model``, whose mode and gradients the method runs
    with; None otherwise (a submodule attribute, an unknown object)."""
    if not isinstance(func, cst.Attribute) or not isinstance(func.value, (cst.Name, cst.Attribute)):
        return None
    found = instance_class(ctx, func.value)  # (also through the project's factories)
    if found is None or not defines_method(found[0], found[1], func.attr.value, 0):
        return None
    method = find_method(found[0], found[1], func.attr.value)
    if method is not None and _builds_callable_only(method[1]):
        return None  # `model.make_checker()` returns a closure that runs the model later: this call runs nothing
    return func.value


def _builds_callable_only(method: cst.FunctionDef) -> bool:
    """A method whose own code (not a nested function's) reads ``self`` in no call and returns a function it
    defines (``def check(x): return loss(self(x))`` ... ``return check``) or a lambda: calling it builds a
    callable and runs nothing."""
    params = method.params.params
    if not params:
        return False
    me = params[0].name.value
    nested = {s.name.value for s in method.body.body if isinstance(s, cst.FunctionDef)} \
        if isinstance(method.body, cst.IndentedBlock) else set()
    returns = [r for r in function_returns(method)]
    if not returns or not all(isinstance(r.value, cst.Lambda) or isinstance(r.value, cst.Name) and r.value.value in nested
                              for r in returns):
        return False
    stack: List[cst.CSTNode] = list(method.body.children)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, cst.Call) and any(isinstance(n, cst.Name) and n.value == me for n in iter_nodes(node)):
            return False
        stack.extend(node.children)
    return True


__all__ = [
    "is_model_value",
    "HOLDERS",
    "NO_MODULE_LITERALS",
    "KIND_WORDS",
    "Kind",
    "LOG_SOFTMAX",
    "ModelSummary",
    "SHAPE_METHODS",
    "SIGMOID",
    "SOFTMAX",
    "built_output",
    "class_summary",
    "given_no_module",
    "handwritten_sigmoid",
    "holds_module",
    "is_model",
    "is_module_value",
    "layer_mode_dependent",
    "method_owner",
    "mode_layer_of",
    "module_class",
    "module_output",
    "not_a_module",
    "op_kind",
    "output_kind",
    "param_is_model",
    "plain_class",
    "plain_object_method",
    "holds_no_parameters",
    "parameter_free",
    "parameter_free_layer",
    "setting_value",
    "switches_mode",
]
