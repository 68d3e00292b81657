from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import assignment_targets
from torchlint.analysis.walk import iter_nodes
from torchlint.rule import Invalid, LintRule, Valid

TYPO = "require_grad"


class RequireGradTypo(LintRule):
    """
    ## What it does
    Finds assignments to `.require_grad` (`p.require_grad = False`) in files that import torch,
    where the attribute is never read — the tensor flag is `requires_grad`.

    ## Why is this bad?
    A tensor accepts any new attribute, so the typo raises nothing: the assignment creates an unused
    attribute and `requires_grad` keeps its value. Freezing a backbone with
    `for p in backbone.parameters(): p.require_grad = False` trains the whole network anyway (slower,
    and the "frozen" weights drift); the reverse typo leaves layers untrained. The PyTorch Cookbook
    (Zhang Hao, 2019) freezes layers with `param.requires_grad = False` in its fine-tuning snippet.

    ## Example
    ```python
    for p in model.backbone.parameters():
        p.require_grad = False
    ```

    ## Use instead
    ```python
    for p in model.backbone.parameters():
        p.requires_grad = False
    ```

    ## Fix safety
    The fix renames the attribute to `requires_grad` (safe): the assignment then does what it says.
    Training changes accordingly — the layers are frozen (or trained) as the code intended, which is
    the fix. An attribute that the code also reads (`self.require_grad = flag` ... `if
    self.require_grad:`) is a deliberate name of its own and is not reported.

    ## Options
    None.

    TorchFix: TOR002 maps to this rule.

    ## References
    - [Locally disabling gradient computation: requires_grad](https://pytorch.org/docs/stable/notes/autograd.html#setting-requires-grad)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL515"
    NAME = "require-grad-typo"
    MESSAGE = "`require_grad` is not a tensor flag (typo of `requires_grad`): the assignment has no effect"
    FIX_TITLE = "Rename to `requires_grad`"
    TRIGGERS = ("require_grad",)

    VALID = [
        Valid(
            """
import torch

def freeze(model):
    for p in model.parameters():
        p.requires_grad = False
"""
        ),
        Valid(
            """
import torch

class Config:
    def __init__(self, require_grad):
        self.require_grad = require_grad

    def apply(self, t):
        return t.requires_grad_(self.require_grad)
"""
        ),
        Valid(
            """
class Options:
    pass

opts = Options()
opts.require_grad = True
"""
        ),
        Valid(
            """
import torch

x = torch.zeros(3, requires_grad=True)
x.requires_grad_(False)
"""
        ),
        Valid(
            """
import torch

def freeze(layer, flag):
    layer.weight.requires_grad = flag
    return {"require_grad": flag}
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def freeze(model):
    for p in model.backbone.parameters():
        p.require_grad = False
""",
            fixed="""
import torch

def freeze(model):
    for p in model.backbone.parameters():
        p.requires_grad = False
""",
            line=6,
            col=9,
        ),
        Invalid(
            """
import torch.nn as nn

layer = nn.Linear(4, 4)
layer.weight.require_grad = layer.bias.require_grad = False
""",
            fixed="""
import torch.nn as nn

layer = nn.Linear(4, 4)
layer.weight.requires_grad = layer.bias.requires_grad = False
""",
            count=2,
        ),
        Invalid(
            """
import torch

class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(3))
        self.w.require_grad = False
""",
            fixed="""
import torch

class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(3))
        self.w.requires_grad = False
""",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._read = None

    def _attribute_read(self) -> bool:
        """Whether the file reads ``<x>.require_grad`` anywhere (a deliberate attribute of its own)."""
        if self._read is None:
            written = set()
            attributes = []
            for n in iter_nodes(self.ctx.module):
                if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    written.update(id(t) for t in assignment_targets(n))
                elif isinstance(n, cst.Attribute) and n.attr.value == TYPO:
                    attributes.append(n)
            self._read = any(id(a) not in written for a in attributes)
        return self._read

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(assignment_targets(node))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(assignment_targets(node))

    def _check(self, targets) -> None:
        if not self.ctx.names.imports_torch:
            return
        for t in targets:
            if isinstance(t, cst.Attribute) and t.attr.value == TYPO and not self._attribute_read():
                fix = self.make_fix().replace(t, t.with_changes(attr=cst.Name("requires_grad")))
                self.report(t, fix=fix)
