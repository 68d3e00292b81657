from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, callee_name
from torchlint.families.numerics.patterns import (
    followed,
    is_log_call,
    DeferredLogReports,
    Deferred,
    atom_code,
    eps_subtracted,
    is_binop,
    is_count,
    is_one,
    positive,
    probability_source,
    softmax_of,
    tanh_complement,
)
from torchlint.analysis.ops import OpUse, log_use, sigmoid_use
from torchlint.analysis.values import caller_value_fact
from torchlint.analysis.roles import SIGMOID, SOFTMAX
from torchlint.rule import Fix, Invalid, LintRule, Option, Valid

EPS_SUBTRACTED_MESSAGE = (
    "`log(p - eps)` of a probability: subtracting the eps moves the argument towards 0 and below it where "
    "`p` is 0 (`nan`); add the eps or clamp (`x.clamp_min(eps)`)"
)
TANH_MESSAGE = ("`log(1 - t**2)` of a tanh output ({}): the argument is exactly 0 wherever the tanh saturates "
                "(inputs beyond about 9 in float32), giving `-inf` and `nan` gradients; add an eps or clamp it")
ZERO_MESSAGE = ("`log` of {what}, which is exactly 0 for some elements: `-inf` there, and `nan` gradients; "
                "add an eps or clamp it (`x.clamp_min(eps)`)")
RATIO_MESSAGE = "`log` of a ratio whose numerator can be 0 gives `-inf`; clamp it (`x.clamp_min(eps)`) first"


class LogOfPossibleZero(DeferredLogReports, LintRule):
    """
    ## What it does
    Finds `torch.log(p)` / `p.log()` where `p` can be exactly 0 and nothing keeps it away from 0: a
    probability derived from a softmax or sigmoid output (multiplied by a mask, summed over a subset,
    `1 - p`), a count (`bincount`, `(pred == y).sum()`), or a ratio whose numerator is one of those or
    the output of a model whose `forward` ends in softmax or sigmoid (`fixed * torch.log(fixed / policy)`
    with `policy = self(states)` and `fixed = policy.detach()`, a hand-written KL divergence).
    Also `log(1 - t**2)` (`t.pow(2)`, `t * t`, maybe scaled) of a tanh output `t`, the Jacobian of a
    tanh-squashed action in a policy's log-probability: it is 0 where the tanh saturates.
    Also the log of a value that is exactly 0 for some elements by construction: a uniform draw
    (`torch.rand`, `torch.rand_like`, `x.uniform_()`: values in [0, 1), 0 among them, the Gumbel trick's
    `-log(-log(u))` written without its eps) and a ReLU output (`F.relu(x)`, `x.clamp(min=0)`); `1 - u` is in
    (0, 1] and is not reported.
    `log(1 - p)` (or of `1 - p[:, i]`) where `p` is a parameter is reported when every call of the
    function in the file passes a softmax or sigmoid output (a loss helper defined in one notebook cell
    and called in another with `probas = F.softmax(logits, dim=1)`); the message says where `p` comes from.

    ## Why is this bad?
    Probabilities underflow: a softmax gives exactly 0 for logits about 104 below the maximum in float32
    (far less in float16), and a sigmoid saturates the same way; counts are 0 for an absent class.
    `log(0)` is `-inf`, the loss becomes `inf`, and the gradient `1 / p` is `inf` or `nan`, which poisons
    every parameter at the next step. The Effective PyTorch notes warn that exp and log turn tiny numbers
    into huge ones and that every value and gradient must stay in range (Effective PyTorch, section 7);
    the cookbooks also warn that half precision makes this worse (PyTorch Cookbook, Zhang Hao, 2019, "half()").

    Elements selected from a softmax or sigmoid (`log(probs.gather(1, y))`, `log(probs[:, 1])`) are
    TL202's and TL204's: they are rewritten exactly with `log_softmax` / `logsigmoid`. Not reported
    either: `log(p + eps)`, `log(p.clamp(min=eps))`, `clamp_min`, `torch.maximum(p, eps)`, the largest
    softmax probability (at least `1/C`), arguments positive by construction (`exp`, `softplus`, positive constants), and the direct
    `log(softmax(x))` / `log(sigmoid(x))`, which TL202 and TL204 rewrite exactly. Logs inside a
    hand-written cross-entropy are left to TL206/TL207. Nor is a log whose `-inf` the code handles
    where it is made (`torch.nan_to_num(torch.log(p))`, or `lp = torch.log(p)` followed by
    `torch.where(torch.isfinite(lp), lp, floor)`).

    ## Example
    ```python
    probs = torch.softmax(logits, dim=1)
    p_true = (probs * F.one_hot(y, probs.shape[1])).sum(dim=1)
    nll = -torch.log(p_true)
    ```

    ## Use instead
    ```python
    probs = torch.softmax(logits, dim=1)
    p_true = (probs * F.one_hot(y, probs.shape[1])).sum(dim=1)
    nll = -torch.log(p_true.clamp_min(1e-07))
    ```
    or, better, compute in log space from the start (`F.log_softmax(logits, 1).gather(1, y[:, None])`).

    ## Fix safety
    The fix clamps the argument from below: `torch.log(p.clamp_min(eps))`. It is unsafe: it changes the
    value (and zeroes the gradient) wherever `p < eps`, which is the point, but also bounds the loss. The
    default `eps` of `1e-07` is the smallest round value that stays non-zero in float16 (smaller values
    such as `1e-8` round to 0 there, and the clamp would do nothing); set `eps` for float32-only code.

    ## Options
    - `eps` (float, default `1e-07`): the lower bound the fix clamps to.

    ## References
    - [torch.clamp](https://pytorch.org/docs/stable/generated/torch.clamp.html)
    - [torch.nn.functional.log_softmax](https://pytorch.org/docs/stable/generated/torch.nn.functional.log_softmax.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL208"
    NAME = "log-of-possible-zero"
    MESSAGE = "`log` of a probability that can be exactly 0 gives `-inf` and `nan` gradients; clamp it or add an eps"
    FIX_TITLE = "Clamp the argument: `x.clamp_min(eps)`"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("log",)
    OPTIONS = {"eps": Option(1e-07, "lower bound used by the fix (`x.clamp_min(eps)`)")}

    VALID = [
        # the -inf is found and replaced where it is made
        """
import torch

def watermark_scores(logits, g):
    probs = torch.softmax(logits, dim=-1)
    probs = probs * (1 + g - (g * probs).sum(dim=1, keepdim=True))
    log_probs = torch.log(probs)
    log_probs = torch.where(torch.isfinite(log_probs), log_probs, torch.finfo(log_probs.dtype).min)
    return log_probs


def counts_log(y, n):
    return torch.nan_to_num(torch.log(torch.bincount(y, minlength=n).float()), neginf=0.0)
""",
        """
import torch

def safe_log(p, eps=1e-8):
    return torch.log(p.clamp_min(eps))
""",
        """
import torch

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    return -torch.log(probs.gather(1, y[:, None]) + 1e-8)
""",
        """
import torch

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    return -torch.log(torch.clamp(probs[torch.arange(len(y)), y], min=1e-12))
""",
        """
import torch

def positive_by_construction(x):
    return torch.log(torch.exp(x) * 2.0) + torch.log(torch.ones(3) / 2)
""",
        # ratios of quantities not known to reach 0
        """
import torch

def encode(gt_widths, ex_widths):
    return torch.log(gt_widths / ex_widths)
""",
        """
import numpy as np
import torch

def f(counts):
    p = counts / counts.sum()
    return np.log(p)
""",
        # TL202's: rewritten exactly to log_softmax
        """
import torch

def f(x):
    return torch.log(torch.softmax(x, 1))
""",
        """
import torch

def f(x):
    p = torch.softmax(x, 1)
    return torch.log(torch.maximum(p, torch.tensor(1e-6)))
""",
        # a threshold, not an eps; an unknown value minus an eps
        Valid(
            """
import torch

def margin(x):
    p = torch.softmax(x, 1)
    return torch.log(p - 0.5)
"""
        ),
        Valid(
            """
import torch

def shifted(a):
    return torch.log(a - 1e-8)
"""
        ),
        # the helper's only caller passes probabilities already kept away from 1
        Valid(
            """
import torch
import torch.nn.functional as F


def far_penalty(probs, target):
    return (-torch.log(1 - probs[:, 0]) * target).sum()


scores = torch.randn(8, 5)
kept = F.softmax(scores, dim=1).clamp(max=0.999)
print(far_penalty(kept, torch.ones(8)))
"""
        ),
        # near miss: the same Jacobian kept away from 0 by an eps
        Valid(
            """
import torch


def squashed_sample(mean, log_std, bound=1.0):
    std = log_std.exp()
    u = mean + std * torch.randn_like(mean)
    a = torch.tanh(u)
    logp = (-0.5 * ((u - mean) / std) ** 2 - log_std).sum(-1)
    logp = logp - torch.log(bound * (1 - a.pow(2)) + 1e-6).sum(-1)
    return a * bound, logp


print(squashed_sample(torch.zeros(3, 2), torch.zeros(3, 2))[1])
"""
        ),
        # a uniform draw flipped into (0, 1] never is 0; a clamp at a positive bound keeps the log finite
        """
import torch


def gumbel(logits):
    u = torch.rand_like(logits)
    return logits - torch.log(-torch.log(1 - u))


def log_features(x):
    return torch.log(torch.relu(x).clamp(min=1e-6))
""",
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)

    def kl(self, states):
        policy = self(states)
        fixed = policy.detach()
        return (fixed * torch.log(fixed.clamp_min(1e-8) / policy)).sum(1).mean()

    def log_ratio(self, states, scale):
        return torch.log(self.fc(states).exp() / scale)  # exp: positive by construction
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    p_true = (probs * F.one_hot(y, probs.shape[1])).sum(dim=1)
    return -torch.log(p_true)
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    p_true = (probs * F.one_hot(y, probs.shape[1])).sum(dim=1)
    return -torch.log(p_true.clamp_min(1e-07))
""",
            unsafe=True,
            line=8,
            col=13,
        ),
        Invalid(
            """
import torch

def confidence(x):
    p = x.sigmoid()
    return (p * (p > 0.5)).log()
""",
            fixed="""
import torch

def confidence(x):
    p = x.sigmoid()
    return (p * (p > 0.5)).clamp_min(1e-07).log()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def class_prior(y, n):
    counts = torch.bincount(y, minlength=n)
    return torch.log(counts / counts.sum())
""",
            fixed="""
import torch

def class_prior(y, n):
    counts = torch.bincount(y, minlength=n)
    return torch.log((counts / counts.sum()).clamp_min(1e-07))
""",
            unsafe=True,
            message="ratio",
        ),
        Invalid(
            """
import torch

def top(logits):
    conf = torch.softmax(logits, -1).max(-1).values
    return torch.log(1 - conf)
""",
            fixed="""
import torch

def top(logits):
    conf = torch.softmax(logits, -1).max(-1).values
    return torch.log((1 - conf).clamp_min(1e-12))
""",
            unsafe=True,
            options={"eps": 1e-12},
        ),
        # the guard subtracted instead of added
        Invalid(
            """
import torch

def log_probs(logits):
    p = torch.softmax(logits, dim=-1)
    return torch.log(p - 1e-8)
""",
            fixed="""
import torch

def log_probs(logits):
    p = torch.softmax(logits, dim=-1)
    return torch.log(p + 1e-8)
""",
            unsafe=True,
            message="subtracting the eps",
        ),
        Invalid(
            """
import torch

def log_gate(z, eps=1e-6):
    p = torch.sigmoid(z)
    return (p - eps).log()
""",
            fixed="""
import torch

def log_gate(z, eps=1e-6):
    p = torch.sigmoid(z)
    return (p + eps).log()
""",
            unsafe=True,
        ),
        # replaced on the next line but one, after the loss already used the -inf
        Invalid(
            """
import torch

def scores(logits, g):
    probs = torch.softmax(logits, dim=-1) * g
    log_probs = torch.log(probs)
    loss = -log_probs.mean()
    clean = torch.nan_to_num(log_probs)
    return loss, clean
""",
            fixed="""
import torch

def scores(logits, g):
    probs = torch.softmax(logits, dim=-1) * g
    log_probs = torch.log(probs.clamp_min(1e-07))
    loss = -log_probs.mean()
    clean = torch.nan_to_num(log_probs)
    return loss, clean
""",
            unsafe=True,
        ),
        # a helper whose caller passes softmax probabilities
        Invalid(
            """
import torch
import torch.nn.functional as F


def far_penalty(probs, target, power=2):
    ranks = torch.arange(probs.shape[1])
    return (-torch.log(1 - probs) * (ranks - target[:, None]).abs() ** power).sum(1)


scores = torch.randn(8, 5)
probs = F.softmax(scores, dim=1)
print(far_penalty(probs, torch.randint(0, 5, (8,))))
""",
            fixed="""
import torch
import torch.nn.functional as F


def far_penalty(probs, target, power=2):
    ranks = torch.arange(probs.shape[1])
    return (-torch.log((1 - probs).clamp_min(1e-07)) * (ranks - target[:, None]).abs() ** power).sum(1)


scores = torch.randn(8, 5)
probs = F.softmax(scores, dim=1)
print(far_penalty(probs, torch.randint(0, 5, (8,))))
""",
            line=8,
            unsafe=True,
            message="where `probs` is softmax output passed in",
        ),
        # a helper whose caller passes sigmoid outputs: the message names the parameter as the code spells it
        Invalid(
            """
import torch


def negative_term(y_pred, y_true):
    return ((1 - y_true) * torch.log(1 - y_pred)).mean()


weights = torch.randn(4, 1)
y_pred = torch.sigmoid(torch.randn(16, 4) @ weights)
loss = -negative_term(y_pred, torch.ones(16, 1))
""",
            fixed="""
import torch


def negative_term(y_pred, y_true):
    return ((1 - y_true) * torch.log((1 - y_pred).clamp_min(1e-07))).mean()


weights = torch.randn(4, 1)
y_pred = torch.sigmoid(torch.randn(16, 4) @ weights)
loss = -negative_term(y_pred, torch.ones(16, 1))
""",
            line=6,
            unsafe=True,
            message="where `y_pred` is sigmoid output passed in",
        ),
        # the Jacobian of a tanh-squashed action, `1 - tanh(u)**2`, scaled: 0 once the tanh saturates
        Invalid(
            """
import torch


def squashed_sample(mean, log_std, bound=1.0):
    std = log_std.exp()
    u = mean + std * torch.randn_like(mean)
    a = torch.tanh(u)
    logp = (-0.5 * ((u - mean) / std) ** 2 - log_std).sum(-1)
    logp = logp - torch.log(bound * (1 - a.pow(2))).sum(-1)
    return a * bound, logp


print(squashed_sample(torch.zeros(3, 2), torch.zeros(3, 2))[1])
""",
            fixed="""
import torch


def squashed_sample(mean, log_std, bound=1.0):
    std = log_std.exp()
    u = mean + std * torch.randn_like(mean)
    a = torch.tanh(u)
    logp = (-0.5 * ((u - mean) / std) ** 2 - log_std).sum(-1)
    logp = logp - torch.log((bound * (1 - a.pow(2))).clamp_min(1e-07)).sum(-1)
    return a * bound, logp


print(squashed_sample(torch.zeros(3, 2), torch.zeros(3, 2))[1])
""",
            line=10,
            unsafe=True,
            message="`a = torch.tanh(u)`",
        ),
        # the Gumbel trick written without its eps: `torch.rand_like` draws 0 now and then
        Invalid(
            """
import torch


def gumbel(logits):
    u = torch.rand_like(logits)
    return logits - torch.log(-torch.log(u))
""",
            line=7,
            message="a uniform draw in [0, 1) (`torch.rand_like`)",
            fixed="""
import torch


def gumbel(logits):
    u = torch.rand_like(logits)
    return logits - torch.log(-torch.log(u.clamp_min(1e-07)))
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch.nn.functional as F


def log_energy(x):
    return F.relu(x).log()
""",
            line=6,
            message="a ReLU output",
            fixed="""
import torch.nn.functional as F


def log_energy(x):
    return F.relu(x).clamp_min(1e-07).log()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)

    def kl(self, states):
        # the KL at the current parameters, whose gradient a natural-gradient step needs
        policy = self(states)
        fixed = policy.detach()
        return (fixed * torch.log(fixed / policy)).sum(1).mean()
""",
            line=19,
            message="ratio whose numerator is a softmax output",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.deferred = Deferred()
        #: `log(1 - p)` with `p` a parameter: judged after the walk, when every call of the function is known
        self._passed: List[Tuple[cst.Call, OpUse, cst.BaseExpression, cst.BaseExpression]] = []
        #: `log(p / q)` with `p` not seen as a probability where it is written (a model's output): judged after the walk
        self._ratios: List[Tuple[cst.Call, OpUse, cst.BaseExpression, cst.BaseExpression]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if not is_log_call(self.ctx, node):
            return
        ctx = self.ctx
        use = log_use(ctx, node)
        if use is None or use.operand is None:
            return
        x = use.operand
        if positive(self.ctx, x):
            return
        value = followed(self.ctx, x, 3)
        # a log of a softmax or a sigmoid (or of elements of one), and log(1 - sigmoid(x)), are also
        # TL202's / TL204's, which rewrite them exactly: the precedence table leaves them to those rules
        if is_binop(value, cst.Add) and (is_one(value.left) or is_one(value.right)):  # type: ignore[attr-defined]
            return  # TL204 / TL205: 1 + x is no probability that can be 0
        message = None
        minuend = eps_subtracted(self.ctx, x)
        if minuend is not None and (
            probability_source(self.ctx, minuend) is not None or softmax_of(self.ctx, minuend) is not None
            or sigmoid_use(ctx, followed(self.ctx, minuend, 2)) is not None
        ):
            fix = self._fix(use, x)
            if isinstance(x, cst.BinaryOperation) and isinstance(x.operator, cst.Subtract):
                # the guard the code meant: `p + eps`
                plus = cst.Add(whitespace_before=x.operator.whitespace_before,
                               whitespace_after=x.operator.whitespace_after)
                fix = self.make_fix("Add the eps instead of subtracting it").replace(x, x.with_changes(operator=plus))
            self.deferred.add(ctx, node, node, EPS_SUBTRACTED_MESSAGE, fix)
            return
        squashed = tanh_complement(ctx, x)
        if squashed is not None:
            base, tanh = (self.spelling(n) for n in squashed)
            message = TANH_MESSAGE.format(f"`{base} = {tanh}`" if base != tanh else f"`{base}`")
            self.deferred.add(ctx, node, node, message, lambda: self._fix(use, x))
            return
        zero = _zero_by_construction(ctx, value)
        if zero is not None:
            self.deferred.add(ctx, node, node, ZERO_MESSAGE.format(what=zero), lambda: self._fix(use, x))
            return
        if _one_minus_param(ctx, value) and probability_source(self.ctx, x) is None:
            self._passed.append((node, use, x, value))
            return
        if probability_source(self.ctx, x) is None and not is_count(self.ctx, x):
            if not is_binop(value, cst.Divide):
                return
            numer = value.left  # type: ignore[attr-defined]
            if positive(self.ctx, numer):
                return
            if probability_source(self.ctx, numer) is None and not is_count(self.ctx, numer):
                self._ratios.append((node, use, x, numer))  # `old * torch.log(old / new)` of a softmax model's outputs
                return
            message = RATIO_MESSAGE
        self.deferred.add(ctx, node, node, message, lambda: self._fix(use, x))

    def leave_Module(self, node: cst.Module) -> None:
        for log_call, use, x, value in self._passed:
            passed = _one_minus_passed_probability(self.ctx, value)
            if passed is None or _nonfinite_handled(self.ctx, log_call):
                continue
            p = self.spelling(value.right)  # type: ignore[attr-defined]
            message = (
                f"`log(1 - p)` where `{p}` is {passed}: `{self.spelling(value)}` is exactly 0 where `{p}` rounds "
                "to 1, which gives `-inf` and `nan` gradients; clamp it or add an eps"
            )
            self.report(log_call, self.quoting(log_call, message), fix=lambda use=use, x=x: self._fix(use, x))
        for log_call, use, x, numer in self._ratios:
            fact = caller_value_fact(self.ctx, numer)
            if fact is None or fact.kind not in (SOFTMAX, SIGMOID) or not fact.why or _nonfinite_handled(self.ctx, log_call):
                continue
            # no fix: where the denominator underflows too (the same output, detached) the ratio is 0 / 0, which
            # no clamp of it mends; the log-probabilities the model could return do
            message = (f"`log` of a ratio whose numerator is a {fact.kind} output ({fact.message}): it is exactly 0 "
                       "where that output underflows, which gives `-inf` (`nan` for 0 / 0); compute it from "
                       "log-probabilities (`log_softmax`, `logsigmoid`) as a difference")
            self.report(log_call, self.quoting(log_call, message))
        super().leave_Module(node)

    def _flush(self, scope: Optional[cst.CSTNode]) -> None:
        for node, message, fix in self.deferred.flush(self.ctx, scope):
            if not _nonfinite_handled(self.ctx, node):
                self.report(node, self.quoting(node, message or self.MESSAGE), fix=fix)

    def _fix(self, use: OpUse, x: cst.BaseExpression) -> Optional[Fix]:
        ctx = self.ctx
        eps = self.options["eps"]
        clamped = ctx.parse_expression(f"{atom_code(ctx, x)}.clamp_min({eps!r})")
        return self.make_fix().replace(x, clamped)


#: torch functions whose every element may be exactly 0 by construction: a uniform draw in [0, 1) and a ReLU
_UNIFORM_DRAWS = frozenset({"torch.rand", "torch.rand_like"})
_RECTIFIERS = frozenset({"torch.relu", "torch.nn.functional.relu", "torch.nn.functional.relu6"})


def _zero_by_construction(ctx, value: cst.BaseExpression) -> Optional[str]:
    """What makes ``value`` exactly 0 for some elements, whatever its input, in words: a uniform draw
    (``torch.rand``, ``torch.rand_like``, ``x.uniform_()``: values in [0, 1), 0 among them; ``1 - u`` is in
    (0, 1] and is not this), or a ReLU (``F.relu(x)``, ``x.relu()``, ``x.clamp(min=0)``: 0 for every
    negative input); None otherwise."""
    if not isinstance(value, cst.Call):
        return None
    names = ctx.names.qualified_names_at(value.func)
    if names & _UNIFORM_DRAWS:
        return f"a uniform draw in [0, 1) (`{ctx.code(value.func)}`)"
    if names & _RECTIFIERS:
        return "a ReLU output"
    method = value.func.attr.value if isinstance(value.func, cst.Attribute) else None
    if method == "uniform_" and not value.args:
        return "a uniform draw in [0, 1) (`uniform_()`)"
    if method == "relu" and not value.args and not names:
        return "a ReLU output"
    if method in ("clamp", "clamp_min") and not names:
        low = next((a.value for a in value.args if a.keyword is None or a.keyword.value == "min"), None)
        if isinstance(low, (cst.Integer, cst.Float)) and float(low.value) == 0.0:
            return "a value clamped at 0 (`clamp(min=0)`)"
    return None


#: calls that find or replace the `-inf`/`nan` a log of 0 gives
_NONFINITE_CHECKS = frozenset({"isfinite", "isinf", "isneginf", "isnan", "nan_to_num", "nan_to_num_"})


def _nonfinite_handled(ctx, log_call: cst.CSTNode) -> bool:
    """The log's `-inf` is dealt with where it is made: ``torch.nan_to_num(torch.log(p))``, or the result
    assigned to a name whose first reader, within the next three statements, tests or replaces it
    (``torch.where(torch.isfinite(lp), lp, m)``)."""
    parent = ctx.parent(log_call)
    if isinstance(parent, cst.Arg) and _nonfinite_call(ctx.parent(parent)):
        return True
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return False
    name = parent.targets[0].target.value
    stmt = ctx.statement_of(log_call)
    block = ctx.block_of(stmt) if stmt is not None else None
    if block is None:
        return False
    following = _following(ctx, block, stmt, 3)
    for later in following:
        uses = ctx.names_in(later, name)
        if not uses:
            continue
        # the first statement that reads the value must be the one that tests or replaces it
        for use in uses:
            for a in ctx.ancestors(use):
                if a is later:
                    break
                if _nonfinite_call(a):
                    return True
        return False
    return False


def _following(ctx, block: Sequence[cst.CSTNode], stmt: cst.CSTNode, count: int) -> Sequence[cst.CSTNode]:
    """The (up to) ``count`` statements after ``stmt`` in its ``block``: each block is indexed once per
    file, so asking for every statement of a long block stays linear."""
    indexes = _BLOCK_INDEX.of(ctx)
    index = indexes.get(id(block))
    if index is None:
        index = indexes[id(block)] = ({id(s): i for i, s in enumerate(block)}, block)
    at = index[0][id(stmt)]
    return block[at + 1:at + 1 + count]


#: id(block) -> (id(statement) -> its index in the block, the block)
_BLOCK_INDEX: "Fact[Dict[int, Tuple[Dict[int, int], Sequence[cst.CSTNode]]]]" = Fact("tl208.block_index", lambda ctx: {})


def _nonfinite_call(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Call) and callee_name(node) in _NONFINITE_CHECKS


def _one_minus_param(ctx, value: cst.BaseExpression) -> bool:
    """``1 - p`` or ``1 - p[...]`` with ``p`` a parameter of the function around it."""
    if not (is_binop(value, cst.Subtract) and is_one(value.left)):  # type: ignore[attr-defined]
        return False
    p = value.right  # type: ignore[attr-defined]
    while isinstance(p, cst.Subscript):
        p = p.value
    return isinstance(p, cst.Name) and ctx.names.is_param(p)


def _one_minus_passed_probability(ctx, value: cst.BaseExpression) -> Optional[str]:
    """``1 - p`` (``1 - p[:, i]``) where ``p`` is a parameter every call of the function in the file fills
    with a softmax or sigmoid output (a helper defined in one notebook cell and called with
    ``probas = F.softmax(logits, dim=1)`` from the cell before): ``1 - p`` is exactly 0 where ``p`` rounds
    to 1.  The words that say where ``p`` comes from, else None."""
    if not (is_binop(value, cst.Subtract) and is_one(value.left)):  # type: ignore[attr-defined]
        return None
    p = value.right  # type: ignore[attr-defined]
    while isinstance(p, cst.Subscript):
        p = p.value
    if not isinstance(p, cst.Name):
        return None
    fact = caller_value_fact(ctx, p)
    if fact is None or fact.kind not in (SOFTMAX, SIGMOID):
        return None
    return f"{fact.kind} output passed in: {fact.message}"
