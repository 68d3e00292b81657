from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import arg, keyword_arg
from torchlint.analysis.definitions import position
from torchlint.families.api.rewrite import literal_value
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.rule import Fix, Invalid, LintRule, Valid

LOAD_FUNCS = frozenset({"torch.load", "torch.serialization.load"})
SAVE_FUNCS = frozenset({"torch.save", "torch.serialization.save"})
BUFFERS = frozenset({"io.BytesIO", "_io.BytesIO"})
SAFE_DEFAULT_SINCE = (2, 6)
WEIGHTS_ONLY_SINCE = (1, 13)  # torch.load's `weights_only` argument


class TorchLoadWithoutWeightsOnly(LintRule):
    """
    ## What it does
    Finds `torch.load(..., weights_only=False)`, and `torch.load(...)` without `weights_only` when the
    project supports a torch older than 2.6 (option `target-torch`), where the default was `False`.
    A `weights_only` given by a variable is not reported (its value is unknown); `torch.jit.load`
    loads TorchScript archives, not pickles, and is not this function. Nor is a load of an in-memory
    buffer (`io.BytesIO()`) that `torch.save` filled earlier in the same function: a deep copy of an
    object through memory reads only what the program itself wrote.

    ## Why is this bad?
    With `weights_only=False`, `torch.load` unpickles the file, and unpickling runs whatever code the
    file names: loading a checkpoint downloaded from the internet, or one a colleague shared, can run
    arbitrary commands (Bandit B614, Semgrep's and Sonar's PyTorch pickle rules flag the same call).
    The PyTorch Cookbook's checkpoint snippets (Zhang Hao, 2019) call `torch.load(path)` and were
    written when that meant a full unpickle; torch 2.6 made `weights_only=True` the default, which
    loads tensors, dicts, lists and primitive types only. Projects that still support older torch get
    the unsafe default unless they pass `weights_only=True`.

    ## Example
    ```python
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
    ```

    ## Use instead
    ```python
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
    ```

    ## Fix safety
    The fix sets `weights_only=True` and is unsafe: a checkpoint that pickles other objects (an
    `argparse.Namespace`, a whole model saved with `torch.save(model)`, numpy arrays) no longer loads
    and raises an `UnpicklingError`. Those files must then be re-saved as state dicts, or their classes
    allowed with `torch.serialization.add_safe_globals`; where the file is trusted, keep `False` and add
    `# noqa: TL501` with the reason. For a project that supports a torch older than 1.13 (its
    `target-torch`, or the lower bound its pyproject.toml / requirements declare) a call without
    `weights_only` gets no fix: the argument does not exist there and passing it raises a `TypeError`;
    the message says so (load only trusted files, or raise the requirement to torch>=1.13).

    ## Options
    - `target-torch` (default `"auto"`): the oldest torch the project supports; below 2.6 a call
      without `weights_only` is reported too. `"auto"` reads the project's declared torch requirement.

    TorchFix: TOR102 maps to this rule.

    ## References
    - [torch.load](https://pytorch.org/docs/stable/generated/torch.load.html)
    - [Serialization semantics: weights_only](https://pytorch.org/docs/stable/notes/serialization.html#weights-only)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    """

    CODE = "TL501"
    NAME = "torch-load-without-weights-only"
    MESSAGE = "`torch.load` with `weights_only=False` unpickles the file and can run arbitrary code; pass `weights_only=True`"
    FIX_TITLE = "Pass `weights_only=True`"
    FIX_SAFETY = "unsafe"
    TRIGGERS = ("load",)
    OPTIONS = {"target-torch": TARGET_TORCH}

    VALID = [
        Valid(
            """
import torch

state = torch.load("model.pt", map_location="cpu", weights_only=True)
"""
        ),
        Valid(
            """
import torch

def restore(path):
    return torch.load(path)
"""
        ),
        Valid(
            """
import torch

def restore(path, trusted):
    return torch.load(path, weights_only=not trusted)
""",
            options={"target-torch": "2.0"},
        ),
        Valid(
            """
import torch

scripted = torch.jit.load("model.pt")
"""
        ),
        Valid(
            """
import pickle
import json

def load(path):
    with open(path, "rb") as fh:
        return pickle.load(fh), json.load(fh)
"""
        ),
        Valid(
            """
import torch

def restore(path, **kw):
    return torch.load(path, **kw)
""",
            options={"target-torch": "2.0"},
        ),
        # a deep copy of a whole module through memory: the bytes were written by `torch.save` just before
        Valid(
            """
import io

import torch


def clone(module):
    with io.BytesIO() as buf:
        torch.save(module, buf)
        buf.seek(0)
        return torch.load(buf, weights_only=False)


def clone_again(module):
    buf = io.BytesIO()
    torch.save(module, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch

def restore(model, path):
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["model"])
""",
            fixed="""
import torch

def restore(model, path):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])
""",
            unsafe=True,
            line=5,
            col=13,
        ),
        Invalid(
            """
import torch

state = torch.load("ckpt.pt", map_location="cpu")
""",
            fixed="""
import torch

state = torch.load("ckpt.pt", map_location="cpu", weights_only=True)
""",
            unsafe=True,
            options={"target-torch": "2.4"},
            message="before torch 2.6",
        ),
        Invalid(
            """
from torch import load as tload

def restore(path):
    return tload(path, False, weights_only=False)
""",
            fixed="""
from torch import load as tload

def restore(path):
    return tload(path, False, weights_only=True)
""",
            unsafe=True,
        ),
        Invalid(
            """
import torch.serialization

obj = torch.serialization.load(open("f.pt", "rb"))
""",
            fixed="""
import torch.serialization

obj = torch.serialization.load(open("f.pt", "rb"), weights_only=True)
""",
            unsafe=True,
            options={"target-torch": "1.13"},
        ),
        # torch 1.5 has no `weights_only`: the advice says why, and there is no edit
        Invalid(
            """
import torch
state = torch.load("ckpt.pt", map_location="cpu")
""",
            options={"target-torch": "1.5"},
            message="has no `weights_only`",
        ),
        # a buffer filled from a file holds that file's bytes
        Invalid(
            """
import io

import torch


def restore(path):
    buf = io.BytesIO(open(path, "rb").read())
    return torch.load(buf, weights_only=False)
""",
            line=9,
            fixed="""
import io

import torch


def restore(path):
    buf = io.BytesIO(open(path, "rb").read())
    return torch.load(buf, weights_only=True)
""",
            unsafe=True,
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.target = target_version(self.options.get("target-torch"))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.matches(node.func, LOAD_FUNCS):
            return
        if self._saved_here(node):
            return  # a round trip through memory (a deep copy of a module): the bytes are this program's own
        given = keyword_arg(node, "weights_only")
        if given is not None:
            if literal_value(given.value) is False:
                fix = self.make_fix().replace(given, given.with_changes(value=cst.Name("True")))
                self.report(node, self.quoting(node, self.MESSAGE), fix=fix)
            return
        if self.target >= SAFE_DEFAULT_SINCE:
            return
        if any(a.star == "**" for a in node.args):
            return  # weights_only may come in **kwargs
        major, minor = self.target
        if self.target < WEIGHTS_ONLY_SINCE:
            message = (
                f"`torch.load` unpickles the file, which can run arbitrary code; the project supports torch "
                f"{major}.{minor}, whose `torch.load` has no `weights_only` (added in torch 1.13, a TypeError "
                "before): load only trusted files, or require torch>=1.13 and pass `weights_only=True`"
            )
            self.report(node, self.quoting(node, message))
            return
        message = (
            f"`torch.load` without `weights_only` unpickles the file before torch 2.6 (the project "
            f"supports torch {major}.{minor}), which can run arbitrary code; pass `weights_only=True`"
        )
        self.report(node, self.quoting(node, message), fix=self._add_keyword(node))

    def _saved_here(self, node: cst.Call) -> bool:
        """``torch.load(buf)`` of an in-memory buffer (``io.BytesIO()``, bound by assignment or ``with``) that
        ``torch.save`` filled earlier in the same function: nothing outside the program wrote what is read."""
        ctx = self.ctx
        given = arg(node, 0, "f")
        if given is None or not isinstance(given.value, cst.Name):
            return False
        name = given.value.value
        scope = ctx.names.scope_at(node)
        owner = scope.node if scope is not None and scope.kind == "function" else ctx.module
        if not self._in_memory(node, given.value, owner):
            return False
        at = position(ctx, node)
        for call in ctx.calls_in(owner):
            if position(ctx, call) >= at or not ctx.names.matches(call.func, SAVE_FUNCS):
                continue
            target = arg(call, 1, "f")
            if target is not None and isinstance(target.value, cst.Name) and target.value.value == name:
                return True
        return False

    def _in_memory(self, load: cst.Call, buf: cst.Name, owner: cst.CSTNode) -> bool:
        ctx = self.ctx
        for a in ctx.ancestors(load):
            if a is owner:
                break
            if isinstance(a, cst.With):
                for item in a.items:
                    if item.asname is not None and isinstance(item.asname.name, cst.Name) and \
                            item.asname.name.value == buf.value:
                        return isinstance(item.item, cst.Call) and ctx.names.matches(item.item.func, BUFFERS)
        values = ctx.names.values_before(buf)
        return bool(values) and all(isinstance(v, cst.Call) and ctx.names.matches(v.func, BUFFERS) for v in values)

    def _add_keyword(self, node: cst.Call) -> Optional[Fix]:
        if not node.args:
            return None
        last = node.args[-1]
        args = list(node.args[:-1])
        args.append(last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("weights_only"), comma=last.comma,
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return self.make_fix().replace(node, node.with_changes(args=args))
