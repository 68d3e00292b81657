from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.analysis.context import callee_name, canonical_keyword
from torchlint.analysis.names import dotted_name
from torchlint.families.numerics.patterns import (
    ALL,
    IMPLICIT,
    UNKNOWN,
    CrossEntropy,
    IndexedNll,
    LossOfLog,
    cross_entropy_dim_ok,
    cross_entropy_of_log,
    followed,
    match_cross_entropy,
    match_indexed_nll,
    movable,
    per_target_log,
    removable_assignment,
    same_code,
    same_dim,
    torch_call_code,
)
from torchlint.families.shapes.shapes import shape_of
from torchlint.analysis.values import At, Evidence, caller_frames, open_frame, value_fact
from torchlint.analysis.roles import SOFTMAX
from torchlint.fixes import import_module, import_name
from torchlint.fixes.project import RUNTIME_CHOICES, RUNTIME_FIXES, use_runtime
from torchlint.rule import Fix, Invalid, LintRule, Option

INDEX_MESSAGE = (
    "Negative log-likelihood taken from `{found}` is `inf` when a probability underflows; "
    "use `F.cross_entropy({x}, {y})`"
)


class SoftmaxCrossEntropyByHand(LintRule):
    """
    ## What it does
    Finds softmax cross-entropy written by hand: `-sum(labels * log(softmax(logits)))` in its spellings
    (`-torch.sum(...)`, `-(labels * log_p).sum(dim).mean()`, `torch.sum(-labels * log_p)`), where the
    softmax is a torch softmax, a hand-written one, or a function of the same module whose body computes
    one, and the log may be held in a variable. Also finds the class-index form
    `-log(softmax(x))[range(n), y]` / `-torch.log(p[torch.arange(n), y])`.

    The probabilities are also followed through calls: the output of a model whose `forward` ends in
    softmax (its class in this file or a project module; the model built here, a default, an annotated
    parameter, `self.<attr>`, or an argument of the calls of the function in this file, also two calls
    away: a model handed to the training step that calls the loss helper), or what a
    project function returning `softmax(...)` returns, when its log is picked per target (`gather`,
    `[range(n), y]`, `[torch.arange(n), y]`) or weighted by labels, then summed or averaged and negated.
    The message says where the softmax is (file:line) and, for an argument, which call passes it; no fix
    is offered there (the model's other users may want probabilities).

    ## Why is this bad?
    When a logit is far below the largest, its softmax probability underflows to exactly 0, `log(0)`
    is `-inf`, and the loss is `inf` (or `nan` where the label is 0: `0 * -inf`). This is the Effective
    PyTorch notes' second example: `unstable_softmax_cross_entropy` returns `inf` for logits
    `[1000., 0.]` and labels `[.5, .5]`, while the stable version, which normalises with `logsumexp`,
    returns 500.0 with gradient `[0.5, -0.5]` (Effective PyTorch, section 7). The cookbooks' label
    smoothing uses `log_softmax` for the same reason (PyTorch Cookbook, Zhang Hao, 2019, the cookbook's 2024 revision).

    `log_softmax` normalises with `logsumexp` and is finite for any finite logits; with class indices,
    `F.cross_entropy` is the standard, fused form. `torchlint.runtime.softmax_cross_entropy(labels=...,
    logits=..., dim=...)` computes the same loss with float16/bfloat16 inputs handled in float32.

    `-sum(labels * log_softmax(x))` is already stable and is not reported.

    ## Example
    ```python
    def unstable_softmax_cross_entropy(labels, logits):
        logits = torch.log(softmax(logits))
        return -torch.sum(labels * logits)
    ```

    ## Use instead
    ```python
    def unstable_softmax_cross_entropy(labels, logits):
        return -(labels * torch.log_softmax(logits.flatten(), dim=0).view_as(logits)).sum()
    ```

    ## Fix safety
    The fix computes the log-probabilities with `torch.log_softmax` and keeps the rest of the
    expression. It is safe: it never makes a working program fail, changes no result beyond the
    `inf`/`nan` it names, and adds no dependency.

    The log-probabilities are taken over the softmax's own dim (`-(labels * torch.log_softmax(x, dim=d)).sum()`, or
    `.sum(dim=d)` when the sum ran over the softmax dim); a softmax over every element (a hand-written
    `exp / exp.sum()` with no dim) becomes `log_softmax(x.flatten(), dim=0).view_as(x)`. Any `.mean()`
    or `/ n` outside stays where it was, the result keeps the original dtype promotion, and the
    variable that held the log-probabilities is deleted when nothing else reads it.

    When the project declares `torchlint[runtime]` (pyproject dependencies or optional dependencies,
    `requirements*.txt`, `setup.cfg`, `environment.yml`), or with `runtime-fixes = "runtime"`, the fix
    calls `torchlint.runtime.softmax_cross_entropy(labels=..., logits=..., dim=...)` instead (with
    `reduction="none"` for a per-position sum), imported once with the file's imports; its result has
    the logits' dtype (float16/bfloat16 logits are computed in float32 inside). That fix is unsafe: the
    runtime broadcasts nothing and refuses labels whose shape differs from the logits' (a `[C]` prior
    against `[N, C]` logits works in the hand-written product). Without that
    declaration the runtime is never imported: under the `torchlint-fix` pre-commit hook torchlint is
    not installed where the program runs.

    No fix is offered when the sum runs over another dim than the softmax, when the softmax's dim is
    implicit or computed, when a name in the logits is reassigned between the softmax and the loss, or
    (plain torch) when a softmax over every element has logits that are not a plain name.

    For the class-index form (a softmax over dim 1 or -1 of a 2-D tensor, which the two-index pattern
    implies) the fix is `F.cross_entropy(x, y, reduction="none")`; it is safe when the
    row index is `range`/`arange` of the batch size spelled from the labels or the logits
    (`len(y)`, `y.size(0)`, `x.shape[0]`), and unsafe otherwise (the range might cover fewer rows).
    When the softmax of the class-index form runs over another dim (`dim=2` of a 3-D tensor), the fix
    replaces `log(softmax(x, dim=d))` by `log_softmax(x, dim=d)` in place and keeps the indexing and the
    reduction around it (safe: the same values wherever the original was finite); not when the softmax
    is computed in another statement or has arguments besides its dim (`dtype=`).

    ## Options
    - `runtime-fixes` (`"auto"` | `"runtime"` | `"torch"`, default `"auto"`): whether the fix may call
      `torchlint.runtime`; `auto` follows the project's declared dependencies.

    ## References
    - [torch.nn.functional.cross_entropy](https://pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL206"
    NAME = "softmax-cross-entropy-by-hand"
    MESSAGE = (
        "Hand-written softmax cross-entropy is `inf` when a probability underflows to 0; "
        "compute it from `log_softmax` (or `torchlint.runtime.softmax_cross_entropy`)"
    )
    FIX_TITLE = "Compute the loss from `log_softmax`"
    TRIGGERS = ("log",)
    OPTIONS = {
        RUNTIME_FIXES: Option(
            "auto",
            "Whether the fix calls `torchlint.runtime.softmax_cross_entropy`: `auto` when the project declares "
            "`torchlint[runtime]`, `runtime` always, `torch` never (plain torch: `log_softmax`).",
            choices=RUNTIME_CHOICES,
        )
    }

    VALID = [
        # the cookbook's stable version
        """
import torch

def softmax_cross_entropy(labels, logits, dim=-1):
    scaled_logits = logits - torch.max(logits)
    normalized_logits = scaled_logits - torch.logsumexp(scaled_logits, dim)
    return -torch.sum(labels * normalized_logits)
""",
        # label smoothing with log_softmax (PyTorch Cookbook)
        """
import torch

def smoothed_loss(score, smoothed_labels, N):
    log_prob = torch.nn.functional.log_softmax(score, dim=1)
    return -torch.sum(log_prob * smoothed_labels) / N
""",
        # eps keeps the log finite: not reported here
        """
import torch

def xent(labels, logits):
    probs = torch.softmax(logits, dim=-1)
    return -torch.sum(labels * torch.log(probs + 1e-8), dim=-1)
""",
        # numpy look-alike
        """
import numpy as np

def xent(labels, logits):
    e = np.exp(logits - logits.max())
    return -np.sum(labels * np.log(e / e.sum()))
""",
        # not negated: not a loss
        """
import torch

def score(labels, logits):
    return torch.sum(labels * torch.log_softmax(logits, -1))
""",
        """
import torch.nn.functional as F

def loss(logits, y):
    return F.cross_entropy(logits, y)
""",
        # the model's log-probabilities picked per target: already stable
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

def nll(x, y):
    return -LogProbs()(x).gather(1, y[:, None]).mean()
""",
        # a helper called only with a model that returns logits: nothing says the log sees a softmax
        """
import torch
import torch.nn as nn

class Scores(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x).exp()

def nll(model, x, y):
    return -torch.log(model(x))[torch.arange(len(y)), y].mean()

def run(x, y):
    return nll(Scores(), x, y)
""",
        # the entropy of a softmax model's output is no cross-entropy (TL202 rewrites its log)
        """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 4), nn.Softmax(dim=-1))

    def forward(self, x):
        return self.net(x)

def entropy(model: Probs, x):
    p = model(x)
    return -(p * torch.log(p)).sum(-1).mean()
""",
    ]

    INVALID = [
        # the cookbook's example, with its own (max-shifted) softmax over every element
        Invalid(
            """
import torch


def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)


def unstable_softmax_cross_entropy(labels, logits):
    logits = torch.log(softmax(logits))
    return -torch.sum(labels * logits)
""",
            fixed="""
import torch


def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)


def unstable_softmax_cross_entropy(labels, logits):
    return -(labels * torch.log_softmax(logits.flatten(), dim=0).view_as(logits)).sum()
""",
            line=12,
            col=12,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return -(F.softmax(teacher, dim=-1) * torch.log(p)).sum(dim=-1).mean()
""",
            fixed="""
import torch
import torch.nn.functional as F

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return -(F.softmax(teacher, dim=-1) * torch.log_softmax(student, dim=-1)).sum(dim=-1).mean()
""",
        ),
        Invalid(
            """
\"\"\"Losses.\"\"\"
import torch

def xent(labels, logits, softmax_cross_entropy=None):
    return torch.sum(-labels * logits.softmax(1).log()) / labels.shape[0]
""",
            fixed="""
\"\"\"Losses.\"\"\"
import torch

def xent(labels, logits, softmax_cross_entropy=None):
    return -(labels * torch.log_softmax(logits, dim=1)).sum() / labels.shape[0]
""",
        ),
        # class indices: F.cross_entropy
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, y):
    log_probs = torch.log(F.softmax(logits, dim=1))
    return -log_probs[torch.arange(y.size(0)), y].mean()
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, y):
    return F.cross_entropy(logits, y, reduction="none").mean()
""",
            message="F.cross_entropy",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, y, n):
    p = logits.softmax(-1)
    return -torch.log(p[range(n), y]).sum()
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, y, n):
    p = logits.softmax(-1)
    return F.cross_entropy(logits, y, reduction="none").sum()
""",
            unsafe=True,
        ),
        # the sum runs over another dim than the softmax: reported, no fix
        Invalid(
            """
import torch

def odd(labels, logits):
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=1)), dim=0)
""",
        ),
        # a project that declares torchlint[runtime] (or the option): the runtime function, by keyword
        Invalid(
            """
import torch
import torch.nn.functional as F

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return -(F.softmax(teacher, dim=-1) * torch.log(p)).sum(dim=-1).mean()
""",
            fixed="""
import torch
import torch.nn.functional as F
from torchlint.runtime import softmax_cross_entropy

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return softmax_cross_entropy(labels=F.softmax(teacher, dim=-1), logits=student, dim=-1, reduction="none").mean()
""",
            options={"runtime-fixes": "runtime"},
            unsafe=True,
        ),
        Invalid(
            """
import torch

def xent(labels, logits, softmax_cross_entropy=None):
    return torch.sum(-labels * logits.softmax(1).log()) / labels.shape[0]
""",
            fixed="""
import torch
import torchlint.runtime

def xent(labels, logits, softmax_cross_entropy=None):
    return torchlint.runtime.softmax_cross_entropy(labels=labels, logits=logits, dim=1) / labels.shape[0]
""",
            options={"runtime-fixes": "runtime"},
            unsafe=True,
        ),
        # the softmax runs over another dimension than `F.cross_entropy` reads: `log_softmax` in place
        Invalid(
            """
import torch
import torch.nn.functional as F


def nll(scores, y):
    log_probs = torch.log(F.softmax(scores, dim=2))
    return -log_probs[torch.arange(len(y)), y].mean()
""",
            fixed="""
import torch
import torch.nn.functional as F


def nll(scores, y):
    log_probs = torch.log_softmax(scores, dim=2)
    return -log_probs[torch.arange(len(y)), y].mean()
""",
        ),
        # through the program model: a model whose `forward` ends in softmax, held on `self`
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

class Trainer:
    def __init__(self):
        self.model = Probs()

    def loss(self, x, y):
        log_probs = torch.log(self.model(x))
        return -log_probs[torch.arange(len(y)), y].mean()
""",
            line=20,
            message="Negative log-likelihood taken from the log of a softmax: `forward` of `Probs` (case.py:11)",
        ),
        # a project helper that returns `softmax(...)`, the targets picked with `gather`
        Invalid(
            """
import torch
import torch.nn.functional as F

def predict(scores):
    return F.softmax(scores, dim=1)

def nll(scores, y):
    return -torch.log(predict(scores).gather(1, y[:, None])).sum() / len(y)
""",
            line=9,
            message="`F.softmax(scores, dim=1)` (case.py:6)",
        ),
        # a model passed as an argument: the message names the call that passes it
        Invalid(
            """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 4), nn.Softmax(dim=-1))

    def forward(self, x):
        return self.net(x)

def nll(model, x, y):
    return -torch.log(model(x)[range(len(y)), y]).mean()

def train_step(x, y):
    return nll(Probs(), x, y)
""",
            line=14,
            message="passed in the call at case.py:17",
        ),
        # soft labels against a model annotated with its class
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

def distill(student: Probs, x, teacher_probs):
    return -(teacher_probs * torch.log(student(x))).sum(dim=-1).mean()
""",
            line=15,
            message="Hand-written softmax cross-entropy: `student` is annotated `Probs`",
        ),
        # the class dim not spelled but known: the input is 2-D by construction (torch picks dim 1)
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(features, y):
    logits = features.view(features.size(0), -1)
    return -torch.log(F.softmax(logits))[torch.arange(len(y)), y].mean()
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(features, y):
    logits = features.view(features.size(0), -1)
    return F.cross_entropy(logits, y, reduction="none").mean()
""",
            message="Negative log-likelihood taken from `torch.log(F.softmax(logits))`",
        ),
        # not spelled on a 3-D input (torch picks dim 0) or one of unknown rank: reported, no fix
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(features, y):
    logits = features.view(features.size(0), 4, -1)
    return -torch.log(F.softmax(logits))[torch.arange(len(y)), y].mean()

def nll_any(logits, y):
    return -torch.log(F.softmax(logits))[torch.arange(len(y)), y].mean()
""",
            count=2,
        ),
        # the model reaches the loss helper through a training step it is handed to: two calls away
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(16, 10)

    def forward(self, x):
        return F.softmax(self.out(x), dim=1)


def nll(p, t):
    return -torch.log(torch.gather(p, 1, t.view(-1, 1))).mean()


def train_step(x, y, decoder, opt):
    opt.zero_grad()
    nll(decoder(x), y).backward()
    opt.step()


dec = Decoder()
opt = torch.optim.Adam(dec.parameters())
for x, y in loader:
    train_step(x, y, dec, opt)
""",
            line=17,
            message="`forward` of `Decoder`",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        #: losses whose probabilities this module does not show to be a softmax: asked of the program
        #: model after the walk (a model's output, a helper's return, an argument of the callers)
        self._undecided: List[LossOfLog] = []

    def visit_Call(self, node: cst.Call) -> None:
        name = callee_name(node)
        if name == "sum":
            ce = match_cross_entropy(self.ctx, node)
            if ce is not None:
                self.report(ce.node, self.quoting(ce.node, self.MESSAGE), fix=self._fix(ce), covers=[ce.log.node])
            else:
                self._later(cross_entropy_of_log(self.ctx, node))
        elif name == "log":
            self._indexed(node)
        elif name == "gather":
            self._later(per_target_log(self.ctx, node))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._indexed(node)

    def _later(self, loss: Optional[LossOfLog]) -> None:
        if loss is not None and all(loss.node is not other.node for other in self._undecided):
            self._undecided.append(loss)

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: the probabilities are the output of a model whose `forward` ends in
        softmax (built here, a default, an annotated parameter, `self.<attr>`; its class in this file or
        a project module), what a project function returns, or an argument of the calls of this
        function in this file (the message names the call)."""
        for loss in self._undecided:
            found = self._softmax_fact(loss)
            if found is None:
                continue
            fact, call = found
            where = f"; passed in the call at {At(self.ctx, call)}" if call is not None else ""
            if loss.per_target:
                message = (
                    f"Negative log-likelihood taken from the log of a softmax: {fact.message}{where}; it is `inf` "
                    "when a probability underflows to 0, return logits and use `F.cross_entropy(x, y)`"
                )
            else:
                message = (
                    f"Hand-written softmax cross-entropy: {fact.message}{where}; it is `inf` when a probability "
                    "underflows to 0, return logits and compute the loss from `log_softmax`"
                )
            self.report(loss.node, self.quoting(loss.node, message), covers=[loss.log.node])

    def _softmax_fact(self, loss: LossOfLog) -> Optional[tuple]:
        """(the evidence, the call of this function it holds for, or None when it holds in the function
        itself)."""
        fact = value_fact(open_frame(self.ctx, loss.node), loss.probs)
        if fact is not None:
            return (fact, None) if _softmax(fact) else None
        for frame in caller_frames(self.ctx, loss.node, levels=2):
            fact = value_fact(frame, loss.probs)
            if fact is not None and _softmax(fact):
                return fact, frame.call
        return None

    # -- soft labels -----------------------------------------------------------------------------
    def _fix(self, ce: CrossEntropy) -> Optional[Fix]:
        ctx = self.ctx
        if not cross_entropy_dim_ok(ce, ctx):
            return None
        sm = ce.softmax
        assert ce.log.operand is not None
        sm_hopped = followed(self.ctx, ce.log.operand, 3) is not ce.log.operand
        source = ce.log_source if ce.log_source is not None else (sm.node if sm_hopped else None)
        removed = removable_assignment(ctx, ce.log_source, [ce.node]) if ce.log_source is not None else None
        assign = ctx.parent(ce.log_source) if removed is not None and ce.log_source is not None else None
        if not movable(ctx, sm.operand, source, ce.node, assign if isinstance(assign, cst.Assign) else None):
            return None
        if use_runtime(self.options[RUNTIME_FIXES], ctx.path, ctx.project):
            # unsafe: the runtime refuses labels that the hand-written product would have broadcast
            fix = self.make_fix("Replace with `softmax_cross_entropy`", unsafe=True)
            name = import_name(ctx, fix, "torchlint.runtime", "softmax_cross_entropy", near=ce.node)
            if name is None:
                return None
            args = [f"labels={ctx.code(ce.labels)}", f"logits={ctx.code(sm.operand)}"]
            args.append("dim=None" if sm.dim is ALL else f"dim={sm.dim}")
            if ce.reduction == "none":
                args.append('reduction="none"')
            code = f"{name}({', '.join(args)})"
        else:
            fix = self.make_fix()
            torch = import_module(ctx, fix, "torch", near=ce.node)
            if torch is None:
                return None
            code = _log_softmax_loss(ctx, torch, ce)
            if code is None:
                return None
        call = ctx.parse_expression(code)
        if ce.negated_outside:
            outer = ce.node
            assert isinstance(outer, cst.UnaryOperation)
            inner = outer.expression
            new = call if inner is ce.inner else inner.deep_replace(ce.inner, call)
            fix.replace(outer, new)  # type: ignore[arg-type]
        else:
            fix.replace(ce.inner, call)
        if removed is not None:
            fix.remove(removed)
        return fix

    # -- class indices ---------------------------------------------------------------------------
    def _indexed(self, node: cst.BaseExpression) -> None:
        nll = match_indexed_nll(self.ctx, node)
        if nll is None:
            self._later(per_target_log(self.ctx, node))
            return
        message = INDEX_MESSAGE.format(found=self.spelling(nll.log.node), x=self.spelling(nll.softmax.operand, 30),
                                       y=self.spelling(nll.labels, 30))
        self.report(nll.node, self.quoting(nll.node, message), fix=self._index_fix(nll), covers=[nll.log.node])

    def _class_dim(self, sm) -> object:
        """The dim the softmax normalises: spelled, or, not spelled, the one torch picks for an input the
        shape analysis knows to be 2-D (dimension 1)."""
        if sm.dim is IMPLICIT:
            shape = shape_of(self.ctx, sm.operand)
            if shape is not None and shape.rank == 2:
                return "1"
        return sm.dim

    def _index_fix(self, nll: IndexedNll) -> Optional[Fix]:
        ctx = self.ctx
        sm = nll.softmax
        dim = self._class_dim(sm)
        if not (same_dim(dim, "1") or same_dim(dim, "-1")):
            return self._log_softmax_fix(nll)  # not the class dimension `F.cross_entropy` reads
        log_source = nll.log.node if isinstance(nll.inner, cst.Subscript) and nll.log.node is not getattr(
            nll.inner, "value", None
        ) else None
        sm_source = sm.node if sm.node is not nll.log.operand else None
        source = log_source or sm_source
        removed = removable_assignment(ctx, log_source, [nll.node]) if log_source is not None else None
        assign = ctx.parent(log_source) if removed is not None and log_source is not None else None
        if not movable(ctx, sm.operand, source, nll.node, assign if isinstance(assign, cst.Assign) else None):
            return None
        if not movable(ctx, nll.labels, None, nll.node):
            return None
        safe = self._covers_batch(nll.rows, [nll.labels, sm.operand])
        fix = self.make_fix("Replace with `F.cross_entropy`", unsafe=not safe)
        ref = import_module(ctx, fix, "torch.nn.functional", near=nll.node)
        if ref is None:
            return None
        call = ctx.parse_expression(
            f'{ref}.cross_entropy({ctx.code(sm.operand)}, {ctx.code(nll.labels)}, reduction="none")'
        )
        outer = nll.node
        assert isinstance(outer, cst.UnaryOperation)
        inner = outer.expression
        fix.replace(outer, call if inner is nll.inner else inner.deep_replace(nll.inner, call))  # type: ignore
        if removed is not None:
            fix.remove(removed)
        return fix

    def _log_softmax_fix(self, nll: IndexedNll) -> Optional[Fix]:
        """``log(softmax(x, dim=d))`` -> ``log_softmax(x, dim=d)`` in place, the indexing and the reduction
        around it kept: the same values wherever the original was finite, for any ``dim``."""
        ctx = self.ctx
        sm = nll.softmax
        if sm.kind != "torch" or sm.use is None or nll.log.operand is not sm.node or nll.log.kind == "layer":
            return None  # the softmax is computed elsewhere (its value may be used for more)
        if sm.dim in (ALL, IMPLICIT, UNKNOWN) or not isinstance(sm.dim, str):
            return None
        if len(sm.use.node.args) != (1 if sm.use.kind == "method" else 2) or any(
            a.keyword is not None and canonical_keyword(a.keyword.value) not in ("dim", "input") for a in sm.use.node.args
        ):
            return None  # `dtype=`, `_stacklevel`: arguments the rewrite would have to carry
        code = torch_call_code(ctx, sm.use, "log_softmax", sm.operand, [f"dim={sm.dim}"])
        return self.make_fix("Replace with `log_softmax`").replace(nll.log.node, ctx.parse_expression(code))

    def _covers_batch(self, rows: cst.BaseExpression, tensors: List[cst.BaseExpression]) -> bool:
        """``range(len(y))``, ``torch.arange(y.size(0))``, ``arange(x.shape[0])``."""
        ctx = self.ctx
        if not isinstance(rows, cst.Call) or not rows.args:
            return False
        n = followed(self.ctx, rows.args[0].value, 1)
        base: Optional[cst.BaseExpression] = None
        if isinstance(n, cst.Call) and callee_name(n) == "len" and n.args:
            base = n.args[0].value
        elif isinstance(n, cst.Call) and callee_name(n) == "size" and isinstance(n.func, cst.Attribute):
            if n.args and n.args[0].value is not None and ctx.code(n.args[0].value) == "0":
                base = n.func.value
        elif isinstance(n, cst.Subscript) and isinstance(n.value, cst.Attribute) and n.value.attr.value == "shape":
            if len(n.slice) == 1 and ctx.code(n.slice[0]).strip() == "0":
                base = n.value.value
        if base is None or dotted_name(base) is None:
            return False
        return any(same_code(ctx, base, t) for t in tensors)


def _softmax(fact: Evidence) -> bool:
    return fact.kind == SOFTMAX and bool(fact.why)


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)


def _operand(ctx, node: cst.BaseExpression) -> str:
    code = ctx.code(node).strip()
    return code if isinstance(node, _ATOMS) or node.lpar else f"({code})"


def _log_softmax_loss(ctx, torch: str, ce: CrossEntropy) -> Optional[str]:
    """``-(labels * torch.log_softmax(logits, dim=d)).sum()`` (``.sum(dim=d)`` for a per-position loss):
    the same expression with the log-probabilities computed stably; None when it cannot be spelled."""
    sm = ce.softmax
    logits = ctx.code(sm.operand).strip()
    if sm.dim is ALL:
        if dotted_name(sm.operand) is None:
            return None  # the logits would be written twice
        log_p = f"{torch}.log_softmax({logits}.flatten(), dim=0).view_as({logits})"
    else:
        log_p = f"{torch}.log_softmax({logits}, dim={sm.dim})"
    total = ".sum()" if ce.reduction != "none" else f".sum(dim={sm.dim})"
    return f"-({_operand(ctx, ce.labels)} * {log_p}){total}"
