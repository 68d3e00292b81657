from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import callee_name
from torchlint.analysis.dtypes import float64_value, never_read
from torchlint.families.numerics.patterns import (
    arith_parts,
    atom_code,
    call_prefix,
    followed,
    integer_valued,
    is_one,
    neg_code,
    number,
    probability_source,
)
from torchlint.analysis.ops import OpUse, exp_use, log_use, sigmoid_use
from torchlint.analysis.roles import SIGMOID, output_kind
from torchlint.rule import Fix, Invalid, LintRule, Valid

EXPM1_MESSAGE = "`exp(x) - 1` loses all precision for small `x`; use `torch.expm1(x)`"
#: what a finding says: the spelling found, the operand, the function to use
_MESSAGE = "`{found}` loses precision for small `{x}`; use `torch.{function}({sign}{x})`"


class Log1pExpm1ByHand(LintRule):
    """
    ## What it does
    Finds `log(1 + x)` (also `log(x + 1)` and `log(1 - x)`) and `exp(x) - 1`, in function and method
    spellings.

    ## Why is this bad?
    For `|x|` below float32's resolution near 1 (about `6e-8`), `1 + x` rounds to exactly 1 and
    `log(1 + x)` is 0 instead of about `x`; for `x` around `1e-4` only half the digits survive. The same
    cancellation makes `exp(x) - 1` worthless for small `x`. The Effective PyTorch notes open their
    numerical-stability section with this kind of rounding (`x * y / y` giving `nan` because `y` rounded
    to 0) and ask that every intermediate value stay representable (Effective PyTorch, section 7).
    `torch.log1p` and `torch.expm1` compute these accurately for every `x`.

    `log(1 + exp(x))` and `log(1 - sigmoid(x))` are left to TL204 (softplus, log-sigmoid), and
    `log(1 - p)` of a softmax probability to TL208.

    Not reported where `x` is a whole number by construction — `torch.floor(...)`, `.long()`,
    `torch.arange(n)`, counts, and sums, differences, selections, casts and stacks of those (relative
    positions `log(1 + |i - j|)`): `1 + x` is then exact and `log1p` gains nothing. An in-place division
    or scaling by a fraction before the log, on the path to it, makes the values fractions again.

    Not reported where `x` is a clamp to a lower bound written as a number of at least `1e-7`
    (`p.clamp(1e-4, 1 - 1e-4)`: `1 - p` never rounds to 1 and the error stays below `2**-24`), nor `exp(x) - 1`
    rounded to a whole number where it is made (`torch.round(torch.exp(d) - 1)`, `.long()`).

    Not reported either where `x` is `float64` by construction — a torch factory given `dtype=torch.float64`
    (or `torch.double`), `.double()`, `.to(torch.float64)`, `torch.DoubleTensor`, arithmetic of such tensors
    with numbers, a call of a project function or of a method of the instance (`self.levels(n)`) every
    `return` of which is one of these, a name every assignment of which is one of these, a `self.<attr>`
    assigned or registered as a buffer only so (a parameter or a default dtype is not known to be `float64`)
    — nor where the result is never read (a statement of its own in a function, an assignment to a local
    name nothing reads, or a buffer registered under a name nothing else in the project spells).

    ## Example
    ```python
    rate = torch.log(1 + growth)
    scale = torch.exp(t) - 1
    ```

    ## Use instead
    ```python
    rate = torch.log1p(growth)
    scale = torch.expm1(t)
    ```

    ## Fix safety
    Safe: `log1p(x)` and `expm1(x)` are the same functions, computed more accurately. The fix keeps the
    spelling of the original (`torch.log1p(x)` for `torch.log(1 + x)`, `x.log1p()` for
    `(1 + x).log()`).

    ## Options
    None.

    ## References
    - [torch.log1p](https://pytorch.org/docs/stable/generated/torch.log1p.html)
    - [torch.expm1](https://pytorch.org/docs/stable/generated/torch.expm1.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL205"
    NAME = "log1p-expm1-by-hand"
    MESSAGE = "`log(1 + x)` loses precision for small `x`; use `torch.log1p(x)`"
    FIX_TITLE = "Replace with `torch.log1p` / `torch.expm1`"
    TRIGGERS = ("log", "exp")

    VALID = [
        """
import torch

def f(x):
    return torch.log1p(x) + torch.expm1(x)
""",
        """
import math
import numpy as np

def f(x, y):
    return math.log(1 + x) + np.log(1 + y) + (math.exp(x) - 1)
""",
        # TL204's patterns
        """
import torch

def f(x):
    return torch.log(1 + torch.exp(x)) + torch.log(1 - torch.sigmoid(x))
""",
        """
import torch

def f(x, eps=1e-6):
    return torch.log(1 - x + eps)
""",
        """
import torch

def f(x):
    return torch.exp(x) - 2
""",
        """
import torch

def f(x):
    return torch.log(2 + x)
""",
        # whole numbers: `1 + x` is exact, so log1p gains nothing
        """
import torch

def attn_scale(positions, beta, span):
    return 1 + beta * torch.log(1 + torch.floor(positions / span))


def log_counts(labels, n):
    counts = torch.bincount(labels, minlength=n).float()
    return torch.log(counts + 1)


def log_coords(size):
    coords = torch.stack(torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")).flatten(1)
    rel = coords[:, :, None] - coords[:, None, :]
    rel = rel.permute(1, 2, 0).reshape(-1, 2).float()
    return torch.sign(rel) * torch.log(1.0 + rel.abs())


def log_table(size, mode):
    table = torch.arange(-(size - 1), size).float()
    if mode == "scaled":
        table /= size - 1
        table = torch.log2(1.0 + table.abs())
    else:
        table = torch.log(1.0 + table.abs())
    return table


def log_then_scale(size):
    steps = torch.arange(size).float()
    out = torch.log(1 + steps)
    steps /= size
    return out, steps
""",
        # 1 - the output of a model ending in a sigmoid: TL204's (log1p would still be -inf)
        Valid(
            """
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


gate = Gate()


def log_rejects(x):
    return torch.log(1 - gate(x))
"""
        ),
        # float64 by construction (`dtype=torch.float64`, `.double()`, `.to(torch.float64)`, a float64
        # buffer): `1 + x` keeps about 1e-16 of `x`
        Valid(
            """
import torch
import torch.nn as nn


def survival(n):
    u = torch.rand(n, dtype=torch.float64)
    return torch.log(1 - u)


def growth(rate):
    r = rate.double()
    return torch.log(1 + r).sum()


def growth_to(rate):
    return torch.log(rate.to(torch.float64) + 1)


class Flow(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("alpha", torch.full((n,), 0.5, dtype=torch.double))

    def forward(self):
        return torch.log(1 - self.alpha)
"""
        ),
        # results never read
        Valid(
            """
import torch


def debug_step(x):
    unused = torch.log(1 + x)
    torch.log(x + 1)
    return x * 2
"""
        ),
        # float64 through a helper's returns (every return builds it so), in this file
        Valid(
            """
import torch


def noise_levels(n, wide):
    grid = torch.linspace(0, 1, n, dtype=torch.float64)
    if wide:
        return grid * 0.05 + 1e-4
    return grid.clamp(1e-4, 0.02)


def uniform(n):
    return torch.rand(n).double()


def log_keep(n):
    keep = 1. - noise_levels(n, False)
    return torch.log(1. - keep), torch.log(1 + uniform(n)), (torch.exp(noise_levels(n, True)) - 1).sum()
"""
        ),
        # float64 through a function picked by a local name, divided by a count, mixed with 0-d tensors
        Valid(
            """
import torch


def flat_levels(n):
    return torch.linspace(1e-4, 0.02, n, dtype=torch.float64)


def bent_levels(n, lo=-2, hi=2):
    grid = torch.linspace(0, n, n + 1, dtype=torch.float64) / n
    low, high = torch.tensor(lo).sigmoid(), torch.tensor(hi).sigmoid()
    kept = (torch.sigmoid(grid * (hi - lo) + lo) - low) / (high - low)
    kept = kept / kept[0]
    return torch.clip(1 - kept[1:] / kept[:-1], 0, 0.999)


def log_keep(n, kind):
    if kind == "flat":
        levels = flat_levels
    else:
        levels = bent_levels
    keep = torch.cumprod(1. - levels(n), dim=0)
    return torch.log(1. - keep)
"""
        ),
        # float64 through the return of a method of the instance
        Valid(
            """
import torch
import torch.nn as nn


class Chain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.log_keep = torch.log(1. - self.levels(n))

    def levels(self, n):
        grid = torch.linspace(1e-4, 0.02, n, dtype=torch.float64)
        return grid.clamp(1e-4, 0.02)

    def forward(self, x, t):
        return x * self.log_keep[t]
"""
        ),
        # a buffer registered through a helper lambda, and never read
        Valid(
            """
import torch
import torch.nn as nn


class Chain(nn.Module):
    def __init__(self, betas):
        super().__init__()
        keep = torch.cumprod(1 - betas, dim=0)
        put = lambda key, value: self.register_buffer(key, value.float())
        put("keep", keep)
        put("log_unkept", torch.log(1. - keep))

    def forward(self, x, t):
        return x * self.keep[t]
"""
        ),
        # a buffer registered and never read (by name or through getattr)
        Valid(
            """
import torch
import torch.nn as nn


class Schedule(nn.Module):
    def __init__(self, betas):
        super().__init__()
        self.register_buffer("betas", betas)
        self.register_buffer("log_one_minus_betas", torch.log(1. - betas))
        self.register_buffer("log_keep", torch.log(1 - betas).float())

    def forward(self, x, t):
        return x * self.betas[t]
"""
        ),
        Valid(
            """
import torch


def negatives_loss(probs, weight=0.75):
    p = probs.clamp(1e-4, 1.0 - 1e-4)
    return (weight * p.pow(2) * -torch.log(1.0 - p)).mean()


def frames_from_log(log_durations):
    return torch.round(torch.exp(log_durations) - 1).clamp(min=0).long()
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def rate(growth):
    return torch.log(1 + growth)
""",
            fixed="""
import torch

def rate(growth):
    return torch.log1p(growth)
""",
            line=5,
            col=12,
        ),
        Invalid(
            """
import torch

def f(a, b):
    return (a * b + 1.0).log()
""",
            fixed="""
import torch

def f(a, b):
    return (a * b).log1p()
""",
        ),
        Invalid(
            """
import torch

def survival(p):
    return torch.log(1 - p)
""",
            fixed="""
import torch

def survival(p):
    return torch.log1p(-p)
""",
        ),
        Invalid(
            """
import torch as th

def mu_law_expand(x, mu):
    return th.sign(x) * (th.exp(th.abs(x) * th.log1p(mu)) - 1.0) / mu
""",
            fixed="""
import torch as th

def mu_law_expand(x, mu):
    return th.sign(x) * th.expm1(th.abs(x) * th.log1p(mu)) / mu
""",
            message="expm1",
        ),
        Invalid(
            """
import torch

def f(t):
    return t.exp() - 1
""",
            fixed="""
import torch

def f(t):
    return t.expm1()
""",
        ),
        # element-wise function and method spellings
        Invalid(
            """
import torch

def f(x):
    return torch.log(torch.add(1, x))
""",
            fixed="""
import torch

def f(x):
    return torch.log1p(x)
""",
        ),
        Invalid(
            """
import torch

def f(x):
    return x.add(1).log()
""",
            fixed="""
import torch

def f(x):
    return x.log1p()
""",
        ),
        Invalid(
            """
import torch

def f(x):
    return x.exp().sub(1)
""",
            fixed="""
import torch

def f(x):
    return x.expm1()
""",
            message="expm1",
        ),
        # fractions of whole numbers are not whole: a division, in place or not, before the log
        Invalid(
            """
import torch

def log_offsets(n):
    steps = torch.arange(n).float()
    steps /= n
    return torch.log(1 + steps) + torch.log(1 + torch.arange(n) / n)
""",
            fixed="""
import torch

def log_offsets(n):
    steps = torch.arange(n).float()
    steps /= n
    return torch.log1p(steps) + torch.log1p(torch.arange(n) / n)
""",
            count=2,
        ),
        # halved in a loop: from the second pass on the values are fractions
        Invalid(
            """
import torch

def halving(n):
    steps = torch.arange(n).float()
    for _ in range(3):
        out = torch.log(1 + steps)
        steps /= 2
    return out
""",
            fixed="""
import torch

def halving(n):
    steps = torch.arange(n).float()
    for _ in range(3):
        out = torch.log1p(steps)
        steps /= 2
    return out
""",
        ),
        # whole on one path only: the parameter itself reaches the log when `snap` is false
        Invalid(
            """
import torch

def maybe_snapped(x, snap):
    if snap:
        x = torch.floor(x)
    return torch.log(1 + x)
""",
            fixed="""
import torch

def maybe_snapped(x, snap):
    if snap:
        x = torch.floor(x)
    return torch.log1p(x)
""",
        ),
        # float64 on one path only, or cast to float32; the result read
        Invalid(
            """
import torch


def survival(u, exact):
    if exact:
        u = u.double()
    return torch.log(1 - u)


def growth(rate):
    r = rate.float()
    shown = torch.log(1 + r)
    return shown
""",
            fixed="""
import torch


def survival(u, exact):
    if exact:
        u = u.double()
    return torch.log1p(-u)


def growth(rate):
    r = rate.float()
    shown = torch.log1p(r)
    return shown
""",
            count=2,
            line=8,
        ),
        # a helper whose returns are float64 on one path only, or that returns its argument
        Invalid(
            """
import torch


def levels(n, exact):
    if exact:
        return torch.rand(n, dtype=torch.float64)
    return torch.rand(n)


def passthrough(x):
    return x


def log_keep(n, u):
    return torch.log(1. - levels(n, True)) + torch.log(1. - passthrough(u).double())
""",
            fixed="""
import torch


def levels(n, exact):
    if exact:
        return torch.rand(n, dtype=torch.float64)
    return torch.rand(n)


def passthrough(x):
    return x


def log_keep(n, u):
    return torch.log1p(-levels(n, True)) + torch.log(1. - passthrough(u).double())
""",
            message="`torch.log(1. - levels(n, True))` loses precision for small `levels(n, True)`",
        ),
        # a 0-d float64 tensor gives way to a float32 tensor with dimensions; a buffer registered through
        # a helper lambda and read
        Invalid(
            """
import torch
import torch.nn as nn


def shrink(u):
    return torch.log(1. - torch.tensor(0.5, dtype=torch.float64) * u)


class Chain(nn.Module):
    def __init__(self, betas):
        super().__init__()
        put = lambda key, value: self.register_buffer(key, value.float())
        put("log_kept", torch.log(1. - betas))

    def forward(self, x, t):
        return x * self.log_kept[t]
""",
            fixed="""
import torch
import torch.nn as nn


def shrink(u):
    return torch.log1p(-(torch.tensor(0.5, dtype=torch.float64) * u))


class Chain(nn.Module):
    def __init__(self, betas):
        super().__init__()
        put = lambda key, value: self.register_buffer(key, value.float())
        put("log_kept", torch.log1p(-betas))

    def forward(self, x, t):
        return x * self.log_kept[t]
""",
            count=2,
        ),
        # a buffer that is read: through the attribute, and through getattr
        Invalid(
            """
import torch
import torch.nn as nn


class Schedule(nn.Module):
    def __init__(self, betas):
        super().__init__()
        self.register_buffer("log_keep", torch.log(1. - betas))
        self.register_buffer("log_drop", torch.log(1 + betas))

    def forward(self, x, t):
        return x * self.log_keep[t] + getattr(self, "log_drop")[t]
""",
            fixed="""
import torch
import torch.nn as nn


class Schedule(nn.Module):
    def __init__(self, betas):
        super().__init__()
        self.register_buffer("log_keep", torch.log1p(-betas))
        self.register_buffer("log_drop", torch.log1p(betas))

    def forward(self, x, t):
        return x * self.log_keep[t] + getattr(self, "log_drop")[t]
""",
            count=2,
            message="`torch.log(1. - betas)` loses precision for small `betas`; use `torch.log1p(-betas)`",
        ),
            # a method of the instance whose returns are float32, or float64 on one path only
        Invalid(
            """
import torch
import torch.nn as nn


class Chain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.log_keep = torch.log(1. - self.levels(n, False))

    def levels(self, n, exact):
        if exact:
            return torch.rand(n, dtype=torch.float64)
        return torch.rand(n)

    def forward(self, x, t):
        return x * self.log_keep[t]
""",
            fixed="""
import torch
import torch.nn as nn


class Chain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.log_keep = torch.log1p(-self.levels(n, False))

    def levels(self, n, exact):
        if exact:
            return torch.rand(n, dtype=torch.float64)
        return torch.rand(n)

    def forward(self, x, t):
        return x * self.log_keep[t]
""",
            message="`torch.log(1. - self.levels(n, False))` loses precision for small `self.levels(n, False)`",
        ),
        Invalid(
            """
import torch


def survival(hazard):
    h = torch.clamp(hazard, min=1e-12)
    return torch.log(1 - h)
""",
            fixed="""
import torch


def survival(hazard):
    h = torch.clamp(hazard, min=1e-12)
    return torch.log1p(-h)
""",
            line=7,
        ),
        Invalid(
            """
import torch


def frames(log_length):
    return torch.ceil(torch.exp(log_length) - 1)
""",
            fixed="""
import torch


def frames(log_length):
    return torch.ceil(torch.expm1(log_length))
""",
            line=6,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._pending: List[Tuple[cst.Call, Optional[cst.BaseExpression], Optional[Fix], cst.BaseExpression, str]] = []
        self._pending_expm1: List[Tuple[cst.BaseExpression, cst.BaseExpression, Optional[Fix], str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if callee_name(node) in ("sub", "subtract"):
            self._expm1(node)
            return
        if callee_name(node) != "log":
            return
        ctx = self.ctx
        use = log_use(ctx, node)
        if use is None or use.operand is None:
            return
        parts = arith_parts(ctx, use.operand)  # `1 + x`, `torch.add(1, x)`, `x.add(1)`
        if parts is None or parts[0] not in "+-":
            return
        op, left, right = parts
        x: Optional[cst.BaseExpression] = None
        negate = False
        if op == "+":
            if is_one(left):
                x = right
            elif is_one(right):
                x = left
        elif is_one(left):
            x, negate = right, True
        if x is None or number(x) is not None:
            return
        if integer_valued(self.ctx, x):
            return  # `1 + x` is exact for whole numbers (positions, counts): log1p gains nothing
        value = followed(self.ctx, x, 2)
        if _kept_from_zero(ctx, value):
            return  # `p = p.clamp(1e-4, 1 - 1e-4)`: `1 - p` never rounds to 1, the error stays below 2**-24
        message = _MESSAGE.format(found=self.spelling(node), x=self.spelling(x, 30), function="log1p",
                                  sign="-" if negate else "")
        # log(1 + exp(x)) and log(1 - sigmoid(x)) stay -inf/inf with log1p: TL204 rewrites them stably, and
        # 1 - p can be exactly 0 (TL208): reported with no fix (the precedence table leaves the finding
        # to that rule when it reports the same log)
        if exp_use(ctx, value) is not None or sigmoid_use(ctx, value) is not None or (
            negate and probability_source(self.ctx, x) is not None
        ):
            self._pending.append((node, None, None, x, message))
            return
        fix = self._fix(node, use, "log1p", x, negate)
        # `1 - p` with `p` a model's output: whether its forward ends in a sigmoid is known after the walk;
        # so are the dtype of `x` and whether the result is read
        self._pending.append((node, value if negate else None, fix, x, message))

    def leave_Module(self, node: cst.Module) -> None:
        for log_call, value, fix, x, message in self._pending:
            if float64_value(self.ctx, x) or never_read(self.ctx, log_call):
                continue  # float64 keeps about 1e-16 of `x` in `1 + x`; a value never read harms nothing
            if value is None:
                self.report(log_call, message, fix=fix)
                continue
            if output_kind(self.ctx, value) == SIGMOID:
                # log1p(-sigmoid(z)) is still -inf for large z; TL204 names the stable form (and owns the
                # finding when it reports this log)
                self.report(log_call, message)
                continue
            self.report(log_call, message, fix=fix)
        self._pending = []
        for expr, x, fix, message in self._pending_expm1:
            if not (float64_value(self.ctx, x) or never_read(self.ctx, expr)):
                self.report(expr, message, fix=fix)
        self._pending_expm1 = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._expm1(node)

    def _expm1(self, node: cst.BaseExpression) -> None:
        parts = arith_parts(self.ctx, node)  # `exp(x) - 1`, `torch.sub(exp(x), 1)`, `x.exp().sub(1)`
        if parts is None or parts[0] != "-" or not is_one(parts[2]):
            return
        e = exp_use(self.ctx, parts[1])
        if e is None or e.operand is None:
            return
        if _rounded(self.ctx, node):
            return  # `torch.round(exp(d) - 1)`: whole numbers come out, an error of 1e-7 moves none of them
        message = (f"`{self.spelling(node)}` loses all precision for small `{self.spelling(e.operand, 30)}`; "
                   f"use `torch.expm1({self.spelling(e.operand, 30)})`")
        self._pending_expm1.append((node, e.operand, self._fix(node, e, "expm1", e.operand, False), message))

    def _fix(self, node: cst.BaseExpression, use: OpUse, function: str, x: cst.BaseExpression, negate: bool) -> Optional[Fix]:
        ctx = self.ctx
        title = f"Replace with `torch.{function}`"
        if use.kind == "method":
            code = f"({neg_code(ctx, x)}).{function}()" if negate else f"{atom_code(ctx, x)}.{function}()"
        else:
            prefix = call_prefix(ctx, use, "torch")
            if prefix is None:
                return None
            code = f"{prefix}.{function}({neg_code(ctx, x) if negate else ctx.code(x)})"
        return self.make_fix(title).replace(node, ctx.parse_expression(code))


#: the smallest magnitude a clamp may keep a value from zero with, so that `1 - x` never rounds to 1 in float32
_FAR_FROM_ZERO = 1e-7
_CLAMPS = ("clamp", "clip", "clamp_min")
#: roundings to the nearest or toward zero: an error of 1e-7 near 0 moves none of their results (floor and
#: ceil of a value that should be just above or below a whole number would)
_ROUNDING = ("round", "trunc", "long", "int")


def _kept_from_zero(ctx, value: Optional[cst.BaseExpression]) -> bool:
    """``value`` is a clamp of something to a lower bound written as a number of at least 1e-7
    (``torch.clamp(p, 1e-4, 1 - 1e-4)``, ``p.clamp(min=1e-7)``): `1 - x` and `1 + x` keep it."""
    if not isinstance(value, cst.Call) or callee_name(value) not in _CLAMPS:
        return False
    method = isinstance(value.func, cst.Attribute) and not ctx.names.qualified_names(value.func)
    positional = [a for a in value.args if a.keyword is None]
    low = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "min"), None)
    if low is None:
        index = 0 if method else 1
        low = positional[index].value if len(positional) > index else None
    bound = number(low)
    return bound is not None and bound >= _FAR_FROM_ZERO


def _rounded(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` is rounded to a whole number where it is made: the argument of ``torch.round``/``trunc``, or
    the receiver of ``.round()``, ``.trunc()``, ``.long()``, ``.int()``."""
    parent = ctx.parent(expr)
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and call.args and call.args[0] is parent and any(
            q in ("torch." + r for r in _ROUNDING[:2]) for q in ctx.names.qualified_names(call.func))
    if isinstance(parent, cst.Attribute) and parent.value is expr and parent.attr.value in _ROUNDING:
        return isinstance(ctx.parent(parent), cst.Call)
    return False
