from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.families.loops.loops import Accumulation, row_accumulation, used_outside
from torchlint.rule import Fix, Invalid, LintRule, Valid


class RowWiseAccumulationLoop(LintRule):
    """
    ## What it does
    Finds Python loops that add up the rows of a tensor one at a time: `for i in range(n): z += x[i]`,
    `for row in x: total = total + row`, or `for x_i in torch.unbind(x): z += x_i`.

    ## Why is this bad?
    Every iteration launches a slicing kernel and an addition on one small row, and the Python
    interpreter runs in between. Effective PyTorch uses exactly this loop as its example of overusing
    the indexing operator: summing the 500 rows of a `[500, 10]` matrix with `z += x[i]` is slow,
    iterating over `torch.unbind(x)` is only about 30% faster, and the right way is one reduction,
    `torch.sum(x, dim=0)` ("4. 使用好重载的运算符", Effective PyTorch). The reduction runs as one kernel,
    on the GPU as well as on the CPU.

    Only loops over the rows of a value known to be a tensor are reported (built by a torch function,
    annotated `Tensor`, bounded by `x.size(0)`, or a parameter already used as a tensor, such as
    `x.size(1)`); sums over lists, epochs or modules are not, and neither are loops whose body does
    anything besides the accumulation.

    ## Example
    ```python
    x = torch.rand([500, 10])
    z = torch.zeros([10])
    for i in range(500):
        z += x[i]
    ```

    ## Use instead
    ```python
    x = torch.rand([500, 10])
    z = torch.zeros([10])
    z += x.sum(dim=0)
    ```

    ## Fix safety
    The loop is replaced by the same statement applied to one reduction: `x.sum(dim=0)` when the loop
    covers every row (`range(len(x))`, `range(x.size(0))`, or a literal bound equal to the known number
    of rows), `x[start:stop].sum(dim=0)` otherwise, and `x.sum(dim=k)` for `torch.unbind(x, k)`. The
    fix is safe: the result is the same sum (up to floating-point summation order). It is unsafe when
    the loop variable is read after the loop, since the fix no longer defines it.

    ## Options
    None.

    ## References
    - [torch.sum](https://pytorch.org/docs/stable/generated/torch.sum.html)
    - [torch.unbind](https://pytorch.org/docs/stable/generated/torch.unbind.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL301"
    NAME = "row-wise-accumulation-loop"
    MESSAGE = "Rows of a tensor are added one at a time in a Python loop; sum them with one reduction over `dim=0`"
    FIX_TITLE = "Replace the loop with one `sum(dim=...)`"
    TRIGGERS = ("torch", "Tensor")

    VALID = [
        Valid(
            """
import torch

x = torch.rand([500, 10])
z = torch.sum(x, dim=0)
"""
        ),
        Valid(
            """
import torch

def total_length(lengths):
    total = 0
    for i in range(len(lengths)):
        total += lengths[i]
    return total
"""
        ),
        Valid(
            """
import torch

def run(model, loader, epochs):
    total = 0.0
    for epoch in range(epochs):
        total += train_one_epoch(model, loader)
    return total
"""
        ),
        Valid(
            """
import torch.nn as nn

class Ensemble(nn.Module):
    def forward(self, x):
        out = 0
        for i in range(len(self.heads)):
            out += self.heads[i](x)
        return out
"""
        ),
        Valid(
            """
import torch

def smooth(x: torch.Tensor, decay: float):
    z = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        z = z * decay + x[i]
    return z
"""
        ),
        Valid(
            """
import torch

def weighted(x: torch.Tensor, w):
    z = 0
    for i in range(x.size(0)):
        z += x[i] * w[i]
    return z
"""
        ),
        Valid(
            """
import torch

def add_rows(rows):
    total = 0
    for row in rows:
        total += row
    return total
"""
        ),
        Valid(
            """
import torch

def cumulative(x: torch.Tensor):
    z = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        z += x[i]
        print(z)
    return z
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

x = torch.rand([500, 10])
z = torch.zeros([10])
for i in range(500):
    z += x[i]
""",
            fixed="""
import torch

x = torch.rand([500, 10])
z = torch.zeros([10])
z += x.sum(dim=0)
""",
            line=6,
            col=1,
        ),
        Invalid(
            """
import torch

def head_sum(n):
    x = torch.randn(100, 4)
    z = torch.zeros(4)
    # add the first n rows
    for i in range(n):
        z += x[i]
    return z
""",
            fixed="""
import torch

def head_sum(n):
    x = torch.randn(100, 4)
    z = torch.zeros(4)
    # add the first n rows
    z += x[:n].sum(dim=0)
    return z
""",
        ),
        Invalid(
            """
import torch

def column_totals(x: torch.Tensor):
    total = 0
    for row in x:
        total = total + row
    return total
""",
            fixed="""
import torch

def column_totals(x: torch.Tensor):
    total = 0
    total = total + x.sum(dim=0)
    return total
""",
        ),
        Invalid(
            """
import torch

x = torch.rand([500, 10])
z = torch.zeros([500])
for x_i in torch.unbind(x, dim=1):
    z += x_i
""",
            fixed="""
import torch

x = torch.rand([500, 10])
z = torch.zeros([500])
z += x.sum(dim=1)
""",
        ),
        Invalid(
            """
import torch

def f(x):
    z = torch.zeros(x.size(1))
    for i in range(2, x.size(0)):
        z += x[i]
    print("last row", i)
    return z
""",
            fixed="""
import torch

def f(x):
    z = torch.zeros(x.size(1))
    z += x[2:].sum(dim=0)
    print("last row", i)
    return z
""",
            unsafe=True,
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        acc = row_accumulation(self.ctx, node)
        if acc is None:
            return
        reduction = self._reduction(acc)
        self.report(
            node,
            f"Rows of `{self.ctx.code(acc.tensor)}` are added one at a time in a Python loop; "
            f"use one reduction: `{reduction}`",
            fix=self._fix(acc, reduction),
        )

    def _reduction(self, acc: Accumulation) -> str:
        code = self.ctx.code
        x = code(acc.tensor)
        if acc.stop is None:
            return f"{x}.sum(dim={acc.dim})"
        start = "" if acc.start is None or code(acc.start) == "0" else code(acc.start)
        stop = code(acc.stop)
        if stop in (f"{x}.size(0)", f"{x}.shape[0]", f"len({x})", f"{x}.size()[0]"):
            stop = ""  # up to the tensor's own length
        return f"{x}[{start}:{stop}].sum(dim=0)"

    def _fix(self, acc: Accumulation, reduction: str) -> Optional[Fix]:
        ctx = self.ctx
        loop = acc.loop
        value = _added_value(acc.statement)
        if value is None:
            return None
        new_small = acc.statement.deep_replace(value, ctx.parse_expression(reduction))
        new_line = cst.SimpleStatementLine(
            body=[new_small], leading_lines=loop.leading_lines  # type: ignore[list-item]
        )
        unsafe = acc.var is not None and used_outside(ctx, loop, acc.var.value)
        return self.make_fix(unsafe=unsafe or None).replace(loop, new_line)


def _added_value(stmt: cst.BaseSmallStatement) -> Optional[cst.BaseExpression]:
    if isinstance(stmt, cst.AugAssign):
        return stmt.value
    if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.BinaryOperation):
        target = stmt.targets[0].target
        left = stmt.value.left
        same_left = cst.Module([]).code_for_node(left) == cst.Module([]).code_for_node(target)
        return stmt.value.right if same_left else left  # `z = z + row` or `z = row + z`
    return None
