"""What the training-loop rules share: which calls are a backward pass, an optimizer step, a scheduler
step, a gradient reset; what kind of object a receiver is; whether code runs under ``no_grad``.

The heuristics here lean towards silence: an object counts as an optimizer when it was built by
``torch.optim.*`` in view of the rule, or when its name says so (``opt``, ``optimizer``, ``d_optim``);
``env.step()``, ``engine.step()`` (DeepSpeed) or ``trainer.step()`` are not optimizer steps.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg, method_name, receiver
from torchlint.analysis.names import dotted_name
from torchlint.analysis.project import project_of
from torchlint.analysis.walk import iter_nodes

LOOP_TYPES = (cst.For, cst.While)

_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)s?($|_)|optimi[sz]er", re.IGNORECASE)
_SCHEDULER_NAME = re.compile(r"sched|lr_?policy|warmup", re.IGNORECASE)
_SCALER_NAME = re.compile(r"scaler", re.IGNORECASE)
_CLEAR_HELPER = re.compile(r"zero_grad|(clear|reset|zero)_?grad|grads?_?(clear|reset|zero)", re.IGNORECASE)

NO_GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})


def object_kind(ctx: FileContext, expr: Optional[cst.BaseExpression]) -> Optional[str]:
    """"optimizer", "scheduler", "scaler" or None for the object ``expr`` names."""
    if expr is None:
        return None
    if not ctx.walked or id(expr) not in ctx.order:
        return _object_kind(ctx, expr)
    kinds = _OBJECT_KINDS.of(ctx)
    key = id(expr)  # (a node of the module, which keeps its id)
    if key in kinds:
        return kinds[key]
    kind = kinds[key] = _object_kind(ctx, expr)
    return kind


def _object_kind(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    for q in sorted(ctx.names.instance_of(expr)):
        if q.startswith("torch.optim.lr_scheduler.") or ".lr_scheduler." in q:
            return "scheduler"
        if q.startswith("torch.optim.") or q.startswith("torch.optim"):
            return "optimizer"
        if q.endswith("GradScaler"):
            return "scaler"
    name = dotted_name(expr)
    if name is None:
        return None
    if isinstance(expr, cst.Name) and (_built_as_plain_object(ctx, expr) or _built_by_other_library(ctx, expr)):
        return None  # `opt = Config()`, `opts = parser.parse_args()`: the name says optimizer, the value not
    last = name.rsplit(".", 1)[-1]
    if _SCHEDULER_NAME.search(last):
        return "scheduler"
    if _SCALER_NAME.search(last):
        return "scaler"
    if _OPTIMIZER_NAME.search(last):
        return "optimizer"
    return None


#: once the walk is done (every binding known), :func:`object_kind` of the nodes of the module, by id
_OBJECT_KINDS: "Fact[Dict[int, Optional[str]]]" = Fact("training.object_kinds", lambda ctx: {})


def _built_as_plain_object(ctx: FileContext, name: cst.Name) -> bool:
    """Whether every value ``name`` is bound to is an instance of a class of this module that has no
    ``step`` method and no base class besides ``object`` (a configuration, a record): no optimizer,
    scheduler or scaler whatever the name says."""
    values = ctx.names.values_at(name)
    if not values:
        return False
    classes = ctx.classes()
    for v in values:
        if not (isinstance(v, cst.Call) and isinstance(v.func, cst.Name)) or v.func.value not in classes:
            return False
        cls = classes[v.func.value]
        if any(dotted_name(b.value) not in ("object",) for b in cls.bases):
            return False
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        if any(isinstance(st, cst.FunctionDef) and st.name.value in ("step", "__call__", "scale") for st in body):
            return False
    return True


def _built_by_other_library(ctx: FileContext, name: cst.Name) -> bool:
    """Whether every value ``name`` is bound to is built by a library call that is not torch's (an argument
    parser's result, ``Namespace(**d)``, ``json.load(f)``) or is a literal: no optimizer, scheduler or
    scaler, whatever the name says.  Where an assignment on every path reaches the read, its value alone
    (``opts = Namespace(**opts)`` after ``opts = ckpt["opts"]``)."""
    reaching = ctx.names.reaching_assignment(name.value, name, ctx.enclosing(name, cst.FunctionDef))
    values = [reaching[0].value] if reaching is not None and reaching[1] is None else ctx.names.values_at(name)
    if not values:
        return False
    for v in values:
        if isinstance(v, (cst.SimpleString, cst.Integer, cst.Float, cst.Dict, cst.List, cst.Tuple)):
            continue
        if not isinstance(v, cst.Call):
            return False
        q = ctx.names.qualified_names_at(v.func)
        if isinstance(v.func, cst.Attribute) and not q and isinstance(v.func.value, cst.Name):
            q = {f"{r}.{v.func.attr.value}" for r in ctx.names.instance_of(v.func.value)}  # `parser.parse_args()`
        if not q or any(n.startswith(("torch", ".")) or n.split(".")[0] in (
                "accelerate", "apex", "deepspeed", "transformers", "timm", "lightning", "pytorch_lightning")
                or _project_module(ctx, n) for n in q):
            return False  # torch's, a library that builds optimizers, or the project's own code
    return True


def _project_module(ctx: FileContext, qualified: str) -> bool:
    """``pkg.schedulers.get_scheduler``: a name defined by a module of the project (whose code may build
    anything), not by a library."""
    if not ctx.path or ctx.path.startswith("<"):
        return False
    project = project_of(ctx)
    parts = qualified.split(".")
    return any(project.module_file(ctx.path, ".".join(parts[:i]), 0) is not None for i in range(len(parts) - 1, 0, -1))


def is_backward(ctx: FileContext, call: cst.Call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``torch.autograd.backward(loss)``."""
    if method_name(call) == "backward":
        return True
    # an attribute callee's qualified names end with its attribute (`backward` only in the case above)
    return type(call.func) is cst.Name and ctx.names.matches(call.func, ("torch.autograd.backward",))


def optimizer_of_step(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """For an optimizer step (``opt.step()``, ``scaler.step(opt)``) the optimizer expression, else None."""
    if method_name(call) != "step":
        return None
    recv = receiver(call)
    kind = object_kind(ctx, recv)
    if kind == "optimizer":
        return recv
    if kind == "scaler":
        first = arg(call, 0, "optimizer")
        return first.value if first is not None else None
    return None


def is_scheduler_step(ctx: FileContext, call: cst.Call) -> bool:
    return method_name(call) == "step" and object_kind(ctx, receiver(call)) == "scheduler"


def is_grad_clear_call(call: cst.Call) -> bool:
    """``opt.zero_grad()``, ``model.zero_grad(set_to_none=True)``, ``p.grad.zero_()``, helpers named so."""
    name = method_name(call)
    if name is None and isinstance(call.func, cst.Name):
        name = call.func.value
    if name is None:
        return False
    if name == "zero_grad" or _CLEAR_HELPER.search(name):
        return True
    if name in ("zero_", "detach_", "fill_"):
        recv = receiver(call)
        while isinstance(recv, cst.Attribute) and recv.attr.value == "data":
            recv = recv.value
        return isinstance(recv, cst.Attribute) and recv.attr.value == "grad"
    return False


def is_grad_clear_assign(node: cst.CSTNode) -> bool:
    """``p.grad = None`` (or any assignment to a ``.grad`` attribute)."""
    if isinstance(node, cst.Assign):
        return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets)
    return False


def clears_gradients(ctx: FileContext, node: cst.CSTNode, depth: int = 2) -> bool:
    """Whether ``node`` clears gradients, directly or in a same-module helper it calls."""
    contents = ctx.contents(node)
    if any(is_grad_clear_assign(a) for a in contents.assigns):
        return True
    for call in contents.calls:
        if is_grad_clear_call(call):
            return True
    if depth > 0:
        for call in contents.calls:
            target = ctx.function_for_call(call)
            if target is not None and target is not node and clears_gradients(ctx, target, depth - 1):
                return True
    return False


def innermost_loop(ctx: FileContext, node: cst.CSTNode, stop: Optional[cst.CSTNode] = None) -> Optional[cst.CSTNode]:
    """The nearest enclosing for/while loop of ``node``, not crossing a function boundary."""
    for a in ctx.ancestors(node):
        if isinstance(a, LOOP_TYPES):
            return a
        if isinstance(a, (cst.FunctionDef, cst.Lambda)) or a is stop:
            return None
    return None


def common_loop(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The innermost loop that encloses both nodes, within one function."""
    loops_a: List[cst.CSTNode] = []
    for anc in ctx.ancestors(a):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(anc, LOOP_TYPES):
            loops_a.append(anc)
    if not loops_a:
        return None
    ids = set(loops_a)
    for anc in ctx.ancestors(b):
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            break
        if anc in ids:
            return anc
    return None


def _grad_disabling(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call is not None else expr
    if ctx.names.matches(target, NO_GRAD_CONTEXTS):
        if call is not None and ctx.names.matches(target, ("torch.inference_mode",)):
            mode = arg(call, 0, "mode")
            if mode is not None and isinstance(mode.value, cst.Name) and mode.value.value == "False":
                return False
        return True
    if call is not None and ctx.names.matches(target, SET_GRAD_ENABLED):
        mode = arg(call, 0, "mode")
        return mode is not None and isinstance(mode.value, cst.Name) and mode.value.value == "False"
    return False


def _disabling_decorator(ctx: FileContext, expr: cst.BaseExpression, decorated: cst.FunctionDef) -> bool:
    """``@nograd`` with ``nograd`` a function of the module that wraps the function it is given in one that
    calls it with gradients disabled (``def nograd(f): def new_f(*a, **k): with torch.no_grad(): return
    f(*a, **k); return new_f``)."""
    if not isinstance(expr, cst.Name) or ctx.names.qualified_names(expr):
        return False
    for wrapper in ctx.functions().get(expr.value, ()):
        if wrapper is decorated or ctx.is_inside(decorated, wrapper) or ctx.enclosing(wrapper, cst.FunctionDef):
            continue
        params = wrapper.params.params
        if len(params) != 1 or wrapper.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
            continue
        given = params[0].name.value
        calls = [c for c in ctx.calls_in(wrapper) if isinstance(c.func, cst.Name) and c.func.value == given]
        if calls and all(ctx.enclosing(c, cst.FunctionDef) is not wrapper and under_no_grad(ctx, c) for c in calls):
            return True
    return False


def under_no_grad(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether ``node`` runs with gradients disabled by an enclosing with-block or decorator, or by a
    ``torch.set_grad_enabled(False)`` statement before it in its block (or an enclosing block of the same
    function) that no later switch turns back on."""
    switches = _STATEMENT_SWITCHES.get(ctx)
    if switches is None:
        switches = _STATEMENT_SWITCHES.put(ctx, "set_grad_enabled" in ctx.source)
    child: cst.CSTNode = node
    for a in ctx.ancestors(node):
        if type(a) is cst.With:
            if any(_grad_disabling(ctx, item.item) for item in a.items):
                return True
        elif type(a) is cst.FunctionDef:
            if any(_grad_disabling(ctx, d.decorator) or _disabling_decorator(ctx, d.decorator, a)
                   for d in a.decorators):
                return True
        scope = type(a) in _SCOPES
        if switches and not scope:
            verdict = _switched_before(ctx, a, child)
            if verdict is not None:
                return verdict
        if scope:
            break  # the function's caller decides beyond this point
        child = a
    return False


#: whether the file spells a ``set_grad_enabled`` statement at all (the statement form is then looked for)
_STATEMENT_SWITCHES: "Fact[bool]" = Fact("training.statement_switches")
#: the nodes past which the function's caller decides (leaf classes: tested by type); a class body is not one:
#: it runs where the class is defined, in the mode of the code around it
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda})


def _switched_before(ctx: FileContext, block_owner: cst.CSTNode, child: cst.CSTNode) -> Optional[bool]:
    """In the block ``block_owner`` (an indented block or the module), before its statement ``child``: False/True when the last
    ``torch.set_grad_enabled(...)`` statement before ``child`` turns gradients on/off; None without one."""
    if not isinstance(block_owner, (cst.IndentedBlock, cst.Module)):
        return None
    stmts = list(block_owner.body)
    if child not in stmts:
        return None
    for stmt in reversed(stmts[: stmts.index(child)]):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in reversed(stmt.body):
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                    ctx.names.matches(small.value.func, SET_GRAD_ENABLED):
                mode = arg(small.value, 0, "mode")
                return mode is not None and isinstance(mode.value, cst.Name) and mode.value.value == "False"
    return None


def first(items: Iterable) -> Optional[object]:
    for item in items:
        return item
    return None


# -- losses --------------------------------------------------------------------------------------
_LOSS_CALLEE = re.compile(r"criterion|(^|_)loss(es)?(_|$|\d)|_loss$|^loss|lossfn|loss_?f(u)?n", re.IGNORECASE)
_REDUCTIONS = frozenset({"mean", "sum", "squeeze", "reshape", "view", "flatten", "abs", "float", "double", "half"})
#: calls that take a value off the graph (or out of the tensor world)
_DETACHING_METHODS = frozenset({"item", "detach", "tolist", "numpy", "detach_"})
_DETACHING_FUNCS = frozenset({"float", "int", "round", "str", "repr", "bool", "len", "format"})


_FRAMEWORK_BACKWARD = frozenset({"manual_backward"})


def is_backward_like(ctx: FileContext, call: cst.Call) -> bool:
    """:func:`is_backward`, plus framework spellings such as ``self.manual_backward(loss)`` (not any
    name that merely contains "backward": ``register_backward_hook``, ``_must_be_in_backward(node)``)."""
    if is_backward(ctx, call):
        return True
    name = method_name(call)
    if name is None and isinstance(call.func, cst.Name):
        name = call.func.value
    return name in _FRAMEWORK_BACKWARD


_BACKWARD_OWNER = re.compile(r"accelerat|engine|fabric|trainer|strategy|runner|model|booster|deepspeed", re.IGNORECASE)


def backward_operand(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The value a backward call differentiates: ``loss`` in ``loss.backward()``,
    ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``, ``torch.autograd.backward(loss)``,
    ``self.manual_backward(loss)``; ``loss`` in ``torch.autograd.grad(loss, params)`` too."""
    name = method_name(call)
    recv = receiver(call)
    first = arg(call, 0, "tensors")
    if name == "backward" and recv is not None:
        owner = dotted_name(recv)
        if first is not None and owner is not None and _BACKWARD_OWNER.search(owner.rsplit(".", 1)[-1]):
            return first.value  # accelerator.backward(loss), model_engine.backward(loss)
        if isinstance(recv, cst.Call) and method_name(recv) == "scale":
            scaled = arg(recv, 0, "outputs")
            return scaled.value if scaled is not None else recv
        return recv
    if first is None:
        first = arg(call, 0, "outputs" if ctx.names.matches(call.func, GRADIENT_CALLS) else "loss")
    return first.value if first is not None else None


#: the calls that differentiate what they are given without a backward pass into ``.grad``
GRADIENT_CALLS = frozenset({"torch.autograd.grad"})


def differentiates(ctx: FileContext, call: cst.Call) -> bool:
    """A backward pass (:func:`is_backward_like`), or ``torch.autograd.grad(outputs, inputs)``: either
    differentiates its operand (:func:`backward_operand`), so the value it is given needs its graph.  Only
    the backward passes fill ``.grad`` (what the gradient-clearing rules ask about)."""
    return is_backward_like(ctx, call) or ctx.names.matches(call.func, GRADIENT_CALLS)


def backward_operands(ctx: FileContext, node: cst.CSTNode) -> List[cst.BaseExpression]:
    out = []
    for call in ctx.calls_in(node):
        if is_backward_like(ctx, call):
            operand = backward_operand(ctx, call)
            if operand is not None:
                out.append(operand)
    return out


def base_names(expr: Optional[cst.CSTNode]) -> List[str]:
    """Names an expression is computed from, through arithmetic, attributes, subscripts and calls:
    ``(loss / n).mean()`` -> ["loss", "n"]; ``sum(losses)`` -> ["losses"]."""
    out: List[str] = []
    stack = [expr] if expr is not None else []
    while stack:
        e = stack.pop()
        if isinstance(e, cst.Name):
            out.append(e.value)
        elif isinstance(e, cst.Attribute):
            stack.append(e.value)
        elif isinstance(e, cst.Subscript):
            stack.append(e.value)
        elif isinstance(e, cst.BinaryOperation):
            stack.extend((e.left, e.right))
        elif isinstance(e, cst.UnaryOperation):
            stack.append(e.expression)
        elif isinstance(e, cst.Call):
            stack.append(e.func)
            stack.extend(a.value for a in e.args)
        elif isinstance(e, (cst.List, cst.Tuple)):
            stack.extend(el.value for el in e.elements)
    return out


_FUNCTIONAL_LOSSES = frozenset(
    {"cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss", "kl_div"}
)


def is_loss_call(ctx: FileContext, call: cst.Call) -> bool:
    """``criterion(out, y)``, ``F.mse_loss(...)``, ``nn.CrossEntropyLoss()(...)``, ``self.loss_fn(...)``,
    ``compute_loss(...)``."""
    func = call.func
    for q in sorted(ctx.names.qualified_names(func)):
        if q.startswith("torch.nn.functional."):
            last = q.rsplit(".", 1)[-1]
            return last.endswith("_loss") or last in _FUNCTIONAL_LOSSES
        if q.startswith("torch."):
            return False
    for q in sorted(ctx.names.instance_of(func)):
        if q.startswith("torch.nn.") and q.endswith("Loss"):
            return True
    name = dotted_name(func)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1]
    return bool(_LOSS_CALLEE.search(last))


def is_detached(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether the value is taken off the autograd graph (or out of torch): ``loss.item()``,
    ``float(loss)``, ``loss.detach()``, ``loss.data``, ``loss.tolist()``."""
    e = expr
    while True:
        if isinstance(e, cst.Call):
            name = method_name(e)
            if name in _DETACHING_METHODS:
                return True
            if isinstance(e.func, cst.Name) and e.func.value in _DETACHING_FUNCS:
                return True
            if name in _REDUCTIONS or name in ("to", "cpu", "cuda", "clone", "contiguous"):
                e = receiver(e)
                continue
            return False
        if isinstance(e, cst.Attribute):
            if e.attr.value == "data":
                return True
            return False
        if isinstance(e, cst.Subscript):
            e = e.value
            continue
        if isinstance(e, cst.BinaryOperation):
            sides = [x for x in (e.left, e.right) if not _is_number(x)]
            return bool(sides) and all(is_detached(ctx, x) for x in sides)
        return False


def _is_number(e: cst.BaseExpression) -> bool:
    return isinstance(e, (cst.Integer, cst.Float))


def whole_names(expr: Optional[cst.CSTNode]) -> List[str]:
    """:func:`base_names` without the containers read one element at a time: ``losses[-1] * 2`` ->
    [] (one element of ``losses`` is used, not the list); ``sum(losses)`` -> ["losses"]."""
    out: List[str] = []
    stack = [expr] if expr is not None else []
    while stack:
        e = stack.pop()
        if isinstance(e, cst.Name):
            out.append(e.value)
        elif isinstance(e, cst.Attribute):
            stack.append(e.value)
        elif isinstance(e, cst.Subscript):
            stack.extend(el.slice.value for el in e.slice if isinstance(el.slice, cst.Index))
        elif isinstance(e, cst.BinaryOperation):
            stack.extend((e.left, e.right))
        elif isinstance(e, cst.UnaryOperation):
            stack.append(e.expression)
        elif isinstance(e, cst.Call):
            stack.append(e.func)
            stack.extend(a.value for a in e.args)
        elif isinstance(e, (cst.List, cst.Tuple)):
            stack.extend(el.value for el in e.elements)
    return out


def flows_into_backward(ctx: FileContext, scope: cst.CSTNode, name: str, depth: int = 2, whole: bool = False,
                        origin: Optional[cst.CSTNode] = None) -> bool:
    """Whether the variable ``name`` (or a value computed from it) is later differentiated in ``scope``:
    ``total.backward()``, ``loss = sum(losses); loss.backward()``.  With ``origin`` (the statement that
    bound the value followed), a read inside a ``for`` loop whose target binds the name again, and that
    ``origin`` is not part of, reads the loop's own value (``for sent in data: loss(sent).backward()``
    never sees a ``sent = sample()`` made outside it)."""
    targets = {name}

    def reads(node: cst.CSTNode, found: List[str]) -> Set[str]:
        names = _outer_names(ctx, scope, node, found)
        if origin is None:
            return names
        return {n for n in names if not _rebound_by_loop(ctx, node, n, origin)}

    # the assignments that compute each other name from the variable: a backward pass reads the value
    # only where one of them may have run before it (`actor_loss = sum(actor_losses)` after the loop is no
    # value of the `actor_loss.backward()` inside it)
    deriving: Dict[str, List[cst.CSTNode]] = {}
    for _ in range(depth):
        derived = set(targets)
        for a in ctx.contents(scope).assigns:
            if isinstance(a, cst.Assign) and reads(a, base_names(a.value)) & targets:
                for t in a.targets:
                    if isinstance(t.target, cst.Name):
                        derived.add(t.target.value)
                        _note_deriving(deriving, t.target.value, a)
            elif isinstance(a, (cst.AugAssign, cst.AnnAssign)) and a.value is not None:
                if reads(a, base_names(a.value)) & targets and isinstance(a.target, cst.Name):
                    derived.add(a.target.value)
                    _note_deriving(deriving, a.target.value, a)
        targets = derived
    names = whole_names if whole else base_names
    for operand in backward_operands(ctx, scope):
        for n in reads(operand, names(operand)) & targets:
            if n == name or any(ctx.may_run_before(a, operand) for a in deriving.get(n, ())):
                return True
    return False


def _note_deriving(deriving: Dict[str, List[cst.CSTNode]], name: str, assign: cst.CSTNode) -> None:
    found = deriving.setdefault(name, [])
    if assign not in found:
        found.append(assign)




def _rebound_by_loop(ctx: FileContext, node: cst.CSTNode, name: str, origin: cst.CSTNode) -> bool:
    """Whether ``node`` sits in the body of a ``for`` loop whose target binds ``name``, a loop ``origin`` is
    not part of: each run of the body binds the name before anything in it reads it."""
    for a in ctx.ancestors(node):
        if a is origin:
            return False
        if isinstance(a, cst.For) and not ctx.is_inside(origin, a) and ctx.is_inside(node, a.body) and any(
                isinstance(n, cst.Name) and n.value == name for n in iter_nodes(a.target)):
            return True
    return False


def _outer_names(ctx: FileContext, scope: cst.CSTNode, node: cst.CSTNode, names: List[str]) -> Set[str]:
    """Of ``names`` read at ``node`` inside ``scope``, those that are ``scope``'s own: in a function nested in
    it, a name the function binds itself (a local ``tags`` of ``train()``) is another variable than the
    module's ``tags``."""
    inner = ctx.names.scope_at(node)
    if inner is None or inner.node is scope or inner.kind != "function":
        return set(names)
    return {n for n in names if n not in inner.bindings or n in inner.globals}


def instance_attribute(ctx: FileContext, target: cst.BaseExpression) -> Optional[str]:
    """The code of ``self.<attr>`` when ``target`` is that attribute or an element of it (``self.hist``,
    ``self.hist['loss']``) in a method whose instance is ``self``; else None."""
    node = target
    while isinstance(node, cst.Subscript):
        node = node.value
    if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name):
        return None
    me = ctx.names.scope_at(node).self_name
    return ctx.code(node) if me is not None and node.value.value == me else None


def attribute_flows_into_backward(ctx: FileContext, held: str, scope: cst.CSTNode) -> bool:
    """Whether a value computed from the attribute spelled ``held`` (``self.log_probs``) is differentiated
    somewhere in ``scope`` (the class): ``torch.stack(self.log_probs).sum().backward()``, or through the
    names assigned from it (``loss = -(torch.stack(self.log_probs) * r).sum()`` then ``loss.backward()``)."""
    derived: Set[str] = set()
    for _ in range(2):
        for a in ctx.contents(scope).assigns:
            value = a.value if isinstance(a, (cst.Assign, cst.AugAssign, cst.AnnAssign)) else None
            if value is None or not (held in ctx.code(value) or set(base_names(value)) & derived):
                continue
            targets = [t.target for t in a.targets] if isinstance(a, cst.Assign) else [a.target]
            derived.update(t.value for t in targets if isinstance(t, cst.Name))
    return any(held in ctx.code(op) or set(base_names(op)) & derived for op in backward_operands(ctx, scope))


# -- order inside one iteration ------------------------------------------------------------------
def block_position(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode):
    """Where ``a`` and ``b`` first share a block: ``(block_owner, index_a, index_b)`` with the indexes
    of the statements of that block that hold them, or None when they only meet in an expression, in
    different branches of an ``if``/``try``, or across a function boundary."""
    chain_a: List[cst.CSTNode] = [a]
    chain_a.extend(ctx.ancestors(a))
    ids = {n: i for i, n in enumerate(chain_a)}
    child_b = b
    for anc in ctx.ancestors(b):
        if anc in ids:
            i = ids[anc]
            child_a = chain_a[i - 1] if i > 0 else a
            if isinstance(anc, (cst.IndentedBlock, cst.Module, cst.SimpleStatementLine)):
                index = {id(s): k for k, s in enumerate(anc.body)}
                if id(child_a) in index and id(child_b) in index:
                    return anc, index[id(child_a)], index[id(child_b)]
            return None
        if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
            return None
        child_b = anc
    return None


def calls_through_helpers(ctx: FileContext, node: cst.CSTNode, depth: int = 1) -> List[Tuple[cst.Call, cst.Call]]:
    """Every call under ``node`` as ``(call, where)``: ``where`` is the call in ``node`` itself that leads
    to it (the call for direct ones; a same-module helper call for calls inside that helper)."""
    out: List[Tuple[cst.Call, cst.Call]] = []
    _calls_through(ctx, node, None, depth, out, {node})
    return out


def _calls_through(ctx: FileContext, n: cst.CSTNode, via: Optional[cst.Call], d: int,
                   out: List[Tuple[cst.Call, cst.Call]], seen: Set[cst.CSTNode]) -> None:
    # (a function of the module, not a closure: a recursive closure is a reference cycle, and what it
    # collected would wait for the garbage collector)
    for call in ctx.calls_in(n):
        out.append((call, via or call))
        if d > 0:
            target = ctx.function_for_call(call)
            if target is not None and target not in seen:
                seen.add(target)
                _calls_through(ctx, target, via or call, d - 1, out, seen)
