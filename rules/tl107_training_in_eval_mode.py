from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import callee_name, method_name, receiver
from torchlint.analysis.names import dotted_name
from torchlint.families.training.evaluation import (
    EvaluationBinder,
    ANY,
    TRAIN_CALL,
    covers,
    decoding_flow,
    eval_mode_target,
    eval_targets_of_call,
    imported_helper,
    train_mode_call,
    evaluation_facts,
    model_mode_dependent,
    needs_grad,
    position,
    reaches_backward,
    snake,
    top_statement,
)
from torchlint.analysis.training import (
    NO_GRAD_CONTEXTS,
    calls_through_helpers,
    common_loop,
    is_backward_like,
    optimizer_of_step,
    under_no_grad,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid



def _mode_chosen_for(ctx, call: cst.Call, fctx, function: cst.FunctionDef) -> Set[str]:
    """The models (as the loop spells them) whose mode the training helper ``call`` runs sets itself: the
    helper trains (a backward pass or an optimizer step) and, before its first step and on every path,
    switches the model it is given to eval mode (``model.eval()`` at the top of a linear probe's
    ``train``, to keep the frozen batch-norm statistics): its training runs in the mode it chose, whatever
    the loop did before."""
    calls = fctx.calls_in(function)
    steps = [c for c in calls if is_backward_like(fctx, c) or optimizer_of_step(fctx, c) is not None]
    if not steps:
        return set()
    first_step = min(position(fctx, c) for c in steps)
    p = function.params
    params = [q.name.value for q in [*p.posonly_params, *p.params]]
    if params and params[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        params = params[1:]
    given = {}
    for i, a in enumerate(call.args):
        if a.star:
            break
        if a.keyword is not None:
            given[a.keyword.value] = ctx.code(a.value)
        elif i < len(params):
            given[params[i]] = ctx.code(a.value)
    out: Set[str] = set()
    for c in calls:
        target = eval_mode_target(c)
        if target is None or position(fctx, c) >= first_step or fctx.enclosing(c, cst.FunctionDef) is not function:
            continue
        if any(isinstance(a, (cst.If, cst.Try, cst.While, cst.For)) for a in _ancestors_to(fctx, c, function)):
            continue
        if isinstance(target, cst.Name) and target.value in given:
            out.add(given[target.value])
        elif fctx is ctx and dotted_name(target) is not None and dotted_name(target).startswith("self."):
            out.add(fctx.code(target))
    return out


def _ancestors_to(fctx, node: cst.CSTNode, stop: cst.CSTNode) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = []
    for a in fctx.ancestors(node):
        if a is stop:
            break
        out.append(a)
    return out

class TrainingInEvalMode(LintRule):
    """
    ## What it does
    Finds loops that both train a model and evaluate it — `model.eval()` (or `train(False)`) directly,
    or a validation helper that calls it on the model it is given (a helper of the same module, or one
    imported from another file of the project) or on a module-level model the loop trains too,
    wherever the loop calls it (inside `print(f"{validate(loader)}")` as well) — without ever calling
    `model.train()` again in the loop. The typical case is a validation
    pass inside the epoch loop: from the second epoch on, the model trains in evaluation mode.

    ## Why is this bad?
    `eval()` is sticky: it stays until `train()` is called. Training in evaluation mode turns dropout
    off and freezes batch-norm statistics at whatever the running averages were, so the model
    regularises less, batch norm stops adapting, and results differ from what the code intends, with no
    error. The cookbook asks to switch modes explicitly around every forward: "model(x) 前用
    model.train() 和 model.eval() 切换网络状态" (PyTorch Cookbook, Zhang Hao, 2019, also in its 2024
    revision, section 7).

    Not reported: loops that call `.train()` (any argument other than `False`) themselves or in a helper
    they call (of this module or imported from the project), loops that call an unresolved function
    whose name says it trains (`train_one_epoch` imported from elsewhere may set the mode), a model that is only evaluated in the loop (a frozen
    teacher put in eval mode while the student trains; a helper's module-level `model` while the loop
    trains a local `model` of its function), a training helper that switches the model it is given to eval
    mode itself before its first step (a linear probe keeping a frozen backbone's batch-norm statistics:
    its training runs in the mode it chose), `eval()` calls with no evaluation around them
    (freezing batch norm on purpose), and models that provably act the same in both modes: built from a
    class or container whose layers are all known and mode-free (`Linear`, activations, an `LSTM`/`GRU`
    without dropout), directly or as the argument every caller in the file passes. A library model, a
    factory's result or a parameter no caller explains may have dropout or batch norm: reported.

    ## Example
    ```python
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        validate(model, val_loader)  # calls model.eval()
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        validate(model, val_loader)
    ```

    ## Fix safety
    The fix inserts `model.train()` before the statement of the loop that trains. It is safe: it only
    restores the mode the training code already assumes on its first iteration.

    ## Options
    None.

    ## References
    - [torch.nn.Module.train](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.train)
    - [torch.nn.Module.eval](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL107"
    BINDERS = (EvaluationBinder,)
    NAME = "training-in-eval-mode"
    MESSAGE = "The loop puts the model in eval mode and trains it again without `model.train()`"
    FIX_TITLE = "Insert `model.train()` before the training step"
    TRIGGERS = ("eval", "train(False", "train(mode=False")

    VALID = [
        # the layers are collected in a list (in a loop) and unpacked into the container: none of them acts
        # differently in eval mode (instance norm keeps no running statistics), so the mode left on is harmless
        """
import torch
import torch.nn as nn


class Smoother(nn.Module):
    def __init__(self, width=8, blocks=2):
        super().__init__()
        layers = [nn.Conv1d(1, width, 3, padding=1), nn.InstanceNorm1d(width)]
        for _ in range(blocks):
            layers += [nn.Conv1d(width, width, 3, padding=1), nn.InstanceNorm1d(width), nn.GELU()]
        layers.append(nn.Conv1d(width, 1, 3, padding=1))
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


smoother = Smoother()
opt = torch.optim.Adam(smoother.parameters())


@torch.no_grad()
def peek(x):
    smoother.eval()
    return smoother(x).std().item()


for step in range(50):
    x = torch.randn(4, 1, 64)
    opt.zero_grad()
    (smoother(x) - x).pow(2).mean().backward()
    opt.step()
    if step % 10 == 0:
        print(peek(x))
""",
        Valid(
            """
import torch


def train(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(model, train_loader, val_loader, optimizer, criterion, scheduler):
    for epoch in range(10):
        train(model, train_loader, optimizer, criterion)
        validate(model, val_loader)
        scheduler.step()
"""
        ),
        Valid(
            """
import torch

for epoch in range(10):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x).argmax(1) == y).sum().item()
"""
        ),
        Valid(
            """
import torch

student.train()
for epoch in range(10):
    teacher.eval()
    for x, y in loader:
        with torch.no_grad():
            soft = teacher(x)
        optimizer.zero_grad()
        distill_loss(student(x), soft, y).backward()
        optimizer.step()
"""
        ),
        Valid(
            """
import torch

for epoch in range(10):
    model.eval()  # frozen batch-norm statistics while fine-tuning the head
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
"""
        ),
        Valid(
            """
import torch
from engine import train_one_epoch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]


for epoch in range(10):
    train_one_epoch(model, loader, optimizer)
    evaluate(model, val_loader)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
import torch


def run_epoch(model, loader, optimizer, training):
    model.train(training)
    for x, y in loader:
        loss = criterion(model(x), y)
        if training:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


for epoch in range(10):
    run_epoch(model, train_loader, optimizer, True)
    model.eval()
    evaluate(model, val_loader)
    run_epoch(model, train_loader, optimizer, True)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.2), nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def set_training():
    model.train()


def validate(loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def train(loader, epochs=5):
    for epoch in range(epochs):
        set_training()
        for inputs, labels in loader:
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: accuracy {validate(loader):.3f}")
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.2), nn.Linear(64, 3))
criterion = nn.CrossEntropyLoss()


def validate(loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def fine_tune(loader, build, epochs=5):
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for inputs, labels in loader:
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: accuracy {validate(loader):.3f}")
"""
        ),
        # models without mode-dependent layers (a GRU without dropout, Linear, GELU): eval mode changes
        # nothing in training
        Valid(
            """
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 16, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        return self.out(self.rnn(x)[0][:, -1])


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(nn.functional.mse_loss(model(x), y).item() for x, y in loader)


def fit(model, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        print(validate(model, val_loader))


reg = Regressor()
fit(reg, [], [], torch.optim.Adam(reg.parameters()), 3)
probe = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2))
probe_opt = torch.optim.SGD(probe.parameters(), lr=0.1)
for epoch in range(3):
    for x, y in []:
        probe_opt.zero_grad()
        nn.functional.cross_entropy(probe(x), y).backward()
        probe_opt.step()
    probe.eval()
    with torch.no_grad():
        print(sum((probe(x).argmax(1) == y).sum().item() for x, y in []))
"""
        ),
        # near misses of the two-model loop: both switched back; or the one left in eval mode has no layer
        # that eval() changes
        Valid(
            """
import torch
import torch.nn as nn

plain = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
noisy = nn.Sequential(nn.Linear(1, 16), nn.Dropout(0.4), nn.ReLU(), nn.Linear(16, 1))
opt_a = torch.optim.SGD(plain.parameters(), lr=0.05)
opt_b = torch.optim.SGD(noisy.parameters(), lr=0.05)
xs, ys = torch.randn(32, 1), torch.randn(32, 1)
grid = torch.linspace(-2, 2, 9)[:, None]

for step in range(100):
    fit_a = (plain(xs) - ys).pow(2).mean()
    fit_b = (noisy(xs) - ys).pow(2).mean()
    opt_a.zero_grad()
    opt_b.zero_grad()
    (fit_a + fit_b).backward()
    opt_a.step()
    opt_b.step()
    if step % 20 == 0:
        plain.eval()
        noisy.eval()
        curve_a = plain(grid)
        curve_b = noisy(grid)
        print(step, curve_a.detach().squeeze().tolist(), curve_b.detach().squeeze().tolist())
        plain.train()
        noisy.train()
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

plain = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
noisy = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt_a = torch.optim.SGD(plain.parameters(), lr=0.05)
opt_b = torch.optim.SGD(noisy.parameters(), lr=0.05)
xs, ys = torch.randn(32, 1), torch.randn(32, 1)
grid = torch.linspace(-2, 2, 9)[:, None]

for step in range(100):
    fit_a = (plain(xs) - ys).pow(2).mean()
    fit_b = (noisy(xs) - ys).pow(2).mean()
    opt_a.zero_grad()
    opt_b.zero_grad()
    (fit_a + fit_b).backward()
    opt_a.step()
    opt_b.step()
    if step % 20 == 0:
        plain.eval()
        noisy.eval()
        curve_a = plain(grid)
        curve_b = noisy(grid)
        print(step, curve_a.detach().squeeze().tolist(), curve_b.detach().squeeze().tolist())
        plain.train()
"""
        ),
        # near miss: a helper that switches the model to eval mode and backpropagates to read gradients (a
        # gradient visualisation) is no evaluation, and each iteration builds a new model
        Valid(
            """
import torch
import torch.nn as nn


def grad_sizes(m, x, y):
    m.eval()
    m.zero_grad()
    nn.functional.cross_entropy(m(x), y).backward()
    return {n: p.grad.norm().item() for n, p in m.named_parameters()}


x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
for width in (8, 16, 32):
    m = nn.Sequential(nn.Linear(4, width), nn.BatchNorm1d(width), nn.Linear(width, 3))
    print(width, grad_sizes(m, x, y))
"""
        ),
        # the same phases, the training arm switching back to training mode
        Valid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


def run(loaders, epochs):
    net = Net()
    opt = torch.optim.Adam(net.parameters())
    for epoch in range(epochs):
        for phase in ("train", "valid"):
            if phase == "train":
                net.train()
            else:
                net.eval()
            total = 0.0
            for x, y in loaders[phase]:
                loss = (net(x) - y).pow(2).mean()
                if phase == "train":
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                total += loss.item()
            print(epoch, phase, total)
"""
        ),
        # the training helper puts the model in eval mode itself before its steps (a linear probe keeps the
        # frozen backbone's batch-norm statistics): the loop's validation changes nothing
        Valid(
            """
import torch
import torch.nn as nn


def train(loader, model, criterion, optimizer):
    model.eval()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(train_loader, val_loader):
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    for p in model[:2].parameters():
        p.requires_grad = False
    optimizer = torch.optim.SGD(model[2].parameters(), lr=0.1)
    for epoch in range(10):
        train(train_loader, model, nn.CrossEntropyLoss(), optimizer)
        print(validate(val_loader, model))
"""
        ),
        # near miss: a notebook trains and evaluates a model without mode-dependent layers; a later cell
        # redefines the factory with batch norm and builds a new model, after the loop has run
        """
import torch
import torch.nn as nn
from torch.optim import Adam


def get_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model, nn.CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3)


def train_batch(x, y, model, opt, loss_fn):
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()


@torch.no_grad()
def val_loss(x, y, model, loss_fn):
    model.eval()
    return loss_fn(model(x), y).item()


data = [(torch.randn(3, 4), torch.tensor([0, 1, 1]))]
model, loss_fn, optimizer = get_model()
for epoch in range(3):
    for x, y in data:
        train_batch(x, y, model, optimizer, loss_fn)
    for x, y in data:
        val_loss(x, y, model, loss_fn)


def get_model():
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    return model, nn.CrossEntropyLoss(), Adam(model.parameters(), lr=1e-3)


model, loss_fn, optimizer = get_model()
""",
    ]

    INVALID = [
        # a helper adds the blocks to the list, dropout among them: the list holds what the helper appends
        Invalid(
            """
import torch
import torch.nn as nn


def add_block(layers, width):
    layers.append(nn.Linear(width, width))
    layers.append(nn.Dropout(0.3))


class Stack(nn.Module):
    def __init__(self, width=8, blocks=2):
        super().__init__()
        layers = [nn.Linear(4, width)]
        for _ in range(blocks):
            add_block(layers, width)
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


stack = Stack()
opt = torch.optim.Adam(stack.parameters())


@torch.no_grad()
def peek(x):
    stack.eval()
    return stack(x).mean().item()


for step in range(20):
    x = torch.randn(4, 4)
    opt.zero_grad()
    stack(x).pow(2).mean().backward()
    opt.step()
    if step % 5 == 0:
        print(peek(x))
""",
            fixed="""
import torch
import torch.nn as nn


def add_block(layers, width):
    layers.append(nn.Linear(width, width))
    layers.append(nn.Dropout(0.3))


class Stack(nn.Module):
    def __init__(self, width=8, blocks=2):
        super().__init__()
        layers = [nn.Linear(4, width)]
        for _ in range(blocks):
            add_block(layers, width)
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


stack = Stack()
opt = torch.optim.Adam(stack.parameters())


@torch.no_grad()
def peek(x):
    stack.eval()
    return stack(x).mean().item()


for step in range(20):
    x = torch.randn(4, 4)
    opt.zero_grad()
    stack.train()
    stack(x).pow(2).mean().backward()
    opt.step()
    if step % 5 == 0:
        print(peek(x))
""",
            line=39,
        ),
        Invalid(
            """
import torch

for epoch in range(epochs):
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.train(False)
    with torch.no_grad():
        val_acc = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
""",
            fixed="""
import torch

for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.train(False)
    with torch.no_grad():
        val_acc = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
""",
        ),
        Invalid(
            """
import torch


def validate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        print(epoch, validate(model, val_loader))
""",
            fixed="""
import torch


def validate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct


def fit(model, train_loader, val_loader, optimizer, criterion, epochs):
    model.train()
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        print(epoch, validate(model, val_loader))
""",
            line=21,
            col=22,
        ),
        Invalid(
            """
import torch

for step, batch in enumerate(loader):
    loss = net(batch).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 500 == 0:
        net.eval()
        with torch.no_grad():
            print(evaluate_bleu(net, dev_set))
""",
            fixed="""
import torch

for step, batch in enumerate(loader):
    net.train()
    loss = net(batch).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 500 == 0:
        net.eval()
        with torch.no_grad():
            print(evaluate_bleu(net, dev_set))
""",
        ),
        Invalid(
            """
import torch


class Trainer:
    def validate(self):
        self.model.train(False)
        with torch.no_grad():
            return [self.model(x) for x in self.val_loader]

    def train_epoch(self):
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            self.criterion(self.model(x), y).backward()
            self.optimizer.step()

    def fit(self):
        for epoch in range(self.epochs):
            self.validate()
            self.train_epoch()
""",
            fixed="""
import torch


class Trainer:
    def validate(self):
        self.model.train(False)
        with torch.no_grad():
            return [self.model(x) for x in self.val_loader]

    def train_epoch(self):
        for x, y in self.train_loader:
            self.optimizer.zero_grad()
            self.criterion(self.model(x), y).backward()
            self.optimizer.step()

    def fit(self):
        for epoch in range(self.epochs):
            self.validate()
            self.model.train()
            self.train_epoch()
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.2), nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def train(loader, epochs=5):
    history = []
    for epoch in range(epochs):
        total_loss = 0.0
        for inputs, labels in loader:
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        history.append(total_loss / len(loader))
        print(f"epoch {epoch}: accuracy {validate(loader):.3f}")
    return history


def validate(loader):
    model.eval()
    with torch.no_grad():
        correct = total = 0
        for inputs, labels in loader:
            correct += (model(inputs).argmax(dim=1) == labels).sum().item()
            total += labels.size(0)
        return correct / total
""",
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(20, 64), nn.Dropout(0.2), nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def train(loader, epochs=5):
    history = []
    for epoch in range(epochs):
        total_loss = 0.0
        model.train()
        for inputs, labels in loader:
            loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        history.append(total_loss / len(loader))
        print(f"epoch {epoch}: accuracy {validate(loader):.3f}")
    return history


def validate(loader):
    model.eval()
    with torch.no_grad():
        correct = total = 0
        for inputs, labels in loader:
            correct += (model(inputs).argmax(dim=1) == labels).sum().item()
            total += labels.size(0)
        return correct / total
""",
            line=21,
            col=42,
        ),
        # a library model (unknown layers) may have dropout or batch norm: reported
        Invalid(
            """
import torch
import torch.nn as nn
from torchvision.models import resnet18


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def fit(model, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(validate(model, val_loader))


backbone = resnet18(num_classes=10)
fit(backbone, [], [], torch.optim.Adam(backbone.parameters()), 3)
""",
            fixed="""
import torch
import torch.nn as nn
from torchvision.models import resnet18


def validate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def fit(model, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        print(validate(model, val_loader))


backbone = resnet18(num_classes=10)
fit(backbone, [], [], torch.optim.Adam(backbone.parameters()), 3)
""",
            line=19,
        ),
        # the loop switches two models to eval mode to plot them, and switches back only the one without
        # dropout: found by behaviour (the switched model's predictions reach no backward pass)
        Invalid(
            """
import torch
import torch.nn as nn

plain = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
noisy = nn.Sequential(nn.Linear(1, 16), nn.Dropout(0.4), nn.ReLU(), nn.Linear(16, 1))
opt_a = torch.optim.SGD(plain.parameters(), lr=0.05)
opt_b = torch.optim.SGD(noisy.parameters(), lr=0.05)
xs, ys = torch.randn(32, 1), torch.randn(32, 1)
grid = torch.linspace(-2, 2, 9)[:, None]

for step in range(100):
    fit_a = (plain(xs) - ys).pow(2).mean()
    fit_b = (noisy(xs) - ys).pow(2).mean()
    opt_a.zero_grad()
    opt_b.zero_grad()
    (fit_a + fit_b).backward()
    opt_a.step()
    opt_b.step()
    if step % 20 == 0:
        plain.eval()
        noisy.eval()
        curve_a = plain(grid)
        curve_b = noisy(grid)
        print(step, curve_a.detach().squeeze().tolist(), curve_b.detach().squeeze().tolist())
        plain.train()
""",
            fixed="""
import torch
import torch.nn as nn

plain = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
noisy = nn.Sequential(nn.Linear(1, 16), nn.Dropout(0.4), nn.ReLU(), nn.Linear(16, 1))
opt_a = torch.optim.SGD(plain.parameters(), lr=0.05)
opt_b = torch.optim.SGD(noisy.parameters(), lr=0.05)
xs, ys = torch.randn(32, 1), torch.randn(32, 1)
grid = torch.linspace(-2, 2, 9)[:, None]

for step in range(100):
    fit_a = (plain(xs) - ys).pow(2).mean()
    noisy.train()
    fit_b = (noisy(xs) - ys).pow(2).mean()
    opt_a.zero_grad()
    opt_b.zero_grad()
    (fit_a + fit_b).backward()
    opt_a.step()
    opt_b.step()
    if step % 20 == 0:
        plain.eval()
        noisy.eval()
        curve_a = plain(grid)
        curve_b = noisy(grid)
        print(step, curve_a.detach().squeeze().tolist(), curve_b.detach().squeeze().tolist())
        plain.train()
""",
            line=22,
        ),
        # a helper, whatever its name, that switches the model it is given to eval mode and runs it
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def probe(m, batches):
    m.eval()
    with torch.no_grad():
        return sum((m(x).argmax(1) == y).sum().item() for x, y in batches)


def fit(batches, rounds):
    for r in range(rounds):
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        print(r, probe(net, batches))
""",
            fixed="""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def probe(m, batches):
    m.eval()
    with torch.no_grad():
        return sum((m(x).argmax(1) == y).sum().item() for x, y in batches)


def fit(batches, rounds):
    for r in range(rounds):
        net.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        print(r, probe(net, batches))
""",
            line=21,
        ),
        # one loop trains and validates, by phase: `eval()` in the validation arm, the backward pass under the
        # same test, and nothing switches back for the next epoch's training phase
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


def run(loaders, epochs):
    net = Net()
    opt = torch.optim.Adam(net.parameters())
    for epoch in range(epochs):
        for phase in ("train", "valid"):
            if phase == "train":
                pass
            else:
                net.eval()
            total = 0.0
            for x, y in loaders[phase]:
                loss = (net(x) - y).pow(2).mean()
                if phase == "train":
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                total += loss.item()
            print(epoch, phase, total)
""",
            fixed="""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


def run(loaders, epochs):
    net = Net()
    opt = torch.optim.Adam(net.parameters())
    for epoch in range(epochs):
        for phase in ("train", "valid"):
            if phase == "train":
                net.train()
            else:
                net.eval()
            total = 0.0
            for x, y in loaders[phase]:
                loss = (net(x) - y).pow(2).mean()
                if phase == "train":
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                total += loss.item()
            print(epoch, phase, total)
""",
            line=23,
        ),
        # the helper puts the teacher in eval mode before its steps, not the student it trains
        Invalid(
            """
import torch
import torch.nn as nn


def distill(loader, student, teacher, optimizer):
    teacher.eval()
    for x, y in loader:
        with torch.no_grad():
            soft = teacher(x).softmax(1)
        loss = -(soft * student(x).log_softmax(1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(train_loader, val_loader, teacher):
    student = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for epoch in range(10):
        distill(train_loader, student, teacher, optimizer)
        print(validate(val_loader, student))
""",
            message="The loop puts `student` in eval mode",
            fixed="""
import torch
import torch.nn as nn


def distill(loader, student, teacher, optimizer):
    teacher.eval()
    for x, y in loader:
        with torch.no_grad():
            soft = teacher(x).softmax(1)
        loss = -(soft * student(x).log_softmax(1)).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model):
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(train_loader, val_loader, teacher):
    student = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    for epoch in range(10):
        student.train()
        distill(train_loader, student, teacher, optimizer)
        print(validate(val_loader, student))
""",
        ),
        # a `Sequential` built empty and filled with `add_module`: its dropout is what was added
        Invalid(
            """
import torch
from torch import nn

model = nn.Sequential()
model.add_module("fc1", nn.Linear(10, 10))
model.add_module("drop", nn.Dropout(p=0.5))
model.add_module("fc2", nn.Linear(10, 1))
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    for x, y in train_batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        print(sum(nn.functional.mse_loss(model(x), y).item() for x, y in valid_batches))
""",
            fixed="""
import torch
from torch import nn

model = nn.Sequential()
model.add_module("fc1", nn.Linear(10, 10))
model.add_module("drop", nn.Dropout(p=0.5))
model.add_module("fc2", nn.Linear(10, 1))
opt = torch.optim.Adam(model.parameters())
for epoch in range(10):
    model.train()
    for x, y in train_batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        print(sum(nn.functional.mse_loss(model(x), y).item() for x, y in valid_batches))
""",
        ),
        # the evaluation pass binds the name the training pass binds again before its loss (`pred`): the
        # evaluation's output never reaches the backward pass, and both nets train in eval mode from epoch 2
        Invalid(
            """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1, 10)
        self.bn = nn.BatchNorm1d(10)
        self.out = nn.Linear(10, 1)

    def forward(self, x):
        h = self.bn(self.fc(x))
        return self.out(torch.tanh(h)), h


nets = [Net(), Net()]
opts = [torch.optim.Adam(net.parameters(), lr=0.02) for net in nets]
loss_func = nn.MSELoss()
test_x, test_y = torch.randn(20, 1), torch.randn(20, 1)
loader = [(torch.randn(8, 1), torch.randn(8, 1))]
losses = [[], []]
for epoch in range(3):
    for net, l in zip(nets, losses):
        net.eval()
        pred, hidden = net(test_x)
        l.append(loss_func(pred, test_y).data.item())
    for b_x, b_y in loader:
        for net, opt in zip(nets, opts):
            pred, _ = net(b_x)
            loss = loss_func(pred, b_y)
            opt.zero_grad()
            loss.backward()
            opt.step()
""",
            line=26,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._loops: List[cst.CSTNode] = []

    def leave_For(self, node: cst.For) -> None:
        self._loops.append(node)

    def leave_While(self, node: cst.While) -> None:
        self._loops.append(node)

    def leave_Module(self, node: cst.Module) -> None:
        for loop in self._loops:
            self._check(loop)

    def _check(self, loop: cst.CSTNode) -> None:
        ctx = self.ctx
        evals: List[Tuple[cst.Call, str]] = []
        for call in ctx.calls_in(loop):
            evals.extend((call, code) for code in sorted(eval_targets_of_call(ctx, call)) if code != ANY)
        if not evals:
            return
        restored = self._restored(loop)
        evals = [(call, code) for call, code in evals if not covers(restored, code)]
        if not evals:
            return
        reached = calls_through_helpers(ctx, loop, depth=2)
        for call, via in reached:
            name = callee_name(call)
            if call is not via or not name or "train" not in name or method_name(call) == "train":
                continue  # `m.train(False)` is a mode switch, seen above
            if ctx.function_for_call(call) is None and (TRAIN_CALL.search(snake(name)) or snake(name) == "training"):
                return  # an unresolved training helper may well call `model.train()`
        training = [via for call, via in reached if is_backward_like(ctx, call) or optimizer_of_step(ctx, call)]
        if not training or not (self._evaluates(loop) or self._runs_switched(loop, evals)):
            return
        for via_eval, code in evals:
            if self._mode_free(loop, via_eval, code):
                continue  # no layer of the model acts differently in eval mode: training is unaffected
            steps = [t for t in training if common_loop(ctx, via_eval, t) is loop and self._trains_model(t, code, loop)]
            if not steps:
                continue
            self.report(
                via_eval,
                f"The loop puts `{code}` in eval mode and trains it again without `{code}.train()`",
                fix=self._fix(loop, via_eval, steps, code),
            )
            return

    def _runs_switched(self, loop: cst.CSTNode, evals: List[Tuple[cst.Call, str]]) -> bool:
        """Evaluation by behaviour: after switching a model to eval mode, the loop runs that model and
        what the run produces reaches no backward pass (a prediction, plotted or printed)."""
        ctx = self.ctx
        for via_eval, code in evals:
            if eval_mode_target(via_eval) is None and self._helper_runs_param(via_eval):
                return True  # `evaluate(net, loader)`: the helper switches the model it is given and runs it
            after = position(ctx, via_eval)
            for call, model in evaluation_facts(ctx).model_calls:
                if ctx.code(model) != code or not ctx.is_inside(call, loop) or position(ctx, call) <= after:
                    continue
                flow = decoding_flow(ctx, loop, {call})
                if not reaches_backward(ctx, loop, flow, {call}) or self._no_backward_where(via_eval, loop):
                    return True
            for call in ctx.calls_in(loop):
                # handed, after the switch, to code that runs it (`validate(model, loader)` of another
                # file): an evaluation unless that code is a training step (a backward pass in view)
                if position(ctx, call) <= after or call is via_eval or eval_mode_target(call) is not None:
                    continue
                if not any(ctx.code(a.value) == code for a in call.args):
                    continue
                if any(q.startswith(("builtins.", "torch.")) for q in ctx.names.qualified_names(call.func)):
                    continue  # `print(model)`, `torch.save(model, path)`: nothing runs it
                if any(is_backward_like(ctx, c) or optimizer_of_step(ctx, c) is not None
                       for c, _via in calls_through_helpers(ctx, call, 2)):
                    continue
                imported = imported_helper(ctx, call)
                if imported is not None and any(is_backward_like(imported[0], c) for c in imported[0].calls_in(imported[1])):
                    continue
                if ctx.function_for_call(call) is None and imported is None and not ctx.names.qualified_names(call.func):
                    continue  # a local callable whose code is not in view
                return True
        return False

    def _no_backward_where(self, switch: cst.Call, loop: cst.CSTNode) -> bool:
        """Whether, in an iteration of ``loop`` that runs ``switch``, no backward pass or optimizer step of the
        loop runs: each one sits in the other arm of an ``if`` on the same test as ``switch`` (``if split ==
        "train": model.train()`` ``else: model.eval()``, then ``if split == "train": loss.backward()``), a test
        whose names the loop's body does not rebind."""
        ctx = self.ctx
        mine = self._arms(switch, loop)
        if not mine:
            return False
        steps = [c for c in ctx.calls_in(loop) if is_backward_like(ctx, c) or optimizer_of_step(ctx, c) is not None]
        if not steps:
            return False
        rebound = ctx.assigned_names(loop)
        for step in steps:
            theirs = self._arms(step, loop)
            if not any(test == other and arm != other_arm and not names & rebound
                       for test, arm, names in mine for other, other_arm, _ in theirs):
                return False
        return True

    def _arms(self, node: cst.CSTNode, loop: cst.CSTNode) -> List[Tuple[str, bool, Set[str]]]:
        """The ``if`` statements around ``node`` inside ``loop``: (the test's code, whether ``node`` is in
        its body rather than its ``else``/``elif`` part, the names the test reads)."""
        ctx = self.ctx
        out: List[Tuple[str, bool, Set[str]]] = []
        child = node
        for a in ctx.ancestors(node):
            if a is loop:
                break
            if isinstance(a, cst.If) and child is not a.test:
                names = {n.value for n in ctx.nodes(a.test) if isinstance(n, cst.Name)}
                out.append((" ".join(ctx.code(a.test).split()), child is a.body, names))
            child = a
        return out

    def _helper_runs_param(self, call: cst.Call) -> bool:
        """Whether the function ``call`` runs (this file's or another project file's) calls one of its
        parameters: the model it switched to eval mode runs there."""
        ctx = self.ctx
        found = ctx.function_for_call(call)
        if found is not None:
            fctx, function = ctx, found
        else:
            imported = imported_helper(ctx, call)
            if imported is None:
                return False
            fctx, function = imported[0], imported[1]
        if needs_grad(fctx, function) or any(is_backward_like(fctx, c) or optimizer_of_step(fctx, c) is not None
                                             for c in fctx.calls_in(function)):
            return False  # it differentiates (a gradient visualisation) or trains: no evaluation
        p = function.params
        params = {q.name.value for q in [*p.posonly_params, *p.params, *p.kwonly_params]}
        return any(isinstance(c.func, cst.Name) and c.func.value in params for c in fctx.calls_in(function))

    def _restored(self, loop: cst.CSTNode) -> Set[str]:
        """What the loop may turn back to training mode: the receivers of its own `train()` calls, and
        :data:`ANY` for one in a helper (same-module or imported) or on an unknown receiver."""
        ctx = self.ctx
        out: Set[str] = set()
        for call, via in calls_through_helpers(ctx, loop, depth=2):
            if not train_mode_call(call):
                continue
            recv = receiver(call)
            if call is via and recv is not None and dotted_name(recv) is not None:
                out.add(ctx.code(recv))
            else:
                out.add(ANY)
        for call in ctx.calls_in(loop):
            imported = imported_helper(ctx, call)
            if imported is not None and any(train_mode_call(c) for c in imported[0].calls_in(imported[1])):
                out.add(ANY)  # a helper of another file turns training mode on
            found = ctx.function_for_call(call)
            helper = (ctx, found) if found is not None else imported
            if helper is not None:
                # the training helper chooses the mode itself (eval mode for a frozen backbone)
                out.update(_mode_chosen_for(ctx, call, helper[0], helper[1]))
        return out

    def _mode_free(self, loop: cst.CSTNode, via_eval: cst.Call, code: str) -> bool:
        """Whether the model put in eval mode provably has no layer that acts differently in eval mode
        (only `Linear`, activations, a `GRU` without dropout, ...); an unknown model may have one."""
        ctx = self.ctx
        expr: Optional[cst.BaseExpression] = eval_mode_target(via_eval)
        if expr is None:
            expr = next((a.value for a in via_eval.args if ctx.code(a.value) == code), None)
        if expr is None and code.isidentifier():
            expr = next(iter(ctx.names_in(loop, code)), None)
        return expr is not None and model_mode_dependent(ctx, expr) is False

    def _evaluates(self, loop: cst.CSTNode) -> bool:
        """Some evaluation happens in the loop (not a deliberate batch-norm freeze)."""
        ctx = self.ctx
        sites = [s for s in evaluation_facts(ctx).sites() if not s.own_method]
        for site in sites:
            if ctx.is_inside(site.node, loop):
                return True
        for call in ctx.calls_in(loop):
            target = ctx.function_for_call(call)
            if target is not None and any(s.function is target for s in sites):
                return True
        for call in ctx.calls_in(loop):
            if ctx.names.matches(call.func, NO_GRAD_CONTEXTS) and isinstance(ctx.parent(call), cst.WithItem):
                return True
        return False

    def _trains_model(self, step: cst.Call, code: str, loop: cst.CSTNode) -> bool:
        """The eval'd model is the one trained: it runs outside `no_grad` in the loop, or is handed to
        (or, for `self.*`, used by) the same-module helper that trains."""
        ctx = self.ctx
        helper = ctx.function_for_call(step)
        if helper is None or is_backward_like(ctx, step) or optimizer_of_step(ctx, step) is not None:
            for call, model in evaluation_facts(ctx).model_calls:
                if ctx.code(model) == code and ctx.is_inside(call, loop) and not under_no_grad(ctx, call):
                    return True
            return False
        if code in ctx.bare_code(step):
            return True
        if code.startswith("self."):
            body = ctx.bare_code(helper)
            return code + "(" in body or code + ".forward(" in body
        return False

    def _fix(self, loop: cst.CSTNode, via_eval: cst.Call, steps: List[cst.Call], code: str) -> Optional[Fix]:
        ctx = self.ctx
        if self._no_backward_where(via_eval, loop):
            return self._fix_other_arm(via_eval, code)
        first = steps[0]
        if ctx.function_for_call(first) is None or is_backward_like(ctx, first) or optimizer_of_step(ctx, first):
            # a training step written in the loop: switch the mode before the model's forward pass
            for call, model in evaluation_facts(ctx).model_calls:
                if ctx.code(model) == code and common_loop(ctx, call, first) is loop and not under_no_grad(ctx, call):
                    first = call
                    break
        anchor = top_statement(ctx, first, loop)
        if anchor is None or anchor is top_statement(ctx, via_eval, loop):
            return None
        return self.make_fix(f"Insert `{code}.train()` before the training step").insert_before(
            anchor, ctx.parse_statement(f"{code}.train()\n")
        )

    def _fix_other_arm(self, switch: cst.Call, code: str) -> Optional[Fix]:
        """The switch to eval mode sits in one arm of an ``if`` whose other arm trains: the training arm
        switches back first (its lone ``pass`` replaced).  No fix without that arm (an ``elif``, no ``else``)."""
        ctx = self.ctx
        child: cst.CSTNode = switch
        for a in ctx.ancestors(switch):
            if isinstance(a, cst.If) and child is not a.test:
                if child is a.body:
                    other = a.orelse.body if isinstance(a.orelse, cst.Else) else None
                else:
                    other = a.body if child is a.orelse else None
                if not isinstance(other, cst.IndentedBlock) or not other.body:
                    return None
                fix = self.make_fix(f"Insert `{code}.train()` in the arm that trains")
                statement = ctx.parse_statement(f"{code}.train()\n")
                first = other.body[0]
                if len(other.body) == 1 and isinstance(first, cst.SimpleStatementLine) and \
                        all(isinstance(s, cst.Pass) for s in first.body):
                    return fix.replace(first, statement)
                return fix.insert_before(first, statement)
            child = a
        return None
