from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import arg, keyword_arg
from torchlint.analysis.definitions import position
from torchlint.families.shapes.shapes import (
    TENSOR_ANNOTATIONS,
    TENSOR_INPUT_FUNCS,
    TENSOR_ONLY_ATTRIBUTES,
    TENSOR_ONLY_METHODS,
    number_annotation,
)
from torchlint.analysis.walk import iter_nodes
from torchlint.rule import Fix, Invalid, LintRule, Valid

# functions that build a new tensor and accept `device=`
#: constructors that make a tensor of the data they are given
_WRAPPERS = frozenset({"torch.tensor", "torch.as_tensor"})
CREATORS = frozenset(
    "torch." + n
    for n in (
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
        "logspace", "eye", "tensor", "as_tensor", "zeros_like", "ones_like", "empty_like", "full_like",
        "rand_like", "randn_like", "tril_indices", "triu_indices",
    )
)


#: methods that give the same elements in another shape, on the tensor's device
#: asks whether a CUDA device is there
_CUDA_AVAILABLE = frozenset({"torch.cuda.is_available"})
SHAPE_ONLY_METHODS = frozenset({"expand", "expand_as", "view", "view_as", "reshape", "reshape_as"})


def _reshaped(value: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor ``value`` reshapes: ``t`` for ``t.expand_as(x).view(-1)``, else ``value`` itself."""
    while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
           and value.func.attr.value in SHAPE_ONLY_METHODS):
        value = value.func.value
    return value


def _viewed(value: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor ``value`` is a view or reshaping of: ``t`` for ``t[:3].unsqueeze(0).expand(n, -1, -1)``."""
    while True:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in SHAPE_ONLY_METHODS | _VIEW_METHODS:
            value = value.func.value
        elif isinstance(value, cst.Subscript):
            value = value.value
        else:
            return value


#: methods that return a view of their tensor (besides :data:`SHAPE_ONLY_METHODS`)
_VIEW_METHODS = frozenset({"unsqueeze", "squeeze", "t", "transpose", "permute", "contiguous", "narrow"})


def _cuda_literal(node: Optional[cst.BaseExpression]) -> bool:
    """``"cuda"``, ``"cuda:0"``, ``torch.device("cuda")``."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return isinstance(text, str) and (text == "cuda" or text.startswith("cuda:"))
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "device":
        first = arg(node, 0, "type")
        return first is not None and len(node.args) == 1 and _cuda_literal(first.value)
    return False


class HardCodedCudaDevice(LintRule):
    """
    ## What it does
    Finds tensors created inside a function that receives tensors and put on a hard-coded CUDA device:
    `torch.arange(n).cuda()`, `torch.zeros(n, device="cuda")`, `torch.ones(n).to("cuda:0")`, or
    `mask = torch.ones(n)` followed by `mask = mask.cuda()`, also when the tensor is only reshaped in
    between (`alpha = torch.rand(n, 1)`, `alpha = alpha.expand_as(x)`, `alpha = alpha.cuda()`: `expand`,
    `expand_as`, `view`, `view_as`, `reshape`, `reshape_as` keep the tensor where it was created), or a
    view of such a tensor moved at the end of a chain (`grid[:3].unsqueeze(0).expand(n, -1, -1).cuda()`).

    ## Why is this bad?
    The function then only works when its inputs are on the default GPU: on a CPU-only machine it
    fails, and with inputs on `cuda:1` it mixes devices. Effective PyTorch's vectorized
    `batch_gather_vec` has exactly this flaw — `torch.arange(shape[0]).cuda() * shape[1]`
    ("5. 采用 TorchScript 优化运行时间", Effective PyTorch) — and the cookbook's own helpers create new
    tensors where the data lives, with `.to(labels.device)` and `torch.device('cuda' if
    torch.cuda.is_available() else 'cpu')` (the cookbook's 2024 revision). A tensor built inside
    a function belongs on the device of the tensors it will be combined with.

    Not reported: code under a CUDA check (`if torch.cuda.is_available():`, `if x.is_cuda:`, `if use_gpu:`
    with `use_gpu = torch.cuda.is_available()`),
    functions named for CUDA or GPU, functions without tensor parameters (scripts, tests; a parameter
    annotated `int` or `float`, or only given to a factory as a size or as data, `torch.randn(n, d)`, is no
    tensor), `.cuda(device)` with a device the caller passes (not a literal index), and `.cuda()` on the
    inputs themselves, also when they are made a tensor again first (`torch.tensor(x).cuda()` with `x` a
    parameter, or what the function converted it to: `x = x.cpu().numpy()`).

    ## Example
    ```python
    def batch_gather_vec(tensor, indices):
        shape = list(tensor.shape)
        flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
        offset = torch.reshape(torch.arange(shape[0]).cuda() * shape[1],
                               [shape[0]] + [1] * (len(indices.shape) - 1))
        return flat_first[indices + offset]
    ```

    ## Use instead
    ```python
    def batch_gather_vec(tensor, indices):
        shape = list(tensor.shape)
        flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
        offset = torch.reshape(torch.arange(shape[0], device=tensor.device) * shape[1],
                               [shape[0]] + [1] * (len(indices.shape) - 1))
        return flat_first[indices + offset]
    ```

    ## Fix safety
    The fix creates the tensor on the device of a tensor parameter (the first one whose `.device` the
    function reads, else the first one used as a tensor; not one the function makes a NumPy array of, whose
    `.device` is no GPU's): `.cuda()` / `.to("cuda")` on a constructor
    becomes `device=x.device` in the constructor, `device="cuda"` becomes `device=x.device`, and
    `t.cuda()` on a variable becomes `t.to(x.device)`. The fix is unsafe: when the inputs are on the CPU
    and the function was meant to move its result to the GPU, the tensor now stays on the CPU.

    ## Options
    None.

    ## References
    - [torch.Tensor.device](https://pytorch.org/docs/stable/generated/torch.Tensor.device.html)
    - [Tensor creation with `device=`](https://pytorch.org/docs/stable/tensor_attributes.html#torch-device)
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL304"
    NAME = "hard-coded-cuda-device"
    MESSAGE = (
        "Tensor created inside a function that receives tensors is put on a hard-coded CUDA device; "
        "create it on the input's device"
    )
    FIX_TITLE = "Create the tensor on the input's device (`device=x.device`)"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("cuda",)

    VALID = [
        # the input, converted to an array and back: the function moves what it was given
        """
import numpy as np
import torch


def jitter(x, scale=0.05):
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    x = x + scale * np.random.randn(*x.shape)
    return torch.tensor(x, dtype=torch.float32).cuda()
""",
        # the input itself reshaped, then moved: nothing is created here
        Valid(
            """
import torch

def flatten_rows(x):
    flat = x.view(x.size(0), -1)
    flat = flat.cuda()
    return flat
"""
        ),
        Valid(
            """
import torch

def blend(real, fake, weights):
    alpha = weights.expand_as(real)
    alpha = alpha.cuda()
    return alpha * real.float() + (1 - alpha) * fake
"""
        ),
        Valid(
            """
import torch

def batch_gather(tensor, indices):
    rows = torch.arange(tensor.size(0), device=tensor.device)
    rows = rows.view(-1, *([1] * (indices.dim() - 1)))
    return tensor[rows, indices]
"""
        ),
        Valid(
            """
import torch

def test_add():
    a = torch.ones(3, device="cuda")
    assert (a + a).sum().item() == 6
"""
        ),
        Valid(
            """
import torch

def forward(self, x):
    x = x.cuda()
    return self.net(x)
"""
        ),
        Valid(
            """
import torch

def make_mask(x: torch.Tensor):
    mask = torch.ones(x.size(0))
    if torch.cuda.is_available():
        mask = mask.cuda()
    return mask
"""
        ),
        Valid(
            """
import torch

def to_gpu(x: torch.Tensor):
    offsets = torch.arange(x.size(0)).cuda()
    return x.cuda() + offsets
"""
        ),
        Valid(
            """
import torch

def from_numpy_batch(arr, labels):
    n = arr.shape[0]
    return torch.zeros(n, device="cuda")
"""
        ),
        Valid(
            """
import torch

device = torch.device("cuda")
table = torch.zeros(10, device=device)

def lookup(x):
    return table[x]
"""
        ),
        # no tensor received: sizes given to a factory, numbers annotated as such; a device the caller names
        Valid(
            """
import torch

class Sampler:
    def sample(self, num_samples: int, current_device: int):
        z = torch.randn(num_samples, self.latent_dim)
        z = z.cuda(current_device)
        return self.decode(z)

def noise(n, width):
    return torch.rand(n, width).cuda()

def grid(steps: int, x: float):
    return torch.linspace(0, x, steps).cuda()

def picked(x, device_id):
    z = torch.randn(x.size(0), 4)
    return z.cuda(device_id) + torch.ones(x.size(0)).cuda(device=device_id)
"""
        ),
        # the CUDA check kept in a flag at the top of the notebook
        Valid(
            """
import torch
import torch.nn as nn

train_on_gpu = torch.cuda.is_available()


def real_loss(d_out):
    labels = torch.ones(d_out.size(0))
    if train_on_gpu:
        labels = labels.cuda()
    return nn.BCEWithLogitsLoss()(d_out.squeeze(1), labels)
"""
        ),
        Valid(
            """
import numpy as np
import torch


def jitter(points, scale=0.01):
    if isinstance(points, torch.Tensor):
        points = points.detach().cpu().numpy()
    noise = np.random.normal(0.0, scale, size=points.shape)
    return torch.tensor(points + noise, dtype=torch.float32).cuda()
"""
        ),
    ]

    INVALID = [
        # a tensor made from the input's shape is a new tensor, put on a hard-coded device
        Invalid(
            """
import torch


def area(boxes: torch.Tensor):
    sizes = torch.tensor(boxes.shape).cuda()
    return boxes.sum() / sizes.prod()
""",
            fixed="""
import torch


def area(boxes: torch.Tensor):
    sizes = torch.tensor(boxes.shape, device=boxes.device)
    return boxes.sum() / sizes.prod()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def batch_gather_vec(tensor, indices):
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(torch.arange(shape[0]).cuda() * shape[1], [shape[0]] + [1] * (len(indices.shape) - 1))
    return flat_first[indices + offset]
""",
            fixed="""
import torch

def batch_gather_vec(tensor, indices):
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(torch.arange(shape[0], device=tensor.device) * shape[1], [shape[0]] + [1] * (len(indices.shape) - 1))
    return flat_first[indices + offset]
""",
            unsafe=True,
            line=7,
            col=28,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Smoother(nn.Module):
    def forward(self, logits: torch.Tensor, labels):
        n, c = logits.shape
        target = torch.full((n, c), 0.1 / (c - 1), device="cuda")
        return target
""",
            fixed="""
import torch
import torch.nn as nn

class Smoother(nn.Module):
    def forward(self, logits: torch.Tensor, labels):
        n, c = logits.shape
        target = torch.full((n, c), 0.1 / (c - 1), device=logits.device)
        return target
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def mixup(images, labels, lam):
    index = torch.randperm(images.size(0))
    index = index.cuda()
    return lam * images + (1 - lam) * images[index, :]
""",
            fixed="""
import torch

def mixup(images, labels, lam):
    index = torch.randperm(images.size(0))
    index = index.to(images.device)
    return lam * images + (1 - lam) * images[index, :]
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def ones_like_rows(x):
    return torch.ones(x.size(0), device="cuda").cuda()
""",
            fixed="""
import torch

def ones_like_rows(x):
    return torch.ones(x.size(0), device=x.device)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def pad_mask(x, length):
    mask = torch.zeros(x.size(0), length,).to("cuda:0")
    return mask
""",
            fixed="""
import torch

def pad_mask(x, length):
    mask = torch.zeros(x.size(0), length, device=x.device)
    return mask
""",
            unsafe=True,
        ),
        # a literal device index or only a copy flag is still hard-coded; an int-annotated size beside a tensor
        Invalid(
            """
import torch

def rows(x, n: int):
    z = torch.randn(n, 4)
    z = z.cuda(0)
    return x.float() * z + torch.ones(n, 4).cuda(non_blocking=True)
""",
            fixed="""
import torch

def rows(x, n: int):
    z = torch.randn(n, 4)
    z = z.to(x.device)
    return x.float() * z + torch.ones(n, 4, device=x.device)
""",
            count=2,
            unsafe=True,
        ),
        # created on the CPU, only reshaped, then moved: still a tensor built here on a hard-coded device
        Invalid(
            """
import torch

def interpolate(critic, real, fake):
    n = real.size(0)
    alpha = torch.rand(n, 1)
    alpha = alpha.expand_as(real)
    alpha = alpha.cuda()
    return critic(alpha * real + (1 - alpha) * fake)
""",
            fixed="""
import torch

def interpolate(critic, real, fake):
    n = real.size(0)
    alpha = torch.rand(n, 1)
    alpha = alpha.expand_as(real)
    alpha = alpha.to(real.device)
    return critic(alpha * real + (1 - alpha) * fake)
""",
            message="`alpha.cuda()`: Tensor created (`torch.rand(n, 1)`) inside a function",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def add_bias(x: torch.Tensor, width: int):
    base = torch.linspace(0, 1, width)
    grid = base.view(1, -1).expand(x.shape[0], width)
    return x + grid.to("cuda")
""",
            fixed="""
import torch

def add_bias(x: torch.Tensor, width: int):
    base = torch.linspace(0, 1, width)
    grid = base.view(1, -1).expand(x.shape[0], width)
    return x + grid.to(x.device)
""",
            message="(`torch.linspace(0, 1, width)`)",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def offsets(index):
    steps = torch.arange(index.size(0)).reshape(-1, 1)
    steps = steps.cuda(0)
    return index + steps
""",
            fixed="""
import torch

def offsets(index):
    steps = torch.arange(index.size(0)).reshape(-1, 1)
    steps = steps.to(index.device)
    return index + steps
""",
            unsafe=True,
        ),
        # a view of a tensor made here, moved at the end of the chain
        Invalid(
            """
import torch


def augment(inp):
    grid = torch.eye(4)
    theta = grid[:3].unsqueeze(0).expand(inp.size(0), -1, -1).cuda()
    return torch.nn.functional.affine_grid(theta, inp.shape, align_corners=False)
""",
            fixed="""
import torch


def augment(inp):
    grid = torch.eye(4)
    theta = grid[:3].unsqueeze(0).expand(inp.size(0), -1, -1).to(inp.device)
    return torch.nn.functional.affine_grid(theta, inp.shape, align_corners=False)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch


def scaled_error(pred, target, keep=None):
    scale = torch.linspace(1.0, 2.0, pred.size(1)).cuda()
    err = ((pred - target).abs() * scale).sum(dim=1)
    if keep is not None:
        pred = pred.detach().cpu().numpy()
        keep.append(pred)
    return err
""",
            fixed="""
import torch


def scaled_error(pred, target, keep=None):
    scale = torch.linspace(1.0, 2.0, pred.size(1), device=pred.device)
    err = ((pred - target).abs() * scale).sum(dim=1)
    if keep is not None:
        pred = pred.detach().cpu().numpy()
        keep.append(pred)
    return err
""",
            unsafe=True,
            line=6,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._pending: Dict[cst.CSTNode, List[Tuple[cst.Call, str]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        kind = self._kind(node)
        if kind is None:
            return
        fn = self.ctx.names.function_scope_node()
        if not isinstance(fn, cst.FunctionDef):
            return
        name = fn.name.value.lower()
        if "cuda" in name or "gpu" in name:
            return
        if self._under_cuda_check(node, fn):
            return
        self._pending.setdefault(fn, []).append((node, kind))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        found = self._pending.pop(node, None)
        if not found:
            return
        param = self._tensor_param(node, min((c for c, _k in found), key=lambda c: position(self.ctx, c)))
        if param is None:
            return
        # `torch.zeros(3, device="cuda").cuda()`: one report, on the move, whose fix covers both
        moved = {id(c.func.value) for c, kind in found if kind == "method" and isinstance(c.func, cst.Attribute)}
        for call, kind in found:
            if kind == "keyword" and id(call) in moved:
                continue
            message = self.MESSAGE
            if kind == "variable":
                created = self._created_here(call.func.value, node)  # type: ignore[attr-defined]
                if created is not None:
                    message = message.replace("Tensor created inside", f"Tensor created (`{self.spelling(created)}`) inside")
            self.report(call, self.quoting(call, message), fix=self._fix(call, kind, param))

    # -- detection ------------------------------------------------------------------------------
    def _creator(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.ctx.names.matches(node.func, CREATORS) \
            and not self._wraps_input(node)

    def _wraps_input(self, call: cst.Call) -> bool:
        """``torch.tensor(x)`` / ``torch.as_tensor(x)`` of a parameter ``x`` of the function (which it may have
        converted and bound again: ``x = x.cpu().numpy()``): the input itself, made a tensor again, not a tensor
        the function creates; moving it is moving the input.  Not a part of it (``x.shape``) nor ``self``'s."""
        ctx = self.ctx
        if not ctx.names.matches(call.func, _WRAPPERS) or not call.args or call.args[0].keyword is not None:
            return False
        fn = ctx.names.function_scope_node()
        if not isinstance(fn, cst.FunctionDef):
            return False
        params = {p.name.value for p in [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]}
        data = call.args[0].value
        return isinstance(data, cst.Name) and data.value in params - {"self", "cls"}

    def _kind(self, call: cst.Call) -> Optional[str]:
        """"keyword" (device="cuda" on a constructor), "method" (constructor.cuda() / .to("cuda")),
        "variable" (t.cuda() where t was built by a constructor in this function), "chain" (a view of such a
        tensor moved: `t[:3].unsqueeze(0).cuda()`), or None."""
        ctx = self.ctx
        if self._creator(call):
            device = keyword_arg(call, "device")
            if device is not None and _cuda_literal(device.value):
                return "keyword"
            return None
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        if func.attr.value == "cuda":
            device = arg(call, 0, "device")
            if device is not None and not isinstance(device.value, cst.Integer) and not _cuda_literal(device.value):
                return None  # `.cuda(device_id)`: the device the caller chose, not a hard-coded one
        elif func.attr.value == "to":
            target = arg(call, 0, "device")
            if target is None or not _cuda_literal(target.value):
                return None
        else:
            return None
        recv = func.value
        if self._creator(recv):
            return "method"
        if isinstance(recv, cst.Name):
            fn = ctx.names.function_scope_node()
            if fn is not None and self._created_here(recv, fn) is not None:
                return "variable"
        root = _viewed(recv)
        if root is not recv:  # `mask[:3].unsqueeze(0).expand(n, -1, -1).cuda()`: a view of a tensor made here
            fn = ctx.names.function_scope_node()
            if self._creator(root) or isinstance(root, cst.Name) and fn is not None and \
                    self._created_here(root, fn) is not None:
                return "chain"
        return None

    def _created_here(self, name: cst.Name, fn: cst.CSTNode, depth: int = 0) -> Optional[cst.Call]:
        """When every value ``name`` holds here is a tensor a constructor built in ``fn``, moved
        (``t = t.cuda()``) or only reshaped since (``t = t.expand_as(x)``, ``u = t.view(-1)``): the same
        tensor, still where it was created; the constructor call in ``fn``, else None."""
        ctx = self.ctx
        values = ctx.names.values_before(name)
        if not values or depth > 4:
            return None
        created: Optional[cst.Call] = None
        for v in values:
            if isinstance(v, cst.Call) and self._moves(v, name.value):
                continue
            root = _reshaped(v)
            if root is not v and isinstance(root, cst.Name) and root.value == name.value:
                continue  # `t = t.expand_as(x)`: the values `t` held before are judged with the others
            if self._creator(root):
                if created is None and ctx.is_inside(root, fn):
                    created = root  # type: ignore[assignment]
                continue
            inner = self._created_here(root, fn, depth + 1) if root is not v and isinstance(root, cst.Name) else None
            if inner is None:
                return None
            created = created or inner
        return created

    def _moves(self, call: cst.Call, name: str) -> bool:
        """``t.cuda()`` / ``t.to(...)``: a value of ``t`` that only moves it."""
        func = call.func
        return (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("cuda", "to")
            and isinstance(func.value, cst.Name)
            and func.value.value == name
        )

    def _under_cuda_check(self, node: cst.CSTNode, fn: cst.CSTNode) -> bool:
        for a in self.ctx.ancestors(node):
            if a is fn:
                return False
            test = getattr(a, "test", None)
            if isinstance(a, (cst.If, cst.While, cst.IfExp)) and test is not None and (
                    "cuda" in self.ctx.code(test) or self._cuda_flag(test)):
                return True
        return False

    def _cuda_flag(self, test: cst.BaseExpression) -> bool:
        """``if train_on_gpu:`` with ``train_on_gpu = torch.cuda.is_available()``: a name every value of which
        asks whether CUDA is there."""
        ctx = self.ctx
        if isinstance(test, cst.UnaryOperation):
            test = test.expression
        if not isinstance(test, (cst.Name, cst.Attribute)):
            return False
        values = ctx.names.values_at(test)
        return bool(values) and all(
            any(isinstance(n, cst.Call) and ctx.names.matches(n.func, _CUDA_AVAILABLE) for n in iter_nodes(v))
            for v in values)

    def _tensor_param(self, fn: cst.FunctionDef, at: Optional[cst.CSTNode] = None) -> Optional[str]:
        ctx = self.ctx
        params = list(fn.params.posonly_params) + list(fn.params.params) + list(fn.params.kwonly_params)
        best: Optional[str] = None
        for i, p in enumerate(params):
            name = p.name.value
            if i == 0 and name in ("self", "cls"):
                continue
            if p.annotation is not None and number_annotation(p.annotation.annotation):
                continue  # `current_device: int`: a number, whatever the function does with it
            if at is not None and self._made_an_array(fn, name, at):
                continue  # `x0 = x0.cpu().numpy()`: no device left to follow (an array's `.device` is the CPU)
            evidence = False
            if p.annotation is not None and ctx.names.matches(p.annotation.annotation, TENSOR_ANNOTATIONS):
                evidence = True
            for use in ctx.names_in(fn.body, name):
                parent = ctx.parent(use)
                if isinstance(parent, cst.Attribute) and parent.value is use:
                    attr = parent.attr.value
                    if attr == "device":
                        return name
                    call = ctx.parent(parent)
                    called = isinstance(call, cst.Call) and call.func is parent
                    if attr in TENSOR_ONLY_ATTRIBUTES or (attr in TENSOR_ONLY_METHODS and called):
                        evidence = True
                elif isinstance(parent, cst.Arg) and parent.value is use:
                    call = ctx.parent(parent)
                    if isinstance(call, cst.Call) and call.args and call.args[0] is parent and ctx.names.matches(
                        call.func, TENSOR_INPUT_FUNCS
                    ):
                        evidence = True
            if evidence and best is None:
                best = name
        return best

    def _made_an_array(self, fn: cst.FunctionDef, name: str, at: cst.CSTNode) -> bool:
        """The function binds the parameter ``name`` again to a NumPy array (``x = x.cpu().numpy()``,
        ``x = np.asarray(x)``) before ``at``, the first tensor it creates on the hard-coded device."""
        ctx = self.ctx
        for use in ctx.names_in(fn.body, name):
            target = ctx.parent(use)
            assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
            if not isinstance(assign, cst.Assign) or position(ctx, assign) >= position(ctx, at):
                continue
            value = assign.value
            if isinstance(value, cst.Call) and (
                    isinstance(value.func, cst.Attribute) and value.func.attr.value == "numpy"
                    or any(q.startswith("numpy.") for q in ctx.names.qualified_names_at(value.func))):
                return True
        return False

    # -- fix ------------------------------------------------------------------------------------
    def _fix(self, call: cst.Call, kind: str, param: str) -> Optional[Fix]:
        ctx = self.ctx
        device = ctx.parse_expression(f"{param}.device")
        fix = self.make_fix(f"Create the tensor on `{param}.device`")
        if kind == "keyword":
            kw = keyword_arg(call, "device")
            assert kw is not None
            return fix.replace(kw.value, device)
        func = call.func
        assert isinstance(func, cst.Attribute)
        recv = func.value
        if kind in ("variable", "chain"):
            new = ctx.parse_expression(f"{ctx.code(recv)}.to({param}.device)")
            return fix.replace(call, new.with_changes(lpar=call.lpar, rpar=call.rpar))
        # constructor(...).cuda() -> constructor(..., device=x.device)
        assert isinstance(recv, cst.Call)
        if func.attr.value == "to" and len(call.args) > 1:
            return None  # .to("cuda", dtype): more than a device move, no fix
        # `.cuda(0)` / `.cuda(non_blocking=True)`: the index and the copy flag go with the move
        args = list(recv.args)
        existing = keyword_arg(recv, "device")
        if existing is not None:
            args = [a.with_changes(value=device) if a is existing else a for a in args]
        else:
            if args and isinstance(args[-1].comma, cst.Comma):
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(
                cst.Arg(
                    keyword=cst.Name("device"),
                    value=device,
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    ),
                )
            )
        new_call = recv.with_changes(args=args, lpar=call.lpar, rpar=call.rpar)
        return fix.replace(call, new_call)
