from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import method_name
from torchlint.analysis.effects import holds_nothing
from torchlint.analysis.roles import is_module_value, module_class
from torchlint.analysis.names import dotted_name
from torchlint.rule import Fix, Invalid, LintRule, Valid


class SubmoduleInPlainContainer(LintRule):
    """
    ## What it does
    Finds an `nn.Module` subclass that keeps submodules in a plain Python `list`, `tuple` or `dict`
    attribute: `self.layers = [nn.Linear(a, b) for ...]`, `self.heads = {"a": nn.Linear(...)}`, or
    `self.blocks = []` filled with `self.blocks.append(Block(...))`. Only containers whose elements are
    built as modules (`torch.nn` layers, torchvision/timm models, `nn.Module` classes of the file) are
    reported; a list of names or numbers is fine. Not reported either: a table of alternatives every read of
    which picks one element that is then assigned to an attribute of the instance
    (`self.backbone = self.backbones[name]`, directly or through the return of a method): the module picked
    is registered by that assignment, and the others are never used. Nor is a container whose modules all
    hold no parameter and no buffer (pooling and activation layers, a class of the project keeping only
    such layers): registering them would train, move or save nothing.

    ## Why is this bad?
    `nn.Module` registers a submodule only when it is assigned directly as an attribute or kept in
    `nn.ModuleList`/`nn.ModuleDict`. Modules inside a plain list are invisible to it: their
    parameters are missing from `model.parameters()` (the optimizer never trains them), from
    `state_dict()` (checkpoints do not save them), and `model.to(device)`, `model.eval()` and
    `model.half()` do not reach them. Training runs without an error while part of the network stays
    at its random initialisation. Effective PyTorch's chapter on encapsulating models in modules and the
    PyTorch Cookbook (Zhang Hao, 2019) build such stacks with `nn.ModuleList` / `nn.Sequential`.

    ## Example
    ```python
    class MLP(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
    ```

    ## Use instead
    ```python
    class MLP(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
    ```

    ## Fix safety
    The fix wraps the container: `nn.ModuleList([...])` (list, tuple or empty list later appended to)
    or `nn.ModuleDict({...})` (dict with string-literal keys). Indexing, iteration, `len` and `append`
    behave as before. It is unsafe: the model gains parameters, so a checkpoint saved before the fix no
    longer loads with `load_state_dict(strict=True)`, and an optimizer built from `model.parameters()`
    now trains the contained modules — which is the point of the fix, but changes results. No fix is
    offered when the file does not import `torch.nn` (or `torch`) by name, or for dicts with other keys.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.ModuleList](https://pytorch.org/docs/stable/generated/torch.nn.ModuleList.html)
    - [torch.nn.ModuleDict](https://pytorch.org/docs/stable/generated/torch.nn.ModuleDict.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL511"
    NAME = "submodule-in-plain-container"
    MESSAGE = (
        "Submodules kept in a plain {kind} are not registered: their parameters are not trained, moved or "
        "saved; use `nn.{wrapper}`"
    )
    FIX_TITLE = "Wrap the container in `nn.ModuleList` / `nn.ModuleDict`"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("Module",)

    VALID = [
        # the plain list only collects the modules; the same attribute is wrapped before use
        Valid(
            """
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = []
        for a, b in zip(sizes, sizes[1:]):
            self.layers.append(nn.Linear(a, b))
        self.layers = nn.ModuleList(self.layers)
"""
        ),
        Valid(
            """
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.names = ["input", "hidden", "output"]
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})
        self.blocks = nn.ModuleList()
        self.blocks.append(nn.ReLU())
"""
        ),
        Valid(
            """
import torch.nn as nn

class Trainer:
    def __init__(self):
        self.models = [nn.Linear(4, 2), nn.Linear(4, 2)]
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.hooks = []
        self.hooks.append(self.fc.register_forward_hook(print))
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Linear(4, 4), nn.ReLU()]
        self.body = nn.Sequential(*layers)
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4) for _ in range(3)]
        for i, layer in enumerate(self.layers):
            self.add_module(f"layer{i}", layer)
"""
        ),
            # a table of alternative backbones: one is picked and registered as an attribute, the others never used
        Valid(
            """
import torch.nn as nn
import torchvision.models as models


class Encoder(nn.Module):
    def __init__(self, name, dim):
        super().__init__()
        self.options = {"small": models.resnet18(num_classes=dim), "large": models.resnet50(num_classes=dim)}
        self.backbone = self._pick(name)

    def _pick(self, name):
        try:
            chosen = self.options[name]
        except KeyError:
            raise ValueError(name)
        return chosen

    def forward(self, x):
        return self.backbone(x)


class Head(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.choices = {"relu": nn.ReLU(), "gelu": nn.GELU()}
        self.act = self.choices[kind]
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.act(self.fc(x))
"""
        ),
        # near miss: the list only gathers the layers that `nn.ModuleList` then registers under another name
        Valid(
            """
import torch.nn as nn


class Pyramid(nn.Module):
    def __init__(self, channels, sizes):
        super().__init__()
        self.paths = []
        for size in sizes:
            self.paths.append(nn.Conv2d(channels, channels // len(sizes), 1))
        self.registered = nn.ModuleList(self.paths)
        self.sizes = sizes

    def forward(self, x):
        return [path(x) for path in self.registered]
"""
        ),
        # plain lists of layers that hold nothing (pooling, activations, a class keeping only a pooling layer):
        # registering them would train, move or save nothing
        Valid(
            """
import torch.nn as nn


class MovingAvg(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.avg = nn.AvgPool1d(kernel_size=k, stride=1)

    def forward(self, x):
        return self.avg(x)


class Decomp(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.moving_avgs = [MovingAvg(k) for k in sizes]
        self.pools = [nn.MaxPool1d(2), nn.ReLU()]

    def forward(self, x):
        return sum(m(x) for m in self.moving_avgs) + self.pools[0](x)
"""
        ),
        Valid(
            """
import torch.nn as nn


class Smooth(nn.Module):
    def __init__(self, width, stride=1):
        super().__init__()
        self.width = width
        self.stride = stride
        self.pool = nn.AvgPool1d(width, stride=stride, padding=width // 2)

    def forward(self, x):
        return self.pool(x)


class MultiScale(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.smoothers = [Smooth(w) for w in widths]
        self.head = nn.Linear(len(widths), 1)

    def forward(self, x):
        return self.head(sum(s(x) for s in self.smoothers))
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = [nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])]
""",
            fixed="""
import torch.nn as nn

class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])
""",
            unsafe=True,
            line=7,
            col=23,
        ),
        Invalid(
            """
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = {"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)}
        self.blocks = []
        for _ in range(3):
            self.blocks.append(Block())
""",
            fixed="""
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)})
        self.blocks = nn.ModuleList()
        for _ in range(3):
            self.blocks.append(Block())
""",
            unsafe=True,
            count=2,
        ),
        Invalid(
            """
import torch

class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = (torch.nn.Conv2d(3, 8, 3), torch.nn.Conv2d(8, 8, 3))
""",
            fixed="""
import torch

class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = torch.nn.ModuleList((torch.nn.Conv2d(3, 8, 3), torch.nn.Conv2d(8, 8, 3)))
""",
            unsafe=True,
        ),
            # the table is read in `forward`, or a pick is only kept in a local: the modules used are unregistered
        Invalid(
            """
import torch.nn as nn


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)}
        self.default = self.experts["a"]

    def forward(self, x, route):
        return self.experts[route](x)


class Picker(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.options = {"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)}
        self.size = self._pick(name).out_features

    def _pick(self, name):
        return self.options[name]
""",
            fixed="""
import torch.nn as nn


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})
        self.default = self.experts["a"]

    def forward(self, x, route):
        return self.experts[route](x)


class Picker(nn.Module):
    def __init__(self, name):
        super().__init__()
        self.options = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 8)})
        self.size = self._pick(name).out_features

    def _pick(self, name):
        return self.options[name]
""",
            unsafe=True,
            count=2,
        ),
        Invalid(
            """
import torch.nn as nn


class Skip(nn.Module):
    def __init__(self, inner=None, gain=1.0):
        super().__init__()
        self.inner = inner
        self.gain = gain

    def forward(self, x):
        return x if self.inner is None else x + self.gain * self.inner(x)


class Stack(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.blocks = [Skip(nn.Linear(width, width)) for _ in range(depth)]
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)
""",
            fixed="""
import torch.nn as nn


class Skip(nn.Module):
    def __init__(self, inner=None, gain=1.0):
        super().__init__()
        self.inner = inner
        self.gain = gain

    def forward(self, x):
        return x if self.inner is None else x + self.gain * self.inner(x)


class Stack(nn.Module):
    def __init__(self, width=6, depth=2):
        super().__init__()
        self.blocks = nn.ModuleList([Skip(nn.Linear(width, width)) for _ in range(depth)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)
""",
            unsafe=True,
            line=18,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._classes: List[cst.ClassDef] = []
        self._pending: List[Tuple[cst.ClassDef, str, cst.BaseExpression, str]] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._classes or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return
        cls = self._classes[-1]
        if self.ctx.enclosing(node, cst.ClassDef) is not cls or not module_class(self.ctx, cls):
            return
        value = node.value
        kind = self._container_of_modules(value)
        if kind is None and isinstance(value, cst.List) and not value.elements:
            if self._appended_modules(cls, target.attr.value):
                kind = "list"
        if kind is None or self._registers_by_hand(cls) or self._wrapped_later(cls, target.attr.value):
            return
        if self._holds_nothing(value, cls, target.attr.value):
            return  # pooling or activation layers only: registering them would move, save or train nothing
        # decided when the class is walked: where its methods read the container
        self._pending.append((cls, target.attr.value, value, kind))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()
        for cls, attr, value, kind in [p for p in self._pending if p[0] is original_node]:
            if self._picks_one(cls, attr):
                continue
            wrapper = "ModuleDict" if kind == "dict" else "ModuleList"
            self.report(value, self.quoting(value, self.MESSAGE.format(kind=kind, wrapper=wrapper)),
                        fix=self._fix(value, wrapper))
        self._pending = [p for p in self._pending if p[0] is not original_node]

    def _picks_one(self, cls: cst.ClassDef, attr: str) -> bool:
        """The container is a table of alternatives: every read of ``self.<attr>`` picks one element
        (``self.backbones[name]``), and the element picked is assigned to an attribute of the instance
        (``self.backbone = self.backbones[name]``, directly or through the return of a method of the class
        every call of which is so assigned), which registers it.  The ones not picked are never used: no
        parameter of a used module goes untrained."""
        ctx = self.ctx
        reads = [n for n in ctx.nodes(cls) if type(n) is cst.Attribute and n.attr.value == attr
                 and isinstance(n.value, cst.Name) and n.value.value == "self"
                 and not isinstance(ctx.parent(n), cst.AssignTarget)]
        return bool(reads) and all(self._pick_registered(cls, read) for read in reads)

    def _pick_registered(self, cls: cst.ClassDef, read: cst.Attribute) -> bool:
        ctx = self.ctx
        sub = ctx.parent(read)
        if not isinstance(sub, cst.Subscript) or sub.value is not read or len(sub.slice) != 1 \
                or not isinstance(sub.slice[0].slice, cst.Index):
            return False
        holder = ctx.parent(sub)
        if isinstance(holder, cst.Assign) and holder.value is sub:
            if _self_attribute_target(holder):
                return True  # `self.backbone = self.backbones[name]`
            names = [t.target for t in holder.targets]
            if len(names) != 1 or not isinstance(names[0], cst.Name):
                return False
            function = ctx.enclosing(holder, cst.FunctionDef)
            if not isinstance(function, cst.FunctionDef):
                return False
            # `model = self.backbones[name]` ... `return model`: every use of the local is its return
            uses = [n for n in ctx.names_in(function, names[0].value) if n is not names[0]]
            if not uses or not all(isinstance(ctx.parent(u), cst.Return) for u in uses):
                return False
            return self._returned_to_attribute(cls, function)
        if isinstance(holder, cst.Return):
            function = ctx.enclosing(holder, cst.FunctionDef)
            return isinstance(function, cst.FunctionDef) and self._returned_to_attribute(cls, function)
        return False

    def _returned_to_attribute(self, cls: cst.ClassDef, function: cst.FunctionDef) -> bool:
        """Every call of the method ``function`` in the class is ``self.<attr> = self.<method>(...)``."""
        ctx = self.ctx
        calls = [c for c in ctx.calls_in(cls) if isinstance(c.func, cst.Attribute)
                 and c.func.attr.value == function.name.value and isinstance(c.func.value, cst.Name)
                 and c.func.value.value == "self"]
        for call in calls:
            holder = ctx.parent(call)
            if not (isinstance(holder, cst.Assign) and holder.value is call and _self_attribute_target(holder)):
                return False
        return bool(calls)

    def _wrapped_later(self, cls: cst.ClassDef, attr: str) -> bool:
        """``self.layers = []``, appends, then ``self.layers = nn.ModuleList(self.layers)`` (or
        ``self.blocks = nn.Sequential(*self.layers)``, under another name): the plain list only collects
        the modules before they are registered."""
        for a in self.ctx.contents(cls).assigns:
            if not isinstance(a, cst.Assign) or len(a.targets) != 1:
                continue
            if not (dotted_name(a.targets[0].target) or "").startswith("self.") or not isinstance(a.value, cst.Call):
                continue
            if is_module_value(self.ctx, a.value) and any(
                dotted_name(arg.value) == f"self.{attr}" for arg in a.value.args
            ):
                return True
        return False

    def _registers_by_hand(self, cls: cst.ClassDef) -> bool:
        """``self.add_module(name, m)`` / ``register_module`` / ``setattr(self, name, m)`` register the
        elements one by one: the plain container is then only an index."""
        for call in self.ctx.calls_in(cls):
            if method_name(call) in ("add_module", "register_module"):
                return True
            if isinstance(call.func, cst.Name) and call.func.value == "setattr":
                return True
        return False

    def _holds_nothing(self, value: cst.BaseExpression, cls: cst.ClassDef, attr: str) -> bool:
        """Every module the container holds (its elements, a comprehension's element, what is appended to
        it) holds no parameter and no buffer (:func:`effects.holds_nothing`)."""
        ctx = self.ctx
        if isinstance(value, (cst.List, cst.Tuple)):
            held = [e.value for e in value.elements]
        elif isinstance(value, (cst.ListComp, cst.DictComp)):
            held = [value.elt if isinstance(value, cst.ListComp) else value.value]
        elif isinstance(value, cst.Dict):
            held = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
        else:
            return False
        for call in ctx.calls_in(cls):
            if method_name(call) in ("append", "insert") and dotted_name(call.func.value) == f"self.{attr}" \
                    and call.args:  # type: ignore[attr-defined]
                held.append(call.args[-1].value)
            elif method_name(call) == "extend" and dotted_name(call.func.value) == f"self.{attr}":  # type: ignore[attr-defined]
                return False
        return bool(held) and all(holds_nothing(ctx, h) for h in held)

    def _is_module(self, expr: cst.BaseExpression) -> bool:
        return is_module_value(self.ctx, expr)

    def _container_of_modules(self, value: cst.BaseExpression) -> Optional[str]:
        if isinstance(value, (cst.List, cst.Tuple)):
            elements = value.elements
            if elements and all(isinstance(e, cst.Element) and self._is_module(e.value) for e in elements):
                return "list" if isinstance(value, cst.List) else "tuple"
        elif isinstance(value, cst.ListComp):
            if self._is_module(value.elt):
                return "list"
        elif isinstance(value, cst.Dict):
            elements = value.elements
            if elements and all(isinstance(e, cst.DictElement) and self._is_module(e.value) for e in elements):
                return "dict"
        elif isinstance(value, cst.DictComp):
            if self._is_module(value.value):
                return "dict"
        return None

    def _appended_modules(self, cls: cst.ClassDef, attr: str) -> bool:
        for call in self.ctx.calls_in(cls):
            if method_name(call) in ("append", "extend", "insert") and dotted_name(call.func.value) == f"self.{attr}":  # type: ignore[attr-defined]
                values: Sequence[cst.BaseExpression] = [a.value for a in call.args if a.keyword is None]
                if method_name(call) == "insert":
                    values = values[1:]
                if method_name(call) == "extend":
                    if values and self._container_of_modules(values[0]) in ("list", "tuple"):
                        return True
                    continue
                if values and self._is_module(values[-1]):
                    return True
        return False

    def _fix(self, value: cst.BaseExpression, wrapper: str) -> Optional[Fix]:
        prefix = _nn_prefix(self.ctx)
        if prefix is None:
            return None
        if wrapper == "ModuleDict":
            if not isinstance(value, cst.Dict) or not all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements
            ):
                return None
        func = self.ctx.parse_expression(f"{prefix}.{wrapper}")
        args = [] if isinstance(value, cst.List) and not value.elements else [cst.Arg(value)]
        return self.make_fix(f"Use `nn.{wrapper}`").replace(value, cst.Call(func=func, args=args))


def _self_attribute_target(assign: cst.Assign) -> bool:
    """``self.<attr> = ...``: one target, an attribute of the instance."""
    if len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _nn_prefix(ctx) -> Optional[str]:
    """How the file spells ``torch.nn`` where the walk is (``nn`` or ``torch.nn``), or None."""
    for candidate, wanted in (("nn", "torch.nn"), ("torch", "torch")):
        b = ctx.names.lookup(candidate)
        if b is not None and list(b.imports) == [wanted] and not any(v is not None for v in b.values):
            return "nn" if candidate == "nn" else "torch.nn"
    return None
