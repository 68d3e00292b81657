from __future__ import annotations

import re
from typing import List, Optional, Set

import libcst as cst

from torchlint.analysis.context import arg, method_name, receiver
from torchlint.analysis.training import is_backward_like, optimizer_of_step
from torchlint.families.gradflow.optimizers import optimizer_holds
from torchlint.rule import Fix, Invalid, LintRule, Valid

_TOUCHES_GRADIENTS = re.compile(r"\.grad\b|backward|autograd|\bgrad\(")


class ZeroGradBetweenBackwardAndStep(LintRule):
    """
    ## What it does
    Finds gradient resets (`optimizer.zero_grad()`, or `model.zero_grad()` for the model whose
    parameters the optimizer holds, built on `model.parameters()` here or known to hold them through
    the arguments every call of the function passes, as in `regularise(disc, Adam(disc.parameters()))`)
    that run after `loss.backward()` and before `optimizer.step()` in the same
    block.

    ## Why is this bad?
    `zero_grad()` throws away the gradients the backward pass has just computed, so the step that
    follows applies zero (or `None`) gradients: the parameters do not learn, or only weight decay and
    momentum move them. The cookbook's order is reset, backward, step ("loss.backward() 前用
    optimizer.zero_grad() 清除累积梯度", PyTorch Cookbook, Zhang Hao, 2019; the training snippets of its 2024
    revision and of Effective PyTorch all clear first).

    Not reported: a reset of a different optimizer (GAN code resets the other network), code that
    reads or writes `.grad` or runs another backward between the reset and the step (gradient
    surgery), a reset inside an `if` (skipping a bad batch), and `step(closure)`.

    ## Example
    ```python
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    ```

    ## Use instead
    ```python
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ```

    ## Fix safety
    The fix moves the reset right before the statement that calls `backward()`. It is safe: the only
    behaviour it changes is which gradients the step applies, which is the bug.

    ## Options
    None.

    ## References
    - [torch.optim.Optimizer.zero_grad](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    - [Zeroing out gradients in PyTorch](https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL102"
    NAME = "zero-grad-between-backward-and-step"
    MESSAGE = "Gradients are cleared after `backward()` and before `step()`; the step applies zero gradients"
    FIX_TITLE = "Move the gradient reset before the backward call"
    TRIGGERS = ("zero_grad",)

    VALID = [
        Valid(
            """
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""
        ),
        Valid(
            """
for real in loader:
    d_loss = disc_loss(real)
    d_loss.backward()
    opt_g.zero_grad()
    opt_d.step()
"""
        ),
        Valid(
            """
def surgery(model, losses, optimizer):
    grads = []
    for loss in losses:
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        grads.append([p.grad.clone() for p in model.parameters()])
    optimizer.zero_grad()
    for p, g in zip(model.parameters(), combine(grads)):
        p.grad = g
    optimizer.step()
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    if not torch.isfinite(loss):
        optimizer.zero_grad()
        continue
    optimizer.step()
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    aux = aux_loss(model(x))
    aux.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
import torch

def fit(model, other, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in data:
        model(x).sum().backward()
        other.zero_grad()
        optimizer.step()
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step(closure)
"""
        ),
        # a GAN step given both models and their optimizers: the generator's gradients cleared between the
        # critic's backward pass and step are no part of that step
        Valid(
            """
import torch
import torch.nn as nn


def critic_step(gen, critic, c_opt, real, z):
    loss = critic(gen(z).detach()).mean() - critic(real).mean()
    c_opt.zero_grad()
    loss.backward()
    gen.zero_grad()
    c_opt.step()


if __name__ == "__main__":
    gen = nn.Linear(8, 4)
    critic = nn.Linear(4, 1)
    g_opt = torch.optim.Adam(gen.parameters())
    c_opt = torch.optim.Adam(critic.parameters())
    critic_step(gen, critic, c_opt, torch.randn(2, 4), torch.randn(2, 8))
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
""",
            fixed="""
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            line=5,
            col=5,
        ),
        Invalid(
            """
import torch

def train_step(model, batch, target):
    opt = torch.optim.Adam(model.parameters())
    out = model(batch)
    loss = torch.nn.functional.mse_loss(out, target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    model.zero_grad(set_to_none=True)
    opt.step()
    return loss.item()
""",
            fixed="""
import torch

def train_step(model, batch, target):
    opt = torch.optim.Adam(model.parameters())
    out = model(batch)
    loss = torch.nn.functional.mse_loss(out, target)
    model.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()
""",
        ),
        Invalid(
            """
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    # reset before the next batch
    optimizer.zero_grad()
    scaler.step(optimizer)
    scaler.update()
""",
            fixed="""
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    # reset before the next batch
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        ),
        Invalid(
            """
for x, y in loader:
    loss = criterion(model(x), y); loss.backward(); optimizer.zero_grad(); optimizer.step()
""",
        ),
        # a regularisation step of a function given the model and its optimizer: the model's gradients are
        # cleared after the penalty's backward pass, before the step
        Invalid(
            """
import torch
import torch.nn as nn


def regularise(disc, d_optim, real, weight):
    real.requires_grad = True
    pred = disc(real)
    penalty = torch.autograd.grad(pred.sum(), real, create_graph=True)[0].pow(2).mean()
    (weight * penalty).backward()
    disc.zero_grad()
    d_optim.step()


if __name__ == "__main__":
    disc = nn.Linear(4, 1)
    d_optim = torch.optim.Adam(disc.parameters())
    if torch.cuda.device_count() > 1:
        disc = nn.DataParallel(disc)
    regularise(disc, d_optim, torch.randn(2, 4), 10.0)
""",
            line=11,
            message="`disc.zero_grad()`: Gradients are cleared after `backward()` and before `step()`",
            fixed="""
import torch
import torch.nn as nn


def regularise(disc, d_optim, real, weight):
    real.requires_grad = True
    pred = disc(real)
    penalty = torch.autograd.grad(pred.sum(), real, create_graph=True)[0].pow(2).mean()
    disc.zero_grad()
    (weight * penalty).backward()
    d_optim.step()


if __name__ == "__main__":
    disc = nn.Linear(4, 1)
    d_optim = torch.optim.Adam(disc.parameters())
    if torch.cuda.device_count() > 1:
        disc = nn.DataParallel(disc)
    regularise(disc, d_optim, torch.randn(2, 4), 10.0)
""",
        ),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        self._step_calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if method_name(node) == "step":
            self._step_calls.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        for call in self._step_calls:  # after the walk: which model an optimizer holds is known then
            self._check(call)

    def _check(self, node: cst.Call) -> None:
        ctx = self.ctx
        optimizer = optimizer_of_step(ctx, node)
        if optimizer is None:
            return
        if receiver(node) is optimizer and node.args:
            return  # step(closure): the closure recomputes the gradients
        if receiver(node) is not optimizer and len(node.args) > 1:
            return
        units = self._units_before(node)
        if units is None:
            return
        opt_code = ctx.code(optimizer)
        clear_owners = {opt_code} | self._models_of(optimizer)
        clear: Optional[cst.Call] = None
        clear_unit: Optional[cst.CSTNode] = None
        for unit in units:
            calls = ctx.calls_in(unit)
            if clear is None:
                found = self._clear_in(unit, clear_owners, optimizer)
                if found is not None:
                    clear, clear_unit = found, unit
                    continue
                if _TOUCHES_GRADIENTS.search(ctx.bare_code(unit)):
                    return
                if any(_steps(ctx, c, opt_code) for c in calls):
                    return
                continue
            if any(is_backward_like(ctx, c) for c in calls):
                self.report(clear, self.quoting(clear, self.MESSAGE), fix=self._fix(unit, clear_unit))
                return
            if any(_steps(ctx, c, opt_code) for c in calls):
                return
        # no backward before the reset in this block: nothing to say

    def _units_before(self, node: cst.Call) -> Optional[List[cst.CSTNode]]:
        """The statements that run before the one holding ``node`` in its block, nearest first; the
        parts of a ``a; b; c`` line count as statements of their own."""
        ctx = self.ctx
        stmt = ctx.statement_of(node)
        block = ctx.block_of(stmt) if stmt is not None else None
        if block is None:
            return None
        index = next((i for i, s in enumerate(block) if s is stmt), None)
        if index is None:
            return None
        units: List[cst.CSTNode] = []
        if isinstance(stmt, cst.SimpleStatementLine):
            small = node
            for a in ctx.ancestors(node):
                if a is stmt:
                    break
                small = a
            pos = next((i for i, s in enumerate(stmt.body) if s is small), 0)
            units.extend(reversed(stmt.body[:pos]))
        for s in reversed(block[:index]):
            if isinstance(s, cst.SimpleStatementLine):
                units.extend(reversed(s.body))
            else:
                units.append(s)
        return units

    def _clear_in(self, unit: cst.CSTNode, owners: Set[str], optimizer: cst.BaseExpression) -> Optional[cst.Call]:
        """The ``zero_grad()`` call the statement ``unit`` is, when it clears the optimizer or a model whose
        parameters it holds (spelled as the optimizer was built, or known to be the same model)."""
        if isinstance(unit, cst.Expr) and isinstance(unit.value, cst.Call):
            call = unit.value
            recv = receiver(call)
            if method_name(call) == "zero_grad" and recv is not None and (
                    self.ctx.code(recv) in owners or optimizer_holds(self.ctx, optimizer, recv)):
                return call
        return None

    def _models_of(self, optimizer: cst.BaseExpression) -> Set[str]:
        """Codes of the modules whose ``.parameters()`` built the optimizer (``model.zero_grad()`` clears them)."""
        out: Set[str] = set()
        for value in self.ctx.names.values_before(optimizer):
            if not isinstance(value, cst.Call):
                continue
            params = arg(value, 0, "params")
            if params is None:
                continue
            for call in self.ctx.calls_in(params.value):
                if method_name(call) in ("parameters", "named_parameters") and receiver(call) is not None:
                    out.add(self.ctx.code(receiver(call)))
        return out

    def _fix(self, backward_unit: cst.CSTNode, clear_unit: Optional[cst.CSTNode]) -> Optional[Fix]:
        clear_line = self.ctx.parent(clear_unit) if clear_unit is not None else None
        if not isinstance(clear_line, cst.SimpleStatementLine) or len(clear_line.body) != 1:
            return None
        target = backward_unit
        if isinstance(backward_unit, cst.BaseSmallStatement):
            target = self.ctx.parent(backward_unit)
            if not isinstance(target, cst.SimpleStatementLine) or len(target.body) != 1:
                return None
        return self.make_fix().remove(clear_line).insert_before(target, clear_line)


def _steps(ctx, call: cst.Call, opt_code: str) -> bool:
    other = optimizer_of_step(ctx, call)
    return other is not None and ctx.code(other) == opt_code
