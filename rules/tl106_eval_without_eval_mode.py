from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import libcst as cst

from torchlint.families.training.grad_mode import STRONG, training_evidence
from torchlint.families.training.evaluation import (
    call_minds_mode,
    EvaluationBinder,
    ANY,
    class_object,
    describe_evidence,
    EvalSite,
    mode_evidence,
    assigned_within,
    built_in_eval_mode,
    call_sites,
    covers,
    enclosing_function,
    eval_receivers,
    evaluation_facts,
    framework_model,
    model_from_code_not_in_view,
    model_mode_dependent,
    left_training_by_siblings,
    modes_reaching,
    restores_train_mode,
    TRAIN,
    samples_on_purpose,
    top_statement,
    train_mode_call,
)
from torchlint.analysis.context import arg
from torchlint.families.training.evaluation import trains
from torchlint.analysis.definitions import arguments_for_param, position, project_arguments_for_param
from torchlint.analysis.names import dotted_name
from torchlint.analysis.training import innermost_loop
from torchlint.rule import Fix, Invalid, LintRule, Valid


class EvalWithoutEvalMode(LintRule):
    """
    ## What it does
    Finds evaluation code (a validation, test, prediction or inference function, or a loop that
    computes metrics without training; see TL105; also a function that trains nothing and runs every
    model call under `no_grad`, its outputs reaching only graph-free sinks) that runs a model which is never put in evaluation
    mode: no `model.eval()` or `model.train(False)` in the function, in a same-module helper it calls,
    or in a same-module caller; a function of another project file the code calls that switches the
    model it is given and leaves it so (`saliency(x, y, model)` calling `model.eval()`) switches it too.
    A helper handed a module-level model by a function that reads the global (`run_valid()` calling
    `predict(net, data)`) runs it in the mode it has wherever that function is called: switched when
    every call of it comes after `net.eval()`. An agent's method that runs `self.net` under `no_grad` to
    act (`act(self, s)`), in a class whose other method trains that same `self.net`, acts between its
    updates in the training's mode (a noisy network's noise, its dropout): not an evaluation; a method that
    scores data in a loop (`score(self, batches)`) still is. A wrapper whose `__init__` switches the model it
    is handed (`self.model = model; self.model.eval()`) runs it in eval mode, and a `test_*` helper of a test
    file that only the suite's tests call is a test, not evaluation code; nor is a function every caller of
    which hands it a model it has just built by its class, with no backward pass, optimizer or loaded weights
    around the call (`check_encode(model, tokens)` after `model = Translator(50, 16)`: a check of a new model).

    A method that evaluates `self.model` and is called only from code of its file is also reported when a caller
    reaches the call with the model in the training mode the code before it left (`self.fit(loader)` then
    `self.show(loader)`), whatever other methods of the class switch.

    The call must run such a part: for a model of a project class, the method it runs (`forward` for
    `model(x)`, `decode` for `model.decode(x)`) is read, with the methods of `self` it calls, and a
    model whose dropout that method never reaches (only `forward` applies it, or only under
    `if is_training:` where the call leaves `is_training` at its `False` default) is not reported.
    A method of the model's class that runs its layers counts as running the model (`model.sample(25)`
    after `load_state_dict`), also when it turns gradients off itself (`@torch.no_grad() def sample`):
    the mode is the caller's to set. A factory that switches the model it returns (`model.eval()`, then
    `return model`) hands it back in eval mode only when every return comes after the switch (not an
    `if cuda: return model.cuda()` above it). A functional dropout given `training=True` or `training=False` in so many words does the same in
    both modes and does not make a model mode-dependent. A switch chained after a move
    (`net.cuda().eval()`) switches the model moved.

    The model is what the code runs, however it reaches the call: a name bound to another name
    (`clf = body`), a part of a model of a project class (`net.embed(x)`, `model.encoder(src)`: the
    module that class keeps there, also one its constructor was handed, as `Seq2Seq(encoder, decoder)`),
    and a parameter that every caller passes a model, through two levels of helpers (`score(model, data)`
    calling `translate(model, x)`), in this file or in the project's others.

    ## Why is this bad?
    In training mode dropout drops activations at random and batch norm normalises with the statistics
    of the current batch (and updates its running averages with the evaluation data). Metrics computed
    that way are noisy and wrong, and predictions change from run to run. The cookbook: "model(x) 前用
    model.train() 和 model.eval() 切换网络状态", because "model.eval() 是将网络切换为测试状态，例如 BN 和
    随机失活（dropout）在训练和测试阶段使用不同的计算方法" (PyTorch Cookbook, Zhang Hao, 2019; the test snippet of the 2024
    revision, section 6.2, starts with `model.eval()`).

    Models are recognised by how they are built, whatever their name (`cnn = CNN()` for an `nn.Module`
    subclass of the project, `vgg16 = models.vgg16()`, `clf = nn.Sequential(...)`, `.to(device)` of one),
    or by a name that says so when nothing shows how they are built; `self.<model>` that the class never
    sets is what a base class of the project sets it to (`self.network` built by the base's `build()`),
    and one set from a constructor parameter (`self.model = model`) is what every construction of the
    class in view passes (`Learner(net, loss_fn, opt)`). A module class that keeps what it is given, or
    deep copies of it (`self.layers = clones(layer, n)`, a `ModuleList` of `copy.deepcopy(layer)`), has
    that module's layers; so does a class that builds a project module anywhere in its body (blocks
    appended to a list and kept in a `ModuleList` built empty) or keeps what a module-level helper returns
    (`self.features = conv_bn(3, 16)`). A model built by a builder picked from a dict by an option
    (`model_dict[opt.arch]`, called to build the model; the dict a display of this file or imported from a project
    module, or a module's class picked from a dict of modules: `model_dict[opt.model].Model(opt)`) is what the
    option's default picks; with no default, any of the builders may be picked, and one that minds the mode
    is enough. So is a class of a project package picked by a name read from a configuration
    (`getattr(net_module, config["arch"])(n)`, also through a factory `get_instance(module, name, config)` or
    a method of a project object, `config.init_obj("arch", module_arch)`),
    and the model a class builds with its own method (`self.model = self._build_model()`, the reading
    class's override first). A call of a function named for
    evaluation (`evaluate(model, loader)`) counts as setting eval mode only when the function (in this
    file or a project module) is unknown or switches some mode, itself or through the functions named for
    evaluation it calls (`evaluate_randomly` calling `evaluate`, followed three deep); one that provably
    never does is looked into like any other code.  A library function named so (`create_supervised_evaluator(model, ...)`)
    can switch only the models it is handed (a path, a string or a number the standard library makes from its
    arguments is none). A model parameter is in eval mode when every caller in the file puts the
    argument it passes in eval mode before the call (`gpt.eval()`, then `generate(gpt, ...)`), or, for
    an argument that is the caller's own parameter, every caller of that caller does (two levels up); an
    `eval()` that comes after the call does not count. Of the models the callers pass, only those that
    arrive in training mode must prove that eval mode changes something: a Hugging Face model one caller
    loads with `from_pretrained` (in eval mode) proves nothing of another caller's model. A model of the script that only other code puts
    in eval mode is still reported when what runs before the evaluation leaves it in training mode on
    some path (a training function that calls `model.train()` and `model.eval()` only under
    `if not args.fastmode:`, followed through the script's own functions); so is a model put in eval mode
    that a helper run before the evaluation puts back in training mode (`net.eval()`, an attack crafted,
    `net.train()`), with no fix: where the switch belongs is the author's call. So is a model switched back
    with `.train()` for training (the statement after the switch trains: each epoch scored in eval mode,
    then `net.train()` and its batches) and evaluated after the last epoch, also by a helper it is handed
    to; a loop is taken to run at least once (code after the epochs assumes they ran). A helper that only
    turns training mode on (`enable_dropout(model)`), or a `.train()` followed by a forward pass that is
    only scored, is Monte-Carlo dropout or the training-mode loss shown, chosen on purpose. An `eval()` in another
    method of the class (for `self.model`) or elsewhere in the script counts only when that code leaves it in
    place (a `predict` that switches back with `self.model.train()` does not).

    Only models proven by construction to have a layer that acts differently in eval mode are
    reported: dropout with `p > 0`, batch norm tracking running statistics (instance norm only with
    `track_running_stats=True`), an `RNN`/`LSTM`/`GRU` with `dropout > 0` and more than one layer
    (PyTorch applies a recurrent layer's dropout only between stacked layers), transformer and attention
    layers with dropout, code that reads `self.training`, or a library model of the tables:
    torchvision (ResNet, VGG, DenseNet, MobileNet, EfficientNet, ...), timm (`timm.create_model` of a
    batch-norm architecture such as `"resnet50"`, or any model given `drop_rate`/`drop_path_rate` > 0)
    and Hugging Face transformers (BERT, RoBERTa, DistilBERT, GPT-2, T5, BART, ..., whose configurations
    default to dropout 0.1: built from a configuration, or loaded by class or by such a checkpoint name); found through `nn.Sequential`,
    `nn.ModuleList` and `nn.ModuleDict` (comprehensions included), project classes and the factory
    functions that return them, and, for a parameter, the models every caller in the file passes (or,
    for a module-level function called only from other files of the project, every caller there).
    A network a constructor builds only to lend its weights (`donor = vgg16(weights=...)`, then
    `self.conv.load_state_dict(donor.features[0].state_dict())`) is no part of the model.
    A rate given as a constructor argument is read at each construction in the file
    (`Tagger(vocab, 16, DROPOUT)` with `DROPOUT = 0.5`: dropout; with `0.0`: none), and a rate kept on
    the instance (`self.dropout = dropout`, then `nn.Dropout(p=self.dropout)`) is the value last set
    before the layer is built. A rate read from a settings object the constructor keeps
    (`self.config = config`, then `nn.Dropout(self.config.dropout_keep)`) is what the settings classes of
    the files linked by imports (or beside it) give that attribute (`class Config: dropout_keep = 0.8`),
    when every one of them gives a number; a keyword of a settings object the file builds
    (`config = argparse.Namespace(dropout_p=0.1)`, `SimpleNamespace`, `EasyDict`) counts as an option's
    default does (`nn.Dropout(p=config.dropout_p)`).
    `LayerNorm`, `GroupNorm`, `Embedding`, linear and convolution layers are the same in both modes;
    a model whose construction is not seen (a library factory, a parameter whose callers pass values
    of unknown class) is not reported. A class object passed as a value is not a model.

    One model is reported without its class: a parameter of a module-level function that no call in
    the project reaches (the function is for code not in view: a user of the module, a notebook that
    reaches it through `sys.path`). Such a function cannot know the mode it is handed the model in, and
    it is the only place that can set it, so it must call `model.eval()` itself. The message says
    so. Not when the function is a method or nested (its instance or the enclosing code sets the mode),
    not for a decoding helper whose output alone is fed back, and not in a file whose own model
    classes all behave alike in both modes.

    Not reported: framework hooks (`validation_step`, `test_step`, `predict_step`: the framework switches
    modes), Monte-Carlo dropout, recognised by what the code does: it calls `.train()` on purpose,
    runs the model repeatedly on the same input (`[model(x) for _ in range(k)]`: the draws differ only
    while dropout is active), or asks a functional dropout to drop (`training=True`), a mode set
    through a helper whose name says so (`set_eval_mode(model)`, `with evaluating(model):`), models
    built in eval mode (`Net().to(device).eval()`, Hugging Face `from_pretrained`) when nothing in the
    file switches them back with `train()` (a project class loaded with a library's class method,
    `Classifier.from_pretrained(...)`, is judged by the layers the class builds), models loaded with
    `torch.load`/`torch.jit.load` (they keep the mode they were saved in), models that
    provably behave the same in both modes (an `nn.Sequential` of, or an `nn.Module` built only from,
    layers without dropout or normalisation, such as `Linear`, `ReLU`, or an `LSTM`/`GRU` without
    dropout), and `self.<model>` in a class derived from a framework
    class imported from another module when the class never shows how the model is built (the
    framework sets it up, e.g. with `from_pretrained`, which loads in eval mode), and code that trains:
    a backward pass, an optimizer step or a gradient reset anywhere it reaches (the same-module functions
    it calls), or an optimizer or the model's parameters handed to a callable whose code is not in view
    (`loss_scaler(loss, optimizer)`, whose `__call__` runs the backward pass, is an epoch of training).

    ## Example
    ```python
    def validate(model, loader):
        with torch.no_grad():
            return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    ```

    ## Use instead
    ```python
    def validate(model, loader):
        model.eval()
        with torch.no_grad():
            return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    ```

    ## Fix safety
    The fix inserts `model.eval()` before the statement that first runs the model (before the
    evaluation loop). It is offered only on an instance: not when the name may hold a class object (a
    class, a parameter some caller passes a class for, a name bound to one), where `.eval()` would
    raise `TypeError`. The mode persists after the evaluation, so where training resumes afterwards in
    this file without a `model.train()` (an evaluation loop inside the training loop, or a training
    loop that calls the evaluation function), the fix also inserts `model.train()` right after the
    evaluation; when the model cannot be named there, no fix is offered. It stays unsafe: callers in
    other files may rely on the mode the evaluation leaves (see TL107).

    ## Options
    None.

    ## References
    - [torch.nn.Module.eval](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    - [Evaluation mode (`nn.Module.eval()`)](https://pytorch.org/docs/stable/notes/autograd.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL106"
    BINDERS = (EvaluationBinder,)
    NAME = "eval-without-eval-mode"
    MESSAGE = "Evaluation runs the model without `model.eval()`; dropout and batch norm stay in training mode"
    FIX_TITLE = "Insert `model.eval()` before the evaluation"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("torch",)

    VALID = [
        # the epochs end in eval mode (each validates after its batches); whether the loop runs at all is the
        # caller's count, and a count of 0 is no evidence that the final score runs in training mode
        """
import sys
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
opt = torch.optim.Adam(net.parameters())
a, b = torch.randn(5, 6), torch.randint(0, 2, (5,))
net.train()
for epoch in range(int(sys.argv[1])):
    net.train()
    opt.zero_grad()
    nn.functional.cross_entropy(net(a), b).backward()
    opt.step()
    net.eval()
    with torch.no_grad():
        print(epoch, net(a).argmax(1).tolist())
with torch.no_grad():
    print("final", (net(a).argmax(1) == b).float().mean().item())
""",
        # `.train()` then sampling with dropout on and nothing trained after it: Monte-Carlo dropout on purpose
        """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
net.load_state_dict(torch.load("net.pt", weights_only=True))
x = torch.randn(5, 6)
net.eval()
with torch.no_grad():
    point = net(x)
net.train()
with torch.no_grad():
    spread = torch.stack([net(x) for _ in range(30)]).std(0)
print(point, spread)
""",
        # the same stacked model, switched to eval mode where it is scored
        Valid(
            """
import torch
import torch.nn as nn


def make_mlp(sizes):
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layers.append(nn.Linear(n_in, n_out))
        layers.append(nn.BatchNorm1d(n_out))
    return nn.Sequential(*layers)


@torch.no_grad()
def accuracy(model, batches):
    hits = 0
    model.eval()
    for x, y in batches:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = make_mlp([8, 16, 4])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 4, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
"""
        ),
        # near miss: the same class with a default rate of 0.0, built with it: dropout never drops
        """
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, vocab, width=32, dropout=0.0):
        super().__init__()
        self.dropout = dropout
        self.embed = nn.Embedding(vocab, width)
        self.dropout = nn.Dropout(p=self.dropout)
        self.out = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.out(self.dropout(self.embed(ids)))


def score(captioner, batches):
    hits = 0
    with torch.no_grad():
        for ids, target in batches:
            hits += (captioner(ids).argmax(-1) == target).sum().item()
    return hits


captioner = Captioner(100)
opt = torch.optim.Adam(captioner.parameters())
batches = [(torch.randint(0, 100, (4, 6)), torch.randint(0, 100, (4, 6)))]
for epoch in range(2):
    captioner.train()
    for ids, target in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(captioner(ids).flatten(0, 1), target.flatten()).backward()
        opt.step()
    print(score(captioner, batches))
""",
        # near miss: the same model, but every construction passes a rate of 0.0: dropout never drops
        """
import torch
import torch.nn as nn
import torch.nn.functional as F

DROPOUT = 0.0


class Tagger(nn.Module):
    def __init__(self, vocab, width, classes, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        return self.out(self.drop(self.embed(x)).mean(1))


def accuracy(model, batches):
    hits = 0
    with torch.no_grad():
        for x, y in batches:
            hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = Tagger(100, 16, 4, DROPOUT)
opt = torch.optim.Adam(model.parameters())
batches = [(torch.randint(0, 100, (8, 5)), torch.randint(0, 4, (8,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
""",
        # near miss of the inference pass: the model is Linear/LayerNorm only, the same in both modes
        Valid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 10)
        self.mask = nn.LayerNorm(10)
        self.out = nn.Linear(10, 4)

    def forward(self, x):
        return self.out(self.mask(torch.tanh(self.proj(x))))


def agreement(tagger, rows):
    same = 0
    with torch.no_grad():
        for x, y in rows:
            guess = tagger(x)
            same += guess.argmax(1).eq(y).sum().item()
    return same


tagger = Tagger()
sgd = torch.optim.SGD(tagger.parameters(), lr=0.05)
rows = [(torch.randn(5, 10), torch.randint(0, 4, (5,)))]
for step in range(3):
    for x, y in rows:
        sgd.zero_grad()
        nn.functional.cross_entropy(tagger(x), y).backward()
        sgd.step()
    print(step, agreement(tagger, rows))
"""
        ),
        # near miss: batch norm without running statistics normalises alike in both modes
        Valid(
            """
import torch
from torch import nn


@torch.no_grad()
def spread(m, signal):
    scores = m(signal)
    print(scores.softmax(-1).max(-1).values.tolist())


m = nn.Sequential(nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4, track_running_stats=False), nn.Flatten(), nn.LazyLinear(3))
opt = torch.optim.Adam(m.parameters())
signal = torch.randn(6, 2, 9)
loss = m(signal).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
spread(m, signal)
"""
        ),
        # near miss: a frozen target run under `no_grad` inside a training step (the step trains)
        Valid(
            """
import torch
import torch.nn as nn

online = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.1), nn.Linear(6, 6))
frozen = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.1), nn.Linear(6, 6))
opt = torch.optim.SGD(online.parameters(), lr=0.1)


def step(x):
    with torch.no_grad():
        goal = frozen(x)
    loss = (online(x) - goal).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


for _ in range(2):
    print(step(torch.randn(3, 6)))
"""
        ),
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
        for images, labels in test_loader:
            outputs = model(images.to(device))
            correct += (outputs.argmax(1) == labels.to(device)).sum().item()
    return correct
"""
        ),
        Valid(
            """
import torch


def mc_dropout_predict(model, loader, samples=20):
    model.train()  # keep dropout active: Monte-Carlo estimate of the uncertainty
    preds = []
    with torch.no_grad():
        for x in loader:
            preds.append(torch.stack([model(x) for _ in range(samples)]).mean(0))
    return preds
"""
        ),
        Valid(
            """
import torch


def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


def main(model, val_loader):
    model.eval()
    print(evaluate(model, val_loader))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))


def validate(loader):
    accuracy = 0
    with torch.no_grad():
        for x, y in loader:
            accuracy += (net(x).argmax(1) == y).float().mean().item()
    return accuracy
"""
        ),
        Valid(
            """
import torch


def validate(model, val_loader):
    model.train(False)
    with torch.no_grad():
        return [model(x).argmax(1) for x in val_loader]


def test(model, loader):
    with torch.no_grad(), eval_mode(model):
        return [model(x).argmax(1) for x in loader]
"""
        ),
        Valid(
            """
import torch


def predict(path, loader):
    model = torch.jit.load(path)
    preds = []
    with torch.no_grad():
        for x in loader:
            preds.append(model(x))
    return preds
"""
        ),
        Valid(
            """
import torch
import torchvision


class Classifier:
    def __init__(self, device):
        self.model = torchvision.models.resnet18(weights="DEFAULT").to(device).eval()

    def predict(self, loader):
        preds = []
        with torch.no_grad():
            for x in loader:
                preds.append(self.model(x).argmax(1))
        return preds
"""
        ),
        Valid(
            """
import torch
from transformers import AutoModelForSequenceClassification


def evaluate(eval_dataloader, metric):
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased")
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**batch)
        metric.add_batch(predictions=outputs.logits.argmax(-1), references=batch["labels"])
    return metric.compute()
"""
        ),
        Valid(
            """
import torch
import pytorch_lightning as pl


class Classifier(pl.LightningModule):
    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_acc", (self.model(x).argmax(1) == y).float().mean())
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

rnn = nn.LSTM(8, 16, num_layers=2)
head = nn.Sequential(nn.Linear(16, 4), nn.ReLU(), nn.Linear(4, 2))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 8, dropout=0.0)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(self.gru(x)[0])


small = Small()


def validate(loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            features, _ = rnn(x)
            correct += (head(features[-1]).argmax(1) == y).sum().item()
            correct += (small(x)[-1].argmax(1) == y).sum().item()
    return correct
"""
        ),
        Valid(
            """
import torch


def set_eval(model):
    model.eval()


def evaluate(model, loader):
    set_eval(model)
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]


def validate_all(model, loaders):
    with torch.no_grad():
        return [evaluate(model, loader) for loader in loaders]
"""
        ),
        Valid(
            """
import torch


class CharModel(torch.nn.Module):
    def __init__(self, vocab, hidden, layers):
        super().__init__()
        self.hidden = hidden
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.gru = torch.nn.GRU(hidden, hidden, num_layers=layers)
        self.fc = torch.nn.Linear(hidden, vocab)

    def forward(self, x, h):
        out, h = self.gru(self.embed(x), h)
        return self.fc(out), h


model = CharModel(100, 32, 2)
model = model.to("cpu")


def predict(model, x, h, steps):
    out = []
    with torch.no_grad():
        for _ in range(steps):
            logits, h = model(x, h)
            out.append(logits.argmax(-1))
    return out


print(predict(model, torch.zeros(1, 1, dtype=torch.long), None, 3))
"""
        ),
        # the callers put the model in eval mode before they hand it over (`gpt.eval()`, then `generate(gpt, ...)`)
        Valid(
            """
import torch
import torch.nn as nn


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(32, 100)

    def forward(self, ids):
        return self.head(self.drop(self.embed(ids)))


def generate(model, ids, steps):
    for _ in range(steps):
        with torch.no_grad():
            logits = model(ids)
        ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ids


def demo(prompt):
    gpt = Gpt()
    gpt.eval()
    return generate(gpt, prompt, 10)


def predict(model, batch):
    with torch.no_grad():
        return model(batch).argmax(-1)


def report(batch):
    net = Gpt()
    net.eval()
    print(predict(net, batch))
"""
        ),
        # every caller passes a model without mode-dependent layers (Linear and ReLU only): `eval()` changes nothing
        Valid(
            """
import torch
import torch.nn as nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def validate(model, loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


print(validate(Mlp(), []))
"""
        ),
        # a decoding helper whose model is unknown: reported only for a model known to have dropout or normalisation
        Valid(
            """
import torch


@torch.no_grad()
def autocomplete(net, ids, steps):
    for _ in range(steps):
        nxt = net(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
    return ids
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
        # the model is a parameter no caller explains, and every model class of the file behaves alike
        # in both modes: what the function is handed is most likely one of them
        """
import torch
import torch.nn as nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc(x)


def validate(model, val_loader, device):
    correct = 0
    for images, labels in val_loader:
        outputs = model(images.to(device))
        correct += (torch.argmax(outputs, dim=1) == labels.to(device)).sum().item()
    return correct
""",
        # near miss: the same evaluation as a method: the object that holds it sets the mode
        """
import torch


class Checker:
    def accuracy(self, model, batches):
        hits = 0
        with torch.no_grad():
            for x, y in batches:
                hits += (model(x).argmax(1) == y).sum().item()
        return hits
""",
        # near miss: the evaluation function is called in the file, and its caller switches the model
        """
import torch


def validate(model, val_loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)


def report(model, val_loader):
    model.eval()
    print(validate(model, val_loader))
""",
        # mode-free by construction: a one-layer GRU's dropout applies only between stacked layers;
        # LayerNorm, Embedding, a ModuleList built by a comprehension of Linear layers, Dropout(p=0),
        # batch norm that tracks no statistics
        """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, num_layers=1, dropout=0.3, batch_first=True)
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])
        self.norm = nn.LayerNorm(dim)
        self.drop = nn.Dropout(p=0.0)
        self.bn = nn.BatchNorm1d(dim, track_running_stats=False)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        for block in self.blocks:
            h = h + block(self.norm(h))
        return self.out(self.drop(h))


encoder = Encoder()


def evaluate(loader):
    hits = 0
    with torch.no_grad():
        for x, y in loader:
            hits += (encoder(x).argmax(-1) == y).sum().item()
    return hits
""",
        # near miss of the library table: a pretrained Hugging Face model loads in eval mode and nothing
        # switches it to training; a timm ViT has no dropout or batch norm by default
        Valid(
            """
import timm
import torch
from transformers import AutoModelForSequenceClassification


def classify(batches):
    found = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
    with torch.no_grad():
        return [found(**b).logits.argmax(-1) for b in batches]


plain = timm.create_model("vit_small_patch16_224", pretrained=True, num_classes=3)


@torch.no_grad()
def predict(images):
    return plain(images).argmax(-1).tolist()


print(predict(torch.randn(2, 3, 224, 224)))
"""
        ),
        # Monte-Carlo dropout by behaviour, whatever the names: the same input run repeatedly (the draws
        # differ only while dropout is active), or a functional dropout asked to drop with `training=True`
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 4)
opt.zero_grad()
net(x).pow(2).mean().backward()
opt.step()


@torch.no_grad()
def spread(x, k=16):
    draws = torch.stack([net(x).softmax(-1) for _ in range(k)])
    return draws.mean(0).tolist(), draws.std(0).tolist()


@torch.no_grad()
def noisy_votes(x, k=8):
    votes = []
    for _ in range(k):
        h = F.dropout(net[1](net[0](x)), 0.3, training=True)
        votes.append(net[3](h).argmax(-1))
    return torch.stack(votes).mode(0).values.tolist()


print(spread(x), noisy_votes(x))
"""
        ),
        # near miss: the library evaluator is handed the model the process function runs
        Valid(
            """
import torch
import torch.nn as nn
from ignite.engine import Engine, create_supervised_evaluator
from ignite.metrics import Accuracy

model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
evaluator = create_supervised_evaluator(best, metrics={"acc": Accuracy()})
best = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
best.load_state_dict(torch.load("best.pt"))


def flip_average(engine, batch):
    with torch.no_grad():
        x, y = batch
        return 0.5 * (best(x) + best(x.flip(-1))), y


scorer = Engine(flip_average)
"""
        ),
        # near miss: the trainer's sampling method switches the generator to eval mode itself
        Valid(
            """
import torch
import torch.nn as nn


class Painter(nn.Module):
    def __init__(self, noise=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.body(z)


class Studio:
    def __init__(self, noise=8, cuda=False):
        self.noise = noise
        self.painter = Painter(noise)
        if cuda:
            self.painter.cuda()
        self.opt = torch.optim.Adam(self.painter.parameters(), lr=1e-3)
        self.fixed = torch.randn(6, noise)

    def fit(self, rounds):
        for r in range(rounds):
            self.painter.train()
            self.opt.zero_grad()
            self.painter(torch.randn(32, self.noise)).pow(2).mean().backward()
            self.opt.step()
            with torch.no_grad():
                self.sketch(r)

    def sketch(self, r):
        self.painter.eval()
        canvas = self.painter(self.fixed)
        pixels = canvas.cpu().numpy()
        print(r, pixels.mean())


Studio().fit(2)
"""
        ),
        # near miss: a method that switches one model and returns the other's output with its graph: the
        # caller may train on it (a generator step), so only its `.eval()` call calls it evaluation
        Valid(
            """
import torch
import torch.nn as nn


class Duo:
    def __init__(self, noise=8):
        self.noise = noise
        self.painter = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))


    def evaluate(self, n=6):
        self.critic.eval()
        return self.painter(torch.randn(n, self.noise))


print(Duo().evaluate().shape)
"""
        ),
        # near miss: the same wrapper given a module without dropout or batch norm
        """
import torch
from torch import nn


class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.GroupNorm(1, 2)

    def forward(self, x):
        return self.head(self.inner(x))


def evaluate(model, loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(loader):
    net = Wrap(nn.Sequential(nn.Linear(4, 2), nn.ReLU()))
    print(evaluate(net, loader))
""",
        # a frozen pretrained backbone put in eval mode where the model builds it, a linear head after it, and
        # nothing that switches the model back: no layer of it acts differently at the prediction
        """
import torch
import torch.nn as nn
from torchvision import models


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*list(models.resnet18(weights="DEFAULT").children())[:-1]).eval()
        self.fc = nn.Linear(512, 2)
        for p in self.features.parameters():
            p.requires_grad = False

    def forward(self, images):
        return self.fc(torch.flatten(self.features(images), 1))


model = Student()
optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.1)
for x, y in [(torch.randn(2, 3, 32, 32), torch.tensor([0, 1]))]:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    print(model(torch.randn(1, 3, 32, 32)).argmax(1).item())
""",
        # near miss: the script puts the model in eval mode itself before `test()`
        """
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--fastmode", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(epoch):
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    if not args.fastmode:
        model.eval()
        print(F.cross_entropy(model(x), y).item())


def test():
    print((model(x).argmax(1) == y).float().mean().item())


for epoch in range(10):
    train(epoch)
model.eval()
test()
""",
        # near miss: the training function always ends in eval mode, so `test()` after it runs in eval mode
        """
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--fastmode", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(epoch):
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    model.eval()
    print(F.cross_entropy(model(x), y).item())


def test():
    print((model(x).argmax(1) == y).float().mean().item())


for epoch in range(10):
    train(epoch)
test()
""",
        # near miss: the flag-guarded eval, but the model has no dropout or batch norm
        """
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--fastmode", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(8, 16), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(epoch):
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    if not args.fastmode:
        model.eval()
        print(F.cross_entropy(model(x), y).item())


def test():
    print((model(x).argmax(1) == y).float().mean().item())


for epoch in range(10):
    train(epoch)
test()
""",
        # near miss: Monte-Carlo dropout: the script itself calls `net.train()` before sampling, on purpose
        """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(1, 20), nn.ReLU(), nn.Dropout(p=0.05), nn.Linear(20, 1))
optimiser = torch.optim.SGD(net.parameters(), lr=0.01)
x, y = torch.randn(64, 1), torch.randn(64, 1)
for epoch in range(100):
    loss = (net(x) - y).pow(2).mean()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()


def plot_mean():
    net.eval()
    with torch.no_grad():
        print(net(x).mean().item())


plot_mean()
net.train()  # dropout on: Monte-Carlo samples of the prediction
draws = []
with torch.no_grad():
    for t in range(100):
        draws.append(net(x).squeeze())
print(torch.stack(draws).std(0))
""",
        # near miss: one caller switches its model before the call, the other builds it in eval mode
        """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))


def evaluate(m, batches):
    with torch.no_grad():
        return [m(x).argmax(1) for x in batches]


trained = Net()
trained.load_state_dict(torch.load("net.pt", map_location="cpu"))
trained.eval()
frozen = Net().eval()
frozen.load_state_dict(torch.load("net.pt", map_location="cpu"))
print(evaluate(trained, data), evaluate(frozen, data))
""",
        # near miss: a factory fills an empty `Sequential` with layers that act alike in both modes
        """
import torch
from torch import nn


def make_net():
    net = nn.Sequential()
    net.add_module("conv", nn.Conv2d(1, 8, 3))
    net.add_module("flat", nn.Flatten())
    return net


def accuracy(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(-1) == y).sum().item() for x, y in batches)


def fit(batches, epochs):
    model = make_net()
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(accuracy(model, batches))
""",
        # the factory's model moved on return holds no dropout or batch norm: eval mode changes nothing
        Valid(
            """
import torch
import torch.nn as nn


def build():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    return model.to("cpu"), torch.optim.Adam(model.parameters())


@torch.no_grad()
def scores(x, model):
    return model(x).cpu().tolist()


def main(batches):
    model, optimizer = build()
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [scores(x, model) for x, _ in batches]
"""
        ),
        # the inherited model has no layer that eval mode changes (layer norm)
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        return self.out(self.norm(x))


class Estimator:
    def build(self, d):
        self.network = Net(d)
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.network(x), y).backward()
            self.optimizer.step()


class Classifier(Estimator):
    @torch.no_grad()
    def predict_proba(self, batches):
        return [torch.softmax(self.network(x), dim=1).numpy() for x in batches]
"""
        ),
        # the same trainer handed a model that eval mode does not change
        Valid(
            """
import torch
import torch.nn as nn


class Learner:
    def __init__(self, model, loss_fn, optimizer):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer

    def fit_batch(self, x, y):
        self.model.train()
        loss = self.loss_fn(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def validate(self, x, y):
        return self.loss_fn(self.model(x), y).item()


net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
learner = Learner(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
for x, y in [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]:
    learner.fit_batch(x, y)
    print(learner.validate(x, y))
"""
        ),
        # the same stack of copies of a block without a layer that eval mode changes
        Valid(
            """
import copy

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=8, p=0.1):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Identity()

    def forward(self, x):
        return x + self.drop(self.fc(x))


def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class Stack(nn.Module):
    def __init__(self, block, n):
        super().__init__()
        self.blocks = clones(block, n)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


@torch.no_grad()
def accuracy(model, x, y):
    return (model(x).argmax(1) == y).float().mean().item()


model = Stack(Block(), 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
for epoch in range(3):
    model.train()
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print(accuracy(model, x, y))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Encoder(nn.Module):
    def __init__(self, layer, n):
        super().__init__()
        self.layers = nn.ModuleList([layer for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def predict(model, x):
    with torch.no_grad():
        return model(x)


model = nn.Sequential(Encoder(Layer(), 2), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
torch.manual_seed(0)
a = predict(model, x)
torch.manual_seed(1)
b = predict(model, x)
print(torch.equal(a, b))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def load_backbone():
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())


@torch.no_grad()
def extract_features(batches, net):
    feats = []
    for x in batches:
        feats.append(net(x).cpu())
    return torch.cat(feats, 0)


backbone = load_backbone()
backbone = nn.DataParallel(backbone).eval()
print(extract_features([torch.randn(4, 4), torch.randn(4, 4)], backbone).shape)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Config:
    hidden = 8
    dropout_keep = 0.0


class Classifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(4, config.hidden)
        self.dropout = nn.Dropout(self.config.dropout_keep)
        self.out = nn.Linear(config.hidden, 2)

    def forward(self, x):
        return self.out(self.dropout(torch.relu(self.fc(x))))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Classifier(Config())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]
for x, y in data:
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
print(accuracy(model, data))
"""
        ),
        # a prediction inside a nested training function, after that function's own `model.eval()`
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


def run():
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(model.parameters())
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))

    def train_epoch():
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        model.eval()
        print(F.cross_entropy(model(x), y).item())

    for _ in range(3):
        train_epoch()


run()
"""
        ),
        # the option's default picks a builder of a plain linear model: nothing to switch
        Valid(
            """
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU())


class Net(nn.Module):
    def __init__(self, width, num_classes):
        super().__init__()
        self.features = conv_bn(3, width)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def small(num_classes):
    return Net(8, num_classes)


def linear(num_classes):
    return nn.Sequential(nn.Flatten(), nn.Linear(192, num_classes))


model_dict = {"small": small, "linear": linear}

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="linear")
opt = parser.parse_args()


def validate(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = model_dict[opt.arch](num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(validate(model, data))
"""
        ),
        # the same blocks with group norm: the same in both modes
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.bn = nn.GroupNorm(2, width)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, width=8, depth=2, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stages = nn.ModuleList([])
        for _ in range(depth):
            layers = []
            for _ in range(2):
                layers.append(Block(width))
            self.stages.append(nn.Sequential(*layers))
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean((2, 3)))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(accuracy(model, data))
"""
        ),
        # the same settings object with a zero rate: dropout that drops nothing
        Valid(
            """
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

config = argparse.Namespace(lr=0.01, dropout_p=0.0, hidden=16)


def create_net(config):
    return nn.Sequential(nn.Linear(8, config.hidden), nn.ReLU(), nn.Dropout(p=config.dropout_p),
                         nn.Linear(config.hidden, 3))


def evaluate(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def train(config=config):
    model = create_net(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
    for _ in range(2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


train()
"""
        ),
        # the evaluator is handed the model: it may switch it
        Valid(
            """
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from panoptic_tools import PanopticEvaluator

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def evaluate(model, batches, output_dir):
    evaluator = PanopticEvaluator(os.path.join(output_dir, "panoptic_eval"), model)
    with torch.no_grad():
        for x, y in batches:
            evaluator.update(model(x).argmax(1), y)
    return evaluator.summarize()


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(evaluate(model, data, "out"))
"""
        ),
        # `main` sets `args.arch` itself: the default is not what builds the model
        Valid(
            """
import argparse

import torch
import torch.nn.functional as F
import torchvision


def evaluate(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def main(args):
    args.arch = args.arch.lower()
    model = torchvision.models.__dict__[args.arch](num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(2, 3, 64, 64), torch.randint(0, 10, (2,)))]
    for epoch in range(args.start_epoch, 2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18")
    main(parser.parse_args())
"""
        ),
        # the attack leaves the mode as it found it
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def perturb(net, x, y, step=0.01):
    x = x.clone().requires_grad_()
    with torch.enable_grad():
        loss = F.cross_entropy(net(x), y)
    grad, = torch.autograd.grad(loss, [x])
    return (x + step * grad.sign()).detach()


def robust_accuracy(model, batches):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            x_adv = perturb(model, x, y)
            correct += (model(x_adv).argmax(1) == y).sum().item()
    return correct


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(perturb(model, x, y)), y).backward()
        optimizer.step()
    print(robust_accuracy(model, data))
"""
        ),
        # eval mode set again after the attack, before the evaluation
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def perturb(net, x, y, step=0.01):
    net.eval()
    x = x.clone().requires_grad_()
    with torch.enable_grad():
        loss = F.cross_entropy(net(x), y)
    grad, = torch.autograd.grad(loss, [x])
    net.train()
    return (x + step * grad.sign()).detach()


def robust_accuracy(model, batches):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            x_adv = perturb(model, x, y)
            model.eval()
            correct += (model(x_adv).argmax(1) == y).sum().item()
    return correct


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(perturb(model, x, y)), y).backward()
        optimizer.step()
    print(robust_accuracy(model, data))
"""
        ),
        # the validation switches the model itself
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        self.model.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            F.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()

    def validate(self, batches):
        self.model.eval()
        with torch.no_grad():
            return sum((self.model(x).argmax(1) == y).sum().item() for x, y in batches)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            out = self.model(x).argmax(1)
        self.model.train()
        return out


net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1))
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
for epoch in range(2):
    trainer.fit(data)
    print(trainer.validate(data))
print(trainer.predict(data[0][0]))
"""
        ),
        # a pretrained network built in `__init__` only to lend a layer its weights: the model itself has
        # convolutions, activations and pooling only
        Valid(
            """
import torch
import torch.nn as nn
from torchvision import models


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        donor = models.vgg16_bn()
        self.frontend = nn.Sequential(nn.Conv2d(3, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.frontend[0].weight.data.copy_(donor.features[0].weight.data.repeat(2, 1, 1, 1))
        self.head = nn.Conv2d(128, 1, 1)

    def forward(self, x):
        return self.head(self.frontend(x))


def predicted_count(net, image):
    with torch.no_grad():
        return net(image).sum().item()


net = Counter()
opt = torch.optim.Adam(net.parameters(), lr=1e-5)
for step in range(2):
    loss = (net(torch.randn(2, 3, 64, 64)) - 1.0).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(predicted_count(net, torch.randn(1, 3, 64, 64)))
"""
        ),
        # one caller passes a Hugging Face model `from_pretrained` loads in eval mode, the other a model whose
        # dropout rate is 0: neither model acts differently in eval mode when it arrives
        Valid(
            """
import sys

import torch
import transformers


class TinyLM(torch.nn.Module):
    def __init__(self, depth, rate=0.0):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 16)
        blocks = []
        for _ in range(depth):
            blocks.append(torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Dropout(rate)))
        self.blocks = torch.nn.Sequential(*blocks)
        self.out = torch.nn.Linear(16, 100)

    def forward(self, ids):
        return self.out(self.blocks(self.emb(ids)))


def mean_logprob(model, ids):
    with torch.no_grad():
        out = model(ids)
    logits = getattr(out, "logits", out)
    return logits.log_softmax(-1)[:, :-1].gather(2, ids[:, 1:, None]).mean().item()


def compare(path, ids):
    reference = transformers.GPT2LMHeadModel.from_pretrained("distilgpt2")
    print(mean_logprob(reference, ids))
    tuned = TinyLM(int(path))
    print(mean_logprob(tuned, ids))


compare(sys.argv[1], torch.randint(0, 100, (1, 8)))
"""
        ),
        # the script switches the model before a wrapper hands it to the evaluation: two callers up
        Valid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def evaluate(net, x):
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def evaluate_batches(net, batches):
    return [evaluate(net, x) for x in batches]


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
scorer.eval()
print(evaluate_batches(scorer, [torch.randn(4, 6), torch.randn(2, 6)]))
print(evaluate(scorer, torch.randn(3, 6)))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def predict(net, x):
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def evaluate_batches(net, batches):
    return [predict(net, x) for x in batches]


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
scorer.eval()
print(evaluate_batches(scorer, [torch.randn(4, 6), torch.randn(2, 6)]))
print(predict(scorer, torch.randn(3, 6)))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
from torchvision import models


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = models.vgg16(weights="DEFAULT").features
        self.alex = models.alexnet(weights="DEFAULT").features.to("cuda")

    def forward(self, x):
        return self.vgg(x).mean() + self.alex(x).mean()


def distances(images):
    net = Perceptual()
    with torch.no_grad():
        return [net(img[None]).item() for img in images]
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))

    def forward(self, x):
        return self.body(x)


def fit(net, x, opt):
    net.train()
    opt.zero_grad()
    net(x).pow(2).mean().backward()
    opt.step()


def score(net, x):
    net.eval()
    with torch.no_grad():
        return net(x).pow(2).mean().item()


def sample(net, z):
    with torch.no_grad():
        return net(z).numpy()


x = torch.randn(32, 3)
flow = Coupling()
fit(flow, x, torch.optim.Adam(flow.parameters()))
print(score(flow, x))
flow = Coupling().eval()
flow = flow.to("cpu")
flow.load_state_dict(torch.load("coupling.pt"))
print(sample(flow, torch.randn(8, 3)))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.body(x).flatten(1)


def embed_all(images, parallel=False, batch=16):
    model = Features()
    model.eval()
    if parallel:
        model = nn.DataParallel(model)
    out = []
    for start in range(0, len(images), batch):
        with torch.no_grad():
            out.append(model(images[start:start + batch]).numpy())
    return out
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, path=None):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        if path is not None:
            self.load_state_dict(torch.load(path))
        self.eval()

    def forward(self, x):
        return self.body(x)


def load(path):
    net = Scorer()
    net.load_state_dict(torch.load(path))
    return net.eval()


def score(x, path, parallel=False):
    model = Scorer(path)
    with torch.no_grad():
        first = model(x)
    model = nn.DataParallel(load(path)) if parallel else load(path)
    with torch.no_grad():
        return first, model(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()

    def fit(self, loader, held_out):
        self.train(loader, 3)
        self.model.eval()
        return self.test(held_out)

    def test(self, loader):
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()
        self.model.eval()  # training done: the model is used for scoring from here on

    def test(self, loader):
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Stopper:
    def __init__(self, path):
        self.path, self.best = path, None

    def __call__(self, score, model):
        if self.best is None or score < self.best:
            self.best = score
            torch.save(model.state_dict(), self.path)
        model.eval()  # scored from here on


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.stopper = Stopper("best.pt")

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()
            self.stopper(self.opt.param_groups[0]["lr"], self.model)

    def test(self, loader):
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 32
USE_CUDA = torch.cuda.is_available()


class Decoder(nn.Module):
    def __init__(self, vocab, hidden, dropout_p=0.1):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def start(self, batch):
        return torch.zeros(1, batch, self.hidden)

    def forward(self, tokens, is_training=False):
        embedded = self.embedding(tokens)
        if is_training:
            embedded = self.dropout(embedded)
        output, _ = self.gru(embedded, self.start(tokens.size(0)))
        return self.out(output)

    def decode(self, first, steps):
        hidden, token, picked = self.start(1), first, []
        for _ in range(steps):
            output, hidden = self.gru(self.embedding(token), hidden)
            token = self.out(output).argmax(-1)
            picked.append(token)
        return torch.cat(picked, 1)


decoder = Decoder(20, HIDDEN * 2)
if USE_CUDA:
    decoder = decoder.cuda()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(10):
    tokens = torch.randint(0, 20, (4, 6))
    optimizer.zero_grad()
    scores = decoder(tokens, is_training=True)
    F.cross_entropy(scores.reshape(-1, 20), tokens.reshape(-1)).backward()
    optimizer.step()

with torch.no_grad():
    print(decoder(torch.randint(0, 20, (1, 6))).argmax(-1).tolist())
    print(decoder.decode(torch.zeros(1, 1, dtype=torch.long), 5).tolist())
"""
        ),
        Valid(
            """
import torch
from torch import nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.3)
    def forward(self, x, is_training=False):
        h = torch.relu(self.fc1(x))
        if is_training:
            h = self.dropout(h)
        return self.fc2(h)

model = Classifier()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x, is_training=True), y)
    opt.zero_grad(); loss.backward(); opt.step()

with torch.no_grad():
    pred = model(torch.randn(4, 10)).argmax(1)     # dropout never runs here
print(pred.tolist())
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()
            print(epoch, self.validate(loader))

    def validate(self, loader):
        self.model.eval()
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def test(self, loader):
        with torch.no_grad():
            return [self.model(x).squeeze(1).tolist() for x, _ in loader]


exp = Experiment(4)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
exp.fit(data, 2)
print(exp.test(data) == exp.test(data))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.model.eval()

    def _train_epoch(self, loader):
        self.model.train()
        for _ in range(1):
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()

    def fit(self, loader, epochs):
        for _ in range(epochs):
            self._train_epoch(loader)
        self.model.eval()

    def test(self, loader):
        pass
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)


exp = Experiment(4)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
exp.fit(data, 2)
print(exp.test(data), exp.test(data))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, width):
        self.model, self.opt = self.build(width)

    def build(self, width):
        model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        return model, torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, loader):
        self.model.train()
        for x, y in loader:
            self.opt.zero_grad()
            ((self.model(x) - y) ** 2).mean().backward()
            self.opt.step()

    def show(self, loader):
        with torch.no_grad():
            for x, _ in loader:
                print(self.model(x).squeeze(1).tolist())

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)

    def main(self, loader, epochs):
        for epoch in range(epochs):
            self.fit(loader)
            self.model.eval()
            self.show(loader)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Inference:
    def __init__(self, path):
        self.seg_model, self.cls_model = self.init_models(path)

    def init_models(self, path):
        seg_model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 1, 1))
        seg_model.load_state_dict(torch.load(path + "/seg.pt", weights_only=True))
        seg_model.eval()
        cls_model = nn.Sequential(nn.Flatten(), nn.Linear(36, 8), nn.Dropout(0.3), nn.Linear(8, 2))
        cls_model.load_state_dict(torch.load(path + "/cls.pt", weights_only=True))
        cls_model.eval()
        return seg_model, cls_model

    def segment(self, image):
        with torch.no_grad():
            return self.seg_model(image) > 0.5

    def classify(self, crop):
        with torch.no_grad():
            return self.cls_model(crop).softmax(-1)[:, 1].tolist()
"""
        ),
        Valid(
            """
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x, is_training=False):
        h = torch.relu(self.fc1(x))
        if is_training:
            h = self.dropout(h)
        return self.fc2(h)


torch.manual_seed(0)
model = Classifier()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x, True), y)
    opt.zero_grad(); loss.backward(); opt.step()

use_mc = False
x = torch.randn(4, 10)
with torch.no_grad():
    for _ in range(2):
        print(model(x, is_training=use_mc).argmax(1).tolist(), model(x, is_training=use_mc).sum().item())
"""
        ),
        Valid(
            """
import torch
import torchvision


def classify(net, batch):
    return net(batch)


def main():
    # built in eval mode where it is named: the helper runs it so
    backbone = torchvision.models.resnet18(weights="DEFAULT").eval()
    print(classify(backbone, torch.rand(2, 3, 64, 64)).argmax(dim=1).tolist())


main()
"""
        ),
        Valid(
            """
import torch
from torch import nn


def score(model, batches):
    with torch.no_grad():
        return [model(x).argmax(1) for x, _ in batches]


device = torch.device("cpu")
net = nn.Sequential(nn.Linear(10, 16), nn.Dropout(0.3), nn.Linear(16, 2))
net.eval()
print(score(net.to(device), [(torch.randn(4, 10), None)]))
"""
        ),
        Valid(
            """
import torch
from torch import nn
from transformers import PreTrainedModel


class Scorer(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(config.hidden_size, 3)

    def forward(self, h):
        return self.head(self.dropout(h))


def accuracy(net, h, y):
    with torch.no_grad():
        return (net(h).argmax(1) == y).float().mean().item()


scorer = Scorer.from_pretrained("org/checkpoint")
optimizer = torch.optim.AdamW(scorer.parameters(), lr=1e-5)
h, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
# loaded in eval mode and never switched: the dropout is off
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(scorer(h), y).backward()
    optimizer.step()
    print(accuracy(scorer, h, y))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        # dropout kept on in both modes on purpose (noise at test time): eval() changes nothing
        return torch.tanh(F.dropout(self.conv(x), 0.5, training=True))


net = Noisy()
net.load_state_dict(torch.load("noisy.pth", weights_only=True))
with torch.no_grad():
    for x in torch.utils.data.DataLoader(torch.randn(4, 3, 8, 8), batch_size=2):
        print(net(x).mean().item())
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
net.load_state_dict(torch.load("head.pt"))
net.cuda().eval()
with torch.no_grad():
    for x in [torch.randn(4, 8, device="cuda") for _ in range(3)]:
        print(net(x).argmax(1))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.load_state_dict(torch.load(path))
    model.eval()
    return model


def predict(model, loader):
    masks = []
    with torch.no_grad():
        for images in loader:
            masks.append(torch.sigmoid(model(images)).cpu())
    return masks


if __name__ == "__main__":
    net = get_model("model.pt")
    predict(net, [torch.randn(4, 3, 32, 32)])
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


def predict(model, loader):
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]


def run_valid():
    return predict(net, [torch.randn(4, 8)])


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    net.load_state_dict(torch.load("head.pt"))
    net.eval()
    print(run_valid())
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F
class NoisyNet(nn.Module):  # NoisyNet exploration: noise only in training mode
    def __init__(self):
        super().__init__()
        self.mu = nn.Parameter(torch.zeros(2, 4))
        self.sigma = nn.Parameter(torch.full((2, 4), 0.1))

    def forward(self, x):
        w = self.mu + self.sigma * torch.randn_like(self.sigma) if self.training else self.mu
        return F.linear(x, w)

class Agent:
    def __init__(self):
        self.net = NoisyNet()
        self.opt = torch.optim.Adam(self.net.parameters())

    def act(self, s):  # exploration during training: train mode on purpose
        with torch.no_grad():
            return self.net(torch.as_tensor(s).unsqueeze(0)).argmax(-1).item()

    def learn(self, s, a, target):
        loss = F.mse_loss(self.net(s).gather(1, a).squeeze(1), target)
        self.opt.zero_grad(); loss.backward(); self.opt.step()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.Linear(16, 4))

    def forward(self, x):
        return self.body(x)


class Searcher(nn.Module):
    def __init__(self, model, width):
        super().__init__()
        self.model = model
        self.model.eval()  # the wrapper switches the model it is handed itself
        self.width = width

    @torch.no_grad()
    def search(self, x):
        return self.model(x).topk(self.width).indices


net = Net()
net.load_state_dict(torch.load("net.pt", weights_only=True))
searcher = Searcher(model=net, width=2)
print(searcher.search(torch.randn(3, 8)))
"""
        ),
        Valid(
            """
import unittest

import torch
import torch.nn as nn


@torch.no_grad()
def test_round_trip(model):
    x = torch.randn(16, 4)
    y = model(x)
    assert y.shape == (16, 4)


class TestShapes(unittest.TestCase):
    def test_mlp(self):
        test_round_trip(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 4)))
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(width, vocab)

    def encode(self, tokens):
        return self.drop(self.embed(tokens)).mean(1)


def check_encode(model, tokens):
    for p in model.parameters():
        nn.init.constant_(p, 0.1)
    with torch.no_grad():
        encoded = model.encode(tokens)
    assert encoded.shape == (tokens.size(0), 16)


if __name__ == "__main__":
    model = Translator(50, 16)
    check_encode(model, torch.randint(0, 50, (2, 5)))
"""
        ),
    ]


    INVALID = [
        # each epoch starts with a score in eval mode, then `.train()` and the batches: the score after the
        # last epoch runs in training mode (the helper never switches the model itself)
        Invalid(
            """
import torch
import torch.nn as nn


def agreement(net, pairs):
    with torch.no_grad():
        return sum((net(a).argmax(1) == b).sum().item() for a, b in pairs)


net = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
opt = torch.optim.Adam(net.parameters())
pairs = [(torch.randn(5, 6), torch.randint(0, 2, (5,)))]
for epoch in range(4):
    net.eval()
    print(epoch, agreement(net, pairs))
    net.train()
    for a, b in pairs:
        opt.zero_grad()
        nn.functional.cross_entropy(net(a), b).backward()
        opt.step()
print("final", agreement(net, pairs))
""",
            fixed="""
import torch
import torch.nn as nn


def agreement(net, pairs):
    net.eval()
    with torch.no_grad():
        return sum((net(a).argmax(1) == b).sum().item() for a, b in pairs)


net = nn.Sequential(nn.Linear(6, 12), nn.Dropout(0.3), nn.Linear(12, 2))
opt = torch.optim.Adam(net.parameters())
pairs = [(torch.randn(5, 6), torch.randint(0, 2, (5,)))]
for epoch in range(4):
    net.eval()
    print(epoch, agreement(net, pairs))
    net.train()
    for a, b in pairs:
        opt.zero_grad()
        nn.functional.cross_entropy(net(a), b).backward()
        opt.step()
print("final", agreement(net, pairs))
""",
            unsafe=True,
            line=8,
            message="in training mode",
        ),
        # in a script: scored in eval mode first, then trained; the last score follows `.train()` on every path
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.Linear(12, 2))
opt = torch.optim.Adam(net.parameters())
a, b = torch.randn(5, 6), torch.randint(0, 2, (5,))

net.eval()
with torch.no_grad():
    print("before", net(a).argmax(1).tolist())
net.train()
for step in range(20):
    opt.zero_grad()
    nn.functional.cross_entropy(net(a), b).backward()
    opt.step()
with torch.no_grad():
    print("after", (net(a).argmax(1) == b).float().mean().item())
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.Linear(12, 2))
opt = torch.optim.Adam(net.parameters())
a, b = torch.randn(5, 6), torch.randint(0, 2, (5,))

net.eval()
with torch.no_grad():
    print("before", net(a).argmax(1).tolist())
net.train()
for step in range(20):
    opt.zero_grad()
    nn.functional.cross_entropy(net(a), b).backward()
    opt.step()
with torch.no_grad():
    net.eval()
    print("after", (net(a).argmax(1) == b).float().mean().item())
""",
            unsafe=True,
            line=18,
            message="in training mode",
        ),
        # another method of the class switches the model to eval mode and back: it leaves it training
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        self.model.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            F.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()

    def validate(self, batches):
        with torch.no_grad():
            return sum((self.model(x).argmax(1) == y).sum().item() for x, y in batches)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            out = self.model(x).argmax(1)
        self.model.train()
        return out


net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1))
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
for epoch in range(2):
    trainer.fit(data)
    print(trainer.validate(data))
print(trainer.predict(data[0][0]))
""",
            line=21,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        self.model.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            F.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()

    def validate(self, batches):
        self.model.eval()
        with torch.no_grad():
            return sum((self.model(x).argmax(1) == y).sum().item() for x, y in batches)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            out = self.model(x).argmax(1)
        self.model.train()
        return out


net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
trainer = Trainer(net, torch.optim.SGD(net.parameters(), lr=0.1))
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
for epoch in range(2):
    trainer.fit(data)
    print(trainer.validate(data))
print(trainer.predict(data[0][0]))
""",
            unsafe=True,
        ),
        # put in eval mode, then a helper run in the loop (an attack) puts it back in training mode: no fix
        # (where the switch belongs is the author's call)
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def perturb(net, x, y, step=0.01):
    net.eval()
    x = x.clone().requires_grad_()
    with torch.enable_grad():
        loss = F.cross_entropy(net(x), y)
    grad, = torch.autograd.grad(loss, [x])
    net.train()
    return (x + step * grad.sign()).detach()


def robust_accuracy(model, batches):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            x_adv = perturb(model, x, y)
            correct += (model(x_adv).argmax(1) == y).sum().item()
    return correct


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(perturb(model, x, y)), y).backward()
        optimizer.step()
    print(robust_accuracy(model, data))
""",
            line=27,
            message="in training mode",
        ),
        # the options handed to `main`, which writes another of their attributes: `args.arch` is still the default
        Invalid(
            """
import argparse

import torch
import torch.nn.functional as F
import torchvision


def evaluate(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def main(args):
    args.start_epoch = 0
    model = torchvision.models.__dict__[args.arch](num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(2, 3, 64, 64), torch.randint(0, 10, (2,)))]
    for epoch in range(args.start_epoch, 2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18")
    main(parser.parse_args())
""",
            line=11,
            fixed="""
import argparse

import torch
import torch.nn.functional as F
import torchvision


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def main(args):
    args.start_epoch = 0
    model = torchvision.models.__dict__[args.arch](num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(2, 3, 64, 64), torch.randint(0, 10, (2,)))]
    for epoch in range(args.start_epoch, 2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet18")
    main(parser.parse_args())
""",
            unsafe=True,
        ),
        # a library evaluator built from a path and a count: neither can hold the model it would switch
        Invalid(
            """
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from panoptic_tools import PanopticEvaluator

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def evaluate(model, batches, output_dir):
    evaluator = PanopticEvaluator(os.path.join(output_dir, "panoptic_eval"), str(len(batches)))
    with torch.no_grad():
        for x, y in batches:
            evaluator.update(model(x).argmax(1), y)
    return evaluator.summarize()


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(evaluate(model, data, "out"))
""",
            line=18,
            fixed="""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from panoptic_tools import PanopticEvaluator

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]


def evaluate(model, batches, output_dir):
    evaluator = PanopticEvaluator(os.path.join(output_dir, "panoptic_eval"), str(len(batches)))
    model.eval()
    with torch.no_grad():
        for x, y in batches:
            evaluator.update(model(x).argmax(1), y)
    return evaluator.summarize()


for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(evaluate(model, data, "out"))
""",
            unsafe=True,
        ),
        # the dropout rate is a keyword of a settings object built in view (`argparse.Namespace(dropout_p=0.1)`)
        Invalid(
            """
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

config = argparse.Namespace(lr=0.01, dropout_p=0.1, hidden=16)


def create_net(config):
    return nn.Sequential(nn.Linear(8, config.hidden), nn.ReLU(), nn.Dropout(p=config.dropout_p),
                         nn.Linear(config.hidden, 3))


def evaluate(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def train(config=config):
    model = create_net(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
    for _ in range(2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


train()
""",
            line=18,
            fixed="""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

config = argparse.Namespace(lr=0.01, dropout_p=0.1, hidden=16)


def create_net(config):
    return nn.Sequential(nn.Linear(8, config.hidden), nn.ReLU(), nn.Dropout(p=config.dropout_p),
                         nn.Linear(config.hidden, 3))


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def train(config=config):
    model = create_net(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    data = [(torch.randn(4, 8), torch.randint(0, 3, (4,)))]
    for _ in range(2):
        model.train()
        for x, y in data:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        print(evaluate(model, data))


train()
""",
            unsafe=True,
        ),
        # the model is the builder a dict display gives for the option's default (`model_dict[opt.arch]`), a
        # factory whose network holds what a module-level helper returns (`conv_bn`: a batch norm)
        Invalid(
            """
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU())


class Net(nn.Module):
    def __init__(self, width, num_classes):
        super().__init__()
        self.features = conv_bn(3, width)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def small(num_classes):
    return Net(8, num_classes)


def wide(num_classes):
    return Net(32, num_classes)


model_dict = {"small": small, "wide": wide}

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="small")
opt = parser.parse_args()


def validate(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = model_dict[opt.arch](num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(validate(model, data))
""",
            line=42,
            fixed="""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU())


class Net(nn.Module):
    def __init__(self, width, num_classes):
        super().__init__()
        self.features = conv_bn(3, width)
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def small(num_classes):
    return Net(8, num_classes)


def wide(num_classes):
    return Net(32, num_classes)


model_dict = {"small": small, "wide": wide}

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="small")
opt = parser.parse_args()


def validate(model, batches):
    correct = 0
    model.eval()
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = model_dict[opt.arch](num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(validate(model, data))
""",
            unsafe=True,
        ),
        # blocks appended to a list in a loop, then kept in a `ModuleList` built empty: the class holds them
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, width=8, depth=2, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stages = nn.ModuleList([])
        for _ in range(depth):
            layers = []
            for _ in range(2):
                layers.append(Block(width))
            self.stages.append(nn.Sequential(*layers))
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean((2, 3)))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(accuracy(model, data))
""",
            line=40,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(width, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, width=8, depth=2, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.stages = nn.ModuleList([])
        for _ in range(depth):
            layers = []
            for _ in range(2):
                layers.append(Block(width))
            self.stages.append(nn.Sequential(*layers))
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean((2, 3)))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        model.eval()
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in data:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    print(accuracy(model, data))
""",
            unsafe=True,
        ),
        # the same prediction with the switch to eval mode after it: the model still drops activations
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


def run():
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(model.parameters())
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))

    def train_epoch():
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        print(F.cross_entropy(model(x), y).item())
        model.eval()

    for _ in range(3):
        train_epoch()


run()
""",
            line=17,
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


def run():
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(model.parameters())
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))

    def train_epoch():
        model.train()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        model.eval()
        print(F.cross_entropy(model(x), y).item())
        model.eval()

    for _ in range(3):
        train_epoch()


run()
""",
            unsafe=True,
        ),
        # the model is the torchvision builder an option names (`models.__dict__[args.arch]()`): with the
        # option's default, a ResNet and its batch norm
        Invalid(
            """
import argparse

import torch
import torchvision.models as models

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--epochs", type=int, default=2)


def validate(loader, model):
    correct = 0
    with torch.no_grad():
        for images, target in loader:
            correct += (model(images).argmax(1) == target).sum().item()
    return correct


def main(loader):
    args = parser.parse_args()
    model = models.__dict__[args.arch]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        model.train()
        for images, target in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(images), target).backward()
            optimizer.step()
        validate(loader, model)
""",
            fixed="""
import argparse

import torch
import torchvision.models as models

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--epochs", type=int, default=2)


def validate(loader, model):
    correct = 0
    model.eval()
    with torch.no_grad():
        for images, target in loader:
            correct += (model(images).argmax(1) == target).sum().item()
    return correct


def main(loader):
    args = parser.parse_args()
    model = models.__dict__[args.arch]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        model.train()
        for images, target in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(images), target).backward()
            optimizer.step()
        validate(loader, model)
""",
            line=16,
            unsafe=True,
            message="`models.__dict__[args.arch]()`",
        ),
        # a factory that stacks layers in a list and unpacks it into `nn.Sequential(*layers)`: the list's
        # batch norm is the model's
        Invalid(
            """
import torch
import torch.nn as nn


def make_mlp(sizes):
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layers.append(nn.Linear(n_in, n_out))
        layers.append(nn.BatchNorm1d(n_out))
    return nn.Sequential(*layers)


@torch.no_grad()
def accuracy(model, batches):
    hits = 0
    for x, y in batches:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = make_mlp([8, 16, 4])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 4, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
""",
            fixed="""
import torch
import torch.nn as nn


def make_mlp(sizes):
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        layers.append(nn.Linear(n_in, n_out))
        layers.append(nn.BatchNorm1d(n_out))
    return nn.Sequential(*layers)


@torch.no_grad()
def accuracy(model, batches):
    hits = 0
    model.eval()
    for x, y in batches:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = make_mlp([8, 16, 4])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 8), torch.randint(0, 4, (4,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
""",
            line=18,
            unsafe=True,
            message="`nn.BatchNorm1d(n_out)`",
        ),
        # the rate is kept on the instance (`self.dropout = dropout`, then `nn.Dropout(p=self.dropout)` bound
        # to the same attribute): the constructor's default 0.5 is what the model gets
        Invalid(
            """
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, vocab, width=32, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        self.embed = nn.Embedding(vocab, width)
        self.dropout = nn.Dropout(p=self.dropout)
        self.out = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.out(self.dropout(self.embed(ids)))


def score(captioner, batches):
    hits = 0
    with torch.no_grad():
        for ids, target in batches:
            hits += (captioner(ids).argmax(-1) == target).sum().item()
    return hits


captioner = Captioner(100)
opt = torch.optim.Adam(captioner.parameters())
batches = [(torch.randint(0, 100, (4, 6)), torch.randint(0, 100, (4, 6)))]
for epoch in range(2):
    captioner.train()
    for ids, target in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(captioner(ids).flatten(0, 1), target.flatten()).backward()
        opt.step()
    print(score(captioner, batches))
""",
            fixed="""
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, vocab, width=32, dropout=0.5):
        super().__init__()
        self.dropout = dropout
        self.embed = nn.Embedding(vocab, width)
        self.dropout = nn.Dropout(p=self.dropout)
        self.out = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.out(self.dropout(self.embed(ids)))


def score(captioner, batches):
    hits = 0
    with torch.no_grad():
        captioner.eval()
        for ids, target in batches:
            hits += (captioner(ids).argmax(-1) == target).sum().item()
    return hits


captioner = Captioner(100)
opt = torch.optim.Adam(captioner.parameters())
batches = [(torch.randint(0, 100, (4, 6)), torch.randint(0, 100, (4, 6)))]
for epoch in range(2):
    captioner.train()
    for ids, target in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(captioner(ids).flatten(0, 1), target.flatten()).backward()
        opt.step()
    print(score(captioner, batches))
""",
            line=22,
            unsafe=True,
            message="`nn.Dropout(p=self.dropout)`",
        ),
        # the dropout rate is a constructor argument; every construction in the file passes a module
        # constant of 0.5 for it
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

DROPOUT = 0.5


class Tagger(nn.Module):
    def __init__(self, vocab, width, classes, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        return self.out(self.drop(self.embed(x)).mean(1))


def accuracy(model, batches):
    hits = 0
    with torch.no_grad():
        for x, y in batches:
            hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = Tagger(100, 16, 4, DROPOUT)
opt = torch.optim.Adam(model.parameters())
batches = [(torch.randint(0, 100, (8, 5)), torch.randint(0, 4, (8,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

DROPOUT = 0.5


class Tagger(nn.Module):
    def __init__(self, vocab, width, classes, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        return self.out(self.drop(self.embed(x)).mean(1))


def accuracy(model, batches):
    hits = 0
    with torch.no_grad():
        model.eval()
        for x, y in batches:
            hits += (model(x).argmax(1) == y).sum().item()
    return hits


model = Tagger(100, 16, 4, DROPOUT)
opt = torch.optim.Adam(model.parameters())
batches = [(torch.randint(0, 100, (8, 5)), torch.randint(0, 4, (8,)))]
for epoch in range(2):
    model.train()
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print(accuracy(model, batches))
""",
            line=24,
            unsafe=True,
            message="`nn.Dropout(dropout)`",
        ),
        # a module-level evaluation function no call in the project reaches: the model arrives in whatever
        # mode its caller left it, and only this function can switch it
        Invalid(
            """
import torch


def validate(model, val_loader):
    device = next(model.parameters()).device
    correct = 0
    for images, labels in val_loader:
        outputs = model(images.to(device))
        correct += (torch.argmax(outputs, dim=1) == labels.to(device)).sum().item()
    return correct
""",
            fixed="""
import torch


def validate(model, val_loader):
    device = next(model.parameters()).device
    correct = 0
    model.eval()
    for images, labels in val_loader:
        outputs = model(images.to(device))
        correct += (torch.argmax(outputs, dim=1) == labels.to(device)).sum().item()
    return correct
""",
            line=9,
            unsafe=True,
        ),
        # the same under `no_grad`, spelled as a prediction helper over a list of images
        Invalid(
            """
import torch


@torch.no_grad()
def predicted_labels(classifier, images):
    scores = classifier(torch.stack(images).to(next(classifier.parameters()).device))
    return scores.argmax(dim=-1).tolist()
""",
            fixed="""
import torch


@torch.no_grad()
def predicted_labels(classifier, images):
    classifier.eval()
    scores = classifier(torch.stack(images).to(next(classifier.parameters()).device))
    return scores.argmax(dim=-1).tolist()
""",
            line=7,
            unsafe=True,
        ),
        # an inference pass by behaviour, whatever the names: every model call runs under `no_grad`, what
        # it produces ends in `.item()` picks, and the model (dropout, p=0.2) was trained in training mode
        Invalid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 10)
        self.mask = nn.Dropout(p=0.2)
        self.out = nn.Linear(10, 4)

    def forward(self, x):
        return self.out(self.mask(torch.tanh(self.proj(x))))


def agreement(tagger, rows):
    same = 0
    with torch.no_grad():
        for x, y in rows:
            guess = tagger(x)
            same += guess.argmax(1).eq(y).sum().item()
    return same


tagger = Tagger()
sgd = torch.optim.SGD(tagger.parameters(), lr=0.05)
rows = [(torch.randn(5, 10), torch.randint(0, 4, (5,)))]
for step in range(3):
    for x, y in rows:
        sgd.zero_grad()
        nn.functional.cross_entropy(tagger(x), y).backward()
        sgd.step()
    print(step, agreement(tagger, rows))
""",
            fixed="""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(10, 10)
        self.mask = nn.Dropout(p=0.2)
        self.out = nn.Linear(10, 4)

    def forward(self, x):
        return self.out(self.mask(torch.tanh(self.proj(x))))


def agreement(tagger, rows):
    same = 0
    tagger.eval()
    with torch.no_grad():
        for x, y in rows:
            guess = tagger(x)
            same += guess.argmax(1).eq(y).sum().item()
    return same


tagger = Tagger()
sgd = torch.optim.SGD(tagger.parameters(), lr=0.05)
rows = [(torch.randn(5, 10), torch.randint(0, 4, (5,)))]
for step in range(3):
    for x, y in rows:
        sgd.zero_grad()
        nn.functional.cross_entropy(tagger(x), y).backward()
        sgd.step()
    print(step, agreement(tagger, rows))
    tagger.train()
""",
            line=21,
            unsafe=True,
        ),
        # the same under the `@torch.no_grad()` decorator, with batch norm tracking statistics
        Invalid(
            """
import torch
from torch import nn


@torch.no_grad()
def spread(m, signal):
    scores = m(signal)
    print(scores.softmax(-1).max(-1).values.tolist())


m = nn.Sequential(nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4), nn.Flatten(), nn.LazyLinear(3))
opt = torch.optim.Adam(m.parameters())
signal = torch.randn(6, 2, 9)
loss = m(signal).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
spread(m, signal)
""",
            fixed="""
import torch
from torch import nn


@torch.no_grad()
def spread(m, signal):
    m.eval()
    scores = m(signal)
    print(scores.softmax(-1).max(-1).values.tolist())


m = nn.Sequential(nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4), nn.Flatten(), nn.LazyLinear(3))
opt = torch.optim.Adam(m.parameters())
signal = torch.randn(6, 2, 9)
loss = m(signal).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
spread(m, signal)
""",
            line=8,
            unsafe=True,
        ),
        # one caller passes the class itself: `critic.eval()` would raise TypeError there, so no fix
        Invalid(
            """
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(0.3), nn.Linear(dim, 1))

    def forward(self, x):
        return self.net(x)


def evaluate(critic, batches):
    total = 0.0
    for x in batches:
        total += critic(x).mean().item()
    return total


def shapes(critic_cls, batches):
    return evaluate(critic_cls, batches)


print(evaluate(Critic(), [torch.randn(2, 8)]))
print(evaluate(Critic, []))
""",
            line=18,
        ),
        # the caller switches to eval mode only after it has handed the model over
        Invalid(
            """
import torch
import torch.nn as nn


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(32, 100)

    def forward(self, ids):
        return self.head(self.drop(self.embed(ids)))


def generate(model, ids, steps):
    for _ in range(steps):
        with torch.no_grad():
            logits = model(ids)
        ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ids


def demo(prompt):
    gpt = Gpt()
    out = generate(gpt, prompt, 10)
    gpt.eval()
    return out
""",
            fixed="""
import torch
import torch.nn as nn


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(32, 100)

    def forward(self, ids):
        return self.head(self.drop(self.embed(ids)))


def generate(model, ids, steps):
    model.eval()
    for _ in range(steps):
        with torch.no_grad():
            logits = model(ids)
        ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ids


def demo(prompt):
    gpt = Gpt()
    out = generate(gpt, prompt, 10)
    gpt.eval()
    return out
""",
            unsafe=True,
            line=20,
            message="without `model.eval()`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def validate(model, val_loader, device):
    correct = 0
    total = 0
    for images, labels in val_loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        predicted = torch.argmax(outputs, dim=1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total


classifier = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.Dropout(0.2), nn.Linear(64, 10))
print(validate(classifier, [], "cpu"))
""",
            fixed="""
import torch
import torch.nn as nn


def validate(model, val_loader, device):
    correct = 0
    total = 0
    model.eval()
    for images, labels in val_loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        predicted = torch.argmax(outputs, dim=1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total


classifier = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.Dropout(0.2), nn.Linear(64, 10))
print(validate(classifier, [], "cpu"))
""",
            line=11,
            col=19,
            unsafe=True,
        ),
        # a stacked LSTM with dropout between its layers
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, criterion, metric):
        self.model = nn.LSTM(8, 8, num_layers=2, dropout=0.25)
        self.head = nn.Linear(8, 2)
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.criterion = criterion
        self.metric = metric

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            for x, y in train_loader:
                self.optimizer.zero_grad()
                self.criterion(self.head(self.model(x)[0]), y).backward()
                self.optimizer.step()
            with torch.no_grad():
                for x, y in val_loader:
                    self.metric.update(self.head(self.model(x)[0]), y)
""",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, criterion, metric):
        self.model = nn.LSTM(8, 8, num_layers=2, dropout=0.25)
        self.head = nn.Linear(8, 2)
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.criterion = criterion
        self.metric = metric

    def fit(self, train_loader, val_loader, epochs):
        for epoch in range(epochs):
            for x, y in train_loader:
                self.optimizer.zero_grad()
                self.criterion(self.head(self.model(x)[0]), y).backward()
                self.optimizer.step()
            with torch.no_grad():
                self.model.eval()
                for x, y in val_loader:
                    self.metric.update(self.head(self.model(x)[0]), y)
            self.model.train()
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))


def evaluate(loader):
    model = Net()
    model.load_state_dict(torch.load("weights.pt"))
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
""",
            fixed="""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))


def evaluate(loader):
    model = Net()
    model.load_state_dict(torch.load("weights.pt"))
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


def evaluate(cnn, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (cnn(x).argmax(1) == y).sum().item()
    return correct


def train(loader, val_loader, epochs):
    cnn = CNN()
    optimizer = torch.optim.SGD(cnn.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(cnn(x), y).backward()
            optimizer.step()
        print(epoch, evaluate(cnn, val_loader))
""",
            fixed="""
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


def evaluate(cnn, loader):
    correct = 0
    cnn.eval()
    with torch.no_grad():
        for x, y in loader:
            correct += (cnn(x).argmax(1) == y).sum().item()
    return correct


def train(loader, val_loader, epochs):
    cnn = CNN()
    optimizer = torch.optim.SGD(cnn.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(cnn(x), y).backward()
            optimizer.step()
        print(epoch, evaluate(cnn, val_loader))
        cnn.train()
""",
            line=21,
            unsafe=True,
        ),
        # a decoding helper (found by what it does) whose model has batch norm
        Invalid(
            """
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, vocab=100, width=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.BatchNorm1d(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.norm(self.embed(ids).mean(1)))


@torch.no_grad()
def continue_ids(captioner, ids, n):
    for _ in range(n):
        best = captioner(ids).argmax(-1)
        ids = torch.cat([ids, best[:, None]], dim=1)
    return ids


print(continue_ids(Captioner(), torch.zeros(2, 1, dtype=torch.long), 5))
""",
            fixed="""
import torch
import torch.nn as nn


class Captioner(nn.Module):
    def __init__(self, vocab=100, width=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.BatchNorm1d(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.norm(self.embed(ids).mean(1)))


@torch.no_grad()
def continue_ids(captioner, ids, n):
    captioner.eval()
    for _ in range(n):
        best = captioner(ids).argmax(-1)
        ids = torch.cat([ids, best[:, None]], dim=1)
    return ids


print(continue_ids(Captioner(), torch.zeros(2, 1, dtype=torch.long), 5))
""",
            unsafe=True,
            line=20,
        ),
        # library models from the table: a timm ResNet (batch norm) run for inference as built (training mode)
        Invalid(
            """import timm
import torch

backbone = timm.create_model("resnet18", pretrained=True, num_classes=3)
head_only = timm.create_model("vit_small_patch16_224", pretrained=True, num_classes=3)


@torch.no_grad()
def predict(images):
    return backbone(images).argmax(-1).tolist(), head_only(images).argmax(-1).tolist()


print(predict(torch.randn(2, 3, 224, 224)))
""",
            fixed="""import timm
import torch

backbone = timm.create_model("resnet18", pretrained=True, num_classes=3)
head_only = timm.create_model("vit_small_patch16_224", pretrained=True, num_classes=3)


@torch.no_grad()
def predict(images):
    backbone.eval()
    return backbone(images).argmax(-1).tolist(), head_only(images).argmax(-1).tolist()


print(predict(torch.randn(2, 3, 224, 224)))
""",
            line=10,
            unsafe=True,
        ),
        # a Hugging Face model loads in eval mode, but the training loop switched it to `train()` (dropout
        # 0.1 by default for DistilBERT) and the validation never switches it back
        Invalid(
            """import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
opt = torch.optim.AdamW(model.parameters(), lr=5e-5)


def run(train_batches, val_batches, epochs):
    for epoch in range(epochs):
        model.train()
        for batch in train_batches:
            out = model(**batch)
            out.loss.backward()
            opt.step()
            opt.zero_grad()
        hits = 0
        with torch.no_grad():
            for batch in val_batches:
                logits = model(**batch).logits
                hits += (logits.argmax(-1) == batch["labels"]).sum().item()
        print(epoch, hits)


def classify(batches):
    found = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
    with torch.no_grad():
        return [found(**b).logits.argmax(-1) for b in batches]
""",
            fixed="""import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
opt = torch.optim.AdamW(model.parameters(), lr=5e-5)


def run(train_batches, val_batches, epochs):
    for epoch in range(epochs):
        model.train()
        for batch in train_batches:
            out = model(**batch)
            out.loss.backward()
            opt.step()
            opt.zero_grad()
        hits = 0
        with torch.no_grad():
            model.eval()
            for batch in val_batches:
                logits = model(**batch).logits
                hits += (logits.argmax(-1) == batch["labels"]).sum().item()
        print(epoch, hits)


def classify(batches):
    found = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")
    with torch.no_grad():
        return [found(**b).logits.argmax(-1) for b in batches]
""",
            line=19,
            unsafe=True,
        ),
        # near miss of Monte-Carlo dropout: the loop feeds the model its own output (a chain, not repeated
        # draws of the same input)
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 4)
opt.zero_grad()
net(x).pow(2).mean().backward()
opt.step()


@torch.no_grad()
def chain(x, n):
    seq = []
    for _ in range(n):
        x = net(x).argmax(-1, keepdim=True).float().repeat(1, 4)
        seq.append(x[0, 0].item())
    return seq


print(chain(x, 3))
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 4)
opt.zero_grad()
net(x).pow(2).mean().backward()
opt.step()


@torch.no_grad()
def chain(x, n):
    seq = []
    net.eval()
    for _ in range(n):
        x = net(x).argmax(-1, keepdim=True).float().repeat(1, 4)
        seq.append(x[0, 0].item())
    return seq


print(chain(x, 3))
""",
            line=17,
            unsafe=True,
        ),
        # a library function named for evaluation switches only the model it is handed
        # (`create_supervised_evaluator(model, ...)`), not another one the code runs
        Invalid(
            """
import torch
import torch.nn as nn
from ignite.engine import Engine, create_supervised_evaluator
from ignite.metrics import Accuracy

model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
evaluator = create_supervised_evaluator(model, metrics={"acc": Accuracy()})
best = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
best.load_state_dict(torch.load("best.pt"))


def flip_average(engine, batch):
    with torch.no_grad():
        x, y = batch
        return 0.5 * (best(x) + best(x.flip(-1))), y


scorer = Engine(flip_average)
""",
            fixed="""
import torch
import torch.nn as nn
from ignite.engine import Engine, create_supervised_evaluator
from ignite.metrics import Accuracy

model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
evaluator = create_supervised_evaluator(model, metrics={"acc": Accuracy()})
best = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
best.load_state_dict(torch.load("best.pt"))


def flip_average(engine, batch):
    best.eval()
    with torch.no_grad():
        x, y = batch
        return 0.5 * (best(x) + best(x.flip(-1))), y


scorer = Engine(flip_average)
""",
            line=16,
            unsafe=True,
        ),
        # a trainer object's method samples from `self.painter` (set in `__init__`, moved under an `if`)
        # under the caller's `no_grad`, after training, without `eval()`: batch norm normalises the six
        # samples by their own statistics
        Invalid(
            """
import torch
import torch.nn as nn


class Painter(nn.Module):
    def __init__(self, noise=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.body(z)


class Studio:
    def __init__(self, noise=8, cuda=False):
        self.noise = noise
        self.painter = Painter(noise)
        if cuda:
            self.painter.cuda()
        self.opt = torch.optim.Adam(self.painter.parameters(), lr=1e-3)
        self.fixed = torch.randn(6, noise)

    def fit(self, rounds):
        for r in range(rounds):
            self.painter.train()
            self.opt.zero_grad()
            self.painter(torch.randn(32, self.noise)).pow(2).mean().backward()
            self.opt.step()
            with torch.no_grad():
                self.sketch(r)

    def sketch(self, r):
        canvas = self.painter(self.fixed)
        pixels = canvas.cpu().numpy()
        print(r, pixels.mean())


Studio().fit(2)
""",
            fixed="""
import torch
import torch.nn as nn


class Painter(nn.Module):
    def __init__(self, noise=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.body(z)


class Studio:
    def __init__(self, noise=8, cuda=False):
        self.noise = noise
        self.painter = Painter(noise)
        if cuda:
            self.painter.cuda()
        self.opt = torch.optim.Adam(self.painter.parameters(), lr=1e-3)
        self.fixed = torch.randn(6, noise)

    def fit(self, rounds):
        for r in range(rounds):
            self.painter.train()
            self.opt.zero_grad()
            self.painter(torch.randn(32, self.noise)).pow(2).mean().backward()
            self.opt.step()
            with torch.no_grad():
                self.sketch(r)

    def sketch(self, r):
        self.painter.eval()
        canvas = self.painter(self.fixed)
        pixels = canvas.cpu().numpy()
        print(r, pixels.mean())


Studio().fit(2)
""",
            line=34,
            unsafe=True,
        ),
        # the method switches the critic to eval mode but samples from the painter in training mode; its
        # `.eval()` call is not the only evidence: it trains nothing and what it returns has left the graph
        Invalid(
            """
import torch
import torch.nn as nn


class Duo:
    def __init__(self, noise=8):
        self.noise = noise
        self.painter = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))

    def evaluate(self, n=6):
        self.critic.eval()
        shots = self.painter(torch.randn(n, self.noise))
        return shots.detach().cpu().tolist()


print(Duo().evaluate())
""",
            fixed="""
import torch
import torch.nn as nn


class Duo:
    def __init__(self, noise=8):
        self.noise = noise
        self.painter = nn.Sequential(nn.Linear(noise, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))

    def evaluate(self, n=6):
        self.critic.eval()
        self.painter.eval()
        shots = self.painter(torch.randn(n, self.noise))
        return shots.detach().cpu().tolist()


print(Duo().evaluate())
""",
            line=14,
            unsafe=True,
        ),
        # the model unpacked from what a project function returns (`model, labels = build(4)`): its dropout is
        # read in the function that builds it
        Invalid(
            """
import torch
from torch import nn


def build(classes):
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, classes))
    labels = [str(k) for k in range(classes)]
    return net, labels


def predict(features):
    with torch.inference_mode():
        return labels[model(features).argmax(dim=1)[0]]


model, labels = build(4)
print(predict(torch.randn(1, 16)))
""",
            fixed="""
import torch
from torch import nn


def build(classes):
    net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, classes))
    labels = [str(k) for k in range(classes)]
    return net, labels


def predict(features):
    model.eval()
    with torch.inference_mode():
        return labels[model(features).argmax(dim=1)[0]]


model, labels = build(4)
print(predict(torch.randn(1, 16)))
""",
            line=14,
            unsafe=True,
        ),
        # the model handed over inside `nn.DataParallel`: the wrapper runs the model it holds, batch norm and all
        Invalid(
            """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)


def evaluate(model, loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(loader):
    model = nn.DataParallel(Net())
    print(evaluate(model, loader))
""",
            fixed="""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(loader):
    model = nn.DataParallel(Net())
    print(evaluate(model, loader))
""",
            line=17,
            unsafe=True,
        ),
        # a wrapper class whose own layers act alike in both modes holds the module it is given
        # (`self.inner = inner`): that module's dropout decides
        Invalid(
            """
import torch
from torch import nn


class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.GroupNorm(1, 2)

    def forward(self, x):
        return self.head(self.inner(x))


def evaluate(model, loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(loader):
    net = Wrap(nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5)))
    print(evaluate(net, loader))
""",
            fixed="""
import torch
from torch import nn


class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.GroupNorm(1, 2)

    def forward(self, x):
        return self.head(self.inner(x))


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(loader):
    net = Wrap(nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5)))
    print(evaluate(net, loader))
""",
            line=18,
            unsafe=True,
        ),
        # a metric object's method named `evaluate` is given predictions, never the model: it switches no mode
        Invalid(
            """
import torch
from torch import nn


class Scores:
    def evaluate(self, pred, target):
        self.mse = ((pred - target) ** 2).mean().item()


def validate(model, loader):
    scores = Scores()
    for x, y in loader:
        with torch.no_grad():
            pred = model(x)
        scores.evaluate(pred, y)
    return scores


model = nn.Sequential(nn.Conv2d(3, 1, 3), nn.BatchNorm2d(1))
validate(model, batches)
""",
            line=15,
            fixed="""
import torch
from torch import nn


class Scores:
    def evaluate(self, pred, target):
        self.mse = ((pred - target) ** 2).mean().item()


def validate(model, loader):
    scores = Scores()
    model.eval()
    for x, y in loader:
        with torch.no_grad():
            pred = model(x)
        scores.evaluate(pred, y)
    return scores


model = nn.Sequential(nn.Conv2d(3, 1, 3), nn.BatchNorm2d(1))
validate(model, batches)
""",
            unsafe=True,
        ),
        # the model comes from a factory that returns another factory's model
        Invalid(
            """
import torch
from torch import nn


class Net3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv3d(3, 8, 3), nn.BatchNorm3d(8), nn.AdaptiveAvgPool3d(1), nn.Flatten())

    def forward(self, x):
        return self.body(x)


def net3d(depth):
    return Net3D()


def generate_model(opt):
    return net3d(opt.model_depth)


@torch.no_grad()
def val_epoch(model, loader):
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(opt, loader):
    model = generate_model(opt)
    print(val_epoch(model, loader))
""",
            line=25,
            message="`nn.BatchNorm3d(8)` (built at line 9)",
            fixed="""
import torch
from torch import nn


class Net3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv3d(3, 8, 3), nn.BatchNorm3d(8), nn.AdaptiveAvgPool3d(1), nn.Flatten())

    def forward(self, x):
        return self.body(x)


def net3d(depth):
    return Net3D()


def generate_model(opt):
    return net3d(opt.model_depth)


@torch.no_grad()
def val_epoch(model, loader):
    model.eval()
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(opt, loader):
    model = generate_model(opt)
    print(val_epoch(model, loader))
""",
            unsafe=True,
        ),
        # the model's dropout rate is a command-line option whose default is 0.1
        Invalid(
            """
import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--dropout", type=float, default=0.1)
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.fc(self.drop(x))


@torch.no_grad()
def evaluate(model, loader):
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


model = Net(args.dropout)
print(evaluate(model, batches))
""",
            message="`nn.Dropout(dropout)`",
            fixed="""
import argparse
import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--dropout", type=float, default=0.1)
args = parser.parse_args()


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.fc = nn.Linear(8, 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.fc(self.drop(x))


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


model = Net(args.dropout)
print(evaluate(model, batches))
""",
            unsafe=True,
        ),
        # a script-level model that only the training function switches to eval, and only under a flag:
        # after `train(epoch)` it may still be in training mode when `test()` runs it
        Invalid(
            """
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--fastmode", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(epoch):
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    if not args.fastmode:
        model.eval()
        print(F.cross_entropy(model(x), y).item())


def test():
    print((model(x).argmax(1) == y).float().mean().item())


for epoch in range(10):
    train(epoch)
test()
""",
            line=27,
            message="`nn.Dropout(0.5)` (built at line 11)",
            fixed="""
import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--fastmode", action="store_true")
args = parser.parse_args()

model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(epoch):
    model.train()
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    if not args.fastmode:
        model.eval()
        print(F.cross_entropy(model(x), y).item())


def test():
    model.eval()
    print((model(x).argmax(1) == y).float().mean().item())


for epoch in range(10):
    train(epoch)
test()
""",
            unsafe=True,
        ),
        # a factory fills an empty `Sequential` with `add_module`, a dropout among the layers
        Invalid(
            """
import torch
from torch import nn


def make_net():
    net = nn.Sequential()
    net.add_module("conv", nn.Conv2d(1, 8, 3))
    net.add_module("drop", nn.Dropout2d(0.1))
    net.add_module("flat", nn.Flatten())
    return net


def accuracy(model, batches):
    with torch.no_grad():
        return sum((model(x).argmax(-1) == y).sum().item() for x, y in batches)


def fit(batches, epochs):
    model = make_net()
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(accuracy(model, batches))
""",
            line=16,
            fixed="""
import torch
from torch import nn


def make_net():
    net = nn.Sequential()
    net.add_module("conv", nn.Conv2d(1, 8, 3))
    net.add_module("drop", nn.Dropout2d(0.1))
    net.add_module("flat", nn.Flatten())
    return net


def accuracy(model, batches):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(-1) == y).sum().item() for x, y in batches)


def fit(batches, epochs):
    model = make_net()
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(epochs):
        model.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(accuracy(model, batches))
""",
            unsafe=True,
        ),
        # `nn` from a library's star import that re-exports torch's modules: the layers are torch's
        Invalid(
            """
from torch_snippets import *

model = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
optimizer = optim.Adam(model.parameters(), lr=1e-3)


@torch.no_grad()
def validate_batch(model, data, criterion):
    ims, labels = data
    return criterion(model(ims), labels).item()


for epoch in range(3):
    for ims, labels in [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(ims), labels).backward()
        optimizer.step()
        validate_batch(model, (ims, labels), nn.functional.cross_entropy)
""",
            line=11,
            fixed="""
from torch_snippets import *

model = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
optimizer = optim.Adam(model.parameters(), lr=1e-3)


@torch.no_grad()
def validate_batch(model, data, criterion):
    ims, labels = data
    model.eval()
    return criterion(model(ims), labels).item()


for epoch in range(3):
    for ims, labels in [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(ims), labels).backward()
        optimizer.step()
        validate_batch(model, (ims, labels), nn.functional.cross_entropy)
        model.train()
""",
            unsafe=True,
        ),
        # another function's `model.eval()` switches the model it is given, not this one's parameter: the
        # first accuracy pass of each epoch runs right after `train_batch` switched to training mode
        Invalid(
            """
import torch
import torch.nn as nn
from torch.optim import Adam

data = [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]


def get_model():
    model = nn.Sequential(nn.Dropout(0.25), nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 2))
    return model, nn.CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3)


def train_batch(x, y, model, opt, loss_fn):
    model.train()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()


def accuracy(x, y, model):
    with torch.no_grad():
        prediction = model(x)
    return (prediction.argmax(-1) == y).tolist()


@torch.no_grad()
def val_loss(x, y, model):
    model.eval()
    return loss_fn(model(x), y).item()


model, loss_fn, optimizer = get_model()
for epoch in range(3):
    for x, y in data:
        train_batch(x, y, model, optimizer, loss_fn)
    for x, y in data:
        acc = accuracy(x, y, model)
    for x, y in data:
        acc = accuracy(x, y, model)
        v = val_loss(x, y, model)
""",
            line=25,
            fixed="""
import torch
import torch.nn as nn
from torch.optim import Adam

data = [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]


def get_model():
    model = nn.Sequential(nn.Dropout(0.25), nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 2))
    return model, nn.CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3)


def train_batch(x, y, model, opt, loss_fn):
    model.train()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()


def accuracy(x, y, model):
    model.eval()
    with torch.no_grad():
        prediction = model(x)
    return (prediction.argmax(-1) == y).tolist()


@torch.no_grad()
def val_loss(x, y, model):
    model.eval()
    return loss_fn(model(x), y).item()


model, loss_fn, optimizer = get_model()
for epoch in range(3):
    for x, y in data:
        train_batch(x, y, model, optimizer, loss_fn)
    for x, y in data:
        acc = accuracy(x, y, model)
    for x, y in data:
        acc = accuracy(x, y, model)
        v = val_loss(x, y, model)
""",
            unsafe=True,
        ),
        # the factory returns the model moved (`return model.to(device), ...`): a module's `.to()` is the module
        Invalid(
            """
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def build():
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 1))
    return model.to(device), torch.optim.Adam(model.parameters())


@torch.no_grad()
def scores(x, model):
    return model(x).cpu().tolist()


def main(batches):
    model, optimizer = build()
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [scores(x, model) for x, _ in batches]
""",
            line=15,
            fixed="""
import torch
import torch.nn as nn

device = "cuda" if torch.cuda.is_available() else "cpu"


def build():
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 1))
    return model.to(device), torch.optim.Adam(model.parameters())


@torch.no_grad()
def scores(x, model):
    model.eval()
    return model(x).cpu().tolist()


def main(batches):
    model, optimizer = build()
    for x, y in batches:
        loss = (model(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [scores(x, model) for x, _ in batches]
""",
            unsafe=True,
        ),
        # the model attribute is set by a base class (`Estimator.build`), and the subclass's prediction runs it
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.BatchNorm1d(d)
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        return self.out(self.norm(x))


class Estimator:
    def build(self, d):
        self.network = Net(d)
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.network(x), y).backward()
            self.optimizer.step()


class Classifier(Estimator):
    @torch.no_grad()
    def predict_proba(self, batches):
        return [torch.softmax(self.network(x), dim=1).numpy() for x in batches]
""",
            line=32,
            fixed="""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.BatchNorm1d(d)
        self.out = nn.Linear(d, 2)

    def forward(self, x):
        return self.out(self.norm(x))


class Estimator:
    def build(self, d):
        self.network = Net(d)
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            self.optimizer.zero_grad()
            nn.functional.cross_entropy(self.network(x), y).backward()
            self.optimizer.step()


class Classifier(Estimator):
    @torch.no_grad()
    def predict_proba(self, batches):
        self.network.eval()
        return [torch.softmax(self.network(x), dim=1).numpy() for x in batches]
""",
            unsafe=True,
        ),
        # the model reaches the trainer through its constructor (`self.model = model`): what the construction
        # passes, `net` with its dropout, is what `validate` runs
        Invalid(
            """
import torch
import torch.nn as nn


class Learner:
    def __init__(self, model, loss_fn, optimizer):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer

    def fit_batch(self, x, y):
        self.model.train()
        loss = self.loss_fn(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def validate(self, x, y):
        return self.loss_fn(self.model(x), y).item()


net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
learner = Learner(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
for x, y in [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]:
    learner.fit_batch(x, y)
    print(learner.validate(x, y))
""",
            line=22,
            fixed="""
import torch
import torch.nn as nn


class Learner:
    def __init__(self, model, loss_fn, optimizer):
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer

    def fit_batch(self, x, y):
        self.model.train()
        loss = self.loss_fn(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def validate(self, x, y):
        self.model.eval()
        return self.loss_fn(self.model(x), y).item()


net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))
learner = Learner(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
for x, y in [(torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))]:
    learner.fit_batch(x, y)
    print(learner.validate(x, y))
""",
            unsafe=True,
        ),
        # the stack keeps deep copies of the block it is given (`clones(block, n)`, a transformer's layers):
        # the block's dropout is in each of them
        Invalid(
            """
import copy

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=8, p=0.1):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return x + self.drop(self.fc(x))


def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class Stack(nn.Module):
    def __init__(self, block, n):
        super().__init__()
        self.blocks = clones(block, n)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


@torch.no_grad()
def accuracy(model, x, y):
    return (model(x).argmax(1) == y).float().mean().item()


model = Stack(Block(), 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
for epoch in range(3):
    model.train()
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print(accuracy(model, x, y))
""",
            line=35,
            fixed="""
import copy

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=8, p=0.1):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return x + self.drop(self.fc(x))


def clones(module, n):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


class Stack(nn.Module):
    def __init__(self, block, n):
        super().__init__()
        self.blocks = clones(block, n)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return (model(x).argmax(1) == y).float().mean().item()


model = Stack(Block(), 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
for epoch in range(3):
    model.train()
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    print(accuracy(model, x, y))
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


class Encoder(nn.Module):
    def __init__(self, layer, n):
        super().__init__()
        self.layers = nn.ModuleList([layer for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def predict(model, x):
    with torch.no_grad():
        return model(x)


model = nn.Sequential(Encoder(Layer(), 2), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
torch.manual_seed(0)
a = predict(model, x)
torch.manual_seed(1)
b = predict(model, x)
print(torch.equal(a, b))
""",
            line=29,
            fixed="""
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


class Encoder(nn.Module):
    def __init__(self, layer, n):
        super().__init__()
        self.layers = nn.ModuleList([layer for _ in range(n)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def predict(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)


model = nn.Sequential(Encoder(Layer(), 2), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
torch.manual_seed(0)
a = predict(model, x)
torch.manual_seed(1)
b = predict(model, x)
print(torch.equal(a, b))
""",
            unsafe=True,
        ),
        Invalid(
            """
import numpy as np
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.fc(self.drop(x))
        return h[:, 0], h[:, 1:]


def detections(model, images, scale):
    found = [None for _ in images]
    with torch.no_grad():
        for index, img in enumerate(images):
            scores, boxes = model(img)
            scores = scores.cpu().numpy()
            boxes = boxes.cpu().numpy()
            boxes /= scale
            found[index] = boxes[np.where(scores > 0)[0], :]
    return found


model = Detector()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4))[0].pow(2).mean().backward()
    opt.step()
print(len(detections(model, [torch.randn(2, 4)], 2.0)))
""",
            line=22,
            fixed="""
import numpy as np
import torch
import torch.nn as nn


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.fc(self.drop(x))
        return h[:, 0], h[:, 1:]


def detections(model, images, scale):
    found = [None for _ in images]
    with torch.no_grad():
        model.eval()
        for index, img in enumerate(images):
            scores, boxes = model(img)
            scores = scores.cpu().numpy()
            boxes = boxes.cpu().numpy()
            boxes /= scale
            found[index] = boxes[np.where(scores > 0)[0], :]
    return found


model = Detector()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(torch.randn(8, 4))[0].pow(2).mean().backward()
    opt.step()
print(len(detections(model, [torch.randn(2, 4)], 2.0)))
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Config:
    hidden = 8
    dropout_keep = 0.5


class Classifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(4, config.hidden)
        self.dropout = nn.Dropout(self.config.dropout_keep)
        self.out = nn.Linear(config.hidden, 2)

    def forward(self, x):
        return self.out(self.dropout(torch.relu(self.fc(x))))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Classifier(Config())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]
for x, y in data:
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
print(accuracy(model, data))
""",
            line=27,
            fixed="""
import torch
import torch.nn as nn


class Config:
    hidden = 8
    dropout_keep = 0.5


class Classifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.fc = nn.Linear(4, config.hidden)
        self.dropout = nn.Dropout(self.config.dropout_keep)
        self.out = nn.Linear(config.hidden, 2)

    def forward(self, x):
        return self.out(self.dropout(torch.relu(self.fc(x))))


def accuracy(model, batches):
    correct = 0
    with torch.no_grad():
        model.eval()
        for x, y in batches:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


model = Classifier(Config())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]
for x, y in data:
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
print(accuracy(model, data))
""",
            unsafe=True,
        ),
        # the same network's first layers kept as the model's front end: its batch norms are the model's
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision import models


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        donor = models.vgg16_bn()
        self.frontend = donor.features[:10]
        self.head = nn.Conv2d(128, 1, 1)

    def forward(self, x):
        return self.head(self.frontend(x))


def predicted_count(net, image):
    with torch.no_grad():
        return net(image).sum().item()


net = Counter()
opt = torch.optim.Adam(net.parameters(), lr=1e-5)
for step in range(2):
    loss = (net(torch.randn(2, 3, 64, 64)) - 1.0).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(predicted_count(net, torch.randn(1, 3, 64, 64)))
""",
            fixed="""
import torch
import torch.nn as nn
from torchvision import models


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        donor = models.vgg16_bn()
        self.frontend = donor.features[:10]
        self.head = nn.Conv2d(128, 1, 1)

    def forward(self, x):
        return self.head(self.frontend(x))


def predicted_count(net, image):
    net.eval()
    with torch.no_grad():
        return net(image).sum().item()


net = Counter()
opt = torch.optim.Adam(net.parameters(), lr=1e-5)
for step in range(2):
    loss = (net(torch.randn(2, 3, 64, 64)) - 1.0).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(predicted_count(net, torch.randn(1, 3, 64, 64)))
""",
            unsafe=True,
            line=20,
        ),
        # the model that arrives in training mode is the one built from a configuration (dropout 0.1), not the
        # one `from_pretrained` loads in eval mode: the message names it
        Invalid(
            """
import sys

import torch
import transformers


def mean_logprob(model, ids):
    with torch.no_grad():
        out = model(ids)
    logits = getattr(out, "logits", out)
    return logits.log_softmax(-1)[:, :-1].gather(2, ids[:, 1:, None]).mean().item()


def compare(path, ids):
    reference = transformers.GPT2LMHeadModel.from_pretrained("distilgpt2")
    print(mean_logprob(reference, ids))
    tuned = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    tuned.load_state_dict(torch.load(path))
    print(mean_logprob(tuned, ids))


compare(sys.argv[1], torch.randint(0, 100, (1, 8)))
""",
            fixed="""
import sys

import torch
import transformers


def mean_logprob(model, ids):
    model.eval()
    with torch.no_grad():
        out = model(ids)
    logits = getattr(out, "logits", out)
    return logits.log_softmax(-1)[:, :-1].gather(2, ids[:, 1:, None]).mean().item()


def compare(path, ids):
    reference = transformers.GPT2LMHeadModel.from_pretrained("distilgpt2")
    print(mean_logprob(reference, ids))
    tuned = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    tuned.load_state_dict(torch.load(path))
    print(mean_logprob(tuned, ids))


compare(sys.argv[1], torch.randint(0, 100, (1, 8)))
""",
            unsafe=True,
            line=10,
            message="(built at line 18)",
        ),
        # an evaluation called directly and through a wrapper named for evaluation: neither switches the model
        Invalid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def evaluate(net, x):
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def evaluate_batches(net, batches):
    return [evaluate(net, x) for x in batches]


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
print(evaluate_batches(scorer, [torch.randn(4, 6), torch.randn(2, 6)]))
print(evaluate(scorer, torch.randn(3, 6)))
""",
            fixed="""
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def evaluate(net, x):
    net.eval()
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def evaluate_batches(net, batches):
    return [evaluate(net, x) for x in batches]


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
print(evaluate_batches(scorer, [torch.randn(4, 6), torch.randn(2, 6)]))
print(evaluate(scorer, torch.randn(3, 6)))
""",
            unsafe=True,
            line=17,
        ),
        # the script switches the model to eval, but the caller that hands it on trains it first
        Invalid(
            """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def evaluate(net, x):
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def finetune_then_score(net, opt, data, x):
    net.train()
    for a, b in data:
        loss = (net(a) - b).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return evaluate(net, x)


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
scorer.eval()
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
print(finetune_then_score(scorer, opt, [(torch.randn(4, 6), torch.randn(4, 3))], torch.randn(3, 6)))
""",
            fixed="""
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Dropout(0.25), nn.Linear(24, 3))

    def forward(self, x):
        return self.layers(x)


def evaluate(net, x):
    net.eval()
    with torch.no_grad():
        return net(x).argmax(-1).tolist()


def finetune_then_score(net, opt, data, x):
    net.train()
    for a, b in data:
        loss = (net(a) - b).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return evaluate(net, x)


scorer = Scorer()
scorer.load_state_dict(torch.load("scorer.pt"))
scorer.eval()
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
print(finetune_then_score(scorer, opt, [(torch.randn(4, 6), torch.randn(4, 3))], torch.randn(3, 6)))
""",
            unsafe=True,
            line=17,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision import models


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = models.vgg16_bn(weights="DEFAULT").features

    def forward(self, x):
        return self.layers(x)


def score(images):
    net = Features()
    with torch.no_grad():
        return [net(img[None]).mean().item() for img in images]
""",
            fixed="""
import torch
import torch.nn as nn
from torchvision import models


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = models.vgg16_bn(weights="DEFAULT").features

    def forward(self, x):
        return self.layers(x)


def score(images):
    net = Features()
    net.eval()
    with torch.no_grad():
        return [net(img[None]).mean().item() for img in images]
""",
            unsafe=True,
            line=19,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))

    def forward(self, x):
        return self.body(x)


def fit(net, x, opt):
    net.train()
    opt.zero_grad()
    net(x).pow(2).mean().backward()
    opt.step()


def score(net, x):
    net.eval()
    with torch.no_grad():
        return net(x).pow(2).mean().item()


def sample(net, z):
    with torch.no_grad():
        return net(z).numpy()


x = torch.randn(32, 3)
flow = Coupling()
fit(flow, x, torch.optim.Adam(flow.parameters()))
print(score(flow, x))
flow = Coupling()
flow = flow.to("cpu")
flow.load_state_dict(torch.load("coupling.pt"))
print(sample(flow, torch.randn(8, 3)))
""",
            fixed="""
import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))

    def forward(self, x):
        return self.body(x)


def fit(net, x, opt):
    net.train()
    opt.zero_grad()
    net(x).pow(2).mean().backward()
    opt.step()


def score(net, x):
    net.eval()
    with torch.no_grad():
        return net(x).pow(2).mean().item()


def sample(net, z):
    net.eval()
    with torch.no_grad():
        return net(z).numpy()


x = torch.randn(32, 3)
flow = Coupling()
fit(flow, x, torch.optim.Adam(flow.parameters()))
print(score(flow, x))
flow = Coupling()
flow = flow.to("cpu")
flow.load_state_dict(torch.load("coupling.pt"))
print(sample(flow, torch.randn(8, 3)))
""",
            unsafe=True,
            line=30,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Linear(20, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(3)]


class Scores:
    def summarize(self, hits, total):
        return hits / total

    def evaluate_run(self, rate, tag):
        print(tag, rate)


def validate(scores):
    hits = total = 0
    with torch.no_grad():
        for x, y in batches:
            hits += (net(x).argmax(1) == y).sum().item()
            total += len(y)
    scores.evaluate_run(scores.summarize(hits, total), "val")


for epoch in range(3):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    validate(Scores())
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Linear(20, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.randn(8, 10), torch.randint(0, 2, (8,))) for _ in range(3)]


class Scores:
    def summarize(self, hits, total):
        return hits / total

    def evaluate_run(self, rate, tag):
        print(tag, rate)


def validate(scores):
    hits = total = 0
    net.eval()
    with torch.no_grad():
        for x, y in batches:
            hits += (net(x).argmax(1) == y).sum().item()
            total += len(y)
    scores.evaluate_run(scores.summarize(hits, total), "val")


for epoch in range(3):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    validate(Scores())
""",
            unsafe=True,
            line=22,
        ),
        Invalid(
            """
import math

import torch
import torch.nn as nn


def log_ratio(pred, target):
    return (math.log(float(pred)) - math.log(float(target))) ** 2


class Regressor:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 1), nn.Softplus())
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.train_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(8)]
        self.test_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(4)]

    def fit(self):
        self.net.train()
        for x, y in self.train_pairs:
            self.opt.zero_grad()
            (self.net(x) - y).pow(2).mean().backward()
            self.opt.step()

    def report(self):
        self.gaps = []
        for x, y in self.test_pairs:
            self.gaps.append(log_ratio(self.net(x), y))
        print(sum(self.gaps) / len(self.gaps))


r = Regressor()
r.fit()
r.report()
""",
            fixed="""
import math

import torch
import torch.nn as nn


def log_ratio(pred, target):
    return (math.log(float(pred)) - math.log(float(target))) ** 2


class Regressor:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 1), nn.Softplus())
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.train_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(8)]
        self.test_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(4)]

    def fit(self):
        self.net.train()
        for x, y in self.train_pairs:
            self.opt.zero_grad()
            (self.net(x) - y).pow(2).mean().backward()
            self.opt.step()

    def report(self):
        self.gaps = []
        self.net.eval()
        for x, y in self.test_pairs:
            self.gaps.append(log_ratio(self.net(x), y))
        print(sum(self.gaps) / len(self.gaps))


r = Regressor()
r.fit()
r.report()
""",
            unsafe=True,
            line=29,
        ),
        Invalid(
            """
import sys
from argparse import Namespace

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.opts = opts
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6), nn.ReLU())

    def forward(self, x):
        return self.body(x)


def encode_all(path, images):
    saved = torch.load(path, map_location="cpu")
    opts = saved["opts"]
    opts = Namespace(**opts)
    net = Encoder(opts)
    net.load_state_dict(saved["weights"])
    codes = []
    for image in images:
        with torch.no_grad():
            codes.append(net(image).mean().item())
    return codes


if __name__ == "__main__":
    print(encode_all(sys.argv[1], [torch.randn(1, 3, 16, 16)]))
""",
            fixed="""
import sys
from argparse import Namespace

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.opts = opts
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6), nn.ReLU())

    def forward(self, x):
        return self.body(x)


def encode_all(path, images):
    saved = torch.load(path, map_location="cpu")
    opts = saved["opts"]
    opts = Namespace(**opts)
    net = Encoder(opts)
    net.load_state_dict(saved["weights"])
    codes = []
    net.eval()
    for image in images:
        with torch.no_grad():
            codes.append(net(image).mean().item())
    return codes


if __name__ == "__main__":
    print(encode_all(sys.argv[1], [torch.randn(1, 3, 16, 16)]))
""",
            unsafe=True,
            line=28,
        ),
        Invalid(
            """
import math

import torch
import torch.nn as nn


def log_ratio(pred, target):
    pred = -math.log(float(pred))
    target = -math.log(float(target))
    gap = (pred - target) ** 2
    return gap


class Regressor:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 1), nn.Softplus())
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.train_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(8)]
        self.test_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(4)]

    def fit(self):
        self.net.train()
        for x, y in self.train_pairs:
            self.opt.zero_grad()
            (self.net(x) - y).pow(2).mean().backward()
            self.opt.step()

    def report(self):
        self.gaps = []
        for x, y in self.test_pairs:
            self.gaps.append(log_ratio(self.net(x), y))
        print(sum(self.gaps) / len(self.gaps))


r = Regressor()
r.fit()
r.report()
""",
            fixed="""
import math

import torch
import torch.nn as nn


def log_ratio(pred, target):
    pred = -math.log(float(pred))
    target = -math.log(float(target))
    gap = (pred - target) ** 2
    return gap


class Regressor:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 1), nn.Softplus())
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.train_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(8)]
        self.test_pairs = [(torch.randn(4), torch.rand(1) + 0.5) for _ in range(4)]

    def fit(self):
        self.net.train()
        for x, y in self.train_pairs:
            self.opt.zero_grad()
            (self.net(x) - y).pow(2).mean().backward()
            self.opt.step()

    def report(self):
        self.gaps = []
        self.net.eval()
        for x, y in self.test_pairs:
            self.gaps.append(log_ratio(self.net(x), y))
        print(sum(self.gaps) / len(self.gaps))


r = Regressor()
r.fit()
r.report()
""",
            unsafe=True,
            line=32,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()

    def test(self, loader):
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
""",
            fixed="""
import torch
import torch.nn as nn


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()

    def test(self, loader):
        self.model.eval()
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
""",
            unsafe=True,
            line=21,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Stopper:
    def __init__(self, path):
        self.path, self.best = path, None

    def __call__(self, score, model):
        if self.best is None or score < self.best:
            self.best = score
            torch.save(model.state_dict(), self.path)


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.stopper = Stopper("best.pt")

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()
            self.stopper(self.opt.param_groups[0]["lr"], self.model)

    def test(self, loader):
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
""",
            fixed="""
import torch
import torch.nn as nn


class Stopper:
    def __init__(self, path):
        self.path, self.best = path, None

    def __call__(self, score, model):
        if self.best is None or score < self.best:
            self.best = score
            torch.save(model.state_dict(), self.path)


class Experiment:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.stopper = Stopper("best.pt")

    def train(self, loader, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in loader:
                self.opt.zero_grad()
                ((self.model(x) - y) ** 2).mean().backward()
                self.opt.step()
            self.stopper(self.opt.param_groups[0]["lr"], self.model)

    def test(self, loader):
        self.model.eval()
        with torch.no_grad():
            return sum(((self.model(x) - y) ** 2).mean().item() for x, y in loader)

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)
""",
            unsafe=True,
            line=33,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 32
USE_CUDA = torch.cuda.is_available()


class Decoder(nn.Module):
    def __init__(self, vocab, hidden, dropout_p=0.1):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def start(self, batch):
        return torch.zeros(1, batch, self.hidden)

    def forward(self, tokens, is_training=False):
        embedded = self.embedding(tokens)
        if is_training:
            embedded = self.dropout(embedded)
        output, _ = self.gru(embedded, self.start(tokens.size(0)))
        return self.out(output)

    def decode(self, first, steps):
        hidden, token, picked = self.start(1), first, []
        for _ in range(steps):
            output, hidden = self.gru(self.dropout(self.embedding(token)), hidden)
            token = self.out(output).argmax(-1)
            picked.append(token)
        return torch.cat(picked, 1)


decoder = Decoder(20, HIDDEN * 2)
if USE_CUDA:
    decoder = decoder.cuda()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(10):
    tokens = torch.randint(0, 20, (4, 6))
    optimizer.zero_grad()
    scores = decoder(tokens, is_training=True)
    F.cross_entropy(scores.reshape(-1, 20), tokens.reshape(-1)).backward()
    optimizer.step()

with torch.no_grad():
    print(decoder(torch.randint(0, 20, (1, 6))).argmax(-1).tolist())
    print(decoder.decode(torch.zeros(1, 1, dtype=torch.long), 5).tolist())
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 32
USE_CUDA = torch.cuda.is_available()


class Decoder(nn.Module):
    def __init__(self, vocab, hidden, dropout_p=0.1):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(vocab, hidden)
        self.dropout = nn.Dropout(dropout_p)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def start(self, batch):
        return torch.zeros(1, batch, self.hidden)

    def forward(self, tokens, is_training=False):
        embedded = self.embedding(tokens)
        if is_training:
            embedded = self.dropout(embedded)
        output, _ = self.gru(embedded, self.start(tokens.size(0)))
        return self.out(output)

    def decode(self, first, steps):
        hidden, token, picked = self.start(1), first, []
        for _ in range(steps):
            output, hidden = self.gru(self.dropout(self.embedding(token)), hidden)
            token = self.out(output).argmax(-1)
            picked.append(token)
        return torch.cat(picked, 1)


decoder = Decoder(20, HIDDEN * 2)
if USE_CUDA:
    decoder = decoder.cuda()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(10):
    tokens = torch.randint(0, 20, (4, 6))
    optimizer.zero_grad()
    scores = decoder(tokens, is_training=True)
    F.cross_entropy(scores.reshape(-1, 20), tokens.reshape(-1)).backward()
    optimizer.step()

with torch.no_grad():
    print(decoder(torch.randint(0, 20, (1, 6))).argmax(-1).tolist())
    decoder.eval()
    print(decoder.decode(torch.zeros(1, 1, dtype=torch.long), 5).tolist())
""",
            unsafe=True,
            line=51,
        ),
        Invalid(
            """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 64)
        self.drop = nn.Dropout(0.5)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(self.drop(torch.relu(self.l1(s)))))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action.detach().cpu().numpy()[0, 0]


torch.manual_seed(0)
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
        self.drop = nn.Dropout(0.5)
        self.l2 = nn.Linear(64, 1)

    def forward(self, s):
        return torch.tanh(self.l2(self.drop(torch.relu(self.l1(s)))))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action = self.forward(state)
        return action.detach().cpu().numpy()[0, 0]


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(100):
    states = torch.randn(16, 3)
    loss = -policy(states).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
policy.eval()

for _ in range(3):
    print(policy.get_action([0.1, 0.2, 0.3]))
""",
            unsafe=True,
            line=33,
        ),
        Invalid(
            """
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x, is_training=False):
        h = torch.relu(self.fc1(x))
        if is_training:
            h = self.dropout(h)
        return self.fc2(h)


torch.manual_seed(0)
model = Classifier()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x, True), y)
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    for _ in range(2):
        print(model(x, True).argmax(1).tolist(), model(x, True).sum().item())
""",
            fixed="""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x, is_training=False):
        h = torch.relu(self.fc1(x))
        if is_training:
            h = self.dropout(h)
        return self.fc2(h)


torch.manual_seed(0)
model = Classifier()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x, True), y)
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    model.eval()
    for _ in range(2):
        print(model(x, True).argmax(1).tolist(), model(x, True).sum().item())
""",
            unsafe=True,
            line=31,
            count=2,
        ),
        Invalid(
            """
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.5)

    def hidden(self, x):
        return torch.relu(self.fc1(x))

    def forward(self, x):
        return self.fc2(self.hidden(x))


class Regularised(Base):
    def hidden(self, x):
        return self.dropout(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = Regularised()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    for _ in range(2):
        print(model(x).sum().item())
""",
            fixed="""
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 3)
        self.dropout = nn.Dropout(0.5)

    def hidden(self, x):
        return torch.relu(self.fc1(x))

    def forward(self, x):
        return self.fc2(self.hidden(x))


class Regularised(Base):
    def hidden(self, x):
        return self.dropout(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = Regularised()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    model.eval()
    for _ in range(2):
        print(model(x).sum().item())
""",
            unsafe=True,
            line=36,
        ),
        Invalid(
            """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(3):
            self.layers.append(Block(10))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randn(8, 10)
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    for _ in range(2):
        print(model(x).sum().item())
""",
            fixed="""
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(torch.relu(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(3):
            self.layers.append(Block(10))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


torch.manual_seed(0)
model = Net()
opt = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 10), torch.randn(8, 10)
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()

x = torch.randn(4, 10)
with torch.no_grad():
    model.eval()
    for _ in range(2):
        print(model(x).sum().item())
""",
            unsafe=True,
            line=40,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, width):
        self.model, self.opt = self.build(width)

    def build(self, width):
        model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        return model, torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, loader):
        self.model.train()
        for x, y in loader:
            self.opt.zero_grad()
            ((self.model(x) - y) ** 2).mean().backward()
            self.opt.step()

    def show(self, loader):
        with torch.no_grad():
            for x, _ in loader:
                print(self.model(x).squeeze(1).tolist())

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)

    def main(self, loader, epochs):
        for epoch in range(epochs):
            self.fit(loader)
            self.show(loader)
""",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, width):
        self.model, self.opt = self.build(width)

    def build(self, width):
        model = nn.Sequential(nn.Linear(width, width), nn.Dropout(0.2), nn.Linear(width, 1))
        return model, torch.optim.Adam(model.parameters(), lr=1e-3)

    def fit(self, loader):
        self.model.train()
        for x, y in loader:
            self.opt.zero_grad()
            ((self.model(x) - y) ** 2).mean().backward()
            self.opt.step()

    def show(self, loader):
        self.model.eval()
        with torch.no_grad():
            for x, _ in loader:
                print(self.model(x).squeeze(1).tolist())

    def predict(self, x):
        self.model.eval()
        with torch.no_grad():
            return self.model(x)

    def main(self, loader, epochs):
        for epoch in range(epochs):
            self.fit(loader)
            self.show(loader)
""",
            unsafe=True,
            line=24,
        ),
        Invalid(
            """
import torch
from torch import nn


def fit(model, train_batches, val_batches, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in train_batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        hits = 0
        with torch.no_grad():
            for x, y in val_batches:
                hits += (model(x).argmax(1) == y).sum().item()
        print(hits)


device = torch.device("cpu")
net = nn.Sequential(nn.Linear(10, 16), nn.Dropout(0.3), nn.Linear(16, 2))
data = [(torch.randn(8, 10), torch.randint(0, 2, (8,)))]
fit(net.to(device), data, data, 3)
""",
            fixed="""
import torch
from torch import nn


def fit(model, train_batches, val_batches, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in train_batches:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        hits = 0
        with torch.no_grad():
            model.eval()
            for x, y in val_batches:
                hits += (model(x).argmax(1) == y).sum().item()
        model.train()
        print(hits)


device = torch.device("cpu")
net = nn.Sequential(nn.Linear(10, 16), nn.Dropout(0.3), nn.Linear(16, 2))
data = [(torch.randn(8, 10), torch.randint(0, 2, (8,)))]
fit(net.to(device), data, data, 3)
""",
            unsafe=True,
            line=16,
        ),
        Invalid(
            """
import torch
from torch import nn
from transformers import PreTrainedModel


class Scorer(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(config.hidden_size, 3)

    def forward(self, h):
        return self.head(self.dropout(h))


def accuracy(net, h, y):
    with torch.no_grad():
        return (net(h).argmax(1) == y).float().mean().item()


scorer = Scorer.from_pretrained("org/checkpoint")
optimizer = torch.optim.AdamW(scorer.parameters(), lr=1e-5)
h, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
scorer.train()
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(scorer(h), y).backward()
    optimizer.step()
    print(accuracy(scorer, h, y))
""",
            fixed="""
import torch
from torch import nn
from transformers import PreTrainedModel


class Scorer(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(config.hidden_size, 3)

    def forward(self, h):
        return self.head(self.dropout(h))


def accuracy(net, h, y):
    net.eval()
    with torch.no_grad():
        return (net(h).argmax(1) == y).float().mean().item()


scorer = Scorer.from_pretrained("org/checkpoint")
optimizer = torch.optim.AdamW(scorer.parameters(), lr=1e-5)
h, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
scorer.train()
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(scorer(h), y).backward()
    optimizer.step()
    print(accuracy(scorer, h, y))
    scorer.train()
""",
            unsafe=True,
            line=19,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 4))
clf = body
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(clf(x), y).backward()
    opt.step()
with torch.no_grad():
    print(clf(torch.randn(4, 8)).argmax(1))
""",
            fixed="""
import torch
import torch.nn as nn

body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 4))
clf = body
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(clf(x), y).backward()
    opt.step()
with torch.no_grad():
    clf.eval()
    print(clf(torch.randn(4, 8)).argmax(1))
""",
            unsafe=True,
            line=14,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.4))
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.embed(x))


def tag(net, x):
    with torch.no_grad():
        return net.out(net.embed(x)).argmax(-1).tolist()


tagger = Tagger()
opt = torch.optim.Adam(tagger.parameters())
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(tagger(x), y).backward()
    opt.step()
print(tag(tagger, torch.randn(2, 8)))
""",
            fixed="""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.4))
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.embed(x))


def tag(net, x):
    net.embed.eval()
    with torch.no_grad():
        return net.out(net.embed(x)).argmax(-1).tolist()


tagger = Tagger()
opt = torch.optim.Adam(tagger.parameters())
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(tagger(x), y).backward()
    opt.step()
print(tag(tagger, torch.randn(2, 8)))
""",
            unsafe=True,
            line=18,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, x):
        return self.decoder(self.encoder(x))


def translate(model, x):
    with torch.no_grad():
        return model(x).argmax(-1).tolist()


def score(model, xs):
    return sum(len(translate(model, x)) for x in xs)


enc = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
dec = nn.Linear(8, 5)
model = Seq(enc, dec)
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 5, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
print(score(model, [torch.randn(2, 8)]))
""",
            fixed="""
import torch
import torch.nn as nn


class Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, x):
        return self.decoder(self.encoder(x))


def translate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x).argmax(-1).tolist()


def score(model, xs):
    return sum(len(translate(model, x)) for x in xs)


enc = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
dec = nn.Linear(8, 5)
model = Seq(enc, dec)
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 5, (16,))
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
print(score(model, [torch.randn(2, 8)]))
""",
            unsafe=True,
            line=18,
        ),
        Invalid(
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
""",
            fixed="""
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
model.eval()
imgs = model.sample(25)
print(imgs.shape)
""",
            unsafe=True,
            line=21,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.load_state_dict(torch.load(path))
    if torch.cuda.is_available():
        return model.cuda()
    model.eval()
    return model


def predict(model, loader):
    masks = []
    with torch.no_grad():
        for images in loader:
            masks.append(torch.sigmoid(model(images)).cpu())
    return masks


if __name__ == "__main__":
    net = get_model("model.pt")
    predict(net, [torch.randn(4, 3, 32, 32)])
""",
            fixed="""
import torch
import torch.nn as nn


def get_model(path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 1, 1))
    model.load_state_dict(torch.load(path))
    if torch.cuda.is_available():
        return model.cuda()
    model.eval()
    return model


def predict(model, loader):
    masks = []
    model.eval()
    with torch.no_grad():
        for images in loader:
            masks.append(torch.sigmoid(model(images)).cpu())
    return masks


if __name__ == "__main__":
    net = get_model("model.pt")
    predict(net, [torch.randn(4, 3, 32, 32)])
""",
            unsafe=True,
            line=19,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


def predict(model, loader):
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]


def run_valid():
    return predict(net, [torch.randn(4, 8)])


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    net.load_state_dict(torch.load("head.pt"))
    print(run_valid())
""",
            fixed="""
import torch
import torch.nn as nn


def predict(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]


def run_valid():
    return predict(net, [torch.randn(4, 8)])


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    net.load_state_dict(torch.load("head.pt"))
    print(run_valid())
""",
            unsafe=True,
            line=8,
        ),
        Invalid(
            """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.3), nn.Linear(16, 2))
        self.opt = torch.optim.Adam(self.net.parameters())

    def step(self, x, y):
        loss = F.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def score(self, batches):
        hits = 0
        with torch.no_grad():
            for x, y in batches:
                hits += (self.net(x).argmax(1) == y).sum().item()
        return hits
""",
            fixed="""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.3), nn.Linear(16, 2))
        self.opt = torch.optim.Adam(self.net.parameters())

    def step(self, x, y):
        loss = F.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def score(self, batches):
        hits = 0
        with torch.no_grad():
            self.net.eval()
            for x, y in batches:
                hits += (self.net(x).argmax(1) == y).sum().item()
        return hits
""",
            unsafe=True,
            line=22,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens).mean(1)))


def sample(model, tokens):
    with torch.no_grad():
        return model(tokens).argmax(-1).tolist()


if __name__ == "__main__":
    model = Translator(50, 16)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(3):
        x = torch.randint(0, 50, (4, 5))
        loss = nn.functional.cross_entropy(model(x), x[:, 0])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(sample(model, torch.randint(0, 50, (2, 5))))
""",
            fixed="""
import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, vocab, width):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens).mean(1)))


def sample(model, tokens):
    model.eval()
    with torch.no_grad():
        return model(tokens).argmax(-1).tolist()


if __name__ == "__main__":
    model = Translator(50, 16)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(3):
        x = torch.randint(0, 50, (4, 5))
        loss = nn.functional.cross_entropy(model(x), x[:, 0])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(sample(model, torch.randint(0, 50, (2, 5))))
""",
            unsafe=True,
            line=19,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        ctx = self.ctx
        if not ctx.names.imports_torch:
            return
        facts = evaluation_facts(ctx)
        for site in facts.sites():
            if site.by_eval_call or site.own_method or self._mc_dropout(site):
                continue  # (a model's own inference method runs in the mode its caller sets)
            if training_evidence(ctx, site.node, [c for c, _m in site.calls]) == STRONG:
                continue  # it trains (`loss_scaler(loss, optimizer)` runs the backward pass): not evaluation
            receivers = self._receivers(site)
            for call, model in site.calls:
                if call in facts.mode_settled or framework_model(ctx, model):
                    continue
                dependent = model_mode_dependent(ctx, model)
                if dependent is True and not call_minds_mode(ctx, call, model):
                    continue  # the method this call runs reaches none of its parts that mind the mode
                handed_over = dependent is None and site.decoding is None and model_from_code_not_in_view(ctx, model)
                if dependent is not True and not handed_over:
                    continue  # eval() changes nothing, or nothing shows that it changes something
                code = ctx.code(model)
                extra: Set[str] = set()
                if call not in facts.local_model and not (
                        site.function is not None and isinstance(model, cst.Name) and ctx.names.is_param_at(model)):
                    # a parameter is what the callers pass (`_callers_switch`): another function's
                    # `model.eval()` switches the model that function is given, not this one
                    extra = self._wider_receivers(site, code)
                switched = covers(receivers | extra, code) or self._callers_switch(site, model)
                # (within an evaluation function; at module level, `_reached_in_training`)
                left_training = switched and site.function is not None and TRAIN in modes_reaching(ctx, call, code)
                siblings: List[cst.FunctionDef] = []
                if switched and not left_training and site.function is not None and dependent is True:
                    siblings = left_training_by_siblings(ctx, site.function, code)
                    if siblings and TRAIN not in modes_reaching(ctx, call, code, entry=frozenset({TRAIN})):
                        siblings = []  # the method switches it itself before the call
                if switched and not left_training and not siblings and site.function is not None \
                        and dependent is True and code.startswith("self."):
                    caller = self._calls_it_training(site.function, call, code)
                    if caller is not None:
                        # `self.doTraining(...)` then `self.logImages(...)` in `main()`: the method is called while
                        # the model is still in the training mode the code before the call left it in
                        layer = describe_evidence(ctx, mode_evidence(ctx, model))
                        self.report(call, f"Evaluation runs `{code}` in training mode: `{caller}` calls "
                                          f"`{site.function.name.value}()` while `{code}` is still in the training mode "
                                          f"the code before the call left it in; {layer} stays in training mode",
                                    fix=self._fix(site, call, model, code))
                        break
                if siblings:
                    # `exp.train(); exp.test()`: the class's own `train()` leaves the model training, and this
                    # entry point (called from no code of its file) does not switch it
                    layer = describe_evidence(ctx, mode_evidence(ctx, model))
                    named = ", ".join(f"`{f.name.value}()`" for f in siblings[:2])
                    self.report(call, f"Evaluation runs `{code}` without `{code}.eval()`: when it runs after {named} "
                                      f"of this class (which leaves `{code}` in training mode), {layer} stays in "
                                      "training mode",
                                fix=self._fix(site, call, model, code))
                    break
                if switched and not left_training and not self._reached_in_training(site, model, code):
                    continue
                if left_training:
                    if dependent is not True:
                        continue
                    # switched to eval mode, then a helper run before the call puts it back in training mode
                    # (`net.eval()` ... `net.train()` around an attack): where the switch belongs is the author's call
                    layer = describe_evidence(ctx, mode_evidence(ctx, model))
                    self.report(call, f"Evaluation runs `{code}` in training mode: code run before it in this function "
                                      "switches it back with `.train()` or builds it anew (a new module is in "
                                      f"training mode); {layer} stays in training mode")
                    break
                if handed_over:
                    message = (f"Evaluation runs `{code}` without `{code}.eval()`; no call in the project passes "
                               f"`{code}`, so the mode it arrives in is the caller's: its dropout or batch norm, "
                               "if any, stays in training mode")
                elif switched:
                    # switched to eval mode elsewhere, but what runs before this evaluation leaves it training
                    layer = describe_evidence(ctx, self._evidence(site, model))
                    message = (f"Evaluation runs `{code}` in training mode on some path: code run before it calls "
                               "`.train()` or builds the model anew (a new module is in training mode) and no "
                               f"`.eval()` follows on that path; {layer} stays in training mode")
                else:
                    layer = describe_evidence(ctx, self._evidence(site, model))
                    message = f"Evaluation runs `{code}` without `{code}.eval()`; {layer} stays in training mode"
                self.report(call, message, fix=self._fix(site, call, model, code))
                break

    def _calls_it_training(self, function: cst.FunctionDef, call: cst.Call, code: str) -> Optional[str]:
        """A method evaluating ``code`` (``self.model``) that is called only from code of its file: the name of
        a caller that reaches its call of it with the model in training mode on some path (``.train()`` before
        it, no ``.eval()`` between), when the method does not switch the model before ``call`` itself."""
        ctx = self.ctx
        sites = call_sites(ctx, function)
        if not sites or any(not ctx.is_inside(s, ctx.module) for s in sites):
            return None
        for s in sites:
            entry = modes_reaching(ctx, s, code)
            if TRAIN in entry and TRAIN in modes_reaching(ctx, call, code, entry=frozenset(entry)):
                caller = enclosing_function(ctx, s)
                return f"{caller.name.value}()" if caller is not None else "the script"
        return None

    def _mc_dropout(self, site: EvalSite) -> bool:
        if restores_train_mode(self.ctx, site.node):
            return True
        return samples_on_purpose(self.ctx, site.node, [c for c, _m in site.calls])

    def _receivers(self, site: EvalSite) -> Set[str]:
        """What the evaluation's function, and the same-module functions that call it, put in eval mode; for a
        prediction statement inside a function, what that function does before it."""
        ctx = self.ctx
        function = site.function
        before: Optional[cst.CSTNode] = None
        if function is None and site.kind == "statement":
            function = enclosing_function(ctx, site.node)
            before = site.node if function is not None else None
        elif function is not None and site.kind == "function" and site.calls:
            before = self._last_run(function, [c for c, _m in site.calls])
        host: cst.CSTNode = function if function is not None else ctx.module
        out = set(eval_receivers(ctx, host, before=before))
        if function is not None:
            for caller_site in call_sites(ctx, function):
                caller = enclosing_function(ctx, caller_site) or ctx.module
                out |= eval_receivers(ctx, caller, before=caller_site)
        return out

    def _last_run(self, function: cst.FunctionDef, calls: List[cst.Call]) -> cst.CSTNode:
        """Where the function's last model call runs: the outermost loop of the function around it (a switch
        later in that loop reaches the next pass), else its statement.  What the function does after it (the
        dataset's own `evaluate(preds)` once every batch is scored) cannot set the mode those calls ran in."""
        ctx = self.ctx
        last = max(calls, key=lambda c: position(ctx, c))
        anchor: cst.CSTNode = ctx.statement_of(last) or last
        for a in ctx.ancestors(last):
            if a is function:
                break
            if isinstance(a, (cst.For, cst.While)):
                anchor = a
        return anchor

    def _reached_in_training(self, site: EvalSite, model: cst.BaseExpression, code: str) -> bool:
        """A module-level model that only other code puts in eval mode (an ``eval()`` in another function
        of the script), when what runs before the evaluation leaves it in training mode on some path: a
        training function that calls ``model.train()`` and switches to eval only under a flag."""
        ctx = self.ctx
        if not isinstance(model, cst.Name):
            return False
        if ctx.names.is_param_at(model):
            # a model handed in: a caller whose last switch before the call, on every path, is `.train()`
            # (scored at each epoch's start in eval mode, then once more after the last epoch's batches)
            if site.function is None or covers(eval_receivers(ctx, site.function), code):
                return False  # the function switches the model itself
            args = arguments_for_param(ctx, model)
            sites = call_sites(ctx, site.function)
            return bool(args) and len(args) == len(sites) and any(
                isinstance(passed, (cst.Name, cst.Attribute)) and modes_reaching(ctx, place, ctx.code(passed)) == {TRAIN}
                and model_mode_dependent(ctx, passed, 1) is not False  # (a model that arrives training must be
                for passed, place in zip(args, sites))  # one whose mode can matter)
        if site.function is None:
            places: List[cst.CSTNode] = [site.node]
        else:
            function = site.function
            if site.kind != "function" or ctx.enclosing(function, (cst.FunctionDef, cst.ClassDef)) is not None:
                return False
            if code in ctx.assigned_names(function) or covers(eval_receivers(ctx, function), code):
                return False  # a local model, or one the function switches itself
            places = list(call_sites(ctx, function))
        return any(TRAIN in modes_reaching(ctx, place, code) for place in places)

    def _callers_switch(self, site: EvalSite, model: cst.BaseExpression) -> bool:
        """A model parameter that every caller in the file puts in eval mode under the name it passes,
        before the call (`gpt.eval()` then `generate(gpt, ...)`; an `eval()` after the call is too late), or
        builds in eval mode (`from_pretrained`); for a function only other files of the project call, every
        such call passes a model built in eval mode there.  The callers whose models arrive in training mode
        must also be the ones that prove the model acts differently in eval mode: a model loaded in eval
        mode by one caller proves nothing of another caller's model."""
        unsettled = self._unsettled_callers(site, model)
        return unsettled is not None and not any(model_mode_dependent(octx, a, 1) is True for octx, a in unsettled)

    def _unsettled_callers(self, site: EvalSite,
                           model: cst.BaseExpression) -> Optional[List[Tuple[Any, cst.BaseExpression]]]:
        """For a model parameter whose callers are known (in the file, else in the project): the models
        they pass that arrive in training mode (``(file context, argument)``); None when unknown."""
        if site.function is None:
            return None
        return self._unsettled_of(site.function, model, 0)

    def _unsettled_of(self, function: cst.FunctionDef, model: cst.BaseExpression,
                      depth: int) -> Optional[List[Tuple[Any, cst.BaseExpression]]]:
        """:meth:`_unsettled_callers` of the parameter ``model`` of ``function``; a caller that passes its
        own parameter on (`evaluate_all(net, batches)` calling `evaluate(net, x)`) is asked the same of its
        callers, two levels up at most."""
        ctx = self.ctx
        if not isinstance(model, cst.Name) or not ctx.names.is_param_at(model):
            return None
        args = arguments_for_param(ctx, model)
        sites = call_sites(ctx, function)
        if not args and not sites:
            # called from other files of the project only: each must pass a model built in eval mode there
            placed = project_arguments_for_param(ctx, model)
            if not placed:
                return None
            return [(octx, a) for octx, a in placed if not self._arrives_settled(octx, a)
                    and not self._switched_before(octx, a, strict=True)]
        if not args or len(args) != len(sites):
            return None
        unsettled: List[Tuple[Any, cst.BaseExpression]] = []
        for passed, caller_site in zip(args, sites):
            caller = enclosing_function(ctx, caller_site) or ctx.module
            if self._switched_before(ctx, passed, caller_site) or self._arrives_settled(ctx, passed):
                continue
            if depth < 2 and isinstance(caller, cst.FunctionDef) and caller is not function \
                    and not self._trains_before(caller, caller_site, ctx.code(passed)):
                # (a caller that switches the model to training mode first hands it on in that mode)
                deeper = self._unsettled_of(caller, passed, depth + 1)
                if deeper is not None:
                    unsettled.extend(deeper)  # what the caller's own callers pass, switched there or not
                    continue
                if self._global_switched_at_callers(caller, passed):
                    continue  # `predict(net, ...)` of the global `net` in `run_valid()`, which the main block
                    # calls after `net.eval()`
            unsettled.append((ctx, passed))
        return unsettled

    def _global_switched_at_callers(self, caller: cst.FunctionDef, passed: cst.BaseExpression) -> bool:
        """``passed`` is a module-level name the function ``caller`` reads without binding it, and every call of
        ``caller`` in the file (outside it) comes after a switch of that name to eval mode."""
        ctx = self.ctx
        if not isinstance(passed, cst.Name) or ctx.names.is_param_at(passed) or ctx.names.values_before(passed) \
                or passed.value not in ctx.names.module_scope.bindings or assigned_within(ctx, caller, passed.value):
            return False
        sites = [s for s in call_sites(ctx, caller) if not ctx.is_inside(s, caller)]
        return bool(sites) and all(self._switched_before(ctx, passed, s) for s in sites)

    @staticmethod
    def _switched_before(ctx, passed: cst.BaseExpression, site_call: Optional[cst.Call] = None,
                         strict: bool = False) -> bool:
        """The model ``passed`` (an argument of ``site_call``, read in ``ctx``: this file or another of the
        project) is switched to eval mode before the call — by the code around it or a function it calls
        first (``fit(net, ...)`` ending in ``model.eval()``) — unless switched back to training on every path
        since (``net.eval()`` and a score at each epoch's start, ``net.train()`` and its batches, the last score
        after the epochs).  With ``strict`` (a caller in another file), no path may reach the call in
        training mode (`if flag: net.eval()` is not enough)."""
        if site_call is None:
            holder = ctx.parent(passed)
            site_call = ctx.parent(holder) if isinstance(holder, cst.Arg) else None
            if not isinstance(site_call, cst.Call):
                return False
        caller = enclosing_function(ctx, site_call) or ctx.module
        code = ctx.code(passed)
        # (a caller in another file must switch the model itself: what its own imported helpers switch is
        # judged without the paths they take)
        receivers = eval_receivers(ctx, caller, before=site_call, imported=not strict)
        if strict:
            # (a call of code not in view that is handed the model proves no eval mode of it there)
            return covers(receivers - {ANY}, code) and TRAIN not in modes_reaching(ctx, site_call, code)
        return covers(receivers, code) and modes_reaching(ctx, site_call, code) != {TRAIN}

    def _trains_before(self, caller: cst.FunctionDef, site_call: cst.Call, code: str) -> bool:
        """``caller`` may switch ``code`` to training mode before ``site_call``: a ``.train()`` of it there,
        or a mode that reaches the call in training."""
        ctx = self.ctx
        at = position(ctx, site_call)
        return any(train_mode_call(c) and isinstance(c.func, cst.Attribute) and ctx.code(c.func.value) == code
                   and position(ctx, c) < at for c in ctx.calls_in(caller)) \
            or TRAIN in modes_reaching(ctx, site_call, code)

    def _evidence(self, site: EvalSite, model: cst.BaseExpression) -> Optional[Tuple[Any, cst.CSTNode]]:
        """Where the model run is proven to act differently in eval mode: for a parameter, in a model a
        caller passes in training mode, else anywhere the model comes from."""
        for octx, passed in self._unsettled_callers(site, model) or ():
            found = mode_evidence(octx, passed, 1)
            if found is not None:
                return found
        return mode_evidence(self.ctx, model)

    @staticmethod
    def _arrives_settled(ctx, passed: cst.BaseExpression) -> bool:
        """A model handed over whose mode needs no switch: built in eval mode and never switched back, or
        provably the same in both modes (no dropout, no batch norm)."""
        return built_in_eval_mode(ctx, passed) or isinstance(passed, (cst.Name, cst.Attribute)) and \
            model_mode_dependent(ctx, passed, 1) is False

    def _wider_receivers(self, site: EvalSite, code: str) -> Set[str]:
        """A model that is not local to the function (``self.model``, a module global) may be put in eval
        mode anywhere in its class or module."""
        ctx = self.ctx
        if code.startswith("self.") and site.function is not None:
            cls = ctx.enclosing(site.function, cst.ClassDef)
            return eval_receivers(ctx, cls, depth=0, kept=True) if cls is not None else set()
        if site.function is None or "." not in code:
            return eval_receivers(ctx, ctx.module, depth=0, kept=True)
        return set()

    def _fix(self, site: EvalSite, call: cst.Call, model: cst.BaseExpression, code: str) -> Optional[Fix]:
        ctx = self.ctx
        if self._may_be_a_class(model):
            return None  # `Critic.eval()` on a class object raises TypeError: only an instance can be switched
        owner = site.node if site.kind == "function" else None
        anchor: Optional[cst.CSTNode] = site.node if owner is None else top_statement(ctx, call, owner)
        if anchor is None:
            return None
        base = (dotted_name(model) or "").split(".")[0]
        if base and base != "self" and assigned_within(ctx, anchor, base):
            anchor = ctx.statement_of(call)
        if anchor is None or ctx.block_of(anchor) is None:
            return None
        resume = self._training_resumes(site, model, code)
        if resume is None:
            return None
        fix = self.make_fix(f"Insert `{code}.eval()` before the evaluation").insert_before(
            anchor, ctx.parse_statement(f"{code}.eval()\n")
        )
        done = set()
        for stmt, caller_code in resume:
            if (id(stmt), caller_code) in done:
                continue  # `a, b = evaluate(model, x), evaluate(model, y)`: one place to resume training
            done.add((id(stmt), caller_code))
            fix.insert_after(stmt, ctx.parse_statement(f"{caller_code}.train()\n"))
        return fix

    def _may_be_a_class(self, model: cst.BaseExpression) -> bool:
        """Whether the name the fix would call ``.eval()`` on may hold a class object rather than an
        instance: a class itself, a parameter some caller in the file passes a class for (or whose default
        is one), a name some assignment binds to a class."""
        ctx = self.ctx
        root = model
        while isinstance(root, cst.Attribute):
            root = root.value
        if class_object(ctx, model):
            return True
        if not isinstance(root, cst.Name) or root is not model:
            return False
        if ctx.names.is_param_at(model):
            passed = list(arguments_for_param(ctx, model) or [])
            function = ctx.enclosing(model, cst.FunctionDef)
            if isinstance(function, cst.FunctionDef):
                p = function.params
                passed.extend(q.default for q in [*p.posonly_params, *p.params, *p.kwonly_params]
                              if q.name.value == model.value and q.default is not None)
            return any(class_object(ctx, a) for a in passed)
        return any(class_object(ctx, v) for v in ctx.names.values_at(model))

    def _training_resumes(self, site: EvalSite, model: cst.BaseExpression, code: str):
        """Where training goes on after this evaluation without switching the model back: the statements
        after which ``<model>.train()`` must follow (with the model as the caller spells it).  None when
        such a place exists but cannot be edited (the model cannot be named there)."""
        ctx = self.ctx
        out = []
        if site.kind in ("loop", "statement"):
            places = [(site.node, code)]
        else:
            places = []
            assert isinstance(site.node, cst.FunctionDef)
            for call in call_sites(ctx, site.node):
                caller_code = self._caller_code(site.node, call, model, code)
                places.append((call, caller_code))
        for node, caller_code in places:
            loop = innermost_loop(ctx, node)
            while loop is not None and not trains(ctx, loop, depth=2):
                loop = innermost_loop(ctx, loop)
            if loop is None or restores_train_mode(ctx, loop, depth=2):
                continue
            if caller_code is None:
                return None
            stmt = top_statement(ctx, node, loop)
            if stmt is None:
                return None
            out.append((stmt, caller_code))
        return out

    def _caller_code(self, function: cst.FunctionDef, call: cst.Call, model: cst.BaseExpression, code: str):
        """The model of ``function`` as the call ``call`` names it: the argument for a parameter, the same
        code for ``self.<model>`` and module globals."""
        ctx = self.ctx
        base = code.split(".")[0]
        params = list(function.params.posonly_params) + list(function.params.params)
        offset = 1 if params and params[0].name.value in ("self", "cls") else 0
        for i, p in enumerate(params):
            if p.name.value == base and i >= offset:
                a = arg(call, i - offset, base)
                if a is None or dotted_name(a.value) is None:
                    return None
                return ctx.code(a.value) + code[len(base):]
        return code
