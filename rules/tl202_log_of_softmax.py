from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.families.numerics.patterns import (
    written_within_range,
    followed,
    is_log_call,
    ALL,
    IMPLICIT,
    UNKNOWN,
    Softmax,
    all_elements_code,
    module_ref,
    movable,
    peel_selection,
    softmax_of,
    torch_call_code,
)
from torchlint.analysis.ops import log_use
from torchlint.analysis.values import MAX_CALLERS, caller_frames, open_frame, project_caller_frames, value_fact
from torchlint.analysis.definitions import calls_of_function, function_params, walked_by_loop
from torchlint.analysis.roles import SOFTMAX
from torchlint.rule import Fix, Invalid, LintRule, Valid

_MODULES = ("torch.nn.functional", "torch.special", "torch")
SELECTION_MESSAGE = (
    "`log` of elements of a softmax gives `-inf` where they underflow to 0; take them from `log_softmax(x, dim)`"
)



class LogOfSoftmax(LintRule):
    """
    ## What it does
    Finds the logarithm of a softmax: `torch.log(F.softmax(x, dim=1))`, `x.softmax(1).log()`, the log of
    a variable assigned from a softmax, of an `nn.Softmax` layer's output, of a hand-written softmax, or of
    a call to a function of the same module whose body computes a softmax.

    Models are followed through their classes and calls: the log of the output of a model whose
    `forward` ends in softmax (its class in this file or a project module; the model built here, a
    default, an annotated parameter or `self.<attr>`), also when a project function returns that output
    and when elements are taken per target first (`probs[range(n), y]`, `probs.gather(1, y)`), also
    into a name assigned before (in a notebook, possibly in an earlier cell) and when such parts are
    joined (`torch.cat((a, b))`, `torch.stack`) before the log. Values are followed into a list that
    starts empty and only grows by `append` (`probs[t].gather(1, a[t]).log()` after a rollout that
    appended each step's softmax), into a helper's parameter when every call of the helper in the file
    passes a softmax (`def entropy(p): return -(p * p.log()).sum(1)`; a list parameter too, `probs[t].log()`,
    with the callers' own parameters bound in turn; also a local computed from such parameters, `probs =
    net(states)` in `train_model(cls, net, ...)` where every call, `Policy.train_model(policy, ...)` of a
    class method included, passes a model whose `forward` ends in softmax), into the rows a loop walks
    (`for row in probs:`, `for i, row in enumerate(probs):`: elements of the softmax, no fix), and through a cap that changes
    no probability (`.clamp(max=1 - 1e-20)` is `1.0` in float32: zeros stay zeros). The message
    says which `forward` or softmax (file:line); no fix is offered there (the model's other users may want
    probabilities).

    ## Why is this bad?
    Softmax probabilities underflow to exactly 0 for logits far below the maximum, and `log(0)` is
    `-inf`; the gradient through it is `nan`. The Effective PyTorch notes walk through this failure:
    `log(softmax(logits))` gives `inf` for `[1000., 0.]`, and the stable form subtracts the log-sum-exp
    instead (Effective PyTorch, section 7). `log_softmax` computes `x - logsumexp(x)` directly, never
    forming the probabilities. The cookbooks use `F.log_softmax` for the same reason in their
    label-smoothing loss (PyTorch Cookbook, Zhang Hao, 2019, the cookbook's 2024 revision).

    A log whose result feeds a hand-written cross-entropy (`-sum(labels * log(softmax(x)))`) is left to
    TL206, which replaces the whole loss. `torch.log(p + eps)` and `torch.log(p.clamp(min=eps))` are not
    reported here.

    The same holds for elements picked out of a softmax (`log(probs.gather(1, y))`, `log(probs[:, 1])`,
    `log(probs.min(-1).values)`): selecting, reshaping and taking a minimum commute with `log`, so the
    fix takes the same elements of `log_softmax`. The largest probability is at least `1/C` and its log
    is finite: `log(probs.max(-1).values)` is not reported. Nor is the softmax of numbers the code writes
    out (`torch.tensor([[1.5, 0.8, 2.1]])`, a worked example's logits) whose spread is below 80: no
    probability of it underflows in float32.

    ## Example
    ```python
    log_probs = torch.log(F.softmax(logits, dim=1))
    ```

    ## Use instead
    ```python
    log_probs = F.log_softmax(logits, dim=1)
    ```

    ## Fix safety
    The fix calls `log_softmax` with the softmax's own arguments (and applies the same selection to it) (same namespace, same `dim`, `dtype`
    kept), so it is safe: the values agree wherever the original was finite. A hand-written softmax or a
    function whose softmax runs over every element becomes `torch.log_softmax(x.flatten(), dim=0)
    .view_as(x)` (offered only for a plain name). No fix is offered when the softmax's dim is not known
    (a same-module function with a computed dim), or when a name in the logits is reassigned between the
    softmax and the log.

    ## Options
    None.

    ## References
    - [torch.nn.functional.log_softmax](https://pytorch.org/docs/stable/generated/torch.nn.functional.log_softmax.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL202"
    NAME = "log-of-softmax"
    MESSAGE = "`log(softmax(x))` gives `-inf` where the softmax underflows to 0; use `log_softmax(x, dim)`"
    FIX_TITLE = "Replace with `log_softmax`"
    TRIGGERS = ("log",)

    VALID = [
        """
import torch.nn.functional as F

def nll(logits, target):
    return F.nll_loss(F.log_softmax(logits, dim=1), target)
""",
        """
import torch

def safe_log(p, eps=1e-8):
    return torch.log(p.clamp_min(eps))
""",
        """
import torch

def entropy(logits):
    p = torch.softmax(logits, dim=-1)
    return -(p * torch.log(p + 1e-12)).sum(-1)
""",
        """
import numpy as np
from scipy.special import softmax

def scores(x):
    return np.log(softmax(x))
""",
        """
import math
import torch

def f(x):
    return math.log(len(x)) + torch.softmax(x, 0)
""",
        # a Lightning-style logger call is not a tensor log
        """
import torch

class Module:
    def training_step(self, batch):
        probs = torch.softmax(batch, dim=1)
        self.log("p", probs)
        return probs
""",
        # the largest probability is at least 1/C: finite
        """
import torch

def confidence(logits):
    return torch.log(torch.softmax(logits, -1).max(-1).values)
""",
        # a product of probabilities does not commute with log: TL208's
        """
import torch

def masked(logits, mask):
    return torch.log(torch.softmax(logits, -1) * mask)
""",
        """
import torch

def top2(logits):
    return torch.log(torch.softmax(logits, -1).topk(2).values + 1e-9)
""",
        # left to TL206: the log feeds a hand-written cross-entropy
        """
import torch

def xent(labels, logits):
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=-1)), dim=-1)
""",
        # a helper with a guard of its own is not a plain log
        Valid(
            """
import torch

def safe_log(t):
    return torch.log(t.clamp_min(1e-12))

def log_probs(x):
    return safe_log(torch.softmax(x, dim=1))
"""
        ),
        # the model's log-probabilities, and a softmax model's output with an epsilon before the log
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class LogProbs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)

def scores(x):
    return LogProbs()(x).exp().log(), torch.log(Probs()(x) + 1e-6)
"""
        ),
        # joined with a part that is no softmax, or with an epsilon added after the join
        Valid(
            """
import torch

def scores(logits, other, y):
    probs = torch.softmax(logits, dim=-1)
    picked = probs[torch.arange(len(y)), y]
    return torch.log(torch.cat((picked, other))), torch.log(torch.cat([picked, picked]) + 1e-9)
"""
        ),
        # a worked example: logits written out (no element's probability can underflow), the loss on the
        # log of their softmax printed next to cross-entropy on the logits
        """
import torch
import torch.nn as nn

logits = torch.tensor([[1.5, 0.8, 2.1]])
target = torch.tensor([2])
print(nn.NLLLoss()(torch.log(torch.softmax(logits, dim=1)), target))
print(nn.CrossEntropyLoss()(logits, target))
""",
        Valid(
            """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)

    def target_entropy(self, x):
        p = self.forward(x).detach()
        return -(p * torch.log(p.clamp(min=1e-8))).sum(1)
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def spread(p):
    return -(p * torch.log(p)).sum(dim=1).mean()


logits = torch.randn(16, 5)
# one caller passes probabilities kept away from zero: the helper's log is not of a bare softmax
print(spread(F.softmax(logits, dim=1)), spread(F.softmax(logits, dim=1).clamp(min=1e-8)))
"""
        ),
        Valid(
            """
import torch


def mixture(steps):
    parts = []
    for _ in range(steps):
        parts.append(torch.softmax(torch.randn(3), dim=0))
    parts.append(torch.full((3,), 1 / 3))
    return [parts[i].log() for i in range(len(parts))]


def floored(x):
    # a lower bound keeps the log finite
    return torch.log(torch.softmax(x, dim=1).clamp(min=1e-6, max=1.0))
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def entropy_per_row(scores):
    probs = F.softmax(scores, dim=1)
    total = []
    for row in probs:
        total.append(-(row * torch.log(row + 1e-8)).sum())
    rows = [torch.rand(3) for _ in range(4)]
    for row in rows:
        total.append(torch.log(row).sum())  # not rows of a softmax
    return torch.stack(total)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, target):
    log_probs = torch.log(F.softmax(logits, dim=1))
    return F.nll_loss(log_probs, target)
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, target):
    log_probs = F.log_softmax(logits, dim=1)
    return F.nll_loss(log_probs, target)
""",
            line=6,
            col=17,
        ),
        Invalid(
            """
import torch

def scores(x):
    return x.softmax(-1).log()
""",
            fixed="""
import torch

def scores(x):
    return x.log_softmax(-1)
""",
        ),
        Invalid(
            """
import torch
from torch.nn.functional import softmax as sm

def scores(x):
    p = sm(x, dim=1, dtype=torch.float32)
    return torch.log(p)
""",
            fixed="""
import torch
from torch.nn.functional import softmax as sm

def scores(x):
    p = sm(x, dim=1, dtype=torch.float32)
    return torch.nn.functional.log_softmax(x, dim=1, dtype=torch.float32)
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax(dim=-1)

    def forward(self, x):
        return torch.log(self.act(x))
""",
            fixed="""
import torch
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax(dim=-1)

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)
""",
        ),
        # an entropy is not a cross-entropy with labels: the log is rewritten here
        Invalid(
            """
import torch

def entropy(logits):
    p = torch.softmax(logits, dim=-1)
    return -(p * torch.log(p)).sum(-1)
""",
            fixed="""
import torch

def entropy(logits):
    p = torch.softmax(logits, dim=-1)
    return -(p * torch.log_softmax(logits, dim=-1)).sum(-1)
""",
        ),
        # a softmax written in the same module, over every element
        Invalid(
            """
import torch

def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)

def log_probs(scores):
    return torch.log(softmax(scores))
""",
            fixed="""
import torch

def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)

def log_probs(scores):
    return torch.log_softmax(scores.flatten(), dim=0).view_as(scores)
""",
        ),
        # elements picked from a softmax: take the same elements of log_softmax
        Invalid(
            """
import torch

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    return -torch.log(probs.gather(1, y[:, None]))
""",
            fixed="""
import torch

def nll(logits, y):
    probs = torch.softmax(logits, dim=1)
    return -torch.log_softmax(logits, dim=1).gather(1, y[:, None])
""",
            message="elements of a softmax",
        ),
        Invalid(
            """
import torch

def positive_score(x):
    return x.softmax(-1)[:, 1].log()
""",
            fixed="""
import torch

def positive_score(x):
    return x.log_softmax(-1)[:, 1]
""",
        ),
        Invalid(
            """
import torch

def score(x):
    return torch.special.softmax(x, 0).log()
""",
            fixed="""
import torch

def score(x):
    return torch.special.log_softmax(x, 0)
""",
        ),
        # a helper that only wraps torch.log is log
        Invalid(
            """
import torch

def _log(t):
    return torch.log(t)

def log_probs(x):
    return _log(torch.softmax(x, dim=1))
""",
            fixed="""
import torch

def _log(t):
    return torch.log(t)

def log_probs(x):
    return torch.log_softmax(x, dim=1)
""",
        ),
        # a model ending in softmax, its output returned by a helper and indexed per target before the log
        Invalid(
            """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.out = nn.Softmax(dim=1)

    def forward(self, x):
        return self.out(self.fc(x))

def predict(model, x):
    return model(x)

def nll(x, y):
    p = predict(Probs(), x)
    return -torch.log(p[torch.arange(len(y)), y]).mean()
""",
            line=19,
            message="`log` of elements of a softmax: `forward` of `Probs` (case.py:11) ends in softmax",
        ),
        # a parameter annotated with the model class
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)

def entropy(model: Probs, x):
    p = model(x)
    return -(p * p.log()).sum(-1)
""",
            line=16,
            message="`model` is annotated `Probs`",
        ),
        # elements picked per target at module level (a notebook's cells), joined, then logged
        Invalid(
            """
import torch

scores = torch.randn(2, 3, 5)
labels = torch.tensor([[1, 4, 0], [2, 2, 3]])
probs = torch.softmax(scores, dim=-1)
first = probs[0, [0, 1, 2], labels[0]]
second = probs[1, [0, 1, 2], labels[1]]
picked = torch.log(torch.cat((first, second)))
print(-picked.mean())
""",
            line=9,
            message="`log` of elements of a softmax",
        ),
        Invalid(
            """
import torch

def loss(scores, labels):
    probs = scores.softmax(-1)
    chosen = probs.gather(-1, labels.unsqueeze(-1))
    return -torch.log(torch.stack([chosen, probs[:, :1]])).mean()
""",
            line=7,
            message="`log` of elements of a softmax",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)

    def target_entropy(self, x):
        p = self.forward(x).detach()
        return -(p * torch.log(p)).sum(1)
""",
            line=16,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(6, 4)

    def forward(self, s):
        return F.softmax(self.out(s), dim=-1).clamp(max=1.0 - 1e-12)


policy = Policy()
probs = policy(torch.randn(8, 6))
chosen = torch.multinomial(probs, 1)
score = probs.gather(1, chosen).log().mean()
""",
            line=19,
            message="ends in softmax",
        ),
        Invalid(
            """
import torch
from torch import nn


def rollout(actor, steps):
    kept, picked = [], []
    for _ in range(steps):
        p = torch.softmax(actor(torch.randn(1, 5)), dim=-1)
        kept.append(p)
        picked.append(torch.multinomial(p, 1))
    return sum(kept[t].gather(1, picked[t]).log().sum() for t in range(steps))


print(rollout(nn.Linear(5, 3), 4))
""",
            line=12,
            message="`torch.softmax(...)`",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F


def spread(p):
    return -(p * torch.log(p)).sum(dim=1).mean()


logits = torch.randn(16, 5, requires_grad=True)
bonus = spread(F.softmax(logits, dim=1))
""",
            line=7,
            message="`F.softmax(logits, dim=1)`",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Linear(4, 3)
        self.v = nn.Linear(4, 1)

    def forward(self, s):
        return F.softmax(self.pi(s), dim=1), self.v(s)


def update(optimizer, probs, chosen, returns):
    loss = 0
    for t in range(len(probs)):
        loss = loss - probs[t].gather(1, chosen[t]).log().mean() * returns[t]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def episode(net, optimizer, states):
    probs, chosen, returns = [], [], []
    for s in states:
        p, value = net(s)
        probs.append(p)
        chosen.append(p.multinomial(1))
        returns.append(1.0)
    update(optimizer, probs, chosen, returns)


agent = ActorCritic()
episode(agent, torch.optim.Adam(agent.parameters()), [torch.randn(2, 4) for _ in range(5)])
""",
            line=20,
            message="`log` of elements of a softmax",
        ),
        # each row a loop walks (`for i, row in enumerate(probs)`) is elements of the softmax
        Invalid(
            """
import torch
import torch.nn.functional as F


def entropy_per_row(scores):
    probs = F.softmax(scores, dim=1)
    total = []
    for i, row in enumerate(probs):
        total.append(-(row * torch.log(row)).sum())
    return torch.stack(total)
""",
            line=10,
            message='`log` of elements of a softmax',
        ),
        # a local computed from a parameter every call passes a model for (a class method called through its class)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=-1)

    @classmethod
    def update(cls, net, states, actions, advantages, optimizer):
        probs = net(states)
        loss = -(torch.log(probs) * actions).sum(1).mul(advantages).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


actor = Actor(4, 2)
Actor.update(actor, torch.randn(5, 4), torch.ones(5, 2), torch.ones(5), torch.optim.Adam(actor.parameters()))
""",
            line=18,
            message='`log` of a softmax: `forward` of `Actor`',
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._undecided: list = []

    def visit_Call(self, node: cst.Call) -> None:
        if not is_log_call(self.ctx, node):
            return
        use = log_use(self.ctx, node)
        if use is None or use.operand is None:
            return
        base, peeled = use.operand, False
        info = softmax_of(self.ctx, base)
        if info is None:
            base, peeled = peel_selection(self.ctx, use.operand)
            if not peeled:
                self._undecided.append((node, use.operand))
                return
            info = softmax_of(self.ctx, base)
        if info is None:
            self._undecided.append((node, use.operand))
            return
        if info.eps:
            return
        if written_within_range(self.ctx, info.operand, "softmax"):
            return  # numbers written out whose softmax cannot underflow (a worked example's logits)
        fix: Optional[Fix] = None
        replacement = self._replacement(base, info)
        if replacement is not None:
            new = replacement if not peeled else use.operand.deep_replace(base, replacement)
            title = "Take the same elements of `log_softmax`" if peeled else None
            fix = self.make_fix(title).replace(node, new)  # type: ignore[arg-type]
        message = SELECTION_MESSAGE if peeled else self.MESSAGE
        self.report(node, self.quoting(node, message), fix=fix)

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: the output of a model whose `forward` ends in softmax (its class
        in this file or a project module; the model built here, a default, an annotation or held on
        `self`), directly or returned by a project function, or elements of it taken per target."""
        for log, operand in self._undecided:
            found = _softmax_elements(self.ctx, open_frame(self.ctx, log), operand)
            if found is None:
                found = self._from_every_caller(log, operand)
            if found is None:
                continue
            fact, selected = found
            what = "elements of " if selected else ""
            self.report(
                log,
                f"`log` of {what}a softmax: {fact.message}; it gives `-inf` where the softmax underflows to 0, "
                "return logits and use `log_softmax(x, dim)`",
            )

    def _from_every_caller(self, log: cst.Call, operand: cst.BaseExpression):
        """``def entropy(p): return -(p * torch.log(p)).sum(1)`` where every call of the function in this file
        passes a softmax for ``p`` (the parameter not bound again): what :func:`_softmax_elements` finds in
        each caller's frame, when all of them agree."""
        ctx = self.ctx
        base = operand
        while _selection_base(base) is not None:
            base = _selection_base(base)  # `policies[t].gather(1, a)`: the list parameter `policies`
        frame = open_frame(ctx, log)
        function = frame.function
        if not isinstance(base, cst.Name) or function is None or not function_params(function):
            return None
        # the parameter itself (`-(p * torch.log(p))`), or a local computed from parameters (`probs = net(s)`,
        # `net` a model every call passes): read in each caller's frame, where the parameters are bound
        param = any(p.name.value == base.value for p in function_params(function))
        sites = calls_of_function(ctx, function, frame.cls)
        if not sites:
            # called from the project's other files only (`QNet.train_model(net, ...)` in the training script)
            frames = project_caller_frames(ctx, log)
            found = [_softmax_elements(ctx, f, operand) for f in frames]
            if not frames or any(f is None for f in found) or len({f[1] for f in found}) != 1:  # type: ignore[index]
                return None
            return found[0]
        if len(sites) > MAX_CALLERS or any(ctx.is_inside(site, function) for site in sites):
            return None
        if any(log_use(ctx, site) is not None for site in sites):
            return None  # a wrapper of `log` (`def _log(t): return torch.log(t)`): reported where it is called
        frames = caller_frames(ctx, log)
        if len(frames) != len(sites) or param and any(base.value not in f.bound for f in frames):
            return None
        if any(_softmax_elements(ctx, f, operand) is None for f in frames):
            # the callers' own parameters bound in turn (`run(model, ...)` calling `_train(model, policies)`)
            deeper = caller_frames(ctx, log, levels=2)
            if deeper and all(base.value in f.bound or not param for f in deeper):
                frames = deeper
        found = [_softmax_elements(ctx, f, operand) for f in frames]
        if any(f is None for f in found) or len({f[1] for f in found}) != 1:  # type: ignore[index]
            return None
        return found[0]

    def _replacement(self, operand: cst.BaseExpression, info: Softmax) -> Optional[cst.BaseExpression]:
        """``log_softmax`` in place of the softmax ``operand`` stands for."""
        ctx = self.ctx
        through_variable = followed(self.ctx, operand, 3) is not operand
        source = info.node if through_variable else None
        if not movable(self.ctx, info.operand, source, operand):
            return None
        code: Optional[str] = None
        use = info.use
        if info.kind == "torch" and use is not None and use.kind != "layer":
            func = use.node.func
            if isinstance(func, cst.Attribute):
                return use.node.with_changes(func=func.with_changes(attr=cst.Name("log_softmax")))
            for module in _MODULES:
                if any(q == f"{module}.softmax" for q in ctx.names.qualified_names(func)):
                    ref = module_ref(ctx, module)
                    if ref is None:
                        return None
                    return use.node.with_changes(func=ctx.parse_expression(f"{ref}.log_softmax"))
            return None
        if info.dim in (IMPLICIT, UNKNOWN):
            if info.kind == "torch" and use is not None and use.kind == "layer":
                ref = module_ref(ctx, "torch.nn.functional")
                if ref is not None:
                    code = f"{ref}.log_softmax({ctx.code(info.operand)})"
        elif info.dim is ALL:
            code = all_elements_code(ctx, None, "log_softmax", info.operand)
        else:
            code = torch_call_code(ctx, None, "log_softmax", info.operand, [f"dim={info.dim}"])
        if code is None:
            return None
        return ctx.parse_expression(code)


def _selection_base(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``p[range(n), y]`` and ``p.gather(1, y)``: ``p``, whose elements are taken as they are."""
    if isinstance(expr, cst.Subscript):
        return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "gather":
        return expr.func.value
    return None


_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


def _softmax_elements(ctx, frame, expr: cst.BaseExpression, depth: int = 4):
    """``(fact, selected)`` when ``expr`` is a softmax's output in ``frame`` (:func:`value_fact`), elements
    of one taken per target (``p[range(n), y]``, ``p.gather(1, y)``), a name assigned such elements
    before (``picked = probs[i, cols, y]``, in a notebook possibly in an earlier cell), or such parts
    joined (``torch.cat((a, b))``, ``torch.stack``: ``log`` commutes with joining); None otherwise."""
    fact = value_fact(frame, expr)
    if fact is not None:
        return (fact, False) if fact.kind == SOFTMAX and fact.why else None
    base = _selection_base(expr)
    if base is not None:
        fact = value_fact(frame, base)
        return (fact, True) if fact is not None and fact.kind == SOFTMAX and fact.why else None
    if depth <= 0:
        return None
    if isinstance(expr, cst.Name):
        walked = walked_by_loop(ctx, expr)
        if walked is not None:
            # `for p in probs:` (`enumerate(probs)` too): each `p` is a row of the softmax
            found = _softmax_elements(ctx, frame, walked, depth - 1)
            return (found[0], True) if found is not None else None
        value = ctx.names.value_of(expr)
        if value is None or isinstance(value, cst.Name):
            return None  # a plain name was followed by value_fact already
        found = _softmax_elements(ctx, frame, value, depth - 1)
        return (found[0], True) if found is not None and found[1] else None
    if isinstance(expr, cst.Call) and ctx.names.qualified_names_at(expr.func) & _JOINS and expr.args:
        parts = expr.args[0].value
        first = expr.args[0]
        if first.star or (first.keyword is not None and first.keyword.value != "tensors"):
            return None
        if not isinstance(parts, (cst.Tuple, cst.List)) or not parts.elements or any(
                isinstance(e, cst.StarredElement) for e in parts.elements):
            return None
        found = [_softmax_elements(ctx, frame, e.value, depth - 1) for e in parts.elements]
        if all(f is not None for f in found):
            return found[0][0], True  # type: ignore[index]
    return None
