from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import callee_name
from torchlint.analysis.names import dotted_name
from torchlint.analysis.numerics import (
    ALL,
    CrossEntropy,
    Flow,
    IndexedNll,
    cross_entropy_dim_ok,
    first_statement_after_imports,
    match_cross_entropy,
    match_indexed_nll,
    module_ref,
    movable,
    removable_assignment,
    same_code,
    same_dim,
)
from torchlint.rule import Fix, Invalid, LintRule

_RUNTIME = frozenset(
    {"torchlint.runtime.softmax_cross_entropy", "torchlint.runtime.cross_entropy.softmax_cross_entropy"}
)
INDEX_MESSAGE = (
    "Negative log-likelihood taken from `log(softmax(x))` is `inf` when a probability underflows; "
    "use `F.cross_entropy(x, y)`"
)


class SoftmaxCrossEntropyByHand(LintRule):
    """
    ## What it does
    Finds softmax cross-entropy written by hand: `-sum(labels * log(softmax(logits)))` in its spellings
    (`-torch.sum(...)`, `-(labels * log_p).sum(dim).mean()`, `torch.sum(-labels * log_p)`), where the
    softmax is a torch softmax, a hand-written one, or a function of the same module whose body computes
    one, and the log may be held in a variable. Also finds the class-index form
    `-log(softmax(x))[range(n), y]` / `-torch.log(p[torch.arange(n), y])`.

    ## Why is this bad?
    When a logit is far below the largest, its softmax probability underflows to exactly 0, `log(0)`
    is `-inf`, and the loss is `inf` (or `nan` where the label is 0: `0 * -inf`). This is the Effective
    PyTorch notes' second example: `unstable_softmax_cross_entropy` returns `inf` for logits
    `[1000., 0.]` and labels `[.5, .5]`, while the stable version, which normalises with `logsumexp`,
    returns 500.0 with gradient `[0.5, -0.5]` (Effective PyTorch, section 7). The cookbooks' label
    smoothing uses `log_softmax` for the same reason (PyTorch Cookbook, Zhang Hao, 2019, the cookbook's 2024 revision).

    `torchlint.runtime.softmax_cross_entropy(labels, logits, dim)` computes the cookbook's stable
    version for any finite logits, float16 and bfloat16 included, with soft labels and any dim.
    With class indices, `F.cross_entropy` is the standard, fused form.

    `-sum(labels * log_softmax(x))` is already stable and is not reported.

    ## Example
    ```python
    def unstable_softmax_cross_entropy(labels, logits):
        logits = torch.log(softmax(logits))
        return -torch.sum(labels * logits)
    ```

    ## Use instead
    ```python
    from torchlint.runtime import softmax_cross_entropy

    def unstable_softmax_cross_entropy(labels, logits):
        return softmax_cross_entropy(labels, logits, dim=None)
    ```

    ## Fix safety
    The fix passes the softmax's own dim and keeps the reduction: a sum over everything becomes
    `reduction="sum"` (the runtime's default, which sums the per-position losses: exactly the original
    expression), a sum over the softmax dim becomes `reduction="none"`, and any `.mean()` or `/ n`
    outside stays where it was. When the softmax itself ran over every element (a hand-written
    `exp / exp.sum()` with no dim), the fix passes `dim=None`, which the runtime treats as "over all
    elements". The import `from torchlint.runtime import softmax_cross_entropy` is added (the fixed code
    needs `torchlint[runtime]` installed). The variable that held the log-probabilities is deleted when
    nothing else reads it. The result has the logits' dtype (the original took the wider of the labels'
    and the logits' dtypes; float16/bfloat16 logits are computed in float32 inside). The fix is safe; it
    is not offered when the sum runs over another dim than
    the softmax, when the softmax's dim is implicit or computed, or when a name in the logits is
    reassigned between the softmax and the loss.

    For the class-index form (a softmax over dim 1 or -1 of a 2-D tensor, which the two-index pattern
    implies) the fix is `F.cross_entropy(x, y, reduction="none")`; it is safe when the
    row index is `range`/`arange` of the batch size spelled from the labels or the logits
    (`len(y)`, `y.size(0)`, `x.shape[0]`), and unsafe otherwise (the range might cover fewer rows).

    ## Options
    None.

    ## References
    - [torch.nn.functional.cross_entropy](https://pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL206"
    NAME = "softmax-cross-entropy-by-hand"
    MESSAGE = (
        "Hand-written softmax cross-entropy is `inf` when a probability underflows to 0; "
        "use `torchlint.runtime.softmax_cross_entropy`"
    )
    FIX_TITLE = "Replace with `softmax_cross_entropy`"
    TRIGGERS = ("log",)

    VALID = [
        # the cookbook's stable version
        """
import torch

def softmax_cross_entropy(labels, logits, dim=-1):
    scaled_logits = logits - torch.max(logits)
    normalized_logits = scaled_logits - torch.logsumexp(scaled_logits, dim)
    return -torch.sum(labels * normalized_logits)
""",
        # label smoothing with log_softmax (PyTorch Cookbook)
        """
import torch

def smoothed_loss(score, smoothed_labels, N):
    log_prob = torch.nn.functional.log_softmax(score, dim=1)
    return -torch.sum(log_prob * smoothed_labels) / N
""",
        # eps keeps the log finite: not reported here
        """
import torch

def xent(labels, logits):
    probs = torch.softmax(logits, dim=-1)
    return -torch.sum(labels * torch.log(probs + 1e-8), dim=-1)
""",
        # numpy look-alike
        """
import numpy as np

def xent(labels, logits):
    e = np.exp(logits - logits.max())
    return -np.sum(labels * np.log(e / e.sum()))
""",
        # not negated: not a loss
        """
import torch

def score(labels, logits):
    return torch.sum(labels * torch.log_softmax(logits, -1))
""",
        """
import torch.nn.functional as F

def loss(logits, y):
    return F.cross_entropy(logits, y)
""",
    ]

    INVALID = [
        # the cookbook's example, with its own (max-shifted) softmax over every element
        Invalid(
            """
import torch


def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)


def unstable_softmax_cross_entropy(labels, logits):
    logits = torch.log(softmax(logits))
    return -torch.sum(labels * logits)
""",
            fixed="""
import torch
from torchlint.runtime import softmax_cross_entropy


def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)


def unstable_softmax_cross_entropy(labels, logits):
    return softmax_cross_entropy(labels, logits, dim=None)
""",
            line=12,
            col=12,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return -(F.softmax(teacher, dim=-1) * torch.log(p)).sum(dim=-1).mean()
""",
            fixed="""
import torch
import torch.nn.functional as F
from torchlint.runtime import softmax_cross_entropy

def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return softmax_cross_entropy(F.softmax(teacher, dim=-1), student, dim=-1, reduction="none").mean()
""",
        ),
        Invalid(
            """
\"\"\"Losses.\"\"\"
import torch

def xent(labels, logits, softmax_cross_entropy=None):
    return torch.sum(-labels * logits.softmax(1).log()) / labels.shape[0]
""",
            fixed="""
\"\"\"Losses.\"\"\"
import torch
import torchlint.runtime

def xent(labels, logits, softmax_cross_entropy=None):
    return torchlint.runtime.softmax_cross_entropy(labels, logits, dim=1) / labels.shape[0]
""",
        ),
        # class indices: F.cross_entropy
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, y):
    log_probs = torch.log(F.softmax(logits, dim=1))
    return -log_probs[torch.arange(y.size(0)), y].mean()
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, y):
    return F.cross_entropy(logits, y, reduction="none").mean()
""",
            message="F.cross_entropy",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def nll(logits, y, n):
    p = logits.softmax(-1)
    return -torch.log(p[range(n), y]).sum()
""",
            fixed="""
import torch
import torch.nn.functional as F

def nll(logits, y, n):
    p = logits.softmax(-1)
    return F.cross_entropy(logits, y, reduction="none").sum()
""",
            unsafe=True,
        ),
        # the sum runs over another dim than the softmax: reported, no fix
        Invalid(
            """
import torch

def odd(labels, logits):
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=1)), dim=0)
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        name = callee_name(node)
        if name == "sum":
            flow = Flow(self.ctx)
            ce = match_cross_entropy(flow, node)
            if ce is not None:
                self.report(ce.node, fix=self._fix(flow, ce))
        elif name == "log":
            self._indexed(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._indexed(node)

    # -- soft labels -----------------------------------------------------------------------------
    def _fix(self, flow: Flow, ce: CrossEntropy) -> Optional[Fix]:
        ctx = self.ctx
        if not cross_entropy_dim_ok(ce, ctx):
            return None
        sm = ce.softmax
        assert ce.log.operand is not None
        sm_hopped = flow.value(ce.log.operand, 3) is not ce.log.operand
        source = ce.log_source if ce.log_source is not None else (sm.node if sm_hopped else None)
        removed = removable_assignment(ctx, ce.log_source, [ce.node]) if ce.log_source is not None else None
        assign = ctx.parent(ce.log_source) if removed is not None and ce.log_source is not None else None
        if not movable(flow, sm.operand, source, assign if isinstance(assign, cst.Assign) else None):
            return None
        callee = self._runtime_callee()
        if callee is None:
            return None
        name, import_line = callee
        args = [ctx.code(ce.labels), ctx.code(sm.operand), "dim=None" if sm.dim is ALL else f"dim={sm.dim}"]
        if ce.reduction == "none":
            args.append('reduction="none"')
        call = ctx.parse_expression(f"{name}({', '.join(args)})")
        fix = self.make_fix(f"Replace with `{name}`")
        if ce.negated_outside:
            outer = ce.node
            assert isinstance(outer, cst.UnaryOperation)
            inner = outer.expression
            new = call if inner is ce.inner else inner.deep_replace(ce.inner, call)
            fix.replace(outer, new)  # type: ignore[arg-type]
        else:
            fix.replace(ce.inner, call)
        if removed is not None:
            fix.remove(removed)
        if import_line is not None and not self._add_import(fix, import_line, ce.node):
            return None
        return fix

    def _runtime_callee(self) -> Optional[Tuple[str, Optional[str]]]:
        ctx = self.ctx
        local = cst.Name("softmax_cross_entropy")
        if not ctx.names.qualified_names(local).isdisjoint(_RUNTIME):
            return "softmax_cross_entropy", None
        ref = module_ref(ctx, "torchlint.runtime")
        if ref is not None:
            return f"{ref}.softmax_cross_entropy", None
        taken = ctx.names.lookup("softmax_cross_entropy") is not None or "softmax_cross_entropy" in ctx.functions()
        if not taken:
            return "softmax_cross_entropy", "from torchlint.runtime import softmax_cross_entropy"
        if ctx.names.lookup("torchlint") is not None:
            return None
        return "torchlint.runtime.softmax_cross_entropy", "import torchlint.runtime"

    def _add_import(self, fix: Fix, line: str, near: cst.CSTNode) -> bool:
        ctx = self.ctx
        anchor, after = first_statement_after_imports(ctx)
        if anchor is None or near is anchor or ctx.is_inside(near, anchor):
            return False
        stmt = ctx.parse_statement(line + "\n")
        if after:
            fix.insert_after(anchor, stmt)
        else:
            fix.insert_before(anchor, stmt)
        return True

    # -- class indices ---------------------------------------------------------------------------
    def _indexed(self, node: cst.BaseExpression) -> None:
        flow = Flow(self.ctx)
        nll = match_indexed_nll(flow, node)
        if nll is None:
            return
        self.report(nll.node, INDEX_MESSAGE, fix=self._index_fix(flow, nll))

    def _index_fix(self, flow: Flow, nll: IndexedNll) -> Optional[Fix]:
        ctx = self.ctx
        sm = nll.softmax
        if not (same_dim(sm.dim, "1") or same_dim(sm.dim, "-1")):
            return None
        ref = module_ref(ctx, "torch.nn.functional")
        if ref is None:
            return None
        log_source = nll.log.node if isinstance(nll.inner, cst.Subscript) and nll.log.node is not getattr(
            nll.inner, "value", None
        ) else None
        sm_source = sm.node if sm.node is not nll.log.operand else None
        source = log_source or sm_source
        removed = removable_assignment(ctx, log_source, [nll.node]) if log_source is not None else None
        assign = ctx.parent(log_source) if removed is not None and log_source is not None else None
        if not movable(flow, sm.operand, source, assign if isinstance(assign, cst.Assign) else None):
            return None
        if not movable(flow, nll.labels, None):
            return None
        call = ctx.parse_expression(
            f'{ref}.cross_entropy({ctx.code(sm.operand)}, {ctx.code(nll.labels)}, reduction="none")'
        )
        safe = self._covers_batch(flow, nll.rows, [nll.labels, sm.operand])
        fix = self.make_fix("Replace with `F.cross_entropy`", unsafe=not safe)
        outer = nll.node
        assert isinstance(outer, cst.UnaryOperation)
        inner = outer.expression
        fix.replace(outer, call if inner is nll.inner else inner.deep_replace(nll.inner, call))  # type: ignore
        if removed is not None:
            fix.remove(removed)
        return fix

    def _covers_batch(self, flow: Flow, rows: cst.BaseExpression, tensors: List[cst.BaseExpression]) -> bool:
        """``range(len(y))``, ``torch.arange(y.size(0))``, ``arange(x.shape[0])``."""
        ctx = self.ctx
        if not isinstance(rows, cst.Call) or not rows.args:
            return False
        n = flow.value(rows.args[0].value, 1)
        base: Optional[cst.BaseExpression] = None
        if isinstance(n, cst.Call) and callee_name(n) == "len" and n.args:
            base = n.args[0].value
        elif isinstance(n, cst.Call) and callee_name(n) == "size" and isinstance(n.func, cst.Attribute):
            if n.args and n.args[0].value is not None and ctx.code(n.args[0].value) == "0":
                base = n.func.value
        elif isinstance(n, cst.Subscript) and isinstance(n.value, cst.Attribute) and n.value.attr.value == "shape":
            if len(n.slice) == 1 and ctx.code(n.slice[0]).strip() == "0":
                base = n.value.value
        if base is None or dotted_name(base) is None:
            return False
        return any(same_code(ctx, base, t) for t in tensors)
