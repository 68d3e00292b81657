from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.fixes import add_argument
from torchlint.rule import Fix, Invalid, LintRule, Valid

_ALWAYS_ON = re.compile(r"^MC[A-Z_]|MCDropout|[Mm]onte|[Bb]ayes|[Aa]lways|[Cc]oncrete")

FUNCTIONAL_DROPOUTS = frozenset(
    {
        "torch.nn.functional.dropout",
        "torch.nn.functional.dropout1d",
        "torch.nn.functional.dropout2d",
        "torch.nn.functional.dropout3d",
        "torch.nn.functional.alpha_dropout",
        "torch.nn.functional.feature_alpha_dropout",
    }
)


class FunctionalDropoutWithoutTrainingFlag(LintRule):
    """
    ## What it does
    Finds `F.dropout(x, p)` (and `dropout1d`/`2d`/`3d`, `alpha_dropout`, `feature_alpha_dropout`) called
    in a module's `forward` without the `training` argument.

    ## Why is this bad?
    Unlike the `nn.Dropout` layer, the functional form does not know whether the module is in training
    or evaluation mode: its `training` argument defaults to `True`, so the dropout stays active after
    `model.eval()` and every prediction is randomly perturbed. The cookbook recommends the functional
    forms for parameter-free operations but warns about exactly this, with the fix
    `torch.nn.functional.dropout(x, p=0.5, training=self.training)` ("使用 torch.nn.functional 时要注意
    网络状态", PyTorch Cookbook, Zhang Hao, 2019).

    Not reported: calls that pass `training` (by keyword or position) or `**kwargs`, `p=0`, calls
    that run only in training mode (in the body of `if self.training:` or `if self.training and ...:`),
    calls outside a class's `forward` methods (a plain function has no `self.training` to pass), and classes
    named for dropout that stays on at test time on purpose (`MCDropout`, `BayesianLinear`,
    `AlwaysDropout`).

    ## Example
    ```python
    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)
        return self.fc2(x)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.fc2(x)
    ```

    ## Fix safety
    The fix adds `training=self.training`. It is safe: in training mode nothing changes, and in
    evaluation mode the dropout turns off, which is the bug being fixed.

    ## Options
    None.

    ## References
    - [torch.nn.functional.dropout](https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html)
    - [torch.nn.Module.eval](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL108"
    NAME = "functional-dropout-without-training-flag"
    MESSAGE = "Functional dropout in `forward` without `training=`; it stays active in eval mode"
    FIX_TITLE = "Pass `training=self.training`"
    TRIGGERS = ("dropout",)

    VALID = [
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, p=0.5, training=self.training)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, self.training)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def augment(x):
    return F.dropout(x, p=0.1)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Head(nn.Module):
    def forward(self, x):
        if self.training and self.rate > 0:
            x = F.dropout(x, p=self.rate)
        return x
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x, **kw):
        x = F.dropout(x, p=0.0)
        return F.dropout(x, **kw)
"""
        ),
        Valid(
            """
class Net(nn.Module):
    def forward(self, x):
        return my_lib.dropout(x, 0.5)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class MCDropout(nn.Dropout):
    \"\"\"Dropout that stays on at test time, for Monte-Carlo uncertainty estimates.\"\"\"

    def forward(self, x):
        return F.dropout(x, self.p)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 10)
        self.fc2 = nn.Linear(10, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)
        return self.fc2(x)
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 10)
        self.fc2 = nn.Linear(10, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.fc2(x)
""",
            line=13,
            col=13,
        ),
        Invalid(
            """
import torch
from torch.nn.functional import dropout2d as drop2d

class Block(torch.nn.Module):
    def forward(module, x):
        return torch.nn.functional.dropout(drop2d(x, 0.2), 0.1)
""",
            fixed="""
import torch
from torch.nn.functional import dropout2d as drop2d

class Block(torch.nn.Module):
    def forward(module, x):
        return torch.nn.functional.dropout(drop2d(x, 0.2, training=module.training), 0.1, training=module.training)
""",
            count=2,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not ctx.names.matches(node.func, FUNCTIONAL_DROPOUTS):
            return
        if any(a.star for a in node.args):
            return
        if arg(node, 2, "training") is not None:
            return
        p = arg(node, 1, "p")
        if p is not None and isinstance(p.value, (cst.Integer, cst.Float)) and float(p.value.value) == 0.0:
            return
        self_name = self._forward_self()
        if self_name is None or self._under_training_guard(node, self_name):
            return
        self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node, self_name))

    def _under_training_guard(self, node: cst.Call, self_name: str) -> bool:
        """The call runs only in training mode: it sits in the body of an ``if`` whose test requires
        ``self.training`` (alone or as one operand of ``and``)."""
        child: cst.CSTNode = node
        for a in self.ctx.ancestors(node):
            if isinstance(a, cst.FunctionDef):
                return False
            if isinstance(a, cst.If) and child is a.body and _requires_training(a.test, self_name):
                return True
            child = a
        return False

    def _forward_self(self) -> Optional[str]:
        """The first parameter's name when the call sits in a ``forward`` method of a class with bases."""
        for a in self.ctx.ancestors(self.ctx.stack[-1]):
            if isinstance(a, cst.FunctionDef):
                name = a.name.value
                if not (name == "forward" or name.startswith(("forward_", "_forward"))):
                    return None
                cls = self.ctx.parent(self.ctx.parent(a) or a)
                if not isinstance(cls, cst.ClassDef) or not cls.bases:
                    return None
                if _ALWAYS_ON.search(cls.name.value):
                    return None  # Monte-Carlo / always-on dropout layers drop in eval mode on purpose
                params = list(a.params.posonly_params) + list(a.params.params)
                return params[0].name.value if params else None
        return None

    def _fix(self, node: cst.Call, self_name: str) -> Fix:
        # the new argument takes the last one's place in the layout: its trailing comma, its newline
        new = add_argument(self.ctx, node, f"{self_name}.training", keyword="training")
        return self.make_fix().replace(node, new)


def _requires_training(test: cst.BaseExpression, self_name: str) -> bool:
    if isinstance(test, cst.Attribute):
        return test.attr.value == "training" and isinstance(test.value, cst.Name) and test.value.value == self_name
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _requires_training(test.left, self_name) or _requires_training(test.right, self_name)
    return False
