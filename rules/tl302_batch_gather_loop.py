from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.loops import Gather, gather_comprehension, gather_loop, used_outside
from torchlint.rule import Fix, Invalid, LintRule, Valid

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
    there hard-codes `.cuda()` (see TL304), so the fix points to `torchlint.runtime.batch_gather`, which
    does the same indexing in one operation on the tensor's own device, for indices of any shape
    `[B, ...]` and any trailing tensor shape, and is differentiable.

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
    import torchlint.runtime

    def batch_gather(tensor, indices):
        return torchlint.runtime.batch_gather(tensor, indices)
    ```

    ## Fix safety
    The fix removes the list, the loop and the `torch.stack` call and calls
    `torchlint.runtime.batch_gather(tensor, indices)` (on `tensor[:n]` and `indices[:n]` when the loop
    stops at `n` rather than at the batch size), importing `torchlint.runtime` when needed. The result
    has the same values, dtype, device and gradients. It is safe, except when the loop variable is read
    after the loop (unsafe: the fix no longer defines it). `batch_gather` checks that the tensor and the
    indices have the same number of rows, where the loop would silently ignore extra index rows. No
    fix is offered when the list has other uses or is not stacked along dim 0.

    ## Options
    None.

    ## References
    - [torch.gather](https://pytorch.org/docs/stable/generated/torch.gather.html)
    - [torch.take_along_dim](https://pytorch.org/docs/stable/generated/torch.take_along_dim.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL302"
    NAME = "batch-gather-loop"
    MESSAGE = "Batch gather written as a Python loop over rows; use `torchlint.runtime.batch_gather(tensor, indices)`"
    FIX_TITLE = "Replace the loop with `torchlint.runtime.batch_gather`"
    TRIGGERS = ("stack",)

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
import torchlint.runtime

def label_scores(scores, labels):
    return torchlint.runtime.batch_gather(scores, labels)
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
import torchlint.runtime

def first_n(x, idx, n):
    x = torch.as_tensor(x)
    return torchlint.runtime.batch_gather(x[:n], idx[:n])
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
import torchlint.runtime

def pick(table: torch.Tensor, idx: torch.Tensor):
    return torchlint.runtime.batch_gather(table[:idx.size(0)], idx)
""",
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        g = gather_loop(self.ctx, node)
        if g is None:
            return
        self.report(node, self._message(g), fix=self._loop_fix(g))

    def visit_Call(self, node: cst.Call) -> None:
        g = gather_comprehension(self.ctx, node)
        if g is None:
            return
        self.report(node, self._message(g), fix=self._comprehension_fix(g))

    # -- fixes ----------------------------------------------------------------------------------
    def _message(self, g: Gather) -> str:
        return (
            "Batch gather written as a Python loop over rows; use "
            f"`torchlint.runtime.batch_gather({self.ctx.code(g.tensor)}, {self.ctx.code(g.indices)})`"
        )

    def _call_code(self, g: Gather, callee: str) -> str:
        code = self.ctx.code
        t, i = code(g.tensor), code(g.indices)
        if g.stop is not None:
            n = code(g.stop)
            t = f"{t}[:{n}]"
            if n not in (f"{i}.size(0)", f"{i}.shape[0]", f"len({i})", f"{i}.size()[0]"):
                i = f"{i}[:{n}]"  # not needed when the loop runs over the rows of the indices
        return f"{callee}({t}, {i})"

    def _loop_fix(self, g: Gather) -> Optional[Fix]:
        if g.init is None or g.stack is None:
            return None
        loop = g.node
        assert isinstance(loop, cst.For)
        var = loop.target.value if isinstance(loop.target, cst.Name) else None
        unsafe = var is not None and used_outside(self.ctx, loop, var)
        fix = self.make_fix(unsafe=unsafe or None)
        callee = _runtime_callee(self.ctx, fix)
        if callee is None:
            return None
        fix.remove(g.init).remove(loop)
        fix.replace(g.stack, self.ctx.parse_expression(self._call_code(g, callee)))
        return fix

    def _comprehension_fix(self, g: Gather) -> Optional[Fix]:
        fix = self.make_fix()
        callee = _runtime_callee(self.ctx, fix)
        if callee is None or g.stack is None:
            return None
        new = self.ctx.parse_expression(self._call_code(g, callee))
        return fix.replace(g.stack, new.with_changes(lpar=g.stack.lpar, rpar=g.stack.rpar))


def _runtime_callee(ctx: FileContext, fix: Fix) -> Optional[str]:
    """How to spell `torchlint.runtime.batch_gather` here; adds `import torchlint.runtime` to ``fix``
    when the module does not import it yet."""
    b = ctx.names.lookup(FUNCTION)
    if b is not None and b.imports == [f"{RUNTIME}.{FUNCTION}"] and not b.assigned:
        return FUNCTION
    spelled, anchor = _module_import(ctx)
    if spelled is not None:
        return f"{spelled}.{FUNCTION}"
    top = ctx.names.lookup("torchlint")
    if top is not None and top.assigned:
        return None  # `torchlint` names something else here
    stmt = ctx.parse_statement(f"import {RUNTIME}\n")
    if anchor is not None:
        fix.insert_after(anchor, stmt)
    else:
        first = ctx.module.body[0] if ctx.module.body else None
        if first is None:
            return None
        fix.insert_before(first, stmt)
    return f"{RUNTIME}.{FUNCTION}"


def _module_import(ctx: FileContext) -> Tuple[Optional[str], Optional[cst.CSTNode]]:
    """(how the module already spells `torchlint.runtime`, or None; the statement to insert a new
    import after: the last import of the leading import block, or the docstring)."""
    anchor: Optional[cst.CSTNode] = None
    spelled: Optional[str] = None
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            break
        small = stmt.body[0] if stmt.body else None
        if isinstance(small, cst.Import):
            anchor = stmt
            for alias in small.names:
                name = ctx.code(alias.name).strip()
                if name == RUNTIME:
                    if alias.asname is None:
                        spelled = RUNTIME
                    elif isinstance(alias.asname.name, cst.Name):
                        spelled = alias.asname.name.value
        elif isinstance(small, cst.ImportFrom):
            anchor = stmt
            mod = ctx.code(small.module).strip() if small.module is not None else ""
            if mod == "torchlint" and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    if ctx.code(alias.name).strip() == "runtime":
                        asname = alias.asname.name if alias.asname is not None else None
                        spelled = asname.value if isinstance(asname, cst.Name) else "runtime"
        elif (
            isinstance(small, cst.Expr)
            and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
            and anchor is None
        ):
            anchor = stmt  # the module docstring
        else:
            break
    return spelled, anchor
