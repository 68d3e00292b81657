from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.analysis.context import canonical_keyword
from torchlint.families.numerics.patterns import (
    followed,
    is_log_call,
    ALL,
    atom_code,
    dim_code,
    is_binop,
    is_shifted,
    is_false_or_absent,
    is_true,
    movable,
    torch_call_code,
)
from torchlint.analysis.ops import OpUse, exp_use, log_use, mean_use, op_arg, sum_use
from torchlint.families.shapes.shapes import shape_of
from torchlint.rule import Fix, Invalid, LintRule, Valid


def _reference(expr: cst.BaseExpression) -> bool:
    """A name or an attribute of one (``x``, ``self.scores``): reading it again reads the same value."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


class LogSumExpByHand(LintRule):
    """
    ## What it does
    Finds `log(sum(exp(x)))` written out (`torch.log(torch.sum(torch.exp(x), dim))`,
    `x.exp().sum(-1).log()`, or through variables), and `log(exp(a) + exp(b))`, where the exponent is
    not shifted by its maximum first. Also sums of exponentials added before the log
    (`log(sum(exp(a)) + sum(exp(b)))`) and such a sum with an eps added (`log(sum(exp(x)) + 1e-8)`: the eps
    keeps the log away from 0, not `exp` from overflowing), reported without a fix.

    ## Why is this bad?
    `exp(x)` overflows float32 above about 88.7, so the sum is `inf` and the log is `inf`, although the
    true value is finite (about `max(x)`); when every exponent underflows, the log is `-inf`. The
    Effective PyTorch notes make the point for softmax cross-entropy and use `torch.logsumexp` in the
    stable version (Effective PyTorch, section 7). `torch.logsumexp` subtracts the maximum internally;
    `torch.logaddexp` does the same for two terms.

    Code that subtracts the maximum itself (`m + torch.log(torch.sum(torch.exp(x - m)))`) is stable and
    not reported.

    ## Example
    ```python
    def log_partition(scores):
        return torch.log(torch.sum(torch.exp(scores), dim=-1))
    ```

    ## Use instead
    ```python
    def log_partition(scores):
        return torch.logsumexp(scores, dim=-1)
    ```

    ## Fix safety
    Every argument of the rewritten call keeps its meaning: the sum's `dim` (by keyword or by
    position) and `keepdim` (`True`, or a flag passed on as it is) carry over, so the result has the
    same shape and dtype. A sum over every element without `keepdim` becomes
    `torch.logsumexp(x.flatten(), dim=0)`, which also reduces over everything to a 0-d tensor; with
    `keepdim=True` (`torch.sum(torch.exp(x), None, keepdim=True)`, every dimension kept as 1) it becomes
    `torch.logsumexp(x, dim=tuple(range(x.dim())), keepdim=True)`, which keeps them too (for an expression
    rather than a name, `dim=(0, 1)` with its dims spelled out where the shape analysis knows its rank). It is
    safe: the values agree wherever the original was finite. No fix is offered when an argument has no
    counterpart in `logsumexp` (the sum's `dtype=` or `out=`, an `out=` of the log or the exponent,
    unpacked `*args`), for a sum over every element with a `keepdim` flag that may be either (the
    shapes differ), or with `keepdim=True` of an exponent that is not a plain name and whose rank is not
    known (`x` would be spelled twice), or when a name in `x` is reassigned between the exponent and the log.

    ## Options
    None.

    ## References
    - [torch.logsumexp](https://pytorch.org/docs/stable/generated/torch.logsumexp.html)
    - [torch.logaddexp](https://pytorch.org/docs/stable/generated/torch.logaddexp.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL203"
    NAME = "log-sum-exp-by-hand"
    MESSAGE = "`log(sum(exp(x)))` overflows for large inputs; use `torch.logsumexp(x, dim)`"
    FIX_TITLE = "Replace with `torch.logsumexp`"
    TRIGGERS = ("exp",)

    VALID = [
        """
import torch

def log_partition(scores):
    m = scores.max(dim=-1, keepdim=True).values
    return m.squeeze(-1) + torch.log(torch.sum(torch.exp(scores - m), dim=-1))
""",
        """
import torch

def log_partition(scores):
    return torch.logsumexp(scores, dim=-1)
""",
        """
import numpy as np
import torch

def lse(x):
    return np.log(np.sum(np.exp(x)))
""",
        """
import math

def lse(values):
    return math.log(sum(math.exp(v) for v in values))
""",
        # log of a sum of something else
        """
import torch

def f(x):
    return torch.log(torch.sum(x ** 2, dim=1))
""",
        # the exponent is a log-probability: bounded above by 0
        """
import torch
import torch.nn.functional as F

def total(x):
    return torch.log(torch.sum(torch.exp(F.log_softmax(x, dim=-1)), dim=-1))
""",
        Valid(
            """
import torch

def log_mean_exp(x):
    m = x.amax(dim=1, keepdim=True)
    return torch.log(torch.exp(x - m).mean(dim=1)) + m.squeeze(1)
"""
        ),
        Valid(
            """
import torch

def mixture(a, b, c):
    return torch.log(torch.exp(a) + torch.exp(b) + c)
"""
        ),
        # the maximum unpacked from the (values, indices) pair `max` along a dimension returns
        Valid(
            """
import torch

def log_normaliser(scores, dim):
    top, _ = torch.max(scores, dim=dim, keepdim=True)
    return top + (scores - top).exp().sum(dim=dim, keepdim=True).log()


def log_normaliser_method(scores):
    top, where = scores.max(1, keepdim=True)
    return top + torch.log(torch.sum(torch.exp(scores - top), dim=1, keepdim=True))
"""
        ),
        Valid(
            """
import torch


def log_partition(real_scores, fake_scores):
    m = torch.max(real_scores.max(), fake_scores.max())
    z = torch.sum(torch.exp(real_scores - m)) + torch.sum(torch.exp(fake_scores - m))
    return m + torch.log(z + 1e-8)  # shifted by the maximum first: no overflow
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def log_partition(scores):
    return torch.log(torch.sum(torch.exp(scores), dim=-1))
""",
            fixed="""
import torch

def log_partition(scores):
    return torch.logsumexp(scores, dim=-1)
""",
            line=5,
            col=12,
        ),
        Invalid(
            """
import torch

def f(x):
    return x.exp().sum(1, keepdim=True).log()
""",
            fixed="""
import torch

def f(x):
    return x.logsumexp(dim=1, keepdim=True)
""",
        ),
        Invalid(
            """
import torch

def f(a, b):
    s = torch.exp(a + b).sum()
    return torch.log(s)
""",
            fixed="""
import torch

def f(a, b):
    s = torch.exp(a + b).sum()
    return torch.logsumexp((a + b).flatten(), dim=0)
""",
        ),
        Invalid(
            """
import torch

def f(a, b):
    return torch.log(torch.exp(a) + torch.exp(b))
""",
            fixed="""
import torch

def f(a, b):
    return torch.logaddexp(a, b)
""",
        ),
        Invalid(
            """
import torch

def log_mean_exp(x):
    return torch.log(torch.exp(x).mean(dim=1))
""",
            message="math.log(n)",
        ),
        Invalid(
            """
import torch

def iwae_bound(log_w):
    w = log_w.exp()
    return w.mean(0).log()
""",
            message="math.log(n)",
        ),
        Invalid(
            """
import torch

def free_energy(a, b, c):
    return torch.log(torch.exp(a) + torch.exp(b) + torch.exp(c))
""",
            message="torch.stack",
        ),
        Invalid(
            """
import torch

class Energy:
    def _log(self, t):
        return t.log()

    def _exp(self, t):
        return torch.exp(t)

    def free_energy(self, x):
        return self._log(self._exp(x).sum(dim=-1))
""",
            fixed="""
import torch

class Energy:
    def _log(self, t):
        return t.log()

    def _exp(self, t):
        return torch.exp(t)

    def free_energy(self, x):
        return torch.logsumexp(x, dim=-1)
""",
        ),
        # over every element, keeping every dimension as 1: logsumexp over a tuple of all of them
        Invalid(
            """
import torch

def log_normaliser(energies, cfg):
    return torch.log(torch.sum(torch.exp(energies), None, keepdim=True)), cfg.scores.exp().sum(
        dim=None, keepdim=True).log()
""",
            fixed="""
import torch

def log_normaliser(energies, cfg):
    return torch.logsumexp(energies, dim=tuple(range(energies.dim())), keepdim=True), cfg.scores.logsumexp(dim=tuple(range(cfg.scores.dim())), keepdim=True)
""",
            count=2,
        ),
        # the same of a sum: no fix (`a + b` would be spelled twice)
        Invalid(
            """
import torch

def log_normaliser(a, b):
    return torch.log(torch.sum(torch.exp(a + b), None, keepdim=True))
""",
        ),
            # over every element with keepdim=True of an expression: its dims spelled out where its rank is known
        Invalid(
            """
import torch

def log_normaliser(x, y):
    z = x.view(3, 4)
    return torch.log(torch.sum(torch.exp(z - y.view(3, 4)), None, keepdim=True))
""",
            fixed="""
import torch

def log_normaliser(x, y):
    z = x.view(3, 4)
    return torch.logsumexp(z - y.view(3, 4), dim=(0, 1), keepdim=True)
""",
        ),
        # shifted by the indices of the maximum, not by the maximum: still overflows
        Invalid(
            """
import torch

def shifted_by_the_index(scores):
    _, top = torch.max(scores, dim=1, keepdim=True)
    return torch.log(torch.sum(torch.exp(scores - top), dim=1))
""",
            fixed="""
import torch

def shifted_by_the_index(scores):
    _, top = torch.max(scores, dim=1, keepdim=True)
    return torch.logsumexp(scores - top, dim=1)
""",
            line=6,
            col=12,
        ),
        # numpy's keyword spellings, which torch's reductions accept too
        Invalid(
            """
import torch

def log_partition(energies):
    return torch.log(torch.sum(torch.exp(-energies), axis=1, keepdims=True))
""",
            fixed="""
import torch

def log_partition(energies):
    return torch.logsumexp(-energies, dim=1, keepdim=True)
""",
            line=5,
        ),
        # two sums of exponentials added before the log
        Invalid(
            """
import torch

D = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))


def step(real, fake):
    Z = torch.sum(torch.exp(D(real))) + torch.sum(torch.exp(D(fake)))
    return torch.log(Z)
""",
            line=9,
            message='of a sum of exponentials overflows',
        ),
        # an eps inside the log guards against 0, not against overflow
        Invalid(
            """
import torch

D = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1))


def step(real):
    s_real = D(real)
    Z = torch.sum(torch.exp(s_real))
    return torch.log(Z + 1e-8)
""",
            line=10,
            message='an eps added to it does not stop',
        ),
    ]

    def leave_Call(self, original_node: cst.Call) -> None:
        node = original_node
        if not is_log_call(self.ctx, node):
            return
        ctx = self.ctx
        log = log_use(ctx, node)
        if log is None or log.operand is None:
            return
        inner = followed(self.ctx, log.operand, 2)
        hopped = inner is not log.operand
        if is_binop(inner, cst.Add):
            self._logaddexp(node, log, inner, hopped)  # type: ignore[arg-type]
            return
        s = sum_use(ctx, inner)
        if s is None:
            self._log_mean_exp(node, inner)
            return
        if s.operand is None:
            return
        summed = followed(self.ctx, s.operand, 2)
        hopped = hopped or summed is not s.operand
        e = exp_use(ctx, summed)
        if e is None or e.operand is None or is_shifted(self.ctx, e.operand):
            return
        self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node, log, s, e, hopped))

    def _fix(self, node: cst.Call, log: OpUse, s: OpUse, e: OpUse, hopped: bool) -> Optional[Fix]:
        ctx = self.ctx
        assert e.operand is not None
        if not movable(self.ctx, e.operand, e.node if hopped else None, node):
            return None
        if any(a.keyword is not None and canonical_keyword(a.keyword.value) not in ("dim", "keepdim", "input")
               for a in s.node.args):
            return None  # `dtype=`, `out=`: logsumexp has no such argument
        positional = sum(1 for a in s.node.args if a.keyword is None and not a.star)
        if positional > (3 if s.kind == "function" else 2) or any(a.star for a in s.node.args):
            return None  # an argument whose meaning is unknown
        for use in (log, e):  # `torch.log(x, out=y)`, `torch.exp(x, out=y)`: the output would go elsewhere
            if use.kind != "layer" and len(use.node.args) != (0 if use.kind == "method" else 1):
                return None
        dim = dim_code(ctx, op_arg(s, 1, "dim"))
        keepdim = op_arg(s, 2, "keepdim")
        template = log if log.kind == "function" else e if e.kind == "function" else log
        if dim is ALL and is_true(keepdim):
            # `sum(exp(x), None, keepdim=True)` keeps every dimension as 1: logsumexp over a tuple of all of
            # them does too (spelling `x` twice for its rank: only a plain reference, read once more)
            if _reference(e.operand):
                dims = f"dim=tuple(range({atom_code(ctx, e.operand)}.dim()))"
            else:
                # `x` spelled once: its dims spelled out, where the shape analysis knows its rank
                shape = shape_of(ctx, e.operand)
                if shape is None or shape.rank is None or shape.rank < 1:
                    return None
                dims = "dim=(" + ", ".join(str(k) for k in range(shape.rank)) + ("," if shape.rank == 1 else "") + ")"
            code = torch_call_code(ctx, template, "logsumexp", e.operand, [dims, "keepdim=True"])
            return self.make_fix().replace(node, ctx.parse_expression(code))
        if dim is ALL:
            if not is_false_or_absent(keepdim):
                return None  # a keepdim flag that may be either: the shapes of the two forms differ
            flat = ctx.parse_expression(f"{atom_code(ctx, e.operand)}.flatten()")
            code = torch_call_code(ctx, template, "logsumexp", flat, ["dim=0"])
        else:
            args: List[str] = [f"dim={dim}"]
            if is_true(keepdim):
                args.append("keepdim=True")
            elif keepdim is not None and not is_false_or_absent(keepdim):
                args.append(f"keepdim={ctx.code(keepdim.value)}")  # a flag: passed on as it is
            code = torch_call_code(ctx, template, "logsumexp", e.operand, args)
        return self.make_fix().replace(node, ctx.parse_expression(code))

    def _log_mean_exp(self, node: cst.Call, inner: cst.BaseExpression) -> None:
        """``log(exp(x).mean(dim))``: the same overflow; ``logsumexp(x, dim) - log(n)`` is the stable form
        (reported without a fix: ``n`` is a size the code may not spell out)."""
        ctx = self.ctx
        m = mean_use(ctx, inner)
        if m is None or m.operand is None:
            return
        e = exp_use(ctx, followed(self.ctx, m.operand, 2))
        if e is None or e.operand is None or is_shifted(self.ctx, e.operand):
            return
        self.report(
            node,
            self.quoting(node, "`log(mean(exp(x)))` overflows for large inputs; use `torch.logsumexp(x, dim) - "
                               "math.log(n)` (`n` the size of the averaged dimension)"),
        )

    def _exp_terms(self, expr: cst.BaseExpression, out: List[OpUse], depth: int = 0) -> bool:
        """Flatten ``exp(a) + exp(b) + exp(c)`` into its exp terms."""
        if depth > 8:
            return False
        if is_binop(expr, cst.Add):
            return self._exp_terms(expr.left, out, depth + 1) and self._exp_terms(  # type: ignore[attr-defined]
                expr.right, out, depth + 1  # type: ignore[attr-defined]
            )
        e = exp_use(self.ctx, followed(self.ctx, expr, 1))
        if e is None or e.operand is None:
            return False
        out.append(e)
        return True

    def _summed_exp_terms(self, expr: cst.BaseExpression, out: List[OpUse], depth: int = 0) -> Optional[int]:
        """Flatten ``sum(exp(a)) + sum(exp(b)) + eps`` (``exp`` terms allowed too) into its exps; the number of
        number literals added (an eps), or None when a term is anything else."""
        if depth > 8:
            return None
        if is_binop(expr, cst.Add):
            left = self._summed_exp_terms(expr.left, out, depth + 1)  # type: ignore[attr-defined]
            right = self._summed_exp_terms(expr.right, out, depth + 1) if left is not None else None  # type: ignore
            return left + right if left is not None and right is not None else None
        if isinstance(expr, cst.Float):
            try:
                tiny = 0 < float(expr.value) < 1e-3
            except ValueError:
                tiny = False
            return 1 if tiny else None  # an eps (`1 + exp(x)` is a softplus: TL204's)
        value = followed(self.ctx, expr, 1)
        s = sum_use(self.ctx, value)
        if s is not None and s.operand is not None:
            value = followed(self.ctx, s.operand, 1)
        e = exp_use(self.ctx, value)
        if e is None or e.operand is None:
            return None
        out.append(e)
        return 0

    def _logaddexp(self, node: cst.Call, log: OpUse, inner: cst.BinaryOperation, hopped: bool) -> None:
        ctx = self.ctx
        summed: List[OpUse] = []
        numbers = self._summed_exp_terms(inner, summed)
        plain: List[OpUse] = []
        if numbers is not None and summed and (numbers or not self._exp_terms(inner, plain)) and not all(
                is_shifted(self.ctx, t.operand) for t in summed if t.operand is not None):
            # `log(sum(exp(a)) + sum(exp(b)))`, `log(sum(exp(x)) + 1e-8)`: the sums overflow before the log
            self.report(
                node,
                self.quoting(node, "`log` of a sum of exponentials overflows for large inputs (an eps added to it "
                                   "does not stop `exp` overflowing); use `torch.logsumexp` over the terms joined "
                                   "(`torch.cat`), or `torch.logaddexp` of the partial `logsumexp`s"),
            )
            return
        terms: List[OpUse] = []
        if self._exp_terms(inner, terms) and len(terms) > 2:
            if all(is_shifted(self.ctx, t.operand) for t in terms if t.operand is not None):
                return
            self.report(
                node,
                self.quoting(node, "`log(exp(a) + exp(b) + ...)` overflows for large inputs; use "
                                   "`torch.logsumexp(torch.stack([a, b, ...]), dim=0)` (or nested `torch.logaddexp`)"),
            )
            return
        left = exp_use(ctx, followed(self.ctx, inner.left, 1))
        right = exp_use(ctx, followed(self.ctx, inner.right, 1))
        if left is None or right is None or left.operand is None or right.operand is None:
            return
        if is_shifted(self.ctx, left.operand) and is_shifted(self.ctx, right.operand):
            return
        fix = None
        sources = [left.node if hopped or left.node is not inner.left else None,
                   right.node if hopped or right.node is not inner.right else None]
        if movable(ctx, left.operand, sources[0], node) and movable(ctx, right.operand, sources[1], node):
            template = log if log.kind == "function" else left
            if template.kind == "method":
                code = f"{atom_code(ctx, left.operand)}.logaddexp({ctx.code(right.operand)})"
            else:
                code = torch_call_code(ctx, template, "logaddexp", left.operand, [ctx.code(right.operand)])
            fix = self.make_fix("Replace with `torch.logaddexp`").replace(node, ctx.parse_expression(code))
        self.report(node, self.quoting(node, "`log(exp(a) + exp(b))` overflows for large inputs; use `torch.logaddexp(a, b)`"),
                    fix=fix)
