from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from torchlint.families.training.steps import (
    BACKWARD,
    CLEAR,
    STEP,
    LoopEvent,
    cleared_modules,
    exclusive_branches,
    loop_events,
    source_before,
)
from torchlint.analysis.context import receiver
from torchlint.analysis.training import common_loop, is_grad_clear_call
from torchlint.rule import Invalid, LintRule, Valid


class MissingZeroGrad(LintRule):
    """
    ## What it does
    Finds training loops that call `loss.backward()` and `optimizer.step()` but never clear the
    gradients (`optimizer.zero_grad()`, `model.zero_grad()`, or `p.grad = None`). A function that a
    framework runs once per iteration counts as a loop body: the process function given to ignite's
    `Engine(update_fn)` (unless the file clears gradients elsewhere, e.g. in an event handler).

    ## Why is this bad?
    `backward()` adds to `.grad`; it does not overwrite it. Without a reset, every step applies the sum of
    all gradients computed so far, and training diverges or stalls. The cookbook's training-loop advice
    is explicit: call `optimizer.zero_grad()` before `loss.backward()`
    ("loss.backward() 前用 optimizer.zero_grad() 清除累积梯度", PyTorch Cookbook, Zhang Hao, 2019, and its
    2024 revision, "模型训练和测试" section).

    Gradient accumulation is not flagged: a loop that clears every N steps (inside an `if`), at the end
    of the iteration, through a helper, or inside an LBFGS closure, clears.

    Each optimizer is checked on its own: `opt_d.zero_grad()` does not clear what `opt_g` steps (a
    model's `zero_grad()`, `p.grad = None` or a clearing helper counts for every optimizer). A clear in
    one branch of an `if` does not count for a step in another branch. The backward pass and the step
    are followed into the functions the loop calls (same file, methods through `self`, functions of the
    project's modules), two calls deep. A `torch.distributed.optim.DistributedOptimizer` keeps its
    gradients in the distributed autograd context (nothing to clear), and a hand-written optimizer class
    whose `step` clears `p.grad` itself clears.

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
    The fix inserts `<optimizer>.zero_grad()` right before the backward call that precedes the step,
    using the optimizer the loop steps. It is safe when the loop steps one optimizer: it changes what
    the step applies, which is the bug. With several optimizers it is unsafe (one backward pass may
    deliberately feed two optimizers). No fix when the backward call is inside a helper (its other
    callers may accumulate on purpose), and never on an object that has no `zero_grad`: a hand-written
    optimizer class without that method is reported with no fix, and none is needed for a
    `DistributedOptimizer`.

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
        # the framework runs `update` once per iteration; an event handler clears the gradients first
        Valid(
            """
import torch
from ignite.engine import Engine, Events


def update(engine, batch):
    x, y = batch
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


trainer = Engine(update)


@trainer.on(Events.ITERATION_STARTED)
def clear(engine):
    optimizer.zero_grad()
"""
        ),
        # automatic optimization: Lightning clears and steps around `training_step`
        Valid(
            """
import torch
import lightning as L


class Regressor(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)
"""
        ),
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
        Valid(
            """
import torch

class ManualSGD:
    def __init__(self, params, lr=0.1):
        self.params = list(params)
        self.lr = lr

    @torch.no_grad()
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad
            p.grad = None

def train(model, loader, criterion):
    optimizer = ManualSGD(model.parameters())
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
"""
        ),
        Valid(
            """
import torch.distributed.autograd as dist_autograd
from torch.distributed.optim import DistributedOptimizer
from torch import optim

def train(model, loader, criterion, param_rrefs):
    opt = DistributedOptimizer(optim.SGD, param_rrefs, lr=0.05)
    for x, y in loader:
        with dist_autograd.context() as context_id:
            loss = criterion(model(x), y)
            dist_autograd.backward(context_id, [loss])
            opt.step(context_id)
"""
        ),
        Valid(
            """
for real in loader:
    netD.zero_grad()
    errD = criterion(netD(real), ones)
    errD.backward()
    optimizerD.step()
    netG.zero_grad()
    errG = criterion(netD(netG(noise)), ones)
    errG.backward()
    optimizerG.step()
"""
        ),
        Valid(
            """
def zero(optimizer):
    optimizer.zero_grad()

def backward_step(loss, optimizer):
    loss.backward()
    optimizer.step()

def train(model, loader, criterion, optimizer, accumulate):
    for i, (x, y) in enumerate(loader):
        if i % accumulate == 0:
            zero(optimizer)
        backward_step(criterion(model(x), y), optimizer)
"""
        ),
        # a third optimizer over the parameters of two models whose own optimizers clear them each iteration
        Valid(
            """
import itertools
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, z):
        return self.fc(z)


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


class Trainer:
    def __init__(self):
        self.gen = Gen()
        self.disc = Disc()
        self.gen_opt = torch.optim.Adam(self.gen.parameters())
        self.disc_opt = torch.optim.Adam(self.disc.parameters())
        self.code_opt = torch.optim.Adam(itertools.chain(self.gen.parameters(), self.disc.parameters()))

    def fit(self, loader):
        for x, z in loader:
            self.disc_opt.zero_grad()
            d_loss = self.disc(x).mean() - self.disc(self.gen(z).detach()).mean()
            d_loss.backward()
            self.disc_opt.step()
            self.gen_opt.zero_grad()
            g_loss = -self.disc(self.gen(z)).mean()
            g_loss.backward(retain_graph=True)
            self.gen_opt.step()
            code_loss = self.disc(self.gen(z)).pow(2).mean()
            code_loss.backward()
            self.code_opt.step()
"""
        ),
    ]

    INVALID = [
        # the same, but the third optimizer also holds a head nobody else clears
        Invalid(
            """
import itertools
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, z):
        return self.fc(z)


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


class Trainer:
    def __init__(self):
        self.gen = Gen()
        self.disc = Disc()
        self.head = nn.Linear(3, 2)
        self.gen_opt = torch.optim.Adam(self.gen.parameters())
        self.disc_opt = torch.optim.Adam(self.disc.parameters())
        self.code_opt = torch.optim.Adam(itertools.chain(self.gen.parameters(), self.disc.parameters(), self.head.parameters()))

    def fit(self, loader):
        for x, z in loader:
            self.disc_opt.zero_grad()
            d_loss = self.disc(x).mean() - self.disc(self.gen(z).detach()).mean()
            d_loss.backward()
            self.disc_opt.step()
            self.gen_opt.zero_grad()
            g_loss = -self.disc(self.gen(z)).mean()
            g_loss.backward(retain_graph=True)
            self.gen_opt.step()
            code_loss = self.head(self.disc(self.gen(z))).pow(2).mean()
            code_loss.backward()
            self.code_opt.step()
""",
            fixed="""
import itertools
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, z):
        return self.fc(z)


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


class Trainer:
    def __init__(self):
        self.gen = Gen()
        self.disc = Disc()
        self.head = nn.Linear(3, 2)
        self.gen_opt = torch.optim.Adam(self.gen.parameters())
        self.disc_opt = torch.optim.Adam(self.disc.parameters())
        self.code_opt = torch.optim.Adam(itertools.chain(self.gen.parameters(), self.disc.parameters(), self.head.parameters()))

    def fit(self, loader):
        for x, z in loader:
            self.disc_opt.zero_grad()
            d_loss = self.disc(x).mean() - self.disc(self.gen(z).detach()).mean()
            d_loss.backward()
            self.disc_opt.step()
            self.gen_opt.zero_grad()
            g_loss = -self.disc(self.gen(z)).mean()
            g_loss.backward(retain_graph=True)
            self.gen_opt.step()
            code_loss = self.head(self.disc(self.gen(z))).pow(2).mean()
            self.code_opt.zero_grad()
            code_loss.backward()
            self.code_opt.step()
""",
            line=45,
            col=13,
            unsafe=True,
        ),
        # ignite's Engine calls the process function once per iteration: it is the loop body
        Invalid(
            """
import torch
from ignite.engine import Engine


def update_fn(engine, batch):
    model.train()
    x, y = batch
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


trainer = Engine(update_fn)
""",
            fixed="""
import torch
from ignite.engine import Engine


def update_fn(engine, batch):
    model.train()
    x, y = batch
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


trainer = Engine(update_fn)
""",
            message="runs once per training iteration",
        ),
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
            fixed="""
for real in loader:
    d_loss = disc_loss(real)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = gen_loss()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
""",
            count=2,
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optim_gen = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
optim_critic = torch.optim.RMSprop(critic.parameters(), lr=5e-5)

for batch in torch.randn(10, 32, 4).unbind(0):
    noise = torch.randn(32, 8)
    optim_critic.zero_grad()
    critic_loss = critic(gen(noise).detach()).mean() - critic(batch).mean()
    critic_loss.backward()
    optim_critic.step()
    gen_loss = -critic(gen(noise)).mean()
    gen_loss.backward()
    optim_gen.step()
""",
            fixed="""
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optim_gen = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
optim_critic = torch.optim.RMSprop(critic.parameters(), lr=5e-5)

for batch in torch.randn(10, 32, 4).unbind(0):
    noise = torch.randn(32, 8)
    optim_critic.zero_grad()
    critic_loss = critic(gen(noise).detach()).mean() - critic(batch).mean()
    critic_loss.backward()
    optim_critic.step()
    gen_loss = -critic(gen(noise)).mean()
    optim_gen.zero_grad()
    gen_loss.backward()
    optim_gen.step()
""",
            line=17,
            unsafe=True,
            message="steps `optim_gen`",
        ),
        Invalid(
            """
def train(model, loader, optimizer, scaler, use_amp):
    for x, y in loader:
        if use_amp:
            optimizer.zero_grad()
            scaler.scale(model(x, y)).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = model(x, y)
            loss.backward()
            optimizer.step()
""",
            fixed="""
def train(model, loader, optimizer, scaler, use_amp):
    for x, y in loader:
        if use_amp:
            optimizer.zero_grad()
            scaler.scale(model(x, y)).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""",
            line=11,
        ),
        Invalid(
            """
def train_step(model, batch, criterion):
    x, y = batch
    loss = criterion(model(x), y)
    loss.backward()
    return loss.item()

def train(model, loader, criterion, optimizer, epochs):
    for epoch in range(epochs):
        for batch in loader:
            train_step(model, batch, criterion)
            optimizer.step()
""",
            line=11,
            message="in a helper",
        ),
        Invalid(
            """
class Trainer:
    def backward_pass(self, x, y):
        loss = self.criterion(self.model(x), y)
        loss.backward()

    def update(self):
        self.optimizer.step()

    def fit(self, loader):
        for x, y in loader:
            self.backward_pass(x, y)
            self.update()
""",
            line=12,
        ),
        Invalid(
            """
import torch

class PlainSGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    @torch.no_grad()
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad

def train(model, loader, criterion):
    opt = PlainSGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
""",
            line=18,
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        self._check_loop(node)

    def leave_While(self, node: cst.While) -> None:
        self._check_loop(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        ctx = self.ctx
        for function in iteration_functions(ctx):
            if any(is_grad_clear_call(c) and not ctx.is_inside(c, function) for c in ctx.calls_in(ctx.module)):
                continue  # cleared elsewhere: an event handler run at the start of every iteration
            self._check_loop(function)

    def _check_loop(self, loop: cst.CSTNode) -> None:
        ctx = self.ctx
        events = loop_events(ctx, loop)
        backwards = [e for e in events if e.kind == BACKWARD]
        steps = [e for e in events if e.kind == STEP]
        if not backwards or not steps:
            return
        # Only the innermost loop that holds a backward and a step is the training loop; a function a
        # framework runs once per iteration is one when no loop of its own holds both.
        inner = None if isinstance(loop, cst.FunctionDef) else loop
        pairs = [(b, s) for b in backwards for s in steps if common_loop(ctx, b.where, s.where) is inner]
        if not pairs:
            return
        clears = [e for e in events if e.kind == CLEAR]
        stepped: Dict[str, List[LoopEvent]] = {}
        for s in steps:
            if common_loop(ctx, backwards[0].where, s.where) is inner or any(b is s for b, _ in pairs):
                stepped.setdefault(s.optimizer or "", []).append(s)
        several = len(stepped) > 1
        for code, its_steps in stepped.items():
            if any(self._built_in(s.expr, loop) for s in its_steps if s.expr is not None):
                continue  # a fresh optimizer each iteration steps fresh leaves: nothing accumulates
            if all(s.clears_itself or s.no_clearing for s in its_steps):
                continue  # clears `p.grad` in its own `step`, or keeps gradients in an autograd context
            uncleared = [s for s in its_steps if not self._cleared(s, clears)]
            if not uncleared:
                continue
            step = uncleared[0]
            backward = self._backward_for(step, backwards)
            fix = None
            if code and step.has_zero_grad and backward.where is backward.call:
                fix = self._fix(backward.call, code, unsafe=several)
            message = None
            if several and code:
                message = (
                    f"Training loop steps `{code}` but never clears its gradients (other optimizers' "
                    "clears do not reach them); they accumulate across iterations"
                )
            if backward.where is not backward.call:
                message = (message or self.MESSAGE) + " (the backward call is in a helper this loop calls)"
            if inner is None:
                message = (
                    f"`{loop.name.value}` runs once per training iteration (called by the framework's loop) "  # type: ignore[attr-defined]
                    "and calls `backward()` and `step()` but never clears gradients; they accumulate across "
                    "iterations"
                )
            self.report(backward.where, message, fix=fix)

    def _cleared(self, step: "LoopEvent", clears: List["LoopEvent"]) -> bool:
        """A clear counts for a step when it clears that optimizer (or something that may hold its
        parameters: a model, `p.grad`, a clearing helper) and does not sit in another branch of an `if`;
        or when the clears of other optimizers together cover every module the step's optimizer was built
        over (`info_opt = Adam(chain(G.parameters(), D.parameters()))` beside `G_opt.zero_grad()` and
        `D_opt.zero_grad()`: the gradients live on the parameters, and those clears reset them)."""
        others: List[LoopEvent] = []
        for c in clears:
            if exclusive_branches(self.ctx, c.where, step.where):
                continue
            if c.optimizer is not None and step.optimizer is not None and c.optimizer != step.optimizer:
                others.append(c)
                continue
            return True
        if step.expr is None or not others:
            return False
        needed = cleared_modules(self.ctx, step.expr)
        if needed is None:
            return False
        covered: Set[str] = set()
        for c in others:
            recv = receiver(c.call) if c.where is c.call and isinstance(c.call, cst.Call) else None
            found = cleared_modules(self.ctx, recv) if recv is not None else None
            covered |= found or set()
        return needed <= covered

    def _backward_for(self, step: "LoopEvent", backwards: List["LoopEvent"]) -> "LoopEvent":
        """The backward call that produced the gradients a step applies: the last one before it."""
        before = [b for b in backwards if source_before(self.ctx, b.where, step.where)]
        return before[-1] if before else backwards[-1]

    def _built_in(self, optimizer: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """Whether the optimizer object is constructed inside the loop itself."""
        return any(
            isinstance(v, cst.Call) and self.ctx.is_inside(v, loop) for v in self.ctx.names.values_before(optimizer)
        )

    def _fix(self, backward: cst.Call, name: str, unsafe: bool):
        stmt: Optional[cst.CSTNode] = self.ctx.statement_of(backward)
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None
        new = self.ctx.parse_statement(f"{name}.zero_grad()\n")
        title = f"Insert `{name}.zero_grad()` before the backward call"
        return self.make_fix(title, unsafe=unsafe or None).insert_before(stmt, new)


_ENGINES = frozenset({"ignite.engine.Engine", "ignite.engine.engine.Engine"})


def iteration_functions(ctx) -> List[cst.FunctionDef]:
    """Functions of this file that a framework runs once per training iteration: the process function
    given to ignite's ``Engine(update)``."""
    out: List[cst.FunctionDef] = []
    functions = ctx.functions()
    for call in ctx.calls_in(ctx.module):
        if not ctx.names.matches(call.func, _ENGINES) or not call.args:
            continue
        first = call.args[0].value
        if call.args[0].keyword is None and isinstance(first, cst.Name):
            defs = functions.get(first.value, [])
            if len(defs) == 1 and defs[0] not in out:
                out.append(defs[0])
    return out
