from __future__ import annotations

import re
from typing import List

import libcst as cst

from torchlint.analysis.names import dotted_name
from torchlint.analysis.walk import iter_nodes
from torchlint.rule import Invalid, LintRule, Valid

DATASET_BASES = frozenset(
    {"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.TensorDataset"}
)
#: misspellings of ``__getitem__`` seen in the wild: ``__item__``, ``__get_item__``, ``__getitem``, ``_getitem_``,
#: ``__getItem__``, ``__get_item``, ``__getitems__`` is a real (batched) hook and is not one of them
_MISSPELLED = re.compile(r"^_{1,2}(get_?item|item|getItem|get_Item)_{0,2}$")
CORRECT = "__getitem__"


class DatasetGetitemMisspelled(LintRule):
    """
    ## What it does
    Finds a `torch.utils.data.Dataset` subclass (directly or through a base class of the same file)
    that defines `__item__`, `__get_item__`, `__getitem`, `_getitem_` or `__getItem__` and no
    `__getitem__`.

    ## Why is this bad?
    `DataLoader` reads samples with `dataset[i]`, which calls `__getitem__`; a misspelled method is
    never called. The base `Dataset.__getitem__` raises `NotImplementedError`, so the failure appears
    only when the loader first iterates — often in a worker process, with a traceback that does not
    name the typo — or never, when a subclass of another dataset inherits a working `__getitem__` and
    silently returns the parent's samples. The PyTorch Cookbook's custom-dataset snippet (Zhang Hao,
    2019) and Effective PyTorch's data-loading section define `__getitem__` and `__len__`.

    ## Example
    ```python
    class Pairs(Dataset):
        def __get_item__(self, i):
            return self.x[i], self.y[i]
    ```

    ## Use instead
    ```python
    class Pairs(Dataset):
        def __getitem__(self, i):
            return self.x[i], self.y[i]
    ```

    ## Fix safety
    The fix renames the method to `__getitem__` when nothing in the file calls it by its misspelled
    name (safe: the method is then used the way it was written to be). Otherwise no fix is offered.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.utils.data.Dataset](https://pytorch.org/docs/stable/data.html#torch.utils.data.Dataset)
    - PyTorch Cookbook (PyTorch 常用代码段整理合集), Zhang Hao, 2019: <https://zhuanlan.zhihu.com/p/59205847>
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL507"
    NAME = "dataset-getitem-misspelled"
    MESSAGE = "`{name}` is never called by `DataLoader`: a `Dataset` must define `__getitem__`"
    FIX_TITLE = "Rename to `__getitem__`"
    TRIGGERS = ("item", "Item")

    VALID = [
        Valid(
            """
from torch.utils.data import Dataset

class Pairs(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]
"""
        ),
        Valid(
            """
class Record:
    def __get_item__(self, i):
        return i
"""
        ),
        Valid(
            """
from torch.utils.data import Dataset

class Pairs(Dataset):
    def __getitem__(self, i):
        return self._get_item(i)

    def _get_item(self, i):
        return i
"""
        ),
        Valid(
            """
from torch.utils.data import Dataset

class Batched(Dataset):
    def __getitems__(self, indices):
        return [i for i in indices]

    def __getitem__(self, i):
        return i
"""
        ),
        Valid(
            """
from torch.utils.data import Dataset

class Pairs(Dataset):
    def getitem(self, i):
        return i

    def __getitem__(self, i):
        return self.getitem(i)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
from torch.utils.data import Dataset

class Pairs(Dataset):
    def __len__(self):
        return 10

    def __get_item__(self, i):
        return i
""",
            fixed="""
from torch.utils.data import Dataset

class Pairs(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i
""",
            line=8,
            col=9,
            message="`__get_item__`",
        ),
        Invalid(
            """
import torch

class Base(torch.utils.data.Dataset):
    pass

class Images(Base):
    def __item__(self, i):
        return i
""",
            fixed="""
import torch

class Base(torch.utils.data.Dataset):
    pass

class Images(Base):
    def __getitem__(self, i):
        return i
""",
        ),
        Invalid(
            """
from torch.utils import data

class Frames(data.Dataset):
    def __getitem(self, i):
        return i

    def first(self):
        return self.__getitem(0)
""",
        ),
    ]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not isinstance(node.body, cst.IndentedBlock) or not self._is_dataset(node, 0):
            return
        methods: List[cst.FunctionDef] = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        if any(m.name.value == CORRECT for m in methods):
            return
        for m in methods:
            if _MISSPELLED.match(m.name.value) and m.name.value != CORRECT:
                self.report(m.name, self.MESSAGE.format(name=m.name.value), fix=self._fix(node, m))

    def _is_dataset(self, cls: cst.ClassDef, depth: int) -> bool:
        for base in cls.bases:
            if self.ctx.names.matches(base.value, DATASET_BASES):
                return True
            local = self.ctx.classes().get(dotted_name(base.value) or "")
            if local is not None and local is not cls and depth < 5 and self._is_dataset(local, depth + 1):
                return True
        return False

    def _fix(self, cls: cst.ClassDef, method: cst.FunctionDef):
        if name_used(self.ctx, method.name.value, method.name):
            return None
        return self.make_fix().replace(method.name, cst.Name(CORRECT))


def name_used(ctx, name: str, definition: cst.Name) -> bool:
    """Whether ``name`` appears in the file other than at ``definition`` (as a variable or an attribute)."""
    if name not in ctx.source:
        return False
    for n in iter_nodes(ctx.module):
        if isinstance(n, cst.Attribute) and n.attr.value == name:
            return True
        if isinstance(n, cst.Name) and n.value == name and n is not definition:
            return True
    return False
