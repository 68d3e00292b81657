from __future__ import annotations

from typing import List

import libcst as cst

from torchlint.families.gradflow.submodules import NamesRead, parameter_free, unused_submodules
from torchlint.rule import Invalid, LintRule, Valid


class UnusedSubmodule(LintRule):
    """
    ## What it does
    Finds a submodule that `__init__` of an `nn.Module` subclass builds (`self.drop = nn.Dropout(0.5)`,
    `self.head = Head()` for a module class of the project) and that no code uses: no method of the class
    or of a subclass reads `self.drop`, no code of the project reads it on a value that may be an instance
    of the class (`model.drop`, a helper's `m.drop`), no string reaches it by name, and the class does not
    reach its submodules without naming them (`getattr(self, name)` with a computed name that has no
    fixed start: `getattr(self, f"block{i}")` reaches only the names starting with `block`; `self._modules`,
    `self.children()`, `vars(self)`, iterating `self.modules()` for anything but initialisation or a mode switch (`m.eval()` of each batch norm); on the
    instance itself, not on a library model it takes layers from, `resnet.children()`). Only classes that
    define `forward` themselves are looked at, and only when all their bases are in view: `nn.Module` (or
    a LightningModule), or classes of the same file built on it — a base class from another module may
    use the layer in a method this file does not show. Buffers and parameters (`nn.Buffer`,
    `nn.Parameter`) are not submodules. Nor is a dropout layer left unused while `__init__` keeps its rate
    (`self.dropouti = dropouti`) and `forward` hands that rate to a call (`self.lockdrop(x, self.dropouti)`):
    the dropout is applied by other means at that rate (a locked dropout).

    A read of the same name elsewhere, in the file or in the project's other Python files and notebooks
    (under its root, else beside the file; those that spell the name are read), counts when its value
    may be an instance of the class: `model.aux_head(x)` in `train.py`, a subclass's `self.aux_head`, a
    helper's parameter. It does not count as `self.aux_head` inside a class that cannot derive from this
    one (its bases lead, through the project, to `nn.Module` and other classes only: that class's own
    layer), nor on a value known to be something else: data (`df.drop(columns=...)` on a pandas frame, an
    array, a tensor), a literal, what an operator computes (`(grads + eps).norm(2, dim=1)`: a tensor, unless
    a class of the file defines operators), a library module (`F.dropout`), the instance of a method of
    another class (`getattr(self, f"norm{i}")` in a class that cannot derive from this one), a name
    annotated with or only bound to another class (a settings dataclass), a constructor's parameter that every construction of its class
    fills with such a value (`Block(settings)` in `Net.__init__`, `Net(Settings())`), or a value read, in
    the same function and unconditionally, for an attribute no instance of the class has
    (`config.dropout` beside `config.n_embd`: the class sets no `n_embd`, nor does its base or a subclass,
    and nothing writes it). A value not known counts. A read that only asks whether the attribute holds
    something (`if self.norm:`, `if self.norm is not None:`, `not self.norm`) runs nothing and does not count. A string counts only where it reaches an attribute by name:
    `getattr`, `setattr`, `get_submodule`, a parameter of a helper that does so, a key read from
    `_modules` or `vars(m)`, a dotted key of a state dict (`"head.weight"`), a name compared with it while
    iterating the instance's `named_parameters()` or `named_modules()`; not a docstring, a message, a
    list, a dict of settings (`{"dropout": 0.1}`), a key renaming, a key of an options mapping, nor
    `hasattr(self, "dropout")`: it asks whether the layer is there, and a layer only tested for never runs.
    Initialising a layer is no use either: its `weight`/`bias` given to `torch.nn.init` or written in
    place (`self.fc.bias.data.zero_()`), `reset_parameters()` of a `torch.nn` layer, the layer given to
    an initialising function of the file (one that only writes weights), or its `apply(weights_init)`.
    Nor is a deep copy (`nn.ModuleList([copy.deepcopy(self.layer) for _ in range(n)])`): the copies
    have parameters of their own and run; the layer they were copied from does not.
    A layer that holds no parameter and no buffer and computes the same in
    training and evaluation (a loss such as `nn.MSELoss()` kept as an attribute, an activation, a pooling,
    reshaping or padding layer, a module class of the project that sets nothing on itself but numbers,
    strings and such layers, such as a pass-through `Identity`) is not reported: nothing of it misses a gradient. Nor is
    a container built empty (`nn.ModuleList()`) that no code of the file spells again: nothing fills it,
    nor a module class of the project that holds only buffers it registers (a fixed sinusoidal table). A class whose `forward`
    does nothing (`pass`, a docstring, `raise NotImplementedError`) has no forward pass to bypass. A file
    spelling the name that cannot be parsed, or a project of more than 5000 source files, keeps the rule
    silent. With the cache on, the result is computed again when a file of the project is added, removed
    or changed.

    ## Why is this bad?
    The layer never runs. A dropout or a normalisation the author believes is active does nothing, and
    the parameters of an unused layer are handed to the optimizer, saved and moved, but never get a
    gradient: they stay at their initial values. Under `DistributedDataParallel` the first backward pass
    fails ("Expected to have finished reduction in the prior iteration") unless
    `find_unused_parameters=True` is passed, which slows every step. Effective PyTorch's chapter on
    modules builds a model from the layers `__init__` registers and `forward` calls; a layer registered
    and never called is a mistake in one of the two.

    ## Example
    ```python
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.fc(x)
    ```

    ## Use instead
    ```python
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.fc(self.drop(x))
    ```

    ## Fix safety
    No fix: whether the layer should be called (and where) or deleted is the author's decision.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.Module](https://pytorch.org/docs/stable/generated/torch.nn.Module.html)
    - [DistributedDataParallel: `find_unused_parameters`](https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL602"
    NAME = "unused-submodule"
    MESSAGE = (
        "Submodule `self.{name}` is built in `__init__` but never used: it takes no part in the forward pass "
        "and its parameters get no gradient"
    )
    #: for a layer without parameters (a dropout): nothing of it misses a gradient, it just never runs
    MESSAGE_PARAMETER_FREE = (
        "Submodule `self.{name}` is built in `__init__` but never used: it takes no part in the forward pass, "
        "so what it does in training never happens"
    )
    TRIGGERS = ("Module",)

    VALID = [
        # a hook registered in __init__ before the layer is bound runs it later, on every forward pass
        """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.fc.register_forward_hook(lambda module, inputs, output: self.drop(output))
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.fc(x)
""",
        # the rate is read before the layer is bound, and the layer is called in forward
        """
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.p = opts.p
        self.body = nn.Sequential(nn.Linear(opts.width, 32), nn.Dropout(self.p))
        self.p = nn.Dropout(self.p)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.p(self.body(x)))
""",
        # every layer is called in forward
        Valid(
            """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))
"""
        ),
        # used only in a method other than forward, and through a container built from it
        Valid(
            """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.body = nn.Sequential(self.norm, nn.ReLU())
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 2)})

    def embed(self, x):
        return self.proj(x)

    def forward(self, x):
        return self.heads["a"](self.body(self.embed(x)))
"""
        ),
        # read outside the class (an EMA copy kept on the model and updated by the trainer)
        Valid(
            """
import copy
import torch.nn as nn


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(8, 8)
        self.ema = nn.Linear(8, 8)

    def forward(self, x):
        return self.backbone(x)


model = Student()
for p, q in zip(model.ema.parameters(), model.backbone.parameters()):
    p.data.mul_(0.99).add_(q.data, alpha=0.01)
"""
        ),
        # used by a subclass of the same file
        Valid(
            """
import torch.nn as nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.extra = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class WithExtra(Base):
    def forward(self, x):
        return self.extra(self.fc(x))
"""
        ),
        # reached through getattr with a computed name, and through the children
        Valid(
            """
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(4, 4)
        self.layer1 = nn.Linear(4, 4)

    def forward(self, x):
        for i in range(2):
            x = getattr(self, f"layer{i}")(x)
        return x


class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        for child in self.children():
            x = child(x)
        return x
"""
        ),
        # named in a string (a freezing list), and reached through _modules
        Valid(
            """
import torch.nn as nn


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)
        self.head = nn.Linear(8, 2)
        for name, p in self.named_parameters():
            p.requires_grad = name.startswith("head")

    def forward(self, x):
        return self.stem(x)


class ByName(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)

    def forward(self, x):
        return self._modules["enc"](x)
"""
        ),
        # a class without its own forward (a base class whose subclasses may live elsewhere), and no module
        Valid(
            """
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)


class Holder:
    def __init__(self):
        self.net = nn.Linear(4, 4)

    def forward(self, x):
        return x
"""
        ),
        # registered again under another name, and frozen by name through a helper of the file
        Valid(
            """
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(4, 4)
        self.add_module("decoder", self.shared)
        self.register_module("encoder", nn.Linear(4, 4))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def freeze(model, part):
    for p in getattr(model, part).parameters():
        p.requires_grad_(False)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.neck = nn.Linear(4, 4)

    def forward(self, x):
        return self.stem(x)


net = Backbone()
freeze(net, "neck")
"""
        ),
        # a base class from another module may use the layer (`get_image_features` of the base); a buffer
        Valid(
            """
import torch
import torch.nn as nn
from transformers import CLIPModel


class MyClip(CLIPModel):
    def __init__(self, config):
        super().__init__(config)
        self.visual_projection = nn.Linear(8, 4)

    def forward(self, x):
        return self.get_image_features(x)


class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.inv_freq = nn.Buffer(torch.ones(4), persistent=False)
        self.saved = nn.Buffer(torch.ones(4), persistent=False)

    def forward(self, x):
        return x * self.inv_freq
"""
        ),
        # losses and activations kept as attributes hold nothing; a forward that does nothing (a class
        # built to show its registered modules) bypasses nothing
        Valid(
            """
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3)
        self.mse = nn.MSELoss()
        self.bce = nn.BCEWithLogitsLoss()
        self.act = nn.LeakyReLU(0.1)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.backbone(x)


class Registered(nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = [nn.Linear(3, 4)]
        self.blocks = nn.ModuleList([nn.Conv2d(3, 3, 3), nn.ReLU()])

    def forward(self):
        pass


print(Registered())
"""
        ),
        # a base class of the file runs the subclass's layers in its own method
        Valid(
            """
import torch.nn as nn


class CellBase(nn.Module):
    def combine(self, x):
        return self.left(x) + self.right(x)


class Cell(CellBase):
    def __init__(self):
        super().__init__()
        self.left = nn.Linear(4, 4)
        self.right = nn.Linear(4, 4)

    def forward(self, x):
        return self.combine(x)


class Other(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Linear(4, 4)

    def forward(self, x):
        return self.left(x)
"""
        ),
        # a layer used only in a method callers use (`encode`), one held in a ModuleList that forward iterates,
        # and one called through a local alias
        Valid(
            """
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 4)
        self.enc_norm = nn.LayerNorm(4)
        self.dec = nn.Linear(4, 16)
        self.blocks = nn.ModuleList([nn.Linear(16, 16) for _ in range(2)])
        self.drop = nn.Dropout(0.1)

    def encode(self, x):
        return self.enc_norm(self.enc(x))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        f = self.drop
        return self.dec(self.enc(f(x)))


codes = AutoEncoder().encode
"""
        ),
        # the model handed to helpers: one reads the layer on its parameter (with another of its layers),
        # one reaches it through `_modules` by its name
        Valid(
            """
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.dropout = nn.Dropout(0.2)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.fc(x)


def noisy(model, x):
    return model.fc(model.dropout(x))


def normed(model, x):
    return model._modules["norm"](x)


net = Tagger()
print(noisy(net, None), normed(net, None))
"""
        ),
        # a helper's parameter read for an attribute only a subclass has, or only under a `hasattr` test, may
        # still be the model: its read of the layer counts
        Valid(
            """
import torch.nn as nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.fc(x)


class Scaled(Base):
    @property
    def scale(self):
        return 2.0


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.fc(x)


def noisy(m, x):
    return m.dropout(x) * m.scale


def gated(g, x):
    if hasattr(g, "temperature"):
        x = x / g.temperature
    return g.drop(x)
"""
        ),
        # the dropout layer is a leftover: the same rate is applied by a locked dropout in `forward`
        """
import torch.nn as nn


class LockedDropout(nn.Module):
    def forward(self, x, p):
        mask = x.new_empty(1, x.size(1), x.size(2)).bernoulli_(1 - p) / (1 - p)
        return x * mask if self.training else x


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim, dropouti=0.5):
        super().__init__()
        self.lockdrop = LockedDropout()
        self.idrop = nn.Dropout(dropouti)
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim)
        self.dropouti = dropouti

    def forward(self, tokens):
        emb = self.lockdrop(self.embed(tokens), self.dropouti)
        return self.rnn(emb)[0]
""",
        # the dropout built only for a positive rate, run where `hasattr` finds it
        Valid(
            """
import torch.nn as nn


class ConvUnit(nn.Module):
    def __init__(self, c_in, c_out, drop=0.0):
        super().__init__()
        if drop > 0:
            self.dropout = nn.Dropout2d(drop)
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x):
        x = self.dropout(x) if hasattr(self, "dropout") else x
        return self.conv(x)
"""
        ),
        # the same stage reaching its layers by a computed name with no fixed start: any of them may run
        Valid(
            """
import torch.nn as nn


class ResStage(nn.Module):
    def __init__(self, c, names=("dropout", "conv")):
        super().__init__()
        self.names = names
        self.dropout = nn.Dropout2d(0.1)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        for name in self.names:
            x = getattr(self, name)(x)
        return x
"""
        ),
        # a pass-through module of the project kept for the printed structure: it holds nothing, and runs the
        # same in both modes
        Valid(
            """
import torch.nn as nn


class Identity(nn.Module):
    def forward(self, x):
        return x

    def __repr__(self):
        return "Identity()"


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        if len(sizes) < 2:
            self.no_layers = Identity()

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
"""
        ),
        # an empty container that nothing fills (no `append`, no item written): it holds nothing to train
        Valid(
            """
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 3, 3, padding=1) for _ in range(n)])
        self.upsamples = nn.ModuleList()

    def forward(self, x):
        for conv in self.convs:
            x = conv(x)
        return x
"""
        ),
        # a variant that leaves out a module holding only a fixed table (a registered buffer, no parameter):
        # nothing of it misses a gradient
        Valid(
            """
import math

import torch
import torch.nn as nn


class PositionalEmbedding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        pe.require_grad = False
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, :x.size(1)]


class EmbeddingWithoutPosition(nn.Module):
    def __init__(self, c_in, d_model):
        super().__init__()
        self.value_embedding = nn.Linear(c_in, d_model)
        self.position_embedding = PositionalEmbedding(d_model)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.value_embedding(x))
"""
        ),
        # a subclass runs the block's batch norm by name: an instance of it is a block
        Valid(
            """
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        self.norm = nn.BatchNorm2d(dim)

    def forward(self, x):
        return self.conv(x).relu()


class NormedBlock(Block):
    def forward(self, x):
        return getattr(self, "norm")(super().forward(x))
"""
        ),
        # an optional batch norm tested and applied where it is there
        Valid(
            """
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, norm=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        if norm:
            self.norm = nn.BatchNorm2d(cout)
        else:
            self.norm = None
            self.shift = nn.Parameter(torch.zeros(cout, 1, 1))
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        if self.norm is None:
            x = x + self.shift
        else:
            x = self.norm(x)
        return self.act(x)
"""
        ),
        Valid(
            """
import copy

import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x).relu()


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.first = Layer(d)
        self.rest = nn.ModuleList([copy.deepcopy(self.first) for _ in range(n - 1)])

    def forward(self, x):
        x = self.first(x)  # the template runs too
        for layer in self.rest:
            x = layer(x)
        return x
"""
        ),
    ]

    INVALID = [
        # another class reads `opts.p` and `opts.scale`, settings of the layers it builds (`Mixer(..., p=opts.p)`
        # hands `p` to `nn.Dropout`): no instance of `Mixer`, whose own dropout is never called
        Invalid(
            """
import torch
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self, scale=1.0, p=0.1):
        super().__init__()
        self.scale = scale
        self.p = nn.Dropout(p)

    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)


class Layer(nn.Module):
    def __init__(self, opts, width):
        super().__init__()
        self.mix = Mixer(opts.scale, p=opts.p)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        return self.out(self.mix(x, x) @ x)
""",
            line=10,
            col=9,
            message="`self.p`",
        ),
        # the layers come from a backbone built and moved at module level (`trunk = trunk.to(device)` is the same
        # library model, not the instance): the class's own backbone is never used
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision import models

device = "cuda" if torch.cuda.is_available() else "cpu"
trunk = models.resnet18()
trunk = trunk.to(device)


class Segmenter(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.backbone = models.resnet18()
        self.early = nn.Sequential(*list(trunk.children())[:4])
        self.out = nn.Conv2d(64, classes, 1)

    def forward(self, x):
        return self.out(self.early(x))
""",
            line=14,
            col=9,
            message="`self.backbone`",
        ),
        # the attribute held the rate first, read to build another layer; the layer bound to it later is
        # never called
        Invalid(
            """
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.p = opts.p
        self.body = nn.Sequential(nn.Linear(opts.width, 32), nn.Dropout(self.p))
        if opts.classify:
            self.p = nn.Dropout(self.p)
            self.head = nn.Linear(32, opts.classes)
        else:
            self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.body(x))
""",
            line=11,
            col=13,
            message="`self.p`",
        ),
        Invalid(
            """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(x)
""",
            line=9,
            col=9,
            message="`self.drop`",
        ),
        # a project module class, `torch.nn` spelled in full; an init loop over self.modules() runs nothing
        Invalid(
            """
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)


class Model(torch.nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.first = Block()
        self.second = Block()
        self.norm = torch.nn.BatchNorm1d(8)
        for m in self.modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.first(x)
""",
            count=2,
        ),
        # a layer used nowhere, also not in a helper method that the model calls
        Invalid(
            """
from torch import nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.bn = nn.BatchNorm2d(16)
        self.out = nn.Linear(16, n)

    def features(self, x):
        return F.relu(self.conv(x)).mean((2, 3))

    def forward(self, x):
        return self.out(self.features(x))
""",
            message="`self.bn`",
        ),
        # initialised in `__init__` (through `nn.init`, in place, and by a helper), never run
        Invalid(
            """
import torch.nn as nn


def init_layer(layer):
    nn.init.kaiming_normal_(layer.weight)
    nn.init.zeros_(layer.bias)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.proj = nn.Linear(16, 16)
        self.out = nn.Linear(16, 5)
        self.extra = nn.Linear(16, 16)
        nn.init.xavier_uniform_(self.proj.weight)
        self.proj.bias.data.fill_(0.0)
        init_layer(self.extra)

    def forward(self, tokens):
        return self.out(self.embed(tokens))
""",
            count=2,
        ),
        # a pandas frame's `drop` is no read of the layer `drop`; a weighted layer unused beside a loss
        Invalid(
            """
import pandas as pd
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 1)
        self.drop = nn.Dropout(0.2)
        self.criterion = nn.MSELoss()

    def forward(self, x):
        return self.body(x)


table = pd.read_csv("data.csv").dropna()
features = table.drop(columns=["target"])
""",
            line=10,
            col=9,
            message="`self.drop` is built in `__init__` but never used: it takes no part in the forward pass, so what "
                    "it does in training never happens",
        ),
        # another class of the file reads its own `self.norm`: no use of this class's layer
        Invalid(
            """
import torch.nn as nn


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.proj(x)


class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(self.proj(x))
""",
            line=9,
            col=9,
            message="`self.norm`",
        ),
        # the name spelled in a docstring, a message, a dict of settings and a key of an options mapping, and
        # read on a configuration object (which has a `width` no `Head` has): none of them is the layer
        Invalid(
            """
import torch.nn as nn

SETTINGS = {"dropout": 0.1, "width": 32}


class Head(nn.Module):
    \"\"\"A projection followed by dropout.\"\"\"

    def __init__(self, cfg):
        super().__init__()
        self.proj = nn.Linear(cfg.width, cfg.width)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.proj(x)


def describe(options):
    print(f"dropout is {options['dropout']}")
""",
            line=13,
            col=9,
            message="`self.dropout`",
        ),
        # a parameter that every construction fills with a settings object: `settings.dropout` in the
        # block and in the model that builds it is the setting, not the layer
        Invalid(
            """
from dataclasses import dataclass

import torch.nn as nn


@dataclass
class Settings:
    dropout: float = 0.1


class Block(nn.Module):
    def __init__(self, settings):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.dropout = nn.Dropout(settings.dropout)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, settings):
        super().__init__()
        self.block = Block(settings)
        self.rate = settings.dropout

    def forward(self, x):
        return self.block(x)


net = Net(Settings())
""",
            line=16,
            col=9,
        ),
        # reflection on a library model the class takes layers from is no reflection on the class; a loop
        # over its modules that initialises them (computing a number on the way) and `reset_parameters()` of
        # a torch layer run nothing
        Invalid(
            """
import math

import torch.nn as nn
import torchvision


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        resnet = torchvision.models.resnet18(weights=None)
        self.stem = nn.Sequential(*list(resnet.children())[:4])
        self.bn = nn.BatchNorm2d(64)
        self.head = nn.Linear(64, 10)
        self.extra = resnet._modules["layer1"]
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / fan_out))
        self.reset_head()

    def reset_head(self):
        self.head.reset_parameters()

    def forward(self, x):
        return self.extra(self.stem(x))
""",
            count=2,
        ),
        # a loop over the modules that only switches the batch norms to eval mode runs none of them
        Invalid(
            """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.extra = nn.Linear(4, 4)

    def freeze_bn(self):
        for m in self.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.eval()

    def forward(self, x):
        return self.bn(self.fc(x))
""",
            line=10,
            message="`self.extra`",
        ),
        # a layer built through a module-level alias of its class is a layer like any other
        Invalid(
            """
import torch.nn as nn

Norm = nn.BatchNorm2d


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = Norm(8)

    def forward(self, x):
        return self.conv(x)
""",
            line=11,
            message="`self.bn`",
        ),
        # a dropout built only for a positive rate, `forward` testing for it with `hasattr` but never running it
        Invalid(
            """
import torch.nn as nn


class ConvUnit(nn.Module):
    def __init__(self, c_in, c_out, drop=0.0):
        super().__init__()
        if drop > 0:
            self.dropout = nn.Dropout2d(drop)
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x):
        x = x if hasattr(self, "dropout") else x
        return self.conv(x)
""",
            line=9,
            col=13,
            message="Submodule `self.dropout` is built in `__init__` but never used",
        ),
        # `forward` reaches the blocks by a computed name that starts with "block": the dropout is never run
        Invalid(
            """
import torch.nn as nn


class ResStage(nn.Module):
    def __init__(self, c, n_blocks=2, drop=0.1):
        super().__init__()
        self.n_blocks = n_blocks
        self.dropout = nn.Dropout2d(drop)
        for k in range(n_blocks):
            setattr(self, "block{}".format(k + 1), nn.Conv2d(c, c, 3, padding=1))

    def forward(self, x):
        for k in range(self.n_blocks):
            x = getattr(self, "block{}".format(k + 1))(x)
        return x
""",
            line=9,
            col=9,
            message="Submodule `self.dropout` is built in `__init__` but never used",
        ),
        # a module class of the project that holds a layer of its own, left unused
        Invalid(
            """
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 1)

    def forward(self, x):
        return self.fc(x)


class Stack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.body = nn.Linear(n, n)
        self.head = Head(n)

    def forward(self, x):
        return self.body(x)
""",
            line=18,
            col=9,
            message="Submodule `self.head` is built in `__init__` but never used",
        ),
        # a batch norm of the project built on torch's private base (`_BatchNorm`) holds parameters
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm


class SyncBatchNorm2d(_BatchNorm):
    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = SyncBatchNorm2d(c)
        self.skipbn = SyncBatchNorm2d(c)

    def forward(self, x):
        return self.bn(self.conv(x)) + x
""",
            line=17,
        ),
        # the only other `.norm` of the file is a tensor's (a norm of a sum), which reads no layer
        Invalid(
            """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        self.norm = nn.BatchNorm2d(dim)

    def forward(self, x):
        return torch.relu(self.conv(x))


def gradient_penalty(grads, eps=1e-12):
    return ((grads + eps).norm(2, dim=1) - 1).pow(2).mean()
""",
            line=10,
        ),
        # `getattr(self, f"norm{i}")` in another class reads that class's own layers, not the block's
        Invalid(
            """
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        self.norm = nn.BatchNorm2d(dim)

    def forward(self, x):
        return self.conv(x).relu()


class Stack(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        for i in range(depth):
            setattr(self, f"norm{i}", nn.BatchNorm2d(dim))

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = getattr(self, f"norm{i}")(block(x))
        return x
""",
            line=9,
        ),
        # the batch norm is only tested (`if self.norm is None:`): asking whether it is there never runs it
        Invalid(
            """
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, norm=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        if norm:
            self.norm = nn.BatchNorm2d(cout)
        else:
            self.norm = None
            self.shift = nn.Parameter(torch.zeros(cout, 1, 1))
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        if self.norm is None:
            x = x + self.shift
        return self.act(x)
""",
            line=11,
        ),
        # a layer read only to be deep-copied: the copies run, it does not
        Invalid(
            """
import copy

import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x).relu()


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.layer = Layer(d)
        self.layers = nn.ModuleList([copy.deepcopy(self.layer) for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
""",
            line=19,
            message='Submodule `self.layer` is built in `__init__` but never used',
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._classes: List[cst.ClassDef] = []
        self._read = NamesRead()  # what the whole file reads, gathered during the walk

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._read.attribute(self.ctx, node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._read.string(node, node.value)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._read.string(node, "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText)))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        # the walk has seen the whole class; what the rest of the file reads is known only at the end
        self._classes.append(original_node)

    def leave_Module(self, node: cst.Module) -> None:
        for cls in self._classes:
            for name, assign in unused_submodules(self.ctx, cls, self._read):
                message = self.MESSAGE_PARAMETER_FREE if parameter_free(self.ctx, assign.value) else self.MESSAGE
                self.report(assign.targets[0].target, message.format(name=name))
