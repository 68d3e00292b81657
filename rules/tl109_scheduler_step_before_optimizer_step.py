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
    `train(...)` function).

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
    of a `for phase in ("train", "val")` loop is reported), and a scheduler step
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
    ]

    def leave_For(self, node: cst.For) -> None:
        self._check_loop(node)

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
            after = []
            before = False
            for via in relevant:
                pos = block_position(ctx, sched, via)
                if pos is None:
                    before = True  # different branches or nested in one another: order unknown
                    break
                owner, i_sched, i_step = pos
                if i_step < i_sched:
                    before = True
                    break
                after.append((owner, i_sched, i_step))
            if before or not after:
                continue
            owner = after[0][0]
            if not self._unconditional(sched, owner, relevant):
                continue
            self.report(sched, self.quoting(sched, self.MESSAGE), fix=self._fix(sched, owner, after))

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
        return owner in self.ctx.code(via) or owner.startswith("self.")

    def _unconditional(self, sched: cst.Call, owner: cst.CSTNode, steps: List[cst.Call]) -> bool:
        """No condition (other than the scheduler existing, or one that guards the optimizer steps too: the
        training phase of a `for phase in ("train", "val")` loop) and no inner loop between the step and the
        block it shares with the optimizer step."""
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
                if _GUARD_WORDS.sub("", test):
                    return False
        return False

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
