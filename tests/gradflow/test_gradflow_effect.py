"""The gradient-flow rules predict what training does: each case is a small program with the mistake and
the same program without it, linted (the finding is there, and gone once the mistake is fixed) and then
run for a few steps, showing the effect the finding names."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torchlint.engine import Settings, lint_source  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")),
]
RULES = all_rules()


def _codes(source: str):
    result = lint_source("train.py", source, Settings(rules=RULES))
    assert not result.errors
    return [d.code for d in result.diagnostics]


def _run(source: str, device: str) -> dict:
    namespace: dict = {"__name__": "effect"}
    exec(compile(source.replace('DEVICE = "cpu"', f'DEVICE = "{device}"'), "train.py", "exec"), namespace)
    return namespace


REGULARIZER = '''
import torch

DEVICE = "cpu"
torch.manual_seed(0)
model = torch.nn.Linear(4, 1).to(DEVICE)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(32, 4, device=DEVICE)
y = torch.randn(32, 1, device=DEVICE)


def train(steps, lam=1.0):
    for _ in range(steps):
        opt.zero_grad()
        task = (model(x) - y).pow(2).mean()
        penalty = PENALTY
        loss = task + lam * penalty
        loss.backward()
        opt.step()
'''
DETACHED = "torch.tensor([p.pow(2).sum().item() for p in model.parameters()], device=DEVICE).sum()"
ON_GRAPH = "sum(p.pow(2).sum() for p in model.parameters())"


@pytest.mark.parametrize("device", DEVICES)
def test_tl601_the_detached_regularizer_gives_no_gradient(device):
    bug = REGULARIZER.replace("PENALTY", DETACHED)
    fixed = REGULARIZER.replace("PENALTY", ON_GRAPH)
    assert "TL601" in _codes(bug)
    assert "TL601" not in _codes(fixed)
    results = {}
    for name, source in (("bug", bug), ("fixed", fixed)):
        ns = _run(source, device)
        m = ns["model"]
        ((m(ns["x"]) - ns["y"]).pow(2).mean()).backward()  # the task alone, at the initial weights
        task = m.weight.grad.clone()
        ns["train"](1)  # one step: the gradient left is the whole loss's, at the same weights
        results[name] = (m.weight.grad.clone(), task)
        ns["train"](200)
        results[name] += (float(m.weight.detach().pow(2).sum()),)
    bug_grad, bug_task, bug_norm = results["bug"]
    fixed_grad, fixed_task, fixed_norm = results["fixed"]
    # with the bug the loss's gradient is the task's alone: the penalty term contributes nothing
    assert torch.allclose(bug_grad, bug_task)
    assert not torch.allclose(fixed_grad, fixed_task)
    # and the weights are not pulled towards 0 as the penalty asks
    assert fixed_norm < 0.8 * bug_norm


UNUSED_LAYER = '''
import torch
import torch.nn as nn

DEVICE = "cpu"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.extra = nn.Linear(4, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return FORWARD


torch.manual_seed(0)
model = Net().to(DEVICE)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4, device=DEVICE)
y = torch.randn(16, 1, device=DEVICE)
before = {k: v.detach().clone() for k, v in model.state_dict().items()}
for _ in range(5):
    opt.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl602_the_unused_layer_never_changes(device):
    bug = UNUSED_LAYER.replace("FORWARD", "self.out(torch.relu(self.fc(x)))")
    fixed = UNUSED_LAYER.replace("FORWARD", "self.out(torch.relu(self.extra(torch.relu(self.fc(x)))))")
    assert "TL602" in _codes(bug)
    assert "TL602" not in _codes(fixed)
    for source, extra_changes in ((bug, False), (fixed, True)):
        ns = _run(source, device)
        after = ns["model"].state_dict()
        changed = {k for k in after if not torch.equal(after[k], ns["before"][k])}
        assert {"fc.weight", "out.weight"} <= changed
        assert ("extra.weight" in changed) is extra_changes
        assert (ns["model"].extra.weight.grad is not None) is extra_changes  # never a gradient with the bug


SWAPPED = '''
import torch
import torch.nn as nn

DEVICE = "cpu"
torch.manual_seed(0)
trained = nn.Linear(4, 1).to(DEVICE)
other = nn.Linear(4, 1).to(DEVICE)
opt = torch.optim.SGD(HELD.parameters(), lr=0.1)
x = torch.randn(16, 4, device=DEVICE)
y = torch.randn(16, 1, device=DEVICE)
before = trained.weight.detach().clone()
first = None
for _ in range(20):
    opt.zero_grad()
    loss = (trained(x) - y).pow(2).mean()
    loss.backward()
    opt.step()
    first = loss.item() if first is None else first
last = loss.item()
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_the_swapped_optimizer_leaves_the_trained_model_unchanged(device):
    bug = SWAPPED.replace("HELD", "other")
    fixed = SWAPPED.replace("HELD", "trained")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    ns = _run(bug, device)
    assert torch.equal(ns["trained"].weight.detach(), ns["before"])
    assert ns["last"] == ns["first"]  # the loss does not go down
    ns = _run(fixed, device)
    assert not torch.equal(ns["trained"].weight.detach(), ns["before"])
    assert ns["last"] < ns["first"]


UNOPTIMIZED = '''
import itertools
import torch
import torch.nn as nn

DEVICE = "cpu"
torch.manual_seed(0)
encoder = nn.Linear(4, 4).to(DEVICE)
head = nn.Linear(4, 1).to(DEVICE)
opt = torch.optim.SGD(HELD, lr=0.1)
x = torch.randn(16, 4, device=DEVICE)
y = torch.randn(16, 1, device=DEVICE)


def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = (head(torch.relu(encoder(x))) - y).pow(2).mean()
        loss.backward()
        opt.step()
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_the_model_in_no_optimizer_never_changes(device):
    bug = UNOPTIMIZED.replace("HELD", "head.parameters()")
    fixed = UNOPTIMIZED.replace("HELD", "itertools.chain(encoder.parameters(), head.parameters())")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    for source, trained in ((bug, False), (fixed, True)):
        ns = _run(source, device)
        before = ns["encoder"].weight.detach().clone()
        head_before = ns["head"].weight.detach().clone()
        ns["train"](20)
        # backward gives the encoder a gradient either way; only with it in the optimizer is it applied
        assert bool(ns["encoder"].weight.grad.abs().sum() > 0)
        assert (not torch.equal(ns["encoder"].weight.detach(), before)) is trained
        assert not torch.equal(ns["head"].weight.detach(), head_before)


AVERAGED_TASK = '''
import sys
import types
import torch
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel

if "pytorch_lightning" not in sys.modules:  # the module's own code is all the loop below needs
    sys.modules["pytorch_lightning"] = types.SimpleNamespace(LightningModule=torch.nn.Module)
import pytorch_lightning as pl

DEVICE = "cpu"
torch.manual_seed(0)


class Task(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class AveragedTask(Task):
    def __init__(self, net):
        super().__init__(net)
        self.averaged = AveragedModel(self.net)

    def forward(self, x):
        return RUN(x)

    def on_train_epoch_end(self):
        self.averaged.update_parameters(self.net)

    def configure_optimizers(self):
        return torch.optim.SGD(self.net.parameters(), lr=0.1)


task = AveragedTask(torch.nn.Linear(4, 1)).to(DEVICE)
x = torch.randn(16, 4, device=DEVICE)
y = torch.randn(16, 1, device=DEVICE)


def fit(epochs):
    """Lightning's automatic optimization: backward on what `training_step` returns, then a step of the
    optimizer `configure_optimizers` returns."""
    opt = task.configure_optimizers()
    losses = []
    for epoch in range(epochs):
        opt.zero_grad()
        loss = task.training_step((x, y), epoch)
        loss.backward()
        opt.step()
        task.on_train_epoch_end()
        losses.append(loss.item())
    return losses
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_a_lightning_module_running_its_averaged_copy_trains_nothing(device):
    bug = AVERAGED_TASK.replace("RUN", "self.averaged")
    fixed = AVERAGED_TASK.replace("RUN", "self.net")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    for source, trained in ((bug, False), (fixed, True)):
        ns = _run(source, device)
        before = ns["task"].net.weight.detach().clone()
        losses = ns["fit"](10)
        # the optimizer's model moves only when the loss runs it
        assert (not torch.equal(ns["task"].net.weight.detach(), before)) is trained
        assert (losses[-1] < losses[0]) is trained


TRAINER_GAN = '''
import torch
import torch.nn as nn

DEVICE = "cpu"


def init_small(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.2)


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.G = nn.Linear(4, 2)
        self.D = nn.Linear(2, 1)
        self.G.apply(init_small)
        if torch.cuda.is_available() and DEVICE == "cuda":
            self.G = self.G.cuda()
            self.D = self.D.cuda()
        self.build()
        self.before = self.D.weight.detach().clone()

    def build(self):
        self.opt_g = torch.optim.SGD(self.G.parameters(), lr=0.1)
        self.opt_d = torch.optim.SGD(HELD.parameters(), lr=0.1)

    def d_step(self, real):
        fake = self.G(torch.randn(real.shape[0], 4, device=DEVICE)).detach()
        loss = nn.functional.softplus(self.D(fake)).mean() + nn.functional.softplus(-self.D(real)).mean()
        self.opt_d.zero_grad()
        loss.backward()
        self.opt_d.step()

    def fit(self, batches):
        for real in batches:
            self.d_step(real)


trainer = Trainer()
trainer.fit([torch.randn(8, 2, device=DEVICE) for _ in range(5)])
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_a_trainer_stepping_the_other_models_optimizer_never_trains_its_discriminator(device):
    bug = TRAINER_GAN.replace("HELD", "self.G")
    fixed = TRAINER_GAN.replace("HELD", "self.D")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    for source, trained in ((bug, False), (fixed, True)):
        trainer = _run(source, device)["trainer"]
        assert (not torch.equal(trainer.D.weight.detach(), trainer.before)) is trained


ZIPPED = '''
import torch

DEVICE = "cpu"
torch.manual_seed(0)
net_a = torch.nn.Linear(4, 1).to(DEVICE)
net_b = torch.nn.Linear(4, 1).to(DEVICE)
nets = [net_a, net_b]
opt_a = torch.optim.SGD(HELD.parameters(), lr=0.05)
opt_b = torch.optim.SGD(net_b.parameters(), lr=0.05)
optimizers = [opt_a, opt_b]
x = torch.randn(32, 4, device=DEVICE)
y = torch.randn(32, 1, device=DEVICE)
before = net_a.weight.detach().clone()


def fit(steps):
    for _ in range(steps):
        for net, opt in zip(nets, optimizers):
            loss = (net(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_a_swapped_optimizer_in_a_zip_loop_leaves_its_network_unchanged(device):
    bug = ZIPPED.replace("HELD", "net_b")
    fixed = ZIPPED.replace("HELD", "net_a")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    ns = _run(bug, device)
    ns["fit"](10)
    assert torch.equal(ns["net_a"].weight.detach(), ns["before"])
    ns = _run(fixed, device)
    ns["fit"](10)
    assert not torch.equal(ns["net_a"].weight.detach(), ns["before"])


PASSED = '''
import torch
import torch.nn as nn

DEVICE = "cpu"
torch.manual_seed(0)


def train(x, y, encoder, head, enc_opt, head_opt):
    enc_opt.zero_grad()
    head_opt.zero_grad()
    loss = 0
    for i in range(2):
        loss += (head(encoder(x[i])) - y[i]).pow(2).mean()
    loss.backward()
    enc_opt.step()
    head_opt.step()


encoder = nn.Linear(4, 4).to(DEVICE)
head = nn.Linear(4, 1).to(DEVICE)
encoder_opt = torch.optim.SGD(HELD.parameters(), lr=0.05)
head_opt = torch.optim.SGD(head.parameters(), lr=0.05)
x = torch.randn(2, 8, 4, device=DEVICE)
y = torch.randn(2, 8, 1, device=DEVICE)


def fit(steps):
    for _ in range(steps):
        train(x, y, encoder, head, encoder_opt, head_opt)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_models_passed_to_a_training_function_the_encoder_in_no_optimizer_never_changes(device):
    bug = PASSED.replace("HELD", "head")
    fixed = PASSED.replace("HELD", "encoder")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    for source, trained in ((bug, False), (fixed, True)):
        ns = _run(source, device)
        before = ns["encoder"].weight.detach().clone()
        ns["fit"](5)
        assert torch.equal(ns["encoder"].weight.detach(), before) is not trained


ACTOR_CRITIC = '''
import copy
import torch
import torch.nn as nn

DEVICE = "cpu"
torch.manual_seed(0)


def soft_update(net, target, tau=0.1):
    for p, tp in zip(net.parameters(), target.parameters()):
        tp.data.copy_(tau * p.data + (1 - tau) * tp.data)


class Agent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).to(DEVICE)
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1)).to(DEVICE)
        self.actor_target = copy.deepcopy(self.actor)
        self.critic_target = copy.deepcopy(self.critic)
        self.actor_opt = torch.optim.Adam(self.HELD.parameters(), lr=1e-2)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def update(self, s, a, r, s2):
        with torch.no_grad():
            y = r + 0.9 * self.critic_target(torch.cat([s2, self.actor_target(s2)], 1))
        critic_loss = (self.critic(torch.cat([s, a], 1)) - y).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(torch.cat([s, self.actor(s)], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        soft_update(self.actor, self.actor_target)
        soft_update(self.critic, self.critic_target)


agent = Agent()
s, a, r, s2 = (torch.randn(32, 3, device=DEVICE), torch.randn(32, 1, device=DEVICE),
               torch.randn(32, 1, device=DEVICE), torch.randn(32, 3, device=DEVICE))


def fit(steps):
    for _ in range(steps):
        agent.update(s, a, r, s2)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_tl603_a_trainer_whose_actor_optimizer_holds_the_critic_never_changes_its_actor(device):
    # the actor's loss runs through the critic too: the swapped optimizer moves the critic a second time
    # and the actor keeps its initial weights (its soft-updated target copies them unchanged)
    bug = ACTOR_CRITIC.replace("HELD", "critic")
    fixed = ACTOR_CRITIC.replace("HELD", "actor")
    assert "TL603" in _codes(bug)
    assert "TL603" not in _codes(fixed)
    for source, trained in ((bug, False), (fixed, True)):
        ns = _run(source, device)
        before = [p.detach().clone() for p in ns["agent"].actor.parameters()]
        ns["fit"](5)
        after = list(ns["agent"].actor.parameters())
        assert all(torch.equal(b, p.detach()) for b, p in zip(before, after)) is not trained
