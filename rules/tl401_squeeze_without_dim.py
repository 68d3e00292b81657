from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from torchlint.families.shapes.batches import (
    batch_evidence, batch_origin, batch_source, fed_fixed_batch, fed_one_sample, fed_whole_tensor, holds_fixed_rows,
    unpacks_some_recurrent_layer,
    from_batch_of_one, leading_one,
    literal_batch_of_one, recurrent_batch_dim, sized_by_one, tokenizer_origin, tokenizer_shape,
)
from torchlint.analysis.context import canonical_keyword, method_name, written_target
from torchlint.analysis.training import is_loss_call
from torchlint.analysis.walk import children
from torchlint.analysis.definitions import (
    arguments_for_param, bind_arguments, built_values, definition_of, function_returns, position,
)
from torchlint.families.shapes.shapes import DATA_CONSTRUCTORS, Shape, int_literal, shape_of
from torchlint.rule import Fix, Invalid, LintRule, Valid

SQUEEZE = frozenset({"torch.squeeze"})
#: NumPy's squeeze: given a tensor, it calls the tensor's own `squeeze()`
NUMPY_SQUEEZE = frozenset({"numpy.squeeze"})
# receivers that are NumPy arrays or Python values, not tensors
_NOT_TENSOR_METHODS = frozenset({"numpy", "tolist", "item", "values", "to_numpy"})


class SqueezeWithoutDim(LintRule):
    """
    ## What it does
    Finds `x.squeeze()` and `torch.squeeze(x)` called without a dimension on a tensor that carries a
    batch dimension (a model's output, a loader's batch) or a dimension known to be 1.

    ## Why is this bad?
    `squeeze()` removes *every* dimension of size 1. The author usually means one of them — the
    feature dimension of a `[B, 1]` regression output, the channel of a `[B, 1, H, W]` mask — but when
    the batch happens to hold one sample (the last batch of an epoch, inference on one image) the
    batch dimension is dropped too, and the code that follows broadcasts or indexes the wrong axis
    without an error. Effective PyTorch's advice is to always name the dimension when squeezing or
    reducing ("在做累加( reduction )操作或者使用 torch.squeeze 的时候总是指定好维度",
    "3. 广播机制的优缺点", Effective PyTorch; its own model code writes `.squeeze(1)`).

    Reported where the tensor is known to carry a batch dimension, or a dimension known to be 1 can be
    named (on a tensor nothing says holds a batch, such as a sample a transform shaped itself, the
    message says only that every other dimension of size 1 goes too); `np.squeeze(t)` of a tensor calls `t.squeeze()` and is read the same way. Batch evidence comes from where the data comes from, through element-wise work, casts, views,
    indexing and reductions over another dimension: a model's or layer's output (`model(x)`,
    `self.head(h)`, `self(**batch)` in a LightningModule, `vae.decode(z)`, a model's own method applied
    to its input such as `self.features(x)`), a batch drawn from a data loader (`for x, y in loader:`,
    the `batch` of a Lightning `*_step`), the inputs of a model's `forward`, a padded batch
    (`pad_sequence(...)`), a callable the function trains (a parameter whose output goes into a loss the
    same function differentiates with `.backward()`: `loss = F.binary_cross_entropy_with_logits(scorer(x).squeeze(), y)`), a
    tokenizer's output for a list of texts (`tok([q, a], ...)`, a `List[str]` parameter; one text or an
    input nothing describes is no batch), the return of a helper of the file whose own code returns one
    (`def predict(net, x): return net(x)`; not one that makes a batch of one with `unsqueeze(0)`), the
    return of a model's own method whose code gives a layer's output (`v = self.critic(obs, state)` with
    `def critic(self, x, state): ... return self.value(h)`, also unpacked from a tuple it returns), the
    parameter of a function of the file every call of which gives it a batch (`to_probs(model(x))`).
    Products, joins and copies keep the batch (`torch.bmm(model(q), k)`, `weights.bmm(keys)`, `torch.cat`,
    `h.repeat(k, 1)`), and so do a helper of the file that hands its argument back through such operations
    (`def tile(t, k): return t.repeat(k, 1)`) and a method of a part of the model run on the batch in the
    model's own code (`self.core.step(memory, state)`); an element of a list the code fills only with such values (`states.append(h)`, then
    `states[-1]`) carries it too, and so does each piece of such a tensor split in pieces of size 1
    (`for y_t in torch.split(y, 1):`, whose dimension 0 is known to be 1); an index takes one sample out of a tensor and removes it (`out[0]`, `out[i]` in a loop
    over `range`, a row of a project model whose `forward` returns one tensor, `out[i]` in a loop over
    `range(out.size(0))`; a model's `model(x)[0]` of unknown output may be a tuple's element and keeps it). A
    tensor computed from a helper's plain parameters, from module state, from a file or a dictionary
    carries no such evidence (per-output statistics, kernels and tables are squeezed to a scalar on
    purpose) and is not reported: that is where a linter cannot tell an intended `squeeze()` from a bug.

    Not reported: tensors known to have at most one dimension or no dimension of size 1, squeezes the code
    guarded with a size check (`x.squeeze() if x.numel() == 1 else x`, `if x.shape[0] == 1:`) or placed in a
    branch chosen by a shape, tensors whose rank the function tested before (`if mask.ndim == 4:`), squeezes
    in a function that makes its own batch of one (`x.unsqueeze(0)`, `x[None]`) when no dimension is known
    to be 1 and the squeezed value comes from that batch of one (through a model run on it, a list it is
    appended to, the names it is bound to; a leading 1 the code takes away again with `squeeze(0)` ends
    it: a time axis added for one step of a recurrent layer is no batch of one, and so does joining it to
    other tensors along that axis, `torch.cat((start.unsqueeze(0), frames), dim=0)`: a start frame put
    before the time steps), a tensor of numbers
    written in the code (`torch.tensor([[0.2, 0.8]])`: the same shape on every run), the output of a model
    run on batches of a `DataLoader` that drops its last incomplete batch (`drop_last=True`) with a batch
    size of two or more written out (`batch_size=100`, or a name given only that number; not a loader with
    its own `collate_fn` or `batch_sampler`; bound to a name or written in the `for` statement), the output of a model run on an input built as a batch of one (`torch.randint(n, (1, 1))`,
    `model.init_hidden(1)` where the method gives its argument as a size to a tensor constructor such as
    `torch.zeros` or `weight.new_zeros`; for a model read back with `torch.load` or `pickle.load`, whose
    class is unknown, every class of the file or imported from the project that defines the method must do
    so), the encoding of one text given as `model(**tok(text, return_tensors="pt"))` with
    `text: str` or a literal, anywhere in the file), both operands of a loss or a comparison squeezed alike,
    a squeezed output given to a loss against a target built from its own whole shape alone
    (`bce(out, torch.ones(out.size()))`, `torch.zeros_like(out)`: both lose the same dimensions; not
    `torch.ones(out.size(0))`, which fails on the 0-d output of a batch of one),
    an operand of an element-wise regression loss that reduces (`F.mse_loss`, `F.l1_loss`,
    `F.smooth_l1_loss`, `F.huber_loss`, or `nn.MSELoss()` and its kin with the reduction `"mean"` or `"sum"`
    (or torch 0.4's `"elementwise_mean"`), also as a criterion every call of the function passes or one kept
    on `self` (`self.mse = nn.MSELoss()`), called or through `.forward`: a 0-d operand
    broadcasts as a one-element one does, and the loss is the same number),
    `.squeeze().item()`, a squeezed value only printed or only viewed in a shape given in numbers
    (`.view(-1, 1)`, `.flatten()`: the shape then comes from the number of elements, also in a helper of the
    project that reads its parameter so), an element-wise comparison counted over every
    element (`(pred.squeeze() == y).sum()`: a batch of one gives the same count), element-wise arithmetic
    reduced over every element (`-(pos.squeeze() + neg).mean()`: broadcasting gives the same elements), and
    NumPy or pandas values.

    ## Example
    ```python
    class Regressor(torch.nn.Module):
        def __init__(self, features):
            super().__init__()
            self.head = torch.nn.Linear(features, 1)

        def forward(self, x):
            return self.head(x).squeeze()
    ```

    ## Use instead
    ```python
        def forward(self, x):
            return self.head(x).squeeze(-1)
    ```

    ## Fix safety
    The fix names the dimensions known to be 1 (no fix where none is known: a guess would be wrong); it
    is unsafe where the code itself made a leading singleton and other dimensions are unknown. It is
    safe when the shape is fully known, or when the known singleton is not the leading dimension (the output of
    `nn.Linear(..., 1)`, a `keepdim=True` reduction): it only stops the unknown leading dimensions —
    the batch — from being dropped when they happen to be 1, which is the bug. It is unsafe when the
    known singleton is a leading dimension added by the code itself (`image.unsqueeze(0)`, a
    tokenizer's `[1, L]`) and other dimensions are unknown: there `squeeze()` drops the batch of one on
    purpose, and the code after it may rely on also losing a 1 among the sample's own dimensions (the
    channel of a grayscale image `[1, 1, H, W]`).

    Known singletons come from the output of `nn.Linear(..., 1)`, `unsqueeze(k)` / `x[None]`, a
    reduction with `keepdim=True`, a literal constructor such as `torch.rand(1, 3)`, indexing a known
    shape, or a tokenizer's `return_tensors="pt"` output for one string (`[1, L]`); the fix squeezes
    exactly those: `squeeze(0)`, or `squeeze((1, 3))` for several (a tuple of dims needs torch >= 2.0).
    Guessing `squeeze(-1)` where the shape is unknown would be wrong whenever the singleton is the
    leading dimension (a single image `[1, H, W]`, a batch of one `[1, C]`): an error, or silently
    wrong values (a softmax over a dimension of size 1 is all ones).

    Not reported at all: values shown or exported (`imshow`, `Image.fromarray`, `ToPILImage`,
    `save_image`), turned into NumPy or Python numbers (`.numpy()`, `.tolist()`, `.item()`, `float()`),
    or given as the index of `index_select` (a 0-d index selects what a one-element index does),
    directly or through a variable used only there, and tensors known to be 1-D.

    ## Options
    None.

    ## References
    - [torch.squeeze](https://pytorch.org/docs/stable/generated/torch.squeeze.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL401"
    NAME = "squeeze-without-dim"
    MESSAGE = "`squeeze()` without a dim also drops the batch dimension when the batch has one sample; name the dim"
    FIX_TITLE = "Squeeze only the singleton dimension"
    TRIGGERS = ("squeeze",)

    VALID = [
        # the squeezed column, added to another through names, then summed over every element
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class SplitLoss(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.gate = nn.Linear(width, 2)
        self.body = nn.Linear(width, classes)

    def forward(self, h, y):
        gate = F.log_softmax(self.gate(h), dim=1)[:, 0]
        chosen = F.log_softmax(self.body(h), dim=1).gather(1, y.view(-1, 1)).squeeze()
        nll = -(gate + chosen)
        return nll.float().sum() / len(y)
""",
        # element-wise arithmetic with the squeezed scores, then the mean of every element
        """
import torch
import torch.nn as nn


class PairScore(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.emb = nn.Embedding(n, d)

    def forward(self, a, b, others):
        n, d = a.shape[0], self.emb.embedding_dim
        ea, eb = self.emb(a).view(n, d, 1), self.emb(b).view(n, 1, d)
        near = torch.bmm(eb, ea).sigmoid().squeeze()
        far = torch.bmm(self.emb(others), ea).neg().sigmoid().sum(dim=(1, 2))
        return -(near.log() + far.log()).mean()
""",
        # both sides of the loss squeezed alike: a batch of one drops the same dimension on each
        Valid(
            """
import torch.nn.functional as F


def regression_loss(logits, labels):
    return F.mse_loss(logits.squeeze(), labels.squeeze())
"""
        ),
        # the batch was reduced away right before; one output becoming a scalar is intended
        Valid(
            """
import torch


def per_output_error(preds, target):
    return torch.log(torch.cosh(preds - target)).sum(0).squeeze()
"""
        ),
        # the code checked the size first (on this tensor or on the one it travels with)
        Valid(
            """
import torch


def finish(tau, p_value):
    if tau.shape[0] == 1:
        tau = tau.squeeze()
        p_value = p_value.squeeze()
    return tau, p_value


def to_curve(x):
    return x.squeeze() if x.ndim > 1 else x


def as_scalar(value):
    if not torch.numel(value) == 1:
        raise ValueError("expected one element")
    value = value.squeeze()
    return value
"""
        ),
        # the module's own parameter, reached through a local
        Valid(
            """
import torch
import torch.nn as nn


class Shift(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.shift = nn.ParameterDict({"a": nn.Parameter(torch.zeros(1, n))})

    def merged_bias(self, bias, name):
        shift = self.shift[name].data
        return bias + shift.squeeze()
"""
        ),
        # transposed, moved and turned into an array for a heat map
        Valid(
            """
import matplotlib.pyplot as plt
import torch


def show_encoding(block):
    table = block.pe.squeeze().T.cpu().numpy()
    plt.imshow(table)
"""
        ),
        # the size is tested before the squeezed indices are used: a 0-d result is expected
        Valid(
            """
import torch


def mask_padding(targets, pad):
    indices = torch.nonzero(targets == pad).squeeze()
    if indices.numel() > 1:
        targets[indices[1:]] = -100
    return targets
"""
        ),
        # computed from the module's own buffer: no input, no batch dimension
        Valid(
            """
import torch
import torch.nn as nn


class EdgeNet(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("coord", torch.zeros(n, n, 4))
        self.edge = nn.Sequential(nn.Linear(4, 1), nn.Tanh())

    def forward(self, x):
        adjacency = self.edge(self.coord).squeeze()
        return torch.bmm(adjacency.expand(x.size(0), -1, -1), x)
"""
        ),
        # per-output statistics made from a function's plain tensors: nothing says there is a batch
        Valid(
            """
import torch


def corrcoef_compute(var_x, var_y, corr_xy):
    corr = corr_xy / (var_x * var_y).sqrt()
    return torch.clamp(corr, -1.0, 1.0).squeeze()


def mean_error(total, count):
    return (total / count).squeeze()
"""
        ),
        # a metric read from a dictionary, a table loaded from a file
        Valid(
            """
import torch


def check(logs, key, best):
    current = logs[key].squeeze()
    return bool(current < best)


def split_mask(table, split):
    return (table.data == split).squeeze()
"""
        ),
        # the function makes one sample a batch of one itself: squeeze() undoes it
        Valid(
            """
import torch


def embed(encoder, patch):
    grid = patch.unsqueeze(0).unsqueeze(0).float()
    return encoder(grid).squeeze()


def predict(model, image):
    return model(image[None]).softmax(-1).squeeze()
"""
        ),
        # a branch chosen by the shape: the code knows which dimensions are 1
        Valid(
            """
import torch


def merge(model, x, keepdim, shape):
    out = model(x)
    if keepdim and shape != x.shape:
        out = out.squeeze()
    return out


def delta(model, weight):
    d = model(weight)
    if weight.size()[2:4] == (1, 1):
        d = d.squeeze()
    return d
"""
        ),
        # the model's own method applied to its own table, not to an input
        Valid(
            """
import torch
import torch.nn as nn


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.zeros(16, 1, 8))

    def encode(self, t):
        return t * 2

    def forward(self, x):
        codes = self.encode(self.table).squeeze()
        return x @ codes.T
"""
        ),
        # the function handles the mask's ranks itself before squeezing it
        Valid(
            """
import torch
import torch.nn as nn


class Mixer(nn.Module):
    def forward(self, hidden, mask):
        if mask.ndim == 4:
            mask = (mask[:, 0, -1, :] == 0).int()
        return hidden * mask.squeeze().unsqueeze(-1)
"""
        ),
        # both sides of a comparison squeezed alike
        Valid(
            """
import torch


def changed(model, image, restored):
    return torch.where(model(image).squeeze() != model(restored).squeeze())
"""
        ),
        Valid(
            """
import torch

class Regressor(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.head = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.head(x).squeeze(-1)
"""
        ),
        Valid(
            """
import torch

probs = torch.rand(8)
flat = probs.squeeze()
"""
        ),
        Valid(
            """
import numpy as np

def f(a):
    return np.squeeze(a)


def g(model, x):
    return np.asarray(model(x)).squeeze()
"""
        ),
        Valid(
            """
import torch

def to_list(x):
    return x.cpu().numpy().squeeze()
"""
        ),
        Valid(
            """
import torch

x = torch.zeros(4, 3)
y = x.squeeze()
"""
        ),
        Valid(
            """
def f(table):
    return table.squeeze()
"""
        ),
        Valid(
            """
import torch

def to_scalar(x):
    return x.squeeze() if x.numel() == 1 else x
"""
        ),
        Valid(
            """
import torch

def _clip(n: int, limit: int) -> int:
    return min(n, limit)

def mask_bounds(spec, mask_param: int):
    mask_param = _clip(mask_param, spec.size(-1))
    value = torch.rand(1) * mask_param
    start = torch.rand(1) * (spec.size(-1) - value)
    return start.long().squeeze()
"""
        ),
        # shown or exported: every singleton is meant to go
        Valid(
            """
import matplotlib.pyplot as plt
import torch

def show(image):
    plt.imshow(image.unsqueeze(0).squeeze().permute(1, 2, 0))
    img = image[None].squeeze()
    plt.imshow(img)
    value = float(image.sum(dim=0, keepdim=True).squeeze())
    return image.unsqueeze(0).squeeze().cpu().numpy()
"""
        ),
        Valid(
            """
import torch
from torchvision.utils import save_image

def export(batch, path):
    save_image(batch.mean(dim=1, keepdim=True).squeeze(), path)
"""
        ),
        Valid(
            """
import torch

def finish(tau):
    if tau.shape[0] == 1:
        tau = tau.squeeze()
    return tau
"""
        ),
        # a batch of one made on purpose: a state built for one sample, a one-token input
        Valid(
            """
import torch
import torch.nn as nn

class Speller(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.h = h
        self.emb = nn.Embedding(n, h)
        self.cell = nn.LSTM(h, h)
        self.proj = nn.Linear(h, n)

    def fresh_state(self, batch):
        return torch.zeros(1, batch, self.h), torch.zeros(1, batch, self.h)

    def forward(self, tok, state):
        out, state = self.cell(self.emb(tok), state)
        return self.proj(out), state

def spell(model: Speller, first, length):
    state = model.fresh_state(1)
    tok = torch.tensor([[first]])
    letters = []
    for _ in range(length):
        scores, state = model(tok, state)
        tok = scores.squeeze().argmax().view(1, 1)
        letters.append(tok.item())
    return letters
"""
        ),
        Valid(
            """
import torch

def probe_once(net):
    x = torch.zeros(1, 1)
    return net(x).squeeze()
"""
        ),
        Valid(
            """
import torch

def respond(decoder, start_id, hidden_size):
    token = torch.LongTensor([[start_id]])
    hidden = torch.randn(1, 1, hidden_size)
    logits, hidden = decoder(token, hidden)
    return logits.squeeze()
"""
        ),
        # a callable given to the function: nothing trains it here, so nothing says its output is a batch
        Valid(
            """
import torch.nn.functional as F


def score_only(rank, a):
    s = rank(a)
    return s.squeeze()


def validate(rank, a, y):
    s = rank(a)
    loss = F.mse_loss(s.squeeze(), y)
    return loss.item()
"""
        ),
        # one sample taken out of a batch by an index: its batch dimension is already gone
        Valid(
            """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc = nn.Linear(h, 4)

    def forward(self, x):
        out = self.fc(x).sigmoid()
        first = out[0].squeeze()
        rows = [out[i].squeeze() for i in range(out.size(0))]
        return first, rows
"""
        ),
        # one text or many: a tokenizer's output for an input nothing describes is no batch; the first
        # sequence a model generated is one sample
        Valid(
            """
from transformers import AutoModelForCausalLM, AutoTokenizer


def ids_of(tokenizer, text):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    return ids.squeeze()


def complete(name, prompt):
    tok = AutoTokenizer.from_pretrained(name)
    lm = AutoModelForCausalLM.from_pretrained(name)
    ids = tok(prompt, return_tensors="pt").input_ids
    first = lm.generate(ids, max_new_tokens=8)[0]
    return tok.decode(first.squeeze())
"""
        ),
        # a helper that makes one sample a batch of one itself, or returns a statistic over the batch
        Valid(
            """
import torch


def classify(net, img):
    return net(img.unsqueeze(0))


def top(net, img):
    return classify(net, img).squeeze()


def centre(values):
    return values.mean(0, keepdim=True)


def shifted(values):
    return centre(values).squeeze()
"""
        ),
            # the batch dimension indexed away: a row of the output of a model whose `forward` returns one tensor,
        # rows of a loop over the tensor's own first dimension
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)


def per_sample(loader):
    net = Net().to("cpu")
    rows = []
    for x, y in loader:
        out = net(x)
        first = out[0].squeeze()
        for i in range(out.size(0)):
            rows.append(out[i].squeeze())
    return first, rows
"""
        ),
            # an element-wise comparison counted over every element: a batch of one gives the same count
        Valid(
            """
import torch


def accuracy(model, loader):
    hits = wrong = seen = 0
    for x, y in loader:
        out = model(x)
        pred = torch.max(out, 1)[1].data.squeeze()
        hits += (pred == y).sum().item()
        wrong += torch.sum(out.argmax(1).squeeze() != y).item()
        rate = (y == out.argmax(dim=1).squeeze()).float().mean()
        seen += y.size(0)
    return hits / seen, wrong, rate
"""
        ),
            # a script that runs the model on a batch of one it builds itself (a generation loop)
        Valid(
            """
import torch

model = torch.load("lm.pt", weights_only=False)
hidden = model.init_hidden(1)
token = torch.randint(100, (1, 1), dtype=torch.long).to("cpu")
with torch.no_grad():
    for step in range(20):
        output, hidden = model(token, hidden)
        weights = output.squeeze().exp()
        token.fill_(torch.multinomial(weights, 1)[0])
        start = model(torch.zeros(1, 4)[None]).squeeze()
"""
        ),
        # a state built for one sample by the model's own method, the model read back from a checkpoint (its
        # class unknown): every class in view that defines the method sizes the state with its argument; the
        # token input is also grown along the sequence elsewhere, so only the state says "one sample"
        Valid(
            """
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, n, h, layers=2):
        super().__init__()
        self.h, self.layers = h, layers
        self.emb = nn.Embedding(n, h)
        self.rnn = nn.GRU(h, h, layers)
        self.out = nn.Linear(h, n)

    def blank_state(self, rows):
        weight = next(self.parameters())
        return weight.new_zeros(self.layers, rows, self.h)

    def forward(self, tok, state):
        y, state = self.rnn(self.emb(tok), state)
        return self.out(y), state


net = torch.load("char.pt", weights_only=False)
state = net.blank_state(1)
seed = torch.tensor([[3]])
for step in range(50):
    if step % 10 == 0:
        seed = torch.cat([seed, seed[-1:]], 0)
    logits, state = net(seed, state)
    probs = logits.squeeze().softmax(-1)
    seed = probs.multinomial(1).view(-1, 1)
"""
        ),
        Valid(
            """
import pickle

import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.h = h
        self.cell = nn.LSTM(h, h)

    def zero_state(self, count):
        shape = (1, count, self.h)
        return torch.zeros((1, count, self.h)), torch.zeros(shape)

    def forward(self, x, state):
        return self.cell(x, state)


with open("tagger.pkl", "rb") as fh:
    model = pickle.load(fh).eval()


def tag_one(frames):
    state = model.zero_state(1)
    out, state = model(frames, state)
    return out.squeeze()
"""
        ),
        # a squeezed index given to `index_select`: a 0-d index selects what a one-element one does
        Valid(
            """
import torch
import torch.nn as nn


class Beam(nn.Module):
    def __init__(self, h, k):
        super().__init__()
        self.cell = nn.GRU(h, h)
        self.pick = nn.Linear(h, k)

    def forward(self, x, state):
        out, state = self.cell(x, state)
        parents = self.pick(out[-1]).argmax(1, keepdim=True)
        state = state.index_select(1, parents.squeeze())
        kept = torch.index_select(out, 1, parents.squeeze())
        rows = parents.squeeze()
        last = out.index_select(dim=1, index=rows)
        return kept, last, state
"""
        ),
        # what a helper makes of a batch when it reduces the batch away or makes its own batch of one; a step
        # of a part of the model run on the module's own state; products of the module's own tensors
        Valid(
            """
import torch
import torch.nn as nn


def pooled(t):
    return t.mean(0)


def one(t):
    return t.unsqueeze(0)


def collect(loader):
    kept = []
    for x, y in loader:
        kept.append(pooled(x).squeeze())
        kept.append(one(x[0]).squeeze())
    return kept


class Search(nn.Module):
    def __init__(self, core, h):
        super().__init__()
        self.core = core
        self.start = nn.Parameter(torch.zeros(1, 1, h))
        self.w = nn.Parameter(torch.zeros(h, 1))

    def forward(self, memory):
        logp, _ = self.core.step(self.start, None)
        table = self.start.matmul(self.w)
        return logp.squeeze(), table.squeeze(), memory
"""
        ),
        # a selection along the batch dimension itself: the rows picked are no batch any more
        Valid(
            """
def best_rows(net, states, rows):
    q = net(states)
    return q.index_select(0, rows).squeeze(), q.narrow(0, 0, 1).squeeze(), q.select(0, 2).squeeze()
"""
        ),
        # a helper also given a tensor that is no batch (a table), or never called in the file: nothing says
        # its parameter holds a batch
        Valid(
            """
import torch


def to_probs(scores):
    return torch.sigmoid(scores).squeeze()


def unused(scores):
    return scores.squeeze()


def evaluate(model, loader, table):
    prior = to_probs(table)
    return [to_probs(model(x)) * prior for x, _ in loader]
"""
        ),
            # a model run on the encoding of one text: a batch of one on purpose
        Valid(
            """
import torch


def embed(tokenizer, model, text: str):
    enc = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        out = model(**enc)
    return out.last_hidden_state.squeeze()


def embed_caption(tokenizer, model):
    ids = tokenizer("a photo of a cat", return_tensors="pt")["input_ids"]
    return model(ids).last_hidden_state.squeeze()
"""
        ),
            # a script: the squeezed predictions only counted; the name later holds an array
        Valid(
            """
import torch

for x, y in loader:
    out = model(x)
    pred = torch.max(out, 1)[1].data.squeeze()
    acc = (pred == y).sum().item() / float(y.size(0))
    print(pred, out.squeeze())

test_out = model(test_x[:10])
pred = torch.max(test_out, 1)[1].data.numpy()
print(pred, "prediction")
"""
        ),
        # a model's own method on the module's state alone, a method that makes its own batch of one, and a
        # method whose return is a mean over everything: no batch to lose
        Valid(
            """
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.anchor = nn.Parameter(torch.zeros(1, h))
        self.body = nn.Linear(h, h)
        self.head = nn.Linear(h, 1)

    def baseline(self):
        return self.head(self.body(self.anchor))

    def value_of_one(self, obs):
        return self.head(self.body(obs.unsqueeze(0)))

    def mean_value(self, obs):
        return self.head(self.body(obs)).mean()

    def report(self, obs):
        base = self.baseline()
        return base.squeeze(), self.value_of_one(obs).squeeze(), self.mean_value(obs).squeeze()
"""
        ),
        # the squeezed value comes from the sample the function made a batch of one: through a model, a list
        # it was appended to, an in-place `unsqueeze_(0)`
        Valid(
            """
import torch


def describe(model, sample, frames):
    one = sample[None]
    outs = []
    outs.append(model(one))
    joined = torch.cat(outs, -1).squeeze()
    frames.unsqueeze_(0)
    scores, _ = model(frames)
    return joined, scores.softmax(-1).squeeze()
"""
        ),
        # a table of numbers written in the code, a scalar reduction, a loss read as a number: no batch
        Valid(
            """
import torch
import torch.nn.functional as F


def prior():
    weights = torch.tensor([[0.2, 0.8]])
    return weights.squeeze(), torch.tensor([[1.0], [2.0]]).float().squeeze()


def fit(model, loader, opt):
    for x, y in loader:
        out = model(x)
        loss = F.mse_loss(out.squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(loss.squeeze().item(), out.mean().squeeze())
"""
        ),
        # the squeezed values only meet an element-wise loss that reduces, and a mean: with one sample the
        # 0-d tensor broadcasts to the target as the one-element one would, the loss is the same number
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


def td_step(q_net, target_net, batch, opt, gamma, log):
    with torch.no_grad():
        best = target_net(batch.next_obs).max(dim=1).values
        target = batch.rewards + gamma * best
    taken = q_net(batch.obs).gather(1, batch.actions).squeeze()
    loss = F.mse_loss(target, taken)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log(taken.mean().item())


def value_step(critic, loader, opt):
    mse = nn.MSELoss()
    for states, returns in loader:
        loss = mse(critic(states).squeeze(), returns)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # a Flax module's output in a script that takes only torch's TensorBoard writer: no torch tensor
        Valid(
            """
import flax.linen as nn
import jax
from torch.utils.tensorboard import SummaryWriter


class Critic(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(x)


def rollout(batches):
    critic = Critic()
    params = critic.init(jax.random.PRNGKey(0), batches[0])
    writer = SummaryWriter()
    for step, obs in enumerate(batches):
        value = critic.apply(params, obs)
        writer.add_histogram("value", value.squeeze(), step)
"""
        ),
        # the model's batch is the three sentences written out: its leading dimension is never 1
        Valid(
            """
import torch
import torch.nn as nn

sentences = ["i like dog", "i love coffee", "i hate milk"]
words = sorted(set(" ".join(sentences).split()))
index = {w: i for i, w in enumerate(words)}


def make_batch():
    inputs, targets = [], []
    for sentence in sentences:
        tokens = sentence.split()
        inputs.append([index[t] for t in tokens[:-1]])
        targets.append(index[tokens[-1]])
    return inputs, targets


class NextWord(nn.Module):
    def __init__(self, n, width=8):
        super().__init__()
        self.embed = nn.Embedding(n, width)
        self.out = nn.Linear(2 * width, n)

    def forward(self, x):
        return self.out(self.embed(x).flatten(1))


model = NextWord(len(words))
inputs, targets = make_batch()
inputs = torch.LongTensor(inputs)
predict = model(inputs).max(1, keepdim=True)[1]
print([words[n.item()] for n in predict.squeeze()])
"""
        ),
        # a model of unknown output indexed by a loop over its own rows: each row is one sample already
        Valid(
            """
import torch


def per_sample(model, loader):
    rows = []
    for x, y in loader:
        out = model(x)
        for i in range(out.size(0)):
            rows.append(out[i].squeeze())
    return rows
"""
        ),
        # every size known: `squeeze()` drops the same dimensions at every run (no batch of a size known only
        # at run time is among them), as the code that wrote the sizes out expects
        """
import torch

noise = torch.rand(1, 3, 1)
x = noise[None].squeeze()
demo = torch.zeros(2, 1, 1).reshape(1, 2).squeeze()
""",
        # a sample made a batch of one in the function form of `unsqueeze`: the squeeze takes it away again
        """
import torch


def predict_each(model, samples):
    probs = []
    with torch.inference_mode():
        for sample in samples:
            sample = torch.unsqueeze(sample, dim=0)
            probs.append(torch.softmax(model(sample).squeeze(), dim=0))
    return probs
""",
        # a script's own code runs the model on a whole dataset split it holds: the leading dimension is the
        # size of that data at every run, and `squeeze()` makes the [N, 1] output match the [N] labels
        """
import torch
from torch import nn

X = torch.randn(500, 2)
y = (X[:, 0] > 0).float()
X_train, X_test = X[:400], X[400:]
y_train, y_test = y[:400], y[400:]
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100):
    logits = model(X_train).squeeze()
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y_train)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.inference_mode():
    print(torch.round(torch.sigmoid(model(X_test))).squeeze()[:10])
""",
        # a script's own code on a batch of eight it builds (its size written out, the same at every run)
        """
import torch

model = torch.load("lm.pt", weights_only=False)
tokens = torch.randint(100, (8, 1), dtype=torch.long)
with torch.no_grad():
    output, hidden = model(tokens, model.init_hidden(8))
    weights = output.squeeze().exp()
""",
        # a script's own code on every sentence of a file it reads whole: the rows are the file's lines, the
        # same at every run (a batch drawn from a loader, or sliced per iteration, is what may hold one sample)
        """
import torch
import torch.nn as nn

sentences = open("corpus.txt").read().splitlines()
words = sorted(set(" ".join(sentences).split()))
index = {w: i for i, w in enumerate(words)}


def make_batch():
    inputs, targets = [], []
    for sentence in sentences:
        tokens = sentence.split()
        inputs.append([index[t] for t in tokens[:-1]])
        targets.append(index[tokens[-1]])
    return inputs, targets


class NextWord(nn.Module):
    def __init__(self, n, width=8):
        super().__init__()
        self.embed = nn.Embedding(n, width)
        self.out = nn.Linear(2 * width, n)

    def forward(self, x):
        return self.out(self.embed(x).flatten(1))


model = NextWord(len(words))
inputs, targets = make_batch()
inputs = torch.LongTensor(inputs)
predict = model(inputs).max(1, keepdim=True)[1]
print([words[n.item()] for n in predict.squeeze()])
""",
        # a notebook's classifier run once on the whole synthetic data it made, its output thresholded
        """
import torch
from torch import nn

inner = 5.0 + torch.randn(2000, 1)
outer = 8.0 + torch.randn(2000, 1)
X = torch.cat([torch.cat([inner, inner], axis=1), torch.cat([outer, outer], axis=1)], axis=0)
Y = torch.cat([torch.ones(2000, 1), torch.zeros(2000, 1)], axis=0)
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
for step in range(100):
    model.zero_grad()
    nn.functional.binary_cross_entropy(model(X), Y).backward()
positive = X[torch.squeeze(model.forward(X) >= 0.5)]
negative = X[(model(X) < 0.5).squeeze()]
""",
        # every batch of the loader holds 64 samples: it drops the last incomplete one
        """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

batch_size = 64
net = nn.Sequential(nn.Conv2d(1, 1, 3, padding=1), nn.Sigmoid())
loader = DataLoader(images, batch_size=batch_size, shuffle=True, drop_last=True)
opt = torch.optim.Adam(net.parameters())
for i, [image, _] in enumerate(loader):
    opt.zero_grad()
    out = net(image)
    loss = nn.functional.mse_loss(out, image)
    loss.backward()
    opt.step()
shown = torch.squeeze(out.detach())
for k in range(shown.size(0)):
    print(shown[k].mean())
""",
        # the decoder's output has a row per input row of a loader that only yields full batches of 100
        """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

encoder = nn.Sequential(nn.Linear(784, 32), nn.ReLU())
decoder = nn.Sequential(nn.Linear(32, 784), nn.Sigmoid())
loader = DataLoader(images, batch_size=100, shuffle=True, drop_last=True)
opt = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()))
for image, _ in loader:
    opt.zero_grad()
    output = encoder(image)
    output = decoder(output)
    nn.functional.mse_loss(output, image).backward()
    opt.step()
shown = torch.squeeze(output.detach())
""",
        # statistics over the batch and the spatial dimensions, kept as [1, C, 1, 1]: the batch is reduced away,
        # and dropping every 1 leaves the channels, as meant
        Valid(
            """
import torch
import torch.nn as nn


class BatchStats(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        h = self.conv(x)
        m = torch.mean(h, [0, 2, 3], keepdim=True)
        s = h.pow(2).sum(dim=(0, 2, 3), keepdim=True)
        return h, m.squeeze(), s.squeeze()
"""
        ),
        # squeezed, rescaled by a function of the file that keeps the values' shape, then only saved as an
        # image: every singleton dimension gone is what the image wants
        Valid(
            """
import torch
import torch.nn as nn
from torchvision.utils import save_image

G = nn.Sequential(nn.Linear(8, 64), nn.Tanh())


def denorm(x):
    return (x.data + 1) / 2.0


def show(z, n):
    for i in range(n):
        img = G(z).view(-1, 1, 8, 8)
        img = denorm(img.squeeze())
        save_image(img, f"sample_{i}.png")
"""
        ),
        # the first head's output, unpacked, thresholded and squeezed under its own name, is only compared
        # with the labels and counted: a batch of one gives the same count
        Valid(
            """
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls, self.reg = nn.Linear(10, 1), nn.Linear(10, 1)

    def forward(self, x):
        return torch.sigmoid(self.cls(x)), self.reg(x)


@torch.no_grad()
def correct_in(batch, model):
    x, y = batch
    pred, _ = model(x)
    pred = (pred > 0.5).squeeze()
    return (pred == y).float().sum()
"""
        ),
        # a criterion parameter every call fills with a loss that broadcasts and reduces: a batch of one gives
        # the loss a one-element batch gives
        Valid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def fit_batch(model, loss_fn, opt, x, y):
    opt.zero_grad()
    loss = loss_fn(model(x).squeeze(), y)
    loss.backward()
    opt.step()
    return loss.item()


reg = nn.Linear(5, 1)
sgd = torch.optim.SGD(reg.parameters(), lr=0.05)
rows = TensorDataset(torch.rand(41, 5), torch.rand(41))
for x, y in DataLoader(rows, batch_size=8):
    fit_batch(reg, nn.MSELoss(reduction="mean"), sgd, x, y)
"""
        ),
        # a loader written in the loop that drops its last incomplete batch: every batch holds 8 rows
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

rows = TensorDataset(torch.rand(41, 5), torch.randint(0, 2, (41,)).float())
clf = nn.Linear(5, 1)
sgd = torch.optim.SGD(clf.parameters(), lr=0.05)
for x, y in DataLoader(rows, batch_size=8, drop_last=True):
    sgd.zero_grad()
    loss = F.binary_cross_entropy_with_logits(clf(x).squeeze(), y)
    loss.backward()
    sgd.step()
"""
        ),
        # a criterion bound to a name, then passed by every call: it broadcasts and reduces
        Valid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def fit_batch(model, loss_fn, opt, x, y):
    opt.zero_grad()
    loss = loss_fn(model(x).squeeze(), y)
    loss.backward()
    opt.step()
    return loss.item()


reg = nn.Linear(5, 1)
sgd = torch.optim.SGD(reg.parameters(), lr=0.05)
criterion = nn.HuberLoss(delta=0.5)
rows = TensorDataset(torch.rand(41, 5), torch.rand(41))
for x, y in DataLoader(rows, batch_size=8):
    fit_batch(reg, criterion, sgd, x, y)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Critic:
    def __init__(self, width):
        self.value = nn.Linear(width, 1)
        self.loss = nn.SmoothL1Loss()
        self.opt = torch.optim.SGD(self.value.parameters(), lr=0.01)

    def fit(self, states, targets):
        v = self.value(states).squeeze()
        err = self.loss(v, targets)
        self.opt.zero_grad()
        err.backward()
        self.opt.step()


def old_style(net, xs, ys):
    crit = nn.MSELoss(reduction="elementwise_mean")
    return crit(net(xs).squeeze(), ys)


def pictures(decoder, codes):
    for z in codes:
        frames = decoder(z).view(64, 32, 32, 1)
    grid = torch.squeeze(frames.data)
    return grid[0]
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def gather_last(outputs, lengths):
    idx = (lengths.view(-1, 1) - 1).clamp(min=0)
    return outputs[torch.arange(outputs.size(0)), idx.flatten()]


class Reader(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.rnn = nn.LSTM(d, d, batch_first=True)
        self.score = nn.Linear(d, 1)

    def forward(self, seqs, lengths):
        out, _ = self.rnn(seqs)
        last = gather_last(out, lengths.squeeze())
        return self.score(last).squeeze().reshape(-1, 1)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

critic = nn.Conv2d(3, 1, 4, 2, 1)
bce = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(critic.parameters())
for x in torch.utils.data.DataLoader(torch.randn(8, 3, 16, 16), batch_size=4):
    patches = critic(x).squeeze()
    # the targets take the squeezed shape: both sides lose the same dimensions
    loss = bce(patches, torch.ones(patches.size())) + bce(patches, torch.zeros_like(patches))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        rows = []
        for i in range(x.size(0)):
            rows.append(x[i])  # one sample each
        first = rows[0].squeeze()
        return self.head(first)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.cell = nn.LSTMCell(16, 32)

    def forward(self, tgt):
        # tgt: (T, B)
        Y = self.emb(tgt)
        h = None
        outs = []
        for Y_t in torch.split(Y, 1):
            Y_t = torch.squeeze(Y_t, 0)
            h = self.cell(Y_t, h)
            outs.append(h[0])
        return torch.stack(outs)
"""
        ),
    ]

    INVALID = [
        # time first: `[T, B, 1]` squeezed loses the batch of one in the middle, and `* mask` (`[T, B]`) then
        # broadcasts to `[T, T]`: the sum differs
        Invalid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.rnn = nn.GRU(d, d)
        self.out = nn.Linear(d, 1)

    def forward(self, x, mask):
        h, _ = self.rnn(x)
        score = self.out(h).squeeze()
        return -(score * mask).sum()
""",
            fixed="""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.rnn = nn.GRU(d, d)
        self.out = nn.Linear(d, 1)

    def forward(self, x, mask):
        h, _ = self.rnn(x)
        score = self.out(h).squeeze(-1)
        return -(score * mask).sum()
""",
            line=14,
        ),
        # a count of prompts is not the batch: one image still loses its dimension
        Invalid(
            """
import torch


def finish(model, images, prompt_names):
    probs = model(images).softmax(-1)[:, :, 0]
    if len(prompt_names) == 1:
        return probs.squeeze()
    return {p: probs[:, i] for i, p in enumerate(prompt_names)}
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # a model's own method returns a batch
        Invalid(
            """
import torch


def decode(codec_model, ids):
    audio = (
        codec_model.decode(ids)
        .audio_values.cpu()
        .squeeze()
    )
    return audio
""",
            message="(the output of `codec_model.decode`)",
        ),
        # a batch from a loader, through element-wise work and a reduction over another dimension
        Invalid(
            """
import torch
from torch.utils.data import DataLoader


def targets(dataset):
    found = []
    for images, labels in DataLoader(dataset, batch_size=32):
        weights = (labels.float() * 2).sum(dim=1)
        found.append(weights.squeeze())
    return found
""",
            message="(a batch drawn from `DataLoader(dataset, batch_size=32)`)",
        ),
        # the input of a model's forward is a batch
        Invalid(
            """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def forward(self, features, weights):
        scores = self.proj(features) * weights.squeeze()
        return scores
""",
            message="(`weights`, the input of the model's `forward`)",
        ),
        # the model's own method applied to its input, then a long chain of element-wise work
        Invalid(
            """
import torch
import torch.nn as nn


class Similarity(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)

    def features(self, x):
        return [self.stem(x)]

    def forward(self, x, y):
        fx, fy = self.features(x), self.features(y)
        total = torch.tensor(0.0)
        for k in range(len(fx)):
            mean_a = fx[k].mean([2, 3], keepdim=True)
            mean_b = fy[k].mean([2, 3], keepdim=True)
            ratio = (2 * mean_a * mean_b + 1e-6) / (mean_a**2 + mean_b**2 + 1e-6)
            total = total + ratio.sum(1, keepdim=True)
        return 1 - total.squeeze()
""",
            message="(`x`, the input of the model's `forward`)",
        ),
        # a Lightning step: the batch parameter, and the model's output through `self(...)`
        Invalid(
            """
import torch
import torch.nn.functional as F
import pytorch_lightning as pl


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())

    def forward(self, x):
        return self.body(x)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        outputs = self(x)
        preds, _ = outputs.max(dim=1)
        self.log("val_bce", F.binary_cross_entropy_with_logits(preds, y.squeeze()))
        return self.body(x).squeeze()
""",
            count=2,
        ),
        Invalid(
            """
import torch


class Regressor(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.head = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.head(x).squeeze()
""",
            fixed="""
import torch


class Regressor(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.head = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.head(x).squeeze(-1)
""",
            line=11,
            col=16,
        ),
        Invalid(
            """
import torch

def masks(x):
    m = x.mean(dim=1, keepdim=True)
    return torch.squeeze(m)
""",
            fixed="""
import torch

def masks(x):
    m = x.mean(dim=1, keepdim=True)
    return torch.squeeze(m, 1)
""",
        ),
        Invalid(
            """
import torch

def f(n):
    t = torch.zeros(n, 1, 5, 1)
    return t.squeeze()
""",
            fixed="""
import torch

def f(n):
    t = torch.zeros(n, 1, 5, 1)
    return t.squeeze((1, 3))
""",
        ),
        Invalid(
            """
import torch

def predict(model, x):
    scores = model(x)
    return scores.squeeze()
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # one image made a batch of one: the singleton is the leading dimension
        Invalid(
            """
import torch

def predict(model, image):
    batch = image.unsqueeze(0)
    scores = batch.mean(dim=(2, 3))
    return batch.squeeze()
""",
            fixed="""
import torch

def predict(model, image):
    batch = image.unsqueeze(0)
    scores = batch.mean(dim=(2, 3))
    return batch.squeeze(0)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def embed(tokenizer, model):
    ids = tokenizer("a photo of a cat", return_tensors="pt")["input_ids"]
    return model(ids.squeeze())
""",
            fixed="""
import torch

def embed(tokenizer, model):
    ids = tokenizer("a photo of a cat", return_tensors="pt")["input_ids"]
    return model(ids.squeeze(0))
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch


def noise(n):
    return torch.rand(n, 1, 3, 1).squeeze()
""",
            fixed="""
import torch


def noise(n):
    return torch.rand(n, 1, 3, 1).squeeze((1, 3))
""",
        ),
        # a batch of texts: [N, L], nothing known to be 1
        Invalid(
            """
import torch
from typing import List

def embed(tokenizer, texts: List[str]):
    enc = tokenizer(texts, return_tensors="pt")
    return enc.input_ids.squeeze()


def pair(tokenizer, question, answer):
    ids = tokenizer([question, answer], return_tensors="pt")["input_ids"]
    return ids.squeeze()
""",
            message="given to `tokenizer`)",
            count=2,
        ),
        # the state is made for the loader's batch, not for one sample: the batch of one is an accident
        Invalid(
            """
import torch
import torch.nn as nn

class Tagger(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.h = h
        self.rnn = nn.GRU(h, h)

    def start(self, batch):
        return torch.zeros(1, batch, self.h)

    def forward(self, x, state):
        return self.rnn(x, state)

def run(model: Tagger, loader, size):
    for x in loader:
        state = model.start(size)
        out, state = model(x, state)
        last = out.squeeze()
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # a callable given to a training step: its output goes into a loss the step differentiates
        Invalid(
            """
import torch.nn.functional as F


def fit(rank, opt, a, b, y):
    s = rank(a, b)
    loss = F.binary_cross_entropy_with_logits(s.squeeze(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            message="(the output of `rank`, trained here through `F.binary_cross_entropy_with_logits`)",
        ),
        Invalid(
            """
import torch


def fit(rank, crit, a, y):
    loss = crit(rank(a).squeeze(), y)
    loss.backward()
    return loss.item()
""",
            message="trained here through `crit`",
        ),
        # a padded batch, and a product of a model's output
        Invalid(
            """
import torch
from torch.nn.utils.rnn import pad_sequence


def masks_of(seqs):
    padded = pad_sequence(seqs, batch_first=True)
    return (padded > 0).float().squeeze()


def attend(model, q, k):
    scores = torch.bmm(model(q), k.transpose(1, 2))
    return scores.squeeze()
""",
            count=2,
            message="dim 0 is the batch",
        ),
        # a helper of the file returns the model's output
        Invalid(
            """
import torch


def predict(net, x):
    with torch.no_grad():
        return net(x)


def report(net, x):
    scores = predict(net, x)
    return scores.squeeze()
""",
            message="(the return of `predict`, the output of `net`)",
        ),
            # an element of a model's tuple output keeps the batch
        Invalid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4, batch_first=True)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        out, h = self.rnn(x)
        return self.fc(out), h


def tags(loader):
    net = Tagger()
    for x, y in loader:
        out = net(x)
        yield out[0].squeeze()
""",
            message="`out[0].squeeze()` without a dim drops dim 0 as well",
        ),
            # the comparison's mask itself is kept, or only part of it is counted: its shape matters
        Invalid(
            """
import torch


def matches(model, loader):
    for x, y in loader:
        out = model(x)
        hit = out.argmax(1).squeeze() == y
        per_row = (out.argmax(1).squeeze() == y).sum(dim=0)
        yield hit, per_row
""",
            count=2,
            message="dim 0 is the batch (the output of `model`)",
        ),
        # the same state built for a batch of sixteen
        Invalid(
            """
import torch
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.h = h
        self.rnn = nn.GRU(n, h)

    def blank_state(self, rows):
        return next(self.parameters()).new_zeros(1, rows, self.h)

    def forward(self, x, state):
        return self.rnn(x, state)


net = torch.load("char.pt", weights_only=False)
state = net.blank_state(16)
for frames in torch.load("frames.pt"):
    feats, state = net(frames, state)
    summary = feats.squeeze()
""",
            message="(the output of `net`)",
        ),
        # one class in view uses the argument as a fill value, not a size: nothing says the state holds one sample
        Invalid(
            """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.h = h
        self.rnn = nn.GRU(h, h)

    def blank_state(self, rows):
        return torch.zeros(1, rows, self.h)

    def forward(self, x, state):
        return self.rnn(x, state)


class Decoder(Encoder):
    def blank_state(self, level):
        return torch.full((1, 4, self.h), level)


net = torch.load("seq.pt", weights_only=False)
state = net.blank_state(1)
for frames in torch.load("frames.pt"):
    feats, state = net(frames, state)
    summary = feats.squeeze()
""",
            message="(the output of `net`)",
        ),
        # a library layer's state: the classes in view say nothing about it
        Invalid(
            """
import torch
import torch.nn as nn


class Cell(nn.Module):
    def blank_state(self, rows):
        return torch.zeros(1, rows, 8)


rnn = nn.GRU(8, 8).to("cpu")
for frames in torch.load("frames.pt"):
    feats, _ = rnn(frames, rnn.blank_state(1))
    summary = feats.squeeze()
""",
            message="dim 1 is the batch (the output of `rnn`, a recurrent layer)",
        ),
        # the squeezed tensor is the one selected from, not the index: its batch dimension is still dropped
        Invalid(
            """
import torch
import torch.nn as nn


class Beam(nn.Module):
    def __init__(self, h, k):
        super().__init__()
        self.cell = nn.GRU(h, h)
        self.pick = nn.Linear(h, k)
        self.score = nn.Linear(h, 1)

    def forward(self, x, state):
        out, state = self.cell(x, state)
        parents = self.pick(out[-1]).argmax(1)
        return self.score(out[-1]).squeeze().index_select(0, parents), torch.index_select(parents[:, None].squeeze(), 0, parents)
""",
            fixed="""
import torch
import torch.nn as nn


class Beam(nn.Module):
    def __init__(self, h, k):
        super().__init__()
        self.cell = nn.GRU(h, h)
        self.pick = nn.Linear(h, k)
        self.score = nn.Linear(h, 1)

    def forward(self, x, state):
        out, state = self.cell(x, state)
        parents = self.pick(out[-1]).argmax(1)
        return self.score(out[-1]).squeeze(-1).index_select(0, parents), torch.index_select(parents[:, None].squeeze(1), 0, parents)
""",
            message="`self.score(out[-1]).squeeze()` without a dim on a tensor of shape [..., 1]",
            count=2,
        ),
        # a product of a layer's output keeps its rows: `bmm`, `matmul` as methods
        Invalid(
            """
import torch.nn as nn


class Attend(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.score = nn.Linear(h, h)

    def forward(self, query, keys):
        weights = self.score(query).softmax(-1)
        context = weights.bmm(keys)
        mixed = self.score(query).matmul(keys.transpose(1, 2))
        return context.squeeze(), mixed.squeeze()
""",
            message="dim 0 is the batch",
            count=2,
        ),
        # through a helper of the file that hands its argument back reshaped or repeated
        Invalid(
            """
import torch


def tile(t, k):
    dims = [1] * t.dim()
    dims[0] = k
    return t.repeat(*dims)


def as_column(t):
    return t.reshape(t.size(0), -1, 1)


def collect(loader):
    kept = []
    for x, y in loader:
        kept.append(as_column(x).squeeze())
        kept.append(tile(x, 3).squeeze())
    return kept
""",
            message="a batch drawn from `loader`",
            count=2,
        ),
        # a step of a part of the model run on the batch (a beam search over a decoder it was given)
        Invalid(
            """
import torch.nn as nn


class Search(nn.Module):
    def __init__(self, core, k):
        super().__init__()
        self.core = core
        self.k = k

    def forward(self, memory, state):
        logp, state = self.core.step(memory, state)
        return logp.squeeze().topk(self.k)
""",
            message="dim 0 is the batch",
        ),
        # a selection along another dimension keeps every row: the values of the actions taken
        Invalid(
            """
import torch


def td_targets(net, states, actions, picks):
    q = net(states)
    taken = q.gather(1, actions).squeeze()
    first = torch.index_select(q, 1, picks).squeeze()
    return taken, first, q.narrow(-1, 0, 1).squeeze()
""",
            message="dim 0 is the batch (the output of `net`)",
            count=3,
        ),
        # a batch handed to a helper: every call of it in the file gives one
        Invalid(
            """
import torch
import torch.nn as nn


def to_probs(scores):
    return torch.sigmoid(scores).squeeze()


class Pooled(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.body = nn.Linear(h, h)

    def _pool(self, feats):
        return feats.mean(-1).squeeze()

    def forward(self, x):
        return self._pool(self.body(x))


def evaluate(model, loader):
    return [to_probs(model(x)) for x, _ in loader]
""",
            message="given `model(x)` by the calls of `to_probs`: the output of `model`",
            count=2,
        ),
            # the encoding of a list of texts: a real batch
        Invalid(
            """
import torch
from typing import List


def embed(tokenizer, model, texts: List[str]):
    enc = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model(**enc)
    return out.last_hidden_state.squeeze()
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
            # the squeezed predictions themselves are kept (a batch of one gives a 0-d tensor `torch.cat` refuses)
        Invalid(
            """
import torch

kept = []
for x, y in loader:
    out = model(x)
    pred = torch.max(out, 1)[1].data.squeeze()
    acc = (pred == y).sum().item() / float(y.size(0))
    print(pred, "prediction")
    kept.append(pred)
every = torch.cat(kept)
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # a model's own method (not `forward`) returns a layer's output: what it gives back is a batch, whatever
        # the arguments (here a tensor built from a list of stored transitions), directly and unpacked
        Invalid(
            """
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 32)
        self.rnn = nn.GRU(32, 32)
        self.policy = nn.Linear(32, 2)
        self.value = nn.Linear(32, 1)

    def encode(self, obs, state):
        h, state = self.rnn(torch.relu(self.trunk(obs)).view(-1, 1, 32), state)
        return h, state

    def critic(self, obs, state):
        h, _ = self.encode(obs, state)
        return self.value(h)

    def actor(self, obs, state):
        h, state = self.encode(obs, state)
        return self.policy(h).softmax(-1), state

    def update(self, memory, state):
        obs = torch.tensor([m[0] for m in memory], dtype=torch.float)
        values = self.critic(obs, state).squeeze()
        probs, _ = self.actor(obs, state)
        return values, probs.squeeze()
""",
            message="(the return of `self.critic`, the output of `self.value`)",
            count=2,
        ),
        # a one-step decoder adds a time axis with `unsqueeze(0)` and squeezes it away with `squeeze(0)`; the
        # attention context it squeezes later never passes through that axis: its batch is still there
        Invalid(
            """
import torch
import torch.nn as nn


class StepDecoder(nn.Module):
    def __init__(self, h, n):
        super().__init__()
        self.cell = nn.GRU(2 * h, h)
        self.query = nn.Linear(h, h)
        self.out = nn.Linear(2 * h, n)

    def forward(self, embedded, previous, state, memory):
        step_in = torch.cat((embedded, previous), -1).unsqueeze(0)
        hidden, state = self.cell(step_in, state)
        hidden = hidden.squeeze(0)
        weights = self.query(hidden).unsqueeze(1).bmm(memory.transpose(1, 2)).softmax(-1)
        context = weights.bmm(memory)
        context = context.squeeze()
        return self.out(torch.cat((hidden, context), 1)), context, state
""",
            message="dim 0 is the batch (the output of `self.query`)",
        ),
        # a reference sample made a batch of one on the side: the squeezed outputs come from the loader's batches
        Invalid(
            """
import torch


def evaluate(model, loader, probe):
    reference = model(probe.unsqueeze(0))
    scores = []
    for x, y in loader:
        out = model(x)
        scores.append(out.squeeze())
    return reference, scores
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # the final hidden state of a GRU is [layers x directions, batch, features]: the batch is dim 1, and
        # squeezing the layer dimension of a one-layer encoder drops it too for a single sentence
        Invalid(
            """
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, width, kind, layers=1):
        super().__init__()
        self.layers = layers
        self.embed = nn.Embedding(vocab, width)
        if kind == "gru":
            cell = nn.GRU
        elif kind == "rnn":
            cell = nn.RNN
        else:
            raise ValueError(kind)
        self.encoder = cell(width, width, num_layers=layers, batch_first=True)
        self.mean = nn.Linear(width, 16)

    def forward(self, tokens):
        _, hidden = self.encoder(self.embed(tokens))
        if self.layers > 1:
            hidden = hidden.permute(1, 0, 2).flatten(1)
        else:
            hidden = hidden.squeeze()
        return self.mean(hidden)
""",
            message="`hidden.squeeze()` without a dim drops the batch as well when it holds one sample: dim 1 is "
                    "the batch (the final hidden state of `self.encoder`, a recurrent layer)",
        ),
        # a sequence-first GRU's output is [steps, batch, features]
        Invalid(
            """
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.GRU(width, width) if width > 8 else nn.RNN(width, width)
        self.out = nn.Linear(width, 5)

    def forward(self, tokens):
        states, _ = self.rnn(self.embed(tokens))
        return self.out(states.squeeze())
""",
            message="dim 1 is the batch (the output of `self.rnn`, a recurrent layer)",
        ),
        # with `batch_first=True` the output's batch is dim 0
        Invalid(
            """
import torch.nn as nn


class Reader(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, batch_first=True)
        self.out = nn.Linear(width, 2)

    def forward(self, tokens):
        states, (h, c) = self.lstm(self.embed(tokens))
        return self.out(states.squeeze())
""",
            message="dim 0 is the batch (the output of `self.lstm`, a recurrent layer)",
        ),
        # an element-wise loss kept per sample (`reduction="none"`): with one sample its shape follows the
        # squeezed operand, and the per-sample weights meet a 0-d loss
        Invalid(
            """
import torch.nn.functional as F


def weighted_step(model, loader, opt):
    for x, y, w in loader:
        per_sample = F.mse_loss(model(x).squeeze(), y, reduction="none")
        loss = (per_sample * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            message="dim 0 is the batch (the output of `model`)",
        ),
        # the same script batching by hand: the last slice of the split may hold one row
        Invalid(
            """
import torch
from torch import nn

X = torch.randn(500, 2)
y = (X[:, 0] > 0).float()
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
for start in range(0, len(X), 64):
    logits = model(X[start:start + 64]).squeeze()
    print(nn.functional.binary_cross_entropy_with_logits(logits, y[start:start + 64]))
""",
            fixed="""
import torch
from torch import nn

X = torch.randn(500, 2)
y = (X[:, 0] > 0).float()
model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
for start in range(0, len(X), 64):
    logits = model(X[start:start + 64]).squeeze(1)
    print(nn.functional.binary_cross_entropy_with_logits(logits, y[start:start + 64]))
""",
            line=9,
        ),
        # a layer that is a GRU in one configuration and a project class in another: the squeeze is
        # reported, but dim 0 of its second output is not said to be the batch (a GRU's is dim 1)
        Invalid(
            """
import torch.nn as nn


class Cell(nn.Module):
    def forward(self, x):
        return x, x.mean(1)


class Evolve(nn.Module):
    def __init__(self, width, kind):
        super().__init__()
        if kind == "gru":
            self.rnn = nn.GRU(width, width, batch_first=True)
        else:
            self.rnn = Cell()
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        _, state = self.rnn(x)
        state = state.squeeze()
        return self.head(state)
""",
            line=21,
            message="no dimension is known to be 1 here",
        ),
        # a name a second loop draws again: its batch is that loop's, not the first loop's
        Invalid(
            """
from torch.utils.data import DataLoader


def run(model, train_set, test_set):
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=100)
    for step, (data, target) in enumerate(train_loader):
        data, target = data.cuda(), target.cuda()
        model(data).sum().backward()
    for data, target in test_loader:
        data, target = data.cuda(), target.cuda().long().squeeze()
        print(model(data).argmax(1).eq(target).sum().item())
""",
            line=12,
            message="a batch drawn from `test_loader`",
        ),
        # a loader that keeps its last batch: it may hold one sample
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

net = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())
loader = DataLoader(rows, batch_size=64, shuffle=True)
opt = torch.optim.Adam(net.parameters())
for i, [x, y] in enumerate(loader):
    opt.zero_grad()
    out = net(x)
    loss = nn.functional.binary_cross_entropy(out, y)
    loss.backward()
    opt.step()
shown = torch.squeeze(out.detach())
""",
            message="the output of `net`",
        ),
        # NumPy's squeeze of a tensor calls the tensor's own `squeeze()`: a batch of one becomes a 0-d tensor
        Invalid(
            """
import numpy as np
import torch


def per_class(model, loader):
    hits = [0.0] * 10
    for data, target in loader:
        _, pred = torch.max(model(data), 1)
        correct = np.squeeze(pred.eq(target.view_as(pred)))
        for i in range(data.size(0)):
            hits[target[i].item()] += correct[i].item()
    return hits
""",
            line=10,
            message="`np.squeeze(pred.eq(target.view_as(pred)))` without a dim",
        ),
        # a parameter rebound to its own squeeze: the squeeze reads what the callers pass (a model's output)
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Linear(8, 1)
loader = torch.utils.data.DataLoader(dataset, batch_size=16)


def hits(scores, labels):
    scores = scores.squeeze()
    return ((scores > 0).float() == labels).sum().item()


with torch.no_grad():
    print(sum(hits(net(x), y) for x, y in loader))
""",
            line=10,
            message="given `net(x)` by the calls of `hits`",
        ),
        # the same rescaled squeeze fed back to the model: the batch of one loses its dimension
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision.utils import save_image

G = nn.Sequential(nn.Linear(8, 64), nn.Tanh())


def denorm(x):
    return (x.data + 1) / 2.0


def show(z, n):
    for i in range(n):
        img = G(z).view(-1, 1, 8, 8)
        img = denorm(img.squeeze())
        print(G(img.view(img.size(0), -1, 8)).mean(0))
""",
            line=16,
            col=22,
            message="on a tensor of shape [?, 1, 8, 8] also drops the batch dimension",
            fixed="""
import torch
import torch.nn as nn
from torchvision.utils import save_image

G = nn.Sequential(nn.Linear(8, 64), nn.Tanh())


def denorm(x):
    return (x.data + 1) / 2.0


def show(z, n):
    for i in range(n):
        img = G(z).view(-1, 1, 8, 8)
        img = denorm(img.squeeze(1))
        print(G(img.view(img.size(0), -1, 8)).mean(0))
""",
        ),
        # a start frame made with `unsqueeze(0)` and joined to the targets along that axis: a time axis, not
        # a batch of one; each step's stop logit `[B, 1]` is squeezed to a 0-d tensor when B is 1
        Invalid(
            """
import torch
import torch.nn as nn


class StopDecoder(nn.Module):
    def __init__(self, n_feats, hidden):
        super().__init__()
        self.cell = nn.GRUCell(n_feats, hidden)
        self.out = nn.Linear(hidden, n_feats + 1)
        self.hidden = hidden

    def step(self, x, h):
        h = self.cell(x, h)
        frame, stop = self.out(h).split([x.size(1), 1], dim=1)
        return frame, stop, h

    def forward(self, memory, targets):
        start = memory.new_zeros(memory.size(0), targets.size(2)).unsqueeze(0)
        steps = torch.cat((start, targets.transpose(0, 1)), dim=0)
        h = memory.new_zeros(memory.size(0), self.hidden)
        stops = []
        while len(stops) < steps.size(0) - 1:
            frame, stop, h = self.step(steps[len(stops)], h)
            stops.append(stop.squeeze())
        return torch.stack(stops).transpose(0, 1)
""",
            line=25,
            col=26,
        ),
        # the criterion every call passes needs the input's shape to be the target's: a batch of one fails
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def fit_batch(model, loss_fn, opt, x, y):
    opt.zero_grad()
    loss = loss_fn(model(x).squeeze(), y)
    loss.backward()
    opt.step()
    return loss.item()


reg = nn.Linear(5, 1)
sgd = torch.optim.SGD(reg.parameters(), lr=0.05)
rows = TensorDataset(torch.rand(41, 5), torch.rand(41))
for x, y in DataLoader(rows, batch_size=8):
    fit_batch(reg, nn.BCEWithLogitsLoss(), sgd, x, y)
""",
            line=9,
            col=20,
        ),
        # the same loader keeping its last batch of one
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

rows = TensorDataset(torch.rand(41, 5), torch.randint(0, 2, (41,)).float())
clf = nn.Linear(5, 1)
sgd = torch.optim.SGD(clf.parameters(), lr=0.05)
for x, y in DataLoader(rows, batch_size=8):
    sgd.zero_grad()
    loss = F.binary_cross_entropy_with_logits(clf(x).squeeze(), y)
    loss.backward()
    sgd.step()
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

rows = TensorDataset(torch.rand(41, 5), torch.randint(0, 2, (41,)).float())
clf = nn.Linear(5, 1)
sgd = torch.optim.SGD(clf.parameters(), lr=0.05)
for x, y in DataLoader(rows, batch_size=8):
    sgd.zero_grad()
    loss = F.binary_cross_entropy_with_logits(clf(x).squeeze(1), y)
    loss.backward()
    sgd.step()
""",
            line=12,
            col=47,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Critic:
    def __init__(self, width):
        self.value = nn.Linear(width, 1)
        self.loss = nn.SmoothL1Loss()

    def update(self, states, targets):
        v = torch.sigmoid(self.value(states)).squeeze()
        return self.loss(v, targets)


class BinaryCritic(Critic):
    def __init__(self, width):
        super().__init__(width)
        self.loss = nn.BCELoss()
""",
            fixed="""
import torch
import torch.nn as nn


class Critic:
    def __init__(self, width):
        self.value = nn.Linear(width, 1)
        self.loss = nn.SmoothL1Loss()

    def update(self, states, targets):
        v = torch.sigmoid(self.value(states)).squeeze(-1)
        return self.loss(v, targets)


class BinaryCritic(Critic):
    def __init__(self, width):
        super().__init__(width)
        self.loss = nn.BCELoss()
""",
            line=12,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

scorer = nn.Linear(6, 1)
bce = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(scorer.parameters())
for x in torch.utils.data.DataLoader(torch.randn(9, 6), batch_size=4):
    logits = scorer(x).squeeze()
    loss = bce(logits, torch.ones(logits.size(0)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""
import torch
import torch.nn as nn

scorer = nn.Linear(6, 1)
bce = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(scorer.parameters())
for x in torch.utils.data.DataLoader(torch.randn(9, 6), batch_size=4):
    logits = scorer(x).squeeze(-1)
    loss = bce(logits, torch.ones(logits.size(0)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=9,
        ),
        Invalid(
            """
import numpy as np
import torch


class MaskToTensor:
    def __call__(self, mask_img):
        raw = torch.from_numpy(np.asarray(mask_img, dtype=np.uint8).copy())
        mask = raw.view(mask_img.size[1], mask_img.size[0], 1)
        return mask.permute(2, 0, 1).squeeze().long()
""",
            fixed="""
import numpy as np
import torch


class MaskToTensor:
    def __call__(self, mask_img):
        raw = torch.from_numpy(np.asarray(mask_img, dtype=np.uint8).copy())
        mask = raw.view(mask_img.size[1], mask_img.size[0], 1)
        return mask.permute(2, 0, 1).squeeze(0).long()
""",
            unsafe=True,
            line=10,
            message="drops every dimension of size 1, not only the one known to be 1",
        ),
        # an element of a list the code fills with batches
        Invalid(
            """
import torch
import torch.nn as nn


class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(12, 32)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        h = torch.zeros(x.size(0), 32)
        states = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            states.append(h)
        last = states[-1].squeeze()
        return self.head(last)
""",
            line=18,
            message='`states[-1].squeeze()` without a dim also drops the batch dimension',
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.cell = nn.LSTMCell(16, 32)

    def forward(self, tgt):
        # tgt: (T, B)
        Y = self.emb(tgt)
        h = None
        outs = []
        for Y_t in torch.split(Y, 1):
            Y_t = torch.squeeze(Y_t)
            h = self.cell(Y_t, h)
            outs.append(h[0])
        return torch.stack(outs)
""",
            fixed="""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.cell = nn.LSTMCell(16, 32)

    def forward(self, tgt):
        # tgt: (T, B)
        Y = self.emb(tgt)
        h = None
        outs = []
        for Y_t in torch.split(Y, 1):
            Y_t = torch.squeeze(Y_t, 0)
            h = self.cell(Y_t, h)
            outs.append(h[0])
        return torch.stack(outs)
""",
            unsafe=True,
            line=18,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        # every finding waits for the end of the file: its uses, and where its data comes from, are known then
        self._pending: List[Tuple[cst.Call, cst.BaseExpression, bool, str, Optional[Fix], bool]] = []

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        if ctx.names.matches(func, SQUEEZE):
            only = node.args[0] if len(node.args) == 1 else None
            if only is None or only.star or (only.keyword is not None and only.keyword.value != "input"):
                return
            x = node.args[0].value
            form = "function"
        elif ctx.names.matches(func, NUMPY_SQUEEZE) and ctx.names.imports_torch:
            only = node.args[0] if len(node.args) == 1 else None
            if only is None or only.star or only.keyword is not None:
                return
            x = only.value  # `np.squeeze(pred.eq(y))`: a tensor squeezed as `tensor.squeeze()` does
            form = "numpy"
        elif isinstance(func, cst.Attribute) and func.attr.value == "squeeze" and not node.args:
            x = func.value
            if ctx.names.qualified_names(x):  # np.squeeze, a module attribute
                return
            if not ctx.names.imports_torch:
                return
            form = "method"
        else:
            return
        if _numpy_like(ctx, x) or self._single_element_guard(x) or _module_state_only(ctx, node, x):
            return
        if _batch_reduced(x) or _squeezed_alike(ctx, node) or _shape_branch(ctx) or _literal_table(ctx, x):
            return
        known = shape_of(ctx, x)  # (shapes answer where the walk is: asked here, kept for after the walk)
        leading = _leading_only(known)
        if _sink_use(ctx, node, leading=leading):
            return  # shown or exported as an image / array / number: dropping every 1 is what it wants
        tokens = tokenizer_shape(ctx, x)  # a tokenizer's [N, L]: N is a batch of texts
        shape = known or tokens
        dims: List[int] = []
        if shape is not None:
            if shape.rank is not None and shape.rank <= 1:
                return  # nothing but a vector: no batch dimension to lose
            if shape.rank is not None and all(d is not None for d in shape.head):
                return  # every size known (`torch.rand(1, 1, 10)`, `x.reshape(1, 7)`): `squeeze()` drops the
                # same dimensions at every run, and no batch of a size only known at run time is among them
            dims = shape.singleton_dims()
        fix = None  # no dim known to be 1: no guess
        if dims:
            # A known trailing singleton (`Linear(..., 1)`, `keepdim=True`): the unknown leading
            # dimensions are the batch, and keeping them when they are 1 is the fix of the bug: safe.
            # A known leading one (`image.unsqueeze(0)`, a tokenizer's `[1, L]`): the batch is one
            # sample by construction and `squeeze()` drops it on purpose; the unknown dimensions are
            # the sample's own, and code after it may rely on losing a 1 among them (a channel of a
            # grayscale image): unsafe unless every dimension is known.
            complete = shape.rank is not None and all(d is not None for d in shape.head)
            fix = self._fix(node, form, x, dims, unsafe=not complete and 0 in dims) if form != "numpy" else None
        self._pending.append((node, x, tokens is not None, self._message(shape, dims), fix, leading))

    def leave_Module(self, node: cst.Module) -> None:
        ctx = self.ctx
        for call, x, batched, message, fix, leading in self._pending:
            target = _assigned_name(ctx, call)
            scope = ctx.enclosing(call, cst.FunctionDef) or ctx.module
            if target is not None and (_only_sinks(ctx, scope, target, leading=leading) or _size_checked(ctx, scope, target)):
                continue
            if target is None and _sink_use(ctx, call, leading=leading):
                continue  # (after the walk: `img = unnormalize(img.squeeze())`, then only `save_image(img, ...)`)
            evidence = batched or batch_evidence(ctx, x)
            if fix is None and not evidence:
                continue  # nothing known to be 1, and nothing says the tensor has a batch dimension
            if not evidence:
                # a dimension known to be 1 on a tensor nothing says holds a batch (a sample the code shaped
                # itself): `squeeze()` drops any other 1 too; no batch to speak of
                message = message.split(" also drops the batch dimension", 1)[0] + (
                    f" drops every dimension of size 1, not only {'those' if ',' in fix.title else 'the one'} known "
                    f"to be 1; {fix.title[0].lower()}{fix.title[1:]}")
            if fix is None and scope is not ctx.module and (
                _makes_batch_of_one(ctx, scope) and from_batch_of_one(ctx, x, scope)
                or _rank_tested_before(ctx, scope, call, x)
            ):
                continue  # a batch of one made on purpose that the value comes from, or ranks the code handles itself
            if fix is None and not batched and fed_one_sample(ctx, batch_source(ctx, x)):
                continue  # the model ran on a batch of one built so (`torch.randint(n, (1, 1))`, `init_hidden(1)`)
            if not batched and fed_whole_tensor(ctx, batch_source(ctx, x)):
                continue  # the model ran, in the module's own code, on data it holds whole (a dataset split): its
                # leading dimension is the size of that data, not a batch that may hold one sample
            if not batched and (fed_fixed_batch(ctx, batch_source(ctx, x)) or holds_fixed_rows(ctx, x)):
                continue  # the model ran on a batch whose rows the code fixes (three sentences written out): its
                # leading dimension is never 1, and what `squeeze()` drops is what the code expects
            recurrent = recurrent_batch_dim(ctx, x) if fix is None and not batched else None
            if recurrent is not None and recurrent[0] != 0:
                message = (
                    f"`squeeze()` without a dim drops the batch as well when it holds one sample: dim "
                    f"{recurrent[0]} is the batch ({recurrent[1]}); name the dimension to drop (`.squeeze(k)`)"
                )
            elif fix is None and not (recurrent is None and unpacks_some_recurrent_layer(ctx, x)):
                # (the output of a layer that may be recurrent: where its batch sits is not known)
                if recurrent is not None:
                    origin: Optional[str] = recurrent[1]
                else:
                    origin = tokenizer_origin(ctx, x) if batched else batch_origin(ctx, x)
                if origin is not None:
                    message = (
                        f"`squeeze()` without a dim drops dim 0 as well when the batch holds one sample: dim 0 "
                        f"is the batch ({origin}); name the dimension to drop (`.squeeze(k)`)"
                    )
            self.report(call, self.quoting(call, message), fix=fix)

    def _single_element_guard(self, x: cst.BaseExpression) -> bool:
        """``x.squeeze() if x.numel() == 1 else x``, ``if x.shape[0] == 1: x = x.squeeze()``: the code
        checked the size first, so the squeeze is deliberate."""
        ctx = self.ctx
        code = ctx.code(x).strip()
        for a in reversed(ctx.stack):
            test = a.test if isinstance(a, (cst.If, cst.IfExp)) else None
            if test is not None:
                text = ctx.code(test)
                if code in text and (
                    f"{code}.numel()" in text or re.search(re.escape(code) + r"\.(shape\[|size\().*==\s*1\b", text)
                    or re.search(re.escape(code) + r"\.(ndim\b|dim\(\))", text)
                ):
                    return True  # `x.squeeze() if x.ndim > 1 else x`: the rank was checked
                if _SIZE_IS_ONE.search(text):
                    return True  # `if tau.shape[0] == 1: tau = tau.squeeze(); p = p.squeeze()`: sized on purpose
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                break
        return self._validated_before(x)

    def _validated_before(self, x: cst.BaseExpression) -> bool:
        """An earlier statement of the same block raises unless ``x`` has one element
        (``if not torch.numel(value) == 1: raise ValueError(...)``)."""
        ctx = self.ctx
        if not isinstance(x, cst.Name) or ctx.current is None:
            return False
        stmt = ctx.statement_of(ctx.current)
        block = ctx.block_of(stmt) if stmt is not None else None
        if block is None:
            return False
        for earlier in block:
            if earlier is stmt:
                break
            if isinstance(earlier, cst.If) and x.value in ctx.code(earlier.test) and (
                "numel" in ctx.code(earlier.test) or _SIZE_IS_ONE.search(ctx.code(earlier.test))
            ):
                body = earlier.body.body if isinstance(earlier.body, cst.IndentedBlock) else ()
                if any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(b, cst.Raise) for b in s.body)
                       for s in body):
                    return True
        return False

    def _message(self, shape: Optional[Shape], dims: List[int]) -> str:
        if not dims:
            known = f" on a tensor of shape {shape}" if shape is not None else ""
            return (
                f"`squeeze()` without a dim{known} also drops the batch dimension when the batch has one "
                "sample; no dimension is known to be 1 here; name the dimension to drop"
            )
        return (
            f"`squeeze()` without a dim on a tensor of shape {shape} also drops the batch dimension when the "
            f"batch has one sample; use `{_call(dims)}`"
        )

    def _fix(self, node: cst.Call, form: str, x: cst.BaseExpression, dims: List[int], unsafe: bool) -> Fix:
        ctx = self.ctx
        fix = self.make_fix(f"Use `{_call(dims)}`", unsafe=unsafe)
        dim = _dim_code(dims)
        if form == "method":
            # keep the receiver as written (line breaks in a method chain included): only the
            # call's arguments change
            new = node.with_changes(args=[cst.Arg(ctx.parse_expression(dim))], lpar=[], rpar=[])
        else:
            new = ctx.parse_expression(f"{ctx.code(node.func)}({ctx.code(x)}, {dim})")
        return fix.replace(node, new.with_changes(lpar=node.lpar, rpar=node.rpar))


def _dim_code(dims: List[int]) -> str:
    """``1`` for one dim, ``(0, 2)`` for several (a tuple of dims needs torch >= 2.0)."""
    ordered = sorted(dims)
    if len(ordered) == 1:
        return str(ordered[0])
    return "(" + ", ".join(str(d) for d in ordered) + ")"


def _call(dims: List[int]) -> str:
    return f".squeeze({_dim_code(dims)})"


# -- where the result goes ------------------------------------------------------------------------------------------
#: calls that show or export an image / array: they want every singleton dimension gone
_SINK_CALLS = frozenset({"imshow", "imsave", "fromarray", "save_image", "imwrite", "to_pil_image", "ToPILImage",
                         "print"})
#: methods and builtins that turn the tensor into a NumPy array or Python numbers
_SINK_METHODS = frozenset({"numpy", "tolist", "item"})
_SINK_BUILTINS = frozenset({"float", "int", "bool", "complex"})
#: methods that keep the values: the sink may follow them
_PASS_METHODS = frozenset({"t", "transpose", "permute", "cpu", "detach", "clone", "contiguous", "to", "float", "double", "half", "byte", "mul", "clamp",
                           "clamp_", "mul_", "add", "type", "long", "int"})


#: attributes that keep the values (transposes, the data without autograd)
_PASS_ATTRS = frozenset({"T", "mT", "H", "mH", "data"})


def _call_name(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Call):  # ToPILImage()(x)
        return _call_name(func.func)
    return None


def _leading_only(shape) -> bool:
    """Whether every dimension of a tensor of ``shape`` but the first is known to be 1 (``[B, 1]``,
    ``[B, 1, 1]``): ``squeeze()`` keeps only dimension 0, so a batch of one differs from a larger one by a
    leading 1 alone."""
    return shape is not None and shape.rank is not None and shape.rank >= 1 and all(d == 1 for d in shape.head[1:])


def _sink_use(ctx, node: cst.CSTNode, depth: int = 0, leading: bool = False) -> bool:
    """``node``'s value is displayed, exported or turned into Python numbers (through value-keeping
    methods such as ``.cpu()``/``.detach()``, a function of the project that gives its argument back
    rescaled, ``denorm(x)``, and a name every later read of which is such a use)."""
    if isinstance(node, cst.Name) and _shape_read(ctx, node) and _loss_against_own_shape(ctx, node):
        return True  # `torch.ones(out.size())` as the target of a loss of `out`
    cur = node
    for _ in range(8):
        parent = ctx.parent(cur)
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            if parent.attr.value in _SINK_METHODS:
                return True
            call = ctx.parent(parent)
            if parent.attr.value in _WHOLE_REDUCTIONS and isinstance(call, cst.Call) and call.func is parent \
                    and not call.args:
                return True  # `old.mean()`: one number, whatever the shape
            if parent.attr.value in _PASS_ATTRS:
                cur = parent
                continue
            call = ctx.parent(parent)
            if parent.attr.value in _PASS_METHODS and isinstance(call, cst.Call) and call.func is parent:
                cur = call
                continue
            if parent.attr.value in _ELEMENTWISE_METHODS and isinstance(call, cst.Call) and call.func is parent:
                return _reduced_elementwise(ctx, call, depth, leading)  # `near.log()` in a sum reduced over every element
            if isinstance(call, cst.Call) and call.func is parent and _flattening(call):
                return True  # `lengths.squeeze().view(-1, 1)`: the shape comes from the number of elements alone
            return False
        if isinstance(parent, cst.Arg):
            call = ctx.parent(parent)
            if isinstance(call, cst.Call):
                name = _call_name(call.func)
                if name in _SINK_CALLS:
                    return True
                if name in _SINK_BUILTINS and isinstance(call.func, cst.Name) and len(call.args) == 1:
                    return True
                if _selecting_index(ctx, call, parent):
                    return True
                if _broadcasting_loss(ctx, call):
                    return True
                if isinstance(cur, cst.Name) and _loss_against_own_shape(ctx, cur, call):
                    return True  # `crit(out, torch.ones(out.size()))`: the target takes the squeezed shape
                if _hands_back(ctx, call, parent):
                    cur = call  # `save_image(unnormalize(img.squeeze()), path)`: the values, rescaled
                    continue
                if _flattened_in(ctx, call, parent):
                    return True  # `last_state(out, lengths.squeeze())` whose code reads `lengths.view(-1, 1)` only
            return False
        if isinstance(parent, cst.Assign) and parent.value is cur and depth < 2 and cur is not node and ctx.walked:
            target = _assigned_name(ctx, cur)  # `img = unnormalize(img.squeeze())`, then `save_image(img, path)`
            scope = ctx.enclosing(cur, cst.FunctionDef) or ctx.module
            return target is not None and _only_sinks(ctx, scope, target, depth + 1, leading)
        if isinstance(parent, cst.ComparisonTarget):
            parent = ctx.parent(parent)
        if isinstance(parent, cst.Comparison):
            return _counted_match(ctx, parent)
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return _reduced_elementwise(ctx, parent, depth, leading)
        return False
    return False


#: constructors that give a new tensor the shape of the one they are given
_LIKE_CONSTRUCTORS = frozenset({"ones_like", "zeros_like", "full_like", "empty_like", "rand_like", "randn_like"})


def _shape_read(ctx, use: cst.Name) -> bool:
    """``out.size()``, ``out.shape``, ``torch.ones_like(out)``, ``out.new_ones(...)``: the read takes the
    tensor's whole shape (or its kind), not its values nor one of its sizes."""
    parent = ctx.parent(use)
    if isinstance(parent, cst.Attribute) and parent.value is use:
        outer = ctx.parent(parent)
        if parent.attr.value == "size":
            return isinstance(outer, cst.Call) and outer.func is parent and not outer.args
        if parent.attr.value == "shape":
            return not isinstance(outer, (cst.Subscript, cst.Attribute))
        return parent.attr.value.startswith("new_")
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.args[0] is parent and _call_name(call.func) in _LIKE_CONSTRUCTORS
    return False


def _loss_against_own_shape(ctx, use: cst.Name, call: Optional[cst.Call] = None) -> bool:
    """``crit(out, torch.ones(out.size()))``, ``F.binary_cross_entropy(out, torch.zeros_like(out))``: ``use``
    (a squeezed value bound to a name) is one operand of a loss whose other operand is built from its shape
    alone, so both lose the same dimensions and the loss is the same whatever a batch of one drops.
    ``call``: the loss, when ``use`` is its operand; else the loss ``use`` is a shape read within."""
    if call is None:
        call = next((a for a in ctx.ancestors(use) if isinstance(a, cst.Call) and is_loss_call(ctx, a)), None)
        if call is None:
            return False
    elif not is_loss_call(ctx, call):
        return False
    operands = [a.value for a in call.args if a.keyword is None or a.keyword.value in ("input", "target")]
    if len(operands) != 2 or any(a.star for a in call.args):
        return False
    own = [o for o in operands if isinstance(o, cst.Name) and o.value == use.value]
    if len(own) != 1:
        return False
    other = operands[1] if own[0] is operands[0] else operands[0]
    reads = [n for n in _value_names(other) if n.value == use.value]
    if any(n.value != use.value and not ctx.names.qualified_names(n) for n in _value_names(other)):
        return False  # the target reads other data (`y.view(out.size(0))`), not the shape alone
    return bool(reads) and all(_shape_read(ctx, r) for r in reads) and (use is own[0] or any(r is use for r in reads))


def _value_names(expr: cst.CSTNode) -> List[cst.Name]:
    """The names an expression reads, but those of attributes (``.size``) and of the arguments of moves
    (``.to(device)``, ``.cuda(gpu)``, ``.type(dtype)``)."""
    out: List[cst.Name] = []
    todo: List[cst.CSTNode] = [expr]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Name):
            out.append(node)
        elif isinstance(node, cst.Attribute):
            todo.append(node.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in ("to", "cuda", "type"):
            todo.append(node.func)
        elif isinstance(node, cst.Arg):
            todo.append(node.value)
        else:
            todo.extend(children(node))
    return out


#: element-wise arithmetic: broadcasting aligns the trailing dimensions, so an operand that lost a leading 1
#: gives the same elements
_ELEMENTWISE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
#: element-wise methods that keep the shape
_ELEMENTWISE_METHODS = frozenset({"exp", "log", "abs", "neg", "sigmoid", "tanh", "relu", "pow", "sqrt", "square",
                                  "log1p", "expm1", "clamp", "clamp_min", "clamp_max", "float", "double", "detach"})


def _reduced_elementwise(ctx, op: cst.CSTNode, depth: int = 0, leading: bool = False) -> bool:
    """``-(pos.squeeze() + neg).mean()``, ``torch.sum(w * x.squeeze())``: the squeezed value, whose dimensions
    but the first are known to be 1 (``leading``), only takes part in element-wise arithmetic (with anything:
    broadcasting gives the same elements whether or not it kept a leading 1) whose result is reduced over
    every element: a batch of one gives the same number.  The result may be bound to a name every read of
    which is such a use or a sink (``nll = -(a + picked)``, ``nll.float().sum()``)."""
    if not leading:
        return False  # (`[T, 1, 1]` of a time-first model: the other operands line up with a lost middle 1)
    cur: cst.CSTNode = op
    for _ in range(8):
        if isinstance(cur, cst.BinaryOperation) and not isinstance(cur.operator, _ELEMENTWISE_OPERATORS):
            return False
        if isinstance(cur, cst.UnaryOperation) and not isinstance(cur.operator, cst.Minus):
            return False
        parent = ctx.parent(cur)
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            cur = parent
            continue
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return False
            if parent.attr.value in ("mean", "sum") and not call.args:
                return True
            if parent.attr.value in _ELEMENTWISE_METHODS:
                cur = call
                continue
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is None:
            call = ctx.parent(parent)
            return (isinstance(call, cst.Call) and len(call.args) == 1
                    and bool(ctx.names.qualified_names(call.func) & {"torch.mean", "torch.sum"}))
        if isinstance(parent, cst.Assign) and parent.value is cur and depth < 2 and ctx.walked:
            target = _assigned_name(ctx, cur)
            scope = ctx.enclosing(cur, cst.FunctionDef) or ctx.module
            return target is not None and _only_sinks(ctx, scope, target, depth + 1, leading)
        return False
    return False


#: reductions over every element: the same number for a 0-d tensor and a one-element one
_WHOLE_REDUCTIONS = frozenset({"mean", "sum", "max", "min", "prod", "norm", "all", "any"})
#: element-wise losses that broadcast their operands and reduce them: a 0-d input against a one-element
#: target gives the loss a one-element input gives
_BROADCASTING_LOSSES = frozenset({
    "torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss", "torch.nn.functional.smooth_l1_loss",
    "torch.nn.functional.huber_loss",
})
_BROADCASTING_LOSS_CLASSES = frozenset({"torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.SmoothL1Loss", "torch.nn.HuberLoss"})
#: the reductions that sum or average every element (`"elementwise_mean"`: the name torch 0.4 gave `"mean"`)
_REDUCING = ("mean", "sum", "elementwise_mean")


def _broadcasting_loss(ctx, call: cst.Call) -> bool:
    """``call`` is an element-wise regression loss that reduces (``F.mse_loss(target, q.squeeze())``,
    ``nn.MSELoss()(v.squeeze(), returns)``): with a batch of one, the squeezed 0-d operand broadcasts to
    the other one's shape as the one-element tensor would, and the loss is the same number."""
    reduction = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "reduction"), None)
    if reduction is not None and not (isinstance(reduction, cst.SimpleString)
                                      and reduction.evaluated_value in _REDUCING):
        return False
    if ctx.names.qualified_names(call.func) & _BROADCASTING_LOSSES:
        return True
    criterion = call.func
    if isinstance(criterion, cst.Attribute) and criterion.attr.value == "forward":
        criterion = criterion.value  # `loss_fn.forward(pred, y)`
    if isinstance(criterion, cst.Attribute) and isinstance(criterion.value, cst.Name) and \
            ctx.names.scope_at(criterion).self_name == criterion.value.value:
        held = list(built_values(ctx, criterion))  # `self.mse = nn.MSELoss()` in `__init__`, `self.mse(v, returns)`
        attr = criterion.attr.value
        # (and what any class of the file sets under that name: a subclass may set another loss)
        for a in ctx.contents(ctx.module).assigns:
            if isinstance(a, cst.Assign) and any(isinstance(t.target, cst.Attribute) and t.target.attr.value == attr
                                                 for t in a.targets):
                held.append(a.value)
        return bool(held) and all(_reducing_broadcasting_loss(ctx, v) for v in held)
    if not isinstance(criterion, cst.Name):
        return False
    built = ctx.names.values_at(criterion)
    if not built and ctx.names.is_param_at(criterion):
        built = []
        for passed in arguments_for_param(ctx, criterion) or []:  # a criterion every caller passes
            held = ctx.names.values_before(passed) if isinstance(passed, cst.Name) else [passed]
            if not held:
                return False
            built.extend(held)  # (`mse = nn.MSELoss()`, then `fit_batch(reg, mse, ...)`)
    return bool(built) and all(_reducing_broadcasting_loss(ctx, v) for v in built)


def _reducing_broadcasting_loss(ctx, value: cst.BaseExpression) -> bool:
    """``nn.MSELoss()``, ``nn.L1Loss(reduction="sum")``: a loss module that broadcasts its operands and
    reduces them."""
    if not (isinstance(value, cst.Call) and ctx.names.qualified_names(value.func) & _BROADCASTING_LOSS_CLASSES):
        return False
    if any(a.star or a.keyword is None or a.keyword.value in ("size_average", "reduce") for a in value.args):
        return False  # (the legacy `size_average` and `reduce` may ask for the loss of each element)
    reduction = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "reduction"), None)
    return reduction is None or isinstance(reduction, cst.SimpleString) and reduction.evaluated_value in _REDUCING


def _selecting_index(ctx, call: cst.Call, arg: cst.Arg) -> bool:
    """``arg`` is the index of ``x.index_select(dim, index)`` / ``torch.index_select(x, dim, index)``: a 0-d
    index selects what a one-element one does (the result keeps the selected dimension), so a squeeze that
    turns ``[1, 1]`` into a 0-d index changes nothing there."""
    if arg.keyword is not None:
        return arg.keyword.value == "index" and _call_name(call.func) == "index_select"
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if ctx.names.matches(call.func, frozenset({"torch.index_select"})):
        return len(positional) >= 3 and positional[2] is arg
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "index_select" \
        and not ctx.names.qualified_names(call.func) and len(positional) >= 2 and positional[1] is arg


#: reductions of a whole tensor to one count or rate
_COUNTS = frozenset({"sum", "mean", "count_nonzero"})


def _counted_match(ctx, comparison: cst.Comparison) -> bool:
    """``(pred.squeeze() == labels).sum()``, ``torch.sum(a.squeeze() != b)``, ``(...).float().mean()``: an
    element-wise comparison whose result is counted over every element.  Dropping a leading dimension of size 1 changes
    neither the elements compared (broadcasting aligns the trailing dimensions) nor their count."""
    if not all(isinstance(t.operator, (cst.Equal, cst.NotEqual, cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                       cst.GreaterThanEqual)) for t in comparison.comparisons):
        return False
    cur: cst.CSTNode = comparison
    for _ in range(6):
        parent = ctx.parent(cur)
        if isinstance(parent, cst.Attribute) and parent.value is cur:
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return False
            if parent.attr.value in _COUNTS and not call.args:
                return True
            if parent.attr.value in _PASS_METHODS and parent.attr.value not in ("mul", "add", "clamp", "clamp_", "mul_"):
                cur = call
                continue
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is None:
            call = ctx.parent(parent)
            return (isinstance(call, cst.Call) and len(call.args) == 1
                    and bool(ctx.names.qualified_names(call.func) & {"torch." + n for n in _COUNTS}))
        return False
    return False


def _assigned_name(ctx, node: cst.Call) -> Optional[cst.Name]:
    parent = ctx.parent(node)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target
    return None


def _only_sinks(ctx, scope: cst.CSTNode, target: cst.Name, depth: int = 0, leading: bool = False) -> bool:
    """Every read of the name in the function that may see the squeezed value goes to a sink (a read after
    the name was given another value, ``pred = out.argmax(1).numpy()`` further down, does not see it)."""
    assign = ctx.parent(ctx.parent(target))
    value = assign.value if isinstance(assign, cst.Assign) else None
    uses = [n for n in ctx.names_in(scope, target.value) if n is not target and not _is_store(ctx, n)
            and not (value is not None and ctx.is_inside(n, value))]  # (`img = f(img.squeeze())`: read before)
    uses = [n for n in uses if value is None or ctx.names.value_of(n) in (None, value)
            or _next_iteration(ctx, assign, n)]
    return bool(uses) and all(_sink_use(ctx, n, depth, leading) for n in uses)


def _next_iteration(ctx, assign: cst.CSTNode, use: cst.Name) -> bool:
    """``use`` comes before ``assign`` in a loop holding both: the next iteration reads what it binds."""
    return ctx.names.position(use) < ctx.names.position(assign) and ctx.shares_loop(assign, use)


def _hands_back(ctx, call: cst.Call, given: cst.Arg) -> bool:
    """``call`` runs a function of the project (not a method) every ``return`` of which gives the parameter
    ``given`` is bound to back rescaled, element by element, its shape kept (``return (img.data + 1) / 2``,
    ``return x.clamp(0, 1).cpu()``)."""
    found = _bound_parameter(ctx, call, given)
    if found is None:
        return False
    returns = function_returns(found[1])
    return bool(returns) and all(r.value is not None and _rescaled(r.value, found[2]) for r in returns)


def _bound_parameter(ctx, call: cst.Call, given: cst.Arg):
    """``(file context, function, parameter name)`` when ``call`` runs a function of the project (not a method,
    undecorated) and binds ``given`` to that parameter; None otherwise."""
    if given.star or not isinstance(call.func, (cst.Name, cst.Attribute)):
        return None
    found = definition_of(ctx, call.func)
    if found is None or not isinstance(found[1], cst.FunctionDef) or found[1].decorators \
            or isinstance(found[0].enclosing(found[1], (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
        return None
    bound = bind_arguments(call, found[1], 0)
    param = next((k for k, v in (bound or {}).items() if v is given.value), None)
    return (found[0], found[1], param) if param is not None else None


def _flattening(call: cst.Call) -> bool:
    """``x.view(-1, 1)``, ``x.reshape(-1)``, ``x.flatten()``, ``x.ravel()``: a shape given in numbers (or the
    whole tensor flattened), which depends on the number of elements alone, not on the rank it is given."""
    name = method_name(call)
    if name in ("flatten", "ravel"):
        return not call.args
    return name in ("view", "reshape") and bool(call.args) and all(
        not a.star and a.keyword is None and int_literal(a.value) is not None for a in call.args)


def _flattened_in(ctx, call: cst.Call, given: cst.Arg) -> bool:
    """``call`` runs a function of the project (not a method) that reads the parameter ``given`` is bound to
    only through :func:`_flattening` views (``lengths.view(-1, 1)``)."""
    found = _bound_parameter(ctx, call, given)
    if found is None:
        return False
    fctx, function, param = found
    uses = fctx.names_in(function.body, param)
    for use in uses:
        attr = fctx.parent(use)
        view = fctx.parent(attr) if isinstance(attr, cst.Attribute) and attr.value is use else None
        if not (isinstance(view, cst.Call) and view.func is attr and _flattening(view)):
            return False
    return bool(uses)


def _rescaled(expr: cst.BaseExpression, param: str) -> bool:
    """``expr`` is the name ``param`` through arithmetic with numbers and value-keeping methods."""
    if isinstance(expr, cst.Name):
        return expr.value == param
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in _PASS_ATTRS and _rescaled(expr.value, param)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value in _PASS_METHODS and _rescaled(expr.func.value, param) and all(
            isinstance(a.value, (cst.Integer, cst.Float, cst.UnaryOperation)) or a.keyword is not None
            for a in expr.args)
    if isinstance(expr, cst.UnaryOperation):
        return _rescaled(expr.expression, param)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        numbers = (cst.Integer, cst.Float)
        return _rescaled(expr.left, param) and isinstance(expr.right, numbers) \
            or _rescaled(expr.right, param) and isinstance(expr.left, numbers)
    return False


_SIZE_CHECK = re.compile(r"\.(numel|dim|nelement)\(\)|\.ndim\b|len\(\s*\w+\.shape\s*\)")


def _size_checked(ctx, scope: cst.CSTNode, target: cst.Name) -> bool:
    """The squeezed value's size is tested before it is used (``idx = mask.nonzero().squeeze()`` then
    ``if idx.numel() > 1:``): the code expects ``squeeze()`` to leave any shape, a 0-d one included."""
    for use in ctx.names_in(scope, target.value):
        if use is target or _is_store(ctx, use):
            continue
        for a in ctx.ancestors(use):
            test = a.test if isinstance(a, (cst.If, cst.IfExp, cst.While, cst.Assert)) else None
            if test is not None:
                if ctx.is_inside(use, test) and _SIZE_CHECK.search(ctx.code(test)):
                    return True
                break
            if isinstance(a, cst.BaseStatement):
                break
    return False


#: a test that a tensor's size is 1 (a count of Python items, `len(names) == 1`, says nothing of the batch)
_SIZE_IS_ONE = re.compile(r"(\.shape\[[^\]]*\]|\.size\([^)]*\)|numel\(\w*\)|\bndim\b|\.dim\(\))\s*==\s*1\b")


def _shape_branch(ctx) -> bool:
    """The squeeze runs in a branch chosen by a tensor's shape (``if keepdim and shape != x.shape:``,
    ``if w.size()[2:] == (1, 1):``): the code knows which dimensions are 1 there."""
    for a in reversed(ctx.stack):
        if isinstance(a, (cst.If, cst.IfExp)) and _SHAPE_TEST.search(ctx.code(a.test)):
            return True
        if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
            break
    return False


_SHAPE_READ = r"(\.shape\b|\.size\(|\.ndim\b|\.dim\(\)|numel\()"
#: a comparison with a shape, a size, a rank or an element count on either side
_SHAPE_TEST = re.compile(_SHAPE_READ + r"[^=!<>]*(==|!=|<|>)|(==|!=|<|>)[^=!<>]*" + _SHAPE_READ)


def _rank_tested_before(ctx, function: cst.CSTNode, call: cst.Call, x: cst.BaseExpression) -> bool:
    """An earlier test in the function reads the rank of the squeezed tensor (``if mask.ndim == 4:``,
    ``if len(desc.shape) == 2:``): the code handles the tensor's ranks itself, and ``squeeze()`` is how it
    brings them to one."""
    root = x
    while isinstance(root, (cst.Call, cst.Attribute, cst.Subscript)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if not isinstance(root, cst.Name):
        return False
    name = re.escape(root.value)
    rank = re.compile(r"\b" + name + r"\.(ndim\b|dim\(\)|shape\)?\s*(==|!=|<|>))|len\(\s*" + name + r"\.shape\s*\)")
    at = position(ctx, call)
    for n in ctx.nodes(function):
        if (type(n) is cst.If or type(n) is cst.IfExp or type(n) is cst.Assert) and position(ctx, n) < at and rank.search(ctx.code(n.test)):
            return True
    return False


def _makes_batch_of_one(ctx, function: cst.CSTNode) -> bool:
    """The function adds a leading dimension of size 1 itself (``x.unsqueeze(0)``, ``x[None]``): it works on
    one sample made a batch of one, and a later ``squeeze()`` undoes that."""
    if any(leading_one(ctx, n) for n in ctx.nodes(function)):
        return True
    for call in ctx.calls_in(function):
        if literal_batch_of_one(ctx, call) or sized_by_one(ctx, call):
            return True
    return False


def _batch_reduced(x: cst.BaseExpression) -> bool:
    """``t.sum(0).squeeze()``, ``t.mean(dim=0).squeeze()``: the leading (batch) dimension was reduced
    away right before; what is left are the per-output values, and a single output becoming a scalar
    is what the code wants."""
    if not isinstance(x, cst.Call) or not isinstance(x.func, cst.Attribute):
        return False
    if x.func.attr.value not in ("sum", "mean", "amax", "amin", "prod", "nansum", "nanmean", "logsumexp", "norm"):
        return False
    dim = next((a.value for a in x.args if a.keyword is not None and canonical_keyword(a.keyword.value) == "dim"), None)
    if dim is None and x.args and x.args[0].keyword is None:
        dim = x.args[0].value
    return isinstance(dim, cst.Integer) and dim.value == "0"


def _literal_table(ctx, x: cst.BaseExpression) -> bool:
    """``torch.tensor([[0.2, 0.8]]).squeeze()``, also through a name bound once to it: every element is
    written in the code, so the shape is the literal's, the same on every run -- a constant table, not data
    that arrives in batches; ``squeeze()`` always drops the same dimensions."""
    if isinstance(x, cst.Name):
        x = ctx.names.sole_value(x, at=x)
    while isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute) and x.func.attr.value in (
            "float", "double", "half", "long", "int", "to", "cpu", "cuda"):
        x = x.func.value
    if not (isinstance(x, cst.Call) and x.args and x.args[0].keyword is None
            and ctx.names.matches(x.func, DATA_CONSTRUCTORS)):
        return False

    def numbers(e: cst.BaseExpression, depth: int) -> bool:
        if isinstance(e, cst.UnaryOperation):
            e = e.expression
        if isinstance(e, (cst.Integer, cst.Float)):
            return True
        return depth < 8 and isinstance(e, (cst.List, cst.Tuple)) and bool(e.elements) \
            and all(numbers(el.value, depth + 1) for el in e.elements)

    data = x.args[0].value
    return isinstance(data, (cst.List, cst.Tuple)) and numbers(data, 0)


def _squeezed_alike(ctx, node: cst.Call) -> bool:
    """``loss(logits.squeeze(), labels.squeeze())``, ``a.squeeze() != b.squeeze()``: both operands are
    squeezed the same way, so a batch of one drops the same dimension on both sides."""
    def bare_squeeze(e: cst.BaseExpression) -> bool:
        return (isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value == "squeeze"
                and not e.args)

    parent = ctx.parent(node)
    if isinstance(parent, cst.ComparisonTarget):
        parent = ctx.parent(parent)
    if isinstance(parent, cst.Comparison):  # `a.squeeze() != b.squeeze()`
        return bare_squeeze(parent.left) and all(bare_squeeze(t.comparator) for t in parent.comparisons)
    if isinstance(parent, cst.BinaryOperation):  # `a.squeeze() - b.squeeze()`
        return bare_squeeze(parent.left) and bare_squeeze(parent.right)
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    if not isinstance(call, cst.Call) or len(call.args) < 2:
        return False
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) < 2:
        return False
    return all(bare_squeeze(e) for e in positional[:2])


def _module_state_only(ctx, node: cst.Call, x: cst.BaseExpression) -> bool:
    """In a method of a class, a value computed only from the instance's own state (``self.coord``, a
    registered buffer or parameter, through its submodules) and constants: no input, so no batch."""
    function = ctx.enclosing(node, cst.FunctionDef)
    if function is None or not isinstance(ctx.enclosing(function, cst.ClassDef), cst.ClassDef):
        return False
    params = function.params.params
    if not params or params[0].name.value != "self":
        return False
    roots = _root_names(x)
    if roots is None:
        return False
    # a local computed from the module's state (`bias = self.bias[name].data` then `bias.squeeze()`)
    expanded = set()
    for r in roots:
        values = ctx.names.values_before(cst.Name(r), at=x) if r not in ("self",) else []
        if len(values) == 1 and values[0] is not None:
            inner = _root_names(values[0])
            if inner is not None and "self" in inner:
                expanded |= inner
                continue
        expanded.add(r)
    return "self" in expanded and all(
        r in ("self", "None", "True", "False") or r in _TORCH_ROOTS for r in expanded
    )


_TORCH_ROOTS = frozenset({"torch", "F", "nn"})


def _root_names(expr: cst.BaseExpression, depth: int = 0) -> Optional[set]:
    """The names an expression reads its values from (``self`` for ``self.fc(self.coord)``); None for
    anything this does not follow (comprehensions, lambdas, ...).  Reads the tree only: the walk has not
    reached the expression's children yet."""
    if depth > 20:
        return None
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return set()
    if isinstance(expr, cst.Attribute):
        return _root_names(expr.value, depth + 1)
    parts: List[cst.BaseExpression] = []
    if isinstance(expr, cst.Call):
        parts = [expr.func] + [a.value for a in expr.args]
    elif isinstance(expr, cst.Subscript):
        parts = [expr.value]  # the index selects among the values; it brings no data of its own
    elif isinstance(expr, cst.BinaryOperation):
        parts = [expr.left, expr.right]
    elif isinstance(expr, cst.UnaryOperation):
        parts = [expr.expression]
    elif isinstance(expr, (cst.Tuple, cst.List)):
        parts = [e.value for e in expr.elements]
    else:
        return None
    out: set = set()
    for part in parts:
        found = _root_names(part, depth + 1)
        if found is None:
            return None
        out |= found
    return out


def _is_store(ctx, name: cst.Name) -> bool:
    return written_target(ctx, name)


def _numpy_like(ctx, x: cst.BaseExpression, depth: int = 0) -> bool:
    """``a.numpy().squeeze()``, ``np.array(...)``: not a tensor."""
    if depth > 3:
        return False
    while isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute):
        if x.func.attr.value in _NOT_TENSOR_METHODS:
            return True
        if any(q.startswith(("numpy.", "pandas.", "scipy.")) for q in ctx.names.qualified_names(x.func)):
            return True  # `np.asarray(a).squeeze()`
        x = x.func.value
    if isinstance(x, cst.Call):
        qn = ctx.names.qualified_names(x.func)
        return any(q.startswith(("numpy.", "pandas.", "scipy.")) for q in qn)
    if isinstance(x, cst.Name):
        vals = ctx.names.values_before(x)
        return bool(vals) and all(_numpy_like(ctx, v, depth + 1) for v in vals)
    return False
