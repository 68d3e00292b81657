from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import keyword_arg
from torchlint.families.api.rewrite import literal_value
from torchlint.analysis.torch_version import TARGET_TORCH, target_version
from torchlint.rule import Fix, Invalid, LintRule, Valid

LOAD_FUNCS = frozenset({"torch.load", "torch.serialization.load"})
SAFE_DEFAULT_SINCE = (2, 6)
WEIGHTS_ONLY_SINCE = (1, 13)  # torch.load's `weights_only` argument


class TorchLoadWithoutWeightsOnly(LintRule):
    """
    ## What it does
    Finds `torch.load(..., weights_only=False)`, and `torch.load(...)` without `weights_only` when the
    project supports a torch older than 2.6 (option `target-torch`), where the default was `False`.
    A `weights_only` given by a variable is not reported (its value is unknown); `torch.jit.load`
    loads TorchScript archives, not pickles, and is not this function.

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
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self.target = target_version(self.options.get("target-torch"))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.matches(node.func, LOAD_FUNCS):
            return
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

    def _add_keyword(self, node: cst.Call) -> Optional[Fix]:
        if not node.args:
            return None
        last = node.args[-1]
        args = list(node.args[:-1])
        args.append(last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("weights_only"), comma=last.comma,
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return self.make_fix().replace(node, node.with_changes(args=args))
