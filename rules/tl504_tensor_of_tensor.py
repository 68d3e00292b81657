from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.shapes.shapes import is_tensor
from torchlint.rule import Invalid, LintRule, Valid

TENSOR_CONSTRUCTOR = frozenset({"torch.tensor"})


class TensorOfTensor(LintRule):
    """
    ## What it does
    Finds `torch.tensor(t)` where `t` is already a tensor (a torch constructor or op, a tensor method,
    or a local variable assigned only such values).

    ## Why is this bad?
    `torch.tensor` is for building a tensor from Python data. Given a tensor it copies it, detaches it
    from the autograd graph and warns ("To copy construct from a tensor, it is recommended to use
    sourceTensor.clone().detach()"). When a copy is wanted, `t.clone().detach()` says so; when it is
    not (the common case: the author only wanted "a tensor"), the copy is wasted memory and time, and
    the lost gradient is a bug. The PyTorch Cookbook (Zhang Hao, 2019) lists `tensor.clone()`,
    `tensor.detach()` and `tensor.detach().clone()` as the ways to copy a tensor.

    ## Example
    ```python
    target = torch.tensor(model(x))
    ```

    ## Use instead
    ```python
    target = model(x).clone().detach()
    ```

    ## Fix safety
    The fix rewrites `torch.tensor(t)` with no other argument as `t.clone().detach()` (safe: the same
    values, dtype, device, a new storage and no gradient, exactly as before). With `dtype=`, `device=`
    or `requires_grad=` no fix is offered.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.tensor](https://pytorch.org/docs/stable/generated/torch.tensor.html)
    - [torch.Tensor.detach](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL504"
    NAME = "tensor-of-tensor"
    MESSAGE = "`torch.tensor()` of a tensor copies and detaches it (and warns); use `t.clone().detach()`, or `t` itself"
    FIX_TITLE = "Use `t.clone().detach()`"
    TRIGGERS = ("tensor",)

    VALID = [
        Valid(
            """
import torch

t = torch.tensor([1.0, 2.0])
u = torch.tensor(3)
"""
        ),
        Valid(
            """
import torch
import numpy as np

a = torch.tensor(np.zeros(3))
"""
        ),
        Valid(
            """
import torch

def f(values):
    return torch.tensor(values)
"""
        ),
        Valid(
            """
import torch

x = torch.zeros(3)
y = x.clone().detach()
"""
        ),
        Valid(
            """
import torch

def f(x: list):
    return torch.tensor(x, dtype=torch.float32)
"""
        ),
        Valid(
            """
import torch

def f(x: torch.Tensor, w):
    if not isinstance(w, torch.Tensor):
        w = torch.tensor(w)
    return x * w
"""
        ),
        # the parameter read inside its own reassignment is what the caller passed (a numpy array here), not the
        # tensor the assignment makes afterwards
        Valid(
            """
import numpy as np
import torch


def select_action(state):
    state = torch.tensor(state.reshape(1, -1)).float()
    return state


select_action(np.zeros(3))
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

x = torch.zeros(3)
y = torch.tensor(x)
""",
            fixed="""
import torch

x = torch.zeros(3)
y = x.clone().detach()
""",
            line=5,
            col=5,
        ),
        Invalid(
            """
import torch

def f(a, b):
    return torch.tensor(torch.cat([a, b]) * 2)
""",
            fixed="""
import torch

def f(a, b):
    return (torch.cat([a, b]) * 2).clone().detach()
""",
        ),
        Invalid(
            """
import torch

def f(a):
    x = torch.as_tensor(a)
    return torch.tensor(x, dtype=torch.float64)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.matches(node.func, TENSOR_CONSTRUCTOR):
            return
        first = arg(node, 0, "data")
        if first is None or not self._built_as_tensor(first.value):
            return
        fix = None
        if len(node.args) == 1:
            value = first.value
            code = self.ctx.code(value)
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                code = f"({code})"
            fix = self.make_fix().replace(node, self.ctx.parse_expression(f"{code}.clone().detach()"))
        self.report(node, self.quoting(node, self.MESSAGE), fix=fix)

    def _built_as_tensor(self, expr: cst.BaseExpression) -> bool:
        """A torch op or constructor call, arithmetic on one, or a local variable every assignment of which
        is one. Parameters are not: a guard like `if not isinstance(x, Tensor)` usually precedes
        `torch.tensor(x)`, and the evidence that `x` is a tensor elsewhere says nothing about this call."""
        if isinstance(expr, cst.Call):
            return is_tensor(self.ctx, expr)
        if isinstance(expr, cst.BinaryOperation):
            return self._built_as_tensor(expr.left) or self._built_as_tensor(expr.right)
        if isinstance(expr, cst.Name):
            b = self.ctx.names.lookup(expr.value)
            if b is None or b.imports or not b.values or any(v is None for v in b.values):
                return False
            return all(isinstance(v, cst.Call) and is_tensor(self.ctx, v) for v in b.values)
        return False
