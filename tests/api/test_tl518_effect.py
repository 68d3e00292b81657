"""TL518 parameter-moved-after-creation predicts what training does: the moved value is missing from
``parameters()`` and never trained; after the rule's (unsafe) fix it is a parameter the optimizer updates."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torchlint.engine import Settings, lint_source  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")),
]
TL518 = [r for r in all_rules() if r.CODE == "TL518"]

PROGRAM = '''
import torch
import torch.nn as nn

DEVICE = "cpu"


class Gain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.body = nn.Linear(n, n).to(DEVICE, torch.float64)
        self.gain = nn.Parameter(torch.ones(n)).to(DEVICE, torch.float64)

    def forward(self, x):
        return self.body(x) * self.gain


def train(steps):
    torch.manual_seed(0)
    model = Gain(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 4, device=DEVICE, dtype=torch.float64)
    y = 3 * x
    for _ in range(steps):
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
    return model
'''


def _run(source: str, device: str):
    namespace: dict = {"__name__": "effect"}
    exec(compile(source.replace('DEVICE = "cpu"', f'DEVICE = "{device}"'), "model.py", "exec"), namespace)
    return namespace["train"](20)


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_tl518_the_moved_parameter_is_missing_and_untrained_until_fixed(device):
    result = lint_source("model.py", PROGRAM, Settings(rules=TL518))
    assert [d.code for d in result.diagnostics] == ["TL518"]
    fixed = lint_source("model.py", PROGRAM, Settings(rules=TL518, fix=True, unsafe_fixes=True)).fixed_source
    assert fixed is not None and "nn.Parameter(torch.ones(n).to(DEVICE, torch.float64))" in fixed
    assert lint_source("model.py", fixed, Settings(rules=TL518)).diagnostics == []

    before = _run(PROGRAM, device)
    assert "gain" not in dict(before.named_parameters())
    assert not isinstance(before.gain, torch.nn.Parameter)
    assert torch.equal(before.gain.detach().cpu(), torch.ones(4, dtype=torch.float64))  # never trained

    after = _run(fixed, device)
    assert "gain" in dict(after.named_parameters())
    assert after.gain.device.type == device and after.gain.dtype == torch.float64
    assert not torch.equal(after.gain.detach().cpu(), torch.ones(4, dtype=torch.float64))  # trained
