"""Whether code that is about to run without gradients may train: the check behind every fix that
changes the gradient mode (``@torch.no_grad()``, ``with torch.no_grad():``).

Such a fix is safe only when nothing the wrapped code reaches needs the autograd graph.  Evidence of
training, from the wrapped code itself or the same-module helpers it calls (three calls deep):

- *strong* -- a backward pass, an optimizer step, a call named like a training step, or an optimizer or a
  model's
  parameters handed to a callable that is not a known library function (``loss_scaler(loss,
  optimizer)``, whose ``__call__`` runs the backward pass; a ``step(loss, optimizer)`` closure).  Such
  code trains: it is not evaluation at all.
- *weak* -- a model output, or a value computed from one that is not detached (a loss), handed to a
  callable the code was given (a parameter) or to one whose code is not in view, other than a loss
  function whose result is kept, a metric or container method (``update``, ``append``, ...) or a
  builtin; turning training mode back on (``model.train()``: training may go on right after); or a
  gradient reset (``zero_grad``) with no backward pass or step in view: it computes no gradient itself
  (a leftover in evaluation code), but training may be split across helpers.  That callable may
  differentiate; a fix that turns gradients off is unsafe then.
"""
from __future__ import annotations

from typing import Iterable, Optional, Set

import libcst as cst

from torchlint.analysis.context import FileContext, assignment_targets, callee_name, method_name, receiver
from torchlint.families.training.evaluation import (
    KNOWN_LIBRARIES,
    enclosing_params,
    hands_optimizer_away,
    is_builtin,
    TRAIN_CALL,
    eval_mode_target,
    graph_free_function,
    snake,
    train_mode_call,
)
from torchlint.analysis.training import (
    calls_through_helpers,
    is_backward_like,
    is_detached,
    is_grad_clear_call,
    is_loss_call,
    optimizer_of_step,
)
from torchlint.analysis.definitions import position
from torchlint.analysis.roles import switches_mode
from torchlint.analysis.walk import iter_nodes

STRONG = "strong"
WEAK = "weak"

#: methods that store or summarise a value without differentiating it
_KEEPING_METHODS = frozenset(
    {"append", "extend", "insert", "add", "update", "add_batch", "process", "compute", "put", "write", "log",
     "info", "debug", "warning", "format", "join", "setdefault", "__setitem__"}
)


def training_evidence(ctx: FileContext, node: cst.CSTNode, model_calls: Iterable[cst.Call] = (),
                      depth: int = 3) -> Optional[str]:
    """``STRONG``, ``WEAK`` or None (see the module docstring) for the code under ``node``."""
    found: Optional[str] = None
    for call, _via in calls_through_helpers(ctx, node, depth):
        if _trains(ctx, call):
            return STRONG
        if is_grad_clear_call(call):
            found = WEAK  # clears gradients and computes none: training split across helpers, or a leftover
        elif train_mode_call(call) and not _restores_after_eval(ctx, node, call):
            found = WEAK  # turns training mode back on: training may go on right after this code
    derived = _derived_names(ctx, node, set(model_calls))
    for call in ctx.calls_in(node):
        verdict = _unknown_callee_verdict(ctx, node, call, derived, set(model_calls))
        if verdict == STRONG:
            return STRONG
        if verdict == WEAK:
            found = WEAK
    return found


def _restores_after_eval(ctx: FileContext, node: cst.CSTNode, call: cst.Call) -> bool:
    """``m.train()`` under ``node`` after ``node`` itself put ``m`` in eval mode (``m.eval()`` ... ``m.train()``
    around an evaluation): it restores the mode the caller had, it is no sign of training here."""
    target = receiver(call)
    calls = list(ctx.calls_in(node))
    if target is None or not any(c is call for c in calls):
        return False  # (a `train()` in a helper it calls is judged in that helper)
    code = ctx.code(target)
    at = position(ctx, call)
    for other in calls:
        switched = eval_mode_target(other)
        if switched is not None and ctx.code(switched) == code and position(ctx, other) < at:
            return True
    return False


def _trains(ctx: FileContext, call: cst.Call) -> bool:
    if is_backward_like(ctx, call) or optimizer_of_step(ctx, call) is not None:
        return True
    name = callee_name(call)
    return name is not None and bool(TRAIN_CALL.search(snake(name)))


def _derived_names(ctx: FileContext, node: cst.CSTNode, model_calls: Set[cst.Call]) -> Set[str]:
    """Names bound under ``node`` to a model output or a value computed from one, not detached."""
    out: Set[str] = set()
    assigns = list(ctx.contents(node).assigns)
    for _ in range(4):  # a few passes: `out = model(x)`, `loss = crit(out, y)`, `total = loss * w`
        grew = False
        for a in assigns:
            value = getattr(a, "value", None)
            if value is None or is_detached(ctx, value) or not _from_model(ctx, value, model_calls, out):
                continue
            for target in assignment_targets(a):
                for n in iter_nodes(target):
                    if isinstance(n, cst.Name) and n.value not in out:
                        out.add(n.value)
                        grew = True
        if not grew:
            break
    return out


def _from_model(ctx: FileContext, expr: cst.CSTNode, model_calls: Set[cst.Call], derived: Set[str]) -> bool:
    for n in ctx.nodes(expr):
        if n in model_calls or (type(n) is cst.Name and n.value in derived):
            return True
    return False


def _known_callee(ctx: FileContext, node: cst.CSTNode, call: cst.Call, derived: Set[str],
                  model_calls: Set[cst.Call]) -> bool:
    """A callee whose behaviour is known not to differentiate what it is given."""
    func = call.func
    if call in model_calls:
        return True
    if ctx.function_for_call(call) is not None:
        return True  # same-module code: its own calls are checked through the helper walk
    if graph_free_function(ctx, call):
        return True  # a function of another project file that takes no gradient (its code is in view)
    names = set(ctx.names.qualified_names_at(func)) | set(ctx.names.instance_of(func))
    if any(q.startswith(_KNOWN_LIBRARIES) or q in ("torch", "numpy") for q in names):
        return not any(q.endswith((".backward", ".step")) for q in names)
    if isinstance(func, cst.Name) and func.value in enclosing_params(ctx, call):
        return False  # a callable the code was given
    if is_builtin(ctx, func):
        return True  # `zip`, `enumerate`, `list`, `print`
    root = func
    while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if isinstance(root, cst.Name) and (root.value in _model_roots(model_calls) or switches_mode(ctx, root)):
        return True  # a model's own submodules and methods (`decoder.attention(h)`): its forward computation
    if isinstance(func, cst.Attribute):
        recv = receiver(call)
        if recv is not None and _from_model(ctx, recv, model_calls, derived):
            return True  # a tensor method (`.backward()` is strong evidence, checked before)
        if method_name(call) in _KEEPING_METHODS:
            return True
        if recv is not None and any(q.startswith("torch.") for q in ctx.names.instance_of(recv) or ctx.names.qualified_names_at(recv)):
            return True
    if isinstance(func, cst.Name):
        values = ctx.names.values_at(func)
        if values and all(isinstance(v, cst.Call) and any(q.startswith("torch.") for q in ctx.names.qualified_names_at(v.func))
                          for v in values):
            return True  # `criterion = nn.CrossEntropyLoss()`
    return False


_KNOWN_LIBRARIES = KNOWN_LIBRARIES
def _model_roots(model_calls: Set[cst.Call]) -> Set[str]:
    out = set()
    for call in model_calls:
        root = call.func
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if isinstance(root, cst.Name) and root.value != "self":
            out.add(root.value)
    return out


def _unknown_callee_verdict(ctx: FileContext, node: cst.CSTNode, call: cst.Call, derived: Set[str],
                            model_calls: Set[cst.Call]) -> Optional[str]:
    args = [a.value for a in call.args]
    if hands_optimizer_away(ctx, call):
        return STRONG  # `loss_scaler(loss, optimizer)`, `model.update(loss, optimizer)`: it trains
    if _known_callee(ctx, node, call, derived, model_calls):
        return None
    carries = [v for v in args if not is_detached(ctx, v) and _from_model(ctx, v, model_calls, derived)]
    if not carries:
        return None
    kept = not isinstance(ctx.parent(call), cst.Expr)
    if kept and is_loss_call(ctx, call):
        return None  # `loss = criterion(out, y)`: a loss function, its result used
    return WEAK
