"""TL603's model that no optimizer holds, with the model's class and its initialiser in another module of
the project (``from models import *``): a generator built as ``nn.Sequential(*layers)`` from a list its
constructor fills, initialised by ``G.apply(weights_init)``."""
from __future__ import annotations

import textwrap

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = [r for r in all_rules() if r.CODE == "TL603"]

MODELS = """
    import torch.nn as nn


    def weights_init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight.data, 0.0, 0.02)
            {extra}


    class Generator(nn.Module):
        def __init__(self, z_dim=8):
            super().__init__()
            layers = [nn.Linear(z_dim, 32), nn.ReLU()]
            layers += [nn.Linear(32, 2)]
            self.net = nn.Sequential(*layers)

        def forward(self, z):
            return self.net(z)


    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))

        def forward(self, x):
            return self.net(x)
"""

SCRIPT = """
    import torch
    from models import *

    generator = Generator()
    critic = Critic()
    generator.apply(weights_init)
    critic.apply(weights_init)
    opt_g = torch.optim.Adam({held}.parameters())
    opt_c = torch.optim.Adam(critic.parameters())
    for real in []:
        z = torch.randn(real.size(0), 8)
        c_loss = critic(generator(z).detach()).mean() - critic(real).mean()
        opt_c.zero_grad()
        c_loss.backward()
        opt_c.step()
        g_loss = -critic(generator(z)).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
"""


def _findings(tmp_path, held: str, extra: str = "pass"):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS).replace("{extra}", extra))
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SCRIPT).format(held=held))
    result = lint_source(str(path), path.read_text(), Settings(rules=RULES))
    assert not result.errors
    return [(d.code, d.line, d.message.split(":")[0]) for d in result.diagnostics]


def test_a_generator_of_a_list_of_layers_initialised_by_an_imported_function_is_never_trained(tmp_path):
    assert _findings(tmp_path, "critic") == [("TL603", 19, "`generator` is never trained")]


def test_the_generator_in_its_optimizer_is_trained(tmp_path):
    assert _findings(tmp_path, "generator") == []


def test_an_imported_function_that_may_freeze_what_it_is_applied_to_keeps_it_silent(tmp_path):
    assert _findings(tmp_path, "critic", "m.weight.requires_grad = False") == []
