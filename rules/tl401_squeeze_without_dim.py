from __future__ import annotations

import re
from typing import List, Optional

import libcst as cst

from torchlint.analysis.shapes import Shape, shape_of
from torchlint.rule import Fix, Invalid, LintRule, Valid

SQUEEZE = frozenset({"torch.squeeze"})
# receivers that are NumPy arrays or Python values, not tensors
_NOT_TENSOR_METHODS = frozenset({"numpy", "tolist", "item", "values", "to_numpy"})


class SqueezeWithoutDim(LintRule):
    """
    ## What it does
    Finds `x.squeeze()` and `torch.squeeze(x)` called without a dimension on a tensor that has more
    than one dimension.

    ## Why is this bad?
    `squeeze()` removes *every* dimension of size 1. The author usually means one of them — the
    feature dimension of a `[B, 1]` regression output, the channel of a `[B, 1, H, W]` mask — but when
    the batch happens to hold one sample (the last batch of an epoch, inference on one image) the
    batch dimension is dropped too, and the code that follows broadcasts or indexes the wrong axis
    without an error. Effective PyTorch's advice is to always name the dimension when squeezing or
    reducing ("在做累加( reduction )操作或者使用 torch.squeeze 的时候总是指定好维度",
    "3. 广播机制的优缺点", Effective PyTorch; its own model code writes `.squeeze(1)`).

    Not reported: tensors known to have at most one dimension or no dimension of size 1, squeezes the
    code guarded with a size check (`x.squeeze() if x.numel() == 1 else x`, `if x.shape[0] == 1:`),
    `.squeeze().item()`, and NumPy or pandas values.

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
    When the shape is known — the output of `nn.Linear(..., 1)`, `unsqueeze(k)`, a reduction with
    `keepdim=True`, a literal constructor such as `torch.zeros(n, 1)` — the fix squeezes exactly the
    dimensions known to be 1 (`squeeze(-1)`, or a chain such as `squeeze(3).squeeze(1)`); it is safe:
    it only stops other dimensions from being dropped when they happen to be 1, which is the bug.
    When the shape is unknown the fix assumes the trailing dimension (`squeeze(-1)`), says so in the
    message, and is unsafe: check that the dimension is right.

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
        Valid(
            """
import torch

def finish(tau):
    if tau.shape[0] == 1:
        tau = tau.squeeze()
    return tau
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch


def decode(codec, ids):
    audio = (
        codec.decode(ids)
        .audio_values.cpu()
        .squeeze()
    )
    return audio
""",
            fixed="""
import torch


def decode(codec, ids):
    audio = (
        codec.decode(ids)
        .audio_values.cpu()
        .squeeze(-1)
    )
    return audio
""",
            unsafe=True,
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
    return t.squeeze(3).squeeze(1)
""",
        ),
        Invalid(
            """
import torch

def predict(model, x):
    scores = model(x)
    return scores.squeeze()
""",
            fixed="""
import torch

def predict(model, x):
    scores = model(x)
    return scores.squeeze(-1)
""",
            unsafe=True,
            message="shape unknown",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        if ctx.names.matches(func, SQUEEZE):
            only = node.args[0] if len(node.args) == 1 else None
            if only is None or only.star or (only.keyword is not None and only.keyword.value != "input"):
                return
            x = node.args[0].value
            form = "function"
        elif isinstance(func, cst.Attribute) and func.attr.value == "squeeze" and not node.args:
            x = func.value
            if ctx.names.qualified_names(x):  # np.squeeze, a module attribute
                return
            if not ctx.names.imports_torch:
                return
            form = "method"
        else:
            return
        if _numpy_like(ctx, x) or self._single_element_guard(x):
            return
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr.value == "item":
            return  # `.squeeze().item()`: a single value either way
        shape = shape_of(ctx, x)
        dims: List[int] = []
        guessed = False
        if shape is not None:
            if shape.rank is not None and shape.rank <= 1:
                return  # nothing but a vector: no batch dimension to lose
            dims = shape.singleton_dims()
            if not dims:
                if shape.rank is not None and all(d is not None for d in shape.head):
                    return  # known shape without a size-1 dimension: squeeze() does nothing
        if not dims:
            if shape is not None and shape.rank is not None:
                self.report(node)  # known rank, but no dimension is known to be 1
                return
            dims, guessed = [-1], True
        self.report(node, self._message(shape, dims, guessed), fix=self._fix(node, form, x, dims, guessed))

    def _single_element_guard(self, x: cst.BaseExpression) -> bool:
        """``x.squeeze() if x.numel() == 1 else x``, ``if x.shape[0] == 1: x = x.squeeze()``: the code
        checked the size first, so the squeeze is deliberate."""
        code = self.ctx.code(x).strip()
        for a in reversed(self.ctx.stack):
            test = a.test if isinstance(a, (cst.If, cst.IfExp)) else None
            if test is not None:
                text = self.ctx.code(test)
                if code in text and (
                    f"{code}.numel()" in text or re.search(re.escape(code) + r"\.(shape\[|size\().*==\s*1\b", text)
                ):
                    return True
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                break
        return False

    def _message(self, shape: Optional[Shape], dims: List[int], guessed: bool) -> str:
        call = _chain(dims)
        if guessed:
            return (
                "`squeeze()` without a dim also drops the batch dimension when the batch has one sample; "
                f"shape unknown here, name the dim that is 1 (the fix assumes the last one: `{call}`)"
            )
        return (
            f"`squeeze()` without a dim on a tensor of shape {shape} also drops the batch dimension when the "
            f"batch has one sample; use `{call}`"
        )

    def _fix(self, node: cst.Call, form: str, x: cst.BaseExpression, dims: List[int], guessed: bool) -> Fix:
        ctx = self.ctx
        fix = self.make_fix(f"Use `{_chain(dims)}`", unsafe=guessed or None)
        order = _order(dims)
        if form == "method":
            # keep the receiver as written (line breaks in a method chain included): only the
            # call's arguments change, and further squeezes wrap it
            new = node.with_changes(args=[cst.Arg(ctx.parse_expression(str(order[0])))], lpar=[], rpar=[])
            for k in order[1:]:
                new = cst.Call(
                    func=cst.Attribute(value=new, attr=cst.Name("squeeze")),
                    args=[cst.Arg(ctx.parse_expression(str(k)))],
                )
        else:
            first, rest = order[0], order[1:]
            code = f"{ctx.code(node.func)}({ctx.code(x)}, {first})"
            code += "".join(f".squeeze({k})" for k in rest)
            new = ctx.parse_expression(code)
        return fix.replace(node, new.with_changes(lpar=node.lpar, rpar=node.rpar))


def _order(dims: List[int]) -> List[int]:
    """Squeeze order that keeps the remaining indices valid: non-negative dims from the highest,
    negative dims from the lowest (most negative) one."""
    if all(d >= 0 for d in dims):
        return sorted(dims, reverse=True)
    return sorted(d for d in dims if d < 0)


def _chain(dims: List[int]) -> str:
    return "".join(f".squeeze({k})" for k in _order(dims))


def _numpy_like(ctx, x: cst.BaseExpression, depth: int = 0) -> bool:
    """``a.numpy().squeeze()``, ``np.array(...)``: not a tensor."""
    if depth > 3:
        return False
    while isinstance(x, cst.Call) and isinstance(x.func, cst.Attribute):
        if x.func.attr.value in _NOT_TENSOR_METHODS:
            return True
        x = x.func.value
    if isinstance(x, cst.Call):
        qn = ctx.names.qualified_names(x.func)
        return any(q.startswith(("numpy.", "pandas.", "scipy.")) for q in qn)
    if isinstance(x, cst.Name):
        vals = ctx.names.values(x)
        return bool(vals) and all(_numpy_like(ctx, v, depth + 1) for v in vals)
    return False
