from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.roles import holds_module, is_module_value
from torchlint.analysis.names import dotted_name
from torchlint.analysis.definitions import definition_of, strip_moves
from torchlint.analysis.roles import not_a_module
from torchlint.rule import Invalid, LintRule, Valid


class ForwardCalledDirectly(LintRule):
    """
    ## What it does
    Finds `model.forward(x)` called on a module from outside that module's own class: on a model
    built from `torch.nn`, torchvision, timm, transformers or an `nn.Module` subclass of the file, or
    on a value named like a model (`model`, `net`, `encoder`, `self.backbone`). `super().forward(x)`,
    `Base.forward(self, x)` and `self.forward(x)` inside the class are how a class extends its own
    forward and are not reported. Nor is `.forward()` inside a function the file registers as a forward
    hook (`register_forward_pre_hook`, `register_forward_hook`): the hook runs inside the module's call,
    and calling the module there would run the hook again. A module built in the same function
    (`module = nn.Bilinear(4, 4, 1)` right before `module.forward(x, y)`) is not reported either: nothing
    can have registered a hook on it yet, unless it is an instance of a class of the project whose own code
    registers hooks (`self.register_forward_pre_hook(...)` in its `__init__`): that one is reported.

    ## Why is this bad?
    `model(x)` runs `nn.Module.__call__`, which runs the forward pre-hooks and hooks registered on the
    module and its children (feature extractors, pruning and quantisation observers, `torch.compile`
    and FSDP/DDP wrappers, gradient checkpointing hooks) and then `forward`. Calling `forward`
    directly skips all of them, so the result silently differs from the model's real output; with
    `DistributedDataParallel` it also skips the gradient synchronisation set-up. The PyTorch Cookbook
    (Zhang Hao, 2019) and Effective PyTorch both call the module (`model(images)`), never
    `forward`; ML code-smell catalogs list the direct call as a smell for the same reason.

    ## Example
    ```python
    with torch.no_grad():
        scores = model.forward(x)
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        scores = model(x)
    ```

    ## Fix safety
    The fix calls the module instead (`model.forward(x)` → `model(x)`). It is safe when the value is
    known to be an `nn.Module` (built in view of the rule): `__call__` runs the hooks and then the same
    `forward` with the same arguments, and running the registered hooks is the intended behaviour.
    It is unsafe when only the name says it is a model: an object that is not an `nn.Module` may not
    be callable.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.Module.forward](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.forward)
      ("one should call the Module instance afterwards instead of this since the former takes care of
      running the registered hooks")
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL508"
    NAME = "forward-called-directly"
    MESSAGE = "`.forward()` called directly skips the module's hooks; call the module: `{call}`"
    FIX_TITLE = "Call the module instead of `.forward()`"
    TRIGGERS = ("forward",)

    VALID = [
        # a fresh instance of a module class of the file that registers no hook: the call skips nothing
        Valid(
            """
import torch
import torch.nn as nn


class Squash(nn.Module):
    def forward(self, x, scale=1.0):
        return torch.tanh(x) * scale


def show(values):
    squash = Squash()
    out = squash.forward(values, scale=0.5)
    return out.detach()
"""
        ),
        Valid(
            """
import torch.nn as nn

class Scaled(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2
"""
        ),
        Valid(
            """
import torch.nn as nn

class Twice(nn.Module):
    def forward(self, x):
        return x * 2

    def twice(self, x):
        return self.forward(self.forward(x))
"""
        ),
        Valid(
            """
import torch.nn as nn

class Residual(nn.Linear):
    def forward(self, x):
        return nn.Linear.forward(self, x) + x
"""
        ),
        Valid(
            """
import torch

def score(model, x):
    with torch.no_grad():
        return model(x)
"""
        ),
        Valid(
            """
class Pipeline:
    def forward(self, batch):
        return batch

def run(pipe, batch):
    return pipe.forward(batch)
"""
        ),
        Valid(
            """
import torch.nn as nn

def mi_loss(x, y):
    module = nn.Bilinear(4, 4, 1)
    return module.forward(x, y)
"""
        ),
        Valid(
            """
import torch.nn as nn

class Gate(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.scores = None
        model.register_forward_pre_hook(self._score_first, with_kwargs=True)

    def _score_first(self, module, args, kwargs):
        # a dry pass whose result the real one uses: calling the module here would run this hook again
        self.scores = self.model.forward(*args, **kwargs)
        return args, kwargs
"""
        ),
        # near miss: a parameter called `model` with a `forward` method, that nothing shows is a module
        Valid(
            """
import torch


def run_steps(model, batches):
    # `model` is any object with a `forward` method: nothing here says it is a module
    return [model.forward(torch.as_tensor(b)) for b in batches]
"""
        ),
        # near miss: a module built by the script's own code and called there, before any hook could be set
        Valid(
            """
import torch
import torch.nn as nn

if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
    print(net.forward(torch.randn(1, 4)))
"""
        ),
        # a notebook's first model is a plain class, called through a helper before the name is given a module
        """
import torch
from torch import nn


class LinearRegression:
    def __init__(self):
        self.w = torch.randn(2, 1, requires_grad=True)

    def forward(self, x):
        return x @ self.w


model = LinearRegression()


def train_step(model, features):
    return model.forward(features).sum()


train_step(model, torch.randn(3, 2))
model = nn.Linear(2, 1)
print(len(list(model.parameters())))
""",
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

def score(x):
    with torch.no_grad():
        return model.forward(x)
""",
            fixed="""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

def score(x):
    with torch.no_grad():
        return model(x)
""",
            line=9,
            col=16,
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def forward(self, x):
        return x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x):
        return self.encoder.forward(x)
""",
            fixed="""
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def forward(self, x):
        return x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x):
        return self.encoder(x)
""",
            message="call the module: `self.encoder(x)`",
        ),
        Invalid(
            """
import torch

def evaluate(model, loader):
    model.eval()
    return [model.forward(x) for x, _ in loader]
""",
            fixed="""
import torch

def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]
""",
            unsafe=True,
        ),
        # an instance of a module class of the file that registers a hook on itself, built in the function
        # that calls its forward
        Invalid(
            """
import torch
import torch.nn as nn


class Squash(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_hook(lambda module, args, out: out.clamp(-0.9, 0.9))

    def forward(self, x, scale=1.0):
        return torch.tanh(x) * scale


def show(values):
    squash = Squash()
    out = squash.forward(values, scale=0.5)
    return out.detach()
""",
            fixed="""
import torch
import torch.nn as nn


class Squash(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_hook(lambda module, args, out: out.clamp(-0.9, 0.9))

    def forward(self, x, scale=1.0):
        return torch.tanh(x) * scale


def show(values):
    squash = Squash()
    out = squash(values, scale=0.5)
    return out.detach()
""",
            line=17,
            message="call the module: `squash(values, scale=0.5)`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class Agent:
    def __init__(self, net: nn.Module):
        self.eval_net = net

    def act(self, state):
        with torch.no_grad():
            return self.eval_net.forward(torch.as_tensor(state)).argmax()
""",
            fixed="""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, net: nn.Module):
        self.eval_net = net

    def act(self, state):
        with torch.no_grad():
            return self.eval_net(torch.as_tensor(state)).argmax()
""",
            message="call the module: `self.eval_net(torch.as_tensor(state))`",
            unsafe=True,
        ),
        # the same, with a hook the script registers on it: the direct call skips it
        Invalid(
            """
import torch
import torch.nn as nn

if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
    net.register_forward_hook(lambda module, args, out: print(out.shape))
    print(net.forward(torch.randn(1, 4)))
""",
            fixed="""
import torch
import torch.nn as nn

if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
    net.register_forward_hook(lambda module, args, out: print(out.shape))
    print(net(torch.randn(1, 4)))
""",
            line=8,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._found: List[Tuple[cst.Call, cst.BaseExpression, str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "forward":
            return
        target = func.value
        evidence = self._module_evidence(target)
        if evidence is not None:
            self._found.append((node, target, evidence))

    def leave_Module(self, original_node: cst.Module) -> None:
        # judged after the walk, when every call of the file is known: `train(model, ...)` whose callers
        # all pass an instance of a plain Python class is not a module, whatever its parameter is called;
        # a hook registered on a module runs inside its `__call__`, where calling it would run the hook again
        hooks = _hook_functions(self.ctx)
        for node, target, evidence in self._found:
            function = self.ctx.enclosing(node, cst.FunctionDef)
            if function is not None and function.name.value in hooks:
                continue
            called = node.with_changes(func=target)
            message = self.quoting(node, self.MESSAGE.format(call=self.spelling(called, 60)))
            if evidence == "built":
                self.report(node, message, fix=self.make_fix(unsafe=False).replace(node, called))
            elif holds_module(self.ctx, target) and not not_a_module(self.ctx, target):
                self.report(node, message, fix=self.make_fix(unsafe=True).replace(node, called))

    def _module_evidence(self, target: cst.BaseExpression) -> Optional[str]:
        """"built" when ``target`` is known to be an ``nn.Module``; "use" when only what the code does with
        it may say so, after the walk."""
        if isinstance(target, cst.Call):
            return None  # super().forward(...), factory().forward(...)
        name = dotted_name(target)
        if name is None or name in ("self", "cls"):
            return None
        if isinstance(target, cst.Name):
            if self.ctx.names.qualified_names(target) or target.value in self.ctx.classes():
                return None  # a class or an import: `Base.forward(self, x)`
            if target.value in self.ctx.functions():
                return None
        values = self.ctx.names.values_before(target)
        if values:
            if is_module_value(self.ctx, values[-1]):
                here = self.ctx.enclosing(self.ctx.current or target, cst.FunctionDef)
                if self.ctx.enclosing(values[-1], cst.FunctionDef) is here and not _registers_hooks(
                    self.ctx, values[-1]
                ) and not _hooked(self.ctx, here or self.ctx.module, target):
                    return None  # built right here (a function, or the module's own code): no hook on it
                return "built"
            last_value = values[-1]
            if isinstance(last_value, cst.Call) and dotted_name(last_value.func) in self.ctx.classes():
                return None  # an instance of a class of the file that is not a module
        if self.ctx.names.imports_torch:
            return "use"  # judged after the walk by what the code does with it (:func:`roles.holds_module`)
        return None


def _hooked(ctx, host: cst.CSTNode, target: cst.BaseExpression) -> bool:
    """Whether the code of ``host`` registers a hook on ``target`` itself (``net.register_forward_hook``)."""
    code = ctx.code(target)
    return any(isinstance(c.func, cst.Attribute) and "hook" in c.func.attr.value and ctx.code(c.func.value) == code
               for c in ctx.calls_in(host))


def _registers_hooks(ctx, value: cst.BaseExpression) -> bool:
    """Whether ``value`` constructs an instance of a class of the project whose own code registers hooks
    (``self.register_forward_hook(...)``): then a fresh instance has hooks the direct call skips."""
    core = strip_moves(value)
    if not isinstance(core, cst.Call):
        return False
    found = definition_of(ctx, core.func)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return False
    cctx, cls = found
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value.startswith("register_")
               and "hook" in c.func.attr.value for c in cctx.calls_in(cls))


_HOOK_REGISTRATIONS = frozenset({"register_forward_pre_hook", "register_forward_hook"})


def _hook_functions(ctx) -> Set[str]:
    """Names of the functions this file registers as forward hooks (``m.register_forward_pre_hook(fn)``,
    ``self._hook``, ``functools.partial(fn, ...)``)."""
    out: Set[str] = set()
    for call in ctx.calls_in(ctx.module):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _HOOK_REGISTRATIONS and call.args):
            continue
        hook = call.args[0].value
        if isinstance(hook, cst.Call) and dotted_name(hook.func) in ("partial", "functools.partial") and hook.args:
            hook = hook.args[0].value
        if isinstance(hook, cst.Name):
            out.add(hook.value)
        elif isinstance(hook, cst.Attribute):
            out.add(hook.attr.value)
    return out
