from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg, keyword_arg
from torchlint.families.shapes.shapes import (
    BINARY_FUNCS,
    BINARY_METHODS,
    BINOPS,
    Shape,
    broadcast,
    held_value,
    is_number,
    ranks_differ,
    shape_of,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid

# reductions that reduce everything when no dim is given
REDUCTIONS = ("sum", "mean", "prod", "nansum", "nanmean", "amax", "amin", "std", "var", "norm", "max", "min")
REDUCTION_FUNCS = frozenset("torch." + n for n in REDUCTIONS)
# shape-preserving wrappers a reduction may sit on: `torch.sum((a - b) ** 2)`, `(a - b).abs().mean()`
ELEMENTWISE = frozenset(
    {"abs", "square", "sqrt", "exp", "log", "neg", "pow", "float", "double", "half", "sigmoid", "tanh", "relu",
     "clamp", "clip", "detach"}
)


# losses that compare `input` with `target` element-wise and broadcast them silently (torch only warns);
# `binary_cross_entropy(_with_logits)` and `soft_margin_loss` raise on a size mismatch instead
ELEMENTWISE_LOSSES = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss",
                      "hinge_embedding_loss", "multilabel_soft_margin_loss")
LOSS_FUNCS = frozenset("torch.nn.functional." + n for n in ELEMENTWISE_LOSSES)
LOSS_MODULES = frozenset(
    "torch.nn." + n
    for n in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "HingeEmbeddingLoss",
              "MultiLabelSoftMarginLoss")
)


@dataclass
class LossBroadcast:
    call: cst.Call
    input: cst.BaseExpression
    target: cst.BaseExpression
    input_shape: Shape
    target_shape: Shape


def _last_is_one(s: Shape) -> bool:
    known, size = s.size(-1)
    return known and size == 1


def loss_broadcasts(a: Shape, b: Shape) -> bool:
    """Whether a loss comparing shapes ``a`` and ``b`` element-wise is known to broadcast one against the
    other: ranks known to differ (neither a scalar nor a single value), a dimension known to be 1 on one
    side against a literal size above 1 on the other, or a trailing singleton (``nn.Linear(h, 1)``'s
    output, whatever its rank) against a 1-D tensor (the regression head against a vector of targets)."""
    if a.rank == 0 or b.rank == 0:
        return False
    if ranks_differ(a, b):
        low = a if a.rank is not None and (b.rank is None or a.rank < b.rank) else b
        return low.rank is not None and not all(d == 1 for d in low.head)
    for k in range(1, 9):
        ka, sa = a.size(-k)
        kb, sb = b.size(-k)
        if not (ka and kb):
            break
        if (sa == 1 and sb is not None and sb > 1) or (sb == 1 and sa is not None and sa > 1):
            return True
    for one, vec in ((a, b), (b, a)):
        if one.rank is None and _last_is_one(one) and vec.rank == 1 and vec.head[0] != 1:
            return True
    return False


@dataclass
class Broadcast:
    op: cst.BaseExpression  # `a + b`, or `torch.sub(a, b)` / `a.mul(b)`
    low: cst.BaseExpression  # the lower-rank operand
    low_shape: Shape
    high_shape: Shape
    result: Optional[Shape]


class ReductionOverBroadcast(LintRule):
    """
    ## What it does
    Finds reductions without `dim` (`torch.sum(x)`, `x.mean()`, `x.norm()`, ...) over an expression that
    broadcasts operands whose ranks are known to differ — `torch.sum(a + b)` with `a` of shape `[2, 1]`
    and `b` of shape `[2]`. Ranks come from the shared shape inference: literal constructors,
    `unsqueeze`, `view`/`reshape` with literal sizes, `[:, None]` indexing and `nn.Linear` outputs,
    through local variables (`c = a + b` ... `c.sum()` is followed too), with the operator or its
    function and method spellings (`torch.sub(a, b)`, `a.mul(b)`). Nothing is reported when a
    rank is unknown, or when one operand is a scalar or a single value.

    The same broadcast hides inside the losses that compare an input with a target element-wise
    (`F.mse_loss`, `F.l1_loss`, `F.smooth_l1_loss`, `F.huber_loss`, `F.kl_div`, `F.poisson_nll_loss`,
    `F.hinge_embedding_loss`, `F.multilabel_soft_margin_loss`, and their modules `nn.MSELoss()` ...):
    they reduce the broadcast result without a word (torch only warns). Reported when the shapes are
    known to broadcast: ranks that differ, a size 1 against a larger literal size, or an `nn.Linear(h, 1)`
    output (its last dimension is 1 whatever its rank) against a 1-D target. A model's output counts as
    such when its class — in this file or in a project module it imports — returns `self.<head>(...)`
    from `forward` (or a name holding it on every path to the `return`: `x = self.head(x)` then
    `return x`, whose other dimensions are not read from the model's input, since `forward` may have
    reshaped it on the way) with the head built as `nn.Linear(h, 1)` (or an `nn.Sequential` ending in one).
    Targets are 1-D when built from a list of Python numbers (a literal, a comprehension, a list grown by
    `append(float(...))`), from one column of a pandas data frame (`torch.tensor(df["y"].values)`), from
    the labels of a torchvision classification dataset (`train_set.targets` of `MNIST`, `CIFAR10`,
    `ImageFolder`, ...), or by `flatten()`, `torch.flatten(x)` or `view(-1)`, also scaled by a number: a
    literal, an `int`/`float` parameter, or a field a settings class declares `float` or `int`
    (`args.gamma` of `args = Args()` or `args = tyro.cli(Args)` with `gamma: float` in `Args`). `F.binary_cross_entropy` and `F.soft_margin_loss` raise on a size mismatch and
    are not reported.

    Shapes also come from how the data and the model are built. The batches of a `DataLoader` built in
    view over a `TensorDataset(x, y)` have the shapes of `x` and `y` with the first dimension the batch's
    (`y = torch.randn(n)` gives targets of shape `[B]`), and the labels of a loader over a torchvision
    classification dataset are `[B]`, as are the elements of a project's `Dataset` class whose
    `__getitem__` returns one number at that position of every tuple (`float(...)`, `x.item()`,
    `torch.tensor(float(...))`: the default collate stacks them; a `torch.tensor(row)` of unknown rank
    is not followed). An element whose rank is known in `__getitem__` gives `[B, ...]` the same way: a
    grayscale image or depth map read with one band per pixel (PIL's `Image.open(p).convert("L")` or
    `"F"`, `cv2.imread(p, cv2.IMREAD_GRAYSCALE)`) is `[H, W]` through `np.asarray` and
    `torch.from_numpy`, so its batch is `[B, H, W]`; `permute(2, 0, 1)` names three dimensions, so a
    batch of such images has rank 4. The same holds for a loader a trainer
    class holds (`self.loader = DataLoader(...)` built once from values that read no local of the method
    that built it, except the arguments of a project dataset class, whose own `__getitem__` decides the
    shapes), in every loop of a method that reads it (a training and a validation loop). A trainer that is
    handed its model, loader or criterion (`self.model = model` in `__init__`) reads them from the
    class's one construction in the file (`Fitter(Valuer(8), DataLoader(...), nn.MSELoss())`); a class
    built twice leaves them unknown. A `collate_fn`,
    a `batch_sampler` or `batch_size=None` leaves them unknown. A model (or layer) whose output comes
    from a convolution with one output channel (`nn.Conv2d(c, 1, k)`) gives `[B, 1, H, W]` for a
    `[B, C, H, W]` input, which broadcasts against `[B, H, W]` targets the same way. One value picked
    per row, `q.gather(1, a.unsqueeze(1))`, has the index's shape (`[B, 1]`), and `q.max(1)[0]` (or
    `.values`) drops the dimension it reduces (`[B, A]` gives `[B]`): a Q-learning target built from the
    next states' best values against the picked values broadcasts the same way. The messages give both
    shapes.

    ## Why is this bad?
    Broadcasting aligns shapes from the right and silently expands size-1 dimensions, so `a + b` is a
    `[2, 2]` matrix, and the sum of all its elements is 12, not the 6 one expects from adding two
    2-element vectors. Effective PyTorch uses this very example to show the cost of implicit broadcasting
    and advises always naming the dimension when reducing, so that a wrong result shape reveals the
    mistake ("3. 广播机制的优缺点", Effective PyTorch: "在做累加( reduction )操作……的时候总是指定好维度").

    ## Example
    ```python
    a = torch.tensor([[1.], [2.]])
    b = torch.tensor([1., 2.])
    c = torch.sum(a + b)  # 12
    ```

    ## Use instead
    ```python
    a = torch.tensor([[1.], [2.]])
    b = torch.tensor([1., 2.])
    c = torch.sum(a + b[:, None])  # 6: b aligned with a's rows
    ```
    or, if the outer sum is intended, `torch.sum(a + b[None, :])`; either way the alignment is written
    down, and `torch.sum(a + b, 0)` makes a wrong shape visible.

    ## Fix safety
    For a loss with an input of shape `[n, 1]` and a target of shape `[n]` (both ranks known), the fix
    compares each prediction with its own target: `F.mse_loss(pred.squeeze(-1), target)`; the same for
    one known singleton elsewhere (`[B, 1, H, W]` against `[B, H, W]`: `squeeze(1)`). Other loss
    findings have no fix (which operand to reshape depends on shapes the code does not show).

    The fix makes the alignment of the lower-rank operand explicit with indexing. When broadcasting
    stretches a size-1 dimension of the other operand against it (the result is larger than either
    operand, as in the example) and the operand fits the other's leading dimensions, the fix aligns it
    with those leading dimensions (`b[:, None]`): element-wise pairing, which is what the code most
    likely meant, and a different result. Otherwise the fix spells out what broadcasting already does
    (`b[None, :]`), which keeps the value. Both are unsafe: the first changes the result, and both rely on
    inferred shapes.

    ## Options
    None.

    ## References
    - [Broadcasting semantics](https://pytorch.org/docs/stable/notes/broadcasting.html)
    - [torch.sum](https://pytorch.org/docs/stable/generated/torch.sum.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL402"
    NAME = "reduction-over-broadcast"
    MESSAGE = "Reduction without `dim` over an expression that broadcasts operands of different rank"
    FIX_TITLE = "Make the broadcast alignment explicit"
    FIX_SAFETY = "unsafe"
    TRIGGERS = REDUCTIONS + ELEMENTWISE_LOSSES + ("Loss(",)

    VALID = [
        # the labels made a column, a detection dataset's targets, the images themselves
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets

train_set = datasets.FashionMNIST("data", train=True, download=True)
boxes = datasets.CocoDetection("images", "annotations.json")
head = nn.Linear(784, 1)


def step(x):
    return F.mse_loss(head(x), train_set.targets.float().unsqueeze(1))


def other(x):
    return F.mse_loss(head(x), boxes.targets) + F.mse_loss(head(x), train_set.data)
"""
        ),
        Valid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(a + b, 0)
"""
        ),
        Valid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([[1.], [2.]])
c = torch.sum(a + b)
"""
        ),
        Valid(
            """
import torch

def loss(pred, target):
    return ((pred - target) ** 2).mean()
"""
        ),
        Valid(
            """
import torch

x = torch.rand(5, 3)
total = (x * 2.0 + 1).sum()
"""
        ),
        Valid(
            """
import torch

x = torch.rand(5, 3)
scale = torch.tensor(2.0)
total = (x * scale).sum()
"""
        ),
        Valid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = a + b
c = c * 2
total = c.sum()
"""
        ),
        Valid(
            """
import torch

def score(u):
    w = torch.rand(3, 1)
    v = u.unsqueeze(0)
    return torch.mean(w * v)
"""
        ),
        Valid(
            """
import torch

a = torch.rand(4)
b = torch.rand(4)
dist = torch.sum((a[:, None] - b[None, :]) ** 2, dim=1)
"""
        ),
        # losses: equal shapes, unknown shapes, a single target value, and element lists of unknown type
        Valid(
            """
import torch
import torch.nn.functional as F

a = torch.rand(8, 1)
b = torch.rand(8, 1)
loss = F.mse_loss(a, b)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def loss(pred, target):
    return F.mse_loss(pred, target)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

head = nn.Linear(4, 1)

def one(x, value):
    return nn.MSELoss()(head(x), torch.tensor([value]))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

def fit(xs, labels):
    head = nn.Linear(4, 1)
    y = torch.tensor([v for v in labels])
    return F.mse_loss(head(xs), y)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

def fit(xs, rows):
    head = nn.Linear(4, 1)
    y = torch.tensor([float(r) for r in rows]).unsqueeze(1)
    return F.mse_loss(head(xs), y)
"""
        ),
        # the name is another loss on this branch
        Valid(
            """
import torch
from torch.nn import CrossEntropyLoss, MSELoss

def loss_func(logits, labels, num_labels):
    if num_labels == 1:
        loss_fct = MSELoss()
        return loss_fct(logits.view(-1), labels.view(-1))
    loss_fct = CrossEntropyLoss()
    return loss_fct(logits.view(-1, num_labels), labels.view(-1))
"""
        ),
        # raises on a size mismatch instead of broadcasting
        Valid(
            """
import torch
import torch.nn.functional as F

p = torch.rand(8, 1)
t = torch.rand(8)
loss = F.binary_cross_entropy(p, t)
"""
        ),
        Valid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([[1.], [2.]])
c = torch.sum(torch.mul(a, b))
d = a.sub(b).abs().mean()
"""
        ),
        # model outputs and loader targets whose shapes agree
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        return self.out(x)

def epoch(model: Scorer):
    batches = DataLoader(TensorDataset(torch.rand(64, 6), torch.rand(64)), batch_size=8)
    net = Scorer()
    for x, y in batches:
        a = F.mse_loss(net(x).squeeze(-1), y)
        b = ((net(x).view(-1) - y) ** 2).mean()
        c = F.l1_loss(net(x), y.unsqueeze(1))
        d = F.smooth_l1_loss(net(x).view_as(y), y)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

head = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
pairs = TensorDataset(torch.rand(40, 3), torch.rand(40, 1))
for xb, yb in DataLoader(pairs, batch_size=5):
    loss = F.mse_loss(head(xb), yb) + ((head(xb) - yb) ** 2).mean()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

head = nn.Linear(3, 1)

def collate(items):
    xs, ys = zip(*items)
    return torch.stack(xs), torch.stack(ys).unsqueeze(1)

loader = DataLoader(TensorDataset(torch.rand(40, 3), torch.rand(40)), batch_size=5, collate_fn=collate)
for xb, yb in loader:
    loss = F.mse_loss(head(xb), yb)
"""
        ),
        # a dataset whose label is not known to be one number (a row of a table may be a vector); or the
        # head's singleton dropped before the loss
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Houses(Dataset):
    def __init__(self, features, prices):
        self.features, self.prices = features, prices

    def __len__(self):
        return len(self.features)

    def __getitem__(self, k):
        return self.features[k], torch.tensor(self.prices[k])


def fit(features, prices):
    head = nn.Linear(6, 1)
    for xb, yb in DataLoader(Houses(features, prices), batch_size=8):
        loss = F.mse_loss(head(xb), yb)
        loss.backward()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Houses(Dataset):
    def __init__(self, features, prices):
        self.features, self.prices = features, prices

    def __len__(self):
        return len(self.features)

    def __getitem__(self, k):
        return self.features[k], float(self.prices[k])


def fit(features, prices):
    head = nn.Linear(6, 1)
    for xb, yb in DataLoader(Houses(features, prices), batch_size=8):
        loss = F.mse_loss(head(xb).squeeze(-1), yb)
        loss.backward()
"""
        ),
        # a trainer's loader over the constructor's own arguments: their shapes are not followed
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, rgb):
        return self.out(rgb)


class Runner:
    def __init__(self, scenes, depths):
        self.net = DepthNet()
        self.opt = torch.optim.Adam(self.net.parameters())
        self.batches = DataLoader(TensorDataset(scenes, depths), batch_size=4)

    def epoch(self):
        for rgb, depth in self.batches:
            loss = F.smooth_l1_loss(self.net(rgb), depth)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
"""
        ),
        # a single-channel map aligned before the loss, and kept per pixel with `reduction="none"` over
        # aligned shapes; a label read as a one-entry list ([B, 1] against the head's [B, 1]); a head whose
        # singleton the model's own `forward` drops
        Valid(
            """
import cv2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Masks(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        photo = cv2.imread(self.pairs[i][0], cv2.IMREAD_COLOR)
        mask = cv2.imread(self.pairs[i][1], cv2.IMREAD_GRAYSCALE)
        return torch.from_numpy(photo).permute(2, 0, 1).float(), torch.from_numpy(mask).float()


seg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))


def fit(pairs):
    for photo, mask in DataLoader(Masks(pairs), batch_size=8):
        whole = F.mse_loss(seg(photo).squeeze(1), mask)
        per_pixel = F.l1_loss(seg(photo), mask.unsqueeze(1), reduction="none")
        inside = (per_pixel * (mask.unsqueeze(1) > 0)).sum() / (mask > 0).sum()
        (whole + inside).backward()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Listings(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        feats, price = self.rows[i]
        return torch.tensor(feats), torch.tensor([float(price)])


class Steps(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return torch.rand(8), float(i)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(x)


class FlatScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(x).squeeze(-1)


class Fitter:
    def __init__(self, rows):
        self.model = Scorer()
        self.flat = FlatScorer()
        self.criterion = nn.MSELoss()
        self.loader = DataLoader(Listings(rows), batch_size=16, shuffle=True)
        self.steps = DataLoader(Steps(), batch_size=16)

    def epoch(self):
        for x, y in self.loader:
            self.criterion(self.model(x), y).backward()
        for x, y in self.steps:
            self.criterion(self.flat(x), y).backward()
"""
        ),
        # numpy's `a.max(1)[0]` is the first row's maximum, not the maxima of the rows
        Valid(
            """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

head = nn.Linear(4, 1)
table = np.asarray(np.random.rand(6, 5))


def fit(x):
    best = torch.from_numpy(table.max(1)[0])
    return F.mse_loss(head(x), best)
"""
        ),
        # a trainer built twice in the file, with different models: which one `self.model` holds is not known
        Valid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Listings(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        feats, price = self.rows[i]
        return torch.tensor(feats, dtype=torch.float32), torch.tensor(float(price))


class Valuer(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.out = nn.Linear(k, 1)

    def forward(self, x):
        return self.out(x)


class Fitter:
    def __init__(self, model, loader, criterion):
        self.model = model
        self.loader = loader
        self.criterion = criterion

    def epoch(self):
        for x, y in self.loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()


def main(rows, wide_rows):
    Fitter(Valuer(8), DataLoader(Listings(rows), batch_size=16), nn.MSELoss()).epoch()
    Fitter(nn.Linear(8, 4), DataLoader(Listings(wide_rows), batch_size=16), nn.L1Loss()).epoch()
"""
        ),
        # a forward that reshapes its input before the head: only the head's last dimension is known
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, img):
        h = F.relu(self.conv(img))
        h = h.view(h.size(0), -1)
        h = self.fc(h)
        return h


model = Small()
out = model(torch.randn(1, 1, 8, 8))
loss = nn.MSELoss()(out, torch.arange(5).view(1, 5).float())
"""
        ),
        # the critic's forward binds its head's output and returns something else: a flattened value
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.hidden = nn.Linear(n, 64)
        self.value = nn.Linear(64, 1)

    def forward(self, obs):
        h = torch.relu(self.hidden(obs))
        v = self.value(h)
        v = v.flatten()
        return v


def update(obs, rewards, gamma: float):
    critic = Critic(3)
    return F.mse_loss(critic(obs), rewards.flatten() * gamma)
"""
        ),
        # the head's output only on one path: what `forward` returns is not known
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.value = nn.Linear(n, 1)
        self.values = nn.Linear(n, 1)

    def forward(self, obs, many=False):
        if many:
            v = self.values(obs).sum(-1)
        else:
            v = self.value(obs)
        return v


def update(obs, rewards):
    critic = Critic(3)
    return F.mse_loss(critic(obs, many=True), rewards.flatten())
"""
        ),
        # a settings field declared as a tensor (or not declared) leaves the target's shape unknown
        Valid(
            """
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Settings:
    weights: torch.Tensor
    discount = None


def update(obs, rewards, settings: Settings):
    head = nn.Linear(4, 1)
    config = Settings(torch.ones(8, 1))
    a = F.l1_loss(head(obs), rewards.flatten() * config.weights)
    b = F.l1_loss(head(obs), rewards.flatten() * config.discount)
    return a + b
"""
        ),
        # aligned: the prediction flattened like the target
        Valid(
            """
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import tyro


@dataclass
class Settings:
    discount: float = 0.99


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 1)

    def forward(self, obs):
        x = self.out(obs)
        return x


if __name__ == "__main__":
    settings = tyro.cli(Settings)
    critic = Critic()
    obs, rewards, later = torch.randn(16, 4), torch.randn(16, 1), torch.randn(16, 1)
    target = rewards.flatten() + settings.discount * torch.flatten(later)
    loss = F.mse_loss(critic(obs).flatten(), target)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(a + b)
print(c)
""",
            fixed="""
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(a + b[:, None])
print(c)
""",
            unsafe=True,
            line=6,
            col=5,
            message="[2, 2]",
        ),
        Invalid(
            """
import torch

x = torch.rand(5, 3)
bias = torch.rand(3)
total = ((x - bias) ** 2).mean()
""",
            fixed="""
import torch

x = torch.rand(5, 3)
bias = torch.rand(3)
total = ((x - bias[None, :]) ** 2).mean()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Critic(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.value = nn.Linear(features, 1)

    def loss(self, x, returns):
        values = self.value(x.view(-1, self.features))
        target = returns.view(-1)
        return (values - target).pow(2).mean()
""",
            fixed="""
import torch
import torch.nn as nn

class Critic(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.value = nn.Linear(features, 1)

    def loss(self, x, returns):
        values = self.value(x.view(-1, self.features))
        target = returns.view(-1)
        return (values - target[:, None]).pow(2).mean()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def pairwise(n: int):
    left = torch.rand(n, 1)
    right = torch.rand(n)
    diff = (left - right) ** 2
    return diff.mean()
""",
            fixed="""
import torch

def pairwise(n: int):
    left = torch.rand(n, 1)
    right = torch.rand(n)
    diff = (left - right[:, None]) ** 2
    return diff.mean()
""",
            unsafe=True,
            line=8,
        ),
        # losses that compare element-wise broadcast just the same
        Invalid(
            """
import torch
import torch.nn.functional as F

pred = torch.rand(8, 1)
target = torch.rand(8)
loss = F.mse_loss(pred, target)
""",
            fixed="""
import torch
import torch.nn.functional as F

pred = torch.rand(8, 1)
target = torch.rand(8)
loss = F.mse_loss(pred.squeeze(-1), target)
""",
            unsafe=True,
            message="[8, 8]",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(16, 1)
        self.criterion = nn.MSELoss()

    def training_step(self, x, y):
        return self.criterion(self.head(x), y.view(-1))
""",
            message="`self.criterion`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

def fit(xs, rows):
    head = nn.Linear(4, 1)
    ys = []
    for r in rows:
        ys.append(float(r[1]))
    y = torch.tensor(ys)
    return F.l1_loss(head(xs), y)
""",
        ),
        Invalid(
            """
import pandas as pd
import torch
import torch.nn as nn

df = pd.read_csv("prices.csv")
y = torch.tensor(df["price"].values, dtype=torch.float32)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
loss_fn = nn.SmoothL1Loss()

def step(x):
    return loss_fn(net(x), y)
""",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def loss(xs, labels):
    head = torch.nn.Linear(4, 1)
    y = torch.tensor([float(v) for v in labels])
    return F.huber_loss(head(xs), y, delta=0.5)
""",
        ),
        # the same broadcast through element-wise functions and methods
        Invalid(
            """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(torch.sub(a, b))
""",
            fixed="""
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(torch.sub(a, b[:, None]))
""",
            unsafe=True,
            message="[2, 2]",
        ),
        Invalid(
            """
import torch

x = torch.rand(5, 3)
w = torch.rand(3)
score = x.mul(w).pow(2).mean()
""",
            fixed="""
import torch

x = torch.rand(5, 3)
w = torch.rand(3)
score = x.mul(w[None, :]).pow(2).mean()
""",
            unsafe=True,
        ),
        # a model class of this file whose forward ends in nn.Linear(h, 1), against a list of numbers
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 16), nn.ReLU())
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        h = self.body(x)
        return self.head(h)


model = Net()
y = torch.tensor([float(v) for v in range(10)])


def step(x):
    return F.mse_loss(model(x), y)
""",
            message="[..., 1]",
        ),
        # a classification dataset's labels are one number per sample: [N] against the head's [N, 1]
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets

train_set = datasets.MNIST("data", train=True, download=True)
head = nn.Linear(784, 1)


def step(x):
    return F.mse_loss(head(x), train_set.targets.float())


def step_from_list(x):
    y = torch.tensor(train_set.targets)
    return F.l1_loss(head(x), y)
""",
            count=2,
            message="target of shape [?]",
        ),
        # the shapes come from how the model and the data are built
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Rent(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.hidden = nn.Linear(k, 16)
        self.last = nn.Linear(16, 1)

    def forward(self, x):
        return self.last(torch.relu(self.hidden(x)))

def train(opt_cls):
    rows = TensorDataset(torch.rand(500, 9), torch.rand(500))
    model = Rent(9)
    opt = opt_cls(model.parameters())
    for inputs, rent in DataLoader(rows, batch_size=50, shuffle=True):
        guess = model(inputs)
        err = ((guess - rent) ** 2).mean()
        opt.zero_grad()
        err.backward()
        opt.step()
""",
            fixed="""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Rent(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.hidden = nn.Linear(k, 16)
        self.last = nn.Linear(16, 1)

    def forward(self, x):
        return self.last(torch.relu(self.hidden(x)))

def train(opt_cls):
    rows = TensorDataset(torch.rand(500, 9), torch.rand(500))
    model = Rent(9)
    opt = opt_cls(model.parameters())
    for inputs, rent in DataLoader(rows, batch_size=50, shuffle=True):
        guess = model(inputs)
        err = ((guess - rent[:, None]) ** 2).mean()
        opt.zero_grad()
        err.backward()
        opt.step()
""",
            unsafe=True,
            message="shapes [?, 1] and [?]",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
stream = DataLoader(TensorDataset(torch.randn(90, 5), torch.randn(90)), batch_size=9)
for step, (feats, goal) in enumerate(stream):
    loss = F.l1_loss(net(feats), goal)
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
stream = DataLoader(TensorDataset(torch.randn(90, 5), torch.randn(90)), batch_size=9)
for step, (feats, goal) in enumerate(stream):
    loss = F.l1_loss(net(feats).squeeze(-1), goal)
""",
            unsafe=True,
            message="input of shape [?, 1] with target of shape [?]",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Value(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(4, 1)

    def forward(self, s):
        return self.v(s)

critic = Value()
criterion = nn.SmoothL1Loss()
memory = TensorDataset(torch.rand(32, 4), torch.rand(32))
for s, ret in DataLoader(memory, batch_size=4):
    loss = criterion(critic(s), ret)
""",
            fixed="""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Value(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(4, 1)

    def forward(self, s):
        return self.v(s)

critic = Value()
criterion = nn.SmoothL1Loss()
memory = TensorDataset(torch.rand(32, 4), torch.rand(32))
for s, ret in DataLoader(memory, batch_size=4):
    loss = criterion(critic(s).squeeze(-1), ret)
""",
            unsafe=True,
            message="`criterion`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class Depth(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, padding=1)
        self.dec = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, img):
        return self.dec(F.relu(self.enc(img)))

def fit():
    scenes = TensorDataset(torch.rand(12, 3, 24, 24), torch.rand(12, 24, 24))
    model = Depth()
    for img, depth in DataLoader(scenes, batch_size=3):
        loss = F.mse_loss(model(img), depth)
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class Depth(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, padding=1)
        self.dec = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, img):
        return self.dec(F.relu(self.enc(img)))

def fit():
    scenes = TensorDataset(torch.rand(12, 3, 24, 24), torch.rand(12, 24, 24))
    model = Depth()
    for img, depth in DataLoader(scenes, batch_size=3):
        loss = F.mse_loss(model(img).squeeze(1), depth)
""",
            unsafe=True,
            message="[?, 1, ?, ?]",
        ),
        # a dataset class whose __getitem__ returns one number per sample: the batch of targets is [B]
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Houses(Dataset):
    def __init__(self, features, prices):
        self.features, self.prices = features, prices

    def __len__(self):
        return len(self.features)

    def __getitem__(self, k):
        return self.features[k], torch.tensor(float(self.prices[k]))


def fit(features, prices):
    head = nn.Linear(6, 1)
    for xb, yb in DataLoader(Houses(features, prices), batch_size=8):
        loss = F.mse_loss(head(xb), yb)
        loss.backward()
""",
            message="with target of shape [?]",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Houses(Dataset):
    def __init__(self, features, prices):
        self.features, self.prices = features, prices

    def __len__(self):
        return len(self.features)

    def __getitem__(self, k):
        return self.features[k], self.prices[k].item()


def fit(features, prices):
    head = nn.Linear(6, 1)
    for xb, yb in DataLoader(Houses(features, prices), batch_size=8):
        loss = F.mse_loss(head(xb), yb)
        loss.backward()
""",
            message="input of shape [..., 1]",
        ),
        # a trainer class: its model and its loader held as attributes, used in a method
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, rgb):
        return self.out(rgb)


class Runner:
    def __init__(self, scenes, depths):
        self.net = DepthNet()
        self.opt = torch.optim.Adam(self.net.parameters())
        self.batches = DataLoader(TensorDataset(torch.rand(16, 3, 24, 24), torch.rand(16, 24, 24)), batch_size=4)

    def epoch(self):
        for rgb, depth in self.batches:
            loss = F.smooth_l1_loss(self.net(rgb), depth)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, rgb):
        return self.out(rgb)


class Runner:
    def __init__(self, scenes, depths):
        self.net = DepthNet()
        self.opt = torch.optim.Adam(self.net.parameters())
        self.batches = DataLoader(TensorDataset(torch.rand(16, 3, 24, 24), torch.rand(16, 24, 24)), batch_size=4)

    def epoch(self):
        for rgb, depth in self.batches:
            loss = F.smooth_l1_loss(self.net(rgb).squeeze(1), depth)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
""",
            unsafe=True,
            message="input of shape [?, 1, ?, ?] with target of shape [?, 24, 24]",
        ),
        # a trainer: its model, criterion and loader held as attributes; the dataset class returns one
        # number per sample, so the loader's targets are [B] in the training and the validation loop alike
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Listings(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        feats, price = self.rows[i]
        return torch.tensor(feats, dtype=torch.float32), torch.tensor(float(price))


class Valuer(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(k, 32), nn.ReLU())
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        return self.out(self.body(x))


class Fitter:
    def __init__(self, train_rows, val_rows):
        self.model = Valuer(8)
        self.criterion = nn.MSELoss()
        self.train_loader = DataLoader(Listings(train_rows), batch_size=16, shuffle=True)
        self.val_loader = DataLoader(Listings(val_rows), batch_size=64)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def epoch(self):
        for x, y in self.train_loader:
            loss = self.criterion(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
        with torch.no_grad():
            for x, y in self.val_loader:
                print(self.criterion(self.model(x), y).item())
""",
            count=2,
            message="`self.criterion` compares input of shape [..., 1] with target of shape [?]",
        ),
        # a depth map read as one band per pixel ([H, W]) against a one-channel convolution ([B, 1, H, W])
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Scenes(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        rgb_path, depth_path = self.items[i]
        rgb = np.asarray(Image.open(rgb_path).convert("RGB"), dtype=np.float32)
        depth = np.asarray(Image.open(depth_path).convert("F"))
        return torch.from_numpy(rgb).permute(2, 0, 1), torch.from_numpy(depth)


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.head(torch.relu(self.enc(x)))


class Runner:
    def __init__(self, items):
        self.model = DepthNet()
        self.criterion = nn.SmoothL1Loss()
        self.loader = DataLoader(Scenes(items), batch_size=4, shuffle=True)

    def epoch(self):
        for rgb, depth in self.loader:
            pred = self.model(rgb)
            loss = self.criterion(pred, depth)
            loss.backward()
""",
            fixed="""
import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Scenes(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        rgb_path, depth_path = self.items[i]
        rgb = np.asarray(Image.open(rgb_path).convert("RGB"), dtype=np.float32)
        depth = np.asarray(Image.open(depth_path).convert("F"))
        return torch.from_numpy(rgb).permute(2, 0, 1), torch.from_numpy(depth)


class DepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.head(torch.relu(self.enc(x)))


class Runner:
    def __init__(self, items):
        self.model = DepthNet()
        self.criterion = nn.SmoothL1Loss()
        self.loader = DataLoader(Scenes(items), batch_size=4, shuffle=True)

    def epoch(self):
        for rgb, depth in self.loader:
            pred = self.model(rgb)
            loss = self.criterion(pred.squeeze(1), depth)
            loss.backward()
""",
            unsafe=True,
            message="input of shape [?, 1, ?, ?] with target of shape [?, ?, ?]",
        ),
        Invalid(
            """
import cv2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Masks(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        photo = cv2.imread(self.pairs[i][0])
        mask = cv2.imread(self.pairs[i][1], cv2.IMREAD_GRAYSCALE)
        return torch.from_numpy(photo).permute(2, 0, 1).float() / 255, torch.from_numpy(mask).float() / 255


seg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))


def fit(pairs):
    for photo, mask in DataLoader(Masks(pairs), batch_size=8):
        F.l1_loss(torch.sigmoid(seg(photo)), mask).backward()
""",
            fixed="""
import cv2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Masks(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        photo = cv2.imread(self.pairs[i][0])
        mask = cv2.imread(self.pairs[i][1], cv2.IMREAD_GRAYSCALE)
        return torch.from_numpy(photo).permute(2, 0, 1).float() / 255, torch.from_numpy(mask).float() / 255


seg = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))


def fit(pairs):
    for photo, mask in DataLoader(Masks(pairs), batch_size=8):
        F.l1_loss(torch.sigmoid(seg(photo)).squeeze(1), mask).backward()
""",
            unsafe=True,
            message="input of shape [?, 1, ?, ?] with target of shape [?, ?, ?]",
        ),
        # one Q-value picked per row ([B, 1]) against the next states' best values ([B])
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

q_net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
frozen = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
replay = TensorDataset(torch.rand(256, 4), torch.randint(0, 2, (256,)), torch.rand(256), torch.rand(256, 4))
for s, a, r, s_next in DataLoader(replay, batch_size=32, shuffle=True):
    q = q_net(s).gather(1, a.unsqueeze(1))
    with torch.no_grad():
        goal = r + 0.99 * frozen(s_next).max(1)[0]
    F.smooth_l1_loss(q, goal).backward()
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

q_net = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
frozen = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 2))
replay = TensorDataset(torch.rand(256, 4), torch.randint(0, 2, (256,)), torch.rand(256), torch.rand(256, 4))
for s, a, r, s_next in DataLoader(replay, batch_size=32, shuffle=True):
    q = q_net(s).gather(1, a.unsqueeze(1))
    with torch.no_grad():
        goal = r + 0.99 * frozen(s_next).max(1)[0]
    F.smooth_l1_loss(q.squeeze(-1), goal).backward()
""",
            unsafe=True,
            message="input of shape [?, 1] with target of shape [?]",
        ),
        # loops that bind the same names, one after the other: each read is the loop around it (not one
        # whose label an inner loop rebinds)
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Steps(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return torch.rand(8), float(i)


head = nn.Linear(8, 1)
crit = nn.MSELoss()


def run(windows):
    for x, y in DataLoader(Steps(), batch_size=16):
        crit(head(x), y.unsqueeze(1)).backward()
    for x, y in DataLoader(Steps(), batch_size=16):
        for y in windows:
            pass
        crit(head(x), y).backward()
    for x, y in DataLoader(Steps(), batch_size=16):
        crit(head(x), y).backward()
""",
            line=27,
            message="input of shape [?, 1] with target of shape [?]",
            fixed="""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Steps(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return torch.rand(8), float(i)


head = nn.Linear(8, 1)
crit = nn.MSELoss()


def run(windows):
    for x, y in DataLoader(Steps(), batch_size=16):
        crit(head(x), y.unsqueeze(1)).backward()
    for x, y in DataLoader(Steps(), batch_size=16):
        for y in windows:
            pass
        crit(head(x), y).backward()
    for x, y in DataLoader(Steps(), batch_size=16):
        crit(head(x).squeeze(-1), y).backward()
""",
            unsafe=True,
        ),
        # the trainer is handed its model, loader and criterion: its one construction in the file says which
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Listings(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        feats, price = self.rows[i]
        return torch.tensor(feats, dtype=torch.float32), torch.tensor(float(price))


class Valuer(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.out = nn.Linear(k, 1)

    def forward(self, x):
        return self.out(x)


class Fitter:
    def __init__(self, model, loader, criterion):
        self.model = model
        self.loader = loader
        self.criterion = criterion

    def epoch(self):
        for x, y in self.loader:
            loss = self.criterion(self.model(x), y)
            loss.backward()


def main(rows):
    fitter = Fitter(Valuer(8), DataLoader(Listings(rows), batch_size=16), nn.MSELoss())
    fitter.epoch()
""",
            message="`self.criterion` compares input of shape [..., 1] with target of shape [?]",
        ),
        # the critic's forward binds its head's output before returning it; a flattened target
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.hidden = nn.Linear(n, 64)
        self.value = nn.Linear(64, 1)

    def forward(self, obs):
        h = torch.relu(self.hidden(obs))
        h = self.value(h)
        return h


def update(obs, rewards, gamma: float):
    critic = Critic(3)
    return F.mse_loss(critic(obs), rewards.flatten() * gamma)
""",
            line=21,
            message="`mse_loss` compares input of shape [..., 1] with target of shape [?]",
        ),
        # a discount read from a settings dataclass (`discount: float`) keeps the target 1-D
        Invalid(
            """
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Settings:
    discount: float = 0.99


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 1)

    def forward(self, obs):
        return self.out(obs)


settings = Settings()
critic = Critic()


def update(obs, rewards, later):
    target = rewards.flatten() + settings.discount * torch.flatten(later)
    return nn.SmoothL1Loss()(critic(obs), target)
""",
            line=29,
        ),
        # the settings parsed from the command line by tyro, the critic's output bound before the return
        Invalid(
            """
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import tyro


@dataclass
class Settings:
    discount: float = 0.99
    horizon: int = 5


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(4, 1)

    def forward(self, obs):
        x = self.out(obs)
        return x


if __name__ == "__main__":
    settings = tyro.cli(Settings)
    critic = Critic()
    obs, rewards, later = torch.randn(16, 4), torch.randn(16, 1), torch.randn(16, 1)
    target = rewards.flatten() + (1 - settings.discount) * later.view(-1) / settings.horizon
    loss = F.mse_loss(critic(obs), target)
""",
            line=31,
            message="input of shape [..., 1] with target of shape [16]",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        # every loss module's name ends in "Loss" (an alias is imported under that name): a file that
        # never spells it builds none, and its calls need no look at what their callee was assigned
        self._spells_loss = "Loss" in ctx.source

    def visit_Call(self, node: cst.Call) -> None:
        loss = self._loss(node)
        if loss is not None:
            self.report(node, self._loss_message(loss), fix=self._loss_fix(loss))
            return
        operand = self._reduced(node)
        if operand is None:
            return
        found = self._find(operand, 0)
        if found is None:
            return
        self.report(node, self._message(node, found), fix=self._fix(found))

    # -- losses ---------------------------------------------------------------------------------
    def _loss(self, call: cst.Call) -> Optional[LossBroadcast]:
        """``F.mse_loss(input, target)`` / ``nn.MSELoss()(input, target)`` whose operands' shapes are known
        to broadcast against each other."""
        ctx = self.ctx
        if any(a.star for a in call.args):
            return None
        if ctx.names.matches(call.func, LOSS_FUNCS):
            pass
        elif self._spells_loss and not ctx.names.qualified_names(call.func) and self._loss_module(call.func):
            pass
        else:
            return None
        first, second = arg(call, 0, "input"), arg(call, 1, "target")
        if first is None or second is None:
            return None
        a, b = shape_of(ctx, first.value), shape_of(ctx, second.value)
        if a is None or b is None or not loss_broadcasts(a, b):
            return None
        return LossBroadcast(call, first.value, second.value, a, b)

    def _loss_module(self, func: cst.BaseExpression) -> bool:
        """``nn.MSELoss()(...)``, or a name every assignment of which builds one of the element-wise loss
        modules (a name that is a cross-entropy loss on another branch is not followed)."""
        ctx = self.ctx
        if isinstance(func, cst.Call):
            return ctx.names.matches(func.func, LOSS_MODULES)
        values = ctx.names.values_before(func)
        if isinstance(func, cst.Attribute):
            values = [held_value(ctx, v) for v in values]  # `self.criterion = criterion` from the constructor
        return bool(values) and all(
            isinstance(v, cst.Call) and ctx.names.matches(v.func, LOSS_MODULES) for v in values
        )

    def _loss_message(self, loss: LossBroadcast) -> str:
        name = self.ctx.code(loss.call.func).strip()
        if self.ctx.names.matches(loss.call.func, LOSS_FUNCS):
            name = name.rsplit(".", 1)[-1]
        a, b = loss.input_shape, loss.target_shape
        result = broadcast(a, b)
        into = f" into {result}" if result is not None and result.rank is not None else ""
        k = _extra_singleton(a, b)
        k = -1 if k is None or k == (a.rank or 0) - 1 else k
        return (
            f"`{name}` compares input of shape {a} with target of shape {b} element-wise: they broadcast{into} "
            f"and every prediction is compared with every target; make the shapes equal "
            f"(`squeeze({k})` the input or `unsqueeze({k})` the target)"
        )

    def _loss_fix(self, loss: LossBroadcast) -> Optional[Fix]:
        """``[n, 1]`` input against an ``[n]`` target (ranks both known): drop the input's trailing
        singleton, the edit that makes the loss compare each prediction with its own target."""
        a, b = loss.input_shape, loss.target_shape
        k = _extra_singleton(a, b)
        if k is None or b.rank == 0:
            return None
        spelled = -1 if k == (a.rank or 0) - 1 else k
        code = self.ctx.code(loss.input).strip()
        if not isinstance(loss.input, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not loss.input.lpar:
            code = f"({code})"
        new = self.ctx.parse_expression(f"{code}.squeeze({spelled})")
        what = "trailing singleton dimension" if spelled == -1 else f"singleton dimension {k}"
        return self.make_fix(f"Drop the input's {what} (`squeeze({spelled})`)").replace(loss.input, new)

    # -- detection ------------------------------------------------------------------------------
    def _reduced(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The expression a dim-less reduction reduces, or None."""
        ctx = self.ctx
        if keyword_arg(call, "dim") is not None or keyword_arg(call, "axis") is not None:
            return None
        if ctx.names.matches(call.func, REDUCTION_FUNCS):
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) != 1 or positional[0].star:
                return None
            return positional[0].value
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in REDUCTIONS
            and not any(a.keyword is None for a in call.args)
            and ctx.names.imports_torch
            and not ctx.names.qualified_names(func.value)
        ):
            return func.value
        return None

    def _find(self, expr: cst.BaseExpression, depth: int) -> Optional[Broadcast]:
        if depth > 6:
            return None
        ctx = self.ctx
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, BINOPS):
            if isinstance(expr.operator, cst.Power) and is_number(expr.right):
                return self._find(expr.left, depth + 1)
            found = self._pair(expr)
            if found is not None:
                return found
            return self._find(expr.left, depth + 1) or self._find(expr.right, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self._find(expr.expression, depth + 1)
        operands = self._operands(expr) if isinstance(expr, cst.Call) else None
        if operands is not None:
            # `torch.sub(a, b)`, `a.mul(b)`: the same broadcast as the operator
            found = self._pair(expr)
            if found is not None:
                return found
            return self._find(operands[0], depth + 1) or self._find(operands[1], depth + 1)
        if isinstance(expr, cst.Name):
            # `c = a + b` ... `c.sum()`: follow a variable assigned once
            values = ctx.names.values_before(expr)
            if len(values) == 1 and isinstance(values[0], cst.BinaryOperation):
                return self._find(values[0], depth + 1)
            return None
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ELEMENTWISE and not ctx.names.qualified_names(
                func.value
            ):
                return self._find(func.value, depth + 1)
            if ctx.names.matches(func, frozenset("torch." + n for n in ELEMENTWISE)):
                first = arg(expr, 0, "input")
                return self._find(first.value, depth + 1) if first is not None else None
        return None

    def _operands(self, op: cst.BaseExpression) -> Optional[tuple]:
        """(left, right) of `a + b`, `torch.sub(a, b)` or `a.mul(b)`."""
        if isinstance(op, cst.BinaryOperation):
            return op.left, op.right
        if isinstance(op, cst.Call):
            ctx = self.ctx
            pos = [a for a in op.args if a.keyword is None and not a.star]
            if len(pos) != len(op.args):
                return None
            if ctx.names.matches(op.func, BINARY_FUNCS) and len(pos) == 2:
                return pos[0].value, pos[1].value
            func = op.func
            if (isinstance(func, cst.Attribute) and func.attr.value in BINARY_METHODS and len(pos) == 1
                    and not ctx.names.qualified_names(func.value) and ctx.names.imports_torch):
                return func.value, pos[0].value
        return None

    def _pair(self, op: cst.BaseExpression) -> Optional[Broadcast]:
        operands = self._operands(op)
        if operands is None:
            return None
        left, right = operands
        if is_number(left) or is_number(right):
            return None
        a, b = shape_of(self.ctx, left), shape_of(self.ctx, right)
        if a is None or b is None or not ranks_differ(a, b):
            return None
        if a.rank == 0 or b.rank == 0:
            return None  # a scalar tensor broadcasts harmlessly
        low_is_left = a.rank is not None and (b.rank is None or a.rank < b.rank)
        low, low_shape, high_shape = (left, a, b) if low_is_left else (right, b, a)
        if low_shape.rank is None:
            return None
        if low_shape.rank is not None and all(d == 1 for d in low_shape.head):
            return None  # a single value broadcast everywhere
        return Broadcast(op, low, low_shape, high_shape, broadcast(a, b))

    def _message(self, call: cst.Call, found: Broadcast) -> str:
        code = self.ctx.code
        op = code(found.op).strip()
        if len(op) > 40:
            op = "the operands"
        else:
            op = f"`{op}`"
        operands = self._operands(found.op)
        left, right = (found.low_shape, found.high_shape) if operands and operands[0] is found.low else (
            found.high_shape, found.low_shape
        )
        result = f" to {found.result}" if found.result is not None else ""
        name = code(call.func).strip().rsplit(".", 1)[-1]
        return (
            f"`{name}` without `dim` over {op}, which broadcasts shapes {left} and {right}{result}: "
            f"every element of the broadcast result is reduced; pass `dim` or make the alignment explicit"
        )

    # -- fix ------------------------------------------------------------------------------------
    def _fix(self, found: Broadcast) -> Optional[Fix]:
        low, high = found.low_shape, found.high_shape
        r = low.rank
        assert r is not None
        extra = (high.rank if high.rank is not None else high.min_rank) - r
        if extra <= 0:
            return None
        if _stretches_other(low, high) and _fits_leading(low, high):
            index = ", ".join([":"] * r + ["None"] * extra)
            title = "Align the lower-rank operand with the leading dimensions (changes the result)"
        else:
            index = ", ".join(["None"] * extra + [":"] * r)
            title = "Write out the broadcast alignment"
        code = self.ctx.code(found.low).strip()
        if not isinstance(found.low, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not found.low.lpar:
            code = f"({code})"
        new = self.ctx.parse_expression(f"{code}[{index}]")
        return self.make_fix(title).replace(found.low, new)


def _extra_singleton(a: Shape, b: Shape) -> Optional[int]:
    """The one dimension of ``a`` known to be 1 whose removal leaves ``b``'s rank and sizes that agree
    with ``b``'s (``[n, 1]`` against ``[n]``: 1; ``[B, 1, H, W]`` against ``[B, H, W]``: 1); None when
    the ranks are not both known or no such single dimension exists."""
    if a.rank is None or b.rank is None or a.rank != b.rank + 1:
        return None
    found = [
        k for k, d in enumerate(a.head)
        if d == 1 and all(x is None or y is None or x == y for x, y in zip(a.head[:k] + a.head[k + 1:], b.head))
    ]
    if not found:
        return None
    if len(found) > 1 and found[-1] != a.rank - 1:
        return None
    return found[-1]


def _stretches_other(low: Shape, high: Shape) -> bool:
    """Whether right-aligned broadcasting expands a size-1 dimension of ``high`` to a size of ``low``."""
    r = low.rank or 0
    for k in range(1, r + 1):
        known, size = high.size(-k)
        if known and size == 1 and low.head[-k] != 1:
            return True  # an unknown size counts: it is 1 only by accident
    return False


def _fits_leading(low: Shape, high: Shape) -> bool:
    """Whether ``low`` matches the leading dimensions of ``high`` (sizes equal, or 1)."""
    for k, d in enumerate(low.head):
        known, size = high.size(k)
        if not known:
            return False
        if d is not None and size is not None and d != size and d != 1 and size != 1:
            return False
    return True
