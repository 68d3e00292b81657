from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.families.shapes.shapes import shape_of
from torchlint.rule import Fix, Invalid, LintRule, Valid

#: functions whose ``dim`` defaults to None (torch then picks one from the input's rank and warns)
IMPLICIT_DIM_FUNCS = frozenset(
    {"torch.nn.functional.softmax", "torch.nn.functional.log_softmax", "torch.nn.functional.softmin"}
)
IMPLICIT_DIM_LAYERS = frozenset(
    {
        "torch.nn.Softmax",
        "torch.nn.LogSoftmax",
        "torch.nn.Softmin",
        "torch.nn.modules.activation.Softmax",
        "torch.nn.modules.activation.LogSoftmax",
        "torch.nn.modules.activation.Softmin",
    }
)


class SoftmaxWithoutDim(LintRule):
    """
    ## What it does
    Finds `F.softmax(x)`, `F.log_softmax(x)`, `F.softmin(x)` and the layers `nn.Softmax()`,
    `nn.LogSoftmax()`, `nn.Softmin()` without `dim`. (`torch.softmax` and the tensor methods require
    `dim` already.)

    ## Why is this bad?
    Without `dim`, torch chooses the dimension from the input's rank — dimension 0 for 1-D and 3-D
    inputs, dimension 1 otherwise — and emits a deprecation warning. For a batch of sequences
    (`[batch, time, classes]`) that normalises across the batch, silently mixing samples. Effective
    PyTorch's advice on reductions applies to softmax as well: always name the dimension
    ("总是指定好维度"), so that the code says which axis holds the classes and fails loudly when the
    shape changes. The PyTorch Cookbook's classification snippets write `dim=1` for the same reason.

    ## Example
    ```python
    probs = F.softmax(model(x))
    ```

    ## Use instead
    ```python
    probs = F.softmax(model(x), dim=1)
    ```

    ## Fix safety
    The fix adds `dim=-1` only where the shape analysis knows the input is 1-D or 2-D: there the
    implicit choice is the last dimension, so the result is unchanged (safe). For other ranks the
    implicit choice is dimension 0 or 1, which is rarely what was meant, and for layers the input is
    not known: no fix is offered, the right dimension is the one holding the classes.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.functional.softmax](https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html)
    - [torch.nn.Softmax](https://pytorch.org/docs/stable/generated/torch.nn.Softmax.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL510"
    NAME = "softmax-without-dim"
    MESSAGE = (
        "Softmax without `dim`: torch picks the dimension from the input's rank (0 for 1-D and 3-D "
        "inputs, else 1) and warns; pass `dim=`"
    )
    FIX_TITLE = "Pass `dim=-1`"
    TRIGGERS = ("softmax", "Softmax", "softmin", "Softmin")

    VALID = [
        Valid(
            """
import torch.nn.functional as F

def predict(model, x):
    return F.softmax(model(x), dim=-1)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

head = nn.Sequential(nn.Linear(16, 4), nn.LogSoftmax(dim=1))
p = torch.softmax(torch.zeros(3), 0)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def predict(logits, axis):
    return F.log_softmax(logits, axis), F.softmin(logits, 1)
"""
        ),
        Valid(
            """
from scipy.special import softmax

def probs(x):
    return softmax(x)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def predict(x, **kw):
    return F.softmax(x, **kw)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch.nn.functional as F

def predict(model, x):
    return F.softmax(model(x)).argmax(dim=1)
""",
            line=5,
            col=12,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

scores = torch.randn(8, 10)
probs = F.log_softmax(scores)
""",
            fixed="""
import torch
import torch.nn.functional as F

scores = torch.randn(8, 10)
probs = F.log_softmax(scores, dim=-1)
""",
        ),
        Invalid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softmax()
""",
        ),
        Invalid(
            """
import torch
from torch.nn.functional import softmax

seq = torch.zeros(4, 7, 5)
p = softmax(seq)
""",
            message="3-D input",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qnames = self.ctx.names.qualified_names(node.func)
        if not qnames:
            return
        if not qnames.isdisjoint(IMPLICIT_DIM_LAYERS):
            if self._has_dim(node, 0):
                return
            self.report(node, self.quoting(node, self.MESSAGE))
            return
        if qnames.isdisjoint(IMPLICIT_DIM_FUNCS):
            return
        if self._has_dim(node, 1):
            return
        first = arg(node, 0, "input")
        if first is None:
            return
        shape = shape_of(self.ctx, first.value)
        rank = shape.rank if shape is not None else None
        if rank in (1, 2):
            self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node))
        elif rank is not None:
            implicit = 0 if rank in (0, 3) else 1
            self.report(
                node,
                self.quoting(node, f"Softmax without `dim` on a {rank}-D input normalises over dimension {implicit}, "
                                   "which is rarely the class dimension; pass `dim=`"),
            )
        else:
            self.report(node, self.quoting(node, self.MESSAGE))

    @staticmethod
    def _has_dim(node: cst.Call, position: int) -> bool:
        if any(a.star for a in node.args):
            return True  # may be in *args / **kwargs
        return arg(node, position, "dim") is not None

    def _fix(self, node: cst.Call) -> Optional[Fix]:
        last = node.args[-1]
        args = list(node.args[:-1])
        args.append(last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        args.append(
            cst.Arg(
                cst.UnaryOperation(cst.Minus(), cst.Integer("1")),
                keyword=cst.Name("dim"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                comma=last.comma,
            )
        )
        return self.make_fix().replace(node, node.with_changes(args=args))
