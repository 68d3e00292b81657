from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.analysis.training import (
    clears_gradients,
    common_loop,
    is_backward,
    optimizer_of_step,
    unique_code,
)
from torchlint.rule import Invalid, LintRule, Valid


class MissingZeroGrad(LintRule):
    """
    ## What it does
    Finds training loops that call `loss.backward()` and `optimizer.step()` but never clear the
    gradients (`optimizer.zero_grad()`, `model.zero_grad()`, or `p.grad = None`).

    ## Why is this bad?
    `backward()` adds to `.grad`; it does not overwrite it. Without a reset, every step applies the sum of
    all gradients computed so far, and training diverges or stalls. The cookbook's training-loop advice
    is explicit: call `optimizer.zero_grad()` before `loss.backward()`
    ("loss.backward() 前用 optimizer.zero_grad() 清除累积梯度", PyTorch Cookbook, Zhang Hao, 2019, and its
    2024 revision, "模型训练和测试" section).

    Gradient accumulation is not flagged: a loop that clears every N steps (inside an `if`), at the end
    of the iteration, through a helper defined in the same module, or inside an LBFGS closure, clears.

    ## Example
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    The fix inserts `<optimizer>.zero_grad()` right before the backward call, using the optimizer the
    loop steps. It is safe: it changes what the step applies, which is the bug. No fix is offered when
    the loop steps several optimizers.

    ## Options
    None.

    ## References
    - [torch.optim.Optimizer.zero_grad](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    - [Zeroing out gradients in PyTorch](https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL101"
    NAME = "missing-zero-grad"
    MESSAGE = "Training loop calls `backward()` and `step()` but never clears gradients; they accumulate across iterations"
    FIX_TITLE = "Insert `zero_grad()` before the backward call"
    TRIGGERS = ("backward",)

    VALID = [
        Valid(
            """
import torch

def train(model, loader, criterion, accum_steps=4):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    opt.zero_grad(set_to_none=True)
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accum_steps
        loss.backward()
        if (step + 1) % accum_steps == 0:
            opt.step()
            opt.zero_grad(set_to_none=True)
"""
        ),
        Valid(
            """
for i in range(1000):
    net.zero_grad()
    loss = criterion(net(x), y)
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
for x, y in loader:
    for p in model.parameters():
        p.grad = None
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
def reset(opt):
    opt.zero_grad(set_to_none=True)

for x, y in loader:
    reset(optimizer)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
class Trainer:
    def fit(self, loader):
        for x, y in loader:
            self.clear()
            self.loss(x, y).backward()
            self.optimizer.step()

    def clear(self):
        self.optimizer.zero_grad()
"""
        ),
        Valid(
            """
for x, y in loader:
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    scheduler.step()
"""
        ),
        Valid(
            """
for batch in loader:
    loss = engine(batch)
    engine.backward(loss)
    engine.step()
"""
        ),
        Valid(
            """
while not done:
    obs, reward, done, info = env.step(action)
    loss = policy_loss(obs, reward)
    loss.backward()
"""
        ),
        Valid(
            """
import torch

for t in timesteps:
    x_in = latents.detach().clone()
    x_in.requires_grad = True
    opt = torch.optim.SGD([x_in], lr=0.1)
    with torch.enable_grad():
        loss = guidance_loss(unet(x_in, t))
        loss.backward()
        opt.step()
    latents = x_in.detach()
"""
        ),
        Valid(
            """
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn as nn

def train(model, loader, epochs=3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for images, labels in loader:
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
""",
            fixed="""
import torch
import torch.nn as nn

def train(model, loader, epochs=3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for images, labels in loader:
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
            line=11,
            col=13,
        ),
        Invalid(
            """
for epoch in range(10):
    opt.zero_grad()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
""",
            fixed="""
for epoch in range(10):
    opt.zero_grad()
    for x, y in loader:
        loss = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        ),
        Invalid(
            """
step = 0
while step < 100:
    loss = model(batch).sum()
    loss.backward()
    self.optimizer.step()
    step += 1
""",
            fixed="""
step = 0
while step < 100:
    loss = model(batch).sum()
    self.optimizer.zero_grad()
    loss.backward()
    self.optimizer.step()
    step += 1
""",
        ),
        Invalid(
            """
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            fixed="""
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        ),
        Invalid(
            """
for real in loader:
    d_loss = disc_loss(real)
    d_loss.backward()
    opt_d.step()
    g_loss = gen_loss()
    g_loss.backward()
    opt_g.step()
""",
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        self._check_loop(node)

    def leave_While(self, node: cst.While) -> None:
        self._check_loop(node)

    def _check_loop(self, loop: cst.CSTNode) -> None:
        ctx = self.ctx
        calls = ctx.calls_in(loop)
        backwards = [c for c in calls if is_backward(ctx, c)]
        if not backwards:
            return
        steps = []
        for c in calls:
            opt = optimizer_of_step(ctx, c)
            if opt is not None:
                steps.append((c, opt))
        if not steps:
            return
        # Only the innermost loop that holds a backward and a step is the training loop.
        pairs = [(b, s) for b in backwards for s, _ in steps if common_loop(ctx, b, s) is loop]
        if not pairs:
            return
        if clears_gradients(ctx, loop):
            return
        backward = pairs[0][0]
        optimizers = [opt for s, opt in steps if common_loop(ctx, backward, s) is loop]
        if any(self._built_in(opt, loop) for opt in optimizers):
            return  # a fresh optimizer each iteration steps fresh leaves: nothing accumulates
        self.report(backward, fix=self._fix(backward, optimizers))

    def _built_in(self, optimizer: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """Whether the optimizer object is constructed inside the loop itself."""
        return any(
            isinstance(v, cst.Call) and self.ctx.is_inside(v, loop) for v in self.ctx.names.values(optimizer)
        )

    def _fix(self, backward: cst.Call, optimizers: List[cst.BaseExpression]):
        name = unique_code(self.ctx, optimizers)
        stmt: Optional[cst.CSTNode] = self.ctx.statement_of(backward)
        if name is None or not isinstance(stmt, cst.SimpleStatementLine):
            return None
        new = self.ctx.parse_statement(f"{name}.zero_grad()\n")
        return self.make_fix(f"Insert `{name}.zero_grad()` before the backward call").insert_before(stmt, new)
