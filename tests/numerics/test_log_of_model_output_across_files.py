"""TL202 and TL208 on a class method of a policy module, called only from a training script of the same
project (``Policy.train_model(net, ...)``): the parameter ``net`` holds what every such call passes, so the
log of ``net(states)`` is the log of a softmax when the policy's ``forward`` ends in one."""
from __future__ import annotations

import textwrap

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = [r for r in all_rules() if r.CODE in ("TL202", "TL208")]

MODEL = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Policy(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.fc = nn.Linear(n_in, n_out)

        def forward(self, x):
            return {head}

        @classmethod
        def train_model(cls, net, states, actions, returns, optimizer):
            probs = net(states)
            loss = -(torch.log(probs) * actions).sum(1).mul(returns).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        @classmethod
        def kl(cls, net, states):
            policy = net(states)
            fixed = policy.detach()
            return (fixed * torch.log(fixed / policy)).sum(1).mean()
"""

SCRIPT = """
    import torch
    from model import Policy

    {built}
    optimizer = torch.optim.Adam(net.parameters())
    for _ in range(3):
        Policy.train_model(net, torch.randn(5, 4), torch.ones(5, 2), torch.ones(5), optimizer)
    print(Policy.kl(net, torch.randn(5, 4)))
"""


def _findings(tmp_path, head: str, built: str = "net = Policy(4, 2)"):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(textwrap.dedent(SCRIPT).format(built=built))
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(MODEL).format(head=head))
    result = lint_source(str(path), path.read_text(), Settings(rules=RULES))
    assert not result.errors
    return sorted((d.code, d.line) for d in result.diagnostics)


def test_the_log_of_a_softmax_policy_called_from_the_training_script(tmp_path):
    assert _findings(tmp_path, "F.softmax(self.fc(x), dim=-1)") == [("TL202", 18), ("TL208", 27)]


@pytest.mark.parametrize("head", ["self.fc(x)", "F.log_softmax(self.fc(x), dim=-1).exp().clamp_min(1e-6)"])
def test_a_policy_that_returns_no_softmax_is_silent(tmp_path, head):
    assert _findings(tmp_path, head) == []


def test_a_model_of_unknown_class_passed_by_the_script_keeps_it_silent(tmp_path):
    assert _findings(tmp_path, "F.softmax(self.fc(x), dim=-1)", "net = torch.load('policy.pt', weights_only=False)") == []
