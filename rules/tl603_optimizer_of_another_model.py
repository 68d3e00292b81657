from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.families.gradflow.optimizers import (lightning_manual_steps, stray_lightning_optimizers, stray_steps,
                                                   untrained_models)
from torchlint.rule import Invalid, LintRule, Valid


class OptimizerOfAnotherModel(LintRule):
    """
    ## What it does
    Finds an optimizer step (`opt.step()`, `scaler.step(opt)`) after a backward pass whose loss does not
    reach any parameter the optimizer holds, or a model the loss runs through that no optimizer holds. The
    first is a GAN whose discriminator step uses the optimizer built on
    the generator's parameters (`opt_d = Adam(G.parameters())` stepped after `loss_d.backward()` where
    `loss_d` is computed from `D` only), or an optimizer built on `model.parameters()` before `model` is
    bound to a new instance that the loop then trains.

    Both sides are decided from construction: the optimizer holds the parameters of the models its first
    argument is built from (`G.parameters()`, `chain(a.parameters(), b.parameters())`, parameter groups),
    each model being the construction its name is bound to where the optimizer is built; the loss reaches
    the models it is computed from through local names and the file's helper functions (their returns,
    with their parameters read as the call's arguments; in a method, also the methods of its own class
    that no class of the project may override, such as `self.sample(s)`; a list read by item holds what
    the function appended to it, as `log_probs.append(m.log_prob(a))`), except through `.detach()`, `.item()`, `.data`
    and values computed under `torch.no_grad()`. Anything unknown on either side (a method or a function
    of another module that computes the loss, `self.model`, a parameter of the function, a model that
    wraps another one in a way that is not followed) keeps the rule silent. A construction given a value
    that may hold a model is such a wrapper, unless its class uses that argument only as a size or a rate
    of its layers (`Encoder(vocab.n_words, hidden)`).

    It also finds, at the backward call, a model the loss runs through that no optimizer of the file
    holds: `opt = Adam(head.parameters())` with the loss computed from `head(encoder(x))`. Backward fills
    the encoder's gradients and nothing ever applies them. This is reported only when every optimizer
    the file builds and every step it takes are known, the model holds parameters by construction (a
    `torch.nn` layer with weights, a `Sequential` of such (also `nn.Sequential(*layers)` of a list of
    layers its constructor builds), a function of the project every return of which builds one
    (`def make_net(n): return nn.Sequential(nn.Linear(n, 1))`), a project `nn.Module` class that builds them
    and neither freezes nor detaches anything), and its name is used for nothing but being called,
    moved or switched between train and eval mode. A frozen model (`requires_grad_(False)`, a loop that
    writes its `parameters()` other than switching them on with `p.requires_grad = True` or clipping them
    with `p.data.clamp_(-c, c)` as a WGAN critic does, a freezing helper it is passed to), a teacher or target network
    (`load_state_dict`, `copy.deepcopy`, an EMA update over its parameters), a model run under
    `no_grad` or whose output is detached, and an optimizer built by a helper all keep it silent. The
    source of a target network's soft update is not frozen: a loop (or a helper of the file, such as
    `soft_update(net, target)`) that only reads its parameters (`tau * p.data + (1 - tau) * tp.data`
    written into the target), and copying it (`target = copy.deepcopy(net)`), leave it as it is. The
    same holds for a model a trainer class keeps (`self.actor`, set once by its constructor, stepped by
    `self.actor_optimizer`), when the class is a plain class, hands `self` to nothing, and its methods are
    the only code of the file that reads the attribute (`agent.actor.requires_grad_(False)` outside keeps
    it silent). A trainer that is itself an `nn.Module` (`class Algorithm(nn.Module)` whose `__init__`
    builds `self.network`, `self.optimizer = Adam(self.network.parameters())` and then `self.context_net`)
    counts the same way when it derives from `nn.Module` directly, no class of the file derives from it,
    its methods read on `self` only its own attributes and methods (not `self.parameters()`,
    `self.requires_grad_(...)`), and every instance of it is built in this file and used for nothing
    but calling its methods and moving it (`Adam(algo.parameters())`, `copy.deepcopy(algo)` or handing
    `algo` to a function keep it silent). A method's argument is also what the calls on an instance of
    its class pass (`algo.update(x, y)`); an attribute also set outside its class (`algo.optimizer =
    ...`, a subclass's constructor) is unknown; an optimizer the constructor builds on each path of an
    `if` (`if gda: self.optimizer = SGD(self.adv_classifier.parameters())`) is asked about one path at a
    time, and a path whose optimizer holds none of the models the loss reaches is reported.
    Parts of the loss that cannot be followed (data from a method of another object) do not
    matter for this question: the model the loss is computed from is on the graph whatever they reach,
    and a function that is not followed (`masked_nll(decoder(states), y, mask)` from a star import) is
    taken to compute its result from its arguments.
    The step of an object a library builds from values that cannot be models or their parameters
    (`env = gym.make("Pendulum-v1")`, `env.step(action)`) is no optimizer's, nor is that of a project class
    deriving only from such a library's classes that leaves `step` to them (`Scaled(gym.make(...))` of
    `class Scaled(gym.ActionWrapper)`); `self.env` set from a constructor parameter counts so when every
    construction of the class passes such an object (re-wrapped later by a library wrapper, as
    `RecordVideo(self.env, video_folder=folder)` with a folder every call passes as a string, it stays one,
    and so does the one put back afterwards),
    and a `step` method the project defines
    itself (`self.step(action)` of the agent) is judged by the steps in its body.

    What library calls do is read from one table: a model rebound to itself moved, cast, switched or
    initialised (`D = D.cuda()`, also under `if torch.cuda.is_available():` where both paths hold the same
    model; `G.apply(weights_init)` initialises and neither freezes nor trains it, the function defined
    in the file or in a project module it imports), wrapped
    (`nn.DataParallel(D)`, `torch.compile(D)` hold `D`'s parameters) or copied (`copy.deepcopy`,
    `AveragedModel`: new parameters); parameter sources through `filter`, `itertools.chain`, `list(...) +
    list(...)`, comprehensions, parameter groups and `add_param_group`. Models and optimizers held by an
    object count too: `self.D` and `self.opt_d` of a trainer class, each set once by `__init__` or by a
    method `__init__` calls (`self.build_optimizers()`), read in its methods (a method's argument is what
    the calls of that method in the file pass: `self.train_step(real)` in `for real in loader:`), and the
    values of a dict literal keyed by literal strings (`nets["D"]`). An attribute set anywhere else, or a
    method without a call in the file, keeps the rule silent. A name bound on several paths to values
    that are no models (`device` chosen by an `if`) reaches what its values reach; `.to(device)` of a
    batch element or of a new tensor is a tensor, not a model; saving a model's state dict does not freeze
    it. One mistake, one finding: a model no optimizer holds is reported at its first backward pass, and
    not at all when a step's message already names it.

    Models held by another object are followed too: `model.generator` of `model = GAN()`, where the
    class of the file sets `self.generator` once in its constructor, and the methods of that class called
    on the object (`model.generator_forward(z)` returns `self.generator(z)`, read as `model.generator`).
    When the object is itself a module (`net = TwoHeads()` with `net.policy(s)` and `net.value(s)`
    running `self.trunk` and its heads), an optimizer over `net.parameters()` holds all of them.
    Such a module counts as untrained only when the object is used for nothing but calling its methods
    and modules, moving it and giving its modules' parameters to optimizers. Names unpacked from a tuple
    of constructions (`G, D = Generator(), Discriminator()`) hold each construction; a model class
    imported with `from models import *` from a project module is read there; a checkpoint restored with
    `load_state_dict(torch.load(path))` neither freezes a model nor fills it from another one; a function
    handed to ignite's `Engine(step)` gets the engine and a batch of data.

    In a LightningModule it finds, at the optimizer `configure_optimizers` returns, an optimizer built on
    `self.model.parameters()` while the loss `training_step` returns (through `self(x)` and `forward`)
    runs only a copy of a model, `AveragedModel(self.model)` or `copy.deepcopy(...)`, which has parameters
    of its own: Lightning's automatic loop runs backward on that loss and steps the optimizer, which gets no
    gradient. This is reported only when the class and every base down to the LightningModule are in the
    file, no hook takes over the step (`optimizer_step`, `backward`, `on_after_backward`, ...), nothing
    switches `automatic_optimization` off or moves gradients by hand, and the copy is used for nothing but
    being called and updated (`update_parameters`). Averaging done right (the optimizer over the model the
    loss runs, the average updated from it) and an EMA teacher under `no_grad` are silent.

    A LightningModule that steps its optimizers by hand (`automatic_optimization = False`,
    `opt_g, opt_d = self.optimizers()`, `self.manual_backward(loss)`) is read the same way: each name
    `self.optimizers()` unpacks is the optimizer at that place of what `configure_optimizers` returns,
    the loss is followed through `self(x)`, the methods of the class (`self.adversarial_loss(pred,
    target)`, its arguments bound) and values stored on `self` earlier in `training_step`; a step whose
    optimizer holds none of the modules its loss runs, or a module built in `__init__` that the loss runs
    and no returned optimizer holds, is reported. Anything that may freeze a module (`requires_grad`,
    `freeze`, a loop over `self.parameters()`, `load_state_dict`) keeps it silent.

    Networks and optimizers kept in two lists and walked together (`for net, opt in zip(nets,
    optimizers):`, also `enumerate(zip(...))`) are asked about one iteration at a time, when each list is
    a literal never changed; `nets[1]` of such a list is its element. Models and optimizers passed to a
    training function of the file (`def train(x, y, encoder, decoder, enc_opt, dec_opt, criterion)`) are
    the variables every call of it passes, when all calls pass the same ones. A loss summed over a loop
    (`loss += criterion(out, y)`), a decoder state carried by the loop (`out, h = decoder(x, h)`), and
    outputs written into a buffer by item (`outputs[t] = decoder(h)`) reach what their values reach;
    numpy and the legacy tensor constructors (`torch.LongTensor(indexes)`) compute off the graph.
    Reading a model changes nothing about its training: a summary (`torchsummary`, `torchinfo`),
    `torch.save` (of the model, or of a list or tuple holding it: `torch.save([G, D], path)`), an ignite checkpoint handler given it in a dict, gradient clipping over its
    parameters, its parameters switched off with `p.requires_grad = False` where the file switches them on
    again (a critic frozen for the generator's step), its parameters' gradients handed to any function (`writer.add_histogram(name, p.grad, step)`
    in a loop over `named_parameters()`) and its parameters handed to a logger's method (`add_histogram`,
    `add_scalar`, `log_metric`, ...), a method or a stored setting of its own class (`encoder.init_hidden()`,
    `decoder.hidden_size`), and what is done to another module the same object holds (a WGAN clipping
    its critic's weights).

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

    ```python
    opt = torch.optim.Adam(head.parameters())
    ...
    loss = criterion(head(encoder(x)), y)
    loss.backward()  # `encoder` is never trained
    opt.step()
    ```

    ## Use instead
    ```python
    opt_g = torch.optim.Adam(gen.parameters())
    opt_d = torch.optim.Adam(disc.parameters())
    ```

    ```python
    opt = torch.optim.Adam(itertools.chain(encoder.parameters(), head.parameters()))
    # or, to keep the encoder as it is: encoder.requires_grad_(False)
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
        "`{optimizer}`{here} holds the parameters of {held}, but the loss of the backward pass before this step "
        "is computed from {reached} only: the step applies no gradient of this loss to them"
    )
    UNTRAINED = (
        "{models} {verb} never trained: the loss of this backward pass is computed from {them}, but no optimizer "
        "holds {their} parameters (the step after it applies {optimizers})"
    )
    LIGHTNING = (
        "this optimizer holds the parameters of {held}, but the loss `{cls}.training_step` returns is computed "
        "from {reached} only, a copy with parameters of its own: Lightning steps this optimizer after that "
        "loss's backward and applies no gradient of it"
    )
    MANUAL_UNTRAINED = (
        "{models} {verb} never trained: the loss given to `manual_backward` here is computed from {them}, but no "
        "optimizer `configure_optimizers` returns holds {their} parameters"
    )
    TRIGGERS = ("step", "configure_optimizers")

    VALID = [
        # the same step with each optimizer built on its own model
        Valid(
            """
import torch
from torch import nn


def step(nets, optims, x):
    net_g, net_d = nets
    optim_g, optim_d = optims
    loss_d = net_d(x).mean()
    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
    loss_g = -net_d(net_g(x)).mean()
    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()


def main(batches):
    net_g = nn.Linear(4, 4)
    net_d = nn.Linear(4, 1)
    optim_g = torch.optim.Adam(net_g.parameters())
    optim_d = torch.optim.Adam(net_d.parameters())
    for x in batches:
        step([net_g, net_d], [optim_g, optim_d], x)
"""
        ),
        # the list is read again beside its unpacking: the step may freeze the model through it
        Valid(
            """
import torch
from torch import nn


def step(nets, optims, x):
    net_g, net_d = nets
    nets[0].requires_grad_(False)
    optim_g, optim_d = optims
    loss_d = net_d(x).mean()
    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
    loss_g = -net_d(net_g(x)).mean()
    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()


def main(batches):
    net_g = nn.Linear(4, 4)
    net_d = nn.Linear(4, 1)
    optim_g = torch.optim.Adam(net_d.parameters())
    optim_d = torch.optim.Adam(net_d.parameters())
    for x in batches:
        step([net_g, net_d], [optim_g, optim_d], x)
"""
        ),
        # one update function called for two pairs of model and optimizer, each pair right (the tensors made
        # through a lambda over a library constructor)
        Valid(
            """
import torch
import torch.nn as nn
from torch import autograd

ON_GPU = torch.cuda.is_available()
Tensor = lambda *a, **k: autograd.Variable(*a, **k).cuda() if ON_GPU else autograd.Variable(*a, **k)


class QNet(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out))

    def forward(self, x):
        return self.body(x)


worker = QNet(6, 3)
manager = QNet(4, 4)
worker_opt = torch.optim.Adam(worker.parameters())
manager_opt = torch.optim.Adam(manager.parameters())


def td_update(net, opt, batch):
    states, actions, targets = batch
    q = net(Tensor(states)).gather(1, Tensor(actions).unsqueeze(1)).squeeze(1)
    loss = (q - Tensor(targets)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


for low, high in []:
    td_update(worker, worker_opt, low)
    td_update(manager, manager_opt, high)
"""
        ),
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
        # the loss comes from a method: which models it runs is not followed; a helper returns features
        # computed under no_grad
        Valid(
            """
import torch

model = torch.nn.Linear(4, 1)
other = torch.nn.Linear(4, 1)
backbone = torch.nn.Linear(4, 4)
opt = torch.optim.SGD(other.parameters(), lr=0.1)
opt2 = torch.optim.SGD(model.parameters(), lr=0.1)


class Task:
    def compute(self, x):
        return model(x).mean()


def frozen_features(x):
    with torch.no_grad():
        return backbone(x)


task = Task()
for x in []:
    loss = task.compute(x)
    loss.backward()
    opt.step()
    loss2 = model(frozen_features(x)).mean()
    loss2.backward()
    opt2.step()
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
        # frozen by a loop over its parameters, and through a helper of the project
        Valid(
            """
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
for p in backbone.parameters():
    p.requires_grad = False
stem = nn.Linear(16, 16)
head = nn.Linear(16, 4)
opt = torch.optim.Adam(head.parameters())


def freeze(module):
    module.requires_grad_(False)


freeze(stem)


def fit(loader):
    for x, y in loader:
        loss = nn.functional.cross_entropy(head(backbone(stem(x))), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # a teacher in eval mode run under no_grad, a copy of the student, and an EMA of it
        Valid(
            """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Linear(8, 4)
teacher = nn.Linear(8, 4)
teacher.load_state_dict(torch.load("teacher.pt"))
teacher.eval()
target = copy.deepcopy(student)
ema = nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)


def train(loader):
    for x in loader:
        with torch.no_grad():
            soft = teacher(x).softmax(-1)
        loss = F.kl_div(student(x).log_softmax(-1), soft, reduction="batchmean") + (student(x) - target(x)).pow(2).mean()
        loss = loss + (student(x) - ema(x).detach()).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for e, s in zip(ema.parameters(), student.parameters()):
                e.mul_(0.99).add_(s, alpha=0.01)
"""
        ),
        # the optimizer holds the model that wraps the encoder the loss runs through; an optimizer built
        # by a helper, and a loss module without parameters
        Valid(
            """
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 2)
        self.decoder = nn.Linear(2, 8)

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = AutoEncoder()
probe = nn.Linear(2, 1)
criterion = nn.MSELoss()
opt = torch.optim.Adam(model.parameters())


def make_optimizer(module):
    return torch.optim.Adam(module.parameters())


probe_opt = make_optimizer(probe)


def train(loader):
    for x, y in loader:
        loss = criterion(model(x), x) + criterion(probe(model.encoder(x)), y)
        opt.zero_grad()
        probe_opt.zero_grad()
        loss.backward()
        opt.step()
        probe_opt.step()
"""
        ),
        # Lightning, averaging done right: the optimizer holds the model the loss runs, the average is
        # updated from it after each epoch and used for evaluation only
        Valid(
            """
import torch
import lightning as L
from torch.optim.swa_utils import AveragedModel


class Regressor(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.averaged = AveragedModel(self.net)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def on_train_epoch_end(self):
        self.averaged.update_parameters(self.net)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val", torch.nn.functional.mse_loss(self.averaged(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.net.parameters(), lr=0.1)
"""
        ),
        # Lightning, an EMA teacher: its output is a target under no_grad, the student is trained
        Valid(
            """
import copy
import torch
import pytorch_lightning as pl


class Distill(pl.LightningModule):
    def __init__(self, student):
        super().__init__()
        self.student = student
        self.teacher = copy.deepcopy(student)

    def forward(self, x):
        return self.student(x)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        with torch.no_grad():
            target = self.teacher(x)
        return (self(x) - target).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.student.parameters())
"""
        ),
        # Lightning, the copy runs the loss but the loop is manual: the training step decides what it steps
        Valid(
            """
import copy
import torch
import pytorch_lightning as pl


class Manual(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.automatic_optimization = False
        self.net = net
        self.shadow = copy.deepcopy(net)

    def forward(self, x):
        return self.shadow(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters())
"""
        ),
        # Lightning, the training step is inherited from a class of another module: not in view
        Valid(
            """
import copy
import torch
from project.base import BaseTask


class Shadowed(BaseTask):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.shadow = copy.deepcopy(net)

    def forward(self, x):
        return self.shadow(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.net.parameters())
"""
        ),
        # Lightning, the optimizer holds every parameter of the module (the copy's too)
        Valid(
            """
import torch
import lightning.pytorch as pl
from torch.optim.swa_utils import AveragedModel


class Averaged(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.swa = AveragedModel(self.net)

    def forward(self, x):
        return self.swa(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)
"""
        ),
        # the GAN moved under `if` and initialised through `apply`: each optimizer holds its own model
        Valid(
            """
import torch
from torch import nn


def init_normal(layer):
    if isinstance(layer, nn.Conv2d):
        nn.init.normal_(layer.weight, 0.0, 0.02)


netG = nn.Sequential(nn.ConvTranspose2d(8, 3, 4), nn.Tanh())
netD = nn.Sequential(nn.Conv2d(3, 1, 4), nn.Flatten())
netG.apply(init_normal)
netD.apply(init_normal)
if torch.cuda.is_available():
    netG = netG.cuda()
    netD = nn.DataParallel(netD.cuda())
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)


def fit(images):
    for real in images:
        noise = torch.randn(real.size(0), 8, 1, 1)
        lossD = netD(real).mean() - netD(netG(noise).detach()).mean()
        optD.zero_grad()
        lossD.backward()
        optD.step()
"""
        ),
        # a trainer class whose optimizers hold the right models, built by a method the constructor calls
        Valid(
            """
import torch
import torch.nn as nn


class GanTrainer:
    def __init__(self, generator, device="cpu"):
        self.gen = generator.to(device)
        self.disc = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
        self.setup_optimizers()

    def setup_optimizers(self):
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=1e-4)
        self.disc_opt = torch.optim.Adam(filter(lambda p: p.requires_grad, self.disc.parameters()), lr=1e-4)

    def disc_step(self, real):
        fake = self.gen(torch.randn(real.shape[0], 4)).detach()
        loss = nn.functional.softplus(self.disc(fake)).mean() + nn.functional.softplus(-self.disc(real)).mean()
        self.disc_opt.zero_grad()
        loss.backward()
        self.disc_opt.step()

    def run(self, batches):
        for real in batches:
            self.disc_step(real)
"""
        ),
        # near misses: the discriminator set again outside the constructor (a checkpoint swap), and a
        # step method no code of the file calls
        Valid(
            """
import torch
import torch.nn as nn


class Swapping:
    def __init__(self):
        self.g = nn.Linear(4, 2)
        self.d = nn.Linear(2, 1)
        self.opt_d = torch.optim.SGD(self.g.parameters(), lr=0.1)

    def load(self, path):
        self.d = torch.load(path)

    def step(self, real):
        loss = self.d(real).mean()
        self.opt_d.zero_grad()
        loss.backward()
        self.opt_d.step()


class Uncalled:
    def __init__(self):
        self.g = nn.Linear(4, 2)
        self.d = nn.Linear(2, 1)
        self.opt_g = torch.optim.SGD(self.g.parameters(), lr=0.1)

    def step(self, fake):
        loss = -self.d(fake).mean()
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()
"""
        ),
        # the step method is also called on an instance, given the generator's output
        Valid(
            """
import torch
import torch.nn as nn


class Critic:
    def __init__(self):
        self.g = nn.Linear(4, 2)
        self.d = nn.Linear(2, 1)
        self.opt_g = torch.optim.SGD(self.g.parameters(), lr=0.1)
        self.opt_d = torch.optim.SGD(self.d.parameters(), lr=0.1)

    def g_step(self, fake):
        loss = -self.d(fake).mean()
        self.opt_g.zero_grad()
        loss.backward()
        self.opt_g.step()

    def run(self, batches):
        for z in batches:
            self.g_step(self.g(z))


trainer = Critic()
trainer.g_step(trainer.g(torch.randn(4, 4)))
"""
        ),
        # models kept in a dict keyed by literal strings; the group added later holds the model the loss
        # runs through
        Valid(
            """
import torch
from torch import nn

nets = {"enc": nn.Linear(8, 4), "dec": nn.Linear(4, 8)}
opt = torch.optim.Adam(nets["dec"].parameters())
opt.add_param_group({"params": nets["enc"].parameters(), "lr": 1e-4})


def train(batches):
    for x in batches:
        loss = nets["enc"](x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # an `apply` whose function freezes the layers: the unoptimized encoder is frozen, not forgotten
        Valid(
            """
import torch
import torch.nn as nn


def freeze(m):
    for p in m.parameters(recurse=False):
        p.requires_grad_(False)


enc = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
head = nn.Linear(8, 1)
enc.apply(freeze)
opt = torch.optim.SGD(head.parameters(), lr=0.1)


def train(loader):
    for x, y in loader:
        opt.zero_grad()
        loss = (head(enc(x)) - y).pow(2).mean()
        loss.backward()
        opt.step()
"""
        ),
        # the object's two networks each have their optimizer; the generator's module is frozen elsewhere in a
        # near variant, so nothing is reported there either
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.disc = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())

    def generate(self, z):
        return self.gen(z)

    def judge(self, img):
        return self.disc(img).view(-1)


pair = Pair()
opt_g = torch.optim.Adam(pair.gen.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(pair.disc.parameters(), lr=1e-3)

for real in []:
    fake = pair.generate(torch.randn(4, 8))
    loss_g = F.binary_cross_entropy(pair.judge(fake), torch.ones(4))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
"""
        ),
        # the encoder held by the object is frozen: the decoder alone is meant to learn
        Valid(
            """
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)


pair = Pair()
pair.enc.requires_grad_(False)
opt = torch.optim.SGD(pair.dec.parameters(), lr=0.1)
for x in []:
    loss = (pair.dec(pair.enc(x)) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # a tuple assignment of two networks, each with its own optimizer
        Valid(
            """
import torch
import torch.nn as nn

gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
if torch.cuda.is_available():
    gen = gen.cuda()
opt_g = torch.optim.Adam(gen.parameters())
opt_d = torch.optim.Adam(disc.parameters())
for real in []:
    fake = gen(torch.randn(2, 4))
    loss_g = -disc(fake).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
"""
        ),
        # the same ignite step function with each optimizer on its own network
        Valid(
            """
import torch
import torch.nn as nn
from ignite.engine import Engine


def main(loader, device, z_dim=8):
    netG = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh()).to(device)
    netD = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid()).to(device)
    bce = nn.BCELoss()
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)

    def get_noise(n):
        return torch.randn(n, z_dim, device=device)

    def step(engine, batch):
        real, _ = batch
        real = real.to(device)
        netD.zero_grad()
        fake = netG(get_noise(real.size(0)))
        errD = bce(netD(real), torch.ones(real.size(0), 1, device=device)) + bce(
            netD(fake.detach()), torch.zeros(real.size(0), 1, device=device))
        errD.backward()
        optimizerD.step()
        netG.zero_grad()
        errG = bce(netD(fake), torch.ones(real.size(0), 1, device=device))
        errG.backward()
        optimizerG.step()
        return errG.item()

    trainer = Engine(step)
    trainer.run(loader, max_epochs=1)
"""
        ),
        # the same comparison with each optimizer on its own network
        Valid(
            """
import torch

x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = x + 0.3 * torch.randn(20, 1)
x, y = x.float(), y.float()
plain = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
dropped = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.Dropout(0.5), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt_plain = torch.optim.Adam(plain.parameters(), lr=0.01)
opt_drop = torch.optim.Adam(dropped.parameters(), lr=0.01)
loss_func = torch.nn.MSELoss()
for t in range(100):
    loss_plain = loss_func(plain(x), y)
    loss_drop = loss_func(dropped(x), y)
    opt_plain.zero_grad()
    opt_drop.zero_grad()
    loss_plain.backward()
    loss_drop.backward()
    opt_plain.step()
    opt_drop.step()
"""
        ),
        # the base class can copy another model's weights into it (`p.data.copy_(q.data)`): the encoder may be a
        # target network filled from elsewhere, so nothing is said
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def weights_init(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(0.0, 0.02)
                m.bias.data.fill_(0)

    def follow(self, other):
        for p, q in zip(self.parameters(), other.parameters()):
            p.data.copy_(q.data)


class Encoder(Net):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.weights_init()

    def forward(self, x):
        return self.fc(x)


enc = Encoder()
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for x, y in []:
    loss = (head(enc(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # near misses of the saving and summary cases: the generator is handed to a function of another
        # module (it may freeze or train it), and in the second file it is frozen before being saved
        Valid(
            """
import torch
import torch.nn as nn
from helpers import prepare

gen = nn.Linear(8, 16)
disc = nn.Linear(16, 1)
prepare(gen)
opt_d = torch.optim.Adam(disc.parameters())
for z in []:
    loss = -disc(gen(z)).mean()
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
from ignite.handlers import ModelCheckpoint

encoder = nn.Linear(8, 4)
head = nn.Linear(4, 1)
encoder.requires_grad_(False)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
saver = ModelCheckpoint("ckpt", "run")
for x, y in []:
    loss = (head(encoder(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
    opt.step()
saver(None, {"encoder": encoder, "head": head})
"""
        ),
        # a dict of models handed to a call that is no checkpoint handler (it may load one into the other)
        Valid(
            """
import torch
import torch.nn as nn
from tools import sync

student = nn.Linear(8, 2)
teacher = nn.Linear(8, 2)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
sync({"from": student, "to": teacher})
for x in []:
    loss = (student(x) - teacher(x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # zip loops near misses: each optimizer in the same position as its network; a list changed after it
        # is built (what it holds at the loop is not followed); the optimizers zipped in another order
        # through a call (not followed)
        Valid(
            """
import torch
import torch.nn.functional as F

small = torch.nn.Linear(2, 1)
wide = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
models = (small, wide)
opts = (torch.optim.SGD(small.parameters(), lr=0.1), torch.optim.Adam(wide.parameters()))
for x, y in []:
    for i, (model, opt) in enumerate(zip(models, opts)):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F

first = torch.nn.Linear(2, 1)
second = torch.nn.Linear(2, 1)
nets = [first, second]
opt_second = torch.optim.SGD(second.parameters(), lr=0.1)
opt_first = torch.optim.SGD(first.parameters(), lr=0.1)
optimizers = [opt_second]
optimizers.insert(0, opt_first)
for x, y in []:
    for net, opt in zip(nets, optimizers):
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F

first = torch.nn.Linear(2, 1)
second = torch.nn.Linear(2, 1)
nets = [first, second]
optimizers = [torch.optim.SGD(second.parameters(), lr=0.1), torch.optim.SGD(first.parameters(), lr=0.1)]
for x, y in []:
    for net, opt in zip(nets, reversed(optimizers)):
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # a LightningModule stepping its optimizers by hand, each optimizer on the network its loss trains
        # (the generator's output detached for the discriminator); then two heads sharing a backbone, each
        # optimizer holding the backbone; then a frozen encoder whose head alone is optimised, and an EMA
        # copy stepped by no optimizer
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class Gan(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.disc = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, z):
        return self.gen(z)

    def bce(self, pred, target):
        return F.binary_cross_entropy(pred, target)

    def training_step(self, batch, batch_idx):
        real = batch
        opt_g, opt_d = self.optimizers()
        self.fake = self(torch.randn(real.size(0), 8))
        self.toggle_optimizer(opt_g)
        loss_g = self.bce(self.disc(self.fake), torch.ones(real.size(0), 1))
        self.manual_backward(loss_g)
        opt_g.step()
        opt_g.zero_grad()
        self.untoggle_optimizer(opt_g)
        loss_d = self.bce(self.disc(real), torch.ones(real.size(0), 1)) + self.bce(
            self.disc(self.fake.detach()), torch.zeros(real.size(0), 1))
        self.manual_backward(loss_d)
        opt_d.step()
        opt_d.zero_grad()

    def configure_optimizers(self):
        return [torch.optim.Adam(self.gen.parameters()), torch.optim.Adam(self.disc.parameters())], []
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import lightning.pytorch as pl


class TwoTasks(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.backbone = nn.Linear(8, 8)
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 3)

    def training_step(self, batch, batch_idx):
        x, ya, yb = batch
        opt_a, opt_b = self.optimizers()
        loss_a = nn.functional.cross_entropy(self.head_a(self.backbone(x)), ya)
        self.manual_backward(loss_a)
        opt_a.step()
        opt_a.zero_grad()
        loss_b = nn.functional.cross_entropy(self.head_b(self.backbone(x)), yb)
        self.manual_backward(loss_b)
        opt_b.step()
        opt_b.zero_grad()

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(list(self.backbone.parameters()) + list(self.head_a.parameters()), lr=0.1)
        opt_b = torch.optim.SGD(list(self.backbone.parameters()) + list(self.head_b.parameters()), lr=0.1)
        return opt_a, opt_b
"""
        ),
        Valid(
            """
import copy
import torch
import torch.nn as nn
import pytorch_lightning as pl


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.encoder = nn.Linear(8, 8)
        self.encoder.requires_grad_(False)
        self.head = nn.Linear(8, 2)
        self.ema = copy.deepcopy(self.head)

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        loss = nn.functional.cross_entropy(self.head(self.encoder(x)), y)
        self.manual_backward(loss)
        opt.step()
        opt.zero_grad()

    def configure_optimizers(self):
        return torch.optim.SGD(self.head.parameters(), lr=0.1)
"""
        ),
        # a loop over the parameters of the very network no optimizer holds (it freezes it), or over the
        # whole model object: silent
        Valid(
            """
import torch
import torch.nn as nn


class Wgan(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.critic = nn.Linear(8, 1)


wgan = Wgan()
for p in wgan.gen.parameters():
    p.requires_grad = False
opt_c = torch.optim.RMSprop(wgan.critic.parameters(), lr=5e-5)
for real in []:
    loss = wgan.critic(wgan.gen(torch.randn(2, 4))).mean() - wgan.critic(real).mean()
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Wgan(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.critic = nn.Linear(8, 1)


wgan = Wgan()
for p in wgan.parameters():
    p.requires_grad_(False)
opt_c = torch.optim.RMSprop(wgan.critic.parameters(), lr=5e-5)
for real in []:
    loss = wgan.critic(wgan.gen(torch.randn(2, 4))).mean() - wgan.critic(real).mean()
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
"""
        ),
        # the same GAN trained right, the generator's samples shown through numpy
        Valid(
            """
import numpy as np
import torch
import torch.nn as nn

POINTS = np.vstack([np.linspace(-1, 1, 8) for _ in range(16)])
gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
disc = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4)
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4)
for step in range(100):
    fake = gen(torch.randn(16, 4))
    p_real = disc(torch.from_numpy(POINTS).float())
    p_fake = disc(fake)
    loss_d = -torch.mean(torch.log(p_real) + torch.log(1.0 - p_fake))
    loss_g = torch.mean(torch.log(1.0 - p_fake))
    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    shown = np.asarray(fake.detach())
"""
        ),
        # a training function called with two different pairs (each right): which model a parameter holds
        # is not one variable, so it is not followed; and the same function called once, the encoder frozen
        # by the caller
        Valid(
            """
import torch
import torch.nn.functional as F


def fit_batch(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


small = torch.nn.Linear(4, 1)
large = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt_small = torch.optim.SGD(small.parameters(), lr=0.1)
opt_large = torch.optim.SGD(large.parameters(), lr=0.1)
for x, y in []:
    fit_batch(small, opt_small, x, y)
    fit_batch(large, opt_large, x, y)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def train(x, y, encoder, head, opt):
    loss = nn.functional.cross_entropy(head(encoder(x)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
encoder.requires_grad_(False)
head = nn.Linear(16, 3)
opt = torch.optim.Adam(head.parameters())
for x, y in []:
    train(x, y, encoder, head, opt)
"""
        ),
        # the generator's samples written into a buffer by item, then judged: the buffer holds the generator's
        # graph, so the generator's step applies the gradient of its loss
        Valid(
            """
import torch
import torch.nn as nn

gen = nn.Linear(4, 8)
disc = nn.Linear(8, 1)
opt_g = torch.optim.Adam(gen.parameters())
opt_d = torch.optim.Adam(disc.parameters())
for z, real in []:
    fakes = torch.zeros(4, 8)
    for i in range(4):
        fakes[i] = gen(z[i])
    loss_d = disc(fakes.detach()).mean() - disc(real).mean()
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = -disc(fakes).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
"""
        ),
        # an actor-critic trainer done right: the actor's loss runs through the critic too, the actor's optimizer
        # holds the actor; the target networks are copies, soft-updated from the parameters they read
        Valid(
            """
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent:
    def __init__(self):
        self.policy = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
        self.value = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.policy_target = copy.deepcopy(self.policy)
        self.value_target = copy.deepcopy(self.value)
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=1e-4)
        self.value_opt = torch.optim.Adam(self.value.parameters(), lr=1e-3)

    def update(self, s, a, r, s2):
        y = r + 0.99 * self.value_target(torch.cat([s2, self.policy_target(s2)], 1)).detach()
        value_loss = F.mse_loss(self.value(torch.cat([s, a], 1)), y)
        self.value_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()
        policy_loss = -self.value(torch.cat([s, self.policy(s)], 1)).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()
        for p, tp in zip(self.policy.parameters(), self.policy_target.parameters()):
            tp.data.mul_(0.995).add_(0.005 * p.data)
        for p, tp in zip(self.value.parameters(), self.value_target.parameters()):
            tp.data.mul_(0.995).add_(0.005 * p.data)
"""
        ),
        # near miss: the trainer's backbone is frozen by a loop that writes its parameters
        Valid(
            """
import torch
import torch.nn as nn


class Probe:
    def __init__(self):
        self.backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)
        for p in self.backbone.parameters():
            p.requires_grad_(False)
        self.opt = torch.optim.SGD(self.head.parameters(), lr=0.1)

    def step(self, x, y):
        loss = nn.functional.cross_entropy(self.head(self.backbone(x)), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
"""
        ),
        # near miss: the encoder is handed to a helper that freezes it (its parameters written, not read)
        Valid(
            """
import torch
import torch.nn as nn


def freeze(net):
    for p in net.parameters():
        p.requires_grad = False


def fit(encoder, head, opt, batches):
    for x, y in batches:
        loss = (head(encoder(x)) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


encoder = nn.Linear(4, 8)
head = nn.Linear(8, 1)
freeze(encoder)
opt = torch.optim.Adam(head.parameters())
fit(encoder, head, opt, [])
"""
        ),
        # near miss: the trainer's feature layer is frozen from outside the class
        Valid(
            """
import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.features = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
        self.opt = torch.optim.SGD(self.head.parameters(), lr=0.1)

    def step(self, x, y):
        loss = (self.head(self.features(x)) - y).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


learner = Learner()
learner.features.requires_grad_(False)
"""
        ),
        # one optimizer over a shared encoder and the critic (`itertools.chain`), the actor's over parameter groups
        # holding the actor and the shared encoder
        Valid(
            """
import itertools

import torch
import torch.nn as nn


def learn(shared, actor, critic, batch, actor_opt, critic_opt):
    s, a, r = batch
    h = shared(s)
    critic_loss = (critic(torch.cat([h, a], 1)) - r).pow(2).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_loss = -critic(torch.cat([shared(s).detach(), actor(shared(s))], 1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()


shared = nn.Linear(3, 8)
actor = nn.Linear(8, 1)
critic = nn.Linear(9, 1)
critic_opt = torch.optim.Adam(itertools.chain(shared.parameters(), critic.parameters()), lr=1e-3)
actor_opt = torch.optim.Adam([{"params": actor.parameters()}, {"params": shared.parameters(), "lr": 1e-5}], lr=1e-4)


def run(batches):
    for batch in batches:
        learn(shared, actor, critic, batch, actor_opt, critic_opt)
"""
        ),
        # near miss: another object steps (a library built it from the encoder's parameters)
        Valid(
            """
import torch
import torch.nn as nn
import lookahead


def fit(encoder, head, batches):
    opt = torch.optim.SGD(head.parameters(), lr=0.1)
    wrapper = lookahead.Lookahead(encoder.parameters())
    for x, y in batches:
        loss = (head(encoder(x)) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        wrapper.step()


encoder = nn.Linear(4, 8)
head = nn.Linear(8, 1)
fit(encoder, head, [])
"""
        ),
        # a GAN trainer: the discriminator's loss uses the generator's output detached, the generator is built from
        # a list of layers
        Valid(
            """
import torch
import torch.nn as nn


class GAN:
    def __init__(self):
        layers = [nn.Linear(4, 16), nn.ReLU()]
        layers += [nn.Linear(16, 2)]
        self.G = nn.Sequential(*layers)
        self.D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()

    def step(self, real):
        z = torch.randn(real.size(0), 4)
        fake = self.G(z)
        ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
        d_loss = self.bce(self.D(real), ones) + self.bce(self.D(fake.detach()), zeros)
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        g_loss = self.bce(self.D(fake), ones)
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
"""
        ),
        # a module's own methods run its submodules: the optimizer over `net.parameters()` holds all of them
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 32)
        self.policy_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)

    def policy(self, s):
        return F.softmax(self.policy_head(F.relu(self.trunk(s))), dim=-1)

    def value(self, s):
        return self.value_head(F.relu(self.trunk(s)))


net = TwoHeads()
opt = torch.optim.RMSprop(net.parameters(), lr=7e-4)


def update(rollouts):
    for s, a, returns in rollouts:
        advantage = returns - net.value(s).squeeze(-1)
        log_prob = torch.log(net.policy(s).gather(1, a.unsqueeze(1)).squeeze(1))
        loss = -(log_prob * advantage.detach()).mean() + advantage.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # the loss computed by a function of a module not read (a star import): each model is in an optimizer
        Valid(
            """
import torch
import torch.nn as nn
from seq_losses import *

encoder = nn.GRU(8, 16)
decoder = nn.Linear(16, 5)
enc_opt = torch.optim.Adam(encoder.parameters())
dec_opt = torch.optim.Adam(decoder.parameters())


def train(batches):
    for x, y, mask in batches:
        states, _ = encoder(x)
        loss = masked_nll(decoder(states), y, mask)
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        loss.backward()
        enc_opt.step()
        dec_opt.step()
"""
        ),
        # near miss: the same trainer, each optimizer over its own network
        Valid(
            """
import torch
import torch.nn as nn


class Pair:
    def __init__(self, noise=8):
        self.noise = noise
        self.G = nn.Sequential(nn.Linear(noise, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
        self.D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
        self.bce = nn.BCELoss()
        self.d_opt = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.g_opt = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.history = []

    def to_np(self, x):
        return x.data.cpu().numpy()

    def fit(self, real, rounds=3):
        ones, zeros = torch.ones(len(real), 1), torch.zeros(len(real), 1)
        for _ in range(rounds):
            fake = self.G(torch.randn(len(real), self.noise))
            d_loss = self.bce(self.D(real), ones) + self.bce(self.D(fake), zeros)
            self.D.zero_grad()
            d_loss.backward()
            self.d_opt.step()
            g_loss = self.bce(self.D(self.G(torch.randn(len(real), self.noise))), ones)
            self.G.zero_grad()
            g_loss.backward()
            self.g_opt.step()
            for name, p in self.D.named_parameters():
                self.history.append((name, self.to_np(p).mean(), self.to_np(p.grad).std()))


Pair().fit(torch.rand(32, 4))
"""
        ),
        # near miss: the same agent, each optimizer over its own network
        Valid(
            """
import torch
import torch.nn as nn


class Agent:
    def __init__(self, obs=3, act=1):
        self.actor = nn.Sequential(nn.Linear(obs, 16), nn.ReLU(), nn.Linear(16, act), nn.Tanh())
        self.actor_target = nn.Sequential(nn.Linear(obs, 16), nn.ReLU(), nn.Linear(16, act), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(obs + act, 16), nn.ReLU(), nn.Linear(16, 1))
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def learn(self, states, targets):
        q = self.critic(torch.cat([states, self.actor(states).detach()], 1))
        critic_loss = (q - targets).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(torch.cat([states, self.actor(states)], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        self.soft_update(self.actor, self.actor_target, 0.01)

    def soft_update(self, local, target, tau):
        for t, l in zip(target.parameters(), local.parameters()):
            t.data.copy_(tau * l.data + (1.0 - tau) * t.data)


Agent().learn(torch.randn(8, 3), torch.randn(8, 1))
"""
        ),
        # near miss: the same trainer with each optimizer over its own network
        Valid(
            """
import torch
import torch.nn as nn


class Solver:
    def __init__(self, noise=8, big=False):
        self.noise = noise
        if big:
            self.G = nn.Sequential(nn.Linear(noise, 64), nn.ReLU(), nn.Linear(64, 4), nn.Tanh())
            self.D = nn.Sequential(nn.Linear(4, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
        else:
            self.G = nn.Sequential(nn.Linear(noise, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
            self.D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.g_opt = torch.optim.Adam(self.G.parameters(), lr=1e-4)
        self.d_opt = torch.optim.Adam(self.D.parameters(), lr=1e-4)

    def fit(self, real, rounds=2):
        for _ in range(rounds):
            fake = self.G(torch.randn(len(real), self.noise))
            d_loss = self.D(fake.detach()).mean() - self.D(real).mean()
            self.d_opt.zero_grad()
            d_loss.backward()
            self.d_opt.step()
            g_loss = -self.D(self.G(torch.randn(len(real), self.noise))).mean()
            self.g_opt.zero_grad()
            g_loss.backward()
            self.g_opt.step()


Solver().fit(torch.rand(16, 4))
"""
        ),
        # an algorithm that is itself a module, its context network built after the optimizer, but the
        # whole algorithm's parameters are given to an optimizer outside: the context network is held
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adapter(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in + 2, 32), nn.ReLU(), nn.Linear(32, n_cls))
        self.opt = torch.optim.SGD(self.body.parameters(), lr=0.05)
        self.domain_net = nn.Linear(n_in, 2)

    def learn(self, feats, labels):
        logits = self.body(torch.cat([feats, self.domain_net(feats)], 1))
        loss = F.cross_entropy(logits, labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


learner = Adapter(6, 4)
outer_opt = torch.optim.Adam(learner.parameters(), lr=1e-4)
for feats, labels in loader:
    learner.learn(feats, labels)
"""
        ),
        # the same module class building its optimizer over `self.parameters()`: every module it holds,
        # the one built after it too
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adapter(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in + 2, 32), nn.ReLU(), nn.Linear(32, n_cls))
        self.domain_net = nn.Linear(n_in, 2)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.05)

    def learn(self, feats, labels):
        logits = self.body(torch.cat([feats, self.domain_net(feats)], 1))
        loss = F.cross_entropy(logits, labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


learner = Adapter(6, 4)
for feats, labels in loader:
    learner.learn(feats, labels)
"""
        ),
        # the extra network of a module algorithm is frozen in its constructor, or run under no_grad
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Distill(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.student = nn.Linear(n_in, n_cls)
        self.opt = torch.optim.Adam(self.student.parameters())
        self.teacher = nn.Linear(n_in, n_cls)
        self.teacher.requires_grad_(False)
        self.probe = nn.Linear(n_in, n_cls)

    def learn(self, x, y):
        with torch.no_grad():
            hint = self.probe(x)
        loss = F.cross_entropy(self.student(x) + self.teacher(x) + hint, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


model = Distill(5, 3)
for x, y in loader:
    model.learn(x, y)
"""
        ),
        # a module algorithm whose optimizer another method rebuilds (over the whole module), or that a
        # subclass of the file replaces: what `self.opt` holds at the step is not known
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Head(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.trunk = nn.Linear(n_in, 16)
        self.cls = nn.Linear(16, n_cls)
        self.aux = nn.Linear(16, n_cls)
        self.opt = torch.optim.SGD(self.aux.parameters(), lr=0.1)

    def reset(self):
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def learn(self, x, y):
        loss = F.cross_entropy(self.cls(self.trunk(x)), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


class Tuned(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.trunk = nn.Linear(n_in, 16)
        self.cls = nn.Linear(16, n_cls)
        self.aux = nn.Linear(16, n_cls)
        self.opt = torch.optim.SGD(self.aux.parameters(), lr=0.1)

    def learn(self, x, y):
        loss = F.cross_entropy(self.cls(self.trunk(x)), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


class TunedAll(Tuned):
    def __init__(self, n_in, n_cls):
        super().__init__(n_in, n_cls)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)


head = Head(4, 2)
tuned = TunedAll(4, 2)
for x, y in loader:
    head.learn(x, y)
    tuned.learn(x, y)
"""
        ),
        # the algorithm module handed to a function that is not followed, or copied as a whole
        Valid(
            """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


class Adapter(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.body = nn.Linear(n_in + 2, n_cls)
        self.opt = torch.optim.SGD(self.body.parameters(), lr=0.05)
        self.domain_net = nn.Linear(n_in, 2)

    def learn(self, feats, labels):
        loss = F.cross_entropy(self.body(torch.cat([feats, self.domain_net(feats)], 1)), labels)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


learner = Adapter(6, 4)
prepare(learner)
snapshot = copy.deepcopy(learner)
for feats, labels in loader:
    learner.learn(feats, labels)
"""
        ),
        # a model built again in a later cell, the optimizer built on the second one: the function's loss
        # runs through one of the two, and an optimizer holds that one
        Valid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
print(gen)
gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to("cpu")
opt = torch.optim.Adam(gen.parameters())


def fit(z, target):
    loss = (gen(z) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # a factory that grows an empty container with layers without weights: nothing to train there
        Valid(
            """
import torch
import torch.nn as nn


def make_act():
    block = nn.Sequential()
    block.add_module("act", nn.Tanh())
    block.add_module("drop", nn.Dropout(0.1))
    return block


act = make_act()
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)


def fit(x, y):
    loss = (head(act(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
        ),
        # the loss helper's encoder is frozen by a function it is handed to: not trained on purpose
        Valid(
            """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)

    def forward(self, tokens):
        return self.embed(tokens).mean(0)


def freeze(module):
    for p in module.parameters():
        p.requires_grad_(False)


def pair_loss(encoder, decoder, x, y):
    return nn.functional.cross_entropy(decoder(encoder(x)), y)


def fit(encoder, decoder, batches):
    freeze(encoder)
    opt = torch.optim.Adam(decoder.parameters())
    for x, y in batches:
        opt.zero_grad()
        loss = pair_loss(encoder, decoder, x, y)
        loss.backward()
        opt.step()


encoder = Encoder(50, 16)
decoder = nn.Linear(16, 50)
fit(encoder, decoder, [])
"""
        ),
        # the models handed through two functions, each optimizer built on its own model
        Valid(
            """
import torch
import torch.nn as nn


def train_batch(x, y, encoder, decoder, enc_opt, dec_opt):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    loss = nn.functional.mse_loss(decoder(encoder(x)), y)
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    return loss.item()


def fit(encoder, decoder, batches):
    enc_opt = torch.optim.Adam(encoder.parameters())
    dec_opt = torch.optim.Adam(decoder.parameters())
    for x, y in batches:
        train_batch(x, y, encoder, decoder, enc_opt, dec_opt)


enc = nn.Linear(4, 8)
dec = nn.Linear(8, 4)
fit(enc, dec, [])
"""
        ),
        # near miss: the same WGAN with each optimizer on its own model
        """
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-5)
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
for real in torch.randn(10, 32, 4):
    for p in D.parameters():
        p.requires_grad = True
    opt_d.zero_grad()
    d_loss = D(G(torch.randn(32, 8)).detach()).mean() - D(real).mean()
    d_loss.backward()
    opt_d.step()
    for p in D.parameters():
        p.data.clamp_(-0.01, 0.01)
    opt_g.zero_grad()
    g_loss = -D(G(torch.randn(32, 8))).mean()
    g_loss.backward()
    opt_g.step()
""",
        # the same trainer with each optimizer on its own model: the method's loss reaches the policy
        Valid(
            """
import torch
import torch.nn as nn
from torch.distributions import Normal


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 2)

    def forward(self, s):
        out = self.body(s)
        return out[:, :1], out[:, 1:]


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.value = nn.Linear(3, 1)
        self.policy_opt = torch.optim.Adam(self.policy.parameters())
        self.value_opt = torch.optim.Adam(self.value.parameters())

    def sample(self, s):
        mu, log_std = self.policy(s)
        dist = Normal(mu, log_std.exp())
        a = dist.rsample()
        return a, dist.log_prob(a)

    def update(self, s, ret):
        v = self.value(s)
        value_loss = (v - ret).pow(2).mean()
        self.value_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()
        a, log_prob = self.sample(s)
        policy_loss = -(log_prob * (ret - v.detach())).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()


agent = Agent()
for s, ret in [(torch.randn(4, 3), torch.randn(4, 1))]:
    agent.update(s, ret)
"""
        ),
        # the helper the models pass through may freeze them (it writes `requires_grad`): unknown, silent
        Valid(
            """
import torch
import torch.nn as nn


def init_weights(net, std=0.02):
    for p in net.parameters():
        nn.init.normal_(p, 0.0, std)
        p.requires_grad = std > 0
    return net


def make_generator():
    return init_weights(nn.Sequential(nn.Linear(8, 8), nn.Tanh()))


def make_critic():
    return init_weights(nn.Sequential(nn.Linear(8, 1)))


class Trainer:
    def __init__(self, lr):
        self.gen = make_generator()
        self.critic = make_critic()
        self.opt_gen = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.opt_critic = torch.optim.Adam(self.critic.parameters(), lr=lr)

    def step(self, z, real):
        fake = self.gen(z)
        self.opt_critic.zero_grad()
        loss_c = (self.critic(fake.detach()) - self.critic(real)).mean()
        loss_c.backward()
        self.opt_critic.step()
        self.opt_gen.zero_grad()
        loss_g = -self.critic(fake).mean()
        loss_g.backward()
        self.opt_gen.step()
"""
        ),
        # the same agent with each optimizer on its own model
        Valid(
            """
import gym
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Actor(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, s):
        return torch.tanh(self.fc(s))


class Critic(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc = nn.Linear(n_in, 1)

    def forward(self, s, a):
        return self.fc(torch.cat((s, a), dim=-1))


class DDPGAgent:
    def __init__(self, env, tau=5e-3):
        self.env = env
        self.tau = tau
        self.actor = Actor(3, 1)
        self.actor_target = Actor(3, 1)
        self.critic = Critic(4)
        self.critic_target = Critic(4)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_optimizer = optim.Adam(self.critic.parameters(), lr=1e-3)

    def select_action(self, state):
        return self.actor(torch.FloatTensor(state)).detach().cpu().numpy()

    def update_model(self, state, action, reward, next_state):
        next_value = self.critic_target(next_state, self.actor_target(next_state))
        values = self.critic(state, action)
        critic_loss = F.mse_loss(values, reward + 0.99 * next_value)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -self.critic(state, self.actor(state)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        self._target_soft_update()
        return actor_loss.data, critic_loss.data

    def _target_soft_update(self):
        tau = self.tau
        for t_param, l_param in zip(self.actor_target.parameters(), self.actor.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)
        for t_param, l_param in zip(self.critic_target.parameters(), self.critic.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)

    def step(self, action):
        return self.env.step(action)

    def train(self, frames):
        state, _ = self.env.reset()
        for _ in range(frames):
            action = self.select_action(state)
            next_state, reward, done, _, _ = self.step(action)
            self.update_model(state, action, reward, next_state)
            state = next_state

    def test(self):
        self.env = gym.wrappers.RecordVideo(self.env, video_folder="videos")


env = gym.make("Pendulum-v1")
agent = DDPGAgent(env)
agent.train(100)
agent.test()
"""
        ),
        # the policy's loss reads log-probabilities kept in a list during the episode: it reaches the policy
        Valid(
            """
import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))
value_fn = nn.Linear(4, 1)
opt_policy = torch.optim.Adam(policy.parameters())
opt_value = torch.optim.Adam(value_fn.parameters())


def episode(states, rewards):
    log_probs = []
    for s in states:
        m = Categorical(policy(s))
        a = m.sample()
        log_probs.append(m.log_prob(a))
    for i, (s, g) in enumerate(zip(states, rewards)):
        delta = g - value_fn(s)
        opt_value.zero_grad()
        (delta ** 2).mean().backward(retain_graph=True)
        opt_value.step()
        opt_policy.zero_grad()
        loss = -(log_probs[i] * delta).sum()
        loss.backward()
        opt_policy.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc(self.f(x))


model = Net()
for p in model.f.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
"""
        ),
        # each model stepped by its own optimizer, and the gradients of one logged after each step
        Valid(
            """
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

plain = nn.Linear(3, 1)
decayed = nn.Linear(3, 1)
opt_plain = torch.optim.SGD(plain.parameters(), lr=0.05)
opt_decayed = torch.optim.SGD(decayed.parameters(), lr=0.05, weight_decay=1e-2)
writer = SummaryWriter()
x, y = torch.randn(32, 3), torch.randn(32, 1)
for epoch in range(20):
    loss_plain = (plain(x) - y).pow(2).mean()
    loss_decayed = (decayed(x) - y).pow(2).mean()
    opt_plain.zero_grad()
    opt_decayed.zero_grad()
    loss_plain.backward()
    loss_decayed.backward()
    opt_plain.step()
    opt_decayed.step()
    for name, p in plain.named_parameters():
        writer.add_histogram(name + "/grad", p.grad, epoch)
        writer.add_histogram(name + "/value", p, epoch)
"""
        ),
        # a WGAN critic switched off for the generator's step and on again for its own, stepped by its optimizer
        Valid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_critic = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
opt_gen = torch.optim.RMSprop(gen.parameters(), lr=5e-5)

for step in range(100):
    real = torch.randn(32, 2) + 3.0
    for p in critic.parameters():
        p.requires_grad = True
    critic_loss = critic(gen(torch.randn(32, 8))).mean() - critic(real).mean()
    opt_critic.zero_grad()
    critic_loss.backward()
    opt_critic.step()
    for p in critic.parameters():
        p.data.clamp_(-0.01, 0.01)
    for p in critic.parameters():
        p.requires_grad = False
    gen_loss = -critic(gen(torch.randn(32, 8))).mean()
    opt_gen.zero_grad()
    gen_loss.backward()
    opt_gen.step()
"""
        ),
        # both halves of an autoencoder stepped, and saved together as a list now and then
        Valid(
            """
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(10, 4), nn.Tanh())
decoder = nn.Linear(4, 10)
opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-3)
opt_dec = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(200):
    x = torch.randn(16, 10)
    loss = (decoder(encoder(x)) - x).pow(2).mean()
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss.backward()
    opt_enc.step()
    opt_dec.step()
    if step % 100 == 0:
        torch.save([encoder, decoder], "autoencoder.pt")
"""
        ),
        # a feature network frozen for good; a helper that would switch it on is never called (its `vgg` is its own)
        Valid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
vgg = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))  # a fixed feature network
vgg.load_state_dict(torch.load("features.pt"))
for p in vgg.parameters():
    p.requires_grad = False
opt_gen = torch.optim.Adam(gen.parameters(), lr=1e-3)


def unfreeze(vgg):
    for p in vgg.parameters():
        p.requires_grad = True


for step in range(100):
    z, target = torch.randn(32, 8), torch.randn(32, 4)
    loss = (vgg(gen(z)) - vgg(target)).pow(2).mean()
    opt_gen.zero_grad()
    loss.backward()
    opt_gen.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

shared = nn.Linear(4, 1)
local = nn.Linear(4, 1)
optimizer = torch.optim.SGD(shared.parameters(), lr=0.01)
for _ in range(10):
    local.load_state_dict(shared.state_dict())
    loss = local(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    # the copy's gradients become the shared model's: the step applies this loss's gradient
    for mine, theirs in zip(local.parameters(), shared.parameters()):
        theirs.grad = mine.grad.clone()
    optimizer.step()
"""
        ),
    ]

    INVALID = [
        # a `global` counter in the training step leaves its parameters what every call passes
        Invalid(
            """
import torch
from torch import nn

steps_done = 0


def step(net_g, net_d, optim_g, optim_d, x):
    global steps_done
    steps_done += 1
    loss_d = net_d(x).mean()
    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
    loss_g = -net_d(net_g(x)).mean()
    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()


def main(batches):
    net_g = nn.Linear(4, 4)
    net_d = nn.Linear(4, 1)
    optim_g = torch.optim.Adam(net_d.parameters())
    optim_d = torch.optim.Adam(net_d.parameters())
    for x in batches:
        step(net_g, net_d, optim_g, optim_d, x)
""",
            line=17,
            message="`net_g` is never trained",
        ),
        # the models and their optimizers handed to the training step in lists, unpacked there: the
        # generator's optimizer was built on the discriminator's parameters
        Invalid(
            """
import torch
from torch import nn


def step(nets, optims, x):
    net_g, net_d = nets
    optim_g, optim_d = optims
    loss_d = net_d(x).mean()
    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
    loss_g = -net_d(net_g(x)).mean()
    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()


def main(batches):
    net_g = nn.Linear(4, 4)
    net_d = nn.Linear(4, 1)
    optim_g = torch.optim.Adam(net_d.parameters())
    optim_d = torch.optim.Adam(net_d.parameters())
    for x in batches:
        step([net_g, net_d], [optim_g, optim_d], x)
""",
            line=15,
            message="`net_g` is never trained",
        ),
        # the same update function, called for a pair whose optimizer holds the other model: each call is asked
        # about on its own
        Invalid(
            """
import torch
import torch.nn as nn
from torch import autograd

ON_GPU = torch.cuda.is_available()
Tensor = lambda *a, **k: autograd.Variable(*a, **k).cuda() if ON_GPU else autograd.Variable(*a, **k)


class QNet(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out))

    def forward(self, x):
        return self.body(x)


worker = QNet(6, 3)
manager = QNet(4, 4)
worker_opt = torch.optim.Adam(manager.parameters())
manager_opt = torch.optim.Adam(manager.parameters())


def td_update(net, opt, batch):
    states, actions, targets = batch
    q = net(Tensor(states)).gather(1, Tensor(actions).unsqueeze(1)).squeeze(1)
    loss = (q - Tensor(targets)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


for low, high in []:
    td_update(worker, worker_opt, low)
    td_update(manager, manager_opt, high)
""",
            line=31,
            col=5,
            message="`opt` (here `td_update(worker, worker_opt, low)`) holds the parameters of `manager`, but the loss of the backward pass before this step is computed from `worker` only",
        ),
        # the loss comes from a helper of the file that runs `model`; the optimizer holds `other`
        Invalid(
            """
import torch

model = torch.nn.Linear(4, 1)
other = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(other.parameters(), lr=0.1)


def compute(x, scale=1.0):
    out = model(x)
    return scale * out.mean()


for x in []:
    loss = compute(x)
    loss.backward()
    opt.step()
""",
            message="`opt` holds the parameters of `other`, but the loss of the backward pass before this step is computed from `model` only",
        ),
        # across helpers: the loss helper runs the head on the features helper's output
        Invalid(
            """
import torch
import torch.nn as nn

enc = nn.Linear(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)


def features(x):
    return torch.relu(enc(x))


def compute_loss(x, y):
    pred = head(features(x))
    return (pred - y).pow(2).mean()


def train(loader):
    for x, y in loader:
        opt.zero_grad()
        loss = compute_loss(x, y)
        loss.backward()
        opt.step()
""",
            message="`enc` is never trained",
        ),
        # a model the loss runs through that no optimizer holds (the optimizer built on the head only)
        Invalid(
            """
import torch
import torch.nn as nn

enc = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)


def train(loader):
    for x, y in loader:
        opt.zero_grad()
        loss = (head(enc(x)) - y).pow(2).mean()
        loss.backward()
        opt.step()
""",
            line=14,
            col=9,
            message="`enc` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `opt`)",
        ),
        # a project model class, switched to eval mode for validation; the step through a scaler
        Invalid(
            """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return self.conv(x).mean((2, 3))


encoder = Encoder().to("cpu")
classifier = nn.Linear(8, 10)
optimizer = torch.optim.AdamW(classifier.parameters(), lr=1e-3)
scaler = torch.cuda.amp.GradScaler()

for epoch in range(3):
    encoder.train()
    for images, labels in []:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(classifier(encoder(images)), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    encoder.eval()
""",
            message="`encoder` is never trained",
        ),
        # two models behind one loss
        Invalid(
            """
import torch

embed = torch.nn.Embedding(100, 16)
rnn = torch.nn.GRU(16, 16, batch_first=True)
out = torch.nn.Linear(16, 100)
opt = torch.optim.Adam(out.parameters())


def epoch(batches):
    for tokens, targets in batches:
        hidden = rnn(embed(tokens))[0]
        logits = out(hidden)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad()
""",
            message="`embed`, `rnn` are never trained",
        ),
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
        # Lightning: a subclass runs an averaged copy in `forward`, so the inherited training step's loss
        # never reaches the model the optimizer holds
        Invalid(
            """
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch.optim.swa_utils import AveragedModel


class Classifier(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=1)

    def training_step(self, batch, batch_idx):
        images, labels = batch
        loss = F.nll_loss(self(images), labels)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class AveragedClassifier(Classifier):
    def __init__(self, net):
        super().__init__(net)
        self.averaged = AveragedModel(self.net)

    def forward(self, x):
        return F.log_softmax(self.averaged(x), dim=1)

    def on_train_epoch_end(self):
        self.averaged.update_parameters(self.net)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.net.parameters(), lr=0.01, momentum=0.9)
        return {"optimizer": opt}
""",
            line=38,
            col=15,
            message="this optimizer holds the parameters of `self.net`, but the loss `AveragedClassifier.training_step` returns is computed from `self.averaged` only",
        ),
        # Lightning: a deep copy called directly in the training step
        Invalid(
            """
import copy
import torch
import lightning as L


class Task(L.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.ema = copy.deepcopy(backbone)
        self.criterion = torch.nn.MSELoss()

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.criterion(self.ema(x), y)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.backbone.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
        return [optimizer], [scheduler]
""",
        ),
        # the models moved under `if torch.cuda.is_available():`, wrapped, and initialised through `apply`
        Invalid(
            """
import torch
from torch import nn


def init_normal(layer):
    if isinstance(layer, nn.Conv2d):
        nn.init.normal_(layer.weight, 0.0, 0.02)


netG = nn.Sequential(nn.ConvTranspose2d(8, 3, 4), nn.Tanh())
netD = nn.Sequential(nn.Conv2d(3, 1, 4), nn.Flatten())
netG.apply(init_normal)
netD.apply(init_normal)
if torch.cuda.is_available():
    netG = netG.cuda()
    netD = nn.DataParallel(netD.cuda())
optD = torch.optim.Adam(netG.parameters(), lr=2e-4)


def fit(images):
    for real in images:
        noise = torch.randn(real.size(0), 8, 1, 1)
        lossD = netD(real).mean() - netD(netG(noise).detach()).mean()
        optD.zero_grad()
        lossD.backward()
        optD.step()
""",
            line=27,
            col=9,
            message="`optD` holds the parameters of `netG`, but the loss of the backward pass before this step is computed from `netD` only",
        ),
        # a trainer class: its optimizers built by a method the constructor calls, the step in a method
        # that the training loop of the class calls
        Invalid(
            """
import torch
import torch.nn as nn


class GanTrainer:
    def __init__(self, generator, device="cpu"):
        self.gen = generator.to(device)
        self.disc = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
        self.setup_optimizers()

    def setup_optimizers(self):
        self.gen_opt = torch.optim.Adam(self.disc.parameters(), lr=1e-4)
        self.disc_opt = torch.optim.Adam(self.gen.parameters(), lr=1e-4)

    def disc_step(self, real):
        fake = self.gen(torch.randn(real.shape[0], 4)).detach()
        loss = nn.functional.softplus(self.disc(fake)).mean() + nn.functional.softplus(-self.disc(real)).mean()
        self.disc_opt.zero_grad()
        loss.backward()
        self.disc_opt.step()

    def run(self, batches):
        for real in batches:
            self.disc_step(real)
""",
            message="`self.disc_opt` holds the parameters of `self.gen`, but the loss of the backward pass before this step is computed from `self.disc` only",
        ),
        # models in a dict keyed by literal strings, the optimizer over the wrong entry
        Invalid(
            """
import torch
from torch import nn

nets = {"enc": nn.Linear(8, 4), "dec": nn.Linear(4, 8), "probe": nn.Linear(4, 2)}
opt = torch.optim.Adam(list(nets["probe"].parameters()))


def train(batches):
    for x in batches:
        loss = (nets["dec"](nets["enc"](x)) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            message="`opt` holds the parameters of `nets[\"probe\"]`",
        ),
        # both optimizers built on the generator: the critic is never trained, reported once; the models
        # rebound to their moves, the device chosen by an `if`, targets and batches moved to it
        Invalid(
            """
import torch
from torch import nn

if torch.cuda.is_available():
    device = torch.device("cuda")
else:
    device = torch.device("cpu")
critic = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
maker = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 6))
critic = critic.to(device)
maker = maker.to(device)
loss_fn = nn.BCEWithLogitsLoss()
critic_opt = torch.optim.Adam(maker.parameters(), lr=1e-4)
maker_opt = torch.optim.Adam(maker.parameters(), lr=1e-4)
torch.save(critic.state_dict(), "critic.pt")

for epoch in range(2):
    for step, batch in enumerate([]):
        real = batch[0].to(device)
        ones = torch.ones(real.size(0), 1).to(device)
        zeros = torch.zeros(real.size(0), 1).to(device)
        fake = maker(torch.randn(real.size(0), 3, device=device))
        critic_loss = loss_fn(critic(real), ones) + loss_fn(critic(fake), zeros)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        maker_loss = loss_fn(critic(maker(torch.randn(real.size(0), 3, device=device))), ones)
        maker_opt.zero_grad()
        maker_loss.backward()
        maker_opt.step()
""",
            line=26,
            col=9,
            message="`critic` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters",
        ),
        # a tensor type chosen by an `if` builds the targets; both optimizers hold the discriminator, so
        # the generator is never trained
        Invalid(
            """
import numpy as np
import torch
from torch import nn

use_cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor
gen = nn.Sequential(nn.Linear(3, 6), nn.Tanh())
disc = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
if use_cuda:
    gen.cuda()
    disc.cuda()
bce = nn.BCELoss()
opt_gen = torch.optim.Adam(disc.parameters())
opt_disc = torch.optim.Adam(disc.parameters())

for real in []:
    ones = Tensor(real.size(0), 1).fill_(1.0)
    noise = Tensor(np.random.normal(0, 1, (real.size(0), 3)))
    opt_gen.zero_grad()
    g_loss = bce(disc(gen(noise)), ones)
    g_loss.backward()
    opt_gen.step()
""",
            message="`gen` is never trained",
        ),
        # the GAN's two networks are attributes of one model object; the generator's optimizer was given
        # the discriminator's parameters, so the generator (run through a method of the class) is never trained
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.disc = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())

    def generate(self, z):
        return self.gen(z)

    def judge(self, img):
        return self.disc(img).view(-1)


pair = Pair()
pair = pair.to("cpu")
opt_g = torch.optim.Adam(pair.disc.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(pair.disc.parameters(), lr=1e-3)

for real in []:
    fake = pair.generate(torch.randn(4, 8))
    loss_g = F.binary_cross_entropy(pair.judge(fake), torch.ones(4))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    loss_d = F.binary_cross_entropy(pair.judge(real), torch.ones(4)) + F.binary_cross_entropy(
        pair.judge(fake.detach()), torch.zeros(4))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
""",
            message="`pair.gen` is never trained",
        ),
        # the same mistake with the modules called directly on the object
        Invalid(
            """
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)


pair = Pair()
opt = torch.optim.SGD(pair.dec.parameters(), lr=0.1)
for x in []:
    loss = (pair.dec(pair.enc(x)) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            message="`pair.enc` is never trained",
        ),
        # two networks built by one tuple assignment, the generator moved under `if`: its optimizer holds the
        # discriminator
        Invalid(
            """
import torch
import torch.nn as nn

gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
if torch.cuda.is_available():
    gen = gen.cuda()
    disc = disc.cuda()
opt_g = torch.optim.Adam(disc.parameters())
opt_d = torch.optim.Adam(disc.parameters())
h, w = int(4 / 2), int(4 / 2)
for real in []:
    fake = gen(torch.randn(h, w))
    loss_g = -disc(fake).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
""",
            message="`gen` is never trained",
        ),
        # an ignite step function (called by `Engine` with the engine and a batch) in the function that builds
        # the networks; the generator's optimizer was given the discriminator's parameters
        Invalid(
            """
import torch
import torch.nn as nn
from ignite.engine import Engine


def main(loader, device, z_dim=8):
    netG = nn.Sequential(nn.Linear(z_dim, 16), nn.Tanh()).to(device)
    netD = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid()).to(device)
    bce = nn.BCELoss()
    optimizerG = torch.optim.Adam(netD.parameters(), lr=2e-4)
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)

    def get_noise(n):
        return torch.randn(n, z_dim, device=device)

    def step(engine, batch):
        real, _ = batch
        real = real.to(device)
        netD.zero_grad()
        fake = netG(get_noise(real.size(0)))
        errD = bce(netD(real), torch.ones(real.size(0), 1, device=device)) + bce(
            netD(fake.detach()), torch.zeros(real.size(0), 1, device=device))
        errD.backward()
        optimizerD.step()
        netG.zero_grad()
        errG = bce(netD(fake), torch.ones(real.size(0), 1, device=device))
        errG.backward()
        optimizerG.step()
        return errG.item()

    trainer = Engine(step)
    trainer.run(loader, max_epochs=1)
""",
            message="`netG` is never trained",
        ),
        # two networks trained side by side on data rebound by a tuple assignment; the first optimizer was given
        # the second network's parameters
        Invalid(
            """
import torch

x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = x + 0.3 * torch.randn(20, 1)
x, y = x.float(), y.float()
plain = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
dropped = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.Dropout(0.5), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt_plain = torch.optim.Adam(dropped.parameters(), lr=0.01)
opt_drop = torch.optim.Adam(dropped.parameters(), lr=0.01)
loss_func = torch.nn.MSELoss()
for t in range(100):
    loss_plain = loss_func(plain(x), y)
    loss_drop = loss_func(dropped(x), y)
    opt_plain.zero_grad()
    opt_drop.zero_grad()
    loss_plain.backward()
    loss_drop.backward()
    opt_plain.step()
    opt_drop.step()
""",
            message="`plain` is never trained",
        ),
        # a model class built on a project base class that only initialises weights in place (`.data.normal_`):
        # the encoder the loss runs through is held by no optimizer
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def weights_init(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(0.0, 0.02)
                m.bias.data.fill_(0)


class Encoder(Net):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.weights_init()

    def forward(self, x):
        return self.fc(x)


enc = Encoder()
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for x, y in []:
    loss = (head(enc(x)) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            message="`enc` is never trained",
        ),
        # reading a model neither freezes nor trains it: a summary of the generator (torchsummary), the networks
        # saved by an ignite checkpoint handler in a dict, gradients clipped; the generator's optimizer holds
        # the discriminator
        Invalid(
            """
import torch
import torch.nn as nn
from ignite.engine import Engine, Events
from ignite.handlers import ModelCheckpoint
from torchsummary import summary


def run(loader, out_dir):
    net_g = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
    net_d = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())
    summary(net_g, (8,), device="cpu")
    bce = nn.BCELoss()
    opt_g = torch.optim.Adam(net_d.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4)

    def update(engine, batch):
        real, _ = batch
        fake = net_g(torch.randn(real.size(0), 8))
        net_d.zero_grad()
        loss_d = bce(net_d(real), torch.ones(real.size(0), 1)) + bce(net_d(fake.detach()), torch.zeros(real.size(0), 1))
        loss_d.backward()
        opt_d.step()
        net_g.zero_grad()
        loss_g = bce(net_d(fake), torch.ones(real.size(0), 1))
        loss_g.backward()
        torch.nn.utils.clip_grad_norm_(net_g.parameters(), 5.0)
        opt_g.step()
        return loss_g.item()

    trainer = Engine(update)
    saver = ModelCheckpoint(out_dir, "gan", n_saved=2)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, saver, {"net_g": net_g, "net_d": net_d})
    trainer.run(loader, max_epochs=1)
""",
            message="`net_g` is never trained",
        ),
        # the same with the networks held by one model object, summarised and saved with `torch.save`
        Invalid(
            """
import torch
import torch.nn as nn
from torchinfo import summary


class Gan(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.discriminator = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())


gan = Gan()
summary(gan.generator, input_size=(2, 4))
torch.save(gan.generator, "g.pt")
opt_gen = torch.optim.Adam(gan.discriminator.parameters())
opt_dis = torch.optim.Adam(gan.discriminator.parameters())
for real in []:
    fake = gan.generator(torch.randn(2, 4))
    loss_gen = -gan.discriminator(fake).mean()
    opt_gen.zero_grad()
    loss_gen.backward()
    opt_gen.step()
""",
            message="`gan.generator` is never trained",
        ),
        # networks and their optimizers in two lists walked together by `zip`: the first optimizer was given
        # the second network's parameters
        Invalid(
            """
import torch
import torch.nn.functional as F

net_a = torch.nn.Linear(1, 1)
net_b = torch.nn.Linear(1, 1)
nets = [net_a, net_b]
opt_a = torch.optim.SGD(net_b.parameters(), lr=0.1)
opt_b = torch.optim.SGD(net_b.parameters(), lr=0.1, momentum=0.9)
optimizers = [opt_a, opt_b]
history = [[], []]
for x, y in []:
    for net, opt, h in zip(nets, optimizers, history):
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        h.append(loss.item())
""",
            message="`opt` (here `opt_a`) holds the parameters of `net_b`, but the loss of the backward pass "
                    "before this step is computed from `net_a` only",
        ),
        # the same through `enumerate(zip(...))` over tuples, the optimizers built in the tuple
        Invalid(
            """
import torch

encoders = (torch.nn.Linear(4, 2), torch.nn.Linear(4, 2))
optims = (torch.optim.Adam(encoders[1].parameters()), torch.optim.Adam(encoders[1].parameters()))
for x in []:
    for k, (enc, optim) in enumerate(zip(encoders, optims)):
        optim.zero_grad()
        enc(x).pow(2).sum().backward()
        optim.step()
""",
            message="`optim` (here `optims[0]`) holds the parameters of `encoders[1]`, but the loss of the "
                    "backward pass before this step is computed from `encoders[0]` only",
        ),
        # a LightningModule stepping its optimizers by hand: the generator's optimizer was given the
        # discriminator's parameters, so the generator (run through `self(z)`, its output kept on `self`) is
        # held by no optimizer `configure_optimizers` returns
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class Gan(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.disc = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, z):
        return self.gen(z)

    def bce(self, pred, target):
        return F.binary_cross_entropy(pred, target)

    def training_step(self, batch, batch_idx):
        real = batch
        opt_g, opt_d = self.optimizers()
        self.fake = self(torch.randn(real.size(0), 8))
        self.toggle_optimizer(opt_g)
        loss_g = self.bce(self.disc(self.fake), torch.ones(real.size(0), 1))
        self.manual_backward(loss_g)
        opt_g.step()
        opt_g.zero_grad()
        self.untoggle_optimizer(opt_g)
        loss_d = self.bce(self.disc(real), torch.ones(real.size(0), 1)) + self.bce(
            self.disc(self.fake.detach()), torch.zeros(real.size(0), 1))
        self.manual_backward(loss_d)
        opt_d.step()
        opt_d.zero_grad()

    def configure_optimizers(self):
        return [torch.optim.Adam(self.disc.parameters()), torch.optim.Adam(self.disc.parameters())], []
""",
            message="`self.gen` is never trained: the loss given to `manual_backward` here is computed from it",
        ),
        # the same by hand, the discriminator's optimizer given the generator's parameters: its step applies
        # no gradient of the discriminator's loss
        Invalid(
            """
import torch
import torch.nn as nn
import lightning.pytorch as pl


class Gan(pl.LightningModule):
    def __init__(self, z_dim=8):
        super().__init__()
        self.automatic_optimization = False
        self.z_dim = z_dim
        self.generator = nn.Linear(z_dim, 16)
        self.critic = nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        g_opt, c_opt = self.optimizers()
        fake = self.generator(torch.randn(batch.size(0), self.z_dim))
        c_loss = self.critic(fake.detach()).mean() - self.critic(batch).mean()
        self.manual_backward(c_loss)
        c_opt.step()
        c_opt.zero_grad()
        g_loss = -self.critic(fake).mean()
        self.manual_backward(g_loss)
        g_opt.step()
        g_opt.zero_grad()

    def configure_optimizers(self):
        g_opt = torch.optim.RMSprop(self.generator.parameters(), lr=5e-5)
        c_opt = torch.optim.RMSprop(self.generator.parameters(), lr=5e-5)
        return g_opt, c_opt
""",
            message="`c_opt` holds the parameters of `self.generator`, but the loss of the backward pass before "
                    "this step is computed from `self.critic` only",
        ),
        # a WGAN whose critic's weights are clipped in a loop over its parameters (that touches the critic, not
        # the generator); the generator's optimizer was given the critic's parameters
        Invalid(
            """
import torch
import torch.nn as nn


class Wgan(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.critic = nn.Linear(8, 1)


wgan = Wgan()
opt_g = torch.optim.RMSprop(wgan.critic.parameters(), lr=5e-5)
opt_c = torch.optim.RMSprop(wgan.critic.parameters(), lr=5e-5)
for real in []:
    fake = wgan.gen(torch.randn(2, 4))
    loss_g = -wgan.critic(fake).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    loss_c = wgan.critic(fake.detach()).mean() - wgan.critic(real).mean()
    opt_c.zero_grad()
    loss_c.backward()
    opt_c.step()
    for p in wgan.critic.parameters():
        p.data.clamp_(-0.01, 0.01)
""",
            message="`wgan.gen` is never trained",
        ),
        # real samples drawn by a helper that builds them with numpy (a list comprehension inside): numpy
        # computes off the graph, so the helper's values reach no model; the discriminator's optimizer was given
        # the generator's parameters
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn

POINTS = np.vstack([np.linspace(-1, 1, 8) for _ in range(16)])


def real_samples():
    scale = np.random.uniform(1, 2, size=16)[:, np.newaxis]
    return torch.from_numpy(scale * POINTS).float()


gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
disc = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())
opt_d = torch.optim.Adam(gen.parameters(), lr=1e-4)
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4)
for step in range(100):
    fake = gen(torch.randn(16, 4))
    p_real = disc(real_samples())
    p_fake = disc(fake)
    loss_d = -torch.mean(torch.log(p_real) + torch.log(1.0 - p_fake))
    loss_g = torch.mean(torch.log(1.0 - p_fake))
    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
""",
            message="`disc` is never trained",
        ),
        # the models and optimizers are parameters of a training function the script calls once with its
        # module-level networks; the loss is summed over a loop (`loss += ...`) and the decoder's state is
        # carried by the loop; the encoder's optimizer was given the decoder's parameters
        Invalid(
            """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden)

    def init_state(self):
        return torch.zeros(1, 1, self.hidden)

    def forward(self, tokens, state):
        return self.rnn(self.embed(tokens).view(len(tokens), 1, -1), state)


class Decoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, token, state):
        output, state = self.rnn(self.embed(token).view(1, 1, -1), state)
        return self.out(output[0]), state


def train(source, target, encoder, decoder, enc_opt, dec_opt, criterion):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    loss = 0
    _, state = encoder(source, encoder.init_state())
    token = torch.zeros(1, dtype=torch.long)
    for t in range(len(target)):
        logits, state = decoder(token, state)
        loss += criterion(logits, target[t].view(1))
        token = target[t]
    loss.backward()
    torch.nn.utils.clip_grad_norm_(encoder.parameters(), 5.0)
    enc_opt.step()
    dec_opt.step()
    return loss.item() / len(target)


encoder = Encoder(100, 32)
decoder = Decoder(100, 32)
encoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for source, target in []:
    print(train(source, target, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion))
""",
            message="`encoder` is never trained",
        ),
        # a step function called with one network and the other network's optimizer
        Invalid(
            """
import torch
import torch.nn.functional as F


def fit_batch(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


student = torch.nn.Linear(4, 1)
baseline = torch.nn.Linear(4, 1)
opt_student = torch.optim.Adam(baseline.parameters())
for x, y in []:
    fit_batch(student, opt_student, x, y)
""",
            message="`optimizer` holds the parameters of `baseline`, but the loss of the backward pass before this "
                    "step is computed from `model` only",
        ),
        # the decoder's outputs written step by step into a buffer the loss reads: the encoder's state feeds
        # the decoder, so backward reaches the encoder, whose optimizer was given the output layer instead
        Invalid(
            """
import torch
import torch.nn as nn

enc = nn.GRU(4, 8)
dec = nn.GRUCell(8, 8)
out_layer = nn.Linear(8, 3)
opt_enc = torch.optim.Adam(out_layer.parameters())
opt_dec = torch.optim.Adam(list(dec.parameters()) + list(out_layer.parameters()))
for x, y in []:
    _, h = enc(x)
    h = h[0]
    outputs = torch.zeros(5, x.size(1), 3)
    for t in range(5):
        h = dec(h, h)
        outputs[t] = out_layer(h)
    loss = nn.functional.cross_entropy(outputs.view(-1, 3), y.view(-1))
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss.backward()
    opt_enc.step()
    opt_dec.step()
""",
            message="`enc` is never trained",
        ),
        # a trainer class: the actor's optimizer given the critic's parameters; the actor's loss runs through both,
        # so the critic is stepped twice and the actor never (targets: a copy, a soft update reading parameters)
        Invalid(
            """
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 1)

    def forward(self, s):
        return torch.tanh(self.body(s))


class Value(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 1)

    def forward(self, s, a):
        return self.body(torch.cat([s, a], 1))


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.value = Value()
        self.value_target = copy.deepcopy(self.value)
        self.policy_opt = torch.optim.Adam(self.value.parameters(), lr=1e-4)
        self.value_opt = torch.optim.Adam(self.value.parameters(), lr=1e-3)

    def update(self, s, a, r, s2):
        with torch.no_grad():
            y = r + 0.99 * self.value_target(s2, self.policy(s2))
        value_loss = F.mse_loss(self.value(s, a), y)
        self.value_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()

        policy_loss = -self.value(s, self.policy(s)).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()
        for p, tp in zip(self.value.parameters(), self.value_target.parameters()):
            tp.data.copy_(0.005 * p.data + 0.995 * tp.data)
""",
            line=45,
            col=9,
            message="`self.policy` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `self.policy_opt`)",
        ),
        # models and optimizers passed to a training function; the soft update of the targets only reads the actor
        Invalid(
            """
import torch
import torch.nn as nn


def blend(src, dst, tau=0.01):
    for a, b in zip(src.parameters(), dst.parameters()):
        b.data.mul_(1 - tau).add_(a.data * tau)


def learn(actor, actor_target, critic, critic_target, batch, actor_opt, critic_opt):
    s, a, r, s2 = batch
    y = (r + 0.9 * critic_target(torch.cat([s2, actor_target(s2)], 1))).detach()
    q_loss = (critic(torch.cat([s, a], 1)) - y).pow(2).mean()
    critic_opt.zero_grad()
    q_loss.backward()
    critic_opt.step()
    pi_loss = -critic(torch.cat([s, actor(s)], 1)).mean()
    actor_opt.zero_grad()
    pi_loss.backward()
    actor_opt.step()


actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
actor_target = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
critic_target = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
actor_target.load_state_dict(actor.state_dict())
critic_target.load_state_dict(critic.state_dict())
actor_opt = torch.optim.Adam(critic.parameters(), lr=1e-4)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)


def run(batches):
    for batch in batches:
        learn(actor, actor_target, critic, critic_target, batch, actor_opt, critic_opt)
        blend(actor, actor_target)
        blend(critic, critic_target)
""",
            line=20,
            message="`actor` is never trained",
        ),
        # the encoder built with a vocabulary size read from data the program loads (a setting, not a module it holds)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, hidden)
        self.rnn = nn.GRU(hidden, hidden)

    def forward(self, tokens):
        return self.rnn(self.embed(tokens))


class Decoder(nn.Module):
    def __init__(self, hidden, vocab_size):
        super().__init__()
        self.rnn = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, x, h):
        y, h = self.rnn(x, h)
        return self.out(y), h


def train_pair(src, tgt, encoder, decoder, enc_opt, dec_opt):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    states, h = encoder(src)
    logits, _ = decoder(states, h)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), tgt.view(-1))
    loss.backward()
    enc_opt.step()
    dec_opt.step()


def main(src_vocab, tgt_vocab, pairs):
    encoder = Encoder(src_vocab.size, 32)
    decoder = Decoder(32, tgt_vocab.size)
    enc_opt = torch.optim.SGD(decoder.parameters(), lr=0.1)
    dec_opt = torch.optim.SGD(decoder.parameters(), lr=0.1)
    for src, tgt in pairs:
        train_pair(src, tgt, encoder, decoder, enc_opt, dec_opt)
""",
            message="`encoder` is never trained",
        ),
        # the same with the optimizer given another module's parameters: the message names the submodules
        # the module's methods run
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 32)
        self.policy_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)

    def policy(self, s):
        return F.softmax(self.policy_head(F.relu(self.trunk(s))), dim=-1)

    def value(self, s):
        return self.value_head(F.relu(self.trunk(s)))


net = TwoHeads()
other = nn.Linear(4, 1)
opt = torch.optim.RMSprop(other.parameters(), lr=7e-4)


def update(rollouts):
    for s, a, returns in rollouts:
        advantage = returns - net.value(s).squeeze(-1)
        log_prob = torch.log(net.policy(s).gather(1, a.unsqueeze(1)).squeeze(1))
        loss = -(log_prob * advantage.detach()).mean() + advantage.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
            line=33,
            message="`opt` holds the parameters of `other`, but the loss of the backward pass before this step is computed from `net.policy_head`, `net.trunk`, `net.value_head` only",
        ),
        # the loss computed by a function of a module not read (a star import): the encoder's output is one of
        # its arguments, so the encoder is on the graph whatever the function does with the rest
        Invalid(
            """
import torch
import torch.nn as nn
from seq_losses import *

encoder = nn.GRU(8, 16)
decoder = nn.Linear(16, 5)
enc_opt = torch.optim.Adam(decoder.parameters())
dec_opt = torch.optim.Adam(decoder.parameters())


def train(batches):
    for x, y, mask in batches:
        states, _ = encoder(x)
        loss = masked_nll(decoder(states), y, mask)
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        loss.backward()
        enc_opt.step()
        dec_opt.step()
""",
            line=18,
            message="`encoder` is never trained",
        ),
        # a GAN trainer whose generator's optimizer was given the discriminator's parameters; the generator is
        # built from a list of layers its constructor fills
        Invalid(
            """
import torch
import torch.nn as nn


class GAN:
    def __init__(self):
        layers = [nn.Linear(4, 16), nn.ReLU()]
        layers += [nn.Linear(16, 2)]
        self.G = nn.Sequential(*layers)
        self.D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()

    def step(self, real):
        z = torch.randn(real.size(0), 4)
        fake = self.G(z)
        ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
        d_loss = self.bce(self.D(real), ones) + self.bce(self.D(fake.detach()), zeros)
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        g_loss = self.bce(self.D(fake), ones)
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
""",
            line=26,
            col=9,
            message="`self.G` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `self.opt_g`)",
        ),
        # a GAN trainer whose discriminator optimizer was given the generator's parameters: the loss runs
        # through both, `self.D` is in no optimizer (its parameters are only read, for a log, through the
        # trainer's own `to_np`)
        Invalid(
            """
import torch
import torch.nn as nn


class Pair:
    def __init__(self, noise=8):
        self.noise = noise
        self.G = nn.Sequential(nn.Linear(noise, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
        self.D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
        self.bce = nn.BCELoss()
        self.d_opt = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.g_opt = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.history = []

    def to_np(self, x):
        return x.data.cpu().numpy()

    def fit(self, real, rounds=3):
        ones, zeros = torch.ones(len(real), 1), torch.zeros(len(real), 1)
        for _ in range(rounds):
            fake = self.G(torch.randn(len(real), self.noise))
            d_loss = self.bce(self.D(real), ones) + self.bce(self.D(fake), zeros)
            self.D.zero_grad()
            d_loss.backward()
            self.d_opt.step()
            g_loss = self.bce(self.D(self.G(torch.randn(len(real), self.noise))), ones)
            self.G.zero_grad()
            g_loss.backward()
            self.g_opt.step()
            for name, p in self.D.named_parameters():
                self.history.append((name, self.to_np(p).mean(), self.to_np(p.grad).std()))


Pair().fit(torch.rand(32, 4))
""",
            message="`self.D` is never trained",
        ),
        # an actor-critic agent whose actor optimizer was given the critic's parameters: the actor's loss
        # runs through both, the actor is in no optimizer (its parameters only read by the agent's own
        # soft-update method)
        Invalid(
            """
import torch
import torch.nn as nn


class Agent:
    def __init__(self, obs=3, act=1):
        self.actor = nn.Sequential(nn.Linear(obs, 16), nn.ReLU(), nn.Linear(16, act), nn.Tanh())
        self.actor_target = nn.Sequential(nn.Linear(obs, 16), nn.ReLU(), nn.Linear(16, act), nn.Tanh())
        self.critic = nn.Sequential(nn.Linear(obs + act, 16), nn.ReLU(), nn.Linear(16, 1))
        self.actor_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def learn(self, states, targets):
        q = self.critic(torch.cat([states, self.actor(states).detach()], 1))
        critic_loss = (q - targets).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        actor_loss = -self.critic(torch.cat([states, self.actor(states)], 1)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        self.soft_update(self.actor, self.actor_target, 0.01)

    def soft_update(self, local, target, tau):
        for t, l in zip(target.parameters(), local.parameters()):
            t.data.copy_(tau * l.data + (1.0 - tau) * t.data)


Agent().learn(torch.randn(8, 3), torch.randn(8, 1))
""",
            message="`self.actor` is never trained",
        ),
        # the networks are built on each path of an `if` (their sizes picked by a setting): either way the
        # trainer holds one generator, which no optimizer holds once the generator's was given `self.D`
        Invalid(
            """
import torch
import torch.nn as nn


class Solver:
    def __init__(self, noise=8, big=False):
        self.noise = noise
        if big:
            self.G = nn.Sequential(nn.Linear(noise, 64), nn.ReLU(), nn.Linear(64, 4), nn.Tanh())
            self.D = nn.Sequential(nn.Linear(4, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
        else:
            self.G = nn.Sequential(nn.Linear(noise, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
            self.D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.g_opt = torch.optim.Adam(self.D.parameters(), lr=1e-4)
        self.d_opt = torch.optim.Adam(self.D.parameters(), lr=1e-4)

    def fit(self, real, rounds=2):
        for _ in range(rounds):
            fake = self.G(torch.randn(len(real), self.noise))
            d_loss = self.D(fake.detach()).mean() - self.D(real).mean()
            self.d_opt.zero_grad()
            d_loss.backward()
            self.d_opt.step()
            g_loss = -self.D(self.G(torch.randn(len(real), self.noise))).mean()
            self.g_opt.zero_grad()
            g_loss.backward()
            self.g_opt.step()


Solver().fit(torch.rand(16, 4))
""",
            message="`self.G` is never trained",
        ),
        # both networks come from a factory of the file; the generator's optimizer was given the critic's parameters
        Invalid(
            """
import torch
import torch.nn as nn


def make_net(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, n_out))


gen = make_net(4, 8)
disc = make_net(8, 1)
g_opt = torch.optim.Adam(disc.parameters())
d_opt = torch.optim.Adam(disc.parameters())
for z, real in batches:
    g_loss = -disc(gen(z)).mean()
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    d_loss = disc(gen(z).detach()).mean() - disc(real).mean()
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
""",
            message="`gen` is never trained",
        ),
        # an algorithm that is itself an `nn.Module`: the context network it builds after its optimizer
        # runs in the loss of its update, and no optimizer holds it
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class ContextAlgo(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.classifier = nn.Sequential(nn.Linear(n_in + 1, 64), nn.ReLU(), nn.Linear(64, n_cls))
        self.optimizer = torch.optim.Adam(self.classifier.parameters(), lr=3e-4)
        self.context_net = nn.Sequential(nn.Linear(n_in, 8), nn.ReLU(), nn.Linear(8, 1))

    def update(self, x, y):
        ctx_feat = self.context_net(x)
        logits = self.classifier(torch.cat([x, ctx_feat], dim=1))
        loss = F.cross_entropy(logits, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}


algorithm = ContextAlgo(10, 5)
for x, y in batches:
    algorithm.update(x, y)
""",
            line=19,
            col=9,
            message="`self.context_net` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `self.optimizer`)",
        ),
        # a module algorithm whose optimizer was given the adversarial head, while its update's loss runs
        # the featurizer and the classifier only
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Transferable(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.featurizer = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU())
        self.classifier = nn.Linear(32, n_cls)
        self.adv_classifier = nn.Linear(32, n_cls)
        self.optimizer = torch.optim.SGD(self.adv_classifier.parameters(), lr=0.01)

    def update(self, x, y):
        loss = F.nll_loss(F.log_softmax(self.classifier(self.featurizer(x)), dim=1), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


net = Transferable(12, 3)
for x, y in batches:
    net.update(x, y)
""",
            line=19,
            col=9,
            message="`self.optimizer` holds the parameters of `self.adv_classifier`, but the loss of the backward pass before this step is computed from `self.classifier`, `self.featurizer` only",
        ),
        # the same with the optimizer picked by a setting in the constructor: the construction of one path
        # holds only the head the loss never runs (the other path is right)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Transferable(nn.Module):
    def __init__(self, n_in, n_cls, gda=False):
        super().__init__()
        self.featurizer = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU())
        self.classifier = nn.Linear(32, n_cls)
        self.adv_classifier = nn.Linear(32, n_cls)
        if gda:
            self.optimizer = torch.optim.SGD(self.adv_classifier.parameters(), lr=0.01)
        else:
            self.optimizer = torch.optim.Adam(
                list(self.featurizer.parameters()) + list(self.classifier.parameters()), lr=1e-3)

    def update(self, x, y):
        loss = F.cross_entropy(self.classifier(self.featurizer(x)), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


net = Transferable(12, 3, gda=True)
for x, y in batches:
    net.update(x, y)
""",
            line=23,
            col=9,
            message="`self.optimizer` (here `torch.optim.SGD(self.adv_classifier.parameters(), lr=0.01)`) holds the parameters of `self.adv_classifier`",
        ),
        # a factory that grows an empty `nn.Sequential` with `add_module`: the generator it builds has
        # weights, and no optimizer holds them
        Invalid(
            """
import torch
import torch.nn as nn


def make_generator(n_in=8, n_out=4):
    net = nn.Sequential()
    net.add_module("fc0", nn.Linear(n_in, 16))
    net.add_module("act", nn.LeakyReLU())
    net.add_module("fc1", nn.Linear(16, n_out))
    return net


gen = make_generator()
disc = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(), nn.Linear(16, 1))
bce = nn.BCEWithLogitsLoss()
g_opt = torch.optim.Adam(disc.parameters())
d_opt = torch.optim.Adam(disc.parameters())


def g_step(n):
    fake = disc(gen(torch.randn(n, 8)))
    loss = bce(fake, torch.ones(n, 1))
    gen.zero_grad()
    loss.backward()
    g_opt.step()
""",
            line=25,
            col=5,
            message="`gen` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `g_opt`)",
        ),
        # the generator built twice (a later cell moves a new one to the device): whichever the function
        # runs, no optimizer holds it
        Invalid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
print(gen)
gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to("cpu")
disc = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
g_opt = torch.optim.Adam(disc.parameters())


def g_step(n):
    loss = -disc(gen(torch.randn(n, 8))).mean()
    g_opt.zero_grad()
    loss.backward()
    g_opt.step()
""",
            line=15,
            col=5,
            message="`gen` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters (the step after it applies `g_opt`)",
        ),
        # the loss computed by a helper the training function hands both models to, a method of the
        # encoder's class called there: the encoder's optimizer was given the decoder's parameters
        Invalid(
            """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden)

    def start(self):
        return None

    def forward(self, tokens, state):
        return self.rnn(self.embed(tokens), state)


def pair_loss(encoder, decoder, x, y):
    outputs, state = encoder(x, encoder.start())
    return nn.functional.cross_entropy(decoder(outputs[-1]), y)


def fit(encoder, decoder, batches):
    enc_opt = torch.optim.Adam(decoder.parameters())
    dec_opt = torch.optim.Adam(decoder.parameters())
    for x, y in batches:
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        loss = pair_loss(encoder, decoder, x, y)
        loss.backward()
        enc_opt.step()
        dec_opt.step()


encoder = Encoder(50, 16)
decoder = nn.Linear(16, 50)
fit(encoder, decoder, [])
""",
            line=31,
            col=9,
            message="`encoder` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters",
        ),
        # the same, the encoder's optimizer built on the decoder: the models reach the backward pass through
        # two functions that hand on their parameters
        Invalid(
            """
import torch
import torch.nn as nn


def train_batch(x, y, encoder, decoder, enc_opt, dec_opt):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    loss = nn.functional.mse_loss(decoder(encoder(x)), y)
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    return loss.item()


def fit(encoder, decoder, batches):
    enc_opt = torch.optim.Adam(decoder.parameters())
    dec_opt = torch.optim.Adam(decoder.parameters())
    for x, y in batches:
        train_batch(x, y, encoder, decoder, enc_opt, dec_opt)


enc = nn.Linear(4, 8)
dec = nn.Linear(8, 4)
fit(enc, dec, [])
""",
            line=10,
            col=5,
            message="`encoder` is never trained: the loss of this backward pass is computed from it, but no optimizer holds its parameters",
        ),
        # a WGAN critic whose parameters are only switched on and clipped (`p.requires_grad = True`,
        # `p.data.clamp_(-c, c)`): neither freezes it, and its optimizer was built on the generator
        Invalid(
            """
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.RMSprop(G.parameters(), lr=5e-5)
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
for real in torch.randn(10, 32, 4):
    for p in D.parameters():
        p.requires_grad = True
    opt_d.zero_grad()
    d_loss = D(G(torch.randn(32, 8)).detach()).mean() - D(real).mean()
    d_loss.backward()
    opt_d.step()
    for p in D.parameters():
        p.data.clamp_(-0.01, 0.01)
    opt_g.zero_grad()
    g_loss = -D(G(torch.randn(32, 8))).mean()
    g_loss.backward()
    opt_g.step()
""",
            line=14,
        ),
        # the loss comes from a method of the same trainer class (`self.sample(s)` unpacked), and the
        # environment is a project wrapper of a library class that leaves its `step` alone
        Invalid(
            """
import gym
import torch
import torch.nn as nn
from torch.distributions import Normal


class Scaled(gym.ActionWrapper):
    def action(self, a):
        return 2 * a


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 2)

    def forward(self, s):
        out = self.body(s)
        return out[:, :1], out[:, 1:]


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.value = nn.Linear(3, 1)
        self.policy_opt = torch.optim.Adam(self.value.parameters())
        self.value_opt = torch.optim.Adam(self.value.parameters())

    def sample(self, s):
        mu, log_std = self.policy(s)
        dist = Normal(mu, log_std.exp())
        a = dist.rsample()
        return a, dist.log_prob(a)

    def update(self, s, ret):
        v = self.value(s)
        value_loss = (v - ret).pow(2).mean()
        self.value_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()
        a, log_prob = self.sample(s)
        policy_loss = -(log_prob * (ret - v.detach())).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()


env = Scaled(gym.make("Pendulum-v1"))
agent = Agent()
for episode in range(10):
    s = torch.as_tensor(env.reset()[0]).float()
    s2, r, done, truncated, info = env.step(env.action_space.sample())
    agent.update(s.unsqueeze(0), torch.tensor([[r]]))
""",
            line=45,
        ),
        # the models come from factories through a helper that initialises its argument and hands it back
        Invalid(
            """
import torch
import torch.nn as nn


def init_weights(net, std=0.02):
    for p in net.parameters():
        nn.init.normal_(p, 0.0, std)
    return net


def make_generator():
    return init_weights(nn.Sequential(nn.Linear(8, 8), nn.Tanh()))


def make_critic():
    return init_weights(nn.Sequential(nn.Linear(8, 1)))


class Trainer:
    def __init__(self, lr):
        self.gen = make_generator()
        self.critic = make_critic()
        self.opt_gen = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.opt_critic = torch.optim.Adam(self.critic.parameters(), lr=lr)

    def step(self, z, real):
        fake = self.gen(z)
        self.opt_critic.zero_grad()
        loss_c = (self.critic(fake.detach()) - self.critic(real)).mean()
        loss_c.backward()
        self.opt_critic.step()
        self.opt_gen.zero_grad()
        loss_g = -self.critic(fake).mean()
        loss_g.backward()
        self.opt_gen.step()
""",
            line=35,
        ),
        # the trainer calls its base's constructor by name (`Base.__init__(self, ...)`, as `super().__init__()`)
        Invalid(
            """
import torch
import torch.nn as nn


def init_weights(net, std=0.02):
    for p in net.parameters():
        nn.init.normal_(p, 0.0, std)
    return net


def make_generator():
    return init_weights(nn.Sequential(nn.Linear(8, 8), nn.Tanh()))


def make_critic():
    return init_weights(nn.Sequential(nn.Linear(8, 1)))


class Base:
    def __init__(self, opt):
        self.opt = opt


class Trainer(Base):
    def __init__(self, lr):
        Base.__init__(self, None)
        self.gen = make_generator()
        self.critic = make_critic()
        self.opt_gen = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.opt_critic = torch.optim.Adam(self.critic.parameters(), lr=lr)

    def step(self, z, real):
        fake = self.gen(z)
        self.opt_critic.zero_grad()
        loss_c = (self.critic(fake.detach()) - self.critic(real)).mean()
        loss_c.backward()
        self.opt_critic.step()
        self.opt_gen.zero_grad()
        loss_g = -self.critic(fake).mean()
        loss_g.backward()
        self.opt_gen.step()
""",
            line=41,
        ),
        # an agent whose environment comes in through its constructor (every construction passes a library's
        # environment, re-wrapped by a library wrapper later) and whose own `step` method acts in it: neither
        # step is an optimizer's, and the actor's optimizer holds the critic
        Invalid(
            """
import gym
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Actor(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, s):
        return torch.tanh(self.fc(s))


class Critic(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc = nn.Linear(n_in, 1)

    def forward(self, s, a):
        return self.fc(torch.cat((s, a), dim=-1))


class DDPGAgent:
    def __init__(self, env, tau=5e-3):
        self.env = env
        self.tau = tau
        self.actor = Actor(3, 1)
        self.actor_target = Actor(3, 1)
        self.critic = Critic(4)
        self.critic_target = Critic(4)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_optimizer = optim.Adam(self.critic.parameters(), lr=3e-4)
        self.critic_optimizer = optim.Adam(self.critic.parameters(), lr=1e-3)

    def select_action(self, state):
        return self.actor(torch.FloatTensor(state)).detach().cpu().numpy()

    def update_model(self, state, action, reward, next_state):
        next_value = self.critic_target(next_state, self.actor_target(next_state))
        values = self.critic(state, action)
        critic_loss = F.mse_loss(values, reward + 0.99 * next_value)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -self.critic(state, self.actor(state)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        self._target_soft_update()
        return actor_loss.data, critic_loss.data

    def _target_soft_update(self):
        tau = self.tau
        for t_param, l_param in zip(self.actor_target.parameters(), self.actor.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)
        for t_param, l_param in zip(self.critic_target.parameters(), self.critic.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)

    def step(self, action):
        return self.env.step(action)

    def train(self, frames):
        state, _ = self.env.reset()
        for _ in range(frames):
            action = self.select_action(state)
            next_state, reward, done, _, _ = self.step(action)
            self.update_model(state, action, reward, next_state)
            state = next_state

    def test(self):
        self.env = gym.wrappers.RecordVideo(self.env, video_folder="videos")


env = gym.make("Pendulum-v1")
agent = DDPGAgent(env)
agent.train(100)
agent.test()
""",
            line=51,
        ),
        # the folder the library wrapper is given is a method parameter every call on the agent passes a string
        # for (`agent.test("videos/ddpg")`): no model, so the wrapped environment still steps no optimizer
        Invalid(
            """
import gym
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Actor(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, s):
        return torch.tanh(self.fc(s))


class Critic(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc = nn.Linear(n_in, 1)

    def forward(self, s, a):
        return self.fc(torch.cat((s, a), dim=-1))


class DDPGAgent:
    def __init__(self, env, tau=5e-3):
        self.env = env
        self.tau = tau
        self.actor = Actor(3, 1)
        self.actor_target = Actor(3, 1)
        self.critic = Critic(4)
        self.critic_target = Critic(4)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_optimizer = optim.Adam(self.critic.parameters(), lr=3e-4)
        self.critic_optimizer = optim.Adam(self.critic.parameters(), lr=1e-3)

    def select_action(self, state):
        return self.actor(torch.FloatTensor(state)).detach().cpu().numpy()

    def update_model(self, state, action, reward, next_state):
        next_value = self.critic_target(next_state, self.actor_target(next_state))
        values = self.critic(state, action)
        critic_loss = F.mse_loss(values, reward + 0.99 * next_value)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -self.critic(state, self.actor(state)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        self._target_soft_update()
        return actor_loss.data, critic_loss.data

    def _target_soft_update(self):
        tau = self.tau
        for t_param, l_param in zip(self.actor_target.parameters(), self.actor.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)
        for t_param, l_param in zip(self.critic_target.parameters(), self.critic.parameters()):
            t_param.data.copy_(tau * l_param.data + (1.0 - tau) * t_param.data)

    def step(self, action):
        return self.env.step(action)

    def train(self, frames):
        state, _ = self.env.reset()
        for _ in range(frames):
            action = self.select_action(state)
            next_state, reward, done, _, _ = self.step(action)
            self.update_model(state, action, reward, next_state)
            state = next_state

    def test(self, folder):
        tmp_env = self.env
        self.env = gym.wrappers.RecordVideo(self.env, video_folder=folder)
        self.train(1)
        self.env = tmp_env


env = gym.make("Pendulum-v1")
agent = DDPGAgent(env)
agent.train(100)
agent.test("videos/ddpg")
""",
            line=51,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.fc = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc(self.f(x))


model = Net()
teacher = Net()
for p in model.f.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(teacher.fc.parameters(), lr=0.1)
x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
print(loss.item())
""",
            line=26,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net_G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
net_D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
optimizer_G = torch.optim.Adam(net_D.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(net_D.parameters(), lr=1e-3)
for step in range(10):
    fake = net_G(torch.randn(16, 4))
    loss = -torch.mean(torch.log(1 - net_D(fake.detach())) + torch.log(net_D(torch.randn(16, 2))))
    optimizer_D.zero_grad()
    loss.backward()
    optimizer_D.step()
    loss = -torch.mean(torch.log(net_D(fake)))
    optimizer_G.zero_grad()
    loss.backward()
    optimizer_G.step()

head = nn.Linear(2, 1)
optimizer_H = torch.optim.Adam(head.parameters(), lr=1e-3)
for step in range(10):
    loss = net_D(net_G(torch.randn(16, 4))).mean()
    optimizer_H.zero_grad()
    loss.backward()
    optimizer_H.step()
""",
            line=17,
            count=2,
        ),
        # the untrained model's gradients are logged after each step: reading them freezes nothing
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

plain = nn.Linear(3, 1)
decayed = nn.Linear(3, 1)
opt_plain = torch.optim.SGD(decayed.parameters(), lr=0.05)
opt_decayed = torch.optim.SGD(decayed.parameters(), lr=0.05, weight_decay=1e-2)
writer = SummaryWriter()
x, y = torch.randn(32, 3), torch.randn(32, 1)
for epoch in range(20):
    loss_plain = (plain(x) - y).pow(2).mean()
    loss_decayed = (decayed(x) - y).pow(2).mean()
    opt_plain.zero_grad()
    opt_decayed.zero_grad()
    loss_plain.backward()
    loss_decayed.backward()
    opt_plain.step()
    opt_decayed.step()
    for name, p in plain.named_parameters():
        writer.add_histogram(name + "/grad", p.grad, epoch)
        writer.add_histogram(name + "/value", p, epoch)
""",
            line=17,
        ),
        # the same critic, frozen only for the generator's step, is in no optimizer: it is never trained
        Invalid(
            """
import torch
import torch.nn as nn

gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_critic = torch.optim.RMSprop(gen.parameters(), lr=5e-5)
opt_gen = torch.optim.RMSprop(gen.parameters(), lr=5e-5)

for step in range(100):
    real = torch.randn(32, 2) + 3.0
    for p in critic.parameters():
        p.requires_grad = True
    critic_loss = critic(gen(torch.randn(32, 8))).mean() - critic(real).mean()
    opt_critic.zero_grad()
    critic_loss.backward()
    opt_critic.step()
    for p in critic.parameters():
        p.data.clamp_(-0.01, 0.01)
    for p in critic.parameters():
        p.requires_grad = False
    gen_loss = -critic(gen(torch.randn(32, 8))).mean()
    opt_gen.zero_grad()
    gen_loss.backward()
    opt_gen.step()
""",
            line=16,
        ),
        # the encoder, saved in a list with the decoder, is in no optimizer: saving reads it, it freezes nothing
        Invalid(
            """
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(10, 4), nn.Tanh())
decoder = nn.Linear(4, 10)
opt_enc = torch.optim.Adam(decoder.parameters(), lr=1e-3)
opt_dec = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(200):
    x = torch.randn(16, 10)
    loss = (decoder(encoder(x)) - x).pow(2).mean()
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss.backward()
    opt_enc.step()
    opt_dec.step()
    if step % 100 == 0:
        torch.save([encoder, decoder], "autoencoder.pt")
""",
            line=14,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

encoder = nn.Linear(4, 4)
decoder = nn.Linear(4, 4)
opt_dec = torch.optim.SGD(decoder.parameters(), lr=0.1)
for _ in range(10):
    loss = encoder(torch.randn(8, 4)).pow(2).mean()
    opt_dec.zero_grad()
    loss.backward()
    for p in decoder.parameters():
        if p.grad is not None:
            p.grad = p.grad.clamp(-1.0, 1.0)  # clipped by hand: its own gradient, nothing handed over
    opt_dec.step()
""",
            line=15,
        ),
    ]

    def _unit(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The training code ``node`` belongs to: its outermost loop in its function (or at module level),
        else its function; a swapped optimizer and the model it leaves untrained are one mistake there."""
        unit: Optional[cst.CSTNode] = None
        for a in self.ctx.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return unit if unit is not None else a
            if isinstance(a, (cst.For, cst.While)):
                unit = a
        return unit

    def leave_Module(self, node: cst.Module) -> None:
        if not self.ctx.names.imports_torch:
            return
        reported = set()
        # the models a stray step's message already names as untrained by it, with the code it is in
        named: List[Tuple[str, Optional[cst.CSTNode]]] = []
        for found in stray_steps(self.ctx):
            reported.update(found.backwards)
            named.extend((model, self._unit(found.step)) for model in found.reached)
            self.report(found.step, self.MESSAGE.format(
                optimizer=found.optimizer, here=f" (here `{found.element}`)" if found.element else "",
                held=", ".join(f"`{h}`" for h in found.held),
                reached=", ".join(f"`{r}`" for r in found.reached),
            ))
        for stray in stray_lightning_optimizers(self.ctx):
            self.report(stray.optimizer, self.LIGHTNING.format(
                held=", ".join(f"`self.{h}`" for h in stray.held),
                reached=", ".join(f"`self.{r}`" for r in stray.reached),
                cls=stray.cls,
            ))
        manual_found = lightning_manual_steps(self.ctx)
        stepped = {r for m in manual_found if m.optimizer is not None for r in m.reached}
        for manual in manual_found:
            models = ", ".join(f"`self.{r}`" for r in manual.reached)
            if manual.optimizer is not None:
                self.report(manual.node, self.MESSAGE.format(
                    optimizer=manual.optimizer, here="", held=", ".join(f"`self.{h}`" for h in manual.held),
                    reached=models))
            elif not set(manual.reached) <= stepped:  # one mistake, one finding: the step names it
                self.report(manual.node, self.MANUAL_UNTRAINED.format(
                    models=models, verb="is" if len(manual.reached) == 1 else "are",
                    them="it" if len(manual.reached) == 1 else "them",
                    their="its" if len(manual.reached) == 1 else "their"))
        for untrained in untrained_models(self.ctx, reported):
            unit = self._unit(untrained.backward)
            if all((model, unit) in named for model in untrained.models):
                continue  # one mistake, one finding: the swapped optimizer is reported at its step
            named.extend((model, unit) for model in untrained.models)  # and a model no optimizer holds at its
            # first backward pass
            self.report(untrained.backward, self.UNTRAINED.format(
                models=", ".join(f"`{m}`" for m in untrained.models),
                optimizers=", ".join(f"`{o}`" for o in untrained.optimizers),
                verb="is" if len(untrained.models) == 1 else "are",
                them="it" if len(untrained.models) == 1 else "them",
                their="its" if len(untrained.models) == 1 else "their",
            ))
