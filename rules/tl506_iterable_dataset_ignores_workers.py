from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from torchlint.analysis.context import keyword_arg
from torchlint.analysis.names import dotted_name
from torchlint.rule import Invalid, LintRule, Valid

ITERABLE_BASES = frozenset({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"})
LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
#: words that show the dataset (or its loader) splits the work between workers
_SHARDING_WORDS = ("get_worker_info", "worker_id", "num_workers", "worker_info", "split_by_worker", "shard")


class IterableDatasetIgnoresWorkers(LintRule):
    """
    ## What it does
    Finds an `IterableDataset` subclass whose `__iter__` never looks at
    `torch.utils.data.get_worker_info()` (nor does anything else in the class), when the file also
    loads it with a `DataLoader` whose `num_workers` is a literal greater than 0 and that has no
    `worker_init_fn`.

    ## Why is this bad?
    A `DataLoader` with `num_workers=N` copies an iterable dataset into each of the N worker
    processes and iterates every copy; unless `__iter__` splits the stream by
    `get_worker_info().id`, each sample arrives N times per epoch. Training sees duplicated data
    (and an epoch N times longer) without any error. Effective PyTorch's data-loading section shows
    exactly this: a `TarImageDataset` loaded with `num_workers=8` ("data contains duplicated items"),
    fixed by reading `torch.utils.data.get_worker_info()` in `__iter__`.

    ## Example
    ```python
    class Lines(IterableDataset):
        def __iter__(self):
            yield from open(self.path)

    loader = DataLoader(Lines("train.txt"), num_workers=4)
    ```

    ## Use instead
    ```python
    class Lines(IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            lines = open(self.path)
            if info is not None:
                lines = itertools.islice(lines, info.id, None, info.num_workers)
            yield from lines
    ```

    ## Fix safety
    No fix: how to split the stream (by file, by line, by shard) depends on the data.

    ## Options
    None.

    TorchFix has no equivalent.

    ## References
    - [torch.utils.data.IterableDataset](https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL506"
    NAME = "iterable-dataset-ignores-workers"
    MESSAGE = (
        "`def __iter__` of `{cls}` ignores `get_worker_info()` but a `DataLoader` in this file runs it with {n} workers: every "
        "worker yields the whole stream, so each sample comes {n} times"
    )
    TRIGGERS = ("IterableDataset",)

    VALID = [
        Valid(
            """
import torch
from torch.utils.data import DataLoader, IterableDataset

class Lines(IterableDataset):
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for i, line in enumerate(open("f.txt")):
            if info is None or i % info.num_workers == info.id:
                yield line

loader = DataLoader(Lines(), num_workers=4)
"""
        ),
        Valid(
            """
from torch.utils.data import DataLoader, IterableDataset

class Lines(IterableDataset):
    def __iter__(self):
        yield from open("f.txt")

loader = DataLoader(Lines(), num_workers=0)
"""
        ),
        Valid(
            """
from torch.utils.data import DataLoader, IterableDataset

class Lines(IterableDataset):
    def __iter__(self):
        yield from open("f.txt")

def make(workers):
    return DataLoader(Lines(), num_workers=workers)
"""
        ),
        Valid(
            """
from torch.utils.data import DataLoader, IterableDataset

class Range(IterableDataset):
    def __init__(self):
        self.start, self.end = 0, 10

    def __iter__(self):
        return iter(range(self.start, self.end))

def init(worker_id):
    pass

loader = DataLoader(Range(), num_workers=2, worker_init_fn=init)
"""
        ),
        Valid(
            """
from torch.utils.data import DataLoader, Dataset

class Items(Dataset):
    def __iter__(self):
        yield from range(3)

loader = DataLoader(Items(), num_workers=2)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
from torch.utils.data import DataLoader, IterableDataset

class Lines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        yield from open(self.path)

loader = DataLoader(Lines("train.txt"), batch_size=32, num_workers=4)
""",
            line=8,
            col=9,
            message="comes 4 times",
        ),
        Invalid(
            """
import torch

class Stream(torch.utils.data.IterableDataset):
    def __iter__(self):
        return iter(range(100))

dataset = Stream()
loader = torch.utils.data.DataLoader(dataset, num_workers=8)
""",
        ),
        Invalid(
            """
from torch.utils.data import DataLoader, IterableDataset

class Base(IterableDataset):
    pass

class Tar(Base):
    def __iter__(self):
        yield 1

def loaders():
    return DataLoader(Tar(), num_workers=2), DataLoader(Tar(), num_workers=0)
""",
        ),
    ]

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._loaders: List[tuple] = []  # (class name, workers, call)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.ctx.names.matches(node.func, LOADERS) or not node.args:
            return
        if keyword_arg(node, "worker_init_fn") is not None:
            return
        workers_arg = keyword_arg(node, "num_workers")
        if workers_arg is None or not isinstance(workers_arg.value, cst.Integer):
            return
        workers = int(workers_arg.value.value, 0)
        if workers <= 0:
            return
        dataset = node.args[0].value if node.args[0].keyword is None else None
        if dataset is None:
            return
        if isinstance(dataset, cst.Name):
            assigned_values = self.ctx.names.values_before(dataset)
            value = assigned_values[-1] if assigned_values else None
            dataset = value if value is not None else dataset
        if isinstance(dataset, cst.Call):
            name = dotted_name(dataset.func)
            if name is not None:
                self._loaders.append((name, workers, node))

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: Dict[str, bool] = {}
        for name, workers, call in self._loaders:
            if name in reported:
                continue
            cls = self.ctx.classes().get(name)
            if cls is None or not self._iterable(cls, 0):
                continue
            method = self._iter_method(cls)
            if method is None or self._shards(cls):
                continue
            reported[name] = True
            self.report(method.name, self.MESSAGE.format(cls=name, n=workers))

    def _iterable(self, cls: cst.ClassDef, depth: int) -> bool:
        for base in cls.bases:
            if self.ctx.names.matches(base.value, ITERABLE_BASES):
                return True
            local = self.ctx.classes().get(dotted_name(base.value) or "")
            if local is not None and local is not cls and depth < 5 and self._iterable(local, depth + 1):
                return True
        return False

    @staticmethod
    def _iter_method(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
        if not isinstance(cls.body, cst.IndentedBlock):
            return None
        for stmt in cls.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__iter__":
                return stmt
        return None

    def _shards(self, cls: cst.ClassDef) -> bool:
        code = self.ctx.bare_code(cls)
        if any(w in code for w in _SHARDING_WORDS):
            return True
        # a helper of the module that the class calls may read the worker info
        return "get_worker_info" in self.ctx.bare_code(self.ctx.module) and any(
            isinstance(c.func, cst.Name) and c.func.value in self.ctx.functions() for c in self.ctx.calls_in(cls)
        )
