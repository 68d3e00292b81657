from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.families.loops.loops import Gather, gather_comprehension, gather_loop, used_outside
from torchlint.analysis.names import dotted_name
from torchlint.families.shapes.shapes import annotated_tensor, shape_of
from torchlint.analysis.walk import iter_nodes
from torchlint.fixes import import_module, import_name
from torchlint.fixes.project import RUNTIME_CHOICES, RUNTIME_FIXES, use_runtime
from torchlint.rule import SAFE, UNSAFE, Fix, Invalid, LintRule, Option, Valid

RUNTIME = "torchlint.runtime"
FUNCTION = "batch_gather"


class BatchGatherLoop(LintRule):
    """
    ## What it does
    Finds batch gathers written as a Python loop: `output[i] = tensor[i, indices[i]]` computed row by
    row (`output += [tensor[i][indices[i]]]`, `output.append(tensor[i, indices[i]])`, a list
    comprehension, or `zip(tensor, indices)`) and then put back together with `torch.stack`.

    ## Why is this bad?
    Each iteration indexes one small row, so the work is dominated by Python and kernel-launch
    overhead and grows with the batch size. Effective PyTorch uses this very function as its example:
    `torch.jit.script` makes the loop only about 10% faster, while a vectorized version is about 100
    times faster ("5. 采用 TorchScript 优化运行时间", Effective PyTorch). The vectorized version printed
    there hard-codes `.cuda()` (see TL304); the fix creates the row numbers on the tensor's own device
    and does the same indexing in one operation, for indices of any shape `[B, ...]` and any trailing
    tensor shape, differentiably (`torchlint.runtime.batch_gather` does the same).

    Ragged data is not reported: rows kept in a list without `torch.stack`, or picked from a list of
    tensors (`range(len(features))` over a list). The gathered value must be known to be one tensor:
    a torch constructor, a `Tensor` annotation, a bound read from `t.size(0)` or `t.shape[0]`, or
    tuple indexing `t[i, idx[i]]`.

    ## Example
    ```python
    def batch_gather(tensor, indices):
        output = []
        for i in range(tensor.size(0)):
            output += [tensor[i][indices[i]]]
        return torch.stack(output)
    ```

    ## Use instead
    ```python
    def batch_gather(tensor, indices):
        rows = torch.arange(tensor.size(0), device=tensor.device)
        return tensor[rows.view(-1, *[1] * (indices.dim() - 1)), indices]
    ```

    ## Fix safety
    The fix replaces the list, the loop and the `torch.stack` call by one indexing operation with the
    same values, dtype, device and gradients. It is safe, except when the loop variable is read after
    the loop (unsafe: the fix no longer defines it); it adds no dependency.

    The indexing is `tensor[torch.arange(B, device=tensor.device), indices]` when the indices are
    known to be 1-D, else with the row numbers shaped `[B, 1, ...]` to broadcast against indices of any
    shape `[B, ...]` (the loop's stop `n` becomes `arange(n)` and `indices[:n]`). Indices not known to
    be a tensor may be a (nested) list, which indexing accepts too; their rank is read through
    `torch.as_tensor`. Comments above the list or the loop stay above the result. No fix is offered
    when the list has other uses, is not stacked along dim 0, or the tensor is not a plain name (it
    would be evaluated twice).

    When the project declares `torchlint[runtime]` (pyproject dependencies or optional dependencies,
    `requirements*.txt`, `setup.cfg`, `environment.yml`), the file already imports `torchlint.runtime`,
    or `runtime-fixes = "runtime"`, the fix calls `torchlint.runtime.batch_gather(tensor, indices)`
    instead (imported once, with the file's imports), which also accepts lists and checks that the
    tensor and the indices have the same number of rows. Without that declaration the runtime is never
    imported: under the `torchlint-fix` pre-commit hook torchlint is not installed where the program
    runs.

    ## Options
    - `runtime-fixes` (`"auto"` | `"runtime"` | `"torch"`, default `"auto"`): whether the fix may call
      `torchlint.runtime`; `auto` follows the project's declared dependencies.

    ## References
    - [torch.gather](https://pytorch.org/docs/stable/generated/torch.gather.html)
    - [torch.take_along_dim](https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL302"
    NAME = "batch-gather-loop"
    MESSAGE = "Batch gather written as a Python loop over rows; index once: `tensor[torch.arange(B), indices]`"
    FIX_TITLE = "Replace the loop with one indexing operation"
    TRIGGERS = ("stack",)
    OPTIONS = {
        RUNTIME_FIXES: Option(
            "auto",
            "Whether the fix calls `torchlint.runtime.batch_gather`: `auto` when the project declares "
            "`torchlint[runtime]`, `runtime` always, `torch` never (plain torch: advanced indexing).",
            choices=RUNTIME_CHOICES,
        )
    }

    VALID = [
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

def pick(features, index):
    # a list of tensors of different lengths: ragged, not a batch
    return torch.stack([features[i][index[i]] for i in range(len(features))])
"""
        ),
        Valid(
            """
import torch

def same_index(tensor, indices, j):
    output = []
    for i in range(tensor.size(0)):
        output.append(tensor[i][indices[j]])
    return torch.stack(output)
"""
        ),
        Valid(
            """
import torch

def scale_rows(tensor, weights):
    output = []
    for i in range(tensor.size(0)):
        output.append(tensor[i] * weights[i])
    return torch.stack(output)
"""
        ),
        Valid(
            """
import torch

def lookup(table, ids):
    return torch.stack([table[ids[i]] for i in range(ids.size(0))])
"""
        ),
        Valid(
            """
import torch

def by_columns(table: torch.Tensor, idx: torch.Tensor):
    return torch.stack([table[idx[i], i] for i in range(table.size(1))])
"""
        ),
        Valid(
            """
import torch

def keep_boxes(boxes: torch.Tensor, keep: torch.Tensor):
    kept = []
    for i in range(boxes.shape[0]):
        kept.append(boxes[i][keep[i]])
    return kept
"""
        ),
        Valid(
            """
import torch

def heads_out(self, x):
    return torch.stack([self.heads[i](x[i]) for i in range(len(self.heads))])
"""
        ),
    ]

    INVALID = [
        # a comment above the loop: the message quotes the loop, not the comment
        Invalid(
            """
import torch


def pick(tensor, indices):
    out = []
    # gather one value per row
    for i in range(tensor.size(0)):
        out.append(tensor[i, indices[i]])
    return torch.stack(out)
""",
            fixed="""
import torch


def pick(tensor, indices):
    # gather one value per row
    return tensor[torch.arange(tensor.size(0), device=tensor.device).view(-1, *[1] * (torch.as_tensor(indices).dim() - 1)), indices]
""",
            line=8,
            col=5,
            message="`for i in range(tensor.size(0)):",
        ),
        Invalid(
            """
import torch


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)
""",
            fixed="""
import torch


def batch_gather(tensor, indices):
    return tensor[torch.arange(tensor.size(0), device=tensor.device).view(-1, *[1] * (torch.as_tensor(indices).dim() - 1)), indices]
""",
            line=7,
            col=5,
        ),
        Invalid(
            """
import torch
from torchlint.runtime import batch_gather

def select_tokens(hidden: torch.Tensor, positions):
    picked = []
    for b in range(hidden.shape[0]):
        picked.append(hidden[b, positions[b]])
    out = torch.stack(picked, dim=0)
    return out
""",
            fixed="""
import torch
from torchlint.runtime import batch_gather

def select_tokens(hidden: torch.Tensor, positions):
    out = batch_gather(hidden, positions)
    return out
""",
        ),
        Invalid(
            """
\"\"\"Scores of the labelled classes.\"\"\"
import torch as T

def label_scores(scores, labels):
    return T.stack([scores[b][labels[b]] for b in range(scores.size(0))])
""",
            fixed="""
\"\"\"Scores of the labelled classes.\"\"\"
import torch as T

def label_scores(scores, labels):
    return scores[T.arange(scores.size(0), device=scores.device).view(-1, *[1] * (T.as_tensor(labels).dim() - 1)), labels]
""",
        ),
        Invalid(
            """
import torch

def first_n(x, idx, n):
    x = torch.as_tensor(x)
    return torch.stack([x[i][idx[i]] for i in range(n)])
""",
            fixed="""
import torch

def first_n(x, idx, n):
    x = torch.as_tensor(x)
    return x[torch.arange(n, device=x.device).view(-1, *[1] * (torch.as_tensor(idx).dim() - 1)), idx[:n]]
""",
        ),
        Invalid(
            """
import torch

def rows(emb: torch.Tensor, idx):
    out = []
    for e, j in zip(emb, idx):
        out.append(e[j])
    print(len(out))
    return torch.stack(out)
""",
        ),
        Invalid(
            """
import torch

def columns(emb: torch.Tensor, idx):
    out = []
    for e, j in zip(emb, idx):
        out.append(e[j])
    return torch.stack(out, dim=1)
""",
        ),
        Invalid(
            """
import torch

def pick(table: torch.Tensor, idx: torch.Tensor):
    return torch.stack([table[i, idx[i]] for i in range(idx.size(0))])
""",
            fixed="""
import torch

def pick(table: torch.Tensor, idx: torch.Tensor):
    return table[torch.arange(idx.size(0), device=table.device).view(-1, *[1] * (idx.dim() - 1)), idx]
""",
        ),
        # a project with torchlint[runtime]: the runtime function, imported once
        Invalid(
            """
import torch


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)
""",
            fixed="""
import torch
import torchlint.runtime


def batch_gather(tensor, indices):
    return torchlint.runtime.batch_gather(tensor, indices)
""",
            options={"runtime-fixes": "runtime"},
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        g = gather_loop(self.ctx, node)
        if g is None:
            return
        self.report(node, self.quoting(node, self._message(g)), fix=self._loop_fix(g))

    def visit_Call(self, node: cst.Call) -> None:
        g = gather_comprehension(self.ctx, node)
        if g is None:
            return
        self.report(node, self.quoting(node, self._message(g)), fix=self._comprehension_fix(g))

    # -- fixes ----------------------------------------------------------------------------------
    def _message(self, g: Gather) -> str:
        t, i = self.ctx.code(g.tensor), self.ctx.code(g.indices)
        return f"Batch gather written as a Python loop over rows; index once: `{t}[torch.arange(B), {i}]`"

    def _bounded(self, g: Gather) -> Tuple[str, str]:
        """The tensor and indices the loop reads: ``t[:n]`` and ``idx[:n]`` when it stops at ``n``."""
        code = self.ctx.code
        t, i = code(g.tensor), code(g.indices)
        if g.stop is not None:
            n = code(g.stop)
            t = f"{t}[:{n}]"
            if n not in (f"{i}.size(0)", f"{i}.shape[0]", f"len({i})", f"{i}.size()[0]"):
                i = f"{i}[:{n}]"  # not needed when the loop runs over the rows of the indices
        return t, i

    def _replacement(self, g: Gather, fix: Fix) -> Optional[Tuple[str, bool]]:
        """(the code that computes the stacked rows, whether it is only right for tensor indices)."""
        ctx = self.ctx
        t, i = self._bounded(g)
        if use_runtime(self.options[RUNTIME_FIXES], ctx.path, ctx.project) or _imports_runtime(ctx):
            callee = import_name(ctx, fix, RUNTIME, FUNCTION, near=g.node)
            return (f"{callee}({t}, {i})", False) if callee is not None else None
        # plain torch: one advanced-indexing operation, the row numbers on the tensor's device
        if dotted_name(g.tensor) is None:
            return None  # the tensor would be evaluated more than once
        torch = import_module(ctx, fix, "torch", near=g.node)
        if torch is None:
            return None
        base = ctx.code(g.tensor)
        count = ctx.code(g.stop) if g.stop is not None else f"{base}.size(0)"
        rows = f"{torch}.arange({count}, device={base}.device)"
        shape = shape_of(ctx, g.indices)
        if shape is not None and shape.rank == 1:
            return f"{base}[{rows}, {i}]", False
        if dotted_name(g.indices) is None:
            return None
        # rows shaped [B, 1, ...] to broadcast against indices of any shape [B, ...] (a tensor, or a
        # nested list of ints, which indexing accepts too)
        known = shape is not None or _tensor_param(ctx, g.indices)
        rank = f"{ctx.code(g.indices)}.dim()" if known else f"{torch}.as_tensor({ctx.code(g.indices)}).dim()"
        rows += f".view(-1, *[1] * ({rank} - 1))"
        return f"{base}[{rows}, {i}]", False

    def _loop_fix(self, g: Gather) -> Optional[Fix]:
        if g.init is None or g.stack is None:
            return None
        loop = g.node
        assert isinstance(loop, cst.For)
        var = loop.target.value if isinstance(loop.target, cst.Name) else None
        unsafe = var is not None and used_outside(self.ctx, loop, var)
        fix = self.make_fix()
        made = self._replacement(g, fix)
        if made is None:
            return None
        code, needs_tensor = made
        fix.applicability = UNSAFE if unsafe or needs_tensor else SAFE
        # comments above the list and the loop introduced the computation: they stay above its result
        init_stmt = self.ctx.statement_of(g.init) or g.init
        stack_stmt = self._statement_holding(loop, g.stack)
        lines = [
            *getattr(init_stmt, "leading_lines", ()),
            *(line for line in getattr(loop, "leading_lines", ()) if line.comment is not None),
        ]
        fix.remove(g.init).remove(loop)
        new = self.ctx.parse_expression(code)
        if stack_stmt is not None and any(line.comment is not None for line in lines):
            moved = stack_stmt.deep_replace(g.stack, new)
            fix.replace(stack_stmt, moved.with_changes(leading_lines=lines + list(stack_stmt.leading_lines)))
        else:
            fix.replace(g.stack, new)
        return fix

    def _statement_holding(self, loop: cst.For, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement after ``loop`` in its block that holds ``node`` (not walked yet at the loop's end)."""
        block = self.ctx.block_of(loop) or ()
        after = False
        for stmt in block:
            if stmt is loop:
                after = True
            elif after and any(n is node for n in iter_nodes(stmt)):
                return stmt
        return None

    def _comprehension_fix(self, g: Gather) -> Optional[Fix]:
        if g.stack is None:
            return None
        fix = self.make_fix()
        made = self._replacement(g, fix)
        if made is None:
            return None
        code, needs_tensor = made
        fix.applicability = UNSAFE if needs_tensor else SAFE
        new = self.ctx.parse_expression(code)
        return fix.replace(g.stack, new.with_changes(lpar=g.stack.lpar, rpar=g.stack.rpar))


def _imports_runtime(ctx: FileContext) -> bool:
    """The file already imports torchlint.runtime: the project runs with it installed."""
    return any(
        imp == RUNTIME or imp.startswith(RUNTIME + ".")
        for b in ctx.names.module_scope.bindings.values()
        for imp in b.imports
    )


def _tensor_param(ctx: FileContext, node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and annotated_tensor(ctx, node)
