from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.numerics.patterns import (
    BinaryCrossEntropy,
    followed,
    match_binary_cross_entropy,
    module_ref,
    movable,
    uses_elsewhere,
)
from torchlint.analysis.ops import OpUse, BCE_FUNCS, BCE_LAYERS, SIGMOID_LAYERS, is_bce_call, sequential_ending_in, sigmoid_use
from torchlint.analysis.program import SIGMOID, call_findings, loss_inputs
from torchlint.rule import Fix, Invalid, LintRule, Valid

HANDWRITTEN_MESSAGE = (
    "Hand-written binary cross-entropy of a sigmoid is `inf`/`nan` when the sigmoid saturates; "
    "use `F.binary_cross_entropy_with_logits(x, y)`"
)


class SigmoidBinaryCrossEntropy(LintRule):
    """
    ## What it does
    Finds a sigmoid output passed to `F.binary_cross_entropy` or to an `nn.BCELoss` instance (a direct
    call, a variable, an `nn.Sigmoid` layer, or an `nn.Sequential` model ending in `nn.Sigmoid`), and
    binary cross-entropy written by hand on a sigmoid:
    `-(y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))`.

    Models are followed through their classes (a `forward` that ends in `torch.sigmoid`, an `nn.Sigmoid`
    attribute or an `nn.Sequential` ending in one, per element of a returned tuple; same file or a
    project module the file imports), and sigmoid output passed to a helper that gives it to binary
    cross-entropy is reported at the call. No fix for those: the model's other users may want
    probabilities.

    Values are followed through calls: a discriminator passed to a helper that builds `nn.BCELoss()`
    (or receives it, as an argument, a default or `self.<attr>` set in `__init__`) and applies it to the
    discriminator's output is reported at the argument, per call (a helper also called with a logits
    model is reported only where the sigmoid model is passed); a parameter annotated with a model class;
    a base class's method calling `self` where a subclass's `forward` ends in a sigmoid. The message says
    which `forward` ends in a sigmoid (file:line) and through which helper.

    ## Why is this bad?
    `sigmoid(x)` rounds to exactly 1 for `x` above about 17 in float32 (and to 0 below about -104), so
    `log(1 - p)` is `-inf`: a hand-written loss becomes `inf` and its gradient `nan`. `binary_cross_entropy`
    hides this by clamping the log at -100, which leaves a constant loss with a zero gradient: a
    confidently wrong prediction stops learning. It also refuses to run under `torch.autocast`. The
    `_with_logits` versions compute `max(x, 0) - x * y + log(1 + exp(-|x|))` from the logits, finite
    for every input. The cookbooks give the same advice for the multi-class case (`nn.CrossEntropyLoss`
    takes logits, no softmax before it: PyTorch Cookbook, Zhang Hao, 2019, the cookbook's 2024 revision), and the Effective
    PyTorch notes explain why fusing the normalisation into the loss is the stable form
    (Effective PyTorch, section 7).

    ## Example
    ```python
    loss = F.binary_cross_entropy(torch.sigmoid(logits), targets)
    ```

    ## Use instead
    ```python
    loss = F.binary_cross_entropy_with_logits(logits, targets)
    ```

    ## Fix safety
    For `F.binary_cross_entropy` the fix renames the function and passes the logits; `weight` and
    `reduction` mean the same in both, so it is safe. When the sigmoid was stored in a variable, the
    fix passes its argument instead (if that argument is plain names, not reassigned), or else removes
    the sigmoid from the assignment when the loss is the variable's only reader; otherwise no fix. For an `nn.BCELoss` built in the same function and
    used only there, the fix builds `nn.BCEWithLogitsLoss` with the same arguments instead (safe); a
    criterion kept on `self` or used elsewhere gets no fix. The hand-written form becomes
    `F.binary_cross_entropy_with_logits(x, y, reduction="none")` with any `.mean()` outside kept; this
    fix is unsafe because the fused function requires `y` to be a floating tensor of the same shape as
    `x`, where the hand-written expression broadcast.

    ## Options
    None.

    ## References
    - [torch.nn.functional.binary_cross_entropy_with_logits](https://pytorch.org/docs/stable/generated/torch.nn.functional.binary_cross_entropy_with_logits.html)
    - [torch.nn.BCEWithLogitsLoss](https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL207"
    NAME = "sigmoid-binary-cross-entropy"
    MESSAGE = (
        "Sigmoid output passed to binary cross-entropy saturates (zero gradient, no autocast); "
        "pass the logits to `binary_cross_entropy_with_logits` / `BCEWithLogitsLoss`"
    )
    FIX_TITLE = "Use the `_with_logits` loss on the logits"
    TRIGGERS = ("binary_cross_entropy", "BCELoss", "sigmoid", "expit")
    IMPORT_TRIGGERS = ("binary_cross_entropy", "BCELoss")

    VALID = [
        """
import torch.nn.functional as F

def loss(logits, y):
    return F.binary_cross_entropy_with_logits(logits, y)
""",
        # probabilities from elsewhere: nothing to fuse
        """
import torch.nn.functional as F

def loss(probs, y):
    return F.binary_cross_entropy(probs, y)
""",
        """
import torch
import torch.nn.functional as F

def loss(logits, y):
    p = torch.sigmoid(logits)
    return F.binary_cross_entropy(p.clamp(1e-6, 1 - 1e-6), y)
""",
        # hand-written with eps: finite
        """
import torch

def bce(x, y, eps=1e-7):
    p = torch.sigmoid(x)
    return -(y * torch.log(p + eps) + (1 - y) * torch.log(1 - p + eps)).mean()
""",
        # hand-written on probabilities that are not a sigmoid in view
        """
import torch

def bce(p, y):
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
""",
        """
import numpy as np

def bce(x, y):
    p = 1 / (1 + np.exp(-x))
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
""",
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 1)

    def forward(self, x):
        h = self.fc(x)
        return torch.sigmoid(h), h

def bce_loss(pred, target):
    return F.binary_cross_entropy_with_logits(pred, target)

scorer = Scorer()

def step(x, y):
    p, logit = scorer(x)
    confident = (p > 0.9).float().mean()
    return bce_loss(logit, y) + F.binary_cross_entropy_with_logits(scorer(x)[1], y), confident
"""
        ),
        # a helper applying BCE to the output of the model it is passed: called with a logits model
        Valid(
            """
import torch
import torch.nn as nn

class Judge(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 1)

    def forward(self, x):
        return self.fc(x)

def judge_loss(judge, real, fake):
    crit = nn.BCEWithLogitsLoss()
    a, b = judge(real), judge(fake)
    return crit(a, torch.ones_like(a)) + crit(b, torch.zeros_like(b))

def train(batches, fake):
    j = Judge()
    for real in batches:
        judge_loss(j, real, fake).backward()
"""
        ),
        # the sigmoid output only thresholded for a metric; the loss takes the logits
        Valid(
            """
import torch.nn as nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 1)
        self.act = nn.Sigmoid()

    def forward(self, x):
        return self.act(self.fc(x))

def score(model, x, y, crit=nn.BCEWithLogitsLoss()):
    hits = ((model(x) > 0.5).float() == y).float().mean()
    return crit(model.fc(x), y), hits

def main(x, y):
    return score(Head(), x, y)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn.functional as F

def loss(logits, y):
    return F.binary_cross_entropy(torch.sigmoid(logits), y, reduction="sum")
""",
            fixed="""
import torch
import torch.nn.functional as F

def loss(logits, y):
    return F.binary_cross_entropy_with_logits(logits, y, reduction="sum")
""",
            line=6,
            col=12,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

def step(model, x, y):
    criterion = nn.BCELoss(reduction="mean")
    probs = model(x).sigmoid()
    return criterion(probs, y)
""",
            fixed="""
import torch
import torch.nn as nn

def step(model, x, y):
    criterion = nn.BCEWithLogitsLoss(reduction="mean")
    probs = model(x)
    return criterion(probs, y)
""",
        ),
        # the criterion lives on self: reported without a fix
        Invalid(
            """
import torch
import torch.nn as nn

class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.BCELoss()

    def forward(self, x, y):
        return self.loss(torch.sigmoid(x), y)
""",
        ),
        Invalid(
            """
import torch

def bce(x, y):
    p = torch.sigmoid(x)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
""",
            fixed="""
import torch

def bce(x, y):
    p = torch.sigmoid(x)
    return torch.nn.functional.binary_cross_entropy_with_logits(x, y, reduction="none").mean()
""",
            unsafe=True,
            message="Hand-written",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())

def step(x, y):
    return nn.functional.binary_cross_entropy(model(x), y)
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(64, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)

D = Discriminator()
criterion = nn.BCELoss()

def train(real, label):
    output = D(real)
    return criterion(output, label)
""",
            message="`forward` ends in a sigmoid",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 1)

    def forward(self, x):
        h = self.fc(x)
        return torch.sigmoid(h), h

def bce_loss(pred, target):
    return F.binary_cross_entropy(pred, target)

scorer = Scorer()

def step(x, y):
    p, logit = scorer(x)
    return bce_loss(p, y)
""",
            message="passed to `bce_loss`",
        ),
        # a discriminator ending in `nn.Sigmoid` passed to a loss helper that builds `nn.BCELoss()`
        Invalid(
            """
import torch
import torch.nn as nn

class Judge(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.body(x)

def judge_loss(judge, real, fake):
    crit = nn.BCELoss()
    on_real = judge(real)
    on_fake = judge(fake)
    return crit(on_real, torch.ones_like(on_real)) + crit(on_fake, torch.zeros_like(on_fake))

def train(batches, fake):
    j = Judge()
    logits_judge = nn.Linear(5, 1)
    for real in batches:
        judge_loss(j, real, fake).backward()
        judge_loss(logits_judge, real, fake)
""",
            line=23,
            message="`forward` of `Judge` (case.py:10) ends in a sigmoid; it reaches binary cross-entropy",
        ),
        # the criterion set on `self` in `__init__`, the model an annotated parameter of a method
        Invalid(
            """
import torch
import torch.nn as nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))

class Fitter:
    def __init__(self):
        self.loss_fn = nn.BCELoss()

    def loss(self, net: Tagger, x, y):
        return self.loss_fn(net(x), y)
""",
            line=18,
            message="`net` is annotated `Tagger`",
        ),
        # a functional BCE in a base-class method, a subclass's `forward` ending in a sigmoid
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Detector(nn.Module):
    def loss(self, x, y):
        return F.binary_cross_entropy(self(x), y)

class Prob(Detector):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 1)

    def forward(self, x):
        return self.fc(x).sigmoid()
""",
            line=8,
            message="when `self` is a `Prob`",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._seen: set = set()

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not is_bce_call(ctx, node):
            return
        first = arg(node, 0, "input")
        if first is None:
            return
        self._seen.add(first.value)  # decided here; the program model only adds what this cannot see
        value = followed(self.ctx, first.value, 2)
        sig = sigmoid_use(ctx, value)
        if sig is not None and sig.operand is not None:
            hopped = value is not first.value
            if movable(ctx, sig.operand, sig.node if hopped else None, node):
                fix = self._fix(node, first, sig.operand)
            else:
                fix = self._fix(node, first, first.value, drop=sig)
            self.report(node, fix=fix)
            return
        if isinstance(value, cst.Call) and sequential_ending_in(ctx, value.func, SIGMOID_LAYERS) is not None:
            self.report(
                node,
                "Binary cross-entropy input comes from an `nn.Sequential` that ends in `nn.Sigmoid`; drop the "
                "sigmoid layer and use `BCEWithLogitsLoss`",
            )
            return
        self._seen.discard(first.value)

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: a model whose `forward` ends in a sigmoid (this file or a project
        module), and a loss helper that receives sigmoid output."""
        for found in loss_inputs(self.ctx):
            if found.loss != "bce" or found.kind != SIGMOID or found.node in self._seen:
                continue
            self._seen.add(found.node)
            if found.helper is not None:
                message = (
                    f"Sigmoid output passed to `{found.helper}`, which gives it to binary cross-entropy; it "
                    "saturates (zero gradient, no autocast): pass the logits to `binary_cross_entropy_with_logits`"
                )
            else:
                message = (
                    "Binary cross-entropy input is the output of a model whose `forward` ends in a sigmoid; "
                    "return the logits and use `BCEWithLogitsLoss`"
                )
            self.report(found.node, message)
        for finding in call_findings(self.ctx):
            if finding.loss != "bce" or finding.node in self._seen:
                continue
            self._seen.add(finding.node)
            self.report(
                finding.node,
                f"Sigmoid before binary cross-entropy: {finding.message}; it saturates (zero gradient, no autocast): "
                "pass the logits to `binary_cross_entropy_with_logits` / `BCEWithLogitsLoss`",
            )

    def _fix(self, node: cst.Call, first: cst.Arg, logits: cst.BaseExpression,
             drop: Optional[OpUse] = None) -> Optional[Fix]:
        """Pass ``logits`` instead of the sigmoid; with ``drop``, the sigmoid sits in an assignment whose
        name only this call reads: the sigmoid is removed from that assignment instead."""
        ctx = self.ctx
        fix = self.make_fix()
        if drop is not None:
            assign = ctx.parent(drop.node)
            if (
                drop.operand is None
                or drop.kind == "layer"
                or not isinstance(assign, cst.Assign)
                or len(assign.targets) != 1
                or uses_elsewhere(ctx, assign, [node])
            ):
                return None
            fix.replace(drop.node, drop.operand)
        new_args = [a.with_changes(value=logits) if a is first else a for a in node.args]
        func = node.func
        if ctx.names.matches(func, BCE_FUNCS):
            if isinstance(func, cst.Attribute):
                new_func: cst.BaseExpression = func.with_changes(attr=cst.Name("binary_cross_entropy_with_logits"))
            else:
                ref = module_ref(ctx, "torch.nn.functional")
                if ref is None:
                    return None
                new_func = ctx.parse_expression(f"{ref}.binary_cross_entropy_with_logits")
            return fix.replace(node, node.with_changes(func=new_func, args=new_args))
        # an nn.BCELoss instance
        if isinstance(func, cst.Call):
            ctor = self._with_logits_ctor(func)
            if ctor is None:
                return None
            return fix.replace(node, node.with_changes(func=ctor, args=new_args))
        if not isinstance(func, cst.Name):
            return None
        values = ctx.names.values_before(func)
        if len(values) != 1 or not isinstance(values[0], cst.Call):
            return None
        assign = ctx.parent(values[0])
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        if ctx.enclosing(assign, (cst.FunctionDef, cst.Lambda)) is not ctx.names.function_scope_node():
            return None
        if uses_elsewhere(ctx, assign, [node]):
            return None
        ctor = self._with_logits_ctor(values[0])
        if ctor is None:
            return None
        return fix.replace(values[0], ctor).replace(node, node.with_changes(args=new_args))

    def _with_logits_ctor(self, ctor: cst.Call) -> Optional[cst.Call]:
        ctx = self.ctx
        if not ctx.names.matches(ctor.func, BCE_LAYERS):
            return None
        if isinstance(ctor.func, cst.Attribute):
            return ctor.with_changes(func=ctor.func.with_changes(attr=cst.Name("BCEWithLogitsLoss")))
        ref = module_ref(ctx, "torch.nn")
        if ref is None:
            return None
        return ctor.with_changes(func=ctx.parse_expression(f"{ref}.BCEWithLogitsLoss"))

    # -- hand-written ----------------------------------------------------------------------------
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        bce = match_binary_cross_entropy(self.ctx, node)
        if bce is None:
            return
        self.report(bce.node, HANDWRITTEN_MESSAGE, fix=self._handwritten_fix(bce), covers=bce.logs)

    def _handwritten_fix(self, bce: BinaryCrossEntropy) -> Optional[Fix]:
        ctx = self.ctx
        for source in bce.sigmoid_sources:
            if not movable(ctx, bce.logits, source, bce.node):
                return None
        if not movable(ctx, bce.labels, None, bce.node):
            return None
        ref = module_ref(ctx, "torch.nn.functional")
        if ref is None:
            return None
        call = ctx.parse_expression(
            f'{ref}.binary_cross_entropy_with_logits({ctx.code(bce.logits)}, {ctx.code(bce.labels)}, reduction="none")'
        )
        fix = self.make_fix("Replace with `binary_cross_entropy_with_logits`", unsafe=True)
        if bce.negated_outside:
            outer = bce.node
            assert isinstance(outer, cst.UnaryOperation)
            inner = outer.expression
            fix.replace(outer, call if inner is bce.inner else inner.deep_replace(bce.inner, call))  # type: ignore
        else:
            fix.replace(bce.node, call)
        return fix
