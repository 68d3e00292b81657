"""What the evaluation rules share: which calls run a model, which code evaluates (validation, testing,
prediction), whether it runs with gradients disabled, and which mode (``train``/``eval``) the model is in.

Evaluation code is found from two kinds of evidence, and both lean towards silence:

- a function named for evaluation (``validate``, ``evaluate``, ``test``, ``predict``, ``inference``;
  or one called with a validation/test loader) that runs a model in a loop, computes metrics or
  switches the model to eval mode, and never trains (no backward, no optimizer step, no gradient
  reads: adversarial evaluation and saliency maps need gradients);
- a loop that runs a model and computes metrics (or iterates a validation/test loader) without
  training, in any function.

Framework hooks (Lightning's ``validation_step``/``test_step``/``predict_step`` and ``on_*`` hooks, which
the framework already runs under ``no_grad`` and in eval mode), pytest tests, and the inference methods of
the model classes themselves (library API: the caller chooses the mode) are not evaluation code.

Name questions (is ``model`` a parameter or an imported function?) are answered while the walk is in the
right scope; the rules record model calls as they are visited and ask for the evaluation sites once the
module is done (:func:`evaluation_facts`).
"""
from __future__ import annotations

import builtins
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.context import (
    RUN_METHODS,
    Fact,
    FileContext,
    arg,
    assignment_targets,
    callee_name,
    keyword_arg,
    method_name,
    receiver,
    run_object,
)
from torchlint.analysis import effects
from torchlint.analysis.effects import HOLDERS, LOGGING_METHODS, records_nothing
from torchlint.analysis.mode_layers import CONTAINER_CLASSES, FUNCTIONAL_DROPOUT, library_model_mode
from torchlint.analysis.names import dotted_name, root_name
from torchlint.analysis.ops import built_empty, grown_content, moves_itself
from torchlint.analysis.naming import is_model_name, snake
from torchlint.analysis.walk import children, iter_nodes, target_names
from torchlint.analysis.definitions import (
    arguments_for_param,
    base_classes,
    bind_arguments,
    class_body,
    built_values,
    call_sites,
    instance_calls,
    every_method_call,
    class_of_library_constructor,
    constructor_arguments,
    Invocation,
    value_invocations,
    called_function,
    defines_method,
    definition_named,
    module_members,
    passed_argument,
    definition_of,
    find_method,
    function_returns,
    held_values,
    parameter_owner,
    instance_class,
    list_elements,
    position,
    same_reference,
    project_arguments_for_param,
    project_call_sites,
    strip_moves as strip_moves_expr,
)
from torchlint.families.training.graph_free import builds_state_only, element_without_graph
from torchlint.analysis.positions import line_of
from torchlint.analysis.values import module_entry, open_frame, subscript_values
from torchlint.analysis.roles import (
    NO_MODULE_LITERALS,
    class_summary,
    given_no_module,
    parameter_free,
    parameter_free_layer,
    setting_value,
    is_model,
    is_model_value,
    is_module_value,
    layer_mode_dependent,
    method_owner,
    mode_layer_of,
    module_class,
    not_a_module,
    param_is_model,
    holds_module,
    switches_mode,
)
from torchlint.analysis.training import (
    LOOP_TYPES,
    backward_operand,
    base_names,
    calls_through_helpers,
    differentiates,
    is_backward_like,
    is_detached,
    is_loss_call,
    object_kind,
    optimizer_of_step,
    under_no_grad,
)

EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validate|validation|eval|evaluate|evaluation|test|testing|predict|prediction|infer|"
    r"inference)(_|\d|$)"
)
#: the calls that let code outside a forward pass capture what it computes (its activations, their gradients)
CAPTURING_CALLS = frozenset({"register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook",
                             "register_module_forward_pre_hook", "register_backward_hook",
                             "register_full_backward_hook", "register_full_backward_pre_hook", "retain_grad"})
HOOK_NAME = re.compile(r"^on_|_step$|_step_end$|_(epoch|batch|loop)_(start|end)$|_end$|^setup|dataloader|^configure")
METRIC_NAME = re.compile(
    r"correct|accurac|(^|_)acc(_|\d|s?$)|metric|(^|_)score|f1|precision|recall|(^|_)iou|(^|_)auc|top_?\d|"
    r"psnr|ssim|dice|evaluator|meter|(^|_)hits"
)
PREDICTION_LIST = re.compile(r"(^|_)(pred|preds|prediction|predictions|outputs|logits|results)$")
EVAL_DATA = re.compile(
    r"(^|[^a-z])(val|valid|validation|test|testing|eval|evaluation|dev|holdout)"
    r"(_|[a-z]*loader|[a-z]*data|set|ds\b|dl\b|iter)"
)
TRAIN_CALL = re.compile(
    r"^(train_step|training_step|train_one_epoch|train_epoch|train_batch|fit|optimize|optimizer_step|"
    r"step_optimizer|manual_backward)$|^train_"
)
#: the gradient work one name of the code spells (``backward``, ``x.requires_grad``, ``torch.autograd``)
_GRAD_WORDS = re.compile(r"requires_grad|autograd|enable_grad|set_grad_enabled|backward|retain_grad|grad_fn")
#: the same in a text, with the reads of ``.grad``
NEEDS_GRAD = re.compile(r"\.grad\b|" + _GRAD_WORDS.pattern)
#: the gradient APIs besides a backward pass (which is followed from the values it differentiates)
GRAD_READS = re.compile(r"\.grad\b|requires_grad|autograd|enable_grad|set_grad_enabled|retain_grad|grad_fn")
MODEL_BASES = re.compile(r"(Module|Model|Layer|Block|Network|Net)$")


# -- models --------------------------------------------------------------------------------------
def model_of_call(ctx: FileContext, call: cst.Call, names_count: bool = False) -> Optional[cst.BaseExpression]:
    """For ``model(x)``, ``self.net(x)``, ``model.forward(x)``: the model expression; else None.

    The callee is a model when it is built as one (``cnn = CNN()``), holds one by what the code does
    with it (:func:`roles.holds_module`: ``clf.eval()``, callers passing modules) or is a submodule of
    a model (``vae.decoder(z)``); its name decides nothing, except for a caller that asks for the old
    guess with ``names_count`` (the batch evidence of squeezes: ``model``, ``net``, ``self.encoder``).  A callee
    that resolves to an import, a builtin, or a function or class defined in the module is a function,
    not a model object; a call passing ``training=`` is Keras, not torch.
    """
    func = call.func
    model = run_object(func)
    name = dotted_name(model)
    if name is None:
        return None
    last = name.rsplit(".", 1)[-1]
    # what no evidence of a model can outweigh comes first: these answers are cheap (an import or a
    # builtin where the call is: after the walk, looked up from the call's own scope)
    if ctx.names.qualified_names(model):
        return None
    if isinstance(model, cst.Name) and (model.value in ctx.functions() or model.value in ctx.classes()) and \
            not _rebound_after_definition(ctx, model):
        return None
    if isinstance(model, cst.Attribute) and dotted_name(model.value) in ("self", "cls") and last in ctx.functions():
        return None  # a method of the class
    parent = ctx.parent(call)
    if isinstance(parent, cst.Expr) or (
        isinstance(parent, cst.Assign) and all(
            isinstance(t.target, cst.Name) and t.target.value == "_" for t in parent.targets
        )
    ):
        return None  # output discarded: calibration, warm-up, feature hooks; not an evaluation
    if keyword_arg(call, "training") is not None:
        return None
    built = is_model(ctx, model) is True or switches_mode(ctx, model)
    if not built and not (holds_module(ctx, model) or _member_of_model(ctx, model) or scores_a_batch(ctx, call)) \
            and not (names_count and is_model_name(last) and not not_a_module(ctx, model)):
        return None  # neither built as a module (`cnn = CNN()`) nor used as one (`clf.eval()`), nor a
        # member of a model (`vae.decoder(z)`), whatever its name
    if not built and isinstance(model, cst.Attribute) and not _model_owner(ctx, model.value, names_count):
        return None  # `accelerator.unwrap_model(net)`, `trainer.get_model()`: a method of an object no evidence
        # says is a model; the attribute's name alone does not make the call a forward pass
    owner = method_owner(ctx, model) if model is func else None
    if owner is not None:
        model = owner  # `model.encoder(x)` with `def encoder(self, x)` in the model's class: runs `model`
    return model


def _rebound_after_definition(ctx: FileContext, name: cst.Name) -> bool:
    """``def model(xb): ...`` earlier in a notebook, ``model = Model()`` later: where ``name`` is read, a plain
    assignment made after every ``def``/``class`` of that name reaches it on every path."""
    function = ctx.enclosing(name, cst.FunctionDef)
    found = ctx.names.reaching_assignment(name.value, name, function)
    if found is None:
        return False
    defined: List[cst.CSTNode] = list(ctx.functions().get(name.value, ()))
    cls = ctx.classes().get(name.value)
    if cls is not None:
        defined.append(cls)
    at = position(ctx, found[0])
    return all(position(ctx, d) < at for d in defined)


#: what ranks a model's scores: the class or token a prediction picks
_RANKS = frozenset({"argmax", "max", "topk", "argsort", "sort"})
#: what keeps a batch the same batch (moved, cast)
_BATCH_MOVES = frozenset({"to", "cuda", "cpu", "float", "double", "half", "long", "contiguous"})


def scores_a_batch(ctx: FileContext, call: cst.Call) -> bool:
    """``outputs = f(images)`` (``f`` a name) on a batch of a loop (``for images, labels in loader``,
    moved or cast) whose output is ranked (``torch.argmax(outputs, dim=1)``, ``outputs.max(1)``,
    ``.topk(k)``): a prediction over a batch, a model's forward pass by what flows in and out of it,
    whatever the callee is called.  After the walk only."""
    if not ctx.walked or not call.args or not isinstance(call.func, cst.Name):
        return False  # (an attribute, `net.head(x)`, is judged by what its owner is: a member or not)
    if call.func.value in ctx.functions() or ctx.names.qualified_names_at(call.func) or \
            call.func.value in ctx.classes():
        return False  # a function or class of the file, or an import: code, not a model object
    if given_no_module(ctx, call.func):
        return False  # a caller passes a lambda or a plain object for it
    function = ctx.enclosing(call, cst.FunctionDef)
    targets: Set[str] = set()
    node: Optional[cst.CSTNode] = ctx.parent(call)
    while node is not None and node is not function:
        if isinstance(node, cst.For):
            targets.update(n.value for n in iter_nodes(node.target) if isinstance(n, cst.Name))
        node = ctx.parent(node)
    if not (targets and any(_batch_of(ctx, a.value, targets) for a in call.args if a.keyword is None)
            or _runs_on_drawn_batch(ctx, call)):
        return False
    if _ranked(ctx, call):
        return True
    holder = ctx.parent(call)
    if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
        out = holder.targets[0].target
        scope = function if function is not None else ctx.module
        return any(n is not out and _ranked(ctx, n) for n in ctx.names_in(scope, out.value))
    return False


def _batch_of(ctx: FileContext, value: cst.BaseExpression, targets: Set[str], hops: int = 0) -> bool:
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _BATCH_MOVES:
        value = value.func.value
    if not isinstance(value, cst.Name) or value.value not in targets:
        return False
    if hops:
        return True
    # a loop target, or its rebinding as the same batch moved (`images = images.to(device)`)
    return all(_batch_of(ctx, v, targets, 1) for v in ctx.names.values_at(value))


def _ranked(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``value`` is what a ranking reads: ``value.argmax(1)``, ``torch.max(value, 1)``, ``value.topk(k)``."""
    parent = ctx.parent(value)
    if isinstance(parent, cst.Attribute) and parent.value is value and parent.attr.value in _RANKS:
        return isinstance(ctx.parent(parent), cst.Call)
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.args[0] is parent and bool(
            {q.rsplit(".", 1)[-1] for q in ctx.names.qualified_names_at(call.func) if q.startswith("torch.")} & _RANKS)
    return False


def _member_of_model(ctx: FileContext, member: cst.BaseExpression) -> bool:
    """``vae.decoder(z)``: ``owner.attr`` where ``owner`` is an instance of a project
    ``nn.Module`` class that builds ``attr`` as a module in its methods (``self.decoder = nn.GRU(...)``)
    (a method of the class is :func:`module_level_method_model`'s: it runs the model only when it runs
    its layers).  A method of ``nn.Module`` itself (``state_dict``, ``parameters``) is no member."""
    if not isinstance(member, cst.Attribute) or dotted_name(member.value) in ("self", "cls"):
        return False
    owner = member.value
    found = instance_class(ctx, owner)  # (`def greedy(model, x): model.decoder(...)`: every caller's class)
    if found is None:
        return False
    dctx, cls = found
    if not module_class(dctx, cls):
        return False
    name = member.attr.value
    if defines_method(dctx, cls, name, 0):
        return False
    scope = dctx.names.scope_of(cls)
    values = scope.attrs.get(name) if scope is not None else None
    return bool(values) and all(_kept_module(dctx, v) for v in values)


def _kept_module(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """A value a module class keeps on ``self`` is a module: built as one, or a parameter of its constructor
    that every construction in view passes a model for (``self.encoder = encoder`` of ``Seq2Seq(enc, dec)``)."""
    passed = constructor_arguments(ctx, value) if isinstance(value, cst.Name) else None
    if passed:
        return all(is_model(actx, a) is True if isinstance(a, (cst.Name, cst.Attribute)) else is_module_value(actx, a)
                   for actx, a in passed)
    return is_module_value(ctx, value)


def _model_owner(ctx: FileContext, owner: cst.BaseExpression, names_count: bool = False) -> bool:
    """Whether ``owner`` in ``owner.attr(...)`` may hold a model whose attribute (a submodule) or method
    runs it: ``self``/``cls`` (a method or submodule of the class), a value built or annotated as a model
    or as an instance of a project class, or one that holds a module by what the code does with it
    (``model.encoder(x)`` with ``model`` a parameter).  An object built from a plain project class or
    from a library call that builds no module (``accelerator = Accelerator()``) holds none."""
    name = dotted_name(owner)
    if name is None:
        return False
    if name in ("self", "cls"):
        return True
    if not isinstance(owner, (cst.Name, cst.Attribute)) or not_a_module(ctx, owner):
        return False
    if is_model(ctx, owner) is True or instance_class(ctx, owner) is not None:
        return True
    values = built_values(ctx, owner)
    if values:
        return False  # built here from something that is not a model
    head = owner
    while isinstance(head, cst.Attribute):
        head = head.value
    if isinstance(head, cst.Name) and head.value not in ("self", "cls") and ctx.names.qualified_names(head):
        return False  # an imported module or object (`accelerate.utils`, `wandb.run`)
    return holds_module(ctx, owner) or (names_count and is_model_name(name.rsplit(".", 1)[-1]))




def module_level_method_model(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """For ``model.generator_forward(z)`` outside any class, where ``model`` is built from a project
    ``nn.Module`` class whose own method ``generator_forward`` runs the model's layers without training
    (no backward pass or optimizer step in reach, no gradient reads): ``model``, which the call runs in
    its mode and with the caller's gradients; else None."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value in _MODULE_METHODS:
        return None
    if isinstance(ctx.parent(call), cst.Expr) or keyword_arg(call, "training") is not None:
        return None  # the output is dropped, or a Keras call
    if ctx.enclosing(call, cst.ClassDef) is not None:
        return None  # a method of a class: the model's own API, or a trainer's (judged elsewhere)
    owner = method_owner(ctx, func)
    if owner is None:
        return None
    built = is_model(ctx, owner) is True
    if not built and not (isinstance(owner, cst.Name) and ctx.names.is_param_at(owner)):
        return None
    found = instance_class(ctx, owner)  # (a parameter: the class of the model every caller passes)
    if found is None or not built and not module_class(found[0], found[1]):
        return None
    method = find_method(found[0], found[1], func.attr.value)
    if method is None:
        return None
    where, function = method
    name = snake(function.name.value)
    if HOOK_NAME.search(name) or TRAIN_CALL.search(name) or trains(where, function, depth=2) or needs_grad(
        where, function
    ):
        return None  # a training step, a framework hook, or code that reads gradients
    if not any(isinstance(r.value, cst.BaseExpression) for r in iter_nodes(function.body) if isinstance(r, cst.Return)):
        return None  # hands nothing back: no prediction
    if not _runs_layers(where, found[1], function):
        return None  # `init_hidden(n)` builds a fresh state (`torch.zeros(...)`): no layer of the model runs
    return owner


def method_turns_grad_off(ctx: FileContext, call: cst.Call) -> bool:
    """``model.sample(25)`` where the method of the model's class runs every layer it runs under ``no_grad``
    (``@torch.no_grad() def sample``): the call records no graph, whatever the caller does."""
    func = call.func
    owner = method_owner(ctx, func) if isinstance(func, cst.Attribute) else None
    found = instance_class(ctx, owner) if owner is not None else None
    method = find_method(found[0], found[1], func.attr.value) if found is not None else None  # type: ignore[attr-defined]
    if method is None or found is None:
        return False
    layer_calls = _layer_calls(method[0], found[1], method[1])
    return bool(layer_calls) and all(under_no_grad(method[0], c) for c in layer_calls)


def _layer_calls(ctx: FileContext, cls: cst.ClassDef, function: cst.FunctionDef) -> List[cst.Call]:
    """The calls of the method ``function`` of ``cls`` that may run a layer of the model: ``self(...)``, a
    submodule, a method that runs one (:func:`_runs_layers`); not a mode switch or another module method
    (``self.eval()``, ``self.parameters()``), nor a method of the class or of a project base class that
    runs none (``self._device()``)."""
    out = []
    for c in ctx.calls_in(function):
        if not isinstance(c.func, (cst.Name, cst.Attribute)) or (dotted_name(c.func) or "").split(".")[0] != "self":
            continue
        if isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name):
            name = c.func.attr.value
            if name in _MODULE_METHODS:
                continue  # `self.eval()`: no layer runs
            found = find_method(ctx, cls, name)
            owner = found[0].enclosing(found[1], cst.ClassDef) if found is not None else None
            if found is not None and found[1] is not function and isinstance(owner, cst.ClassDef) \
                    and not _runs_layers(found[0], owner, found[1]):
                continue  # `self._device()`: a method that runs no layer
        out.append(c)
    return out


def _runs_layers(ctx: FileContext, cls: cst.ClassDef, function: cst.FunctionDef, depth: int = 2) -> bool:
    """Whether the method ``function`` of the model class ``cls`` runs a part of the model: calls
    ``self(...)``, ``self.forward(...)``, a submodule (``self.rnn(x)``: an attribute that is no method of the
    class), or another method of the class that does."""
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    methods = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
    for call in ctx.calls_in(function):
        func = call.func
        if isinstance(func, cst.Name) and func.value == "self":
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            name = func.attr.value
            if name in _MODULE_METHODS:
                continue  # `next(self.parameters())`, `self.eval()`: no layer runs
            if name in RUN_METHODS or name not in methods:
                return True
            if depth > 0 and methods[name] is not function and _runs_layers(ctx, cls, methods[name], depth - 1):
                return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and \
                dotted_name(func.value.value) == "self":
            if func.attr.value in _MODULE_METHODS or not _may_hold_module(ctx, func.value):
                continue  # `self.net.state_dict()`, `self.meters.items()`: no layer runs
            return True  # `self.encoder.encode(x)`: a method of a submodule
    return False


def _may_hold_module(ctx: FileContext, attr: cst.Attribute) -> bool:
    """``self.<attr>`` may hold a module: the class does not give it only instances of plain classes, or
    containers and numbers built in place (``{k: Meter() for k in names}``, ``dict()``); unknown counts
    as may."""
    if not_a_module(ctx, attr):
        return False
    values = built_values(ctx, attr)
    return not values or not all(
        isinstance(v, NO_MODULE_LITERALS) or isinstance(v, cst.Call) and _plain_value(ctx, v) for v in values)


def _plain_value(ctx: FileContext, call: cst.Call) -> bool:
    """A call that builds a container or a number (``dict(...)``, ``{k: Meter() ...}``), no module."""
    return isinstance(call.func, cst.Name) and call.func.value in ("dict", "list", "tuple", "set", "int", "float",
                                                                   "defaultdict", "OrderedDict")


def _built_in_eval_mode(value: cst.BaseExpression) -> bool:
    """A value whose method chain switches to eval mode: ``Net().to(device).eval()``; or a Hugging Face
    ``X.from_pretrained(...)``, which returns the model in eval mode."""
    return _switched_in_chain(value, loaded=True)


def _switched_in_chain(value: cst.BaseExpression, loaded: bool = False) -> bool:
    """A chain of calls on a construction that puts it in eval mode: ``Net().eval()``,
    ``InceptionV3().eval().to(device)``; with ``loaded``, a Hugging Face ``from_pretrained`` in it too."""
    cur: Optional[cst.BaseExpression] = value
    while isinstance(cur, cst.Call):
        if eval_mode_target(cur) is not None or loaded and method_name(cur) == "from_pretrained":
            return True
        cur = receiver(cur)
    return False


def built_in_eval_mode(ctx: FileContext, passed: cst.BaseExpression) -> bool:
    """The value ``passed`` holds is built in eval mode (:func:`_built_in_eval_mode`: ``Net().eval()``,
    ``GPT2LMHeadModel.from_pretrained(name)``): the assignment every path to it runs last
    (``inception = nn.DataParallel(inception).eval()`` after ``inception = load()``), else every value of
    the name; and the file never switches it back to training mode."""
    if not isinstance(passed, cst.Name) or _switched_to_train(ctx, passed):
        return False
    reaching = ctx.names.reaching_assignment(passed.value, passed, enclosing_function(ctx, passed))
    if reaching is not None and reaching[1] is None:
        value = reaching[0].value  # the assignment every path to `passed` runs last
        return _built_in_eval_mode(value) or _returned_in_eval_mode(ctx, value)
    values = ctx.names.values_at(passed)
    return bool(values) and all(_built_in_eval_mode(v) or _returned_in_eval_mode(ctx, v) for v in values)


def _returned_in_eval_mode(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``load_model(path)``: a call of a project function each of whose returns hands back a name the
    function left in eval mode on every path (``model.eval()``, then ``model = model.to(device)``)."""
    core = strip_moves_expr(value)
    target = called_function(ctx, core) if isinstance(core, cst.Call) else None
    if target is None:
        return False
    fctx, function, _offset = target
    returns = function_returns(function)
    return bool(returns) and all(isinstance(r.value, cst.Name) and modes_reaching(fctx, r, fctx.code(r.value)) == {EVAL}
                                 for r in returns)


_TRAIN_SWITCHES: "Fact[List[cst.BaseExpression]]" = Fact("evaluation.train_switches")


def _switched_to_train(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """Whether the file may turn ``model`` back to training mode: a ``train()`` call on it (the same code),
    or on a parameter of a function (a helper that may be handed the model)."""
    switches = _TRAIN_SWITCHES.get(ctx)
    if switches is None:
        switches = [r for c in ctx.calls_in(ctx.module) if train_mode_call(c) for r in [receiver(c)] if r is not None]
        _TRAIN_SWITCHES.put(ctx, switches)
    code = ctx.code(model)
    for r in switches:
        if ctx.code(r) == code:
            return True
        root = r
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value != "self" and ctx.enclosing(r, cst.FunctionDef) is not None and \
                _is_param_of_enclosing(ctx, root):
            return True
    return False


def _is_param_of_enclosing(ctx: FileContext, name: cst.Name) -> bool:
    function = ctx.enclosing(name, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return False
    p = function.params
    return any(q.name.value == name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params])


def _held_names(expr: cst.BaseExpression) -> List[str]:
    """:func:`base_names`, also of the values of dict and set displays (``{"train": acc, "val": v}``):
    a container that holds a value hands it back with it."""
    out: List[str] = []
    stack: List[cst.BaseExpression] = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.Dict):
            stack.extend(el.value for el in e.elements)  # `**other` too: its values are handed back
        elif isinstance(e, cst.Set):
            stack.extend(el.value for el in e.elements)
        elif isinstance(e, (cst.Tuple, cst.List)):
            stack.extend(el.value for el in e.elements)
        else:
            out.extend(base_names(e))
    return out


_LIGHTNING_TRAINERS = frozenset({"pytorch_lightning.Trainer", "lightning.Trainer", "lightning.pytorch.Trainer",
                                 "pytorch_lightning.trainer.Trainer", "lightning.pytorch.trainer.Trainer"})


def _bound_names(statement: cst.CSTNode) -> Set[str]:
    """The names the assignments of a simple statement line bind (``out, h = model(x, h)``: ``out``, ``h``)."""
    return {n.value for small in getattr(statement, "body", ()) for target in assignment_targets(small)
            for n in iter_nodes(target) if isinstance(n, cst.Name)}


def _deserialised(ctx: FileContext, value: cst.Call) -> bool:
    """``torch.load``/``torch.jit.load``/``torch.export.load``: the model keeps the mode it was saved in."""
    names = ctx.names.qualified_names(value.func)
    return any(
        q in ("torch.load", "torch.jit.load", "torch.export.load", "torch.package.PackageImporter")
        or q.startswith("torch.jit.")
        for q in names
    )


def _pretrained(ctx: FileContext, value: cst.Call) -> bool:
    """A library model built with trained weights: ``models.resnet18(pretrained=True)``,
    ``models.vgg16(weights="DEFAULT")``, ``timm.create_model(name, pretrained=True)``,
    ``AutoModel.from_pretrained(path)``; an imported constructor, not a class of the project."""
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
        return True
    if not ctx.names.qualified_names(func):
        return False  # (a class or function of the file: its `pretrained` argument means what it says there)
    for a in value.args:
        if a.keyword is None:
            continue
        if a.keyword.value == "pretrained":
            return isinstance(a.value, cst.Name) and a.value.value == "True"
        if a.keyword.value == "weights":
            return not (isinstance(a.value, cst.Name) and a.value.value == "None")
    return False


#: a verdict on a model's mode dependence (True, False, None for unknown) and, with True, where it is seen
#: (the construction of its dropout or batch-norm layer, or its read of ``self.training``) when one place shows it
Mode = Tuple[Optional[bool], Optional[Tuple[FileContext, cst.CSTNode]]]
_UNKNOWN: Mode = (None, None)

#: how many names (parameters, attributes, wrapped models) a model is followed through; descending into
#: the parts of one construction (``nn.Sequential(Encoder(Layer(), 2), head)``) costs nothing, it ends
_NAME_HOPS = 2

#: how many values a model is followed through when the last ones are factories of the project
_FACTORY_HOPS = 4


def model_mode_dependent(ctx: FileContext, model: cst.BaseExpression, hops: int = 0) -> Optional[bool]:
    """Whether the model behind ``model`` has a layer that acts differently in train and eval mode, from
    how it is built: True (dropout, batch norm, ... somewhere), False (provably none), None (unknown: a
    library model, a factory, a parameter no caller in the file explains).  A parameter takes the
    verdicts of the arguments every call in the file passes."""
    return model_mode(ctx, model, hops)[0]


def mode_evidence(ctx: FileContext, model: cst.BaseExpression, hops: int = 0
                  ) -> Optional[Tuple[FileContext, cst.CSTNode]]:
    """Where the model behind ``model`` is proven mode-dependent (see :func:`model_mode_dependent`): the
    construction of its dropout/batch-norm layer (``nn.Dropout(0.3)``, ``resnet18()``) or its read of
    ``self.training``, in the file that holds it; None when no single place shows it."""
    verdict, evidence = model_mode(ctx, model, hops)
    return evidence if verdict is True else None


def model_mode(ctx: FileContext, model: cst.BaseExpression, hops: int = 0) -> Mode:
    """The one answer behind :func:`model_mode_dependent` and :func:`mode_evidence`: the verdict and, when
    it is True, where it is seen.  A parameter takes the verdicts of the arguments its callers pass (in
    the file, else in the project); a name or attribute those of the values it holds (what was added to a
    container built empty included); a construction is judged by :func:`_value_mode`."""
    if hops > _NAME_HOPS + _FACTORY_HOPS:
        return _UNKNOWN
    if isinstance(model, cst.Name) and ctx.names.is_param_at(model) and not ctx.names.unpacked_values(model):
        if hops >= _NAME_HOPS:
            return _UNKNOWN
        args = arguments_for_param(ctx, model)
        # called from other files of the project only: the models their calls pass
        placed = [(ctx, a) for a in args] if args else project_arguments_for_param(ctx, model)
        if not placed:
            return _UNKNOWN
        return _combine_modes([_part_mode(octx, a, hops) for octx, a in placed])
    if not isinstance(model, (cst.Name, cst.Attribute)):
        core = strip_moves_expr(model)
        if core is not model and isinstance(core, (cst.Name, cst.Attribute)):
            return model_mode(ctx, core, hops)  # `net.to(device)` handed over: the model `net` holds
        return _value_mode(ctx, model, hops)
    values = held_values(ctx, model)
    if not values:
        if isinstance(model, cst.Attribute) and isinstance(model.value, cst.Name) \
                and model.value.value not in ("self", "cls"):
            return _member_mode(ctx, model, hops)
        return _UNKNOWN
    modes: List[Mode] = []
    for vctx, v in values:
        core = strip_moves_expr(v)
        grown = grown_content(ctx, model, core) if vctx is ctx else []
        override = _overriding_factory(ctx, model, core) if vctx is not ctx else None
        if grown:  # `model = nn.Sequential()` then `model.add_module("drop", nn.Dropout(0.5))`: what was added
            modes.append(_combine_modes([_part_mode(ctx, g, hops) for g in grown]))
        elif not isinstance(model, cst.Name) and built_empty(vctx, core):
            modes.append(_UNKNOWN)  # `self.layers = nn.ModuleList()`, filled later: what is added is not followed
        elif override is not None and hops < _FACTORY_HOPS:
            modes.append(_factory_mode(override[0], override[1], hops))
        elif isinstance(core, cst.Name) and core is not model and hops < _NAME_HOPS:
            modes.append(model_mode(vctx, core, hops + 1))  # `model = net`: the model the other name holds
        else:
            modes.append(_value_mode(vctx, v, hops))
    return _combine_modes(modes)


def call_minds_mode(ctx: FileContext, call: cst.Call, model: cst.BaseExpression) -> bool:
    """Whether ``call`` (``model(x)``, ``model.decode(x)``) may run a part of ``model`` that acts differently
    in train and eval mode.  False only when ``model`` is an instance of one project module class and
    the method the call runs (``forward`` for a call of the model) provably reaches no such part: every
    attribute of ``self`` it reads, itself or through the methods of ``self`` it calls, is a module whose
    mode verdict is False (:func:`model_mode`), it reads no ``self.training``, hands ``self`` to no code and
    calls no functional dropout.  A branch under ``if flag:`` is not run when ``flag`` is a parameter the
    call leaves at a false default or passes as ``False``/``None``/``0`` (``def forward(self, x,
    is_training=False)`` with the dropout under ``if is_training:``)."""
    owner = instance_class(ctx, model)
    if owner is None or not module_class(owner[0], owner[1]):
        return True
    if same_reference(call.func, model):
        name = "forward"
    elif isinstance(call.func, cst.Attribute) and same_reference(call.func.value, model):
        name = call.func.attr.value
    else:
        return True
    found = find_method(owner[0], owner[1], name)
    if found is None:
        return True
    mctx, method = found
    cls = mctx.enclosing(method, cst.ClassDef)
    if cls is not owner[1] or any(found is not None and isinstance(found[1], cst.ClassDef)
                                  for _base, found in base_classes(owner[0], owner[1], 0)):
        return True  # a method or a part a class of the project may give another way (a base, an override)
    return _method_minds_mode(mctx, cls, method, _false_flags(ctx, call, method), 0, set())


def _false_flags(ctx: FileContext, call: Optional[cst.Call], method: cst.FunctionDef) -> Set[str]:
    """The parameters of ``method`` that ``call`` (read in ``ctx``) leaves at a false default (``False``,
    ``None``, ``0``) or passes as such a literal, or as a name holding one on every path to the call (all of
    them with a false default when ``call`` is None: not known)."""
    out: Set[str] = set()
    positional = [*method.params.posonly_params, *method.params.params][1:]  # (`self` is bound)
    assigned = {n.value for a in iter_nodes(method.body) if isinstance(a, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                for t in assignment_targets(a) for n in iter_nodes(t) if isinstance(n, cst.Name)}
    for p in [*positional, *method.params.kwonly_params]:
        if p.name.value in assigned:
            continue  # `if dropout is None: dropout = self.p`: bound again in the method
        given = None
        if call is not None:
            passed = next((a for a in call.args if a.keyword is not None and a.keyword.value == p.name.value), None)
            if passed is None and p in positional:
                plain = [a for a in call.args if a.keyword is None]
                index = positional.index(p)
                if any(a.star for a in plain[:index + 1]):
                    continue  # `*args` may fill it
                passed = plain[index] if index < len(plain) else None
            if passed is None and any(a.star for a in call.args):
                continue  # `*args`/`**kwargs` may fill it
            given = passed.value if passed is not None else None
            if isinstance(given, cst.Name) and given.value not in ("False", "None", "True"):
                held = ctx.names.reaching_value(given)  # `use_mc = False` before the call, on every path
                given = held if isinstance(held, (cst.Name, cst.Integer)) else given
        value = given if given is not None else p.default
        if isinstance(value, cst.Name) and value.value in ("False", "None") or \
                isinstance(value, cst.Integer) and value.evaluated_value == 0:
            out.add(p.name.value)
    return out


def _method_minds_mode(ctx: FileContext, cls: cst.ClassDef, method: cst.FunctionDef, off: Set[str], depth: int,
                       seen: Set[int]) -> bool:
    """Whether running ``method`` of ``cls`` (``off``: its parameters known false) may reach a part that
    minds the mode (see :func:`call_minds_mode`)."""
    if depth > 3 or id(method) in seen:
        return depth > 3
    seen = seen | {id(method)}
    dead = [stmt.body for stmt in iter_nodes(method.body) if isinstance(stmt, cst.If)
            and isinstance(stmt.test, cst.Name) and stmt.test.value in off]
    for node in iter_nodes(method.body):
        if any(node is d or ctx.is_inside(node, d) for d in dead):
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return True  # a nested function: what it runs is not followed
        if isinstance(node, cst.Call) and (ctx.names.qualified_names_at(node.func) & FUNCTIONAL_DROPOUT):
            return True
        if isinstance(node, cst.Name) and node.value == "self":
            parent = ctx.parent(node)
            if not (isinstance(parent, cst.Attribute) and parent.value is node):
                return True  # `self` handed to code, or called (`self(x)`): not followed
            attr = parent.attr.value
            if attr == "training":
                return True
            around = ctx.parent(parent)
            if isinstance(around, cst.Call) and around.func is parent:
                other = find_method(ctx, cls, attr)
                if other is not None:
                    if _method_minds_mode(other[0], cls, other[1], _false_flags(ctx, around, other[1]), depth + 1, seen):
                        return True
                    continue
            values = held_values(ctx, parent)
            if values and all(setting_value(vctx, v) for vctx, v in values):
                continue  # `self.max_len`: a number
            if model_mode(ctx, parent)[0] is not False:
                return True  # a part that minds the mode, or one not known
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super":
            return True
    return False


def _overriding_factory(ctx: FileContext, model: cst.BaseExpression, core: cst.BaseExpression
                        ) -> Optional[Tuple[FileContext, cst.FunctionDef]]:
    """``self.model`` read in a subclass, set by its base as ``self.model = self._build_model()``: the
    method ``_build_model`` as the reading class finds it (its own override first, then its bases)."""
    if not (isinstance(model, cst.Attribute) and isinstance(model.value, cst.Name) and model.value.value == "self"):
        return None
    if not (isinstance(core, cst.Call) and isinstance(core.func, cst.Attribute)
            and isinstance(core.func.value, cst.Name) and core.func.value.value == "self"):
        return None
    cls = ctx.enclosing(model, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return None
    return find_method(ctx, cls, core.func.attr.value)


def _member_mode(ctx: FileContext, member: cst.Attribute, hops: int) -> Mode:
    """``model.encoder``, an attribute nothing in view assigns, of a name that holds an instance of a
    project class (``model = Seq2Seq(enc, dec)``), or of a parameter every caller passes one
    (``def translate(model, x)``): what that class keeps in the attribute (``self.encoder = nn.LSTM(...)``,
    or the module its constructions hand it: ``Seq2Seq(encoder, decoder)``); unknown when a model is of
    no known class, the class defines a method of that name, or does not set it."""
    if hops >= _NAME_HOPS:
        return _UNKNOWN
    owner = member.value
    assert isinstance(owner, cst.Name)
    if ctx.names.is_param_at(owner) and not ctx.names.unpacked_values(owner):
        args = arguments_for_param(ctx, owner)
        placed = [(ctx, a) for a in args] if args else (project_arguments_for_param(ctx, owner) or [])
    else:
        placed = [(ctx, owner)]
    attr = member.attr.value
    modes: List[Mode] = []
    for actx, a in placed:
        found = instance_class(actx, a) if isinstance(a, (cst.Name, cst.Attribute)) else None
        if found is None:
            return _UNKNOWN
        cctx, cls = found
        scope = cctx.names.scope_of(cls)
        values = scope.attrs.get(attr) if scope is not None else None
        if not values or defines_method(cctx, cls, attr, 0):
            return _UNKNOWN
        for v in values:
            passed = constructor_arguments(cctx, v) if isinstance(v, cst.Name) else None
            if passed:
                modes.extend(_part_mode(pctx, p, hops + 1) for pctx, p in passed)
            else:
                modes.append(_part_mode(cctx, v, hops + 1))
    return _combine_modes(modes)


def _part_mode(ctx: FileContext, part: cst.BaseExpression, hops: int) -> Mode:
    """A model given to or held by another: a name followed costs a hop (``net.to(device)`` is ``net``), an
    expression is descended into."""
    core = strip_moves_expr(part)
    if isinstance(core, (cst.Name, cst.Attribute)):
        return model_mode(ctx, core, hops + 1)
    return _value_mode(ctx, part, hops)


def _combine_modes(modes: Sequence[Mode]) -> Mode:
    """True when any part is (with the first place that shows one), else unknown when any part is, else False."""
    dependent = [m for m in modes if m[0] is True]
    if dependent:
        return next((m for m in dependent if m[1] is not None), dependent[0])
    if not modes or any(m[0] is None for m in modes):
        return _UNKNOWN
    return False, None


def _value_mode(ctx: FileContext, value: cst.BaseExpression, hops: int) -> Mode:
    """The verdict for a value a model is built from: a wrapper by the model it holds
    (``DistributedDataParallel(model)``), a project class by its summary and the modules its constructor
    keeps (``Wrap(backbone)``), a project factory by what it returns, a container of the library by its
    parts, any other construction by :func:`layer_mode_dependent`."""
    core = strip_moves_expr(value)
    if not isinstance(core, cst.Call):
        return _UNKNOWN
    wrapped = _held_module(ctx, core)
    if wrapped is not None:  # `DistributedDataParallel(model)`: switches the mode of the model it holds
        return _part_mode(ctx, wrapped, hops)
    found = definition_of(ctx, core.func) or class_of_library_constructor(ctx, core)
    entry = module_entry(ctx, core.func) if found is None and isinstance(core.func, cst.Subscript) else None
    if entry is not None:
        # `models.__dict__[args.arch](...)`: the builder the option's default names, a library's or the project's
        verdict = library_model_mode(entry)
        if verdict is not None:
            return verdict, (ctx, core) if verdict is True else None
        found = definition_named(ctx, entry)
    elif found is None and isinstance(core.func, cst.Subscript):
        # `model_dict[opt.model](num_classes=n)`: the builder a dict display gives for the option's default,
        # or, the key unknown, any of its builders (an evaluation must suit every model the option may pick)
        picked = subscript_values(open_frame(ctx, core), core.func)
        if picked:
            return _combine_modes([_builder_mode(ctx, core, f.ctx, v, hops) for f, v in picked])
    elif found is None and isinstance(core.func, cst.Attribute) and isinstance(core.func.value, cst.Subscript):
        # `model_dict[args.model].Model(args)`: the class of that name in each module the dict may give
        picked = subscript_values(open_frame(ctx, core), core.func.value)
        if picked:
            return _combine_modes([_builder_mode(ctx, core, f.ctx, v, hops, core.func.attr.value) for f, v in picked])
    if found is None and isinstance(core.func, cst.Call) and _getattr_call(ctx, core.func):
        # `getattr(net_module, config["arch"])(n)`: the class or factory of that name in a project module
        return _namespace_mode(ctx, core, ctx, core.func.args[0].value, core.func.args[1].value, hops)
    if found is None and isinstance(core.func, cst.Attribute) and isinstance(core.func.value, cst.Name) \
            and core.func.value.value == "self":
        # `self.model = self._build_model()`: what the class's own factory method returns
        method = called_function(ctx, core)
        found = (method[0], method[1]) if method is not None else None
    elif found is None and isinstance(core.func, cst.Attribute) and isinstance(core.func.value, (cst.Name, cst.Attribute)) \
            and not ctx.names.qualified_names_at(core.func):
        # `config.init_obj("arch", module_arch)`: the method of the project class `config` is an instance of
        # (`nn.Linear(...)`, an imported name, is no instance's method)
        owner = instance_class(ctx, core.func.value)
        found = find_method(owner[0], owner[1], core.func.attr.value) if owner is not None else None
    built = _built_by(ctx, core, found, hops) if found is not None else None
    if built is not None:
        return built
    if ctx.names.qualified_names_at(core.func) & CONTAINER_CLASSES and core.args:
        # `nn.Sequential(Encoder(Layer(), 2), head)`, `nn.Sequential(*layers)`: the verdicts of its parts,
        # each as a model of its own
        mode = _parts_mode(ctx, core, hops)
        if mode[0] is not None:
            return mode
    verdict = layer_mode_dependent(ctx, core)
    return verdict, (mode_layer_of(ctx, core) if verdict is True else None)


def _getattr_call(ctx: FileContext, call: cst.Call) -> bool:
    """``getattr(obj, name)``, the builtin, with two plain arguments (no default)."""
    return len(call.args) == 2 and not any(a.star or a.keyword for a in call.args) \
        and isinstance(call.func, cst.Name) and call.func.value == "getattr" and is_builtin(ctx, call.func)


def _namespace_mode(ctx: FileContext, core: cst.Call, mctx: FileContext, module: cst.BaseExpression,
                    key: cst.BaseExpression, hops: int) -> Mode:
    """The verdict for ``core``, a call of ``getattr(module, key)`` (``module`` and ``key`` read in
    ``mctx``) with ``module`` an imported project module: the class or factory the key names when it is a
    string, else any that the module offers (:func:`definitions.module_members`): the name comes from a
    configuration, and an evaluation must suit every model it may pick."""
    if not isinstance(module, (cst.Name, cst.Attribute)) or hops >= _FACTORY_HOPS:
        return _UNKNOWN
    if isinstance(module, cst.Name) and not mctx.names.holds_import(module):
        return _UNKNOWN
    modules = mctx.names.qualified_names_at(module)
    if len(modules) != 1:
        return _UNKNOWN
    qualified = next(iter(modules))
    if isinstance(key, cst.SimpleString):
        named = definition_named(mctx, f"{qualified}.{key.evaluated_value}")
        members = [named] if named is not None else None
    else:
        members = module_members(mctx, qualified)
    if not members:
        return _UNKNOWN
    modes: List[Mode] = []
    for member in members:
        if isinstance(member[1], cst.ClassDef) and not module_class(member[0], member[1]):
            continue  # a dataset, a configuration: not what builds the model
        built = _built_by(ctx, core, member, hops + 1)
        modes.append(built if built is not None else _UNKNOWN)
    return _combine_modes(modes)


def _built_by(ctx: FileContext, core: cst.Call, found: Tuple[FileContext, cst.CSTNode], hops: int) -> Optional[Mode]:
    """The verdict for ``core``, a call of the project class or factory ``found``: a class by its summary
    and what its constructor keeps of the call's arguments, a factory by what it returns; None when
    ``found`` is neither."""
    if isinstance(found[1], cst.ClassDef):
        summary = class_summary(found[0], found[1])
        if not summary.is_module:
            return _UNKNOWN
        if summary.mode_dependent is True:
            return True, summary.mode_layer
        if summary.holds_given:
            # `class Chain(nn.Sequential)` without an `__init__`: it holds the modules it is built from
            return _combine_modes([(summary.mode_dependent, None), _parts_mode(ctx, core, hops)])
        kept = _kept_modules(ctx, core, found)
        # `Wrap(backbone)` with `self.inner = inner` in `__init__`: the class holds what it is given too (a
        # name given costs a hop: model_mode's cap bounds the descent)
        return _combine_modes([(summary.mode_dependent, None)] + [_part_mode(ctx, a, hops) for a in kept])
    if isinstance(found[1], cst.FunctionDef):
        if hops >= _FACTORY_HOPS:
            return _UNKNOWN
        namespace = _namespace_factory(ctx, core, found[0], found[1], hops)
        if namespace is not None:
            return namespace
        return _factory_mode(found[0], found[1], hops)  # (a factory returning another's model too)
    return None


def _namespace_factory(ctx: FileContext, core: cst.Call, fctx: FileContext, function: cst.FunctionDef,
                       hops: int) -> Optional[Mode]:
    """``get_instance(models, "arch", config, n)`` of ``def get_instance(module, name, config, *args): return
    getattr(module, config[name]["type"])(*args)``: the verdict for the module this call passes; None when
    the function is not such a factory (every return builds through ``getattr`` of one parameter)."""
    returns = function_returns(function)
    if len(returns) != 1 or returns[0].value is None:
        return None
    built = strip_moves_expr(returns[0].value)
    if not (isinstance(built, cst.Call) and isinstance(built.func, cst.Call) and _getattr_call(fctx, built.func)):
        return None
    module, key = built.func.args[0].value, built.func.args[1].value
    if not (isinstance(module, cst.Name) and fctx.names.is_param_at(module)):
        return None
    passed = passed_argument(core, function, module.value)
    if passed is None or passed.star:
        return _UNKNOWN
    if isinstance(key, cst.Name) and fctx.names.is_param_at(key):
        given = passed_argument(core, function, key.value)
        key = given.value if given is not None and not given.star else key  # a string the call passes: that one
    return _namespace_mode(fctx, built, ctx, passed.value, key, hops)


def _builder_mode(ctx: FileContext, core: cst.Call, bctx: FileContext, builder: cst.BaseExpression, hops: int,
                  member: Optional[str] = None) -> Mode:
    """The verdict for ``core`` when it calls ``builder``, a value read in ``bctx`` (an entry of a dict of
    builders): a project class or factory, or a library model builder of the tables.  With ``member``,
    ``builder`` is a module and ``core`` calls its ``member`` (``{"a": a}[k].Model()``)."""
    if not isinstance(builder, (cst.Name, cst.Attribute)):
        return _UNKNOWN
    if member is not None:
        modules = bctx.names.qualified_names_at(builder)
        if len(modules) != 1 or (isinstance(builder, cst.Name) and not bctx.names.holds_import(builder)):
            return _UNKNOWN
        found = definition_named(bctx, f"{next(iter(modules))}.{member}")
        built = _built_by(ctx, core, found, hops) if found is not None else None
        return built if built is not None else _UNKNOWN
    found = definition_of(bctx, builder)
    if found is not None:
        built = _built_by(ctx, core, found, hops)
        return built if built is not None else _UNKNOWN
    verdicts = {library_model_mode(q) for q in bctx.names.qualified_names_at(builder)}
    if len(verdicts) != 1:
        return _UNKNOWN
    verdict = verdicts.pop()
    return (verdict, (ctx, core) if verdict is True else None) if verdict is not None else _UNKNOWN


def _parts_mode(ctx: FileContext, call: cst.Call, hops: int) -> Mode:
    """The verdict for a container built by ``call`` from its positional arguments: a display's elements,
    and for ``*layers`` the elements of that list (:func:`definitions.list_elements`); unknown where some
    part cannot be read (a keyword argument, a list from elsewhere), unless a part that is read decides."""
    modes: List[Mode] = []
    for a in call.args:
        value = a.value
        if a.keyword is not None:
            modes.append(_UNKNOWN)
        elif a.star and isinstance(value, cst.Name):
            elements, complete = list_elements(ctx, value)
            modes.extend(_part_mode(ctx, e, hops) for e in elements)
            if not complete:
                modes.append(_UNKNOWN)
        elif isinstance(value, (cst.List, cst.Tuple)):
            for e in value.elements:
                modes.append(_UNKNOWN if isinstance(e, cst.StarredElement) else _part_mode(ctx, e.value, hops))
        elif a.star:
            modes.append(_UNKNOWN)
        else:
            modes.append(_part_mode(ctx, value, hops))
    return _combine_modes(modes)


def _mode_free(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """Whether the model behind ``model`` provably behaves alike in train and eval mode (the verdict of
    :func:`model_mode` is False): its mode does not matter to an evaluation."""
    return model_mode(ctx, model)[0] is False


def _factory_mode(fctx: FileContext, function: cst.FunctionDef, hops: int) -> Mode:
    """A project function that builds and returns a model (``def resnet101(n): return ResNet(...)``): the
    verdicts of what it returns, through the names it returns."""
    modes: List[Mode] = []
    for node in iter_nodes(function.body):
        if not isinstance(node, cst.Return) or node.value is None:
            continue
        if fctx.enclosing(node, cst.FunctionDef) is not function:
            continue  # a nested function's return
        returned = strip_moves_expr(node.value)  # `return model.to(device)`: the module itself
        if isinstance(returned, cst.Name):
            values = built_values(fctx, returned)
            for v in values:
                core = strip_moves_expr(v)
                grown = grown_content(fctx, returned, core)
                if grown:  # `net = nn.Sequential()`, `net.add_module(...)`, `return net`: what was added
                    modes.append(_combine_modes([_part_mode(fctx, g, hops + 1) for g in grown]))
                else:
                    modes.append(_value_mode(fctx, v, hops + 1))
            if not values:
                modes.append(_UNKNOWN)
        else:
            modes.append(_value_mode(fctx, node.value, hops + 1))
    return _combine_modes(modes)


def model_from_code_not_in_view(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """Whether ``model`` is a parameter of a module-level function that no call in the project reaches:
    code not in view hands the model over (a user of the module, a notebook that reaches the file through
    ``sys.path``, a script importing it from elsewhere), so no construction of it is seen anywhere and
    the function itself is the only place that can set the mode it runs in.  False for a method or a
    nested function (the instance or the enclosing code may set the mode), for a function some call in
    the file or the project reaches (then the arguments those calls pass decide), and in a file that
    defines models when every one of them provably behaves alike in both modes (what the function is
    handed is most likely one of them)."""
    if not isinstance(model, cst.Name) or not ctx.names.is_param_at(model):
        return False
    function = parameter_owner(ctx, model)
    if function is None or function not in ctx.module.body:
        return False
    p = function.params
    if model.value not in {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]}:
        return False  # a local name bound from something unknown (`a, b = pair()`) is not a parameter
    if call_sites(ctx, function) or project_call_sites(ctx, function):
        return False
    verdicts = [summary.mode_dependent for summary in
                (class_summary(ctx, cls) for cls in ctx.classes().values()) if summary.is_module]
    return not verdicts or any(v is not False for v in verdicts)


def _kept_modules(ctx: FileContext, call: cst.Call, found: Tuple[FileContext, cst.ClassDef]) -> List[cst.BaseExpression]:
    """The arguments of ``call`` (a construction of the class in ``found``) for the parameters its ``__init__``
    keeps on the instance (``self.inner = inner``) and that are modules by construction: the modules the
    object holds besides the ones it builds."""
    method = find_method(found[0], found[1], "__init__")
    if method is None:
        return []
    ictx, init = method
    bound = bind_arguments(call, init, 1)
    if not bound:
        return []
    kept: Set[str] = set()
    for node in ictx.contents(init).assigns:
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                kept.update(_copies_kept(ictx, node.value, 0))
    return [a for name, a in bound.items() if name in kept and (
        is_module_value(ctx, a) if not isinstance(a, (cst.Name, cst.Attribute)) else is_model(ctx, a) is True)]




def _copies_kept(ctx: FileContext, value: cst.BaseExpression, depth: int) -> Set[str]:
    """The names whose module (or a deep copy of it) the value kept on ``self`` holds: ``layer``,
    ``copy.deepcopy(layer)``, a ``ModuleList``/``Sequential`` of those (a comprehension's element too), or
    what a project helper returns from its argument that way (``_get_clones(layer, n)``)."""
    if isinstance(value, cst.Name):
        return {value.value}
    out: Set[str] = set()
    if isinstance(value, (cst.List, cst.Tuple)):
        for el in value.elements:
            out |= _copies_kept(ctx, el.value, depth)
        return out
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return _copies_kept(ctx, value.elt, depth)
    if not isinstance(value, cst.Call) or depth > 2:
        return out
    names = ctx.names.qualified_names_at(value.func)
    if "copy.deepcopy" in names or names & CONTAINER_CLASSES:
        for a in value.args:
            out |= _copies_kept(ctx, a.value, depth)
        return out
    found = definition_of(ctx, value.func)
    if found is not None and isinstance(found[1], cst.FunctionDef):
        fctx, helper = found
        bound = bind_arguments(value, helper, 0) or {}
        returned: Set[str] = set()
        for r in function_returns(helper):
            if r.value is not None:
                returned |= _copies_kept(fctx, r.value, depth + 1)
        for param, a in bound.items():
            if param in returned and isinstance(a, cst.Name):
                out.add(a.value)
    return out


def _held_module(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The module a wrapper that holds one is given (``DataParallel(model)``, ``torch.compile(net)``)."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return None
    if not ctx.names.qualified_names_at(call.func) & HOLDERS:
        return None
    return call.args[0].value


def describe_evidence(ctx: FileContext, evidence: Optional[Tuple[FileContext, cst.CSTNode]]) -> str:
    """``its `nn.Dropout(0.3)` (line 9)``-like words for :func:`mode_evidence`'s answer, one line."""
    if evidence is None:
        return "its dropout or batch norm layer"
    where, node = evidence
    code = " ".join(where.code(node).split())
    if len(code) > 48:
        code = code[:45] + "..."
    line = line_of(where, node)
    place = ""
    same = where is ctx or where.path == ctx.path
    if where.path.endswith(".ipynb"):  # a notebook's program lines are not its cells' lines
        place = "this notebook" if same else os.path.basename(where.path)
    elif line is not None:
        place = f"line {line}" if same else f"{os.path.basename(where.path)}:{line}"
    if isinstance(node, cst.Attribute):
        return f"its code reading `{code}`" + (f" ({place})" if place else "")
    return f"its `{code}`" + (f" (built {'in' if where.path.endswith('.ipynb') else 'at'} {place})" if place else "")


def samples_on_purpose(ctx: FileContext, node: cst.CSTNode, calls: Sequence[cst.Call]) -> bool:
    """Monte-Carlo dropout by behaviour: the code asks for randomness at evaluation, a functional dropout
    with ``training=True`` (or a non-literal flag), or runs the model repeatedly on the same input (a loop
    or comprehension whose variable the call does not read: ``[model(x) for _ in range(20)]``), which
    only makes sense while dropout is active.  ``model.train()`` on purpose is
    :func:`restores_train_mode`'s."""
    for call in ctx.calls_in(node):
        if ctx.names.qualified_names_at(call.func) & FUNCTIONAL_DROPOUT:
            flag = arg(call, 2, "training")
            if flag is not None and not _false(flag.value):
                return True
    for call in calls:
        read = {n.value for a in call.args for n in iter_nodes(a.value) if isinstance(n, cst.Name)}
        for a in ctx.ancestors(call):
            if a is node or isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            loop = a.for_in if isinstance(a, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)) else a
            if isinstance(loop, (cst.For, cst.CompFor)):
                bound = {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
                if bound and not bound & read and isinstance(loop.iter, cst.Call) and \
                        isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range" and not (
                            isinstance(loop, cst.For) and any(assigned_within(ctx, loop, r) for r in read)):
                    return True  # `for _ in range(samples): preds.append(model(x))`, `x` the same each time
                break
    return False


def class_object(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is a class itself, not an instance: a class defined in the project
    (``Discriminator``) or a ``torch.nn`` layer class (``nn.Linear``)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    found = definition_of(ctx, expr)
    if found is not None:
        return isinstance(found[1], cst.ClassDef)
    names = ctx.names.qualified_names_at(expr)
    return bool(names) and all(
        q.startswith("torch.nn.") and not q.startswith("torch.nn.functional") and q.rsplit(".", 1)[-1][:1].isupper()
        for q in names
    )


def passed_classes(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """A "model" that is a class object: a parameter every call in the file passes a class for
    (``build(Discriminator, dim)``), or a name bound to a class (``net_cls = Critic``).  Calling it
    constructs a model; it runs none."""
    if isinstance(model, cst.Name) and ctx.names.is_param_at(model):
        args = arguments_for_param(ctx, model)
        if not args:
            defaults = [p.default for p in _params_named(ctx, model) if p.default is not None]
            return bool(defaults) and all(class_object(ctx, d) for d in defaults)
        return all(class_object(ctx, a) for a in args)
    if isinstance(model, cst.Name):
        values = ctx.names.values_at(model)
        return bool(values) and all(class_object(ctx, v) for v in values)
    return False


def _params_named(ctx: FileContext, name: cst.Name) -> List[cst.Param]:
    function = ctx.enclosing(name, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return []
    p = function.params
    return [q for q in [*p.posonly_params, *p.params, *p.kwonly_params] if q.name.value == name.value]


# -- models managed by a framework ---------------------------------------------------------------
#: bases that are no framework: they run none of the subclass's code under ``no_grad`` or in eval mode
_NOT_FRAMEWORK = ("builtins.", "abc.", "typing.", "typing_extensions.", "torch.")


def framework_model(ctx: FileContext, model: cst.BaseExpression) -> bool:
    """``self.<attr>`` (or ``self.<attr>.<more>``) in a class that derives from a framework class imported
    from another module, where neither the class nor its same-module bases show how ``<attr>`` is built:
    it is set by the framework (a base class, ``register_modules``, ``from_pretrained``), or passed in.
    Such a framework's own caller sets the grad and eval modes (a Hugging Face ``Pipeline`` runs
    ``_forward`` under ``no_grad``, ``generate`` is decorated with it, pretrained models load in eval
    mode), so the evaluation rules leave the model alone."""
    parts = (dotted_name(model) or "").split(".")
    if len(parts) < 2 or parts[0] != "self":
        return False
    cls = ctx.enclosing(model, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return False
    chain = _class_chain(ctx, cls)
    if not _derives_from_framework(chain):
        return False
    return not any(_builds_attr(c_ctx, c, parts[1]) for c_ctx, c in chain)


def frozen_model(ctx: FileContext, model: cst.BaseExpression, at: cst.CSTNode, hops: int = 0) -> bool:
    """The model ``model`` runs at ``at`` with all its parameters frozen (or has none: a loss written as a
    module, :func:`roles.holds_no_parameters`), so that its forward pass records
    no graph of its own: it was built frozen (``Net().requires_grad_(False)``), or in the same function
    ``model.requires_grad_(False)`` (or a loop setting ``p.requires_grad = False`` for each of
    ``model.parameters()``) runs unconditionally before ``at``, and nothing there turns gradients back on
    for it; a parameter when every call of its function in the file passes a model frozen so there."""
    if hops > 2 or not isinstance(model, (cst.Name, cst.Attribute)):
        return False
    if parameter_free(ctx, model):
        return True  # `criterion = FocalLoss()`: a module of numbers, with no parameter to record a graph of
    function = enclosing_function(ctx, at)
    scope: cst.CSTNode = function if function is not None else ctx.module
    froze: Optional[int] = None  # where it is frozen first
    changed: List[int] = []  # where a part of it is set, added or unfrozen
    for node in ctx.nodes(scope):
        if isinstance(node, cst.Call):
            recv = receiver(node)
            if recv is None or enclosing_function(ctx, node) is not function:
                continue
            effect = effects.method_effect(ctx, node)
            if same_reference(strip_moves_expr(recv), model):
                if method_name(node) == "requires_grad_" and effect != effects.FREEZES:
                    return False  # turned back on (or maybe) somewhere in the function
                if effect == effects.FREEZES and position(ctx, node) < position(ctx, at) \
                        and _unconditional(ctx, node, at):
                    froze = position(ctx, node) if froze is None else min(froze, position(ctx, node))
            elif _part_of(recv, model) and (method_name(node) == "requires_grad_" and effect != effects.FREEZES
                                            or method_name(node) in _ADDS_PARTS):
                changed.append(position(ctx, node))  # `model.head.requires_grad_()`, `model.add_module(...)`
        elif isinstance(node, cst.For) and _freezes_each_parameter(ctx, node, model) \
                and enclosing_function(ctx, node) is function and position(ctx, node) < position(ctx, at) \
                and _unconditional(ctx, node, at):
            froze = position(ctx, node) if froze is None else min(froze, position(ctx, node))
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) \
                and enclosing_function(ctx, node) is function \
                and (same_reference(node.target, model) or _part_of(node.target, model)) \
                and not _moved_back(ctx, node, model):
            changed.append(position(ctx, node))  # `model.classifier[6] = nn.Linear(...)`: new layers, trainable
    if froze is not None:
        return not any(c > froze for c in changed)
    if isinstance(model, cst.Name) and ctx.names.is_param_at(model):
        owner = parameter_owner(ctx, model)
        if owner is None or owner is not function:
            return False
        method = isinstance(ctx.enclosing(owner, (cst.FunctionDef, cst.ClassDef)), cst.ClassDef)
        sites = [s for s in call_sites(ctx, owner) if not ctx.is_inside(s, owner)]
        if not sites:
            return False
        for site in sites:
            bound = bind_arguments(site, owner, 1 if method and isinstance(site.func, cst.Attribute) else 0)
            given = (bound or {}).get(model.value)
            if given is None or not frozen_model(ctx, given, site, hops + 1):
                return False
        return True
    if function is not None and isinstance(model, cst.Name) and model.value not in ctx.assigned_names(function) \
            and not _turns_gradients_on(ctx, model):
        # a module-level model run in a function: frozen where every call of the function runs (in a file that
        # turns no parameter's gradient back on anywhere: which parameters a function unfreezes is not followed)
        sites = [s for s in call_sites(ctx, function) if not ctx.is_inside(s, function)]
        if sites and all(enclosing_function(ctx, s) is None for s in sites):
            return all(frozen_model(ctx, model, s, hops + 1) for s in sites)
    values = built_values(ctx, model) if isinstance(model, cst.Name) else []
    return bool(values) and all(_built_frozen(ctx, v) for v in values)


def _turns_gradients_on(ctx: FileContext, model: cst.Name) -> bool:
    """Whether code of the file may switch a gradient of ``model``'s parameters back on: ``requires_grad_()``
    (or ``requires_grad = <not False>``) on the model, a part of it, or one of the parameters a loop takes
    from it; on a function's parameter too (``def unfreeze(m): ...``: which model it is handed is not
    followed). An input made to require a gradient (``image.requires_grad = True``) is not the model's."""
    def the_model_or_unknown(expr: cst.BaseExpression) -> bool:
        while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
            expr = expr.func if isinstance(expr, cst.Call) else expr.value
        if not isinstance(expr, cst.Name):
            return True
        if expr.value == model.value or ctx.names.is_param_at(expr):
            return True
        loop = next((a for a in ctx.ancestors(expr) if isinstance(a, cst.For) and isinstance(a.target, cst.Name)
                     and a.target.value == expr.value), None)
        return loop is not None and the_model_or_unknown(loop.iter)

    return any(the_model_or_unknown(switched) for switched in _GRADIENTS_ON.of(ctx))


def _gradients_switched_on(ctx: FileContext) -> List[cst.BaseExpression]:
    """What the file's ``x.requires_grad_()`` (not freezing) and ``x.requires_grad = <not False>`` switch on:
    each ``x``, found in one pass over the file."""
    out: List[cst.BaseExpression] = []
    for node in ctx.nodes(ctx.module):
        if isinstance(node, cst.Call) and method_name(node) == "requires_grad_" and isinstance(node.func, cst.Attribute) \
                and effects.method_effect(ctx, node) != effects.FREEZES:
            out.append(node.func.value)
        elif isinstance(node, cst.Assign) and not (isinstance(node.value, cst.Name) and node.value.value == "False"):
            out.extend(t.target.value for t in node.targets
                       if isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad")
    return out


#: what the file switches gradients on for (:func:`_gradients_switched_on`)
_GRADIENTS_ON: "Fact[List[cst.BaseExpression]]" = Fact("evaluation.gradients_on", _gradients_switched_on)


def _moved_back(ctx: FileContext, target: cst.CSTNode, model: cst.BaseExpression) -> bool:
    """``model = model.eval()``, ``model = model.to(device)``: the name bound again to the module it holds
    (moved or switched), which adds no trainable part."""
    value = getattr(ctx.parent(target), "value", None)
    return isinstance(target, cst.AssignTarget) and isinstance(value, cst.BaseExpression) and moves_itself(value, model)


#: module methods that add parts to it (trainable ones, after a freeze)
_ADDS_PARTS = frozenset({"add_module", "register_module", "register_parameter", "append", "extend", "insert",
                         "update"})


def _part_of(expr: cst.BaseExpression, model: cst.BaseExpression) -> bool:
    """``model.head``, ``model.classifier[6]``, ``model.layers[0].fc``: a part of ``model`` (not itself)."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
        if same_reference(expr, model):
            return True
    return False


def _built_frozen(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> bool:
    """``Net().eval().requires_grad_(False)``: a chain of module methods on a construction that freezes it;
    or a construction of a project class whose instances are frozen when they are built
    (:func:`_frozen_class`), moved or switched on the way (``LPIPS(net_type="alex").to(device)``)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
        effect = effects.method_effect(ctx, value)
        if effect == effects.FREEZES:
            return True
        if effect is None or effect == effects.UNFREEZES:
            return False
        value = value.func.value
    if not isinstance(value, cst.Call) or depth > 3:
        return False
    if parameter_free_layer(ctx, value):
        return True  # `nn.MSELoss()`: no parameter to record a graph of
    found = definition_of(ctx, value.func)
    if found is None:
        return False
    if isinstance(found[1], cst.ClassDef):
        return _frozen_class(found[0], found[1], depth + 1)
    if isinstance(found[1], cst.FunctionDef):  # `get_network(net_type)`: every return builds a frozen module
        returns = [r.value for r in function_returns(found[1]) if r.value is not None]
        return bool(returns) and len(returns) == len(function_returns(found[1])) and all(
            _built_frozen(found[0], r, depth + 1) for r in returns)
    return False


def _frozen_class(ctx: FileContext, cls: cst.ClassDef, depth: int) -> bool:
    """A project module class whose every parameter has ``requires_grad`` off once it is built: its
    ``__init__`` (or a base's) ends by freezing ``self`` (``self.requires_grad_(False)``, a loop over
    ``self.parameters()`` setting ``requires_grad = False``, or a method of the class doing that with the
    ``False`` it is given), with no module kept or parameter made after that; or every module it keeps in
    ``__init__`` is built frozen or holds no parameter, and it makes no parameter of its own."""
    if not module_class(ctx, cls):
        return False
    init = find_method(ctx, cls, "__init__")
    if init is None:
        return False
    ictx, function = init
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    froze_at = None
    for i, stmt in enumerate(body):
        if _freezes_self(ictx, cls, stmt):
            froze_at = i
    if froze_at is not None:
        return not any(_keeps_a_module(ictx, stmt) for stmt in body[froze_at + 1:])
    if any(ictx.names.qualified_names_at(c.func) & {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
           or method_name(c) in ("register_parameter", "add_module", "register_module", "requires_grad_")
           for c in ictx.calls_in(function)):
        return False
    kept = [a for a in ictx.contents(function).assigns if isinstance(a, cst.Assign) and any(
        isinstance(t.target, (cst.Attribute, cst.Subscript)) and _on_self(t.target) for t in a.targets)]
    modules = 0
    for a in kept:
        value = a.value
        if setting_value(ictx, value) or not isinstance(strip_moves_expr(value), cst.Call):
            if isinstance(value, (cst.Name, cst.Attribute)) and not setting_value(ictx, value):
                return False  # a value handed in (`self.backbone = backbone`): not known to be frozen
            continue
        if parameter_free_layer(ictx, strip_moves_expr(value)):
            continue
        if not _built_frozen(ictx, value, depth):
            return False
        modules += 1
    return modules > 0


def _freezes_self(ctx: FileContext, cls: cst.ClassDef, stmt: cst.CSTNode) -> bool:
    """``stmt`` (a statement of ``__init__``'s body) freezes every parameter of ``self``."""
    if isinstance(stmt, cst.For):
        return _freezes_each_parameter(ctx, stmt, cst.Name("self"))
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return False
    call = stmt.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
            and call.func.value.value == "self"):
        return False
    if call.func.attr.value == "requires_grad_":
        return effects.method_effect(ctx, call) == effects.FREEZES
    method = find_method(ctx, cls, call.func.attr.value)
    if method is None or not isinstance(method[1].body, cst.IndentedBlock):
        return False
    # `self.set_requires_grad(False)` with `for p in chain(self.parameters(), ...): p.requires_grad = state`
    _mctx, m = method
    params = [p.name.value for p in m.params.params[1:]]
    if len(call.args) != 1 or call.args[0].keyword is not None or not _false(call.args[0].value) or len(params) < 1:
        return False
    return any(isinstance(inner, cst.For) and _freezes_each_parameter(ctx, inner, cst.Name("self"), flag=params[0])
               for inner in m.body.body)


def _keeps_a_module(ctx: FileContext, stmt: cst.CSTNode) -> bool:
    """``stmt`` keeps something on ``self`` that is not a setting, or makes a parameter."""
    for node in iter_nodes(stmt):
        if isinstance(node, cst.Assign) and any(isinstance(t.target, (cst.Attribute, cst.Subscript))
                                                and _on_self(t.target) for t in node.targets) \
                and not setting_value(ctx, node.value):
            return True
        if isinstance(node, cst.Call) and (method_name(node) in ("register_parameter", "add_module", "requires_grad_")
                                           or ctx.names.qualified_names_at(node.func) & {"torch.nn.Parameter"}):
            return True
    return False


def _freezes_each_parameter(ctx: FileContext, loop: cst.For, model: cst.BaseExpression,
                            flag: Optional[str] = None) -> bool:
    """``for p in model.parameters(): p.requires_grad = False`` (or ``p.requires_grad_(False)``).  With
    ``flag``, the parameter of a method its callers pass ``False`` (``p.requires_grad = state``), and the
    parameters may come chained with other tensors (``chain(self.parameters(), self.buffers())``)."""
    it = loop.iter
    if not isinstance(it, cst.Call) or not isinstance(loop.target, cst.Name):
        return False
    iters = [it] + ([a.value for a in it.args] if flag is not None and dotted_name(it.func) in (
        "chain", "itertools.chain") else [])
    if not any(isinstance(i, cst.Call) and method_name(i) == "parameters" and receiver(i) is not None
               and same_reference(receiver(i), model) for i in iters):
        return False
    name = loop.target.value
    off = flag if flag is not None else "False"
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and dotted_name(small.targets[0].target) == name + ".requires_grad" \
                and isinstance(small.value, cst.Name) and small.value.value == off:
            return True
        if flag is None and isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                and dotted_name(small.value.func) == name + ".requires_grad_" \
                and effects.method_effect(ctx, small.value) == effects.FREEZES:
            return True
    return False


def _unconditional(ctx: FileContext, node: cst.CSTNode, at: cst.CSTNode) -> bool:
    """Every ``if``, loop, ``try`` or ``with`` around ``node`` is also around ``at``: when ``at`` runs,
    ``node`` ran before it (given it comes first)."""
    for a in ctx.ancestors(node):
        if isinstance(a, (cst.FunctionDef, cst.Module)):
            return True
        if isinstance(a, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar, cst.With, cst.IfExp, cst.BooleanOperation,
                          cst.ListComp, cst.GeneratorExp, cst.Lambda)) and not ctx.is_inside(at, a):
            return False
    return True


def _class_chain(ctx: FileContext, cls: cst.ClassDef) -> List[Tuple[FileContext, cst.ClassDef]]:
    """``cls`` and its bases defined in the project (this module or another one), transitively, each with
    the file it is written in."""
    chain = [(ctx, cls)]
    for c_ctx, c in chain:
        if len(chain) > 16:
            break
        for _, found in base_classes(c_ctx, c, 0):
            if found is not None and isinstance(found[1], cst.ClassDef) and all(found[1] is not k for _, k in chain):
                chain.append((found[0], found[1]))
    return chain


def _derives_from_framework(chain: List[Tuple[FileContext, cst.ClassDef]]) -> bool:
    """A class of the chain derives from a library class other than Python's and torch's own (a class of
    the project is no framework: its code is in view)."""
    for c_ctx, c in chain:
        for expr, found in base_classes(c_ctx, c, 0):
            if found is not None and isinstance(found[1], cst.ClassDef):
                continue
            names = c_ctx.names.qualified_names(expr)
            if names and not any(q.startswith(_NOT_FRAMEWORK) for q in names):
                return True
    return False


def _builds_attr(ctx: FileContext, cls: cst.ClassDef, attr: str) -> bool:
    """Whether a method of ``cls`` assigns ``self.<attr>`` something it builds (``Net()``,
    ``resnet18(...).to(device)``), not something passed in (``model``, ``model.to(device)``)."""
    for a in ctx.contents(cls).assigns:
        if isinstance(a, cst.Assign):
            targets = [t.target for t in a.targets]
        elif isinstance(a, cst.AnnAssign) and a.value is not None:
            targets = [a.target]
        else:
            continue
        if not any(dotted_name(t) == "self." + attr for t in targets):
            continue
        # a move or cast of a model (``model.to(device)``) stays the model passed in
        if a.value is not None and isinstance(strip_moves_expr(a.value), cst.Call):
            return True
    return False


# -- call graph inside the module (call sites: definitions.call_sites) -------------------------------
def enclosing_function(ctx: FileContext, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    found = ctx.enclosing(node, cst.FunctionDef)
    return found if isinstance(found, cst.FunctionDef) else None


def runs_without_grad(ctx: FileContext, node: cst.CSTNode, depth: int = 2) -> bool:
    """Under ``no_grad``/``inference_mode`` here, or every same-module caller of the enclosing function is;
    for a function handed around as a value (a validation step given to ``mini_batch(loader, step_fn)``,
    made by a factory), every call that runs it is, or every call that hands it over
    (:func:`definitions.value_invocations`)."""
    if under_no_grad(ctx, node):
        return True
    if depth <= 0:
        return False
    function = enclosing_function(ctx, node)
    if function is None:
        return False
    every = every_method_call(ctx, function)  # a method: its calls through instances too, when all are known
    sites = [s for s in (call_sites(ctx, function) if every is None else every) if not ctx.is_inside(s, function)]
    handed = value_invocations(ctx, function)
    indirect = [i for i in handed or () if not ctx.is_inside(i.call, function)  # (a recursive call: its own callers)
                and (i.via is not None or i.flag is not None or i.call not in sites)]
    if indirect:
        return all(runs_without_grad(ctx, s, depth - 1) for s in sites) and all(
            _invocation_without_grad(ctx, i, depth - 1) for i in indirect)
    if not sites and not handed:
        # called from the project's other files only (`with torch.no_grad(): evaluate(model, data)` in `main.py`)
        found = project_call_sites(ctx, function)
        return bool(found) and all(runs_without_grad(octx, s, depth - 1) for octx, s in found)
    return bool(sites) and all(runs_without_grad(ctx, s, depth - 1) for s in sites)


def _invocation_without_grad(ctx: FileContext, invocation: Invocation, depth: int) -> bool:
    """The call of a function handed around as a value runs with gradients off: under ``no_grad`` where it
    is, or in every call that hands the function over (``via``), or, for a name bound only when a flag
    parameter is true (``if validation: step_fn = self.val_step_fn``), in every call of the function around
    it that may pass that flag (``with torch.no_grad(): self._mini_batch(validation=True)``)."""
    if under_no_grad(ctx, invocation.call):
        return True
    if invocation.via is not None:
        return runs_without_grad(ctx, invocation.via, depth)
    if invocation.flag is None:
        return runs_without_grad(ctx, invocation.call, depth)  # (one level less each time: cycles end)
    function, param, truth = invocation.flag
    method = isinstance(ctx.enclosing(function, (cst.FunctionDef, cst.ClassDef)), cst.ClassDef)
    sites = [s for s in call_sites(ctx, function) if not ctx.is_inside(s, function)]
    if not sites:
        return False
    default = next((p.default for p in function.params.params if p.name.value == param), None)
    for site in sites:
        bound = bind_arguments(site, function, 1 if method and isinstance(site.func, cst.Attribute) else 0)
        value = (bound or {}).get(param, default) if bound is not None else None
        given = value.value if isinstance(value, cst.Name) and value.value in ("True", "False") else None
        if given is not None and (given == "True") != truth:
            continue  # this call takes the other arm: the function is not run there
        if not runs_without_grad(ctx, site, depth):
            return False
    return True


#: libraries whose functions, given an optimizer or a model's parameters, train nothing
#: (``clip_grad_norm_(model.parameters(), 1.0)``, ``torch.optim.Adam(...)``, ``len``, a plot)
KNOWN_LIBRARIES = ("torch.", "builtins.", "numpy.", "math.", "torchmetrics.", "sklearn.", "matplotlib.", "PIL.")
_BUILTINS = frozenset(dir(builtins))


def enclosing_params(ctx: FileContext, node: cst.CSTNode) -> Set[str]:
    """The parameter names of every function around ``node`` (``*args`` and ``**kwargs`` included)."""
    out: Set[str] = set()
    for a in [node, *ctx.ancestors(node)]:
        if isinstance(a, cst.FunctionDef):
            p = a.params
            for param in [*p.posonly_params, *p.params, *p.kwonly_params]:
                out.add(param.name.value)
            for star in (p.star_arg, p.star_kwarg):
                if isinstance(star, cst.Param):
                    out.add(star.name.value)
    return out


def _drawn_batch(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``next(iter(loader))``: one batch drawn from an iterable of batches."""
    return isinstance(value, cst.Call) and is_builtin(ctx, value.func) and getattr(value.func, "value", None) == "next" \
        and len(value.args) == 1 and isinstance(value.args[0].value, cst.Call) \
        and is_builtin(ctx, value.args[0].value.func) and getattr(value.args[0].value.func, "value", None) == "iter"


def _runs_on_drawn_batch(ctx: FileContext, call: cst.Call) -> bool:
    """``images, labels = next(iter(loader))`` then ``model(images)`` (also moved, ``images.to(device)``, or
    wrapped, ``Variable(images.cuda())``, on the way): the model runs on a batch drawn from the data, as a
    loop over it would give one."""
    return any(a.keyword is None and _drawn(ctx, a.value, 0) for a in call.args)


def _drawn(ctx: FileContext, value: cst.BaseExpression, hops: int) -> bool:
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _BATCH_MOVES:
        value = value.func.value
    if isinstance(value, cst.Call) and value.args and ctx.names.matches(value.func, ("torch.autograd.Variable",)):
        value = value.args[0].value
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _BATCH_MOVES:
            value = value.func.value
    if _drawn_batch(ctx, value):
        return True
    if not isinstance(value, cst.Name) or hops > 2:
        return False
    values = list(ctx.names.values_before(value)) + [v for v, _i in ctx.names.unpacked_values(value)]
    return any(v is not None and _drawn(ctx, v, hops + 1) for v in values)


def is_builtin(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """A builtin the module does not rebind (by import, assignment, definition or parameter)."""
    return (isinstance(func, cst.Name) and func.value in _BUILTINS and not ctx.names.qualified_names_at(func)
            and not ctx.names.values_at(func) and func.value not in ctx.functions()
            and func.value not in enclosing_params(ctx, func))


def hands_optimizer_away(ctx: FileContext, call: cst.Call) -> bool:
    """``self.take_optimisation_step(self.critic_optimizer, net, loss)`` (a method inherited from a class of
    another file), ``loss_scaler(loss, optimizer)``: code not in view that is given an optimizer or a
    model's parameters trains, whatever it is called.  A library function, a builtin and a function of
    this file (whose own calls are followed) are not it."""
    if not ctx.walked or id(call) not in ctx.order:
        return _hands_optimizer_away(ctx, call)
    found = _HANDS_AWAY.of(ctx)
    key = id(call)  # (a node of the module, which keeps its id)
    if key not in found:
        found[key] = _hands_optimizer_away(ctx, call)
    return found[key]


#: once the walk is done, :func:`hands_optimizer_away` of the calls of the module, by id
_HANDS_AWAY: "Fact[Dict[int, bool]]" = Fact("evaluation.hands_away", lambda ctx: {})


def _hands_optimizer_away(ctx: FileContext, call: cst.Call) -> bool:
    args = [a.value for a in call.args if not a.star]  # (`Namespace(**opts)` unpacks a mapping: no optimizer)
    if not any(object_kind(ctx, v) == "optimizer" or (isinstance(v, cst.Call) and method_name(v) == "parameters")
               for v in args):
        return False
    names = ctx.names.qualified_names_at(call.func)
    if any(q.startswith(KNOWN_LIBRARIES) for q in names) or is_builtin(ctx, call.func):
        return False
    return ctx.function_for_call(call) is None


def trains(ctx: FileContext, node: cst.CSTNode, depth: int = 1) -> bool:
    """Whether ``node`` runs a backward pass or an optimizer step (itself or in a same-module helper),
    hands an optimizer to code not in view (:func:`hands_optimizer_away`), or calls something named like
    a training step."""
    for call, _via in calls_through_helpers(ctx, node, depth):
        if is_backward_like(ctx, call) or optimizer_of_step(ctx, call) is not None or hands_optimizer_away(ctx, call):
            return True
        name = callee_name(call)
        if name is not None and TRAIN_CALL.search(snake(name)):
            return True
    return False


def needs_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Code that reads gradients, differentiates or turns gradients on: evaluation that must not be
    wrapped in ``no_grad`` (adversarial attacks, saliency maps, influence functions).  Turning them off
    (``Variable(x, requires_grad=False)``, ``requires_grad_(False)``) is no such need."""
    code = ctx.code(node)
    if not NEEDS_GRAD.search(code.replace("requires_grad=False", "").replace("requires_grad_(False)", "")):
        return False
    # the words may sit in a comment or a string only ("no backward pass here"): the code itself decides
    off: Set[int] = set()
    for n in iter_nodes(node):
        if isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value == "requires_grad" and \
                isinstance(n.value, cst.Name) and n.value.value == "False":
            off.add(id(n.keyword))  # `Variable(x, requires_grad=False)`: gradients turned off
        elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "requires_grad_" \
                and len(n.args) == 1 and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value == "False":
            off.add(id(n.func.attr))
        elif isinstance(n, cst.Attribute) and n.attr.value == "grad":
            if not _parameter_of_loop(ctx, n.value):
                return True  # `x.grad` (an input's gradient: a saliency map)
            # (a model's parameter's gradient, logged or clipped, asks nothing of the forward passes here)
        elif isinstance(n, cst.Name) and id(n) not in off and _GRAD_WORDS.search(n.value):
            return True
    return False


def _parameter_of_loop(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` is the variable of a ``for`` loop over a model's parameters around it (``for name, p
    in net.named_parameters():``, ``for p in net.parameters():``)."""
    if not isinstance(expr, cst.Name):
        return False
    for loop in ctx.ancestors(expr):
        if isinstance(loop, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(loop, cst.For) and any(n.value == expr.value for n in target_names(loop.target)):
            return isinstance(loop.iter, cst.Call) and method_name(loop.iter) in ("parameters", "named_parameters") \
                and not loop.iter.args and ctx.is_inside(expr, loop.body)
    return False


# -- evidence ------------------------------------------------------------------------------------
_METRIC_METHODS = frozenset({"update", "add_batch", "process", "add", "compute", "append", "extend"})


def computes_metrics(ctx: FileContext, node: cst.CSTNode) -> bool:
    contents = ctx.contents(node)
    for a in contents.assigns:
        for t in assignment_targets(a):
            name = dotted_name(t) if not isinstance(t, cst.Subscript) else dotted_name(t.value)
            if name and METRIC_NAME.search(snake(name.rsplit(".", 1)[-1])):
                return True
    for call in contents.calls:
        recv = receiver(call)
        name = dotted_name(recv) if recv is not None else None
        if name is None:
            continue
        last = snake(name.rsplit(".", 1)[-1])
        method = method_name(call)
        if method in _METRIC_METHODS and METRIC_NAME.search(last):
            return True
        if method in ("append", "extend") and PREDICTION_LIST.search(last):
            return True
    return False


def iterates_eval_data(ctx: FileContext, loop: cst.CSTNode) -> bool:
    return isinstance(loop, cst.For) and bool(EVAL_DATA.search(ctx.code(loop.iter).lower()))


def is_test_file(ctx: FileContext) -> bool:
    base = os.path.basename(ctx.path)
    if base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py":
        return True
    parts = set(os.path.normpath(ctx.path).split(os.sep))
    if "tests" in parts or "test" in parts:
        return True
    bindings = ctx.names.module_scope.bindings
    return any(b in bindings and bindings[b].imports for b in ("pytest", "unittest"))


def model_method(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A method of a model class: an ``nn.Module`` subclass by construction (through the project's
    classes), a class whose own or project base defines ``forward``, or one deriving from a library class
    whose kind is not known and whose name says model (``PreTrainedModel``): library API."""
    cls = ctx.parent(ctx.parent(function) or function)
    if not isinstance(cls, cst.ClassDef):
        return False
    if module_class(ctx, cls):
        return True
    chain = _class_chain(ctx, cls)
    if any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for _, c in chain for s in class_body(c)):
        return True
    for c_ctx, c in chain:
        for expr, found in base_classes(c_ctx, c, 0):
            if found is not None and isinstance(found[1], cst.ClassDef):
                continue  # a class of the project: judged by what it is
            name = dotted_name(expr)
            if name and MODEL_BASES.search(name) and "Lightning" not in name:
                return True
    return False


def switches_itself_to_eval(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """A method that calls ``self.eval()`` (or ``self.train(False)``) on its own object."""
    return any(isinstance(t, cst.Name) and t.value == "self"
               for t in (eval_mode_target(c) for c in ctx.calls_in(function)))


def _rebind(node: cst.CSTNode, targets: Sequence[cst.BaseExpression], reads: bool, live: Set[str]) -> None:
    """An assignment met while following values: the names it binds carry what it ``reads`` (added to
    ``live``) or are bound anew (dropped); an augmented assignment to a followed name keeps it."""
    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and node.target.value in live:
        return
    for target in targets:
        for n in iter_nodes(target):
            if isinstance(n, cst.Name):
                if reads:
                    live.add(n.value)
                else:
                    live.discard(n.value)


#: what puts a value into a container the code keeps (``outs.append(out)``)
_GROWS = frozenset({"append", "extend", "insert", "add", "update", "put", "setdefault"})

# -- modes ---------------------------------------------------------------------------------------
ANY = "*"


def _false(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


#: what reads weights from a file
_LOADERS = frozenset({"torch.load", "pickle.load", "joblib.load"})


def eval_mode_target(call: cst.Call) -> Optional[cst.BaseExpression]:
    """``m.eval()`` / ``m.train(False)`` / ``m.train(mode=False)``: ``m`` (also of ``m.cuda().eval()``: a move
    hands back the same module)."""
    name = method_name(call)
    if name == "eval" and not call.args:
        return _through_moves(receiver(call))
    if name == "train":
        mode = arg(call, 0, "mode")
        if mode is not None and _false(mode.value):
            return _through_moves(receiver(call))
    return None


def _through_moves(recv: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    if recv is None:
        return None
    core = strip_moves_expr(recv)
    return core if isinstance(core, (cst.Name, cst.Attribute)) else recv


def train_mode_call(call: cst.Call) -> bool:
    """``m.train()`` / ``m.train(True)`` / ``m.train(flag)``: anything that may turn training mode on."""
    if method_name(call) != "train":
        return False
    mode = arg(call, 0, "mode")
    return mode is None or not _false(mode.value)


def eval_receivers(ctx: FileContext, node: cst.CSTNode, depth: int = 1,
                   before: Optional[cst.CSTNode] = None, kept: bool = False, imported: bool = True) -> Set[str]:
    """Codes of what ``node`` puts in eval mode (directly or through same-module helpers, with helper
    parameters mapped to the arguments); :data:`ANY` when something unknown may do it (a call such as
    ``set_eval_mode(model)`` or ``with evaluating(model):``).  With ``before``, only what is done by the
    calls that come before it in the source (or inside it): the mode the model has when ``before`` runs.  With
    ``kept``, only the switches the code leaves in place (not an ``eval()`` its function undoes with a later
    ``train()``): what other methods of a class leave behind.  With ``imported``, also what a function of another
    project file it calls switches of the model it is handed."""
    out: Set[str] = set()
    limit = position(ctx, before) if before is not None else None
    # the code of a module or a function runs its own statements, not the bodies of the functions and
    # classes it defines (those run when called: followed through the calls, with their arguments)
    own_code = isinstance(node, (cst.Module, cst.FunctionDef))
    for call, via in calls_through_helpers(ctx, node, depth):
        if limit is not None and position(ctx, via) >= limit and not ctx.is_inside(via, before):
            continue
        if own_code and call is via and ctx.enclosing(call, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) \
                not in (node, None if isinstance(node, cst.Module) else node):
            continue
        target = eval_mode_target(call)
        if target is None:
            name = callee_name(call)
            if name is not None and "eval" in name.lower() and method_name(call) != "eval":
                if not _provably_leaves_mode(ctx, call):
                    out |= _library_switches(ctx, call)
            elif imported and call is via and imported_helper(ctx, call) is not None:
                # `saliency(X, y, model)` of another project file, whose code calls `model.eval()` and leaves it
                out |= eval_targets_of_call(ctx, call)
            continue
        if (call is not via or kept) and _switched_back(ctx, call, after=True):
            continue  # a helper that evaluates and then puts its model back in training mode leaves it there
        code = ctx.code(target)
        if call is via:
            out.add(code)
            continue
        out.add(_map_to_caller(ctx, call, via, target, code))
    return out


def _library_switches(ctx: FileContext, call: cst.Call) -> Set[str]:
    """What an unknown call named for evaluation may put in eval mode: for a library function
    (``create_supervised_evaluator(model, metrics=...)`` imported from an installed package, whose code
    is not the project's), only the models it is handed; for anything else (a method of an object that
    may hold the model, a project function not found) :data:`ANY`."""
    names = ctx.names.qualified_names_at(call.func)
    if not names or called_function(ctx, call) is not None or any(q.startswith("builtins.") for q in names):
        return {ANY}
    head = call.func
    while isinstance(head, cst.Attribute):
        head = head.value
    if not (isinstance(head, cst.Name) and ctx.names.qualified_names(head)):
        return {ANY}  # a method of a value (`trainer.evaluate()`): the object may hold the model
    out: Set[str] = set()
    for a in call.args:
        if a.star:
            return {ANY}
        if isinstance(a.value, (cst.Name, cst.Attribute)):
            out.add(ctx.code(a.value))
        elif not isinstance(a.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer,
                                      cst.Float, cst.Dict, cst.List, cst.Tuple)) and not _plain_value_call(ctx, a.value):
            out.add(ANY)  # a call or an expression: it may build or hold the model
    return out


#: libraries whose calls make paths, strings, numbers and arrays, never a model
_PLAIN_VALUE_MODULES = ("os.", "pathlib.", "math.", "json.", "time.", "datetime.", "numpy.")
_PLAIN_VALUE_BUILTINS = frozenset({"builtins.str", "builtins.int", "builtins.float", "builtins.bool",
                                   "builtins.len", "builtins.round", "builtins.abs"})


def _plain_value_call(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``os.path.join(output_dir, "panoptic_eval")``, ``str(epoch)``: a call of the standard library (or
    NumPy) that makes a path, a string or a number out of its arguments, none of which holds a module."""
    if not isinstance(value, cst.Call):
        return False
    names = ctx.names.qualified_names(value.func)
    return bool(names) and all(q.startswith(_PLAIN_VALUE_MODULES) or q in _PLAIN_VALUE_BUILTINS for q in names)


def _provably_leaves_mode(ctx: FileContext, call: cst.Call, depth: int = 0) -> bool:
    """A call named for evaluation (``evaluate(model, loader)``) whose function is found (this file or a
    project module) and switches no mode: it makes no ``eval``/``train`` call and reads no mode, and every
    function named for evaluation it calls is found and provably leaves the mode too
    (``evaluate_randomly`` calling ``evaluate`` for a few sentences).  An unknown function may set eval
    mode."""
    if depth > _MODE_HELPER_DEPTH:
        return False
    target = called_function(ctx, call)
    if target is None and isinstance(call.func, (cst.Attribute, cst.Name)):
        # `result.evaluate(pred, y)` with `result = Result()`: the method of the project class it is built from;
        # `stopper(loss, model)` with `stopper = EarlyStopping()`: that class's `__call__`
        method = None
        if isinstance(call.func, cst.Attribute):
            owner = instance_class(ctx, call.func.value)
            method = find_method(owner[0], owner[1], call.func.attr.value) if owner is not None else None
        if method is None:
            owner = instance_class(ctx, call.func)
            method = find_method(owner[0], owner[1], "__call__") if owner is not None else None
        if method is None:
            return False
        fctx, function = method
    elif target is None:
        return False
    else:
        fctx, function, _offset = target
    body = fctx.bare_code(function.body)
    if _SETS_MODE_ITSELF.search(body):
        return False
    for inner in fctx.calls_in(function):
        name = callee_name(inner)
        if name is not None and _NAMED_FOR_EVALUATION.search(name) and \
                not _provably_leaves_mode(fctx, inner, depth + 1):
            return False
    return True


#: what switches or reads a mode in a function's code, besides the calls named for evaluation it makes
_SETS_MODE_ITSELF = re.compile(r"\.(eval|train)\(|requires_grad_|\bmode\b", re.IGNORECASE)
#: a callee named for evaluation (``evaluate``, ``run_eval``, ``evaluateRandomly``)
_NAMED_FOR_EVALUATION = re.compile(r"eval", re.IGNORECASE)
#: how many helpers named for evaluation deep the question is followed
_MODE_HELPER_DEPTH = 3


def _map_to_caller(ctx: FileContext, call: cst.Call, via: cst.Call, target: cst.BaseExpression, code: str) -> str:
    helper = ctx.function_for_call(via)
    if helper is None:
        return ANY
    if isinstance(target, cst.Name):
        params = list(helper.params.posonly_params) + list(helper.params.params)
        is_method = isinstance(via.func, cst.Attribute)
        if is_method and params:
            params = params[1:]
        for i, p in enumerate(params):
            if p.name.value == target.value:
                a = arg(via, i, p.name.value)
                return ctx.code(a.value) if a is not None else ANY
        if _same_global(ctx, helper, via, target.value):
            return code  # `model.eval()` on a module global: the caller's `model` is the same object
        returned = _factory_switch(ctx, helper, via, target.value)
        return returned if returned is not None else ANY
    if code.startswith("self.") and isinstance(via.func, cst.Attribute):
        return code
    return ANY


def _factory_switch(ctx: FileContext, helper: cst.FunctionDef, via: cst.Call, name: str) -> Optional[str]:
    """``net = get_model(path)`` where ``get_model`` switches its local ``model`` and returns it: the caller's
    ``net`` when every return hands ``model`` back (moved or not) in eval mode; ``""`` (nothing of the
    caller's) when a return hands it back before the switch (``if cuda: return model.cuda()`` above
    ``model.eval()``): on that path the caller's model arrives in training mode; None when the returns say
    nothing of it."""
    returns = function_returns(helper)
    holder = ctx.parent(via)
    if not returns or not isinstance(holder, cst.Assign) or len(holder.targets) != 1 \
            or not isinstance(holder.targets[0].target, cst.Name) or holder.value is not via:
        return None
    for r in returns:
        core = strip_moves_expr(r.value) if r.value is not None else None
        if not (isinstance(core, cst.Name) and core.value == name):
            return None
    if all(modes_reaching(ctx, r, name) == {EVAL} for r in returns):
        return holder.targets[0].target.value
    return ""


def _same_global(ctx: FileContext, helper: cst.FunctionDef, via: cst.Call, name: str) -> bool:
    """Whether ``name`` means the same module-level object in ``helper`` and at the call ``via``: neither
    the helper nor the function holding the call binds it (as a parameter, an assignment, a loop target)."""
    for function in (helper, enclosing_function(ctx, via)):
        if function is None:
            continue
        params = function.params
        every = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        if any(p.name.value == name for p in every) or assigned_within(ctx, function, name):
            return False
    return True


def eval_targets_of_call(ctx: FileContext, call: cst.Call) -> Set[str]:
    """What one call puts in eval mode, in the caller's terms: ``model.eval()`` gives {"model"};
    ``validate(net, loader)``, whose body calls ``model.eval()`` on its parameter, gives {"net"}."""
    target = eval_mode_target(call)
    if target is not None:
        return {ctx.code(target)}
    helper = ctx.function_for_call(call)
    out: Set[str] = set()
    if helper is None:
        imported = imported_helper(ctx, call)
        if imported is not None:
            other, function, offset = imported
            params = (list(function.params.posonly_params) + list(function.params.params))[offset:]
            for inner in other.calls_in(function):
                target = eval_mode_target(inner)
                if target is None or _switched_back(other, inner, after=True):
                    continue  # (a helper that puts the model back in training mode leaves it there)
                out.add(ANY)  # something of that module (a global there): not a name of the caller
                for i, p in enumerate(params):
                    if isinstance(target, cst.Name) and p.name.value == target.value:
                        a = arg(call, i, p.name.value)
                        if a is not None:
                            out.discard(ANY)
                            out.add(ctx.code(a.value))
        return out
    for inner in ctx.calls_in(helper):
        target = eval_mode_target(inner)
        if target is not None:
            out.add(_map_to_caller(ctx, inner, call, target, ctx.code(target)))
    return out


def imported_helper(ctx: FileContext, call: cst.Call):
    """``(file context, FunctionDef, offset)`` of the function of another project file that ``call``
    runs (``from utils import evaluate``; offset 1 for a method), or None.  Only modules that switch a
    mode somewhere (spell ``.eval(`` or ``.train(``) are read: the callers ask about nothing else."""
    if not isinstance(call.func, (cst.Name, cst.Attribute)) or ctx.function_for_call(call) is not None:
        return None
    found = called_function(ctx, call, (".eval(", ".train("))
    if found is None or found[0] is ctx:
        return None
    return found


def restores_train_mode(ctx: FileContext, node: cst.CSTNode, depth: int = 1) -> bool:
    """Whether ``node`` may turn training mode back on: directly, through same-module helpers, or in a
    function of another project file that it calls; a helper that only puts back the training mode it
    switched off itself (``model.eval()`` ... ``model.train()``, an attack crafted in eval mode) chooses
    nothing for ``node``."""
    if any(train_mode_call(call) and not (call is not via and _switched_back(ctx, call, after=False))
           for call, via in calls_through_helpers(ctx, node, depth)):
        return True
    for call in ctx.calls_in(node):
        imported = imported_helper(ctx, call)
        if imported is not None and any(train_mode_call(c) and not _switched_back(imported[0], c, after=False)
                                        for c in imported[0].calls_in(imported[1])):
            return True
    return False


def _switched_back(ctx: FileContext, switch: cst.Call, after: bool) -> bool:
    """For a mode switch in a function: the same function switches the same model the other way — after
    it (``after``: an ``eval()`` undone by a later ``train()``) or before it (a ``train()`` that undoes an
    earlier ``eval()``)."""
    if eval_mode_target(switch) is None and not train_mode_call(switch):
        return False
    function = enclosing_function(ctx, switch)
    target = receiver(switch)
    if function is None or target is None:
        return False
    code, at = ctx.code(target), position(ctx, switch)
    for c in ctx.calls_in(function):
        other = receiver(c)
        if other is None or ctx.code(other) != code or (position(ctx, c) > at) != after:
            continue
        if (train_mode_call(c) if after else eval_mode_target(c) is not None):
            return True
    return False


def covers(receivers: Set[str], model_code: str) -> bool:
    if ANY in receivers or model_code in receivers:
        return True
    for r in receivers:
        if model_code.startswith(r + ".") or r.startswith(model_code + "."):
            return True
        if r == "self" and model_code.startswith("self."):
            return True
    return False


# -- the mode a module-level model reaches a statement in ------------------------------------------
#: outcomes of running some code, for the mode of one model: it is left as it was (on some path), put
#: in eval mode, put in (or possibly in) training mode, or something not followed may have set it
PASS, EVAL, TRAIN, UNKNOWN = "pass", "eval", "train", "unknown"
_MODE_WORDS = re.compile(r"eval|train", re.IGNORECASE)


def _then(first: Set[str], second: Set[str]) -> Set[str]:
    """The outcomes of ``first`` followed by ``second``."""
    out = second - {PASS}
    if PASS in second:
        out |= first
    return out


def _same_model(target: str, code: str) -> bool:
    return target == code or code.startswith(target + ".")


def _root(code: str) -> str:
    return code.split(".")[0]


def _holds(ctx: FileContext, name: str, code: str) -> bool:
    """Whether some assignment in the file binds ``name`` to a value that reads the model's name
    (``dp = nn.DataParallel(model)``): switching ``name`` may switch the model."""
    root = _root(code)
    for a in ctx.contents(ctx.module).assigns:
        if not isinstance(a, (cst.Assign, cst.AnnAssign)) or a.value is None:
            continue
        targets = [t.target for t in a.targets] if isinstance(a, cst.Assign) else [a.target]
        if any(dotted_name(t) == name for t in targets) and ctx.names_in(a.value, root):
            return True
    return False


def _call_modes(ctx: FileContext, call: cst.Call, code: str, depth: int, seen: Set[int],
                followed: bool = False) -> Set[str]:
    """What running ``call`` does to the mode of the module-level model ``code`` (``followed``: inside a
    function followed from the evaluation's script or function)."""
    target = eval_mode_target(call)
    switched = target if target is not None else (receiver(call) if train_mode_call(call) else None)
    if switched is not None:
        other = ctx.code(switched)
        if _same_model(other, code):
            # a `.train()` of the evaluating code's own is a choice (Monte-Carlo dropout), not a mode left over,
            # unless what follows it in its block trains the model: switched back for training
            if target is not None:
                return {EVAL}
            return {TRAIN} if followed or _training_follows(ctx, call) else {UNKNOWN}
        if code.startswith(other + ".") or _holds(ctx, _root(other), code) or other == "self":
            return {UNKNOWN}  # an object that may hold the model
        return {PASS}
    function = ctx.function_for_call(call)
    # `self.validate(loader)` for `self.model`: the method of the same object, with `self` the same
    own_method = function is not None and code.startswith("self.") and isinstance(call.func, cst.Attribute) \
        and isinstance(call.func.value, cst.Name) and call.func.value.value == "self" \
        and isinstance(ctx.parent(ctx.parent(function)), cst.ClassDef)
    if function is not None and (own_method or ctx.enclosing(function, (cst.FunctionDef, cst.ClassDef)) is None):
        if depth <= 0 or id(function) in seen:
            inner = calls_through_helpers(ctx, function, 1)
            return {UNKNOWN} if any(eval_mode_target(c) is not None or train_mode_call(c) for c, _v in inner) \
                else {PASS}
        root = _root(code)
        names = {p.name.value for p in [*function.params.posonly_params, *function.params.params,
                                       *function.params.kwonly_params]}
        inner_code: Optional[str] = code
        if own_method:
            pass  # `self.model` is the same attribute there
        elif root in names or any(dotted_name(a.value) == code for a in call.args):
            bound = bind_arguments(call, function, 0)
            if bound is None:
                return {UNKNOWN}
            passed = [n for n, a in bound.items() if dotted_name(a) == root]
            inner_code = passed[0] + code[len(root):] if passed else (None if root in names else code)
        if inner_code is None:
            return {PASS}  # the function's parameter of that name is something else
        out = _block_modes(ctx, function.body.body, inner_code, depth - 1, seen | {id(function)}, True)
        if TRAIN in out and not trains(ctx, function, depth=2) and not any(
                train_mode_call(c) and _switched_back(ctx, c, after=False) for c in ctx.calls_in(function)):
            # a helper that only switches modes (`enable_dropout()`); one that puts back the training mode
            # it switched off (`net.eval()`, an attack crafted, `net.train()`) leaves the model training
            out = (out - {TRAIN}) | {UNKNOWN}
        return out
    name = callee_name(call) or ""
    if _MODE_WORDS.search(name) or any(
        dotted_name(a.value) is not None and _same_model(dotted_name(a.value) or "", code) for a in call.args
    ):
        if not _MODE_WORDS.search(name) and _provably_leaves_mode(ctx, call):
            return {PASS}  # `early_stopping(loss, model, path)`: a project callable that switches no mode
        return {UNKNOWN}  # a call not followed that may switch it (`engine.train(model=net, ...)`)
    return {PASS}


def _statement_modes(ctx: FileContext, stmt: cst.CSTNode, code: str, depth: int, seen: Set[int],
                     followed: bool = False) -> Set[str]:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return {PASS}
    if isinstance(stmt, cst.SimpleStatementLine):
        out = {PASS}
        root = _root(code)
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign)) else None
                if code == root and len(targets) == 1 and isinstance(targets[0], cst.Name) \
                        and targets[0].value == root and value is not None:
                    if moves_itself(value, targets[0]) or _wraps(value, root):
                        pass  # `model = model.to(device)`, `model = DataParallel(model)`: the same module
                    elif _constructed(ctx, value):
                        out = {EVAL if _switched_in_chain(value) else TRAIN}  # a new module: in training mode
                        continue
                    else:
                        return {UNKNOWN}
                elif any(root in {n.value for n in iter_nodes(t) if isinstance(n, cst.Name)} for t in targets):
                    return {UNKNOWN}  # the name is bound to another object: its mode is not followed
            for call in ctx.calls_in(small):
                out = _then(out, _call_modes(ctx, call, code, depth, seen, followed))
        return out
    if isinstance(stmt, cst.If):
        body = _block_modes(ctx, stmt.body.body, code, depth, seen, followed)
        other = stmt.orelse
        if other is None:
            return body | {PASS}
        if isinstance(other, cst.If):
            return body | _statement_modes(ctx, other, code, depth, seen, followed)
        return body | _block_modes(ctx, other.body.body, code, depth, seen, followed)
    if isinstance(stmt, (cst.For, cst.While)):
        body = _block_modes(ctx, stmt.body.body, code, depth, seen, followed)
        return body if _runs_a_pass(ctx, stmt) else body | {PASS}
    if isinstance(stmt, (cst.With, cst.Try)) and isinstance(stmt.body, cst.IndentedBlock):
        if isinstance(stmt, cst.With) and any(_MODE_WORDS.search(ctx.code(item.item)) for item in stmt.items):
            return {UNKNOWN}  # `with evaluating(model):`
        out = _block_modes(ctx, stmt.body.body, code, depth, seen, followed)
        if isinstance(stmt, cst.Try):
            for handler in stmt.handlers:
                out |= _block_modes(ctx, handler.body.body, code, depth, seen, followed)
            if stmt.finalbody is not None:
                out = _then(out, _block_modes(ctx, stmt.finalbody.body.body, code, depth, seen, followed))
        return out
    # anything else (`match`, ...) that switches some mode is not followed
    return {UNKNOWN} if any(train_mode_call(c) or eval_mode_target(c) is not None
                            for c in ctx.calls_in(stmt)) else {PASS}


def _wraps(value: cst.BaseExpression, root: str) -> bool:
    """``DataParallel(model)``, ``nn.Sequential(model, head)``: a construction handed the module ``root``
    holds, which keeps its own mode inside (a container's flag changes its parts only when switched)."""
    core = strip_moves_expr(value)
    return isinstance(core, cst.Call) and any(
        isinstance(a.value, cst.Name) and a.value.value == root for a in core.args)


def _constructed(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``value`` constructs a new module (moved or switched on the way): a project ``nn.Module`` class or a
    torch.nn class called (``Flow()``, ``nn.Sequential(nn.Linear(2, 4), ...).to(device)``), handed no
    module the code holds (a wrapper's or container's parts keep their own modes).  A module is built in
    training mode."""
    core = strip_moves_expr(value)
    if not isinstance(core, cst.Call):
        return False
    for a in core.args:
        if isinstance(a.value, (cst.Name, cst.Attribute)) and holds_module(ctx, a.value):
            return False  # `nn.DataParallel(net)`, `Wrapper(backbone)`: parts built before, in their own modes
        if isinstance(a.value, cst.Subscript) or isinstance(a.value, cst.Call) and not _constructed(ctx, a.value):
            return False  # `nn.DataParallel(restore(path))`: what the call gives may be a module in eval mode
    if any(q.startswith("torch.nn.") and not q.startswith("torch.nn.functional") and q.rsplit(".", 1)[-1][:1].isupper()
           for q in ctx.names.qualified_names_at(core.func)):
        return True
    found = definition_of(ctx, core.func)
    if found is None or not isinstance(found[1], cst.ClassDef) or not module_class(found[0], found[1]):
        return False
    # a class that switches its own mode while it is built (`self.eval()` in `__init__`) starts in that mode
    return not any(eval_mode_target(c) is not None or train_mode_call(c)
                   for c in found[0].calls_in(found[1]) if isinstance(c.func, cst.Attribute)
                   and isinstance(c.func.value, cst.Name) and c.func.value.value == "self")


def _training_follows(ctx: FileContext, switch: cst.Call) -> bool:
    """Whether one of the two statements after the one holding ``switch`` (a ``.train()``), in the same
    block, trains: ``net.train()`` then the epoch's batches, a backward pass and a step.  (A ``.train()``
    followed by a forward pass that is only scored is a choice: the loss in training mode, shown.)"""
    stmt = ctx.statement_of(switch)
    block = ctx.block_of(stmt) if stmt is not None else None
    if block is None:
        return False
    at = next(i for i, s in enumerate(block) if s is stmt)
    return any(trains(ctx, later) for later in block[at + 1:at + 3])


def _runs_a_pass(ctx: FileContext, loop: cst.CSTNode) -> bool:
    """A loop whose body runs at least once as the code is meant to run: a ``for`` loop (over epochs,
    batches, a range: the code after it assumes they ran), or a ``while`` loop that trains."""
    if isinstance(loop, cst.For):
        return not (isinstance(loop.iter, (cst.List, cst.Tuple)) and not loop.iter.elements)
    return isinstance(loop, cst.While) and trains(ctx, loop.body)


def _block_modes(ctx: FileContext, stmts: Sequence[cst.CSTNode], code: str, depth: int,
                 seen: Set[int], followed: bool = False) -> Set[str]:
    out = {PASS}
    for stmt in stmts:
        out = _then(out, _statement_modes(ctx, stmt, code, depth, seen, followed))
    return out


def modes_reaching(ctx: FileContext, node: cst.CSTNode, code: str, depth: int = 3,
                   entry: FrozenSet[str] = frozenset({UNKNOWN})) -> Set[str]:
    """The modes the module-level model ``code`` may be in when ``node`` runs, from what runs before it
    in its function or script (and, inside a loop, what the rest of the loop body did in the pass
    before): EVAL, TRAIN (left in training mode on some path by a function that trains: ``model.train()``
    then ``if not args.fastmode: model.eval()``), UNKNOWN (the start of the enclosing function, a rebinding
    of the name, or a call not followed that may switch it).  Same-module functions are followed with
    the model mapped through their parameters.  ``entry``: the modes at the start of the enclosing
    function (see :func:`left_training_by_siblings`)."""
    out: Set[str] = set()
    stmt = ctx.statement_of(node)
    while stmt is not None:
        block = ctx.block_of(stmt)
        if block is None:
            return out | {UNKNOWN}
        index = next(i for i, s in enumerate(block) if s is stmt)
        before = _block_modes(ctx, block[:index], code, depth, set())
        container = ctx.parent(ctx.parent(stmt)) if isinstance(ctx.parent(stmt), cst.IndentedBlock) else None
        if isinstance(container, (cst.For, cst.While)):
            again = _block_modes(ctx, list(block[index + 1:]) + list(block[:index]), code, depth, set())
            out |= again - {PASS}
        out |= before - {PASS}
        if PASS not in before:
            return out
        if isinstance(container, cst.FunctionDef):
            return out | entry  # the start of the function
        if container is None or isinstance(container, (cst.ClassDef, cst.Module)):
            return out | {UNKNOWN}  # the start of the script
        if isinstance(container, (cst.Else, cst.ExceptHandler, cst.Finally)) or not isinstance(
                container, cst.BaseCompoundStatement):
            container = ctx.statement_of(container)
        stmt = container
    return out | {UNKNOWN}


def left_training_by_siblings(ctx: FileContext, function: cst.FunctionDef, code: str) -> List[cst.FunctionDef]:
    """The other methods of ``function``'s class that leave ``code`` (``self.model``, an attribute the class
    keeps) in training mode on some path when they return: they call ``self.model.train()`` with no
    ``.eval()`` after it on that path (``def train(self): self.model.train()`` then the epochs).  When
    ``function`` is called from no code of its file, it is an entry point of the class that other code
    calls in any order: such a method may have run just before it (``exp.train(); exp.test()``)."""
    cls = ctx.parent(ctx.parent(function))
    if not (code.startswith("self.") and isinstance(cls, cst.ClassDef) and function.name.value != "__init__"
            and not call_sites(ctx, function)):
        return []
    if instance_calls(ctx, function):
        return []  # the file calls it on an instance: the order it runs in is there to read, not any order
    out: List[cst.FunctionDef] = []
    for other in class_body(cls):
        if not isinstance(other, cst.FunctionDef) or other is function or other.name.value == "__init__" \
                or not isinstance(other.body, cst.IndentedBlock) or call_sites(ctx, other):
            continue  # (a method other methods call runs inside them: what they leave is what counts)
        if not any(train_mode_call(c) and isinstance(c.func, cst.Attribute) and ctx.code(c.func.value) == code
                   for c in ctx.calls_in(other)):
            continue  # (only a method that switches this model itself is read)
        if TRAIN in _block_modes(ctx, other.body.body, code, 2, set()):
            out.append(other)
    return out


# -- decoding: inference recognised by what the code does -----------------------------------------
#: calls that pick indices or draw samples from a model's output: their result carries no graph
_PICKS = frozenset({"argmax", "argmin", "multinomial", "sample", "argsort"})
#: calls that return ``(values, indices)``: the values keep the graph, the indices do not
_PICKS_WITH_VALUES = frozenset({"topk", "max", "min", "sort", "kthvalue"})


def _pick_name(ctx: FileContext, call: cst.Call) -> Optional[str]:
    """``argmax``/``multinomial``/``sample``/``topk``/... for ``x.argmax(-1)``, ``torch.multinomial(p, 1)``,
    ``dist.sample()``; ``max``/``min`` only with a dimension (``x.max(1)``: values and indices)."""
    name = method_name(call)
    if name is None:
        names = ctx.names.qualified_names_at(call.func)
        torch_names = [q for q in names if q.startswith("torch.") and q.count(".") == 1]
        if not torch_names:
            return None
        name = torch_names[0].rsplit(".", 1)[-1]
        args = call.args[1:]  # the first argument is the tensor
    else:
        args = call.args
    if name in ("max", "min") and not args:
        return None
    if name == "sample" and not _torch_distribution(ctx, receiver(call)):
        return None  # `random.sample(pool, k)`; a project's own `sample()` may be reparameterised
    return name if name in _PICKS or name in _PICKS_WITH_VALUES else None


def _torch_distribution(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> bool:
    """A ``torch.distributions`` object by construction (``Categorical(logits=z)``, or a name bound only
    to such): its ``sample()`` draws without a graph (``rsample()`` would keep it)."""
    if isinstance(expr, cst.Call):
        return any(q.startswith("torch.distributions.") for q in ctx.names.qualified_names_at(expr.func))
    if isinstance(expr, cst.Name):
        values = ctx.names.values_at(expr)
        return bool(values) and all(_torch_distribution(ctx, v) for v in values if v is not expr)
    return False


#: string literals: what a value is formatted into
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
#: builtins that make a Python number or string of a tensor: no graph (``repr`` too, where read)
_PLAIN_BUILTINS = frozenset({"int", "float", "bool", "len", "str"})
_TEXT_BUILTINS = _PLAIN_BUILTINS | {"repr"}


class _Reads:
    """What an expression computes from: every name it reads and whether it holds one of the model
    calls (``names``, ``call``), and the same outside the parts that carry no autograd graph
    (``graph_names``, ``graph_call``): picks (``x.argmax(-1)``, ``torch.multinomial(p, 1)``,
    ``x.topk(k)[1]``) and detached values (``x.item()``, ``int(x)``).  An index (``x[i]``), a size
    (``h.size(0)``, ``h.shape``) or a position (``scores.index(best)``) reads nothing of its tensor."""

    __slots__ = ("ctx", "expr", "names", "graph_names", "graph_reads", "call", "graph_call")

    def __init__(self, ctx: FileContext, expr: cst.CSTNode, calls: Set[cst.Call], data_off: bool = False) -> None:
        self.ctx = ctx
        self.expr = expr
        self.names: Set[str] = set()
        self.graph_names: Set[str] = set()
        self.graph_reads: List[cst.Name] = []
        self.call = self.graph_call = False
        stack: List[Tuple[cst.CSTNode, bool]] = [(expr, False)]
        while stack:
            n, off = stack.pop()
            if n in calls:
                self.call = True
                self.graph_call = self.graph_call or not off
            if isinstance(n, cst.Name):
                self.names.add(n.value)
                if not off:
                    self.graph_names.add(n.value)
                    self.graph_reads.append(n)
                continue
            if isinstance(n, cst.Subscript):
                if isinstance(n.value, cst.Call) and _pick_name(ctx, n.value) in _PICKS_WITH_VALUES:
                    picked = _outer_pick(ctx, n)
                    if picked is not None and picked[1] == 1:
                        off = True  # `x.topk(k)[1]`, `x.max(1)[1]`: indices
                stack.append((n.value, off))
                continue
            if isinstance(n, cst.Call):
                method = method_name(n)
                if method in _SIZE_METHODS:
                    continue
                if method in _OFF_GRAPH_METHODS or _pick_name(ctx, n) in _PICKS or (
                    isinstance(n.func, cst.Name) and n.func.value in _TEXT_BUILTINS
                ) or _integer_cast(ctx, n) or method == "format" and isinstance(receiver(n), _STRINGS) \
                        or _returns_a_number(ctx, n):
                    off = True  # (a value formatted into a string: text, no graph; a helper's Python number)
            elif isinstance(n, cst.FormattedString) or (
                    isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo)
                    and isinstance(n.left, _STRINGS)):
                off = True  # `f"{loss}"`, `"%.3f" % loss`
            if isinstance(n, cst.Attribute):
                if n.attr.value in ("shape", "ndim", "dtype", "device"):
                    continue
                if n.attr.value == "indices" or n.attr.value == "data" and data_off:
                    off = True  # (`.data`: the tensor without its graph, where the caller asks for it)
                stack.append((n.value, off))
                continue
            stack.extend((c, off) for c in children(n))  # (a keyword's name is no read)

    def mentions(self, names: Set[str]) -> bool:
        return self.call or not self.names.isdisjoint(names)

    def carries(self, graph: Set[str]) -> bool:
        if self.graph_call:
            return True
        if self.graph_names.isdisjoint(graph):
            return False
        # a name of the flow read where it holds a copy off the graph (`scores = scores.cpu().numpy()`
        # before the read) carries none there
        return any(n.value in graph and not _holds_off_graph(self.ctx, n) for n in self.graph_reads)


def _returns_a_number(ctx: FileContext, call: cst.Call) -> bool:
    """``call`` runs a function of the project every ``return`` of which gives a Python number made off the
    graph: ``math.log(p) - math.log(t)``, ``float(...)``, ``x.item()``, numbers, arithmetic of those
    (``def squared_log_error(p, t): return (math.log(p) - math.log(t)) ** 2``)."""
    if not isinstance(call.func, cst.Name):
        return False
    target = called_function(ctx, call)
    if target is None:
        return False
    fctx, function = target[0], target[1]
    known = _NUMBER_RETURNS.of(fctx)
    if function in known:
        return known[function]
    returns = [r.value for r in function_returns(function)]
    answer = bool(returns) and all(r is not None and _python_number(fctx, r) for r in returns)
    if fctx.walked:
        known[function] = answer  # (names answer for good once the walk is done)
    return answer


#: function of the file -> whether every return of it gives a Python number (asked once per function)
_NUMBER_RETURNS: "Fact[Dict[cst.FunctionDef, bool]]" = Fact("evaluation.number_returns", lambda ctx: {})


def _python_number(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name) and depth < 3:
        value = ctx.names.value_of(expr)  # `score = (p - t) ** 2` then `return score`
        return value is not None and _python_number(ctx, value, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _python_number(ctx, expr.expression, depth)
    if isinstance(expr, cst.BinaryOperation):
        return _python_number(ctx, expr.left, depth) and _python_number(ctx, expr.right, depth)
    if isinstance(expr, cst.Call):
        if method_name(expr) == "item" or isinstance(expr.func, cst.Name) and expr.func.value in ("float", "int"):
            return True
        names = ctx.names.qualified_names_at(expr.func)
        return bool(names) and all(q.startswith("math.") for q in names)
    return False


def _holds_off_graph(ctx: FileContext, name: cst.Name, depth: int = 0) -> bool:
    """The value ``name`` holds where it is read is made off the graph: ``.numpy()``, ``.item()``,
    ``.tolist()``, ``.detach()``, ``float(...)``; or taken from such a value by indexing or reshaping it
    (``probs = probs.cpu().numpy()`` then ``probs = probs[probs > t]``: still an array)."""
    value = ctx.names.value_of(name)
    if value is None:
        # changed in place since (`boxes /= scale`): an array or a Python number stays one, whatever it is
        # updated with (a tensor cut off with `.detach()` could take a graph in)
        value = ctx.names.value_of(name, through_updates=True)
        return isinstance(value, cst.Call) and (method_name(value) in ("numpy", "tolist", "item")
                                                 or _plain_builtin(value))
    base: Optional[cst.BaseExpression] = None
    if isinstance(value, cst.Subscript):
        base = value.value
    elif isinstance(value, cst.Call) and method_name(value) in _SHAPING:
        base = receiver(value)
    if base is not None:
        return depth < 3 and isinstance(base, cst.Name) and _holds_off_graph(ctx, base, depth + 1)
    if not isinstance(value, cst.Call):
        return False
    return method_name(value) in _OFF_GRAPH_METHODS or _plain_builtin(value) or _integer_cast(ctx, value)


def _plain_builtin(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value in _PLAIN_BUILTINS


#: methods that give part of a value, or the value in another shape, of the same kind (an array stays one)
_SHAPING = frozenset({"reshape", "view", "squeeze", "flatten", "ravel", "transpose", "copy", "clone",
                      "astype", "unsqueeze", "permute", "contiguous"})


#: the integer and boolean dtypes: a tensor of one never requires grad
_INTEGER_DTYPES = frozenset(f"torch.{d}" for d in ("uint8", "int8", "int16", "short", "int32", "int", "int64", "long",
                                                   "bool"))
_INTEGER_CASTS = frozenset({"long", "int", "short", "byte", "char", "bool"})


def _integer_cast(ctx: FileContext, call: cst.Call) -> bool:
    """``x.long()``, ``x.type(torch.uint8)``, ``x.to(torch.int64)``: an integer or boolean copy of a tensor,
    which holds no graph."""
    method = method_name(call)
    if method in _INTEGER_CASTS and not call.args and receiver(call) is not None:
        return True
    if method in ("type", "to") and len(call.args) == 1 and not call.args[0].star and (
            call.args[0].keyword is None or call.args[0].keyword.value in ("dtype", "type")):
        return bool(ctx.names.qualified_names_at(call.args[0].value) & _INTEGER_DTYPES)
    return False


def _mentions(ctx: FileContext, expr: cst.CSTNode, names: Set[str], calls: Set[cst.Call]) -> bool:
    """Whether ``expr`` computes from one of ``names`` or ``calls`` (see :class:`_Reads`)."""
    return _Reads(ctx, expr, calls).mentions(names)


def _carries(ctx: FileContext, expr: cst.CSTNode, names: Set[str], calls: Set[cst.Call],
             data_off: bool = False) -> bool:
    """:func:`_mentions` for the autograd graph: picks and detached values carry none (nor, with
    ``data_off``, values read through ``.data``)."""
    return _Reads(ctx, expr, calls, data_off).carries(names)


_SIZE_METHODS = frozenset({"size", "dim", "numel", "index", "count", "nelement", "get_device"})
_OFF_GRAPH_METHODS = frozenset({"item", "detach", "tolist", "numpy", "detach_"})


@dataclass
class DecodingFlow:
    """What flows from the model calls of a piece of code: names that carry the autograd graph of an
    output (``logits``, ``h``), names that hold indices or samples picked from one (``nxt``, ``tokens``),
    and whether some pick was taken."""

    graph: Set[str] = field(default_factory=set)
    picked: Set[str] = field(default_factory=set)
    picks: bool = False


def _outer_pick(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Tuple[str, Optional[int]]]:
    """``(pick, index)`` for the call that makes ``expr`` (through shape methods, ``.item()``,
    subscripts): ``x.argmax(-1)[:, None]`` -> ("argmax", None); ``x.topk(1)[1]`` -> ("topk", 1)."""
    e = expr
    index: Optional[int] = None
    while True:
        if isinstance(e, cst.Subscript):
            s = e.slice
            if len(s) == 1 and isinstance(s[0].slice, cst.Index) and isinstance(s[0].slice.value, cst.Integer):
                index = int(s[0].slice.value.value)
            e = e.value
            continue
        if isinstance(e, cst.Attribute) and e.attr.value in ("indices", "values"):
            index = 1 if e.attr.value == "indices" else 0
            e = e.value
            continue
        if isinstance(e, cst.Call):
            pick = _pick_name(ctx, e)
            if pick is not None:
                return pick, index
            if method_name(e) in ("squeeze", "unsqueeze", "view", "reshape", "flatten", "long", "int", "item",
                                  "tolist", "to", "cpu", "cuda", "detach", "clone", "contiguous"):
                e = receiver(e)
                if e is None:
                    return None
                continue
        return None


def decoding_flow(ctx: FileContext, node: cst.CSTNode, model_calls: Set[cst.Call],
                  seed: Optional[Set[str]] = None) -> DecodingFlow:
    """Follow the outputs of ``model_calls`` (and the names of ``seed``, which hold an output's graph)
    through the assignments under ``node`` (a few passes, in any order: a loop feeds the next iteration)."""
    flow = DecodingFlow()
    flow.graph.update(seed or ())
    contents = ctx.contents(node)
    steps = []  # (what is read, the names bound for the graph/picked parts, or the list appended to)
    for a in contents.assigns:
        value = getattr(a, "value", None)
        if value is None:
            continue
        reads = _Reads(ctx, value, model_calls)
        if not reads.names and not reads.call:
            continue
        pick = _outer_pick(ctx, value)
        for target in assignment_targets(a):
            if isinstance(target, (cst.Tuple, cst.List)) and pick is not None and pick[0] in _PICKS_WITH_VALUES \
                    and pick[1] is None:
                for i, el in enumerate(target.elements):  # `values, indices = x.topk(k)`
                    names = {n.value for n in iter_nodes(el.value) if isinstance(n, cst.Name)}
                    steps.append((reads, names, "picked" if i == 1 else "graph"))
                continue
            if isinstance(target, (cst.Attribute, cst.Subscript)):
                names = set(base_names(target))
            else:
                names = {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}
            steps.append((reads, names, None))
    for loop in ctx.nodes(node):  # `for out, y in outputs_of(model, loader)`: the loop binds what it iterates
        if type(loop) is cst.For or type(loop) is cst.CompFor:
            reads = _Reads(ctx, loop.iter, model_calls)
            if reads.names or reads.call:
                steps.append((reads, {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}, None))
    for call in contents.calls:  # `outputs.append(logits)`, `tokens.append(nxt)`
        recv = receiver(call)
        if method_name(call) in ("append", "extend", "insert") and isinstance(recv, cst.Name) and call.args:
            steps.append((_Reads(ctx, call.args[-1].value, model_calls), {recv.value}, None))
    rebinds = _rebinding_reads(ctx, contents, model_calls)
    for _ in range(5):
        before = (len(flow.graph), len(flow.picked))
        for reads, names, fixed in steps:
            live = flow.graph | flow.picked
            killed = {n for n, fresh in rebinds.get(id(reads.expr), ()) if not fresh.mentions(live)}
            if not reads.mentions(live - killed):
                continue
            graph = flow.graph - killed
            kind = fixed or ("graph" if reads.carries(graph) else "picked")
            (flow.graph if kind == "graph" else flow.picked).update(names)
        if (len(flow.graph), len(flow.picked)) == before:
            break
    for call in contents.calls:
        if _pick_name(ctx, call) is None:
            continue
        operands = [a.value for a in call.args]
        recv = receiver(call)
        if recv is not None:
            operands.append(recv)
        if any(_mentions(ctx, o, flow.graph, model_calls) for o in operands):
            flow.picks = True
    return flow


def _rebinding_reads(ctx: FileContext, contents: Any, calls: Set[cst.Call]) -> Dict[int, List[Tuple[str, "_Reads"]]]:
    """id(value of an assignment) -> ``(name, what the rebinding reads)`` for each name the value reads
    that an earlier assignment of the same block (or of a block around it) binds again before it:
    ``pred, _ = net(b_x)`` then ``loss = loss_func(pred, b_y)`` reads the training output, whatever an
    evaluation before the block bound to ``pred``.  The earlier flow reaches the read only where the
    rebinding itself reads it.  A name also changed in place under ``contents`` (``outputs.append(y)``,
    ``total += y``, ``buf[i] = y``) is no such rebinding: the value read is the one the changes built."""
    assigns = contents.assigns
    changed: Set[str] = set()
    for call in contents.calls:
        recv = receiver(call)
        if method_name(call) in ("append", "extend", "insert") and isinstance(recv, cst.Name):
            changed.add(recv.value)
    for a in assigns:
        if isinstance(a, cst.AugAssign) and isinstance(a.target, cst.Name):
            changed.add(a.target.value)
        for t in assignment_targets(a):
            if isinstance(t, cst.Subscript):
                changed.update(base_names(t))
    binders: Dict[str, List[Tuple[cst.Assign, cst.CSTNode]]] = {}  # name -> (assignment binding it, its block)
    for a in assigns:
        if not isinstance(a, cst.Assign):
            continue
        line = ctx.parent(a)
        block = ctx.parent(line) if isinstance(line, cst.SimpleStatementLine) else None
        if block is None:
            continue
        for name in {n.value for t in a.targets for n in target_names(t.target)} - changed:
            binders.setdefault(name, []).append((a, block))
    out: Dict[int, List[Tuple[str, _Reads]]] = {}
    if not binders:
        return out
    fresh: Dict[int, _Reads] = {}  # what each rebinding reads, made once
    for a in assigns:
        value = getattr(a, "value", None)
        if value is None:
            continue
        read = {n.value for n in iter_nodes(value) if isinstance(n, cst.Name)} & binders.keys()
        if not read:
            continue
        at = position(ctx, a)
        for name in read:
            # the nearest rebinding before the read (`frame = first` before the loop, then `frame = step(frame)`
            # in it: the read in the loop holds what the step gave)
            earlier = [other for other, block in binders[name]
                       if other is not a and position(ctx, other) < at and ctx.is_inside(a, block)]
            if not earlier:
                continue
            other = max(earlier, key=lambda o: position(ctx, o))
            reads = fresh.get(id(other))
            if reads is None:
                reads = fresh[id(other)] = _Reads(ctx, other.value, calls)
            out.setdefault(id(value), []).append((name, reads))
    return out


def _on_self(expr: cst.BaseExpression) -> bool:
    """``self``, or a part of it (``self.net``, ``self.cache[k]``)."""
    root = root_name(expr)
    return root is not None and root.value == "self"


def feeds_back(ctx: FileContext, call: cst.Call, flow: DecodingFlow) -> Optional[str]:
    """Whether a model call inside a loop reads what the loop derives from its outputs: "picked" (a token
    picked from an output), "output" (the output itself, a hidden state), None."""
    loop = None
    for a in ctx.ancestors(call):
        if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(a, LOOP_TYPES):
            loop = a
            break
    if loop is None:
        return None
    assigned = {
        n.value
        for a in ctx.contents(loop).assigns
        for t in assignment_targets(a)
        for n in iter_nodes(t)
        if isinstance(n, cst.Name)
    }
    read = {n.value for a in call.args for n in iter_nodes(a.value) if isinstance(n, cst.Name)}
    if read & flow.picked & assigned:
        return "picked"
    if read & flow.graph & assigned:
        return "output"
    return None


#: engines that call a process function ``f(engine, batch)`` and keep what it returns as ``state.output``
#: for their metrics and handlers (a function that trains nothing returns to metrics only)
ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})


def engine_process_function(ctx: FileContext, function: cst.FunctionDef) -> bool:
    """Whether ``function`` is handed, by name, as the process function of a training-engine object
    (``Engine(evaluate_step)``) and called by nothing else in the file: what it returns goes to the
    engine's output, which its metrics read."""
    if call_sites(ctx, function):
        return False
    for call in ctx.calls_in(ctx.module):
        if not call.args or not (ctx.names.qualified_names_at(call.func) & ENGINES):
            continue
        first = call.args[0].value
        if isinstance(first, cst.Name) and first.value == function.name.value:
            found = definition_of(ctx, first)
            if found is not None and found[1] is function:
                return True
            # a function defined inside another (`create_evaluator` building its step), handed over in
            # the same scope
            outer = ctx.enclosing(function, cst.FunctionDef)
            if found is None and outer is not None and ctx.enclosing(call, cst.FunctionDef) is outer:
                return True
    return False


def returns_graph(ctx: FileContext, function: cst.FunctionDef, flow: DecodingFlow, model_calls: Set[cst.Call]) -> bool:
    """Whether ``function`` hands an output's graph to its caller: returns or yields it, or stores it in
    a container it was given (``outputs.append(logits)`` on a parameter) or on ``self``."""
    params = {p.name.value for p in [*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params]}
    for n in ctx.nodes(function.body):
        if (type(n) is cst.Return or type(n) is cst.Yield) and isinstance(n.value, cst.BaseExpression):
            if _carries(ctx, n.value, flow.graph, model_calls):
                return True
    for a in ctx.contents(function).assigns:
        value = getattr(a, "value", None)
        if value is None or not _carries(ctx, value, flow.graph, model_calls):
            continue
        for t in assignment_targets(a):
            if isinstance(t, (cst.Attribute, cst.Subscript)) and set(base_names(t)) & (params | {"self"}):
                return True
    for call in ctx.calls_in(function):
        recv = receiver(call)
        if method_name(call) in ("append", "extend", "insert") and recv is not None and call.args and (
            set(base_names(recv)) & (params | {"self"})
        ):
            if _carries(ctx, call.args[-1].value, flow.graph, model_calls):
                return True
    return False


def _generator(function: cst.FunctionDef) -> bool:
    """Whether ``function`` itself yields (a generator: its caller consumes what it yields in a loop)."""
    return any(isinstance(n, cst.Yield) for n in iter_nodes(function.body)) and not any(
        isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in iter_nodes(function.body)
    )


def _iterated_outputs(ctx: FileContext, helper: cst.FunctionDef, site_call: cst.Call,
                      model_calls: Set[cst.Call]) -> Optional[Set[str]]:
    """For ``for out, y in outputs_of(model, loader)`` over a generator: the loop's names that receive
    an output's graph (the positions of the yielded tuples that carry it: ``yield model(x), y`` gives
    ``{"out"}``); None when the call is not iterated by a ``for`` loop of its own."""
    loop = _iterating_loop(ctx, site_call, comprehensions=True)
    if loop is None:
        return None
    target = loop.target
    if loop.iter is not site_call:  # `enumerate(...)`: the pair's second element
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
            return None
        target = target.elements[1].value
    flow = decoding_flow(ctx, helper, model_calls)
    yields = [n.value for n in iter_nodes(helper.body) if isinstance(n, cst.Yield)]
    if isinstance(target, (cst.Tuple, cst.List)) and yields and all(
        isinstance(y, cst.Tuple) and len(y.elements) == len(target.elements) for y in yields
    ):
        out: Set[str] = set()
        for i, el in enumerate(target.elements):
            if any(_carries(ctx, y.elements[i].value, flow.graph, model_calls) for y in yields):  # type: ignore
                out.update(n.value for n in iter_nodes(el.value) if isinstance(n, cst.Name))
        return out
    return {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}


def _iterating_loop(ctx: FileContext, call: cst.Call, comprehensions: bool = False):
    """The ``for`` statement (or, with ``comprehensions``, the comprehension's ``for``) whose iterable is
    ``call`` or ``enumerate(call)``."""
    parent = ctx.parent(call)
    if isinstance(parent, cst.Arg):
        outer = ctx.parent(parent)
        if not (isinstance(outer, cst.Call) and isinstance(outer.func, cst.Name) and outer.func.value == "enumerate"
                and len(outer.args) == 1 and ctx.names.qualified_names(outer.func) <= {"builtins.enumerate"}):
            return None
        parent = ctx.parent(outer)
    kinds = (cst.For, cst.CompFor) if comprehensions else (cst.For,)
    return parent if isinstance(parent, kinds) else None


def reaches_backward(ctx: FileContext, node: cst.CSTNode, flow: DecodingFlow, model_calls: Set[cst.Call]) -> bool:
    """Whether a backward pass under ``node`` differentiates a value that carries an output's graph (or
    differentiates something it cannot name)."""
    for call in ctx.calls_in(node):
        if not is_backward_like(ctx, call):
            continue
        operand = backward_operand(ctx, call)
        if operand is None or _carries(ctx, operand, flow.graph, model_calls):
            return True
    return False


def graph_free_function(ctx: FileContext, call: cst.Call, depth: int = 2) -> bool:
    """Whether ``call`` runs a function of another project file (``non_max_suppression(outputs, ...)``
    from the project's utilities) whose code takes no gradient: no backward pass, gradient read,
    ``autograd`` or optimizer step in it, and every function of the project it calls the same (a few
    levels deep); what it returns is followed by the caller like any other value."""
    target = called_function(ctx, call)
    if target is None:
        return False
    fctx, function, _offset = target
    if fctx is ctx:
        return False  # same-module code is looked into by the helper walk
    if needs_grad(fctx, function):
        return False
    for inner in fctx.calls_in(function):
        if is_backward_like(fctx, inner) or optimizer_of_step(fctx, inner) is not None:
            return False
        if depth > 0:
            found = called_function(fctx, inner)
            if found is not None and found[0] is not fctx and not graph_free_function(fctx, inner, depth - 1):
                return False
    return True


#: library functions that take no gradient of what they are given: plotting, and torchvision's image
#: utilities (``make_grid`` builds a new tensor, ``save_image`` writes a file)
GRAPH_FREE_LIBRARIES = ("matplotlib.", "torchvision.utils.")

def hands_graph_away(ctx: FileContext, node: cst.CSTNode, flow: DecodingFlow, model_calls: Set[cst.Call]) -> bool:
    """Whether a value carrying an output's graph is handed to a callable whose behaviour is not known to
    leave it alone: anything but a model call, a torch function or class, a builtin, a same-module
    function, or a method of a tensor or distribution computed here."""
    for call in ctx.calls_in(node):
        if call in model_calls:
            continue
        values = [a.value for a in call.args]
        if not any(_carries(ctx, v, flow.graph, model_calls) for v in values):
            continue
        func = call.func
        target = ctx.function_for_call(call)
        if target is not None:
            if _keeps_on_self(ctx, call, target, [v for v in values if _carries(ctx, v, flow.graph, model_calls)]):
                return True  # `self.store_log_probabilities(log_p)`: kept on the object for a later backward
            continue
        if graph_free_function(ctx, call):
            continue
        names = ctx.names.qualified_names_at(func)
        if any(q.startswith(("torch.", "numpy.", "math.") + GRAPH_FREE_LIBRARIES) for q in names):
            continue
        if isinstance(func, cst.Name) and not names and func.value in _SAFE_BUILTINS and not (
            ctx.names.is_param_at(func)
        ):
            continue
        if isinstance(func, cst.Name) and _holds_torch_object(ctx, func):
            continue  # `ce = nn.CrossEntropyLoss()`, or a parameter every caller passes such an object for
        recv = receiver(call)
        if recv is not None and (
            _mentions(ctx, recv, flow.graph | flow.picked, model_calls)
            or any(q.startswith("torch.") for q in ctx.names.qualified_names_at(recv))
            or method_name(call) in ("append", "extend", "insert", "format", "join")
            or method_name(call) in LOGGING_METHODS
        ):
            continue
        if recv is not None and isinstance(recv, cst.Name) and (any(
            isinstance(v, cst.Call) and any(q.startswith("torch.") for q in ctx.names.qualified_names_at(v.func))
            for v in ctx.names.values_at(recv)
        ) or _holds_torch_object(ctx, recv)):
            continue  # `dist = Categorical(logits=...)`: `dist.log_prob(a)`; `criterion.forward(out, y)`
        return True
    return False


def _torch_construction(ctx: FileContext, value: cst.BaseExpression) -> bool:
    core = strip_moves_expr(value)
    return isinstance(core, cst.Call) and bool(ctx.names.qualified_names_at(core.func)) and all(
        q.startswith("torch.") for q in ctx.names.qualified_names_at(core.func))


def _holds_torch_object(ctx: FileContext, name: cst.Name) -> bool:
    """``name`` holds, on every assignment, an object torch builds (``nn.CrossEntropyLoss()``, ``nn.Softmax(1)``):
    calling it computes with what it is given and keeps nothing; for a parameter, every caller in the file passes
    such an object (or a name holding one)."""
    if ctx.names.is_param_at(name):
        args = arguments_for_param(ctx, name)
        return bool(args) and all(
            _torch_construction(ctx, a) or isinstance(a, cst.Name) and not ctx.names.is_param_at(a)
            and _holds_torch_object(ctx, a) for a in args)
    values = ctx.names.values_at(name)
    return bool(values) and all(_torch_construction(ctx, v) for v in values)


_KEEPING_CALLS = frozenset({"append", "extend", "insert", "add", "update", "put", "push"})


def _graph_leaves_by_call(ctx: FileContext, node: cst.CSTNode, flow: DecodingFlow, forward: Set[cst.Call]) -> bool:
    """A value carrying an output's graph leaves ``node`` through a call: handed to code not in view
    (:func:`hands_graph_away`), differentiated (:func:`reaches_backward`), or kept by one
    (``losses.append(loss)``)."""
    if hands_graph_away(ctx, node, flow, forward) or reaches_backward(ctx, node, flow, forward):
        return True
    return any(method_name(call) in _KEEPING_CALLS and any(_carries(ctx, a.value, flow.graph, forward)
                                                          for a in call.args) for call in ctx.calls_in(node))


def _keeps_on_self(ctx: FileContext, call: cst.Call, function: cst.FunctionDef,
                   carried: List[cst.BaseExpression]) -> bool:
    """Whether the method ``function`` of this file, called as ``self.<name>(...)``, keeps a parameter
    that ``call`` fills with one of ``carried`` on the object: ``self.log_probs.append(p)``,
    ``self.saved = p``, ``self.buffer[k] = p`` (another method may differentiate it later)."""
    if not isinstance(call.func, cst.Attribute) or dotted_name(call.func.value) != "self":
        return False
    bound = bind_arguments(call, function, 1)
    if not bound:
        return False
    params = {name for name, value in bound.items() if any(value is c for c in carried)}
    if not params:
        return False
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in _KEEPING_CALLS and (dotted_name(node.func.value) or "").startswith("self."):
            if any(isinstance(n, cst.Name) and n.value in params for a in node.args for n in iter_nodes(a.value)):
                return True
        elif isinstance(node, cst.Assign) and any(
                (dotted_name(t.target if not isinstance(t.target, cst.Subscript) else t.target.value) or "").startswith(
                    "self.") for t in node.targets):
            if any(isinstance(n, cst.Name) and n.value in params for n in iter_nodes(node.value)):
                return True
    return False


#: methods of ``nn.Module`` that run no part of the model's computation
_MODULE_METHODS = frozenset({"parameters", "named_parameters", "buffers", "modules", "children", "state_dict",
                             "load_state_dict", "eval", "train", "to", "cuda", "cpu", "half", "float", "double",
                             "zero_grad", "apply", "requires_grad_", "register_buffer", "register_forward_hook",
                             "backward", "step", "item", "size", "dim"})

_SAFE_BUILTINS = frozenset({"print", "len", "range", "zip", "enumerate", "list", "tuple", "min", "max", "sum",
                            "float", "int", "str", "isinstance", "sorted", "reversed", "round", "abs", "repr"})


# -- evaluation sites ----------------------------------------------------------------------------
@dataclass
class EvalSite:
    """One piece of evaluation code: an evaluation function, or an evaluation loop in other code."""

    kind: str  # "function" | "loop" | "statement" (a module-level prediction after training)
    node: cst.CSTNode  # the FunctionDef or the loop
    function: Optional[cst.FunctionDef]  # the function holding it (itself for a function site)
    calls: List[Tuple[cst.Call, cst.BaseExpression]] = field(default_factory=list)  # (call, model)
    #: True when only the function's own `.eval()` call made it evaluation code (the eval-mode rule must not use
    #: it); False for such a function whose behaviour says so too (it trains nothing, its outputs leave the graph)
    by_eval_call: bool = False
    #: for a decoding site (a model run on what it picked from its own output): "picked" when a token
    #: picked from an output is fed back, "output" when the output itself is (weaker evidence)
    decoding: Optional[str] = None
    #: for a decoding site: the model call (or call of a model's part) that is fed back
    anchor: Optional[cst.Call] = None
    #: for a forward pass through a helper: the helper whose result the site reads only off the graph
    helper: Optional[cst.FunctionDef] = None
    #: a method of the model class that runs the model itself and hands back only values off the graph
    #: (``get_action`` returning ``self(s).detach().numpy()``): the mode it runs in is its caller's to set
    own_method: bool = False
    #: a site whose every call runs such a method (``policy.get_action(s)``): no graph to turn off here
    through_own_method: bool = False


class EvaluationFacts:
    """Model calls recorded during the walk, evaluation sites computed once after it."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._model_calls: List[Tuple[cst.Call, cst.BaseExpression]] = []
        self._settled = False
        #: whether the forward pass of each project model class trains (:meth:`_forward_trains`)
        self._trains_in_forward: Dict[cst.ClassDef, bool] = {}
        #: model calls whose mode provably does not matter or is not ours to set (see :meth:`record`)
        self.mode_settled: Set[cst.Call] = set()
        #: model calls on a variable local to (or a parameter of) the enclosing function
        self.local_model: Set[cst.Call] = set()
        self._seen: Set[cst.Call] = set()
        self._sites: Optional[List[EvalSite]] = None
        self._param_calls: List[cst.Call] = []
        self._method_calls: List[cst.Call] = []
        self._used_calls: List[cst.Call] = []
        self._recorded: List[cst.Call] = []  # the calls the walk met, judged after it (:meth:`_judge`)
        #: per training loop: its assignments, returns, backward passes and container puts, by position
        self._loop_events: Dict[cst.CSTNode, List[Tuple[int, str, cst.CSTNode]]] = {}
        #: per training loop: whether each statement of its body trains
        self._body_trains: Dict[cst.CSTNode, List[bool]] = {}
        #: whether the file registers a hook that captures activations (asked once)
        self._capturing: Optional[bool] = None

    def record(self, call: cst.Call) -> None:
        """Called from ``visit_Call``: the call is judged after the walk (:meth:`_judge`), when every
        binding of the file is known, whatever the position of the walk when it was met."""
        if call in self._seen:
            return
        self._seen.add(call)
        self._recorded.append(call)

    def _judge(self, call: cst.Call) -> None:
        """Whether a recorded call runs a model, judged after the walk: a model call (with whether its
        model is local and whether its mode is settled), or a call left to the later questions (a
        parameter's, a method's, a value used as a module)."""
        ctx = self.ctx
        if self._builds_a_module(call):
            return  # `self.norm = norm_layer(dim)` in a module's `__init__`: layers built, no model run
        model = model_of_call(ctx, call)
        if model is None:
            model = module_level_method_model(ctx, call)
        if model is None and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) and \
                enclosing_function(ctx, call) is not None:
            self._method_calls.append(call)  # `model.generate(a, b)` in a function: decided after the walk
            return
        if model is None:
            callee = call.func
            if isinstance(ctx.parent(call), cst.Expr) or keyword_arg(call, "training") is not None:
                return
            if isinstance(callee, cst.Name) and ctx.names.is_param_at(callee):
                self._param_calls.append(call)  # a model only if its callers pass one
            elif isinstance(callee, (cst.Name, cst.Attribute)):
                self._used_calls.append(call)  # a model if it is used as a module: decided after the walk
            return
        self._note(call, model)

    def _builds_a_module(self, call: cst.Call) -> bool:
        """``call`` is in the constructor of a module class: code that builds the model's layers (what it
        calls there is no evaluation, and no method of a model class is evaluation code of its own)."""
        ctx = self.ctx
        function = enclosing_function(ctx, call)
        if function is None or function.name.value != "__init__":
            return False
        cls = ctx.parent(ctx.parent(function) or function)
        return isinstance(cls, cst.ClassDef) and module_class(ctx, cls)

    def _note(self, call: cst.Call, model: cst.BaseExpression) -> None:
        """A model call: kept, with whether its model is a local of the function around it (or a
        parameter) and whether its mode is settled (the model behaves alike in both modes, was loaded
        whole, or was built in eval mode and never switched back)."""
        ctx = self.ctx
        if isinstance(call.func, cst.Attribute) and call.func.attr.value != "forward" and builds_state_only(ctx, call):
            return  # `net.init_hidden(batch_size)`: a method of the model that runs no layer, only makes tensors
        found = instance_class(ctx, model)
        if found is not None and records_nothing(*found):
            return  # a model of plain tensors with hand-written gradients: its forward pass builds no graph
        self._model_calls.append((call, model))
        if isinstance(model, cst.Name):
            binding = ctx.names.binding_at(model, model.value)
            scope = ctx.names.scope_at(model)
            if binding is not None and binding.assigned and scope.kind == "function":
                if scope.bindings.get(model.value) is binding:
                    self.local_model.add(call)
        self._settle_mode(call, model)

    def _settle_mode(self, call: cst.Call, model: cst.BaseExpression) -> None:
        """Whether the mode ``model`` runs in at ``call`` is settled: it behaves alike in both modes, was
        loaded whole, or was built in eval mode and never switched back (``mode_settled``)."""
        ctx = self.ctx
        if isinstance(model, cst.Name):
            values = ctx.names.values_before(model)
            if values and (_mode_free(ctx, model) or any(
                isinstance(v, cst.Call) and _deserialised(ctx, v) for v in values
            )):
                self.mode_settled.add(call)
        elif _mode_free(ctx, model):
            self.mode_settled.add(call)  # `self.net = nn.Sequential(nn.Linear(...), nn.ReLU())`
        if any(_built_in_eval_mode(v) for v in ctx.names.values_before(model)) and not _switched_to_train(ctx, model):
            self.mode_settled.add(call)  # `model = build().eval()`, `self.net = net.to(device).eval()`
        elif isinstance(model, cst.Name) and self._switched_by_constructor(model) and not _switched_to_train(ctx, model):
            self.mode_settled.add(call)  # `Translator(model=...)` whose `__init__` calls `self.model.eval()`

    def _switched_by_constructor(self, model: cst.Name) -> bool:
        """``model`` holds an instance of a project class whose ``__init__`` puts what it runs in eval mode
        itself: ``self.eval()``, or ``self.<attr>.eval()`` of the module it is handed
        (``self.model = model; self.model.eval()``), every module it builds switched too."""
        ctx = self.ctx
        found = instance_class(ctx, model) if ctx.names.values_before(model) else None
        init = find_method(found[0], found[1], "__init__") if found is not None else None
        if init is None:
            return False
        ictx, function = init
        me = effects.first_param(function)
        switched = {ictx.code(t) for t in (eval_mode_target(c) for c in ictx.calls_in(function)) if t is not None}
        if me in switched:
            return True
        built = {f"{me}.{t.attr.value}" for a in ictx.contents(function).assigns if isinstance(a, cst.Assign)
                 and is_module_value(ictx, a.value) for t in (x.target for x in a.targets)
                 if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me}
        return bool(switched) and all(code.startswith(f"{me}.") for code in switched) and built <= switched

    def sites(self) -> List[EvalSite]:
        if self._sites is None:
            self._sites = self._compute()
        return self._sites

    # -- computation (after the walk) ---------------------------------------------------------------
    def _promote_params(self) -> None:
        """Calls of a parameter that every caller in the file passes a model for (``evaluate(cnn, ...)``
        with ``cnn = CNN()``) are model calls too."""
        ctx = self.ctx
        for call, model in self._model_calls:
            if call not in self.mode_settled and isinstance(model, cst.Name):
                args = arguments_for_param(ctx, model)
                if args and all(isinstance(a, (cst.Name, cst.Attribute)) and _mode_free(ctx, a) for a in args):
                    self.mode_settled.add(call)  # every caller passes a model without mode-dependent layers
                elif self._given_in_eval_mode(model):
                    self.mode_settled.add(call)  # every caller passes a model built in eval mode
        for call in self._method_calls:
            receiver = call.func.value  # type: ignore[attr-defined]
            if self._runs_itself(call, receiver):
                self._model_calls.append((call, receiver))  # `self.forward(s)` in `get_action`
                continue
            model = module_level_method_model(ctx, call)
            if model is None and isinstance(receiver, cst.Name) and ctx.names.scope_at(call).self_name == receiver.value:
                # `self.G(z)` in a trainer's method: what `self.G` holds is known only after the walk
                # (set in `__init__`, maybe moved under an `if`); a model by construction is run here
                model = model_of_call(ctx, call)
                if model is not None:
                    self._model_calls.append((call, model))
                    if _mode_free(ctx, model) or (any(_built_in_eval_mode(v) for v in built_values(ctx, model))
                                                 and not _switched_to_train(ctx, model)):
                        self.mode_settled.add(call)
                continue
            if model is None:
                model = model_of_call(ctx, call)  # `net.decoder(z)`: `net` used as a module (known now)
            if model is not None:
                self._note(call, model)
        self._method_calls = []
        for call in self._used_calls:
            model = model_of_call(ctx, call)  # `enc(img)` with `enc.eval()` elsewhere in its scope
            if model is not None:
                self._note(call, model)
        self._used_calls = []
        for call in self._param_calls:
            callee = call.func
            assert isinstance(callee, cst.Name)
            if self._runs_itself(call, callee):
                self._model_calls.append((call, callee))  # `self(s)` in `get_action`
                continue
            args = param_is_model(ctx, callee)
            if args is None:
                if holds_module(ctx, callee) or scores_a_batch(ctx, call):  # `clf.eval()`, callers passing
                    # modules, or a prediction over a batch
                    self._model_calls.append((call, callee))
                    self.local_model.add(call)
                continue
            self._model_calls.append((call, callee))
            self.local_model.add(call)
            if all(isinstance(a, (cst.Name, cst.Attribute)) and _mode_free(ctx, a) for a in args):
                self.mode_settled.add(call)
        self._param_calls = []
        self._model_calls.sort(key=lambda found: position(ctx, found[0]))  # source order, however decided

    @property
    def model_calls(self) -> List[Tuple[cst.Call, cst.BaseExpression]]:
        """``(call, model)`` for every call that runs a model, in source order: complete once the walk is
        done (the calls decided only then added, those of plain objects and of classes removed)."""
        if self.ctx.walked and not self._settled:
            self._settle()
        return self._model_calls

    def _settle(self) -> None:
        ctx = self.ctx
        self._settled = True
        for call in self._recorded:
            self._judge(call)
        self._recorded = []
        self._promote_params()
        # built from a plain Python class after all (judged after the walk, when every call of the file
        # is known)
        self._model_calls = [(c, m) for c, m in self._model_calls if not not_a_module(ctx, m)]
        # a class object passed as a value (`build(Discriminator, dim)`): calling it constructs a model
        self._model_calls = [(c, m) for c, m in self._model_calls if not passed_classes(ctx, m)]

    def _compute(self) -> List[EvalSite]:
        ctx = self.ctx
        if not self._settled:
            self._settle()
        by_function: Dict[Optional[cst.FunctionDef], List[Tuple[cst.Call, cst.BaseExpression]]] = {}
        for call, model in self._model_calls:
            by_function.setdefault(enclosing_function(ctx, call), []).append((call, model))
        sites: List[EvalSite] = []
        for function, calls in by_function.items():
            if function is not None and self._excluded(function):
                if self._inference_method(function, calls):
                    sites.append(EvalSite("function", function, function, calls, own_method=True))
                continue
            if any(self._forward_trains(model) for _c, model in calls):
                continue  # a model whose forward pass is a training step (MAML's `Meta.forward` steps its optimizer)
            if function is not None:
                verdict = self._function_verdict(function, calls)
                if verdict is not None:
                    # an `.eval()` call of its own made it evaluation code; what it does may say so too (it
                    # trains nothing and its outputs leave the graph), then the models it does not switch
                    # are run in the wrong mode (`self.D.eval()`, then samples from `self.G`)
                    by_call = verdict and not self._graph_free(function, calls)
                    sites.append(EvalSite("function", function, function, calls, by_eval_call=by_call))
                    continue
                decoding = self._decodes(function, calls)
                if decoding is not None:
                    sites.append(EvalSite("function", function, function, calls, decoding=decoding[0],
                                          anchor=decoding[1]))
                    continue
            before = len(sites)
            loops: Dict[cst.CSTNode, EvalSite] = {}
            hands_back: Optional[bool] = None
            for call, model in calls:
                loop = self._eval_loop(call, function, model)
                if loop is not None and function is not None:
                    if hands_back is None:
                        hands_back = self._hands_back_graph(function, calls)
                    if hands_back:
                        loop = None
                if loop is None:
                    statement = self._prediction_statement(call, model, function)
                    if statement is not None:
                        sites.append(EvalSite("statement", statement, None, [(call, model)]))
                    continue
                site = loops.get(loop)
                if site is None:
                    site = loops[loop] = EvalSite("loop", loop, function)
                    sites.append(site)
                site.calls.append((call, model))
            if function is not None and len(sites) == before and self._outputs_only_off_graph(function, calls):
                sites.append(EvalSite("function", function, function, calls))
            elif function is not None and len(sites) == before and self._runs_trained_model_off_graph(function, calls):
                sites.append(EvalSite("function", function, function, calls))
        sites.extend(self._forward_through_helpers(by_function, sites))
        own = {id(s.function) for s in sites if s.own_method}
        if own:
            # `policy.get_action(s)` where `get_action` is itself such a site: the method is where autograd
            # is turned off (the mode it runs in is still the caller's to set)
            for s in sites:
                if not s.own_method and all(self._calls_own_method(c, own) for c, _m in s.calls):
                    s.through_own_method = True
        return sites

    def _calls_own_method(self, call: cst.Call, own: Set[int]) -> bool:
        if not isinstance(call.func, cst.Attribute):
            return False
        owner = instance_class(self.ctx, call.func.value)
        method = find_method(owner[0], owner[1], call.func.attr.value) if owner is not None else None
        return method is not None and method[0] is self.ctx and id(method[1]) in own

    def _forward_trains(self, model: cst.BaseExpression) -> bool:
        """The model's class is a project class whose ``forward`` trains (runs a backward pass or steps an
        optimizer, itself or in a helper): calling it is a training step, whatever its output becomes."""
        found = instance_class(self.ctx, model) if isinstance(model, (cst.Name, cst.Attribute)) else None
        if found is None:
            return False
        known = self._trains_in_forward
        if found[1] not in known:
            method = find_method(found[0], found[1], "forward")
            known[found[1]] = method is not None and trains(method[0], method[1], depth=1)
        return known[found[1]]

    def _outputs_only_off_graph(self, function: cst.FunctionDef, calls) -> bool:
        """Evaluation by behaviour, whatever the function is called: it switches the model it runs to eval
        mode (``model.eval()``) or runs every model call with gradients off, here or in every caller (an
        inference pass), trains nothing (no backward pass, optimizer step or training call within
        reach), needs no gradients, and what its model calls produce reaches only graph-free sinks (picks,
        ``.item()``, comparisons, printing): no output's graph is returned, yielded, stored on ``self`` or in
        a container it was given, or handed to a callable whose code is not in view."""
        ctx = self.ctx
        switched = eval_receivers(ctx, function, depth=0)
        if not any(covers(switched, ctx.code(model)) for _c, model in calls if ANY not in switched) and not (
            calls and all(runs_without_grad(ctx, c) for c, _m in calls)
        ) and not any(
            isinstance(model, cst.Name) and any(_switched_in_chain(v) for v in ctx.names.values_at(model))
            for _c, model in calls
        ) and not (calls and all(self._given_in_eval_mode(model) for _c, model in calls)):
            return False  # (`model = Net().eval()`, `Net().eval().to(device)` switch the model they build)
        if self._acts_for_training(function, calls):
            return False
        if not any(covers(switched, ctx.code(model)) for _c, model in calls if ANY not in switched) \
                and self._only_fresh_models(function, calls):
            return False  # (a function that switches its model to eval mode itself says it evaluates)
        return self._graph_free(function, calls)

    def _only_fresh_models(self, function: cst.FunctionDef, calls) -> bool:
        """Every call of ``function`` in the file hands it, for each model it runs, a model built on the spot by
        the caller (``model = NMT(...)`` in the main block, then ``sanity_check(model)``) and neither trained nor
        given weights before the call, and walks no data: a check of a new model's shapes or plumbing, not an
        evaluation."""
        ctx = self.ctx
        sites = [s for s in call_sites(ctx, function) if not ctx.is_inside(s, function)]
        if not sites or not calls or any(self._loop_within(c, function) is not None for c, _m in calls):
            return False  # (a function that runs the model over data in a loop scores it, trained or not)
        for site_call in sites:
            for _call, model in calls:
                passed = self._model_at_call(function, model, site_call)
                if not isinstance(passed, cst.Name) or ctx.names.is_param_at(passed):
                    return False
                values = ctx.names.values_before(passed)
                if not values or any(v is None for v in values):
                    return False
                if not all(self._built_anew(v) for v in values):
                    return False
                if self._trained_at(site_call, passed) or self._may_train_or_load(site_call, passed.value):
                    return False
        return True

    def _built_anew(self, value: cst.BaseExpression) -> bool:
        """``value`` builds a new model by its class, without trained weights (not pretrained, not read back,
        no weights loaded by the class's own code) and not in eval mode (the code would mean to evaluate it)."""
        ctx = self.ctx
        core = strip_moves_expr(value)
        return isinstance(core, cst.Call) and is_model_value(ctx, core) and not _pretrained(ctx, core) \
            and not _deserialised(ctx, core) and not _built_in_eval_mode(value) and self._constructs(core)

    def _constructs(self, call: cst.Call) -> bool:
        """``call`` builds a module by its class (a project class, a ``torch.nn`` layer or container), not
        through a factory whose code may load weights."""
        ctx = self.ctx
        found = definition_of(ctx, call.func)
        if found is not None:
            # a project class whose code reads weights itself (`self.load_state_dict(torch.load(path))`,
            # a pretrained backbone) builds a trained model
            return isinstance(found[1], cst.ClassDef) and not any(
                method_name(c) in ("load_state_dict", "load_url", "from_pretrained")
                or found[0].names.matches(c.func, _LOADERS) or _pretrained(found[0], c)
                for c in found[0].calls_in(found[1]))
        return any(q.startswith("torch.nn.") for q in ctx.names.qualified_names_at(call.func))

    def _may_train_or_load(self, site_call: cst.Call, name: str) -> bool:
        """The code around ``site_call`` (its function, or the module) runs a backward pass, builds an optimizer,
        or gives the model ``name`` weights (``load_state_dict``, ``torch.load``): it may train or load it."""
        ctx = self.ctx
        scope = enclosing_function(ctx, site_call) or ctx.module
        for call in ctx.calls_in(scope):
            if is_backward_like(ctx, call) or object_kind(ctx, call) == "optimizer" \
                    or ctx.names.matches(call.func, _LOADERS) or method_name(call) in ("load_state_dict", "step"):
                return True
        return False

    def _acts_for_training(self, function: cst.FunctionDef, calls) -> bool:
        """``act(self, s)`` running ``self.net`` under ``no_grad`` in a class whose other method trains that same
        ``self.net`` (a loss of it, a backward pass, an optimizer step): an agent acting between its updates,
        in the mode its training runs in (the noise of a noisy network, its dropout); not an evaluation."""
        ctx = self.ctx
        cls = ctx.parent(ctx.parent(function) or function)
        me = effects.first_param(function)
        if not isinstance(cls, cst.ClassDef) or me is None or not calls:
            return False
        if any(isinstance(n, LOOP_TYPES) for n in iter_nodes(function.body)) or eval_receivers(ctx, function, depth=0):
            return False  # it walks data (`for x, _ in loader`), or switches the mode itself: it evaluates
        attrs = set()
        for _call, model in calls:
            if not (isinstance(model, cst.Attribute) and isinstance(model.value, cst.Name) and model.value.value == me):
                return False
            attrs.add(model.attr.value)
        for other in class_body(cls):
            if not isinstance(other, cst.FunctionDef) or other is function or not trains(ctx, other, depth=2):
                continue
            own = effects.first_param(other)
            ran = {c.func.attr.value for c in ctx.calls_in(other) if isinstance(c.func, cst.Attribute)
                   and isinstance(c.func.value, cst.Name) and c.func.value.value == own}
            if attrs <= ran:
                return True
        return False

    def _given_in_eval_mode(self, model: cst.BaseExpression) -> bool:
        """``model`` is a parameter every call of whose function in the file passes a model built in eval
        mode (``GPT2LMHeadModel.from_pretrained("gpt2")``, ``Net().eval()``) and not switched back."""
        ctx = self.ctx
        if not isinstance(model, cst.Name) or not ctx.names.is_param_at(model):
            return False
        args = arguments_for_param(ctx, model)
        return bool(args) and all(built_in_eval_mode(ctx, a) for a in args)

    def _graph_free(self, function: cst.FunctionDef, calls) -> bool:
        """``function`` trains nothing within reach, needs no gradients, and what its model calls produce
        reaches only graph-free sinks (see :meth:`_outputs_only_off_graph`)."""
        ctx = self.ctx
        if trains(ctx, function, depth=2) or needs_grad(ctx, function):
            return False
        model_calls = {c for c, _ in calls} | self._submodule_calls(function, calls)
        if all(under_no_grad(ctx, c) for c in model_calls):
            return True  # every model call runs under `no_grad` here: no output holds a graph to hand over
        flow = decoding_flow(ctx, function, model_calls)
        if hands_graph_away(ctx, function, flow, model_calls):
            return False
        return not returns_graph(ctx, function, flow, model_calls) or engine_process_function(ctx, function)

    def _forward_through_helpers(self, by_function, sites: List[EvalSite]) -> List[EvalSite]:
        """Evaluation by behaviour at each call of a helper that runs a model and hands its output (or a
        loss computed from it) back: in a caller that runs with autograd on, trains nothing, needs no
        gradients, and sends what the helper returned only to graph-free sinks (``float()``, ``.item()``,
        comparisons, printing, a discarded value), that call is a forward pass of an evaluation.  The same
        helper called from a training step (whose caller backpropagates the result) is training there:
        each call site is judged on its own."""
        ctx = self.ctx
        taken = {s.function for s in sites if s.function is not None}
        found: Dict[cst.FunctionDef, EvalSite] = {}
        found_loops: Dict[cst.CSTNode, EvalSite] = {}
        generated: List[EvalSite] = []
        for helper, calls in by_function.items():
            if helper is None or helper in taken or self._excluded(helper):
                continue
            model_calls = {c for c, _ in calls}
            if all(under_no_grad(ctx, c) for c in model_calls):
                continue  # the helper turns gradients off itself: its result has no graph
            if not returns_graph(ctx, helper, decoding_flow(ctx, helper, model_calls), model_calls):
                continue
            if trains(ctx, helper) or needs_grad(ctx, helper):
                continue
            for site_call in call_sites(ctx, helper):
                caller = enclosing_function(ctx, site_call)
                loop: Optional[cst.For] = None
                if _generator(helper):
                    # what a generator yields is followed from this call alone: a caller that also trains
                    # (its own forward pass feeds its backward pass) evaluates with what its loop iterates
                    if caller is helper or caller in taken or (caller is not None and self._excluded(caller)):
                        continue
                    if runs_without_grad(ctx, site_call) or GRAD_READS.search(ctx.bare_code(caller or ctx.module)):
                        continue
                    seed = _iterated_outputs(ctx, helper, site_call, model_calls)
                    if seed is None:
                        continue
                    loop = _iterating_loop(ctx, site_call)
                    if loop is None:
                        continue
                    forward: Set[cst.Call] = set()
                    flow = decoding_flow(ctx, loop, forward, seed)
                    if hands_graph_away(ctx, loop, flow, forward) or reaches_backward(ctx, loop, flow, forward) or (
                        caller is not None and returns_graph(ctx, caller, decoding_flow(ctx, caller, forward, seed),
                                                             forward)
                    ):
                        continue
                    model = self._model_at_call(helper, calls[0][1], site_call)
                    if model is None:
                        self.mode_settled.add(site_call)
                        model = calls[0][1]
                    generated.append(EvalSite("loop", loop, caller, [(site_call, model)], helper=helper))
                    continue
                if caller is None:
                    loop_site = self._module_loop_through_helper(helper, calls, site_call)
                    if loop_site is not None:
                        site = found_loops.get(loop_site.node)
                        if site is None:
                            found_loops[loop_site.node] = loop_site
                            generated.append(loop_site)
                        else:
                            site.calls.extend(loop_site.calls)
                        continue
                    # a prediction statement of the script that runs the model through the helper
                    # (`logits = predict(net, image)` after training or loading it)
                    model = self._model_at_call(helper, calls[0][1], site_call)
                    statement = self._prediction_statement(site_call, model, None) if model is not None else None
                    if statement is not None and not under_no_grad(ctx, site_call) \
                            and self._script_reads_off_graph(site_call):
                        self._settle_mode(site_call, model)  # type: ignore[arg-type]
                        generated.append(EvalSite("statement", statement, None, [(site_call, model)], helper=helper))
                    continue
                if caller is helper or caller in taken or self._excluded(caller):
                    continue
                if runs_without_grad(ctx, site_call):
                    continue
                if trains(ctx, caller) or needs_grad(ctx, caller):
                    continue  # a training function: what a loss helper returns feeds its step
                forward = {site_call} | {c for c, _ in by_function.get(caller, [])}
                flow = decoding_flow(ctx, caller, forward)
                if returns_graph(ctx, caller, flow, forward) or hands_graph_away(ctx, caller, flow, forward) or \
                        reaches_backward(ctx, caller, flow, forward):
                    continue  # the output (or its loss) goes where a gradient may be taken
                model = self._model_at_call(helper, calls[0][1], site_call)
                if model is None:
                    self.mode_settled.add(site_call)  # no name for the model at the call: no eval-mode check
                    model = calls[0][1]
                else:
                    self._settle_mode(site_call, model)  # (the model the caller names, built in eval mode there)
                site = found.get(caller)
                if site is None:
                    site = found[caller] = EvalSite("function", caller, caller, helper=helper)
                site.calls.append((site_call, model))
        return list(found.values()) + generated

    def _script_reads_off_graph(self, site_call: cst.Call) -> bool:
        """What the module-level call ``site_call`` returns, followed through the script, reaches no backward
        pass, no container or attribute it is kept in, no callable whose code is not in view and no function
        of the file that trains (``update(opt, scores, y)``)."""
        ctx = self.ctx
        forward = {site_call}
        flow = decoding_flow(ctx, ctx.module, forward)
        if _graph_leaves_by_call(ctx, ctx.module, flow, forward):
            return False
        for call in ctx.calls_in(ctx.module):
            if call is site_call or not any(_carries(ctx, a.value, flow.graph, forward) for a in call.args):
                continue
            target = ctx.function_for_call(call)
            if target is not None and (trains(ctx, target, depth=2) or needs_grad(ctx, target)):
                return False  # handed to a function of the file that differentiates or steps
        for a in ctx.contents(ctx.module).assigns:
            value = getattr(a, "value", None)
            if value is None or ctx.is_inside(site_call, a) or not _carries(ctx, value, flow.graph, forward):
                continue
            if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)) or any(
                    isinstance(n, (cst.Subscript, cst.Attribute)) for t in assignment_targets(a) for n in iter_nodes(t)):
                return False  # `kept = [scores]`, `state["out"] = scores`: a container or an attribute
        return True

    def _model_at_call(self, helper: cst.FunctionDef, model: cst.BaseExpression,
                       site_call: cst.Call) -> Optional[cst.BaseExpression]:
        """The model ``helper`` runs, as the call ``site_call`` names it: the argument passed for a model
        parameter, ``self.<attr>`` for a method called on ``self``, a module global both see alike."""
        ctx = self.ctx
        code = ctx.code(model)
        if code.startswith("self.") and isinstance(site_call.func, cst.Attribute) and (
            dotted_name(site_call.func.value) == "self" or site_call in instance_calls(ctx, helper)
        ):
            given = self._handed_to_constructor(model, site_call)
            if given is not None:
                return given  # `Predictor(net).predict(x)` of `self.model = model`: the caller's `net`
            return model  # (through an instance the file builds: `agent.act(s)`, the agent's own `self.q`)
        if isinstance(model, cst.Name):
            params = list(helper.params.posonly_params) + list(helper.params.params)
            if isinstance(site_call.func, cst.Attribute) and params and params[0].name.value in ("self", "cls"):
                params = params[1:]
            for i, p in enumerate(params):
                if p.name.value == model.value:
                    a = arg(site_call, i, p.name.value)
                    return a.value if a is not None and dotted_name(a.value) is not None else None
            if _same_global(ctx, helper, site_call, model.value):
                return model
        return None

    def _handed_to_constructor(self, model: cst.BaseExpression, site_call: cst.Call) -> Optional[cst.BaseExpression]:
        """For ``self.<attr>`` run by a method called on an instance built in this file (``Predictor(net)``, or a
        name bound once to such a construction): the name the construction passes for the constructor
        parameter that ``__init__`` keeps as ``self.<attr>`` (``self.model = model``); None otherwise."""
        ctx = self.ctx
        if not (isinstance(model, cst.Attribute) and isinstance(model.value, cst.Name)) \
                or not isinstance(site_call.func, cst.Attribute):
            return None
        owner = site_call.func.value
        built = owner if isinstance(owner, cst.Call) else ctx.names.sole_value(owner) if isinstance(owner, cst.Name) else None
        built = strip_moves_expr(built) if built is not None else None
        found = instance_class(ctx, owner)
        init = find_method(found[0], found[1], "__init__") if found is not None else None
        if not isinstance(built, cst.Call) or init is None or init[0] is not ctx:
            return None
        made = definition_of(ctx, built.func)
        me = effects.first_param(init[1])
        if made is None or made[1] is not found[1]:  # type: ignore[index]
            return None  # built by a factory (`Predictor.load(path)`), not by the class itself
        kept = None
        for a in ctx.contents(init[1]).assigns:
            if isinstance(a, cst.Assign) and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Attribute) \
                    and isinstance(a.targets[0].target.value, cst.Name) and a.targets[0].target.value.value == me \
                    and a.targets[0].target.attr.value == model.attr.value and isinstance(a.value, cst.Name):
                if kept is not None:
                    return None  # set twice
                kept = a.value.value
        bound = bind_arguments(built, init[1], 1) if kept is not None else None
        given = (bound or {}).get(kept) if kept is not None else None
        return given if isinstance(given, (cst.Name, cst.Attribute)) else None

    def _excluded(self, function: cst.FunctionDef) -> bool:
        """Framework hooks, pytest tests and model-class methods hold no evaluation code of their own."""
        ctx = self.ctx
        name = snake(function.name.value)
        if model_method(ctx, function) and not switches_itself_to_eval(ctx, function):
            return True  # (a method that puts its own model in eval mode chose the mode: it evaluates)
        if HOOK_NAME.search(name) and "train" not in name.split("_") and not engine_process_function(ctx, function) \
                and not self._plain_called_function(function):
            return True  # (a function handed to an engine is judged by what it does: its caller is known;
            # a hook of the training phase, `on_train_epoch_end`, runs with autograd on like the training)
        if "test" in name.split("_") and (
            self._test_of_suite(function) or (
                re.search(r"(?m)^\s*assert\b", ctx.bare_code(function)) and not call_sites(ctx, function))
        ):
            return True  # a test (or test helper) of the test suite, not the evaluation of a model (a script
            # that calls its own `test()` after training evaluates, whatever it asserts on the way; so does a
            # `test(model, users)` of `batch_test.py` that the training script calls: no test runner does)
        return False

    def _keeps_on_instance(self, function: cst.FunctionDef) -> bool:
        """Whether ``function``, the class's ``forward``, or a method of the class either calls (two deep)
        assigns an attribute of ``self`` (``self.hidden = h``, ``self.cache[k] = v``): a value of the run
        kept on the object, which later code may differentiate."""
        ctx = self.ctx
        cls = ctx.parent(ctx.parent(function))
        if not isinstance(cls, cst.ClassDef):
            return True
        todo: List[Tuple[FileContext, cst.FunctionDef, int]] = [(ctx, function, 0)]
        forward = find_method(ctx, cls, "forward")
        if forward is not None:
            todo.append((forward[0], forward[1], 1))
        seen: Set[int] = set()
        while todo:
            fctx, f, depth = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            if any(isinstance(t, (cst.Attribute, cst.Subscript)) and _on_self(t)
                   for a in fctx.contents(f).assigns for t in assignment_targets(a)):
                return True
            if depth < 2:
                for c in fctx.calls_in(f):
                    if isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name) \
                            and c.func.value.value == "self":
                        m = find_method(fctx, cls, c.func.attr.value) if fctx is ctx else None
                        if m is not None:
                            todo.append((m[0], m[1], depth + 1))
        return False

    def _runs_itself(self, call: cst.Call, receiver: cst.BaseExpression) -> bool:
        """``self(s)`` or ``self.forward(s)`` in a method of an ``nn.Module`` class other than its forward
        pass: the module runs itself."""
        ctx = self.ctx
        if not (isinstance(receiver, cst.Name) and ctx.names.scope_at(call).self_name == receiver.value):
            return False
        if call.func is not receiver and not (isinstance(call.func, cst.Attribute) and call.func.attr.value in RUN_METHODS):
            return False
        function = enclosing_function(ctx, call)
        cls = ctx.parent(ctx.parent(function)) if function is not None else None
        return function is not None and function.name.value not in RUN_METHODS and isinstance(cls, cst.ClassDef) \
            and module_class(ctx, cls)

    def _inference_method(self, function: cst.FunctionDef, calls) -> bool:
        """A method of a model class, other than its forward pass, that runs the model itself (``self(s)``,
        ``self.forward(s)``, its parts), returns a value, and whose outputs reach only graph-free sinks
        (:meth:`_graph_free`: ``.detach().cpu().numpy()``, ``.item()``, a pick): inference by behaviour
        (``def get_action(self, s): return self.forward(s).detach().numpy()``) that code of the file calls
        with gradients on; not a method the forward pass runs."""
        ctx = self.ctx
        if function.name.value in RUN_METHODS or not calls or not model_method(ctx, function) \
                or HOOK_NAME.search(snake(function.name.value)):
            return False
        if not all(_on_self(model) for _call, model in calls):
            return False
        if not any(isinstance(r.value, cst.BaseExpression) for r in function_returns(function)):
            return False
        sites = call_sites(ctx, function) + instance_calls(ctx, function)
        if any(isinstance(f := enclosing_function(ctx, site), cst.FunctionDef) and f.name.value in RUN_METHODS
               for site in sites):
            return False
        if not any(not under_no_grad(ctx, site) and not runs_without_grad(ctx, site) for site in sites):
            return False  # a model's own API that no code in view runs with gradients on
        if self._keeps_on_instance(function):
            return False  # `self.last_logits = logits` in `forward`: an output kept on the model may be trained on
        # what the class's own methods give counts as an output too (`self.decode(x)` runs the layers)
        cls = ctx.parent(ctx.parent(function))
        own = [(c, calls[0][1]) for c in ctx.calls_in(function)
               if isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name)
               and c.func.value.value == "self" and isinstance(cls, cst.ClassDef)
               and find_method(ctx, cls, c.func.attr.value) is not None and not under_no_grad(ctx, c)]
        return self._graph_free(function, list(calls) + [p for p in own if all(p[0] is not c for c, _m in calls)])

    def _plain_called_function(self, function: cst.FunctionDef) -> bool:
        """A function of a plain script that no framework can run as a hook: not a method, not decorated, no
        class of the file derives from another, and its name is used only to call it (``eval_step(x, y)``
        in the script's own loop; never handed over as a value, ``Engine(eval_step)``)."""
        ctx = self.ctx
        if function.decorators or isinstance(ctx.parent(ctx.parent(function) or function), cst.ClassDef):
            return False
        if any(isinstance(n, cst.ClassDef) and n.bases and not all(
            isinstance(b.value, cst.Attribute) and b.value.attr.value == "Module" for b in n.bases
        ) for n in ctx.module.body):
            return False  # (a framework's classes in the file: its hooks may have any shape)
        sites = [c for c in call_sites(ctx, function) if isinstance(c.func, cst.Name)]
        if not sites:
            return False
        reads = [n for n in ctx.names_in(ctx.module, function.name.value) if n is not function.name]
        return len(reads) == len(sites)  # (a read that is no call hands the function over as a value)

    def _runs_trained_model_off_graph(self, function: cst.FunctionDef, calls) -> bool:
        """Evaluation by behaviour, whatever the function is called and however short it is (one forward
        pass, no loop): what its model calls produce reaches only graph-free sinks (:meth:`_graph_free`: it
        trains nothing, needs no gradients, hands no graph back or away), every model call's output is used
        (not a warm-up or statistics pass), it switches nothing to training mode, no forward hook of the
        file can capture its activations, and every call of it in the file runs a model that was trained
        or given trained weights before that call (``predict(net, x)`` after the training loop, after
        ``net.load_state_dict(...)`` in the main block)."""
        ctx = self.ctx
        if not calls or self._test_of_suite(function):
            return False
        for call, _model in calls:
            if isinstance(ctx.parent(call), cst.Expr):
                return False  # output discarded: calibration or warm-up
        sites = call_sites(ctx, function) + instance_calls(ctx, function)  # (`agent.act(s)` in the script's loop)
        if not sites or any(enclosing_function(ctx, site) is function for site in sites):
            return False
        if self._captures_activations():
            return False  # an activation captured by a hook may feed a loss (style transfer)
        if any(train_mode_call(c) for c in ctx.calls_in(function)):
            return False  # a BatchNorm-statistics refresh, or training going on after it
        roots = {getattr(root_name(model), "value", None) for _c, model in calls}
        if _generator(function) or any(
                isinstance(n, (cst.FunctionDef, cst.Lambda)) and (
                    any(ctx.is_inside(c, n) for c, _m in calls)
                    or any(isinstance(m, cst.Name) and m.value in roots for m in iter_nodes(n)))
                for n in iter_nodes(function.body)):
            return False  # a function it defines runs the model later (a sort key of plain values does not)
        if not self._graph_free(function, calls):
            return False
        models = [model for _c, model in calls]
        for part in self._submodule_calls(function, calls):
            root = part.func
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name):
                models.append(root)  # `decoder.caption(feats)` on a parameter holding a model
        for site_call in sites:
            if not any(self._trained_at(site_call, m) for m in
                       (self._model_at_call(function, model, site_call) for model in models) if m is not None):
                return False
        return True

    def _captures_activations(self) -> bool:
        """The file registers a hook on a module or a tensor (:data:`CAPTURING_CALLS`): what a forward pass
        computes may reach a loss through it, whatever the pass's own outputs do."""
        if self._capturing is None:
            self._capturing = any(method_name(c) in CAPTURING_CALLS for c in self.ctx.calls_in(self.ctx.module))
        return self._capturing

    def _trained_at(self, site_call: cst.Call, model: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether the model ``model`` (as the call site names it) was trained or given trained weights
        before ``site_call``: in an earlier statement of its block or of a block around it (a backward
        pass or an optimizer step that reaches the model, `load_state_dict`, ``torch.load``, a pretrained
        library model, a training function's result), or at module level by a statement before it; a
        part of such a model (``decoder`` passed to ``Model(decoder=decoder)``) counts as trained."""
        ctx = self.ctx
        root = model
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if isinstance(root, cst.Name) and root.value == "self" and isinstance(model, cst.Attribute) \
                and model.value is root:
            return self._trained_in_loop_around(site_call, model.attr.value)
        if not isinstance(root, cst.Name) or root.value in ("self", "cls"):
            return False
        statement = ctx.statement_of(site_call)
        if statement is None:
            return False
        name = root.value
        names = [name, *self._holders(name)]
        caller = enclosing_function(ctx, site_call)
        for n in names:
            if self._stepped_before(statement, n, caller) or self._stepped_in_loop_around(statement, n, caller):
                return True
            if caller is None and (self._trained_before(statement, n) or self._weights_loaded_before(statement, n)):
                return True
        if caller is not None and depth < 2 and isinstance(model, cst.Name) and ctx.names.is_param_at(model) \
                and not ctx.names.values_before(model) and not trains(ctx, caller):
            # `accuracy(net, x, y)` handing its parameter on to `classify(net, x)`: what its own callers pass
            sites = [s for s in call_sites(ctx, caller) if not ctx.is_inside(s, caller)]
            passed = [self._model_at_call(caller, model, s) for s in sites]
            return bool(sites) and all(p is not None and self._trained_at(s, p, depth + 1)
                                       for s, p in zip(sites, passed))
        return False

    def _stepped_in_loop_around(self, statement: cst.CSTNode, name: str, function: Optional[cst.FunctionDef]) -> bool:
        """The innermost loop around ``statement`` (inside ``function``) steps an optimizer and runs the model
        ``name`` in another statement of its body, and never binds the name anew: from the second pass on, ``statement`` runs a trained model
        (``a = act(net, s)`` then a step of ``net``'s optimizer, an agent acting between its updates)."""
        ctx = self.ctx
        loop = next((a for a in ctx.ancestors(statement) if isinstance(a, (cst.For, cst.While, cst.FunctionDef,
                                                                             cst.Lambda, cst.ClassDef))), None)
        if not isinstance(loop, (cst.For, cst.While)) or not isinstance(loop.body, cst.IndentedBlock):
            return False
        body = list(loop.body.body)
        if any(self._binds_anew(stmt, name) for stmt in body):
            return False
        # a step in the loop, and the model run by a statement of it besides this one (`loss = net(x)...`)
        return any(self._steps_model(stmt) for stmt in body) and any(
            self._reaches_name(stmt, name) for stmt in body if stmt is not statement
            and not ctx.is_inside(statement, stmt))

    def _trained_in_loop_around(self, site_call: cst.Call, attr: str) -> bool:
        """``self.<attr>`` is stepped in the loop around ``site_call`` (in the loop's code or the methods it
        calls, two deep) by an optimizer the instance builds on ``self.<attr>``'s parameters: from the
        second pass of the loop on, the call runs a model that was trained (an agent acting between its
        updates)."""
        ctx = self.ctx
        loop = next((a for a in ctx.ancestors(site_call) if isinstance(a, (cst.For, cst.While, cst.FunctionDef,
                                                                            cst.Lambda, cst.ClassDef))), None)
        if not isinstance(loop, (cst.For, cst.While)):
            return False
        found_calls = [c for c, _via in calls_through_helpers(ctx, loop.body, 2)]
        receiver = site_call.func.value if isinstance(site_call.func, cst.Attribute) else None
        if isinstance(receiver, cst.Name) and receiver.value != "self":
            # `agent.learn(batch)` beside `agent.act(s)`: the methods the loop runs on the same instance
            for c in ctx.calls_in(loop.body):
                if isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name) \
                        and c.func.value.value == receiver.value:
                    owner = instance_class(ctx, c.func.value)
                    method = find_method(owner[0], owner[1], c.func.attr.value) if owner is not None else None
                    if method is not None and method[0] is ctx:
                        found_calls.extend(m for m, _via in calls_through_helpers(ctx, method[1], 1))
        for c in found_calls:
            opt = optimizer_of_step(ctx, c)
            found = effects.self_attr(ctx, opt) if isinstance(opt, cst.Attribute) else None
            if found is None:
                continue
            try:
                values = effects.self_values(ctx, *found)
            except effects.Unknown:
                continue
            if any(isinstance(n, cst.Attribute) and n.attr.value == attr and isinstance(n.value, cst.Name)
                   and n.value.value == "self" for v in values for n in iter_nodes(v)):
                return True
        return False

    def _holders(self, name: str) -> List[str]:
        """Module-level names bound to a model built with ``name`` as an argument (``model =
        Model(encoder, decoder)``): ``name`` is a part of that model."""
        ctx = self.ctx
        out: List[str] = []
        for stmt in ctx.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                continue
            small = stmt.body[0]
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            target = small.targets[0].target
            value = strip_moves_expr(small.value)
            if isinstance(target, cst.Name) and target.value != name and isinstance(value, cst.Call) and any(
                isinstance(a.value, cst.Name) and a.value.value == name for a in value.args
            ):
                out.append(target.value)
        return out

    def _stepped_before(self, statement: cst.CSTNode, name: str, function: Optional[cst.FunctionDef],
                        steps: bool = True) -> bool:
        """A statement before ``statement`` in its block or a block around it (up to ``function`` or the
        module) trains the model ``name`` (a backward pass or an optimizer step in it or a helper it calls,
        whose code mentions the name) or gives it trained weights, with no new model bound to the name in
        between."""
        ctx = self.ctx
        for stmt, _first in self._earlier_statements(statement, function):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if self._binds_anew(stmt, name):
                value = getattr(stmt.body[0], "value", None)  # type: ignore[attr-defined]
                return isinstance(value, cst.BaseExpression) and self._trained_value(value)
            if self._loads_into(stmt, name) or self._fits_model(stmt, name):
                return not self._round_trip(list(ctx.module.body))
            if steps and self._steps_model(stmt) and self._reaches_name(stmt, name):
                return True
        return False

    def _earlier_statements(self, statement: cst.CSTNode,
                            function: Optional[cst.FunctionDef]) -> Iterator[Tuple[cst.CSTNode, bool]]:
        """The statements that run before ``statement``: those before it in its block, nearest first, then
        those before the compound statement holding it in the block around that, up to ``function`` (or
        the module), never across another function, class or lambda; each with whether it is the first
        one yielded of its block."""
        ctx = self.ctx
        cur: Optional[cst.CSTNode] = statement
        while cur is not None and cur is not function and cur is not ctx.module:
            block = ctx.block_of(cur)
            if block is not None:
                at = next((i for i, s in enumerate(block) if s is cur), None)
                if at is not None:
                    for i, stmt in enumerate(reversed(block[:at])):
                        yield stmt, i == 0
            cur = ctx.parent(cur)
            if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and cur is not function:
                return

    def _loads_into(self, stmt: cst.CSTNode, name: str, outside_functions: bool = False) -> bool:
        """``stmt`` calls ``<name>.load_state_dict(...)`` (or of a part of it) itself (``outside_functions``:
        not in a function it defines)."""
        for call in self.ctx.calls_in(stmt):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and not (
                    outside_functions and enclosing_function(self.ctx, call) is not None):
                root = func.value
                while isinstance(root, (cst.Attribute, cst.Subscript)):
                    root = root.value
                if isinstance(root, cst.Name) and root.value == name:
                    return True
        return False

    def _reaches_name(self, stmt: cst.CSTNode, name: str) -> bool:
        """``stmt`` mentions ``name``, or a same-module function it calls (two deep) does."""
        ctx = self.ctx
        if ctx.names_in(stmt, name):
            return True
        for call, _via in calls_through_helpers(ctx, stmt, 2):
            target = ctx.function_for_call(call)
            if target is not None and ctx.names_in(target, name):
                return True
        return False

    def _trained_value(self, value: cst.BaseExpression) -> bool:
        """A value that holds trained weights: ``torch.load(...)``, a pretrained library model, the result of
        a same-module function that trains, or a conditional expression every branch of which is one
        (``torch.load(p) if exists(p) else train_model()``)."""
        ctx = self.ctx
        core = strip_moves_expr(value)
        if isinstance(core, cst.IfExp):
            return self._trained_value(core.body) and self._trained_value(core.orelse)
        if isinstance(core, cst.Subscript):
            # `ckpt["model"]` with `ckpt = torch.load(path)`: a whole module pickled in a checkpoint
            base = core.value
            held = ctx.names.sole_value(base) if isinstance(base, cst.Name) else base
            return isinstance(held, cst.Call) and _deserialised(ctx, held)
        if not isinstance(core, cst.Call):
            return False
        if _deserialised(ctx, core) or _pretrained(ctx, core):
            return True
        target = ctx.function_for_call(core)
        if target is None:
            return False
        if trains(ctx, target, depth=2):
            return True
        # `get_model(path)` whose every return hands back a model it loaded weights into (`model.load_state_dict(
        # torch.load(path))`, then `return model`), or a model read back whole (`return torch.load(path)`)
        returns = function_returns(target)
        return bool(returns) and all(r.value is not None and self._loaded_return(target, r.value) for r in returns)

    def _loaded_return(self, function: cst.FunctionDef, value: cst.BaseExpression) -> bool:
        ctx = self.ctx
        core = strip_moves_expr(value)
        if isinstance(core, cst.Call):
            return _deserialised(ctx, core) or _pretrained(ctx, core)
        return isinstance(core, cst.Name) and self._loads_into(function, core.value)

    def _module_loop_through_helper(self, helper: cst.FunctionDef, calls, site_call: cst.Call) -> Optional[EvalSite]:
        """A module-level loop (a notebook's dev-set pass) that calls ``helper`` (which runs a model and
        returns its output or a loss of it) and reads what it returns only off the graph: the loop trains
        nothing and needs no gradients, no value carrying the graph leaves it (handed away, kept in a
        container or an attribute, reaching a backward pass later), and the model was trained before it."""
        ctx = self.ctx
        loop = self._loop_within(site_call, None)
        if not isinstance(loop, LOOP_TYPES) or runs_without_grad(ctx, site_call):
            return None
        if trains(ctx, loop, depth=2) or needs_grad(ctx, loop) or self._captures_activations():
            return None
        if any(train_mode_call(c) for c in ctx.calls_in(loop)):
            return None
        forward: Set[cst.Call] = {site_call} | {c for c, _m in self._model_calls if ctx.is_inside(c, loop)}
        flow = decoding_flow(ctx, loop, forward)
        if _graph_leaves_by_call(ctx, loop, flow, forward):
            return None
        kept: Set[str] = set()
        for a in ctx.contents(loop).assigns:
            value = getattr(a, "value", None)
            if value is None or not _carries(ctx, value, flow.graph, forward):
                continue
            for t in assignment_targets(a):
                if not isinstance(t, (cst.Name, cst.Tuple, cst.List)):
                    return None  # `outs[i] = loss`, `self.last = loss`
                kept.update(n.value for n in iter_nodes(t) if isinstance(n, cst.Name))
        if kept and self._reaches_later_backward(loop, kept):
            return None
        for outer in ctx.ancestors(loop):
            if isinstance(outer, LOOP_TYPES) and kept and self._reaches_backward_in_loop(loop, kept, outer):
                return None
        model = self._model_at_call(helper, calls[0][1], site_call)
        if model is None or not self._trained_at(site_call, model):
            return None
        return EvalSite("loop", loop, None, [(site_call, model)], helper=helper)

    def _function_verdict(self, function: cst.FunctionDef, calls) -> Optional[bool]:
        """None: not an evaluation function; else whether only its `.eval()` call says it is one."""
        ctx = self.ctx
        name = snake(function.name.value)
        named = bool(EVAL_NAME.search(name))
        used = any(
            EVAL_DATA.search(ctx.code(a.value).lower())
            for site in call_sites(ctx, function)
            for a in site.args
        )
        if not (named or used):
            return None
        if trains(ctx, function) or needs_grad(ctx, function):
            return None
        if calls and all(self._fresh_model(function, model) for _call, model in calls):
            return None  # `model = TwoLayer(50, 42, 10)` then `model(torch.zeros(64, 50)).size()`: a shape check
            # of a model built on the spot, untrained: no trained model is evaluated
        in_loop = any(self._loop_within(call, function) is not None or _runs_on_drawn_batch(ctx, call)
                      for call, _ in calls)
        if in_loop or computes_metrics(ctx, function):
            return False
        if named and any(under_no_grad(ctx, call) for call, _ in calls):
            return False  # `def evaluate(model, x, y): with torch.no_grad(): return loss(model(x), y).item()`
        if any(eval_mode_target(c) is not None for c in ctx.calls_in(function)):
            return True
        return None

    def _fresh_model(self, function: cst.FunctionDef, model: cst.BaseExpression) -> bool:
        """``model`` is a local of ``function`` that every assignment builds there anew, without trained
        weights (not ``pretrained=True``, not ``from_pretrained``), and nothing in the function loads weights
        (``load_state_dict``, ``torch.load``) or hands it to other code before it runs."""
        ctx = self.ctx
        if not isinstance(model, cst.Name) or ctx.names.is_param_at(model):
            return False
        values = [v for v in ctx.names.values_before(model)]
        if not values or any(v is None or ctx.enclosing(v, cst.FunctionDef) is not function for v in values):
            return False
        if not all(self._built_anew(v) for v in values):
            return False
        for call in ctx.calls_in(function):
            if method_name(call) in ("load_state_dict", "load") or ctx.names.matches(call.func, _LOADERS):
                return False
            if any(isinstance(a.value, cst.Name) and a.value.value == model.value for a in call.args):
                return False  # handed to code that may load or train it
        return True

    def _decodes(self, function: cst.FunctionDef, calls) -> Optional[Tuple[str, cst.Call]]:
        """A decoding or sampling function, whatever its name: in a loop it runs a model on what it derives
        from the model's own output, and picks from an output (``argmax``, ``topk``, ``multinomial``, a
        distribution's ``sample()``); it reaches no loss, backward pass, optimizer step or training call,
        needs no gradients, and hands no output's graph to its caller.  The evidence: see
        :class:`EvalSite`'s ``decoding``."""
        ctx = self.ctx
        if not any(_pick_name(ctx, c) is not None for c in ctx.calls_in(function)):
            return None  # nothing is picked from an output
        if not any(isinstance(n, LOOP_TYPES) for n in iter_nodes(function.body)):
            return None  # nothing runs repeatedly
        model_calls = {c for c, _ in calls} | self._submodule_calls(function, calls)
        flow = decoding_flow(ctx, function, model_calls)
        if not flow.picks:
            return None
        ordered = sorted(model_calls, key=lambda c: position(ctx, c))
        # a model fed what the loop derives from its own outputs (not from another model's: an encoder's
        # features handed to a relation network are no feedback)
        groups: Dict[str, Set[cst.Call]] = {}
        roots = {c: getattr(root_name(c.func, calls=True), "value", "") for c in ordered}
        for c in ordered:
            groups.setdefault(roots[c], set()).add(c)
        flows = {root: decoding_flow(ctx, function, own) if len(groups) > 1 else flow for root, own in groups.items()}
        fed = [feeds_back(ctx, c, flows[roots[c]]) for c in ordered]
        evidence = "picked" if "picked" in fed else ("output" if "output" in fed else None)
        if evidence is None:
            return None
        anchor = ordered[fed.index(evidence)]
        if trains(ctx, function, depth=3) or needs_grad(ctx, function):
            return None
        if any(is_loss_call(ctx, c) for c, _via in calls_through_helpers(ctx, function, 3)):
            return None
        if returns_graph(ctx, function, flow, model_calls):
            return None  # the caller may differentiate what it gets (a free-running decoder in training)
        if hands_graph_away(ctx, function, flow, model_calls):
            return None  # `scaler(loss)`, `update(log_probs)`: that callable may train
        return evidence, anchor

    def _hands_back_graph(self, function: cst.FunctionDef, calls) -> bool:
        """Whether ``function`` returns or stores its model outputs with their graph (a decoder run free
        in training returns the stacked scores): its caller may differentiate them, so a loop in it that
        collects outputs is not evaluation."""
        ctx = self.ctx
        model_calls = {c for c, _ in calls}
        return returns_graph(ctx, function, decoding_flow(ctx, function, model_calls), model_calls)

    def _submodule_calls(self, function: cst.FunctionDef, calls) -> Set[cst.Call]:
        """Calls of a model's parts in ``function`` (``decoder.attention(enc, h)``, ``decoder.fc(h)``): the
        model's own computation, step by step, for a model the function runs or takes as a parameter that
        holds a module (:func:`roles.holds_module`)."""
        ctx = self.ctx
        roots: Set[str] = set()
        for call, model in calls:
            root = model
            while isinstance(root, (cst.Attribute, cst.Subscript)):
                root = root.value
            if isinstance(root, cst.Name) and root.value not in ("self", "cls"):
                roots.add(root.value)
        out: Set[cst.Call] = set()
        for call in ctx.calls_in(function):
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value in _MODULE_METHODS:
                continue
            root = func.value
            while isinstance(root, cst.Attribute):
                root = root.value
            if not isinstance(root, cst.Name) or root.value in ("self", "cls"):
                continue
            if root.value in roots or (
                ctx.names.is_param_at(root) and holds_module(ctx, root)
            ):
                out.add(call)
        return out

    def _test_of_suite(self, function: cst.FunctionDef) -> bool:
        """A function of a test file (``test_*.py``, ``*_test.py``, under ``tests/``, importing pytest) that no
        code of the project calls, or a method of a ``Test*`` class: what a test runner runs."""
        ctx = self.ctx
        if self._in_test_class(function):
            return True
        if not is_test_file(ctx):
            return False
        # called by code that is not itself a test of the suite (a script's main block, a training loop of
        # another file): the project runs it
        inside = [s for s in call_sites(ctx, function) + instance_calls(ctx, function) if not self._in_test_code(s)]
        return not (inside or function in ctx.module.body and any(
            not is_test_file(octx) for octx, _s in project_call_sites(ctx, function)))

    def _in_test_code(self, node: cst.CSTNode) -> bool:
        """``node`` sits in a method of a ``Test*`` class or in a function whose name says it is a test."""
        for a in self.ctx.ancestors(node):
            if isinstance(a, cst.FunctionDef) and (a.name.value.startswith("test") or self._in_test_class(a)):
                return True
        return False

    def _in_test_class(self, function: cst.FunctionDef) -> bool:
        cls = self.ctx.parent(self.ctx.parent(function) or function)
        return isinstance(cls, cst.ClassDef) and cls.name.value.startswith("Test")

    def _loop_within(self, node: cst.CSTNode, function: Optional[cst.FunctionDef]) -> Optional[cst.CSTNode]:
        for a in self.ctx.ancestors(node):
            if a is function or isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return None
            if isinstance(a, LOOP_TYPES + (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)):
                return a
        return None

    def _eval_loop(self, call: cst.Call, function: Optional[cst.FunctionDef],
                   model: Optional[cst.BaseExpression] = None) -> Optional[cst.CSTNode]:
        """The outermost loop around ``call`` that evaluates: it runs the model, computes metrics or reads
        a validation/test loader, and does not train; inside a training loop only a loop over validation
        or test data counts (a micro-batch loop feeds the training step), or one that runs ``model`` after
        a statement before it in its block switched it to eval mode (``model.eval()``, then a loop over
        the epoch's other batches: whatever the loader is called)."""
        ctx = self.ctx
        chain: List[cst.CSTNode] = []
        for a in ctx.ancestors(call):
            if a is function or isinstance(a, (cst.FunctionDef, cst.Lambda)):
                break
            if isinstance(a, LOOP_TYPES):
                chain.append(a)
        best: Optional[cst.CSTNode] = None
        host_trains: Optional[bool] = None
        in_training: Optional[bool] = None
        for loop in chain:
            if trains(ctx, loop) or needs_grad(ctx, loop):
                break
            if iterates_eval_data(ctx, loop):
                best = loop
                continue
            if model is not None and in_training is None:
                in_training = any(trains(ctx, outer) or needs_grad(ctx, outer) for outer in chain)
            if in_training and self._switched_before(loop, model):  # (`model`: asked for in training only)
                best = loop
                continue
            if host_trains is None:
                host_trains = self._host_trains(function)
            if not host_trains and computes_metrics(ctx, loop):
                best = loop
        return best

    def _switched_before(self, loop: cst.CSTNode, model: cst.BaseExpression) -> bool:
        """A statement before ``loop`` in its block switches ``model`` to eval mode, and none between them
        switches it back (``model.train()``)."""
        ctx = self.ctx
        block = ctx.block_of(loop)
        if block is None:
            return False
        body = list(block)
        at = next((i for i, stmt in enumerate(body) if stmt is loop), None)
        code = ctx.code(model)
        for stmt in reversed(body[:at] if at is not None else []):
            for c in ctx.calls_in(stmt):
                if train_mode_call(c) and receiver(c) is not None and ctx.code(receiver(c)) == code:  # type: ignore[arg-type]
                    return False
                target = eval_mode_target(c)
                if target is not None and ctx.code(target) == code:
                    return True
        return False

    def _prediction_statement(self, call: cst.Call, model: cst.BaseExpression,
                              function: Optional[cst.FunctionDef] = None) -> Optional[cst.CSTNode]:
        """A statement outside any training loop that runs a model trained before it in the same
        script or main block (a prediction cell of a notebook: ``logits = model(image[None])`` after the
        training loop; the last lines of ``main()`` or of ``if __name__ == "__main__":``), whose outputs
        no backward reaches and, in a function, that the function neither returns nor stores: the
        statement, else None."""
        ctx = self.ctx
        outer_loop: Optional[cst.CSTNode] = None
        in_eval_arm = False
        for a in ctx.ancestors(call):
            if a is function and function is not None:
                break
            if isinstance(a, cst.With) and not (ctx.parent(a) is ctx.module and under_no_grad(ctx, call)):
                return None  # only a module-level `with torch.no_grad():` (the prediction is still one)
            if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
            if isinstance(a, LOOP_TYPES):
                if trains(ctx, a) or needs_grad(ctx, a):
                    if outer_loop is None and (self._eval_arm(call, model, a) or self._after_the_steps(call, a)
                                               or self._beside_the_trained_forward(call, model, a)):
                        in_eval_arm = True  # `if step % 100 == 0: net.eval(); out = net(x_val)` in training,
                        # or `pred_val = model(x_val)` after an epoch's batches
                        break
                    return None
                outer_loop = a  # a loop that samples or plots (`for i in range(10): img = model.decoder(z)`)
        statement = ctx.statement_of(call)
        if statement is None or ctx.block_of(statement) is None or not isinstance(statement, cst.SimpleStatementLine):
            return None
        root = model
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        if root.value in _bound_names(statement):
            return None  # `model = accelerator.unwrap_model(model)`: the model itself, not a prediction
        if in_eval_arm:
            pass  # trained by the loop around it
        elif function is None and not self._trained_before(statement, root.value) and not (
            self._trained_earlier_in_block(statement, root.value, None)
        ) and not self._weights_loaded_before(statement, root.value) and not (
            self._stepped_before(statement, root.value, None, steps=False)
        ):
            return None  # (trained weights loaded in the main block: `if __name__ == "__main__":`)
        elif function is not None and not self._trained_earlier_in_block(statement, root.value, function):
            return None
        if needs_grad(ctx, statement):
            return None
        for a in ctx.ancestors(call):
            if isinstance(a, cst.Call) and differentiates(ctx, a):
                return None
        outputs = _bound_names(statement)
        if function is not None:
            outputs -= self._graph_free_outputs(statement, call)
            if any(isinstance(small, cst.Return) for small in statement.body) or (
                outputs and self._escapes_function(statement, outputs, function)
            ):
                return None  # a caller may differentiate what the function hands back
        elif outputs and self._reaches_later_backward(statement, outputs):
            return None
        if outer_loop is not None:
            return outer_loop if ctx.block_of(outer_loop) is not None else None
        return statement

    def _after_the_steps(self, call: cst.Call, loop: cst.CSTNode) -> bool:
        """``call`` runs in the training ``loop`` after the training work of an iteration (a statement
        of the loop's body before it trains: the epoch's loop over batches, an optimizer step; none after
        it does), in no part of the loop that trains, and what its statement binds reaches no backward pass of the loop
        (later in the iteration, or in the next one before it is bound anew) nor leaves the loop's local
        names (returned, stored in an attribute or an element, appended): an evaluation after each epoch
        (``pred_val = model(x_val)``, its loss and accuracy printed)."""
        ctx = self.ctx
        body = getattr(loop, "body", None)
        if not isinstance(body, cst.IndentedBlock):
            return False
        top: Optional[cst.CSTNode] = None
        for a in ctx.ancestors(call):
            if a is loop:
                break
            if isinstance(a, (LOOP_TYPES, cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(a, cst.IndentedBlock) and a is not body and (trains(ctx, a) or needs_grad(ctx, a)):
                return False  # (in an arm of the loop's body that trains)
            if ctx.parent(a) is body:
                top = a
        statements = list(body.body)
        at = next((i for i, stmt in enumerate(statements) if stmt is top), None)
        flags = self._body_trains.get(loop)
        if flags is None:
            flags = self._body_trains[loop] = [trains(ctx, stmt) for stmt in statements]
        if at is None or not any(flags[:at]) or any(flags[at + 1:]):
            return False  # (between two training steps of an iteration: a loss of a step, kept or forgotten)
        statement = ctx.statement_of(call)
        if statement is None or needs_grad(ctx, statement):
            return False
        outputs = _bound_names(statement)
        return not (outputs and self._reaches_backward_in_loop(statement, outputs, loop))

    def _beside_the_trained_forward(self, call: cst.Call, model: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """``call`` is a statement of the training ``loop``'s own body (in no branch or inner loop) that runs
        the model the loop trains on other data, the same in every iteration (no name the loop binds), and
        what it binds reaches no backward pass: another
        call of the same model in the loop gives the values a backward pass differentiates, this one's
        output is only read (``loss_val = loss_fn(model(x_val), y_val)`` beside ``loss_train.backward()``,
        printed with ``.item()``): a validation forward run in every iteration."""
        ctx = self.ctx
        body = getattr(loop, "body", None)
        statement = ctx.statement_of(call)
        if not isinstance(body, cst.IndentedBlock) or statement is None or ctx.parent(statement) is not body:
            return False
        if trains(ctx, statement) or needs_grad(ctx, statement):
            return False
        for a in ctx.ancestors(call):
            if a is statement:
                break
            if isinstance(a, (cst.Lambda, cst.FunctionDef, cst.CompFor)):
                return False
        varying = set(ctx.assigned_names(loop))
        if isinstance(loop, cst.For):
            varying.update(n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name))
        if any(isinstance(n, cst.Name) and n.value in varying for a in call.args for n in iter_nodes(a.value)):
            return False  # run on what the iteration draws (the batch a discriminator step also scores): training data
        outputs = _bound_names(statement)
        if not outputs or self._reaches_backward_in_loop(statement, outputs, loop):
            return False
        code = ctx.code(model)
        given = [ctx.code(a.value) for a in call.args]
        for other, other_model in self._model_calls:
            if other is call or ctx.code(other_model) != code or not ctx.is_inside(other, loop):
                continue
            if [ctx.code(a.value) for a in other.args] == given:
                return False  # the same forward pass twice (a line repeated): no other data evaluated
            other_statement = ctx.statement_of(other)
            if other_statement is None or ctx.parent(other_statement) is not body:
                continue
            names = _bound_names(other_statement)
            if names and self._reaches_backward_in_loop(other_statement, names, loop):
                return True
        return False

    def _reaches_backward_in_loop(self, statement: cst.CSTNode, names: Set[str], loop: cst.CSTNode) -> bool:
        """Whether a value computed from ``names`` (bound by ``statement`` in ``loop``) reaches a backward
        pass of the loop, following the loop's assignments in the order they run from ``statement`` on
        (to the end of the body, then from its start: the next iteration) until each name is bound anew
        without reading them; a value returned, yielded, stored in an attribute or an element, or put
        in a container on the way counts as reaching one (it leaves what this follows)."""
        ctx = self.ctx
        start = position(ctx, statement)
        every = self._loop_events.get(loop)
        if every is None:
            every = self._loop_events[loop] = []
            for node in iter_nodes(loop):
                if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    every.append((position(ctx, node), "assign", node))
                elif isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
                    every.append((position(ctx, node), "leave", node))
                elif isinstance(node, cst.Call):
                    if differentiates(ctx, node):
                        every.append((position(ctx, node), "backward", node))
                    elif method_name(node) in _GROWS:
                        every.append((position(ctx, node), "leave", node))
        events = [e for e in every if e[2] is not statement and not ctx.is_inside(e[2], statement)]
        events.sort(key=lambda e: (e[0] <= start, e[0]))  # from the statement on, then the next iteration
        live = set(names)
        for _pos, what, node in events:
            if what == "backward":
                operand = backward_operand(ctx, node)  # type: ignore[arg-type]
                if operand is None or set(base_names(operand)) & live:
                    return True
                continue
            if what == "leave":
                value = node.value if not isinstance(node, cst.Call) else node  # type: ignore[attr-defined]
                if _carries(ctx, value, live, set(), data_off=True):
                    return True  # (`history.append(loss.item())` keeps a number: no graph leaves)
                continue
            value = getattr(node, "value", None)
            reads = _carries(ctx, value, live, set(), data_off=True) if value is not None else False
            targets = assignment_targets(node)
            if reads and any(not isinstance(t, (cst.Name, cst.Tuple, cst.List)) for t in targets):
                return True  # `self.last = out`, `outs[i] = out`: kept beyond what is followed here
            _rebind(node, targets, reads, live)
            if not live:
                return False
        return False

    def _eval_arm(self, call: cst.Call, model: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """``call`` sits in an arm of an ``if`` inside the training ``loop`` that switches ``model`` to eval
        mode before it (``if (i + 1) % 100 == 0: net.eval(); out = net(x_test)``) and trains nothing itself:
        an evaluation the training loop runs now and then."""
        ctx = self.ctx
        code = ctx.code(model)
        for arm in ctx.ancestors(call):
            if arm is loop:
                return False
            if not isinstance(arm, cst.IndentedBlock) or not isinstance(ctx.parent(arm), (cst.If, cst.Else)):
                continue
            if trains(ctx, arm) or needs_grad(ctx, arm):
                return False
            statement = ctx.statement_of(call)
            at = next((i for i, stmt in enumerate(arm.body) if stmt is statement), None)
            if at is None:
                return False
            return any(eval_mode_target(c) is not None and ctx.code(eval_mode_target(c)) == code
                       for stmt in arm.body[:at] for c in ctx.calls_in(stmt))
        return False

    def _trained_earlier_in_block(self, statement: cst.CSTNode, model_name: str,
                                  function: Optional[cst.FunctionDef]) -> bool:
        """Whether a statement before ``statement`` in its block, or in a block around it (up to
        ``function``, or the module), trains (a backward pass or an optimizer step, itself or in a helper
        it calls) and mentions ``model_name``, with no new model bound to that name in between (the
        main block of a script: ``if __name__ == "__main__":`` or ``main()``)."""
        stepped = False  # a later statement of the same block (before the one asked about) steps
        for stmt, first in self._earlier_statements(statement, function):
            if first:
                stepped = False
            if self._binds_anew(stmt, model_name):
                return False  # `model = Net()` after the training: an untrained model
            if function is not None and self._fits_model(stmt, model_name):
                return True
            steps = self._steps_model(stmt)
            if self._runs_model(stmt, model_name) and not steps and stepped:
                return True  # `out = model(x)`, then `loss.backward()`, `opt.step()`: one step
            stepped = stepped or steps
            if not self._runs_model(stmt, model_name) or not steps:
                continue
            # a model bound inside the training code (`model = Net.load_from_checkpoint(...)` in one
            # branch) may not be the one trained
            return not any(
                isinstance(n, cst.SimpleStatementLine) and self._binds_anew(n, model_name) for n in iter_nodes(stmt)
            )
        return False

    def _fits_model(self, stmt: cst.CSTNode, model_name: str) -> bool:
        """Whether ``stmt`` trains the model ``model_name`` with a Lightning trainer (``trainer.fit(model,
        ...)``, ``trainer`` built by ``Trainer(...)`` of ``lightning``/``pytorch_lightning`` in this file), and
        every rebinding of the name inside ``stmt`` reads the checkpoint of a training back
        (``model = Net.load_from_checkpoint(path)``): the model then holds trained weights."""
        ctx = self.ctx
        fitted: Optional[cst.Call] = None
        for call in ctx.calls_in(stmt):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "fit" and call.args
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == model_name
                    and call.args[0].keyword is None):
                continue
            owner = func.value
            values = built_values(ctx, owner) if isinstance(owner, cst.Name) else []
            if values and all(isinstance(v, cst.Call) and ctx.names.qualified_names_at(v.func) & _LIGHTNING_TRAINERS
                              for v in values):
                fitted = call
        if fitted is None:
            return False
        fit_statement = ctx.statement_of(fitted)
        fit_block = ctx.block_of(fit_statement) if fit_statement is not None else None
        for n in iter_nodes(stmt):
            if isinstance(n, cst.SimpleStatementLine) and self._binds_anew(n, model_name):
                value = getattr(n.body[0], "value", None)
                core = strip_moves_expr(value) if isinstance(value, cst.BaseExpression) else None
                if isinstance(core, cst.Call) and (_deserialised(ctx, core) or isinstance(core.func, cst.Attribute)
                                                   and core.func.attr.value == "load_from_checkpoint"):
                    continue  # trained weights read back
                if fit_block is not None and ctx.block_of(n) is fit_block and position(ctx, n) < position(ctx, fitted):
                    continue  # the model built, then fitted
                return False
        return True

    def _runs_model(self, stmt: cst.CSTNode, model_name: str) -> bool:
        """Whether ``stmt`` runs the model ``model_name`` itself (``model(x)``), not only names it."""
        return any(isinstance(m, cst.Name) and m.value == model_name and self.ctx.is_inside(c, stmt)
                   for c, m in self._model_calls)

    def _steps_model(self, stmt: cst.CSTNode) -> bool:
        """A backward pass or an optimizer step in ``stmt`` or the same-module helpers it calls (a call
        named ``fit`` hands the model to a framework, which may leave it in any mode or state)."""
        ctx = self.ctx
        return any(is_backward_like(ctx, c) or optimizer_of_step(ctx, c) is not None
                   for c, _via in calls_through_helpers(ctx, stmt, 2))

    def _binds_anew(self, stmt: cst.CSTNode, name: str) -> bool:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, cst.AugAssign):
                continue
            for t in assignment_targets(small):
                if any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(t)):
                    value = getattr(small, "value", None)
                    if not (value is not None and dotted_name(strip_moves_expr(value)) == name):
                        return True
        return False

    def _graph_free_outputs(self, statement: cst.CSTNode, call: cst.Call) -> Set[str]:
        """The names ``statement`` binds from ``call`` to values without an autograd graph by construction
        (``_, acc = model.forward(batch)`` where ``forward`` returns ``loss, (pred == y).float().mean()``):
        handing them back hands back numbers, not the graph the call built."""
        out: Set[str] = set()
        if not isinstance(statement, cst.SimpleStatementLine):
            return out
        for small in statement.body:
            if not isinstance(small, cst.Assign) or small.value is not call or len(small.targets) != 1:
                continue
            target = small.targets[0].target
            if isinstance(target, cst.Name):
                pairs = [(target.value, None)]
            elif isinstance(target, (cst.Tuple, cst.List)) and not any(
                    isinstance(e, cst.StarredElement) for e in target.elements):
                pairs = [(e.value.value, i) for i, e in enumerate(target.elements) if isinstance(e.value, cst.Name)]
            else:
                continue
            out.update(name for name, index in pairs if element_without_graph(self.ctx, call, index))
        return out

    def _escapes_function(self, statement: cst.CSTNode, names: Set[str], function: cst.FunctionDef) -> bool:
        """Whether what ``statement`` binds reaches a return, a yield, a backward pass or an attribute of
        ``function`` after it, or is handed to a callable (a caller or callee could differentiate it)."""
        ctx = self.ctx
        start = position(ctx, statement)
        live = set(names)
        for n in iter_nodes(function.body):
            if position(ctx, n) <= start or ctx.is_inside(n, statement):
                continue
            if isinstance(n, (cst.Return, cst.Yield)) and n.value is not None and set(_held_names(n.value)) & live \
                    and not is_detached(ctx, n.value):  # (`return loss_val.item()`: a number, no graph)
                return True
            if isinstance(n, cst.Call) and differentiates(ctx, n):
                operand = backward_operand(ctx, n)
                if operand is None or set(base_names(operand)) & live:
                    return True
            if isinstance(n, (cst.Assign, cst.AugAssign)):
                value = n.value
                if not (set(_held_names(value)) & live) or is_detached(ctx, value):
                    continue
                for t in assignment_targets(n):
                    if isinstance(t, (cst.Attribute, cst.Subscript)):
                        return True
                    live.update(x.value for x in iter_nodes(t) if isinstance(x, cst.Name))
        return False

    def _reaches_later_backward(self, statement: cst.CSTNode, names: Set[str]) -> bool:
        """Whether a backward pass after ``statement`` (module level, in source order) differentiates a
        value computed from ``names`` before they are bound anew: a notebook reuses ``logits`` and
        ``loss`` in every cell, so a name is followed only until the next assignment that does not read
        it."""
        ctx = self.ctx
        live = set(names)
        events: List[Tuple[int, str, cst.CSTNode]] = []
        start = position(ctx, statement)
        for a in ctx.contents(ctx.module).assigns:
            if position(ctx, a) > start and enclosing_function(ctx, a) is None and not ctx.is_inside(a, statement):
                events.append((position(ctx, a), "assign", a))
        for call in ctx.calls_in(ctx.module):
            if position(ctx, call) > start and differentiates(ctx, call) and not ctx.is_inside(call, statement):
                events.append((position(ctx, call), "backward", call))
        for _pos, what, node in sorted(events, key=lambda e: e[0]):
            if what == "backward":
                assert isinstance(node, cst.Call)
                operand = backward_operand(ctx, node)
                if operand is None or set(base_names(operand)) & live:
                    return True
                continue
            value = getattr(node, "value", None)
            reads = bool(set(base_names(value)) & live) if value is not None else False
            _rebind(node, assignment_targets(node), reads, live)
            if not live:
                return False
        return False

    def _trained_before(self, statement: cst.CSTNode, model_name: str) -> bool:
        """Whether a module-level statement before ``statement`` trains (a backward pass or an optimizer
        step, itself or in a helper it calls) and mentions ``model_name``."""
        ctx = self.ctx
        top = statement
        for a in ctx.ancestors(statement):
            if a is ctx.module:
                break
            top = a
        trainers = _TRAINERS.get(ctx)
        if trainers is None:
            trainers = [stmt for stmt in ctx.module.body if trains(ctx, stmt, depth=2)]
            _TRAINERS.put(ctx, trainers)
        body = list(ctx.module.body)
        index = {id(stmt): i for i, stmt in enumerate(body)}
        at = index.get(id(top))
        if at is None:
            return False
        # the model bound anew after the training (`model = GPTModel(cfg)` for a shape demo) is untrained
        built = -1
        for i, stmt in enumerate(body[:at]):
            if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(n, cst.Name) and n.value == model_name
                for small in stmt.body
                for t in assignment_targets(small)
                if not isinstance(small, cst.AugAssign)
                for n in iter_nodes(t)
            ):
                value = getattr(stmt.body[0], "value", None)
                if not (value is not None and dotted_name(strip_moves_expr(value)) == model_name):
                    built = i  # not `model = model.to(device)`: a new object
        return any(built < index[id(stmt)] < at and ctx.names_in(stmt, model_name) for stmt in trainers)

    def _weights_loaded_before(self, statement: cst.CSTNode, model_name: str) -> bool:
        """Whether module-level code before ``statement`` gave the model ``model_name`` trained weights
        after it was last built: ``model.load_state_dict(...)`` (a checkpoint of the training, reloaded
        for the predictions of a notebook's last cells), ``model = torch.load(...)``, or a library model
        built with its trained weights (``models.resnet101(pretrained=True)``)."""
        ctx = self.ctx
        top = statement
        for a in ctx.ancestors(statement):
            if a is ctx.module:
                break
            top = a
        body = list(ctx.module.body)
        at = next((i for i, stmt in enumerate(body) if stmt is top), None)
        if at is None:
            return False
        loaded = False
        for stmt in body[:at]:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if self._binds_anew(stmt, model_name):
                assert isinstance(stmt, cst.SimpleStatementLine)
                value = getattr(stmt.body[0], "value", None)
                loaded = isinstance(value, cst.BaseExpression) and (
                    self._trained_value(value) or self._wraps_trained(value, model_name, loaded, stmt))
                continue
            if self._loads_into(stmt, model_name, outside_functions=True):
                loaded = True
        return loaded and not self._round_trip(body[:at])

    def _wraps_trained(self, value: cst.BaseExpression, model_name: str, loaded: bool, stmt: cst.CSTNode) -> bool:
        """``net = Wrapper(net)``, ``model = nn.Sequential(backbone, head)``: a module built (a project module
        class, or a torch container) around a model given trained weights before ``stmt`` (the name bound
        again, ``loaded`` says; another name, read again)."""
        ctx = self.ctx
        core = strip_moves_expr(value)
        if not isinstance(core, cst.Call):
            return False
        found = definition_of(ctx, core.func)
        if not (found is not None and isinstance(found[1], cst.ClassDef) and module_class(*found)) \
                and not ctx.names.matches(core.func, CONTAINER_CLASSES):
            return False
        for a in core.args:
            if not isinstance(a.value, cst.Name) or a.star:
                continue
            if a.value.value == model_name and loaded or a.value.value != model_name and \
                    self._weights_loaded_before(stmt, a.value.value):
                return True
        return False

    def _round_trip(self, before: Sequence[cst.CSTNode]) -> bool:
        """A demonstration of saving and loading: the module trains nothing anywhere (no backward pass or
        optimizer step, in any function it holds) and saves a model before the load (``torch.save``):
        what it loads back are the weights it just built, not trained ones."""
        ctx = self.ctx
        if any(is_backward_like(ctx, c) or optimizer_of_step(ctx, c) is not None for c in ctx.calls_in(ctx.module)):
            return False
        return any(
            ctx.names.matches(c.func, ("torch.save",)) for stmt in before for c in ctx.calls_in(stmt)
            if not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))
        )

    def _host_trains(self, function: Optional[cst.FunctionDef]) -> bool:
        """Whether the code around the loop trains: then only a loop over validation or test data is
        evaluation (a micro-batch loop that collects outputs feeds the training step)."""
        ctx = self.ctx
        if function is not None:
            return trains(ctx, function)
        return any(
            enclosing_function(ctx, call) is None and (is_backward_like(ctx, call) or optimizer_of_step(ctx, call))
            for call in ctx.calls_in(ctx.module)
        )


_FACTS: "Fact[EvaluationFacts]" = Fact("evaluation.facts")
#: the top-level statements of the file that train
_TRAINERS: "Fact[List[cst.CSTNode]]" = Fact("evaluation.trainers")


def evaluation_facts(ctx: FileContext) -> EvaluationFacts:
    facts = _FACTS.get(ctx)
    if facts is None:
        facts = _FACTS.put(ctx, EvaluationFacts(ctx))
    return facts


class EvaluationBinder:
    """The walker of the evaluation facts: records every call the walk meets; which of them run a model is
    judged after the walk, from the whole file's bindings.  Rules that read :func:`evaluation_facts` name
    it in their ``BINDERS``; the engine runs it once per file before the rules' visitors."""

    CODE = "evaluation-facts"

    def __init__(self, ctx: FileContext, options: Any = None) -> None:
        self.ctx = ctx
        self.facts = evaluation_facts(ctx)

    def visit_Call(self, node: cst.Call) -> None:
        self.facts.record(node)


# -- building fixes ------------------------------------------------------------------------------
def no_grad_call_code(ctx: FileContext, at: Optional[cst.CSTNode] = None) -> Optional[str]:
    """How this module spells ``torch.no_grad()`` with its own imports (None when it can't); with ``at``,
    a spelling whose name still means that import where ``at`` is evaluated (not a parameter or a local of a
    function around it that happens to share the name: `def evaluate(torch, data)`)."""
    bindings = ctx.names.module_scope.bindings

    def visible(name: str) -> bool:
        return at is None or ctx.names.binding_at(at, name) is bindings[name]

    for name in sorted(bindings):
        if "torch" in bindings[name].imports and visible(name):
            return f"{name}.no_grad()"
    for name in sorted(bindings):
        imports = bindings[name].imports
        if ("torch.no_grad" in imports or "torch.autograd.no_grad" in imports) and visible(name):
            return f"{name}()"
    return None


def top_statement(ctx: FileContext, node: cst.CSTNode, block_owner: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The statement directly in ``block_owner``'s body (a function, loop or module) that holds ``node``."""
    body = getattr(block_owner, "body", None)
    block = body if isinstance(block_owner, cst.Module) else getattr(body, "body", None)
    if block is None:
        return None
    ids = {id(s) for s in block}
    cur: Optional[cst.CSTNode] = node
    while cur is not None:
        if id(cur) in ids:
            return cur
        cur = ctx.parent(cur)
    return None


def assigned_within(ctx: FileContext, node: cst.CSTNode, name: str) -> bool:
    """Whether the variable ``name`` is bound somewhere under ``node``."""
    for a in ctx.contents(node).assigns:
        targets: Sequence[cst.BaseExpression] = ()
        if isinstance(a, cst.Assign):
            targets = [t.target for t in a.targets]
        elif isinstance(a, (cst.AnnAssign, cst.AugAssign)):
            targets = [a.target]
        for t in targets:
            if name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", ctx.code(t)):
                return True
    if isinstance(node, cst.For) and name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", ctx.code(node.target)):
        return True
    for loop in ctx.names_in(node, name):
        parent = ctx.parent(loop)
        if isinstance(parent, (cst.For, cst.CompFor, cst.AsName, cst.NamedExpr)):
            return True
    return False
