from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import arg, receiver
from torchlint.analysis.walk import iter_nodes
from torchlint.analysis.training import (
    LOOP_TYPES,
    block_position,
    calls_through_helpers,
    common_loop,
    is_scheduler_step,
    optimizer_of_step,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid

_GUARD_WORDS = re.compile(r"\b(is|not|None|and|or)\b|[()\s]")


class SchedulerStepBeforeOptimizerStep(LintRule):
    """
    ## What it does
    Finds `lr_scheduler.step()` called before `optimizer.step()` in the same loop iteration: directly,
    or before a call to a helper defined in the same module that steps the optimizer (a per-epoch
    `train(...)` function); and a per-epoch function that steps the scheduler before its own loop over
    the batches steps the optimizer (`def train(epoch): scheduler.step(); for x, y in loader: ...`).

    ## Why is this bad?
    Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it first skips the first
    value of the schedule (a warm-up starts one step in, a step decay comes one epoch early) and PyTorch
    warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`". The cookbook's learning-rate
    decay snippets predate that change and show the old order, `scheduler.step()` then
    `train(...)` (PyTorch Cookbook, Zhang Hao, 2019, "学习率衰减"; the 2024 revision, section 6.10,
    keeps it): the order to follow today is train, validate, then `scheduler.step()`.

    Not reported: `step(metric)` / `step(epoch)` calls (`ReduceLROnPlateau`, custom schedulers), a
    scheduler step guarded by a condition other than the scheduler's own existence
    (`if epoch > 0: scheduler.step()` is the correct order written differently), unless the same test guards
    the optimizer steps that follow (`if phase == "train": scheduler.step()` at the start of the training phase
    of a `for phase in ("train", "val")` loop is reported) or the loop cannot change the test's answer
    (`if args.scheduler == "cyclic":` before `optimizer.step()` is reported), and a scheduler step
    that follows another optimizer step of the same iteration (one scheduler per optimizer in GAN code).

    ## Example
    ```python
    for epoch in range(80):
        scheduler.step()
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    ```

    ## Use instead
    ```python
    for epoch in range(80):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    ```

    ## Fix safety
    The fix moves the scheduler step after the statement that steps the optimizer. It is unsafe: code
    between the two places that reads the learning rate (logging `get_last_lr()`, a custom schedule)
    sees a different value, and the schedule shifts by one step, which changes training results.

    ## Options
    None.

    ## References
    - [How to adjust learning rate](https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate)
    - [torch.optim.lr_scheduler](https://pytorch.org/docs/stable/optim.html#torch.optim.lr_scheduler.LRScheduler)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL109"
    NAME = "scheduler-step-before-optimizer-step"
    MESSAGE = (
        "`lr_scheduler.step()` runs before `optimizer.step()` in the same iteration; since PyTorch 1.1 it must "
        "come after, or the first learning-rate value is skipped"
    )
    BEFORE_LOOP = (
        "`lr_scheduler.step()` runs before the loop that steps the optimizer, so the first call steps the "
        "scheduler before any `optimizer.step()`; since PyTorch 1.1 it must come after, or the first "
        "learning-rate value is skipped"
    )
    FIX_TITLE = "Move the scheduler step after the optimizer step"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("sched", "warmup", "lr_policy")

    VALID = [
        # the validation phase steps the scheduler: after the training phase's optimizer steps
        """
import torch


def fit(net, batches, opt, sched, epochs):
    for epoch in range(epochs):
        for phase in ("train", "val"):
            if phase == "val":
                sched.step()
            for x, y in batches:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(net(x), y)
                if phase == "train":
                    loss.backward()
                    opt.step()
""",
        Valid(
            """
for epoch in range(80):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
"""
        ),
        Valid(
            """
import torch

scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", patience=5)
for t in range(80):
    scheduler.step(val_acc)
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
"""
        ),
        Valid(
            """
for epoch in range(80):
    if epoch > 0:
        scheduler.step()
    for x, y in loader:
        criterion(model(x), y).backward()
        optimizer.step()
"""
        ),
        Valid(
            """
for real in loader:
    d_loss(real).backward()
    opt_d.step()
    sched_d.step()
    g_loss().backward()
    opt_g.step()
    sched_g.step()
"""
        ),
        Valid(
            """
for epoch in range(10):
    lr_scheduler.step(epoch)
    train_one_epoch(model, loader, optimizer)
"""
        ),
        Valid(
            """
for epoch in range(10):
    scheduler.step()
    env.step(action)
    engine.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5)
state = {"seen": 0}


def run_epoch(batches, start_epoch):
    for _ in range(start_epoch):
        warm.step()
    for x, y in batches:
        opt.zero_grad()
        (net(x) - y).pow(2).mean().backward()
        opt.step()
        state["seen"] += 1
        if state["seen"] > 2:
            warm.step()
    warm.step()


def other(batches, phase):
    for x, y in batches:
        opt.zero_grad()
        (net(x) - y).pow(2).mean().backward()
        if phase == "warm":
            phase = "main"
            warm.step()
        opt.step()


run_epoch([(torch.randn(4, 5), torch.randn(4, 1))], 0)
other([(torch.randn(4, 5), torch.randn(4, 1))], "warm")
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

warm_epochs = 2
net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]
for epoch in range(6):
    for x, y in batches:
        opt.zero_grad()
        (net(x) - y).pow(2).mean().backward()
        if epoch >= warm_epochs:
            decay.step()
        opt.step()
"""
        ),
    ]

    INVALID = [
        # the training phase steps the scheduler first, then its batches step the optimizer: the same test
        # guards both, so the guard delays nothing
        Invalid(
            """
import torch


def fit(net, batches, opt, sched, epochs):
    for epoch in range(epochs):
        for phase in ("train", "val"):
            if phase == "train":
                sched.step()
                net.train()
            else:
                net.eval()
            for x, y in batches:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(net(x), y)
                if phase == "train":
                    loss.backward()
                    opt.step()
""",
            line=9,
        ),
        Invalid(
            """
import torch

scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[50, 70], gamma=0.1)
for t in range(0, 80):
    scheduler.step()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
""",
            fixed="""
import torch

scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[50, 70], gamma=0.1)
for t in range(0, 80):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    scheduler.step()
""",
            line=6,
            col=5,
            unsafe=True,
        ),
        Invalid(
            """
def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()

def main(model, loader, optimizer, scheduler):
    for epoch in range(10):
        if scheduler is not None:
            scheduler.step()
        train(model, loader, optimizer)
        validate(model)
""",
            fixed="""
def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()

def main(model, loader, optimizer, scheduler):
    for epoch in range(10):
        train(model, loader, optimizer)
        if scheduler is not None:
            scheduler.step()
        validate(model)
""",
            unsafe=True,
        ),
        Invalid(
            """
for step, batch in enumerate(loader):
    loss = model(batch)
    loss.backward()
    lr_scheduler.step()
    with torch.no_grad():
        optimizer.step()
""",
            fixed="""
for step, batch in enumerate(loader):
    loss = model(batch)
    loss.backward()
    with torch.no_grad():
        optimizer.step()
    lr_scheduler.step()
""",
            unsafe=True,
        ),
        Invalid(
            """
for step, batch in enumerate(loader):
    model(batch).backward()
    warmup.step(); optimizer.step()
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]


def run_epoch(epoch):
    net.train()
    decay.step()
    total = 0.0
    for x, y in batches:
        opt.zero_grad()
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss.item()
    return total


for epoch in range(5):
    print(epoch, run_epoch(epoch))
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]


def run_epoch(epoch):
    net.train()
    total = 0.0
    for x, y in batches:
        opt.zero_grad()
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss.item()
    decay.step()
    return total


for epoch in range(5):
    print(epoch, run_epoch(epoch))
""",
            unsafe=True,
            line=13,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

options = {"cyclic": True}
net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
cyclic = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)
for step in range(20):
    x, y = torch.randn(4, 5), torch.randn(4, 1)
    opt.zero_grad()
    (net(x) - y).pow(2).mean().backward()
    if options["cyclic"]:
        cyclic.step()
    opt.step()
""",
            fixed="""
import torch
import torch.nn as nn

options = {"cyclic": True}
net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
cyclic = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)
for step in range(20):
    x, y = torch.randn(4, 5), torch.randn(4, 1)
    opt.zero_grad()
    (net(x) - y).pow(2).mean().backward()
    opt.step()
    if options["cyclic"]:
        cyclic.step()
""",
            unsafe=True,
            line=14,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Linear(5, 1)
opt = torch.optim.Adam(net.parameters())
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=2)


def fit_once():
    for _ in range(3):
        x, y = torch.randn(4, 5), torch.randn(4, 1)
        opt.zero_grad()
        (net(x) - y).abs().mean().backward()
        opt.step()


for epoch in range(4):
    decay.step()
    fit_once()
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Linear(5, 1)
opt = torch.optim.Adam(net.parameters())
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=2)


def fit_once():
    for _ in range(3):
        x, y = torch.randn(4, 5), torch.randn(4, 1)
        opt.zero_grad()
        (net(x) - y).abs().mean().backward()
        opt.step()


for epoch in range(4):
    fit_once()
    decay.step()
""",
            unsafe=True,
            line=19,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

use_cyclic = True
net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
cyclic = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1) if use_cyclic else None
for step in range(20):
    x, y = torch.randn(4, 5), torch.randn(4, 1)
    opt.zero_grad()
    (net(x) - y).pow(2).mean().backward()
    if cyclic is not None:
        cyclic.step()
    opt.step()
""",
            fixed="""
import torch
import torch.nn as nn

use_cyclic = True
net = nn.Linear(5, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
cyclic = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1) if use_cyclic else None
for step in range(20):
    x, y = torch.randn(4, 5), torch.randn(4, 1)
    opt.zero_grad()
    (net(x) - y).pow(2).mean().backward()
    opt.step()
    if cyclic is not None:
        cyclic.step()
""",
            unsafe=True,
            line=14,
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        self._check_loop(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A per-epoch function that steps the scheduler before the loop stepping the optimizer
        (``def train(epoch): scheduler.step(); for x, y in loader: ...; optimizer.step()``): its first call
        steps the scheduler before any optimizer step, whatever loop calls it."""
        ctx = self.ctx
        body = node.body
        if not isinstance(body, cst.IndentedBlock):
            return
        schedulers = [c for c in ctx.calls_in(node) if not c.args and is_scheduler_step(ctx, c)
                      and ctx.enclosing(c, cst.FunctionDef) is node and common_loop(ctx, c, c) is None]
        if not schedulers:
            return
        steps = [(call, via) for call, via in calls_through_helpers(ctx, node, depth=2)
                 if optimizer_of_step(ctx, call) is not None and ctx.enclosing(via, cst.FunctionDef) is node]
        for sched in schedulers:
            owner_optimizer = self._optimizer_of(sched)
            relevant = [via for call, via in steps if self._same_optimizer(call, via, owner_optimizer)]
            if not relevant:
                continue
            after = self._steps_after(sched, relevant, strict=True)
            if not after or any(owner is not body for owner, _, _ in after) or not any(
                    common_loop(ctx, via, via) is not None for via in relevant):  # the epoch's batches: a loop
                continue  # (an optimizer step before the scheduler's, or beside it in another branch)
            if not self._unconditional(sched, body, relevant):
                continue
            self.report(sched, self.quoting(sched, self.BEFORE_LOOP), fix=self._fix(sched, body, after))

    def leave_While(self, node: cst.While) -> None:
        self._check_loop(node)

    def _check_loop(self, loop: cst.CSTNode) -> None:
        ctx = self.ctx
        schedulers = [c for c in ctx.calls_in(loop) if not c.args and is_scheduler_step(ctx, c)]
        if not schedulers:
            return
        steps: List[Tuple[cst.Call, cst.Call]] = []  # (optimizer step, where it happens in this loop)
        for call, via in calls_through_helpers(ctx, loop, depth=2):
            optimizer = optimizer_of_step(ctx, call)
            if optimizer is not None:
                steps.append((call, via))
        for sched in schedulers:
            owner_optimizer = self._optimizer_of(sched)
            relevant = [
                via for call, via in steps
                if common_loop(ctx, sched, via) is loop and self._same_optimizer(call, via, owner_optimizer)
            ]
            if not relevant:
                continue
            after = self._steps_after(sched, relevant)
            if not after:
                continue
            owner = after[0][0]
            if not self._unconditional(sched, owner, relevant, loop):
                continue
            self.report(sched, self.quoting(sched, self.MESSAGE), fix=self._fix(sched, owner, after))

    def _steps_after(self, sched: cst.Call, steps: List[cst.Call],
                     strict: bool = False) -> Optional[List[Tuple[cst.CSTNode, int, int]]]:
        """``(block, index of the scheduler step, index of the optimizer step)`` for each of ``steps`` when every
        one comes after ``sched`` in a block they share (with ``strict``, in a later statement of it); None
        when one comes before it, or where the order is unknown (different branches, one inside the other)."""
        out = []
        for via in steps:
            pos = block_position(self.ctx, sched, via)
            if pos is None or pos[2] < pos[1] or strict and pos[2] == pos[1]:
                return None
            out.append(pos)
        return out

    def _optimizer_of(self, sched: cst.Call) -> Optional[str]:
        recv = receiver(sched)
        if recv is None:
            return None
        for value in self.ctx.names.values_before(recv):
            if isinstance(value, cst.Call):
                first = arg(value, 0, "optimizer")
                if first is not None:
                    return self.ctx.code(first.value)
        return None

    def _same_optimizer(self, call: cst.Call, via: cst.Call, owner: Optional[str]) -> bool:
        if owner is None:
            return True
        if call is via:
            optimizer = optimizer_of_step(self.ctx, call)
            return optimizer is not None and self.ctx.code(optimizer) == owner
        optimizer = optimizer_of_step(self.ctx, call)
        if isinstance(optimizer, cst.Name) and optimizer.value == owner and not self.ctx.names.is_param_at(optimizer):
            return True  # the helper steps the module's own optimizer (`optimizer.step()` in `def train(epoch)`)
        return owner in self.ctx.code(via) or owner.startswith("self.")

    def _unconditional(self, sched: cst.Call, owner: cst.CSTNode, steps: List[cst.Call],
                       loop: Optional[cst.CSTNode] = None) -> bool:
        """No condition (other than the scheduler existing, one that guards the optimizer steps too: the
        training phase of a `for phase in ("train", "val")` loop, or one that the loop cannot change: the
        option that chose the scheduler, `if args.scheduler == "cyclic":`) and no inner loop between the
        step and the block it shares with the optimizer step."""
        recv = receiver(sched)
        recv_code = self.ctx.code(recv) if recv is not None else ""
        for a in self.ctx.ancestors(sched):
            if a is owner:
                return True
            if isinstance(a, LOOP_TYPES) or isinstance(a, (cst.Try, cst.ExceptHandler, cst.Else, cst.Lambda)):
                return False
            if isinstance(a, cst.If):
                if self._guards_steps_too(a, owner, steps):
                    continue  # true at the scheduler step exactly when the optimizer steps after it
                if a.orelse is not None:
                    return False
                test = self.ctx.code(a.test).replace(recv_code, "") if recv_code else "x"
                if _GUARD_WORDS.sub("", test) and not (loop is not None and self._fixed_in(a.test, loop)):
                    return False
        return False

    def _fixed_in(self, test: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """Whether ``test`` gives the same answer on every pass of ``loop``: it calls nothing, and nothing in
        the loop or the loops around it (their targets included) binds a name it reads or assigns an attribute
        it reads (`if epoch >= warmup:` in the batch loop changes with the epoch)."""
        ctx = self.ctx
        nodes = list(iter_nodes(test))
        if any(isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield)) for n in nodes):
            return False
        names = {n.value for n in nodes if isinstance(n, cst.Name)}
        attrs = {ctx.code(n) for n in nodes if isinstance(n, cst.Attribute)}
        if not names:
            return False
        nest = loop  # the outermost loop of the function around this one: what an outer pass binds changes too
        for a in ctx.ancestors(loop):
            if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
            if isinstance(a, LOOP_TYPES):
                nest = a
        bound = set(ctx.assigned_names(nest))
        for n in iter_nodes(nest):  # loop targets and `with ... as` names, of every loop of the nest
            target = n.target if isinstance(n, cst.For) else (n.asname.name if isinstance(n, cst.WithItem)
                                                              and n.asname is not None else None)
            if target is not None:
                bound.update(t.value for t in iter_nodes(target) if isinstance(t, cst.Name))
        if names & bound:
            return False
        for n in iter_nodes(nest):
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
                target = n.target
                if isinstance(target, (cst.Attribute, cst.Subscript)) and (
                        ctx.code(target) in attrs or ctx.code(target.value) in attrs | names):
                    return False
        return True

    def _guards_steps_too(self, guard: cst.If, owner: cst.CSTNode, steps: List[cst.Call]) -> bool:
        """Whether every optimizer step ``steps`` sits in the body of an ``if`` of the same test inside
        ``owner``, and nothing inside ``owner`` binds a name the test reads: both tests give the same answer
        in one pass."""
        ctx = self.ctx
        test = " ".join(ctx.code(guard.test).split())
        names = {n.value for n in iter_nodes(guard.test) if isinstance(n, cst.Name)}
        if not names or names & set(ctx.assigned_names(owner)):
            return False
        for step in steps:
            same = False
            for a in ctx.ancestors(step):
                if a is owner:
                    break
                if isinstance(a, cst.If) and ctx.is_inside(step, a.body) \
                        and " ".join(ctx.code(a.test).split()) == test:
                    same = True
            if not same:
                return False
        return True

    def _fix(self, sched: cst.Call, owner: cst.CSTNode, after) -> Optional[Fix]:
        if not isinstance(owner, (cst.IndentedBlock, cst.Module)):
            return None
        if any(o is not owner for o, _, _ in after):
            return None
        body = list(owner.body)
        i_sched = after[0][1]
        unit = body[i_sched]
        if not self._only_holds(unit, sched):
            return None
        last = body[max(i for _, _, i in after)]
        return self.make_fix().remove(unit).insert_after(last, unit)

    def _only_holds(self, unit: cst.CSTNode, sched: cst.Call) -> bool:
        """``unit`` is ``sched`` on a line of its own, or an ``if`` guard around just that line."""
        if isinstance(unit, cst.If) and unit.orelse is None and isinstance(unit.body, cst.IndentedBlock):
            if len(unit.body.body) != 1:
                return False
            unit = unit.body.body[0]
        if not isinstance(unit, cst.SimpleStatementLine) or len(unit.body) != 1:
            return False
        small = unit.body[0]
        return isinstance(small, cst.Expr) and small.value is sched
