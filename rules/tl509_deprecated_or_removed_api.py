from __future__ import annotations

import re

from typing import List, Optional

import libcst as cst

from torchlint.fixes.toolkit import in_place_of
from torchlint.families.api.rewrite import UNKNOWN, literal_value, torch_in_scope
from torchlint.analysis.definitions import built_values, callers_arguments, function_returns, strip_moves
from torchlint.analysis.mode_layers import number
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.analysis.training import is_detached
from torchlint.analysis.walk import iter_nodes
from torchlint.rule import Fix, Invalid, LintRule, Valid
from torchlint.rules._deprecations import (
    BY_NAME,
    ELEMENTWISE_MEAN_SINCE,
    LEGACY_REDUCTION_ARGS,
    LEGACY_REDUCTION_SINCE,
    PRETRAINED_ARGS,
    PRETRAINED_SINCE,
    RETAIN_VARIABLES,
    ZERO_DIM_INDEX,
    LOADER_ITER_NEXT_REMOVED,
    Deprecation,
    version,
)



#: torch functions that build a new tensor from sizes, numbers or arrays: no autograd graph, and no grad
#: required unless ``requires_grad=True`` is passed
_NEW_TENSOR = frozenset({"tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
                         "randperm", "arange", "linspace", "logspace", "eye", "Tensor", "FloatTensor",
                         "LongTensor", "BoolTensor", "ByteTensor", "IntTensor", "DoubleTensor", "HalfTensor"})
#: tensor methods whose result needs grad only when their receiver does
_KEEPS_GRAPH = frozenset({"cuda", "cpu", "to", "float", "double", "half", "long", "int", "bool", "byte", "view",
                          "reshape", "squeeze", "unsqueeze", "permute", "transpose", "t", "contiguous", "clone",
                          "type", "expand", "repeat", "flatten"})


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _graph_free(ctx, expr: cst.BaseExpression, depth: int) -> bool:
    """Whether ``expr`` is a tensor that neither carries an autograd graph nor requires grad, by
    construction: built by a torch factory (``torch.zeros(...)``, ``torch.LongTensor(...)``,
    ``torch.from_numpy(a)``) without ``requires_grad=True``, taken off the graph (``x.data``,
    ``x.detach()``), a cast, move or reshape of such a tensor, or a local name every assignment before
    gives one.  ``Variable`` of such a tensor is the tensor itself."""
    if is_detached(ctx, expr):
        return True
    if isinstance(expr, cst.Call):
        if any(a.keyword is not None and a.keyword.value == "requires_grad" for a in expr.args):
            return False
        names = ctx.names.qualified_names_at(expr.func)
        if any(n.startswith("torch.") and n.count(".") == 1 and n.split(".")[1] in _NEW_TENSOR for n in names):
            return True
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _KEEPS_GRAPH and not names:
            return _graph_free(ctx, func.value, depth)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return all(isinstance(side, (cst.Integer, cst.Float)) or _graph_free(ctx, side, depth)
                   for side in (expr.left, expr.right))
    if isinstance(expr, cst.Name) and depth > 0:
        values = ctx.names.bound_values(expr)
        return bool(values) and all(v is not None and _graph_free(ctx, v, depth - 1) for v in values)
    return False


class DeprecatedOrRemovedApi(LintRule):
    """
    ## What it does
    Finds calls of torch APIs that are deprecated or already removed in the torch version the project
    targets (option `target-torch`), from one table with the version that deprecated and the version
    that removed each entry: the old linear-algebra functions (`torch.solve`, `torch.symeig`,
    `torch.lstsq`, `torch.eig`, `torch.matrix_rank`, `torch.chain_matmul`, `torch.qr`, `torch.cholesky`,
    `torch.svd`, `torch.norm`, ...), `torch.cuda.amp.autocast`/`GradScaler` (now `torch.amp`),
    `functorch.*` (now `torch.func`), `F.upsample`, `F.sigmoid`/`F.tanh` (only where the project targets
    torch < 2.0: torch took their deprecation back and keeps them as aliases), the `torch.nn.init` names
    without the trailing underscore, `Variable(x)`, the loss arguments `size_average=`/`reduce=`
    (now `reduction=`), torchvision's `pretrained=` (now `weights=`; also `resnet50(True)`, the flag given
    positionally), `nn.NLLLoss2d` (now `nn.NLLLoss`), `loss.backward(retain_variables=True)` (now
    `retain_graph=`), `loss.data[0]` / `loss[0]` on a 0-d loss (now `loss.item()`), `iter(loader).next()`
    on a `DataLoader` (built here, or passed by every call of the function that iterates it; also
    `loader.__iter__().next()`: its iterator lost the Python 2 `next` method in torch 1.13, now
    `next(iter(loader))`)
    and private spellings of public functions (`torch.utils.data._utils.collate.default_collate`).

    A 0-d loss is a value built by a torch loss that reduces the batch (`criterion(out, y)` with
    `criterion = nn.CrossEntropyLoss()` or `nn.MSELoss(reduction="sum")`, `F.mse_loss(...)`), or, read
    through `.data`, a full `.sum()` / `.mean()` (or `torch.sum(t)`) of a tensor expression
    (`(conf > 0.5).sum().data[0]`), such values added or scaled by a number (`bce + kld`, `loss / len(x)`),
    and what every `return` of a function of the file gives back (`loss = vae_loss(recon, x, mu, logvar)`);
    `x.data[0]` of any other tensor is not reported. Calls in
    a branch chosen by the torch version (a version comparison, `if hasattr(torch, "amp"):`, an `except`
    fallback) are not reported; `hasattr` of an object of the code's own (`hasattr(m, "weight")`) is no
    such check. A `backward` call is not reported when
    the file defines a `backward` method that takes `retain_variables` itself.

    ## Why is this bad?
    A removed function fails with `AttributeError` as soon as the project upgrades torch; a deprecated
    one warns on every call and will be removed. Tutorials and older cookbooks still use many of them:
    the PyTorch Cookbook (Zhang Hao, 2019) wraps tensors in `Variable`, and its 2024 revision moved its
    mixed-precision snippet to the new `torch.amp` spelling. The migration is often not a rename:
    `torch.solve(B, A)` became `torch.linalg.solve(A, B)` with the arguments swapped, and `torch.svd`
    returns `V` where `torch.linalg.svd` returns `Vh`, so each entry states what to use instead.

    ## Example
    ```python
    scaler = torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast():
        loss = F.nll_loss(out, y, size_average=False)
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda"):
        loss = F.nll_loss(out, y, reduction="sum")
    ```

    ## Fix safety
    The fix is applied only where the new API is a drop-in replacement, and is then safe: renames
    with the same arguments (`torch.ger` → `torch.outer`, `functorch.vmap` → `torch.func.vmap`,
    `F.sigmoid` → `torch.sigmoid`, `nn.init.xavier_uniform` → `nn.init.xavier_uniform_`, which was
    already in place), the device moved into the first argument (`torch.cuda.amp.autocast(...)` →
    `torch.amp.autocast("cuda", ...)`), `torch.chain_matmul(a, b)` → `torch.linalg.multi_dot([a, b])`,
    `Variable(x)` → `x` where `x` is a tensor that carries no graph by construction (a torch factory's
    result, `x.data`, a cast or move of one: since torch 0.4 `Variable(x)` returns `x` detached, so the
    edit is unsafe where `x` may carry a graph or require grad, and an operand is kept in parentheses:
    `Variable(a * k).view(-1)` → `(a * k).view(-1)`), and literal
    `size_average`/`reduce` values turned into the `reduction` they always meant, and
    `reduction="elementwise_mean"` (the name of the mean reduction before torch 1.0) into `reduction="mean"`. It is offered only
    when the file imports `torch` under that name, and not when an argument whose meaning changed is
    passed (`torch.qr(a, some=False)`). `pretrained=False` becomes `weights=None` (safe);
    `pretrained=True` becomes `weights="DEFAULT"`, which is unsafe: the default weights of some models
    are newer than the ones `pretrained=True` loaded, and results change; `resnet50(True)` is fixed the
    same way when the flag is the only positional argument. `retain_variables=` becomes `retain_graph=`
    (the same flag renamed), `nn.NLLLoss2d` becomes `nn.NLLLoss` (torch's own warning calls it a drop-in
    replacement), `loss.data[0]` becomes `loss.item()` (the number the old code read; safe) and
    `it.next()` becomes `next(it)` (the method the alias stood for; safe). Other entries get no fix.

    ## Options
    - `target-torch` (default `"auto"`): the oldest torch the project supports. Entries deprecated
      after it are not reported (their replacement may not exist there). `"auto"` reads the lower
      bound of the torch requirement the project declares (`pyproject.toml`, PEP 621 or Poetry,
      `setup.cfg`, `setup.py`, `environment.yml`, `requirements*.txt`, `requirements/*.txt`), else 2.6;
      `--show-settings` names the file it came from.

    TorchFix: TOR001, TOR004 (removed), TOR101, TOR103 (deprecated), TOR104, TOR105 (non-public),
    TOR201 (`pretrained=`) and TOR202 (`v2.ToTensor`) map to this rule.

    ## References
    - PyTorch release notes: 0.2.0 (`retain_variables` renamed `retain_graph`), 0.4.0 (Tensor and
      Variable merged, 0-d tensors: "use `loss.item()`"; `NLLLoss` takes K-dimensional input), 1.0.0
      (indexing a 0-d tensor is an error): <https://github.com/pytorch/pytorch/releases>
    - [torchvision 0.13 multi-weight API](https://pytorch.org/vision/stable/models.html) (`pretrained` → `weights`)
    - [torch.linalg](https://pytorch.org/docs/stable/linalg.html)
    - [Automatic mixed precision, torch.amp](https://pytorch.org/docs/stable/amp.html)
    - [Migrating from functorch to torch.func](https://pytorch.org/docs/stable/func.migrating.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL509"
    NAME = "deprecated-or-removed-api"
    MESSAGE = "Deprecated or removed torch API"
    FIX_TITLE = "Migrate to the replacement API"
    TRIGGERS = ("torch",)
    OPTIONS = {"target-torch": TARGET_TORCH}

    VALID = [
        # near misses: a tutorial's own `backward(retain_variables=...)`, indexing a batch or a per-sample
        # loss, a pandas-style `.sum()[0]`, a torchvision helper taking its flag second, `weights=`
        """
import torch
import torch.nn as nn
import torchvision
from torchvision.models.vgg import make_layers, cfgs

class StyleLoss(nn.Module):
    def forward(self, x, target):
        self.loss = ((x - target) ** 2).mean()
        return x

    def backward(self, retain_variables=True):
        self.loss.backward(retain_variables=retain_variables)
        return self.loss

per_sample = nn.CrossEntropyLoss(reduction="none")

def f(x, y, table, flag):
    first = x.data[0]
    worst = per_sample(x, y)[0]
    column = table.sum()[0]
    features = make_layers(cfgs["A"], False)
    return first, worst, column, features, torchvision.models.resnet18(weights=None), torchvision.models.resnet18(flag)
""",
        # the old API only where a version flag says the new one is missing
        Valid(
            """
import torch

_TORCH_GREATER_EQUAL_2_4 = True


def make_scaler():
    return torch.amp.GradScaler("cuda") if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()
""",
            options={"target-torch": "2.6"},
        ),
        # torch 2.0 took back the deprecation of F.sigmoid and F.tanh: aliases that no longer warn
        Valid(
            """
import torch.nn.functional as F


def gate(x, h):
    return F.sigmoid(x) * F.tanh(h)
"""
        ),
        Valid(
            """
import torch

def solve(A, B):
    return torch.linalg.solve(A, B), torch.outer(A[0], B[0])
"""
        ),
        Valid(
            """
import torch

scaler = torch.amp.GradScaler("cuda")

def step(model, x):
    with torch.amp.autocast("cuda"):
        return model(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F

def loss(out, y):
    return F.nll_loss(out, y, reduction="sum") + torch.sigmoid(out).mean()
"""
        ),
        Valid(
            """
import torch

with torch.cuda.amp.autocast():
    pass
""",
            options={"target-torch": "2.3"},
        ),
        Valid(
            """
import numpy as np

def norm(x):
    return np.linalg.norm(x), np.linalg.solve(x, x)
"""
        ),
        Valid(
            """
import torchvision

model = torchvision.models.resnet18(weights=None)
"""
        ),
        Valid(
            """
from torch.autograd import Variable

def f(x):
    return Variable(x, volatile=True)
"""
        ),
        Valid(
            """
import torch

try:
    from torch.func import vmap
except ImportError:
    from functorch import vmap

def make_scaler():
    if hasattr(torch, "amp"):
        return torch.amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler() if torch.__version__ < "2.3" else None

def batched(f, x):
    return vmap(f)(x)
"""
        ),
        # an object of the file's own class with a `next` method, and a project on torch 1.12 (the alias was
        # still there)
        """
class Cycle:
    def __init__(self, items):
        self.items, self.at = items, 0

    def next(self):
        self.at = (self.at + 1) % len(self.items)
        return self.items[self.at]


batches = iter([Cycle([1, 2])])
print(Cycle([3, 4]).next())
""",
        Valid(
            """
import torch
from torch.utils.data import DataLoader

loader = DataLoader(list(range(6)), batch_size=2)
print(iter(loader).next())
""",
            options={"target-torch": "1.12"},
        ),
        # the function's iterable comes from its only caller, an object of the file with its own `next()`
        Valid(
            """
class Cycle:
    def __init__(self, items):
        self.items = list(items)
        self.i = 0

    def __iter__(self):
        return self

    def next(self):
        self.i = (self.i + 1) % len(self.items)
        return self.items[self.i]


def draw(source, steps):
    it = iter(source)
    return [it.next() for _ in range(steps)]


draw(Cycle([1, 2, 3]), 4)
"""
        ),
        # the name torch 1.0 gave the mean reduction
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

crit = nn.MSELoss(reduction="mean")
print(F.l1_loss(torch.zeros(2), torch.ones(2), reduction='mean'))
print(crit(torch.zeros(2), torch.ones(2)))
"""
        ),
        # the first row of a reconstruction, not of the loss
        Valid(
            """
import torch
import torch.nn.functional as F


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


recon = torch.rand(4, 3, requires_grad=True)
mu = torch.zeros(4, 2, requires_grad=True)
logvar = torch.zeros(4, 2, requires_grad=True)
loss = vae_loss(recon, torch.rand(4, 3), mu, logvar)
loss.backward()
print(recon.data[0])
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch.autograd import Variable

def offsets(batch_size, n):
    noise = Variable(torch.randn(n, 8).cuda())
    return Variable(torch.LongTensor(range(batch_size)) * 2).view(-1, 1), noise
""",
            fixed="""
import torch
from torch.autograd import Variable

def offsets(batch_size, n):
    noise = torch.randn(n, 8).cuda()
    return (torch.LongTensor(range(batch_size)) * 2).view(-1, 1), noise
""",
            count=2,
            message="`Variable` (`torch.autograd.Variable`) is deprecated since torch 0.4",
        ),
        Invalid(
            """
from torch.autograd import Variable

def predict(model, loader):
    for x, y in loader:
        yield model(Variable(x)), y
""",
            fixed="""
from torch.autograd import Variable

def predict(model, loader):
    for x, y in loader:
        yield model(x), y
""",
            unsafe=True,
        ),
        # backward(retain_variables=...): the keyword renamed retain_graph
        Invalid(
            """
import torch

def twice(loss, other):
    loss.backward(retain_variables=True)
    torch.autograd.backward([other], retain_variables=False)
""",
            fixed="""
import torch

def twice(loss, other):
    loss.backward(retain_graph=True)
    torch.autograd.backward([other], retain_graph=False)
""",
            count=2,
            line=5,
            col=5,
            message="`loss.backward(retain_variables=True)` was removed in torch 0.4",
        ),
        # nn.NLLLoss2d -> nn.NLLLoss, in both spellings of the module
        Invalid(
            """
import torch
from torch import nn

seg = nn.NLLLoss2d(ignore_index=255)
other = torch.nn.NLLLoss2d()
""",
            fixed="""
import torch
from torch import nn

seg = nn.NLLLoss(ignore_index=255)
other = torch.nn.NLLLoss()
""",
            count=2,
        ),
        # loss.data[0] / loss[0] on a 0-d loss: an IndexError, `.item()` reads the number
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.CrossEntropyLoss()

def step(model, x, y, opt):
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    penalty = (model(x) - 1).pow(2).mean()
    return loss.data[0], F.l1_loss(x, y)[0], penalty.data[0]
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.CrossEntropyLoss()

def step(model, x, y, opt):
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    penalty = (model(x) - 1).pow(2).mean()
    return loss.item(), F.l1_loss(x, y).item(), penalty.item()
""",
            count=3,
            message="on a 0-d loss is an `IndexError` since torch 1.0",
        ),
        # torchvision builders given the old `pretrained` flag positionally
        Invalid(
            """
import torchvision

backbone = torchvision.models.resnet50(False)
""",
            fixed="""
import torchvision

backbone = torchvision.models.resnet50(weights=None)
""",
            message="`pretrained` given positionally",
        ),
        Invalid(
            """
from torchvision import models

head = models.mobilenet_v2(True)
""",
            fixed="""
from torchvision import models

head = models.mobilenet_v2(weights="DEFAULT")
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

scaler = torch.cuda.amp.GradScaler(init_scale=1024)

def step(model, x):
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        return model(x)
""",
            fixed="""
import torch

scaler = torch.amp.GradScaler("cuda", init_scale=1024)

def step(model, x):
    with torch.amp.autocast("cuda", dtype=torch.bfloat16):
        return model(x)
""",
            count=2,
            line=4,
            col=10,
        ),
        Invalid(
            """
import torch

def solve(A, B):
    return torch.solve(B, A)[0]
""",
            message="removed in torch 1.13",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

def f(a, b, c, w, x):
    nn.init.xavier_uniform(w)
    return torch.chain_matmul(a, b, c), F.tanh(Variable(x.data))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

def f(a, b, c, w, x):
    nn.init.xavier_uniform_(w)
    return torch.linalg.multi_dot([a, b, c]), torch.tanh(x.data)
""",
            count=4,
            options={"target-torch": "1.13"},  # F.tanh warned from 0.4.1 until 2.0
        ),
        Invalid(
            """
import torch.nn as nn

criterion = nn.CrossEntropyLoss(size_average=False)
mse = nn.MSELoss(reduce=False, size_average=True)
""",
            fixed="""
import torch.nn as nn

criterion = nn.CrossEntropyLoss(reduction="sum")
mse = nn.MSELoss(reduction="none")
""",
            count=2,
        ),
        Invalid(
            """
import torchvision.models as models

backbone = models.resnet50(pretrained=True)
""",
            fixed="""
import torchvision.models as models

backbone = models.resnet50(weights="DEFAULT")
""",
            unsafe=True,
        ),
        Invalid(
            """
from functorch import vmap
import torch

def batched(f, x):
    return vmap(f)(x)
""",
        ),
        Invalid(
            """
import torch

with torch.cuda.amp.autocast():
    pass
""",
            options={"target-torch": "2.4"},
            fixed="""
import torch

with torch.amp.autocast("cuda"):
    pass
""",
        ),
        # a Variable made to require grad: the tensor itself would lose the flag (no fix: where the tensor
        # comes from decides the spelling)
        Invalid(
            """
import torch
from torch.autograd import Variable


def saliency(model, image, label):
    x = Variable(image.unsqueeze(0), requires_grad=True)
    model(x)[0, label].backward()
    return x.grad.abs()
""",
            message="use a tensor that requires grad (`x.detach().requires_grad_()`",
        ),
        # the DataLoader iterator's Python 2 `next` alias: an `AttributeError` since torch 1.13
        Invalid(
            """
import torch
from torch.utils.data import DataLoader, TensorDataset

trainloader = DataLoader(TensorDataset(torch.randn(8, 3), torch.zeros(8)), batch_size=4)
dataiter = iter(trainloader)
images, labels = dataiter.next()
first, _ = iter(trainloader).next()
other = iter([1, 2, 3])
print(images.shape, first.shape, other.__next__())
""",
            fixed="""
import torch
from torch.utils.data import DataLoader, TensorDataset

trainloader = DataLoader(TensorDataset(torch.randn(8, 3), torch.zeros(8)), batch_size=4)
dataiter = iter(trainloader)
images, labels = next(dataiter)
first, _ = next(iter(trainloader))
other = iter([1, 2, 3])
print(images.shape, first.shape, other.__next__())
""",
            count=2,
        ),
        # the same in a function, on a name that held the dataset before the loader
        Invalid(
            """
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    train = TensorDataset(torch.randn(8, 3), torch.zeros(8))
    train = DataLoader(train, batch_size=4, shuffle=True)
    x, label = iter(train).next()
    print(x.shape, label.shape)
""",
            fixed="""
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    train = TensorDataset(torch.randn(8, 3), torch.zeros(8))
    train = DataLoader(train, batch_size=4, shuffle=True)
    x, label = next(iter(train))
    print(x.shape, label.shape)
""",
        ),
        # the loaders are parameters: the only call of the function passes `DataLoader`s for them
        Invalid(
            """
from torch.utils.data import DataLoader


def train(labeled_loader, unlabeled_loader, steps):
    labeled_iter = iter(labeled_loader)
    for _ in range(steps):
        try:
            x, y = labeled_iter.next()
        except StopIteration:
            labeled_iter = iter(labeled_loader)
            x, y = labeled_iter.next()
        u, _ = unlabeled_loader.__iter__().next()


if __name__ == "__main__":
    train(DataLoader(range(10), batch_size=2), DataLoader(range(10), batch_size=2), 5)
""",
            count=3,
            fixed="""
from torch.utils.data import DataLoader


def train(labeled_loader, unlabeled_loader, steps):
    labeled_iter = iter(labeled_loader)
    for _ in range(steps):
        try:
            x, y = next(labeled_iter)
        except StopIteration:
            labeled_iter = iter(labeled_loader)
            x, y = next(labeled_iter)
        u, _ = next(unlabeled_loader.__iter__())


if __name__ == "__main__":
    train(DataLoader(range(10), batch_size=2), DataLoader(range(10), batch_size=2), 5)
""",
        ),
        # `hasattr` of the code's own module object is no check of the torch version
        Invalid(
            """
import torch.nn as nn


def init_weights(m):
    if hasattr(m, "weight") and m.weight.dim() > 1:
        nn.init.kaiming_uniform(m.weight.data)
""",
            line=7,
            fixed="""
import torch.nn as nn


def init_weights(m):
    if hasattr(m, "weight") and m.weight.dim() > 1:
        nn.init.kaiming_uniform_(m.weight.data)
""",
        ),
        # a loss that sums the batch is 0-d too; one that keeps it (`reduction="none"`) is not reported
        Invalid(
            """
import torch.nn as nn

mse = nn.MSELoss(reduction="sum")
per_item = nn.MSELoss(reduction="none")


def report(out, y):
    loss = mse(out, y)
    rows = per_item(out, y)
    print(loss.data[0], rows.data[0])
""",
            line=11,
            fixed="""
import torch.nn as nn

mse = nn.MSELoss(reduction="sum")
per_item = nn.MSELoss(reduction="none")


def report(out, y):
    loss = mse(out, y)
    rows = per_item(out, y)
    print(loss.item(), rows.data[0])
""",
        ),
        # a count read through `.data` of a full sum of a comparison: 0-d too
        Invalid(
            """
import torch


def count(conf):
    n = int((conf > 0.25).sum().data[0])
    return n
""",
            line=6,
            fixed="""
import torch


def count(conf):
    n = int((conf > 0.25).sum().item())
    return n
""",
        ),
        # the mean reduction under its torch 0.4.1 name, which torch still takes with a warning
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

crit = nn.MSELoss(reduction="elementwise_mean")
print(F.l1_loss(torch.zeros(2), torch.ones(2), reduction='elementwise_mean'))
print(crit(torch.zeros(2), torch.ones(2)))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

crit = nn.MSELoss(reduction="mean")
print(F.l1_loss(torch.zeros(2), torch.ones(2), reduction='mean'))
print(crit(torch.zeros(2), torch.ones(2)))
""",
            line=6,
            count=2,
        ),
        # a loss a function of the file returns (two reduced terms added): 0-d, so `.data[0]` raises
        Invalid(
            """
import torch
import torch.nn.functional as F


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


recon = torch.rand(4, 3, requires_grad=True)
mu = torch.zeros(4, 2, requires_grad=True)
logvar = torch.zeros(4, 2, requires_grad=True)
loss = vae_loss(recon, torch.rand(4, 3), mu, logvar)
loss.backward()
print(loss.data[0])
""",
            fixed="""
import torch
import torch.nn.functional as F


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


recon = torch.rand(4, 3, requires_grad=True)
mu = torch.zeros(4, 2, requires_grad=True)
logvar = torch.zeros(4, 2, requires_grad=True)
loss = vae_loss(recon, torch.rand(4, 3), mu, logvar)
loss.backward()
print(loss.item())
""",
            line=17,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.target = target_version(self.options.get("target-torch"))

    def visit_Module(self, node: cst.Module) -> None:
        self._nexts: List[cst.Call] = []

    def leave_Module(self, node: cst.Module) -> None:
        for call in self._nexts:  # after the walk: what the callers of a function give its loader is known then
            self._loader_iter_next(call)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "next" and not node.args:
            self._nexts.append(node)
            return
        qnames = self.ctx.names.qualified_names(node.func)
        if not qnames:
            return
        entries = [BY_NAME.get(q) for q in sorted(qnames)]
        found = [e for e in entries if e is not None and e.rule == self.CODE]
        if found:
            # `try: from torch import vmap / except ImportError: from functorch import vmap` binds the name
            # to both: the old API is only the fallback
            if len(found) == len(entries) and not self._compatibility_branch(node):
                self._report_entry(node, found[0])
            return
        if any(q.startswith("torch.nn.") for q in qnames):
            self._legacy_reduction(node)
        elif any(q.startswith("torchvision.models.") for q in qnames):
            self._pretrained(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # `loss.backward(...)` and `torch.autograd.backward(...)` alike
        if node.attr.value == "backward":
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.Call) and parent.func is node:
                self._retain_variables(parent)

    # -- iter(loader).next() ----------------------------------------------------------------------
    def _loader_iter_next(self, node: cst.Call) -> None:
        """``iter(loader).next()``, ``it = iter(loader)`` ... ``it.next()`` with ``loader`` a ``DataLoader`` by
        construction: the iterator has no ``next`` method since torch 1.13."""
        if self.target < version(LOADER_ITER_NEXT_REMOVED):
            return
        owner = node.func.value  # type: ignore[attr-defined]
        iterators = self.ctx.names.values_before(owner) if isinstance(owner, cst.Name) else [owner]
        if not iterators or not all(self._iterates_loader(v) for v in iterators):
            return
        fix = None
        if self.ctx.names.binding_at(node, "next") is None:  # the builtin, not a name of the file
            fix = self.make_fix("Use `next(...)`").replace(
                node, cst.Call(func=cst.Name("next"), args=[cst.Arg(owner)]))
        self.report(node, self.quoting(node, f"`{self.spelling(node)}`: a DataLoader iterator has no `next` "
                                             f"method since torch {LOADER_ITER_NEXT_REMOVED} (an `AttributeError`); "
                                             f"use `next({self.ctx.code(owner).strip()})`"), fix=fix)

    def _iterates_loader(self, value: cst.BaseExpression) -> bool:
        """``iter(loader)`` (the builtin) or ``loader.__iter__()`` of a value every assignment makes a
        ``DataLoader``, or, for a parameter, every call of its function passes one."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "__iter__" \
                and not value.args:
            return self._loader(self.ctx, value.func.value)
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "iter"
                and len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star):
            return False
        if self.ctx.names.binding_at(value, "iter") is not None:
            return False
        return self._loader(self.ctx, value.args[0].value)

    def _loader(self, ctx, loader: cst.BaseExpression, depth: int = 0) -> bool:
        """``loader`` is a ``DataLoader`` by construction: where it is built, or in what every caller passes
        for it when it is a parameter."""
        if isinstance(loader, cst.Name) and depth < 2 and ctx.names.is_param_at(loader):
            given = callers_arguments(ctx, loader)
            return bool(given) and all(self._loader(c, a, depth + 1) for c, a in given)
        return self._built_loader(ctx, loader)

    def _built_loader(self, ctx, loader: cst.BaseExpression) -> bool:
        reaching = ctx.names.value_of(loader) if isinstance(loader, cst.Name) else None
        if reaching is not None:  # `ds = DataLoader(ds, ...)`: the value the name holds there
            built = [strip_moves(reaching)]
        else:
            built = built_values(ctx, loader) if isinstance(loader, (cst.Name, cst.Attribute)) else [loader]
        return bool(built) and all(
            isinstance(b, cst.Call) and any(q.endswith(".DataLoader") for q in ctx.names.qualified_names_at(b.func))
            for b in built)

    # -- backward(retain_variables=...) ------------------------------------------------------------
    def _retain_variables(self, node: cst.Call) -> None:
        old = next((a for a in node.args if a.keyword is not None and a.keyword.value == "retain_variables"), None)
        if old is None or self._defines_backward_with_retain_variables():
            return
        deprecated, removed = RETAIN_VARIABLES
        if self.target < version(deprecated):
            return
        state = (f"was removed in torch {removed} (a `TypeError`; deprecated since {deprecated})"
                 if self.target >= version(removed) else f"is deprecated since torch {deprecated}")
        fix = None
        if not any(a.keyword is not None and a.keyword.value == "retain_graph" for a in node.args):
            fix = self.make_fix("Use `retain_graph=`").replace(old, old.with_changes(keyword=cst.Name("retain_graph")))
        self.report(node, self.quoting(node, f"`backward(retain_variables=...)` {state}; use `retain_graph=`"), fix=fix)

    def _defines_backward_with_retain_variables(self) -> bool:
        """A method of the file named ``backward`` that takes ``retain_variables`` itself (a tutorial's
        loss module forwarding it): its calls are not torch's."""
        for function in self.ctx.functions().get("backward", ()):
            params = function.params
            for p in (*params.posonly_params, *params.params, *params.kwonly_params):
                if p.name.value == "retain_variables":
                    return True
        return False

    # -- loss.data[0] on a 0-d loss ----------------------------------------------------------------
    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        index = node.slice[0].slice.value
        if not isinstance(index, cst.Integer) or index.value != "0":
            return
        value = node.value
        holder = value.value if isinstance(value, cst.Attribute) and value.attr.value == "data" else value
        if not self._zero_dim_loss(holder, through_data=holder is not value):
            return
        deprecated, removed = ZERO_DIM_INDEX
        if self.target < version(deprecated):
            return
        spelled = self.ctx.code(node)
        if self.target >= version(removed):
            state = f"is an `IndexError` since torch {removed} (a loss is a 0-d tensor since {deprecated})"
        else:
            state = f"is deprecated since torch {deprecated} (a loss is a 0-d tensor)"
        fix = self.make_fix("Use `.item()`").replace(
            node, cst.Call(func=cst.Attribute(value=holder, attr=cst.Name("item"))))
        self.report(node, f"`{spelled}` on a 0-d loss {state}; use `.item()`", fix=fix)

    def _zero_dim_loss(self, expr: cst.BaseExpression, through_data: bool, depth: int = 0) -> bool:
        """A value known to be 0-d: a torch loss with its default reduction (a criterion instance or an
        `F.*` loss), a full `sum()`/`mean()` of one, or, read through `.data` (a tensor's attribute), a full
        `sum()`/`mean()` of a tensor expression; such a value scaled by a number (`criterion(o, y) / n`) or
        added to another (`bce + kld`); what every `return` of a function of the file gives back
        (`loss = loss_function(recon, x, mu, logvar)`); through a name, every value it may hold."""
        ctx = self.ctx
        if depth > 8:
            return False
        if isinstance(expr, cst.Name):
            values = ctx.names.values_before(expr)
            return bool(values) and all(
                not isinstance(v, cst.Name) and self._zero_dim_loss(v, through_data, depth + 1) for v in values)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _SCALING_OPERATORS):
            left = self._zero_dim_loss(expr.left, through_data, depth + 1)
            right = self._zero_dim_loss(expr.right, through_data, depth + 1)
            return (left or right) and (left or _plain_number(ctx, expr.left)) and (right or _plain_number(ctx, expr.right))
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("sum", "mean") and not expr.args:
            inner = func.value
            return _is_loss_call(ctx, inner) or (through_data and isinstance(inner, (cst.BinaryOperation, cst.Comparison, cst.Call)))
        if ctx.names.matches(func, _FULL_REDUCTIONS) and len(expr.args) == 1 and expr.args[0].keyword is None \
                and not expr.args[0].star:
            inner = expr.args[0].value  # `torch.sum(1 + logvar - mu.pow(2) - logvar.exp())`
            return _is_loss_call(ctx, inner) or (through_data and isinstance(inner, (cst.BinaryOperation, cst.Comparison, cst.Call)))
        if _is_loss_call(ctx, expr):
            return True
        function = ctx.function_for_call(expr) if isinstance(func, cst.Name) else None
        returns = function_returns(function) if function is not None else []
        return bool(returns) and all(r.value is not None and self._zero_dim_loss(r.value, through_data, depth + 1)
                                     for r in returns)

    def _compatibility_branch(self, node: cst.Call) -> bool:
        """Inside a branch chosen by the torch version (`if is_torch_version(...)`, `if hasattr(torch, ...)`)
        or an `except` fallback: the old API is used on purpose where the new one is missing."""
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, (cst.If, cst.IfExp)):
                test = self.ctx.code(anc.test).lower()
                if "version" in test or self._asks_torch_for(anc.test) or _VERSION_FLAG.search(test):
                    return True  # `... if _TORCH_GREATER_EQUAL_2_4 else torch.cuda.amp.GradScaler()`
            elif isinstance(anc, cst.ExceptHandler):
                return True
        return False

    def _asks_torch_for(self, test: cst.BaseExpression) -> bool:
        """The condition asks an imported module whether it has an API (``hasattr(torch, "amp")``,
        ``hasattr(F, "gelu")``, ``hasattr(apex_amp, ...)``); not ``hasattr(m, "weight")`` of an object of the
        code's own."""
        return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "hasattr" and n.args
                   and bool(self.ctx.names.qualified_names_at(n.args[0].value)) for n in iter_nodes(test))

    # -- table entries -----------------------------------------------------------------------------
    def _report_entry(self, node: cst.Call, entry: Deprecation) -> None:
        if self.target < version(entry.deprecated):
            return
        if entry.withdrawn is not None and self.target >= version(entry.withdrawn):
            return  # torch took the deprecation back: an alias that no longer warns
        if entry.fix == "unwrap" and any(a.keyword is not None and a.keyword.value == "volatile" for a in node.args):
            return  # `Variable(x, volatile=True)` is TL516's finding (the bug there is autograd staying on)
        if entry.removed is not None and self.target >= version(entry.removed):
            state = f"was removed in torch {entry.removed} (deprecated since {entry.deprecated})"
        else:
            state = f"is deprecated since torch {entry.deprecated}"
        spelled = self.spelling(node.func if isinstance(node, cst.Call) else node)
        named = f"`{spelled}`" if spelled == entry.name else f"`{spelled}` (`{entry.name}`)"
        use = entry.use
        flag = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
        if entry.fix == "unwrap" and flag is not None and not (isinstance(flag, cst.Name) and flag.value == "False"):
            # `Variable(x, requires_grad=True)`: the tensor itself would lose the flag
            use = (f"a tensor that requires grad (`x.detach().requires_grad_({'' if _is_true(flag) else self.ctx.code(flag)})`"
                   ", or `requires_grad=` given to the factory that makes it)")
        message = f"{named} {state}; use {use}"
        self.report(node, message, fix=self._entry_fix(node, entry))

    def _entry_fix(self, node: cst.Call, entry: Deprecation) -> Optional[Fix]:
        if entry.fix is None:
            return None
        if any(a.keyword is not None and a.keyword.value in entry.blocks_fix for a in node.args):
            return None
        if entry.fix == "unwrap":
            if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                arg = node.args[0].value
                # `Variable(x)` returns `x` detached: dropping it keeps the results only where `x` carries
                # no graph by construction; elsewhere the edit is still the usual intent, for review
                fix = self.make_fix("Use the tensor itself", unsafe=not _graph_free(self.ctx, arg, 3))
                return fix.replace(node, in_place_of(self.ctx, node, arg))
            return None
        if not isinstance(node.func, cst.Attribute):
            return None  # a name imported from the old module: the import would have to change too
        new = entry.new or ""
        if entry.fix == "rename" and new.rsplit(".", 1)[0] == entry.name.rsplit(".", 1)[0]:
            # same module, new name (`nn.init.normal` -> `nn.init.normal_`): keep the spelling of the module
            func = node.func.with_changes(attr=cst.Name(new.rsplit(".", 1)[1]))
            return self.make_fix(f"Use `{new}`").replace(node, node.with_changes(func=func))
        if not torch_in_scope(self.ctx):
            return None
        new_func = self.ctx.parse_expression(new)
        if entry.fix == "rename":
            return self.make_fix(f"Use `{entry.new}`").replace(node, node.with_changes(func=new_func))
        if entry.fix == "device":
            device = cst.Arg(cst.SimpleString(f'"{entry.device}"'))
            args = [device.with_changes(comma=cst.MaybeSentinel.DEFAULT if not node.args else _comma())]
            args += list(node.args)
            return self.make_fix(f"Use `{entry.new}`").replace(node, node.with_changes(func=new_func, args=args))
        if entry.fix == "list":
            if any(a.keyword is not None or a.star for a in node.args) or not node.args:
                return None
            elements = [
                cst.Element(a.value, comma=_comma() if i < len(node.args) - 1 else cst.MaybeSentinel.DEFAULT)
                for i, a in enumerate(node.args)
            ]
            new = node.with_changes(func=new_func, args=[cst.Arg(cst.List(elements))])
            return self.make_fix(f"Use `{entry.new}`").replace(node, new)
        return None

    # -- size_average= / reduce= -------------------------------------------------------------------
    def _legacy_reduction(self, node: cst.Call) -> None:
        legacy = [a for a in node.args if a.keyword is not None and a.keyword.value in LEGACY_REDUCTION_ARGS]
        old_mean = next((a for a in node.args if a.keyword is not None and a.keyword.value == "reduction"
                         and isinstance(a.value, cst.SimpleString) and a.value.evaluated_value == "elementwise_mean"),
                        None)
        if old_mean is not None and not legacy and self.target >= version(ELEMENTWISE_MEAN_SINCE):
            # torch 1.0 renamed it; torch still takes it, with a warning, as "mean"
            quote = old_mean.value.value[-1]  # type: ignore[union-attr]
            mean = old_mean.value.with_changes(value=f"{quote}mean{quote}")  # type: ignore[union-attr]
            self.report(node, f'`reduction={self.spelling(old_mean.value)}` is deprecated since torch '
                              f'{ELEMENTWISE_MEAN_SINCE}; use `reduction={quote}mean{quote}`',
                        fix=self.make_fix('Use `reduction="mean"`').replace(old_mean.value, mean))
            return
        if not legacy or self.target < version(LEGACY_REDUCTION_SINCE):
            return
        names = ", ".join(f"`{a.keyword.value}=`" for a in legacy if a.keyword is not None)
        message = (
            f"{names} is deprecated since torch {LEGACY_REDUCTION_SINCE}; use "
            "`reduction=\"mean\" | \"sum\" | \"none\"`"
        )
        self.report(node, message, fix=self._reduction_fix(node, legacy))

    def _reduction_fix(self, node: cst.Call, legacy: List[cst.Arg]) -> Optional[Fix]:
        if any(a.keyword is not None and a.keyword.value == "reduction" for a in node.args):
            return None
        values = {a.keyword.value: literal_value(a.value) for a in legacy if a.keyword is not None}
        if any(v is UNKNOWN for v in values.values()):
            return None
        size_average = values.get("size_average")
        reduce = values.get("reduce")
        # torch's legacy rule: reduce=False keeps every element; else size_average=False sums; else mean
        if reduce is False:
            reduction = "none"
        elif size_average is False:
            reduction = "sum"
        else:
            reduction = "mean"
        first = legacy[0]
        args: List[cst.Arg] = []
        for a in node.args:
            if a is first:
                args.append(a.with_changes(keyword=cst.Name("reduction"), value=cst.SimpleString(f'"{reduction}"')))
            elif a not in legacy:
                args.append(a)
        args[-1] = args[-1].with_changes(comma=node.args[-1].comma)
        return self.make_fix(f'Use `reduction="{reduction}"`').replace(node, node.with_changes(args=args))

    # -- torchvision pretrained= -------------------------------------------------------------------
    def _pretrained(self, node: cst.Call) -> None:
        old = [a for a in node.args if a.keyword is not None and a.keyword.value in PRETRAINED_ARGS]
        positional = self._positional_pretrained(node) if not old else None
        if (not old and positional is None) or self.target < version(PRETRAINED_SINCE):
            return
        if positional is not None:
            # `resnet50(True)`: the builders' first parameter was `pretrained`; since torchvision 0.13 it is
            # the keyword-only `weights`, taken positionally only with a deprecation warning
            message = (f"`{self.spelling(node)}`: `pretrained` given positionally is deprecated since torchvision 0.13; "
                       "use `weights=`")
            names = {positional: "weights"}
        else:
            listed = ", ".join(f"`{a.keyword.value}=`" for a in old if a.keyword is not None)
            message = f"{listed} is deprecated since torchvision 0.13; use `weights=` (`weights_backbone=`)"
            names = {a: PRETRAINED_ARGS[a.keyword.value] for a in old if a.keyword is not None}
        values = [literal_value(a.value) for a in names]
        fix = None
        if all(v in (True, False) for v in values):
            unsafe = any(v is True for v in values)
            fix = self.make_fix("Use `weights=`", unsafe=unsafe)
            for a, v in zip(names, values):
                new_value = cst.SimpleString('"DEFAULT"') if v else cst.Name("None")
                equal = a.equal if a.keyword is not None else cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
                fix.replace(a, a.with_changes(keyword=cst.Name(names[a]), value=new_value, equal=equal))
        self.report(node, message, fix=fix)

    def _positional_pretrained(self, node: cst.Call) -> Optional[cst.Arg]:
        """The only positional argument of a torchvision model builder, a literal `True`/`False` (the old
        `pretrained`); a builder is a lower-case function of `torchvision.models` (not a weights enum or
        a class), and helpers such as `vgg.make_layers(cfg, False)` take their flag second."""
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) != 1 or positional[0] is not node.args[0] or positional[0].star:
            return None
        if literal_value(positional[0].value) not in (True, False):
            return None
        for q in self.ctx.names.qualified_names(node.func):
            last = q.rsplit(".", 1)[-1]
            if q.startswith("torchvision.models.") and last.islower() and not last.startswith("_"):
                return positional[0]
        return None


#: torch's reductions of a whole tensor to one number, given the tensor alone
_FULL_REDUCTIONS = frozenset({"torch.sum", "torch.mean"})
#: operators that keep a 0-d value 0-d when the other operand is 0-d or a number
_SCALING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)


def _plain_number(ctx, expr: cst.BaseExpression) -> bool:
    """A Python number: a literal, a name bound only to literals, `len(...)`, `x.size(k)`, `x.numel()`."""
    if number(expr) is not None:
        return True
    if isinstance(expr, cst.Name):
        values = ctx.names.values_before(expr)
        return bool(values) and all(number(v) is not None for v in values)
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value == "len" and not ctx.names.qualified_names_at(expr.func):
            return True
        return isinstance(expr.func, cst.Attribute) and (
            expr.func.attr.value == "size" and len(expr.args) == 1 or expr.func.attr.value == "numel" and not expr.args)
    return False


def _is_loss_call(ctx, expr: cst.BaseExpression) -> bool:
    """A call of a torch loss with its default (mean) reduction: ``F.<x>_loss`` / ``F.cross_entropy`` /
    ``F.binary_cross_entropy*``, or an instance of an ``nn.<X>Loss`` class."""
    if not isinstance(expr, cst.Call):
        return False
    if not _reduces_to_scalar(expr):
        return False
    for q in ctx.names.qualified_names(expr.func):
        if q.startswith("torch.nn.functional.") and (
            q.endswith("_loss") or q.rsplit(".", 1)[1] in ("cross_entropy", "binary_cross_entropy",
                                                            "binary_cross_entropy_with_logits", "kl_div")):
            return True
    for cls in ctx.names.instance_of(expr.func):
        if cls.startswith("torch.nn.") and cls.endswith("Loss"):
            return not _reduction_none(ctx, expr.func)
    return False


def _reduction_none(ctx, criterion: cst.BaseExpression) -> bool:
    """Whether the criterion instance was built with a reduction that may keep the batch (then its result
    may not be 0-d): ``reduction="none"``, ``reduce=False``, or one not spelled as a literal."""
    if isinstance(criterion, cst.Name):
        for v in ctx.names.values_before(criterion):
            if isinstance(v, cst.Call) and not _reduces_to_scalar(v):
                return True
    return False


def _reduces_to_scalar(call: cst.Call) -> bool:
    """The loss arguments of ``call`` reduce to one number: none given, ``reduction="mean"``/``"sum"``, or
    the legacy ``size_average=`` (mean or sum) without ``reduce=False``; not ``reduction="none"`` or a
    value that is not a literal."""
    for a in call.args:
        if a.keyword is None:
            continue
        key, value = a.keyword.value, a.value
        if key == "reduction" and not (isinstance(value, cst.SimpleString) and value.evaluated_value in ("mean", "sum")):
            return False
        if key == "reduce" and not (isinstance(value, cst.Name) and value.value == "True"):
            return False
        if key == "size_average" and not (isinstance(value, cst.Name) and value.value in ("True", "False")):
            return False
    return True


#: names of flags that hold a torch-version comparison (`_TORCH_GREATER_EQUAL_2_4`, `TORCH_GE_2_1`)
_VERSION_FLAG = re.compile(r"torch\w*(greater|less|_ge_|_gt_|_le_|_lt_|_\d+_\d+)")


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
