from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.numerics.patterns import (
    written_within_range,
    SEQUENTIAL_SIGMOID,
    BinaryCrossEntropy,
    followed,
    from_sequential_sigmoid,
    is_one,
    log_of,
    match_binary_cross_entropy,
    module_ref,
    movable,
    same_code,
    uses_elsewhere,
)
from torchlint.analysis.ops import OpUse, BCE_FUNCS, BCE_LAYERS, is_bce_call, sigmoid_use
from torchlint.families.numerics.losses import call_findings, loss_inputs
from torchlint.analysis.values import caller_value_fact
from torchlint.analysis.roles import SIGMOID, handwritten_sigmoid
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
    `-(y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x)))`. The hand-written loss is read in more
    spellings too: each term a product or a matrix product of the labels (reshaped or negated) and a log
    (`torch.mm(-y.view(1, -1), torch.log(p)) - torch.mm((1 - y).view(1, -1), torch.log(1 - p))`, `@`,
    `torch.matmul`, `torch.dot`), the terms kept in local names, and `p` a sigmoid written by hand
    (`1 / (1 + torch.exp(-z))`) or a value that reaches the loss through a helper's parameter, when every
    call of the helper in the file passes a sigmoid output (through the methods of the class that return
    it: `self._cost(y, self.forward(x))`). These get no fix.

    Models are followed through their classes (a `forward` that ends in `torch.sigmoid`, an `nn.Sigmoid`
    attribute or an `nn.Sequential` ending in one, per element of a returned tuple; same file or a
    project module the file imports), and sigmoid output passed to a helper that gives it to binary
    cross-entropy is reported at the call. No fix for those: the model's other users may want
    probabilities.

    Values are followed through calls: a discriminator passed to a helper that builds `nn.BCELoss()`
    (or receives it, as an argument, a default or `self.<attr>` set in `__init__`) and applies it to the
    discriminator's output is reported at the argument, per call (a helper also called with a logits
    model is reported only where the sigmoid model is passed); a parameter annotated with a model class;
    a base class's method calling `self` where a subclass's `forward` ends in a sigmoid; a model built by a
    project factory every `return` of which builds a model ending in a sigmoid (`get_model(name)` choosing
    among such classes; one that may return logits keeps the rule silent). The message says
    which `forward` ends in a sigmoid (file:line) and through which helper. The sigmoid of numbers the code
    writes out (`torch.tensor([0.8])`, a worked example next to `BCEWithLogitsLoss`) below 15 in magnitude
    is not reported: it rounds to neither 0 nor 1.

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
    TRIGGERS = ("binary_cross_entropy", "BCELoss", "sigmoid", "expit", ".exp(")
    IMPORT_TRIGGERS = ("binary_cross_entropy", "BCELoss", "sigmoid", "Sigmoid")

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
        # the same loss on probabilities that come from a dataset, not from a sigmoid
        Valid(
            """
import torch


def cost(y, p):
    hit = torch.mm(-y.view(1, -1), torch.log(p))
    miss = torch.mm((1 - y).view(1, -1), torch.log(1 - p))
    return hit - miss


def score(batch):
    return cost(batch["label"], batch["confidence"])
"""
        ),
        # a worked example: a logit written out, BCE on its sigmoid printed next to BCE with logits
        """
import torch
import torch.nn as nn

z = torch.tensor([0.8])
y = torch.tensor([1.0])
print(nn.BCELoss()(torch.sigmoid(z), y), nn.BCEWithLogitsLoss()(z, y))
""",
        # the same `Sequential` grown with the sigmoid, then a layer after it: its output is no probability
        """
import torch
import torch.nn as nn

model = nn.Sequential()
model.add_module("fc1", nn.Linear(2, 4))
model.add_module("gate", nn.Sigmoid())
model.add_module("fc2", nn.Linear(4, 1))
loss_fn = nn.BCEWithLogitsLoss()
x, y = torch.randn(8, 2), torch.randint(0, 2, (8,)).float()
print(loss_fn(model(x)[:, 0], y).item(), nn.BCELoss()(torch.sigmoid(model(x)[:, 0]).clamp(0, 1), y).item())
""",
        # the name held a `Sequential` ending in a sigmoid, then a module whose output is clamped, not squashed
        """
import torch
import torch.nn as nn


class Clipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        return torch.clamp(self.fc(x), 0.0, 1.0)


model = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())
model = Clipped()
x, y = torch.randn(8, 2), torch.randint(0, 2, (8,)).float()
print(nn.BCELoss()(model(x)[:, 0], y).item())
""",
        # a factory whose models disagree: one ends in a sigmoid, the other returns logits
        Valid(
            """
import torch
import torch.nn as nn


class LR(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x).squeeze(1))


class MLP(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


def get_model(name, n):
    if name == "lr":
        return LR(n)
    elif name == "mlp":
        return MLP(n)
    else:
        raise ValueError("unknown model: " + name)


def main(name, loader):
    model = get_model(name, 4)
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        y_hat = model(x)
        loss = criterion(y_hat, y.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
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
        # a from-scratch logistic regression: the sigmoid and the loss written by hand in methods
        Invalid(
            """
import torch


class Scratch:
    def __init__(self, n):
        self.w = torch.zeros(n, 1)

    def probs(self, x):
        return self._squash(torch.mm(x, self.w))

    def _squash(self, z):
        return 1.0 / (1.0 + torch.exp(-z))

    def cost(self, y, p):
        hit = torch.mm(-y.view(1, -1), torch.log(p))
        miss = torch.mm((1 - y).view(1, -1), torch.log(1 - p))
        return hit - miss

    def report(self, x, y):
        print(self.cost(y, self.probs(x)))
""",
            line=18,
        ),
        # the terms multiplied elementwise, the sigmoid by hand in the caller
        Invalid(
            """
import torch


def bce(y, q):
    return -(y * torch.log(q) + (1 - y) * torch.log(1 - q)).mean()


def loss(x, y, w):
    return bce(y, 1 / (1 + torch.exp(-(x @ w))))
""",
            line=6,
        ),
        # the model's single column taken out before the loss: still its sigmoid's probabilities
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid())
loss_fn = nn.BCELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 2), torch.randint(0, 2, (8,)).float()
for epoch in range(10):
    pred = model(x)[:, 0]
    loss = loss_fn(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=11,
        ),
        # a `Sequential` grown with `add_module`, the sigmoid added last
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential()
model.add_module("fc1", nn.Linear(2, 4))
model.add_module("relu", nn.ReLU())
model.add_module("fc2", nn.Linear(4, 1))
model.add_module("sigmoid", nn.Sigmoid())
loss_fn = nn.BCELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 2), torch.randint(0, 2, (8,)).float()
for epoch in range(10):
    pred = model(x)[:, 0]
    loss = loss_fn(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=15,
        ),
        # a notebook's second model under the same name: the one the training calls ends in a sigmoid
        Invalid(
            """
import torch
import torch.nn as nn


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(2, 4)
        self.a1 = nn.ReLU()
        self.l2 = nn.Linear(4, 1)
        self.a2 = nn.Sigmoid()

    def forward(self, x):
        return self.a2(self.l2(self.a1(self.l1(x))))


model = nn.Sequential(nn.Linear(2, 1))
model = Noisy()
loss_fn = nn.BCELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 2), torch.randint(0, 2, (8,)).float()
for epoch in range(10):
    loss = loss_fn(model(x)[:, 0], y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=24,
        ),
        # the discriminator is wrapped in `DataParallel` on some machines only: it still returns what `D` does
        Invalid(
            """
import torch
import torch.nn as nn


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)


net_d = D()
if torch.cuda.device_count() > 1:
    net_d = nn.DataParallel(net_d)
criterion = nn.BCELoss()
opt = torch.optim.Adam(net_d.parameters())
for real in loader:
    opt.zero_grad()
    criterion(net_d(real).view(-1), torch.ones(len(real))).backward()
    opt.step()
""",
            message="ends in a sigmoid",
        ),
        # the model comes from a factory whose every `return` builds a class whose `forward` ends in a sigmoid
        Invalid(
            """
import torch
import torch.nn as nn


class LR(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x).squeeze(1))


class MLP(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x).squeeze(1))


def get_model(name, n):
    if name == "lr":
        return LR(n)
    elif name == "mlp":
        return MLP(n)
    else:
        raise ValueError("unknown model: " + name)


def main(name, loader):
    model = get_model(name, 4)
    criterion = nn.BCELoss()
    optimizer = torch.optim.Adam(model.parameters())
    for x, y in loader:
        y_hat = model(x)
        loss = criterion(y_hat, y.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=39,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._paired: List[Tuple[cst.BinaryOperation, Tuple[cst.BaseExpression, Tuple[cst.Call, cst.Call]]]] = []
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
            if written_within_range(ctx, sig.operand, "sigmoid"):
                return  # numbers written out whose sigmoid is far from 0 and 1 (a worked example's logits)
            hopped = value is not first.value
            if movable(ctx, sig.operand, sig.node if hopped else None, node):
                fix = self._fix(node, first, sig.operand)
            else:
                fix = self._fix(node, first, first.value, drop=sig)
            self.report(node, self.quoting(node, self.MESSAGE), fix=fix)
            return
        if from_sequential_sigmoid(ctx, value):
            self.report(node, f"Binary cross-entropy input {SEQUENTIAL_SIGMOID} and use `BCEWithLogitsLoss`")
            return
        self._seen.discard(first.value)

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: a model whose `forward` ends in a sigmoid (this file or a project
        module), and a loss helper that receives sigmoid output."""
        for binop, (prob, logs) in self._paired:
            if any(ctx_inside(self.ctx, binop, other) for other, _ in self._paired if other is not binop):
                continue  # the outer sum of a longer expression is the one reported
            why = _sigmoid_evidence(self.ctx, prob)
            if why is not None:
                self.report(
                    binop,
                    self.quoting(binop, "Hand-written binary cross-entropy of a sigmoid is `inf`/`nan` when the sigmoid "
                                        f"saturates ({why}); use `F.binary_cross_entropy_with_logits(x, y)` on the logits"),
                    covers=logs,
                )
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
            paired = _label_log_pair(self.ctx, node)
            if paired is not None:
                self._paired.append((node, paired))
            return
        self.report(bce.node, self.quoting(bce.node, HANDWRITTEN_MESSAGE), fix=self._handwritten_fix(bce), covers=bce.logs)

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


# -- the spellings `match_binary_cross_entropy` does not read: matrix products, hand-written sigmoids ------
_PRODUCTS = frozenset({"torch.mm", "torch.matmul", "torch.dot", "torch.bmm", "torch.inner"})
_RESHAPES = frozenset({"view", "reshape", "t", "unsqueeze", "squeeze", "flatten", "float", "double", "T"})


def ctx_inside(ctx, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return node is not container and ctx.is_inside(node, container)


def _negated(expr: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    neg = False
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr, neg = expr.expression, not neg
    return expr, neg


def _labels(expr: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
    """``-y.view(1, -1)`` -> (``y``, negated): the label tensor under its reshapes and sign."""
    expr, neg = _negated(expr)
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _RESHAPES:
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "T":
            expr = expr.value
        else:
            break
        expr, inner = _negated(expr)
        neg ^= inner
    return expr, neg


def _factors(ctx, expr: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The two factors of ``a * b``, ``a @ b``, ``torch.mm(a, b)`` (``matmul``, ``dot``), ``a.mm(b)``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.MatrixMultiply)):
        return expr.left, expr.right
    if isinstance(expr, cst.Call) and len(expr.args) == 2 and not any(a.keyword or a.star for a in expr.args):
        if ctx.names.qualified_names_at(expr.func) & _PRODUCTS:
            return expr.args[0].value, expr.args[1].value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in (
        "mm", "matmul", "dot"
    ) and len(expr.args) == 1 and not expr.args[0].keyword and not ctx.names.qualified_names_at(expr.func.value):
        return expr.func.value, expr.args[0].value
    return None


def _log_term(ctx, expr: cst.BaseExpression):
    """``y * log(p)`` or ``torch.mm(-y.view(1, -1), torch.log(p))`` (through a local name): (labels,
    the log call, its operand, negated); else None."""
    expr, neg = _negated(followed(ctx, expr, 1))
    factors = _factors(ctx, expr)
    if factors is None:
        return None
    for i in (0, 1):
        side, side_neg = _negated(factors[i])
        found = log_of(ctx, side)
        if found is None or found[0].operand is None or not isinstance(found[0].node, cst.Call):
            continue
        labels, label_neg = _labels(factors[1 - i])
        return labels, found[0].node, found[0].operand, neg ^ side_neg ^ label_neg
    return None


def _one_minus(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    expr = followed(ctx, expr, 1)
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _RESHAPES:
        expr = expr.func.value
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract) and is_one(expr.left):
        return expr.right
    return None


def _label_log_pair(ctx, node: cst.BinaryOperation):
    """``y·log(p) + (1 - y)·log(1 - p)`` (a sum or difference of the two terms, each a product or a matrix
    product, the labels reshaped, any signs that make both terms count the same way): (``p``, the two
    log calls); else None."""
    t1, t2 = _log_term(ctx, node.left), _log_term(ctx, node.right)
    if t1 is None or t2 is None:
        return None
    if isinstance(node.operator, cst.Subtract):
        t2 = (t2[0], t2[1], t2[2], not t2[3])
    if t1[3] != t2[3]:
        return None
    for pos, neg in ((t1, t2), (t2, t1)):
        inner_y = _one_minus(ctx, neg[0])
        inner_p = _one_minus(ctx, neg[2])
        if inner_y is None or inner_p is None:
            continue
        if not same_code(ctx, _labels(inner_y)[0], pos[0]) or not same_code(ctx, inner_p, pos[2]):
            continue
        return pos[2], (pos[1], neg[1])
    return None


def _sigmoid_evidence(ctx, prob: cst.BaseExpression) -> Optional[str]:
    """Why ``prob`` is a sigmoid output: a sigmoid or a hand-written one here or through local names, or
    the program model's facts (a project function's return, what every caller passes); else None."""
    value = followed(ctx, prob, 2)
    if sigmoid_use(ctx, value) is not None:
        return f"`{ctx.code(prob)}` is a sigmoid"
    if handwritten_sigmoid(ctx, value) is not None:
        return f"`{ctx.code(prob)}` is the sigmoid written by hand `{ctx.code(value)}`"
    fact = caller_value_fact(ctx, prob)
    if fact is not None and fact.kind == SIGMOID:
        return f"`{ctx.code(prob)}` comes from {fact.message}"
    return None
