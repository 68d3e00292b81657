from __future__ import annotations

import libcst as cst

from torchlint.families.gradflow.detached import detached_terms
from torchlint.rule import Invalid, LintRule, Valid


class LossDetachedFromGraph(LintRule):
    """
    ## What it does
    Finds a term of a loss that is backpropagated (`loss.backward()`, `scaler.scale(loss).backward()`)
    which is computed from the model — its output or its parameters — but only through a value cut off
    the autograd graph: `.item()`, `float(t)`, `.detach()`, `.data`, `.numpy()`, a new tensor built from
    numbers (`torch.tensor([p.norm().item() for p in model.parameters()])`), or a value computed under
    `torch.no_grad()`. The loss is followed through the local names it is built from (`loss = task + reg`,
    `loss += reg`), and through the attributes a method sets on `self` before it reads them, on every path
    (`self.loss_G = self.loss_G_GAN + self.loss_G_L1`, then `self.loss_G.backward()`). A term is reported only when it is added to the loss (or is the loss): a detached
    factor that scales a term with a graph (`task * w.detach()`), a detached target
    (`F.mse_loss(student(x), teacher(x).detach())`) and a metric computed beside the loss are fine.
    So is a value detached from what another loss of the same function trains (an actor-critic's
    baseline: `q - v.detach()` in the actor's loss while `F.mse_loss(v, target)` trains the critic), and
    a detached factor whose other factor is unpacked from a value that is not followed
    (`state, log_prob = self.transition`, then `-advantage.detach() * log_prob`): it may carry the graph.
    In a trainer class the loss is followed into the methods of the class it comes from
    (`loss = self.compute_loss(x, y)` reads the terms that method returns), a method computing from the
    model counts as model data (`self.l2_penalty().item()`), and so does the weight of a layer of a model
    (`self.model.fc.weight.norm().item()`), and so does a weight the code trains itself without a module (a
    tensor made with `requires_grad=True` or as an `nn.Parameter`, or switched on with `t.requires_grad = True`,
    given to an optimizer or updated by hand, `w -= lr * w.grad`; not one that only shows what autograd does;
    also what a property of the class returns from one, `self.alpha` returning `self.log_alpha.exp()`). A numpy or `math` function given model data returns an array
    or a Python number, off the graph too (`np.std(out.detach().cpu().numpy())`).
    Model data is followed through the elements of an unpacked output (`recon, mu, logvar = model(x)`,
    also unpacked in each arm of an `if`), a parameter of a helper that every call of it in the file fills
    with model data (`update(log_probs, values, opt)` after `log_probs = policy(obs).log_softmax(-1)`),
    a model moved under an `if` or built in a tuple (`G, D = Generator(), Discriminator()`), a value
    whose parameters an optimizer of the file is given (`self.net` in `Adam(self.net.parameters())`, even
    when a factory builds it), what a model stored on itself during its forward passes
    (`model.saved_log_probs`), and a list of per-step losses built with `append` and then stacked
    (`torch.stack(losses).sum()`). Without any of that evidence, a whole term the code cuts itself with
    `.detach()` or `.data` still counts when what it cuts is computed by calling an object or a function of
    the code's own (`(gamma * criterion(student(x), y)).detach()` with the models handed in as a list): writing
    the cut says the value had a graph. A cut value computed from data alone (`torch.stack(bonus)` of tensors
    built from numbers), one that is not followed (a parameter no call of the file fills with model data), and a cut factor of a product that may carry
    the graph keep it silent.

    ## Why is this bad?
    Backward gives the term no gradient: the regularizer, the auxiliary loss or the penalty the author
    added changes the printed loss value but not a single parameter. Training runs, the loss curve
    looks plausible, and the model learns as if the term were not there. Effective PyTorch and the
    PyTorch Cookbook (Zhang Hao, 2019) use `.item()` and `.detach()` to *read* a value — for logging
    and for accumulating statistics — never to build what is differentiated.

    ## Example
    ```python
    task = F.cross_entropy(model(x), y)
    penalty = torch.tensor([p.pow(2).sum().item() for p in model.parameters()]).sum()
    loss = task + 1e-3 * penalty
    loss.backward()
    ```

    ## Use instead
    ```python
    task = F.cross_entropy(model(x), y)
    penalty = sum(p.pow(2).sum() for p in model.parameters())
    loss = task + 1e-3 * penalty
    loss.backward()
    ```

    ## Fix safety
    No fix: the term has to be computed again with tensor operations, and which ones is the author's
    choice.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html)
    - [torch.Tensor.item](https://pytorch.org/docs/stable/generated/torch.Tensor.item.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL601"
    NAME = "loss-detached-from-graph"
    MESSAGE = "`{term}` is part of the loss but is computed through {how}: backward gives it no gradient"
    TRIGGERS = ("backward",)

    VALID = [
        # a cut of a value this code does not compute (a parameter): nothing says it had a graph; a cut
        # factor scaling a term that keeps its graph
        Valid(
            """
import torch


def step(models, batch, baseline, optimizer):
    out = models[0](batch["x"])
    loss = torch.nn.functional.mse_loss(out, batch["y"]) + baseline.detach()
    loss = loss + 0.1 * (out.pow(2).mean() * out.std().detach())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        # a detached target and a teacher run under no_grad: the loss keeps the student's graph
        Valid(
            """
import torch
import torch.nn.functional as F

student = torch.nn.Linear(8, 4)
teacher = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)


def step(x):
    with torch.no_grad():
        soft = teacher(x).softmax(-1)
    loss = F.mse_loss(student(x), teacher(x).detach()) + F.kl_div(student(x).log_softmax(-1), soft)
    loss.backward()
    opt.step()
"""
        ),
        # a metric beside the loss, `loss.item()` for logging, a detached weight scaling a term with a graph
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Linear(4, 2)
opt = torch.optim.Adam(net.parameters())


def train(loader, log):
    for x, y in loader:
        out = net(x)
        loss = nn.functional.cross_entropy(out, y, reduction="none")
        w = out.softmax(-1).max(-1).values.detach()
        loss = (loss * w).mean()
        acc = (out.argmax(-1) == y).float().mean().item()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log(loss.item(), acc)
"""
        ),
        # a regularizer with a graph; a constant tensor; a loss of data only
        Valid(
            """
import torch

model = torch.nn.Linear(4, 1)


def fit(x, y, lam=0.1):
    reg = sum(p.pow(2).sum() for p in model.parameters())
    zero = torch.tensor(0.0)
    loss = ((model(x) - y) ** 2).mean() + lam * reg + zero
    loss += lam * model.weight.abs().sum()
    loss.backward()
"""
        ),
        # a term of plain data, not of the model, taken off the graph
        Valid(
            """
import torch

model = torch.nn.Linear(4, 1)


def fit(x, y, scale):
    base = torch.tensor(scale.item())
    loss = (model(x) - y).pow(2).mean() * base
    loss.backward()
"""
        ),
        # helpers: one keeps the graph, one returns a number that is only logged
        Valid(
            """
import torch

model = torch.nn.Linear(4, 1)


def l2(net):
    return sum(p.pow(2).sum() for p in net.parameters())


def norm_of(net):
    return float(sum(p.norm() for p in net.parameters()))


def fit(x, y, log):
    loss = (model(x) - y).pow(2).mean() + 1e-3 * l2(model)
    loss.backward()
    log(norm_of(model), loss.item())
"""
        ),
        # a trainer class: the method returns a loss with its graph, and logs the detached value
        Valid(
            """
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.history = []

    def l2_penalty(self):
        return sum(p.pow(2).sum() for p in self.model.parameters())

    def compute_loss(self, x, y):
        task = F.cross_entropy(self.model(x), y)
        self.history.append(task.item())
        return task + 1e-4 * self.l2_penalty()

    def step(self, x, y):
        loss = self.compute_loss(x, y)
        loss.backward()
        return loss.item()
"""
        ),
        # numbers from numpy and math that carry no model data scale or shift the loss: fine
        Valid(
            """
import math
import numpy as np
import torch
import torch.nn.functional as F


class Fitter:
    def __init__(self):
        self.model = torch.nn.Linear(4, 2)

    def step(self, x, y):
        out = self.model(x)
        loss = F.cross_entropy(out, y) * math.log(2.0) + np.float32(0.5)
        loss.backward()
        return np.std(out.detach().cpu().numpy())
"""
        ),
        # the unpacked outputs are all on the graph; one is read with `.item()` for logging only
        Valid(
            """
import torch
import torch.nn.functional as F
from mylib import build_vae

model = build_vae()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for x in []:
    recon, mu, logvar = model(x)
    rec = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = rec + kld
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(rec.item(), kld.detach())
"""
        ),
        # per-step values collected in a list are rewards from the data, not model outputs: detaching them
        # cuts nothing the model computed
        Valid(
            """
import torch
import torch.nn as nn

policy = nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters())


def finish_episode(states, rewards):
    bonus = []
    for r in rewards:
        bonus.append(torch.tensor(r) * 0.1)
    loss = policy(states).mean() + torch.stack(bonus).sum().detach()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        # a value from an unknown factory that no optimizer is given: whether it is a model is unknown
        Valid(
            """
import torch
from mylib import make_prior, net

prior = make_prior()
optimizer = torch.optim.Adam(net.parameters())
for x in []:
    z, logp = prior(x)
    loss = net(x).mean() + logp.detach().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        # a branch's detached value is overwritten before backward: the loss read is the last one
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters())
for x, mode in []:
    out = model(x)
    rec = out.pow(2).mean()
    kld = out.abs().mean()
    if mode == "H":
        loss = rec.detach() + 4 * kld
        print(loss.item())
    else:
        loss = rec + kld
    loss = rec + kld
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # a penalty accumulated with `+=` from numbers of the data, not from the model: detaching it cuts nothing
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3))
target = torch.zeros(1, 3, 16, 16, requires_grad=True)
optimizer = torch.optim.Adam([target])
for weights in []:
    penalty = 0
    for w in weights:
        penalty += torch.tensor(w) ** 2
    loss = net(target).mean() + penalty.detach()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        # a temperature learned on its own: the product keeps a graph to the leaf made with requires_grad
        Valid(
            """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(6, 3)

    def forward(self, obs):
        return self.head(obs).log_softmax(-1)


class Temperature:
    def __init__(self, goal):
        self.policy = Policy()
        self.goal = goal
        self.log_temp = torch.zeros(1, requires_grad=True)
        self.temp_opt = torch.optim.Adam([self.log_temp], lr=3e-4)

    def update(self, obs):
        entropy = -self.policy(obs).mean()
        temp_loss = (self.log_temp.exp() * (entropy - self.goal).detach()).mean()
        self.temp_opt.zero_grad()
        temp_loss.backward()
        self.temp_opt.step()


def scale_step(net, batch, opt):
    scale = nn.Parameter(torch.ones(1))
    loss = -(scale * net(batch).detach()).mean()
    loss.backward()
"""
        ),
        # an expectation over discrete actions: the critic's values, computed without a graph, weigh the
        # policy's probabilities (the policy's loss keeps its graph through them)
        Valid(
            """
import torch
import torch.nn as nn

policy = nn.Sequential(nn.Linear(5, 4), nn.Softmax(-1))
critic = nn.Linear(5, 4)
policy_opt = torch.optim.Adam(policy.parameters())


def policy_step(obs, temperature):
    probs = policy(obs)
    log_probs = torch.log(probs + 1e-8)
    with torch.no_grad():
        values = critic(obs)
    loss = (probs * (temperature * log_probs - values)).mean()
    policy_opt.zero_grad()
    loss.backward()
    policy_opt.step()
"""
        ),
        # the same module returning the loss itself: the term keeps its graph
        """
import torch
import torch.nn as nn
import torch.nn.functional as F


class ContentLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3)

    def forward(self, sr, hr):
        return F.mse_loss(self.features(sr), self.features(hr))


generator = nn.Conv2d(3, 3, 3, padding=1)
content = ContentLoss()
opt = torch.optim.Adam(generator.parameters())
for lr, hr in [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))]:
    sr = generator(lr)
    loss = F.mse_loss(sr, hr) + 0.006 * content(sr, hr)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
        # near miss: autograd shown on a tensor nothing trains (a term computed under `no_grad` on purpose)
        """
import torch

x = torch.tensor(1.0, requires_grad=True)
y1 = x ** 2
with torch.no_grad():
    y2 = x ** 3
y3 = y1 + y2
y3.backward()
print(x.grad)
""",
        # near miss: an actor-critic update; the detached advantage weighs a log-probability kept in a
        # list the update unpacks (`state, log_prob = self.transition`): what the factor carries is not followed
        """
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.actor = nn.Linear(4, 2)
        self.critic = nn.Linear(4, 1)
        self.actor_opt = torch.optim.Adam(self.actor.parameters())
        self.critic_opt = torch.optim.Adam(self.critic.parameters())
        self.transition = []

    def act(self, state):
        dist = torch.distributions.Categorical(logits=self.actor(state))
        action = dist.sample()
        self.transition = [state, dist.log_prob(action)]
        return action

    def update(self, next_state, reward):
        state, log_prob = self.transition
        value = self.critic(state)
        target = reward + 0.99 * self.critic(next_state)
        critic_loss = (value - target.detach()).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        advantage = (target - value).detach()
        actor_loss = -advantage * log_prob
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
""",
        # near miss: a baseline detached from a value network that its own loss trains in the same update
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

policy = nn.Linear(4, 2)
q_net = nn.Linear(6, 1)
v_net = nn.Linear(4, 1)
policy_opt = torch.optim.Adam(policy.parameters())
v_opt = torch.optim.Adam(v_net.parameters())


def update(state):
    action = torch.tanh(policy(state))
    q = q_net(torch.cat([state, action], dim=1))
    baseline = v_net(state)
    value_loss = F.mse_loss(baseline, q.detach())
    advantage = q - baseline.detach()
    policy_loss = -advantage.mean()
    policy_opt.zero_grad()
    policy_loss.backward()
    policy_opt.step()
    v_opt.zero_grad()
    value_loss.backward()
    v_opt.step()
""",
        # losses kept on `self` (`self.loss_G = self.loss_G_GAN + self.loss_G_L1`), the discriminator's input
        # detached on purpose: every term of each loss keeps its graph
        Valid(
            """
import torch
import torch.nn as nn


class Pix2Pix:
    def __init__(self):
        self.netG = nn.Linear(8, 8)
        self.netD = nn.Linear(16, 1)
        self.opt_G = torch.optim.Adam(self.netG.parameters())
        self.opt_D = torch.optim.Adam(self.netD.parameters())
        self.gan_loss = nn.BCEWithLogitsLoss()

    def backward_D(self, real_A, real_B):
        fake = torch.cat((real_A, self.fake_B), 1)
        pred_fake = self.netD(fake.detach())
        self.loss_D_fake = self.gan_loss(pred_fake, torch.zeros_like(pred_fake))
        pred_real = self.netD(torch.cat((real_A, real_B), 1))
        self.loss_D_real = self.gan_loss(pred_real, torch.ones_like(pred_real))
        self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
        self.loss_D.backward()

    def backward_G(self, real_A, real_B):
        pred_fake = self.netD(torch.cat((real_A, self.fake_B), 1))
        self.loss_G_GAN = self.gan_loss(pred_fake, torch.ones_like(pred_fake))
        self.loss_G_L1 = nn.functional.l1_loss(self.fake_B, real_B) * 100.0
        self.loss_G = self.loss_G_GAN + self.loss_G_L1
        self.loss_G.backward()

    def optimize(self, real_A, real_B):
        self.fake_B = self.netG(real_A)
        self.opt_D.zero_grad()
        self.backward_D(real_A, real_B)
        self.opt_D.step()
        self.opt_G.zero_grad()
        self.backward_G(real_A, real_B)
        self.opt_G.step()
"""
        ),
        Valid(
            """
import math

import torch
import torch.nn as nn


class Agent:
    def __init__(self, init=0.1, target=-1.0):
        self.actor = nn.Linear(4, 2)
        self.log_alpha = torch.tensor(math.log(init))
        self.log_alpha.requires_grad = True
        self.target = target
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=1e-2)

    @property
    def alpha(self):
        return self.log_alpha.exp()

    def update_alpha(self, obs):
        log_prob = torch.log_softmax(self.actor(obs), dim=-1)[:, 0]
        self.alpha_opt.zero_grad()
        loss = (self.alpha * (-log_prob - self.target).detach()).mean()
        loss.backward()
        self.alpha_opt.step()
        return loss.item()


agent = Agent()
print(agent.update_alpha(torch.randn(8, 4)) is not None)
"""
        ),
        # a helper's parameter filled with model output by its caller: the detach is on the advantage only
        Valid(
            """
import torch
import torch.nn.functional as F


def actor_critic_step(advantage, log_prob, value, target, opt):
    loss = -(advantage.detach() * log_prob).mean() + F.smooth_l1_loss(value, target)
    opt.zero_grad()
    loss.backward()
    opt.step()


actor, critic = torch.nn.Linear(8, 3), torch.nn.Linear(8, 1)
opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()])
obs, act, target = torch.randn(16, 8), torch.randint(0, 3, (16, 1)), torch.randn(16)
log_prob = torch.log_softmax(actor(obs), dim=-1).gather(1, act).squeeze(1)
value = critic(obs).squeeze(1)
actor_critic_step(target - value, log_prob, value, target, opt)
"""
        ),
        # the same losses unpacked in both arms of an `if`, one of them only logged detached
        Valid(
            """
import torch


def fit(detector, batches, opt, on_gpu, log):
    detector.train()
    for images, boxes in batches:
        if on_gpu:
            box_loss, label_loss = detector(images.cuda(), boxes.cuda())
        else:
            box_loss, label_loss = detector(images, boxes)
        total = box_loss.mean() + label_loss.mean()
        log(label_loss.detach().mean())
        opt.zero_grad()
        total.backward()
        opt.step()
"""
        ),
        # the names unpacked from the model earlier are unpacked again from data in each arm: the detached term is data
        Valid(
            """
import torch


def stats(x):
    return x.mean(), x.std()


def fit(model, batches, opt, first):
    model.train()
    for x, y in batches[:1]:
        centre, spread = model(x)
        print(centre.mean().item(), spread.mean().item())
    for x, y in batches:
        if first:
            centre, spread = stats(x)
        else:
            centre, spread = stats(y)
        pred, _ = model(x)
        total = (pred - y).pow(2).mean() + spread.detach()
        opt.zero_grad()
        total.backward()
        opt.step()
"""
        ),
    ]

    INVALID = [
        # the models come in a list no code here builds: the cut written on a whole term of the loss is the
        # evidence that the term had a graph
        Invalid(
            """
import torch


def train_distill(loader, modules, criteria, optimizer, opt):
    student, teacher = modules[0], modules[-1]
    criterion_cls, criterion_kd = criteria[0], criteria[1]
    for x, y in loader:
        logit_s = student(x)
        with torch.no_grad():
            logit_t = teacher(x)
        loss_cls = criterion_cls(logit_s, y)
        loss_kd = criterion_kd(logit_s, logit_t)
        loss = (opt.gamma * loss_cls).detach() + opt.beta * loss_kd
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
            line=14,
            col=16,
            message="`.detach()`",
        ),
        # a constant factor (no requires_grad) does not put the detached output back on the graph
        Invalid(
            """
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(6, 1)

    def forward(self, obs):
        return self.v(obs)


class Learner:
    def __init__(self):
        self.critic = Critic()
        self.opt = torch.optim.Adam(self.critic.parameters())
        self.bonus = torch.ones(1)

    def update(self, obs, ret):
        value = self.critic(obs)
        loss = (value - ret).pow(2).mean() + (self.bonus * value.detach()).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
""",
            line=23,
            col=47,
            message="`.detach()`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))


def train(loader, weight_decay=1e-3):
    for x, y in loader:
        task = nn.functional.cross_entropy(model(x), y)
        l2 = torch.tensor([p.norm().item() for p in model.parameters()]).sum()
        loss = task + weight_decay * l2
        loss.backward()
""",
            line=12,
            col=23,
            message="`torch.tensor(...)`",
        ),
        # an auxiliary loss read with `.item()`, added in place; a penalty computed under no_grad
        Invalid(
            """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 4)
        self.aux = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.body(x)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for x, y in []:
    out = net(x)
    loss = torch.nn.functional.mse_loss(out, y)
    loss += 0.5 * net.aux(x).mean().item()
    with torch.no_grad():
        smooth = (out[1:] - out[:-1]).abs().mean()
    loss = loss + smooth
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            count=2,
        ),
        # across a helper: the penalty function reads the parameters as numbers
        Invalid(
            """
import torch
import torch.nn.functional as F


def l1_penalty(net):
    total = 0.0
    for p in net.parameters():
        total += p.abs().sum().item()
    return torch.tensor(total)


classifier = torch.nn.Linear(8, 3)
opt = torch.optim.SGD(classifier.parameters(), lr=0.1)


def train_step(x, y):
    loss = F.cross_entropy(classifier(x), y)
    loss = loss + 1e-4 * l1_penalty(classifier)
    loss.backward()
    opt.step()
""",
            message="`l1_penalty()`",
        ),
        # the whole scaled loss built from a number, handed to a scaler
        Invalid(
            """
import torch

model = torch.nn.Linear(4, 1)
scaler = torch.cuda.amp.GradScaler()


def step(x, y):
    value = float(((model(x) - y) ** 2).mean())
    total = torch.tensor(value, requires_grad=True)
    scaler.scale(total).backward()
""",
            message="The loss `total` is computed through `torch.tensor(...)`",
        ),
        # a trainer class: the penalty a method computes from the model, read through `.item()`
        Invalid(
            """
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model

    def l2_penalty(self):
        return sum(p.pow(2).sum() for p in self.model.parameters())

    def step(self, x, y):
        task = F.cross_entropy(self.model(x), y)
        reg = self.l2_penalty().item()
        loss = task + 1e-4 * reg
        loss.backward()
""",
            message="computed through `.item()`",
        ),
        # a trainer class: the term in the loss a method of the class returns
        Invalid(
            """
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, lam=0.1):
        self.model = torch.nn.Linear(8, 1)
        self.lam = lam

    def compute_loss(self, x, y):
        out = self.model(x)
        return F.mse_loss(out, y) + self.lam * out.abs().mean().detach()

    def step(self, x, y):
        loss = self.compute_loss(x, y)
        loss.backward()
""",
            line=13,
            col=37,
            message="`self.lam * out.abs().mean().detach()`",
        ),
        # a trainer method: a spread of the outputs computed with numpy, added to the loss
        Invalid(
            """
import numpy as np
import torch
import torch.nn.functional as F


class Fitter:
    def __init__(self):
        self.model = torch.nn.Linear(4, 2)

    def step(self, x, y):
        out = self.model(x)
        spread = np.std(out.detach().cpu().numpy())
        loss = F.cross_entropy(out, y) + 0.1 * spread
        loss.backward()
""",
            message="`0.1 * spread` is part of the loss but is computed through `np.std(...)`",
        ),
        # a VAE's reconstruction term, computed from an element of the model's unpacked output, detached
        Invalid(
            """
import torch
import torch.nn.functional as F
from mylib import build_vae

model = build_vae()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for x in []:
    recon, mu, logvar = model(x)
    rec = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = rec.detach() + kld
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            message="`rec.detach()` is part of the loss",
        ),
        # a trainer whose network comes from a factory (an optimizer is given its parameters) and a loss helper
        Invalid(
            """
import torch
import torch.nn.functional as F
from mylib import cuda


def reconstruction(x, x_recon):
    return F.mse_loss(x_recon, x)


class Solver:
    def __init__(self, net, use_cuda):
        self.net = cuda(net(10), use_cuda)
        self.optim = torch.optim.Adam(self.net.parameters(), lr=1e-4)

    def train(self, loader):
        for x in loader:
            x_recon, mu, logvar = self.net(x)
            rec = reconstruction(x, x_recon)
            kld = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum()
            loss = rec.item() + kld
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
""",
            message="`rec.item()` is part of the loss",
        ),
        # per-step policy losses collected in a list from what the model stored during its forward passes, the
        # stacked sum detached; the two networks built by one tuple assignment and moved under `if`
        Invalid(
            """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.saved_log_probs = []

    def forward(self, x):
        return torch.log_softmax(self.fc(x), -1)


policy, critic = Policy(), nn.Linear(4, 1)
if torch.cuda.is_available():
    policy = policy.cuda()
optimizer = torch.optim.Adam(policy.parameters())


def finish_episode(returns):
    losses = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        losses.append(-log_prob * R)
    loss = torch.stack(losses).sum().detach() + critic(torch.ones(4)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            message="`torch.stack(losses).sum().detach()` is part of the loss",
        ),
        # the loss is chosen by an `if` chain; the term is detached in one of its branches
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters())
for x, mode in []:
    out = model(x)
    rec = out.pow(2).mean()
    kld = out.abs().mean()
    if mode == "H":
        loss = rec.detach() + 4 * kld
    elif mode == "B":
        loss = rec + (kld - 1).abs()
    else:
        loss = rec
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            message="`rec.detach()` is part of the loss",
        ),
        # a content loss accumulated with `+=` over the network's features, detached when added to the loss
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Conv2d(8, 8, 3))
target = torch.zeros(1, 3, 16, 16, requires_grad=True)
optimizer = torch.optim.Adam([target])
for step in range(10):
    target_features = net(target)
    content_features = net(torch.ones(1, 3, 16, 16))
    content_loss = 0
    for f1, f2 in zip(target_features, content_features):
        content_loss += torch.mean((f1 - f2) ** 2)
    loss = content_loss.detach() + target.abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            message="`content_loss.detach()` is part of the loss",
        ),
        # one term of a four-term sum, each from an unpacked output of a two-headed model (the terms of a
        # sum are as far from the loss as the sum itself)
        Invalid(
            """
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.real = nn.Linear(8, 1)
        self.kind = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return torch.sigmoid(self.real(h)), self.kind(h)


net = TwoHeads()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
bce, ce = nn.BCELoss(), nn.CrossEntropyLoss()
for x, fake, y in [(torch.randn(8, 6), torch.randn(8, 6), torch.randint(0, 3, (8,)))]:
    opt.zero_grad()
    real_p, real_k = net(x)
    fake_p, fake_k = net(fake)
    real_loss = bce(real_p, torch.ones(8, 1)).detach()
    kind_loss = ce(real_k, y)
    fake_loss = bce(fake_p, torch.zeros(8, 1))
    fake_kind = ce(fake_k, y)
    loss = real_loss + kind_loss + fake_loss + fake_kind
    loss.backward()
    opt.step()
""",
            line=29,
            message="`.detach()`",
        ),
        # the optimizer is built on the constructor's argument, the loss on the attribute that keeps it
        # (`self.actor_critic = actor_critic`): one model under two spellings
        Invalid(
            """
import torch
import torch.nn as nn


class A2C:
    def __init__(self, actor_critic, lr):
        self.actor_critic = actor_critic
        self.optimizer = torch.optim.RMSprop(actor_critic.parameters(), lr=lr)

    def update(self, obs, actions, returns):
        values, log_probs = self.actor_critic(obs, actions)
        advantages = returns - values
        value_loss = advantages.pow(2).mean()
        action_loss = -(advantages.detach() * log_probs).mean()
        loss = value_loss.detach() + action_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
""",
            line=16,
        ),
        # a perceptual loss module whose `forward` rebuilds its value from numbers: the term it adds
        # gives the generator no gradient
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class ContentLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3)

    def forward(self, sr, hr):
        losses = F.mse_loss(self.features(sr), self.features(hr))
        return torch.Tensor([losses]).to(sr.device)


generator = nn.Conv2d(3, 3, 3, padding=1)
content = ContentLoss()
opt = torch.optim.Adam(generator.parameters())
for lr, hr in [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))]:
    sr = generator(lr)
    loss = F.mse_loss(sr, hr) + 0.006 * content(sr, hr).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=22,
            message="`ContentLoss.forward()`",
        ),
        # a weight the code trains itself (made with `requires_grad=True`, given to the optimizer)
        Invalid(
            """
import torch

w = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for x, y in batches:
    fit = ((x @ w - y) ** 2).mean()
    loss = fit.detach() + 1e-3 * (w ** 2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=8,
        ),
        # another loss of the update trains another model: the detached penalty's own model gets nothing
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

encoder = nn.Linear(4, 4)
head = nn.Linear(4, 1)
critic = nn.Linear(4, 1)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()))
critic_opt = torch.optim.Adam(critic.parameters())


def update(x, y):
    features = encoder(x)
    penalty = features.pow(2).mean()
    score = critic(x)
    critic_loss = F.mse_loss(score, y)
    loss = F.mse_loss(head(features), y) + 0.1 * penalty.detach()
    opt.zero_grad()
    loss.backward()
    opt.step()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
""",
            line=18,
        ),
        # a GAN whose generator's loss binds `outputs` again and reads the same label: the detached real
        # term of the discriminator's loss is not what that loss trains
        Invalid(
            """
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCELoss()
d_optimizer = torch.optim.Adam(D.parameters())
g_optimizer = torch.optim.Adam(G.parameters())
for real_img in torch.randn(10, 32, 4):
    real_label = torch.ones(32, 1)
    fake_label = torch.zeros(32, 1)
    outputs = D(real_img)
    d_loss_real = criterion(outputs, real_label)
    outputs = D(G(torch.randn(32, 8)).detach())
    d_loss_fake = criterion(outputs, fake_label)
    d_loss = d_loss_real.detach() + d_loss_fake
    d_optimizer.zero_grad()
    d_loss.backward()
    d_optimizer.step()
    outputs = D(G(torch.randn(32, 8)))
    g_loss = criterion(outputs, real_label)
    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()
""",
            line=17,
        ),
        # the same losses kept on `self`, the adversarial term detached by mistake
        Invalid(
            """
import torch
import torch.nn as nn


class Pix2Pix:
    def __init__(self):
        self.netG = nn.Linear(8, 8)
        self.netD = nn.Linear(16, 1)
        self.opt_G = torch.optim.Adam(self.netG.parameters())
        self.opt_D = torch.optim.Adam(self.netD.parameters())
        self.gan_loss = nn.BCEWithLogitsLoss()

    def backward_D(self, real_A, real_B):
        fake = torch.cat((real_A, self.fake_B), 1)
        pred_fake = self.netD(fake.detach())
        self.loss_D_fake = self.gan_loss(pred_fake, torch.zeros_like(pred_fake))
        pred_real = self.netD(torch.cat((real_A, real_B), 1))
        self.loss_D_real = self.gan_loss(pred_real, torch.ones_like(pred_real))
        self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
        self.loss_D.backward()

    def backward_G(self, real_A, real_B):
        pred_fake = self.netD(torch.cat((real_A, self.fake_B), 1))
        self.loss_G_GAN = self.gan_loss(pred_fake, torch.ones_like(pred_fake))
        self.loss_G_L1 = nn.functional.l1_loss(self.fake_B, real_B) * 100.0
        self.loss_G = self.loss_G_GAN.detach() + self.loss_G_L1
        self.loss_G.backward()

    def optimize(self, real_A, real_B):
        self.fake_B = self.netG(real_A)
        self.opt_D.zero_grad()
        self.backward_D(real_A, real_B)
        self.opt_D.step()
        self.opt_G.zero_grad()
        self.backward_G(real_A, real_B)
        self.opt_G.step()
""",
            line=27,
        ),
        Invalid(
            """
import math

import torch
import torch.nn as nn


class Agent:
    def __init__(self, init=0.1, target=-1.0):
        self.actor = nn.Linear(4, 2)
        self.log_alpha = torch.tensor(math.log(init))
        self.log_alpha.requires_grad = True
        self.target = target
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=1e-2)

    @property
    def alpha(self):
        return self.log_alpha.exp().detach()

    def update_alpha(self, obs):
        log_prob = torch.log_softmax(self.actor(obs), dim=-1)[:, 0]
        self.alpha_opt.zero_grad()
        loss = (self.alpha * (-log_prob - self.target).detach()).mean()
        loss.backward()
        self.alpha_opt.step()
        return loss.item()


agent = Agent()
print(agent.update_alpha(torch.randn(8, 4)) is not None)
""",
            line=23,
        ),
        # the term is a helper's parameter: the one call of the helper passes the actor's log-probabilities
        Invalid(
            """
import torch
import torch.nn.functional as F


def actor_critic_step(advantage, log_prob, value, target, opt):
    policy_loss = -(advantage * log_prob).mean()
    loss = policy_loss.detach() + F.smooth_l1_loss(value, target)
    opt.zero_grad()
    loss.backward()
    opt.step()


actor, critic = torch.nn.Linear(8, 3), torch.nn.Linear(8, 1)
opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()])
obs, act, target = torch.randn(16, 8), torch.randint(0, 3, (16, 1)), torch.randn(16)
log_prob = torch.log_softmax(actor(obs), dim=-1).gather(1, act).squeeze(1)
value = critic(obs).squeeze(1)
actor_critic_step((target - value).detach(), log_prob, value, target, opt)
""",
            line=8,
            col=12,
        ),
        # the losses are unpacked from the model in both arms of an `if`: no one assignment reaches the sum
        Invalid(
            """
import torch


def fit(detector, batches, opt, on_gpu):
    detector.train()
    for images, boxes in batches:
        if on_gpu:
            box_loss, label_loss = detector(images.cuda(), boxes.cuda())
        else:
            box_loss, label_loss = detector(images, boxes)
        total = box_loss.mean() + label_loss.mean().detach()
        opt.zero_grad()
        total.backward()
        opt.step()
""",
            line=12,
            col=35,
        ),
        # log-probabilities gathered over an episode, concatenated, averaged, then detached in the sum
        Invalid(
            """
import torch
import torch.nn as nn
from torch.distributions import Categorical

net = nn.Linear(6, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for episode in range(3):
    picks = []
    for t in range(4):
        scores, baseline = net(torch.randn(1, 6)).split([3, 1], dim=1)
        log_prob = Categorical(logits=scores).log_prob(torch.tensor([1]))
        picks.append(log_prob)
    picks = torch.cat(picks)
    policy_term = -picks.mean()
    loss = policy_term.detach() + baseline.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=16,
            col=12,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        if not self.ctx.names.imports_torch:
            return
        for found in detached_terms(self.ctx):
            if found.whole:
                message = (f"The loss `{self.ctx.code(found.term)}` is computed through {found.how}: backward "
                           "reaches no parameter of the model through it")
            else:
                message = self.MESSAGE.format(term=self.ctx.code(found.term), how=found.how)
            self.report(found.term, message)
