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


HELPERS = """
    def count_parameters(net):
        total = 0
        for weight in net.parameters():
            total += weight.numel()
        print(net)
        return total


    def {other}(net):
        for weight in net.parameters():
            {body}
"""

TRAINER = """
    import torch
    import torch.nn as nn

    import helpers


    class Pair:
        def __init__(self, cuda):
            self.gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
            self.disc = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
            self.gen_opt = torch.optim.Adam(self.{held}.parameters())
            self.disc_opt = torch.optim.Adam(self.disc.parameters())
            if cuda:
                self.loss = nn.BCEWithLogitsLoss().cuda()
            else:
                self.loss = nn.BCEWithLogitsLoss()
            helpers.count_parameters(self.gen)
            helpers.{other}(self.gen)

        def fit(self, loader):
            for real in loader:
                z = torch.randn(real.size(0), 8)
                fake = self.disc(self.gen(z).detach())
                d_loss = self.loss(self.disc(real), torch.ones(real.size(0), 1)) + self.loss(
                    fake, torch.zeros(real.size(0), 1))
                self.disc_opt.zero_grad()
                d_loss.backward()
                self.disc_opt.step()
                g_loss = self.loss(self.disc(self.gen(z)), torch.ones(real.size(0), 1))
                self.gen_opt.zero_grad()
                g_loss.backward()
                self.gen_opt.step()
"""


def _trainer_findings(tmp_path, held: str, other: str = "summarise", body: str = "print(weight.norm(2))"):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "helpers.py").write_text(textwrap.dedent(HELPERS).format(other=other, body=body))
    path = tmp_path / "trainer.py"
    path.write_text(textwrap.dedent(TRAINER).format(held=held, other=other))
    result = lint_source(str(path), path.read_text(), Settings(rules=RULES))
    assert not result.errors
    return [(d.code, d.line, d.message.split(":")[0]) for d in result.diagnostics]


def test_a_member_handed_to_project_helpers_that_only_read_its_parameters_is_never_trained(tmp_path):
    # the loss held by the trainer is set on both paths of an `if` (a loss has no parameters either way)
    assert _trainer_findings(tmp_path, "disc") == [("TL603", 32, "`self.gen` is never trained")]


def test_the_generator_in_its_optimizer_is_trained_by_the_trainer(tmp_path):
    assert _trainer_findings(tmp_path, "gen") == []


def test_a_project_helper_that_may_freeze_the_member_keeps_it_silent(tmp_path):
    assert _trainer_findings(tmp_path, "disc", "freeze", "weight.requires_grad_(False)") == []
