from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import callee_name
from torchlint.families.numerics.patterns import (
    SEQUENTIAL_SIGMOID,
    followed,
    from_sequential_sigmoid,
    is_log_call,
    is_binop,
    is_one,
    is_shifted,
    module_ref,
    movable,
    neg_code,
    peel_selection,
)
from torchlint.analysis.ops import OpUse, exp_use, log1p_use, log_use, sigmoid_use
from torchlint.analysis.roles import SIGMOID, output_kind
from torchlint.rule import Fix, Invalid, LintRule, Valid

SOFTPLUS_MESSAGE = "`log(1 + exp(x))` overflows to `inf` for large `x`; use `F.softplus(x)`"
LOGSIGMOID_MESSAGE = "`log(sigmoid(x))` gives `-inf` where the sigmoid underflows to 0; use `F.logsigmoid(x)`"


MODEL_MESSAGE = (
    "`log` of a model output whose `forward` ends in `sigmoid` gives `-inf` where the sigmoid underflows to 0; "
    "return the logit from `forward` and use `F.logsigmoid(logit)`"
)
MODEL_ONE_MINUS_MESSAGE = (
    "`log(1 - p)` of a model output whose `forward` ends in `sigmoid` gives `-inf` where the sigmoid rounds to 1; "
    "return the logit from `forward` and use `F.logsigmoid(-logit)`"
)
SEQUENTIAL_MESSAGE = (
    "`log` of a model output that " + SEQUENTIAL_SIGMOID + " and take `F.logsigmoid` of the logits the model then "
    "returns (the log gives `-inf` where the sigmoid underflows to 0)"
)
SEQUENTIAL_ONE_MINUS_MESSAGE = (
    "`log(1 - p)` of a model output that " + SEQUENTIAL_SIGMOID + " and take `F.logsigmoid(-logits)` of the "
    "logits the model then returns (the log gives `-inf` where the sigmoid rounds to 1)"
)


class LogOfExpOrSigmoid(LintRule):
    """
    ## What it does
    Finds `log(1 + exp(x))` (also `log(exp(x) + 1)` and `log1p(exp(x))`), which is softplus written by
    hand, and `log(sigmoid(x))` / `log(1 - sigmoid(x))` (or of elements picked from the sigmoid,
    `log(sigmoid(x)[:, 0])`), which are log-sigmoid written by hand: function
    and method spellings, `torch.special.expit`, `nn.Sigmoid` layers, and values held in local variables.

    The sigmoid may also be the last step of a model's `forward` (`torch.log(model(x))`, found through
    the program model's class summaries, in this file or the project's own modules): reported without a
    fix, since the stable form needs the logit, which `forward` does not return. When the model is an
    `nn.Sequential` whose last layer is `nn.Sigmoid`, the message says to drop that layer (as TL207 says
    for the same model before a binary cross-entropy).

    ## Why is this bad?
    `exp(x)` is `inf` for `x` above about 88.7 in float32, so `log(1 + exp(x))` is `inf` where the true
    value is about `x`. `sigmoid(x)` rounds to exactly 0 for `x` below about -104 (float32) and to
    exactly 1 above about 17, so `log(sigmoid(x))` and `log(1 - sigmoid(x))` become `-inf` with `nan`
    gradients. The Effective PyTorch notes warn that exp and log turn very small numbers into very large
    ones and back, and that each layer's values and gradients must stay in range (Effective PyTorch,
    section 7). `F.softplus` and `F.logsigmoid` are computed without the overflow.

    A log whose result feeds a hand-written binary cross-entropy is left to TL207. An exponent that
    cannot be large (`log(1 + exp(-x.abs()))`, the stable BCE trick) is not reported.

    ## Example
    ```python
    def smooth_relu(x):
        return torch.log(1 + torch.exp(x))
    ```

    ## Use instead
    ```python
    def smooth_relu(x):
        return F.softplus(x)
    ```

    ## Fix safety
    Safe. `F.softplus(x)` equals `log(1 + exp(x))` (it returns `x` itself above 20, where the two differ
    by less than float32 resolution), `F.logsigmoid(x)` equals `log(sigmoid(x))` and `F.logsigmoid(-x)`
    equals `log(1 - sigmoid(x))` wherever the originals are finite. The fix is offered when a name for
    `torch.nn.functional` (or `torch`) is visible, and when no name in `x` is reassigned between the
    sigmoid or exp and the log. The layout is kept: `x` keeps its own line breaks, and a log call
    written over several lines (`torch.log(` on one line, its argument on the next) gives a
    `F.softplus(` call laid out the same way, not one long line.

    ## Options
    None.

    ## References
    - [torch.nn.functional.softplus](https://pytorch.org/docs/stable/generated/torch.nn.functional.softplus.html)
    - [torch.nn.functional.logsigmoid](https://pytorch.org/docs/stable/generated/torch.nn.functional.logsigmoid.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL204"
    NAME = "log-of-exp-or-sigmoid"
    MESSAGE = SOFTPLUS_MESSAGE
    FIX_TITLE = "Replace with `F.softplus` / `F.logsigmoid`"
    TRIGGERS = ("exp", "sigmoid", "expit", "Sigmoid")
    IMPORT_TRIGGERS = ("sigmoid", "Sigmoid")

    VALID = [
        # a model built as `nn.Sequential` that ends in a linear layer returns logits: nothing to drop
        Valid(
            """
import torch
import torch.nn as nn

scorer = nn.Sequential(nn.Linear(16, 8), nn.Sigmoid(), nn.Linear(8, 1))
features = torch.randn(32, 16)
shifted = torch.log(scorer(features).abs() + 1e-6)
"""
        ),
        # the stable BCE formulation: the exponent is never positive
        """
import torch

def bce_with_logits(x, y):
    return x.clamp(min=0) - x * y + torch.log1p(torch.exp(-x.abs()))
""",
        """
import torch.nn.functional as F

def smooth_relu(x):
    return F.softplus(x)
""",
        """
import torch
import torch.nn.functional as F

def log_p(x):
    return F.logsigmoid(x)
""",
        """
import numpy as np
import torch

def f(x):
    return np.log(1 + np.exp(x))
""",
        """
import torch

def f(x):
    return torch.log(torch.sigmoid(x) + 1e-6)
""",
        """
import torch

def f(x):
    return torch.log(1 + torch.exp(x.clamp(max=30.0)))
""",
        """
import torch

def f(x):
    return torch.log(torch.sigmoid(x).sum(-1))
""",
        # left to TL207: a hand-written binary cross-entropy
        """
import torch

def bce(x, y):
    p = torch.sigmoid(x)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
""",
        # the model returns logits: its log is no log of a sigmoid
        Valid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return torch.relu(self.fc(x)) + 1


model = Scorer()


def log_scores(x):
    return torch.log(model(x))
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F

def smooth_relu(x):
    return torch.log(1 + torch.exp(x))
""",
            fixed="""
import torch
import torch.nn.functional as F

def smooth_relu(x):
    return F.softplus(x)
""",
            line=6,
            col=12,
        ),
        Invalid(
            """
import torch

def smooth_relu(x):
    return (x.exp() + 1).log()
""",
            fixed="""
import torch

def smooth_relu(x):
    return torch.nn.functional.softplus(x)
""",
        ),
        Invalid(
            """
import torch
from torch import nn

def gate(x):
    s = torch.sigmoid(x)
    return torch.log(s)
""",
            fixed="""
import torch
from torch import nn

def gate(x):
    s = torch.sigmoid(x)
    return nn.functional.logsigmoid(x)
""",
            message="F.logsigmoid",
        ),
        Invalid(
            """
import torch.nn.functional as F

def neg(x, w):
    return (1 - (x @ w).sigmoid()).log()
""",
            fixed="""
import torch.nn.functional as F

def neg(x, w):
    return F.logsigmoid(-(x @ w))
""",
        ),
        # no name for torch.nn.functional in view: reported without a fix
        Invalid(
            """
from torch import exp, log, special

def f(x):
    return log(special.expit(x))
""",
            message="F.logsigmoid",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def first_gate(x):
    return torch.log(torch.sigmoid(x)[:, 0])
""",
            fixed="""
import torch
import torch.nn.functional as F

def first_gate(x):
    return F.logsigmoid(x)[:, 0]
""",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def f(x):
    return torch.log1p(torch.exp(2 * x))
""",
            fixed="""
import torch
import torch.nn.functional as F

def f(x):
    return F.softplus(2 * x)
""",
        ),
        Invalid(
            """
import torch


def _log(t):
    return torch.log(t)


def softplus(x):
    return _log(1 + torch.exp(x))
""",
            fixed="""
import torch


def _log(t):
    return torch.log(t)


def softplus(x):
    return torch.nn.functional.softplus(x)
""",
        ),
        # a model whose forward ends in a sigmoid (the program model's summary): reported without a fix
        Invalid(
            """
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


model = Gate()


def log_scores(x):
    return torch.log(model(x))


def log_rejects(x):
    p = model(x)
    return torch.log(1 - p)
""",
            count=2,
            message="ends in `sigmoid`",
        ),
        # a model built as `nn.Sequential(..., nn.Sigmoid())`: the message says to drop that layer
        Invalid(
            """
import torch
import torch.nn as nn

scorer = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
features = torch.randn(32, 16)
log_odds_part = torch.log(scorer(features))
""",
            message="comes from an `nn.Sequential` that ends in `nn.Sigmoid`; drop the sigmoid layer",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())

    def forward(self, x):
        real = self.head(x)
        return -torch.log(1 - real).mean()
""",
            message="`torch.log(1 - real)` of a model output that comes from an `nn.Sequential` that ends in "
                    "`nn.Sigmoid`; drop the sigmoid layer",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        # logs of values that may be a model's output, asked about once the walk is done
        self.model_logs: List[Tuple[cst.Call, cst.BaseExpression, bool]] = []

    def leave_Module(self, node: cst.Module) -> None:
        for log_call, value, negate in self.model_logs:
            if output_kind(self.ctx, value) == SIGMOID:
                if from_sequential_sigmoid(self.ctx, value):
                    message = SEQUENTIAL_ONE_MINUS_MESSAGE if negate else SEQUENTIAL_MESSAGE
                else:
                    message = MODEL_ONE_MINUS_MESSAGE if negate else MODEL_MESSAGE
                self.report(log_call, self.quoting(log_call, message))

    def visit_Call(self, node: cst.Call) -> None:
        name = callee_name(node)
        if name not in ("log", "log1p"):
            if not is_log_call(self.ctx, node):
                return
            name = "log"  # a helper that only wraps torch.log
        ctx = self.ctx
        if name == "log1p":
            use = log1p_use(ctx, node)
            if use is None or use.operand is None:
                return
            found = self._exp(use.operand)
            if found is not None:
                self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node, "softplus", found[0], found[1], negate=False))
            return
        use = log_use(ctx, node)
        if use is None or use.operand is None:
            return
        value = followed(self.ctx, use.operand, 2)
        hopped = value is not use.operand
        if is_binop(value, cst.Add):
            for one, other in ((value.left, value.right), (value.right, value.left)):  # type: ignore[attr-defined]
                if is_one(one):
                    found = self._exp(other)
                    if found is not None:
                        self.report(
                            node, self.quoting(node, self.MESSAGE),
                            fix=self._fix(node, "softplus", found[0], found[1] or hopped, negate=False)
                        )
                    return
            return
        negate = False
        if is_binop(value, cst.Subtract) and is_one(value.left):  # type: ignore[attr-defined]
            negate = True
            value = value.right  # type: ignore[attr-defined]
        sig = sigmoid_use(ctx, value) or sigmoid_use(ctx, followed(self.ctx, value, 2))
        if sig is None and not negate:
            # elements of a sigmoid: log(sigmoid(x)[:, 0]) == logsigmoid(x)[:, 0]
            base, peeled = peel_selection(self.ctx, use.operand)
            if not peeled:
                self.model_logs.append((node, use.operand, False))
            if peeled:
                sig = sigmoid_use(ctx, base) or sigmoid_use(ctx, followed(self.ctx, base, 2))
                if sig is not None and sig.operand is not None:
                    fix = None
                    rep = self._replacement(node, "logsigmoid", sig, sig.node is not base, False)
                    if rep is not None:
                        new = use.operand.deep_replace(base, rep)
                        fix = self.make_fix("Take the same elements of `F.logsigmoid`").replace(node, new)  # type: ignore
                    self.report(node, self.quoting(node, LOGSIGMOID_MESSAGE), fix=fix)
            return
        if sig is None and negate:
            self.model_logs.append((node, value, True))
        if sig is None or sig.operand is None:
            return
        hopped = hopped or sig.node is not value
        fix = self._fix(node, "logsigmoid", sig, hopped, negate=negate)
        message = LOGSIGMOID_MESSAGE
        if negate:
            message = "`log(1 - sigmoid(x))` gives `-inf` where the sigmoid rounds to 1; use `F.logsigmoid(-x)`"
        self.report(node, self.quoting(node, message), fix=fix)

    def _exp(self, expr: cst.BaseExpression) -> Optional[Tuple[OpUse, bool]]:
        value = followed(self.ctx, expr, 2)
        e = exp_use(self.ctx, value)
        if e is None or e.operand is None or is_shifted(self.ctx, e.operand):
            return None
        return e, value is not expr

    def _fix(self, node: cst.Call, function: str, op: OpUse, hopped: bool, negate: bool) -> Optional[Fix]:
        rep = self._replacement(node, function, op, hopped, negate)
        if rep is None:
            return None
        return self.make_fix(f"Replace with `F.{function}`").replace(node, keep_call_layout(node, rep))

    def _replacement(self, at: cst.CSTNode, function: str, op: OpUse, hopped: bool, negate: bool
                     ) -> Optional[cst.BaseExpression]:
        ctx = self.ctx
        assert op.operand is not None
        if not movable(ctx, op.operand, op.node if hopped else None, at):
            return None
        ref = module_ref(ctx, "torch.nn.functional")
        if ref is None:
            return None
        x = neg_code(ctx, op.operand) if negate else ctx.code(op.operand)
        return ctx.parse_expression(f"{ref}.{function}({x})")


def keep_call_layout(old: cst.Call, new: cst.BaseExpression) -> cst.BaseExpression:
    """``new`` with the line breaks ``old`` had inside its parentheses: a call written as
    ``torch.log(\\n    1 + torch.exp(x)\\n)`` becomes ``F.softplus(\\n    x\\n)``, not one long line."""
    if not isinstance(new, cst.Call) or len(new.args) != 1 or not old.args:
        return new
    before = old.whitespace_before_args
    after = old.args[-1].whitespace_after_arg
    if not isinstance(before, cst.ParenthesizedWhitespace):
        return new
    last = new.args[0]
    if isinstance(after, cst.ParenthesizedWhitespace) and last.comma is cst.MaybeSentinel.DEFAULT:
        last = last.with_changes(whitespace_after_arg=after)
    return new.with_changes(whitespace_before_args=before, args=[last])
