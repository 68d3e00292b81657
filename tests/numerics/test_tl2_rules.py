"""The TL2 rules together: each pattern is reported once, by the rule that owns it, with every rule
enabled; look-alikes from numpy/math/scipy and stable code stay silent; fixes converge."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = all_rules()


def tl2(code: str):
    result = lint_source("case.py", textwrap.dedent(code), Settings(rules=RULES))
    assert not result.errors
    return [(d.line, d.code) for d in result.diagnostics if d.code.startswith("TL2")]


# programs in the shape of the cookbook's examples, and the expected (line, code) findings
REPORTED = {
    "naive softmax": (
        """
        import torch


        def unstable_softmax(logits):
            exp = torch.exp(logits)
            return exp / torch.sum(exp)
        """,
        [(7, "TL201")],
    ),
    "log of softmax before nll_loss": (
        """
        import torch
        import torch.nn.functional as F


        def nll(logits, target):
            log_probs = torch.log(F.softmax(logits, dim=1))
            return F.nll_loss(log_probs, target)
        """,
        [(7, "TL202")],
    ),
    "log-sum-exp": (
        """
        import torch


        def log_partition(scores):
            return torch.log(torch.sum(torch.exp(scores), dim=-1))
        """,
        [(6, "TL203")],
    ),
    "softplus": (
        """
        import torch


        def smooth_relu(x):
            return torch.log(1 + torch.exp(x))
        """,
        [(6, "TL204")],
    ),
    # the softmax is max-shifted (stable), its log is not: one finding, for the whole loss
    "cookbook cross-entropy": (
        """
        import torch


        def softmax(logits):
            exp = torch.exp(logits - torch.max(logits))
            return exp / torch.sum(exp)


        def unstable_softmax_cross_entropy(labels, logits):
            logits = torch.log(softmax(logits))
            return -torch.sum(labels * logits)
        """,
        [(12, "TL206")],
    ),
    # both the naive softmax and the loss built on it
    "naive softmax inside a cross-entropy": (
        """
        import torch


        def xent(labels, logits):
            e = torch.exp(logits)
            p = e / e.sum(-1, keepdim=True)
            return -(labels * torch.log(p)).sum(-1)
        """,
        [(7, "TL201"), (8, "TL206")],
    ),
    "hand-written BCE owns its logs": (
        """
        import torch


        def bce(x, y):
            p = torch.sigmoid(x)
            return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
        """,
        [(7, "TL207")],
    ),
    "class-index NLL owns its log": (
        """
        import torch


        def nll(logits, y):
            p = torch.softmax(logits, 1)
            return -torch.log(p[torch.arange(len(y)), y]).mean()
        """,
        [(7, "TL206")],
    ),
    "log1p and expm1": (
        """
        import torch


        def f(x):
            return torch.log(1 + x) * (torch.exp(x) - 1)
        """,
        [(6, "TL205"), (6, "TL205")],
    ),
    "log of a masked probability": (
        """
        import torch


        def f(logits, mask):
            p = torch.softmax(logits, -1)
            return torch.log((p * mask).sum(-1))
        """,
        [(7, "TL208")],
    ),
}

SILENT = {
    "cookbook stable cross-entropy and safe log": """
        import torch


        def softmax_cross_entropy(labels, logits, dim=-1):
            scaled_logits = logits - torch.max(logits)
            normalized_logits = scaled_logits - torch.logsumexp(scaled_logits, dim)
            return -torch.sum(labels * normalized_logits)


        def safe_log(p, eps=1e-8):
            return torch.log(p.clamp_min(eps))
        """,
    "log_softmax before nll_loss": """
        import torch.nn.functional as F


        def nll(logits, target):
            return F.nll_loss(F.log_softmax(logits, dim=1), target)
        """,
    "numpy softmax without torch": """
        import numpy as np


        def softmax(x):
            e = np.exp(x)
            return e / e.sum()
        """,
    "numpy, math and scipy look-alikes in a torch file": """
        import math

        import numpy as np
        import torch
        from scipy.special import expit, softmax


        def f(x, t):
            a = np.log(1 + np.exp(x)) + math.log(1 + t) + (math.exp(t) - 1)
            b = np.log(softmax(x)) + np.log(expit(x))
            e = np.exp(x)
            return a + b + e / e.sum() + torch.zeros(1)
        """,
    "stable spellings": """
        import torch
        import torch.nn.functional as F


        def f(x, y, x_max):
            m = x.amax(-1, keepdim=True)
            a = F.softplus(x) + F.logsigmoid(x) + torch.log1p(x) + torch.expm1(x)
            b = torch.logsumexp(x, -1) + m + torch.log(torch.sum(torch.exp(x - m), -1))
            c = F.binary_cross_entropy_with_logits(x, y) + F.cross_entropy(x, y)
            d = torch.log(torch.softmax(x, -1) + 1e-9) + torch.log(torch.sigmoid(x).clamp(min=1e-6))
            w = torch.exp(x - x.amax(-1, keepdim=True)) + torch.exp(x - x_max)
            return a + b + c + d + w / w.sum(-1, keepdim=True)
        """,
    "Lightning logging is not a log": """
        import torch


        class Model:
            def training_step(self, batch):
                loss = torch.softmax(batch, 1).sum()
                self.log("loss", loss)
                self.log(torch.sigmoid(loss))
                return loss
        """,
}


@pytest.mark.parametrize("name", list(REPORTED))
def test_reported_once_by_the_owner(name):
    code, expected = REPORTED[name]
    assert sorted(tl2(code)) == sorted(expected)


@pytest.mark.parametrize("name", list(SILENT))
def test_silent(name):
    assert tl2(SILENT[name]) == []


@pytest.mark.slow
def test_all_fixes_together_converge_and_are_idempotent():
    source = textwrap.dedent(
        '''
        """Losses."""
        import torch
        import torch.nn.functional as F


        def a(y, x):
            return -torch.sum(y * torch.log(F.softmax(x, dim=-1)))


        def b(y, x):
            lp = torch.log(torch.softmax(x, 1))
            return -(y * lp).sum(1).mean()


        def c(x, y):
            p = torch.sigmoid(x)
            return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean() + torch.log(p).mean()


        def d(x):
            e = torch.exp(x)
            return torch.log(e / e.sum(-1, keepdim=True))
        '''
    )
    settings = Settings(rules=RULES, fix=True, unsafe_fixes=True)
    first = lint_source("case.py", source, settings)
    assert not first.errors
    fixed = first.fixed_source
    assert fixed is not None
    cst.parse_module(fixed)
    # the project (this repository) does not declare torchlint[runtime]: plain-torch rewrites, no import
    assert "torchlint" not in fixed and fixed.count("log_softmax") >= 2
    assert "torch.log(" not in fixed and "torch.exp(" not in fixed
    assert [d.code for d in first.diagnostics if d.code.startswith("TL2")] == []
    again = lint_source("case.py", fixed, settings)
    assert again.fixed_source is None
    namespace: dict = {}
    exec(compile(fixed, "case.py", "exec"), namespace)
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1000.0, 0.0], [0.0, 3.0]])
    y = torch.tensor([[0.5, 0.5], [1.0, 0.0]])
    for name in ("a", "b"):
        assert torch.isfinite(namespace[name](y, x)).all()
    assert torch.isfinite(namespace["c"](x, y)).all()
    assert torch.isfinite(namespace["d"](x)).all()


@pytest.mark.slow  # a Python subprocess
def test_rules_do_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, textwrap\n"
        "from torchlint.engine import Settings, lint_source\n"
        "from torchlint.rules import all_rules\n"
        "lint_source('a.py', 'import torch\\nx = torch.log(torch.softmax(y, 1))\\n', Settings(rules=all_rules()))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("written,found", [
    ("[[1.5, 0.8, 2.1]]", []),  # a worked example: no probability of it underflows
    ("[[120.0, 0.5, -3.0]]", ["TL202"]),  # exp(-119.5) is 0 in float32: the log is -inf
])
def test_a_softmax_of_numbers_written_out_is_judged_by_their_spread(written, found):
    code = f"""
        import torch
        import torch.nn as nn

        logits = torch.tensor({written})
        print(nn.NLLLoss()(torch.log(torch.softmax(logits, dim=1)), torch.tensor([2])))
    """
    assert [c for _, c in tl2(code)] == found


@pytest.mark.parametrize("written,found", [
    ("[0.8, -2.0]", []),  # a sigmoid far from 0 and 1
    ("[0.8, 40.0]", ["TL207"]),  # sigmoid(40) is 1.0 in float32: BCE saturates
])
def test_a_sigmoid_of_numbers_written_out_is_judged_by_their_size(written, found):
    code = f"""
        import torch
        import torch.nn as nn

        z = torch.tensor({written})
        print(nn.BCELoss()(torch.sigmoid(z), torch.tensor([1.0, 0.0])))
    """
    assert [c for _, c in tl2(code)] == found
