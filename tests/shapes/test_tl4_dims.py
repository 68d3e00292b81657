"""TL401/TL402 on whole files, and what their fixes do to the numbers."""
from __future__ import annotations

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

TL4 = [r for r in all_rules() if r.CODE.startswith("TL4")]


def lint(code, fix=False, unsafe=False):
    result = lint_source("case.py", code, Settings(rules=TL4, fix=fix, unsafe_fixes=unsafe))
    assert not result.errors
    return result


IMPLICIT = """
import torch


class Regressor(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.head = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.head(x).squeeze()


a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(a + b)
"""

EXPLICIT = """
import torch


class Regressor(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.head = torch.nn.Linear(features, 1)

    def forward(self, x):
        return self.head(x).squeeze(-1)


a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(a + b, 0)
d = torch.nn.functional.mse_loss(a.squeeze(1), b)
e = (a.squeeze(1) - b).pow(2).mean()
"""


def test_implicit_forms_are_reported():
    assert [(d.line, d.code) for d in lint(IMPLICIT).diagnostics] == [(11, "TL401"), (16, "TL402")]


def test_explicit_forms_are_silent():
    assert lint(EXPLICIT).diagnostics == []


def test_squeeze_fix_is_safe_tl402_fix_needs_unsafe():
    safe = lint(IMPLICIT, fix=True)
    assert "self.head(x).squeeze(-1)" in safe.fixed_source
    assert "torch.sum(a + b)" in safe.fixed_source
    both = lint(IMPLICIT, fix=True, unsafe=True)
    assert "torch.sum(a + b[:, None])" in both.fixed_source
    assert lint(both.fixed_source).diagnostics == []


torch = pytest.importorskip("torch")


def run(code):
    namespace = {}
    exec(compile(code, "case.py", "exec"), namespace)
    return namespace


def test_cookbook_numbers_before_and_after_the_fix():
    before = run(IMPLICIT)
    after = run(lint(IMPLICIT, fix=True, unsafe=True).fixed_source)
    assert before["c"].item() == 12.0  # the surprise the cookbook describes
    assert after["c"].item() == 6.0  # element-wise pairing, as intended


def test_squeeze_fix_keeps_the_batch_dimension_of_one():
    before = run(IMPLICIT)["Regressor"](4)
    fixed_ns = run(lint(IMPLICIT, fix=True).fixed_source)
    after = fixed_ns["Regressor"](4)
    after.load_state_dict(before.state_dict())
    one = torch.randn(1, 4)
    assert before(one).shape == ()  # the batch dimension is gone
    assert after(one).shape == (1,)
    many = torch.randn(3, 4)
    assert torch.equal(before(many), after(many))


def test_value_preserving_alignment_when_nothing_is_stretched():
    code = """
import torch

x = torch.arange(15.).view(5, 3)
bias = torch.tensor([1., 2., 3.])
total = ((x - bias) ** 2).mean()
"""
    fixed = lint(code, fix=True, unsafe=True).fixed_source
    assert "bias[None, :]" in fixed
    assert torch.equal(run(code)["total"], run(fixed)["total"])


LOSS_CASES = [
    ("F.mse_loss", lambda p, t: ((p - t) ** 2).mean()),
    ("F.l1_loss", lambda p, t: (p - t).abs().mean()),
    ("torch.nn.SmoothL1Loss()", lambda p, t: torch.nn.functional.smooth_l1_loss(p, t)),
]


@pytest.mark.parametrize("loss,pairwise", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_fix_compares_each_prediction_with_its_own_target(loss, pairwise):
    code = f"""
import torch
import torch.nn.functional as F

pred = torch.arange(6.).view(6, 1) / 3
target = torch.tensor([0.5, 1.0, 0.0, 2.0, 1.5, 3.0])
value = {loss}(pred, target)
"""
    assert [d.code for d in lint(code).diagnostics] == ["TL402"]
    result = lint(code, fix=True, unsafe=True)
    assert "(pred.squeeze(-1), target)" in result.fixed_source
    assert lint(result.fixed_source).diagnostics == []
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the size mismatch of the original
        before = run(code)
    after = run(result.fixed_source)
    expected = pairwise(before["pred"][:, 0], before["target"])
    assert not torch.allclose(before["value"], expected)  # the broadcast compared 36 pairs
    assert torch.allclose(after["value"], expected)


def test_function_spelling_gets_the_cookbook_fix_too():
    code = """
import torch

a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
c = torch.sum(torch.add(a, b))
d = a.add(b).sum()
"""
    assert [d.code for d in lint(code).diagnostics] == ["TL402", "TL402"]
    fixed = lint(code, fix=True, unsafe=True).fixed_source
    before, after = run(code), run(fixed)
    assert before["c"].item() == before["d"].item() == 12.0
    assert after["c"].item() == after["d"].item() == 6.0


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA"))]

BUILT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Price(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(7, 12)
        self.head = nn.Linear(12, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


class Mask(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 1, 3, padding=1)

    def forward(self, img):
        return self.conv(img)


def losses(device):
    torch.manual_seed(0)
    table = TensorDataset(torch.randn(24, 7), torch.randn(24))
    pictures = TensorDataset(torch.randn(6, 2, 5, 5), torch.rand(6, 5, 5))
    price = Price().to(device)
    mask = Mask().to(device)
    out = []
    for x, y in DataLoader(table, batch_size=8):
        x, y = x.to(device), y.to(device)
        pred = price(x)
        out.append(F.mse_loss(pred, y))
        out.append(nn.L1Loss()(pred, y))
    for img, m in DataLoader(pictures, batch_size=3):
        img, m = img.to(device), m.to(device)
        out.append(F.smooth_l1_loss(mask(img), m))
    return out, price, mask, table, pictures
"""


def test_shapes_from_how_model_and_data_are_built_are_reported():
    found = [(d.line, d.code) for d in lint(BUILT).diagnostics]
    assert found == [(37, "TL402"), (38, "TL402"), (41, "TL402")]
    messages = [d.message for d in lint(BUILT).diagnostics]
    assert "[?, 1]" in messages[0] and "[?]" in messages[0]
    assert "[?, 1, ?, ?]" in messages[2] and "[?, 5, 5]" in messages[2] and "squeeze(1)" in messages[2]


@pytest.mark.parametrize("device", DEVICES)
def test_fix_of_built_shapes_compares_each_prediction_with_its_own_target(device):
    import warnings

    fixed = lint(BUILT, fix=True, unsafe=True).fixed_source
    assert "F.mse_loss(pred.squeeze(-1), y)" in fixed and "mask(img).squeeze(1), m" in fixed
    assert lint(fixed).diagnostics == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the size mismatch of the original
        before, *_ = run(BUILT)["losses"](device)
    after, price, mask, table, pictures = run(fixed)["losses"](device)
    x, y = (t.to(device) for t in table.tensors)
    img, m = (t.to(device) for t in pictures.tensors)
    with torch.no_grad():
        p = price(x)[:, 0]
        q = mask(img)[:, 0]
    expected = []
    for k in range(0, 24, 8):
        expected.append(((p[k:k + 8] - y[k:k + 8]) ** 2).mean())
        expected.append((p[k:k + 8] - y[k:k + 8]).abs().mean())
    expected += [torch.nn.functional.smooth_l1_loss(q[k:k + 3], m[k:k + 3]) for k in (0, 3)]
    order = [0, 1, 2, 3, 4, 5, 6, 7]
    for k in order:
        assert torch.allclose(after[k].detach(), expected[k], atol=1e-6)
    assert not all(torch.allclose(b.detach(), e, atol=1e-6) for b, e in zip(before, expected))
