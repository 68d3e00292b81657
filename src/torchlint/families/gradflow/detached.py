"""Terms of a backpropagated loss that are cut off the autograd graph.

A backward pass (``loss.backward()``, ``scaler.scale(loss).backward()``) differentiates the loss; the
loss is split into its terms through ``+``/``-`` and through the local names it is built from
(``loss = task + reg``, ``loss += reg``).  A term is *detached* when it carries data of the model (its
output, its parameters) but reaches it only through a value taken off the graph: ``.item()``,
``float(t)``, ``.detach()``, ``.data``, ``.numpy()``/``.tolist()``, a new tensor built from numbers
(``torch.tensor([... .item() ...])``), or a value computed under ``torch.no_grad()``.  A product is a
detached term only when every factor is detached or carries no model data (``weight * penalty``):
``task * w.detach()`` scales a term that keeps its graph.  Arguments of calls are not terms: a detached
target (``F.mse_loss(student(x), teacher(x).detach())``) leaves the loss its graph.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis import effects
from torchlint.analysis.context import Fact, FileContext, method_name, receiver, run_object
from torchlint.analysis.definitions import (appended_values, arguments_for_param, called_function, find_method,
                                          function_returns, instance_class, position, same_reference)
from torchlint.analysis.training import backward_operand, base_names, is_backward, under_no_grad
from torchlint.analysis.walk import children, iter_nodes

#: tensor methods that take the value off the graph
_OFF_GRAPH_METHODS = {"item": "`.item()`", "detach": "`.detach()`", "numpy": "`.numpy()`", "tolist": "`.tolist()`"}
#: builtins that turn a tensor into a Python number
_OFF_GRAPH_BUILTINS = {"float": "`float()`", "int": "`int()`"}
#: torch functions that build a new leaf tensor from the data they are given
_NEW_LEAF = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor",
                       "torch.cuda.FloatTensor", "torch.from_numpy", "numpy.array", "numpy.asarray"})
#: libraries whose functions return arrays or Python numbers (off the graph) when given tensors
_NUMBER_LIBRARIES = ("numpy.", "math.")
#: methods that keep whether a value is on the graph (reductions, moves, reshapes)
_KEEPING = frozenset({"sum", "mean", "to", "cuda", "cpu", "float", "double", "half", "view", "reshape",
                      "squeeze", "unsqueeze", "flatten", "abs", "pow", "sqrt", "clone", "contiguous"})
#: what reading model data looks like without a call of the model
_PARAMETER_READS = frozenset({"parameters", "named_parameters"})

#: methods of a model that compute nothing from its parameters
_NOT_COMPUTING = frozenset({"state_dict", "train", "eval", "zero_grad", "to", "cuda", "cpu", "modules", "children",
                            "named_modules", "named_children", "buffers", "named_buffers", "apply",
                            "load_state_dict", "requires_grad_", "half", "float", "double", "register_buffer"})

_MAX_HOPS = 6
#: how far :func:`model_data` follows a value back (names, unpackings, lists, parameters) to a model
_MAX_DATA_HOPS = 10
#: the values each method of the file returns (outside nested functions, not under ``no_grad``)
_RETURNS: "Fact[Dict[cst.FunctionDef, List[cst.BaseExpression]]]" = Fact("gradflow.method_returns", lambda ctx: {})
#: id(expression) -> (whether it is model data, the hops that were left when that was found)
_MODEL_DATA: "Fact[Dict[int, Tuple[bool, int]]]" = Fact("gradflow.model_data", lambda ctx: {})


@dataclass(frozen=True)
class DetachedTerm:
    """``term``: the expression that is added to the loss; ``how``: what cuts it off the graph;
    ``backward``: the backward call whose loss it is part of; ``whole``: the term is the whole loss."""

    term: cst.BaseExpression
    how: str
    backward: cst.Call
    whole: bool = False


def detached_terms(ctx: FileContext) -> List[DetachedTerm]:
    """Every detached term of a backpropagated loss in the file (see the module's docstring).  Ask after
    the walk."""
    out: List[DetachedTerm] = []
    seen: Set[int] = set()
    backwards = [call for call in ctx.calls_in(ctx.module) if is_backward(ctx, call)]
    for call in backwards:
        operand = backward_operand(ctx, call)
        if operand is None:
            continue
        for term, how in _terms(ctx, operand, 0, set()):
            if id(term) not in seen and not _trained_by_another_loss(ctx, term, call, backwards):
                seen.add(id(term))
                out.append(DetachedTerm(term, how, call, term is operand))
    return out


def _trained_by_another_loss(ctx: FileContext, term: cst.BaseExpression, backward: cst.Call,
                             backwards: List[cst.Call]) -> bool:
    """Whether a local value the detached ``term`` is computed from is on the graph of another loss that
    the same function backpropagates (the value of ``v_pred = self.vf(state)`` in ``q_pred -
    v_pred.detach()`` and in ``vf_loss = F.mse_loss(v_pred, target)``, ``vf_loss.backward()``): the model
    behind it is trained by that loss, and the detach keeps this one from training it too (an
    actor-critic's baseline).  Values, not names: ``outputs = D(fake)`` bound again for the generator's
    loss is another value than the ``outputs = D(real)`` a detached discriminator term reads."""
    function = ctx.enclosing(backward, (cst.FunctionDef, cst.Lambda))
    others = [b for b in backwards if b is not backward and not ctx.exclusive(b, backward)
              and ctx.enclosing(b, (cst.FunctionDef, cst.Lambda)) is function]
    if not others:
        return False
    inside = _graph_values(ctx, _under_the_cut(ctx, term))
    if not inside:
        return False
    for other in others:
        operand = backward_operand(ctx, other)
        if operand is not None and inside & _graph_values(ctx, operand):
            return True
    return False


def _kept(e: cst.BaseExpression) -> cst.BaseExpression:
    """``e`` under the methods that keep whether a value is on the graph (``x.item()`` for
    ``x.item().mean().to(device)``)."""
    while isinstance(e, cst.Call) and method_name(e) in _KEEPING and receiver(e) is not None:
        e = receiver(e)  # type: ignore[assignment]
    return e


def _under_the_cut(ctx: FileContext, term: cst.BaseExpression) -> cst.BaseExpression:
    """What the detached ``term`` takes off the graph: ``v`` for ``v.detach()`` (also through a local name
    bound to it, and the methods that keep the graph around the cut)."""
    e: cst.BaseExpression = term
    for _ in range(3):
        e = _kept(e)
        if isinstance(e, cst.Call) and method_name(e) in _OFF_GRAPH_METHODS and receiver(e) is not None:
            return receiver(e)  # type: ignore[return-value]
        if isinstance(e, cst.Attribute) and e.attr.value == "data":
            return e.value
        if not isinstance(e, cst.Name):
            break
        value = ctx.names.value_of(e)
        if value is None:
            break
        e = value
    return term


def _graph_values(ctx: FileContext, expr: cst.BaseExpression, hops: int = 4) -> Set[int]:
    """The model outputs (by node) that the local names ``expr`` is computed from hold, each name followed
    to the value it holds where it is read (``hops`` deep), not through a value taken off the graph
    (``.detach()``, ``.item()``, ``.data``)."""
    out: Set[int] = set()
    stack = [(expr, 0)]
    seen: Set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if (isinstance(node, cst.Call) and method_name(node) in _OFF_GRAPH_METHODS and not node.args) \
                or (isinstance(node, cst.Attribute) and node.attr.value == "data"):
            continue
        if isinstance(node, cst.Attribute):
            stack.append((node.value, depth))  # not the attribute's name
            continue
        if isinstance(node, cst.Name):
            value = ctx.names.value_of(node)
            if value is not None:  # a local value (not `self`, a parameter, a module)
                if isinstance(value, cst.Call) and model_data(ctx, value, _MAX_DATA_HOPS - 1):
                    out.add(id(value))  # a model's output (`v_pred = self.vf(state)`), not a label or a batch
                if depth < hops:
                    stack.append((value, depth + 1))
            continue
        stack.extend((kid, depth) for kid in children(node))
    return out


def _terms(ctx: FileContext, expr: cst.BaseExpression, hops: int, visited: Set[int], whole: bool = True):
    """``(term, how)`` for the detached terms of the sum ``expr``; ``whole``: ``expr`` is added to the loss
    as it is, or scaled by a number (not a factor of a product that may carry the graph)."""
    if hops > _MAX_HOPS or id(expr) in visited:
        return
    visited.add(id(expr))
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Subtract)):
            # the terms of one sum are as far from the loss as the sum is (`a + b + c + d` nests three deep):
            # only following a name to its value costs a hop
            yield from _terms(ctx, expr.left, hops, visited, whole)
            yield from _terms(ctx, expr.right, hops, visited, whole)
            return
        if isinstance(expr.operator, (cst.Multiply, cst.Divide)):
            how = _detached_product(ctx, expr, hops)
            if how is not None:
                yield expr, how
                return
            for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
                # `0.5 * (task + reg.item())` spreads over the sum; `probs * (log_pi - q)` weighs the sum by a
                # factor with a graph: `q` computed without one is a weight there, not a term (as above)
                if _off_graph(ctx, side, hops + 1) is None \
                        and not (model_data(ctx, other, hops + 1) or _from_trainable_leaf(ctx, other)
                                 or _unpacked_unknown(ctx, other)):
                    yield from _terms(ctx, side, hops + 1, visited,
                                      whole and isinstance(other, (cst.Integer, cst.Float)))
            return
    if isinstance(expr, cst.UnaryOperation):
        yield from _terms(ctx, expr.expression, hops + 1, visited, whole)
        return
    if isinstance(expr, cst.Call) and method_name(expr) in ("sum", "mean") and not expr.args:
        inner = receiver(expr)
        if inner is not None and _off_graph(ctx, expr, hops) is None:
            yield from _terms(ctx, inner, hops + 1, visited, whole)
            return
    how = _off_graph(ctx, expr, hops) or (_cut_by_hand(ctx, expr) if whole else None)
    if how is not None:
        yield expr, how
        return
    if isinstance(expr, cst.Call):
        for r in _method_returns(ctx, expr):  # `loss = self.compute_loss(x, y)`: the terms it returns
            yield from _terms(ctx, r, hops + 1, visited, whole)
        return
    if isinstance(expr, cst.Attribute):
        value = ctx.names.reaching_attribute_value(expr)  # `self.loss_G = self.loss_A + self.loss_B`, then `self.loss_G.backward()`
        if value is not None:
            yield from _terms(ctx, value, hops + 1, visited, whole)
        return
    if isinstance(expr, cst.Name):
        value = ctx.names.value_of(expr, through_updates=True)  # the updates (`loss += reg`): below
        if value is not None:
            yield from _terms(ctx, value, hops + 1, visited, whole)
            for other in _branch_values(ctx, expr, value):  # `if a: loss = x + y` / `else: loss = x + z`
                yield from _terms(ctx, other, hops + 1, visited, whole)
        for aug in _augmented(ctx, expr):
            yield from _terms(ctx, aug.value, hops + 1, visited, whole)


def _if_root(ctx: FileContext, node: cst.CSTNode) -> Optional[cst.If]:
    """The ``if`` statement (the head of an ``if``/``elif`` chain) whose branch holds ``node``."""
    found = ctx.enclosing(node, cst.If)
    while found is not None and isinstance(ctx.parent(found), cst.If):
        found = ctx.parent(found)  # an `elif`: the chain's head
    return found  # type: ignore[return-value]


def _branch_values(ctx: FileContext, name: cst.Name, value: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The other values ``name`` is bound to in the other branches of the ``if`` chain that binds it to
    ``value``, when the read is after that chain (each branch's value may be the one read)."""
    root = _if_root(ctx, value)
    if root is None or ctx.is_inside(name, root):
        return []
    out = []
    for other in ctx.names.values_before(name):
        if other is not value and not ctx.is_inside(name, other) and _if_root(ctx, other) is root \
                and ctx.enclosing(other, (cst.FunctionDef, cst.Lambda)) is ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)):
            out.append(other)
    return out[:4]


def _augmented(ctx: FileContext, name: cst.Name) -> List[cst.AugAssign]:
    """``loss += reg`` (and ``-=``) of the local ``name`` before ``name``, in the same function."""
    scope = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)) or ctx.module
    at = ctx.names.position(name)
    out = []
    for a in ctx.contents(scope).assigns:
        if (isinstance(a, cst.AugAssign) and isinstance(a.target, cst.Name) and a.target.value == name.value
                and isinstance(a.operator, (cst.AddAssign, cst.SubtractAssign)) and ctx.names.position(a) < at
                and (ctx.enclosing(a, (cst.FunctionDef, cst.Lambda)) or ctx.module) is scope):
            out.append(a)
    return out


def _detached_product(ctx: FileContext, expr: cst.BinaryOperation, hops: int) -> Optional[str]:
    """How a product is cut off the graph: some factor is, and no other factor carries model data."""
    factors: List[cst.BaseExpression] = []
    stack: List[cst.BaseExpression] = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Multiply, cst.Divide)):
            stack.extend((e.left, e.right))
        else:
            factors.append(e)
    how = None
    for f in factors:
        found = _off_graph(ctx, f, hops + 1)
        if found is not None:
            how = how or found
        elif model_data(ctx, f, hops + 1) or _from_trainable_leaf(ctx, f) or _unpacked_unknown(ctx, f):
            return None
    return how


def _unpacked_unknown(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` (maybe negated) is a local name last bound by unpacking a value that is not
    followed (``state, log_prob, reward = self.transition``): it may carry a graph (the log-probability
    an A2C update weighs by its detached advantage), so the product is no detached term for certain."""
    while isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if not isinstance(expr, cst.Name):
        return False
    bound = ctx.names.bound_values(expr)
    return bool(bound) and bound[-1] is None and bool(ctx.names.unpacked_values(expr))


#: constructors whose result is a tensor that takes gradients itself
_PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _from_trainable_leaf(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether ``expr`` reads a tensor made to take gradients itself -- built with ``requires_grad=True``,
    as an ``nn.Parameter`` or through ``.requires_grad_()`` -- held by a local name or by ``self.<attr>``
    set in the constructor (SAC's ``self.log_alpha = torch.zeros(1, requires_grad=True)``): a product with
    it keeps a graph to that tensor (``log_alpha * (log_pi + target).detach()`` trains ``log_alpha``).
    A tensor switched on afterwards (``self.log_alpha.requires_grad = True``) is one too, and so is what a
    property of the class returns from one (``self.alpha`` returning ``self.log_alpha.exp()``)."""
    if depth > 2:
        return False
    for node in iter_nodes(expr):
        values: List[cst.BaseExpression] = []
        if isinstance(node, cst.Name):
            value = ctx.names.value_of(node)
            if value is not None and value is not expr:
                values.append(value)
            if _switched_on(ctx, node, ctx.enclosing(node, cst.FunctionDef) or ctx.module):
                return True
        elif isinstance(node, cst.Attribute):
            found = effects.self_attr(ctx, node)
            if found is not None:
                try:
                    values.extend(effects.self_values(ctx, found[0], found[1]))
                except effects.Unknown:
                    pass
                if _switched_on(ctx, node, found[0]):
                    return True
                method = find_method(ctx, found[0], found[1])
                if method is not None and _is_property(method[1]) and any(
                        r.value is not None and _cut_here(method[0], r.value) is None
                        and _from_trainable_leaf(method[0], r.value, depth + 1) for r in function_returns(method[1])):
                    return True
        if any(_trainable_construction(ctx, v) for v in values):
            return True
    return False


def _is_property(function: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in function.decorators)


def _switched_on(ctx: FileContext, ref: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """``<ref>.requires_grad = True`` somewhere in ``scope`` (the function, or the class of ``self.<attr>``)."""
    for a in ctx.contents(scope).assigns:
        if isinstance(a, cst.Assign) and isinstance(a.value, cst.Name) and a.value.value == "True" and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad"
                and same_reference(t.target.value, ref) for t in a.targets):
            return True
    return False


def _trained(ctx: FileContext, name: cst.Name) -> bool:
    """Whether the tensor ``name`` holds is trained in its scope: given to a ``torch.optim`` optimizer
    (``SGD([w, b], lr)``) or updated by hand (``w -= lr * w.grad``, ``w.data.sub_(...)``), not only
    differentiated to show what autograd does."""
    scope = ctx.enclosing(name, cst.FunctionDef) or ctx.module
    for call in ctx.calls_in(scope):
        if any(q.startswith("torch.optim.") for q in ctx.names.qualified_names_at(call.func)) and call.args and any(
                isinstance(n, cst.Name) and n.value == name.value for n in iter_nodes(call.args[0].value)):
            return True
        if method_name(call) in ("sub_", "add_") and base_names(call.func) == [name.value]:
            return True  # `w.data.sub_(lr * w.grad.data)`
    for a in ctx.contents(scope).assigns:
        if isinstance(a, cst.AugAssign) and base_names(a.target) == [name.value] and isinstance(
                a.operator, (cst.SubtractAssign, cst.AddAssign)):
            return True
    return False


def _trainable_construction(ctx: FileContext, value: cst.BaseExpression) -> bool:
    e = value
    while isinstance(e, cst.Call):
        if any(a.keyword is not None and a.keyword.value == "requires_grad" and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in e.args):
            return True
        if ctx.names.qualified_names_at(e.func) & _PARAMETER_CLASSES:
            return True
        name = method_name(e)
        if name == "requires_grad_" and (not e.args or ctx.code(e.args[0].value) == "True"):
            return True
        if name not in _KEEPING:
            return False
        inner = receiver(e)
        if inner is None:
            return False
        e = inner
    return False


def _off_graph(ctx: FileContext, expr: cst.BaseExpression, hops: int) -> Optional[str]:
    """How ``expr`` carries model data only off the graph, or None."""
    if hops > _MAX_HOPS:
        return None
    e = expr
    e = _kept(e)  # `x.item()` under `.mean()`, `.to(device)`
    if isinstance(e, cst.Call):
        name = method_name(e)
        inner = receiver(e)
        if name in _OFF_GRAPH_METHODS and inner is not None and not e.args:
            return _OFF_GRAPH_METHODS[name] if model_data(ctx, inner, hops + 1) else None
        if isinstance(e.func, cst.Name) and e.func.value in _OFF_GRAPH_BUILTINS and len(e.args) == 1:
            if ctx.names.binding_at(e.func, e.func.value) is None and model_data(ctx, e.args[0].value, hops + 1):
                return _OFF_GRAPH_BUILTINS[e.func.value]
            return None
        if ctx.names.qualified_names_at(e.func) & _NEW_LEAF and e.args and e.args[0].keyword is None:
            if model_data(ctx, e.args[0].value, hops + 1):
                return f"`{ctx.code(e.func)}(...)`"
            return None
        if any(q.startswith(_NUMBER_LIBRARIES) for q in ctx.names.qualified_names_at(e.func)):
            # `np.mean(out.detach().numpy())`, `math.log(t)`: an array or a Python number, never a tensor
            if any(model_data(ctx, a.value, hops + 1) for a in e.args):
                return f"`{ctx.code(e.func)}(...)`"
            return None
        return _helper_off_graph(ctx, e, hops)
    if isinstance(e, cst.Attribute) and e.attr.value == "data":
        return "`.data`" if model_data(ctx, e.value, hops + 1) else None
    if isinstance(e, cst.Name):
        value = ctx.names.value_of(e)
        if value is None:
            return None
        if under_no_grad(ctx, value) and not under_no_grad(ctx, e) and model_data(ctx, value, hops + 1):
            return "`torch.no_grad()`"
        if isinstance(value, (cst.Call, cst.Attribute, cst.Name)):
            return _off_graph(ctx, value, hops + 1)
    return None


def _cut_by_hand(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """A whole term the code takes off the graph itself, ``(w * loss_cls).detach()`` or ``kl.data``, where
    the value it cuts is computed (a call or arithmetic, or a local name bound to one): the cut is the
    author's word that the value has a graph, whatever computes it, and a term added to a backpropagated
    loss without its graph trains nothing.  (A cut value that another loss of the function trains is an
    actor-critic's baseline: :func:`_trained_by_another_loss`.)"""
    e = expr
    e = _kept(e)
    if isinstance(e, cst.Call) and method_name(e) == "detach" and not e.args and receiver(e) is not None:
        inner, how = receiver(e), "`.detach()`"
    elif isinstance(e, cst.Attribute) and e.attr.value == "data":
        inner, how = e.value, "`.data`"
    else:
        return None
    return how if _run_by_objects(ctx, inner, 0) else None


def _run_by_objects(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    """Whether ``expr`` is computed by calling an object or a function of the code's own (``student(x)``,
    ``criterion(out, y)`` with ``criterion = criteria[0]``), through arithmetic, library calls and local
    names: what may hold parameters.  Library calls on data alone (``torch.stack(bonus)`` of tensors built
    from numbers) are not."""
    if depth > 4:
        return False
    if isinstance(expr, cst.BinaryOperation):
        return _run_by_objects(ctx, expr.left, depth + 1) or _run_by_objects(ctx, expr.right, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _run_by_objects(ctx, expr.expression, depth + 1)
    if isinstance(expr, cst.Name):
        value = ctx.names.value_of(expr)
        return value is not None and _run_by_objects(ctx, value, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    inner = receiver(expr)
    if inner is not None and method_name(expr) is not None and not ctx.names.qualified_names_at(expr.func):
        # a tensor method (`x.sum()`, `out.log_softmax(-1)`) keeps what its receiver is computed by
        if isinstance(inner, cst.Name) and ctx.names.value_of(inner) is None:
            return False
        if _run_by_objects(ctx, inner, depth + 1):
            return True
        return any(_run_by_objects(ctx, a.value, depth + 1) for a in expr.args)
    if ctx.names.qualified_names_at(expr.func):
        return any(_run_by_objects(ctx, a.value, depth + 1) for a in expr.args)  # a library function
    return isinstance(expr.func, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))


def _helper_off_graph(ctx: FileContext, call: cst.Call, hops: int) -> Optional[str]:
    """``l2_penalty(model)``: a function of this file given the model (or a value computed from it) whose
    every return takes its value off the graph (``return torch.tensor(...)``, ``return x.item()``)."""
    target = called_function(ctx, call)
    called = None
    if target is None and isinstance(call.func, (cst.Name, cst.Attribute)):
        # `content(sr, hr)` with `content = ContentLoss()`: the `forward` of a project module class
        found = instance_class(ctx, call.func)
        target = find_method(found[0], found[1], "forward") if found is not None else None
        called = f"{found[1].name.value}.forward" if target is not None and found is not None else None
    elif target is not None and target[0] is not ctx:
        return None
    if target is None:
        return None
    where, function = target[0], target[1]
    if not any(_holds_model(ctx, a.value) or model_data(ctx, a.value, hops + 1) for a in call.args):
        return None
    returns = [r for r in iter_nodes(function.body) if isinstance(r, cst.Return)
               and where.enclosing(r, (cst.FunctionDef, cst.Lambda)) is function]
    if not returns or any(r.value is None for r in returns):
        return None
    hows = set()
    for r in returns:
        how = _cut_here(where, r.value)
        if how is None:
            return None
        hows.add(how)
    return f"`{called or function.name.value}()`, which returns a value off the graph ({', '.join(sorted(hows))})"


def _cut_here(ctx: FileContext, expr: cst.BaseExpression) -> Optional[str]:
    """What takes ``expr`` off the graph by its own spelling, whatever it is computed from."""
    e = expr
    e = _kept(e)
    if isinstance(e, cst.Call):
        name = method_name(e)
        if name in _OFF_GRAPH_METHODS and receiver(e) is not None and not e.args:
            return _OFF_GRAPH_METHODS[name]
        if isinstance(e.func, cst.Name) and e.func.value in _OFF_GRAPH_BUILTINS and len(e.args) == 1 \
                and ctx.names.binding_at(e.func, e.func.value) is None:
            return _OFF_GRAPH_BUILTINS[e.func.value]
        if ctx.names.qualified_names_at(e.func) & _NEW_LEAF and e.args and e.args[0].keyword is None \
                and not isinstance(e.args[0].value, (cst.Integer, cst.Float)):
            return f"`{ctx.code(e.func)}(...)`"
        return None
    if isinstance(e, cst.Attribute) and e.attr.value == "data":
        return "`.data`"
    if isinstance(e, cst.Name):
        value = ctx.names.value_of(e)
        if value is not None and under_no_grad(ctx, value) and not under_no_grad(ctx, e):
            return "`torch.no_grad()`"
        if value is not None and isinstance(value, cst.Call):
            return _cut_here(ctx, value)
    return None


def model_data(ctx: FileContext, expr: cst.BaseExpression, hops: int = 0) -> bool:
    """Whether ``expr`` is computed from a model: a call of a model (``model(x)``, ``self.net(x)``,
    ``model.forward(x)``), its parameters (``model.parameters()``, ``.weight``), a tensor made to take
    gradients itself and trained (``w = torch.zeros(3, requires_grad=True)`` given to an optimizer or
    updated by hand), or a local name bound to such a value (a comprehension's variable over the parameters
    too)."""
    if hops > _MAX_DATA_HOPS:
        return False
    # each expression is asked once per budget: a True holds whatever the budget, a False for any budget
    # not larger than the one it was found with (without this, the names read per line raised to the
    # number of hops)
    known = _MODEL_DATA.of(ctx)
    found = known.get(id(expr))
    if found is not None and (found[0] or found[1] >= _MAX_DATA_HOPS - hops):
        return found[0]
    answer = _model_data(ctx, expr, hops)
    if found is None or answer or found[1] < _MAX_DATA_HOPS - hops:
        known[id(expr)] = (answer, _MAX_DATA_HOPS - hops)
    return answer


def _model_data(ctx: FileContext, expr: cst.BaseExpression, hops: int) -> bool:
    for node in iter_nodes(expr):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETER_READS:
                return True
            callee = run_object(func)
            if isinstance(callee, (cst.Name, cst.Attribute)) and _holds_model(ctx, callee):
                return True
            if (isinstance(callee, cst.Attribute) and callee.attr.value not in _NOT_COMPUTING
                    and isinstance(callee.value, (cst.Name, cst.Attribute)) and _holds_model(ctx, callee.value)):
                return True  # `model.encoder(x)`, `model.encode(x)`
            if _method_returns_model_data(ctx, node, hops):
                return True  # `self.l2_penalty()`: a method of the trainer computing from the model
        elif isinstance(node, cst.Attribute) and node.attr.value in ("weight", "bias"):
            owner = node.value
            while isinstance(owner, (cst.Name, cst.Attribute)):  # `model.fc.weight`: a layer of a model
                if _holds_model(ctx, owner):
                    return True
                owner = owner.value if isinstance(owner, cst.Attribute) else None
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and not node.attr.value.startswith("__") and node.attr.value not in _NOT_COMPUTING \
                and node.attr.value != "training" and not _called(ctx, node) and _holds_model(ctx, node.value):
            return True  # `model.saved_log_probs`: what the model's forward pass stored on it
        elif isinstance(node, cst.Attribute) and not _called(ctx, node) \
                and (held := ctx.names.reaching_attribute_value(node)) is not None and held is not expr \
                and model_data(ctx, held, hops + 1):
            return True  # `self.loss_adv = self.critic(out).mean()` earlier in the method
        elif isinstance(node, cst.Name):
            value = ctx.names.value_of(node)
            if value is not None and value is not expr and model_data(ctx, value, hops + 1):
                return True
            if value is not None and _trainable_construction(ctx, value) and _trained(ctx, node):
                return True  # `w = torch.zeros(3, requires_grad=True)` handed to an optimizer: a weight it trains
            if isinstance(value, cst.List) and any(model_data(ctx, v, hops + 1) for v in appended_values(ctx, node)):
                return True  # `losses.append(-log_prob * advantage)`; `torch.stack(losses)`
            if value is None and any(model_data(ctx, a.value, hops + 1) for a in _augmented(ctx, node)):
                return True  # `content_loss += torch.mean((f1 - f2) ** 2)` over the model's features
            if value is None:
                source = effects.unpacked(ctx, node)  # `out, mu, logvar = model(x)`: an element of its output
                if source is not None and source[0] is not expr and model_data(ctx, source[0], hops + 1):
                    return True
                if source is None and _unpacked_from_model(ctx, node, expr, hops):
                    return True  # `loss_a, loss_b = model(x)` in each arm of an `if`
                args = arguments_for_param(ctx, node)
                if args and all(model_data(ctx, a, hops + 1) for a in args):
                    return True  # a parameter every call of the function in this file fills with model data
                if _iterated_over_model(ctx, node, hops):
                    return True
    return False


def _unpacked_from_model(ctx: FileContext, name: cst.Name, expr: cst.BaseExpression, hops: int) -> bool:
    """Whether every unpacking before ``name`` in its scope binds it to an element of model data
    (``cls_loss, reg_loss = model(batch)`` in one arm of an ``if`` and again in the other, where no single
    assignment reaches the read); one that unpacks anything else may be the one that reaches it."""
    at = position(ctx, name)
    before = [value for value, _index in ctx.names.unpacked_values(name) if position(ctx, value) < at]
    return bool(before) and all(value is not expr and model_data(ctx, value, hops + 1) for value in before)


def _holds_model(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether ``expr`` holds a model by what the code does with it, weak evidence included
    (:func:`effects.model_evidence`): a parameter whose ``train()``, ``zero_grad()`` or ``parameters()`` the
    function calls, or that every caller gives a model, is one."""
    return effects.model_evidence(ctx, expr) in (effects.STRONG, effects.WEAK)


def _called(ctx: FileContext, node: cst.Attribute) -> bool:
    parent = ctx.parent(node)
    return isinstance(parent, cst.Call) and parent.func is node


def _method_returns(ctx: FileContext, call: cst.Call) -> List[cst.BaseExpression]:
    """The values ``self.<method>(...)`` returns, for a method of the class around the call (not a
    module's ``forward``): each ``return`` of it, outside nested functions and not under ``no_grad``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return []
    function = ctx.function_for_call(call)
    if function is None or function.decorators or function.name.value == "forward":
        return []
    known = _RETURNS.of(ctx)
    if function not in known:
        known[function] = [r.value for r in iter_nodes(function.body) if isinstance(r, cst.Return)
                           and r.value is not None and ctx.enclosing(r, (cst.FunctionDef, cst.Lambda)) is function
                           and not under_no_grad(ctx, r)]
    return known[function]


def _method_returns_model_data(ctx: FileContext, call: cst.Call, hops: int) -> bool:
    """``self.penalty()``: a method of the class around the call (one that is not a module's own
    ``forward``) some return of which is computed from a model."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return False
    return any(model_data(ctx, r, hops + 1) for r in _method_returns(ctx, call))


def _iterated_over_model(ctx: FileContext, name: cst.Name, hops: int) -> bool:
    """``p`` in ``[p.norm() for p in model.parameters()]`` or ``for p in model.parameters():``."""
    for a in ctx.ancestors(name):
        fors = []
        if isinstance(a, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            f: Optional[cst.CompFor] = a.for_in
            while f is not None:
                fors.append(f)
                f = f.inner_for_in
        elif isinstance(a, cst.For):
            fors.append(a)
        for f in fors:
            if any(isinstance(t, cst.Name) and t.value == name.value for t in iter_nodes(f.target)):
                return model_data(ctx, f.iter, hops + 1)
        if isinstance(a, (cst.FunctionDef, cst.Lambda)):
            break
    return False


__all__ = ["DetachedTerm", "detached_terms", "model_data"]
