from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import keyword_arg
from torchlint.rule import Invalid, LintRule, Valid

CHECKPOINT_FUNCS = frozenset(
    {
        "torch.utils.checkpoint.checkpoint",
        "torch.utils.checkpoint.checkpoint_sequential",
    }
)


class CheckpointWithoutUseReentrant(LintRule):
    """
    ## What it does
    Finds `torch.utils.checkpoint.checkpoint(...)` and `checkpoint_sequential(...)` called without
    `use_reentrant=`.

    ## Why is this bad?
    Activation checkpointing has two implementations. The old, reentrant one (still the default)
    does not support keyword arguments to the checkpointed function, `torch.autograd.grad`, or inputs
    none of which requires grad — in that last case the checkpointed layers silently get no gradients
    at all, a classic cause of "frozen" layers. Since torch 2.1 torch warns on every call without
    `use_reentrant` and documents that the default will change to `False`; code that does not choose
    will change behaviour with a torch upgrade. Effective PyTorch's advice to state such choices
    explicitly rather than rely on implicit defaults applies directly.

    ## Example
    ```python
    out = checkpoint(self.block, x)
    ```

    ## Use instead
    ```python
    out = checkpoint(self.block, x, use_reentrant=False)
    ```

    ## Fix safety
    The fix passes `use_reentrant=True`, the value torch uses today when none is given, so behaviour is
    unchanged and the warning goes away (safe). Switching to `use_reentrant=False`, which torch
    recommends, is left to the author: it changes which cases get gradients and how RNG state is
    handled.

    ## Options
    None.

    TorchFix: TOR003 maps to this rule.

    ## References
    - [torch.utils.checkpoint](https://pytorch.org/docs/stable/checkpoint.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL514"
    NAME = "checkpoint-without-use-reentrant"
    MESSAGE = (
        "`checkpoint` without `use_reentrant`: torch warns and will change the default; pass "
        "`use_reentrant=False` (recommended) or `True` (the current default)"
    )
    FIX_TITLE = "Pass `use_reentrant=True` (the current default)"
    TRIGGERS = ("checkpoint",)

    VALID = [
        Valid(
            """
from torch.utils.checkpoint import checkpoint

def forward(block, x):
    return checkpoint(block, x, use_reentrant=False)
"""
        ),
        Valid(
            """
import torch.utils.checkpoint as cp

def forward(blocks, x):
    return cp.checkpoint_sequential(blocks, 2, x, use_reentrant=True)
"""
        ),
        Valid(
            """
from torch.utils.checkpoint import checkpoint

def forward(block, x, **kw):
    return checkpoint(block, x, **kw)
"""
        ),
        Valid(
            """
from deepspeed.checkpointing import checkpoint

def forward(block, x):
    return checkpoint(block, x)
"""
        ),
        Valid(
            """
def checkpoint(model, path):
    return path

checkpoint(None, "a.pt")
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
from torch.utils.checkpoint import checkpoint

def forward(block, x):
    return checkpoint(block, x)
""",
            fixed="""
from torch.utils.checkpoint import checkpoint

def forward(block, x):
    return checkpoint(block, x, use_reentrant=True)
""",
            line=5,
            col=12,
        ),
        Invalid(
            """
import torch
import torch.utils.checkpoint

class Net(torch.nn.Module):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(
            self.block,
            x,
        )
""",
            fixed="""
import torch
import torch.utils.checkpoint

class Net(torch.nn.Module):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(
            self.block,
            x, use_reentrant=True,
        )
""",
        ),
        Invalid(
            """
import torch.utils.checkpoint as cp

def forward(blocks, x):
    return cp.checkpoint_sequential(blocks, 2, x)
""",
            fixed="""
import torch.utils.checkpoint as cp

def forward(blocks, x):
    return cp.checkpoint_sequential(blocks, 2, x, use_reentrant=True)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or not self.ctx.names.matches(node.func, CHECKPOINT_FUNCS):
            return
        if keyword_arg(node, "use_reentrant") is not None or any(a.star == "**" for a in node.args):
            return
        last = node.args[-1]
        args = list(node.args[:-1])
        args.append(last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        args.append(
            cst.Arg(
                cst.Name("True"),
                keyword=cst.Name("use_reentrant"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                comma=last.comma,
            )
        )
        self.report(node, fix=self.make_fix().replace(node, node.with_changes(args=args)))
