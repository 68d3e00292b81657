from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from torchlint.analysis.context import arg
from torchlint.fixes.toolkit import as_operand
from torchlint.rule import Fix, Invalid, LintRule, Valid

PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: tensor methods that return a new, plain tensor whenever they change the device or the dtype
MOVES = frozenset({"cuda", "to", "double", "half", "bfloat16", "long", "int", "bool"})
#: targets of `.to(...)` that leave a default (float32, CPU) parameter as it is: `.to` returns it itself
NO_OP_TARGETS = frozenset({"torch.float32", "torch.float"})
#: methods that return the tensor itself (a chain through them keeps the moved value)
SELF_METHODS = frozenset({"requires_grad_", "share_memory_"}) | MOVES


def _is_optimizer(qualified: frozenset) -> bool:
    for q in qualified:
        parts = q.split(".")
        if len(parts) >= 3 and parts[:2] == ["torch", "optim"] and parts[-1][:1].isupper():
            return parts[2] != "lr_scheduler"
    return False


class ParameterMovedAfterCreation(LintRule):
    """
    ## What it does
    Finds `nn.Parameter(t)` followed by a move or a cast — `.cuda()`, `.to(device)`, `.double()`,
    `.half()`, `.bfloat16()` — whose result is stored as a parameter: assigned to an attribute
    (`self.w = nn.Parameter(torch.randn(n)).cuda()`), registered (`register_parameter`, `setattr`), or
    given to an optimizer, directly or through a local name. `.to("cpu")`, `.to(torch.float32)`, `.float()`
    and `.cpu()` are not reported (on a new parameter they change nothing and return it itself), nor is a
    value put into an `nn.ParameterList`/`nn.ParameterDict` (they wrap plain tensors as parameters again).

    ## Why is this bad?
    A move or cast that changes the tensor returns a new tensor computed from the parameter: a plain
    tensor, no longer an `nn.Parameter`, and not a leaf of the autograd graph. Assigned to a module
    attribute it is not registered: `model.parameters()` and `state_dict()` miss it, the optimizer
    built from `model.parameters()` never updates it, `model.to(...)` does not move it, and the real
    parameter, which receives the gradients, is reachable from nowhere. Training runs without an error
    and the value stays at its initialisation. Given to an optimizer directly it fails with
    "can't optimize a non-leaf Tensor". The PyTorch documentation of `nn.Parameter` and of
    `Module.register_parameter` describes the registration by assignment this depends on, and the
    PyTorch forums answer the question "my parameter is not in model.parameters()" with this cause.

    ## Example
    ```python
    class Scaled(nn.Module):
        def __init__(self, n, device):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(n)).to(device)
    ```

    ## Use instead
    ```python
    class Scaled(nn.Module):
        def __init__(self, n, device):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(n).to(device))
    ```
    (or build the module on the CPU and move the whole model with `model.to(device)`)

    ## Fix safety
    The fix moves the call inside (`nn.Parameter(t).cuda()` becomes `nn.Parameter(t.cuda())`,
    `requires_grad=` kept) and is unsafe: the value becomes a registered parameter, so the optimizer
    starts training it, `state_dict()` gains a key (loading an older checkpoint with
    `strict=True` then fails) and `model.to(...)` moves it — that is the bug's fix, but it changes what
    the program computes. No fix when `nn.Parameter` gets no tensor.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.nn.parameter.Parameter](https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html)
    - [torch.Tensor.to](https://pytorch.org/docs/stable/generated/torch.Tensor.to.html) ("returns `self`" when nothing changes, a new tensor otherwise)
    - [Module.register_parameter](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_parameter)
    """

    CODE = "TL518"
    NAME = "parameter-moved-after-creation"
    MESSAGE = (
        "`nn.Parameter(...).{method}()` returns a plain tensor, not the parameter: {where} it is no "
        "parameter (missing from `parameters()`, never trained); call `.{method}()` on the tensor inside"
    )
    FIX_TITLE = "Move or cast the tensor inside `nn.Parameter(...)`"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("Parameter",)

    VALID = [
        # the tensor is moved before it becomes a parameter; the module is moved as a whole
        """
import torch
import torch.nn as nn

class Scaled(nn.Module):
    def __init__(self, n, device):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n).to(device))
        self.bias = nn.Parameter(torch.zeros(n, device=device))

model = Scaled(3, "cpu").double().cuda()
""",
        # moves that change nothing on a new parameter (it is returned itself), and requires_grad_
        """
import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.a = nn.Parameter(torch.ones(n)).float()
        self.b = nn.Parameter(torch.ones(n)).to(torch.float32)
        self.c = nn.Parameter(torch.ones(n)).cpu()
        self.d = nn.Parameter(torch.ones(n)).requires_grad_(False)
""",
        # a ParameterList wraps what it is given as parameters again
        """
import torch
import torch.nn as nn

class Bank(nn.Module):
    def __init__(self, n, device):
        super().__init__()
        self.items = nn.ParameterList([nn.Parameter(torch.randn(n)).to(device) for _ in range(3)])
        here = torch.device("cpu")
        self.w = nn.Parameter(torch.randn(n)).to(here)
""",
        # a moved copy of a parameter used as a value, not stored as a parameter
        """
import torch
import torch.nn as nn

def snapshot(n):
    p = nn.Parameter(torch.ones(n))
    print(nn.Parameter(torch.ones(n)).double().sum())
    return p
""",
        # not torch's Parameter
        """
import torch
from inspect import Parameter

class Sig:
    def __init__(self):
        self.p = Parameter("x", Parameter.POSITIONAL_ONLY).replace(name="y")
        self.q = torch.ones(3).cuda()
""",
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn as nn

class Scaled(nn.Module):
    def __init__(self, n, device):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n)).to(device)
        self.shift = nn.Parameter(torch.zeros(n), requires_grad=False).cuda()
""",
            fixed="""
import torch
import torch.nn as nn

class Scaled(nn.Module):
    def __init__(self, n, device):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n).to(device))
        self.shift = nn.Parameter(torch.zeros(n).cuda(), requires_grad=False)
""",
            line=8,
            col=22,
            count=2,
            unsafe=True,
            message="stored on `self.scale`",
        ),
        # through a local name, a cast, `from torch.nn import Parameter`, and setattr/register_parameter
        Invalid(
            """
import torch
from torch.nn import Module, Parameter

class Gates(Module):
    def __init__(self, n):
        super().__init__()
        w = Parameter(torch.randn(n, n) * 0.01).double()
        self.w = w
        self.register_parameter("g", Parameter(torch.ones(n)).half())
        setattr(self, "h", Parameter(torch.ones(n)).cuda(0))
""",
            fixed="""
import torch
from torch.nn import Module, Parameter

class Gates(Module):
    def __init__(self, n):
        super().__init__()
        w = Parameter((torch.randn(n, n) * 0.01).double())
        self.w = w
        self.register_parameter("g", Parameter(torch.ones(n).half()))
        setattr(self, "h", Parameter(torch.ones(n).cuda(0)))
""",
            count=3,
            unsafe=True,
        ),
        # given to an optimizer: fails with "can't optimize a non-leaf Tensor"
        Invalid(
            """
import torch

device = torch.device("cuda")
w = torch.nn.Parameter(torch.zeros(3)).to(device)
opt = torch.optim.Adam([w], lr=0.1)
""",
            fixed="""
import torch

device = torch.device("cuda")
w = torch.nn.Parameter(torch.zeros(3).to(device))
opt = torch.optim.Adam([w], lr=0.1)
""",
            message="given to an optimizer",
            unsafe=True,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._found: list = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in MOVES:
            return
        inner = func.value
        if not isinstance(inner, cst.Call) or not self.ctx.names.matches(inner.func, PARAMETER):
            return
        self._found.append((node, inner, func))

    def leave_Module(self, node: cst.Module) -> None:
        """Where each moved value goes is read after the walk, when the uses after it are known."""
        for call, param, func in self._found:
            if not self._changes(func.attr.value, call):
                continue
            where = self._destination(call)
            if where is not None:
                self.report(call, self.quoting(call, self.MESSAGE.format(method=func.attr.value, where=where)),
                            fix=lambda c=call, p=param, f=func: self._fix(c, p, f))

    # -- what the move does ------------------------------------------------------------------------
    def _changes(self, method: str, node: cst.Call) -> bool:
        """Whether the call may return another tensor than the new (CPU, float32) parameter itself."""
        if method == "cuda":
            return True  # `.cuda()`, `.cuda(0)`, `.cuda(device=...)`: the new parameter is on the CPU
        if method != "to":
            return all(a.keyword is not None for a in node.args)  # `.double(memory_format=...)` alike
        if not node.args or any(a.star for a in node.args):
            return False
        targets = [a.value for a in node.args if a.keyword is None or a.keyword.value in ("device", "dtype")]
        return any(not self._no_op_target(value) for value in targets)

    def _no_op_target(self, value: cst.BaseExpression, hops: int = 0) -> bool:
        """``"cpu"``, ``torch.device("cpu")``, ``torch.float32`` (or a name only ever given one of them):
        the new parameter is already there, and ``.to`` returns it itself."""
        if isinstance(value, cst.SimpleString):
            return value.evaluated_value == "cpu"
        if self.ctx.names.matches(value, NO_OP_TARGETS):
            return True
        if isinstance(value, cst.Call) and self.ctx.names.matches(value.func, ("torch.device",)):
            return len(value.args) == 1 and self._no_op_target(value.args[0].value, hops + 1)
        if isinstance(value, cst.Name) and hops < 3:
            values = self.ctx.names.values_at(value)
            return bool(values) and all(v is not None and self._no_op_target(v, hops + 1) for v in values)
        return False

    # -- where the value goes --------------------------------------------------------------------------
    def _destination(self, node: cst.Call) -> Optional[str]:
        ctx = self.ctx
        value: cst.CSTNode = node
        parent = ctx.parent(value)
        # `.cuda().double()`, `.to(d).requires_grad_()`: the chain's end is the value stored
        while (
            isinstance(parent, cst.Attribute) and parent.attr.value in SELF_METHODS
            and isinstance(ctx.parent(parent), cst.Call) and ctx.parent(parent).func is parent
        ):
            value = ctx.parent(parent)
            parent = ctx.parent(value)
        if isinstance(parent, cst.Assign) and parent.value is value:
            for t in parent.targets:
                if isinstance(t.target, cst.Attribute):
                    return f"stored on `{ctx.code(t.target)}`"
            names = [t.target for t in parent.targets if isinstance(t.target, cst.Name)]
            for name in names:
                found = self._name_use(parent, name.value)
                if found is not None:
                    return found
            return None
        return self._sink(value)

    def _sink(self, value: cst.CSTNode) -> Optional[str]:
        """Where an expression is registered or optimized as a parameter."""
        ctx = self.ctx
        node, parent = value, ctx.parent(value)
        # inside a list or tuple of parameters given to an optimizer
        if isinstance(parent, cst.Element):
            seq = ctx.parent(parent)
            if isinstance(seq, (cst.List, cst.Tuple)):
                node, parent = seq, ctx.parent(seq)
        if not isinstance(parent, cst.Arg) or parent.value is not node:
            return None
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return None
        index = list(call.args).index(parent)
        f = call.func
        if isinstance(f, cst.Attribute) and f.attr.value == "register_parameter" and node is value and index == 1:
            return "registered with `register_parameter`"
        if isinstance(f, cst.Name) and f.value == "setattr" and node is value and index == 2:
            if isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self":
                return "stored with `setattr`"
            return None
        if index == 0 and _is_optimizer(ctx.names.qualified_names(f)):
            return "given to an optimizer"
        return None

    def _name_use(self, assign: cst.Assign, name: str) -> Optional[str]:
        """A later use of the local ``name`` that stores it on an attribute, registers it or optimizes it."""
        ctx = self.ctx
        scope = ctx.enclosing(assign, cst.FunctionDef) or ctx.module
        for use in ctx.names_in(scope, name):
            parent = ctx.parent(use)
            if isinstance(parent, cst.Assign) and parent.value is use:
                if any(isinstance(t.target, cst.Attribute) for t in parent.targets):
                    return f"stored on `{ctx.code(next(t.target for t in parent.targets if isinstance(t.target, cst.Attribute)))}`"
                continue
            found = self._sink(use)
            if found is not None:
                return found
        return None

    # -- the fix ---------------------------------------------------------------------------------------
    def _fix(self, node: cst.Call, param: cst.Call, func: cst.Attribute) -> Optional[Fix]:
        first = arg(param, 0, "data")
        if first is None or first.star:
            return None
        moved = cst.Call(func=cst.Attribute(value=as_operand(first.value), attr=func.attr), args=node.args)
        args = [a.with_changes(value=moved) if a is first else a for a in param.args]
        return self.make_fix().replace(node, param.with_changes(args=args))
