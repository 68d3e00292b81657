from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import assignment_targets
from torchlint.families.shapes.shapes import is_tensor
from torchlint.rule import Fix, Invalid, LintRule, Valid

#: ends of a chain that turn the value into Python/numpy data: nothing can write through it afterwards
_TERMINALS = frozenset({"item", "tolist", "numpy"})
#: attributes that read only metadata
_METADATA = frozenset({"shape", "size", "dtype", "device", "ndim", "dim", "numel", "is_cuda", "requires_grad"})
#: methods that pass a tensor along unchanged in kind (the chain continues)
_PASS_THROUGH = frozenset({"cpu", "cuda", "to", "float", "double", "half", "long", "int", "squeeze", "view", "flatten"})


class DataAttribute(LintRule):
    """
    ## What it does
    Finds reads of `x.data` on a tensor (a value with tensor evidence, or a parameter from
    `model.parameters()`): `x.data.cpu().numpy()`, `torch.max(out.data, 1)`, `y = x.data`. In-place
    writes through `.data` (`p.data.add_(...)`, `p.data[...] = ...`, `p.data = ...`) are not reported:
    they bypass autograd on purpose (weight initialisation, EMA updates, optimizers) and `.detach()`
    would not be the right edit there (`torch.no_grad()` is).

    ## Why is this bad?
    `.data` is the pre-0.4 way to get a tensor without history. It shares storage with `x` but is
    invisible to autograd's version counter: if the data is later changed in place, backward silently
    uses the changed values and computes wrong gradients. `x.detach()` shares storage too, but autograd
    notices such an in-place change and raises an error instead. The PyTorch Cookbook's 2024 revision
    still reads `outputs.data` in its evaluation snippet; the PyTorch docs and its own copying snippets
    use `detach()`.

    ## Example
    ```python
    _, predicted = torch.max(outputs.data, 1)
    values = loss.data.cpu().numpy()
    ```

    ## Use instead
    ```python
    _, predicted = torch.max(outputs.detach(), 1)
    values = loss.detach().cpu().numpy()
    ```

    ## Fix safety
    The fix replaces `.data` with `.detach()`. It is safe when the chain ends in `.item()`,
    `.tolist()` or `.numpy()` — nothing can write through the result in torch afterwards. Elsewhere
    it is unsafe: code that later modifies the value in place while the graph still needs it would
    now raise an error at `backward()` (where `.data` gave wrong gradients silently).

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.Tensor.detach](https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
    - [PyTorch 0.4 migration guide: what about .data?](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    - PyTorch Cookbook, 2024 revision ("PyTorch 高频使用代码", 2024-07-25), based on Zhang Hao's cookbook
    """

    CODE = "TL503"
    NAME = "data-attribute"
    MESSAGE = "`.data` hides in-place changes from autograd (wrong gradients, silently); use `.detach()`"
    FIX_TITLE = "Use `.detach()`"
    FIX_SAFETY = "unsafe"
    TRIGGERS = (".data",)
    DEFAULT_ENABLED = False

    VALID = [
        # an attribute deleted, not read
        Valid(
            """
import torch

def drop(holder, other):
    holder.weight = torch.zeros(3)
    del holder.data
    del other.data, holder.weight
"""
        ),
        Valid(
            """
import torch

def init(model):
    for p in model.parameters():
        p.data.normal_(0, 0.02)
        p.data[0] = 0
"""
        ),
        Valid(
            """
import torch

x = torch.zeros(3)
y = x.detach().cpu().numpy()
"""
        ),
        Valid(
            """
def load(dataset):
    return dataset.data, dataset.targets
"""
        ),
        Valid(
            """
import torch

def swap(layer, w):
    layer.weight.data = w
"""
        ),
        Valid(
            """
import torch

def ema(avg, model, decay):
    for a, p in zip(avg.parameters(), model.parameters()):
        a.data.mul_(decay).add_(p.data, alpha=1 - decay)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def accuracy(model, x, y):
    outputs = torch.softmax(model(x), dim=1)
    _, predicted = torch.max(outputs.data, 1)
    return predicted
""",
            fixed="""
import torch

def accuracy(model, x, y):
    outputs = torch.softmax(model(x), dim=1)
    _, predicted = torch.max(outputs.detach(), 1)
    return predicted
""",
            unsafe=True,
            line=6,
            col=30,
        ),
        Invalid(
            """
import torch

x = torch.randn(3, requires_grad=True)
value = (x * 2).sum().data.item()
""",
            fixed="""
import torch

x = torch.randn(3, requires_grad=True)
value = (x * 2).sum().detach().item()
""",
        ),
        Invalid(
            """
import torch

def norms(model):
    return [p.data.norm().cpu().numpy() for p in model.parameters()]
""",
            fixed="""
import torch

def norms(model):
    return [p.detach().norm().cpu().numpy() for p in model.parameters()]
""",
        ),
    ]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or not self.ctx.names.imports_torch:
            return
        parent = self.ctx.parent(node)
        if self._written(node, parent) or self._swap(node):
            return
        if not (is_tensor(self.ctx, node.value) or self._parameter(node.value, node)):
            return
        safe = self._ends_in_python_data(node)
        new = cst.Call(func=node.with_changes(attr=cst.Name("detach")))
        fix: Optional[Fix] = self.make_fix(unsafe=not safe).replace(node, new)
        self.report(node, fix=fix)

    def _written(self, node: cst.Attribute, parent) -> bool:
        if isinstance(parent, cst.AssignTarget) or (parent is not None and node in assignment_targets(parent)):
            return True
        up = parent
        while isinstance(up, (cst.Element, cst.Tuple, cst.List)):  # `del a.data, b.data`
            up = self.ctx.parent(up)
        if isinstance(up, cst.Del):
            return True  # deleted, not read (and `del x.detach()` is no statement)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            method = parent.attr.value
            if method in _METADATA:
                return True  # `x.data.shape`: no value is read
            if method.endswith("_") and not method.endswith("__"):
                return True  # p.data.add_(...)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            grand = self.ctx.parent(parent)
            if isinstance(grand, cst.AssignTarget) or (grand is not None and parent in assignment_targets(grand)):
                return True
            if isinstance(grand, cst.Attribute) and grand.attr.value.endswith("_"):
                return True
        return False

    def _swap(self, node: cst.Attribute) -> bool:
        """``p.data = f(p.data)``: the read feeds a raw replacement of the same storage on purpose."""
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, cst.Assign):
                return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "data" for t in anc.targets)
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return False
        return False

    def _parameter(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """A loop variable over ``<x>.parameters()``."""
        if not isinstance(expr, cst.Name):
            return False
        for anc in self.ctx.ancestors(at):
            loops = []
            if isinstance(anc, cst.For):
                loops = [anc]
            elif isinstance(anc, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                comp = anc.for_in
                while comp is not None:
                    loops.append(comp)
                    comp = comp.inner_for_in
            for loop in loops:
                if isinstance(loop.target, cst.Name) and loop.target.value == expr.value:
                    it = loop.iter
                    return isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "parameters"
        return False

    def _ends_in_python_data(self, node: cst.Attribute) -> bool:
        cur: cst.CSTNode = node
        while True:
            parent = self.ctx.parent(cur)
            if not isinstance(parent, cst.Attribute) or parent.value is not cur:
                return False
            call = self.ctx.parent(parent)
            if not isinstance(call, cst.Call) or call.func is not parent:
                return False
            name = parent.attr.value
            if name in _TERMINALS:
                return True
            if name not in _PASS_THROUGH and name not in ("norm", "sum", "mean", "max", "min", "abs"):
                return False
            cur = call
