"""Shapes of code met in real training scripts and notebooks, each with the near miss that must stay
silent: helpers a notebook redefines in a later cell, callers that set the mode or disable gradients for
a helper, plain Python classes with a ``forward`` method, ..."""
from __future__ import annotations

import textwrap

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = all_rules()


def found(code: str, select=None, path: str = "train.py"):
    rules = [r for r in RULES if select is None or r.CODE in select]
    result = lint_source(path, textwrap.dedent(code), Settings(rules=rules))
    assert not result.errors
    return [(d.line, d.code) for d in result.diagnostics]


HELPER = """
def compute_accuracy(model, loader):
    correct, total = 0, 0
    for features, targets in loader:
        logits = model(features)
        correct += (logits.argmax(1) == targets).sum()
        total += targets.size(0)
    return correct.float() / total
"""

TRAIN_THEN_MEASURE = """
for epoch in range(3):
    model{assign_train}.train()
    for features, targets in train_loader:
        loss = F.cross_entropy(model(features), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model{assign_eval}.eval()
    with torch.set_grad_enabled(False):
        print(compute_accuracy(model, train_loader))
"""

SETUP = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def _loop(rebind: bool) -> str:
    if rebind:
        return TRAIN_THEN_MEASURE.format(assign_train=" = model", assign_eval=" = model")
    return TRAIN_THEN_MEASURE.format(assign_train="", assign_eval="")


def test_helper_redefined_in_a_later_cell_is_judged_by_its_own_callers():
    # A notebook that repeats the helper before each experiment: every call runs after `model.eval()`
    # and under `set_grad_enabled(False)`, whichever definition it reaches.
    code = SETUP + HELPER + _loop(False) + HELPER + _loop(True)
    assert found(code, {"TL105", "TL106"}) == []


def test_redefined_helper_called_with_autograd_on_is_still_reported():
    code = SETUP + HELPER + _loop(False) + HELPER + _loop(True) + "\nprint(compute_accuracy(model, test_loader))\n"
    lines = code.splitlines()
    second_call = [i + 1 for i, line in enumerate(lines) if "logits = model(features)" in line][1]
    # only the definition that the unguarded call reaches is reported, and only by TL105 (the mode is eval)
    assert found(code, {"TL105", "TL106"}) == [(second_call, "TL105")]


PLAIN_NETWORK = """
import torch


class {name}{bases}:
    def __init__(self, n):
        super().__init__()
        self.w = {weight}

    def forward(self, x):
        return torch.sigmoid(x @ self.w)

    def backward(self, x, out, y):
        return x.t() @ (out - y)


def loss_func(targets, probas):
    return torch.mean((targets - probas) ** 2)


def train(model, loader):
    costs = []
    for x, y in loader:
        out = model.forward(x)
        model.w -= 0.1 * model.backward(x, out, y)
        costs.append(loss_func(y, out))
    return costs


def accuracy(net, loader):
    correct = 0
    for features, targets in loader:
        correct += (net.forward(features).argmax(1) == targets).sum()
    return correct


model = {name}(4)
train(model, train_loader)
print(accuracy(model, test_loader))
"""


def test_hand_written_network_of_a_plain_class_is_no_module():
    # a from-scratch network: no nn.Module, no autograd; `.forward` and `.backward` are its own methods
    code = PLAIN_NETWORK.format(name="MultilayerPerceptron", bases="", weight="torch.zeros(n, n)")
    assert found(code, {"TL104", "TL105", "TL106", "TL508"}) == []
    code = PLAIN_NETWORK.format(name="Perceptron", bases="(object)", weight="torch.zeros(n, n)")
    assert found(code, {"TL104", "TL105", "TL106", "TL508"}) == []


def test_the_same_code_on_an_nn_module_is_reported():
    code = PLAIN_NETWORK.format(
        name="MultilayerPerceptron", bases="(torch.nn.Module)", weight="torch.nn.Parameter(torch.zeros(n, n))"
    )
    got = {c for _line, c in found(code, {"TL105", "TL508"})}
    assert got == {"TL105", "TL508"}


def test_a_class_whose_base_cannot_be_read_is_not_taken_for_a_plain_class():
    code = PLAIN_NETWORK.replace("import torch\n", "import torch\nfrom somewhere import Base\n", 1).format(
        name="Net", bases="(Base)", weight="torch.zeros(n, n)"
    )
    assert found(code, {"TL508"}) == []  # nothing says the object is a module: its name decides nothing
    counted = "print(sum(p.numel() for p in model.parameters()))\n"
    assert "TL508" in {c for _line, c in found(code + counted, {"TL508"})}  # used as one
    plain = PLAIN_NETWORK.format(name="MultilayerPerceptron", bases="", weight="torch.zeros(n, n)")
    assert found(plain + counted, {"TL508"}) == []  # a plain class stays one, whatever the code does


GRAPH_FREE_HELPER = """
import torch
import torch.nn.functional as F


{decorator}def evaluate(model, loader):
    model.eval()
    {body}
    model.train()
    return {result}


def fit(model, optimizer, train_loader, val_loader):
    history = []
    for step, (x, y) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            res = evaluate(model, val_loader)
            history.append(res["val_loss"])
    return history
"""

UNDER_NO_GRAD = """with torch.no_grad():
        val_loss = sum(F.cross_entropy(model(x), y) for x, y in loader) / len(loader)"""
WITH_GRAPH = """val_loss = sum(F.cross_entropy(model(x), y) for x, y in loader) / len(loader)"""


def test_loss_returned_by_a_helper_that_computes_it_under_no_grad_keeps_no_graph():
    for decorator, body, result in [
        ("", UNDER_NO_GRAD, '{"val_loss": val_loss}'),
        ("@torch.no_grad()\n", WITH_GRAPH, '{"val_loss": val_loss}'),
        ("", UNDER_NO_GRAD, '{"val_loss": val_loss, "batches": 1}'),
    ]:
        code = GRAPH_FREE_HELPER.format(decorator=decorator, body=body, result=result)
        assert found(code, {"TL104"}) == [], (decorator, body, result)


def test_loss_returned_by_a_helper_with_autograd_on_is_reported():
    code = GRAPH_FREE_HELPER.format(decorator="", body=WITH_GRAPH, result='{"val_loss": val_loss}')
    assert [c for _line, c in found(code, {"TL104"})] == ["TL104"]


AUTOENCODER = """
import torch
import torch.nn.functional as F


class Autoencoder(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear_1 = torch.nn.Linear(n, 8)
        self.linear_2 = torch.nn.Linear(8, n){extra}

    def encoder(self, x):
        return F.leaky_relu({encoded})

    def forward(self, x):
        return torch.sigmoid(self.linear_2(self.encoder(x)))


model = Autoencoder(16)
codes = []
for images, labels in test_loader:
    encoded = model.encoder(images.view(-1, 16))
    codes.append(encoded.detach().numpy())
"""


def test_a_method_of_the_model_class_runs_the_model_in_its_mode():
    # only Linear layers: eval() would change nothing, so TL106 is silent; gradients are still on
    plain = AUTOENCODER.format(extra="", encoded="self.linear_1(x)")
    assert [c for _l, c in found(plain, {"TL105", "TL106"})] == ["TL105"]
    drop = "\n        self.drop = torch.nn.Dropout(0.2)"
    with_dropout = AUTOENCODER.format(extra=drop, encoded="self.drop(self.linear_1(x))")
    assert sorted(c for _l, c in found(with_dropout, {"TL105", "TL106"})) == ["TL105", "TL106"]
    # the dropout is built but the method run (`encoder`) never reaches it: its mode changes nothing there
    unreached = AUTOENCODER.format(extra=drop, encoded="self.linear_1(x)")
    assert [c for _l, c in found(unreached, {"TL105", "TL106"})] == ["TL105"]


GAN = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
        self.discriminator = nn.Sequential(nn.Linear(16, 1), {last})

    def generator_forward(self, z):
        return self.generator(z)

    def discriminator_forward(self, img):
        pred = self.discriminator(img)
        return pred.view(-1)


model = GAN().to(device)
bce = nn.{loss}()
opt_g = torch.optim.Adam(model.generator.parameters())
opt_d = torch.optim.Adam(model.discriminator.parameters())
for real, _ in loader:
    fake = model.generator_forward(torch.randn(real.size(0), 8))
    g_loss = bce(model.discriminator_forward(fake), torch.ones(real.size(0)))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    d_loss = bce(model.discriminator(real).view(-1), torch.ones(real.size(0)))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
"""


def test_gan_whose_discriminator_ends_in_sigmoid_through_a_method_and_an_attribute():
    code = GAN.format(last="nn.Sigmoid()", loss="BCELoss")
    lines = code.splitlines()
    expected = [(i + 1, "TL207") for i, line in enumerate(lines) if "_loss = bce(" in line]
    assert found(code, {"TL207"}) == expected


def test_gan_with_a_logit_discriminator_is_silent():
    assert found(GAN.format(last="nn.Identity()", loss="BCEWithLogitsLoss"), {"TL207"}) == []
    assert found(GAN.format(last="nn.Linear(1, 1)", loss="BCEWithLogitsLoss"), {"TL207"}) == []


VAE = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(784, 40)
        self.dec = nn.Linear(20, 784)

    def encode(self, x):
        h = self.enc(x)
        return h[:, :20], h[:, 20:]

    def decode(self, z):
        return {decode}

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.{bce}(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


vae = VAE()
optimizer = torch.optim.Adam(vae.parameters())
for x, _ in loader:
    recon, mu, logvar = vae(x)
    loss = loss_function(recon, x, mu, logvar)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_vae_whose_decode_helper_ends_in_sigmoid():
    code = VAE.format(decode="torch.sigmoid(self.dec(z))", bce="binary_cross_entropy")
    assert [c for _l, c in found(code, {"TL207"})] == ["TL207"]


def test_vae_that_returns_logits_from_decode_is_silent():
    code = VAE.format(decode="self.dec(z)", bce="binary_cross_entropy_with_logits")
    assert found(code, {"TL207"}) == []


TRAINED_THEN_PREDICT = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for features, targets in train_loader:
        logits = model(features)
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
{after}
"""


def _report_lines(code, select=("TL105",)):
    return [line for line, c in found(code, set(select))]


def test_prediction_after_training_at_module_level_is_reported_and_fixed():
    after = "model.eval()\nlogits = model(features[0, None])\nprint(logits.argmax(1))\n"
    code = TRAINED_THEN_PREDICT.format(after=after)
    lines = code.splitlines()
    assert _report_lines(code) == [lines.index("logits = model(features[0, None])") + 1]
    from torchlint.engine import Settings, lint_source

    rules = [r for r in RULES if r.CODE == "TL105"]
    result = lint_source("train.py", textwrap.dedent(code), Settings(rules=rules, fix=True))
    assert "with torch.no_grad():\n    logits = model(features[0, None])\nprint(" in result.fixed_source


def test_sampling_loop_after_training_is_reported():
    after = "for i in range(3):\n    z = torch.randn(2, 4)\n    samples = model(z)\n    print(samples.detach())\n"
    assert len(_report_lines(TRAINED_THEN_PREDICT.format(after=after))) == 1


def test_module_level_model_calls_that_are_no_prediction_are_silent():
    # a smoke test of a model built after the training (untrained), an output discarded, a forward whose
    # output is fine-tuned further, a prediction already under no_grad
    for after in [
        "model = nn.Sequential(nn.Linear(4, 2))\nout = model(torch.randn(2, 4))\nprint(out.shape)\n",
        "_ = model(features)\n",
        "logits = model(features)\nloss = F.cross_entropy(logits, targets)\nloss.backward()\n",
        "with torch.no_grad():\n    logits = model(features)\n",
    ]:
        assert _report_lines(TRAINED_THEN_PREDICT.format(after=after)) == [], after
    # no training before it: a shape demo
    demo = "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nout = model(torch.randn(2, 4))\nprint(out.shape)\n"
    assert _report_lines(demo) == []
