from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import keyword_arg, method_name
from torchlint.analysis.definitions import (built_values, called_function, callers_arguments, find_method,
                                          function_returns)
from torchlint.families.api.rewrite import torch_in_scope
from torchlint.rule import Invalid, LintRule, Valid

#: factories whose values do not depend on where or in which dtype they are computed
EXACT_FACTORIES = frozenset(
    {"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.eye", "torch.tensor", "torch.scalar_tensor"}
)
#: factories whose values do (random streams differ per device; ranges are computed in the dtype)
APPROX_FACTORIES = frozenset(
    {"torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.arange", "torch.linspace", "torch.logspace",
     "torch.hann_window", "torch.hamming_window", "torch.blackman_window", "torch.bartlett_window",
     "torch.kaiser_window"}
)
#: the legacy typed constructors and the dtype each makes; they build in host memory only (`device=`
#: with a CUDA device raises), so a move after one copies a tensor the modern factories make in place
LEGACY_CONSTRUCTORS = {
    "torch.FloatTensor": "torch.float32", "torch.DoubleTensor": "torch.float64", "torch.HalfTensor": "torch.float16",
    "torch.BFloat16Tensor": "torch.bfloat16", "torch.LongTensor": "torch.int64", "torch.IntTensor": "torch.int32",
    "torch.ShortTensor": "torch.int16", "torch.CharTensor": "torch.int8", "torch.ByteTensor": "torch.uint8",
    "torch.BoolTensor": "torch.bool",
}
#: factories that take only sizes: their dtype is the default (float32) unless given
SIZE_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.eye"})
CASTS = {
    "float": "torch.float32",
    "double": "torch.float64",
    "half": "torch.float16",
    "bfloat16": "torch.bfloat16",
    "long": "torch.int64",
    "int": "torch.int32",
    "bool": "torch.bool",
    "short": "torch.int16",
    "char": "torch.int8",
    "byte": "torch.uint8",
}
#: dtype spellings that name the same dtype, by their canonical name
SAME_DTYPE = {"torch.float": "torch.float32", "torch.double": "torch.float64", "torch.half": "torch.float16",
              "torch.long": "torch.int64", "torch.int": "torch.int32", "torch.short": "torch.int16",
              "torch.cfloat": "torch.complex64", "torch.cdouble": "torch.complex128"}
#: calls that change the dtype a factory gives by default (a floating one)
DEFAULT_DTYPE_SETTERS = frozenset({"torch.set_default_dtype", "torch.set_default_tensor_type"})
FLOATING = frozenset({"torch.float32", "torch.float64", "torch.float16", "torch.bfloat16"})
DTYPES = frozenset(f"torch.{d}" for d in (
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "int64", "long", "int32", "int",
    "int16", "int8", "uint8", "bool", "complex64", "complex128",
))


class TensorCreatedThenMoved(LintRule):
    """
    ## What it does
    Finds a tensor factory call (`torch.zeros`, `ones`, `empty`, `full`, `eye`, `tensor`, `scalar_tensor`, `rand`,
    `randn`, `randint`, `arange`, the window functions such as `hann_window`, ...) followed by a move to a certain device (`.cuda()`,
    `.to(device=...)`, `.to("cuda")`, `.to(x.device)`: the device another tensor is on, also held in a
    variable, `device = x.device`, or returned by a method of the file, `self._device()`), directly or after a cast (`torch.tensor(0).float().cuda()`, `.to(x.dtype).cuda()`: the
    fix makes the tensor on the device and keeps the cast), a move that also casts
    (`.to(dtype=x.dtype, device=x.device)`, `.to(device, torch.float16)`: the fix makes it on the device and
    casts it there), an in-place fill (`torch.empty(n, d).normal_().to(device)`), the deprecated `Variable(...)` wrapper
    given only the tensor (`Variable(torch.zeros(n)).cuda()`; not with `requires_grad=`) or a view (`torch.zeros(n).unsqueeze(1).cuda()`, `torch.arange(n).expand(b, -1).to(device)`), and a size-only factory (`zeros`, `ones`, `empty`,
    `eye`) followed by a cast to another dtype than the default float32 (`.double()`, `.long()`,
    `.bool()`, `.half()`, `.short()`, `.byte()`, `.to(dtype=torch.int64)`). A random factory given its
    own `generator=` is not reported when moved: the generator's device is where it can draw. `.to(x)` with a value of unknown kind is not
    reported, nor are casts after `torch.tensor`, `arange`, `linspace` or the random factories:
    their dtype depends on the data, and `arange(n, dtype=torch.int64).to(torch.float32)` computes the
    values exactly before converting them, on purpose. Nor is a cast to the dtype the factory already
    produces (`torch.ones(n).float()`, `torch.zeros(n, dtype=torch.long).long()`): it returns the
    same tensor and allocates nothing; nor, in a file that changes the default dtype
    (`torch.set_default_dtype`, `torch.set_default_tensor_type`), a cast to a floating dtype after a
    size-only factory, nor, in a file that may change the default device (`torch.set_default_device`,
    `torch.set_default_tensor_type` of a CUDA type), a move to a device.
    A legacy typed constructor given a size (`torch.FloatTensor(n, d).uniform_(-1, 1).to(device)`,
    `torch.ByteTensor(size=(n,)).cuda()`, `torch.LongTensor(10000).to(x.device)`) is reported without a fix: it allocates in host memory only;
    `torch.empty(n, d, device=device)` allocates on the device. Given data (`torch.FloatTensor(state)`)
    it is not reported: data is copied to the device once either way.

    ## Why is this bad?
    `torch.zeros(n, m).cuda()` allocates and fills the tensor in host memory, copies it to the GPU
    and frees the host copy; `torch.zeros(n, m, device="cuda")` allocates it on the GPU directly. In
    code that runs every step the extra allocation and transfer are pure overhead, and a cast after a
    factory allocates the tensor twice. The PyTorch Cookbook's 2024 revision creates tensors with
    `device=` and `dtype=` for this reason, and the PyTorch performance tuning guide says the same
    ("create tensors directly on the target device").

    ## Example
    ```python
    mask = torch.zeros(batch, length).cuda()
    counts = torch.zeros(classes).long()
    ```

    ## Use instead
    ```python
    mask = torch.zeros(batch, length, device="cuda")
    counts = torch.zeros(classes, dtype=torch.int64)
    ```

    ## Fix safety
    The fix moves the device or dtype into the factory call and drops the move. It is safe for
    `zeros`, `ones`, `empty`, `full`, `eye` and `tensor`, whose values do not depend on where they are
    computed. It is unsafe for the random factories and ranges: `torch.randn(n, device="cuda")` draws
    from the CUDA generator, so the numbers differ from `torch.randn(n).cuda()` under the same seed,
    and `arange`/`linspace` compute their values in the requested dtype. No fix when the factory
    already names a device or dtype, or when the file does not import `torch` by that name.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [Performance tuning guide: create tensors directly on the target device](https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html)
    - [Tensor creation ops](https://pytorch.org/docs/stable/torch.html#creation-ops)
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL513"
    NAME = "tensor-created-then-moved"
    MESSAGE = "`{found}` creates the tensor, then {what} it: pass `{kw}=` to the factory instead of allocating twice"
    FIX_TITLE = "Pass `device=`/`dtype=` to the factory"
    TRIGGERS = ("torch",)

    VALID = [
        Valid(
            """
import torch

mask = torch.zeros(4, 5, device="cuda")
ids = torch.tensor([1, 2], dtype=torch.int64)
"""
        ),
        Valid(
            """
import torch

def f(x, ref):
    return torch.zeros(3).to(ref), torch.ones(2).to(x.device if x is not None else "cpu", non_blocking=True)
"""
        ),
        Valid(
            """
import torch

def f(batch, device):
    return batch.to(device), torch.zeros_like(batch).float()
"""
        ),
        Valid(
            """
import numpy as np

a = np.zeros(3).astype(np.float32)
"""
        ),
        Valid(
            """
import torch

def f(x):
    y = torch.zeros(3)
    y[0] = x
    return y.cuda()
"""
        ),
        Valid(
            """
import torch

def pos(n, device):
    steps = torch.arange(n, dtype=torch.int64, device=device).to(torch.float32)
    idx = torch.linspace(0, n - 1, 8, device=device).long()
    return steps, idx, torch.tensor([1, 2]).float(), torch.zeros(3).float()
"""
        ),
        # a cast to the dtype the factory already produces returns the same tensor
        Valid(
            """
import torch

def masks(n):
    keep = torch.ones(n, dtype=torch.long).long()
    scale = torch.zeros(n, dtype=torch.float64).to(torch.double)
    return keep, scale, torch.ones(n, 2).to(dtype=torch.float)
"""
        ),
        # `torch` imported under another name: `.float()` is still the default dtype
        Valid(
            """
import torch as t

def kernel(c, k):
    return t.ones((c, c, k, k)).float() / (c * k * k)
"""
        ),
        # a CUDA default tensor type: the factory already allocates on the GPU
        Valid(
            """
import torch

torch.set_default_tensor_type("torch.cuda.FloatTensor")

def noise(n):
    return torch.zeros(n, 4).cuda()
"""
        ),
        # the file changes the default dtype and device: the factory may already produce them
        Valid(
            """
import torch

torch.set_default_dtype(torch.float64)
torch.set_default_device("cuda")

def grid(n):
    return torch.ones(n).double(), torch.zeros(n, n).cuda()
"""
        ),
        # `.to("cpu")` of a tensor a factory made on the CPU returns that tensor: nothing is allocated twice
        """
import torch

rank = torch.tensor([3]).to("cpu")
noise = torch.rand(10, 10).to("cpu")
""",
        # a variable that only ever holds the CPU, and one that may hold a tensor (`.to(other)` takes its dtype
        # and device): no second allocation shown
        """
import torch

cpu = torch.device("cpu")


def buffers(n, other):
    return torch.zeros(n).to(cpu), torch.zeros(n).to(other)
""",
        # casts after a factory that no move follows, or whose move goes nowhere (`.to("cpu")`)
        """
import torch


def buffers(n):
    return torch.arange(n).float().half(), torch.tensor([1, 2]).float().to("cpu")
""",
        # drawn with a CPU generator of its own (reproducible on any device), then moved to the data
        Valid(
            """
import torch

def noise_like(x, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(x.shape, generator=gen).to(x.device)
"""
        ),
        # the parameter the tensor is moved with is given a dtype by the only call: a cast, not a move
        Valid(
            """
import torch


def blank(n, kind):
    return torch.zeros(n, 3).to(kind)


half = blank(4, torch.float16)
"""
        ),
        # near miss: a legacy constructor used where it stays, cast without a move, or given data (the
        # copy to the device is the one copy `torch.tensor(rows, device=...)` would make too)
        """
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def batch(rows: np.ndarray):
    x = torch.FloatTensor(rows)
    return x, torch.LongTensor(rows).to(torch.float32), torch.FloatTensor(rows).unsqueeze(0).to(device)
""",
        # near miss: `.to(other, dtype)` with a value of unknown kind, and a move to the CPU that casts
        Valid(
            """
import torch


def mask_like(x, n):
    return torch.ones(n).to(x, torch.float16), torch.ones(n).to("cpu", torch.float16)
"""
        ),
        Valid(
            """
import torch


def start(kind, device):
    return torch.tensor(0).to(kind).cuda()


def batch(ids, x):
    return torch.LongTensor(ids).to(x.device)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def f(batch, length):
    return torch.zeros(batch, length).cuda()
""",
            fixed="""
import torch

def f(batch, length):
    return torch.zeros(batch, length, device="cuda")
""",
            line=5,
            col=12,
        ),
        Invalid(
            """
import torch

ids = torch.zeros(3).long()
w = torch.ones(3).to(dtype=torch.float16)
""",
            fixed="""
import torch

ids = torch.zeros(3, dtype=torch.int64)
w = torch.ones(3, dtype=torch.float16)
""",
            count=2,
        ),
        Invalid(
            """
import torch

noise = torch.randn(8, 16).to(device="cuda")
""",
            fixed="""
import torch

noise = torch.randn(8, 16, device="cuda")
""",
            unsafe=True,
        ),
        # a default float dtype changed does not make a cast to an integer dtype free, nor a CPU default
        # tensor type a move to the GPU (no fix: `torch` is imported under another name)
        Invalid(
            """
import torch as t

t.set_default_tensor_type(t.DoubleTensor)

def ids(n):
    return t.zeros(n).long(), t.randn(n, 2).cuda(), t.ones(n).float()
""",
            count=2,
            message="`t.zeros(n).long()` creates the tensor, then casts it",
        ),
        # a cast to another dtype than the one given to the factory: no fix (the factory names a dtype)
        Invalid(
            """
import torch

def counts(n):
    return torch.ones(n, dtype=torch.int64).double()
""",
            message="`torch.ones(n, dtype=torch.int64).double()` creates the tensor, then casts it",
        ),
        Invalid(
            """
import torch

def f(n):
    return torch.zeros(n, device="cpu").cuda()
""",
        ),
        # the factory writes into a given tensor (`out=`): its dtype is that tensor's, so no `dtype=` can
        # be added (torch raises on a mismatch): reported without a fix
        Invalid(
            """
import torch


def mask_of(buffer, n):
    return torch.ones(n, out=buffer).bool()
""",
            line=6,
            message="create it as needed with `dtype=` in place of `out=`",
        ),
        # the device in a variable: every value it is given is a device, one of them a GPU's
        Invalid(
            """
import torch

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def decode_buffers(batch, steps, vocab):
    return torch.zeros(batch, steps, vocab).to(dev)
""",
            fixed="""
import torch

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def decode_buffers(batch, steps, vocab):
    return torch.zeros(batch, steps, vocab, device=dev)
""",
            line=8,
        ),
        # a cast between the factory and the move: the tensor is made on the host, cast, then copied
        Invalid(
            """
import torch


def anchors_loss(regression):
    total = torch.tensor(0).float().cuda()
    return total + regression.abs().sum()
""",
            fixed="""
import torch


def anchors_loss(regression):
    total = torch.tensor(0, device="cuda").float()
    return total + regression.abs().sum()
""",
            line=6,
        ),
        # the device of another tensor, given positionally; a byte mask cast after the factory
        Invalid(
            """
import torch


def smooth(target, classes):
    dist = torch.zeros(target.size(0), classes).to(target.device)
    mask = torch.ones(target.size(0)).byte()
    return dist, mask
""",
            fixed="""
import torch


def smooth(target, classes):
    dist = torch.zeros(target.size(0), classes, device=target.device)
    mask = torch.ones(target.size(0), dtype=torch.uint8)
    return dist, mask
""",
            count=2,
        ),
        # a scalar made on the host, then moved
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
lr = torch.scalar_tensor(0.0001).to(device)
""",
            fixed="""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
lr = torch.scalar_tensor(0.0001, device=device)
""",
        ),
        # the device of the data, held in a variable
        Invalid(
            """
import torch


def sample_centroids(xyz, npoint):
    device = xyz.device
    batch = xyz.shape[0]
    return torch.zeros(batch, npoint, dtype=torch.long).to(device)
""",
            line=8,
            col=12,
            fixed="""
import torch


def sample_centroids(xyz, npoint):
    device = xyz.device
    batch = xyz.shape[0]
    return torch.zeros(batch, npoint, dtype=torch.long, device=device)
""",
        ),
        # a method of the model that returns the device its parameters are on
        Invalid(
            """
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(hidden, hidden)

    def _device(self):
        return next(self.parameters()).device

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden).to(self._device())
        return self.cell(x, h)
""",
            line=16,
            col=13,
            fixed="""
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(hidden, hidden)

    def _device(self):
        return next(self.parameters()).device

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden, device=self._device())
        return self.cell(x, h)
""",
        ),
        # the device a parameter: the only call of the function gives it a device that may be a GPU's
        Invalid(
            """
import torch

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_onehot(labels, num_classes, device):
    onehot = torch.zeros(labels.size(0), num_classes).to(device)
    return onehot.scatter_(1, labels.view(-1, 1), 1)


codes = to_onehot(torch.tensor([0, 2, 1]), 3, dev)
""",
            line=8,
            col=14,
            fixed="""
import torch

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_onehot(labels, num_classes, device):
    onehot = torch.zeros(labels.size(0), num_classes, device=device)
    return onehot.scatter_(1, labels.view(-1, 1), 1)


codes = to_onehot(torch.tensor([0, 2, 1]), 3, dev)
""",
        ),
        # filled in place, then moved: made on the device, then filled there (a random fill draws other numbers
        # on another device: that fix is unsafe)
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def noise(n, d):
    return torch.empty(n, d).normal_().to(device)
""",
            line=8,
            col=12,
            fixed="""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def noise(n, d):
    return torch.empty(n, d, device=device).normal_()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def halves(n, d):
    return torch.empty(n, d).fill_(0.5).to(device)
""",
            line=8,
            col=12,
            fixed="""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def halves(n, d):
    return torch.empty(n, d, device=device).fill_(0.5)
""",
        ),
        # the method returning the device inherited from a base class of the project
        Invalid(
            """
import torch
import torch.nn as nn


class Learner(nn.Module):
    def _device(self):
        return next(self.parameters()).device


class Decoder(Learner):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(hidden, hidden)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden).to(self._device())
        return self.cell(x, h)
""",
            line=18,
            col=13,
            fixed="""
import torch
import torch.nn as nn


class Learner(nn.Module):
    def _device(self):
        return next(self.parameters()).device


class Decoder(Learner):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(hidden, hidden)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.hidden, device=self._device())
        return self.cell(x, h)
""",
        ),
        # a legacy typed constructor allocates in host memory only: no fix
        Invalid(
            """
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def act(policy, state: np.ndarray):
    obs = torch.FloatTensor(state).unsqueeze(0).to(device)
    noise = torch.FloatTensor(2, 3).uniform_(-1, 1).to(device)
    return policy(obs), noise
""",
            line=10,
            col=13,
            message="allocates the tensor in host memory, then moves it",
        ),
        # a window function takes `device=` like the other factories (its values are computed on the device)
        Invalid(
            """
import torch


def spectrogram(y, n_fft=64):
    window = torch.hann_window(n_fft).to(y.device)
    return torch.stft(y, n_fft, window=window, return_complex=True).abs()
""",
            line=6,
            col=14,
            fixed="""
import torch


def spectrogram(y, n_fft=64):
    window = torch.hann_window(n_fft, device=y.device)
    return torch.stft(y, n_fft, window=window, return_complex=True).abs()
""",
            unsafe=True,
        ),
        # a view between the factory and the move: the view stays, on the tensor made on the device
        Invalid(
            """
import torch


def start_token(batch):
    return torch.zeros(batch, dtype=torch.long).unsqueeze(1).cuda()
""",
            line=6,
            col=12,
            fixed="""
import torch


def start_token(batch):
    return torch.zeros(batch, dtype=torch.long, device="cuda").unsqueeze(1)
""",
        ),
        # a move that also casts (`.to(device, dtype)`): made on the device, the cast kept (then folded into the
        # size-only factory too)
        Invalid(
            """
import torch


def mask_like(x, n):
    return torch.ones(n).to(x.device, torch.float16)
""",
            line=6,
            fixed="""
import torch


def mask_like(x, n):
    return torch.ones(n, device=x.device, dtype=torch.float16)
""",
        ),
        Invalid(
            """
import torch


def targets(x, label):
    return torch.LongTensor(64).to(x.device).fill_(label)


x = torch.randn(4, 3)
print(targets(x, 2)[:3])
""",
            line=6,
        ),
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def positions(batch_size, max_len):
    return torch.arange(0, max_len).unsqueeze(0).expand(batch_size, -1).to(device)


print(positions(2, 5))
""",
            line=8,
            fixed="""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def positions(batch_size, max_len):
    return torch.arange(0, max_len, device=device).unsqueeze(0).expand(batch_size, -1)


print(positions(2, 5))
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch


def zero_like(anchors):
    dtype = anchors.dtype
    return torch.tensor(0).to(dtype).cuda()


if torch.cuda.is_available():
    print(zero_like(torch.randn(3).half()))
""",
            line=7,
            fixed="""
import torch


def zero_like(anchors):
    dtype = anchors.dtype
    return torch.tensor(0, device="cuda").to(dtype)


if torch.cuda.is_available():
    print(zero_like(torch.randn(3).half()))
""",
        ),
        Invalid(
            """
import torch
from torch.autograd import Variable


def blank(n):
    return Variable(torch.zeros(n, 3)).cuda()


def leaf(n):
    return Variable(torch.zeros(n, 3), requires_grad=True).cuda()


if torch.cuda.is_available():
    print(blank(2).shape, leaf(2).shape)
""",
            line=7,
            fixed="""
import torch
from torch.autograd import Variable


def blank(n):
    return Variable(torch.zeros(n, 3, device="cuda"))


def leaf(n):
    return Variable(torch.zeros(n, 3), requires_grad=True).cuda()


if torch.cuda.is_available():
    print(blank(2).shape, leaf(2).shape)
""",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._default_device: Optional[bool] = None  # the file may change the factories' device
        self._defaults: Dict[frozenset, bool] = {}  # setters -> the file calls one

    def visit_Module(self, node: cst.Module) -> None:
        self._moves: List[Tuple[cst.Call, bool]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            self._moves.append((node, torch_in_scope(self.ctx)))  # (whether a fix may spell `torch.` there)

    def leave_Module(self, node: cst.Module) -> None:
        for call, spelled in self._moves:  # after the walk: what a device variable holds is known then
            self._check(call, spelled)

    def _check(self, node: cst.Call, spelled: bool) -> None:
        func = node.func
        assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call)
        factory = func.value
        steps: List[cst.Call] = []  # casts, fills and views between the factory and the move, outermost first
        while len(steps) < 4:
            if (self._is_cast(factory) or _fills(factory) or method_name(factory) in _VIEWS) \
                    and isinstance(factory.func.value, cst.Call):  # type: ignore[attr-defined]
                # `torch.tensor(0).float().cuda()`: the cast does not move the tensor, nor does the fill of
                # `torch.empty(n, d).normal_().to(device)` or the view of `torch.zeros(n).unsqueeze(0)`; the move
                # after them still copies a tensor the factory could have made on the device
                steps.append(factory)
                factory = factory.func.value  # type: ignore[attr-defined]
            elif self._plain_variable(factory):
                steps.append(factory)  # `Variable(torch.zeros(n)).cuda()`: the same tensor, wrapped
                factory = factory.args[0].value  # type: ignore[assignment]
            else:
                break
        cast: Optional[cst.Call] = steps[0] if steps else None
        qn = self.ctx.names.qualified_names(factory.func)
        legacy = sorted(qn & LEGACY_CONSTRUCTORS.keys())
        if legacy:
            if any(_fills(s) for s in steps) or _sized(factory):
                self._check_legacy(node, LEGACY_CONSTRUCTORS[legacy[0]])
            return
        if qn.isdisjoint(EXACT_FACTORIES) and qn.isdisjoint(APPROX_FACTORIES):
            return
        moved = self._target(node)
        if moved is None:
            if cast is None:
                self._check_device_and_dtype(node, factory, qn, spelled)
            return
        keyword, value = moved
        if cast is not None and keyword != "device":
            return
        if keyword == "dtype" and not self._certain_cast(qn, factory, value):
            return
        if keyword == "device" and self._sets_default_device():
            return  # the factory may already allocate on that device
        if keyword == "device" and keyword_arg(factory, "generator") is not None:
            return  # a generator of its own draws on its device (a CPU one for reproducible draws): moved on purpose
        fix = None
        if keyword_arg(factory, keyword) is None and keyword_arg(factory, "out") is None and not any(
                a.star for a in factory.args) and spelled:  # `out=` fixes the dtype: no edit
            unsafe = qn.isdisjoint(EXACT_FACTORIES) or any(method_name(s) in _RANDOM_FILLS for s in steps)
            made = _add_kwarg(factory, keyword, value)
            if cast is not None:  # the casts, fills and views stay, on the tensor made where it goes
                made = cast.deep_replace(factory, made)
            fix = self.make_fix(unsafe=unsafe).replace(node, made)
        what = "casts" if keyword == "dtype" else "moves"
        message = self.MESSAGE.format(found=self.spelling(node), what=what, kw=keyword)
        if keyword_arg(factory, "out") is not None:
            # `out=` gives the factory its dtype and device: `dtype=` beside it raises on a mismatch
            message = (f"`{self.spelling(node)}` creates the tensor, then {what} it: create it as needed with "
                       f"`{keyword}=` in place of `out=` instead of allocating twice")
        self.report(node, message, fix=fix)

    def _check_device_and_dtype(self, node: cst.Call, factory: cst.Call, qn, spelled: bool) -> None:
        """``torch.hann_window(n).to(dtype=x.dtype, device=x.device)`` (or ``.to(device, dtype)``): a move to a
        certain device that also casts.  The fix makes the tensor on the device and keeps the cast there."""
        if len(node.args) != 2 or any(a.star for a in node.args) or self._sets_default_device():
            return
        by_key = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        positional = [a.value for a in node.args if a.keyword is None]
        device = by_key.get("device", positional[0] if positional else None)
        dtype = by_key.get("dtype", positional[1] if len(positional) > 1 else
                           positional[0] if positional and "device" in by_key else None)
        if device is None or dtype is None or set(by_key) - {"device", "dtype"}:
            return
        probe = node.with_changes(args=[cst.Arg(device)])
        moved = self._target(probe)
        if moved is None or moved[0] != "device" or keyword_arg(factory, "generator") is not None:
            return
        fix = None
        if keyword_arg(factory, "device") is None and keyword_arg(factory, "out") is None and spelled \
                and not any(a.star for a in factory.args):
            made = _add_kwarg(factory, "device", device)
            cast = cst.Call(func=cst.Attribute(value=made, attr=cst.Name("to")), args=[
                cst.Arg(dtype, keyword=cst.Name("dtype"),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
            fix = self.make_fix(unsafe=qn.isdisjoint(EXACT_FACTORIES)).replace(node, cast)
        self.report(node, self.MESSAGE.format(found=self.spelling(node), what="moves", kw="device"), fix=fix)

    def _check_legacy(self, node: cst.Call, dtype: str) -> None:
        """``torch.FloatTensor(n, d).uniform_(-1, 1).to(device)``: a tensor of a size allocated in host
        memory, then copied to the device.  No fix (the constructor's arguments are not checked to be
        sizes only)."""
        moved = self._target(node)
        if moved is None or moved[0] != "device" or self._sets_default_device():
            return
        self.report(node, f"`{self.spelling(node)}` allocates the tensor in host memory, then moves it: allocate "
                          f"it on the device (`torch.empty(size, dtype={dtype}, device=...)`)")

    def _plain_variable(self, call: cst.Call) -> bool:
        """``Variable(t)`` of a tensor built in place (one argument, no ``requires_grad=``): since torch 0.4 the
        tensor itself, so a move after it moves the factory's tensor."""
        return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star \
            and isinstance(call.args[0].value, cst.Call) \
            and bool(self.ctx.names.qualified_names_at(call.func) & _VARIABLE)

    def _is_cast(self, call: cst.Call) -> bool:
        """``x.float()``, ``x.long()``, ``x.to(torch.float16)``, ``x.to(dtype=...)``, ``x.to(y.dtype)``: a change of
        dtype only."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value in CASTS:
            return not call.args
        if func.attr.value != "to" or len(call.args) != 1 or call.args[0].star:
            return False
        a = call.args[0]
        return a.keyword is not None and a.keyword.value == "dtype" or a.keyword is None and self._holds_dtype(a.value)

    def _holds_dtype(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """``torch.float16``, another tensor's ``x.dtype``, or a name only ever given one of those
        (``dtype = anchors.dtype``)."""
        if self.ctx.names.matches(expr, DTYPES) or isinstance(expr, cst.Attribute) and expr.attr.value == "dtype":
            return True
        if isinstance(expr, cst.Name) and depth < 3 and not self.ctx.names.is_param_at(expr):
            values = built_values(self.ctx, expr)
            return bool(values) and all(self._holds_dtype(v, depth + 1) for v in values)
        return False

    def _certain_cast(self, factory: frozenset, call: cst.Call, dtype: cst.BaseExpression) -> bool:
        """A cast allocates a second tensor for sure only after a size-only factory and to another dtype
        than the one it produces (``dtype=`` given to it, else the default float32, unless the file
        changes the default). Casts after ``torch.tensor`` depend on the data's dtype, and
        ``arange(..., dtype=torch.int64).float()`` / ``linspace(...).long()`` are deliberate: the values
        are computed exactly in one dtype, then converted."""
        if factory.isdisjoint(SIZE_FACTORIES):
            return False
        given = keyword_arg(call, "dtype")
        if given is not None:
            produced = self._dtype(given.value)
            return produced is not None and produced != self._dtype(dtype)
        target = self._dtype(dtype)
        if target in FLOATING and self._sets_default(DEFAULT_DTYPE_SETTERS):
            return False  # the default, which the file changes, may be that dtype
        return target != "torch.float32"

    def _dtype(self, expr: cst.BaseExpression) -> Optional[str]:
        """The canonical name of the torch dtype ``expr`` names (None: not a known dtype); ``expr`` is a
        node of the file or the dtype a cast method stands for (``torch.int64`` for ``.long()``)."""
        for q in self.ctx.names.qualified_names_at(expr) & DTYPES:
            return SAME_DTYPE.get(q, q)
        code = self.ctx.code(expr).strip()
        return SAME_DTYPE.get(code, code) if code in CASTS.values() else None

    def _sets_default_device(self) -> bool:
        """Whether the file may change the device factories allocate on: ``torch.set_default_device``, or
        ``torch.set_default_tensor_type`` of a CUDA type or of a type not spelled out."""
        if "set_default" not in self.ctx.source:
            return False  # every spelling of the setters, aliased or not, holds the words
        if self._default_device is None:
            self._default_device = self._finds_default_device()
        return self._default_device

    def _finds_default_device(self) -> bool:
        for c in self.ctx.calls_in(self.ctx.module):
            names = self.ctx.names.qualified_names(c.func)
            if names & {"torch.set_default_device"}:
                return True
            if names & {"torch.set_default_tensor_type"}:
                given = c.args[0].value if c.args else None
                if given is None or "cuda" in self.ctx.code(given) or not isinstance(
                        given, (cst.SimpleString, cst.Attribute, cst.Name)):
                    return True
        return False

    def _sets_default(self, setters: frozenset) -> bool:
        """Whether the file calls one of ``setters`` (the default dtype or device of factories changes)."""
        if "set_default" not in self.ctx.source:
            return False
        found = self._defaults.get(setters)
        if found is None:
            found = self._defaults[setters] = any(
                self.ctx.names.qualified_names(c.func) & setters for c in self.ctx.calls_in(self.ctx.module))
        return found

    def _target(self, node: cst.Call) -> Optional[tuple]:
        """("device" | "dtype", value expression) when the move's target is certain."""
        name = node.func.attr.value  # type: ignore[attr-defined]
        if name == "cuda" and not node.args:
            return "device", cst.SimpleString('"cuda"')
        if name in CASTS and not node.args:
            return "dtype", self.ctx.parse_expression(CASTS[name])
        if name != "to" or len(node.args) != 1:
            return None
        a = node.args[0]
        if a.keyword is not None and a.keyword.value in ("device", "dtype"):
            return a.keyword.value, a.value
        if a.keyword is None and not a.star:
            v = a.value
            if isinstance(v, cst.SimpleString) and isinstance(v.evaluated_value, str):
                text = v.evaluated_value
                if text in ("cuda", "mps") or text.startswith("cuda:"):
                    return "device", v  # not "cpu": a factory allocates there, and `.to("cpu")` returns it as is
            if self.ctx.names.matches(v, DTYPES):
                return "dtype", v
            if isinstance(v, cst.Attribute) and v.attr.value == "device":
                return "device", v  # `.to(x.device)`: the device another tensor (or module) is on
            if isinstance(v, (cst.Name, cst.Attribute, cst.Call)) and self._device_kind(v, 0) == "accelerator":
                return "device", v  # `dev = torch.device("cuda" if ... else "cpu")`, then `.to(dev)`
        return None

    def _device_kind(self, expr: cst.BaseExpression, depth: int) -> Optional[str]:
        """"accelerator" when ``expr`` holds a device that may be a GPU's (``torch.device("cuda")``, a
        name given ``"cuda" if ... else "cpu"``), "cpu" when only ever the CPU, None when it may hold
        something else (a tensor, a dtype) or is not known."""
        if depth > 6:
            return None
        if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
            text = expr.evaluated_value
            if text == "cpu":
                return "cpu"
            return "accelerator" if text in ("cuda", "mps") or text.startswith("cuda:") else None
        if isinstance(expr, cst.IfExp):
            kinds = {self._device_kind(expr.body, depth + 1), self._device_kind(expr.orelse, depth + 1)}
            return None if None in kinds else ("accelerator" if "accelerator" in kinds else "cpu")
        if isinstance(expr, cst.Call) and self.ctx.names.matches(expr.func, _DEVICE):
            first = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
            return self._device_kind(first, depth + 1) if first is not None else None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
            return "accelerator"  # `device = xyz.device`, `next(self.parameters()).device`: where data or a model is
        if isinstance(expr, cst.Call) and not expr.args:
            found = called_function(self.ctx, expr)  # `self._device()`: a method returning a device
            cls = self.ctx.enclosing(expr, cst.ClassDef)
            if found is None and isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, cst.Name) \
                    and expr.func.value.value == "self" and isinstance(cls, cst.ClassDef):
                found = find_method(self.ctx, cls, expr.func.attr.value)  # inherited from a project base class
            if found is None:
                return None
            returns = function_returns(found[1])
            kinds = {None if r.value is None else self._device_kind(r.value, depth + 1) if found[0] is self.ctx
                     else "accelerator" if isinstance(r.value, cst.Attribute) and r.value.attr.value == "device"
                     else None for r in returns}  # (of a base class in another file: `return x.device` only)
            if not returns or None in kinds:
                return None
            return "accelerator" if "accelerator" in kinds else "cpu"
        if isinstance(expr, cst.Name) and self.ctx.names.is_param_at(expr):
            given = callers_arguments(self.ctx, expr)  # `def to_onehot(labels, n, device)`: what its calls pass
            kinds = {self._device_kind(a, depth + 1) if c is self.ctx or isinstance(a, cst.SimpleString)
                     or isinstance(a, cst.Attribute) and a.attr.value == "device" else None
                     for c, a in given}  # (in another file: a literal or another value's `.device` only)
            if not given or None in kinds:
                return None
            return "accelerator" if "accelerator" in kinds else "cpu"
        if isinstance(expr, (cst.Name, cst.Attribute)):
            values = built_values(self.ctx, expr)
            kinds = {self._device_kind(v, depth + 1) for v in values}
            if not values or None in kinds:
                return None
            return "accelerator" if "accelerator" in kinds else "cpu"
        return None


#: in-place fills that keep the tensor where it is (random ones draw other numbers on another device)
_RANDOM_FILLS = frozenset({"normal_", "uniform_", "random_", "bernoulli_", "exponential_", "geometric_",
                           "cauchy_", "log_normal_"})
_FILLS = _RANDOM_FILLS | frozenset({"fill_", "zero_"})


def _sized(call: cst.Call) -> bool:
    """A legacy constructor given a size, not data: ``size=``, one integer literal, or two or more
    positional integers or names (data is one sequence)."""
    if keyword_arg(call, "size") is not None:
        return True
    given = [a.value for a in call.args if a.keyword is None and not a.star]
    if len(given) == 1 and isinstance(given[0], cst.Integer):
        return True  # `torch.LongTensor(10000)`: a number of elements (data would be a sequence)
    return len(given) >= 2 and all(isinstance(v, (cst.Integer, cst.Name, cst.Attribute, cst.Call)) for v in given)


#: methods that return a view of the tensor where it is (or a copy of it there: ``repeat``, ``contiguous``)
_VIEWS = frozenset({"unsqueeze", "squeeze", "view", "reshape", "flatten", "permute", "transpose", "t", "expand",
                    "expand_as", "repeat", "contiguous"})


def _fills(call: cst.Call) -> bool:
    """``t.normal_()``, ``t.fill_(0.5)``, ``t.zero_()``: an in-place fill of the tensor just made."""
    return method_name(call) in _FILLS


#: the deprecated wrapper of a tensor (``torch.autograd.Variable``)
_VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
#: ``torch.device(...)``: a device object
_DEVICE = frozenset({"torch.device"})


def _add_kwarg(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    new = cst.Arg(
        value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if args:
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new = new.with_changes(comma=last.comma)
    return call.with_changes(args=args + [new])
