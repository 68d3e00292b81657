from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.numerics.losses import call_findings, loss_inputs
from torchlint.analysis.roles import SIGMOID, SOFTMAX
from torchlint.analysis.ops import (
    SIGMOID_LAYERS,
    SOFTMAX_LAYERS,
    exp_use,
    is_cross_entropy_call,
    log_softmax_use,
    sequential_ending_in,
    sigmoid_use,
    softmax_use,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid


EXP_MESSAGE = (
    "Cross-entropy input is `exp` of a log-softmax, that is the softmax's probabilities; `CrossEntropyLoss` "
    "applies log-softmax itself, pass the logits (or give the log-probabilities to `F.nll_loss`)"
)


#: why a sigmoid before cross-entropy is wrong, said in every sigmoid message
SIGMOID_WHY = (
    "`CrossEntropyLoss` applies log-softmax over the classes to values squeezed into (0, 1), so the "
    "scores can differ by at most 1 and the loss and its gradients barely move; pass the logits "
    "(for independent yes/no labels use `BCEWithLogitsLoss`)"
)


class SoftmaxBeforeCrossEntropy(LintRule):
    """
    ## What it does
    Finds `nn.CrossEntropyLoss` / `F.cross_entropy` whose input (not the target) went through softmax:
    a direct call (`torch.softmax`, `F.softmax`, `x.softmax()`), an `nn.Softmax` layer, a variable
    assigned from one of those, or an `nn.Sequential` model whose last layer is `nn.Softmax`; also the
    exponential of a log-softmax (`torch.exp(F.log_softmax(x, dim=1))`, `x.log_softmax(-1).exp()`), which
    is the same probabilities. A sigmoid there is the same mistake and is reported too: a direct call
    (`torch.sigmoid`, `F.sigmoid`, `x.sigmoid()`), an `nn.Sigmoid` layer, a variable assigned from one,
    an `nn.Sequential` ending in `nn.Sigmoid`, or a model whose `forward` ends in a sigmoid.

    Models are followed through their classes: a model whose `forward` returns `F.softmax(...)`,
    `self.softmax(x)` of an `nn.Softmax` attribute or an `nn.Sequential(..., nn.Softmax())` head (also as
    one element of a returned tuple), defined in the same file or in a project module the file imports.
    A `forward` that returns softmax only on some paths (for example only in eval mode) is not reported.
    Softmax output passed to a function (of the file or of the project) that gives that parameter to
    cross-entropy is reported at the call.

    An ensemble whose `forward` averages its members' softmax outputs (`torch.stack(ps).mean(0)`,
    `sum(ps) / len(ps)`, `sum(F.softmax(m(x), 1) for m in self.members) / len(self.members)`,
    `torch.stack(ps).sum(0) / len(ps)`, a total the members' softmax outputs are added to in a loop over
    them, divided by their count, `(p1 + p2) / 2`) returns probabilities too. A criterion chosen from a
    dict of losses keyed by strings (`LOSSES[args.loss]`, or `LOSSES[args.loss]()` of loss classes) is
    read with the key the code holds by its literal defaults (a string,
    `parser.add_argument("--loss", default="ce")`); with the key unknown, it is cross-entropy when every
    entry is (a dict the file adds entries to is not read). So is a criterion assigned in the branches of
    `if args.loss == "ce": ... elif ...`: the branch those defaults take, or, undecided, every branch
    that assigns it. A criterion a class's `__init__` takes with a
    default (`criterion=nn.CrossEntropyLoss()`, `loss_fn=F.cross_entropy`) and keeps in `self.<attr>` is
    that default (also `criterion or nn.CrossEntropyLoss()` and `criterion if criterion is not None else
    ...` of a `None` default) when no construction of the class in the project passes it (a construction passing on
    its function's `**kwargs` counts when no call of that function passes the keyword; a subclass with an
    `__init__` of its own leaves it unknown). An object built from a project
    class (`Trainer(Net())`) whose method gives what the constructor received to its criterion
    (`self.criterion = criterion`, a default `criterion=nn.CrossEntropyLoss()`) is reported at the
    constructor's argument, whether or not the file calls that method.

    Values are followed through calls: a model passed to a helper that gives its output to a criterion
    (passed in as well, built in the helper, a default such as `criterion=nn.CrossEntropyLoss()`, or
    `self.criterion` set in `__init__`) is reported at the argument, per call, so a helper called with
    a softmax model and with a logits model is reported only for the first; a parameter annotated with a
    model class (`model: Net`); a base class's method calling `self(x)` where a subclass's `forward` ends
    in softmax; `obj.method(...)` on an object built from a project class, its `__init__` arguments
    included. The message says which `forward` ends in softmax (file:line) and through which helper.

    ## Why is this bad?
    `CrossEntropyLoss` expects raw logits: it applies `log_softmax` itself. Feeding it probabilities
    applies softmax twice, which squashes the scores, shrinks the gradients and slows or stalls training
    without any error. The cookbook's notes on classification losses say the same: the network's last
    layer should output scores, and `nn.CrossEntropyLoss` combines the softmax with the loss
    ("不需要在网络最后加 softmax 层", PyTorch Cookbook, Zhang Hao, 2019 and its 2024 revision; the numerical
    stability section of Effective PyTorch explains why the fused form is also the
    stable one).

    A sigmoid is no better: it maps each score into (0, 1) on its own, and `CrossEntropyLoss` then takes
    the log-softmax of those values over the classes. Two classes' inputs can differ by at most 1, so the
    predicted distribution stays close to uniform, the loss cannot fall much below `log(C) - 1` and its
    gradients shrink as the sigmoid saturates; the network trains slowly or not at all, without an error.
    Sigmoid outputs belong to `nn.BCELoss` (better: logits to `nn.BCEWithLogitsLoss`) for independent
    yes/no labels; for one class among C, pass the logits to `CrossEntropyLoss`.

    Softmax used only for metrics, argmax, confidence or logging is fine and is not reported.

    ## Example
    ```python
    probs = F.softmax(model(images), dim=1)
    loss = criterion(probs, labels)
    ```

    ## Use instead
    ```python
    logits = model(images)
    loss = criterion(logits, labels)
    ```

    ## Fix safety
    The fix passes the logits: an inline softmax, or an inline `exp(log_softmax(x))`, is dropped
    (safe), also where the criterion is known through a constructor's default or a dict of losses. When the softmax was stored in a variable, the fix removes the softmax from that
    assignment; it is safe when the loss is the variable's only use and unsafe otherwise (other uses
    would then see logits). No fix is offered for
    an `nn.Sequential` that ends in `nn.Softmax`: the model may be used elsewhere for probabilities.
    No fix is offered for a sigmoid at all: removing it changes what the model outputs for every other
    use (thresholds at 0.5, a BCE head), and whether the task is one class among C or several labels
    is the author's decision.

    ## Options
    None.

    ## References
    - [torch.nn.CrossEntropyLoss](https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL103"
    NAME = "softmax-before-cross-entropy"
    MESSAGE = "`softmax(x)` passed to cross-entropy: `CrossEntropyLoss` applies log-softmax itself, pass the logits"
    FIX_TITLE = "Pass the logits instead of their softmax"
    TRIGGERS = ("cross_entropy", "CrossEntropyLoss", "softmax")
    IMPORT_TRIGGERS = ("cross_entropy", "CrossEntropyLoss")

    VALID = [
        # the exponential of log-softmax used for a metric, the log-probabilities given to nll_loss
        """
import torch
import torch.nn.functional as F

def step(scores, y):
    log_probs = F.log_softmax(scores, dim=1)
    confidence = log_probs.exp().max(1).values
    return F.nll_loss(log_probs, y), confidence
""",
        Valid(
            """
import torch
import torch.nn.functional as F

def step(model, images, labels):
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    probs = torch.softmax(logits, dim=1)
    confidence, prediction = probs.max(dim=1)
    return loss, prediction, confidence
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def nll(logits, target):
    return F.nll_loss(F.log_softmax(logits, dim=1), target)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.CrossEntropyLoss()

def loss(logits, soft_targets):
    return criterion(logits, F.softmax(soft_targets / 2.0, dim=1))
"""
        ),
        Valid(
            """
import numpy as np
from scipy.special import softmax
import torch.nn.functional as F

def loss(logits, y):
    probs = softmax(np.zeros(3))
    return F.cross_entropy(logits, y)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def f(F, x, y):
    return F.cross_entropy(F.softmax(x), y)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.fc(x)
        if not self.training:
            return F.softmax(logits, dim=1)
        return logits

class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        logits = self.fc(x)
        return logits, logits.softmax(dim=1)

net, pair = Net(), Pair()
criterion = nn.CrossEntropyLoss()

def step(x, y):
    logits, probs = pair(x)
    accuracy = (probs.argmax(1) == y).float().mean()
    return criterion(net(x), y) + criterion(logits, y) + criterion(pair(x)[0], y), accuracy
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class LogNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)

def loss_fn(scores, target):
    return F.cross_entropy(scores, target)

def step(model, x, y):
    out = LogNet()(x)
    return F.nll_loss(out, y) + loss_fn(model(x), y)
"""
        ),
        Valid(
            """
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, sizes=(784, 64, 10), probabilities=False):
        super().__init__()
        layers = [nn.Flatten()]
        for a, b in zip(sizes, sizes[1:]):
            layers.append(nn.Linear(a, b))
        if probabilities:
            layers.append(nn.Softmax(dim=1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)

    def loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)
"""
        ),
        # a helper that gives a model's output to the criterion it is passed: called with a logits model
        # only, and softmax taken of the output for a metric
        Valid(
            """
import torch
import torch.nn as nn

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x)

def train_batch(network, objective, optimizer, inputs, labels):
    optimizer.zero_grad()
    scores = network(inputs)
    hit = (torch.softmax(scores, dim=1).argmax(1) == labels).float().mean()
    objective(scores, labels).backward()
    optimizer.step()
    return hit

def fit(data):
    scorer = Scorer()
    opt = torch.optim.Adam(scorer.parameters())
    for inputs, labels in data:
        train_batch(scorer, nn.CrossEntropyLoss(), opt, inputs, labels)
"""
        ),
        # log-probabilities given to NLLLoss through a helper: no cross-entropy on softmax
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class LogNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=-1)

def evaluate(model, x, y, crit=nn.NLLLoss()):
    return crit(model(x), y)

def main(x, y):
    return evaluate(LogNet(), x, y)
"""
        ),
        # a base-class method calling `self`: the only subclass returns logits
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Task(nn.Module):
    def training_loss(self, x, y):
        return F.cross_entropy(self(x), y)

class Linear(Task):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x)
"""
        ),
        # an ensemble averaging logits, a config choice whose default is another loss, a trainer built with
        # a logits model
        """
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

class LogitMean(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).mean(0)

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)

class Trainer:
    def __init__(self, model, criterion=nn.CrossEntropyLoss()):
        self.model, self.criterion = model, criterion

    def step(self, x, y):
        return self.criterion(self.model(x), y)

LOSSES = {"ce": nn.CrossEntropyLoss(), "nll": nn.NLLLoss()}
parser = argparse.ArgumentParser()
parser.add_argument("--loss", default="nll")
args = parser.parse_args()
criterion = LOSSES[args.loss]
trainer = Trainer(LogitMean([nn.Linear(8, 3) for _ in range(3)]))

def step(x, y):
    return criterion(torch.log(Probs()(x)), y), F.cross_entropy(LogitMean([nn.Linear(8, 3)])(x), y)
""",
        # sigmoid near misses: a sigmoid gate inside the logits, a sigmoid on the target side, a sigmoid
        # model given to binary cross-entropy, and a sigmoid computed for a metric beside the loss
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

gate = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())
head = nn.Linear(8, 3)
criterion = nn.CrossEntropyLoss()

def step(x, soft_y, flags):
    logits = head(x) * torch.sigmoid(gate(x))
    confidence = logits.sigmoid().max(1).values
    ce = criterion(logits, torch.sigmoid(soft_y))
    return ce + F.binary_cross_entropy(gate(x).squeeze(1), flags), confidence
""",
        # a trainer's default cross-entropy that every construction replaces (an NLL loss on
        # log-probabilities), a default of another loss, a dict of mixed losses read with an unknown key,
        # a dict the file adds a loss to, and an ensemble summing its members' logits in a loop
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Fitter:
    def __init__(self, net, objective=nn.CrossEntropyLoss()):
        self.net = net
        self.objective = objective

    def update(self, x, y):
        return self.objective(F.log_softmax(self.net(x), dim=1), y)

class Regressor:
    def __init__(self, net, objective=nn.MSELoss()):
        self.net, self.objective = net, objective

    def update(self, x, target):
        return self.objective(torch.softmax(self.net(x), dim=1), target)

CHOICES = {"xent": nn.CrossEntropyLoss(), "mse": nn.MSELoss()}
EXTENDED = {"xent": nn.CrossEntropyLoss()}
EXTENDED["kl"] = nn.KLDivLoss(reduction="batchmean")

class Averager(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        acc = 0
        for member in self.members:
            acc = acc + member(x)
        return acc / len(self.members)

def run(net, x, y, settings):
    fitter = Fitter(net, objective=nn.NLLLoss())
    picked, other = CHOICES[settings.loss], EXTENDED[settings.loss]
    probs = torch.softmax(net(x), dim=1)
    loss = picked(probs, y) + other(net(x), y)
    return fitter.update(x, y), loss, nn.CrossEntropyLoss()(Averager([net])(x), y)
""",
        # the loss an option's default picks is NLL, given log-probabilities
        """
import argparse
import torch.nn as nn
import torch.nn.functional as F

class LogScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.log_softmax(self.fc(x), dim=1)

def run_epoch(net, objective, batches):
    for x, y in batches:
        objective(net(x), y).backward()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--objective", default="nll")
    args = parser.parse_args()
    if args.objective == "nll":
        objective = nn.NLLLoss()
    else:
        objective = nn.CrossEntropyLoss()
    run_epoch(LogScorer(), objective, [])
""",
        # near miss: the name is bound again to a binary cross-entropy in the block that calls it; the
        # cross-entropy bound to it earlier (in another `if` block) never reaches the call
        """
import torch
import torch.nn as nn

scores = torch.randn(4, 2)
labels = torch.tensor([0, 1, 1, 0])
show = True
if show:
    criterion = nn.CrossEntropyLoss(reduction="none")
    print(criterion(scores, labels))
if show:
    probs = torch.sigmoid(scores)
    criterion = nn.BCELoss(reduction="none")
    print(criterion(probs, nn.functional.one_hot(labels, 2).float()))
""",
    ]

    INVALID = [
        # a `None` default replaced by cross-entropy in `__init__`, no construction passing the criterion
        Invalid(
            """
import torch
import torch.nn as nn

class Loop:
    def __init__(self, net, objective=None, extra=None):
        self.net = net
        self.objective = objective if objective is not None else nn.CrossEntropyLoss()
        self.extra = extra or nn.CrossEntropyLoss(label_smoothing=0.05)

    def batch_loss(self, x, y):
        scores = self.net(x)
        return self.objective(torch.softmax(scores, 1), y) + self.extra(scores.softmax(1), y)

loop = Loop(nn.Linear(4, 2))
""",
            fixed="""
import torch
import torch.nn as nn

class Loop:
    def __init__(self, net, objective=None, extra=None):
        self.net = net
        self.objective = objective if objective is not None else nn.CrossEntropyLoss()
        self.extra = extra or nn.CrossEntropyLoss(label_smoothing=0.05)

    def batch_loss(self, x, y):
        scores = self.net(x)
        return self.objective(scores, y) + self.extra(scores, y)

loop = Loop(nn.Linear(4, 2))
""",
            count=2,
        ),
        # the criterion chosen by comparing an option with strings, its default picking cross-entropy
        Invalid(
            """
import argparse
import torch.nn as nn

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x).softmax(dim=1)

def run_epoch(net, objective, batches):
    for x, y in batches:
        objective(net(x), y).backward()

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--objective", default="xent")
    args = parser.parse_args()
    if args.objective in ("xent", "cross-entropy"):
        objective = nn.CrossEntropyLoss()
    elif args.objective == "hinge":
        objective = nn.MultiMarginLoss()
    run_epoch(Scorer(), objective, [])
""",
            line=25,
            col=15,
            message="through `run_epoch`",
        ),
        # a criterion that arrives as a trainer's constructor default (no construction passes it), the
        # softmax written where the loss is taken; a loss function as a default too
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Learner:
    def __init__(self, net, opt, objective=nn.CrossEntropyLoss(), score=F.cross_entropy):
        self.net, self.opt = net, opt
        self.objective = objective
        self.score = score

    def fit_batch(self, x, y):
        self.opt.zero_grad()
        out = self.net(x)
        loss = self.objective(F.softmax(out, dim=1), y)
        loss.backward()
        self.opt.step()
        return self.score(out.softmax(-1), y)

def make(net):
    return Learner(net, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

class Learner:
    def __init__(self, net, opt, objective=nn.CrossEntropyLoss(), score=F.cross_entropy):
        self.net, self.opt = net, opt
        self.objective = objective
        self.score = score

    def fit_batch(self, x, y):
        self.opt.zero_grad()
        out = self.net(x)
        loss = self.objective(out, y)
        loss.backward()
        self.opt.step()
        return self.score(out, y)

def make(net):
    return Learner(net, torch.optim.SGD(net.parameters(), lr=0.1))
""",
            count=2,
            message="`nn.CrossEntropyLoss()` (case.py:7)",
        ),
        # loss classes in a dict keyed by strings, the key unknown (every entry is cross-entropy), and a
        # dict of loss objects chosen by an argparse option without a default
        Invalid(
            """
import argparse
import torch
import torch.nn as nn

LOSS_CLASSES = {"plain": nn.CrossEntropyLoss, "smoothed": nn.CrossEntropyLoss}
LOSS_OBJECTS = dict(plain=nn.CrossEntropyLoss(), weighted=nn.CrossEntropyLoss(weight=torch.ones(3)))
parser = argparse.ArgumentParser()
parser.add_argument("--objective", choices=sorted(LOSS_OBJECTS))
opts = parser.parse_args()

def train_step(net, x, y, settings):
    criterion = LOSS_CLASSES[settings.loss_name]()
    return criterion(torch.softmax(net(x), dim=1), y) + LOSS_OBJECTS[opts.objective](net(x).softmax(1), y)
""",
            fixed="""
import argparse
import torch
import torch.nn as nn

LOSS_CLASSES = {"plain": nn.CrossEntropyLoss, "smoothed": nn.CrossEntropyLoss}
LOSS_OBJECTS = dict(plain=nn.CrossEntropyLoss(), weighted=nn.CrossEntropyLoss(weight=torch.ones(3)))
parser = argparse.ArgumentParser()
parser.add_argument("--objective", choices=sorted(LOSS_OBJECTS))
opts = parser.parse_args()

def train_step(net, x, y, settings):
    criterion = LOSS_CLASSES[settings.loss_name]()
    return criterion(net(x), y) + LOSS_OBJECTS[opts.objective](net(x), y)
""",
            count=2,
            message="it reaches cross-entropy",
        ),
        # ensembles whose forward divides a sum of the members' softmax outputs by their count
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Committee(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        return sum(F.softmax(m(x), dim=1) for m in self.members) / len(self.members)

class Accumulated(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        total = 0.0
        for m in self.members:
            total += torch.softmax(m(x), dim=-1)
        return total / len(self.members)

class Stacked(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        probs = [m(x).softmax(-1) for m in self.members]
        return torch.stack(probs, dim=1).sum(dim=1) / len(probs)

loss_fn = nn.CrossEntropyLoss()

def step(x, y):
    heads = [nn.Linear(5, 3) for _ in range(3)]
    return loss_fn(Committee(heads)(x), y) + loss_fn(Accumulated(heads)(x), y) + loss_fn(Stacked(heads)(x), y)
""",
            count=3,
            message="ends in softmax",
        ),
        # a sigmoid before cross-entropy, in its spellings (function, method, variable, layer attribute)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.act = nn.Sigmoid()

    def loss(self, x, y):
        return F.cross_entropy(self.act(self.fc(x)), y)

def losses(logits, y):
    probs = logits.sigmoid()
    return F.cross_entropy(torch.sigmoid(logits), y) + F.cross_entropy(probs, y)
""",
            count=3,
            message="went through a sigmoid; `CrossEntropyLoss` applies log-softmax over the classes",
        ),
        # a model ending in nn.Sigmoid (a Sequential) and a model class whose forward ends in a sigmoid
        Invalid(
            """
import torch
import torch.nn as nn

clf = nn.Sequential(nn.Linear(10, 4), nn.Sigmoid())

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))

criterion = nn.CrossEntropyLoss()

def step(x, y):
    scorer = Scorer()
    return criterion(clf(x), y) + criterion(scorer(x), y)
""",
            count=2,
            message="ends in `nn.Sigmoid`",
        ),
        # a trainer class whose default criterion is cross-entropy, built with a softmax model (reported at
        # the construction, whether or not this file runs its step)
        Invalid(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x).softmax(dim=-1)

class Trainer:
    def __init__(self, model, criterion=nn.CrossEntropyLoss(), lr=0.1):
        self.model = model
        self.criterion = criterion
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.opt.step()

trainer = Trainer(Net(), lr=0.01)
""",
            line=25,
            col=19,
            message="when `Trainer` is built here",
        ),
        # the criterion chosen from a dict of losses by an argparse default
        Invalid(
            """
import argparse
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.out = nn.Softmax(dim=1)

    def forward(self, x):
        return self.out(self.fc(x))

CRITERIA = {"xent": nn.CrossEntropyLoss(), "l2": nn.MSELoss()}
parser = argparse.ArgumentParser()
parser.add_argument("--criterion-name", default="xent", choices=list(CRITERIA))
args = parser.parse_args()
loss_fn = CRITERIA[args.criterion_name]
model = Net()

def step(x, y):
    return loss_fn(model(x), y)
""",
            line=22,
            message="`forward` of `Net`",
        ),
        # an ensemble whose forward averages the members' softmax outputs
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Ensemble(nn.Module):
    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, x):
        probs = [F.softmax(m(x), dim=1) for m in self.members]
        return torch.stack(probs).mean(0)

class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 3), nn.Linear(8, 3)

    def forward(self, x):
        return (self.a(x).softmax(-1) + torch.softmax(self.b(x), -1)) / 2

criterion = nn.CrossEntropyLoss()

def step(x, y):
    ensemble = Ensemble([nn.Linear(8, 3) for _ in range(4)])
    return criterion(ensemble(x), y) + criterion(Pair()(x), y)
""",
            count=2,
            message="ends in softmax",
        ),
        # the exponential of a log-softmax is a softmax
        Invalid(
            """
import torch
import torch.nn.functional as F

def loss_fn(scores, target):
    return F.cross_entropy(torch.exp(F.log_softmax(scores, dim=1)), target)
""",
            fixed="""
import torch
import torch.nn.functional as F

def loss_fn(scores, target):
    return F.cross_entropy(scores, target)
""",
            message="`exp` of a log-softmax",
        ),
        Invalid(
            """
import torch.nn as nn

criterion = nn.CrossEntropyLoss()

def step(model, x, y):
    log_probs = model(x).log_softmax(-1)
    probs = log_probs.exp()
    return criterion(probs, y)
""",
            message="`exp` of a log-softmax",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def loss_fn(logits, target):
    return F.cross_entropy(torch.softmax(logits, dim=-1), target)
""",
            fixed="""
import torch
import torch.nn.functional as F

def loss_fn(logits, target):
    return F.cross_entropy(logits, target)
""",
            line=6,
            col=28,
        ),
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

def step(model, images, labels, optimizer):
    criterion = nn.CrossEntropyLoss()
    probs = F.softmax(model(images), dim=1)
    loss = criterion(probs, labels)
    return loss
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

def step(model, images, labels, optimizer):
    criterion = nn.CrossEntropyLoss()
    probs = model(images)
    loss = criterion(probs, labels)
    return loss
""",
        ),
        Invalid(
            """
import torch
from torch.nn import CrossEntropyLoss as CE

def step(out, y):
    p = out.softmax(dim=1)
    print(p.max())
    return CE()(p, y)
""",
            fixed="""
import torch
from torch.nn import CrossEntropyLoss as CE

def step(out, y):
    p = out
    print(p.max())
    return CE()(p, y)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch.nn as nn
from torch.nn.functional import cross_entropy, softmax as sm

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax(dim=1)
        self.fc = nn.Linear(4, 3)

    def loss(self, x, y):
        return cross_entropy(self.act(self.fc(x)), y)

def g(x, y):
    return cross_entropy(input=sm(x, 1), target=y)
""",
            fixed="""
import torch.nn as nn
from torch.nn.functional import cross_entropy, softmax as sm

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax(dim=1)
        self.fc = nn.Linear(4, 3)

    def loss(self, x, y):
        return cross_entropy(self.fc(x), y)

def g(x, y):
    return cross_entropy(input=x, target=y)
""",
            count=2,
        ),
        Invalid(
            """
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=1))
criterion = nn.CrossEntropyLoss()

def step(x, y):
    return criterion(model(x), y)
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.conv(x).mean((2, 3))
        return F.softmax(self.fc(x), dim=1)

cnn = CNN().to("cpu")
criterion = nn.CrossEntropyLoss()
for images, labels in []:
    outputs = cnn(images)
    loss = criterion(outputs, labels)
""",
            line=20,
            message="`forward` ends in softmax",
        ),
        Invalid(
            """
import torch.nn as nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 4)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(4, 3), nn.Softmax(dim=1))

    def forward(self, x):
        return self.head(self.body(x))

class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Classifier()
        self.softmax = nn.Softmax(dim=-1)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        features = self.fc(x)
        probs = self.softmax(features)
        return probs, features

def train(x, y):
    clf = Classifier()
    wrapped = Wrapper()
    probs, features = wrapped(x)
    return nn.functional.cross_entropy(clf(x), y) + nn.functional.cross_entropy(probs, y)
""",
            count=2,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def compute_loss(out, target):
    return F.cross_entropy(out, target)

def train_step(model, x, y):
    probs = torch.softmax(model(x), dim=-1)
    return compute_loss(probs, y)
""",
            line=10,
            message="passed to `compute_loss`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, sizes=(784, 64, 10)):
        super().__init__()
        layers = [nn.Flatten()]
        for a, b in zip(sizes, sizes[1:]):
            layers.append(nn.Linear(a, b))
            layers.append(nn.ReLU())
        layers.append(nn.Softmax(dim=1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)

    def loss(self, batch):
        x, y = batch
        return nn.functional.cross_entropy(self(x), y)
""",
            line=21,
        ),
        # the model and the criterion both passed to a helper; the same helper called with a logits
        # model is not reported (judged per call)
        Invalid(
            """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        h = self.fc(x)
        return h.softmax(dim=-1)

def one_step(network, objective, optimizer, batch):
    inputs, labels = batch
    optimizer.zero_grad()
    objective(network(inputs), labels).backward()
    optimizer.step()

def fit(data):
    probs, plain = Probs(), nn.Linear(6, 4)
    opt = torch.optim.SGD(probs.parameters(), lr=0.1)
    xent = nn.CrossEntropyLoss()
    for batch in data:
        one_step(probs, xent, opt, batch)
        one_step(plain, xent, opt, batch)
""",
            line=25,
            col=18,
            message="`forward` of `Probs` (case.py:10) ends in softmax; it reaches cross-entropy",
        ),
        # the criterion is a default, the model an annotated parameter
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)

def batch_loss(model: Net, x, y, criterion=nn.CrossEntropyLoss()):
    return criterion(model(x), y)
""",
            line=14,
            message="`model` is annotated `Net`",
        ),
        # a base-class method feeding `self(...)` to cross-entropy, a subclass returning probabilities
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Task(nn.Module):
    def training_loss(self, x, y):
        return F.cross_entropy(self.forward(x), y)

class Softmaxed(Task):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(6, 4), nn.Softmax(dim=1))

    def forward(self, x):
        return self.head(x)
""",
            line=7,
            message="when `self` is a `Softmaxed`",
        ),
        # a trainer object: the model comes through the constructor, the criterion is set in `__init__`
        Invalid(
            """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return torch.softmax(self.fc(x), -1)

class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()

    def step(self, x, y):
        return self.criterion(self.model(x), y)

def run(x, y):
    trainer = Trainer(Net())
    return trainer.step(x, y)
""",
            line=23,
            message="through `Trainer.step`",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._reported: set = set()

    def visit_Call(self, node: cst.Call) -> None:
        if not is_cross_entropy_call(self.ctx, node):
            return
        first = arg(node, 0, "input")
        if first is None:
            return
        value = first.value
        self._reported.add(value)
        use = softmax_use(self.ctx, value)
        if use is not None:
            self.report(value, self.quoting(value, self.MESSAGE), fix=self._inline_fix(use.node, use.operand))
            return
        if isinstance(value, cst.Name):
            assigned_values = self.ctx.names.values_before(value)
            assigned = assigned_values[-1] if assigned_values else None
            if assigned is not None:
                use = softmax_use(self.ctx, assigned)
                if use is not None:
                    held = f"`, assigned `{self.spelling(use.node)}`, passed"
                    self.report(value, self.quoting(value, self.MESSAGE).replace("` passed", held, 1),
                                fix=self._variable_fix(value, use.node, use.operand))
                    return
        exp = self._exp_of_log_softmax(value)
        if exp is not None:
            inline = exp.node is value and log_softmax_use(self.ctx, exp.operand) is not None
            self.report(value, self.quoting(value, EXP_MESSAGE), fix=self._inline_fix(exp.node, self._logits(exp)) if inline else None)
            return
        if isinstance(value, cst.Call):
            if sequential_ending_in(self.ctx, value.func, SOFTMAX_LAYERS) is not None:
                self.report(
                    value,
                    "Cross-entropy input comes from an `nn.Sequential` that ends in `nn.Softmax`; "
                    "drop the softmax layer and pass the logits",
                )
                return
        # a sigmoid: no fix, dropping it changes what the model outputs for its other users
        if sigmoid_use(self.ctx, value) is not None or self._assigned_sigmoid(value):
            self.report(value, f"`{self.spelling(value)}` passed to cross-entropy went through a sigmoid; " + SIGMOID_WHY)
            return
        if isinstance(value, cst.Call) and sequential_ending_in(self.ctx, value.func, SIGMOID_LAYERS) is not None:
            self.report(value, "Cross-entropy input comes from an `nn.Sequential` that ends in `nn.Sigmoid`; " + SIGMOID_WHY)
            return
        self._reported.discard(value)

    def _assigned_sigmoid(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Name):
            return False
        before = self.ctx.names.values_before(value)
        return bool(before) and sigmoid_use(self.ctx, before[-1]) is not None

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: a model whose `forward` ends in softmax, in this file or imported
        from the project, and a loss helper that receives softmax output."""
        for found in loss_inputs(self.ctx):
            if found.loss != "ce" or found.kind not in (SOFTMAX, SIGMOID) or found.node in self._reported:
                continue
            self._reported.add(found.node)
            if found.kind == SIGMOID:
                where = (
                    f"Sigmoid output passed to `{found.helper}`, which gives it to cross-entropy"
                    if found.helper is not None
                    else "Cross-entropy input is the output of a model whose `forward` ends in a sigmoid"
                )
                self.report(found.node, f"{where}; {SIGMOID_WHY}")
                continue
            if found.helper is not None:
                message = (
                    f"Softmax output passed to `{found.helper}`, which gives it to cross-entropy; "
                    "`CrossEntropyLoss` applies log-softmax itself, pass the logits"
                )
            else:
                message = (
                    "Cross-entropy input is the output of a model whose `forward` ends in softmax; "
                    "return the logits from `forward` (apply softmax only for predictions)"
                )
            self.report(found.node, message)
        for finding in call_findings(self.ctx):
            if finding.loss != "ce" or finding.node in self._reported:
                continue
            self._reported.add(finding.node)
            if finding.kind == SIGMOID:
                self.report(finding.node, f"Sigmoid before cross-entropy: {finding.message}; {SIGMOID_WHY}")
                continue
            # a softmax written inline (the criterion known through the program model: a constructor's
            # default, a dict of losses) is dropped as in the direct case
            use = softmax_use(self.ctx, finding.node) if isinstance(finding.node, cst.BaseExpression) else None
            inline = use is not None and use.node is finding.node
            self.report(
                finding.node,
                f"Softmax before cross-entropy: {finding.message}; `CrossEntropyLoss` applies log-softmax itself, "
                "pass the logits",
                fix=self._inline_fix(use.node, use.operand) if inline else None,
            )

    def _exp_of_log_softmax(self, value: cst.BaseExpression):
        """``exp(log_softmax(x))`` (``lp.exp()`` with ``lp = log_softmax(x)``; the exp itself maybe held in
        a variable): the exp's use, whose value is the softmax's probabilities."""
        ctx = self.ctx
        if isinstance(value, cst.Name):
            before = ctx.names.values_before(value)
            value = before[-1] if len(before) == 1 else value
        use = exp_use(ctx, value)
        if use is None or use.operand is None:
            return None
        operand = use.operand
        if isinstance(operand, cst.Name):
            before = ctx.names.values_before(operand)
            operand = before[-1] if len(before) == 1 else operand
        return use if log_softmax_use(ctx, operand) is not None else None

    def _logits(self, exp) -> Optional[cst.BaseExpression]:
        inner = log_softmax_use(self.ctx, exp.operand)
        return inner.operand if inner is not None and inner.kind != "layer" else None

    def _inline_fix(self, softmax: cst.Call, operand: Optional[cst.BaseExpression]) -> Optional[Fix]:
        if operand is None:
            return None
        return self.make_fix().replace(softmax, operand)

    def _variable_fix(
        self, name: cst.Name, softmax: cst.Call, operand: Optional[cst.BaseExpression]
    ) -> Optional[Fix]:
        if operand is None:
            return None
        assign = self.ctx.parent(softmax)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        scope = self.ctx.names.function_scope_node() or self.ctx.module
        uses = [n for n in self.ctx.names_in(scope, name.value) if n is not name]
        # the assignment target itself is one Name; anything beyond it is another use
        other_uses = [n for n in uses if n is not assign.targets[0].target]
        return self.make_fix(unsafe=bool(other_uses)).replace(softmax, operand)
