from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg, callee_name, keyword_arg
from torchlint.analysis.ops import exp_use
from torchlint.analysis.roles import (
    LOG_SOFTMAX,
    SIGMOID,
    SOFTMAX,
    built_output,
    is_model,
    module_output,
    output_kind,
    param_is_model,
)

from torchlint.families.numerics.patterns import (
    ALL,
    Softmax,
    all_elements_code,
    arith_parts,
    followed,
    handwritten_softmax,
    is_shifted,
    softmax_parts,
    inplace_softmax,
    movable,
    removable_assignment,
    torch_call_code,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid


class NaiveSoftmax(LintRule):
    """
    ## What it does
    Finds softmax written by hand as `exp(x) / exp(x).sum(...)` (function or method spelling, directly or
    through a variable such as `exp = torch.exp(logits)`) where the exponent is not shifted by its
    maximum first.

    ## Why is this bad?
    `exp` overflows float32 for arguments above about 88.7: `exp(1000.)` is `inf`, and `inf / inf` is
    `nan`. The Effective PyTorch notes show exactly this: the naive `unstable_softmax` returns
    `[nan, 0.]` for `[1000., 0.]`, and the fix is to subtract the maximum before exponentiating
    (Effective PyTorch, section 7, "PyTorch 的数值稳定性"). In the other direction, when every exponent
    underflows to 0 the quotient is `0 / 0`. `torch.softmax` does the shift internally, in one fused
    kernel, with a correct backward.

    Also finds the exponentials of a model's logits fed to a sampler that normalises them itself
    (`torch.multinomial(torch.exp(logits / temperature), 1)`, `Categorical(probs=out.exp())`,
    `OneHotCategorical`, `Multinomial(n, probs=...)`): the same softmax with the division hidden. The
    exponent must be (a scaling or a selection of) the output of a model the program model knows (built
    in the file, annotated, `self.<attr>`, or a parameter every call in the file passes such a model for;
    in a notebook, every cell) and not known to be probabilities or log-probabilities; an exponent of a
    log-probability or of an unknown value is not reported. The output may be unpacked from a tuple
    (`out, hidden = model(x, hidden)`), read through `.data`, `.detach()` or a reshape, and scaled in
    method spelling (`out.div(temperature)`).

    An exponent already shifted by a maximum or a log-sum-exp (`x - x.max(dim, keepdim=True).values`,
    `logits - torch.max(logits)`, `x - m` with `m` named like a maximum) is stable and not reported.
    Neither is an exponent that is never positive, such as a Gaussian kernel's `exp(-x**2 / (2 * s**2))`:
    it cannot overflow, and its centre term is 1 (it could still underflow to `0 / 0` if every term were
    far out; Gaussian kernels are too common a use to report for that). Nor is a worked example's exponent:
    numbers the code writes out (`torch.tensor([2.0, 0.5, -1.0])`) below 11, whose exponentials overflow in
    no floating dtype.

    ## Example
    ```python
    def unstable_softmax(logits):
        exp = torch.exp(logits)
        return exp / torch.sum(exp)
    ```

    ## Use instead
    ```python
    def unstable_softmax(logits):
        return torch.softmax(logits.flatten(), dim=0).view_as(logits)
    ```
    or, when the sum was over one dim with `keepdim=True`, `torch.softmax(x, dim=d)`.

    ## Fix safety
    The fix keeps the reduction of the original. A sum over `dim=d` with `keepdim=True` (or followed by
    `.unsqueeze(d)`) becomes `torch.softmax(x, dim=d)`: safe. A sum over every element becomes a softmax
    over the flattened tensor reshaped back (`torch.softmax(x.flatten(), dim=0).view_as(x)`): safe, and
    only offered when `x` is a name or attribute (it is written twice). A sum over `dim=d` without
    `keepdim` broadcasts correctly only for 1-D input; the fix is then unsafe, since for higher ranks it
    changes what the original computed. The variable that held the exponentials is deleted when nothing
    else reads it. The exponentials given straight to a sampler become `torch.softmax(x, dim=-1)`
    (safe: the samplers normalise over the last dim, so the distribution is the same, without the
    overflow). No fix is offered when the denominator adds an epsilon, or when a name in `x` is
    reassigned between the exponent and the division.

    ## Options
    None.

    ## References
    - [torch.softmax](https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL201"
    NAME = "naive-softmax"
    MESSAGE = "Softmax written as `exp(x) / sum(exp(x))` overflows for large inputs (`nan`); use `torch.softmax`"
    FIX_TITLE = "Replace with `torch.softmax`"
    TRIGGERS = ("exp",)

    VALID = [
        # a worked example: the formula applied to a few small numbers written out, beside the library call
        """
import torch

logits = torch.tensor([1.5, -0.3, 0.2])
e = torch.exp(logits)
print(e / e.sum(), torch.softmax(logits, dim=0))
""",
        # log-probabilities of a model, and a logits sampler
        Valid(
            """
import torch
import torch.nn as nn
from torch.distributions import Categorical

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).log_softmax(-1)

def act(obs, log_probs):
    policy = Policy()
    a = torch.multinomial(policy(obs).exp(), 1)
    b = torch.multinomial(log_probs.exp(), 1)
    return a, b, Categorical(logits=policy(obs)).sample()
"""
        ),
        # the sum put back along the wrong axis: not a softmax (and not rewritten as one)
        Valid(
            """
import torch

def column_weights(x):
    e = torch.exp(x)
    return e / e.sum(0).view(-1, 1)
"""
        ),
        Valid(
            """
import torch

def scores(s):
    e = s.exp()
    return e / e.sum(-1)[:, None]
"""
        ),
        # a Gaussian kernel: the exponent is never positive (a square, negated), through a rebound name
        Valid(
            """
import torch

def kernel2d(size: int, sigma: float):
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = coords ** 2
    g = torch.exp(-(g.unsqueeze(0) + g.unsqueeze(1)) / (2.0 * sigma ** 2))
    g /= torch.sum(g)
    return g
"""
        ),
        # in place, but shifted by the maximum first
        Valid(
            """
import torch

def softmax_(x):
    e = torch.exp(x - x.amax(dim=1, keepdim=True))
    e /= e.sum(dim=1, keepdim=True)
    return e
"""
        ),
        # shifted by the maximum: the cookbook's stable version
        Valid(
            """
import torch

def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)
"""
        ),
        Valid(
            """
import torch

def softmax(x, dim=-1):
    z = x - x.max(dim=dim, keepdim=True).values
    e = z.exp()
    return e / e.sum(dim=dim, keepdim=True)
"""
        ),
        Valid(
            """
import torch

def attention(scores, mask):
    scores = scores - scores.amax(-1, keepdim=True).detach()
    w = torch.exp(scores) * mask
    return w / w.sum(-1, keepdim=True)
"""
        ),
        # numpy look-alike in a torch file
        Valid(
            """
import numpy as np
import torch

def np_softmax(x):
    e = np.exp(x)
    return e / e.sum()
"""
        ),
        # not normalising the same exponentials
        Valid(
            """
import torch

def ratio(a, b):
    return torch.exp(a) / torch.exp(b).sum()
"""
        ),
        Valid(
            """
import torch

def probs(logits):
    return torch.softmax(logits, dim=-1)
"""
        ),
        Valid(
            """
import torch

def weights(log_w):
    w = torch.exp(log_w - torch.logsumexp(log_w, 0))
    return w / w.sum()
"""
        ),
        # Gaussian kernels: the exponent is never positive and the centre term is exp(0) = 1
        Valid(
            """
import torch

def gaussian_kernel1d(sigma, ksize):
    x = torch.arange(ksize, dtype=torch.float64) - ksize // 2
    kernel = torch.exp(-0.5 * x**2 / sigma**2)
    return kernel / kernel.sum()
"""
        ),
        Valid(
            """
import torch

def gaussian(kernel_size, sigma):
    dist = torch.arange((1 - kernel_size) / 2, (1 + kernel_size) / 2, 1.0)
    gauss = torch.exp(-torch.pow(dist / sigma, 2) / 2)
    return (gauss / gauss.sum()).unsqueeze(dim=0)
"""
        ),
        Valid(
            """
import torch

def kernel1d(x, sigma):
    pdf = torch.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()
"""
        ),
        # a helper given models whose outputs are probabilities, log-probabilities, or no model at all
        Valid(
            """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, h):
        return self.fc(x).softmax(-1), h

class LogProbs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).log_softmax(-1)

def sample(model, x, h):
    out, h = model(x, h)
    return torch.multinomial(out.data.view(-1).div(0.7).exp(), 1)

def draw(net, x):
    return torch.multinomial(net(x).detach().div(0.5).exp(), 1)

sample(Probs(), torch.zeros(4), None)
draw(LogProbs(), torch.zeros(4))
draw(lambda t: t, torch.zeros(4))
"""
        ),
    ]

    INVALID = [
        # the cookbook's example: the sum runs over every element
        Invalid(
            """
import torch

def unstable_softmax(logits):
    exp = torch.exp(logits)
    return exp / torch.sum(exp)
""",
            fixed="""
import torch

def unstable_softmax(logits):
    return torch.softmax(logits.flatten(), dim=0).view_as(logits)
""",
            line=6,
            col=12,
        ),
        Invalid(
            """
import torch

def attention(scores):
    weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
    return weights
""",
            fixed="""
import torch

def attention(scores):
    weights = scores.softmax(dim=-1)
    return weights
""",
        ),
        Invalid(
            """
import torch as th

def normalize(x):
    e = th.exp(x)
    print(e.max())
    return e / e.sum(1).unsqueeze(1)
""",
            fixed="""
import torch as th

def normalize(x):
    e = th.exp(x)
    print(e.max())
    return th.softmax(x, dim=1)
""",
        ),
        # without keepdim the division broadcasts correctly only for 1-D input
        Invalid(
            """
from torch import exp, sum

def probs(v):
    return exp(v) / sum(exp(v), 0)
""",
            fixed="""
from torch import exp, sum

def probs(v):
    return v.softmax(dim=0)
""",
            unsafe=True,
        ),
        # an epsilon in the denominator does not prevent the overflow; no fix
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    return e / (e.sum(-1, keepdim=True) + 1e-8)
""",
        ),
        # the reduced dim restored with view / reshape / None indexing instead of keepdim
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    return e / e.sum(1).view(-1, 1)
""",
            fixed="""
import torch

def probs(x):
    return torch.softmax(x, dim=1)
""",
        ),
        Invalid(
            """
import torch

def probs(x):
    return x.exp() / x.exp().sum(dim=-1).reshape(-1, 1)
""",
            fixed="""
import torch

def probs(x):
    return x.softmax(dim=-1)
""",
        ),
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    return e / e.sum(1)[:, None]
""",
            fixed="""
import torch

def probs(x):
    return torch.softmax(x, dim=1)
""",
        ),
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    return e / e.sum(-1)[..., None]
""",
            fixed="""
import torch

def probs(x):
    return torch.softmax(x, dim=-1)
""",
        ),
        # normalised in place: reported, no fix
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    e /= e.sum(dim=1, keepdim=True)
    return e
""",
            line=6,
            message="divided in place",
        ),
        Invalid(
            """
import torch

def probs(x):
    e = x.exp()
    e.div_(e.sum(-1, keepdim=True))
    return e
""",
            line=6,
            message="divided in place",
        ),
        # the division in function and method spelling
        Invalid(
            """
import torch

def probs(x):
    e = torch.exp(x)
    return torch.div(e, e.sum(1, keepdim=True))
""",
            fixed="""
import torch

def probs(x):
    return torch.softmax(x, dim=1)
""",
        ),
        Invalid(
            """
import torch

def probs(x):
    e = x.exp()
    return e.div(e.sum(-1, keepdim=True))
""",
            fixed="""
import torch

def probs(x):
    return x.softmax(dim=-1)
""",
        ),
        # the exponentials of a language model's scaled logits, sampled
        Invalid(
            """
import torch
import torch.nn as nn

class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.emb(x))

def generate(x, temperature=0.8):
    lm = TinyLM()
    logits = lm(x)[:, -1]
    return torch.multinomial(torch.exp(logits / temperature), 1)
""",
            fixed="""
import torch
import torch.nn as nn

class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        return self.head(self.emb(x))

def generate(x, temperature=0.8):
    lm = TinyLM()
    logits = lm(x)[:, -1]
    return torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1)
""",
            message="`exp` of logits fed to a sampler",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
from torch.distributions import Categorical

class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

class Agent:
    def __init__(self):
        self.actor = Actor()

    def act(self, obs):
        weights = (2.0 * self.actor(obs)).exp()
        return Categorical(probs=weights).sample()
""",
            line=19,
            message="`exp` of logits fed to a sampler",
        ),
        # a sampling helper given the model: its output unpacked, read through `.data`, reshaped and
        # divided by the temperature in method spelling
        Invalid(
            """
import torch
import torch.nn as nn

class CharModel(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.emb = nn.Embedding(vocab, width)
        self.cell = nn.GRU(width, width)
        self.out = nn.Linear(width, vocab)

    def forward(self, token, state):
        h, state = self.cell(self.emb(token).view(1, 1, -1), state)
        return self.out(h.view(1, -1)), state

def next_token(model, token, state, temperature=0.8):
    scores, state = model(token, state)
    weights = scores.data.view(-1).div(temperature).exp()
    return torch.multinomial(weights, 1)[0], state

net = CharModel(30, 16).to("cpu")
print(next_token(net, torch.tensor([3]), torch.zeros(1, 1, 16)))
""",
            line=18,
            message="`exp` of logits fed to a sampler",
        ),
        # the `else` branch reads the value bound before the `if` (a mean-centred sum), not the `if`
        # branch's log-probabilities, which would be stable
        Invalid(
            """
import torch


def distribution(v, a, log=False):
    q = v + a - a.mean(1, keepdim=True)
    if log:
        q = torch.log_softmax(q, dim=2)
    else:
        q = torch.exp(q) / torch.exp(q).sum(dim=2, keepdim=True)
    return q


print(distribution(torch.randn(2, 1, 5), torch.randn(2, 3, 5)).sum(2))
""",
            fixed="""
import torch


def distribution(v, a, log=False):
    q = v + a - a.mean(1, keepdim=True)
    if log:
        q = torch.log_softmax(q, dim=2)
    else:
        q = torch.softmax(q, dim=2)
    return q


print(distribution(torch.randn(2, 1, 5), torch.randn(2, 3, 5)).sum(2))
""",
            line=10,
        ),
        # numpy's keyword spellings, which torch's reductions accept too: `keepdims=`, `axis=`
        Invalid(
            """
import torch


def probs(logits):
    counts = logits.exp()
    return counts / counts.sum(1, keepdims=True)


print(probs(torch.randn(3, 27)).sum(axis=1))
""",
            fixed="""
import torch


def probs(logits):
    return logits.softmax(dim=1)


print(probs(torch.randn(3, 27)).sum(axis=1))
""",
            line=7,
        ),
        # numbers written out, then scaled in place by a run-time factor: no longer the numbers written
        Invalid(
            """
import torch


def scaled(scale):
    logits = torch.tensor([1.5, -0.3, 0.2])
    logits.mul_(scale)
    e = torch.exp(logits)
    return e / e.sum()
""",
            fixed="""
import torch


def scaled(scale):
    logits = torch.tensor([1.5, -0.3, 0.2])
    logits.mul_(scale)
    return torch.softmax(logits.flatten(), dim=0).view_as(logits)
""",
            line=9,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._samplers: list = []

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Divide):
            return
        info = handwritten_softmax(self.ctx, node)
        if info is None or info.stable:
            return
        self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node, info, node.left))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._inplace(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._inplace(node)
        self._sampled(node)
        # `torch.div(e, e.sum(...))`, `e.div(e.sum(...))`: the division in function or method spelling
        if callee_name(node) in ("div", "divide", "true_divide"):
            parts = arith_parts(self.ctx, node)
            if parts is None or parts[0] != "/":
                return
            info = softmax_parts(self.ctx, node, parts[1], parts[2])
            if info is None or info.stable:
                return
            self.report(node, self.quoting(node, self.MESSAGE), fix=self._fix(node, info, parts[1]))

    def _sampled(self, node: cst.Call) -> None:
        """``torch.multinomial(torch.exp(logits / t), 1)``, ``Categorical(probs=logits.exp())``: the sampler
        normalises the exponentials itself, so this is the naive softmax with the division hidden.
        Reported only when the exponent is (a scaling of) a model's output that the program model does
        not know to be log-probabilities, and no maximum is subtracted first."""
        ctx = self.ctx
        names = ctx.names.qualified_names_at(node.func)
        probs = None
        if names & _MULTINOMIAL:
            found = arg(node, 0, "input")
            probs = found.value if found is not None else None
        elif names & _PROBS_SAMPLERS:
            found = keyword_arg(node, "probs")
            if found is None and node.args and node.args[0].keyword is None and not node.args[0].star:
                found = node.args[0] if "Multinomial" not in callee_name(node) else None
            probs = found.value if found is not None else None
        if probs is not None:
            self._samplers.append(probs)

    def leave_Module(self, node: cst.Module) -> None:
        for probs in self._samplers:
            self._sampled_exp(probs)

    def _sampled_exp(self, probs: cst.BaseExpression) -> None:
        ctx = self.ctx
        use = exp_use(ctx, followed(ctx, probs, 2))
        if use is None or use.operand is None or is_shifted(ctx, use.operand):
            return
        if _model_output(ctx, use.operand) is None:
            return
        fix = None
        if use.node is probs:  # the sampler normalises over the last dim: a softmax there samples the same
            code = torch_call_code(ctx, use, "softmax", use.operand, ["dim=-1"])
            fix = self.make_fix("Sample from `torch.softmax`").replace(use.node, ctx.parse_expression(code))
        self.report(
            use.node,
            "`exp` of logits fed to a sampler is a softmax written by hand: it overflows for large logits "
            "(`inf`, then `nan` probabilities); sample from `torch.softmax(logits, dim)` or pass "
            "`Categorical(logits=...)`",
            fix=fix,
        )

    def _inplace(self, node: cst.CSTNode) -> None:
        # `e /= e.sum(...)`, `e.div_(e.sum(...))`: reported without a fix (the tensor is changed in place
        # and may be aliased; the edit is to compute `torch.softmax(x, dim)` where `e` is built)
        if isinstance(node, cst.Call) and not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "div_"):
            return
        info = inplace_softmax(self.ctx, node)
        if info is None or info.stable:
            return
        self.report(node, self.quoting(node, "Softmax written as `exp(x)` divided in place by its sum overflows for "
                                             "large inputs (`nan`); compute `torch.softmax(x, dim)` instead"))

    def _fix(self, node: cst.BaseExpression, info: Softmax, numer: cst.BaseExpression) -> Optional[Fix]:
        ctx = self.ctx
        if info.eps or info.use is None:
            return None
        exp_call = info.use.node
        through_variable = followed(self.ctx, numer, 2) is not numer
        source = exp_call if through_variable else None
        removed = removable_assignment(ctx, exp_call if through_variable else None, [node])
        assign = ctx.parent(exp_call) if removed is not None else None
        if not movable(self.ctx, info.operand, source, node, assign if isinstance(assign, cst.Assign) else None):
            return None
        if info.dim is ALL:
            code = all_elements_code(ctx, info.use, "softmax", info.operand)
            if code is None:
                return None
        else:
            code = torch_call_code(ctx, info.use, "softmax", info.operand, [f"dim={info.dim}"])
        fix = self.make_fix(unsafe=not info.keepdim).replace(node, ctx.parse_expression(code))
        if removed is not None:
            fix.remove(removed)
        return fix


_MULTINOMIAL = frozenset({"torch.multinomial"})
_PROBS_SAMPLERS = frozenset({
    "torch.distributions.Categorical", "torch.distributions.categorical.Categorical",
    "torch.distributions.OneHotCategorical", "torch.distributions.one_hot_categorical.OneHotCategorical",
    "torch.distributions.Multinomial", "torch.distributions.multinomial.Multinomial",
})


def _model_output(ctx, expr: cst.BaseExpression, depth: int = 5):
    """``model(x)``, ``self.head(h)``, ``out / temperature``, ``scale * out[:, -1]``, ``out.data.view(-1)
    .div(t)``, ``out`` after ``out, hidden = model(x, hidden)``: the model call whose output the exponent
    is (a module held by a name or ``self.<attr>`` by construction or annotation, or a parameter every
    call in the file passes such a module for, whose output is not known to be probabilities or
    log-probabilities); None otherwise."""
    if depth <= 0:
        return None
    if isinstance(expr, cst.Name):
        unpacked = _unpacked_output(ctx, expr)
        if unpacked is not None:
            return unpacked
    expr = followed(ctx, expr, 2)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Divide, cst.Multiply)):
        for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(expr.operator, cst.Divide) and side is expr.right:
                continue
            found = _model_output(ctx, side, depth - 1)
            if found is not None and not isinstance(followed(ctx, other, 2), cst.UnaryOperation):
                return found
        return None
    if isinstance(expr, cst.Subscript):
        return _model_output(ctx, expr.value, depth - 1)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":  # `out.data`: the same values
        return _model_output(ctx, expr.value, depth - 1)
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("squeeze", "view", "reshape", "float", "contiguous",
                                                               "detach", "flatten"):
        return _model_output(ctx, func.value, depth - 1)
    if isinstance(func, cst.Attribute) and func.attr.value in _SCALINGS:
        # `out.div(t)`, `out.mul(s)`: a scaling in method spelling, by one positive-looking factor
        found = arg(expr, 0, "other")
        if found is None or len(expr.args) != 1 or isinstance(followed(ctx, found.value, 2), cst.UnaryOperation):
            return None
        return _model_output(ctx, func.value, depth - 1)
    if not isinstance(func, (cst.Name, cst.Attribute)) or not _known_model(ctx, func):
        return None
    if output_kind(ctx, expr) in _NOT_LOGITS or _argument_outputs(ctx, func) & _NOT_LOGITS:
        return None
    return expr


_SCALINGS = frozenset({"div", "divide", "true_divide", "mul", "multiply"})
_NOT_LOGITS = frozenset({SOFTMAX, LOG_SOFTMAX, SIGMOID})


def _known_model(ctx, func: cst.BaseExpression) -> bool:
    """A model by construction or annotation, or a parameter every call of its function in this file
    (a notebook: every cell) passes a model for (``def sample(model, ...)`` called as ``sample(net)``)."""
    if is_model(ctx, func) is True:
        return True
    return isinstance(func, cst.Name) and ctx.names.is_param_at(func) and bool(param_is_model(ctx, func))


def _argument_outputs(ctx, func: cst.BaseExpression) -> set:
    """For a parameter: what the modules its calls pass return (``forward``'s kind, per tuple element)."""
    if not isinstance(func, cst.Name) or not ctx.names.is_param_at(func):
        return set()
    kinds: set = set()
    for a in param_is_model(ctx, func) or ():
        kind = module_output(ctx, a) if isinstance(a, (cst.Name, cst.Attribute)) else built_output(ctx, a)
        kinds.update(kind if isinstance(kind, tuple) else (kind,))
    return kinds


def _unpacked_output(ctx, name: cst.Name) -> Optional[cst.Call]:
    """``out`` after ``out, hidden = model(x, hidden)`` (the assignment reaching ``name`` on every path):
    the model call, when ``forward`` is not known to make that element probabilities."""
    function = ctx.enclosing(name, cst.FunctionDef)
    found = ctx.names.reaching_assignment(name.value, name, function if isinstance(function, cst.FunctionDef) else None)
    if found is None or found[1] is None:
        return None
    value = found[0].value
    if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
        return None
    if not _known_model(ctx, value.func):
        return None
    kind = output_kind(ctx, value)
    element = kind[found[1]] if isinstance(kind, tuple) and found[1] < len(kind) else None
    if element in _NOT_LOGITS or isinstance(kind, str) or _argument_outputs(ctx, value.func) & _NOT_LOGITS:
        return None
    return value
