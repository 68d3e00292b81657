from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from torchlint.analysis.context import arg, assignment_targets, keyword_arg, method_name
from torchlint.analysis.effects import HOLDERS
from torchlint.analysis.definitions import position, strip_moves
from torchlint.analysis.training import common_loop
from torchlint.rule import Invalid, LintRule, Valid

LOAD_FUNCS = frozenset({"torch.load", "torch.serialization.load"})
SAVE_FUNCS = frozenset({"torch.save", "torch.serialization.save"})
CUDA_AVAILABLE = frozenset({"torch.cuda.is_available"})
#: waits for the GPU: a run without one raises there
CUDA_SYNC = frozenset({"torch.cuda.synchronize"})


class LoadWithoutMapLocation(LintRule):
    """
    ## What it does
    Finds `torch.load(path)` without `map_location` where the same file shows all three: the file at
    `path` is written by `torch.save(..., path)` in another function of that code (a training run
    that a later run resumes or evaluates), the code puts tensors on CUDA (`.cuda()`, `.to("cuda")`,
    `device="cuda"`), and it also runs without a GPU (it checks `torch.cuda.is_available()`). Loads
    whose origin is not shown, or that reload in the same function what it just saved (a save that runs
    before the load: a load written before the save reads an earlier run's file), are not
    reported. A save in a branch the code itself switches off (`flag = 0` then `if flag:`) writes nothing
    in a run, unless the load is in that branch too. Nor is a load whose origin is not shown, except when the checkpoint holds whole module
    objects (the loaded value, or an entry of it, gets `.eval()`, `.parameters()`, `.modules()`...: a
    model saved with `torch.save(model, path)`) and the code picks its device at run time: it checks
    `torch.cuda.is_available()`, or moves to CUDA only under an `if` (`if args.cuda: model = model.cuda()`).
    A state dict (`model.load_state_dict(torch.load(path))`) of unknown origin is not reported.
    A load of a file the code saves that runs only where `torch.cuda.is_available()` is false (the `else:` of
    a check of it, or `if not torch.cuda.is_available():`) is reported whatever else the file shows: the
    check says the code also runs on a GPU, whose checkpoints hold CUDA tensors.

    ## Why is this bad?
    `torch.save` records the device of every tensor; `torch.load` without `map_location` restores
    them there. A checkpoint written on a GPU machine then fails to load on a CPU-only one
    ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False"),
    which is exactly the machine the `is_available()` fallback was written for; on a machine with
    fewer GPUs it lands on the wrong one. The PyTorch Cookbook (Zhang Hao, 2019) loads checkpoints
    with `map_location` for this reason ("model.load_state_dict(torch.load(..., map_location=...))").

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def train(model):
        ...
        torch.save(model.state_dict(), "best.pt")

    def evaluate(model):
        model.load_state_dict(torch.load("best.pt"))
    ```

    ## Use instead
    ```python
    model.load_state_dict(torch.load("best.pt", map_location=device))
    ```

    ## Fix safety
    No fix: the right target is the code's device variable (or `"cpu"` followed by `.to(device)`),
    which the rule does not choose for the author.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.load: map_location](https://pytorch.org/docs/stable/generated/torch.load.html)
    - [Saving and loading models across devices](https://pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL502"
    NAME = "load-without-map-location"
    MESSAGE = (
        "`torch.load` without `map_location` of a file this code saves from CUDA tensors, in code that also "
        "runs without a GPU: loading fails on a CPU-only machine; pass `map_location=`"
    )
    WITHOUT_GPU = (
        "`torch.load` without `map_location` where `torch.cuda.is_available()` is false, of a file this code "
        "saves (from a GPU run, its tensors are CUDA tensors): loading fails on this CPU-only machine; pass "
        "`map_location=`"
    )
    TRIGGERS = ("is_available", ".cuda(")

    VALID = [
        # a state dict loaded into a model the code builds, then wrapped: the checkpoint holds tensors only
        Valid(
            """
import torch
import torch.nn as nn

use_gpu = torch.cuda.is_available()
restored = torch.load("run/last.ckpt")
encoder = nn.Linear(4, 4)
encoder.load_state_dict(restored["encoder"])
if use_gpu:
    encoder = encoder.cuda()
encoder = nn.DataParallel(encoder)
"""
        ),
        Valid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

def run(model):
    model.to(device)
    torch.save(model.state_dict(), "best.pt")
    model.load_state_dict(torch.load("best.pt", map_location=device))
"""
        ),
        Valid(
            """
import torch

def run(model, path):
    model.cuda()
    torch.save(model.state_dict(), "best.pt")
    model.load_state_dict(torch.load("best.pt"))
"""
        ),
        Valid(
            """
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

def restore(model, path):
    model.load_state_dict(torch.load(path))
"""
        ),
        Valid(
            """
import torch

use_gpu = torch.cuda.is_available()

def run(model):
    torch.save(model.state_dict(), "cpu.pt")
    return torch.load("cpu.pt")
"""
        ),
        Valid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

def run(model):
    model.to(device)
    torch.save(model.state_dict(), "a.pt")
    return torch.load("b.pt")
"""
        ),
        Valid(
            """
import torch

def main(model):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    torch.save(model.state_dict(), "model.pth")
    model.load_state_dict(torch.load("model.pth", weights_only=True))
"""
        ),
        # a state dict of unknown origin: nothing says the file holds CUDA tensors
        Valid(
            """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = nn.Linear(3, 3).to(device)
net.load_state_dict(torch.load("weights.pt"))
net.eval()
"""
        ),
        # whole modules, but the code runs on one device it does not choose
        Valid(
            """
import torch

net = torch.load("net.pt").cuda()
net.eval()
"""
        ),
        # near miss: the same trainer on the CPU only (`torch.cuda.is_available()` decides nothing here)
        Valid(
            """
import os

import torch
import torch.nn as nn


class Runner:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.device = torch.device("cpu")
        self.net = nn.Linear(4, 2)
        self.net.to(self.device)

    def train(self, step):
        path = os.path.join(self.out_dir, "{}-net.ckpt".format(step))
        torch.save(self.net.state_dict(), path)

    def restore(self, step):
        path = os.path.join(self.out_dir, "{}-net.ckpt".format(step))
        self.net.load_state_dict(torch.load(path))
"""
        ),
        # a GPU-only script: the branch that builds the model moves it, but the training loop moves every
        # batch to CUDA and waits for the GPU unconditionally: no run without a GPU gets as far as a CPU load
        Valid(
            """
import torch
from models import Net


def train(model, loader, opt):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()


def main(args, loader):
    if args.resume:
        checkpoint = torch.load(args.resume)
        model = checkpoint["model"]
    else:
        model = Net()
        model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, loader, opt)
    torch.save({"model": model}, "last.pth")
"""
        ),
        # a snapshot every object writes when it is built and reads back in a method: the same run, the same
        # machine (a learning-rate finder putting the model back as it found it)
        """
import torch
import torch.nn as nn


class RateFinder:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        torch.save(model.state_dict(), "start.pt")

    def sweep(self, batches, device):
        for x, y in batches:
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self.model(x.to(device)), y.to(device)).backward()
            self.optimizer.step()
        self.model.load_state_dict(torch.load("start.pt"))


device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Linear(3, 1).to(device)
RateFinder(net, torch.optim.SGD(net.parameters(), lr=0.1)).sweep([(torch.randn(4, 3), torch.randn(4, 1))], device)
""",
        # a cache this code writes where it would otherwise load it
        """
import os
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
if os.path.exists("corpus.pt"):
    corpus = torch.load("corpus.pt")
else:
    corpus = build_corpus()
    torch.save(corpus, "corpus.pt")
model = make_model(corpus).to(device)
""",
        # a switched-off block that saves and loads again: when it is switched on, both run in one run
        Valid(
            """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
path = "./net_on_gpu.pkl"

flag = 0
if flag:
    net = nn.Linear(3, 3).to(device)
    torch.save(net.state_dict(), path)
    net.load_state_dict(torch.load(path))
"""
        ),
        Valid(
            """
import torch


class CheckpointIO:
    def __init__(self, fname, modules):
        self.fname = fname
        self.modules = modules

    def save(self):
        torch.save({k: m.state_dict() for k, m in self.modules.items()}, self.fname)

    def load(self):
        if torch.cuda.is_available():
            state = torch.load(self.fname)
        else:
            state = torch.load(self.fname, map_location="cpu")
        for k, m in self.modules.items():
            m.load_state_dict(state[k])
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

def train(model):
    model.to(device)
    torch.save(model.state_dict(), "best.pt")

def evaluate(model):
    model.load_state_dict(torch.load("best.pt"))
""",
            line=11,
            col=27,
        ),
        Invalid(
            """
import torch

CKPT = "ckpt/model.pth"

def train(net):
    if torch.cuda.is_available():
        net = net.cuda()
    torch.save({"net": net.state_dict()}, CKPT)

def resume(net):
    net.load_state_dict(torch.load(CKPT)["net"])
""",
        ),
        Invalid(
            """
import torch
from torch import load, save

gpu = torch.cuda.is_available()

def train(model, path):
    model = model.to("cuda") if gpu else model
    save(model, path)

def restore(path):
    return load(path), load(path, map_location="cpu")
""",
        ),
        # a whole model saved by the training script, loaded where the device is picked at run time
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
bundle = torch.load("bundle.pth")
tagger = bundle["tagger"].to(device)
tagger.eval()
""",
            line=5,
        ),
        Invalid(
            """
import sys

import torch

net = torch.load(sys.argv[1])
if "--gpu" in sys.argv:
    net = net.cuda()
net.eval()
""",
            line=6,
        ),
        # the same checkpoint loaded twice; after the second load (a resume branch) the loaded entry is
        # wrapped in `nn.DataParallel`, which only takes a module: both loads are reported
        Invalid(
            """
import sys

import torch
import torch.nn as nn

gpu = torch.cuda.is_available()
path = sys.argv[1]

if "--eval" in sys.argv:
    saved = torch.load(path)
    model = saved["model"]
    model.eval()

if "--resume" in sys.argv:
    saved = torch.load(path)
    model = saved["model"]
    first_epoch = saved["epoch"]
else:
    model, first_epoch = nn.Linear(8, 2), 0

if gpu:
    model = nn.DataParallel(model.cuda())
""",
            count=2,
            message="holds whole modules",
        ),
        Invalid(
            """
import torch
from torch.nn.parallel import DistributedDataParallel

use_gpu = torch.cuda.is_available()
restored = torch.load("run/last.ckpt")
encoder = restored["encoder"]
if use_gpu:
    encoder = encoder.cuda()
encoder = DistributedDataParallel(encoder)
""",
            line=6,
            message="(`DistributedDataParallel(encoder)`)",
        ),
        # the trainer's device is an attribute (`self.device`), picked when it is built
        Invalid(
            """
import os

import torch
import torch.nn as nn


class Runner:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.net = nn.Linear(4, 2)
        self.net.to(self.device)

    def train(self, step):
        path = os.path.join(self.out_dir, "{}-net.ckpt".format(step))
        torch.save(self.net.state_dict(), path)

    def restore(self, step):
        path = os.path.join(self.out_dir, "{}-net.ckpt".format(step))
        self.net.load_state_dict(torch.load(path))
""",
            line=21,
        ),
        # fine-tuning loads the file an earlier run wrote (maybe on a GPU) before it saves over it
        Invalid(
            """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.load("model.pt")
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
    optimizer.step()
torch.save(model, "model.pt")
""",
            line=5,
        ),
        # a demo switched by flags: the block that saves is switched off (`flag = 0`), so the load reads a
        # file an earlier run wrote, maybe on a GPU
        Invalid(
            """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
path = "./net_on_gpu.pkl"

flag = 0
if flag:
    net = nn.Linear(3, 3).to(device)
    torch.save(net.state_dict(), path)

flag = 1
if flag:
    net = nn.Linear(3, 3)
    net.load_state_dict(torch.load(path))
""",
            line=16,
        ),
        Invalid(
            """
import torch


class CheckpointIO:
    def __init__(self, fname, modules):
        self.fname = fname
        self.modules = modules

    def save(self):
        torch.save({k: m.state_dict() for k, m in self.modules.items()}, self.fname)

    def load(self):
        if torch.cuda.is_available():
            state = torch.load(self.fname)
        else:
            state = torch.load(self.fname)
        for k, m in self.modules.items():
            m.load_state_dict(state[k])
""",
            line=17,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._loads: List[Tuple[str, cst.Call]] = []
        self._saved: List[Tuple[str, cst.Call]] = []
        self._cuda = False
        self._fallback = False
        #: a move to CUDA under an `if` (`if opt.cuda: model = model.cuda()`): the device is picked at run time
        self._conditional_cuda = False
        #: a move to CUDA (or a CUDA synchronisation) that its function runs under no `if`: a run without a
        #: GPU fails there whatever it loads
        self._unconditional_cuda = False

    def visit_Call(self, node: cst.Call) -> None:
        names = self.ctx.names
        if names.matches(node.func, LOAD_FUNCS):
            first = arg(node, 0, "f")
            if first is not None and keyword_arg(node, "map_location") is None and arg(node, 1, "map_location") is None:
                if not any(a.star for a in node.args):
                    self._loads.append((self.ctx.code(first.value), node))
        elif names.matches(node.func, SAVE_FUNCS):
            target = arg(node, 1, "f")
            if target is not None:
                self._saved.append((self.ctx.code(target.value), node))
        elif names.matches(node.func, CUDA_AVAILABLE):
            self._fallback = True
        elif method_name(node) == "cuda" or self._to_cuda(node):
            self._cuda = True
            if any(isinstance(a, cst.If) for a in self.ctx.ancestors(node)):
                self._conditional_cuda = True
            elif not self._guarded(node):
                self._unconditional_cuda = True
        elif names.matches(node.func, CUDA_SYNC) and not self._guarded(node):
            self._unconditional_cuda = True

    def _saved_at_construction(self, save: cst.CSTNode, where: Optional[cst.CSTNode]) -> bool:
        """``save`` runs on every construction of the class whose method ``where`` is (unconditionally, in its
        ``__init__``): every object writes the file before any of its methods can read it back."""
        init = self.ctx.enclosing(save, cst.FunctionDef)
        if not isinstance(init, cst.FunctionDef) or init.name.value != "__init__" or where is None:
            return False
        cls = self.ctx.enclosing(init, cst.ClassDef)
        if cls is None or self.ctx.enclosing(where, cst.ClassDef) is not cls or self.ctx.parent(init) is not cls.body:
            return False
        for owner in self.ctx.ancestors(save):
            if owner is init:
                return True
            if isinstance(owner, (cst.If, cst.IfExp, cst.Try, cst.For, cst.While, cst.With, cst.FunctionDef,
                                  cst.Lambda)):
                return False
        return False

    def _guarded(self, node: cst.Call) -> bool:
        """Whether ``node`` runs under a condition in its function (an ``if``, a conditional expression, a
        ``try``)."""
        for a in self.ctx.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(a, (cst.If, cst.IfExp, cst.Try)):
                return True
        return False

    def _before(self, save: cst.CSTNode, load: cst.CSTNode) -> bool:
        """The save may run before the load in the same run: earlier in the code, or in a loop around both
        (a load written before the save reads what an earlier run left, maybe from a GPU)."""
        if self._never_runs(save, load):
            return False  # `flag = 0` then `if flag: ... torch.save(...)`: a run of this code writes nothing there
        if position(self.ctx, save) < position(self.ctx, load) or common_loop(self.ctx, save, load) is not None:
            return True
        # `if os.path.exists(fn): data = torch.load(fn)` `else: data = build(); torch.save(data, fn)`: a cache
        # this code writes where it would otherwise load
        for a in self.ctx.ancestors(load):
            if isinstance(a, cst.If) and self.ctx.is_inside(save, a) and \
                    self.ctx.is_inside(load, a.body) != self.ctx.is_inside(save, a.body):
                return True
        return False

    def _never_runs(self, node: cst.CSTNode, load: cst.CSTNode) -> bool:
        """``node`` is in a branch of an ``if`` whose condition the code decides against it, and ``load`` is
        not (a load in the same dead branch would run after it when the branch is switched on)."""
        for a in self.ctx.ancestors(node):
            if isinstance(a, cst.If) and not self.ctx.is_inside(load, a):
                truth = self.ctx.names.constant_truth(a.test)
                if truth is not None and truth != self.ctx.is_inside(node, a.body):
                    return True
        return False

    def _runs_without_cuda(self, node: cst.CSTNode) -> bool:
        """``node`` runs only when ``torch.cuda.is_available()`` is false: in the ``else`` of an ``if`` on it, or
        in the body of ``if not torch.cuda.is_available():``."""
        child: cst.CSTNode = node
        for a in self.ctx.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(a, cst.If) and child is not a.test:
                test, negated = a.test, False
                while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, negated = test.expression, not negated
                if isinstance(test, cst.Call) and self.ctx.names.matches(test.func, CUDA_AVAILABLE):
                    return (child is a.body) == negated
            child = a
        return False

    def _to_cuda(self, node: cst.Call) -> bool:
        if method_name(node) != "to" and not self.ctx.names.matches(node.func, {"torch.device"}):
            return False
        return any(
            isinstance(a.value, cst.SimpleString) and str(a.value.evaluated_value).startswith("cuda") for a in node.args
        ) or any(isinstance(a.value, (cst.Name, cst.Attribute)) and self._cuda_name(a.value) for a in node.args)

    def _cuda_name(self, name: cst.BaseExpression) -> bool:
        """A device variable, or a trainer's ``self.device``, whose value mentions "cuda"
        (`torch.device("cuda" if ... else "cpu")`)."""
        return any("cuda" in self.ctx.code(v) for v in self.ctx.names.values_before(name))

    def leave_Module(self, original_node: cst.Module) -> None:
        gpu_runs = self._cuda and (self._fallback or (self._conditional_cuda and not self._unconditional_cuda))
        for path, call in self._loads:
            where = self.ctx.enclosing(call, cst.FunctionDef)
            savers = [save for p, save in self._saved if p == path]
            # a load that runs only without a GPU (`else:` of `if torch.cuda.is_available():`) of a file this
            # code writes, in a run the check says may have one: the code itself expects GPU checkpoints
            without_gpu = self._runs_without_cuda(call)
            if not gpu_runs and not without_gpu:
                continue  # no run without a GPU: none checks for one, and one that moves to CUDA unconditionally
            # saved and loaded again by the same function, or saved by the constructor of the object whose
            # method loads it: the same run on the same machine
            if (self._fallback or without_gpu) and savers and not any(
                self.ctx.enclosing(save, cst.FunctionDef) is where and self._before(save, call)
                or self._saved_at_construction(save, where)
                for save in savers
            ):
                self.report(call, self.quoting(call, self.WITHOUT_GPU if without_gpu and not gpu_runs else self.MESSAGE))
                continue
            if not gpu_runs:
                continue
            if savers:
                continue  # saved by this code: judged above
            module = _loaded_module(self.ctx, call)
            if module is not None:
                self.report(
                    call,
                    self.quoting(
                        call,
                        f"`torch.load` without `map_location` of a checkpoint that holds whole modules "
                        f"(`{self.spelling(module, 60)}`): their tensors go back to the device they were saved "
                        "from, and this code picks its device at run time (a CPU run fails on a GPU checkpoint); "
                        "pass `map_location`",
                    ),
                )


#: methods only an `nn.Module` has: the value they are called on is a module object, not a tensor
_MODULE_ONLY = frozenset({"eval", "parameters", "named_parameters", "modules", "named_modules", "children"})
#: wrappers whose first argument must be an `nn.Module` (`torch.compile` also takes functions)
_MODULE_WRAPPERS = HOLDERS - {"torch.compile"}


def _loaded_module(ctx, call: cst.Call) -> Optional[cst.Call]:
    """For ``model = torch.load(path)`` (or ``ckpt = torch.load(path)`` and ``decoder = ckpt["decoder"]``)
    where the code then calls a method only a module has on that name (``model.eval()``) or wraps it in a
    wrapper that only takes a module (``nn.DataParallel(model)``): that call, the evidence that the
    checkpoint holds module objects; else None."""
    parent = ctx.parent(call)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return None
    loaded = parent.targets[0].target.value
    scope = ctx.enclosing(call, cst.FunctionDef) or ctx.module
    names = {loaded}
    for a in ctx.contents(scope).assigns:
        value = getattr(a, "value", None)
        value = strip_moves(value) if isinstance(value, cst.BaseExpression) else None
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value == loaded:
            names.update(n.value for t in assignment_targets(a) for n in [t] if isinstance(n, cst.Name))
    for c in ctx.calls_in(scope):
        if not (ctx.enclosing(c, cst.FunctionDef) is ctx.enclosing(call, cst.FunctionDef)
                and position(ctx, c) > position(ctx, call)):
            continue
        func = c.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_ONLY:
            used = func.value
        elif ctx.names.matches(func, _MODULE_WRAPPERS):
            first = arg(c, 0, "module")
            used = strip_moves(first.value) if first is not None else None  # `nn.DataParallel(model.cuda())`
        else:
            continue
        if isinstance(used, cst.Name) and used.value in names:
            return c
    return None
