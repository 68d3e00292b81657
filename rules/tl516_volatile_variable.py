from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import libcst as cst

from torchlint.analysis.context import keyword_arg
from torchlint.analysis.definitions import call_sites, passed_argument, project_call_sites
from torchlint.families.api.rewrite import literal_value
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.analysis.training import under_no_grad
from torchlint.rule import Fix, Invalid, LintRule, Valid

VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


#: the torch release since which ``volatile`` is ignored
_VOLATILE_IGNORED_SINCE = (0, 4)


class VolatileVariable(LintRule):
    """
    ## What it does
    Finds `Variable(x, volatile=True)` outside `torch.no_grad()`, and `volatile=False` anywhere, unless
    the project supports a torch older than 0.4 (option `target-torch`, or the lower bound its
    pyproject.toml / requirements declare), where `volatile=True` still turned autograd off.

    ## Why is this bad?
    Before torch 0.4, `volatile=True` switched autograd off for everything computed from the variable:
    it was how evaluation code saved memory. Since 0.4 the argument is ignored (with a warning that is
    easy to miss): the evaluation now builds the whole autograd graph, keeps every activation alive and
    uses several times the memory, and gradients can flow where the author meant them not to. Old
    tutorials and the evaluation snippets of the time still show it; the PyTorch Cookbook
    (Zhang Hao, 2019) already evaluates under `torch.no_grad()`, as do the PyTorch docs.

    ## Example
    ```python
    for x, y in loader:
        x = Variable(x, volatile=True)
        correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    ```

    ## Fix safety
    `volatile=True` gets no fix: the right edit is to run the surrounding evaluation under
    `torch.no_grad()`, and which statements that covers is the author's choice. `volatile=False`,
    which has always meant the default, is removed (safe); where `Variable` then has nothing left
    to do, `Variable(x, volatile=False)` becomes `x` (a `Variable` is the tensor itself since 0.4).

    ## Options
    - `target-torch` (default `"auto"`): the oldest torch the project supports; below 0.4 nothing is
      reported. `"auto"` reads the project's declared torch requirement.

    TorchFix has no equivalent.

    ## References
    - [Locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation)
    - [torch.no_grad](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL516"
    NAME = "volatile-variable"
    MESSAGE = (
        "`volatile=True` has had no effect since torch 0.4: autograd stays on here; drop it, and where this "
        "code evaluates (no backward pass needs it), run it under `torch.no_grad()` instead"
    )
    FIX_TITLE = "Drop `volatile=False`"
    TRIGGERS = ("volatile",)
    OPTIONS = {"target-torch": TARGET_TORCH}

    VALID = [
        Valid(
            """
import torch

def evaluate(model, loader):
    with torch.no_grad():
        return [model(x) for x, _ in loader]
"""
        ),
        Valid(
            """
import torch
from torch.autograd import Variable

def evaluate(model, x):
    with torch.no_grad():
        return model(Variable(x, volatile=True))
"""
        ),
        Valid(
            """
from torch.autograd import Variable

def wrap(x):
    return Variable(x, requires_grad=True)
"""
        ),
        Valid(
            """
class Variable:
    def __init__(self, value, volatile=False):
        self.value = value

v = Variable(3, volatile=True)
"""
        ),
        Valid(
            """
import torch

@torch.no_grad()
def evaluate(model, x):
    from torch.autograd import Variable
    return model(Variable(x, volatile=True))
"""
        ),
        # `volatile=` given by a parameter: the only call that sets it runs under `no_grad()`, the others keep
        # the default `False`
        Valid(
            """
import torch
from torch.autograd import Variable


def get_batch(source, i, evaluation=False):
    return Variable(source[i], volatile=evaluation)


def evaluate(model, source):
    with torch.no_grad():
        return [model(get_batch(source, i, evaluation=True)) for i in range(len(source))]


def train(model, source, opt):
    for i in range(len(source)):
        loss = model(get_batch(source, i)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""
        ),
        # a project that declares torch 0.3: `volatile=True` turns autograd off there
        Valid(
            """
import torch
from torch.autograd import Variable


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        out = model(Variable(x, volatile=True))
        correct += (out.data.max(1)[1] == y).sum()
    return correct
""",
            options={"target-torch": "0.3"},
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
from torch.autograd import Variable

def evaluate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        x = Variable(x, volatile=True)
        correct += (model(x).argmax(dim=1) == y).sum().item()
    return correct
""",
            line=9,
            col=13,
        ),
        Invalid(
            """
import torch.autograd as autograd

def predict(model, x):
    return model(autograd.Variable(x.cuda(), volatile=True))
""",
        ),
        Invalid(
            """
from torch.autograd import Variable

def train_step(model, x):
    return model(Variable(x, volatile=False))
""",
            fixed="""
from torch.autograd import Variable

def train_step(model, x):
    return model(x)
""",
            message="`volatile=False`",
        ),
        Invalid(
            """
from torch.autograd import Variable

def train_step(model, x):
    return model(Variable(x, requires_grad=True, volatile=False))
""",
            fixed="""
from torch.autograd import Variable

def train_step(model, x):
    return model(Variable(x, requires_grad=True))
""",
        ),
        # a caller sets the parameter outside `no_grad()`: that call builds the graph `volatile` was meant to skip
        Invalid(
            """
from torch.autograd import Variable


def to_tensor(x, volatile=False):
    return Variable(x, volatile=volatile)


def act(actor, state):
    return actor(to_tensor(state, volatile=True))
""",
            line=6,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._pending: List[Tuple[cst.Call, cst.BaseExpression]] = []
        # a project that still supports torch 0.3 (`torch==0.3.0` declared) runs where `volatile` works
        self._ignored = target_version(self.options.get("target-torch")) >= _VOLATILE_IGNORED_SINCE

    def visit_Call(self, node: cst.Call) -> None:
        volatile = keyword_arg(node, "volatile")
        if volatile is None or not self._ignored or not self.ctx.names.matches(node.func, VARIABLE):
            return
        if literal_value(volatile.value) is False:
            self.report(
                node,
                "`volatile=False` has had no meaning since torch 0.4 (it was the default); drop it",
                fix=self._drop(node, volatile),
            )
            return
        if under_no_grad(self.ctx, node):
            return
        self._pending.append((node, volatile.value))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, value in self._pending:  # judged after the walk: a parameter's callers are known then
            found = self._may_be_true(value)
            if found is True:
                self.report(node)
            elif found is not None:
                cctx, call = found
                where = " ".join(cctx.code(call).split())
                where = where if len(where) <= 60 else where[:57].rstrip() + "..."
                self.report(node, (
                    f"`volatile={self.ctx.code(value)}` is `True` where `{where}` "
                    "runs outside `torch.no_grad()`, and `volatile=True` has had no effect since torch 0.4: autograd "
                    "stays on there; drop it, and where that code evaluates, run it under `torch.no_grad()` instead"))

    def _may_be_true(self, value: cst.BaseExpression) -> Union[bool, None, Tuple[Any, cst.Call]]:
        """Whether ``volatile=value`` may be ``True`` where autograd is on: a literal ``True``, an expression
        of the code's own; for a parameter of the function (``volatile=evaluation``), what its calls pass (the
        default where a call passes nothing), each call outside ``torch.no_grad()``: a parameter no call in
        view sets is never known to be ``True``.  True (the value itself may be), the first such call with its
        file's context, or None."""
        ctx = self.ctx
        if not isinstance(value, cst.Name) or not ctx.names.is_param_at(value):
            return True if literal_value(value) is not False else None
        function = ctx.enclosing(value, cst.FunctionDef)
        if not isinstance(function, cst.FunctionDef):
            return True
        param = next((p for p in [*function.params.posonly_params, *function.params.params]
                      if p.name.value == value.value), None)
        if param is None:
            return True  # keyword-only or `**kwargs`: not followed
        for cctx, call in [(ctx, c) for c in call_sites(ctx, function)] + project_call_sites(ctx, function):
            passed = passed_argument(call, function, value.value)
            given = passed.value if passed is not None else param.default
            if given is None or literal_value(given) is False or under_no_grad(cctx, call):
                continue
            return cctx, call
        return None

    def _drop(self, node: cst.Call, volatile: cst.Arg) -> Optional[Fix]:
        rest = [a for a in node.args if a is not volatile]
        if len(rest) == 1 and rest[0].keyword is None and not rest[0].star:
            return self.make_fix().replace(node, rest[0].value)
        if not rest:
            return None
        rest[-1] = rest[-1].with_changes(comma=node.args[-1].comma if node.args[-1] is volatile else rest[-1].comma)
        return self.make_fix().replace(node, node.with_changes(args=rest))
