"""Which tensors carry a batch dimension: the data flow from a model's output or a loader's batch.

A value has *batch evidence* when its data comes, through operations that keep the leading dimension,
from

- the output of a model or layer: ``model(x)``, ``self.head(h)``, ``self(**batch)`` in a model's own
  method, ``model.forward(x)``, a method of a model (``vae.decode(z)``), or a tuple element or attribute
  of one (``outputs[0]``, ``outputs.logits``);
- a batch drawn from a data loader: the target of ``for x, y in loader`` (also through ``enumerate``,
  ``tqdm``, ``zip``), or the ``batch`` parameter of a Lightning step method (``training_step``, ...);
- the inputs of a model's ``forward`` (the parameters after ``self`` of ``forward`` in an ``nn.Module``),
  and what the model's own methods make of a batch (``feats = self.features(x)``, a part's step
  ``self.core.step(memory, state)``);

where the operations that keep it are element-wise arithmetic, activations, casts and moves, views,
products and copies (``bmm``, ``matmul``, ``repeat``), indexing and reductions over a dimension other than
the first, and a helper of the file that hands a parameter back through them (``return t.repeat(k, 1)``).  A model is recognised by how it is
built (``nn.Module`` subclasses, layers, ``from_pretrained``: the program model) or, for a parameter
whose construction is not in view, by a model's name (``model``, ``net``, ``encoder``) -- the same
fallback the evaluation rules use.

Everything else has no evidence: tensors computed from a function's plain parameters, from module
state, from files, or by calls this does not follow.  Rules that report a hazard only where a batch
dimension exists (``squeeze()`` without a dim) use this to stay silent on library code whose tensors are
per-output statistics, kernels or tables.

A batch of one made on purpose is the other side (:func:`fed_one_sample`): a model call given an input
built with a leading 1 (``torch.randint(n, (1, 1))``, ``x.unsqueeze(0)``), the encoding of one text, or a
state a method of the project builds with the literal 1 as a size (``model.init_hidden(1)`` with
``weight.new_zeros(layers, batch, hidden)``; for a model read back from a checkpoint, whose class is
unknown, every class in view that defines the method must build it so).

Queries are made once the file's walk is done (positions are those of the finished walk).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchlint.analysis import definitions, effects, roles
from torchlint.analysis.context import Fact, FileContext, arg, assignment_targets, canonical_keyword, run_object
from torchlint.families.training.evaluation import model_of_call
from torchlint.analysis.naming import is_model_name
from torchlint.analysis.mode_layers import number
from torchlint.analysis.names import dotted_name, target_names
from torchlint.analysis.training import flows_into_backward, is_loss_call
from torchlint.analysis.walk import iter_nodes
from torchlint.families.shapes.shapes import (DATA_CONSTRUCTORS, SIZE_CONSTRUCTORS, Shape, param_annotation, shape_of,
                                              split_source)

#: tensor methods whose result keeps the leading (batch) dimension of the receiver
_KEEPS = frozenset({
    "float", "double", "half", "bfloat16", "long", "int", "bool", "to", "cpu", "cuda", "detach", "clone",
    "contiguous", "type", "type_as", "sigmoid", "softmax", "log_softmax", "exp", "log", "abs", "relu", "tanh",
    "neg", "sqrt", "pow", "mul", "add", "sub", "div", "clamp", "clamp_min", "clamp_max", "view", "reshape",
    "view_as", "reshape_as", "flatten", "unsqueeze", "squeeze", "round", "sign", "masked_fill", "gt", "lt",
    "ge", "le", "eq", "ne", "transpose", "permute", "float_power", "requires_grad_", "detach_",
    # products and copies: the rows of the receiver stay rows (`attn.bmm(enc)`, `h.repeat(k, 1)`)
    "bmm", "matmul", "mm", "repeat", "expand", "expand_as", "repeat_interleave",
})
#: reductions: the batch is kept when they run over another dimension
_REDUCTIONS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "prod", "logsumexp", "std", "var",
    "median", "nansum", "nanmean", "topk", "sort", "argsort", "cumsum", "all", "any",
})
#: the reductions among them over every dimension when given none, whose second argument as torch functions is
#: the dimension (``torch.mean(x, 0)``; not ``torch.norm(x, p)``, nor ``torch.sort(x)`` over the last one)
_WHOLE_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "logsumexp",
                               "std", "var", "median", "nansum", "nanmean", "all", "any"})
#: attributes of a tensor or of a model's output object that keep the batch
_ATTRS = frozenset({"data", "T", "mT", "values", "indices", "logits", "last_hidden_state", "pooler_output",
                    "hidden_states", "sample", "audio_values", "pred", "preds", "prediction", "predictions",
                    "scores", "embeddings", "image_embeds", "text_embeds"})
#: selections along a dimension: the batch is kept when they select along another (a literal dim, not 0)
_SELECTIONS = frozenset({"gather", "index_select", "narrow", "select"})
_STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
_LOADER_NAME = re.compile(r"loader|(^|_)dl($|_)", re.IGNORECASE)
_WRAPPERS = frozenset({"enumerate", "tqdm", "zip", "iter", "islice"})
_MAX_DEPTH = 32
#: torch calls that make a batch out of samples
_PADDED_BATCH = frozenset({"torch.nn.utils.rnn.pad_sequence", "torch.nn.utils.rnn.pack_sequence"})


def batch_evidence(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether the data of ``expr`` comes from a model's output or a loader's batch (see the module)."""
    return _evidence(ctx, expr, 0)


#: id(expression) -> answer, for the file (its walk is done: answers do not change)
_MEMO: "Fact[Dict[int, bool]]" = Fact("batches.evidence")
#: scope -> name -> [(position, value)]
_ASSIGNS: "Fact[Dict[object, Dict[str, List[Tuple[int, cst.BaseExpression]]]]]" = Fact("batches.assigns")


def _evidence(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    return _once(ctx, _MEMO, expr, False, lambda: _evidence_of(ctx, expr, depth))  # a cycle: no evidence


def _once(ctx: FileContext, fact: "Fact[Dict[int, Any]]", expr: cst.BaseExpression, in_cycle: Any,
          compute: Callable[[], Any]) -> Any:
    """``compute()`` for ``expr``, asked once per expression of the file (its walk is done: answers do not
    change); ``in_cycle`` is the answer to a question that comes back to ``expr`` while it is computed."""
    memo = fact.get(ctx)
    if memo is None:
        memo = fact.put(ctx, {})
    key = id(expr)
    if key in memo:
        return memo[key]
    memo[key] = in_cycle
    found = memo[key] = compute()
    return found


def _evidence_of(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    if isinstance(expr, cst.Name):
        return _name_evidence(ctx, expr, depth)
    if isinstance(expr, cst.Attribute):
        if isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
            return False  # the instance's own state
        return expr.attr.value in _ATTRS and _evidence(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.Subscript):
        if isinstance(expr.value, cst.Name):
            elements, complete = definitions.list_elements(ctx, expr.value)
            if elements and complete:
                # `outs[-1]` of a list the code fills (`outs.append(h)`): an element, each one a batch
                return all(_evidence(ctx, e, depth + 1) for e in elements)
        if _row_selected(ctx, expr):
            return False  # `pred[0]`, `out[i]` of a tensor: one sample, its batch dimension is gone
        return _evidence(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return _evidence(ctx, expr.left, depth + 1) or _evidence(ctx, expr.right, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _evidence(ctx, expr.expression, depth + 1)
    if isinstance(expr, cst.Comparison):
        return _evidence(ctx, expr.left, depth + 1)
    if isinstance(expr, (cst.Tuple, cst.List)):  # `fx, fy = self.features(x), self.features(y)`
        return any(_evidence(ctx, el.value, depth + 1) for el in expr.elements)
    if isinstance(expr, cst.IfExp):
        return _evidence(ctx, expr.body, depth + 1) or _evidence(ctx, expr.orelse, depth + 1)
    if isinstance(expr, cst.Call):
        return _call_evidence(ctx, expr, depth)
    return False


def _call_evidence(ctx: FileContext, call: cst.Call, depth: int) -> bool:
    if model_call(ctx, call) or trained_by(ctx, call) is not None:
        return True
    if _helper_return(ctx, call, depth) is not None:
        return True  # `logits = predict(net, x)` with `def predict(net, x): return net(x)`
    if _method_return(ctx, call, depth) is not None:
        return True  # `v = self.value(s, h)` with `def value(self, x, h): ... return self.fc_v(x)`
    passed = _passed_through(ctx, call)
    if passed is not None and _evidence(ctx, passed, depth + 1):
        return True  # `_inflate(encoder_outputs, k, 0)` with `def _inflate(t, k, d): return t.repeat(...)`
    func = call.func
    qn = ctx.names.qualified_names(func)
    if qn:
        if qn & _PADDED_BATCH:
            return True  # `pad_sequence(seqs, batch_first=True)`: one row per sequence, a padded batch
        if any(q.startswith("torch.") for q in qn):  # torch.sigmoid(out), F.softmax(logits, 1), torch.cat([a, b])
            if any(q.rsplit(".", 1)[-1] in _WHOLE_REDUCTIONS for q in qn) and _over_batch(_dim_argument(call, 1)):
                return False  # `torch.mean(h, [0, 2, 3], keepdim=True)`: over the batch itself
            for a in call.args:
                if a.keyword is None and _tensor_argument_evidence(ctx, a.value, depth):
                    return True
        return False
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in _KEEPS:
            return _evidence(ctx, func.value, depth + 1)
        if method in _SELECTIONS:  # `out.gather(1, idx)`: picks along another dimension, every row kept
            dim = _dim_argument(call)
            return isinstance(dim, (cst.Integer, cst.UnaryOperation)) and ctx.code(dim).strip() not in ("0", "-0") \
                and _evidence(ctx, func.value, depth + 1)
        if method in _REDUCTIONS:
            if _over_batch(_dim_argument(call)):
                return False  # over everything, or over the batch itself
            return _evidence(ctx, func.value, depth + 1)
        owner = func.value
        if isinstance(owner, cst.Name) and owner.value == "self" and _model_method_on_batch(ctx, call, depth):
            return True
        if _submodule_method_on_batch(ctx, call, depth):
            return True
        name = dotted_name(owner)
        if name is not None and not ctx.names.qualified_names(owner):
            last = name.rsplit(".", 1)[-1]
            if (is_model_name(last) or roles.is_model(ctx, owner)) and not roles.not_a_module(ctx, owner):
                return True  # a model's own method: `vae.decode(z)`, `model.generate(ids)`
    return False


# -- what tensor operations do to the batch dimension ------------------------------------------------------
#: tensor methods and torch functions whose result is a tensor (not a tuple of outputs)
_TENSOR_RESULT = _KEEPS | frozenset({"softmax", "log_softmax", "sigmoid", "bmm", "matmul", "mm", "cat", "stack",
                                     "squeeze", "unsqueeze", "generate"})  # `generate`: the token ids, [B, T]


def _row_selected(ctx: FileContext, sub: cst.Subscript) -> bool:
    """``x[0]``, ``x[i]``, ``x[i, :]`` with ``x`` a tensor (not a tuple of outputs) and ``i`` an integer or the
    index of a loop over ``range``/``enumerate``: the first dimension is indexed away."""
    first = sub.slice[0].slice
    if not isinstance(first, cst.Index):
        return False
    index = first.value
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus):
        index = index.expression
    if not (isinstance(index, cst.Integer) or (isinstance(index, cst.Name) and _loop_index(ctx, index))):
        return False
    if isinstance(index, cst.Name) and _rows_of(ctx, index, sub.value):
        return True  # `for i in range(out.size(0)): out[i]`: the loop runs over the tensor's own rows
    return _tensor_result(ctx, sub.value, 0)


def _rows_of(ctx: FileContext, index: cst.Name, value: cst.BaseExpression) -> bool:
    """``index`` is the variable of an enclosing ``for index in range(<value>.size(0))`` (or
    ``range(<value>.shape[0])``): tensor-only spellings of the length of ``value``'s first dimension."""
    spelled = ctx.code(value).strip()
    for owner in ctx.ancestors(index):
        if isinstance(owner, (cst.For, cst.CompFor)) and isinstance(owner.target, cst.Name) \
                and owner.target.value == index.value and isinstance(owner.iter, cst.Call) \
                and dotted_name(owner.iter.func) == "range" and len(owner.iter.args) == 1:
            bound = "".join(ctx.code(owner.iter.args[0].value).split())
            return bound in (f"{spelled}.size(0)", f"{spelled}.shape[0]")
        if isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            break
    return False


def _loop_index(ctx: FileContext, name: cst.Name) -> bool:
    """``i`` of an enclosing ``for i in range(...)`` or ``for i, _ in enumerate(...)``: an integer."""
    for owner in ctx.ancestors(name):
        loops: List[cst.CSTNode] = [owner]
        if isinstance(owner, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            loops, comp = [], owner.for_in
            while comp is not None:
                loops.append(comp)
                comp = comp.inner_for_in
        for loop in loops:
            if isinstance(loop, (cst.For, cst.CompFor)) and isinstance(loop.iter, cst.Call):
                callee = dotted_name(loop.iter.func)
                target = loop.target
                if callee == "range" and isinstance(target, cst.Name) and target.value == name.value:
                    return True
                if callee == "enumerate" and isinstance(target, cst.Tuple) and target.elements and isinstance(
                        target.elements[0].value, cst.Name) and target.elements[0].value.value == name.value:
                    return True
        if isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            break
    return False


def _tensor_result(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> bool:
    """A tensor by the operation that made it: a torch function, a tensor method (``.sigmoid()``,
    ``.view(-1, 1)``), a layer of ``torch.nn`` that returns one tensor (``self.head = nn.Linear(h, 1)``),
    ``torch.bmm``/``matmul``; a model of unknown output is not (``model(x)[0]`` may be a tuple's element)."""
    if depth > 4:
        return False
    if isinstance(expr, cst.Name):
        values = [v for _, v in _assigned_before(ctx, expr)]
        return bool(values) and all(_tensor_result(ctx, v, depth + 1) for v in values)
    if isinstance(expr, cst.BinaryOperation):
        return _tensor_result(ctx, expr.left, depth + 1) or _tensor_result(ctx, expr.right, depth + 1)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    qn = ctx.names.qualified_names(func)
    if qn:
        return any(q.startswith("torch.") and q.rsplit(".", 1)[-1] in _TENSOR_RESULT | _REDUCTIONS - {"max", "min",
                   "topk", "sort", "median"} for q in qn)
    if isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_RESULT:
        return True
    if isinstance(func, (cst.Name, cst.Attribute)):
        values = definitions.built_values(ctx, func)
        return bool(values) and all(
            _single_tensor_layer(ctx, v) or _single_tensor_model(ctx, v, depth) for v in values
        )
    return False


def _single_tensor_model(ctx: FileContext, value: cst.BaseExpression, depth: int) -> bool:
    """``Net()`` (also ``Net().to(device)``) of a model class of the project whose ``forward`` returns one
    tensor by its operation on every ``return`` (``return self.fc(x)``), not a tuple of outputs."""
    core = definitions.strip_moves(value)
    if not isinstance(core, cst.Call):
        return False
    found = definitions.definition_of(ctx, core.func)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return False
    dctx, cls = found
    if not roles.class_summary(dctx, cls).is_module:
        return False
    method = definitions.find_method(dctx, cls, "forward")
    if method is None:
        return False
    fctx, forward = method
    returns = definitions.function_returns(forward)
    return bool(returns) and all(
        r.value is not None and _tensor_result(fctx, r.value, depth + 1) for r in returns
    )


def _single_tensor_layer(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``nn.Linear(h, 1)``, ``nn.Conv2d(...)``, ``nn.Sequential(...)``: torch layers whose output is one tensor
    (not ``nn.LSTM``, ``nn.MultiheadAttention``: tuples)."""
    if not isinstance(value, cst.Call):
        return False
    for q in ctx.names.qualified_names(value.func):
        if q.startswith("torch.nn.") and not re.search(r"(RNN|LSTM|GRU|MultiheadAttention|Transformer)$", q):
            return True
    return False


def _helper_return(ctx: FileContext, call: cst.Call, depth: int) -> Optional[cst.BaseExpression]:
    """For a call of a function of this file (``predict(net, x)``), the value one of its ``return``s gives
    that carries a batch by the function's own code (``return net(x)``); None otherwise."""
    if not isinstance(call.func, cst.Name) or depth > _MAX_DEPTH // 2:
        return None
    function = ctx.function_for_call(call)
    if function is None or ctx.is_inside(call, function):
        return None  # not a helper of this file, or a recursive call
    if _adds_leading_one(ctx, function):
        return None  # `return net(img.unsqueeze(0))`: a batch of one made on purpose
    for ret in _returns_of(ctx, function):
        if ret.value is not None and _evidence(ctx, ret.value, depth + 1):
            return ret.value
    return None


def _method_return(ctx: FileContext, call: cst.Call, depth: int) -> Optional[cst.BaseExpression]:
    """For ``self.<method>(...)`` in a method of a model class, a method of that class in this file
    (its own or a base's) one of whose ``return``s gives a batch by the method's own code (``return
    self.fc_v(x)``, ``return prob, state`` with ``prob`` a layer's output): that value; None otherwise
    (not a method of the model, a recursive call, a method that makes its own batch of one)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self") \
            or depth > _MAX_DEPTH // 2:
        return None
    cls = ctx.enclosing(call, cst.ClassDef)
    if not (isinstance(cls, cst.ClassDef) and roles.module_class(ctx, cls)):
        return None
    found = definitions.find_method(ctx, cls, func.attr.value)
    if found is None or found[0] is not ctx:
        return None  # a method of another file's class: not followed
    method = found[1]
    if ctx.is_inside(call, method) or _adds_leading_one(ctx, method):
        return None
    for ret in _returns_of(ctx, method):
        if ret.value is not None and _evidence(ctx, ret.value, depth + 1):
            return ret.value
    return None


def _passed_through(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """For a call of a function of this file (``_inflate(outputs, k, 0)``) every ``return`` of which gives one
    of its parameters through operations that keep the leading dimension (``return t.repeat(*dims)``), the
    argument given for that parameter; None otherwise."""
    if not isinstance(call.func, cst.Name):
        return None
    function = ctx.function_for_call(call)
    if function is None or ctx.is_inside(call, function) or _adds_leading_one(ctx, function):
        return None
    params = [p.name.value for p in function.params.params]
    returns = _returns_of(ctx, function)
    roots = set()
    for ret in returns:
        root = ret.value
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and root.func.attr.value in _KEEPS:
            root = root.func.value
        if not isinstance(root, cst.Name) or root.value not in params:
            return None
        roots.add(root.value)
    if len(roots) != 1 or _assignments(ctx, function).get(next(iter(roots))):
        return None  # no return, several parameters, or the parameter rebound in the helper
    index = params.index(next(iter(roots)))
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[:index + 1]):
        return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value == params[index]:
            return a.value
    return positional[index].value if index < len(positional) else None


def leading_one(ctx: FileContext, node: cst.CSTNode) -> bool:
    """``x.unsqueeze(0)``, ``x.unsqueeze_(dim=0)``, ``torch.unsqueeze(x, 0)``, ``x[None]``, ``x[None, ...]``: a
    leading dimension of size 1 put in front of a tensor (a sample made a batch of one)."""
    if isinstance(node, cst.Subscript):
        return _none_first(node)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if ctx.names.matches(func, _UNSQUEEZE):
        dim = arg(node, 1, "dim")
    elif isinstance(func, cst.Attribute) and func.attr.value in ("unsqueeze", "unsqueeze_") \
            and not ctx.names.qualified_names(func):
        dim = arg(node, 0, "dim")
    else:
        return False
    return dim is not None and isinstance(dim.value, cst.Integer) and dim.value.value == "0"


_UNSQUEEZE = frozenset({"torch.unsqueeze"})


def _adds_leading_one(ctx: FileContext, function: cst.FunctionDef) -> bool:
    return any(leading_one(ctx, n) for n in ctx.nodes(function.body))


def _returns_of(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Return]:
    return [n for n in iter_nodes(function.body) if isinstance(n, cst.Return)
            and ctx.enclosing(n, cst.FunctionDef) is function]


# -- a callable trained in view: its output is a batch -------------------------------------------------------
def trained_by(ctx: FileContext, call: cst.Call) -> Optional[cst.Call]:
    """For ``scores = scorer(pairs)`` with ``scorer`` a parameter of the function, its output fed into a
    loss (``F.binary_cross_entropy_with_logits(scores.squeeze(), labels)``) whose value the same function
    differentiates (``loss.backward()``): the loss call.  A callable trained on its inputs is a model, and
    what a model is trained on is a batch."""
    func = call.func
    if not isinstance(func, cst.Name) or ctx.names.qualified_names(func) or is_loss_call(ctx, call):
        return None
    function = ctx.enclosing(call, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef):
        return None
    if func.value not in {p.name.value for p in function.params.params + function.params.kwonly_params}:
        return None
    if _assignments(ctx, function).get(func.value):
        return None  # rebound in the function: not (only) the callable it was given
    loss = _loss_around(ctx, call, function)
    if loss is None:
        target = _bound_name(ctx, call)
        if target is None:
            return None
        for use in ctx.names_in(function, target):
            if definitions.position(ctx, use) > definitions.position(ctx, call):
                loss = _loss_around(ctx, use, function)
                if loss is not None:
                    break
    if loss is None:
        return None
    result = _bound_name(ctx, loss)
    if result is None or not flows_into_backward(ctx, function, result):
        return None
    return loss


def _bound_name(ctx: FileContext, node: cst.CSTNode) -> Optional[str]:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    return None


def _loss_around(ctx: FileContext, node: cst.CSTNode, function: cst.FunctionDef) -> Optional[cst.Call]:
    """The loss call ``node`` is an argument of, through tensor methods (``scores.squeeze()``) and
    arithmetic."""
    child = node
    for owner in ctx.ancestors(node):
        if owner is function or isinstance(owner, cst.BaseStatement) or isinstance(owner, cst.BaseSmallStatement):
            return None
        if isinstance(owner, cst.Call) and any(a.value is child for a in owner.args) and (
            is_loss_call(ctx, owner) or sum(1 for a in owner.args if a.keyword is None) >= 2
        ):
            return owner  # a loss by name or API, or a call of a prediction and a target whose value is differentiated
        if isinstance(owner, cst.Call) and owner.func is not child and not any(a.value is child for a in owner.args):
            return None
        child = owner if not isinstance(owner, cst.Arg) else child
    return None


def _model_method_on_batch(ctx: FileContext, call: cst.Call, depth: int) -> bool:
    """``self.encode(x)`` in a model's method, ``x`` a batch: the model's own computation on the batch."""
    cls = ctx.enclosing(call, cst.ClassDef)
    if not (isinstance(cls, cst.ClassDef) and roles.module_class(ctx, cls)):
        return False
    return any(a.keyword is None and not a.star and _evidence(ctx, a.value, depth + 1) for a in call.args)


def _submodule_method_on_batch(ctx: FileContext, call: cst.Call, depth: int) -> bool:
    """``self.rnn.forward_step(x, h, enc)`` in a model's method, an argument a batch: a step of a part of the
    model run on the batch."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
            and isinstance(func.value.value, cst.Name) and func.value.value.value == "self"):
        return False
    return _model_method_on_batch(ctx, call, depth)


def _tensor_argument_evidence(ctx: FileContext, value: cst.BaseExpression, depth: int) -> bool:
    if isinstance(value, (cst.List, cst.Tuple)):
        return any(_evidence(ctx, el.value, depth + 1) for el in value.elements)
    return _evidence(ctx, value, depth + 1)


def _dim_argument(call: cst.Call, position: int = 0) -> Optional[cst.BaseExpression]:
    """The ``dim`` argument of ``call``: by keyword, else the positional argument at ``position`` (0 for a
    tensor method, 1 for a torch function given the tensor first)."""
    for a in call.args:
        if a.keyword is not None and canonical_keyword(a.keyword.value) == "dim":
            return a.value
    given = call.args[position] if len(call.args) > position else None
    if given is None or any(a.keyword is not None or a.star for a in call.args[:position + 1]):
        return None
    return given.value


def _over_batch(dim: Optional[cst.BaseExpression]) -> bool:
    """Whether a reduction given ``dim`` runs over dimension 0: none given (everything), ``0``, or a list or
    tuple of dimensions holding ``0`` (``[0, 2, 3]``)."""
    if dim is None:
        return True
    dims = [e.value for e in dim.elements] if isinstance(dim, (cst.List, cst.Tuple)) else [dim]
    return any(isinstance(d, cst.Integer) and d.value == "0" for d in dims)


def model_call(ctx: FileContext, call: cst.Call) -> bool:
    """``model(x)``, ``self.head(h)``, ``model.forward(x)``, ``self(x)`` in a model's method: a call that
    runs a model or a layer."""
    func = call.func
    callee = run_object(func)
    if isinstance(callee, cst.Name) and callee.value == "self":
        cls = ctx.enclosing(call, cst.ClassDef)
        return isinstance(cls, cst.ClassDef) and roles.module_class(ctx, cls)
    if isinstance(callee, (cst.Name, cst.Attribute)) and not ctx.names.qualified_names(callee):
        values = definitions.built_values(ctx, callee)
        if values and all(roles.is_module_value(ctx, v) for v in values):
            return True  # a layer or a model built in view: `self.head = nn.Linear(h, 1)`
    return model_of_call(ctx, call, names_count=True) is not None  # a model, by construction or by name


def _name_evidence(ctx: FileContext, name: cst.Name, depth: int) -> bool:
    function = ctx.enclosing(name, cst.FunctionDef)
    for _, value in _assigned_before(ctx, name):
        if _evidence(ctx, value, depth + 1):
            return True
    loop = _binding_loop(ctx, name)
    if loop is not None:
        piece = split_source(ctx, loop.iter) if isinstance(loop.target, cst.Name) else None  # type: ignore[attr-defined]
        if piece is not None:
            return _evidence(ctx, piece[0], depth + 1)  # `for y_t in torch.split(y, 1)`: a slice of `y`
        return _loader(ctx, loop.iter, depth)  # type: ignore[attr-defined]
    if not isinstance(function, cst.FunctionDef):
        return False
    given = _given_batch(ctx, name, depth)
    if given is not None:
        return True  # `def head(scores): return scores.squeeze()` called as `head(model(x))`
    params = [p.name.value for p in function.params.params]
    if len(params) < 2 or params[0] != "self" or name.value not in params[1:]:
        return False
    if function.name.value in _STEP_METHODS:
        return params[1] == name.value  # the batch of a Lightning step
    if function.name.value == "forward":  # the input of a model's forward
        cls = ctx.enclosing(function, cst.ClassDef)
        return isinstance(cls, cst.ClassDef) and roles.module_class(ctx, cls)
    return False


def _given_batch(ctx: FileContext, name: cst.Name, depth: int) -> Optional[cst.BaseExpression]:
    """For a parameter of a function of this file that every call of it in the file gives a batch
    (``head(model(x))``, ``self._pool(self.body(x))``), the first such argument; None otherwise (never
    called here, or one call gives something else)."""
    if depth > _MAX_DEPTH // 2 or not ctx.names.reads_parameter(name):
        return None
    args = definitions.arguments_for_param(ctx, name)
    if not args or not all(_evidence(ctx, a, depth + 1) for a in args):
        return None
    return args[0]


def _assigned_before(ctx: FileContext, name: cst.Name) -> List[Tuple[int, cst.BaseExpression]]:
    """The assignments of ``name``'s scope that bind it before ``name`` and after the innermost loop
    around it whose target binds it (``for data, target in test_loader:`` rebinds ``target``: an
    assignment before that loop no longer reaches its body), in source order."""
    function = ctx.enclosing(name, cst.FunctionDef)
    scope = function if isinstance(function, cst.FunctionDef) else ctx.module
    at = definitions.position(ctx, name)
    floor = -1
    loop = _binding_loop(ctx, name)
    if loop is not None:
        floor = definitions.position(ctx, loop)
    return [(p, v) for p, v in _assignments(ctx, scope).get(name.value, ())
            if floor < p < at and not ctx.is_inside(name, v)]


def _binding_loop(ctx: FileContext, name: cst.Name) -> Optional[cst.CSTNode]:
    """The innermost ``for`` (statement or comprehension) around ``name``, in its function, whose
    target binds ``name``."""
    function = ctx.enclosing(name, cst.FunctionDef)
    for owner in ctx.ancestors(name):
        if isinstance(owner, (cst.For, cst.CompFor)) and any(n.value == name.value for n in target_names(owner.target)):
            return owner
        if owner is function:
            break
    return None


def _assignments(ctx: FileContext, scope: cst.CSTNode) -> Dict[str, List[Tuple[int, cst.BaseExpression]]]:
    """The plain and annotated assignments of a function (or of the module, outside its functions), by the
    names they bind: ``(position, value)``; indexed once per scope."""
    tables = _ASSIGNS.get(ctx)
    if tables is None:
        tables = _ASSIGNS.put(ctx, {})
    table = tables.get(scope)
    if table is None:
        table = {}
        module = scope is ctx.module
        for a in ctx.contents(scope).assigns:
            if not isinstance(a, (cst.Assign, cst.AnnAssign)) or a.value is None:
                continue
            if module and ctx.enclosing(a, cst.FunctionDef) is not None:
                continue  # a function's local, not the module-level name
            targets = [a.target] if isinstance(a, cst.AnnAssign) else [t.target for t in a.targets]
            for t in targets:
                for n in target_names(t):
                    table.setdefault(n.value, []).append((definitions.position(ctx, a), a.value))
        tables[scope] = table
    return table


def _loader(ctx: FileContext, it: cst.BaseExpression, depth: int) -> bool:
    """``loader``, ``enumerate(train_loader)``, ``tqdm(dl)``, ``zip(loader_a, loader_b)``, a ``DataLoader``."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(it, cst.Call):
        wrapper = dotted_name(it.func)
        if wrapper is not None and wrapper.rsplit(".", 1)[-1] in _WRAPPERS:
            return any(_loader(ctx, a.value, depth + 1) for a in it.args if a.keyword is None)
        if any(q.endswith("DataLoader") for q in ctx.names.qualified_names(it.func)):
            return True
        called = dotted_name(it.func)
        return called is not None and bool(_LOADER_NAME.search(called.rsplit(".", 1)[-1]))  # self.train_dataloader()
    name = dotted_name(it)
    if name is None:
        return False
    if _LOADER_NAME.search(name.rsplit(".", 1)[-1]):
        return True
    return any(
        isinstance(v, cst.Call) and any(q.endswith("DataLoader") for q in ctx.names.qualified_names(v.func))
        for v in definitions.built_values(ctx, it)
    )


def batch_source(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> Optional[cst.Call]:
    """The model call the batch dimension of ``expr`` comes from (``model(input, hidden)`` for ``output`` after
    ``output, hidden = model(input, hidden)``), following the data flow of :func:`batch_origin` within the
    scope; None when the batch comes from elsewhere (a loader, a helper's return) or is not known."""
    if depth > _MAX_DEPTH or not _evidence(ctx, expr, depth):
        return None
    if isinstance(expr, cst.Name):
        for _, value in reversed(_assigned_before(ctx, expr)):
            if _evidence(ctx, value, depth + 1):
                return batch_source(ctx, value, depth + 1)
        return None
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return batch_source(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return batch_source(ctx, expr.expression, depth + 1)
    if isinstance(expr, cst.Comparison):  # `model(x) >= 0.5`: the rows of what is compared
        return batch_source(ctx, expr.left, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return batch_source(ctx, expr.left, depth + 1) or batch_source(ctx, expr.right, depth + 1)
    if isinstance(expr, cst.Call):
        if model_call(ctx, expr):
            return expr
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _KEEPS | _REDUCTIONS:
            if any(q.startswith("torch.") for q in ctx.names.qualified_names(expr.func)):
                first = expr.args[0] if expr.args else None  # `torch.sigmoid(model(x))`: the rows of its input
                if first is None or first.keyword is not None or first.star:
                    return None
                return batch_source(ctx, first.value, depth + 1)
            return batch_source(ctx, expr.func.value, depth + 1)
    return None


def batch_origin(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """Where the batch dimension of ``expr`` comes from, in words ("the output of `model`", "a batch
    drawn from `loader`"), following the same data flow as :func:`batch_evidence`; None without evidence."""
    if depth > _MAX_DEPTH or not _evidence(ctx, expr, depth):
        return None
    code = ctx.code(expr).strip()
    if isinstance(expr, cst.Name):
        function = ctx.enclosing(expr, cst.FunctionDef)
        for _, value in reversed(_assigned_before(ctx, expr)):
            if _evidence(ctx, value, depth + 1):
                return batch_origin(ctx, value, depth + 1)
        loop = _binding_loop(ctx, expr)
        if loop is not None:
            return f"a batch drawn from `{ctx.code(loop.iter).strip()}`"  # type: ignore[attr-defined]
        if isinstance(function, cst.FunctionDef):
            given = _given_batch(ctx, expr, depth)
            if given is not None:
                inner = batch_origin(ctx, given, depth + 1)
                return f"`{code}`, given `{_short(ctx, given)}` by the calls of `{function.name.value}`" + (
                    f": {inner}" if inner else "")
            if function.name.value in _STEP_METHODS:
                return f"the batch of `{function.name.value}`"
            if function.name.value == "forward":
                return f"`{code}`, the input of the model's `forward`"
        return None
    if isinstance(expr, cst.Attribute) or isinstance(expr, cst.Subscript):
        return batch_origin(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return batch_origin(ctx, expr.left, depth + 1) or batch_origin(ctx, expr.right, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return batch_origin(ctx, expr.expression, depth + 1)
    if isinstance(expr, (cst.Tuple, cst.List)):
        for el in expr.elements:
            found = batch_origin(ctx, el.value, depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(expr, cst.IfExp):
        return batch_origin(ctx, expr.body, depth + 1) or batch_origin(ctx, expr.orelse, depth + 1)
    if isinstance(expr, cst.Comparison):
        return batch_origin(ctx, expr.left, depth + 1)
    if isinstance(expr, cst.Call):
        if model_call(ctx, expr):
            if isinstance(expr.func, cst.Name) and expr.func.value == "self":
                return "the model's own output, `self(...)`"
            return f"the output of `{ctx.code(expr.func).strip()}`"
        returned = _helper_return(ctx, expr, depth)
        if returned is not None:
            inner = batch_origin(ctx, returned, depth + 1)
            return f"the return of `{ctx.code(expr.func).strip()}`" + (f", {inner}" if inner else "")
        if ctx.names.qualified_names(expr.func) & _PADDED_BATCH:
            return f"the padded batch of `{ctx.code(expr.func).strip()}`"
        loss = trained_by(ctx, expr)
        if loss is not None:
            return (f"the output of `{ctx.code(expr.func).strip()}`, trained here through "
                    f"`{ctx.code(loss.func).strip()}`")
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _KEEPS | _REDUCTIONS | _SELECTIONS:
            found = batch_origin(ctx, expr.func.value, depth + 1)
            if found is not None:
                return found  # `weights.bmm(keys)`: the rows are the receiver's
        for a in expr.args:
            found = batch_origin(ctx, a.value, depth + 1) if a.keyword is None else None
            if found is not None:
                return found
        returned = _method_return(ctx, expr, depth)
        if returned is not None:
            inner = batch_origin(ctx, returned, depth + 1)
            return f"the return of `{ctx.code(expr.func).strip()}`" + (f", {inner}" if inner else "")
        if isinstance(expr.func, cst.Attribute):
            found = batch_origin(ctx, expr.func.value, depth + 1)
            if found is not None:
                return found
            if not (isinstance(expr.func.value, cst.Name) and expr.func.value.value == "self"):
                return f"the output of `{ctx.code(expr.func).strip()}`"  # a model's method: `vae.decode(z)`
    return None


# -- where a recurrent layer puts the batch -------------------------------------------------------------------
#: torch's recurrent layers: what calling one returns, ``(output, h_n)``; LSTM's ``h_n`` is a pair ``(h, c)``
_RECURRENT = frozenset({"torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM"})


def recurrent_batch_dim(ctx: FileContext, x: cst.BaseExpression) -> Optional[Tuple[int, str]]:
    """Where the batch sits in ``x``, a name bound to an element of what a recurrent layer of torch returns
    (``out, hidden = self.rnn(x)``): ``(dim, words)``.  The final hidden state of ``nn.RNN``/``nn.GRU`` is
    ``[layers x directions, batch, features]`` whatever ``batch_first`` says: the batch is dim 1; the output
    is ``[seq, batch, features]`` (dim 1), or ``[batch, seq, features]`` with ``batch_first=True`` (dim 0).
    Every construction of the layer must agree (a class chosen at run time among them, ``rnn = nn.GRU``);
    None when the layer, the element or ``batch_first`` is not known."""
    if not isinstance(x, cst.Name):
        return None
    function = ctx.enclosing(x, cst.FunctionDef)
    found = ctx.names.reaching_assignment(x.value, x, function)
    if found is None or found[1] not in (0, 1) or not isinstance(found[0].value, cst.Call):
        return None
    index = found[1]
    layer = found[0].value.func
    built = _recurrent_constructions(ctx, layer)
    if not built:
        return None
    dims = set()
    for cls, construction in built:
        if index == 1:
            if cls == "torch.nn.LSTM":
                return None  # `(h, c)`: a pair, not a tensor
            dims.add(1)
            continue
        flag = next((a.value for a in construction.args if a.keyword is not None and a.keyword.value == "batch_first"),
                    None)
        if flag is None or isinstance(flag, cst.Name) and flag.value == "False":
            dims.add(1)
        elif isinstance(flag, cst.Name) and flag.value == "True":
            dims.add(0)
        else:
            return None  # `batch_first=opt.batch_first`
    if len(dims) != 1:
        return None
    what = "the final hidden state" if index == 1 else "the output"
    return dims.pop(), f"{what} of `{ctx.code(layer).strip()}`, a recurrent layer"


def unpacks_some_recurrent_layer(ctx: FileContext, x: cst.BaseExpression) -> bool:
    """``x`` is a name bound to the first or second element of what a module returns of which one of the
    values (not every one: :func:`recurrent_batch_dim`) is a recurrent layer of torch (``self.gru`` built
    as ``nn.GRU(...)`` in one branch, as a project class in another): where its batch sits is not known."""
    if not isinstance(x, cst.Name):
        return False
    found = ctx.names.reaching_assignment(x.value, x, ctx.enclosing(x, cst.FunctionDef))
    if found is None or found[1] not in (0, 1) or not isinstance(found[0].value, cst.Call):
        return False
    return bool(_recurrent_constructions(ctx, found[0].value.func, every=False))


def _recurrent_constructions(ctx: FileContext, layer: cst.BaseExpression,
                             every: bool = True) -> List[Tuple[str, cst.Call]]:
    """``(class, construction)`` for every value the module ``layer`` may hold, each one a recurrent layer
    of torch built by a call (of the class, or of a name holding it); empty when any is not (with
    ``every=False``: those values that are, the others left out)."""
    values: List[cst.BaseExpression]
    held = effects.self_attr(ctx, layer)
    if held is not None:
        try:
            values = effects.self_values(ctx, *held)
        except effects.Unknown:
            return []
    elif isinstance(layer, cst.Name):
        values = definitions.built_values(ctx, layer)
    else:
        return []
    out: List[Tuple[str, cst.Call]] = []
    for value in _arms(values):
        value = definitions.strip_moves(value)
        if not isinstance(value, cst.Call):
            if every:
                return []
            continue
        classes = set(ctx.names.qualified_names(value.func))
        if isinstance(value.func, cst.Name) and not classes & _RECURRENT:
            # `rnn = nn.GRU` chosen before: the classes the name may hold
            held_classes = [ctx.names.qualified_names(v) for v in _arms(ctx.names.values_before(value.func))]
            if held_classes and all(len(q) == 1 for q in held_classes):
                classes = {next(iter(q)) for q in held_classes}
        if not classes or not classes <= _RECURRENT:
            if every:
                return []
            continue
        out.extend((cls, value) for cls in classes)
    return out


def _arms(values: List[cst.BaseExpression]) -> List[cst.BaseExpression]:
    """``values`` with each conditional expression replaced by its two arms (``nn.GRU if gru else nn.RNN``)."""
    out: List[cst.BaseExpression] = []
    for v in values:
        out.extend(_arms([v.body, v.orelse]) if isinstance(v, cst.IfExp) else [v])
    return out


# -- a batch whose size the code fixes ---------------------------------------------------------------------
#: calls whose result has the rows of their first argument (a nested list made a tensor or an array)
_ROWS_KEPT = frozenset({
    "torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.IntTensor",
    "torch.DoubleTensor", "torch.BoolTensor", "torch.autograd.Variable", "numpy.array", "numpy.asarray",
})
_ROWS_DEPTH = 8


def fed_fixed_batch(ctx: FileContext, call: Optional[cst.Call]) -> bool:
    """The model call a batch comes from is given an input whose rows the code fixes to two or more: a
    literal list (``torch.LongTensor([[1, 2], [3, 4]])``), or a list a function of the file fills with one
    row per element of such a list (``for sen in sentences: batch.append(...)`` with ``sentences = ["i like
    dog", "i love coffee", "i hate milk"]``). Its batch is never one sample."""
    if call is None:
        return False
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    rows = _rows(ctx, first, 0) if first is not None else None
    return rows is not None and rows >= 2


def holds_fixed_rows(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """``expr`` itself, through moves and casts, is a tensor whose rows the code fixes to two or more (a batch
    of a loader that only yields full batches of a size written out: :func:`_full_batch_rows`)."""
    rows = _rows(ctx, expr, 0)
    return rows is not None and rows >= 2


#: id(expression) -> its rows (see :func:`_rows`), for the file after its walk
_ROWS: "Fact[Dict[int, Optional[int]]]" = Fact("batches.rows")


def _rows(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> Optional[int]:
    """How many rows ``expr`` has, when the code fixes it; None otherwise (asked once per expression: a
    name given many values, each read from another, is not followed again and again)."""
    if depth > _ROWS_DEPTH:
        return None
    return _once(ctx, _ROWS, expr, None, lambda: _fixed_rows_of(ctx, expr, depth))  # a cycle fixes nothing


def _fixed_rows_of(ctx: FileContext, expr: cst.BaseExpression, depth: int) -> Optional[int]:
    expr = definitions.strip_moves(expr)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return None if any(isinstance(e, cst.StarredElement) for e in expr.elements) else len(expr.elements)
    if isinstance(expr, cst.Call):
        if expr.args and expr.args[0].keyword is None and not expr.args[0].star and (
                ctx.names.qualified_names(expr.func) & _ROWS_KEPT or model_call(ctx, expr)):
            return _rows(ctx, expr.args[0].value, depth + 1)  # (a model gives one output row per input row)
        return None
    if not isinstance(expr, cst.Name):
        return None
    loop = _binding_loop(ctx, expr)
    if isinstance(loop, cst.For):
        return _full_batch_rows(ctx, loop.iter, loop.target, expr.value, depth + 1)
    function = ctx.enclosing(expr, cst.FunctionDef)
    found = ctx.names.reaching_assignment(expr.value, expr, function)
    if found is not None:
        assign, index = found
        if index is None:
            return _rows(ctx, assign.value, depth + 1)
        returned = _returned_element(ctx, assign.value, index)
        return _filled_rows(ctx, *returned, depth + 1) if returned is not None else None
    if function is not None and expr.value in ctx.assigned_names(function):
        return _filled_rows(ctx, function, expr, depth + 1)
    values = ctx.names.values_at(expr)  # a module-level name read in a function: every value it is given
    counts = {_rows(ctx, v, depth + 1) for v in values}
    return counts.pop() if values and len(counts) == 1 else None


def _full_batch_rows(ctx: FileContext, it: cst.BaseExpression, target: cst.BaseExpression, name: str,
                     depth: int) -> Optional[int]:
    """The rows of every batch ``name`` is bound to by ``for target in it``, when ``it`` draws from a
    ``DataLoader`` that drops its last incomplete batch (``drop_last=True``) and is given a batch size the
    code writes out (``batch_size=100``, or a name given only that number): each batch it yields, and each
    tensor collated into one, holds that many samples.  Through ``enumerate(loader)`` (its second element)
    and ``tqdm(loader)``; a loader with its own ``collate_fn`` or ``batch_sampler`` decides its batches
    itself (None)."""
    if depth > _ROWS_DEPTH or not isinstance(it, cst.Call) and not isinstance(it, cst.Name):
        return None
    if isinstance(it, cst.Call):
        wrapper = dotted_name(it.func)
        first = it.args[0].value if it.args and it.args[0].keyword is None and not it.args[0].star else None
        if first is None or wrapper is None:
            return None
        if wrapper == "enumerate":
            if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2 or \
                    not any(n.value == name for n in target_names(target.elements[1].value)):
                return None
            return _full_batch_rows(ctx, first, target.elements[1].value, name, depth + 1)
        if wrapper.rsplit(".", 1)[-1] == "tqdm":
            return _full_batch_rows(ctx, first, target, name, depth + 1)
        return _dropping_loader_rows(ctx, it)  # `for x, y in DataLoader(data, batch_size=64, drop_last=True):`
    built = definitions.built_values(ctx, it)
    rows = [_dropping_loader_rows(ctx, v) for v in built]
    return min(rows) if rows and None not in rows else None  # type: ignore[type-var]


def _dropping_loader_rows(ctx: FileContext, value: cst.BaseExpression) -> Optional[int]:
    """The batch size of ``DataLoader(..., batch_size=N, drop_last=True)`` with ``N`` written out, else None."""
    if not isinstance(value, cst.Call) or any(a.star for a in value.args) or \
            not any(q.endswith("DataLoader") for q in ctx.names.qualified_names(value.func)):
        return None
    drop = arg(value, 8, "drop_last")
    if drop is None or not (isinstance(drop.value, cst.Name) and drop.value.value == "True"):
        return None
    if arg(value, 4, "batch_sampler") is not None or arg(value, 6, "collate_fn") is not None:
        return None
    size = arg(value, 1, "batch_size")
    if size is None:
        return None
    sizes = [size.value] if not isinstance(size.value, cst.Name) else ctx.names.values_at(size.value)
    numbers = {number(v) for v in sizes}
    found = numbers.pop() if sizes and len(numbers) == 1 else None
    return int(found) if found is not None and found == int(found) and found >= 1 else None


def _returned_element(ctx: FileContext, value: cst.BaseExpression,
                      index: int) -> Optional[Tuple[cst.FunctionDef, cst.Name]]:
    """For ``a, b = make_batch()`` with a function of the file that returns a tuple of names: the function
    and the name it returns at ``index`` (every ``return`` alike)."""
    if not isinstance(value, cst.Call):
        return None
    function = ctx.function_for_call(value)
    if not isinstance(function, cst.FunctionDef):
        return None
    found: Optional[cst.Name] = None
    for r in ctx.nodes(function.body):
        if not isinstance(r, cst.Return) or ctx.enclosing(r, cst.FunctionDef) is not function:
            continue
        if not isinstance(r.value, cst.Tuple) or index >= len(r.value.elements):
            return None
        element = r.value.elements[index].value
        if not isinstance(element, cst.Name) or (found is not None and element.value != found.value):
            return None
        found = found or element
    return (function, found) if found is not None else None


def _starts_empty(assign: cst.CSTNode, name: str) -> bool:
    """``batch = []``, or ``inputs, targets = [], []`` for either name."""
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target, value = assign.targets[0].target, assign.value
    if isinstance(target, cst.Name):
        return target.value == name and isinstance(value, cst.List) and not value.elements
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
            and len(target.elements) == len(value.elements):
        return any(isinstance(t.value, cst.Name) and t.value.value == name and isinstance(v.value, cst.List)
                   and not v.value.elements for t, v in zip(target.elements, value.elements))
    return False


def _filled_rows(ctx: FileContext, function: cst.FunctionDef, name: cst.Name, depth: int) -> Optional[int]:
    """The rows of the list ``name`` of ``function`` when it starts empty (``batch = []``) and its one
    ``append`` runs once per element of a loop whose rows the code fixes, under no condition."""
    appends = [c for c in ctx.calls_in(function) if isinstance(c.func, cst.Attribute)
               and isinstance(c.func.value, cst.Name) and c.func.value.value == name.value]
    if len(appends) != 1 or appends[0].func.attr.value != "append":  # type: ignore[attr-defined]
        return None
    starts = [a for a in ctx.contents(function).assigns
              if any(n.value == name.value for t in assignment_targets(a) for n in target_names(t))]
    if len(starts) != 1 or not _starts_empty(starts[0], name.value):
        return None
    loop = None
    for a in ctx.ancestors(appends[0]):
        if a is function:
            break
        if isinstance(a, (cst.If, cst.IfExp, cst.Try, cst.While, cst.With)):
            return None
        if isinstance(a, cst.For):
            if loop is not None:
                return None  # nested loops: rows times columns
            loop = a
    if loop is None or ctx.enclosing(loop, cst.FunctionDef) is not function:
        return None
    if any(isinstance(n, (cst.Break, cst.Continue)) for n in ctx.nodes(loop.body)):
        return None
    return _rows(ctx, loop.iter, depth + 1)


# -- a whole dataset held by the module, not a batch ---------------------------------------------------------------
def fed_whole_tensor(ctx: FileContext, call: Optional[cst.Call]) -> bool:
    """The model call a batch comes from runs in the module's own code (a script's or a notebook's top level)
    on a tensor the module holds whole: its first input, through the module-level assignments it is made of
    (``X_train, X_test, y_train, y_test = train_test_split(X, y)``, ``X = torch.from_numpy(a).float()``,
    ``X_test[:10]``), reads no name a loop or a ``with`` binds.  Its leading dimension is the size of that
    data, the same at every run, not a batch drawn from a loader or sliced per iteration (``X[i:i + bs]``)
    whose last one may hold one sample, nor a value a loop around the call changes from one iteration to
    the next (a sequence grown token by token)."""
    if call is None or ctx.enclosing(call, (cst.FunctionDef, cst.Lambda)) is not None:
        return False
    first = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    if first is None:
        return False
    varying = set(_module_loop_names(ctx))
    for loop in ctx.ancestors(call):
        if isinstance(loop, (cst.For, cst.While)):
            varying |= ctx.assigned_names(loop.body)  # given another value at each iteration (carried round)
    return _held_whole(ctx, first, frozenset(varying), set(), 0)


#: the names the module's own code binds by a loop or ``with`` target (its functions' are not counted)
_LOOP_BOUND: "Fact[FrozenSet[str]]" = Fact("batches.loop_bound")


def _module_loop_names(ctx: FileContext) -> FrozenSet[str]:
    names = _LOOP_BOUND.get(ctx)
    if names is None:
        found = set()
        for n in ctx.nodes(ctx.module):
            if isinstance(n, (cst.For, cst.CompFor)):
                target: Optional[cst.BaseExpression] = n.target
            elif isinstance(n, cst.WithItem) and n.asname is not None:
                target = n.asname.name
            else:
                continue
            if ctx.enclosing(n, (cst.FunctionDef, cst.Lambda)) is None:
                found.update(t.value for t in target_names(target))
        names = _LOOP_BOUND.put(ctx, frozenset(found))
    return names


def _held_whole(ctx: FileContext, expr: cst.BaseExpression, varying: FrozenSet[str], seen: set,
                depth: int) -> bool:
    if depth > _ROWS_DEPTH:
        return False
    for name in _read_names(ctx, expr):
        if name.value in seen:
            continue
        seen.add(name.value)
        if name.value in varying:
            return False  # drawn, sliced or changed per iteration
        if ctx.names.qualified_names(name):
            continue  # `torch`, `np`: a module or an imported function
        found = ctx.names.reaching_assignment(name.value, name, None)
        if found is not None:
            values: List[cst.BaseExpression] = [found[0].value]
        else:
            bound = ctx.names.bound_values(name)
            if not bound or any(v is None for v in bound):
                return False  # a value not known here
            values = list(bound)  # type: ignore[arg-type]
        if not all(_held_whole(ctx, v, varying, seen, depth + 1) for v in values):
            return False
    return True


def _read_names(ctx: FileContext, expr: cst.BaseExpression) -> List[cst.Name]:
    """The names ``expr`` reads (not the attributes after a dot, not keyword names)."""
    if isinstance(expr, cst.Name):
        return [expr]
    out = []
    for n in ctx.nodes(expr):
        if type(n) is not cst.Name:
            continue
        parent = ctx.parent(n)
        if isinstance(parent, cst.Attribute) and parent.attr is n:
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is n:
            continue
        out.append(n)
    return out


# -- a batch of one made on purpose, and a tokenizer's batch of texts ----------------------------------------------
def fed_one_sample(ctx, call: Optional[cst.Call]) -> bool:
    """The model call a batch comes from is given an input made a batch of one by construction: a
    positional argument every value of which (through its names, moves aside) is ``torch.zeros(1, ...)``,
    ``torch.randint(n, (1, 1))``, ``torch.tensor([[token]])``, ``x.unsqueeze(0)``, ``x[None]`` or a state made for
    one sample (``model.init_hidden(1)``).  Anywhere in the file, the module's own code included."""
    if call is None:
        return False
    for a in call.args:
        if a.star == "**":  # `model(**enc)` with `enc = tok(text, return_tensors="pt")` of one text
            values = ctx.names.values_before(a.value, at=call) if isinstance(a.value, cst.Name) else [a.value]
            if values and all(_encoding_of_one_text(ctx, definitions.strip_moves(v)) for v in values):
                return True
            continue
        if a.keyword is not None or a.star:
            continue
        values = ctx.names.values_before(a.value, at=call) if isinstance(a.value, cst.Name) else [a.value]
        if values and all(_one_sample(ctx, definitions.strip_moves(v)) for v in values):
            return True
    return False


def _encoding_of_one_text(ctx, value: cst.BaseExpression) -> bool:
    """``tok("a photo of a cat", return_tensors="pt")``, ``tok(text, ...)`` with ``text: str``: one row."""
    if not isinstance(value, cst.Call) or not _returns_pt(value) or not value.args:
        return False
    first = value.args[0]
    return first.keyword is None and not first.star and _one_text(ctx, first.value)


def _one_text(ctx, first: cst.BaseExpression) -> bool:
    if isinstance(first, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(first, cst.Name):  # a parameter annotated `str` (asked after the walk: found by the tree)
        function = ctx.enclosing(first, cst.FunctionDef)
        params = function.params if isinstance(function, cst.FunctionDef) else None
        for p in (list(params.posonly_params) + list(params.params) + list(params.kwonly_params)) if params else ():
            if p.name.value == first.value:
                ann = p.annotation.annotation if p.annotation is not None else None
                return isinstance(ann, cst.Name) and ann.value == "str" and not ctx.names.values_before(first)
    return False


def _one_sample(ctx, value: cst.BaseExpression) -> bool:
    if leading_one(ctx, value):
        return True  # `x[None]`, `x.unsqueeze(0)`
    tokens = tokenizer_shape(ctx, value)
    if tokens is not None and tokens.head and tokens.head[0] == 1:
        return True  # the ids of one text: `tok("...", return_tensors="pt")["input_ids"]`
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if literal_batch_of_one(ctx, value) or sized_by_one(ctx, value):
        return True
    if ctx.names.matches(func, frozenset({"torch.randint"})):  # `torch.randint(n, (1, 1))`: the size is a tuple
        size = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "size"), None)
        positional = [a.value for a in value.args if a.keyword is None]
        size = size if size is not None else next((p for p in positional if isinstance(p, (cst.Tuple, cst.List))), None)
        return isinstance(size, (cst.Tuple, cst.List)) and len(size.elements) >= 2 \
            and isinstance(size.elements[0].value, cst.Integer) and size.elements[0].value.value == "1"
    return False


#: methods that change their receiver in place, or put their argument into it (``outs.append(y)``)
_INTO_RECEIVER = frozenset({"append", "extend", "insert", "add", "update", "copy_", "set_"})


def from_batch_of_one(ctx: FileContext, expr: cst.BaseExpression, function: cst.FunctionDef) -> bool:
    """Whether the data of ``expr`` in ``function`` may come from a tensor the function itself made a batch of
    one (``x.unsqueeze(0)``, ``x[None]``, ``torch.zeros(1, 1)``, ``model.init_hidden(1)``): through the names
    it is bound to in the function (tuples unpacked, loop targets, ``outs.append(y)``), the receivers and
    arguments of any call (a model run on it), arithmetic and indexing.  The leading 1 stops where the code
    takes it away again (``h.squeeze(0)``, a row ``out[0]`` of a tensor): what follows is the sample itself.
    Over-approximate on purpose: a value it cannot follow counts as coming from there when it reads one."""
    return _from_one(ctx, expr, function, set(), 0)


def _from_one(ctx: FileContext, node: cst.CSTNode, function: cst.FunctionDef, seen: set, depth: int) -> bool:
    if depth > 4 * _MAX_DEPTH:
        return True  # too deep to tell: count it (the answer silences)
    if isinstance(node, cst.Name):
        if id(node) in seen:
            return False
        seen.add(id(node))
        return any(_from_one(ctx, v, function, seen, depth + 1) for v in _reaching(ctx, function, node))
    if isinstance(node, cst.Call):
        func = node.func
        if _makes_one(ctx, node):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value in ("squeeze", "squeeze_") and node.args \
                and ctx.code(node.args[0].value).strip() == "0":
            return False  # `h.squeeze(0)`: the leading 1 taken away again
        if _joined_on_leading_axis(ctx, node):
            return False  # `torch.cat((go.unsqueeze(0), frames), dim=0)`: the leading 1 grows into a time axis
        parts: List[cst.CSTNode] = [a.value for a in node.args]
        if isinstance(func, cst.Attribute) and not ctx.names.qualified_names(func):
            parts.append(func.value)  # the receiver: `out.softmax(-1)`, `model.decode(z)`
        return any(_from_one(ctx, p, function, seen, depth + 1) for p in parts)
    if isinstance(node, cst.Subscript):
        if _none_first(node):
            return True
        if _row_selected(ctx, node):
            return False  # `out[0]`: the one sample taken out of its batch of one
        return _from_one(ctx, node.value, function, seen, depth + 1)
    if isinstance(node, cst.Attribute):
        return _from_one(ctx, node.value, function, seen, depth + 1)
    if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
        return False
    return any(_from_one(ctx, c, function, seen, depth + 1) for c in node.children)


_CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate"})


def _joined_on_leading_axis(ctx: FileContext, call: cst.Call) -> bool:
    """``torch.cat((a, b), dim=0)`` of two or more tensors written out: the leading dimension of the result
    is the sum of theirs, more than one, whatever made one of them a leading 1."""
    if not ctx.names.matches(call.func, _CONCATENATIONS):
        return False
    seq = arg(call, 0, "tensors")
    dim = arg(call, 1, "dim")
    if seq is None or not isinstance(seq.value, (cst.Tuple, cst.List)) or len(seq.value.elements) < 2 \
            or any(isinstance(e, cst.StarredElement) for e in seq.value.elements):
        return False
    return dim is None or isinstance(dim.value, cst.Integer) and dim.value.value == "0"


def _makes_one(ctx: FileContext, call: cst.Call) -> bool:
    return leading_one(ctx, call) or literal_batch_of_one(ctx, call) or sized_by_one(ctx, call)


def _none_first(sub: cst.Subscript) -> bool:
    first = sub.slice[0].slice if sub.slice else None
    return isinstance(first, cst.Index) and isinstance(first.value, cst.Name) and first.value.value == "None"


def _reaching(ctx: FileContext, function: cst.FunctionDef, read: cst.Name) -> List[cst.CSTNode]:
    """What may reach the read ``read`` of a name of ``function``: from the plain assignment that reaches it
    on every path (:meth:`NameResolver.reaching_assignment`; ``h = h.squeeze(0)`` hides the ``h`` before it),
    whatever the function puts into the name after that assignment and before the read, and, in a loop
    around the read, anywhere in that loop (the next pass reads it).  Every source of the name when no
    assignment reaches it on every path."""
    entries = _sources(ctx, function, read.value)
    found = ctx.names.reaching_assignment(read.value, read, function)
    if found is None:
        return [v for _, _, v in entries]
    assign = found[0]
    start, at = definitions.position(ctx, assign), definitions.position(ctx, read)
    loops = [a for a in _ancestors_within(ctx, read, function) if isinstance(a, (cst.For, cst.While))]
    out: List[cst.CSTNode] = [assign.value]
    for where, holder, value in entries:
        if holder is assign:
            continue
        if start < where < at or any(ctx.is_inside(holder, loop) for loop in loops):
            out.append(value)
    return out


def _ancestors_within(ctx: FileContext, node: cst.CSTNode, function: cst.FunctionDef) -> List[cst.CSTNode]:
    out = []
    for a in ctx.ancestors(node):
        if a is function:
            break
        out.append(a)
    return out


#: function -> name -> (position, node, value): what the function puts into the name
_SOURCES: "Fact[Dict[cst.FunctionDef, Dict[str, List[Tuple[int, cst.CSTNode, cst.CSTNode]]]]]" = Fact(
    "batches.sources", lambda ctx: {})


def _sources(ctx: FileContext, function: cst.FunctionDef, name: str) -> List[Tuple[int, cst.CSTNode, cst.CSTNode]]:
    tables = _SOURCES.of(ctx)
    table = tables.get(function)
    if table is None:
        table = {}
        for n in iter_nodes(function.body):
            targets: List[cst.BaseExpression] = []
            value: Optional[cst.CSTNode] = None
            if isinstance(n, cst.Assign):
                targets, value = [t.target for t in n.targets], n.value
            elif isinstance(n, (cst.AnnAssign, cst.AugAssign)) and n.value is not None:
                targets, value = [n.target], n.value
            elif isinstance(n, (cst.For, cst.CompFor)):
                targets, value = [n.target], n.iter
            elif isinstance(n, cst.WithItem) and n.asname is not None:
                targets, value = [n.asname.name], n.item
            elif isinstance(n, cst.NamedExpr):
                targets, value = [n.target], n.value
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name) \
                    and (n.func.attr.value in _INTO_RECEIVER or n.func.attr.value.endswith("_")):
                targets, value = [n.func.value], n  # `x.unsqueeze_(0)`, `outs.append(model(x))`
            if value is None:
                continue
            for t in targets:
                while isinstance(t, (cst.Subscript, cst.Attribute)):
                    t = t.value  # `outs[i] = y`, `buf.data = y`: the container holds it
                for bound in target_names(t):
                    table.setdefault(bound.value, []).append((definitions.position(ctx, n), n, value))
        tables[function] = table
    return table.get(name, [])


def literal_batch_of_one(ctx, call: cst.Call) -> bool:
    """``torch.zeros(1, 1)``, ``torch.tensor([[token]])``: a tensor built with a leading 1 and more
    dimensions after it -- a batch of one sample, on purpose."""
    if not ctx.names.matches(call.func, SIZE_CONSTRUCTORS | DATA_CONSTRUCTORS):
        return False
    if ctx.names.matches(call.func, DATA_CONSTRUCTORS):
        data = call.args[0].value if call.args and call.args[0].keyword is None else None
        if isinstance(data, (cst.List, cst.Tuple)) and len(data.elements) == 1 \
                and isinstance(data.elements[0].value, (cst.List, cst.Tuple)):
            return True  # `[[token]]`: one row, whatever its values
    shape = shape_of(ctx, call)
    return shape is not None and shape.rank is not None and shape.rank >= 2 and shape.head[0] == 1


def sized_by_one(ctx, call: cst.Call) -> bool:
    """``model.init_hidden(1)``, ``self.begin_state(1)``: the literal 1 given to a function of the project
    that passes that parameter as a size to a tensor constructor (``torch.zeros(layers, batch, hidden)``,
    ``weight.new_zeros(layers, batch, hidden)``): the state is made for a batch of one.  A method called on
    a receiver of unknown class (a model read with ``torch.load``) is looked up in the classes in view --
    this file's and those it imports from the project -- and counts when every one of them that defines
    it does so."""
    ones = [k for k, a in enumerate(call.args)
            if a.keyword is None and not a.star and isinstance(a.value, cst.Integer) and a.value.value == "1"]
    if not ones:
        return False
    func = call.func
    found = definitions.called_function(ctx, call)
    if found is not None:
        return _sizes_from(found, ones)
    if not isinstance(func, cst.Attribute):
        return False
    owner = definitions.instance_class(ctx, func.value)
    if owner is None and isinstance(func.value, cst.Name):
        annotation = param_annotation(ctx, func.value)  # `model: Seq2Seq`
        owner = definitions.definition_of(ctx, annotation) if annotation is not None else None
        owner = owner if owner is not None and isinstance(owner[1], cst.ClassDef) else None
    if owner is not None:
        method = definitions.method_of(owner[1], func.attr.value)
        return method is not None and _sizes_from((owner[0], method, 1), ones)
    if isinstance(func.value, cst.Name) and func.value.value == "self" or any(
        _library_object(ctx, v) for v in definitions.built_values(ctx, func.value)
    ):
        return False  # the instance's own method, or an object a library builds (`nn.LSTM(...)`)
    defining = [(c, m) for c, m in ((c, definitions.method_of(cls, func.attr.value)) for c, cls in _classes_in_view(ctx))
                if m is not None]
    return bool(defining) and all(_sizes_from((c, m, 1), ones) for c, m in defining)


#: calls that give back an object of any class, a project's model included (a checkpoint read back)
_UNPICKLERS = frozenset({"torch.load", "pickle.load", "pickle.loads", "dill.load", "joblib.load", "cloudpickle.load"})


def _library_object(ctx: FileContext, value: cst.BaseExpression) -> bool:
    core = definitions.strip_moves(value)
    if not isinstance(core, cst.Call):
        return True  # a literal, a comprehension: not a model at all
    qn = ctx.names.qualified_names(core.func)
    return bool(qn) and not qn & _UNPICKLERS


#: tensor methods that build a new tensor of the sizes they are given (``weight.new_zeros(l, b, h)``)
_NEW_TENSOR_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})


def _sizes_from(found, ones: List[int]) -> bool:
    """Whether the parameters at the positions ``ones`` of the function ``found`` (``(file context, function,
    offset)``) are given as a size to a tensor constructor in its body."""
    where, function, offset = found
    params = [p.name.value for p in function.params.params][offset:]
    names = {params[k] for k in ones if k < len(params)}
    if not names:
        return False
    for made in where.calls_in(function):
        func = made.func
        if where.names.matches(func, SIZE_CONSTRUCTORS):
            sizes = [a.value for a in made.args if a.keyword is None]
        elif isinstance(func, cst.Attribute) and func.attr.value in _NEW_TENSOR_METHODS \
                and not where.names.qualified_names(func):
            sizes = [a.value for a in made.args if a.keyword is None]
            sizes = sizes[:1] if func.attr.value == "new_full" else sizes  # `new_full(size, fill_value)`
        else:
            continue
        if sizes and isinstance(sizes[0], (cst.Tuple, cst.List)):
            sizes = [el.value for el in sizes[0].elements]  # `torch.zeros((layers, batch, hidden))`
        if any(isinstance(v, cst.Name) and v.value in names for v in sizes):
            return True
    return False


def _classes_in_view(ctx: FileContext) -> List[Tuple[FileContext, cst.ClassDef]]:
    """The classes defined at the top of this file and those it imports by name from project modules
    (``from model import RNNModel``)."""
    found: List[Tuple[FileContext, cst.ClassDef]] = []
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.ClassDef):
            found.append((ctx, stmt))
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        if isinstance(bound, cst.Name):
                            d = definitions.definition_of(ctx, bound)
                            if d is not None and isinstance(d[1], cst.ClassDef):
                                found.append(d)
    return found


def tokenizer_shape(ctx, x: cst.BaseExpression) -> Optional[Shape]:
    """A tokenizer's tensors: ``tok(text, return_tensors="pt")["input_ids"]`` / ``.input_ids``, or
    ``tok.encode(text, return_tensors="pt")``: ``[N, L]``, with ``N`` = 1 for one string."""
    for _ in range(3):
        if isinstance(x, cst.Name):
            vals = ctx.names.values_before(x)
            if len(vals) != 1:
                return None
            x = vals[0]
            continue
        break
    call: Optional[cst.BaseExpression] = None
    if isinstance(x, cst.Call) and _method_name(x.func) == "encode":
        call = x
    elif isinstance(x, cst.Subscript) and len(x.slice) == 1 and isinstance(x.slice[0].slice, cst.Index):
        key = x.slice[0].slice.value
        if isinstance(key, cst.SimpleString) and key.evaluated_value in _ENCODING_KEYS:
            call = _resolve(ctx, x.value)
    elif isinstance(x, cst.Attribute) and x.attr.value in _ENCODING_KEYS:
        call = _resolve(ctx, x.value)
    if not isinstance(call, cst.Call) or not _returns_pt(call):
        return None
    first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
    one = isinstance(first, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
    if not one and not _texts(ctx, first):
        return None  # one text or many: nothing says which, so nothing says there is a batch
    return Shape.exact([1 if one else None, None])


def tokenizer_origin(ctx, x: cst.BaseExpression) -> str:
    """Where a tokenizer's batch comes from, in words: the texts given to the tokenizer call
    (`tokenizer([q, a], ...)`), found as :func:`tokenizer_shape` finds it."""
    for _ in range(3):
        if not isinstance(x, cst.Name):
            break
        vals = ctx.names.values_before(x)
        if len(vals) != 1:
            break
        x = vals[0]
    call = x if isinstance(x, cst.Call) else _resolve(ctx, x.value) if isinstance(x, (cst.Subscript, cst.Attribute)) else None
    if isinstance(call, cst.Call) and call.args:
        return f"the texts `{_short(ctx, call.args[0].value)}` given to `{_short(ctx, call.func)}`"
    return "a tokenizer's batch of texts"


def _short(ctx, node: cst.CSTNode) -> str:
    code = " ".join(ctx.code(node).split())
    return code if len(code) <= 40 else code[:37].rstrip(". ") + "..."


def _texts(ctx, first: Optional[cst.BaseExpression]) -> bool:
    """A list of texts by construction: ``[q, a]``, a list comprehension, ``list(...)``, a local bound
    only to those, or a parameter annotated ``List[str]``/``list[str]``."""
    if isinstance(first, (cst.List, cst.ListComp)):
        return True
    if isinstance(first, cst.Call) and ctx.names.matches(first.func, frozenset({"builtins.list"})):
        return True
    if isinstance(first, cst.Name):
        vals = ctx.names.values_before(first)
        if vals:
            return all(isinstance(v, (cst.List, cst.ListComp)) and (not isinstance(v, cst.List) or v.elements)
                       for v in vals)
        ann = param_annotation(ctx, first)
        return ann is not None and re.match(r"(typing\.)?[Ll]ist\[str\]$", ctx.code(ann).strip()) is not None
    return False


_ENCODING_KEYS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def _resolve(ctx, x: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """A name's only value where it is read (:meth:`NameResolver.sole_value`); any other expression itself."""
    return ctx.names.sole_value(x) if isinstance(x, cst.Name) else x


def _returns_pt(call: cst.Call) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "return_tensors":
            return isinstance(a.value, cst.SimpleString) and a.value.evaluated_value == "pt"
    return False


def _method_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None
