from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.api.rewrite import torch_in_scope
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.rule import Fix, Invalid, LintRule, Valid
from torchlint.rules._deprecations import BY_NAME, version

ENTRY = BY_NAME["torch.set_default_tensor_type"]
#: tensor type -> (device or None, dtype)
TENSOR_TYPES = {
    "torch.FloatTensor": (None, "torch.float32"),
    "torch.DoubleTensor": (None, "torch.float64"),
    "torch.cuda.FloatTensor": ("cuda", "torch.float32"),
    "torch.cuda.DoubleTensor": ("cuda", "torch.float64"),
}


class SetDefaultTensorType(LintRule):
    """
    ## What it does
    Finds `torch.set_default_tensor_type(...)`, deprecated since torch 2.1 (reported when the project
    targets 2.1 or later, option `target-torch`).

    ## Why is this bad?
    `set_default_tensor_type` mixes two settings in one legacy type name: the default floating dtype
    and the default device (`torch.cuda.FloatTensor`). It warns on every call since torch 2.1, and
    the legacy type names it takes are themselves deprecated. The PyTorch Cookbook (Zhang Hao, 2019)
    set the default type this way ("torch.set_default_tensor_type(torch.FloatTensor)"); its 2024 revision
    and the PyTorch docs use `torch.set_default_dtype` and, for the device, `torch.set_default_device`.

    ## Example
    ```python
    torch.set_default_tensor_type(torch.DoubleTensor)
    ```

    ## Use instead
    ```python
    torch.set_default_dtype(torch.float64)
    ```

    ## Fix safety
    For CPU types (`torch.FloatTensor`, `torch.DoubleTensor`, or the same names as strings) the fix
    calls `torch.set_default_dtype` with the matching dtype (safe: the same default). For CUDA types it
    sets the dtype and `torch.set_default_device("cuda")`, which is unsafe: the default device also
    applies to tensors created by library code and to factory calls with no dtype, which
    `set_default_tensor_type` did not always cover. Other arguments get no fix.

    ## Options
    - `target-torch` (default `"auto"`): not reported for projects that support torch older than 2.1.

    TorchFix has no equivalent.

    ## References
    - [torch.set_default_dtype](https://pytorch.org/docs/stable/generated/torch.set_default_dtype.html)
    - [torch.set_default_device](https://pytorch.org/docs/stable/generated/torch.set_default_device.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL505"
    NAME = "set-default-tensor-type"
    MESSAGE = (
        "`torch.set_default_tensor_type` is deprecated since torch 2.1; use `torch.set_default_dtype` "
        "(and `torch.set_default_device`)"
    )
    FIX_TITLE = "Use `torch.set_default_dtype` / `torch.set_default_device`"
    TRIGGERS = ("set_default_tensor_type",)
    OPTIONS = {"target-torch": TARGET_TORCH}

    VALID = [
        Valid(
            """
import torch

torch.set_default_dtype(torch.float64)
"""
        ),
        Valid(
            """
import torch

torch.set_default_tensor_type(torch.DoubleTensor)
""",
            options={"target-torch": "2.0"},
        ),
        Valid(
            """
import torch

torch.set_default_device("cuda")
"""
        ),
        Valid(
            """
import tensorflow as tf

def set_default_tensor_type(t):
    return t

set_default_tensor_type(tf.float32)
"""
        ),
        Valid(
            """
import torch

x = torch.get_default_dtype()
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

torch.set_default_tensor_type(torch.DoubleTensor)  # float64 by default
""",
            fixed="""
import torch

torch.set_default_dtype(torch.float64)  # float64 by default
""",
            line=4,
            col=1,
        ),
        Invalid(
            """
import torch

def setup():
    torch.set_default_tensor_type("torch.cuda.FloatTensor")  # new tensors: float32 on the GPU
""",
            fixed="""
import torch

def setup():
    torch.set_default_dtype(torch.float32)
    torch.set_default_device("cuda")  # new tensors: float32 on the GPU
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def setup(kind):
    torch.set_default_tensor_type(kind)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.matches(node.func, {ENTRY.name}):
            return
        if target_version(self.options.get("target-torch")) < version(ENTRY.deprecated):
            return
        self.report(node, fix=self._fix(node))

    def _fix(self, node: cst.Call) -> Optional[Fix]:
        first = arg(node, 0, "t")
        if first is None or len(node.args) != 1 or not torch_in_scope(self.ctx):
            return None
        value = first.value
        if isinstance(value, cst.SimpleString):
            name: Optional[str] = value.evaluated_value if isinstance(value.evaluated_value, str) else None
        else:
            qn = self.ctx.names.qualified_names(value)
            name = next(iter(sorted(qn & set(TENSOR_TYPES))), None)
        if name not in TENSOR_TYPES:
            return None
        device, dtype = TENSOR_TYPES[name]
        expr = self.ctx.parent(node)
        line = self.ctx.parent(expr) if isinstance(expr, cst.Expr) else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        new_dtype = self.ctx.parse_statement(f"torch.set_default_dtype({dtype})\n")
        # the line's own comment stays on it (`...  # default: GPU floats`)
        if device is None:
            return self.make_fix().replace(line, new_dtype.with_changes(
                leading_lines=line.leading_lines, trailing_whitespace=line.trailing_whitespace))
        new_device = self.ctx.parse_statement(f'torch.set_default_device("{device}")\n')
        fix = self.make_fix(unsafe=True)
        fix.replace(line, cst.FlattenSentinel([new_dtype.with_changes(leading_lines=line.leading_lines),
                                               new_device.with_changes(trailing_whitespace=line.trailing_whitespace)]))
        return fix
