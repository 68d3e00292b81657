"""TL301-TL304 together on whole files: who reports what, what stays silent, and fixes that run."""
from __future__ import annotations

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

TL3 = [r for r in all_rules() if r.CODE.startswith("TL3")]


def lint(code, fix=False, unsafe=False):
    result = lint_source("case.py", code, Settings(rules=TL3, fix=fix, unsafe_fixes=unsafe))
    assert not result.errors
    return result


def codes(code):
    return [(d.line, d.code) for d in lint(code).diagnostics]


ROW_SUM = """
import torch

x = torch.rand([500, 10])
z = torch.zeros([10])
for i in range(500):
    z += x[i]
"""

GATHER = """
import torch


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)
"""

VECTORIZED = """
import torch


def column_sums(x):
    return torch.sum(x, dim=0)


def batch_gather(tensor, indices):
    rows = torch.arange(tensor.size(0), device=tensor.device)
    rows = rows.view(-1, *([1] * (indices.dim() - 1)))
    return tensor[rows, indices]
"""

# what library code does all the time: none of it is a loop over tensor rows
LIBRARY = """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dims, heads):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for d in dims])
        self.heads = nn.ModuleList([nn.Linear(dims[-1], 1) for _ in range(heads)])
        self.depths = [2, 2, 6, 2]

    def forward(self, x, hidden):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
        outs = []
        for i in range(len(self.heads)):
            outs.append(self.heads[i](x))
        total = 0
        for i in range(len(self.depths)):
            total += self.depths[i]
        for t in range(x.size(0)):
            hidden = torch.tanh(x[t] + hidden)
        return torch.stack(outs), hidden, total


def train(model, loader, opt, epochs):
    losses = []
    for epoch in range(epochs):
        for batch in loader:
            opt.zero_grad()
            loss = model(batch).sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


def ragged(features, lengths, boxes: torch.Tensor, keep: torch.Tensor):
    out = [features[i][: lengths[i]] for i in range(len(features))]
    kept = []
    for i in range(boxes.shape[0]):
        kept.append(boxes[i][keep[i]])
    return out, kept


def on_device(x: torch.Tensor):
    if torch.cuda.is_available():
        x = x.cuda()
    return x
"""


def test_row_sum_is_tl301_only():
    assert codes(ROW_SUM) == [(6, "TL301")]


def test_gather_loop_is_tl302_only():
    assert codes(GATHER) == [(7, "TL302")]


def test_vectorized_and_library_code_are_silent():
    assert codes(VECTORIZED) == []
    assert codes(LIBRARY) == []


def test_no_torch_no_findings():
    code = "total = 0\nfor i in range(10):\n    total += i\nrows = [[1], [2]]\nfor r in rows:\n    total += r[0]\n"
    assert codes(code) == []


def test_fixing_all_tl3_findings_converges():
    source = ROW_SUM + GATHER.replace("import torch\n", "") + """

def mean_rows(x: torch.Tensor):
    out = []
    for i in range(x.size(0)):
        out.append(x[i].mean())
    return torch.stack(out)


def offsets(tensor):
    return torch.arange(tensor.size(0)).cuda()
"""
    first = lint(source, fix=True, unsafe=True)
    assert first.fixed_source is not None
    assert first.diagnostics == []
    again = lint(first.fixed_source, fix=True, unsafe=True)
    assert again.fixed_source is None and again.diagnostics == []
    fixed = first.fixed_source
    assert "z += x.sum(dim=0)" in fixed
    assert "return tensor[torch.arange(tensor.size(0), device=tensor.device)" in fixed
    assert "for x_i in torch.unbind(x):" in fixed
    assert "torch.arange(tensor.size(0), device=tensor.device)" in fixed


# -- the fixes compute what the loops computed -----------------------------------------------
torch = pytest.importorskip("torch")

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")),
]


def run(code, name, *args):
    namespace = {}
    exec(compile(code, "case.py", "exec"), namespace)
    return namespace[name](*args)


FUNCTIONS = """
import torch


def row_sum(x, n):
    z = torch.zeros(x.size(1), dtype=x.dtype, device=x.device)
    for i in range(n):
        z += x[i]
    return z


def iter_sum(x: torch.Tensor):
    total = 0
    for row in x:
        total = total + row
    return total


def row_norms(x: torch.Tensor):
    out = []
    for i in range(x.size(0)):
        out.append(torch.linalg.norm(x[i, 1:]) * 2)
    return torch.stack(out)


def shifted(x):
    offsets = torch.arange(x.size(0)).cuda()
    return x + offsets[:, None]
"""


@pytest.mark.parametrize("device", DEVICES)
def test_fixes_keep_the_results(device):
    result = lint(FUNCTIONS, fix=True, unsafe=True)
    assert result.diagnostics == [] and result.fixed_count == 4
    fixed = result.fixed_source
    x = torch.randn(7, 4, dtype=torch.float64, device=device)
    for name, args in (("row_sum", (x, 5)), ("iter_sum", (x,)), ("row_norms", (x,))):
        expected = run(FUNCTIONS, name, *args)
        got = run(fixed, name, *args)
        assert got.device == expected.device
        assert torch.allclose(got, expected), name
    # TL304: the fixed function follows its input's device (the original needs CUDA)
    got = run(fixed, "shifted", x)
    assert got.device == x.device
    if device == "cuda":
        assert torch.equal(got, run(FUNCTIONS, "shifted", x))


PER_ROW_SCORES = """
import torch


def scores(queries: torch.Tensor, keys: torch.Tensor):
    out = []
    for i in range(queries.size(0)):
        out.append(queries[i] @ keys.T)
    return torch.stack(out)
"""


@pytest.mark.parametrize("device", DEVICES)
def test_fix_of_per_row_scores_keeps_each_row(device):
    """`q[i] @ k.T` is a row's scores (not a sweep of one value over a tensor): the loop is reported with
    one `matmul` named and the unbind fix, which computes the same rows bit for bit."""
    result = lint(PER_ROW_SCORES, fix=True)
    assert result.fixed_count == 1 and "for queries_i in torch.unbind(queries):" in result.fixed_source
    assert "one `matmul`" in lint(PER_ROW_SCORES).diagnostics[0].message
    q = torch.randn(6, 5, device=device)
    k = torch.randn(9, 5, device=device)
    expected = run(PER_ROW_SCORES, "scores", q, k)
    got = run(result.fixed_source, "scores", q, k)
    assert got.device == expected.device and got.shape == (6, 9)
    assert torch.equal(got, expected)
    assert torch.allclose(got, q @ k.T, atol=1e-5)
