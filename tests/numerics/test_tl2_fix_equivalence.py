"""Every TL2 fix, executed: the code before and after the fix agrees on ordinary inputs (values and
gradients), and on extreme inputs the original is inf/nan (or, for TL205/TL207, wrong) while the fixed
code is finite and right.

The programs are the rules' own INVALID cases (so the fix tested here is the one the rule pages show),
plus a few fixtures of this file; the fixed text comes from the engine, unsafe fixes included.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Optional, Tuple

import pytest

torch = pytest.importorskip("torch")

from torchlint.engine import Settings, lint_source  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402

RULES = {r.CODE: r for r in all_rules()}


def t(*values, **kw):
    return torch.tensor(values, dtype=kw.get("dtype", torch.float32))


def randn(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def soft(*shape, seed=1):
    return torch.softmax(randn(*shape, seed=seed), dim=-1)


@dataclass
class Case:
    id: str
    rule: str
    source: object  # int: index into the rule's INVALID cases; str: a program of this file
    call: Callable  # (namespace, *inputs) -> tensor
    normal: Callable[[], Tuple]
    extreme: Optional[Callable[[], Tuple]]
    grad: bool = True  # compare gradients w.r.t. the first input on the normal inputs
    before_extreme: str = "nonfinite"  # "nonfinite" | "inaccurate" | "saturated"
    truth: Optional[Callable] = None  # exact result for the extreme inputs (float64)


def fn(name):
    return lambda ns, *a: ns[name](*a)


CASES = [
    # -- TL201 naive softmax ------------------------------------------------------------------
    Case("TL201-cookbook-1d", "TL201", 0, fn("unstable_softmax"), lambda: (randn(5),), lambda: (t(1000.0, 0.0),)),
    Case("TL201-cookbook-2d", "TL201", 0, fn("unstable_softmax"), lambda: (randn(3, 4),),
         lambda: (t(1000.0, 0.0, -5.0, 3.0).reshape(2, 2),)),
    Case("TL201-keepdim-method", "TL201", 1, fn("attention"), lambda: (randn(3, 4),),
         lambda: (randn(3, 4, scale=400.0),)),
    Case("TL201-unsqueeze", "TL201", 2, fn("normalize"), lambda: (randn(2, 5),), lambda: (randn(2, 5, scale=400.0),)),
    # the value bound before an `if` whose other branch takes log-probabilities: large sums overflow
    Case("TL201-branch", "TL201", 16, fn("distribution"), lambda: (randn(2, 1, 5), randn(2, 3, 5, seed=3)),
         lambda: (randn(2, 1, 5, scale=300.0), randn(2, 3, 5, seed=3, scale=300.0))),
    Case("TL201-no-keepdim-1d", "TL201", 3, fn("probs"), lambda: (randn(6),), lambda: (t(1000.0, 1.0, -3.0),)),
    Case("TL201-view-column", "TL201", 5, fn("probs"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=400.0),)),
    Case("TL201-reshape-column", "TL201", 6, fn("probs"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=400.0),)),
    Case("TL201-none-index-dim1", "TL201", 7, fn("probs"), lambda: (randn(2, 3, 4),),
         lambda: (randn(2, 3, 4, scale=400.0),)),
    Case("TL201-ellipsis-none-last", "TL201", 8, fn("probs"), lambda: (randn(2, 3, 4),),
         lambda: (randn(2, 3, 4, scale=400.0),)),
    # a model's scaled logits sampled: the same seed draws the same tokens from exp(...) as from softmax(...)
    Case("TL201-sampled-logits", "TL201", 13, lambda ns, x: (torch.manual_seed(0), ns["generate"](x))[1],
         lambda: (torch.tensor([[1, 2, 3], [4, 5, 6]]),), None, grad=False),
    # -- TL202 log of softmax -----------------------------------------------------------------
    Case("TL202-nll", "TL202", 0, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1])),
         lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), torch.tensor([1, 2]))),
    Case("TL202-method", "TL202", 1, fn("scores"), lambda: (randn(3, 5),), lambda: (t(0.0, 500.0),)),
    Case("TL202-alias-through-variable", "TL202", 2, fn("scores"), lambda: (randn(3, 5),),
         lambda: (t(0.0, 500.0, 1.0).repeat(2, 1),)),
    Case("TL202-layer", "TL202", 3, lambda ns, x: ns["Head"]()(x), lambda: (randn(2, 4),),
         lambda: (t(0.0, 500.0),)),
    Case("TL202-entropy", "TL202", 4, fn("entropy"), lambda: (randn(3, 5),),
         lambda: (t(0.0, 200.0, 0.0).repeat(2, 1),)),
    Case("TL202-module-function", "TL202", 5, fn("log_probs"), lambda: (randn(2, 3),),
         lambda: (t(1000.0, 0.0),)),
    Case("TL202-gather", "TL202", 6, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1])),
         lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), torch.tensor([1, 2]))),
    Case("TL202-column", "TL202", 7, fn("positive_score"), lambda: (randn(3, 4),),
         lambda: (t(900.0, 0.0, 0.0).repeat(2, 1),)),
    Case("TL202-special", "TL202", 8, fn("score"), lambda: (randn(4),), lambda: (t(1000.0, 0.0),)),
    # -- TL203 logsumexp ----------------------------------------------------------------------
    Case("TL203-dim", "TL203", 0, fn("log_partition"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=500.0),)),
    Case("TL203-keepdim-method", "TL203", 1, fn("f"), lambda: (randn(3, 4),), lambda: (t(1000.0, 2.0).repeat(3, 1),)),
    Case("TL203-all-elements", "TL203", 2, fn("f"), lambda: (randn(3, 4), randn(3, 4, seed=2)),
         lambda: (t(600.0, 1.0), t(400.0, 0.0))),
    Case("TL203-underflow", "TL203", 0, fn("log_partition"), lambda: (randn(5),), lambda: (t(-1000.0, -1001.0),)),
    Case("TL203-logaddexp", "TL203", 3, fn("f"), lambda: (randn(4), randn(4, seed=3)),
         lambda: (t(1000.0, -1000.0), t(999.0, -1002.0))),
    # every argument keeps its meaning: the shapes (and dtypes) of the results are compared too
    Case("TL203-keepdim-flag", "TL203",
         "import torch\n\n\ndef f(x, keep=True):\n    return torch.log(torch.exp(x).sum(dim=1, keepdim=keep))\n",
         fn("f"), lambda: (randn(3, 4),), lambda: (t(1000.0, 2.0).repeat(3, 1),)),
    Case("TL203-positional-dim-keepdim", "TL203",
         "import torch\n\n\ndef f(x):\n    return torch.log(torch.sum(torch.exp(x), 1, True))\n",
         fn("f"), lambda: (randn(3, 4),), lambda: (t(1000.0, 2.0).repeat(3, 1),)),
    Case("TL203-double", "TL203", 0, fn("log_partition"), lambda: (randn(3, 4).double(),),
         lambda: (randn(3, 4, scale=800.0).double(),)),
    # over every element with keepdim=True: logsumexp over a tuple of every dim keeps them all as 1
    Case("TL203-all-dims-keepdim", "TL203", 8, lambda ns, x: ns["log_normaliser"](x, SimpleNamespace(scores=x))[0],
         lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=500.0),)),
    Case("TL203-all-dims-keepdim-method-3d", "TL203", 8,
         lambda ns, x: ns["log_normaliser"](x, SimpleNamespace(scores=x))[1], lambda: (randn(2, 3, 4),),
         lambda: (randn(2, 3, 4, scale=500.0),)),
    Case("TL203-all-dims-keepdim-0d", "TL203", 8, lambda ns, x: ns["log_normaliser"](x, SimpleNamespace(scores=x))[0],
         lambda: (randn(1)[0],), lambda: (t(1000.0)[0],)),
    # the same of an expression whose rank the shape analysis knows: its dims spelled out
    Case("TL203-shifted-by-the-index", "TL203", 11, fn("shifted_by_the_index"), lambda: (randn(3, 4),),
         lambda: (randn(3, 4, scale=500.0),)),
    Case("TL203-all-dims-keepdim-known-rank", "TL203", 10, fn("log_normaliser"), lambda: (randn(12), randn(12, seed=4)),
         lambda: (randn(12, scale=500.0), randn(12, seed=4))),
    # -- TL204 softplus / logsigmoid ----------------------------------------------------------
    Case("TL204-softplus", "TL204", 0, fn("smooth_relu"), lambda: (randn(6, scale=3.0),), lambda: (t(100.0, 1000.0),)),
    Case("TL204-softplus-method", "TL204", 1, fn("smooth_relu"), lambda: (randn(6, scale=3.0),),
         lambda: (t(100.0, 1000.0),)),
    Case("TL204-logsigmoid", "TL204", 2, fn("gate"), lambda: (randn(6, scale=3.0),), lambda: (t(-200.0, -1000.0),)),
    Case("TL204-log-one-minus-sigmoid", "TL204", 3, fn("neg"), lambda: (randn(3, 2), randn(2, seed=4)),
         lambda: (t(50.0, 100.0).reshape(2, 1), t(2.0))),
    Case("TL204-sigmoid-column", "TL204", 5, fn("first_gate"), lambda: (randn(3, 2),),
         lambda: (t(-200.0, 1.0).repeat(2, 1),)),
    Case("TL204-log1p-exp", "TL204", 6, fn("f"), lambda: (randn(6),), lambda: (t(60.0, 500.0),)),
    # helpers that only wrap torch.log / torch.exp
    Case("TL202-log-helper", "TL202", 9, fn("log_probs"), lambda: (randn(3, 4),), lambda: (t(0.0, 1000.0).repeat(2, 1),)),
    Case("TL203-method-helpers", "TL203", 7, lambda ns, x: ns["Energy"]().free_energy(x), lambda: (randn(3, 4),),
         lambda: (randn(3, 4, scale=400.0),)),
    Case("TL204-log-helper", "TL204", 7, fn("softplus"), lambda: (randn(6),), lambda: (t(100.0, 500.0),)),
    # -- TL205 log1p / expm1: the original loses the small values ----------------------------
    Case("TL205-log1p", "TL205", 0, fn("rate"), lambda: (randn(5).abs(),), lambda: (t(1e-10, 3e-9),),
         before_extreme="inaccurate", truth=lambda x: torch.log1p(x.double())),
    Case("TL205-log1p-method", "TL205", 1, fn("f"), lambda: (randn(4).abs(), randn(4, seed=5).abs()),
         lambda: (t(1e-5, 2e-5), t(1e-5, 1e-5)), before_extreme="inaccurate",
         truth=lambda a, b: torch.log1p(a.double() * b.double())),
    Case("TL205-log1p-negated", "TL205", 2, fn("survival"), lambda: (torch.rand(5) * 0.9,), lambda: (t(1e-10, 4e-9),),
         before_extreme="inaccurate", truth=lambda p: torch.log1p(-p.double())),
    Case("TL205-expm1", "TL205", 4, fn("f"), lambda: (randn(5),), lambda: (t(1e-10, -3e-9),),
         before_extreme="inaccurate", truth=lambda x: torch.expm1(x.double())),
    Case("TL205-mu-law", "TL205", 3, fn("mu_law_expand"), lambda: (randn(5).clamp(-1, 1), t(255.0)),
         lambda: (t(1e-10, -2e-9), t(255.0)), before_extreme="inaccurate",
         truth=lambda x, mu: torch.sign(x.double()) * torch.expm1(x.double().abs() * torch.log1p(mu.double())) / mu),
    # element-wise spellings of the same formulas
    Case("TL205-log1p-torch-add", "TL205", 5, fn("f"), lambda: (randn(5).abs(),), lambda: (t(1e-10, 3e-9),),
         before_extreme="inaccurate", truth=lambda x: torch.log1p(x.double())),
    Case("TL205-log1p-add-method", "TL205", 6, fn("f"), lambda: (randn(5).abs(),), lambda: (t(1e-10, 3e-9),),
         before_extreme="inaccurate", truth=lambda x: torch.log1p(x.double())),
    Case("TL205-expm1-sub-method", "TL205", 7, fn("f"), lambda: (randn(5),), lambda: (t(1e-10, -3e-9),),
         before_extreme="inaccurate", truth=lambda x: torch.expm1(x.double())),
    # fractions of whole numbers (the integer-valued near miss is silent): same values after the fix
    Case("TL205-fraction-of-arange", "TL205", 8, fn("log_offsets"), lambda: (7,), None, grad=False),
    Case("TL205-halved-in-a-loop", "TL205", 9, fn("halving"), lambda: (7,), None, grad=False),
    Case("TL205-snapped-on-one-path", "TL205", 10, fn("maybe_snapped"), lambda: (randn(5).abs(), False),
         lambda: (t(1e-10, 3e-9), False), before_extreme="inaccurate",
         truth=lambda x, snap: torch.log1p(x.double())),
    # float32 on one path (float64 on the other, and in `growth` made float32 on purpose): still fixed
    Case("TL205-float32-path", "TL205", 11, fn("growth"), lambda: (randn(5).abs(),), lambda: (t(1e-10, 3e-9),),
         before_extreme="inaccurate", truth=lambda r: torch.log1p(r.double())),
    # float64 through a helper on one path only (the other term stays); a buffer that is read
    Case("TL205-helper-float32-path", "TL205", 12,
         lambda ns, n, u: (torch.manual_seed(0), ns["log_keep"](n, u))[1], lambda: (5, torch.rand(5) * 0.9), None,
         grad=False),
    Case("TL205-zero-dim-float64-gives-way", "TL205", 13, fn("shrink"), lambda: (torch.rand(5) * 0.9,),
         lambda: (t(1e-10, 3e-9),), grad=False, before_extreme="inaccurate",
         truth=lambda u: torch.log1p(-(0.5 * u.double()))),
    Case("TL205-buffer-through-a-lambda", "TL205", 13, lambda ns, b: ns["Chain"](b)(torch.ones(3), 1),
         lambda: (torch.rand(4) * 0.5,), None, grad=False),
    Case("TL205-read-buffers", "TL205", 14, lambda ns, b: ns["Schedule"](b)(torch.full((3,), 2.0), 2),
         lambda: (torch.rand(5) * 0.5,), lambda: (t(1e-10, 3e-9, 2e-9),), grad=False, before_extreme="inaccurate",
         truth=lambda b: (2 * torch.log1p(-b.double())[2] + torch.log1p(b.double())[2]).expand(3)),
    # float32 through the return of a method of the instance
    Case("TL205-method-float32-path", "TL205", 15,
         lambda ns, n: (torch.manual_seed(0), ns["Chain"](n)(torch.ones(n), torch.arange(n)))[1], lambda: (5,), None,
         grad=False),
    # clamped, but to a bound too small to keep `1 - h` from rounding to 1
    Case("TL205-tiny-clamp", "TL205", 16, fn("survival"), lambda: (torch.rand(5) * 0.9,), lambda: (t(1e-10, 4e-9),),
         before_extreme="inaccurate", truth=lambda p: torch.log1p(-p.double())),
    # rounded up: an error of 1e-7 near zero moves the result by a whole unit
    Case("TL205-ceil", "TL205", 17, fn("frames"), lambda: (randn(5).abs(),), lambda: (t(1e-9, 3e-8),),
         grad=False, before_extreme="inaccurate", truth=lambda x: torch.ceil(torch.expm1(x.double()))),
    Case("TL201-torch-div", "TL201", 11, fn("probs"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=400.0),)),
    Case("TL201-div-method", "TL201", 12, fn("probs"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=400.0),)),
    Case("TL201-numpy-keywords", "TL201", 17, fn("probs"), lambda: (randn(3, 4),), lambda: (randn(3, 4, scale=400.0),)),
    # numbers written out, scaled in place: a large factor overflows the exponentials
    Case("TL201-written-scaled", "TL201", 18, fn("scaled"), lambda: (0.5,), lambda: (1000.0,), grad=False),
    Case("TL203-numpy-keywords", "TL203", 12, fn("log_partition"), lambda: (randn(3, 4),),
         lambda: (randn(3, 4, scale=500.0),)),
    # -- TL206 softmax cross-entropy ----------------------------------------------------------
    Case("TL206-cookbook", "TL206", 0, lambda ns, y, x: ns["unstable_softmax_cross_entropy"](y, x),
         lambda: (soft(5), randn(5, seed=2)), lambda: (t(0.5, 0.5), t(1000.0, 0.0)),
         truth=lambda y, x: torch.tensor(500.0, dtype=torch.float64)),
    Case("TL206-distill", "TL206", 1, lambda ns, s, te: ns["distill"](s, te), lambda: (randn(4, 6), randn(4, 6, seed=3)),
         lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), t(0.0, 3.0, 0.0).repeat(2, 1))),
    Case("TL206-class-dim", "TL206", 2, lambda ns, y, x: ns["xent"](y, x), lambda: (soft(3, 4), randn(3, 4, seed=2)),
         lambda: (soft(2, 3), t(0.0, 1000.0, 5.0).repeat(2, 1))),
    Case("TL206-index", "TL206", 3, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1])),
         lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), torch.tensor([1, 0]))),
    Case("TL206-index-range", "TL206", 4, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1]), 4),
         lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), torch.tensor([1, 0]), 2)),
    Case("TL206-index-other-dim", "TL206", 8, fn("nll"), lambda: (randn(4, 3, 5), torch.tensor([0, 2, 1, 1])),
         lambda: (torch.tensor([[[1000.0, 0.0]], [[0.0, 900.0]]]), torch.tensor([0, 0]))),
    # the class dim not spelled, the input 2-D by construction: F.cross_entropy over dim 1
    Case("TL206-index-implicit-dim-2d", "TL206", 13, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1])),
         lambda: (t(1000.0, 0.0, 0.0, 0.0, 0.0, 900.0).reshape(2, 3), torch.tensor([1, 0]))),
    # with runtime-fixes = "runtime": torchlint.runtime.softmax_cross_entropy, called by keyword
    Case("TL206-runtime-distill", "TL206", 6, lambda ns, s, te: ns["distill"](s, te),
         lambda: (randn(4, 6), randn(4, 6, seed=3)), lambda: (t(1000.0, 0.0, 0.0).repeat(2, 1), t(0.0, 3.0, 0.0).repeat(2, 1))),
    Case("TL206-runtime-class-dim", "TL206", 7, lambda ns, y, x: ns["xent"](y, x), lambda: (soft(3, 4), randn(3, 4, seed=2)),
         lambda: (soft(2, 3), t(0.0, 1000.0, 5.0).repeat(2, 1))),
    # -- TL207 sigmoid + BCE: the original saturates (clamped at 100, zero gradient) ---------
    Case("TL207-functional", "TL207", 0, fn("loss"), lambda: (randn(6), torch.rand(6)), lambda: (t(150.0, -150.0), t(0.0, 1.0)),
         before_extreme="saturated", truth=lambda x, y: torch.tensor(300.0, dtype=torch.float64)),
    Case("TL207-criterion", "TL207", 1, lambda ns, x, y: ns["step"](lambda v: v, x, y), lambda: (randn(6), torch.rand(6)),
         lambda: (t(150.0, -150.0), t(0.0, 1.0)), before_extreme="saturated",
         truth=lambda x, y: torch.tensor(150.0, dtype=torch.float64)),
    Case("TL207-handwritten", "TL207", 3, fn("bce"), lambda: (randn(6), torch.rand(6)), lambda: (t(50.0, -200.0), t(0.0, 1.0)),
         truth=lambda x, y: torch.tensor(125.0, dtype=torch.float64)),
    # -- TL208 clamp before log (unsafe: equal as long as nothing is below eps) ----------------
    Case("TL208-gather", "TL208", 0, fn("nll"), lambda: (randn(4, 3), torch.tensor([0, 2, 1, 1])),
         lambda: (t(0.0, 1000.0, 0.0).repeat(2, 1), torch.tensor([0, 2]))),
    Case("TL208-masked-sigmoid", "TL208", 1, fn("confidence"), lambda: (randn(5).abs() + 0.1,),
         lambda: (t(-200.0, 3.0, 0.0),)),
    Case("TL208-counts", "TL208", 2, fn("class_prior"), lambda: (torch.tensor([0, 1, 1, 2, 2, 2]), 3),
         lambda: (torch.tensor([0, 1, 1, 0]), 3), grad=False),
    Case("TL208-one-minus", "TL208", 3, fn("top"), lambda: (randn(3, 4),), lambda: (t(0.0, 200.0).repeat(2, 1),)),
    # `p - eps` -> `p + eps`: equal up to the eps on ordinary probabilities, finite where p is 0
    Case("TL208-eps-subtracted", "TL208", 4, fn("log_probs"), lambda: (randn(3, 4),),
         lambda: (t(0.0, 1000.0).repeat(2, 1),)),
    Case("TL208-eps-subtracted-sigmoid", "TL208", 5, fn("log_gate"), lambda: (randn(6),),
         lambda: (t(-200.0, 0.0, 3.0),)),
    # replaced by nan_to_num only after the loss used it: the clamp makes the loss finite
    Case("TL208-replaced-too-late", "TL208", 6, lambda ns, x, g: ns["scores"](x, g)[0],
         lambda: (randn(3, 4), torch.rand(3, 4) + 0.1), lambda: (t(0.0, 1000.0).repeat(2, 1), torch.ones(2, 2))),
    # `log(1 - p)` in a helper whose caller passes softmax probabilities: a probability of 1 makes it -inf
    Case("TL208-one-minus-passed", "TL208", 7, fn("far_penalty"),
         lambda: (torch.softmax(randn(3, 5), dim=1), torch.tensor([0, 4, 2])),
         lambda: (t(1.0, 0.0, 0.0, 0.0, 0.0).repeat(2, 1), torch.tensor([0, 1]))),
    # the same in a helper whose caller passes sigmoid outputs: a prediction of 1 makes it -inf
    Case("TL208-one-minus-passed-sigmoid", "TL208", 8, fn("negative_term"),
         lambda: (torch.sigmoid(randn(6, 1)), torch.zeros(6, 1)),
         lambda: (t(1.0, 0.5).reshape(2, 1), torch.zeros(2, 1))),
    # the Jacobian of a tanh-squashed action: a mean far from 0 saturates the tanh and the log is -inf
    Case("TL208-tanh-jacobian", "TL208", 9,
         lambda ns, mean, log_std: (torch.manual_seed(0), ns["squashed_sample"](mean, log_std)[1])[1],
         lambda: (randn(3, 2), randn(3, 2, seed=2) * 0.1),
         lambda: (t(0.1, 40.0).repeat(2, 1), torch.zeros(2, 2))),
    # the Gumbel trick without its eps: the uniform draw is handed in (`torch.rand_like` replaced for the call),
    # ordinary draws never hold a 0, the extreme one does
    Case("TL208-gumbel-draw", "TL208", 10, lambda ns, logits, draw: _drawing(draw, lambda: ns["gumbel"](logits)),
         lambda: (randn(3, 4), torch.rand(3, 4) * 0.9 + 0.05), lambda: (randn(2, 2), t(0.0, 0.5, 0.25, 0.75).reshape(2, 2))),
    # the log of a ReLU output: negative inputs give 0 and -inf
    Case("TL208-relu", "TL208", 11, fn("log_energy"), lambda: (randn(6).abs() + 0.1,), lambda: (t(-1.0, 2.0, 0.0),)),
]


def _drawing(draw, run):
    """Run ``run()`` with ``torch.rand_like`` giving ``draw`` (the same shape as what it is asked for)."""
    original = torch.rand_like
    torch.rand_like = lambda like, **kw: draw.clone()
    try:
        return run()
    finally:
        torch.rand_like = original


def _fixed(rule_code: str, source: str, options=None) -> str:
    settings = Settings(rules=[RULES[rule_code]], options=dict(options or {}), fix=True, unsafe_fixes=True)
    result = lint_source("case.py", source, settings)
    assert not result.errors
    assert result.fixed_source is not None and result.fixed_source != source, "the rule offered no fix"
    return result.fixed_source


def _program(case: Case) -> Tuple[str, str]:
    rule = RULES[case.rule]
    source = rule.INVALID[case.source].code if isinstance(case.source, int) else case.source
    options = rule.INVALID[case.source].options if isinstance(case.source, int) else {}
    fixed = _fixed(case.rule, source, options)
    if isinstance(case.source, int) and rule.INVALID[case.source].fixed is not None:
        assert fixed == rule.INVALID[case.source].fixed
    return source, fixed


def _run(source: str, case: Case, inputs: Tuple, grad: bool):
    namespace: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), namespace)
    inputs = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
    first = inputs[0]
    if grad and isinstance(first, torch.Tensor) and first.is_floating_point():
        first.requires_grad_(True)
        out = case.call(namespace, *inputs)
        finite = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        (g,) = torch.autograd.grad(finite.sum(), first, allow_unused=True)
        return out.detach(), g
    return case.call(namespace, *inputs).detach(), None


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fix_keeps_values_on_ordinary_inputs(case):
    before_src, after_src = _program(case)
    inputs = case.normal()
    before, g_before = _run(before_src, case, inputs, case.grad)
    after, g_after = _run(after_src, case, inputs, case.grad)
    assert torch.isfinite(before).all()
    assert (after.shape, after.dtype) == (before.shape, before.dtype)
    torch.testing.assert_close(after, before, rtol=1e-5, atol=1e-6)
    if g_before is not None:
        torch.testing.assert_close(g_after, g_before, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c.extreme is not None], ids=[c.id for c in CASES if c.extreme])
def test_fix_is_finite_where_the_original_breaks(case):
    before_src, after_src = _program(case)
    inputs = case.extreme()
    before, _ = _run(before_src, case, inputs, grad=False)
    after, g_after = _run(after_src, case, inputs, case.grad)
    assert torch.isfinite(after).all(), f"fixed code is not finite: {after}"
    assert (after.shape, after.dtype) == (before.shape, before.dtype)
    if g_after is not None:
        assert torch.isfinite(g_after).all(), f"fixed code's gradient is not finite: {g_after}"
    if case.before_extreme == "nonfinite":
        assert not torch.isfinite(before).all(), f"the original was already finite: {before}"
    else:
        truth = case.truth(*inputs)
        # the original is finite but wrong; the fix is right
        assert not torch.allclose(before.double(), truth, rtol=1e-3, atol=0)
        torch.testing.assert_close(after.double(), truth, rtol=1e-5, atol=0)
    if case.truth is not None and case.before_extreme == "nonfinite":
        torch.testing.assert_close(after.double(), case.truth(*inputs), rtol=1e-5, atol=1e-6)


def test_logsumexp_over_everything_with_a_keepdim_flag_gets_no_fix():
    """``log(sum(exp(x), None, keepdim=keep))`` is ``[1, 1]`` or 0-d for a matrix, as ``keep`` says: neither
    a flattened logsumexp nor one over every dim with ``keepdim=True`` has that shape in both cases, so
    the finding comes without a fix."""
    source = "import torch\n\n\ndef f(x, keep):\n    return torch.log(torch.sum(torch.exp(x), None, keepdim=keep))\n"
    result = lint_source("case.py", source, Settings(rules=[RULES["TL203"]], fix=True, unsafe_fixes=True))
    assert [d.code for d in result.diagnostics] == ["TL203"]
    assert result.fixed_source is None


def test_saturated_bce_gradient_comes_back():
    """Through `F.binary_cross_entropy(torch.sigmoid(x), y)` a confidently wrong logit gets no gradient;
    after the fix it gets the full one."""
    case = [c for c in CASES if c.id == "TL207-functional"][0]
    before_src, after_src = _program(case)
    x, y = t(150.0, -150.0), t(0.0, 1.0)
    _, g_before = _run(before_src, case, (x, y), grad=True)
    _, g_after = _run(after_src, case, (x, y), grad=True)
    assert torch.count_nonzero(g_before) == 0
    torch.testing.assert_close(g_after, t(1.0, -1.0))


def test_every_tl2_fix_is_exercised():
    """Each TL2 rule with a fix has at least one case here, for each of its fixed INVALID cases but
    those documented as untestable (none)."""
    covered = {(c.rule, c.source) for c in CASES if isinstance(c.source, int)}
    for code, rule in RULES.items():
        if not code.startswith("TL2"):
            continue
        for i, inv in enumerate(rule.INVALID):
            if inv.fixed is not None:
                assert (code, i) in covered, f"{code} INVALID[{i}] has a fix that no equivalence case runs"
