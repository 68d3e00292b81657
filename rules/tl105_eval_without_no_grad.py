from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from torchlint.analysis.context import assignment_targets
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.families.training.evaluation import (
    EvaluationBinder,
    call_sites,
    enclosing_function,
    EvalSite,
    evaluation_facts,
    framework_model,
    frozen_model,
    method_turns_grad_off,
    no_grad_call_code,
    runs_without_grad,
)
from torchlint.families.training.grad_mode import STRONG, WEAK, training_evidence
from torchlint.analysis.training import (attribute_flows_into_backward, flows_into_backward, instance_attribute,
                                         is_backward_like, is_detached, under_no_grad)
from torchlint.analysis.walk import iter_nodes
from torchlint.rule import Fix, Invalid, LintRule, Valid


#: the torch release that brought `torch.no_grad()`
_NO_GRAD_SINCE = (0, 4)


class EvalWithoutNoGrad(LintRule):
    """
    ## What it does
    Finds evaluation code that runs a model with autograd on: a validation, test, prediction or
    inference function (named so, or called with a validation/test loader) or a loop that computes
    metrics without training, whose model calls are not under `torch.no_grad()` or
    `torch.inference_mode()` — neither a `with` block, nor a decorator, nor at every call site of the
    function in the module. Such a function runs its model over the data in a loop, or on one batch it
    draws (`images, labels = next(iter(loader))`), and trains nothing; a model's output on a drawn batch
    that is ranked (`scores.argmax(dim=1)`) is a forward pass whatever the callee is called. A method of
    the model's class that runs its layers (`model.predict(seq, items)` returning `self(seq, items)`) runs
    the model, also on a parameter every caller (in this file, else in the project's others) passes an
    instance of that class. A function called only from other files of the project is under `no_grad`
    when every such call is; a `test(model, users)` of a `*_test.py` file that project code calls is
    evaluation code, not a test of the test suite. A function whose every model is built on the spot,
    without trained weights (`model = TwoLayer(50, 42, 10)`, then `model(torch.zeros(64, 50)).size()`), is a
    shape check, whatever its name: no trained model is evaluated. A method of a plain class that keeps
    the model it is built with (`self.model = model`) runs the model each construction passes:
    `Scorer(net).predict(x)` after training `net` is an evaluation of `net`. At module level (a script, a notebook's cells) a prediction after the
    training — a statement or a sampling loop that runs the model the module trained before it, and
    whose outputs no later backward pass reaches — is evaluation code too; so is such a statement at
    the end of a script's main block (`main()`, `if __name__ == "__main__":`) after a backward pass or
    an optimizer step on the model, when the function neither returns nor stores the output; and so is
    such a statement after the model got trained weights (at module level or in the main block):
    `load_state_dict`, `torch.load`, a library
    model built with them (`models.resnet50(weights="DEFAULT")`, `pretrained=True`, `from_pretrained`), a
    function of the file every return of which hands back a model it loaded weights into
    (`model.load_state_dict(torch.load(path))`, then `return model`), or a
    conditional expression each branch of which is one or calls a function that trains. A function,
    whatever its name and however short (one forward pass, no loop), whose model outputs reach only
    graph-free sinks (it trains nothing, needs no gradients, uses every output, switches nothing to
    training mode) is evaluation code when every call of it in the file runs a model trained, or given
    trained weights, before that call (a part of such a model too: `decoder` passed to `Model(encoder,
    decoder)`; for a method's `self.<model>`, a loop around the call that also steps an optimizer the
    instance builds on that model's parameters, as an agent's `select_action` between its updates, also
    called through an instance the file builds, `agent.act(s)` beside `agent.learn(batch)` in the
    script's loop); a
    file that registers a forward or backward hook is left alone (a hook may feed a loss
    with the activations). A module-level loop that calls a helper returning a model output or its loss
    and reads it only off the graph (`dev_loss += calc_loss(batch).item()`) on a trained model is an
    evaluation at that loop (the helper itself may be shared with training). Inside a
    training loop, a statement of its body that runs the model the loop trains again, on other data,
    and whose output reaches no backward pass (`val_loss = loss_fn(model(x_val), y_val)` beside
    `train_loss.backward()`, only printed) is an evaluation in every iteration. A program that trains nothing anywhere
    and loads back weights it saved itself (a demonstration of `torch.save`/`load_state_dict`) evaluates
    no trained model and is not reported.  A Lightning
    trainer's `trainer.fit(model, ...)` counts as that training (the model may be read back with
    `load_from_checkpoint` after it). Outputs without an autograd graph by construction — a comparison
    or `argmax`, its mean, `.item()`, arithmetic of them, also as an element of the tuple a project
    model's method returns (`_, acc = model.forward(batch)` where `forward` returns `loss, (pred ==
    y).float().mean()`) — may be returned or stored: they are numbers, not the graph.

    Decoding and sampling code is recognised by what it does, whatever its name: a function that, in a
    loop, runs a model on what it derives from the model's own output (a token picked from it, or a
    hidden state) and picks from an output (`argmax`, `topk`, `max(dim)`, `torch.multinomial`, a
    distribution's `sample()`), with no loss, backward pass, optimizer step or training call anywhere it
    reaches, no output's graph returned or stored (sampled log-probabilities handed back for a
    policy-gradient loss are training data), and no output handed to a callable whose code is not in
    view. The calls of the model's parts (`decoder.attention(enc, h)`, `decoder.fc(h)`) count as runs of
    the model there. A class object passed as a value (`build(Discriminator, dim)`) is not a model:
    calling it constructs one.

    ## Why is this bad?
    Outside `no_grad`, every forward pass records the autograd graph and keeps the activations alive
    for a backward pass that never comes: evaluation runs slower and needs far more memory (often an
    out-of-memory error with batch sizes that trained fine), and tensors kept for metrics or
    predictions hold their whole graph. The cookbook: "不需要计算梯度的代码块用 with torch.no_grad()
    包含起来", since `no_grad` "关闭 PyTorch 张量的自动求导机制，以减少存储使用和加速计算"
    (PyTorch Cookbook, Zhang Hao, 2019; the test-loop snippet of the 2024 revision, section 6.2,
    wraps the loop in `with torch.no_grad():`).

    A function handed by name to an engine as its process function (`Engine(score_step)` of
    pytorch-ignite) and called by nothing else returns to the engine's metrics: when it trains nothing,
    its forward pass is an evaluation.

    Not reported: Lightning's `validation_step`/`test_step`/`predict_step` and other framework hooks
    (the framework disables gradients; a name like a hook's, `eval_step`, counts only for a method, a
    decorated function, a function whose name is used other than to call it, or in a file with classes
    derived from anything but `nn.Module`), pytest tests, the inference methods of model classes that leave
    the mode to their caller (library API: the caller decides; a method that switches its own model to
    eval mode, `self.eval()`, has decided, and its evaluation is reported), evaluation that needs gradients (it calls `backward()`, reads `.grad` of a value other than a model's
    parameters, which a training loop logs (`for n, p in net.named_parameters(): writer.add_histogram(n, p.grad)`), or
    uses `torch.autograd`/`enable_grad`/`set_grad_enabled`), model calls whose output is discarded
    (calibration and warm-up passes), a method of a model class of the project that runs no layer and only
    makes tensors (`h = net.init_hidden(batch_size)` whose body is `torch.zeros(...)` or
    `next(self.parameters()).data.new(...).zero_()`: no forward pass), code where some model calls are already under `no_grad` (the
    rest is taken as deliberate), and `self.<model>` in a class derived from a framework class imported
    from another module when the class never shows how the model is built (the framework sets it up
    and its caller disables gradients: a Hugging Face `Pipeline` runs `_forward` under `no_grad`). A base
    class of the project, in this file or another, is no framework: it is read like the class itself (a
    `TabModel` trainer class that builds `self.network` makes its subclass's `predict_proba` evaluation
    code), and a method is a model's own API only when its class is an `nn.Module` by construction,
    defines `forward` itself or through a base of the project, or derives from a library class whose
    name says model.

    ## Example
    ```python
    def validate(model, loader):
        model.eval()
        correct = 0
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
        return correct / len(loader.dataset)
    ```

    ## Use instead
    ```python
    def validate(model, loader):
        with torch.no_grad():
            model.eval()
            correct = 0
            for images, labels in loader:
                correct += (model(images).argmax(1) == labels).sum().item()
            return correct / len(loader.dataset)
    ```

    ## Fix safety
    For an evaluation function the fix adds `@torch.no_grad()` to it (a one-line change; the body is not
    re-indented); for an evaluation loop or a module-level prediction it wraps it in
    `with torch.no_grad():`. Both are spelled with the module's own torch import; no fix is offered
    when torch is not imported by name. An evaluation generator gets the decorator too: `no_grad` as a
    decorator turns gradients off each time the generator runs and gives the consumer its own mode back
    at every `yield` (a `with` block in the body would leak into the consumer).

    Turning gradients off is safe only with positive evidence of evaluation (the finding's own) and no
    evidence of training anywhere the wrapped code reaches: itself and the same-module functions it
    calls, three calls deep. A backward pass, an optimizer step, a gradient reset, a call named like a
    training step, or an optimizer or a model's parameters handed to a callable whose code is not in
    view (`loss_scaler(loss, optimizer)`, whose `__call__` runs the backward pass; a
    `step(loss, optimizer)` closure) mean the code trains: it is not reported at all; so does a call of a
    model whose own `forward` runs a backward pass or an optimizer step (a meta-learner's training step). The fix is
    unsafe when a model output, or a value computed from it that is not detached (a loss), is handed to
    a callable the code was given or to one whose code is not in view (other than a loss function whose
    result is kept, a builtin, or a metric or container method such as `update` or `append`): that
    callable may differentiate it. It is unsafe too when the code turns training mode back on
    (`model.train()`: training may go on right after), and when the function returns a model output (a
    caller could differentiate through it), or yields one. A function whose result a caller in the file
    differentiates (`helper(...).backward()`, or a variable that reaches a backward call) is not
    reported: it is shared with training. Code already under `no_grad` (here or at every caller) is not
    reported, so the fix never nests one `no_grad` in another; a method's callers include its calls through
    instances whose class is known (`for m in members: m.predict(x)` over a list of them), and are all
    known only when no call of that method name goes through an object of unknown class. An object torch
    builds (`criterion = nn.CrossEntropyLoss()`, or a parameter every caller passes one for) keeps
    nothing it is given, unlike a callable of the project or of another library. A helper that receives
    the model from another helper (`accuracy(net, x)` calling `classify(net, x)`) runs a trained model
    when every caller of that helper passes one. Nor is code whose models are all frozen
    where they run (`model.requires_grad_(False)`, or `p.requires_grad = False` for each of
    `model.parameters()`, unconditionally before the call in the same function, at every caller for a
    model passed in, or on the construction, and no part set, added or unfrozen after it: a new head
    `model.fc = nn.Linear(...)` trains): their forward passes record no graph. After the fix, a
    model still in training mode in the wrapped code is still reported by TL106.

    A generator that runs a model and yields its output (or a value computed from it) is followed into
    the `for` loop of each caller that iterates it (`for out, y in outputs_of(model, loader):`, through
    `enumerate` too): the positions of the yielded tuples that carry the graph are traced through the
    loop, and when they reach only graph-free sinks (no backward pass, no callable whose code is not in
    view, nothing returned) the loop is an evaluation, even in a function that trains elsewhere. Its fix
    wraps that loop in `with torch.no_grad():` (the generator's body runs in the consumer's grad mode).

    A module frozen when it is built runs no graph of its own either: a project class whose `__init__` ends by
    freezing `self` (`self.requires_grad_(False)`, a loop setting `p.requires_grad = False` over
    `self.parameters()`, or a method of the class doing that with the `False` it is given), or whose every kept
    module is built frozen or holds no parameter (a perceptual metric made of a frozen backbone and frozen
    weights, also through a factory every return of which builds one).

    A method of a model class other than its forward pass that runs the model itself (`self(s)`,
    `self.forward(s)`) and hands back only values off the graph (`get_action` returning
    `.detach().cpu().numpy()`) is inference when code of the file calls it with gradients on; its fix
    decorates it with `@torch.no_grad()`, and the calls of it are not reported again. A model's own method
    that nothing in view calls is its API and is left alone. A helper given the model and returning only
    off-graph values (`get_action(net, s)` returning `q.argmax().item()`) counts as run on a trained model
    when the loop around its call also steps an optimizer and runs the model elsewhere in its body (an agent
    acting between its updates).

    Decoding code with any sign of training (a weak one too) is not reported. Its fix is safe when a
    token picked from an output is fed back and the outputs leave the function only as picks or
    detached values; when only the output itself (a hidden state) is fed back, it is unsafe. Decoding
    feeds a model what the loop derives from that same model's outputs: a relation network run on an
    encoder's features is an evaluation like any other.

    ## Options
    - `target-torch` (default `"auto"`): the oldest torch the project supports; below 0.4, which has no
      `torch.no_grad()` (evaluation turned autograd off with `Variable(x, volatile=True)`), nothing is
      reported. `"auto"` reads the project's declared torch requirement.

    ## References
    - [torch.no_grad](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    - [torch.inference_mode](https://pytorch.org/docs/stable/generated/torch.inference_mode.html)
    - [Locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL105"
    BINDERS = (EvaluationBinder,)
    NAME = "eval-without-no-grad"
    MESSAGE = (
        "Evaluation runs `model(...)` with autograd on and its output reaches no gradient; wrap it in "
        "`torch.no_grad()` (or `torch.inference_mode()`) to save memory and time"
    )
    FIX_TITLE = "Disable gradients for the evaluation (`@torch.no_grad()` or `with torch.no_grad():`)"
    TRIGGERS = ("torch",)
    OPTIONS = {"target-torch": TARGET_TORCH}

    VALID = [
        # a module-level model frozen (every parameter) before the only call of the function that runs it, and
        # bound again to itself switched to eval mode: its forward pass records nothing
        """
import torch
from torchvision.models import resnet18

scorer = resnet18(weights="DEFAULT")
for weight in scorer.parameters():
    weight.requires_grad = False
scorer = scorer.eval()


def report(x):
    top = scorer(x).softmax(dim=-1).max(dim=-1)
    print(top.values.tolist(), top.indices.tolist())


report(torch.randn(2, 3, 224, 224))
""",
        # near miss: the name is bound again to a part of the output itself, which keeps its graph, and the
        # caller backpropagates through what the function returns
        Valid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


def kept_scores(net, batches, threshold=0.5):
    kept = []
    for x in batches:
        probs = net(x).sigmoid()
        probs = probs.clone()
        probs = probs[probs > threshold]
        kept.append(probs.reshape(-1))
    return torch.cat(kept)


net = Scorer()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
loss = kept_scores(net, [torch.randn(8, 16)]).sum()
loss.backward()
opt.step()
"""
        ),
        # near miss: the output is handed to a library function whose code is not in view (it may
        # differentiate it)
        Valid(
            """
import torch
from torch import nn
from somewhere import render

decoder = nn.Sequential(nn.Linear(8, 48), nn.Tanh())
opt = torch.optim.Adam(decoder.parameters())
codes = torch.randn(4, 8)
loss = decoder(codes).abs().mean()
opt.zero_grad()
loss.backward()
opt.step()


def show(dec, z):
    dec.eval()
    pictures = dec(z).view(-1, 3, 4, 4)
    render(pictures)


show(decoder, codes)
"""
        ),
        # near miss: the same engine step already under `@torch.no_grad()`
        Valid(
            """
import torch
from torch import nn
from ignite.engine import Engine

net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def fit_step(engine, batch):
    net.train()
    x, y = batch
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()


@torch.no_grad()
def score_step(engine, batch):
    net.eval()
    x, y = batch
    out = net(x)
    return out, y


trainer = Engine(fit_step)
scorer = Engine(score_step)
"""
        ),
        # near miss: a `*_step` function called directly, whose outputs (with their graph) are kept
        Valid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))


def score_step(engine, batch):
    net.eval()
    x, y = batch
    out = net(x)
    return out, y


outputs = [score_step(None, b) for b in [(torch.ones(1, 4), torch.zeros(1))]]
"""
        ),
        # eval mode, but the outputs are yielded with their graph, or differentiated (attribution)
        """
import torch


def features(model, loader):
    model.eval()
    for x, _ in loader:
        yield model(x)


def attribution(model, x, target):
    model.eval()
    x = x.clone().requires_grad_(True)
    score = model(x)[0, target]
    score.backward()
    return x.grad.abs()
""",
        # the helper's output returned to a caller, or handed to an unknown callable: a gradient may be taken
        # there; a caller already under `no_grad`
        """
import torch
import torch.nn.functional as F


def scores(net, x):
    return F.softmax(net(x), dim=-1)


def fit(net, opt, loader):
    for x, y in loader:
        opt.zero_grad()
        F.nll_loss(scores(net, x).log(), y).backward()
        opt.step()


def probe(net, x):
    out = scores(net, x)
    return out


def log_loss(net, x, y, logger):
    logger.record(F.nll_loss(scores(net, x).log(), y))


@torch.no_grad()
def agreement(net, loader):
    return sum((scores(net, x).argmax(-1) == y).sum().item() for x, y in loader)
""",
        # a method named like a model on an object that is none (a training library's helper)
        """
import torch

def evaluate(model, loader, accelerator):
    for x, y in loader:
        unwrapped = accelerator.unwrap_model(model)
        print(unwrapped)
""",
        Valid(
            """
import torch


def test(model, test_loader, device):
    model.eval()
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            outputs = model(images.to(device))
            _, predicted = torch.max(outputs, 1)
            total += labels.size(0)
            correct += (predicted == labels.to(device)).sum().item()
    return 100 * correct / total
"""
        ),
        Valid(
            """
import torch


@torch.inference_mode()
def predict(model, batch):
    model.eval()
    return model(batch).argmax(dim=-1)


@torch.no_grad
def evaluate(model, loader):
    model.eval()
    return [model(x).argmax(1) for x in loader]
"""
        ),
        Valid(
            """
import torch
import pytorch_lightning as pl


class Classifier(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.model(x)
        self.log("val_acc", (logits.argmax(1) == y).float().mean())
"""
        ),
        Valid(
            """
import torch


def evaluate(model, loader):
    model.eval()
    acc = 0
    for x, y in loader:
        acc += (model(x).argmax(1) == y).float().mean().item()
    return acc


def main(model, val_loader):
    with torch.no_grad():
        print(evaluate(model, val_loader))
"""
        ),
        Valid(
            """
import torch


def evaluate_robustness(model, loader, eps=0.03):
    model.eval()
    correct = 0
    for x, y in loader:
        x.requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        grad, = torch.autograd.grad(loss, x)
        correct += (model(x + eps * grad.sign()).argmax(1) == y).sum().item()
    return correct
"""
        ),
        Valid(
            """
import torch


def predict(model, x):
    return model(x)
"""
        ),
        Valid(
            """
import torch


def test_forward_shape():
    model = torch.nn.Linear(4, 2)
    for batch in [torch.zeros(3, 4)]:
        out = model(batch)
        assert out.shape == (3, 2)
"""
        ),
        Valid(
            """
import torch


def train(model, loader, optimizer, criterion):
    model.train()
    correct = 0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
        correct += (out.argmax(1) == y).sum().item()
    return correct
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def forward(self, x):
        return self.encoder(x)

    def predict(self, batches):
        preds = []
        for x in batches:
            preds.append(self.encoder(x).argmax(-1))
        return preds
"""
        ),
        Valid(
            """
import torch


def evaluate(model, loader, metric):
    model.eval()
    for x, y in loader:
        with torch.no_grad():
            feats = model.backbone(x)
        metric.update(model.head(feats), y)
    return metric.compute()
"""
        ),
        Valid(
            """
import torch


def default_eval_fn(model, calib_data):
    \"\"\"Run the model over calibration data so that the observers record ranges.\"\"\"
    for data, _target in calib_data:
        model(data)


class TestDistributed(object):
    def _test_ddp_step(self, model_base, model_ddp, loader):
        for x, y in loader:
            out = model_ddp(x)
            self._model_step_with_zero_grad(model_base)
            accuracy = (out.argmax(1) == y).float().mean()
            self.assertGreater(accuracy, 0.5)


def evaluate_export(model, inputs, tolerance):
    for x in inputs:
        errors = compare_onnx_pytorch_model_with_input(model, x)
        assert max(errors) < tolerance
"""
        ),
        Valid(
            """
import torch
from transformers import Pipeline


class LabelPipeline(Pipeline):
    def predict(self, batches):
        preds = []
        for batch in batches:
            preds.append(self.model(**batch).logits.argmax(-1))
        return preds
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


cnn = CNN()
criterion = nn.CrossEntropyLoss()


def evaluate_batch(x, y):
    outputs = cnn(x)
    return criterion(outputs, y)


def train(loader, val_loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = evaluate_batch(x, y)
        loss.backward()
        optimizer.step()
    cnn.eval()
    with torch.no_grad():
        return sum(evaluate_batch(x, y).item() for x, y in val_loader)
"""
        ),
        # the backward pass runs inside a loss-scaler object it is given: an epoch of training
        Valid(
            """
import torch


def validate_epoch(model, loader, optimizer, loss_scaler):
    correct = 0
    for x, y in loader:
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss_scaler(loss, optimizer, parameters=model.parameters())
        correct += (out.argmax(1) == y).sum().item()
    return correct
"""
        ),
        # training with a decoding step (free-running decoder, `model.zero_grad()`): training, not evaluation
        Valid(
            """
import torch
import torch.nn.functional as F


def train_free_running(model, loader, optimizer, steps):
    for src, tgt in loader:
        tokens = src[:, :1]
        for _ in range(steps):
            logits = model(tokens)
            tokens = torch.cat([tokens, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def sample_and_fit(model, ids, steps):
    for _ in range(steps):
        model.zero_grad()
        out = model(ids)
        nxt = out[:, -1].argmax(-1, keepdim=True)
        out.logsumexp(-1).mean().backward()
        ids = torch.cat([ids, nxt], dim=1)
    return ids
"""
        ),
        # sampling already under `inference_mode`, or under `no_grad` at every call site
        Valid(
            """
import torch


def greedy(model, ids, steps):
    for _ in range(steps):
        nxt = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
    return ids


@torch.inference_mode()
def sample(model, ids, steps):
    for _ in range(steps):
        probs = model(ids)[:, -1].softmax(-1)
        ids = torch.cat([ids, torch.multinomial(probs, 1)], dim=1)
    return ids


def show(model, prompt):
    with torch.no_grad():
        print(greedy(model, prompt, 10))
"""
        ),
        # the sampled log-probabilities are returned or handed to a callable, the scores stacked for a loss:
        # training data
        Valid(
            """
import torch


def rollout(policy_net, state, horizon):
    log_probs = []
    for _ in range(horizon):
        dist = torch.distributions.Categorical(logits=policy_net(state))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state = state.roll(1) + action
    return torch.stack(log_probs)


def rollout_and_update(policy_net, state, horizon, update):
    log_probs = []
    for _ in range(horizon):
        dist = torch.distributions.Categorical(logits=policy_net(state))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        state = state.roll(1) + action
    update(-torch.stack(log_probs).sum())


def decode_for_training(decoder, token, hidden, length):
    outputs = []
    for _ in range(length):
        scores, hidden = decoder(token, hidden)
        outputs.append(scores)
        token = scores.argmax(-1)
    return torch.stack(outputs, 1)
"""
        ),
        # a class object passed as a value: calling it builds a model, it runs none
        Valid(
            """
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(0.2), nn.Linear(dim, 1))

    def forward(self, x):
        return self.net(x)


def evaluate_sizes(model, loader, dim=8):
    sizes = []
    for x, y in loader:
        built = model(dim)
        sizes.append(sum(p.numel() for p in built.parameters()))
    return sizes


def test_builds(Net, widths):
    acc = []
    for width in widths:
        acc.append(Net(width))
    return acc


evaluate_sizes(Discriminator, [])
test_builds(Discriminator, [4, 8])
test_builds(nn.Linear, [4])
"""
        ),
        # after the training the function returns the output, or differentiates it
        Valid(
            """
import torch
import torch.nn as nn


def fit_and_predict(loader, x_new):
    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    scores = net(x_new)
    return scores


def fine_tune_twice(loader, x_new, y_new):
    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    logits = net(x_new)
    extra = nn.functional.cross_entropy(logits, y_new)
    extra.backward()
    opt.step()
"""
        ),
        # a method of the model that trains is no prediction; loaded weights that are fine-tuned next
        Valid(
            """
import torch
from torch import nn


class Duo(nn.Module):
    def __init__(self):
        super().__init__()
        self.maker = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))

    def fit_round(self, noise, opt):
        opt.zero_grad()
        loss = self.maker(noise).pow(2).mean()
        loss.backward()
        opt.step()
        return loss.item()


duo = Duo()
duo.load_state_dict(torch.load("duo.pt", weights_only=True))
opt = torch.optim.Adam(duo.parameters())
last = duo.fit_round(torch.randn(16, 6), opt)
tuned = duo.maker(torch.randn(16, 6))
tuned.pow(2).mean().backward()
"""
        ),
        # after the fit, the helper hands back what carries the graph: probabilities, the loss; or it
        # scores a model built anew after the fit
        Valid(
            """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 3)

    def forward(self, batch):
        x, y = batch
        scores = self.net(x)
        loss = F.cross_entropy(scores, y)
        hits = scores.softmax(-1)
        return loss, hits

    def training_step(self, batch, batch_idx):
        loss, _ = self.forward(batch)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_and_score(loader, batch):
    trainer = pl.Trainer(max_epochs=3)
    model = Classifier()
    trainer.fit(model, loader)
    _, train_hits = model.forward(batch)
    return {"train": train_hits}
"""
        ),
        Valid(
            """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 3)

    def forward(self, batch):
        x, y = batch
        scores = self.net(x)
        loss = F.cross_entropy(scores, y)
        hits = (scores.argmax(dim=-1) == y).float().mean()
        return loss, hits

    def training_step(self, batch, batch_idx):
        loss, _ = self.forward(batch)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_and_score(loader, batch):
    trainer = pl.Trainer(max_epochs=3)
    model = Classifier()
    trainer.fit(model, loader)
    train_loss, train_hits = model.forward(batch)
    return {"train": train_hits, "loss": train_loss}
"""
        ),
        Valid(
            """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 3)

    def forward(self, batch):
        x, y = batch
        scores = self.net(x)
        loss = F.cross_entropy(scores, y)
        hits = (scores.argmax(dim=-1) == y).float().mean()
        return loss, hits

    def training_step(self, batch, batch_idx):
        loss, _ = self.forward(batch)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_and_score(loader, batch):
    trainer = pl.Trainer(max_epochs=3)
    model = Classifier()
    trainer.fit(model, loader)
    model = Classifier()
    _, train_hits = model.forward(batch)
    return {"train": train_hits}
"""
        ),
        # near miss of the evaluation generator: what the loop receives is differentiated (a training
        # pass over a generator), or the caller reads gradients (a saliency map)
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


def pairs(net, rows):
    for x, y in rows:
        yield net(x), y


def with_inputs(net, rows):
    for x, _ in rows:
        x.requires_grad_(True)
        yield net(x), x


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
rows = [(torch.randn(3, 4), torch.randint(0, 2, (3,)))]
for out, y in pairs(net, rows):
    step_loss = F.cross_entropy(out, y)
    opt.zero_grad()
    step_loss.backward()
    opt.step()
for k, (out, x) in enumerate(with_inputs(net, rows)):
    out.max(1).values.sum().backward()
    print(k, x.grad.abs().mean().item())
"""
        ),
        # near miss: the yielded outputs are handed to a callable whose code is not in view
        Valid(
            """
import torch
import torch.nn as nn


def pairs(net, rows):
    net.eval()
    for x, y in rows:
        yield net(x), y


def report(net, rows, sink):
    for out, y in pairs(net, rows):
        sink(out, y)
"""
        ),
        # a demonstration of saving and loading: nothing is trained anywhere and the weights loaded back are
        # the ones just saved; no evaluation of a trained model
        Valid(
            """
import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.fc(self.drop(x))


first = Tiny()
torch.save(first.state_dict(), "tiny.pt")
second = Tiny()
second.load_state_dict(torch.load("tiny.pt"))
x = torch.randn(4, 3)
print(second(x).argmax(1).tolist())
same = torch.allclose(first.fc.weight, second.fc.weight)
print(same)
"""
        ),
        # near miss of a model method run in a function: the method turns gradients off itself (a decorator,
        # or a `with` block around the layers it runs)
        Valid(
            """
import torch
import torch.nn as nn


class Lm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.out = nn.Linear(8, 10)

    def forward(self, x):
        return self.out(self.emb(x))

    @torch.no_grad()
    def extend(self, ids, n):
        for _ in range(n):
            ids = torch.cat([ids, self(ids)[:, -1].argmax(-1, keepdim=True)], 1)
        return ids

    def extend2(self, ids, n):
        with torch.no_grad():
            for _ in range(n):
                ids = torch.cat([ids, self(ids)[:, -1].argmax(-1, keepdim=True)], 1)
        return ids


def check(lm, rows):
    lm.eval()
    got = lm.extend(rows, 3)
    got2 = lm.extend2(rows, 3)
    return got.tolist(), got2.tolist()


lm = Lm()
print(check(lm, torch.zeros(2, 1, dtype=torch.long)))
"""
        ),
        # near miss: the prediction kept on the trainer is differentiated (`self.pred` reaches the loss)
        Valid(
            """
import torch
import torch.nn as nn


class Fit:
    def __init__(self):
        self.net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.xv, self.yv = torch.randn(16, 4), torch.randn(16, 1)

    def predict(self):
        self.net.eval()
        return self.net(self.xv)

    def run(self, rounds):
        for _ in range(rounds):
            self.opt.zero_grad()
            self.pred = self.predict()
            loss = (self.pred - self.yv).pow(2).mean()
            loss.backward()
            self.opt.step()


Fit().run(2)
"""
        ),
        # near miss: a parameter called `model` that nothing shows holds a module (a caller passes a plain
        # function): its name decides nothing
        Valid(
            """
import torch


def score(model, batches):
    hits = 0
    for x, y in batches:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits


def baseline(batches, w):
    return score(lambda x: x @ w, batches)
"""
        ),
        # near miss: the loss goes, with the optimizer, to a method the agent inherits from a class of another
        # file: code not in view given an optimizer trains
        Valid(
            """
import torch
import torch.nn as nn
from agents.base import BaseAgent


class Agent(BaseAgent):
    def __init__(self):
        super().__init__()
        self.critic = nn.Linear(4, 1)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def critic_loss(self, states, targets):
        return (self.critic(states).squeeze(1) - targets).pow(2).mean()

    def learn(self, states, targets):
        loss = self.critic_loss(states, targets)
        self.update_critic(loss)

    def update_critic(self, loss):
        self.take_optimisation_step(self.critic_optimizer, self.critic, loss)
"""
        ),
        # a lambda given as a default runs where it is called (here under `no_grad`); its `model` is its own
        # parameter, not the annotated one of the function around it
        """
import torch
from torch import nn

def make_evaluator(model: nn.Module, forward=lambda model, x: model(x)):
    def step(batch):
        model.eval()
        with torch.no_grad():
            return forward(model, batch)
    return step
""",
        # near miss: the arm's output (a teacher's targets) reaches the loss that is backpropagated after it
        """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.1), nn.Linear(8, 2))
teacher = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.1), nn.Linear(8, 2))
opt = torch.optim.Adam(net.parameters())
x = torch.randn(64, 2)
soft = None
for step in range(10):
    if step % 5 == 0:
        teacher.eval()
        soft = teacher(x)
    loss = ((net(x) - soft) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def train(net, teacher, opt, x):
    for step in range(10):
        if step % 5 == 0:
            teacher.eval()
            soft = teacher(x)
        loss = ((net(x) - soft) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # a model's own methods that leave the mode to their caller, or switch to eval mode to compute a
        # loss they return for training (a distillation target): no evaluation of their own
        """
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        return self.fc(self.drop(x))

    def scores(self, x):
        return F.softmax(self(x), dim=1).tolist()

    def frozen_loss(self, x, y):
        self.eval()
        return F.cross_entropy(self(x), y)


def step(net, opt, x, y):
    loss = net.frozen_loss(x, y)
    loss.backward()
    opt.step()
""",
        # after each epoch's batches: a generator step whose sample reaches the next backward pass, an output
        # kept for the next iteration's loss, and a prediction under a module's own decorator that turns
        # gradients off around the function it wraps
        """
import torch
import torch.nn as nn


def nograd(f):
    def wrapped(*args, **kwargs):
        with torch.no_grad():
            return f(*args, **kwargs)
    return wrapped


@nograd
def predict(net, x):
    net.eval()
    return net(x).argmax(1).tolist()


def fit(gen, disc, batches, g_opt, d_opt, z):
    previous = None
    for epoch in range(5):
        for real in batches:
            d_opt.zero_grad()
            d_loss = (disc(gen(z).detach()) - disc(real)).mean()
            d_loss.backward()
            d_opt.step()
        fake = gen(z)
        g_loss = -disc(fake).mean()
        if previous is not None:
            g_loss = g_loss + (fake - previous).pow(2).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        previous = gen(z)
        print(epoch, g_loss.item(), predict(disc, real))
""",
        # the same pretrained model fine-tuned through a helper that hands its logits back to the loss
        """
import torch.nn.functional as F
from torch.optim import AdamW
from transformers import GPT2LMHeadModel

model = GPT2LMHeadModel.from_pretrained("gpt2")
opt = AdamW(model.parameters(), lr=1e-5)


def logits_of(tokens, model):
    return model(input_ids=tokens).logits


def tune(batches):
    for tokens in batches:
        out = logits_of(tokens[:, :-1], model)
        loss = F.cross_entropy(out.flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # a two-pass step (sharpness-aware): the second forward after the first step is backpropagated too
        """
import torch.nn.functional as F


def sharp_step(model, opt, x, y):
    F.cross_entropy(model(x), y).backward()
    opt.first_step(zero_grad=True)
    second = F.cross_entropy(model(x), y)
    second.backward()
    opt.second_step(zero_grad=True)
    return second.item()
""",
        # the same output handed to that helper before it is made a numpy copy: the helper may need its graph
        """
import torch
from plotting import scatter_classes


def show(model, features, topology):
    model.eval()
    scores, _ = model((features, topology))
    scatter_classes(scores, topology)
    scores = scores.cpu().numpy()
    return scores.shape
""",
        # the model's `init_hidden` only makes zero tensors: no forward pass outside `no_grad`
        """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y[:, -1]), h

    def init_hidden(self, batch):
        weight = next(self.parameters()).data
        return weight.new(1, batch, self.hidden).zero_()


net = Tagger(100, 16)
opt = torch.optim.Adam(net.parameters())
for x, y in train_loader:
    opt.zero_grad()
    out, _ = net(x, net.init_hidden(x.size(0)))
    nn.functional.binary_cross_entropy_with_logits(out.squeeze(1), y).backward()
    opt.step()

net.eval()
h = net.init_hidden(32)
with torch.no_grad():
    for x, y in test_loader:
        out, h = net(x, h)
        print((out > 0).float().mean().item())
""",
        # near miss: the second run of the trained network gives the target of the loss (detached, but
        # what it computes reaches the backward pass by name)
        """
import torch


def learn(net, opt, batches, gamma):
    for s, a, r, s2 in batches:
        q = net(s).gather(1, a).squeeze(1)
        q_next = net(s2).max(1)[0].detach()
        loss = ((q - (r + gamma * q_next)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # near miss: a library model built without weights, run once to see its output's shape
        """
from torchvision import models

net = models.resnet18(weights=None)
print(net(batch).shape)
""",
        # near miss: the preprocessing of a library model's weights (named through a module-level alias of the
        # weights) is no model: only the model's own call needs no_grad, and it has it
        """
import torch
import torchvision

weights = torchvision.models.EfficientNet_B0_Weights.DEFAULT
preprocess = weights.transforms()
net = torchvision.models.efficientnet_b0(weights=weights).eval()


def predict(img):
    batch = preprocess(img).unsqueeze(0)
    with torch.inference_mode():
        return net(batch).softmax(dim=1)
""",
        # near miss: after the inner steps of a meta-learning update, the loss on the held-out tasks is
        # differentiated by `torch.autograd.grad` (no backward pass, but its graph is needed all the same)
        """
import copy

import torch
import torch.nn.functional as F


def meta_update(net, opt, tasks):
    opt.zero_grad()
    for p in net.parameters():
        p.grad = torch.zeros_like(p)
    for (x_in, y_in), (x_out, y_out) in tasks:
        inner = copy.deepcopy(net)
        inner_opt = torch.optim.SGD(inner.parameters(), lr=0.1)
        inner_opt.zero_grad()
        F.cross_entropy(inner(x_in), y_in).backward()
        inner_opt.step()
        held_out = F.cross_entropy(inner(x_out), y_out)
        grads = torch.autograd.grad(held_out, list(inner.parameters()))
        for p, g in zip(net.parameters(), grads):
            p.grad.add_(g)
    opt.step()
""",
        # near miss: the same plain-script `eval_step`, but a forward hook keeps the activations it computes and a
        # loss of them is differentiated
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
features = []
net[0].register_forward_hook(lambda module, inputs, output: features.append(output))


def train_step(x, y):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()


def eval_step(x, y):
    out = net(x)
    return (out.argmax(1) == y).float().mean().item()


for epoch in range(3):
    for x, y in batches:
        train_step(x, y)
    for x, y in held_out:
        print(eval_step(x, y))
    features[-1].pow(2).mean().backward()
"""
        ),
        # near miss: the same one-call helper in the main block on a model that never got trained weights
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


def label_of(model, x):
    return model(x).argmax(1).tolist()


if __name__ == "__main__":
    net = Net()
    print(label_of(net, torch.randn(4, 8)))
"""
        ),
        # near miss: the dev-set loop keeps the helper's losses with their graph and a backward pass takes them
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.Linear(32, 100))
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()


def batch_loss(batch):
    x, y = batch
    return criterion(model(x), y)


for epoch in range(3):
    for batch in train_batches:
        loss = batch_loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    losses = []
    for batch in dev_batches:
        losses.append(batch_loss(batch))
    optimizer.zero_grad()
    torch.stack(losses).mean().backward()
    optimizer.step()
"""
        ),
        # near miss: the loaded model's output in the main block is differentiated (a gradient probe)
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pth"))
    out = net(torch.randn(4, 8))
    loss = out.logsumexp(1).mean()
    loss.backward()
    print(net.fc.weight.grad.norm())
"""
        ),
        # near miss: a model of plain tensors with hand-written gradients (nothing requires grad): its forward
        # pass records nothing, so `no_grad` would save nothing
        """
import torch
import torch.nn as nn


class Logistic(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = torch.zeros(dim, 1)
        self.b = torch.scalar_tensor(0)

    def forward(self, x):
        return torch.sigmoid(self.w.T @ x + self.b)

    def backward(self, x, yhat, y):
        self.dw = x @ (yhat - y).T / x.shape[1]
        self.db = (yhat - y).mean()

    def step(self, lr):
        self.w = self.w - lr * self.dw
        self.b = self.b - lr * self.db


model = Logistic(4)
for epoch in range(100):
    yhat = model(x_train)
    model.backward(x_train, yhat, y_train)
    model.step(0.1)
    print(((model(x_test) > 0.5).float() == y_test).float().mean().item())
""",
        # a validation step made by a factory and handed to the loop that runs it: the only call handing it
        # over is under `torch.no_grad()`
        Valid(
            """
import numpy as np
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.2), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def make_train_step_fn(model, loss_fn, optimizer):
    def perform_train_step_fn(x, y):
        model.train()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()
    return perform_train_step_fn


def make_val_step_fn(model, loss_fn):
    def perform_val_step_fn(x, y):
        model.eval()
        yhat = model(x)
        loss = loss_fn(yhat, y)
        return loss.item()
    return perform_val_step_fn


def mini_batch(data_loader, step_fn):
    losses = []
    for x_batch, y_batch in data_loader:
        losses.append(step_fn(x_batch, y_batch))
    return np.mean(losses)


train_step_fn = make_train_step_fn(model, loss_fn, optimizer)
val_step_fn = make_val_step_fn(model, loss_fn)
train_loader, val_loader = [], []
for epoch in range(10):
    loss = mini_batch(train_loader, train_step_fn)
    with torch.no_grad():
        val_loss = mini_batch(val_loader, val_step_fn)
"""
        ),
        # the model's own sampling method switches to eval mode and decodes under `torch.no_grad()`; the
        # methods it also calls run no layer (`self._device()` reads a parameter's device)
        Valid(
            """
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.z_dim = z_dim
        self.dec = nn.Sequential(nn.Linear(z_dim, 32), nn.Dropout(0.1), nn.Linear(32, 64))

    def _device(self):
        return next(self.parameters()).device

    def decode(self, z):
        return torch.sigmoid(self.dec(z))

    def sample(self, n):
        self.eval()
        z = torch.randn(n, self.z_dim).to(self._device())
        with torch.no_grad():
            x = self.decode(z)
        return x


vae = VAE()
opt = torch.optim.Adam(vae.parameters())
for z in []:
    loss = vae.decode(z).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
images = vae.sample(16)
print(images.shape)
"""
        ),
        # after `model.eval()` in the epoch, a loop that backpropagates through the model (a Fisher estimate):
        # it needs the graph
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters())
loss_func = nn.BCEWithLogitsLoss()


def generate_batches(dataset, batch_size, shuffle=True, drop_last=True):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    for x, y in loader:
        yield {"x": x, "y": y}


def compute_accuracy(y_pred, y_target):
    n_correct = torch.eq((torch.sigmoid(y_pred) > 0.5).long(), y_target).sum().item()
    return n_correct / len(y_pred) * 100


train_set, val_set = [], []
for epoch in range(10):
    model.train()
    batch_generator = generate_batches(train_set, 32)
    for batch_index, batch_dict in enumerate(batch_generator):
        opt.zero_grad()
        y_pred = model(batch_dict["x"])
        loss = loss_func(y_pred, batch_dict["y"])
        loss_t = loss.item()
        loss.backward()
        opt.step()
        acc_t = compute_accuracy(y_pred, batch_dict["y"])
    model.eval()
    batch_generator = generate_batches(val_set, 32)
    fisher = [torch.zeros_like(p) for p in model.parameters()]
    for batch_index, batch_dict in enumerate(batch_generator):
        model.zero_grad()
        y_pred = model(batch_dict["x"])
        loss_func(y_pred, batch_dict["y"]).backward()
        for f, p in zip(fisher, model.parameters()):
            f += p.grad.pow(2)
"""
        ),
        # the training step's validation forward hands its loss tensor back: a caller may differentiate it
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
features = torch.randn(100, 8)
labels = torch.randint(0, 3, (100,))
idx_train, idx_val = torch.arange(60), torch.arange(60, 80)
fastmode = False


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features)
    loss_train = F.cross_entropy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()

    if not fastmode:
        model.eval()
        output = model(features)

    loss_val = F.cross_entropy(output[idx_val], labels[idx_val])
    print(epoch, loss_train.item(), loss_val.item())
    return loss_val


for epoch in range(100):
    train(epoch)
"""
        ),
        # a trainer keeps the validation step its factory makes on itself; the method that runs a step picks
        # it when its flag is true, and the only call passing that flag is under `torch.no_grad()`
        Valid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, val_loader):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            loader = self.val_loader
            step_fn = self.val_step_fn
        else:
            loader = self.train_loader
            step_fn = self.train_step_fn
        return [step_fn(x, y) for x, y in loader]

    def train(self, n_epochs):
        for _ in range(n_epochs):
            self._mini_batch(validation=False)
            with torch.no_grad():
                self._mini_batch(validation=True)


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).train(3)
"""
        ),
        # near miss: `torch` comes from a library's star import that re-exports it (`torch_snippets`):
        # its `no_grad` is torch's
        """
from torch_snippets import *
from torch.nn.utils.rnn import pack_padded_sequence
from torchvision import models

encoder = models.resnet18()


@torch.no_grad()
def validate_batch(data, encoder, criterion):
    encoder.eval()
    images, captions, lengths = data
    targets = pack_padded_sequence(captions, lengths, batch_first=True)[0]
    return criterion(encoder(images), targets)


print(validate_batch((torch.randn(2, 3, 64, 64), torch.tensor([[1], [2]]), [1, 1]), encoder, nn.CrossEntropyLoss()))
""",
        # a method of a module class through a base of the project (`nn.Module` by construction): library API
        Valid(
            """
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)


class Classifier(Backbone):
    def predict_proba(self, x):
        return torch.softmax(self.body(x), dim=1).detach().numpy()
"""
        ),
        # a policy-gradient agent keeps each action's log-probability for the update: its graph is needed
        Valid(
            """
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.Dropout(0.1), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, x):
        return torch.softmax(self.body(x), dim=-1)


class Agent:
    def __init__(self):
        self.policy = Policy()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.log_probs = []
        self.rewards = []

    def select_action(self, state):
        probs = self.policy(torch.from_numpy(state).float())
        m = Categorical(probs)
        action = m.sample()
        self.log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode(self):
        loss = torch.stack([-lp * r for lp, r in zip(self.log_probs, self.rewards)]).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.log_probs, self.rewards = [], []

    def run(self, env, episodes):
        for episode in range(episodes):
            state, _ = env.reset()
            done = False
            while not done:
                action = self.select_action(state)
                state, reward, terminated, truncated, _ = env.step(action)
                self.rewards.append(reward)
                done = terminated or truncated
            self.finish_episode()

"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def evaluate(model, batches):
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct


def features(extractor, images):
    return [extractor(img).mean().item() for img in images]


net = nn.Sequential(nn.Linear(4, 3))
net.requires_grad_(False)
net.eval()
data = [(torch.randn(2, 4), torch.tensor([0, 1]))]
print(evaluate(net, data))
backbone = nn.Linear(4, 4).eval()
for p in backbone.parameters():
    p.requires_grad = False
print(features(backbone, [torch.randn(1, 4)]))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.net(x) * t[:, None]


def sample(model, n, steps=5):
    model.eval()
    x = torch.randn(n, 4)
    for i in reversed(range(1, steps)):
        t = torch.full((n,), i / steps)
        noise = model(x, t)
        x = x - 0.1 * noise
    model.train()
    return x.clamp(-1, 1)


print(sample(Denoiser(), 2).requires_grad)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Meta(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.meta_optim = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def forward(self, x, y):
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.meta_optim.zero_grad()
        loss.backward()
        self.meta_optim.step()
        with torch.no_grad():
            return (self.net(x).argmax(1) == y).float().mean().item()


maml = Meta()
for step in range(3):
    acc = maml(torch.randn(8, 4), torch.randint(0, 2, (8,)))
    print(step, acc)
"""
        ),
        # the same learner called from the script's loop, its choice's log-probability backpropagated by `update`
        Valid(
            """
import random

import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
        self.optim = torch.optim.SGD(self.net.parameters(), lr=0.01)

    def choose(self, state):
        scores = self.net(torch.tensor(state, dtype=torch.float32)[None])
        dist = torch.distributions.Categorical(logits=scores)
        action = dist.sample()
        return int(action), dist.log_prob(action)

    def update(self, log_prob, reward):
        loss = -(log_prob * reward).sum()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()


learner = Learner()
for episode in range(50):
    action, log_prob = learner.choose([random.random() for _ in range(3)])
    learner.update(log_prob, random.random())
"""
        ),
        # a project that declares torch 0.3: `volatile=True` turns autograd off there
        Valid(
            """
import torch
from torch.autograd import Variable


def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(Variable(x, volatile=True))
        correct += (out.data.max(1)[1] == y).sum()
    return correct
""",
            options={"target-torch": "0.3"},
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftDice(nn.Module):
    def __init__(self, smooth=1.0, reduce_to="mean"):
        super().__init__()
        self.smooth = smooth
        self.reduce_to = reduce_to
        self.act = nn.Sigmoid()

    def forward(self, logits, mask):
        p = self.act(logits)
        inter = (p * mask).sum(dim=(1, 2))
        return 1 - (2 * inter + self.smooth) / (p.sum(dim=(1, 2)) + mask.sum(dim=(1, 2)) + self.smooth)


def validate(net, batches, loss_fn):
    net.eval()
    scores = []
    for x, mask in batches:
        with torch.no_grad():
            logits = net(x)
        scores.append(loss_fn(logits, mask).mean().item())
    return sum(scores) / max(len(scores), 1)


net, loss_fn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Dropout(0.2), nn.Conv2d(4, 1, 1)), SoftDice()
print(validate(net, [(torch.randn(2, 1, 8, 8), torch.rand(2, 8, 8).round())], loss_fn))
"""
        ),
        Valid(
            """
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Focal(nn.Module):
    def __init__(self, gamma=2.0, alpha=None):
        super().__init__()
        self.gamma = gamma
        self.alpha = torch.tensor(alpha) if alpha is not None else None

    def forward(self, logits, target):
        logp = F.log_softmax(logits, dim=1).gather(1, target[:, None]).squeeze(1)
        if self.alpha is not None:
            self.alpha = self.alpha.to(logits.device)
            logp = logp * self.alpha[target]
        return (-(1 - logp.exp()) ** self.gamma * logp).mean()


def evaluate(net, batches, criterion):
    net.eval()
    total = 0.0
    for x, y in batches:
        with torch.no_grad():
            out = net(x)
        total += criterion(out, y).item()
    return total


net = nn.Sequential(nn.Linear(6, 3), nn.Dropout(0.1))
if sys.argv[1:] == ["focal"]:
    criterion = Focal(alpha=[0.2, 0.3, 0.5])
else:
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 1.0]))
print(evaluate(net, [(torch.randn(4, 6), torch.randint(0, 3, (4,)))], criterion))
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 64)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(torch.relu(self.l1(s))))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action.detach().cpu().numpy()[0, 0]


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(100):
    states = torch.randn(16, 3)
    loss = -policy(states).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    for _ in range(3):
        print(policy.get_action([0.1, 0.2, 0.3]))
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 64)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(torch.relu(self.l1(s))))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(100):
    states = torch.randn(16, 3)
    loss = -policy(states).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

for _ in range(3):
    (policy.get_action([0.1, 0.2, 0.3]) ** 2).sum().backward()
    opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.prenet = nn.Linear(4, 4)
        self.cell = nn.GRUCell(4, 4)
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        return self.out(self.cell(self.prenet(x)))

    def step(self, frame, hidden):
        hidden = self.cell(frame, hidden)
        return self.out(hidden), hidden

    def generate(self, first, steps):
        frame, hidden, frames = first, None, []
        for _ in range(steps):
            frame = self.prenet(frame)
            frame, hidden = self.step(frame, hidden)
            frames += [frame]
        return torch.stack(frames, 1)


decoder = Decoder()
mel = decoder.generate(torch.zeros(2, 4), 5)
print(mel.shape)
"""
        ),
        Valid(
            """
import torch
from torch import nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.last_logits = None

    def forward(self, s):
        logits = self.fc(s)
        self.last_logits = logits  # kept for the update below
        return logits

    def act(self, state):
        s = torch.as_tensor(state, dtype=torch.float32).unsqueeze(0)
        return self(s).argmax(-1).item()


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.SGD(policy.parameters(), lr=0.1)
for step in range(3):
    a = policy.act([0.1, 0.2, 0.3, float(step)])
    loss = F.cross_entropy(policy.last_logits, torch.tensor([1 - a]))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok", policy.fc.weight.sum().item())
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
        self.set_requires_grad(False)

    def set_requires_grad(self, state):
        for p in self.parameters():
            p.requires_grad = state

    def forward(self, x):
        return self.layers(x)


class Weights(nn.ModuleList):
    def __init__(self, n):
        super().__init__([nn.Conv2d(8, 1, 1, bias=False) for _ in range(n)])
        for p in self.parameters():
            p.requires_grad = False


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Features()
        self.lin = Weights(1)

    def forward(self, x, y):
        d = (self.net(x) - self.net(y)) ** 2
        return self.lin[0](d).mean()


metric = Perceptual()
metric.lin.load_state_dict(torch.load("weights.pt", weights_only=True))
scores = []
for _ in range(4):
    a, b = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
    scores.append(float(metric(a, b)))
print(sum(scores) / len(scores))
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)

    def hit_rate(self, x, y):
        return (self.predict(x) == y).float().mean().item()


# every call of `predict` (directly, or through `hit_rate`) runs under no_grad
scorers = [Scorer() for _ in range(3)]
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
with torch.no_grad():
    for s in scorers:
        print(s.hit_rate(x, y), s.predict(x))
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)


scorer = Scorer()
with torch.no_grad():
    labels = scorer.predict(torch.randn(16, 8)).tolist()
"""
        ),
        Valid(
            """
import torch
from torch import nn


def predict(model, batch):
    return model(batch)


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    loss = nn.functional.cross_entropy(net(torch.randn(16, 4)), torch.randint(0, 2, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

# one more step through the helper: its output is differentiated
scores = predict(net, torch.randn(5, 4))
scores.logsumexp(dim=1).mean().backward()
opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Logits(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return self.body(x)[:, :10]


# a fresh network wrapped: nothing trained or loaded before the call (a shape check)
classifier = Logits(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 20)))
out = classifier(torch.rand(4, 3, 32, 32))
print(out.shape)
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Weighted:
    # a loss of the project: what it does with the outputs is its own business

    def __init__(self, w):
        self.w = w

    def __call__(self, out, target):
        loss = ((out - target) ** 2 * self.w).mean()
        loss.backward()
        return loss


def spread_cost(net, criterion, inputs, targets):
    net.eval()
    out = net(inputs)
    return criterion(out, targets).item()


regressor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
opt = torch.optim.Adam(regressor.parameters())
xs, ys = torch.randn(64, 3), torch.randn(64, 1)
for epoch in range(5):
    regressor.train()
    opt.zero_grad()
    print(epoch, spread_cost(regressor, Weighted(2.0), xs, ys))
    opt.step()
"""
        ),
        Valid(
            """
import torch
from torch import nn


def forward_pass(model, batch):
    return model(batch)


def fine_tune(optimizer, out, target):
    loss = nn.functional.cross_entropy(out, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
net.load_state_dict(torch.load("weights.pt"))
# the helper's output is read as numbers, then trained on: its graph is needed
scores = forward_pass(net, torch.randn(5, 4))
print(scores.argmax(dim=1).tolist())
print(fine_tune(optimizer, scores, torch.randint(0, 2, (5,))))
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Member(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)


members = []
for _ in range(3):
    members.append(Member())
x = torch.randn(16, 8)
with torch.no_grad():
    for i, m in enumerate(members):
        print(i, m.predict(x).tolist())
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def overfit_one_batch(model, loader, optimizer, steps=50):
    images, labels = next(iter(loader))
    for _ in range(steps):
        optimizer.zero_grad()
        scores = model(images)
        loss = F.cross_entropy(scores, labels)
        loss.backward()
        optimizer.step()
    return (scores.argmax(dim=1) == labels).float().mean().item()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class TwoLayer(nn.Module):
    def __init__(self, d, h, c):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, c)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_two_layer():
    x = torch.zeros((64, 50))
    model = TwoLayer(50, 42, 10)
    scores = model(x)
    print(scores.size())  # a shape check of a model just built: nothing trained is evaluated


test_two_layer()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 16))

    def forward(self, z):
        return self.net(z)

    @torch.no_grad()
    def sample(self, n):
        return self.net(torch.randn(n, 16))


model = Sampler()
model.load_state_dict(torch.load("gen.pt"))
imgs = model.sample(25)
print(imgs.shape)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.apply(lambda m: None)
    model.eval()
    return model


model = get_model("model.pt")
image = torch.randn(1, 3, 64, 64)
mask = model(image)
print((mask.data[0, 0] > 0).float().mean())
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Scorer:
    def __init__(self, model):
        self.model = model

    def predict(self, x):
        return self.model(x).argmax(1).tolist()


net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
print(Scorer(net).predict(torch.randn(4, 10)))  # a model just built: nothing trained is evaluated
"""
        ),
    ]

    INVALID = [
        # frozen first, then every parameter switched back on and fine-tuned before the function runs the model
        Invalid(
            """
import torch
from torchvision.models import resnet18

net = resnet18(weights="DEFAULT")
net.requires_grad_(False)


def accuracy(x, y):
    net.eval()
    return (net(x).argmax(1) == y).float().mean().item()


for p in net.parameters():
    p.requires_grad = True
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(2, 3, 224, 224), torch.randint(0, 1000, (2,))
net.train()
opt.zero_grad()
torch.nn.functional.cross_entropy(net(x), y).backward()
opt.step()
print(accuracy(x, y))
""",
            fixed="""
import torch
from torchvision.models import resnet18

net = resnet18(weights="DEFAULT")
net.requires_grad_(False)


@torch.no_grad()
def accuracy(x, y):
    net.eval()
    return (net(x).argmax(1) == y).float().mean().item()


for p in net.parameters():
    p.requires_grad = True
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(2, 3, 224, 224), torch.randint(0, 1000, (2,))
net.train()
opt.zero_grad()
torch.nn.functional.cross_entropy(net(x), y).backward()
opt.step()
print(accuracy(x, y))
""",
            line=11,
        ),
        # the model pickled whole in a checkpoint dictionary, taken out and run for one prediction
        Invalid(
            """
import torch

state = torch.load("ranker.ckpt", weights_only=False)
ranker = state["net"]
ranker.eval()
query = torch.randint(0, 100, (1, 12))
print(ranker(query).argmax(-1).item())
""",
            fixed="""
import torch

state = torch.load("ranker.ckpt", weights_only=False)
ranker = state["net"]
ranker.eval()
query = torch.randint(0, 100, (1, 12))
with torch.no_grad():
    print(ranker(query).argmax(-1).item())
""",
            line=8,
        ),
        # the function runs the model before the script freezes it
        Invalid(
            """
import torch
from torchvision.models import resnet18

scorer = resnet18(weights="DEFAULT")


def report(x):
    top = scorer(x).softmax(dim=-1).max(dim=-1)
    print(top.values.tolist(), top.indices.tolist())


report(torch.randn(2, 3, 224, 224))
for weight in scorer.parameters():
    weight.requires_grad = False
""",
            fixed="""
import torch
from torchvision.models import resnet18

scorer = resnet18(weights="DEFAULT")


@torch.no_grad()
def report(x):
    top = scorer(x).softmax(dim=-1).max(dim=-1)
    print(top.values.tolist(), top.indices.tolist())


report(torch.randn(2, 3, 224, 224))
for weight in scorer.parameters():
    weight.requires_grad = False
""",
            line=9,
        ),
        # the boxes are copied to an array and then scaled in place: an array updated in place stays an array
        Invalid(
            """
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(8, 5)
        self.box = nn.Linear(8, 20)

    def forward(self, x):
        return self.score(x).sigmoid(), self.box(x).view(-1, 5, 4)


def detections(net, images, scale=2.0):
    net.eval()
    found = []
    for img in images:
        scores, boxes = net(img)
        scores = scores.detach().cpu().numpy()
        boxes = boxes.detach().cpu().numpy()
        boxes /= scale
        found.append(boxes[scores > 0.5])
    return found


print(len(detections(Detector(), [torch.randn(1, 8)])))
""",
            fixed="""
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(8, 5)
        self.box = nn.Linear(8, 20)

    def forward(self, x):
        return self.score(x).sigmoid(), self.box(x).view(-1, 5, 4)


def detections(net, images, scale=2.0):
    net.eval()
    found = []
    with torch.no_grad():
        for img in images:
            scores, boxes = net(img)
            scores = scores.detach().cpu().numpy()
            boxes = boxes.detach().cpu().numpy()
            boxes /= scale
            found.append(boxes[scores > 0.5])
    return found


print(len(detections(Detector(), [torch.randn(1, 8)])))
""",
            line=20,
        ),
        # an agent's action pick: the Q values are logged through a formatted string (text, no graph) and
        # turned into an int
        Invalid(
            """
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self):
        self.q = QNet()
        self.opt = torch.optim.Adam(self.q.parameters())

    def pick_action(self, state):
        self.q.eval()
        values = self.q(state)
        self.q.train()
        logger.info("Q values {}".format(values))
        return int(values.argmax().item())

    def learn(self, s, target):
        loss = (self.q(s) - target).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
""",
            fixed="""
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Agent:
    def __init__(self):
        self.q = QNet()
        self.opt = torch.optim.Adam(self.q.parameters())

    @torch.no_grad()
    def pick_action(self, state):
        self.q.eval()
        values = self.q(state)
        self.q.train()
        logger.info("Q values {}".format(values))
        return int(values.argmax().item())

    def learn(self, s, target):
        loss = (self.q(s) - target).pow(2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
""",
            line=26,
        ),
        # the scores are copied to an array and the name is bound again to a part of that array: what is kept
        # is an array, whatever the name held before
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


def kept_scores(net, batches, threshold=0.5):
    net.eval()
    kept = []
    for x in batches:
        probs = net(x).sigmoid()
        probs = probs.detach().cpu().numpy()
        probs = probs[probs > threshold]
        kept.append(probs.reshape(-1))
    return np.concatenate(kept)


print(kept_scores(Scorer(), [torch.randn(8, 16)]).mean())
""",
            fixed="""
import numpy as np
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(x)


@torch.no_grad()
def kept_scores(net, batches, threshold=0.5):
    net.eval()
    kept = []
    for x in batches:
        probs = net(x).sigmoid()
        probs = probs.detach().cpu().numpy()
        probs = probs[probs > threshold]
        kept.append(probs.reshape(-1))
    return np.concatenate(kept)


print(kept_scores(Scorer(), [torch.randn(8, 16)]).mean())
""",
            line=20,
        ),
        # models built in eval mode and unpacked from one tuple (`gen, critic = Gen().eval(), Critic().eval()`):
        # the samples and their scores reach only `topk` and `tolist()`
        Invalid(
            """
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 4))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def best_samples(n):
    gen, critic = Gen().eval(), Critic().eval()
    fake = gen(torch.randn(n, 8))
    scores = critic(fake).detach()
    return fake[scores.topk(2).indices].tolist()
""",
            fixed="""
import torch
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 4))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


@torch.no_grad()
def best_samples(n):
    gen, critic = Gen().eval(), Critic().eval()
    fake = gen(torch.randn(n, 8))
    scores = critic(fake).detach()
    return fake[scores.topk(2).indices].tolist()
""",
            line=26,
        ),
        # a callback of the training phase (Lightning runs `on_train_epoch_end` with autograd on) that
        # switches the model to eval mode, reconstructs images and only logs them
        Invalid(
            """
import torch
from lightning.pytorch.callbacks import Callback


class Reconstructions(Callback):
    def __init__(self, images):
        super().__init__()
        self.images = images

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.eval()
        rebuilt = pl_module(self.images.to(pl_module.device))
        pl_module.train()
        grid = torch.cat([self.images, rebuilt.cpu()], dim=0)
        trainer.logger.experiment.add_image("rebuilt", grid[0], global_step=trainer.global_step)
""",
            fixed="""
import torch
from lightning.pytorch.callbacks import Callback


class Reconstructions(Callback):
    def __init__(self, images):
        super().__init__()
        self.images = images

    @torch.no_grad()
    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.eval()
        rebuilt = pl_module(self.images.to(pl_module.device))
        pl_module.train()
        grid = torch.cat([self.images, rebuilt.cpu()], dim=0)
        trainer.logger.experiment.add_image("rebuilt", grid[0], global_step=trainer.global_step)
""",
            line=13,
            unsafe=True,
        ),
        # a decoding function bracketed by `lm.eval()` ... `lm.train()`: restoring the caller's mode is no
        # sign of training; the tokens it picks go back into a Python list that feeds the next step
        Invalid(
            """
import torch


def continue_text(lm, prompt_ids, steps=20):
    lm.eval()
    ids = list(prompt_ids)
    for _ in range(steps):
        window = torch.tensor(ids)[None, :]
        states, logits = lm(window)
        ids.append(logits[0, -1].argmax().item())
    lm.train()
    return ids
""",
            fixed="""
import torch


@torch.no_grad()
def continue_text(lm, prompt_ids, steps=20):
    lm.eval()
    ids = list(prompt_ids)
    for _ in range(steps):
        window = torch.tensor(ids)[None, :]
        states, logits = lm(window)
        ids.append(logits[0, -1].argmax().item())
    lm.train()
    return ids
""",
            line=10,
        ),
        # a step built inside a factory and handed to the engine there; its twin that trains is left alone
        Invalid(
            """
import torch
from torch import nn
from ignite.engine import Engine

net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def make_scorer(model):
    def step(engine, batch):
        model.eval()
        x, y = batch
        return model(x), y

    return Engine(step)


def make_trainer(model):
    def step(engine, batch):
        model.train()
        x, y = batch
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return Engine(step)


trainer = make_trainer(net)
scorer = make_scorer(net)
""",
            fixed="""
import torch
from torch import nn
from ignite.engine import Engine

net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def make_scorer(model):
    @torch.no_grad()
    def step(engine, batch):
        model.eval()
        x, y = batch
        return model(x), y

    return Engine(step)


def make_trainer(model):
    def step(engine, batch):
        model.train()
        x, y = batch
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return Engine(step)


trainer = make_trainer(net)
scorer = make_scorer(net)
""",
            line=14,
            unsafe=True,
        ),
        # the output goes only to plotting: torchvision's `make_grid` and matplotlib take no gradient
        Invalid(
            """
import matplotlib.pyplot as plt
import torch
from torch import nn
from torchvision.utils import make_grid

decoder = nn.Sequential(nn.Linear(8, 48), nn.Tanh())
opt = torch.optim.Adam(decoder.parameters())
codes = torch.randn(4, 8)
loss = decoder(codes).abs().mean()
opt.zero_grad()
loss.backward()
opt.step()


def show(dec, z):
    dec.eval()
    pictures = dec(z).view(-1, 3, 4, 4)
    sheet = make_grid(pictures, nrow=2)
    plt.imshow(sheet.permute(1, 2, 0).detach())
    plt.show()


show(decoder, codes)
""",
            fixed="""
import matplotlib.pyplot as plt
import torch
from torch import nn
from torchvision.utils import make_grid

decoder = nn.Sequential(nn.Linear(8, 48), nn.Tanh())
opt = torch.optim.Adam(decoder.parameters())
codes = torch.randn(4, 8)
loss = decoder(codes).abs().mean()
opt.zero_grad()
loss.backward()
opt.step()


@torch.no_grad()
def show(dec, z):
    dec.eval()
    pictures = dec(z).view(-1, 3, 4, 4)
    sheet = make_grid(pictures, nrow=2)
    plt.imshow(sheet.permute(1, 2, 0).detach())
    plt.show()


show(decoder, codes)
""",
            line=18,
            unsafe=True,
        ),
        # a step function handed to an engine (`Engine(score_step)`) and called by nothing else: what it
        # returns becomes the engine's output, read by its metrics; it trains nothing, so its forward pass
        # is an evaluation whatever it is called (the training step beside it is left alone)
        Invalid(
            """
import torch
from torch import nn
from ignite.engine import Engine

net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def fit_step(engine, batch):
    net.train()
    x, y = batch
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def score_step(engine, batch):
    net.eval()
    x, y = batch
    out = net(x)
    return out, y


trainer = Engine(fit_step)
scorer = Engine(score_step)
""",
            fixed="""
import torch
from torch import nn
from ignite.engine import Engine

net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def fit_step(engine, batch):
    net.train()
    x, y = batch
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss.item()


@torch.no_grad()
def score_step(engine, batch):
    net.eval()
    x, y = batch
    out = net(x)
    return out, y


trainer = Engine(fit_step)
scorer = Engine(score_step)
""",
            line=23,
            unsafe=True,
        ),
        # a generator that puts the model it runs in eval mode and yields only picks or numbers:
        # evaluation whatever it is called (the decorator gives the consumer its own mode at every yield)
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))


def predictions(model, batches):
    model.eval()
    for x in batches:
        yield model(x).argmax(-1)


for labels in predictions(net, [torch.randn(3, 4)]):
    print(labels.tolist())
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))


@torch.no_grad()
def predictions(model, batches):
    model.eval()
    for x in batches:
        yield model(x).argmax(-1)


for labels in predictions(net, [torch.randn(3, 4)]):
    print(labels.tolist())
""",
            line=11,
            unsafe=True,
        ),
        Invalid(
            """
import torch


def iter_scores(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)
        yield (out.argmax(1) == y).float().mean().item()
""",
            fixed="""
import torch


@torch.no_grad()
def iter_scores(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)
        yield (out.argmax(1) == y).float().mean().item()
""",
            line=8,
        ),
        # a loss helper shared with training: its result is backpropagated by `fit` only; `check` reads it
        # off the graph (float) and discards it, whatever the functions are called
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.criterion = nn.MSELoss()
        self.history = []

    def step_loss(self, batch):
        x, y = batch
        return self.criterion(self.model(x), y)

    def fit(self, batches):
        for batch in batches:
            self.optimizer.zero_grad()
            self.step_loss(batch).backward()
            self.optimizer.step()

    def check(self, batches):
        self.model.eval()
        for batch in batches:
            self.history.append(float(self.step_loss(batch)))
""",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.criterion = nn.MSELoss()
        self.history = []

    def step_loss(self, batch):
        x, y = batch
        return self.criterion(self.model(x), y)

    def fit(self, batches):
        for batch in batches:
            self.optimizer.zero_grad()
            self.step_loss(batch).backward()
            self.optimizer.step()

    @torch.no_grad()
    def check(self, batches):
        self.model.eval()
        for batch in batches:
            self.history.append(float(self.step_loss(batch)))
""",
            line=26,
            message="`step_loss` runs the model",
        ),
        # a helper returning probabilities: the caller turns them into an argmax count
        Invalid(
            """
import torch
import torch.nn.functional as F


def scores(net, x):
    return F.softmax(net(x), dim=-1)


def fit(net, opt, loader):
    net.train()
    for x, y in loader:
        opt.zero_grad()
        F.nll_loss(scores(net, x).log(), y).backward()
        opt.step()


def agreement(net, loader):
    hits = 0
    for x, y in loader:
        hits += (scores(net, x).argmax(-1) == y).sum().item()
    return hits
""",
            fixed="""
import torch
import torch.nn.functional as F


def scores(net, x):
    return F.softmax(net(x), dim=-1)


def fit(net, opt, loader):
    net.train()
    for x, y in loader:
        opt.zero_grad()
        F.nll_loss(scores(net, x).log(), y).backward()
        opt.step()


@torch.no_grad()
def agreement(net, loader):
    hits = 0
    for x, y in loader:
        hits += (scores(net, x).argmax(-1) == y).sum().item()
    return hits
""",
            line=21,
        ),
        # a notebook's prediction cell after the training cell
        Invalid(
            """
import torch
import torch.nn.functional as F

model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
for features, targets in train_loader:
    optimizer.zero_grad()
    F.cross_entropy(model(features), targets).backward()
    optimizer.step()

model.eval()
logits = model(features[0, None])
print(logits.softmax(dim=1))
""",
            fixed="""
import torch
import torch.nn.functional as F

model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
for features, targets in train_loader:
    optimizer.zero_grad()
    F.cross_entropy(model(features), targets).backward()
    optimizer.step()

model.eval()
with torch.no_grad():
    logits = model(features[0, None])
print(logits.softmax(dim=1))
""",
            line=13,
        ),
        Invalid(
            """
import torch


def validate(model, val_loader, device):
    model.eval()
    correct = 0
    total = 0
    for images, labels in val_loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        predicted = torch.argmax(outputs, dim=1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total
""",
            fixed="""
import torch


@torch.no_grad()
def validate(model, val_loader, device):
    model.eval()
    correct = 0
    total = 0
    for images, labels in val_loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        predicted = torch.argmax(outputs, dim=1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total
""",
            line=11,
            col=19,
        ),
        Invalid(
            """
import torch as th


def predict(net, batch):
    \"\"\"Class predictions for one batch.\"\"\"
    net.eval()
    return net(batch)
""",
            fixed="""
import torch as th


@th.no_grad()
def predict(net, batch):
    \"\"\"Class predictions for one batch.\"\"\"
    net.eval()
    return net(batch)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    # accuracy on the validation set
    for x, y in val_loader:
        correct += (model(x).argmax(1) == y).sum().item()
""",
            fixed="""
import torch

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    # accuracy on the validation set
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x).argmax(1) == y).sum().item()
""",
        ),
        Invalid(
            """
from torch.nn import Module


def run_test(model, loader):
    model.eval()
    for x in loader:
        yield model(x).argmax(1)
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision import models


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc(x)


D = Discriminator()
vgg16 = models.vgg16(weights=None)
clf = nn.Sequential(nn.Linear(64, 10), nn.Dropout(0.1), nn.Linear(10, 2))


def test(loader):
    D.eval()
    hits = 0
    for x, y in loader:
        hits += (D(x).squeeze(1) > 0).eq(y).sum().item()
    return hits


def report(loader):
    vgg16.eval()
    clf.eval()
    acc = []
    for x, y in loader:
        acc.append((vgg16(x).argmax(1) == y).float().mean().item())
    for x, y in loader:
        acc.append((clf(x).argmax(1) == y).float().mean().item())
    return acc
""",
            fixed="""
import torch
import torch.nn as nn
from torchvision import models


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc(x)


D = Discriminator()
vgg16 = models.vgg16(weights=None)
clf = nn.Sequential(nn.Linear(64, 10), nn.Dropout(0.1), nn.Linear(10, 2))


@torch.no_grad()
def test(loader):
    D.eval()
    hits = 0
    for x, y in loader:
        hits += (D(x).squeeze(1) > 0).eq(y).sum().item()
    return hits


def report(loader):
    vgg16.eval()
    clf.eval()
    acc = []
    with torch.no_grad():
        for x, y in loader:
            acc.append((vgg16(x).argmax(1) == y).float().mean().item())
        for x, y in loader:
            acc.append((clf(x).argmax(1) == y).float().mean().item())
    return acc
""",
            count=3,
        ),
        # the model output goes to a callable the function is given: it may differentiate (unsafe fix)
        Invalid(
            """
import torch


def validate(model, loader, on_batch):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(x)
        on_batch(out, y)
        correct += (out.argmax(1) == y).sum().item()
    return correct
""",
            fixed="""
import torch


@torch.no_grad()
def validate(model, loader, on_batch):
    model.eval()
    correct = 0
    for x, y in loader:
        out = model(x)
        on_batch(out, y)
        correct += (out.argmax(1) == y).sum().item()
    return correct
""",
            unsafe=True,
        ),
        # an evaluation generator: the decorator (a `with` block would leak into the consumer)
        Invalid(
            """
import torch


def evaluate_batches(model, loader):
    model.eval()
    for x, y in loader:
        yield (model(x).argmax(1) == y).float().mean().item()
""",
            fixed="""
import torch


@torch.no_grad()
def evaluate_batches(model, loader):
    model.eval()
    for x, y in loader:
        yield (model(x).argmax(1) == y).float().mean().item()
""",
        ),
        # a greedy decoding helper, whatever its name: the model runs on the token it picked
        Invalid(
            """
import torch


def extend_sequence(net, ids, steps):
    net.eval()
    while ids.size(1) < steps:
        logits = net(ids)
        next_id = logits[:, -1].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids
""",
            fixed="""
import torch


@torch.no_grad()
def extend_sequence(net, ids, steps):
    net.eval()
    while ids.size(1) < steps:
        logits = net(ids)
        next_id = logits[:, -1].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids
""",
            message="the loop runs `net` on a token picked from its own output",
            line=8,
        ),
        # sampling with `torch.multinomial`; the model is known from the caller
        Invalid(
            """
import torch
import torch.nn as nn


class CharLM(nn.Module):
    def __init__(self, vocab=50, width=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.drop(self.embed(ids)))


def draw(lm, ids, count, temperature=0.8):
    for _ in range(count):
        probs = torch.softmax(lm(ids)[:, -1] / temperature, dim=-1)
        ids = torch.cat((ids, torch.multinomial(probs, num_samples=1)), dim=1)
    return ids


lm = CharLM()
print(draw(lm, torch.zeros(1, 1, dtype=torch.long), 20))
""",
            fixed="""
import torch
import torch.nn as nn


class CharLM(nn.Module):
    def __init__(self, vocab=50, width=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.drop(self.embed(ids)))


@torch.no_grad()
def draw(lm, ids, count, temperature=0.8):
    for _ in range(count):
        probs = torch.softmax(lm(ids)[:, -1] / temperature, dim=-1)
        ids = torch.cat((ids, torch.multinomial(probs, num_samples=1)), dim=1)
    return ids


lm = CharLM()
print(draw(lm, torch.zeros(1, 1, dtype=torch.long), 20))
""",
            line=19,
        ),
        # beam-like `topk` and a distribution's `sample()` fed back
        Invalid(
            """
import torch


def translate(decoder, token, hidden, max_len):
    decoder.eval()
    words = []
    for _ in range(max_len):
        scores, hidden = decoder(token, hidden)
        _, top = scores.topk(1)
        token = top.squeeze(-1)
        words.append(token.item())
    return words


def roll(policy_net, state, horizon):
    policy_net.eval()
    actions = []
    for _ in range(horizon):
        action = torch.distributions.Categorical(logits=policy_net(state)).sample()
        actions.append(int(action))
        state = torch.roll(state, 1) + action
    return actions
""",
            fixed="""
import torch


@torch.no_grad()
def translate(decoder, token, hidden, max_len):
    decoder.eval()
    words = []
    for _ in range(max_len):
        scores, hidden = decoder(token, hidden)
        _, top = scores.topk(1)
        token = top.squeeze(-1)
        words.append(token.item())
    return words


@torch.no_grad()
def roll(policy_net, state, horizon):
    policy_net.eval()
    actions = []
    for _ in range(horizon):
        action = torch.distributions.Categorical(logits=policy_net(state)).sample()
        actions.append(int(action))
        state = torch.roll(state, 1) + action
    return actions
""",
            count=2,
            line=9,
        ),
        # only a hidden state is fed back (the picks are kept): weaker evidence, an unsafe fix
        Invalid(
            """
import torch


def tag_stream(rnn_model, frames):
    rnn_model.eval()
    hidden = None
    tags = []
    for frame in frames:
        out, hidden = rnn_model(frame, hidden)
        tags.append(out.argmax(-1).tolist())
    return tags
""",
            fixed="""
import torch


@torch.no_grad()
def tag_stream(rnn_model, frames):
    rnn_model.eval()
    hidden = None
    tags = []
    for frame in frames:
        out, hidden = rnn_model(frame, hidden)
        tags.append(out.argmax(-1).tolist())
    return tags
""",
            unsafe=True,
            line=10,
        ),
        # the prediction at the end of `main()`, after the training
        Invalid(
            """
import torch
import torch.nn as nn


def main(loader, x_test):
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(5):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    predicted = model(x_test).argmax(dim=1)
    print(predicted)
""",
            fixed="""
import torch
import torch.nn as nn


def main(loader, x_test):
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(5):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    with torch.no_grad():
        predicted = model(x_test).argmax(dim=1)
    print(predicted)
""",
            line=14,
        ),
        # the prediction at the end of the main block
        Invalid(
            """
import torch
from torch import nn, optim

if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    sgd = optim.SGD(net.parameters(), lr=0.05)
    for step in range(100):
        xs = torch.randn(32, 2)
        sgd.zero_grad()
        loss = (net(xs).squeeze(1) - xs.sum(1)).pow(2).mean()
        loss.backward()
        sgd.step()
    print(net(torch.tensor([[1.0, 2.0]])))
""",
            fixed="""
import torch
from torch import nn, optim

if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    sgd = optim.SGD(net.parameters(), lr=0.05)
    for step in range(100):
        xs = torch.randn(32, 2)
        sgd.zero_grad()
        loss = (net(xs).squeeze(1) - xs.sum(1)).pow(2).mean()
        loss.backward()
        sgd.step()
    with torch.no_grad():
        print(net(torch.tensor([[1.0, 2.0]])))
""",
            line=14,
        ),
        # a generator, run through its model's own method, after the adversarial training
        Invalid(
            """
import torch
from torch import nn


class Duo(nn.Module):
    def __init__(self):
        super().__init__()
        self.maker = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
        self.judge = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())

    def fake(self, noise):
        return self.maker(noise)


duo = Duo()
opt = torch.optim.Adam(duo.parameters())
for it in range(200):
    loss = -torch.log(duo.judge(duo.fake(torch.randn(16, 6)))).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

duo.eval()
points = duo.fake(torch.randn(100, 6))
print(points.detach())
""",
            fixed="""
import torch
from torch import nn


class Duo(nn.Module):
    def __init__(self):
        super().__init__()
        self.maker = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
        self.judge = nn.Sequential(nn.Linear(2, 1), nn.Sigmoid())

    def fake(self, noise):
        return self.maker(noise)


duo = Duo()
opt = torch.optim.Adam(duo.parameters())
for it in range(200):
    loss = -torch.log(duo.judge(duo.fake(torch.randn(16, 6)))).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

duo.eval()
with torch.no_grad():
    points = duo.fake(torch.randn(100, 6))
print(points.detach())
""",
            line=25,
        ),
        # the last cells of a notebook rebuild the model and load the checkpoint the training wrote
        Invalid(
            """
import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(10, 3), nn.BatchNorm1d(3))
encoder.load_state_dict(torch.load("encoder.pt", weights_only=True))
encoder.eval()
codes = encoder(torch.randn(8, 10))
print(codes.detach().numpy())
""",
            fixed="""
import torch
from torch import nn

encoder = nn.Sequential(nn.Linear(10, 3), nn.BatchNorm1d(3))
encoder.load_state_dict(torch.load("encoder.pt", weights_only=True))
encoder.eval()
with torch.no_grad():
    codes = encoder(torch.randn(8, 10))
print(codes.detach().numpy())
""",
            line=8,
        ),
        # accuracies of a model a Lightning trainer fitted, from forward passes with autograd on: the
        # helper hands back only the accuracy, a comparison's mean, never the loss's graph
        Invalid(
            """
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 3)

    def forward(self, batch):
        x, y = batch
        scores = self.net(x)
        loss = F.cross_entropy(scores, y)
        hits = (scores.argmax(dim=-1) == y).float().mean()
        return loss, hits

    def training_step(self, batch, batch_idx):
        loss, _ = self.forward(batch)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_and_score(loader, batch):
    trainer = pl.Trainer(max_epochs=3)
    model = Classifier()
    trainer.fit(model, loader)
    _, train_hits = model.forward(batch)
    return {"train": train_hits}
""",
            fixed="""
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 3)

    def forward(self, batch):
        x, y = batch
        scores = self.net(x)
        loss = F.cross_entropy(scores, y)
        hits = (scores.argmax(dim=-1) == y).float().mean()
        return loss, hits

    def training_step(self, batch, batch_idx):
        loss, _ = self.forward(batch)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit_and_score(loader, batch):
    trainer = pl.Trainer(max_epochs=3)
    model = Classifier()
    trainer.fit(model, loader)
    with torch.no_grad():
        _, train_hits = model.forward(batch)
    return {"train": train_hits}
""",
            line=32,
        ),
        # a method of a project model run inside a function, the model built in eval mode there and its
        # output read off the graph (`numpy()`); the training function calling the other method is left alone
        Invalid(
            """
import torch
import torch.nn as nn


class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 3, 1)
        self.norm = nn.BatchNorm2d(3)

    def blend(self, a, b):
        return self.norm(self.enc(a) + self.enc(b))

    def objective(self, a, b):
        return (self.blend(a, b) - a).pow(2).mean()


def paint(path, a, b):
    painter = Painter().eval()
    painter.load_state_dict(torch.load(path))
    picture = painter.blend(a, b)
    return picture.clamp(0, 1).cpu().numpy()


def fit(painter, pairs, opt):
    for a, b in pairs:
        opt.zero_grad()
        painter.objective(a, b).backward()
        opt.step()
""",
            fixed="""
import torch
import torch.nn as nn


class Painter(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 3, 1)
        self.norm = nn.BatchNorm2d(3)

    def blend(self, a, b):
        return self.norm(self.enc(a) + self.enc(b))

    def objective(self, a, b):
        return (self.blend(a, b) - a).pow(2).mean()


@torch.no_grad()
def paint(path, a, b):
    painter = Painter().eval()
    painter.load_state_dict(torch.load(path))
    picture = painter.blend(a, b)
    return picture.clamp(0, 1).cpu().numpy()


def fit(painter, pairs, opt):
    for a, b in pairs:
        opt.zero_grad()
        painter.objective(a, b).backward()
        opt.step()
""",
            line=22,
        ),
        # an evaluation generator: it puts the model in eval mode and yields its outputs; the caller, which
        # trains too, iterates them only into a count (the loop is the evaluation)
        Invalid(
            """
import torch
import torch.nn as nn


def outputs_of(net, rows):
    net.eval()
    for x, y in rows:
        yield net(x), y


def fit(net, rows, opt):
    for x, y in rows:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    hits = 0
    for out, y in outputs_of(net, rows):
        hits += (out.argmax(1) == y).sum().item()
    net.train()
    return hits
""",
            fixed="""
import torch
import torch.nn as nn


def outputs_of(net, rows):
    net.eval()
    for x, y in rows:
        yield net(x), y


def fit(net, rows, opt):
    for x, y in rows:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    hits = 0
    with torch.no_grad():
        for out, y in outputs_of(net, rows):
            hits += (out.argmax(1) == y).sum().item()
    net.train()
    return hits
""",
            line=18,
        ),
        # the same at module level, through `enumerate`, the yielded value a single tensor
        Invalid(
            """
import torch
from torch import nn


def scores(m, batches):
    m.eval()
    for b in batches:
        yield m(b).softmax(-1)


m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
for i, probs in enumerate(scores(m, [torch.randn(4, 3)])):
    print(i, probs.max(-1).values.tolist())
""",
            fixed="""
import torch
from torch import nn


def scores(m, batches):
    m.eval()
    for b in batches:
        yield m(b).softmax(-1)


m = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
with torch.no_grad():
    for i, probs in enumerate(scores(m, [torch.randn(4, 3)])):
        print(i, probs.max(-1).values.tolist())
""",
            line=13,
        ),
        # an object named like an optimizer but built from a plain settings class of the module: handing it
        # to `setattr` is no training step
        Invalid(
            """
import torch
import torch.nn as nn


class Settings(object):
    steps = 20
    start = 1


opt = Settings()


class Poet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.out = nn.Linear(16, 50)

    def forward(self, ids):
        return self.out(self.emb(ids))


def write(model, **changes):
    for k, v in changes.items():
        setattr(opt, k, v)
    model.eval()
    ids = [opt.start]
    for _ in range(opt.steps):
        nxt = model(torch.tensor(ids))[-1].argmax().item()
        ids.append(nxt)
    return ids
""",
            fixed="""
import torch
import torch.nn as nn


class Settings(object):
    steps = 20
    start = 1


opt = Settings()


class Poet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.out = nn.Linear(16, 50)

    def forward(self, ids):
        return self.out(self.emb(ids))


@torch.no_grad()
def write(model, **changes):
    for k, v in changes.items():
        setattr(opt, k, v)
    model.eval()
    ids = [opt.start]
    for _ in range(opt.steps):
        nxt = model(torch.tensor(ids))[-1].argmax().item()
        ids.append(nxt)
    return ids
""",
            line=30,
        ),
        # near miss of the save/load demonstration: the model is trained before it is saved, and its
        # reloaded copy predicts
        Invalid(
            """
import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.fc(self.drop(x))


first = Tiny()
opt = torch.optim.SGD(first.parameters(), lr=0.1)
opt.zero_grad()
first(torch.randn(8, 3)).pow(2).mean().backward()
opt.step()
torch.save(first.state_dict(), "tiny.pt")
second = Tiny()
second.load_state_dict(torch.load("tiny.pt"))
x = torch.randn(4, 3)
print(second(x).argmax(1).tolist())
same = torch.allclose(first.fc.weight, second.fc.weight)
print(same)
""",
            fixed="""
import torch
import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.fc(self.drop(x))


first = Tiny()
opt = torch.optim.SGD(first.parameters(), lr=0.1)
opt.zero_grad()
first(torch.randn(8, 3)).pow(2).mean().backward()
opt.step()
torch.save(first.state_dict(), "tiny.pt")
second = Tiny()
second.load_state_dict(torch.load("tiny.pt"))
x = torch.randn(4, 3)
with torch.no_grad():
    print(second(x).argmax(1).tolist())
same = torch.allclose(first.fc.weight, second.fc.weight)
print(same)
""",
            line=25,
        ),
        # a sampling loop after the training: the fix wraps the loop; `net.init_hidden(1)` beside it builds a
        # fresh state (`torch.zeros`) and runs no layer, so it is no forward pass of its own
        Invalid(
            """
import torch
import torch.nn as nn


class CharNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.rnn = nn.GRU(16, 16)
        self.out = nn.Linear(16, 30)

    def init_hidden(self, n):
        return torch.zeros(1, n, 16)

    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h


net = CharNet()
opt = torch.optim.Adam(net.parameters())
data = torch.randint(0, 30, (20, 4))
for step in range(5):
    h = net.init_hidden(4)
    logits, h = net(data[:-1], h)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 30), data[1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()

h = net.init_hidden(1)
tok = torch.zeros(1, 1, dtype=torch.long)
text = []
for _ in range(10):
    logits, h = net(tok, h)
    tok = logits[-1].argmax(-1, keepdim=True)
    text.append(tok.item())
print(text)
""",
            fixed="""
import torch
import torch.nn as nn


class CharNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.rnn = nn.GRU(16, 16)
        self.out = nn.Linear(16, 30)

    def init_hidden(self, n):
        return torch.zeros(1, n, 16)

    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h


net = CharNet()
opt = torch.optim.Adam(net.parameters())
data = torch.randint(0, 30, (20, 4))
for step in range(5):
    h = net.init_hidden(4)
    logits, h = net(data[:-1], h)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 30), data[1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()

h = net.init_hidden(1)
tok = torch.zeros(1, 1, dtype=torch.long)
text = []
with torch.no_grad():
    for _ in range(10):
        logits, h = net(tok, h)
        tok = logits[-1].argmax(-1, keepdim=True)
        text.append(tok.item())
print(text)
""",
            line=36,
        ),
        # a trainer's validation method, its result kept on the trainer (`self.acc = self.validate()`): the
        # attribute is what the caller keeps, not `self`, from which the training loss is computed
        Invalid(
            """
import torch
import torch.nn as nn


class Fit:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.xv, self.yv = torch.randn(16, 4), torch.randint(0, 3, (16,))
        self.best = 0.0

    def validate(self):
        self.net.eval()
        out = self.net(self.xv)
        return (out.argmax(1) == self.yv).float().mean().item()

    def run(self, batches):
        for x, y in batches:
            self.net.train()
            self.opt.zero_grad()
            loss = nn.functional.cross_entropy(self.net(x), y)
            loss.backward()
            self.opt.step()
            self.acc = self.validate()
            self.best = max(self.best, self.acc)


Fit().run([(torch.randn(8, 4), torch.randint(0, 3, (8,)))])
""",
            fixed="""
import torch
import torch.nn as nn


class Fit:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.xv, self.yv = torch.randn(16, 4), torch.randint(0, 3, (16,))
        self.best = 0.0

    @torch.no_grad()
    def validate(self):
        self.net.eval()
        out = self.net(self.xv)
        return (out.argmax(1) == self.yv).float().mean().item()

    def run(self, batches):
        for x, y in batches:
            self.net.train()
            self.opt.zero_grad()
            loss = nn.functional.cross_entropy(self.net(x), y)
            loss.backward()
            self.opt.step()
            self.acc = self.validate()
            self.best = max(self.best, self.acc)


Fit().run([(torch.randn(8, 4), torch.randint(0, 3, (8,)))])
""",
            line=15,
        ),
        # a parameter named like nothing (`f`) that the caller loads whole and trains through `f.parameters()`:
        # what the code does with it says it is a module
        Invalid(
            """
import torch
import torch.nn.functional as F


def accuracy(f, loader):
    hits = 0
    for x, y in loader:
        hits += (f(x).argmax(1) == y).sum().item()
    return hits


def main(loader):
    f = torch.load("net.pt", weights_only=False)
    opt = torch.optim.SGD(f.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(f(x), y).backward()
        opt.step()
    print(accuracy(f, loader))
""",
            fixed="""
import torch
import torch.nn.functional as F


def accuracy(f, loader):
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (f(x).argmax(1) == y).sum().item()
    return hits


def main(loader):
    f = torch.load("net.pt", weights_only=False)
    opt = torch.optim.SGD(f.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(f(x), y).backward()
        opt.step()
    print(accuracy(f, loader))
""",
            line=9,
        ),
        # what flows in and out, whatever the callee is called: a batch of the loop goes in, the output is
        # ranked against the labels (a prediction), and no caller passes anything but what may be a model
        Invalid(
            """
import torch


def accuracy(f, batches, device):
    hits = 0
    for x, y in batches:
        out = f(x.to(device))
        hits += (out.argmax(1) == y.to(device)).sum().item()
    return hits
""",
            fixed="""
import torch


def accuracy(f, batches, device):
    hits = 0
    with torch.no_grad():
        for x, y in batches:
            out = f(x.to(device))
            hits += (out.argmax(1) == y.to(device)).sum().item()
    return hits
""",
            line=8,
        ),
        # the script imports its project module `model`; the function's own `model` is a local loaded whole
        # and switched to eval mode: the call runs that local, whatever the module-level name is
        Invalid(
            """
import torch
import model


def evaluate(loader, path):
    model = torch.load(path)
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            fixed="""
import torch
import model


@torch.no_grad()
def evaluate(loader, path):
    model = torch.load(path)
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            line=11,
        ),
        # a frozen backbone kept under `no_grad` and the head after it left with autograd on: the head's graph
        # is built for nothing (the training function beside it backpropagates and stays as it is)
        Invalid(
            """
import torch
from torch import nn


def probe_accuracy(backbone, head, loader):
    backbone.eval()
    head.eval()
    hits = total = 0
    for images, labels in loader:
        with torch.no_grad():
            feats = backbone(images)
        logits = head(feats)
        hits += (logits.argmax(1) == labels).sum().item()
        total += labels.numel()
    return hits / total


def probe_train(backbone, head, loader, opt):
    for images, labels in loader:
        with torch.no_grad():
            feats = backbone(images)
        loss = nn.functional.cross_entropy(head(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


backbone, head = nn.Linear(6, 4), nn.Linear(4, 2)
data = [(torch.randn(3, 6), torch.tensor([0, 1, 1]))]
probe_train(backbone, head, data, torch.optim.SGD(head.parameters(), lr=0.1))
print(probe_accuracy(backbone, head, data))
""",
            fixed="""
import torch
from torch import nn


def probe_accuracy(backbone, head, loader):
    backbone.eval()
    head.eval()
    hits = total = 0
    with torch.no_grad():
        for images, labels in loader:
            with torch.no_grad():
                feats = backbone(images)
            logits = head(feats)
            hits += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
    return hits / total


def probe_train(backbone, head, loader, opt):
    for images, labels in loader:
        with torch.no_grad():
            feats = backbone(images)
        loss = nn.functional.cross_entropy(head(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


backbone, head = nn.Linear(6, 4), nn.Linear(4, 2)
data = [(torch.randn(3, 6), torch.tensor([0, 1, 1]))]
probe_train(backbone, head, data, torch.optim.SGD(head.parameters(), lr=0.1))
print(probe_accuracy(backbone, head, data))
""",
            line=13,
            message="after model calls it keeps under `no_grad`",
        ),
        # a gradient reset left in evaluation code computes no gradient: with no backward pass or step in view
        # it is weak evidence of training (the fix is offered, marked unsafe)
        Invalid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))
optimizer = torch.optim.Adam(net.parameters(), lr=0.001)


def test(model, loader):
    correct = 0
    for x, y in loader:
        optimizer.zero_grad()
        y_hat = model(x)
        correct += (y_hat.argmax(1) == y).sum().item()
    return correct


print(test(net, [(torch.randn(3, 4), torch.tensor([0, 1, 1]))]))
""",
            fixed="""
import torch
from torch import nn

net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 2))
optimizer = torch.optim.Adam(net.parameters(), lr=0.001)


@torch.no_grad()
def test(model, loader):
    correct = 0
    for x, y in loader:
        optimizer.zero_grad()
        y_hat = model(x)
        correct += (y_hat.argmax(1) == y).sum().item()
    return correct


print(test(net, [(torch.randn(3, 4), torch.tensor([0, 1, 1]))]))
""",
            line=13,
            unsafe=True,
        ),
        # an evaluation the training loop runs now and then: an arm that switches the model to eval mode and
        # trains nothing itself
        Invalid(
            """
import torch
from torch import nn

net = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.1), nn.Linear(8, 2))
opt = torch.optim.Adam(net.parameters())
x, y = torch.randn(64, 2), torch.randint(0, 2, (64,))
x_test, y_test = torch.randn(16, 2), torch.randint(0, 2, (16,))
for step in range(1000):
    net.train()
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if (step + 1) % 100 == 0:
        net.eval()
        out = net(x_test)
        print(step, loss.item(), (out.argmax(1) == y_test).float().mean().item())
""",
            fixed="""
import torch
from torch import nn

net = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.1), nn.Linear(8, 2))
opt = torch.optim.Adam(net.parameters())
x, y = torch.randn(64, 2), torch.randint(0, 2, (64,))
x_test, y_test = torch.randn(16, 2), torch.randint(0, 2, (16,))
for step in range(1000):
    net.train()
    loss = nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if (step + 1) % 100 == 0:
        net.eval()
        with torch.no_grad():
            out = net(x_test)
        print(step, loss.item(), (out.argmax(1) == y_test).float().mean().item())
""",
            line=17,
        ),
        # the function around the evaluation binds `torch` itself (a local of `report`): `@torch.no_grad()`
        # there would name that list, not the module, so no fix is offered
        Invalid(
            """
import torch
from torch import nn


def report(net, batches, scale=None):
    def score(x):
        net.eval()
        return net(x).argmax(1).tolist()

    torch = [score(x) for x in batches]
    return torch


print(report(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1)), [torch.randn(3, 2)]))
""",
            line=9,
        ),
        # a model's own prediction method that switches itself to eval mode: it chose to evaluate, and
        # its output leaves as numpy
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(width, classes)

    def forward(self, batch):
        return self.fc(self.drop(batch["x"]))

    def predict(self, batch):
        self.eval()
        z = self(batch)
        return torch.argmax(z, dim=1).cpu().numpy()

    @torch.inference_mode()
    def predict_proba(self, batch):
        self.eval()
        return F.softmax(self(batch), dim=1).cpu().numpy()
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(width, classes)

    def forward(self, batch):
        return self.fc(self.drop(batch["x"]))

    @torch.no_grad()
    def predict(self, batch):
        self.eval()
        z = self(batch)
        return torch.argmax(z, dim=1).cpu().numpy()

    @torch.inference_mode()
    def predict_proba(self, batch):
        self.eval()
        return F.softmax(self(batch), dim=1).cpu().numpy()
""",
            line=18,
        ),
        # the evaluation after each epoch's batches, inside the loop that trains (its outputs only printed)
        Invalid(
            """
import torch
import torch.nn as nn

x_train, y_train = torch.randn(100, 4), torch.randint(0, 3, (100,))
x_val, y_val = torch.randn(20, 4), torch.randint(0, 3, (20,))
data = torch.utils.data.TensorDataset(x_train, y_train)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x_batch, y_batch in torch.utils.data.DataLoader(data, batch_size=10, shuffle=True):
        optimizer.zero_grad()
        loss = criterion(model(x_batch), y_batch)
        loss.backward()
        optimizer.step()
    pred_train = model(x_train)
    pred_val = model(x_val)
    loss_train = criterion(pred_train, y_train).item()
    errors_val = 100 - 100 * (torch.argmax(pred_val, 1) == y_val).float().mean().item()
    print(epoch, loss_train, errors_val)
""",
            fixed="""
import torch
import torch.nn as nn

x_train, y_train = torch.randn(100, 4), torch.randint(0, 3, (100,))
x_val, y_val = torch.randn(20, 4), torch.randint(0, 3, (20,))
data = torch.utils.data.TensorDataset(x_train, y_train)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x_batch, y_batch in torch.utils.data.DataLoader(data, batch_size=10, shuffle=True):
        optimizer.zero_grad()
        loss = criterion(model(x_batch), y_batch)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        pred_train = model(x_train)
        pred_val = model(x_val)
    loss_train = criterion(pred_train, y_train).item()
    errors_val = 100 - 100 * (torch.argmax(pred_val, 1) == y_val).float().mean().item()
    print(epoch, loss_train, errors_val)
""",
            count=2,
        ),
        # a sampling step given a pretrained model (built in eval mode) by every caller: its output leaves
        # as numpy, the token chosen from it is a new tensor
        Invalid(
            """
import numpy as np
import torch
import torch.nn.functional as F
from transformers import GPT2LMHeadModel

model = GPT2LMHeadModel.from_pretrained("gpt2")


def next_token(tokens, model):
    out = model(input_ids=tokens)
    p = F.softmax(out.logits, dim=-1).detach().numpy()[0, -1]
    chosen = np.random.choice(len(p), 1, p=p)
    return torch.cat((tokens, torch.tensor([chosen])), dim=1)


tokens = torch.tensor([[464, 3290]])
for i in range(10):
    tokens = next_token(tokens, model)
""",
            fixed="""
import numpy as np
import torch
import torch.nn.functional as F
from transformers import GPT2LMHeadModel

model = GPT2LMHeadModel.from_pretrained("gpt2")


@torch.no_grad()
def next_token(tokens, model):
    out = model(input_ids=tokens)
    p = F.softmax(out.logits, dim=-1).detach().numpy()[0, -1]
    chosen = np.random.choice(len(p), 1, p=p)
    return torch.cat((tokens, torch.tensor([chosen])), dim=1)


tokens = torch.tensor([[464, 3290]])
for i in range(10):
    tokens = next_token(tokens, model)
""",
            line=11,
        ),
        # one training step written out in a function (forward, backward, step), then a validation pass
        # of the same model whose loss is only printed
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
optimizer = torch.optim.Adam(model.parameters())
features, labels = torch.randn(10, 4), torch.randint(0, 3, (10,))


def train(epoch, fast):
    model.train()
    output = model(features)
    loss_train = F.cross_entropy(output, labels)
    optimizer.zero_grad()
    loss_train.backward()
    optimizer.step()
    if not fast:
        model.eval()
        output = model(features)
    loss_val = F.cross_entropy(output, labels)
    print(epoch, loss_train.item(), loss_val.item())


for epoch in range(10):
    train(epoch, False)
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
optimizer = torch.optim.Adam(model.parameters())
features, labels = torch.randn(10, 4), torch.randint(0, 3, (10,))


def train(epoch, fast):
    model.train()
    output = model(features)
    loss_train = F.cross_entropy(output, labels)
    optimizer.zero_grad()
    loss_train.backward()
    optimizer.step()
    if not fast:
        model.eval()
        with torch.no_grad():
            output = model(features)
    loss_val = F.cross_entropy(output, labels)
    print(epoch, loss_train.item(), loss_val.item())


for epoch in range(10):
    train(epoch, False)
""",
            line=20,
        ),
        # the output rebound to its numpy copy before it goes to a plotting helper of another library
        Invalid(
            """
import torch
from plotting import scatter_classes


def show(model, features, topology):
    model.eval()
    scores, _ = model((features, topology))
    scores = scores.cpu().numpy()
    scatter_classes(scores, topology)
""",
            fixed="""
import torch
from plotting import scatter_classes


@torch.no_grad()
def show(model, features, topology):
    model.eval()
    scores, _ = model((features, topology))
    scores = scores.cpu().numpy()
    scatter_classes(scores, topology)
""",
            unsafe=True,
            line=8,
        ),
        # the validation loss of each epoch kept as numbers (a history list, a table of them)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(20, 4), torch.randn(20, 1)
xv, yv = torch.randn(5, 4), torch.randn(5, 1)
history, table = [], torch.zeros(10)
for epoch in range(10):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    val = F.mse_loss(model(xv), yv)
    history.append(val.item())
    table[epoch] = val.item()
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(20, 4), torch.randn(20, 1)
xv, yv = torch.randn(5, 4), torch.randn(5, 1)
history, table = [], torch.zeros(10)
for epoch in range(10):
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        val = F.mse_loss(model(xv), yv)
    history.append(val.item())
    table[epoch] = val.item()
""",
            line=16,
        ),
        # a notebook that first wrote the model as a function, then bound the name to a module it trains:
        # the prediction after the training runs the module
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

w = torch.randn(4, 3, requires_grad=True)


def model(xb):
    return xb @ w


print(model(torch.randn(2, 4)).shape)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.2)

    def forward(self, xb):
        return self.lin(self.drop(xb))


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(20, 4), torch.randint(0, 3, (20,))
for epoch in range(5):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
preds = model(x).argmax(1)
print((preds == y).float().mean().item())
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

w = torch.randn(4, 3, requires_grad=True)


def model(xb):
    return xb @ w


print(model(torch.randn(2, 4)).shape)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.2)

    def forward(self, xb):
        return self.lin(self.drop(xb))


model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(20, 4), torch.randint(0, 3, (20,))
for epoch in range(5):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    preds = model(x).argmax(1)
print((preds == y).float().mean().item())
""",
            line=34,
        ),
        # the statistics of each epoch over the whole training set, read through `.data` and stored in
        # tables of numbers, before the scheduler's step
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
loss_function = nn.CrossEntropyLoss()
x_train, y_train = torch.randn(8, 4), torch.randint(0, 2, (8,))
data_loader = [(x_train, y_train)]
n_epoch = 3
errors_train = torch.zeros(n_epoch)
losses_train = torch.zeros(n_epoch)
for epoch in range(n_epoch):
    for i, batch in enumerate(data_loader):
        x_batch, y_batch = batch
        optimizer.zero_grad()
        pred = model(x_batch)
        loss = loss_function(pred, y_batch)
        loss.backward()
        optimizer.step()
    pred_train = model(x_train)
    _, predicted_train_class = torch.max(pred_train.data, 1)
    errors_train[epoch] = 100 - 100 * (predicted_train_class == y_train).float().sum() / len(y_train)
    losses_train[epoch] = loss_function(pred_train, y_train).item()
    print(epoch, losses_train[epoch], errors_train[epoch])
    scheduler.step()
""",
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
loss_function = nn.CrossEntropyLoss()
x_train, y_train = torch.randn(8, 4), torch.randint(0, 2, (8,))
data_loader = [(x_train, y_train)]
n_epoch = 3
errors_train = torch.zeros(n_epoch)
losses_train = torch.zeros(n_epoch)
for epoch in range(n_epoch):
    for i, batch in enumerate(data_loader):
        x_batch, y_batch = batch
        optimizer.zero_grad()
        pred = model(x_batch)
        loss = loss_function(pred, y_batch)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        pred_train = model(x_train)
    _, predicted_train_class = torch.max(pred_train.data, 1)
    errors_train[epoch] = 100 - 100 * (predicted_train_class == y_train).float().sum() / len(y_train)
    losses_train[epoch] = loss_function(pred_train, y_train).item()
    print(epoch, losses_train[epoch], errors_train[epoch])
    scheduler.step()
""",
            line=22,
        ),
        # the model runs in a lambda the evaluation defines: a decorator on the function would not reach the
        # call (the lambda runs when called), so no fix is offered
        Invalid(
            """
import torch
import torch.nn as nn


def report(net, batches):
    net.eval()
    score = lambda x: net(x).argmax(1).tolist()
    return [score(x) for x in batches]


print(report(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1)), [torch.randn(3, 2)]))
""",
            line=8,
        ),
        # the model the loop trains also runs on the validation split in every iteration, and that output
        # only reaches a printed number
        Invalid(
            """
import torch
import torch.nn as nn


def fit(epochs, opt, net, loss_fn, train_x, val_x, train_y, val_y):
    for epoch in range(epochs):
        train_loss = loss_fn(net(train_x), train_y)
        val_out = net(val_x)
        val_loss = loss_fn(val_out, val_y)
        opt.zero_grad()
        train_loss.backward()
        opt.step()
        print(epoch, train_loss.item(), val_loss.item())


net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
fit(100, torch.optim.SGD(net.parameters(), lr=0.01), net, nn.MSELoss(), tx, vx, ty, vy)
""",
            line=9,
            fixed="""
import torch
import torch.nn as nn


def fit(epochs, opt, net, loss_fn, train_x, val_x, train_y, val_y):
    for epoch in range(epochs):
        train_loss = loss_fn(net(train_x), train_y)
        with torch.no_grad():
            val_out = net(val_x)
        val_loss = loss_fn(val_out, val_y)
        opt.zero_grad()
        train_loss.backward()
        opt.step()
        print(epoch, train_loss.item(), val_loss.item())


net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
fit(100, torch.optim.SGD(net.parameters(), lr=0.01), net, nn.MSELoss(), tx, vx, ty, vy)
""",
        ),
        # the module's `tags` holds the prediction; the `tags` that reaches the loss is `train`'s own local
        Invalid(
            """
import torch
import torch.nn as nn


def train(model, batches, optimizer, criterion):
    for batch in batches:
        tags = batch.tags
        optimizer.zero_grad()
        criterion(model(batch.text), tags).backward()
        optimizer.step()


def tag_sentence(model, ids):
    model.eval()
    predictions = model(torch.tensor(ids))
    return [i.item() for i in predictions.argmax(-1)]


net = nn.Sequential(nn.Embedding(100, 16), nn.Dropout(0.25), nn.Linear(16, 5))
train(net, batches, torch.optim.Adam(net.parameters()), nn.CrossEntropyLoss())
tags = tag_sentence(net, [1, 2, 3])
print(tags)
""",
            line=16,
            fixed="""
import torch
import torch.nn as nn


def train(model, batches, optimizer, criterion):
    for batch in batches:
        tags = batch.tags
        optimizer.zero_grad()
        criterion(model(batch.text), tags).backward()
        optimizer.step()


@torch.no_grad()
def tag_sentence(model, ids):
    model.eval()
    predictions = model(torch.tensor(ids))
    return [i.item() for i in predictions.argmax(-1)]


net = nn.Sequential(nn.Embedding(100, 16), nn.Dropout(0.25), nn.Linear(16, 5))
train(net, batches, torch.optim.Adam(net.parameters()), nn.CrossEntropyLoss())
tags = tag_sentence(net, [1, 2, 3])
print(tags)
""",
            unsafe=True,
        ),
        # a library model built with its trained weights, run on an image at a notebook's top level
        Invalid(
            """
import torch
from torchvision import models

net = models.resnet50(weights="DEFAULT")
net.eval()
scores = net(batch)
print(scores.argmax(1).tolist())
""",
            line=7,
            fixed="""
import torch
from torchvision import models

net = models.resnet50(weights="DEFAULT")
net.eval()
with torch.no_grad():
    scores = net(batch)
print(scores.argmax(1).tolist())
""",
        ),
        # the words of a comment are no gradient work: only the code's own calls and attributes count
        Invalid(
            """
import torch
import torch.nn as nn


def predict(model, xs):
    model.eval()
    # unlike training, there is no backward pass here
    return [model(x).argmax(1).item() for x in xs]


net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in loader:
    opt.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    opt.step()
print(predict(net, xs))
""",
            line=9,
            fixed="""
import torch
import torch.nn as nn


@torch.no_grad()
def predict(model, xs):
    model.eval()
    # unlike training, there is no backward pass here
    return [model(x).argmax(1).item() for x in xs]


net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Linear(4, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for x, y in loader:
    opt.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    opt.step()
print(predict(net, xs))
""",
            unsafe=True,
        ),
        # the sampled words get the name the training loop's `for` target binds before each backward pass:
        # that loop reads its own value, never the sample
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Embedding(50, 8), nn.Flatten(), nn.Linear(16, 50))
opt = torch.optim.Adam(net.parameters())
corpus = [[1, 2, 3], [4, 5, 6]]


def sample(length):
    context, words = [0, 0], []
    for _ in range(length):
        logits = net(torch.tensor([context]))
        word = logits.softmax(dim=1).multinomial(1).item()
        words.append(word)
        context = context[1:] + [word]
    return words


for epoch in range(3):
    for words in corpus:
        loss = nn.functional.cross_entropy(net(torch.tensor([words[:2]])), torch.tensor(words[2:]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    words = sample(10)
    print(words)
""",
            line=13,
            message="Decoding code",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Embedding(50, 8), nn.Flatten(), nn.Linear(16, 50))
opt = torch.optim.Adam(net.parameters())
corpus = [[1, 2, 3], [4, 5, 6]]


@torch.no_grad()
def sample(length):
    context, words = [0, 0], []
    for _ in range(length):
        logits = net(torch.tensor([context]))
        word = logits.softmax(dim=1).multinomial(1).item()
        words.append(word)
        context = context[1:] + [word]
    return words


for epoch in range(3):
    for words in corpus:
        loss = nn.functional.cross_entropy(net(torch.tensor([words[:2]])), torch.tensor(words[2:]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    words = sample(10)
    print(words)
""",
        ),
        # a plain script's one-call helper named like a hook (`eval_step`, called only by the script itself) run
        # on the model the epoch just trained: only a number leaves it
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def train_step(x, y):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()


def eval_step(x, y):
    out = net(x)
    return (out.argmax(1) == y).float().mean().item()


for epoch in range(3):
    for x, y in batches:
        train_step(x, y)
    for x, y in held_out:
        print(eval_step(x, y))
""",
            line=18,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def train_step(x, y):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()


@torch.no_grad()
def eval_step(x, y):
    out = net(x)
    return (out.argmax(1) == y).float().mean().item()


for epoch in range(3):
    for x, y in batches:
        train_step(x, y)
    for x, y in held_out:
        print(eval_step(x, y))
""",
        ),
        # a one-call prediction helper handed a model that got trained weights in the main block
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


def label_of(model, x):
    return model(x).argmax(1).tolist()


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pth"))
    print(label_of(net, torch.randn(4, 8)))
""",
            line=16,
            fixed="""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


@torch.no_grad()
def label_of(model, x):
    return model(x).argmax(1).tolist()


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pth"))
    print(label_of(net, torch.randn(4, 8)))
""",
        ),
        # a dev-set loop at module level through a loss helper shared with training: only `.item()` is read
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.Linear(32, 100))
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()


def batch_loss(batch):
    x, y = batch
    return criterion(model(x), y)


for epoch in range(3):
    for batch in train_batches:
        loss = batch_loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dev_loss = 0.0
    for batch in dev_batches:
        dev_loss += batch_loss(batch).item()
    print(epoch, dev_loss)
""",
            line=23,
            message="Evaluation: `batch_loss`",
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Embedding(100, 16), nn.Flatten(), nn.Linear(32, 100))
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()


def batch_loss(batch):
    x, y = batch
    return criterion(model(x), y)


for epoch in range(3):
    for batch in train_batches:
        loss = batch_loss(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dev_loss = 0.0
    with torch.no_grad():
        for batch in dev_batches:
            dev_loss += batch_loss(batch).item()
    print(epoch, dev_loss)
""",
        ),
        # a prediction in the main block after `load_state_dict`
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pth"))
    out = net(torch.randn(4, 8))
    print(out.argmax(1).tolist())
""",
            line=18,
            fixed="""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pth"))
    with torch.no_grad():
        out = net(torch.randn(4, 8))
    print(out.argmax(1).tolist())
""",
        ),
        # the same validation step handed to the loop with gradients on
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.2), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def make_train_step_fn(model, loss_fn, optimizer):
    def perform_train_step_fn(x, y):
        model.train()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()
    return perform_train_step_fn


def make_val_step_fn(model, loss_fn):
    def perform_val_step_fn(x, y):
        model.eval()
        yhat = model(x)
        loss = loss_fn(yhat, y)
        return loss.item()
    return perform_val_step_fn


def mini_batch(data_loader, step_fn):
    losses = []
    for x_batch, y_batch in data_loader:
        losses.append(step_fn(x_batch, y_batch))
    return np.mean(losses)


train_step_fn = make_train_step_fn(model, loss_fn, optimizer)
val_step_fn = make_val_step_fn(model, loss_fn)
train_loader, val_loader = [], []
for epoch in range(10):
    loss = mini_batch(train_loader, train_step_fn)
    val_loss = mini_batch(val_loader, val_step_fn)
""",
            line=25,
            col=16,
            message="Evaluation runs `model(x)` with autograd on and its output reaches no gradient",
            fixed="""
import numpy as np
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 8), nn.Dropout(0.2), nn.Linear(8, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def make_train_step_fn(model, loss_fn, optimizer):
    def perform_train_step_fn(x, y):
        model.train()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()
    return perform_train_step_fn


def make_val_step_fn(model, loss_fn):
    @torch.no_grad()
    def perform_val_step_fn(x, y):
        model.eval()
        yhat = model(x)
        loss = loss_fn(yhat, y)
        return loss.item()
    return perform_val_step_fn


def mini_batch(data_loader, step_fn):
    losses = []
    for x_batch, y_batch in data_loader:
        losses.append(step_fn(x_batch, y_batch))
    return np.mean(losses)


train_step_fn = make_train_step_fn(model, loss_fn, optimizer)
val_step_fn = make_val_step_fn(model, loss_fn)
train_loader, val_loader = [], []
for epoch in range(10):
    loss = mini_batch(train_loader, train_step_fn)
    val_loss = mini_batch(val_loader, val_step_fn)
""",
        ),
        # the same sampling method decoding with gradients on
        Invalid(
            """
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.z_dim = z_dim
        self.dec = nn.Sequential(nn.Linear(z_dim, 32), nn.Dropout(0.1), nn.Linear(32, 64))

    def _device(self):
        return next(self.parameters()).device

    def decode(self, z):
        return torch.sigmoid(self.dec(z))

    def sample(self, n):
        self.eval()
        z = torch.randn(n, self.z_dim).to(self._device())
        x = self.decode(z)
        return x


vae = VAE()
opt = torch.optim.Adam(vae.parameters())
for z in []:
    loss = vae.decode(z).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
images = vae.sample(16)
print(images.shape)
""",
            line=32,
            col=10,
            message="Evaluation runs `vae.sample(16)` with autograd on and its output reaches no gradient",
            fixed="""
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, z_dim=8):
        super().__init__()
        self.z_dim = z_dim
        self.dec = nn.Sequential(nn.Linear(z_dim, 32), nn.Dropout(0.1), nn.Linear(32, 64))

    def _device(self):
        return next(self.parameters()).device

    def decode(self, z):
        return torch.sigmoid(self.dec(z))

    def sample(self, n):
        self.eval()
        z = torch.randn(n, self.z_dim).to(self._device())
        x = self.decode(z)
        return x


vae = VAE()
opt = torch.optim.Adam(vae.parameters())
for z in []:
    loss = vae.decode(z).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    images = vae.sample(16)
print(images.shape)
""",
        ),
        # the epoch's validation loop after `model.eval()`, over a generator of the same name as the training
        # one: the model switched to eval mode before it says what it is
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters())
loss_func = nn.BCEWithLogitsLoss()


def generate_batches(dataset, batch_size, shuffle=True, drop_last=True):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    for x, y in loader:
        yield {"x": x, "y": y}


def compute_accuracy(y_pred, y_target):
    n_correct = torch.eq((torch.sigmoid(y_pred) > 0.5).long(), y_target).sum().item()
    return n_correct / len(y_pred) * 100


train_set, val_set = [], []
for epoch in range(10):
    model.train()
    batch_generator = generate_batches(train_set, 32)
    for batch_index, batch_dict in enumerate(batch_generator):
        opt.zero_grad()
        y_pred = model(batch_dict["x"])
        loss = loss_func(y_pred, batch_dict["y"])
        loss_t = loss.item()
        loss.backward()
        opt.step()
        acc_t = compute_accuracy(y_pred, batch_dict["y"])
    model.eval()
    batch_generator = generate_batches(val_set, 32)
    running = 0.0
    for batch_index, batch_dict in enumerate(batch_generator):
        y_pred = model(batch_dict["x"])
        loss = loss_func(y_pred, batch_dict["y"])
        loss_t = loss.item()
        running += (loss_t - running) / (batch_index + 1)
        acc_t = compute_accuracy(y_pred, batch_dict["y"])
    print(epoch, running)
""",
            line=37,
            col=18,
            message="Evaluation runs `model(batch_dict[\"x\"])` with autograd on and its output reaches no gradient",
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters())
loss_func = nn.BCEWithLogitsLoss()


def generate_batches(dataset, batch_size, shuffle=True, drop_last=True):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
    for x, y in loader:
        yield {"x": x, "y": y}


def compute_accuracy(y_pred, y_target):
    n_correct = torch.eq((torch.sigmoid(y_pred) > 0.5).long(), y_target).sum().item()
    return n_correct / len(y_pred) * 100


train_set, val_set = [], []
for epoch in range(10):
    model.train()
    batch_generator = generate_batches(train_set, 32)
    for batch_index, batch_dict in enumerate(batch_generator):
        opt.zero_grad()
        y_pred = model(batch_dict["x"])
        loss = loss_func(y_pred, batch_dict["y"])
        loss_t = loss.item()
        loss.backward()
        opt.step()
        acc_t = compute_accuracy(y_pred, batch_dict["y"])
    model.eval()
    batch_generator = generate_batches(val_set, 32)
    running = 0.0
    with torch.no_grad():
        for batch_index, batch_dict in enumerate(batch_generator):
            y_pred = model(batch_dict["x"])
            loss = loss_func(y_pred, batch_dict["y"])
            loss_t = loss.item()
            running += (loss_t - running) / (batch_index + 1)
            acc_t = compute_accuracy(y_pred, batch_dict["y"])
    print(epoch, running)
""",
        ),
        # a full-batch training step that then switches to eval mode and runs the validation forward, whose
        # loss it returns as a number
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
features = torch.randn(100, 8)
labels = torch.randint(0, 3, (100,))
idx_train, idx_val = torch.arange(60), torch.arange(60, 80)
fastmode = False


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features)
    loss_train = F.cross_entropy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()

    if not fastmode:
        model.eval()
        output = model(features)

    loss_val = F.cross_entropy(output[idx_val], labels[idx_val])
    print(epoch, loss_train.item(), loss_val.item())
    return loss_val.item()


for epoch in range(100):
    train(epoch)
""",
            line=24,
            col=18,
            message="Evaluation runs `model(features)` with autograd on and its output reaches no gradient",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
features = torch.randn(100, 8)
labels = torch.randint(0, 3, (100,))
idx_train, idx_val = torch.arange(60), torch.arange(60, 80)
fastmode = False


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features)
    loss_train = F.cross_entropy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()

    if not fastmode:
        model.eval()
        with torch.no_grad():
            output = model(features)

    loss_val = F.cross_entropy(output[idx_val], labels[idx_val])
    print(epoch, loss_train.item(), loss_val.item())
    return loss_val.item()


for epoch in range(100):
    train(epoch)
""",
        ),
        # the same trainer asking for the validation pass with gradients on
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, val_loader):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            loader = self.val_loader
            step_fn = self.val_step_fn
        else:
            loader = self.train_loader
            step_fn = self.train_step_fn
        return [step_fn(x, y) for x, y in loader]

    def train(self, n_epochs):
        for _ in range(n_epochs):
            self._mini_batch(validation=False)
            self._mini_batch(validation=True)


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).train(3)
""",
            line=29,
            col=20,
            message="Evaluation runs `self.model(x)` with autograd on and its output reaches no gradient",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, val_loader):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        @torch.no_grad()
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            loader = self.val_loader
            step_fn = self.val_step_fn
        else:
            loader = self.train_loader
            step_fn = self.train_step_fn
        return [step_fn(x, y) for x, y in loader]

    def train(self, n_epochs):
        for _ in range(n_epochs):
            self._mini_batch(validation=False)
            self._mini_batch(validation=True)


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).train(3)
""",
        ),
        # the same trainer, whose validation step is also called directly from outside the class, with
        # gradients on
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, val_loader):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            loader = self.val_loader
            step_fn = self.val_step_fn
        else:
            loader = self.train_loader
            step_fn = self.train_step_fn
        return [step_fn(x, y) for x, y in loader]

    def train(self, n_epochs):
        for _ in range(n_epochs):
            self._mini_batch(validation=False)
            with torch.no_grad():
                self._mini_batch(validation=True)


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).train(3)
print(Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).val_step_fn(torch.randn(2, 4), torch.randn(2, 1)))
""",
            line=29,
            col=20,
            message="Evaluation runs `self.model(x)` with autograd on and its output reaches no gradient",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, loss_fn, optimizer, train_loader, val_loader):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.train_step_fn = self._make_train_step_fn()
        self.val_step_fn = self._make_val_step_fn()

    def _make_train_step_fn(self):
        def perform_train_step_fn(x, y):
            self.model.train()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step_fn

    def _make_val_step_fn(self):
        @torch.no_grad()
        def perform_val_step_fn(x, y):
            self.model.eval()
            yhat = self.model(x)
            return self.loss_fn(yhat, y).item()
        return perform_val_step_fn

    def _mini_batch(self, validation=False):
        if validation:
            loader = self.val_loader
            step_fn = self.val_step_fn
        else:
            loader = self.train_loader
            step_fn = self.train_step_fn
        return [step_fn(x, y) for x, y in loader]

    def train(self, n_epochs):
        for _ in range(n_epochs):
            self._mini_batch(validation=False)
            with torch.no_grad():
                self._mini_batch(validation=True)


net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))
Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).train(3)
print(Trainer(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.1), [], []).val_step_fn(torch.randn(2, 4), torch.randn(2, 1)))
""",
        ),
        # the gradients of the model's parameters logged in the loop ask nothing of the evaluation pass
        # after them: the prediction is only printed
        Invalid(
            """
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
train_x, train_y = torch.randn(64, 1), torch.randn(64, 1)
test_x = torch.linspace(-1, 1, 20).unsqueeze(1)
writer = SummaryWriter()
for epoch in range(100):
    loss = nn.functional.mse_loss(net(train_x), train_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 10 == 0:
        for name, layer in net.named_parameters():
            writer.add_histogram(name + "_grad", layer.grad, epoch)
        test_pred = net(test_x)
        print(test_pred.data.numpy().ravel())
""",
            line=19,
            fixed="""
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
train_x, train_y = torch.randn(64, 1), torch.randn(64, 1)
test_x = torch.linspace(-1, 1, 20).unsqueeze(1)
writer = SummaryWriter()
for epoch in range(100):
    loss = nn.functional.mse_loss(net(train_x), train_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 10 == 0:
        for name, layer in net.named_parameters():
            writer.add_histogram(name + "_grad", layer.grad, epoch)
        with torch.no_grad():
            test_pred = net(test_x)
        print(test_pred.data.numpy().ravel())
""",
        ),
        # a trainer class whose base (a plain class, however it is named) is in view: its `predict_proba` is
        # evaluation code, not a model's library API
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn


class BaseModel:
    def __init__(self, width):
        self.network = nn.Sequential(nn.Linear(width, 8), nn.Dropout(0.1), nn.Linear(8, 2))
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            loss = nn.functional.cross_entropy(self.network(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


class Classifier(BaseModel):
    def predict_proba(self, batches):
        self.network.eval()
        results = []
        for x in batches:
            out = self.network(x)
            results.append(torch.softmax(out, dim=1).detach().numpy())
        return np.vstack(results)
""",
            line=26,
            fixed="""
import numpy as np
import torch
import torch.nn as nn


class BaseModel:
    def __init__(self, width):
        self.network = nn.Sequential(nn.Linear(width, 8), nn.Dropout(0.1), nn.Linear(8, 2))
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            loss = nn.functional.cross_entropy(self.network(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


class Classifier(BaseModel):
    @torch.no_grad()
    def predict_proba(self, batches):
        self.network.eval()
        results = []
        for x in batches:
            out = self.network(x)
            results.append(torch.softmax(out, dim=1).detach().numpy())
        return np.vstack(results)
""",
        ),
        # an agent acting between its updates: the loop that calls `select_action` also steps the optimizer
        # built on `self.dqn`, so the acting pass runs a trained model and keeps only a number
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Network(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, n_out))

    def forward(self, x):
        return self.layers(x)


class DQNAgent:
    def __init__(self, env):
        self.env = env
        self.epsilon = 1.0
        self.dqn = Network(4, 2)
        self.dqn_target = Network(4, 2)
        self.dqn_target.load_state_dict(self.dqn.state_dict())
        self.dqn_target.eval()
        self.optimizer = torch.optim.Adam(self.dqn.parameters())
        self.is_test = False
        self.memory = []

    def select_action(self, state):
        if not self.is_test and self.epsilon > np.random.random():
            selected_action = self.env.action_space.sample()
        else:
            selected_action = self.dqn(torch.FloatTensor(state)).argmax()
            selected_action = selected_action.detach().cpu().numpy()
        return selected_action

    def update_model(self):
        state, action, reward, next_state = self.memory[-1]
        q = self.dqn(torch.FloatTensor(state))[action]
        target = reward + 0.99 * self.dqn_target(torch.FloatTensor(next_state)).max().detach()
        loss = F.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train(self, num_frames):
        state, _ = self.env.reset()
        for frame_idx in range(num_frames):
            action = self.select_action(state)
            next_state, reward, terminated, truncated, _ = self.env.step(action)
            self.memory.append((state, action, reward, next_state))
            state = next_state
            if len(self.memory) > 32:
                self.update_model()


""",
            line=33,
            fixed="""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Network(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, n_out))

    def forward(self, x):
        return self.layers(x)


class DQNAgent:
    def __init__(self, env):
        self.env = env
        self.epsilon = 1.0
        self.dqn = Network(4, 2)
        self.dqn_target = Network(4, 2)
        self.dqn_target.load_state_dict(self.dqn.state_dict())
        self.dqn_target.eval()
        self.optimizer = torch.optim.Adam(self.dqn.parameters())
        self.is_test = False
        self.memory = []

    @torch.no_grad()
    def select_action(self, state):
        if not self.is_test and self.epsilon > np.random.random():
            selected_action = self.env.action_space.sample()
        else:
            selected_action = self.dqn(torch.FloatTensor(state)).argmax()
            selected_action = selected_action.detach().cpu().numpy()
        return selected_action

    def update_model(self):
        state, action, reward, next_state = self.memory[-1]
        q = self.dqn(torch.FloatTensor(state))[action]
        target = reward + 0.99 * self.dqn_target(torch.FloatTensor(next_state)).max().detach()
        loss = F.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train(self, num_frames):
        state, _ = self.env.reset()
        for frame_idx in range(num_frames):
            action = self.select_action(state)
            next_state, reward, terminated, truncated, _ = self.env.step(action)
            self.memory.append((state, action, reward, next_state))
            state = next_state
            if len(self.memory) > 32:
                self.update_model()


""",
            unsafe=True,
        ),
        # the model comes from a factory that may pass it through a helper handing it back (`model =
        # init_bias(model)`): an instance of `Net`, whose own `inference` method runs its layers
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def inference(self, x):
        return F.dropout(self.fc(x), 0.5, self.training)


def init_bias(module):
    nn.init.zeros_(module.fc.bias)
    return module


def load_model(fresh):
    model = Net()
    if fresh:
        model = init_bias(model)
    return model


model = load_model(False)
model.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))
model.eval()
out = model.inference(torch.randn(1, 4))
print(out.numpy())
""",
            line=34,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def inference(self, x):
        return F.dropout(self.fc(x), 0.5, self.training)


def init_bias(module):
    nn.init.zeros_(module.fc.bias)
    return module


def load_model(fresh):
    model = Net()
    if fresh:
        model = init_bias(model)
    return model


model = load_model(False)
model.load_state_dict(torch.load("ckpt.pt", map_location="cpu"))
model.eval()
with torch.no_grad():
    out = model.inference(torch.randn(1, 4))
print(out.numpy())
""",
        ),
        # `opts` holds the parsed command line, not an optimizer: handing it to a builder trains nothing
        Invalid(
            """
import argparse

import torch
import torch.nn as nn
from mylib import build_net

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt", default="net.pt")
opts = parser.parse_args()


def run():
    net = build_net(opts)
    net.load_state_dict(torch.load(opts.ckpt, map_location="cpu"))
    net.eval()
    for i in range(4):
        out = net(torch.randn(1, 4))
        print(out.argmax(-1).item())


run()
""",
            line=18,
            fixed="""
import argparse

import torch
import torch.nn as nn
from mylib import build_net

parser = argparse.ArgumentParser()
parser.add_argument("--ckpt", default="net.pt")
opts = parser.parse_args()


@torch.no_grad()
def run():
    net = build_net(opts)
    net.load_state_dict(torch.load(opts.ckpt, map_location="cpu"))
    net.eval()
    for i in range(4):
        out = net(torch.randn(1, 4))
        print(out.argmax(-1).item())


run()
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def evaluate(model, batches, frozen):
    if frozen:
        model.requires_grad_(False)
    model.eval()
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct


net = nn.Sequential(nn.Linear(4, 3))
data = [(torch.randn(2, 4), torch.tensor([0, 1]))]
print(evaluate(net, data, False))
""",
            line=12,
            fixed="""
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, batches, frozen):
    if frozen:
        model.requires_grad_(False)
    model.eval()
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct


net = nn.Sequential(nn.Linear(4, 3))
data = [(torch.randn(2, 4), torch.tensor([0, 1]))]
print(evaluate(net, data, False))
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
for param in model.parameters():
    param.requires_grad = False
model[2] = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model[2].parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
model.eval()
correct = 0
for i in range(0, 16, 4):
    correct += (model(x[i:i + 4]).argmax(1) == y[i:i + 4]).sum().item()
print(correct)
""",
            line=18,
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
for param in model.parameters():
    param.requires_grad = False
model[2] = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model[2].parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
model.eval()
correct = 0
with torch.no_grad():
    for i in range(0, 16, 4):
        correct += (model(x[i:i + 4]).argmax(1) == y[i:i + 4]).sum().item()
print(correct)
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.net(x) * t[:, None]


def sample(model, n, steps=5):
    model.eval()
    x = torch.randn(n, 4)
    for i in reversed(range(1, steps)):
        t = torch.full((n,), i / steps)
        noise = model(x, t)
        x = x - 0.1 * noise
    model.train()
    return ((x.clamp(-1, 1) + 1) * 127.5).type(torch.uint8)


print(sample(Denoiser(), 2).dtype)
""",
            line=20,
            fixed="""
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x, t):
        return self.net(x) * t[:, None]


@torch.no_grad()
def sample(model, n, steps=5):
    model.eval()
    x = torch.randn(n, 4)
    for i in reversed(range(1, steps)):
        t = torch.full((n,), i / steps)
        noise = model(x, t)
        x = x - 0.1 * noise
    model.train()
    return ((x.clamp(-1, 1) + 1) * 127.5).type(torch.uint8)


print(sample(Denoiser(), 2).dtype)
""",
        ),
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))


def statistics(batches):
    device = torch.device("cpu")
    encoder = Encoder().eval().to(device)
    feats = []
    for x in batches:
        feats.append(encoder(x.to(device)))
    feats = torch.cat(feats, dim=0).cpu().detach().numpy()
    return np.mean(feats, axis=0)


print(statistics([torch.randn(5, 4), torch.randn(5, 4)]).shape)
""",
            line=22,
            fixed="""
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))


@torch.no_grad()
def statistics(batches):
    device = torch.device("cpu")
    encoder = Encoder().eval().to(device)
    feats = []
    for x in batches:
        feats.append(encoder(x.to(device)))
    feats = torch.cat(feats, dim=0).cpu().detach().numpy()
    return np.mean(feats, axis=0)


print(statistics([torch.randn(5, 4), torch.randn(5, 4)]).shape)
""",
        ),
        # a learner's choice made through its instance in the script's loop, between its updates
        Invalid(
            """
import random

import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
        self.optim = torch.optim.SGD(self.net.parameters(), lr=0.01)

    def choose(self, state):
        scores = self.net(torch.tensor(state, dtype=torch.float32)[None])
        return int(scores.argmax(1))

    def update(self, states, actions, returns):
        picked = self.net(states).gather(1, actions[:, None]).squeeze(1)
        loss = (picked - returns).pow(2).mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()


learner = Learner()
for episode in range(50):
    action = learner.choose([random.random() for _ in range(3)])
    learner.update(torch.randn(4, 3), torch.randint(0, 2, (4,)), torch.randn(4))
""",
            fixed="""
import random

import torch
import torch.nn as nn


class Learner:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
        self.optim = torch.optim.SGD(self.net.parameters(), lr=0.01)

    @torch.no_grad()
    def choose(self, state):
        scores = self.net(torch.tensor(state, dtype=torch.float32)[None])
        return int(scores.argmax(1))

    def update(self, states, actions, returns):
        picked = self.net(states).gather(1, actions[:, None]).squeeze(1)
        loss = (picked - returns).pow(2).mean()
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()


learner = Learner()
for episode in range(50):
    action = learner.choose([random.random() for _ in range(3)])
    learner.update(torch.randn(4, 3), torch.randint(0, 2, (4,)), torch.randn(4))
""",
            line=14,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(8, 3), torch.randint(0, 2, (8,))) for _ in range(4)]


def test(batches):
    net.eval()
    hits = 0
    for x, y in batches:
        assert x.dim() == 2, "rows of features"
        hits += (net(x).argmax(1) == y).sum().item()
    return hits / sum(len(y) for _, y in batches)


for epoch in range(3):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    print(epoch, test(batches))
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
batches = [(torch.randn(8, 3), torch.randint(0, 2, (8,))) for _ in range(4)]


@torch.no_grad()
def test(batches):
    net.eval()
    hits = 0
    for x, y in batches:
        assert x.dim() == 2, "rows of features"
        hits += (net(x).argmax(1) == y).sum().item()
    return hits / sum(len(y) for _, y in batches)


for epoch in range(3):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    print(epoch, test(batches))
""",
            line=15,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftDice(nn.Module):
    def __init__(self, smooth=1.0, reduce_to="mean"):
        super().__init__()
        self.smooth = smooth
        self.reduce_to = reduce_to
        self.act = nn.Sigmoid()
        self.temperature = nn.Parameter(torch.ones(1))

    def forward(self, logits, mask):
        p = self.act(logits / self.temperature)
        inter = (p * mask).sum(dim=(1, 2))
        return 1 - (2 * inter + self.smooth) / (p.sum(dim=(1, 2)) + mask.sum(dim=(1, 2)) + self.smooth)


def validate(net, batches, loss_fn):
    net.eval()
    scores = []
    for x, mask in batches:
        with torch.no_grad():
            logits = net(x)
        scores.append(loss_fn(logits, mask).mean().item())
    return sum(scores) / max(len(scores), 1)


net, loss_fn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Dropout(0.2), nn.Conv2d(4, 1, 1)), SoftDice()
print(validate(net, [(torch.randn(2, 1, 8, 8), torch.rand(2, 8, 8).round())], loss_fn))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftDice(nn.Module):
    def __init__(self, smooth=1.0, reduce_to="mean"):
        super().__init__()
        self.smooth = smooth
        self.reduce_to = reduce_to
        self.act = nn.Sigmoid()
        self.temperature = nn.Parameter(torch.ones(1))

    def forward(self, logits, mask):
        p = self.act(logits / self.temperature)
        inter = (p * mask).sum(dim=(1, 2))
        return 1 - (2 * inter + self.smooth) / (p.sum(dim=(1, 2)) + mask.sum(dim=(1, 2)) + self.smooth)


@torch.no_grad()
def validate(net, batches, loss_fn):
    net.eval()
    scores = []
    for x, mask in batches:
        with torch.no_grad():
            logits = net(x)
        scores.append(loss_fn(logits, mask).mean().item())
    return sum(scores) / max(len(scores), 1)


net, loss_fn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Dropout(0.2), nn.Conv2d(4, 1, 1)), SoftDice()
print(validate(net, [(torch.randn(2, 1, 8, 8), torch.rand(2, 8, 8).round())], loss_fn))
""",
            line=27,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureLoss(nn.Module):
    def __init__(self, backbone=None, scale=1.0):
        super().__init__()
        self.backbone = backbone
        self.scale = scale

    def forward(self, pred, target):
        return self.scale * F.l1_loss(self.backbone(pred), self.backbone(target))


def validate(net, batches, loss_fn):
    net.eval()
    total = 0.0
    for x, y in batches:
        with torch.no_grad():
            out = net(x)
        total += loss_fn(out, y).item()
    return total


net = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Dropout(0.1))
loss_fn = FeatureLoss(backbone=nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()))
print(validate(net, [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))], loss_fn))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FeatureLoss(nn.Module):
    def __init__(self, backbone=None, scale=1.0):
        super().__init__()
        self.backbone = backbone
        self.scale = scale

    def forward(self, pred, target):
        return self.scale * F.l1_loss(self.backbone(pred), self.backbone(target))


@torch.no_grad()
def validate(net, batches, loss_fn):
    net.eval()
    total = 0.0
    for x, y in batches:
        with torch.no_grad():
            out = net(x)
        total += loss_fn(out, y).item()
    return total


net = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Dropout(0.1))
loss_fn = FeatureLoss(backbone=nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()))
print(validate(net, [(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))], loss_fn))
""",
            line=23,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
relation = nn.Sequential(nn.Linear(32, 1), nn.Sigmoid())
encoder.load_state_dict(torch.load("encoder.pt", weights_only=True))
relation.load_state_dict(torch.load("relation.pt", weights_only=True))


def main():
    hits = 0
    for episode in range(20):
        support = torch.randn(5, 8)
        query = torch.randn(5, 8)
        support_features = encoder(support)
        query_features = encoder(query)
        pairs = torch.cat([support_features.repeat(5, 1), query_features.repeat_interleave(5, 0)], 1)
        scores = relation(pairs).view(5, 5)
        picked = scores.argmax(1)
        hits += (picked == torch.arange(5)).sum().item()
    print(hits / 100)


main()
""",
            fixed="""
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
relation = nn.Sequential(nn.Linear(32, 1), nn.Sigmoid())
encoder.load_state_dict(torch.load("encoder.pt", weights_only=True))
relation.load_state_dict(torch.load("relation.pt", weights_only=True))


def main():
    hits = 0
    with torch.no_grad():
        for episode in range(20):
            support = torch.randn(5, 8)
            query = torch.randn(5, 8)
            support_features = encoder(support)
            query_features = encoder(query)
            pairs = torch.cat([support_features.repeat(5, 1), query_features.repeat_interleave(5, 0)], 1)
            scores = relation(pairs).view(5, 5)
            picked = scores.argmax(1)
            hits += (picked == torch.arange(5)).sum().item()
    print(hits / 100)


main()
""",
            line=16,
            message="Evaluation runs `encoder(support)`",
        ),
        Invalid(
            """
import random
import torch
from torch import nn


def get_action(model, state, epsilon=0.1):
    if random.random() < epsilon:
        return random.randrange(4)
    q = model(torch.FloatTensor(state).unsqueeze(0))
    return q.max(1)[1].item()


net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.Adam(net.parameters())
for _ in range(10):
    a = get_action(net, [0.0] * 8)
    loss = net(torch.randn(5, 8))[:, a].pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""
import random
import torch
from torch import nn


@torch.no_grad()
def get_action(model, state, epsilon=0.1):
    if random.random() < epsilon:
        return random.randrange(4)
    q = model(torch.FloatTensor(state).unsqueeze(0))
    return q.max(1)[1].item()


net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.Adam(net.parameters())
for _ in range(10):
    a = get_action(net, [0.0] * 8)
    loss = net(torch.randn(5, 8))[:, a].pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            line=10,
        ),
        Invalid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 64)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(torch.relu(self.l1(s))))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action.detach().cpu().numpy()[0, 0]


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(100):
    states = torch.randn(16, 3)
    loss = -policy(states).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

for _ in range(3):
    print(policy.get_action([0.1, 0.2, 0.3]))
""",
            fixed="""
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 64)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(torch.relu(self.l1(s))))

    @torch.no_grad()
    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action.detach().cpu().numpy()[0, 0]


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(100):
    states = torch.randn(16, 3)
    loss = -policy(states).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

for _ in range(3):
    print(policy.get_action([0.1, 0.2, 0.3]))
""",
            line=17,
        ),
        Invalid(
            """
import torch
from torch import nn
import torch.nn.functional as F

class SkipGram(nn.Module):
    def __init__(self, v, d):
        super().__init__()
        self.emb_v = nn.Embedding(v, d)
        self.emb_u = nn.Embedding(v, d)
    def forward(self, c, o):
        return -nn.functional.logsigmoid((self.emb_u(o) * self.emb_v(c)).sum(-1)).mean()
    def prediction(self, idx):
        return self.emb_v(idx)

model = SkipGram(50, 8)
opt = torch.optim.Adam(model.parameters())
for step in range(100):
    loss = model(torch.randint(0, 50, (16,)), torch.randint(0, 50, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

def word_similarity(target, vocab_ids):
    target_v = model.prediction(torch.tensor([target]))
    sims = []
    for i in vocab_ids:
        vec = model.prediction(torch.tensor([i]))      
        sims.append((i, F.cosine_similarity(target_v, vec).data.tolist()[0]))
    return sorted(sims, key=lambda s: s[1], reverse=True)[:5]

print(word_similarity(3, range(50)))
""",
            fixed="""
import torch
from torch import nn
import torch.nn.functional as F

class SkipGram(nn.Module):
    def __init__(self, v, d):
        super().__init__()
        self.emb_v = nn.Embedding(v, d)
        self.emb_u = nn.Embedding(v, d)
    def forward(self, c, o):
        return -nn.functional.logsigmoid((self.emb_u(o) * self.emb_v(c)).sum(-1)).mean()
    def prediction(self, idx):
        return self.emb_v(idx)

model = SkipGram(50, 8)
opt = torch.optim.Adam(model.parameters())
for step in range(100):
    loss = model(torch.randint(0, 50, (16,)), torch.randint(0, 50, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

@torch.no_grad()
def word_similarity(target, vocab_ids):
    target_v = model.prediction(torch.tensor([target]))
    sims = []
    for i in vocab_ids:
        vec = model.prediction(torch.tensor([i]))      
        sims.append((i, F.cosine_similarity(target_v, vec).data.tolist()[0]))
    return sorted(sims, key=lambda s: s[1], reverse=True)[:5]

print(word_similarity(3, range(50)))
""",
            line=25,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
        self.set_requires_grad(False)

    def set_requires_grad(self, state):
        for p in self.parameters():
            p.requires_grad = state

    def forward(self, x):
        return self.layers(x)


class Weights(nn.ModuleList):
    def __init__(self, n):
        super().__init__([nn.Conv2d(8, 1, 1, bias=False) for _ in range(n)])
        for p in self.parameters():
            p.requires_grad = False


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Features()
        self.lin = Weights(1)
        self.scale = nn.Linear(1, 1)

    def forward(self, x, y):
        d = (self.net(x) - self.net(y)) ** 2
        return self.lin[0](d).mean()


metric = Perceptual()
metric.lin.load_state_dict(torch.load("weights.pt", weights_only=True))
scores = []
for _ in range(4):
    a, b = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
    scores.append(float(metric(a, b)))
print(sum(scores) / len(scores))
""",
            fixed="""
import torch
import torch.nn as nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 8, 3))
        self.set_requires_grad(False)

    def set_requires_grad(self, state):
        for p in self.parameters():
            p.requires_grad = state

    def forward(self, x):
        return self.layers(x)


class Weights(nn.ModuleList):
    def __init__(self, n):
        super().__init__([nn.Conv2d(8, 1, 1, bias=False) for _ in range(n)])
        for p in self.parameters():
            p.requires_grad = False


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Features()
        self.lin = Weights(1)
        self.scale = nn.Linear(1, 1)

    def forward(self, x, y):
        d = (self.net(x) - self.net(y)) ** 2
        return self.lin[0](d).mean()


metric = Perceptual()
metric.lin.load_state_dict(torch.load("weights.pt", weights_only=True))
scores = []
with torch.no_grad():
    for _ in range(4):
        a, b = torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)
        scores.append(float(metric(a, b)))
print(sum(scores) / len(scores))
""",
            line=44,
        ),
        Invalid(
            """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)


scorers = [Scorer() for _ in range(3)]
x = torch.randn(16, 8)
with torch.no_grad():
    for s in scorers:
        print(s.predict(x))
for s in scorers:
    print(s.predict(x).tolist())
""",
            fixed="""
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    @torch.no_grad()
    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)


scorers = [Scorer() for _ in range(3)]
x = torch.randn(16, 8)
with torch.no_grad():
    for s in scorers:
        print(s.predict(x))
for s in scorers:
    print(s.predict(x).tolist())
""",
            unsafe=True,
            line=16,
        ),
        Invalid(
            """
import torch
from torch import nn


def predict(model, batch):
    return model(batch)


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    loss = nn.functional.cross_entropy(net(torch.randn(16, 4)), torch.randint(0, 2, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

scores = predict(net, torch.randn(5, 4))
print(scores.argmax(dim=1).tolist())
""",
            fixed="""
import torch
from torch import nn


def predict(model, batch):
    return model(batch)


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(20):
    loss = nn.functional.cross_entropy(net(torch.randn(16, 4)), torch.randint(0, 2, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    scores = predict(net, torch.randn(5, 4))
print(scores.argmax(dim=1).tolist())
""",
            line=18,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Logits(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return self.body(x)[:, :10]


classifier = torch.load("classifier.pt", weights_only=False)
classifier.eval()
classifier = Logits(classifier)
out = classifier(torch.rand(4, 3, 32, 32))
print(out.argmax(dim=1).tolist())
""",
            fixed="""
import torch
import torch.nn as nn


class Logits(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    def forward(self, x):
        return self.body(x)[:, :10]


classifier = torch.load("classifier.pt", weights_only=False)
classifier.eval()
classifier = Logits(classifier)
with torch.no_grad():
    out = classifier(torch.rand(4, 3, 32, 32))
print(out.argmax(dim=1).tolist())
""",
            line=18,
        ),
        Invalid(
            """
import numpy as np
import torch
from torch import nn


def label_of(net, batch):
    scores = net(batch)
    return scores.detach().numpy().argmax(axis=1)


def hit_rate(net, batch, labels):
    return float(np.mean(label_of(net, batch) == labels.numpy()))


model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 5), torch.randint(0, 4, (64,))
for step in range(10):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print(step, hit_rate(model, x, y))
""",
            fixed="""
import numpy as np
import torch
from torch import nn


@torch.no_grad()
def label_of(net, batch):
    scores = net(batch)
    return scores.detach().numpy().argmax(axis=1)


def hit_rate(net, batch, labels):
    return float(np.mean(label_of(net, batch) == labels.numpy()))


model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 5), torch.randint(0, 4, (64,))
for step in range(10):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print(step, hit_rate(model, x, y))
""",
            unsafe=True,
            line=8,
        ),
        Invalid(
            """
import torch
from torch import nn


def spread_cost(net, criterion, inputs, targets):
    net.eval()
    out = net(inputs)
    return criterion(out, targets).item()


regressor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
loss_fn = nn.SmoothL1Loss()
opt = torch.optim.Adam(regressor.parameters())
xs, ys = torch.randn(64, 3), torch.randn(64, 1)
for epoch in range(5):
    regressor.train()
    opt.zero_grad()
    loss_fn(regressor(xs), ys).backward()
    opt.step()
    print(epoch, spread_cost(regressor, loss_fn, xs, ys))
""",
            fixed="""
import torch
from torch import nn


@torch.no_grad()
def spread_cost(net, criterion, inputs, targets):
    net.eval()
    out = net(inputs)
    return criterion(out, targets).item()


regressor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
loss_fn = nn.SmoothL1Loss()
opt = torch.optim.Adam(regressor.parameters())
xs, ys = torch.randn(64, 3), torch.randn(64, 1)
for epoch in range(5):
    regressor.train()
    opt.zero_grad()
    loss_fn(regressor(xs), ys).backward()
    opt.step()
    print(epoch, spread_cost(regressor, loss_fn, xs, ys))
""",
            line=8,
        ),
        Invalid(
            """
import torch
from torch import nn


def cost_of(net, inputs, labels):
    criterion = nn.CrossEntropyLoss()
    logits = net(inputs)
    return criterion(logits, labels).item()


model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
opt = torch.optim.Adam(model.parameters())
xs, ys = torch.randn(50, 6), torch.randint(0, 3, (50,))
for epoch in range(5):
    opt.zero_grad()
    nn.functional.cross_entropy(model(xs), ys).backward()
    opt.step()
    print(epoch, cost_of(model, xs, ys))
""",
            fixed="""
import torch
from torch import nn


@torch.no_grad()
def cost_of(net, inputs, labels):
    criterion = nn.CrossEntropyLoss()
    logits = net(inputs)
    return criterion(logits, labels).item()


model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
opt = torch.optim.Adam(model.parameters())
xs, ys = torch.randn(50, 6), torch.randint(0, 3, (50,))
for epoch in range(5):
    opt.zero_grad()
    nn.functional.cross_entropy(model(xs), ys).backward()
    opt.step()
    print(epoch, cost_of(model, xs, ys))
""",
            line=8,
        ),
        Invalid(
            """
import torch
from torch import nn


def top_class(model, image):
    probs = torch.softmax(model(image), dim=1)
    score, index = probs.max(dim=1)
    return index, score


net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
net.load_state_dict(torch.load("net.pt"))
label, confidence = top_class(net, torch.rand(1, 3, 8, 8))
print(f"class {label.item()} ({confidence.item():.2f})")
""",
            fixed="""
import torch
from torch import nn


def top_class(model, image):
    probs = torch.softmax(model(image), dim=1)
    score, index = probs.max(dim=1)
    return index, score


net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
net.load_state_dict(torch.load("net.pt"))
with torch.no_grad():
    label, confidence = top_class(net, torch.rand(1, 3, 8, 8))
print(f"class {label.item()} ({confidence.item():.2f})")
""",
            line=14,
        ),
        Invalid(
            """
import torch
from torch import nn


def cost_of(net, criterion, inputs, labels):
    logits = net(inputs)
    return criterion.forward(logits, labels).item()


model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
ce = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters())
xs, ys = torch.randn(50, 6), torch.randint(0, 3, (50,))
for epoch in range(5):
    opt.zero_grad()
    ce.forward(model(xs), ys).backward()
    opt.step()
    print(epoch, cost_of(model, ce, xs, ys))
""",
            fixed="""
import torch
from torch import nn


@torch.no_grad()
def cost_of(net, criterion, inputs, labels):
    logits = net(inputs)
    return criterion.forward(logits, labels).item()


model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
ce = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters())
xs, ys = torch.randn(50, 6), torch.randint(0, 3, (50,))
for epoch in range(5):
    opt.zero_grad()
    ce.forward(model(xs), ys).backward()
    opt.step()
    print(epoch, cost_of(model, ce, xs, ys))
""",
            unsafe=True,
            line=7,
        ),
        Invalid(
            """
import torch


def predict(classifier, loader):
    images, labels = next(iter(loader))
    scores = classifier(images)
    guesses = scores.argmax(dim=1)
    for i in range(len(labels)):
        print(f"label={labels[i]} guess={guesses[i]}")
""",
            fixed="""
import torch


@torch.no_grad()
def predict(classifier, loader):
    images, labels = next(iter(loader))
    scores = classifier(images)
    guesses = scores.argmax(dim=1)
    for i in range(len(labels)):
        print(f"label={labels[i]} guess={guesses[i]}")
""",
            line=7,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.Embedding(n, 8)

    def forward(self, seq, items):
        return (self.emb(items) * self.emb(seq).mean(1, keepdim=True)).sum(-1)

    def predict(self, seq, items):
        return self(seq, items)


def hit_rate(model, users):
    ranks = [model.predict(torch.tensor([u]), torch.tensor([[1, 2, 3]]))[0].argmax().item() for u in users]
    return sum(r == 0 for r in ranks) / len(users)


model = Ranker(10)
opt = torch.optim.Adam(model.parameters())
for epoch in range(3):
    loss = model(torch.tensor([[1, 2]]), torch.tensor([[3, 4]])).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(hit_rate(model, [1, 2]))
""",
            fixed="""
import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.Embedding(n, 8)

    def forward(self, seq, items):
        return (self.emb(items) * self.emb(seq).mean(1, keepdim=True)).sum(-1)

    def predict(self, seq, items):
        return self(seq, items)


@torch.no_grad()
def hit_rate(model, users):
    ranks = [model.predict(torch.tensor([u]), torch.tensor([[1, 2, 3]]))[0].argmax().item() for u in users]
    return sum(r == 0 for r in ranks) / len(users)


model = Ranker(10)
opt = torch.optim.Adam(model.parameters())
for epoch in range(3):
    loss = model(torch.tensor([[1, 2]]), torch.tensor([[3, 4]])).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(hit_rate(model, [1, 2]))
""",
            unsafe=True,
            line=19,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class TwoLayer(nn.Module):
    def __init__(self, d, h, c):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, c)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def evaluate_saved_model(path, batches):
    model = TwoLayer(50, 42, 10)
    model.load_state_dict(torch.load(path, weights_only=True))
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            fixed="""
import torch
import torch.nn as nn


class TwoLayer(nn.Module):
    def __init__(self, d, h, c):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, c)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@torch.no_grad()
def evaluate_saved_model(path, batches):
    model = TwoLayer(50, 42, 10)
    model.load_state_dict(torch.load(path, weights_only=True))
    correct = 0
    for x, y in batches:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
""",
            line=21,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.load_state_dict(torch.load(path))
    model.eval()
    return model


model = get_model("model.pt")
image = torch.randn(1, 3, 64, 64)
mask = model(image)
print((mask.data[0, 0] > 0).float().mean())
""",
            fixed="""
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.load_state_dict(torch.load(path))
    model.eval()
    return model


model = get_model("model.pt")
image = torch.randn(1, 3, 64, 64)
with torch.no_grad():
    mask = model(image)
print((mask.data[0, 0] > 0).float().mean())
""",
            line=15,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Scorer:
    def __init__(self, model):
        self.model = model

    def predict(self, x):
        return self.model(x).argmax(1).tolist()


net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(100):
    opt.zero_grad()
    nn.functional.cross_entropy(net(torch.randn(8, 10)), torch.randint(3, (8,))).backward()
    opt.step()

net.eval()
print(Scorer(net).predict(torch.randn(5000, 10)))
""",
            fixed="""
import torch
import torch.nn as nn


class Scorer:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def predict(self, x):
        return self.model(x).argmax(1).tolist()


net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(100):
    opt.zero_grad()
    nn.functional.cross_entropy(net(torch.randn(8, 10)), torch.randint(3, (8,))).backward()
    opt.step()

net.eval()
print(Scorer(net).predict(torch.randn(5000, 10)))
""",
            line=11,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        ctx = self.ctx
        if not ctx.names.imports_torch or target_version(self.options.get("target-torch")) < _NO_GRAD_SINCE:
            return
        found = []
        for site in evaluation_facts(ctx).sites():
            if site.through_own_method:
                continue  # `policy.get_action(s)`: reported (and fixed) in the method itself
            # the model calls that run with gradients on: a frozen backbone under `no_grad` leaves the head
            # after it building its graph for nothing
            # (nor the call of a model's method that turns gradients off itself: `@torch.no_grad() def sample`)
            calls = [c for c, model in site.calls if not under_no_grad(ctx, c) and not method_turns_grad_off(ctx, c)]
            if not calls:
                continue
            calls = [c for c in calls if not framework_model(ctx, dict(site.calls)[c])]
            if not calls:
                continue  # the framework that owns the model runs it under `no_grad`
            if all(frozen_model(ctx, model, c) for c, model in site.calls if c in calls):
                continue  # every model it runs is frozen (`requires_grad_(False)`): no graph is recorded
            if runs_without_grad(ctx, calls[0]):
                continue
            if site.kind == "function" and self._result_may_be_differentiated(site.node):
                continue  # a loss helper shared by training and validation: training needs its graph
            evidence = training_evidence(ctx, site.node, [c for c, _m in site.calls])
            if evidence == STRONG or (site.decoding and evidence == WEAK):
                continue  # it trains (`loss_scaler(loss, optimizer)` runs the backward pass): not evaluation
            unsafe = evidence == WEAK or site.decoding == "output"  # an output fed back, no token picked
            partial = len(calls) < len(site.calls)  # some of its model calls already run under `no_grad`
            at = site.anchor if site.decoding and site.anchor is not None and not partial else calls[0]
            found.append((at, site, self._fix(site, unsafe=unsafe), partial))
        for call, site, fix, partial in self._merge_neighbours(found):
            self.report(call, self._message(site, call, partial), fix=fix)

    def _message(self, site: EvalSite, call: cst.Call, partial: bool = False) -> Optional[str]:
        """Where the evidence came from, for code found by what it does rather than by its name."""
        if partial:
            return (
                f"Evaluation runs `{self._spelled(call)}` with autograd on, after model calls it keeps under "
                "`no_grad`, and its output reaches no gradient; run it under `torch.no_grad()` (or "
                "`torch.inference_mode()`) too, to save memory and time"
            )
        if site.helper is not None:
            return (
                f"Evaluation: `{site.helper.name.value}` runs the model with autograd on and its result is read "
                "here only off the graph; wrap it in `torch.no_grad()` (or `torch.inference_mode()`) to save "
                "memory and time"
            )
        if not site.decoding:
            return (
                f"Evaluation runs `{self._spelled(call)}` with autograd on and its output reaches no gradient; "
                "wrap it in `torch.no_grad()` (or `torch.inference_mode()`) to save memory and time"
            )
        model = next((m for c, m in site.calls if c is call), None)
        if model is None:  # a call of the model's part (`decoder.decode_step(...)`): the model it belongs to
            root = call.func
            while isinstance(root, cst.Attribute):
                root = root.value
            model = root if isinstance(root, cst.Name) else None
        what = f"`{self.ctx.code(model)}`" if model is not None else "the model"
        fed = "a token picked from its own output" if site.decoding == "picked" else "its own output"
        return (
            f"Decoding code: the loop runs {what} on {fed} with autograd on; wrap it in `torch.no_grad()` "
            "(or `torch.inference_mode()`) to save memory and time"
        )

    def _spelled(self, call: cst.Call) -> str:
        """The model call as the source spells it, its arguments left out when they are long."""
        code = " ".join(self.ctx.code(call).split())
        return code if len(code) <= 40 else f"{' '.join(self.ctx.code(call.func).split())}(...)"

    def _merge_neighbours(self, found):
        """Loops and statements wrapped by fixes that follow each other in one block get one
        `with torch.no_grad():` around them all, not one each: the findings share that fix."""
        ctx = self.ctx
        runs = []  # lists of (call, site, fix, partial), each a run of neighbouring wrapped statements
        index = {}
        for item in found:
            call, site, fix, _partial = item
            block = ctx.block_of(site.node) if site.kind != "function" and fix is not None else None
            if block is None:
                runs.append([item])
                continue
            at = next((i for i, stmt in enumerate(block) if stmt is site.node), None)
            prev = index.get((id(block), at - 1)) if at is not None else None
            if prev is not None and prev[-1][2].applicability == fix.applicability and not site.node.leading_lines:
                prev.append(item)
            else:
                prev = [item]
                runs.append(prev)
            index[(id(block), at)] = prev
        out = []
        for run in runs:
            if len(run) == 1:
                out.append(run[0])
                continue
            first, rest = run[0], run[1:]
            wrapped = first[2].edits[first[1].node]
            assert isinstance(wrapped, cst.With) and isinstance(wrapped.body, cst.IndentedBlock)
            body = [*wrapped.body.body, *(item[1].node for item in rest)]
            fix = self.make_fix(first[2].title, unsafe=first[2].is_unsafe)
            fix.replace(first[1].node, wrapped.with_changes(body=wrapped.body.with_changes(body=body)))
            for item in rest:
                fix.remove(item[1].node)
            out.extend((call, site, fix, partial) for call, site, _fix, partial in run)
        return out

    def _result_may_be_differentiated(self, function: cst.CSTNode) -> bool:
        """Whether a caller in this file differentiates what ``function`` returns."""
        ctx = self.ctx
        assert isinstance(function, cst.FunctionDef)
        for call in call_sites(ctx, function):
            caller = enclosing_function(ctx, call)
            scope: cst.CSTNode = caller if caller is not None else ctx.module
            for anc in ctx.ancestors(call):
                if isinstance(anc, cst.Call) and is_backward_like(ctx, anc):
                    return True
                if isinstance(anc, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    for target in assignment_targets(anc):
                        held = instance_attribute(ctx, target)
                        if held is not None:  # `self.score = self.validate()`: the attribute, not `self`
                            if attribute_flows_into_backward(ctx, held, ctx.enclosing(call, cst.ClassDef) or scope):
                                return True
                            continue
                        for n in iter_nodes(target):
                            if isinstance(n, cst.Name) and flows_into_backward(ctx, scope, n.value, depth=3, origin=anc):
                                return True
                    break
                if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                    break
        return False

    def _fix(self, site: EvalSite, unsafe: bool = False) -> Optional[Fix]:
        ctx = self.ctx
        code = no_grad_call_code(ctx, site.node)
        if code is None:
            return None
        template = ctx.parse_statement(f"with {code}:\n    pass\n")
        assert isinstance(template, cst.With) and isinstance(template.body, cst.IndentedBlock)
        if site.kind == "function":
            function = site.node
            assert isinstance(function, cst.FunctionDef)
            if any(ctx.enclosing(call, (cst.FunctionDef, cst.Lambda)) is not function for call, _ in site.calls):
                return None  # a call in a lambda or a nested function runs when that is called: the
                # decorator does not reach it (and the finding would stay after the fix)
            # a generator too: `no_grad` used as a decorator disables gradients each time the generator
            # runs and restores the caller's mode at every `yield` (a `with` block in its body would not)
            # a decorator is a one-line change where wrapping would re-indent the whole body
            decorator = cst.Decorator(decorator=ctx.parse_expression(code))
            decorated = function.with_changes(decorators=[*function.decorators, decorator])
            unsafe = unsafe or self._returns_model_output(site)
            return self.make_fix(f"Decorate `{function.name.value}` with `@{code}`", unsafe=unsafe).replace(
                function, decorated
            )
        loop = site.node
        if ctx.block_of(loop) is None:
            return None
        wrapped = template.with_changes(
            body=template.body.with_changes(body=[loop.with_changes(leading_lines=[])]),
            leading_lines=loop.leading_lines,
        )
        return self.make_fix(unsafe=unsafe).replace(loop, wrapped)

    def _returns_model_output(self, site: EvalSite) -> bool:
        """Whether the function returns (or yields) a model call, or a variable assigned from one."""
        ctx = self.ctx
        calls = {c for c, _ in site.calls}
        outputs: Set[str] = set()
        for a in ctx.contents(site.node).assigns:
            value = getattr(a, "value", None)
            if value is None or not any(ctx.is_inside(c, value) or c is value for c in calls):
                continue
            if is_detached(ctx, value):
                continue  # `correct += (model(x).argmax(1) == y).sum().item()` holds a number
            targets = [t.target for t in a.targets] if isinstance(a, cst.Assign) else [a.target]
            for t in targets:
                outputs.update(n.value for n in iter_nodes(t) if isinstance(n, cst.Name))
        for n in ctx.nodes(site.node.body):
            if (type(n) is cst.Return or type(n) is cst.Yield) and isinstance(n.value, cst.BaseExpression):
                if is_detached(ctx, n.value):
                    continue  # a number (`.item()`): nothing for a caller to differentiate
                for sub in iter_nodes(n.value):
                    if sub in calls or (isinstance(sub, cst.Name) and sub.value in outputs):
                        return True
        return False
