from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.analysis.context import method_name, receiver
from torchlint.analysis.names import dotted_name
from torchlint.analysis.training import object_kind
from torchlint.rule import Fix, Invalid, LintRule, Valid

CLIP_FUNCS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad_value_",
        "torch.nn.utils.clip_grad.clip_grad_norm_",
        "torch.nn.utils.clip_grad.clip_grad_value_",
        "torch.nn.utils.clip_grad_norm",
    }
)

CLIP_MESSAGE = (
    "Gradients clipped while still scaled by the `GradScaler`: call `{scaler}.unscale_({opt})` "
    "before clipping, or the threshold applies to scaled values"
)
CLIP_MESSAGE_NO_STEP = (
    "Gradients clipped while still scaled by the `GradScaler`: call `{scaler}.unscale_` on each optimizer "
    "it steps before clipping, or the threshold applies to scaled values"
)
STEP_MESSAGE = (
    "`{opt}.step()` with a `GradScaler` scaling the loss: the step uses scaled gradients and does not skip "
    "steps with inf/NaN; use `{scaler}.step({opt})`"
)


class AmpScalerOrder(LintRule):
    """
    ## What it does
    Finds, after a backward pass on a loss scaled by a `GradScaler` (`scaler.scale(loss).backward()`),
    `clip_grad_norm_`/`clip_grad_value_` called before the scaler's step without
    `scaler.unscale_(optimizer)` in between, and `optimizer.step()` called directly instead of
    `scaler.step(optimizer)`.

    ## Why is this bad?
    Mixed-precision training multiplies the loss by a large scale factor (65536 at first) so that
    small float16 gradients do not underflow; the gradients in `.grad` are scaled by the same factor
    until `unscale_` divides it out. Clipping them before that compares the scaled norm with the
    threshold, so clipping shrinks every gradient to a tiny fraction of its size (or, for
    `clip_grad_value_`, clamps values that are really small). Calling `optimizer.step()` directly
    applies the scaled gradients — an update tens of thousands of times too large — and does not skip
    the steps whose gradients overflowed. The PyTorch AMP recipe, and the mixed-precision section of
    the PyTorch Cookbook's 2024 revision, unscale before clipping and step through the scaler.

    ## Example
    ```python
    scaler.scale(loss).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    ```

    ## Fix safety
    Both fixes are safe: `scaler.unscale_(optimizer)` is inserted right before the clipping statement,
    using the optimizer the code passes to `scaler.step` (offered only when there is exactly one such
    step after it); `scaler.step` then does not unscale a second time. `optimizer.step()` becomes
    `scaler.step(optimizer)`, which unscales and steps — changing the update from the scaled one to the
    intended one is the fix.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [Automatic mixed precision examples: gradient clipping](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping)
    - [torch.amp.GradScaler](https://pytorch.org/docs/stable/amp.html#gradient-scaling)
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL512"
    NAME = "amp-scaler-order"
    MESSAGE = CLIP_MESSAGE
    FIX_TITLE = "Unscale before clipping / step through the scaler"
    TRIGGERS = ("scale",)

    VALID = [
        Valid(
            """
import torch
import torch.nn as nn

def train(model, loader, optimizer, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
"""
        ),
        Valid(
            """
import torch.nn as nn

def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
"""
        ),
        Valid(
            """
import torch.nn as nn

def train(model, batch, optimizer, scaler):
    loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
"""
        ),
        Valid(
            """
def train(accelerator, model, batch, optimizer, scaler):
    loss = model(batch)
    scaler.scale(loss).backward()
    accelerator.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
"""
        ),
        Valid(
            """
import torch.nn as nn

def train(model, batch, optimizer, scaler, clip):
    loss = model(batch)
    scaler.scale(loss).backward()
    if clip:
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), clip)
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

def train(model, loader, optimizer, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
""",
            fixed="""
import torch
import torch.nn as nn

def train(model, loader, optimizer, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda"):
            loss = nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
""",
            line=11,
            col=9,
        ),
        Invalid(
            """
import torch

scaler = torch.amp.GradScaler("cuda")

def step(model, batch, opt):
    loss = model(batch)
    scaler.scale(loss).backward()
    opt.step()
    scaler.update()
""",
            fixed="""
import torch

scaler = torch.amp.GradScaler("cuda")

def step(model, batch, opt):
    loss = model(batch)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
            message="use `scaler.step(opt)`",
        ),
        Invalid(
            """
import torch
from torch import nn

class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, batch):
        self.scaler.scale(self.model(batch)).backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
            fixed="""
import torch
from torch import nn

class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters())
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, batch):
        self.scaler.scale(self.model(batch)).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
            message="call `self.scaler.unscale_(self.optimizer)` before clipping",
        ),
        # two optimizers stepped after the clipping: which one to unscale is the author's choice (no fix)
        Invalid(
            """
import torch.nn as nn

def step(encoder, decoder, batch, enc_opt, dec_opt, scaler):
    scaler.scale(decoder(encoder(batch))).backward()
    nn.utils.clip_grad_norm_(decoder.parameters(), 5.0)
    scaler.step(enc_opt)
    scaler.step(dec_opt)
    scaler.update()
""",
            message="call `scaler.unscale_` on each optimizer it steps before clipping",
        ),
        Invalid(
            """
from torch.nn.utils import clip_grad_value_

def step(model, batch, optimizer, grad_scaler):
    grad_scaler.scale(model(batch)).backward()
    if True:
        clip_grad_value_(model.parameters(), 0.5)
    grad_scaler.step(optimizer)
    grad_scaler.update()
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if method_name(node) != "backward":
            return
        scaled = receiver(node)
        if not isinstance(scaled, cst.Call) or method_name(scaled) != "scale":
            return
        scaler = receiver(scaled)
        if scaler is None or object_kind(self.ctx, scaler) != "scaler":
            return
        scaler_code = dotted_name(scaler)
        stmt = self.ctx.statement_of(node)
        block = self.ctx.block_of(stmt) if stmt is not None else None
        if block is None or scaler_code is None:
            return
        after = list(block[block.index(stmt) + 1:])  # type: ignore[arg-type]
        scaler_steps = [c for s in after for c in self.ctx.calls_in(s) if self._is_scaler_call(c, scaler_code, "step")]
        for s in after:
            calls = self.ctx.calls_in(s)
            if any(self._is_scaler_call(c, scaler_code, ("unscale_", "step")) for c in calls):
                break
            for c in calls:
                if self.ctx.names.matches(c.func, CLIP_FUNCS):
                    opt = self._stepped_optimizer(scaler_steps)
                    message = (CLIP_MESSAGE.format(scaler=scaler_code, opt=opt) if opt is not None
                               else CLIP_MESSAGE_NO_STEP.format(scaler=scaler_code))
                    self.report(c, self.quoting(c, message), fix=self._unscale_fix(s, scaler_code, scaler_steps))
                elif method_name(c) == "step" and not c.args and object_kind(self.ctx, receiver(c)) == "optimizer":
                    opt = dotted_name(receiver(c))  # type: ignore[arg-type]
                    if opt is None or scaler_steps:
                        continue
                    fix = self.make_fix(f"Use `{scaler_code}.step({opt})`").replace(
                        c, self.ctx.parse_expression(f"{scaler_code}.step({opt})")
                    )
                    self.report(c, self.quoting(c, STEP_MESSAGE.format(opt=opt, scaler=scaler_code)), fix=fix)

    @staticmethod
    def _is_scaler_call(call: cst.Call, scaler: str, names) -> bool:
        names = (names,) if isinstance(names, str) else names
        return method_name(call) in names and dotted_name(receiver(call)) == scaler  # type: ignore[arg-type]

    def _stepped_optimizer(self, steps: List[cst.Call]) -> Optional[str]:
        """How the source spells the optimizer of the one `scaler.step(optimizer)` after the backward pass
        (what the message tells to unscale, and what the fix inserts); None when there is not exactly one."""
        if len(steps) != 1 or len(steps[0].args) != 1 or steps[0].args[0].keyword is not None:
            return None
        return self.ctx.code(steps[0].args[0].value)

    def _unscale_fix(self, stmt: cst.CSTNode, scaler: str, steps: List[cst.Call]) -> Optional[Fix]:
        opt = self._stepped_optimizer(steps)
        if opt is None or not isinstance(stmt, cst.SimpleStatementLine):
            return None
        new = self.ctx.parse_statement(f"{scaler}.unscale_({opt})\n")
        return self.make_fix(f"Insert `{scaler}.unscale_({opt})`").insert_before(stmt, new)
