from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.analysis.ops import SOFTMAX_LAYERS, OpUse, sequential_ending_in, softmax_use
from torchlint.families.numerics.losses import call_findings
from torchlint.analysis.values import NLL
from torchlint.rule import Fix, Invalid, LintRule, Valid

NLL_FUNCS = frozenset({"torch.nn.functional.nll_loss"})
NLL_LAYERS = frozenset({"torch.nn.NLLLoss", "torch.nn.modules.loss.NLLLoss"})


class NllLossOnSoftmax(LintRule):
    """
    ## What it does
    Finds `nn.NLLLoss` / `F.nll_loss` whose input (not the target) went through softmax — a direct
    call (`F.softmax`, `torch.softmax`, `x.softmax()`), an `nn.Softmax` layer, a variable assigned
    from one, or an `nn.Sequential` ending in `nn.Softmax` — instead of `log_softmax`.

    Models are followed through their classes and through calls: a model whose `forward` ends in
    softmax (same file or a project module), passed to a helper that gives its output to `NLLLoss`
    (passed in, built there, a default or `self.<attr>`), is reported at the argument, per call; so is a
    parameter annotated with such a class and a base class's method calling `self` where a subclass
    returns probabilities. No fix for those: the model's other users may want probabilities.

    ## Why is this bad?
    `NLLLoss` expects log-probabilities: it returns `-input[target]`, averaged. Given probabilities,
    it returns minus the probability of the right class, a loss in `[-1, 0]` whose gradient vanishes
    as soon as a prediction is confident, so training stalls without an error. The PyTorch Cookbook
    (Zhang Hao, 2019) pairs `NLLLoss` with `log_softmax` and otherwise uses `CrossEntropyLoss`
    on the logits; Effective PyTorch's numerical-stability notes explain why `log_softmax` must be the
    fused op rather than `log(softmax(x))`. This is the `NLLLoss` sibling of TL103.

    ## Example
    ```python
    probs = F.softmax(model(x), dim=1)
    loss = F.nll_loss(probs, y)
    ```

    ## Use instead
    ```python
    log_probs = F.log_softmax(model(x), dim=1)
    loss = F.nll_loss(log_probs, y)
    ```

    ## Fix safety
    The fix turns the softmax into `log_softmax` with the same arguments (`F.softmax(x, dim=1)` →
    `F.log_softmax(x, dim=1)`, `x.softmax(1)` → `x.log_softmax(1)`). Inline, it is safe. When the softmax
    is stored in a variable, it is safe when the loss is the variable's only use and unsafe otherwise
    (the other uses would then see log-probabilities). An `nn.Softmax` layer or an `nn.Sequential`
    ending in one gets no fix: the layer may serve other callers that want probabilities.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.NLLLoss](https://pytorch.org/docs/stable/generated/torch.nn.NLLLoss.html)
    - [torch.nn.functional.log_softmax](https://pytorch.org/docs/stable/generated/torch.nn.functional.log_softmax.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL110"
    NAME = "nll-loss-on-softmax"
    MESSAGE = "`softmax(x)` passed to `NLLLoss`: it expects log-probabilities; use `log_softmax`"
    FIX_TITLE = "Use `log_softmax` instead of `softmax`"
    TRIGGERS = ("nll_loss", "NLLLoss", "softmax", "Softmax")  # the loss, or the softmax a model's output went through
    IMPORT_TRIGGERS = ("nll_loss", "NLLLoss")

    VALID = [
        Valid(
            """
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.NLLLoss()

def step(model, x, y):
    return criterion(F.log_softmax(model(x), dim=1), y)
"""
        ),
        Valid(
            """
import torch
import torch.nn.functional as F

def step(logits, y):
    probs = torch.softmax(logits, dim=1)
    return F.nll_loss(torch.log(probs + 1e-8), y), probs.argmax(1)
"""
        ),
        Valid(
            """
import torch.nn.functional as F

def step(logits, y):
    return F.cross_entropy(logits, y), F.softmax(logits, dim=1)
"""
        ),
        Valid(
            """
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 3), nn.LogSoftmax(dim=1))
criterion = nn.NLLLoss()

def step(x, y):
    return criterion(model(x), y)
"""
        ),
        Valid(
            """
from scipy.special import softmax
import torch.nn.functional as F

def step(out, y):
    weights = softmax([1.0, 2.0])
    return F.nll_loss(out, y)
"""
        ),
        # log-probabilities from a model passed to a helper with `NLLLoss`
        Valid(
            """
import torch.nn as nn

class LogNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 4), nn.LogSoftmax(dim=1))

    def forward(self, x):
        return self.body(x)

def nll_step(net, crit, x, y):
    return crit(net(x), y)

def fit(x, y):
    return nll_step(LogNet(), nn.NLLLoss(), x, y)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.NLLLoss()

def step(model, optimizer, x, y):
    probs = F.softmax(model(x), dim=1)
    loss = criterion(probs, y)
    loss.backward()
""",
            fixed="""
import torch.nn as nn
import torch.nn.functional as F

criterion = nn.NLLLoss()

def step(model, optimizer, x, y):
    probs = F.log_softmax(model(x), dim=1)
    loss = criterion(probs, y)
    loss.backward()
""",
            line=9,
            col=22,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def step(out, y):
    return F.nll_loss(out.softmax(-1), y)
""",
            fixed="""
import torch
import torch.nn.functional as F

def step(out, y):
    return F.nll_loss(out.log_softmax(-1), y)
""",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def step(out, y):
    p = torch.softmax(out, 1)
    print(p.max())
    return F.nll_loss(p, y)
""",
            fixed="""
import torch
import torch.nn.functional as F

def step(out, y):
    p = torch.log_softmax(out, 1)
    print(p.max())
    return F.nll_loss(p, y)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=1))
criterion = nn.NLLLoss()

def step(x, y):
    return criterion(model(x), y)
""",
        ),
        # a softmax model passed to a helper that applies the `NLLLoss` it is given
        Invalid(
            """
import torch
import torch.nn as nn

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)

def nll_step(net, crit, x, y):
    out = net(x)
    return crit(out, y)

def fit(x, y):
    model = Probs()
    return nll_step(model, nn.NLLLoss(), x, y)
""",
            line=19,
            message="`forward` of `Probs` (case.py:10) ends in softmax; it reaches NLL loss",
        ),
        # the loss a default parameter, the model a module-level object of a softmax class
        Invalid(
            """
import torch.nn as nn
import torch.nn.functional as F

class Probs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return F.softmax(self.fc(x), 1)

net = Probs()

def loss(x, y, crit=nn.NLLLoss()):
    return crit(net(x), y)
""",
            line=16,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._reported: set = set()

    def visit_Call(self, node: cst.Call) -> None:
        if not self._is_nll(node):
            return
        first = arg(node, 0, "input")
        if first is None:
            return
        value = first.value
        self._reported.add(value)
        use = softmax_use(self.ctx, value)
        if use is not None:
            self.report(value, self.quoting(value, self.MESSAGE), fix=self._fix(use, unsafe=False))
            return
        if isinstance(value, cst.Name):
            assigned_values = self.ctx.names.values_before(value)
            assigned = assigned_values[-1] if assigned_values else None
            if assigned is not None:
                use = softmax_use(self.ctx, assigned)
                if use is not None:
                    held = f"`, assigned `{self.spelling(use.node)}`, passed"
                    self.report(value, self.quoting(value, self.MESSAGE).replace("` passed", held, 1),
                                fix=self._variable_fix(value, use))
                    return
        if isinstance(value, cst.Call) and sequential_ending_in(self.ctx, value.func, SOFTMAX_LAYERS) is not None:
            self.report(value, "`NLLLoss` input comes from an `nn.Sequential` ending in `nn.Softmax`; end it in `nn.LogSoftmax`")
            return
        self._reported.discard(value)

    def leave_Module(self, node: cst.Module) -> None:
        """Through the program model: a model whose `forward` ends in softmax (its class in this file or
        a project module, passed as an argument, a default or an annotation, or held on `self`)."""
        for finding in call_findings(self.ctx):
            if finding.loss != NLL or finding.node in self._reported:
                continue
            self._reported.add(finding.node)
            self.report(
                finding.node,
                f"`NLLLoss` on softmax: {finding.message}; it expects log-probabilities, use `log_softmax`",
            )

    def _is_nll(self, call: cst.Call) -> bool:
        if self.ctx.names.matches(call.func, NLL_FUNCS):
            return True
        return not self.ctx.names.instance_of(call.func).isdisjoint(NLL_LAYERS)

    def _fix(self, use: OpUse, unsafe: bool) -> Optional[Fix]:
        func = use.node.func
        if use.kind == "layer" or not isinstance(func, (cst.Attribute, cst.Name)):
            return None
        if isinstance(func, cst.Name):
            return None  # `from torch.nn.functional import softmax`: the import would have to change
        if func.attr.value != "softmax":
            return None
        new_func = func.with_changes(attr=cst.Name("log_softmax"))
        return self.make_fix(unsafe=unsafe).replace(use.node, use.node.with_changes(func=new_func))

    def _variable_fix(self, name: cst.Name, use: OpUse) -> Optional[Fix]:
        assign = self.ctx.parent(use.node)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        scope = self.ctx.names.function_scope_node() or self.ctx.module
        uses = [n for n in self.ctx.names_in(scope, name.value) if n is not name and n is not assign.targets[0].target]
        return self._fix(use, unsafe=bool(uses))
