from __future__ import annotations

import libcst as cst

from torchlint.families.gradflow.optimizers import stray_steps
from torchlint.rule import Invalid, LintRule, Valid


class OptimizerOfAnotherModel(LintRule):
    """
    ## What it does
    Finds an optimizer step (`opt.step()`, `scaler.step(opt)`) after a backward pass whose loss does not
    reach any parameter the optimizer holds: a GAN whose discriminator step uses the optimizer built on
    the generator's parameters (`opt_d = Adam(G.parameters())` stepped after `loss_d.backward()` where
    `loss_d` is computed from `D` only), or an optimizer built on `model.parameters()` before `model` is
    bound to a new instance that the loop then trains.

    Both sides are decided from construction: the optimizer holds the parameters of the models its first
    argument is built from (`G.parameters()`, `chain(a.parameters(), b.parameters())`, parameter groups),
    each model being the construction its name is bound to where the optimizer is built; the loss reaches
    the models it is computed from through local names, except through `.detach()`, `.item()`, `.data`
    and values computed under `torch.no_grad()`. Anything unknown on either side (a helper function that
    computes the loss, `self.model`, a parameter of the function, a model that wraps another one in a way
    that is not followed) keeps the rule silent.

    ## Why is this bad?
    The backward pass fills the gradients of one set of parameters and the optimizer updates another.
    The model that produced the loss is never trained (its gradients pile up, or are cleared unused), and
    the optimizer moves the other model with stale or zero gradients. Nothing fails; the loss simply
    does not go down. The PyTorch Cookbook (Zhang Hao, 2019) and Effective PyTorch build each optimizer
    from the parameters of the model whose loss it minimises.

    ## Example
    ```python
    opt_g = torch.optim.Adam(disc.parameters())
    opt_d = torch.optim.Adam(gen.parameters())
    ...
    d_loss = bce(disc(real), ones) + bce(disc(gen(z).detach()), zeros)
    d_loss.backward()
    opt_d.step()
    ```

    ## Use instead
    ```python
    opt_g = torch.optim.Adam(gen.parameters())
    opt_d = torch.optim.Adam(disc.parameters())
    ```

    ## Fix safety
    No fix: which optimizer belongs to which model is the author's decision.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.optim](https://pytorch.org/docs/stable/optim.html)
    - [DCGAN tutorial](https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html) (one optimizer per network)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL603"
    NAME = "optimizer-of-another-model"
    MESSAGE = (
        "`{optimizer}` holds the parameters of {held}, but the loss of the backward pass before this step "
        "is computed from {reached} only: the step applies no gradient of this loss to them"
    )
    TRIGGERS = ("step",)

    VALID = [
        # each optimizer steps the model its loss is computed from; the generator's output is detached
        Valid(
            """
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters())
opt_d = torch.optim.Adam(D.parameters())
bce = nn.BCEWithLogitsLoss()


def train(batches):
    for real in batches:
        z = torch.randn(real.shape[0], 4)
        opt_d.zero_grad()
        loss_d = bce(D(real), torch.ones(real.shape[0], 1)) + bce(D(G(z).detach()), torch.zeros(real.shape[0], 1))
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = bce(D(G(z)), torch.ones(real.shape[0], 1))
        loss_g.backward()
        opt_g.step()
"""
        ),
        # the loss comes from a helper: which models it runs is not followed
        Valid(
            """
import torch

model = torch.nn.Linear(4, 1)
other = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(other.parameters(), lr=0.1)


def compute(x):
    return model(x).mean()


for x in []:
    loss = compute(x)
    loss.backward()
    opt.step()
"""
        ),
        # a wrapper holds the model it is built from; parameter groups; a moved model
        Valid(
            """
import itertools
import torch
import torch.nn as nn

enc = nn.Linear(4, 4).to("cpu")
head = nn.Linear(4, 2)
wrapped = nn.DataParallel(enc)
opt = torch.optim.SGD(itertools.chain(enc.parameters(), head.parameters()), lr=0.1)
opt2 = torch.optim.SGD([{"params": enc.parameters()}, {"params": head.parameters(), "lr": 0.01}], lr=0.1)


def step(x, y):
    loss = nn.functional.cross_entropy(head(wrapped(x)), y)
    loss.backward()
    opt.step()
    opt2.step()
"""
        ),
        # the model is rebuilt together with its optimizer in each fold
        Valid(
            """
import torch

for fold in range(3):
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(net.parameters())
    for x, y in []:
        opt.zero_grad()
        loss = (net(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
"""
        ),
        # a frozen backbone: the optimizer holds the head only, and the loss runs through both
        Valid(
            """
import torch
import torch.nn as nn

backbone = nn.Linear(16, 16)
backbone.requires_grad_(False)
head = nn.Linear(16, 4)
opt = torch.optim.Adam(head.parameters())


def fit(loader):
    for x, y in loader:
        feats = backbone(x)
        loss = nn.functional.cross_entropy(head(feats), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # the model moved and wrapped after the optimizer is built: the same parameters
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()))
model = model.to("cpu")
model = nn.DataParallel(model)
for x, y in []:
    loss = (model(x) - y).abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch import nn

critic = nn.Linear(2, 1)
actor = nn.Linear(4, 2)
actor_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)


def update(states, targets):
    for s, t in zip(states, targets):
        actions = actor(s)
        value = critic(actions.detach())
        critic_loss = (value - t).pow(2).mean()
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
""",
            line=18,
            col=9,
            message="`critic_opt` holds the parameters of `actor`, but the loss of the backward pass before this step is computed from `critic` only",
        ),
        # an optimizer built before the model is replaced by a new instance
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = Net().to("cpu")
for x, y in []:
    optimizer.zero_grad()
    out = model(x)
    loss = nn.functional.mse_loss(out, y)
    loss.backward()
    optimizer.step()
""",
        ),
        # stepped through a scaler, the loss scaled
        Invalid(
            """
import torch

a = torch.nn.Linear(3, 3)
b = torch.nn.Linear(3, 3)
opt = torch.optim.SGD(list(b.parameters()), lr=0.1)
scaler = torch.cuda.amp.GradScaler()


def step(batch):
    for x in batch:
        loss = a(x).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        if not self.ctx.names.imports_torch:
            return
        for found in stray_steps(self.ctx):
            self.report(found.step, self.MESSAGE.format(
                optimizer=found.optimizer,
                held=", ".join(f"`{h}`" for h in found.held),
                reached=", ".join(f"`{r}`" for r in found.reached),
            ))
