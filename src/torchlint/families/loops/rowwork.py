"""Independent per-slice work in Python loops, decided from data flow (the per-row indexing rule's wider net).

A loop is *independent per-slice work* when every iteration reads slices of tensors at the loop's own
position (``x[i]``, ``x[:, j]``, ``x[..., i:i + k]``, or the rows of ``for row in x``), computes with
torch operations, and writes its result only to a place no other iteration touches or to an
order-independent accumulation:

- ``out[i] = ...`` (the same position it read),
- ``results.append(...)`` to a list made before the loop (stacked afterwards, or a list of Python
  numbers),
- ``counts[labels[i]] += ...`` / ``total += ...`` (a scatter or a reduction: the order of the additions
  does not matter).

What each iteration reads is checked against what iterations write: a name read before the iteration
assigns it (``h = cell(x[t], h)``), a tensor read at another position than the one written
(``x[i] = x[i] + x[i - 1]``), or the loop variable used in arithmetic, as a key or in a call is
a dependence between iterations or something the analysis cannot follow, and the loop is left alone.
So are loops with an exit (``break``, ``return``, ``continue``, ``raise``, ``yield``), nested loops,
calls of unknown functions (I/O, logging, helpers of unknown behaviour), data-dependent shapes
(``nonzero``, boolean-mask indexing, per-row lengths), loops over modules or parameters (the iterated
value must be a tensor), and small literal trip counts.

The result names the vectorized idiom that fits the loop: a mask and ``torch.where`` when the body
branches on the data, ``index_add_`` / ``scatter_add_`` / ``bincount`` for scatters, ``unfold`` for
windows, a reduction with ``dim`` for per-column work and for lists of Python numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg
from torchlint.analysis.names import target_names
from torchlint.analysis.definitions import called_function, strip_moves
from torchlint.families.shapes.shapes import is_tensor, literal_dims, shape_of
from torchlint.analysis.walk import children, iter_nodes

_DATA_DEPENDENT = frozenset(
    {"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "nonzero_static", "split",
     "tensor_split", "chunk", "tolist", "numpy", "append", "extend", "insert", "pop", "remove", "clear",
     "backward", "cpu", "cuda", "to", "save", "write", "register_buffer", "bincount", "histc", "histogram"}
)
_TO_NUMBER = frozenset({"item"})
_NUMBER_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.abs", "builtins.round"})
_COLLECTORS = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.vstack",
                         "torch.hstack", "torch.dstack", "torch.tensor", "torch.as_tensor", "torch.Tensor",
                         "torch.FloatTensor", "torch.LongTensor"})
# methods numpy arrays and lists do not have: a slice calling them is a tensor
_TENSOR_ONLY_METHODS = frozenset(
    {"unsqueeze", "view", "norm", "softmax", "log_softmax", "detach", "float", "double", "half", "long", "int",
     "bool", "size", "dim", "numel", "permute", "expand", "expand_as", "matmul", "mm", "bmm", "exp", "log",
     "sigmoid", "tanh", "relu", "abs", "pow", "sqrt", "amax", "amin", "logsumexp", "type_as", "view_as",
     "masked_fill", "topk", "sort", "argsort", "cumsum", "clamp", "contiguous", "t", "flatten", "norm"}
)
# fields of the named tuples that selections return (`x[i].topk(k).indices`)
_RESULT_FIELDS = frozenset({"values", "indices"})
# per-row selections and full reductions: each gives one value (or `k` values) per row, so a list of them
# is uniform
_SELECTIONS = frozenset({"argmax", "argmin", "topk", "kthvalue", "median", "mode", "sort", "argsort", "max", "min"})
_FULL_REDUCTIONS = frozenset({"argmax", "argmin", "sum", "mean", "max", "min", "std", "var", "norm", "prod", "all",
                              "any", "count_nonzero", "median", "amax", "amin", "logsumexp", "nansum", "nanmean"})
# what a per-row class or outcome is converted with: `int(y[i])`, `y[i].item()`, `y[i].long()`
_KEY_METHODS = frozenset({"item", "long", "int"})
_PRODUCTS = frozenset({"matmul", "mm", "mv", "dot", "inner", "einsum"})
_ESCAPES = (cst.Break, cst.Continue, cst.Return, cst.Raise, cst.Global, cst.Nonlocal, cst.Del)


@dataclass
class RowWork:
    loop: cst.CSTNode  # the `for` statement, or the list comprehension
    tensor: cst.BaseExpression  # the tensor whose slices the loop walks
    dim: int  # the dimension walked
    window: bool = False
    branches: bool = False  # the body branches on the data
    scatter: bool = False  # `acc[idx[i]] += ...`
    numbers: bool = False  # collects Python numbers
    reduction: bool = False  # `total += ...`
    tally: bool = False  # counts per class (`counts[int(y[i].item())] += 1`) or per outcome (`correct += 1`)
    selection: Optional[str] = None  # a per-row selection (`x[i].topk(k)`, `torch.argmax(x[i])`)
    product: bool = False  # a row multiplied as a matrix (`row @ k.T`, `torch.dot(a[i], v)`): per-row scores
    read: List[str] = field(default_factory=list)  # the tensors read slice by slice
    pair: bool = False  # the accumulator is indexed by two classes (`cm[t, p] += 1`): a confusion matrix

    def idiom(self) -> str:
        if self.pair and self.tally:
            return ("count all pairs in one call: `torch.bincount(t * n + p, minlength=n * n).view(n, n)` "
                    "(or `cm.index_put_((t, p), torch.ones_like(t), accumulate=True)`)")
        if self.tally and self.scatter:
            return ("count all elements in one call: `torch.bincount(labels, minlength=n)` per class (with a "
                    "boolean mask for the elements that qualify, e.g. `labels[preds == labels]`)")
        if self.tally:
            return "a boolean mask over all elements and one `.sum()` (e.g. `(preds == labels).sum().item()`)"
        if self.selection is not None and not self.branches:
            then = " and a single `.tolist()`" if self.numbers else ""
            return f"one `{self.selection}` over all rows at once (with `dim=`){then}, instead of one call per row"
        if self.product and not self.branches and not self.numbers:
            return ("one `matmul` over all rows (`x @ w`, or `torch.einsum`): the per-row scores are the rows "
                    "of one product")
        if self.scatter:
            return "a scatter over all rows at once: `index_add_` / `scatter_add_`, or `torch.bincount` for counts"
        if self.window:
            return f"`Tensor.unfold({self.dim}, size, step)` to see every window at once, then one batched op"
        if self.branches:
            return "a boolean mask over all rows and `torch.where` (or masked assignment) instead of the `if`"
        if self.numbers:
            return "one batched op over all slices (reductions with `dim=`) and a single `.tolist()`"
        if self.dim != 0:
            return "batched ops and reductions with `dim=` over all slices at once"
        if self.reduction:
            return "batched ops along dim 0 and one reduction with `dim=0`"
        return "batched ops along dim 0 (`torch.vmap` where no batched op exists)"


# -- the loop header -------------------------------------------------------------------------------


def _int(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _int(node.expression)
        return -inner if inner is not None else None
    return None


def _dim_of(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0) -> Optional[Tuple[cst.BaseExpression, int]]:
    """(tensor, k) when ``expr`` is the size of dimension ``k`` of ``tensor``: ``x.size(k)``,
    ``x.shape[k]``, ``len(x)``, or a name bound once to one of them or unpacked from ``x.shape``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
        a = arg(expr, 0, "dim")
        k = _int(a.value) if a is not None else None
        if k is not None and len(expr.args) == 1:
            return expr.func.value, k
        return None
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        k = _int(expr.slice[0].slice.value)
        base = expr.value
        if k is None:
            return None
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            return base.value, k
        if isinstance(base, cst.Call) and not base.args and isinstance(base.func, cst.Attribute) \
                and base.func.attr.value == "size":
            return base.func.value, k
        return None
    if isinstance(expr, cst.Call) and ctx.names.matches(expr.func, frozenset({"builtins.len"})) and len(expr.args) == 1:
        return expr.args[0].value, 0
    if isinstance(expr, cst.Call) and ctx.names.matches(expr.func, frozenset({"builtins.min"})) and len(expr.args) >= 2 \
            and depth < 2 and all(a.keyword is None and not a.star for a in expr.args):
        # `min(a.shape[0], b.shape[0])`: the rows both tensors have, a row count of the first
        dims = [_dim_of(ctx, a.value, depth + 1) for a in expr.args]
        return dims[0] if all(d is not None for d in dims) else None
    if isinstance(expr, cst.Name) and depth == 0:
        bound = ctx.names.bound_values(expr)
        if len(bound) != 1:
            return None
        value = bound[0]
        if value is not None:
            return _dim_of(ctx, value, 1)
        return _unpacked(ctx, expr)
    return None


def _unpacked(ctx: FileContext, name: cst.Name) -> Optional[Tuple[cst.BaseExpression, int]]:
    """``b, c, h, w = x.shape`` / ``= x.size()``: the position of ``name`` is the dimension."""
    scope = ctx.names.function_scope_node() or ctx.module
    for assign in ctx.contents(scope).assigns:
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)):
            continue
        names = [el.value for el in target.elements]
        if any(isinstance(el, cst.StarredElement) for el in target.elements):
            continue
        pos = next((k for k, n in enumerate(names) if isinstance(n, cst.Name) and n.value == name.value), None)
        if pos is None:
            continue
        value = assign.value
        if isinstance(value, cst.Attribute) and value.attr.value == "shape":
            return value.value, pos
        if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "size":
            return value.func.value, pos
    return None


@dataclass
class _Header:
    var: Optional[str]  # the index variable
    row: Optional[str]  # the row variable of `for row in x` / `for i, row in enumerate(x)`
    tensor: cst.BaseExpression
    dim: int
    window: Optional[cst.BaseExpression] = None  # `w` of `range(x.size(k) - w + 1)`
    sized: bool = False  # the bound calls `x.size(k)`: lists and arrays have no such method
    shaped: bool = False  # the bound reads `x.shape`: a tensor or an array, not a list
    extra_rows: Tuple[str, ...] = ()  # the other row variables of `for a, b in zip(x, y)`
    zipped: Tuple[cst.BaseExpression, ...] = ()  # the other tensors walked by `zip`

    def iteration_names(self) -> Tuple[Optional[str], ...]:
        return (self.var, self.row) + self.extra_rows


def _header(ctx: FileContext, loop: cst.For) -> Optional[_Header]:
    return _header_of(ctx, loop.iter, loop.target, loop)


def _header_of(ctx: FileContext, it: cst.BaseExpression, target: cst.BaseExpression,
               loop: Optional[cst.For]) -> Optional[_Header]:
    """What ``for target in it`` walks; ``loop`` is the ``for`` statement (None for a comprehension's
    clause, whose element cannot read a loader's batch size from a body)."""
    if isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.range"})):
        if not isinstance(target, cst.Name) or any(a.keyword is not None or a.star for a in it.args):
            return None
        args = [a.value for a in it.args]
        if len(args) == 2 and _int(args[0]) == 0:
            args = args[1:]
        if len(args) != 1:
            return None  # a start or a step: a subset of the slices, or windows with a stride
        stop = args[0]
        if _int(stop) is not None:
            return None  # a literal trip count
        found = _dim_of(ctx, stop)
        window = None
        if found is None and isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Add) \
                and _int(stop.right) == 1 and isinstance(stop.left, cst.BinaryOperation) \
                and isinstance(stop.left.operator, cst.Subtract):
            found = _dim_of(ctx, stop.left.left)
            window = stop.left.right
        if found is None:
            if loop is None:
                return None
            walked = _loader_batch_rows(ctx, loop, stop, target.value)
            if walked is None:
                return None
            # `range(self.batch_size)`: the size a DataLoader of the file is given as `batch_size=`; the
            # loop walks the rows it reads at the index (a tensor by how the body uses them)
            return _Header(target.value, None, walked, 0, None, True, True)
        code = ctx.code(stop) if found is None or not isinstance(stop, cst.Name) else ctx.code(
            ctx.names.bound_values(stop)[0] or stop)
        return _Header(target.value, None, found[0], found[1], window, ".size(" in code, ".shape" in code)
    if isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.enumerate"})):
        if len(it.args) != 1 or it.args[0].keyword is not None:
            return None
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
            return None
        i, row = target.elements[0].value, target.elements[1].value
        if isinstance(i, cst.Name) and isinstance(row, cst.Name):
            return _Header(i.value, row.value, it.args[0].value, 0)
        return None
    if isinstance(target, cst.Name) and isinstance(it, (cst.Name, cst.Attribute)):
        return _Header(None, target.value, it, 0)
    if isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.zip"})) \
            and isinstance(target, cst.Tuple) and len(target.elements) == len(it.args) >= 2:
        # `for p, t in zip(preds, labels)`: the rows of several tensors, element by element
        rows = [el.value for el in target.elements]
        walked = [a.value for a in it.args]
        if any(a.keyword is not None or a.star for a in it.args):
            return None
        if not all(isinstance(r, cst.Name) for r in rows) or not all(isinstance(w, (cst.Name, cst.Attribute))
                                                                    for w in walked):
            return None
        if not all(is_tensor(ctx, w) for w in walked):
            return None  # lists zipped together (file names, metrics): nothing says they are tensors
        names = tuple(r.value for r in rows)  # type: ignore[union-attr]
        return _Header(None, names[0], walked[0], 0, extra_rows=names[1:], zipped=tuple(walked[1:]))
    return None


_DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


def _loader_batch_sizes(ctx: FileContext) -> Set[str]:
    """The spellings of the ``batch_size=`` the file's ``DataLoader`` calls are given (``self.batch_size``).
    A file whose text never spells ``DataLoader`` calls none (asked during the walk, the answer would
    otherwise walk the whole module again)."""
    if "DataLoader" not in ctx.source:
        return set()
    return {
        ctx.code(a.value).strip()
        for call in ctx.calls_in(ctx.module) if ctx.names.matches(call.func, _DATA_LOADERS)
        for a in call.args if a.keyword is not None and a.keyword.value == "batch_size"
        and isinstance(a.value, (cst.Name, cst.Attribute))
    }


#: the file's DataLoader batch sizes, computed once per file
_LOADER_BATCH_SIZES: "Fact[Set[str]]" = Fact("rowwork.loader_batch_sizes", _loader_batch_sizes)


def _loader_batch_rows(ctx: FileContext, loop: cst.For, stop: cst.BaseExpression,
                       var: str) -> Optional[cst.BaseExpression]:
    """``for i in range(self.batch_size)`` where ``self.batch_size`` (or a name) is what a ``DataLoader`` of
    this file is given as ``batch_size=``: the loop walks a batch.  The walked tensor is the first one the
    body reads at ``[i]``."""
    if not isinstance(stop, (cst.Name, cst.Attribute)):
        return None
    if ctx.code(stop).strip() not in _LOADER_BATCH_SIZES.of(ctx):
        return None
    for node in iter_nodes(loop.body):
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Name) and node.slice[0].slice.value.value == var \
                and isinstance(node.value, cst.Name) and _drawn_from_loader(ctx, loop, node.value.value):
            return node.value
    return None


def _drawn_from_loader(ctx: FileContext, loop: cst.For, name: str) -> bool:
    """``name`` is a target of an enclosing ``for x, y in loader`` over a ``DataLoader`` built without a
    ``collate_fn`` (its default collate makes tensors)."""
    for owner in ctx.ancestors(loop):
        if isinstance(owner, cst.For) and any(n.value == name for n in target_names(owner.target)):
            values = ctx.names.values_before(owner.iter) if isinstance(owner.iter, (cst.Name, cst.Attribute)) else []
            return len(values) == 1 and isinstance(values[0], cst.Call) and ctx.names.matches(
                values[0].func, _DATA_LOADERS
            ) and not any(a.keyword is not None and a.keyword.value in ("collate_fn", "batch_sampler")
                          for a in values[0].args)
        if isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            return False
    return False


# -- the body --------------------------------------------------------------------------------------


class _Verdict(Exception):
    pass


def _simple_statements(ctx: FileContext, block: cst.BaseSuite, out: List[cst.BaseSmallStatement],
                       tests: List[cst.BaseExpression], guarded: Optional[Set[int]] = None,
                       under: bool = False) -> None:
    """The small statements of ``block`` in order, the tests of its ``if``s in ``tests``; the ids of
    the statements under an ``if`` go into ``guarded``."""
    if isinstance(block, cst.SimpleStatementSuite):
        out.extend(block.body)
        if under and guarded is not None:
            guarded.update(map(id, block.body))
        return
    for st in block.body:  # type: ignore[union-attr]
        if isinstance(st, cst.SimpleStatementLine):
            out.extend(st.body)
            if under and guarded is not None:
                guarded.update(map(id, st.body))
        elif isinstance(st, cst.If):
            tests.append(st.test)
            _simple_statements(ctx, st.body, out, tests, guarded, True)
            orelse = st.orelse
            while isinstance(orelse, cst.If):
                tests.append(orelse.test)
                _simple_statements(ctx, orelse.body, out, tests, guarded, True)
                orelse = orelse.orelse
            if isinstance(orelse, cst.Else):
                _simple_statements(ctx, orelse.body, out, tests, guarded, True)
        else:
            raise _Verdict()  # nested loops, with, try, defs


class _Body:
    def __init__(self, ctx: FileContext, loop: cst.CSTNode, head: _Header) -> None:
        self.ctx = ctx
        self.loop = loop
        self.head = head
        self.work = RowWork(loop, head.tensor, head.dim)
        self.locals: Set[str] = set()
        self.outputs: Set[str] = set()  # lists appended to, tensors written at the loop position
        self.sinks: List[cst.CSTNode] = []  # the nodes through which the outputs are written
        self.evidence = False  # a slice went into a torch function or a tensor-only method
        self.lists: Dict[str, List[cst.BaseExpression]] = {}
        self.guarded: Set[int] = set()  # the statements under an `if` on the data
        self.keys: Set[str] = set()  # locals holding the element's class (`c = labels[i].item()`)
        #: locals holding the loop's element itself (`c = labels[i]`): a class where it indexes what `+=` adds to
        self.elements: Set[str] = set()
        self.read_nodes: List[cst.BaseExpression] = []  # the tensors read at the loop position
        self.iteration_counts: Set[str] = set()  # `total += 1` outside any test

    def fail(self) -> None:
        raise _Verdict()

    # slices --------------------------------------------------------------------------------------
    def slice_position(self, sub: cst.Subscript) -> Optional[int]:
        """The position of the loop variable among ``sub``'s indices when it is there as a plain index
        (or, for windows, as ``i:i + w``); -1 when the loop variable is not in ``sub``'s indices."""
        var = self.head.var
        found = -1
        for k, el in enumerate(sub.slice):
            sl = el.slice
            if isinstance(sl, cst.Index):
                if isinstance(sl.value, cst.Call) and self._key_like(sl.value) and self._scatter_key(sub, sl.value):
                    continue  # `cm[int(t), int(p)] += 1`
                if isinstance(sl.value, cst.Name) and sl.value.value == var:
                    if found >= 0 or self.head.window is not None:
                        self.fail()
                    found = k
                elif var is not None and self.ctx.names_in(sl.value, var):
                    if self._scatter_key(sub, sl.value):
                        continue
                    self.fail()  # x[i - 1], x[idx[i]] outside a scatter
                elif isinstance(sl.value, cst.Name) and (sl.value.value in self.keys or sl.value.value in self.elements
                                                         or self._row_name(sl.value)) \
                        and self._scatter_key(sub, sl.value):
                    continue
                elif not _plain(sl.value) and not self._invariant(sl.value):
                    self.fail()  # x[idx_t] with idx_t computed in the iteration: data-dependent
            else:
                assert isinstance(sl, cst.Slice)
                bounds = [b for b in (sl.lower, sl.upper, sl.step) if b is not None]
                if var is not None and any(self.ctx.names_in(b, var) for b in bounds):
                    if self.head.window is None or not self._window_slice(sl) or found >= 0:
                        self.fail()
                    found = k
                elif any(_int(b) is None for b in bounds):
                    self.fail()  # ragged: x[i, :lengths[i]]
        return found

    def _invariant(self, node: cst.BaseExpression) -> bool:
        """A name the loop does not assign (an outer loop's index, a fixed mask): the same selection
        in every iteration."""
        return (
            isinstance(node, cst.Name) and node.value not in self.locals and node.value not in self.outputs
            and node.value not in self.head.iteration_names() and not _assigned_in(self.ctx, self.loop, node.value)
        )

    def _window_slice(self, sl: cst.Slice) -> bool:
        var, w = self.head.var, self.head.window
        up = sl.upper
        return (
            isinstance(sl.lower, cst.Name) and sl.lower.value == var and sl.step is None
            and isinstance(up, cst.BinaryOperation) and isinstance(up.operator, cst.Add)
            and isinstance(up.left, cst.Name) and up.left.value == var
            and w is not None and self.ctx.code(up.right).strip() == self.ctx.code(w).strip()
        )

    def _scatter_key(self, sub: cst.Subscript, key: cst.BaseExpression) -> bool:
        """``acc[idx[i]]`` as the target of ``+=``: the key reads ``idx`` at the loop position."""
        parent = self.ctx.parent(sub)
        if not (isinstance(parent, cst.AugAssign) and parent.target is sub and isinstance(parent.operator, cst.AddAssign)):
            return False
        if not all(isinstance(el.slice, cst.Index) and self._key_like(el.slice.value) for el in sub.slice):
            return False  # `cm[t, p] += 1`: every index a class of the iteration's elements
        if len(sub.slice) == 2:
            self.work.pair = True
        if isinstance(key, cst.Name) and (key.value in self.keys or key.value in self.elements or self._row_name(key)):
            self.work.scatter = True  # (an element itself indexes only as a 0-d integer: a class)
            return True
        key = self._key_element(key)
        if isinstance(key, cst.Name) and self._row_name(key):
            self.work.scatter = True  # `int(t)` of `for t in labels`
            return True
        if not isinstance(key, cst.Subscript):
            return False
        inner = self.slice_position(key)
        if inner != 0 or not isinstance(key.value, (cst.Name, cst.Attribute)):
            return False
        code = self.ctx.code(key.value).strip()
        if code not in self.work.read:
            self.work.read.append(code)
            self.read_nodes.append(key.value)
        self.work.scatter = True
        return True

    def _row_name(self, node: cst.Name) -> bool:
        """The element variable of ``for t in labels`` / ``for t, p in zip(labels, preds)``."""
        return node.value == self.head.row or node.value in self.head.extra_rows

    def _key_like(self, key: cst.BaseExpression) -> bool:
        """An index that names one element's class: a key local, an element variable, ``y[i]`` or its
        conversions (``int(t)``, ``y[i].item()``)."""
        if isinstance(key, cst.Name):
            return key.value in self.keys or key.value in self.elements or self._row_name(key)
        inner = self._key_element(key)
        if isinstance(inner, cst.Name):
            return inner is not key and self._row_name(inner)
        return isinstance(inner, cst.Subscript)

    def _key_element(self, key: cst.BaseExpression) -> cst.BaseExpression:
        """``y[i]`` of ``int(y[i].item())``, ``y[i].item()``, ``y[i].long()``, ``int(y[i])``: the element
        whose value is the class."""
        for _ in range(3):
            if isinstance(key, cst.Call) and len(key.args) == 1 and key.args[0].keyword is None \
                    and self.ctx.names.matches(key.func, frozenset({"builtins.int"})):
                key = key.args[0].value
            elif isinstance(key, cst.Call) and not key.args and isinstance(key.func, cst.Attribute) \
                    and key.func.attr.value in _KEY_METHODS:
                key = key.func.value
            else:
                break
        return key

    def _class_of_element(self, value: cst.BaseExpression, plain: bool = False) -> bool:
        """``labels[i].item()`` and its spellings: the class of the loop's element, as a number (with
        ``plain``, ``labels[i]`` itself)."""
        key = self._key_element(value)
        if key is value and not plain:
            return False
        if isinstance(key, cst.Name):
            return key.value == self.head.row or key.value in self.head.extra_rows
        if isinstance(key, cst.Subscript) and len(key.slice) == 1 and isinstance(key.slice[0].slice, cst.Index):
            index = key.slice[0].slice.value
            return isinstance(index, cst.Name) and index.value == self.head.var and self.head.var is not None
        return False

    # expressions ---------------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> bool:
        """Check an expression the body computes; True when it depends on the iteration's slices."""
        ctx = self.ctx
        if isinstance(node, cst.Name):
            if node.value == self.head.row or node.value in self.head.extra_rows:
                return True
            if node.value == self.head.var:
                return True  # the index as a number: `torch.arange` in the batched form
            if node.value in self.outputs:
                self.fail()  # a list or buffer the loop fills, read whole
            return node.value in self.locals
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis, cst.SimpleString)):
            return False  # a literal (`float("-inf")`, an einsum equation): nothing per slice
        if isinstance(node, cst.Attribute):
            if node.attr.value in _RESULT_FIELDS and isinstance(node.value, cst.Call):
                return self.expr(node.value)  # `x[i].topk(k).indices`
            if self.head.var is not None and ctx.names_in(node, self.head.var):
                self.fail()
            base = self.expr(node.value) if not ctx.names.qualified_names(node.value) else False
            return base
        if isinstance(node, cst.Subscript):
            pos = self.slice_position(node)
            base_dep = self.expr(node.value)
            if pos >= 0:
                if pos != self.head.dim:
                    self.fail()
                if not base_dep:
                    if not isinstance(node.value, (cst.Name, cst.Attribute)):
                        self.fail()
                    code = ctx.code(node.value).strip()
                    if code not in self.work.read:
                        self.work.read.append(code)
                        self.read_nodes.append(node.value)
                return True
            for el in node.slice:
                if isinstance(el.slice, cst.Index):
                    self.expr(el.slice.value)
            return base_dep
        if isinstance(node, cst.BinaryOperation):
            if not isinstance(node.operator, cst.MatrixMultiply):
                self._sweep(node.left, node.right)
                return self.expr(node.left) | self.expr(node.right)
            dep = self.expr(node.left) | self.expr(node.right)
            self.work.product |= dep  # `q[i] @ k.T`: a row's scores, the rows of one product
            return dep
        if isinstance(node, cst.UnaryOperation):
            return self.expr(node.expression)
        if isinstance(node, cst.BooleanOperation):
            return self.expr(node.left) | self.expr(node.right)
        if isinstance(node, cst.Comparison):
            if not self._row_mask(node):
                for c in node.comparisons:
                    self._sweep(node.left, c.comparator)
            dep = self.expr(node.left)
            for c in node.comparisons:
                dep |= self.expr(c.comparator)
            return dep
        if isinstance(node, (cst.Tuple, cst.List)):
            dep = False
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    self.fail()
                dep |= self.expr(el.value)
            return dep
        if isinstance(node, cst.IfExp):
            test = self.expr(node.test)
            if test:
                self.work.branches = True
            return test | self.expr(node.body) | self.expr(node.orelse)
        if isinstance(node, cst.Call):
            return self.call(node)
        self.fail()
        return False

    def _row_mask(self, node: cst.Comparison) -> bool:
        """``x[i].masked_fill(cols == labels[i], v)``: a mask applied to the iteration's own row.  A mask
        broadcasts to the row it fills, so batched it is as large as the rows: not a sweep, whatever
        whole tensor it compares with."""
        arg_node = self.ctx.parent(node)
        call = self.ctx.parent(arg_node) if isinstance(arg_node, cst.Arg) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "masked_fill" and call.args and call.args[0] is arg_node):
            return False
        recv = call.func.value
        if isinstance(recv, cst.Name):
            return recv.value == self.head.row
        return isinstance(recv, cst.Subscript) and self.slice_position(recv) == self.head.dim

    def _sweep(self, a: cst.BaseExpression, b: cst.BaseExpression) -> None:
        """``preds >= thresholds[i]``: one value of a vector against a whole tensor that does not change
        with the iteration — a sweep over parameter values, each step as large as the data; batching it
        multiplies the memory (often the very reason for the loop)."""
        for one, other in ((a, b), (b, a)):
            if isinstance(one, cst.Subscript) and len(one.slice) == 1 and isinstance(other, (cst.Name, cst.Attribute)):
                sl = one.slice[0].slice
                if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Name) and sl.value.value == self.head.var:
                    if not (isinstance(other, cst.Name) and other.value in self.locals):
                        self.fail()

    def _tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and expr.value in self.outputs:
            return True
        return is_tensor(self.ctx, expr) or self.ctx.code(expr).strip() == self.ctx.code(self.head.tensor).strip()

    def call(self, call: cst.Call) -> bool:
        ctx = self.ctx
        dep = False
        for a in call.args:
            if a.star:
                self.fail()
            if a.keyword is not None and isinstance(a.value, cst.SimpleString):
                continue  # `reduction="none"`, `p="fro"`
            dep |= self.expr(a.value)
        func = call.func
        qn = ctx.names.qualified_names(func)
        if qn:
            if any(q.startswith("torch.") and not q.startswith(("torch.utils", "torch.distributed", "torch.cuda",
                                                                  "torch.save", "torch.load", "torch.manual_seed"))
                   for q in qn):
                if any(q.rsplit(".", 1)[-1] in _DATA_DEPENDENT for q in qn):
                    self.fail()
                self._selection(next(iter(qn)).rsplit(".", 1)[-1], dep)
                if dep and any(q.rsplit(".", 1)[-1] in _PRODUCTS for q in qn):
                    self.work.product = True
                self.evidence |= dep
                return dep
            if not qn.isdisjoint(_NUMBER_BUILTINS) or qn & {"builtins.min", "builtins.max"}:
                if dep:
                    self.work.numbers = True
                return dep
            self.fail()
        if isinstance(func, cst.Attribute):
            name = func.attr.value
            recv_dep = self.expr(func.value)
            if not recv_dep:
                # a method of something that does not depend on the slice: a layer (`self.fc(...)`) or a
                # tensor method (`w.matmul(x[i])`) is fine, anything else is unknown behaviour
                if any(q.startswith("torch.nn.") for q in ctx.names.instance_of(func)):
                    self.evidence |= dep
                    return dep
                if not dep or not is_tensor(ctx, func.value) or name in _DATA_DEPENDENT or name.endswith("_"):
                    self.fail()
                return dep
            if (name in _DATA_DEPENDENT and not _host_copy(call)) or (name.endswith("_") and not name.startswith("_")):
                self.fail()
            if name in _TO_NUMBER:
                self.work.numbers = True
            self._selection(name, True)
            if name in _PRODUCTS:
                self.work.product = True
            if name in _TENSOR_ONLY_METHODS:
                self.evidence = True
            return True
        if isinstance(func, cst.Name) and any(q.startswith("torch.nn.") for q in ctx.names.instance_of(func)):
            self.evidence |= dep
            return dep
        self.fail()
        return False

    def _selection(self, name: str, dep: bool) -> None:
        if dep and name in _SELECTIONS and self.work.selection is None:
            self.work.selection = name

    # statements ----------------------------------------------------------------------------------
    def statement(self, st: cst.BaseSmallStatement) -> None:
        ctx = self.ctx
        if isinstance(st, cst.Assign):
            dep = self.expr(st.value)
            if len(st.targets) != 1:
                self.fail()
            target = st.targets[0].target
            if isinstance(target, cst.Name):
                if target.value in self.head.iteration_names() or target.value in self.outputs:
                    self.fail()
                if not dep:
                    self.fail()  # loop-invariant work or a counter: not per-slice
                self.locals.add(target.value)
                if self._class_of_element(st.value):
                    self.keys.add(target.value)
                elif isinstance(st.value, cst.Subscript) and self._class_of_element(st.value, plain=True):
                    self.elements.add(target.value)
                return
            if isinstance(target, (cst.Tuple, cst.List)):
                for el in target.elements:
                    if not isinstance(el.value, cst.Name) or el.value.value in self.head.iteration_names():
                        self.fail()
                    self.locals.add(el.value.value)
                if not dep:
                    self.fail()
                return
            if isinstance(target, cst.Subscript):
                self._store(target, dep)
                return
            self.fail()
        if isinstance(st, cst.AugAssign):
            dep = self.expr(st.value)
            target = st.target
            if not isinstance(st.operator, (cst.AddAssign, cst.SubtractAssign)):
                if isinstance(target, cst.Subscript):
                    self._store(target, dep)
                    return
                self.fail()
            if isinstance(target, cst.Name):
                if target.value in self.locals or target.value in self.head.iteration_names():
                    self.fail()
                if not dep:
                    # `correct += 1` under a test on the data: a count of the elements that pass it;
                    # `total += 1` outside any test counts the iterations (the loop's length)
                    if not isinstance(st.value, (cst.Integer, cst.Float)):
                        self.fail()
                    if id(st) in self.guarded:
                        self.work.tally = True
                    else:
                        self.iteration_counts.add(target.value)
                self.work.reduction = True
                if dep and _count_of_matches(st.value):
                    self.work.tally = True  # `correct += (p[i] == y[i]).sum().item()`
                self.outputs.add(target.value)
                self.sinks.append(target)
                return
            if isinstance(target, cst.Subscript):
                if all(isinstance(el.slice, cst.Index) for el in target.slice) and (
                    (len(target.slice) == 1 and isinstance(target.slice[0].slice.value, (cst.Subscript, cst.Call)))
                    or all(self._key_like(el.slice.value) for el in target.slice)  # type: ignore[union-attr]
                ):
                    pos = self.slice_position(target)
                    if pos != -1 or not self.work.scatter:
                        self.fail()
                    if not self._tensor(target.value) and not (
                        isinstance(target.value, cst.Name) and _counters_before(ctx, self.loop, target.value.value)
                    ):
                        self.fail()
                    if isinstance(st.value, (cst.Integer, cst.Float)):
                        self.work.tally = True
                    base = ctx.code(target.value).strip()
                    if base in self.work.read:
                        self.fail()
                    self.outputs.add(base)
                    self.sinks.append(target.value)
                    return
                self._store(target, dep)
                return
            self.fail()
        if isinstance(st, cst.Expr) and isinstance(st.value, cst.Call):
            call = st.value
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name) \
                    and len(call.args) == 1:
                name = func.value.value
                if name in self.locals or name in self.head.iteration_names():
                    self.fail()
                if not self.expr(call.args[0].value):
                    self.fail()
                self.lists.setdefault(name, []).append(call.args[0].value)
                self.outputs.add(name)
                self.sinks.append(func.value)
                return
            self.fail()
        self.fail()

    def _decided_by_data(self, target: cst.Subscript) -> bool:
        """A write at the loop position under an ``if`` on the data (the tests of the body's ``if``s all read
        the walked slices, or the loop is not judged at all): what is written depends on the row even when
        it is a constant (``if p[i] > 0.5: out[i] = 1 else: out[i] = 0`` is one ``torch.where``)."""
        statement = self.ctx.parent(self.ctx.parent(target))
        return self.work.branches and statement is not None and id(statement) in self.guarded

    def _store(self, target: cst.Subscript, dep: bool) -> None:
        pos = self.slice_position(target)
        parent = self.ctx.parent(target)
        if pos == -1 and dep and isinstance(parent, cst.AugAssign) and isinstance(
            parent.operator, (cst.AddAssign, cst.SubtractAssign)
        ) and self._tensor(target.value):
            # `loss[example] += ...` with `example` fixed in this loop: a reduction into one cell
            self.work.reduction = True
            self.outputs.add(self.ctx.code(target.value).strip())
            self.sinks.append(target.value)
            return
        if pos != self.head.dim or not (dep or self._decided_by_data(target)):
            self.fail()
        if not self._tensor(target.value):
            self.fail()
        self.outputs.add(self.ctx.code(target.value).strip())
        self.sinks.append(target.value)


def _count_of_matches(value: cst.BaseExpression) -> bool:
    """``(a == b).sum()`` / ``a.eq(b).sum()`` (``!=``, ``ne``; with ``.item()``, ``.cpu()``, ``.float()``
    around the ``sum``): the number of elements that pass a test."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value in ("item", "cpu", "float", "double", "long", "int"):
        value = value.func.value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "sum"
            and not value.args):
        return False
    value = value.func.value
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value in ("cpu", "float", "double", "long", "int"):
        value = value.func.value
    if isinstance(value, cst.Comparison):
        return len(value.comparisons) == 1 and isinstance(value.comparisons[0].operator, (cst.Equal, cst.NotEqual))
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ("eq", "ne")


def _host_copy(call: cst.Call) -> bool:
    """``row.cpu()``: the slice copied to the host, the same values; what the iteration then does with
    them decides (``correct += p[i].eq(y[i]).cpu().sum()`` is a count of the row like any other)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "cpu" and not call.args


def _assigned_in(ctx: FileContext, loop: cst.CSTNode, name: str) -> bool:
    for n in ctx.names_in(loop, name):
        parent = ctx.parent(n)
        if isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) or (
            isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is n
        ) or isinstance(parent, (cst.Element, cst.Tuple)):
            return True
    return False


def _plain(node: cst.BaseExpression) -> bool:
    return _int(node) is not None or isinstance(node, cst.Ellipsis) or (
        isinstance(node, cst.Name) and node.value == "None"
    )


def _reads_before_writes(ctx: FileContext, loop: cst.For, locals_: Set[str]) -> bool:
    """A local read before the iteration assigns it carries a value from the previous iteration."""
    for name in locals_:
        first_assign = None
        for n in ctx.names_in(loop.body, name):
            parent = ctx.parent(n)
            is_target = isinstance(parent, cst.AssignTarget) or (
                isinstance(parent, (cst.Element,)) and isinstance(ctx.parent(ctx.parent(parent)), cst.AssignTarget)
            )
            if is_target:
                first_assign = n
                assign = next((a for a in ctx.ancestors(n) if isinstance(a, cst.Assign)), None)
                if assign is None or ctx.names_in(assign.value, name):
                    return True  # `h = f(x[t], h)`
                break
            return True
        if first_assign is None:
            return True
    return False


def _after_loop(ctx: FileContext, loop: cst.For) -> Sequence[cst.CSTNode]:
    block = ctx.block_of(loop)
    if block is None:
        return ()
    pos = next((i for i, st in enumerate(block) if st is loop), None)
    return block[pos + 1:] if pos is not None else ()


def _made_empty_before(ctx: FileContext, loop: cst.For, name: str) -> bool:
    bound = ctx.names.bound_values(cst.Name(name), at=loop)
    if not bound:
        return False
    return all(isinstance(v, cst.List) and not v.elements for v in bound if v is not None) and all(
        v is not None for v in bound
    )


def _counters_before(ctx: FileContext, loop: cst.For, name: str) -> bool:
    """``counts = [0] * n`` (or ``[0 for _ in range(n)]``, ``list(0. for i in range(n))``) before the loop: a
    list of counters."""
    bound = ctx.names.bound_values(cst.Name(name), at=loop)
    if not bound or any(v is None for v in bound):
        return False
    for v in bound:
        if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Multiply):
            lst = v.left if isinstance(v.left, cst.List) else v.right
            if not (isinstance(lst, cst.List) and len(lst.elements) == 1
                    and isinstance(lst.elements[0].value, (cst.Integer, cst.Float))):
                return False
        elif isinstance(v, cst.ListComp):
            if not isinstance(v.elt, (cst.Integer, cst.Float)):
                return False
        elif isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value == "list" \
                and len(v.args) == 1 and isinstance(v.args[0].value, (cst.GeneratorExp, cst.ListComp)) \
                and not ctx.names.qualified_names(v.func) - {"builtins.list"}:
            if not isinstance(v.args[0].value.elt, (cst.Integer, cst.Float)):  # `list(0. for i in range(10))`
                return False
        else:
            return False
    return True


def _full_reduction(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """``x[i].argmax()`` / ``torch.sum(x[i])``: a reduction of everything to one 0-d tensor."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    qn = ctx.names.qualified_names(func)
    if qn:
        return len(value.args) == 1 and value.args[0].keyword is None and any(
            q.startswith("torch.") and q.rsplit(".", 1)[-1] in _FULL_REDUCTIONS for q in qn
        )
    return isinstance(func, cst.Attribute) and func.attr.value in _FULL_REDUCTIONS and not value.args


def _collected_after(ctx: FileContext, loop: cst.For, name: str) -> bool:
    for later in _after_loop(ctx, loop):
        for call in ctx.contents(later).calls:
            if ctx.names.matches(call.func, _COLLECTORS):
                first = arg(call, 0, "tensors") or arg(call, 0, "data")
                if first is not None and isinstance(first.value, cst.Name) and first.value.value == name:
                    return True
    return False


# a dimension this small holds a handful of named channels (RGB, RGBA, xyz): a loop over it runs a few
# whole-tensor operations, and batching them gains nothing worth a finding
_FEW = 4
_CONSTRUCTORS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.full"})


def _few(size: Optional[int]) -> bool:
    return size is not None and 0 < size <= _FEW


def small_dim(ctx: FileContext, tensor: cst.BaseExpression, k: int) -> bool:
    """Whether dimension ``k`` of ``tensor`` is known to hold at most a handful of entries: from the
    tensor's known shape, or from the constructor with literal sizes that a function of the project
    returns (``colorwheel = make_wheel()`` with ``return torch.zeros((n, 3))`` through a name)."""
    shape = shape_of(ctx, tensor)
    if shape is not None:
        known, size = shape.size(k)
        if known and _few(size):
            return True
    if not isinstance(tensor, cst.Name):
        return False
    held = ctx.names.sole_value(tensor)
    if held is None:
        return False
    value = strip_moves(held)
    if not isinstance(value, cst.Call):
        return False
    found = called_function(ctx, value)
    if found is not None:
        fctx, function = found[0], found[1]
    else:
        later = _defined_later(ctx, value)
        if later is None:
            return False
        fctx, function = ctx, later
    dims = _returned_literal_dims(fctx, function)
    return dims is not None and -len(dims) <= k < len(dims) and _few(dims[k])


def _defined_later(ctx: FileContext, call: cst.Call) -> Optional[cst.FunctionDef]:
    """``helper()`` called in a function body, ``helper`` defined once at module level below it and
    bound nowhere else in the module: the body runs after the module has run, so the call reaches that
    definition (the walk has not seen it yet)."""
    func = call.func
    if not isinstance(func, cst.Name) or ctx.enclosing(call, (cst.FunctionDef, cst.Lambda)) is None:
        return None
    name = func.value
    if ctx.names.lookup(name) is not None:
        return None  # bound where the call is: a parameter, a local, an import
    found: List[cst.FunctionDef] = []
    for st in ctx.module.body:
        if isinstance(st, cst.FunctionDef) and st.name.value == name:
            found.append(st)
        elif isinstance(st, cst.ClassDef) and st.name.value == name:
            return None
        elif isinstance(st, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Import, cst.ImportFrom))
            and ctx.names_in(small, name) for small in st.body
        ):
            return None
        elif not isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)) and ctx.names_in(st, name):
            return None  # bound under an `if`, a `try`, a loop: which binding runs is not known
    return found[0] if len(found) == 1 else None


def _returned_literal_dims(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[Optional[int]]]:
    """The sizes of ``torch.zeros((n, 3))`` (or ``ones``/``empty``/...) when every return of
    ``function`` returns it, directly or through a name the function assigns only to it."""
    returns: List[cst.Return] = []
    assigns: Dict[str, List[cst.BaseExpression]] = {}
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Return):
            returns.append(node)
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    assigns.setdefault(t.target.value, []).append(node.value)
        if isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Name):
            assigns.setdefault(node.target.value, []).append(cst.Name("_unknown"))
        stack.extend(children(node))
    if not returns:
        return None
    found: Optional[List[Optional[int]]] = None
    for ret in returns:
        value = ret.value
        if isinstance(value, cst.Name):
            values = assigns.get(value.value, [])
            if len(values) != 1:
                return None
            value = values[0]
        if not isinstance(value, cst.Call) or not ctx.names.matches(value.func, _CONSTRUCTORS):
            return None
        if len(value.args) != 1 or value.args[0].keyword is not None:
            return None
        dims = literal_dims(value.args[0].value)
        if dims is None or (found is not None and dims != found):
            return None
        found = dims
    return found


def _walks_a_tensor(ctx: FileContext, head: _Header, body: _Body) -> bool:
    """Something says the walked value is a tensor: a bound read from ``x.size(k)``, the value itself, or a
    ``.shape`` bound with the slices used as tensors."""
    return head.sized or is_tensor(ctx, head.tensor) or (head.shaped and head.row is None and (
        body.evidence or any(is_tensor(ctx, t) for t in body.read_nodes)))


def independent_row_work(ctx: FileContext, loop: cst.For) -> Optional[RowWork]:
    """The loop's per-slice work when no iteration depends on another and it could run batched."""
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    head = _header(ctx, loop)
    if head is None:
        return None
    tensor = head.tensor
    if not isinstance(tensor, (cst.Name, cst.Attribute)):
        return None
    if head.var is not None and small_dim(ctx, tensor, head.dim):
        return None  # a few named channels (`range(rgb.shape[1])` with three): nothing to gain
    for node in _walk_escapes(loop.body):
        return None
    body = _Body(ctx, loop, head)
    statements: List[cst.BaseSmallStatement] = []
    tests: List[cst.BaseExpression] = []
    try:
        _simple_statements(ctx, loop.body, statements, tests, body.guarded)
        for test in tests:
            if body.expr(test):
                body.work.branches = True
            else:
                body.fail()  # a branch on something else than the data (a flag, a counter)
        for st in statements:
            body.statement(st)
    except _Verdict:
        return None
    work = body.work
    if not _walks_a_tensor(ctx, head, body):
        return None  # nothing says the walked value is a tensor (a list of tensors is walked the same way)
    if head.window is not None:
        work.window = True
    if not work.read and head.row is None:
        return None
    if _reads_before_writes(ctx, loop, body.locals):
        return None
    code = ctx.code(tensor).strip()
    if code in body.outputs and not any(
        isinstance(st, cst.Assign) and isinstance(st.targets[0].target, cst.Subscript) for st in statements
    ):
        return None
    # the loop must write somewhere (more than a count of its iterations), and what it collects must be
    # uniform
    if not body.outputs or body.outputs <= body.iteration_counts:
        return None
    for name, values in body.lists.items():
        if not _made_empty_before(ctx, loop, name):
            return None
        if _collected_after(ctx, loop, name):
            continue
        if work.numbers:
            continue
        if all(_full_reduction(ctx, v) for v in values):
            continue  # one 0-d tensor per row (`torch.argmax(x[i])`): a uniform list
        return None  # a Python list of tensors kept as a list: possibly ragged, left alone
    if not _outputs_private(ctx, loop, body):
        return None
    if head.var is not None and _used_after(ctx, loop, head.var):
        return None
    return work


def comprehension_row_work(ctx: FileContext, comp: cst.CSTNode) -> Optional[Tuple[RowWork, cst.CSTNode]]:
    """A list comprehension that is a loop over a tensor's slices doing the same independent work per slice:
    ``torch.stack([f(x[i]) for i in range(x.size(0))])``, ``torch.cat([g(row) for row in x])``, ``[h(a, b)
    for a, b in zip(x, y)]`` put together by a collector (``torch.stack``, ``torch.cat``, ``torch.tensor``,
    ...), or a list of one Python number or one full reduction per slice (``[int(r.argmax()) for r in x]``).
    The walk and the element are judged as a ``for`` statement's header and body are (the same failures keep
    it silent: unknown calls, data-dependent shapes, ragged slices, sweeps); an element that is the slice
    itself (a copy) is no work.  Returns the work and the node to report: the collector's call, else the
    comprehension."""
    if not isinstance(comp, cst.ListComp):
        return None  # (a generator cannot be stacked; `sum(...)` of one is an accumulation)
    cf = comp.for_in
    if cf.ifs or cf.inner_for_in is not None or cf.asynchronous is not None:
        return None
    head = _header_of(ctx, cf.iter, cf.target, None)
    if head is None or head.window is not None:
        return None
    tensor = head.tensor
    if not isinstance(tensor, (cst.Name, cst.Attribute)):
        return None
    if small_dim(ctx, tensor, head.dim):
        return None  # a few named channels, walked by index or directly
    if isinstance(comp.elt, (cst.Name, cst.Attribute, cst.Subscript)):
        return None  # the slices themselves, unchanged
    if any(isinstance(w, cst.Name) and _chunks(ctx.names.value_of(w)) for w in (tensor, *head.zipped)):
        return None  # `features = features.split(lengths)`: pieces of different lengths, not one tensor's rows
    if _number_used_as_argument(ctx, comp.elt):
        return None  # `torch.arange(int(n))`, `r.topk(int(k))`: a value of the row sets a size, a count, a shift
    body = _Body(ctx, comp, head)
    try:
        if not body.expr(comp.elt):
            return None
    except _Verdict:
        return None
    work = body.work
    if not _walks_a_tensor(ctx, head, body):
        return None  # nothing says the walked value is a tensor (a list of tensors is walked the same way)
    if not work.read and head.row is None:
        return None
    if _type_tested(ctx, comp, [tensor, *head.zipped, *body.read_nodes]):
        return None  # `if isinstance(x, Tensor): ... else: [f(r) for r in x]`: a value of more than one type
    reduced = _reduction_name(ctx, comp.elt)
    rows = {n for n in (head.row, *head.extra_rows) if n is not None}
    walked = {ctx.code(t).strip() for t in (tensor, *head.zipped)}
    inside = list(iter_nodes(comp.elt))
    uses = [n for n in inside if isinstance(n, cst.Name) and n.value in rows] + [
        n for n in inside if isinstance(n, cst.Subscript) and ctx.code(n.value).strip() in walked]
    values_read = [n for n in uses if not _metadata_read(ctx, n)]
    if uses and not values_read:
        return None  # `r.numel()`, `x[i].shape[0] * 2`: the same for every slice, no work on its values
    computes = any(isinstance(n, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.Call)) for n in inside) \
        and (any(isinstance(n, cst.Name) for n in values_read) or bool(walked & set(work.read)))
    if not (body.evidence or work.numbers or reduced is not None or work.selection or work.product or computes):
        return None  # no work on the walked tensor's slices (`area[i] <= 4` over `enumerate(x)`: a list read)
    holder = ctx.parent(comp)
    call = ctx.parent(holder) if isinstance(holder, cst.Arg) else None
    if reduced is not None and work.selection is None:
        work.selection = reduced  # `[r.sum() for r in x]`: one `sum` with `dim=` over all rows
    if isinstance(call, cst.Call) and call.args and call.args[0] is holder and holder.keyword is None \
            and ctx.names.matches(call.func, _COLLECTORS):
        work.numbers = False  # (collected into a tensor: no `.tolist()` to take)
        return work, call
    if work.numbers or reduced is not None:
        return work, comp
    return None  # a Python list of tensors kept as a list: possibly ragged, left alone


_CHUNKING = frozenset({"split", "chunk", "tensor_split", "unbind", "split_with_sizes"})
#: what a slice's metadata is read with: the same for every row of one tensor (no work on its values)
_METADATA = frozenset({"shape", "size", "numel", "dim", "ndim", "ndimension", "dtype", "device", "is_cuda"})


def _chunks(value: Optional[cst.BaseExpression]) -> bool:
    """``x.split(sizes)``, ``torch.chunk(x, k)``, ``list(x.unbind())``: a sequence of pieces, not a tensor."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("list", "tuple") \
            and len(value.args) == 1:
        value = value.args[0].value
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name in _CHUNKING


def _number_used_as_argument(ctx: FileContext, elt: cst.BaseExpression) -> bool:
    """A Python number taken from the data (``int(n)``, ``k.item()``) handed to a call as an argument other
    than to turn it into another number: a size, a count, a shift that differs per element."""
    for node in iter_nodes(elt):
        if not (isinstance(node, cst.Call) and _to_number(ctx, node) is not None):
            continue
        holder = ctx.parent(node)
        user = ctx.parent(holder) if isinstance(holder, cst.Arg) else None
        if isinstance(user, cst.Call) and not (
                isinstance(user.func, cst.Name) and ctx.names.qualified_names(user.func) & _NUMBER_BUILTINS):
            return True
    return False


def _to_number(ctx: FileContext, call: cst.Call) -> Optional[cst.BaseExpression]:
    """What ``x.item()`` or ``int(x)`` (``float``, ``abs``, ``round``) turns into a Python number: ``x``; None
    for any other call."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _TO_NUMBER and not call.args:
        return call.func.value
    if isinstance(call.func, cst.Name) and call.args and ctx.names.qualified_names(call.func) & _NUMBER_BUILTINS:
        return call.args[0].value
    return None


def _metadata_read(ctx: FileContext, name: cst.BaseExpression) -> bool:
    """``r.shape[0]``, ``r.numel()``, ``len(r)``, ``r is None``: the slice's metadata, not its values."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value in _METADATA:
        return True
    if isinstance(parent, cst.Arg):
        call = ctx.parent(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "len"
    if isinstance(parent, cst.Comparison):
        return all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons)
    if isinstance(parent, cst.ComparisonTarget):
        outer = ctx.parent(parent)
        return isinstance(outer, cst.Comparison) and all(isinstance(c.operator, (cst.Is, cst.IsNot))
                                                         for c in outer.comparisons)
    return False


def _type_tested(ctx: FileContext, at: cst.CSTNode, values: Sequence[cst.BaseExpression]) -> bool:
    """The function around ``at`` (or the module) tests the type of one of ``values`` (``if isinstance(x,
    Tensor):``): the code itself says the value is not always one type.  (An ``assert isinstance(...)`` says
    it is.)"""
    scope = next((a for a in ctx.ancestors(at) if isinstance(a, cst.FunctionDef)), ctx.module)
    tested = _TYPE_TESTS.of(ctx)
    if scope not in tested:
        found = set()
        for call in ctx.calls_in(scope):
            if isinstance(call.func, cst.Name) and call.func.value == "isinstance" and call.args \
                    and ctx.names.matches(call.func, frozenset({"builtins.isinstance"})) \
                    and not any(isinstance(a, cst.Assert) for a in ctx.ancestors(call)):
                found.add(ctx.code(call.args[0].value).strip())
        tested[scope] = frozenset(found)
    return any(ctx.code(v).strip() in tested[scope] for v in values)


#: function (or module) -> the codes of the values its `isinstance` tests read, per file
_TYPE_TESTS: "Fact[Dict[cst.CSTNode, FrozenSet[str]]]" = Fact("rowwork.type_tests", lambda ctx: {})


def _reduction_name(ctx: FileContext, value: cst.BaseExpression) -> Optional[str]:
    """``sum`` of ``x[i].sum()`` / ``torch.sum(x[i])`` (also turned into a number: ``x[i].sum().item()``): a
    full reduction of the slice, by name; None for anything else."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and _to_number(ctx, value) is not None:
        value = value.func.value  # `.item()`
    if isinstance(value, cst.Call) and len(value.args) == 1 and isinstance(value.func, cst.Name) \
            and _to_number(ctx, value) is not None:
        value = value.args[0].value  # `int(...)`
    if not _full_reduction(ctx, value):
        return None
    assert isinstance(value, cst.Call)
    if isinstance(value.func, cst.Attribute) and not ctx.names.qualified_names(value.func):
        return value.func.attr.value
    return next(iter(sorted(ctx.names.qualified_names(value.func)))).rsplit(".", 1)[-1]


def nested_row_work(ctx: FileContext, outer: cst.For) -> Optional[Tuple[RowWork, cst.For]]:
    """Two loops over two dimensions of the same tensors (``for i in range(x.size(0)): for c in
    range(x.size(1)): out[i, c] = f(x[i, c])``): the inner loop is independent per-slice work, and every
    subscript of its body that reads or writes the inner slice also fixes the outer index at the
    dimension the outer loop walks. Each ``[i, c]`` position is then the work of one iteration of the
    nest, and the nest runs batched over both dimensions. Returns the inner loop's work and the inner
    loop, or None."""
    if outer.orelse is not None or outer.asynchronous is not None:
        return None
    head = _header(ctx, outer)
    if head is None or head.var is None or head.row is not None or head.window is not None or head.extra_rows:
        return None
    lines = outer.body.body if isinstance(outer.body, cst.IndentedBlock) else ()
    if len(lines) != 1 or not isinstance(lines[0], cst.For):
        return None
    inner = lines[0]
    work = independent_row_work(ctx, inner)
    inner_head = _header(ctx, inner)
    if work is None or inner_head is None or inner_head.var is None or inner_head.row is not None \
            or inner_head.window is not None or work.dim == head.dim:
        return None
    i, c = head.var, inner_head.var
    walked = ctx.code(head.tensor).strip()
    if walked != ctx.code(work.tensor).strip() and walked not in work.read:
        return None  # the outer loop walks another tensor than the slices read
    if ctx.names_in(inner.iter, i):
        return None
    for n in ctx.names_in(inner.body, i):
        parent = ctx.parent(n)
        index = ctx.parent(parent) if isinstance(parent, cst.Index) else None
        sub = ctx.parent(index) if isinstance(index, cst.SubscriptElement) else None
        if not isinstance(sub, cst.Subscript):
            return None  # the outer index used as a number, or inside arithmetic
        if next(k for k, el in enumerate(sub.slice) if el is index) != head.dim:
            return None
    for n in ctx.names_in(inner.body, c):
        parent = ctx.parent(n)
        index = ctx.parent(parent) if isinstance(parent, cst.Index) else None
        sub = ctx.parent(index) if isinstance(index, cst.SubscriptElement) else None
        if not isinstance(sub, cst.Subscript):
            return None
        at = sub.slice[head.dim].slice if len(sub.slice) > head.dim else None
        if not (isinstance(at, cst.Index) and isinstance(at.value, cst.Name) and at.value.value == i):
            return None  # a slice read or written at `[c]` alone: shared by every outer iteration
    if _used_after(ctx, outer, i) or _used_after(ctx, outer, c):
        return None
    return work, inner


def _outputs_private(ctx: FileContext, loop: cst.For, body: _Body) -> bool:
    """Every mention of an output in the body is a write, or (for a tensor written at the loop position)
    a read of that same position: no iteration sees what another one wrote."""
    sinks = set(map(id, body.sinks))
    for name in body.outputs:
        if not name.isidentifier():
            continue  # `self.out[i] = ...`: attributes are checked through the subscripts read
        for n in ctx.names_in(loop.body, name):
            if id(n) in sinks:
                continue
            parent = ctx.parent(n)
            if isinstance(parent, cst.Subscript) and parent.value is n and name not in body.lists:
                try:
                    if body.slice_position(parent) == body.head.dim:
                        continue
                except _Verdict:
                    return False
            return False
    return True


def _used_after(ctx: FileContext, loop: cst.For, var: str) -> bool:
    """Whether the value the loop leaves in ``var`` (its last index) is read after the loop: a read in
    the statements that follow it before the next binding of the name. A plain assignment of the name
    (its value not reading it) or a later loop over it kills the value; a mention inside any other
    compound statement or a nested scope counts as a read (the analysis does not follow branches)."""
    for later in _after_loop(ctx, loop):
        verdict = _reads_before_binding(ctx, later, var)
        if verdict is not None:
            return verdict
    return False


def _mentions(ctx: FileContext, node: cst.CSTNode, var: str) -> bool:
    """``var`` read as a variable under ``node`` (an attribute ``x.var`` or a keyword ``f(var=...)`` is
    not the variable)."""
    for n in ctx.names_in(node, var):
        parent = ctx.parent(n)
        if isinstance(parent, cst.Attribute) and parent.attr is n:
            continue
        if isinstance(parent, cst.Arg) and parent.keyword is n:
            continue
        return True
    return False


def _binds(target: cst.BaseExpression, var: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == var
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(el.value, var) for el in target.elements)
    return False


def _reads_before_binding(ctx: FileContext, st: cst.CSTNode, var: str) -> Optional[bool]:
    """True when ``st`` reads ``var`` before rebinding it, False when it rebinds it first (the old value
    is dead), None when it does neither."""
    if isinstance(st, cst.SimpleStatementLine):
        for small in st.body:
            if isinstance(small, cst.Assign) and any(_binds(t.target, var) for t in small.targets):
                if _mentions(ctx, small.value, var) or any(
                    not _binds(t.target, var) and _mentions(ctx, t.target, var) for t in small.targets
                ):
                    return True
                return False
            if isinstance(small, cst.AnnAssign) and small.value is not None and _binds(small.target, var):
                return True if _mentions(ctx, small.value, var) else False
            if _mentions(ctx, small, var):
                return True
        return None
    if isinstance(st, cst.For) and _binds(st.target, var) and st.asynchronous is None:
        if _mentions(ctx, st.iter, var) or (st.orelse is not None and _mentions(ctx, st.orelse, var)):
            return True
        return False  # the next binding: what the body and the code after read is the new value
    return True if _mentions(ctx, st, var) else None


_ESCAPE_TYPES = frozenset(_ESCAPES + (cst.Yield, cst.Await))
_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _walk_escapes(block: cst.CSTNode):
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        t = type(node)
        if t in _ESCAPE_TYPES:
            yield node
            return
        if t in _NESTED_SCOPES:
            continue
        stack.extend(children(node))


__all__ = ["RowWork", "comprehension_row_work", "independent_row_work", "nested_row_work", "small_dim"]
