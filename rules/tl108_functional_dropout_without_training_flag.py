from __future__ import annotations

import re
from typing import Dict, Optional, Set

import libcst as cst

from torchlint.analysis.context import arg, module_ref
from torchlint.analysis.definitions import class_body
from torchlint.analysis.walk import iter_nodes
from torchlint.fixes import add_argument
from torchlint.rule import Fix, Invalid, LintRule, Valid

_ALWAYS_ON = re.compile(r"^MC[A-Z_]|MCDropout|[Mm]onte|[Bb]ayes|[Aa]lways|[Cc]oncrete")

FUNCTIONAL_DROPOUTS = frozenset(
    {
        "torch.nn.functional.dropout",
        "torch.nn.functional.dropout1d",
        "torch.nn.functional.dropout2d",
        "torch.nn.functional.dropout3d",
        "torch.nn.functional.alpha_dropout",
        "torch.nn.functional.feature_alpha_dropout",
    }
)


#: dropout layers and the functional form each one applies
_LAYER_FUNCTIONS = {"Dropout": "dropout", "Dropout1d": "dropout1d", "Dropout2d": "dropout2d", "Dropout3d": "dropout3d",
                    "AlphaDropout": "alpha_dropout", "FeatureAlphaDropout": "feature_alpha_dropout"}


class FunctionalDropoutWithoutTrainingFlag(LintRule):
    """
    ## What it does
    Finds `F.dropout(x, p)` (and `dropout1d`/`2d`/`3d`, `alpha_dropout`, `feature_alpha_dropout`) called
    in a module's `forward` without the `training` argument.

    ## Why is this bad?
    Unlike the `nn.Dropout` layer, the functional form does not know whether the module is in training
    or evaluation mode: its `training` argument defaults to `True`, so the dropout stays active after
    `model.eval()` and every prediction is randomly perturbed. The cookbook recommends the functional
    forms for parameter-free operations but warns about exactly this, with the fix
    `torch.nn.functional.dropout(x, p=0.5, training=self.training)` ("使用 torch.nn.functional 时要注意
    网络状态", PyTorch Cookbook, Zhang Hao, 2019).

    Also a dropout layer built in the forward pass and applied on the spot (`nn.Dropout(self.p)(h)`): a
    module built there is new, so in training mode whatever mode the model is in; the fix is the
    functional form given the model's mode.

    Not reported: calls that pass `training` (by keyword or position) or `**kwargs`, `p=0`, calls
    that run only in training mode (in the body of `if self.training:` or `if self.training and ...:`),
    calls outside a class's `forward` methods (a plain function has no `self.training` to pass), and classes
    named for dropout that stays on at test time on purpose (`MCDropout`, `BayesianLinear`,
    `AlwaysDropout`).

    ## Example
    ```python
    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)
        return self.fc2(x)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.fc2(x)
    ```

    ## Fix safety
    The fix adds `training=self.training`. It is safe: in training mode nothing changes, and in
    evaluation mode the dropout turns off, which is the bug being fixed.

    ## Options
    None.

    ## References
    - [torch.nn.functional.dropout](https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html)
    - [torch.nn.Module.eval](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL108"
    NAME = "functional-dropout-without-training-flag"
    MESSAGE = "Functional dropout in `forward` without `training=`; it stays active in eval mode"
    FIX_TITLE = "Pass `training=self.training`"
    TRIGGERS = ("dropout", "Dropout")

    VALID = [
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, p=0.5, training=self.training)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, self.training)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def augment(x):
    return F.dropout(x, p=0.1)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Head(nn.Module):
    def forward(self, x):
        if self.training and self.rate > 0:
            x = F.dropout(x, p=self.rate)
        return x
"""
        ),
        Valid(
            """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def forward(self, x, **kw):
        x = F.dropout(x, p=0.0)
        return F.dropout(x, **kw)
"""
        ),
        Valid(
            """
class Net(nn.Module):
    def forward(self, x):
        return my_lib.dropout(x, 0.5)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class MCDropout(nn.Dropout):
    \"\"\"Dropout that stays on at test time, for Monte-Carlo uncertainty estimates.\"\"\"

    def forward(self, x):
        return F.dropout(x, self.p)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Decoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.hidden = nn.Linear(width, width)

    def _hidden_step(self, h):
        return F.dropout(F.relu(self.hidden(h)), 0.2, self.training)

    def forward(self, h):
        return h + self._hidden_step(h)

    def noisy_copy(self, h):
        return F.dropout(h, 0.5)
"""
        ),
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F


class Denoiser(nn.Module):
    def __init__(self, width, noise=0.2):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.noise = noise

    @staticmethod
    def mask(x, rate):
        return F.dropout(x, rate)

    def corrupt(self, x):
        return F.dropout(x, self.noise)

    def forward(self, x):
        if self.training:
            x = self.corrupt(x)
            x = self.mask(x, self.noise)
        return self.fc(x)
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, p):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.drop = nn.Dropout(p)  # built once: follows the module's mode
        self.p = p

    def forward(self, x):
        x = self.drop(torch.relu(self.lin(x)))
        if self.training:
            x = nn.Dropout(self.p)(x)  # only in training mode
        return x


def augment(x):
    return nn.Dropout(0.1)(x)  # a plain function, no module mode to follow
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 10)
        self.fc2 = nn.Linear(10, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5)
        return self.fc2(x)
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 10)
        self.fc2 = nn.Linear(10, 2)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.fc2(x)
""",
            line=13,
            col=13,
        ),
        Invalid(
            """
import torch
from torch.nn.functional import dropout2d as drop2d

class Block(torch.nn.Module):
    def forward(module, x):
        return torch.nn.functional.dropout(drop2d(x, 0.2), 0.1)
""",
            fixed="""
import torch
from torch.nn.functional import dropout2d as drop2d

class Block(torch.nn.Module):
    def forward(module, x):
        return torch.nn.functional.dropout(drop2d(x, 0.2, training=module.training), 0.1, training=module.training)
""",
            count=2,
        ),
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Decoder(nn.Module):
    def __init__(self, width, rate=0.2):
        super().__init__()
        self.hidden = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.rate = rate

    def _hidden_step(self, h):
        return F.dropout(F.relu(self.hidden(h)), self.rate)

    def step(self, h):
        return h + self.out(self._hidden_step(h))

    def forward(self, h, steps=4):
        for _ in range(steps):
            h = self.step(h)
        return h
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

class Decoder(nn.Module):
    def __init__(self, width, rate=0.2):
        super().__init__()
        self.hidden = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.rate = rate

    def _hidden_step(self, h):
        return F.dropout(F.relu(self.hidden(h)), self.rate, training=self.training)

    def step(self, h):
        return h + self.out(self._hidden_step(h))

    def forward(self, h, steps=4):
        for _ in range(steps):
            h = self.step(h)
        return h
""",
            line=13,
            col=16,
        ),
        Invalid(
            """
import torch
import torch.nn as nn


class GNN(nn.Module):
    def __init__(self, n, d, p):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        self.lin = nn.Linear(d, d)
        self.p = p

    def forward(self, adj):
        h = torch.sparse.mm(adj, self.emb.weight)
        h = nn.Dropout(self.p)(torch.relu(self.lin(h)))
        return h


model = GNN(5, 4, 0.5)
model.eval()
with torch.no_grad():
    print(model(torch.eye(5).to_sparse()))
""",
            fixed="""
import torch
import torch.nn as nn


class GNN(nn.Module):
    def __init__(self, n, d, p):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        self.lin = nn.Linear(d, d)
        self.p = p

    def forward(self, adj):
        h = torch.sparse.mm(adj, self.emb.weight)
        h = nn.functional.dropout(torch.relu(self.lin(h)), self.p, training=self.training)
        return h


model = GNN(5, 4, 0.5)
model.eval()
with torch.no_grad():
    print(model(torch.eye(5).to_sparse()))
""",
            line=15,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._forward_methods: Dict[cst.ClassDef, Set[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if isinstance(node.func, cst.Call):
            self._layer_built_in_forward(node, node.func)
            return
        if not ctx.names.matches(node.func, FUNCTIONAL_DROPOUTS):
            return
        if any(a.star for a in node.args):
            return
        if arg(node, 2, "training") is not None:
            return
        p = arg(node, 1, "p")
        if p is not None and isinstance(p.value, (cst.Integer, cst.Float)) and float(p.value.value) == 0.0:
            return
        self_name = self._forward_self()
        if self_name is None or self._under_training_guard(node, self_name):
            return
        method = self.ctx.enclosing(node, cst.FunctionDef)
        message = self.MESSAGE
        if method is not None and method.name.value not in ("forward",) and not method.name.value.startswith(
                ("forward_", "_forward")):
            message = (f"Functional dropout in `{method.name.value}`, which `forward` runs, without `training=`; it "
                       "stays active in eval mode")
        self.report(node, self.quoting(node, message), fix=self._fix(node, self_name))

    def _layer_built_in_forward(self, node: cst.Call, layer: cst.Call) -> None:
        """``nn.Dropout(self.p)(h)`` in the forward pass: a dropout layer built there is a new module, always
        in training mode (``model.eval()`` never reaches it): the same dropout at evaluation as
        ``F.dropout(h, self.p)``.  The fix is the functional form given the module's mode."""
        ctx = self.ctx
        names = ctx.names.qualified_names_at(layer.func)
        functional = next((_LAYER_FUNCTIONS[q.rsplit(".", 1)[-1]] for q in names
                           if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in _LAYER_FUNCTIONS), None)
        if functional is None or any(a.star for a in (*layer.args, *node.args)):
            return
        p = arg(layer, 0, "p")
        if p is not None and isinstance(p.value, (cst.Integer, cst.Float)) and float(p.value.value) == 0.0:
            return
        self_name = self._forward_self()
        if self_name is None or self._under_training_guard(node, self_name):
            return
        message = (f"Dropout layer built in the forward pass (`{ctx.code(layer)}`): a new module is in training "
                   "mode, so it stays active after `model.eval()`; use the functional form with "
                   f"`training={self_name}.training` (or build the layer in `__init__`)")
        fix: Optional[Fix] = None
        ref = module_ref(ctx, "torch.nn.functional")
        inplace = arg(layer, 1, "inplace")
        if ref is not None and len(node.args) == 1 and node.args[0].keyword is None and inplace is None \
                and all(a.keyword is None or a.keyword.value == "p" for a in layer.args):
            given = f", {ctx.code(p.value)}" if p is not None else ""
            code = f"{ref}.{functional}({ctx.code(node.args[0].value)}{given}, training={self_name}.training)"
            fix = self.make_fix(f"Use `{ref}.{functional}(..., training={self_name}.training)`").replace(
                node, ctx.parse_expression(code).with_changes(lpar=node.lpar, rpar=node.rpar))
        self.report(node, self.quoting(node, message), fix=fix)

    def _under_training_guard(self, node: cst.Call, self_name: str) -> bool:
        """The call runs only in training mode: it sits in the body of an ``if`` whose test requires
        ``self.training`` (alone or as one operand of ``and``)."""
        child: cst.CSTNode = node
        for a in self.ctx.ancestors(node):
            if isinstance(a, cst.FunctionDef):
                return False
            if isinstance(a, cst.If) and child is a.body and _requires_training(a.test, self_name):
                return True
            child = a
        return False

    def _forward_self(self) -> Optional[str]:
        """The first parameter's name when the call sits in a ``forward`` method of a class with bases, or in a
        method of the class that ``forward`` runs (``self.single_step(x)``, itself or through other methods)."""
        for a in self.ctx.ancestors(self.ctx.stack[-1]):
            if isinstance(a, cst.FunctionDef):
                cls = self.ctx.parent(self.ctx.parent(a) or a)
                if not isinstance(cls, cst.ClassDef) or not cls.bases:
                    return None
                if a.name.value not in self._run_by_forward(cls):
                    return None
                if _ALWAYS_ON.search(cls.name.value):
                    return None  # Monte-Carlo / always-on dropout layers drop in eval mode on purpose
                params = list(a.params.posonly_params) + list(a.params.params)
                return params[0].name.value if params else None
        return None

    def _run_by_forward(self, cls: cst.ClassDef) -> Set[str]:
        """The methods of ``cls`` that its forward pass runs: ``forward`` (and ``forward_*``, ``_forward*``) and
        those they call on their first parameter, transitively (asked once per class)."""
        known = self._forward_methods.get(cls)
        if known is not None:
            return known
        methods = {s.name.value: s for s in class_body(cls) if isinstance(s, cst.FunctionDef)
                   and not any(isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod")
                               for d in s.decorators)}  # (no `self` there to read `training` from)
        todo = [n for n in methods if n == "forward" or n.startswith(("forward_", "_forward"))]
        reached: Set[str] = set(todo)
        while todo:
            method = methods[todo.pop()]
            params = list(method.params.posonly_params) + list(method.params.params)
            if not params:
                continue
            me = params[0].name.value
            guarded = {id(n) for g in iter_nodes(method.body) if isinstance(g, cst.If) and _requires_training(g.test, me)
                       for n in iter_nodes(g.body)}  # (the walk may not have reached this method yet)
            for call in self.ctx.calls_in(method):
                func = call.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == me \
                        and func.attr.value in methods and func.attr.value not in reached \
                        and func.attr.value != "__init__" and id(call) not in guarded:
                    reached.add(func.attr.value)
                    todo.append(func.attr.value)
        self._forward_methods[cls] = reached
        return reached

    def _fix(self, node: cst.Call, self_name: str) -> Fix:
        # the new argument takes the last one's place in the layout: its trailing comma, its newline
        new = add_argument(self.ctx, node, f"{self_name}.training", keyword="training")
        return self.make_fix().replace(node, new)


def _requires_training(test: cst.BaseExpression, self_name: str) -> bool:
    if isinstance(test, cst.Attribute):
        return test.attr.value == "training" and isinstance(test.value, cst.Name) and test.value.value == self_name
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _requires_training(test.left, self_name) or _requires_training(test.right, self_name)
    return False
