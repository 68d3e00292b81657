from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, arg, assignment_targets, method_name, receiver
from torchlint.analysis.training import (
    whole_names,
    backward_operand,
    attribute_flows_into_backward,
    instance_attribute,
    base_names,
    flows_into_backward,
    innermost_loop,
    is_backward_like,
    is_detached,
    is_loss_call,
    under_no_grad,
)
from torchlint.families.training.graph_free import returns_without_graph
from torchlint.analysis.roles import plain_object_method
from torchlint.analysis.definitions import called_function, find_method, function_returns, instance_class, strip_moves
from torchlint.analysis.walk import iter_nodes, target_names as names_bound_by
from torchlint.rule import Fix, Invalid, LintRule, Option, Valid

_LOSS_NAME = re.compile(r"loss", re.IGNORECASE)
_FULL_REDUCTIONS = frozenset({"mean", "sum"})
_STACKERS = frozenset({"builtins.sum", "torch.stack", "torch.cat", "torch.sum", "torch.mean"})
# where an accumulated float works as well as a tensor: printing, logging, formatting, comparing
_HARMLESS_CALLEE = re.compile(
    r"^(print|float|int|round|str|repr|len|format|abs|min|max)$|log|info|debug|warn|add_scalar|set_postfix|"
    r"write|append|extend",
    re.IGNORECASE,
)


class LossAccumulatedWithGraph(LintRule):
    """
    ## What it does
    Finds training loops that add a loss tensor to a running total (`total += loss`,
    `total = total + loss`) or append it to a list (`losses.append(loss)`) without `.item()` or
    `.detach()`. A value counts as a loss when the loop calls `backward()` on it, or when it comes
    from a criterion, an `F.*_loss` function, an `nn.*Loss` module or a model output's `.loss`, or when it
    is a part of the loss the loop backpropagates: unpacked from the same call of a project function or
    method every return of which computes that loss from it (`loss, mf, reg = model.bpr_loss(u, i, j)` with
    `return mf + reg, mf, reg`).

    ## Why is this bad?
    A loss tensor carries its autograd graph. Adding it to a total that lives across iterations chains
    every iteration's graph onto the total, so none of them can be freed: memory grows with every batch
    until the process runs out. The cookbook's tip for reading a scalar out of a tensor says exactly
    this: use `tensor.item()` when tracking the loss during training, "否则这将累积计算图，使 GPU 存储
    占用量越来越大" (PyTorch Cookbook, Zhang Hao, 2019, repeated in its
    2024 revision).

    Not reported: `.item()`, `float(loss)`, `.detach()`, `.data`; a loss computed after a
    `torch.set_grad_enabled(False)` statement (until gradients are turned back on), or from outputs the
    loop computes under `no_grad`; code under `torch.no_grad()` or
    `torch.inference_mode()`; a total that is reset on every iteration of the loop (a reset inside an
    `if`, such as printing and zeroing every 100 steps, leaves the graphs of the other iterations
    chained, and is reported); a total that is itself backpropagated later as a whole (micro-batching,
    gradient accumulation through a summed loss; a list whose elements are backpropagated one at a time
    still keeps every graph, and is reported); and a value
    whose only graph comes from an accumulation reported here (`history.append(total_loss / n)` after
    `total_loss += loss` in the inner loop): the root is reported, and once it is fixed the value is a
    number (a second `.item()` on it would fail).

    ## Example
    ```python
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    ```

    ## Use instead
    ```python
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    ```

    ## Fix safety
    The fix appends `.item()` or `.detach()` to the loss, chosen by how the total is used after the
    loop. `.detach()` is safe: the total keeps its type and device and only loses the graph; it is the
    fix whenever the total is used as a tensor (a tensor method such as `total.detach()` or
    `(total / n).item()`, or a torch function such as `torch.cat([..., total])`), where a float would
    raise; unsafe when the total is also returned or passed on (a caller might differentiate it). `.item()` turns the total into a Python float; it is safe when the loss is a proven scalar
    (the value `backward()` is called on) and the total is only printed, logged, compared, formatted or
    combined with numbers in the function. When the total is returned, stored or passed on (a caller
    may call `.item()` or `torch.stack` on it: the use is unknown), the `.item()` fix is unsafe. No fix
    is offered when the loss variable may still hold the Python number it was given before the loop
    (`err = 0.0`, appended before the first loss is computed): a number has neither method.

    A name is read where it is used: one that holds a graph-free value on every path there (`cost =
    held_out_loss(...)`, a function returning a number, after the training steps that used the same name)
    is not a loss; a value assigned later in the loop reaches the next pass's read.

    ## Options
    - `loss-accumulation-fix` (`"item"` | `"detach"`, default `"item"`): `"detach"` keeps the values on
      the device, which avoids a host synchronisation every step; the cookbook recommends accumulating
      per-batch statistics on the GPU and transferring them once per epoch (PyTorch Cookbook, Zhang Hao, 2019,
      "减少 CPU 和 GPU 之间的数据传输").

    ## References
    - [torch.Tensor.item](https://pytorch.org/docs/stable/generated/torch.Tensor.item.html)
    - [PyTorch FAQ: out of memory](https://pytorch.org/docs/stable/notes/faq.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL104"
    NAME = "loss-accumulated-with-graph"
    MESSAGE = (
        "Loss tensor accumulated across iterations with its autograd graph; every iteration's graph stays in memory"
    )
    FIX_TITLE = "Accumulate `loss.item()` instead of the loss tensor"
    TRIGGERS = ("backward",)
    OPTIONS = {
        "loss-accumulation-fix": Option(
            default="item",
            choices=("item", "detach"),
            doc="How the fix takes the loss off the graph: `.item()` (a Python float) or `.detach()` "
            "(a tensor on the same device, no host synchronisation).",
        )
    }

    VALID = [
        # a check loss computed under `no_grad` (in the loop, or in a helper) has no graph to keep
        """
import torch


def fit(model, train, criterion, opt):
    running = 0
    for x, y in train:
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            check = criterion(model(x), y)
        running += check
    return running
""",
        """
import torch


def val_loss(model, criterion, x, y):
    with torch.no_grad():
        return criterion(model(x), y)


def fit(model, train, val, criterion, opt):
    for epoch in range(3):
        total = 0
        for x, y in train:
            opt.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            opt.step()
            total += val_loss(model, criterion, x, y)
        print(total)
""",
        # the helper returns a number (`.item()` of the loss): the total is a float, no graph
        Valid(
            """
def compute_loss(model, criterion, x, y):
    loss = criterion(model(x), y)
    return loss.item() * x.size(0)


def fit(model, loader, criterion, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        running += compute_loss(model, criterion, x, y)
    return running
""",
        ),
        Valid(
            """
def batch_loss(model, criterion, x, y):
    value = float(criterion(model(x), y))
    return value


def fit(model, loader, criterion, optimizer):
    history = []
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        history.append(batch_loss(model, criterion, x, y))
    return history
""",
        ),
        Valid(
            """
def run_epoch(model, loader, criterion, optimizer):
    total_loss = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    return total_loss / len(loader)
"""
        ),
        Valid(
            """
history = []
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    history.append(float(loss))
    running = running + loss.detach()
"""
        ),
        Valid(
            """
def train_step(model, batch, optimizer, chunks=4):
    optimizer.zero_grad()
    total = 0
    for micro in batch.chunk(chunks):
        total = total + model(micro).loss / chunks
    total.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
for batch in loader:
    losses = []
    for head in heads:
        losses.append(criterion(head(batch.x), batch.y))
    loss = sum(losses)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
import torch

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val_total += criterion(model(vx), vy)
"""
        ),
        Valid(
            """
import torch

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val_loss = criterion(model(vx), vy)
    val_total += val_loss
"""
        ),
        Valid(
            """
for x, y in loader:
    loss = criterion(model(x), y)
    loss += 0.1 * reg(model)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(
            """
total_samples = 0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_samples += x.size(0)
    n = len(y)
    seen += n
"""
        ),
        Valid(
            """
for step, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accum
    acc_loss = acc_loss + loss
    if (step + 1) % accum == 0:
        acc_loss.backward()
        optimizer.step()
        acc_loss = 0
"""
        ),
        Valid(
            """
def collect_outputs(nodes, env):
    output_values = []
    for x in nodes:
        if must_run_in_backward(x):
            output_values.append(env[x])
            continue
        output_values.append(x)
    return output_values
"""
        ),
        Valid(
            """
def train(model, loader, criterion, optimizer, chunks=4):
    for x, y in loader:
        optimizer.zero_grad()
        losses = []
        for xc, yc in zip(x.chunk(chunks), y.chunk(chunks)):
            losses.append(criterion(model(xc), yc))
        sum(losses).backward()
        optimizer.step()
"""
        ),
        Valid(
            """
def train(model, loader, criterion, optimizer):
    for x, y in loader:
        total = 0.0
        optimizer.zero_grad()
        total += criterion(model(x), y)
        if total > 100:
            total = total / 10
        total.backward()
        optimizer.step()
"""
        ),
        # a running total of losses computed with gradients off: after a `torch.set_grad_enabled(False)`
        # statement (until it is turned back on), or from outputs computed under `no_grad`
        Valid(
            """
import torch


def fit(model, loader, opt, check):
    crit = torch.nn.CrossEntropyLoss()
    seen, probes = 0, []
    for x, y in loader:
        opt.zero_grad()
        crit(model(x), y).backward()
        opt.step()
        torch.set_grad_enabled(False)
        v = crit(model(check[0]), check[1])
        seen += v
        torch.set_grad_enabled(True)
        with torch.no_grad():
            out = model(check[0])
        probes.append(crit(out, check[1]))
    return seen, probes
"""
        ),
        # a helper defined in the training function that returns the loss as a number
        Valid(
            """
import torch
import torch.nn as nn


def fit(features, labels, epochs=3):
    net = nn.Linear(features.shape[-1], 1)
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)

    def whole_set_loss():
        return criterion(net(features).view(-1), labels).item()

    history = [whole_set_loss()]
    for _ in range(epochs):
        for x, y in zip(features.split(10), labels.split(10)):
            loss = criterion(net(x).view(-1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(whole_set_loss())
    return history
"""
        ),
        # near miss: a policy-gradient agent stores each step's log-probability on itself and
        # differentiates them all together in another method (the graphs are needed)
        Valid(
            """
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.policy = nn.Linear(4, 2)
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.log_probs = []
        self.rewards = []

    def episode(self, steps=10):
        for t in range(steps):
            dist = torch.distributions.Categorical(logits=self.policy(torch.randn(4)))
            action = dist.sample()
            self.log_probs.append(dist.log_prob(action))
            self.rewards.append(float(action))
            if t == steps - 1:
                self.finish()

    def finish(self):
        loss = -(torch.stack(self.log_probs) * torch.tensor(self.rewards)).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.log_probs, self.rewards = [], []


Agent().episode()
"""
        ),
        # a test loss summed from `0` under `no_grad`, kept per epoch after the block: no graph
        """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))
criterion = nn.NLLLoss()
optimizer = torch.optim.Adam(model.parameters())
test_losses = []
for epoch in range(3):
    for x, y in trainloader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    test_loss = 0
    with torch.no_grad():
        for x, y in testloader:
            test_loss += criterion(model(x), y)
    test_losses.append(test_loss / len(testloader))
""",
        # near miss: the name is bound to a NumPy copy of the loss before it is added to the total
        """
import torch.nn as nn


def train(model, batches, optimizer):
    criterion = nn.CrossEntropyLoss()
    total = 0
    for x, y in batches:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss = loss.detach().cpu().numpy()
        total += loss
    return total / len(batches)
""",
        # the same list summed after the loop and backpropagated there: the graphs are kept for that pass
        Valid(
            """
import torch
import torch.nn as nn

policy = nn.Linear(6, 3)
optimizer = torch.optim.Adam(policy.parameters())


def update(batches):
    losses = []
    for obs, adv in batches:
        loss = -(policy(obs).log_softmax(-1)[:, 0] * adv).mean()
        losses.append(loss)
    loss = sum(losses) / len(losses)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


print(float(update([(torch.randn(4, 6), torch.randn(4)) for _ in range(3)])))
"""
        ),
        Valid(
            """
import torch


class HandNet(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = torch.zeros(n, 1)

    def forward(self, x):
        return torch.sigmoid(x @ self.w)

    def backward(self, x, p, y, lr=0.5):
        self.w -= lr * x.t() @ (p - y) / x.shape[0]


net = HandNet(4)
x, y = torch.randn(32, 4), torch.randint(0, 2, (32, 1)).float()
history = []
for epoch in range(20):
    p = net(x)
    err = torch.nn.functional.binary_cross_entropy(p, y)
    net.backward(x, p, y)
    history.append(err)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

net = nn.Linear(6, 1)
opt = torch.optim.Adam(net.parameters())
crit = nn.L1Loss()
x, y = torch.randn(16, 6), torch.randn(16, 1)
errors = []
for step in range(10):
    out = net(x)
    opt.zero_grad()
    crit(out, y).backward()
    opt.step()
    errors.append(crit(out.data, y))
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F


def held_out_loss(model, data):
    with torch.no_grad():
        total = sum(F.mse_loss(model(x), y) for x, y in data)
    return float(total) / len(data)


def fit(model, opt, data, epochs):
    curve = []
    for _ in range(epochs):
        for x, y in data:
            cost = F.mse_loss(model(x), y)
            opt.zero_grad()
            cost.backward()
            opt.step()
        # the name now holds a Python number computed without a graph
        cost = held_out_loss(model, data)
        curve.append(cost)
    return curve
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def loss_and_accuracy(self, x, y):
        scores = self.fc(x)
        loss = nn.functional.cross_entropy(scores, y)
        accuracy = (scores.argmax(1) == y).float().mean()  # computed beside the loss, not from it
        return loss, accuracy


model = Classifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
hits = 0.0
for step in range(20):
    loss, accuracy = model.loss_and_accuracy(torch.randn(16, 8), torch.randint(0, 3, (16,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    hits += accuracy
"""
        ),
    ]

    INVALID = [
        # the helper returns the loss tensor itself: the total keeps every graph
        Invalid(
            """
def compute_loss(model, criterion, x, y):
    loss = criterion(model(x), y)
    return loss * x.size(0)


def fit(model, loader, criterion, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        running += compute_loss(model, criterion, x, y)
    return running
""",
            fixed="""
def compute_loss(model, criterion, x, y):
    loss = criterion(model(x), y)
    return loss * x.size(0)


def fit(model, loader, criterion, optimizer):
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        running += compute_loss(model, criterion, x, y).item()
    return running
""",
            unsafe=True,
            line=13,
        ),
        Invalid(
            """
def run_epoch(model, loader, criterion, optimizer):
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(f"loss {total_loss / len(loader):.3f}")
""",
            fixed="""
def run_epoch(model, loader, criterion, optimizer):
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print(f"loss {total_loss / len(loader):.3f}")
""",
            line=9,
            col=9,
        ),
        Invalid(
            """
import torch.nn.functional as F

def fit(model, loader, opt):
    history = []
    for inputs, targets in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        opt.step()
        history.append(loss)
    return history
""",
            fixed="""
import torch.nn.functional as F

def fit(model, loader, opt):
    history = []
    for inputs, targets in loader:
        opt.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        opt.step()
        history.append(loss.item())
    return history
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch

def fit(model, loader, opt):
    total = torch.zeros(())
    for inputs, targets in loader:
        opt.zero_grad()
        loss = model(inputs, targets)
        loss.backward()
        opt.step()
        total = total + loss * inputs.size(0)
    return total.item()
""",
            fixed="""
import torch

def fit(model, loader, opt):
    total = torch.zeros(())
    for inputs, targets in loader:
        opt.zero_grad()
        loss = model(inputs, targets)
        loss.backward()
        opt.step()
        total = total + loss.detach() * inputs.size(0)
    return total.item()
""",
            options={"loss-accumulation-fix": "detach"},
        ),
        # the total is used as a tensor afterwards: `.detach()` keeps it one (`.item()` would break it)
        Invalid(
            """
import torch

def fit(model, loader, opt, history):
    total = 0
    for inputs, targets in loader:
        opt.zero_grad()
        loss = model(inputs, targets)
        loss.backward()
        opt.step()
        total += loss
    history = torch.cat([history, total.detach()[None]])
    print(history)
""",
            fixed="""
import torch

def fit(model, loader, opt, history):
    total = 0
    for inputs, targets in loader:
        opt.zero_grad()
        loss = model(inputs, targets)
        loss.backward()
        opt.step()
        total += loss.detach()
    history = torch.cat([history, total.detach()[None]])
    print(history)
""",
        ),
        Invalid(
            """
for batch in loader:
    outputs = model(**batch)
    accelerator.backward(outputs.loss)
    optimizer.step()
    optimizer.zero_grad()
    epoch_loss += outputs.loss
""",
            fixed="""
for batch in loader:
    outputs = model(**batch)
    accelerator.backward(outputs.loss)
    optimizer.step()
    optimizer.zero_grad()
    epoch_loss += outputs.loss.item()
""",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Linear(20, 3)
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
            total_loss += loss
        history.append(total_loss / len(loader))
    return history
""",
            fixed="""
import torch
import torch.nn as nn

model = nn.Linear(20, 3)
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
    return history
""",
            line=19,
            count=1,
        ),
        Invalid(
            """
def train(model, loader, criterion, optimizer):
    running_loss = 0.0
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss
        if i % 100 == 99:
            print(f"loss {running_loss / 100:.3f}")
            running_loss = 0.0
""",
            fixed="""
def train(model, loader, criterion, optimizer):
    running_loss = 0.0
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 100 == 99:
            print(f"loss {running_loss / 100:.3f}")
            running_loss = 0.0
""",
            line=9,
        ),
        Invalid(
            """
def train(model, loader, criterion, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        losses.append(criterion(model(x), y))
        losses[-1].backward()
        optimizer.step()
    return losses
""",
        ),
        # near miss: the same with gradients on, the totals keep every probe's graph
        Invalid(
            """
import torch


def fit(model, loader, opt, check):
    crit = torch.nn.CrossEntropyLoss()
    seen, probes = 0, []
    for x, y in loader:
        opt.zero_grad()
        crit(model(x), y).backward()
        opt.step()
        v = crit(model(check[0]), check[1])
        seen += v
        out = model(check[0])
        probes.append(crit(out, check[1]))
    return seen, probes
""",
            fixed="""
import torch


def fit(model, loader, opt, check):
    crit = torch.nn.CrossEntropyLoss()
    seen, probes = 0, []
    for x, y in loader:
        opt.zero_grad()
        crit(model(x), y).backward()
        opt.step()
        v = crit(model(check[0]), check[1])
        seen += v.item()
        out = model(check[0])
        probes.append(crit(out, check[1]).item())
    return seen, probes
""",
            line=13,
            count=2,
            unsafe=True,
        ),
        # the same helper returning the loss tensor: each appended value keeps its graph
        Invalid(
            """
import torch
import torch.nn as nn


def fit(features, labels, epochs=3):
    net = nn.Linear(features.shape[-1], 1)
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)

    def whole_set_loss():
        return criterion(net(features).view(-1), labels)

    history = [whole_set_loss()]
    for _ in range(epochs):
        for x, y in zip(features.split(10), labels.split(10)):
            loss = criterion(net(x).view(-1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(whole_set_loss())
    return history
""",
            fixed="""
import torch
import torch.nn as nn


def fit(features, labels, epochs=3):
    net = nn.Linear(features.shape[-1], 1)
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)

    def whole_set_loss():
        return criterion(net(features).view(-1), labels)

    history = [whole_set_loss()]
    for _ in range(epochs):
        for x, y in zip(features.split(10), labels.split(10)):
            loss = criterion(net(x).view(-1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append(whole_set_loss().item())
    return history
""",
            line=21,
            col=13,
            unsafe=True,
        ),
        # a trainer object keeps the history on itself (`self.history["loss"]`): the instance every loss is
        # computed from is not the total; the list is, and it keeps every graph
        Invalid(
            """
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.history = {"loss": []}

    def fit(self, batches):
        for x, y in batches:
            self.opt.zero_grad()
            loss = (self.net(x) - y).pow(2).mean()
            self.history["loss"].append(loss)
            loss.backward()
            self.opt.step()
        return sum(self.history["loss"]) / len(self.history["loss"])


print(Trainer().fit([(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]))
""",
            fixed="""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.history = {"loss": []}

    def fit(self, batches):
        for x, y in batches:
            self.opt.zero_grad()
            loss = (self.net(x) - y).pow(2).mean()
            self.history["loss"].append(loss.item())
            loss.backward()
            self.opt.step()
        return sum(self.history["loss"]) / len(self.history["loss"])


print(Trainer().fit([(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]))
""",
            line=16,
            unsafe=True,
        ),
        # each step's loss is kept in a list with its graph; the mean taken after the loop reuses the name
        # of the loss, but the backward pass inside the loop never sees that mean
        Invalid(
            """
import torch
import torch.nn as nn

policy = nn.Linear(6, 3)
optimizer = torch.optim.Adam(policy.parameters())


def update(batches):
    losses = []
    for obs, adv in batches:
        loss = -(policy(obs).log_softmax(-1)[:, 0] * adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)
    loss = sum(losses) / len(losses)
    return loss


print(float(update([(torch.randn(4, 6), torch.randn(4)) for _ in range(3)])))
""",
            fixed="""
import torch
import torch.nn as nn

policy = nn.Linear(6, 3)
optimizer = torch.optim.Adam(policy.parameters())


def update(batches):
    losses = []
    for obs, adv in batches:
        loss = -(policy(obs).log_softmax(-1)[:, 0] * adv).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    loss = sum(losses) / len(losses)
    return loss


print(float(update([(torch.randn(4, 6), torch.randn(4)) for _ in range(3)])))
""",
            unsafe=True,
            line=16,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
criterion = nn.MSELoss()
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]

trace = []
err = 0.0
for x, y in batches:
    trace.append(err)  # from the second pass on, last pass's loss tensor
    err = criterion(net(x), y)
    opt.zero_grad()
    err.backward()
    opt.step()
print(trace)
""",
            line=13,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Factors(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)

    def bpr_loss(self, u, i, j):
        eu, ei, ej = self.emb(u), self.emb(i), self.emb(j)
        mf = -nn.functional.logsigmoid((eu * (ei - ej)).sum(1)).mean()
        reg = 1e-4 * eu.pow(2).sum()
        return mf + reg, mf, reg


model = Factors()
opt = torch.optim.Adam(model.parameters())
total_mf = 0.0
for step in range(50):
    loss, mf, reg = model.bpr_loss(*(torch.randint(0, 100, (32,)) for _ in range(3)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_mf += mf
""",
            fixed="""
import torch
import torch.nn as nn


class Factors(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)

    def bpr_loss(self, u, i, j):
        eu, ei, ej = self.emb(u), self.emb(i), self.emb(j)
        mf = -nn.functional.logsigmoid((eu * (ei - ej)).sum(1)).mean()
        reg = 1e-4 * eu.pow(2).sum()
        return mf + reg, mf, reg


model = Factors()
opt = torch.optim.Adam(model.parameters())
total_mf = 0.0
for step in range(50):
    loss, mf, reg = model.bpr_loss(*(torch.randint(0, 100, (32,)) for _ in range(3)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_mf += mf.item()
""",
            unsafe=True,
            line=26,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: Dict[cst.CSTNode, _Finding] = {}

    # -- detection ---------------------------------------------------------------------------------
    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def leave_Call(self, original_node: cst.Call) -> None:
        self._check(original_node)  # `losses.append(...)`: asked once its argument is walked (its names known)

    def _check(self, node: cst.CSTNode) -> None:
        parts = _accumulated(self.ctx, node)
        if parts is None:
            return
        target, value = parts
        ctx = self.ctx
        if not isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
            return
        loop = innermost_loop(ctx, node)
        if loop is None or under_no_grad(ctx, node):
            return
        backwards = [c for c in ctx.calls_in(loop) if is_backward_like(ctx, c)]
        if not backwards:
            return
        operands = [op for op in (backward_operand(ctx, c) for c in backwards) if op is not None]
        target_code = ctx.code(target)
        facts = _LoopFacts(ctx, loop, operands)
        if facts.reassigned(target_code, node):
            return
        target_names = base_names(target)
        scope = ctx.enclosing(node, (cst.FunctionDef,)) or ctx.module
        held = instance_attribute(ctx, target)
        if held is not None:
            # `self.history['loss'].append(loss)` in a trainer's method: the total is the attribute
            # (`self.history`), not `self`, which every loss of the trainer is computed from
            if attribute_flows_into_backward(ctx, held, ctx.enclosing(node, cst.ClassDef) or scope):
                return  # backpropagated itself (`sum(self.losses).backward()`), here or in another method
            target_names = []
        # a total backpropagated as a whole (micro-batching: `sum(losses).backward()`) is not reported;
        # a list whose single elements are (`losses[-1].backward()`) still keeps every graph alive
        if target_names and target_names[0] in facts.whole_backward_names:
            return
        if target_names and flows_into_backward(ctx, scope, target_names[0], whole=True):
            return
        # names resolve now (in scope); uses further down the file (for the fix), and whether the
        # accumulations the value is built from are reported themselves, are only known once the walk
        # is done: keep the carriers both ways
        facts.roots = []
        without_roots = facts.carriers(value)
        roots = [r for r in facts.roots if r is not node]
        facts.roots = None
        carriers = facts.carriers(value) if roots else without_roots
        if not carriers and not without_roots:
            return
        self._pending[node] = _Finding(
            node,
            target,
            scope,
            carriers,
            all(facts.is_scalar(c) for c in carriers),
            without_roots,
            all(facts.is_scalar(c) for c in without_roots),
            roots,
            bool(target_names) and target_names[0] in facts.backward_names,
            loop,
        )

    def leave_Module(self, node: cst.Module) -> None:
        resolved: Dict[cst.CSTNode, Optional[Tuple[List[cst.BaseExpression], bool]]] = {}

        def resolve(stmt: cst.CSTNode) -> Optional[Tuple[List[cst.BaseExpression], bool]]:
            """The carriers (and whether all are scalars) this rule reports on ``stmt``; None: silent."""
            if stmt in resolved:
                return resolved[stmt]
            found = self._pending.get(stmt)
            if found is None:
                return None
            # in a cycle of accumulations each is taken as reported while the others are judged
            resolved[stmt] = (found.without_roots or found.carriers, True)
            if all(resolve(r) is not None for r in found.roots):
                # the graph of `total` in `history.append(total / n)` comes only from `total += loss`,
                # which is reported: after that fix `total` is a number (`.item()` on it would fail)
                verdict = (found.without_roots, found.without_roots_scalar) if found.without_roots else None
            else:
                verdict = (found.carriers, found.scalar) if found.carriers else None
            resolved[stmt] = verdict
            return verdict

        for stmt, found in self._pending.items():
            if found.loop is not None and not any(
                is_backward_like(self.ctx, c) and not plain_object_method(self.ctx, c)
                for c in self.ctx.calls_in(found.loop)
            ):
                continue  # `net.backward(x, out, y)`: a hand-written network's own method, no autograd
            verdict = resolve(stmt)
            if verdict is None:
                continue
            carriers, scalar = verdict
            fix = self._fix(stmt, found.target, carriers, scalar, found.scope)
            if found.element_backpropagated:
                fix = None  # `losses[-1].backward()` needs the graph: `.item()` would break it
            self.report(
                stmt,
                f"`{self.ctx.code(found.target)}` accumulates the loss tensor `{self.ctx.code(carriers[0])}` with its "
                "autograd graph; every iteration's graph stays in memory",
                fix=fix,
            )

    # -- fix ---------------------------------------------------------------------------------------
    def _fix(self, node, target, carriers, scalar: bool, scope) -> Optional[Fix]:
        how = self.options["loss-accumulation-fix"]
        unsafe = False
        if how == "item":
            uses = self._later_uses(node, target, scope)
            if "tensor" in uses:
                how = "detach"  # `total.detach()`, `torch.cat([..., total])`: a float would break them
                unsafe = "unknown" in uses  # also returned or passed on: a caller might differentiate it
            else:
                unsafe = not scalar or "unknown" in uses
        if any(isinstance(c, cst.Name) and any(_number_literal(v) for v in self.ctx.names.values_before(c))
               for c in carriers):
            return None  # `err = 0.0` before the loop: a Python number on the first pass has no `.item()`
        fix = self.make_fix(f"Accumulate `.{how}()` of the loss", unsafe=unsafe)
        for c in carriers:
            fix.replace(c, cst.Call(func=cst.Attribute(value=c, attr=cst.Name(how))))
        return fix

    def _later_uses(self, node: cst.CSTNode, target: cst.BaseExpression, scope: cst.CSTNode) -> Set[str]:
        """How the total is used besides its accumulation: ``"number"`` (printed, logged, compared,
        formatted or combined with numbers: a float works the same), ``"tensor"`` (a tensor method or a
        torch function is applied to it: a float would fail), ``"unknown"`` (returned, stored, passed on:
        a caller may need either)."""
        if not isinstance(target, cst.Name):
            return {"unknown"}
        ctx = self.ctx
        found: Set[str] = set()
        for use in ctx.names_in(scope, target.value):
            if use is target or ctx.is_inside(use, node) or ctx.is_inside(node, use):
                continue
            parent = ctx.parent(use)
            if isinstance(parent, (cst.AssignTarget,)) or (
                isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is use
            ):
                continue  # (re)initialisation or another accumulation
            if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in ("append", "extend", "clear"):
                continue
            cur: cst.CSTNode = use
            while isinstance(ctx.parent(cur), (cst.BinaryOperation, cst.UnaryOperation)):
                cur = ctx.parent(cur)  # type: ignore[assignment]
            parent = ctx.parent(cur)
            if isinstance(parent, cst.Attribute) and parent.value is cur:
                if parent.attr.value in _FLOAT_ATTRIBUTES:
                    continue
                found.add("tensor")  # `total.detach()`, `(total / n).item()`, `total.device`
                continue
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression)):
                found.add("number")
                continue
            holder = parent
            if isinstance(holder, cst.Element) and isinstance(ctx.parent(holder), (cst.List, cst.Tuple)):
                holder = ctx.parent(ctx.parent(holder))  # `torch.cat([a, total])`: the list is the argument
            if isinstance(holder, cst.Arg):
                call = ctx.parent(holder)
                if isinstance(call, cst.Call):
                    if any(q.startswith("torch.") for q in ctx.names.qualified_names_at(call.func)):
                        found.add("tensor")
                        continue
                    name = method_name(call) or (call.func.value if isinstance(call.func, cst.Name) else "")
                    if holder is parent and name and _HARMLESS_CALLEE.search(name):
                        continue
            found.add("unknown")
        return found


#: what a Python float has too: reading these works on a float and on a tensor alike
_FLOAT_ATTRIBUTES = frozenset({"real", "imag", "conjugate"})


#: loop -> target code -> ``(statement, value)``, per file
_LOOP_ASSIGNMENTS: Fact[dict] = Fact("tl104.loop_assignments", lambda ctx: {})


def _loop_assignments(ctx, loop: cst.CSTNode) -> dict:
    """Target code -> ``(statement, value)`` for every binding in the loop; computed once per loop (a
    loop with n accumulations would otherwise rebuild it n times)."""
    per_loop = _LOOP_ASSIGNMENTS.of(ctx)
    assigned = per_loop.get(loop)
    if assigned is None:
        assigned = per_loop[loop] = {}
        for a in ctx.contents(loop).assigns:
            for t in assignment_targets(a):
                for sub, value in _unpack(t, getattr(a, "value", None), a):
                    assigned.setdefault(ctx.code(sub), []).append((a, value))
        if isinstance(loop, cst.For):
            for sub, _ in _unpack(loop.target, None, None):
                assigned.setdefault(ctx.code(sub), []).append((loop, None))
    return assigned


class _LoopFacts:
    """What one training loop tells about its values: which are losses, which are reset each iteration."""

    def __init__(self, ctx, loop: cst.CSTNode, operands: List[cst.BaseExpression]) -> None:
        self.ctx = ctx
        #: None: a name accumulated in the loop (`total += loss`) carries what it accumulates; a list:
        #: such accumulations are left out, and collected here (see :meth:`_loss_name`)
        self.roots: Optional[List[cst.CSTNode]] = None
        self.loop = loop
        self._conditional_ids: Optional[Set[int]] = None
        self.operands = operands
        self.exact_operands = {ctx.code(op) for op in operands}
        self.backward_names: Set[str] = set()
        self.whole_backward_names: Set[str] = set()
        for op in operands:
            self.backward_names.update(base_names(op))
            self.whole_backward_names.update(whole_names(op))
        self.assigned = _loop_assignments(ctx, loop)

    def reassigned(self, code: str, node: cst.CSTNode) -> bool:
        """The target is bound again inside the loop (not only accumulated): a per-iteration value."""
        for stmt, _value in self.assigned.get(code, ()):
            if stmt is node or isinstance(stmt, cst.AugAssign):
                continue
            if self._conditional(stmt):
                continue  # `if i % 100 == 99: running = 0`: the graph still grows for 100 iterations
            return True
        return False

    def _conditional(self, stmt: cst.CSTNode) -> bool:
        """Whether ``stmt`` runs only on some iterations of the loop (under an `if`, a `try`, or an
        inner loop)."""
        if self._conditional_ids is None:  # read from the tree: the walk may not have reached them yet
            ids: Set[int] = set()
            for n in iter_nodes(self.loop.body):
                if id(n) not in ids and isinstance(n, (cst.If, cst.Try, cst.For, cst.While)):
                    ids.update(id(m) for m in iter_nodes(n))
            self._conditional_ids = ids
        return id(stmt) in self._conditional_ids

    def is_scalar(self, carrier: cst.BaseExpression) -> bool:
        if self.ctx.code(carrier) in self.exact_operands:
            return True
        return isinstance(carrier, cst.Call) and method_name(carrier) in _FULL_REDUCTIONS and not carrier.args

    def carriers(self, value: cst.BaseExpression, depth: int = 3) -> List[cst.BaseExpression]:
        """The parts of ``value`` that are graph-carrying losses."""
        ctx = self.ctx
        if depth < 0 or is_detached(ctx, value):
            return []
        if isinstance(value, cst.BinaryOperation):
            if not isinstance(value.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
                return []
            return self.carriers(value.left, depth) + self.carriers(value.right, depth)
        if isinstance(value, cst.UnaryOperation):
            return self.carriers(value.expression, depth)
        if self.is_loss(value, depth):
            return [value]
        return []

    def is_loss(self, value: cst.BaseExpression, depth: int) -> bool:
        ctx = self.ctx
        if isinstance(value, cst.Name):
            held = ctx.names.value_of(value)  # `loss = loss.detach().cpu().numpy()` before the total
            if held is not None and is_detached(ctx, held):
                return False
            one = ctx.names.reaching_value(value)  # what it holds on every path here: `cost = mean_loss(...)`
            if one is not None and self._set_in_each_pass(value, one) and (
                    _number_literal(one) or isinstance(one, cst.Call) and (
                        is_detached(ctx, one) or returns_without_graph(ctx, one))):
                return False
        code = ctx.code(value)
        if code in self.exact_operands and self._produced_here(value) and not self._loop_variable(value):
            return True
        if isinstance(value, cst.Name):
            return self._loss_name(value, depth)
        if isinstance(value, cst.Attribute):
            return value.attr.value == "loss" and self._produced_here(value)
        if isinstance(value, cst.Subscript):
            inner = value.slice[0].slice if len(value.slice) == 1 else None
            key = inner.value if isinstance(inner, cst.Index) else None
            return (
                isinstance(key, cst.SimpleString)
                and "loss" in key.value.lower()
                and self._produced_here(value)
                and not self._from_graph_free_helper(value.value)
            )
        if isinstance(value, cst.Call):
            if is_detached(ctx, value) or returns_without_graph(ctx, value):
                return False
            if is_loss_call(ctx, value):
                return not self._inputs_without_graph(value)
            name = method_name(value)
            if name in _FULL_REDUCTIONS:
                recv = receiver(value)
                return recv is not None and bool(self.carriers(recv, depth - 1))
            if ctx.names.matches(value.func, _STACKERS):
                first = arg(value, 0)
                return first is not None and bool(self.carriers(first.value, depth - 1))
        if isinstance(value, (cst.List, cst.ListComp, cst.GeneratorExp)):
            if isinstance(value, cst.List):
                return any(self.carriers(el.value, depth - 1) for el in value.elements)
            return bool(self.carriers(value.elt, depth - 1))
        return False

    def _set_in_each_pass(self, read: cst.Name, value: cst.BaseExpression) -> bool:
        """The assignment of ``value`` runs before ``read`` in each pass of every loop around the read that
        binds the name: no value of the previous pass (``cost = crit(...)`` after ``curve.append(cost)``)
        reaches the read."""
        ctx = self.ctx
        at = ctx.names.position(value)
        if at > ctx.names.position(read):
            return False
        for loop in ctx.ancestors(read):
            if isinstance(loop, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
            if isinstance(loop, (cst.For, cst.While)) and not ctx.is_inside(value, loop) and any(
                    isinstance(n, cst.Assign) and any(b.value == read.value for t in n.targets
                                                      for b in names_bound_by(t.target))
                    for n in iter_nodes(loop.body)):  # (read from the tree: the walk may not be there yet)
                return False
        return True

    def _inputs_without_graph(self, call: cst.Call) -> bool:
        """A loss of values without a graph: some argument is bound in the loop only under ``no_grad``
        (``with torch.no_grad(): out = model(x)``, then ``criterion(out, y)``) or detached where it is handed
        in (``criterion(out.data, y)``), and every other one is such a value, a literal, or data the loop does
        not produce (the targets)."""
        ctx = self.ctx
        free = False
        for a in call.args:
            if is_detached(ctx, a.value):
                free = True  # `criterion(out.data, y)`, `loss_fn(pred.detach(), y)`: handed in off the graph
                continue
            names = base_names(a.value)
            if not names:
                if isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
                    continue
                return False
            bindings = self.assigned.get(names[0])
            if bindings is None:
                continue  # not produced by the loop: data handed in
            if any(isinstance(stmt, cst.For) for stmt, _ in bindings):
                continue  # the batch the loop iterates
            if all(under_no_grad(ctx, stmt) or (v is not None and is_detached(ctx, v)) for stmt, v in bindings):
                free = True
                continue
            return False
        return free

    def _from_graph_free_helper(self, base: cst.BaseExpression) -> bool:
        """``res`` in ``res["loss"]`` is bound in the loop only to results of a project function that
        computes them under ``no_grad`` (``res = evaluate(model, loader)``)."""
        if not isinstance(base, cst.Name):
            return False
        values = [v for _stmt, v in self.assigned.get(base.value, ())]
        return bool(values) and all(isinstance(v, cst.Call) and returns_without_graph(self.ctx, v) for v in values)

    def _loop_variable(self, value: cst.BaseExpression) -> bool:
        names = base_names(value)
        return bool(names) and any(isinstance(stmt, cst.For) for stmt, _ in self.assigned.get(names[0], ()))

    def _produced_here(self, value: cst.BaseExpression) -> bool:
        names = base_names(value)
        return bool(names) and names[0] in self.assigned

    def _loss_name(self, name: cst.Name, depth: int) -> bool:
        bindings = self.assigned.get(name.value)
        if not bindings:
            return False  # not produced by this loop's iterations
        if self.roots is not None:
            # leave out the accumulations into the name: when reported, their fix takes the graph off
            kept = []
            for stmt, value in bindings:
                parts = _accumulated(self.ctx, stmt)
                if parts is not None and isinstance(parts[0], cst.Name) and parts[0].value == name.value:
                    if stmt not in self.roots:
                        self.roots.append(stmt)
                else:
                    kept.append((stmt, value))
            if not kept:
                return False
            bindings = kept
        values = [v for _stmt, v in bindings]
        if any(v is not None and is_detached(self.ctx, v) for v in values):
            return False
        if all(not isinstance(stmt, cst.For) and (under_no_grad(self.ctx, stmt) or _number_literal(v))
               for stmt, v in bindings):
            return False  # computed under no_grad (from a start of `0`): no graph to keep
        if any(isinstance(stmt, cst.For) for stmt, _ in bindings):
            return False
        if name.value in self.backward_names and _LOSS_NAME.search(name.value):
            return True
        if any(self._part_of_backward(name, stmt) for stmt, _v in bindings):
            return True
        return any(v is not None and self.carriers(v, depth - 1) for v in values)

    def _part_of_backward(self, name: cst.Name, stmt: cst.CSTNode) -> bool:
        """``loss, mf, reg = model.bpr_loss(u, i, j)`` then ``loss.backward()``: every return of the project
        function hands back, at ``name``'s place, a name its element at the backward pass's place is computed
        from (``return mf + reg, mf, reg``): a part of the loss's graph."""
        ctx = self.ctx
        if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
            return False
        target = stmt.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement)
                                                                 for e in target.elements):
            return False
        names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
        mine = names.index(name.value) if name.value in names else None
        backed = [j for j, n in enumerate(names) if n is not None and n in self.whole_backward_names and n != name.value]
        core = strip_moves(stmt.value)
        if mine is None or not backed or not isinstance(core, cst.Call):
            return False
        found = called_function(ctx, core)
        if found is None and isinstance(core.func, cst.Attribute):
            owner = instance_class(ctx, core.func.value)  # `model.bpr_loss(...)` of `model = MF()`
            found = find_method(owner[0], owner[1], core.func.attr.value) if owner is not None else None
        if found is None:
            return False
        returns = function_returns(found[1])
        if not returns:
            return False
        for r in returns:
            value = r.value
            if not isinstance(value, cst.Tuple) or len(value.elements) != len(names):
                return False
            part, whole = value.elements[mine].value, value.elements[backed[0]].value  # type: ignore[index]
            if not isinstance(part, cst.Name) or is_detached(found[0], part) or not any(
                    isinstance(n, cst.Name) and n.value == part.value for n in iter_nodes(whole)):
                return False
        return True


def _number_literal(value: Optional[cst.BaseExpression]) -> bool:
    """``0``, ``0.0``, ``-1``: a start that carries no graph."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Float))


class _Finding(NamedTuple):
    """An accumulation of a loss, before the accumulations it is built from are judged."""

    node: cst.CSTNode
    target: cst.BaseExpression
    scope: cst.CSTNode
    carriers: List[cst.BaseExpression]  # the graph-carrying parts of the accumulated value
    scalar: bool
    without_roots: List[cst.BaseExpression]  # the same, leaving out what comes from the accumulations in `roots`
    without_roots_scalar: bool
    roots: List[cst.CSTNode]
    element_backpropagated: bool = False  # `losses[-1].backward()`: the elements need their graph
    loop: Optional[cst.CSTNode] = None  # the training loop holding the accumulation


def _accumulated(ctx, node: cst.CSTNode) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``(total, value)`` for an accumulation: ``total += value``, ``total = total + value`` (either
    side), ``total.append(value)`` as a statement; None for anything else."""
    if type(node) is cst.AugAssign:
        return (node.target, node.value) if isinstance(node.operator, cst.AddAssign) else None
    if type(node) is cst.Assign:
        if len(node.targets) != 1 or not isinstance(node.value, cst.BinaryOperation):
            return None
        if not isinstance(node.value.operator, cst.Add):
            return None
        target = node.targets[0].target
        code = ctx.code(target)
        left, right = node.value.left, node.value.right
        if ctx.code(left) == code:
            return target, right
        if ctx.code(right) == code:
            return target, left
        return None
    if isinstance(node, cst.Call):
        if method_name(node) != "append" or len(node.args) != 1 or node.args[0].keyword is not None:
            return None
        target = receiver(node)
        if target is not None and isinstance(ctx.parent(node), cst.Expr):
            return target, node.args[0].value
    return None


_Bound = Tuple[cst.BaseExpression, Optional[cst.BaseExpression]]


def _unpack(target: cst.BaseExpression, value: Optional[cst.BaseExpression], stmt) -> List[_Bound]:
    if isinstance(target, (cst.Tuple, cst.List)):
        out: List[_Bound] = []
        for el in target.elements:
            out.extend(_unpack(el.value, None, stmt))
        return out
    if isinstance(target, cst.StarredElement):
        return _unpack(target.value, None, stmt)
    return [(target, value)]
