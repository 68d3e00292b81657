"""Two nested loops over output positions whose iterations are independent (the per-row indexing rule's
nested classes).

A nest ``for i in range(m): for j in range(n): out[..., i, j] = <value>`` writes each output position
exactly once, from slices of tensors read at that position.  Three kinds of value are recognised, each
with the batched form that replaces the whole nest:

- a *window*: the value reads a slice whose bounds move with the loop (``x[i:i + kh, j:j + kw]``,
  ``x[:, :, i * s:i * s + k, ...]``) and reduces it, alone (pooling: ``max``/``amax`` →
  ``F.max_pool2d``, ``mean`` → ``F.avg_pool2d``) or multiplied by a tensor the loop does not change
  (a kernel: ``F.conv2d``), otherwise ``F.unfold`` and one batched op;
- a *masked reduction*: the value reduces a slice under a mask built or read per pair
  (``mask = seg[b] == k; (feat[b] * mask).sum()``, ``x[i][labels[i] == c].mean()``);
- *pair scores*: the value is a product of a row read at one index and a row read at the other
  (``torch.dot(a[i], b[j])``, ``a[i] @ b[j]``, ``(a[i] * b[j]).sum()``) → one ``matmul``/``einsum``;
- *pair distances*: the value reduces the difference of a row read at one index and a row read at the
  other (``torch.norm(x[i] - y[j])``, ``((x[i] - y[j]) ** 2).sum().sqrt()``), or is
  ``F.pairwise_distance``/``torch.dist`` of the two rows → one ``torch.cdist``.

A hand-written convolution with its kernel loops inside (four loops: two over output positions, two over
kernel offsets, accumulating ``x[i + di, j + dj] * w[di, dj]`` into ``out[i, j]`` or into a number reset
per position and written there) is the same window-times-kernel work, recognised by
``kernel_nest`` and reported once, at its outermost loop.

The nest is left alone when an iteration could see another's work or the analysis cannot follow the
body: the output read at any other position (``D[i - 1, j]``: dynamic programming), a name read before
the iteration assigns it, a literal trip count, calls of functions of unknown behaviour (I/O, helpers),
in-place methods, data-dependent shapes that are not reduced at once (``.nonzero()``, a mask selection
kept as it is), branches, exits, deeper nests and statements between the loops other than assignments.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.walk import children
from torchlint.families.shapes.shapes import is_tensor

_REDUCTIONS = frozenset({"sum", "mean", "max", "amax", "min", "amin", "norm", "prod", "logsumexp", "std",
                         "var", "any", "all", "count_nonzero", "nansum", "nanmean"})
_MAX = frozenset({"max", "amax"})
_MEAN = frozenset({"mean"})
_PRODUCTS = frozenset({"dot", "matmul", "mm", "mv", "inner", "vdot", "einsum", "bmm"})
# methods that compute a new tensor from a tensor and nothing else (no I/O, no state, no data-dependent
# shape)
_PURE_METHODS = _REDUCTIONS | _PRODUCTS | frozenset(
    {"float", "double", "half", "long", "int", "bool", "abs", "exp", "log", "sqrt", "pow", "clamp", "sigmoid",
     "tanh", "relu", "t", "flatten", "reshape", "view", "unsqueeze", "squeeze", "permute", "transpose",
     "contiguous", "type_as", "to", "clone", "detach", "square", "neg", "reciprocal", "softmax",
     "log_softmax", "argmax", "argmin", "size", "dim", "numel"}
)
_DATA_DEPENDENT = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "item",
                             "tolist", "numpy", "split", "chunk", "tensor_split", "nonzero_static"})
_DISTANCES = frozenset({"pairwise_distance", "dist"})
_BUILTINS = frozenset({"builtins.int", "builtins.float", "builtins.abs", "builtins.min", "builtins.max"})


@dataclass
class NestedWork:
    outer: cst.For
    inner: cst.For
    output: cst.BaseExpression  # the tensor written at ``[i, j]``
    target: cst.BaseExpression  # the write's target (``out[i, j]``)
    kind: str  # "conv", "max_pool", "avg_pool", "window", "masked", "pairs", "distance"
    read: List[str] = field(default_factory=list)  # the tensors read per position

    def idiom(self) -> str:
        if self.kind == "conv":
            return ("one `F.conv2d` (or `F.unfold` and one `matmul` with the flattened kernel) computes every "
                    "window at once")
        if self.kind == "max_pool":
            return "one `F.max_pool2d` (or `F.unfold` and `amax(dim=1)`) reduces every window at once"
        if self.kind == "avg_pool":
            return "one `F.avg_pool2d` (or `F.unfold` and `mean(dim=1)`) reduces every window at once"
        if self.kind == "window":
            return "`F.unfold` (or `Tensor.unfold`) exposes every window at once; then one batched op"
        if self.kind == "masked":
            return ("a masked batched reduction: build every mask at once by broadcasting (e.g. "
                    "`masks = labels[:, None] == torch.arange(k)[None, :, None]`), multiply and reduce with "
                    "`dim=` (`(x[:, None] * masks).sum(dim=-1) / masks.sum(dim=-1)`)")
        if self.kind == "distance":
            return ("one `torch.cdist` computes every pair's distance at once (`p=1` for absolute "
                    "differences; square it for squared distances)")
        return "one `matmul` (`a @ b.T`) or `torch.einsum` computes every pair at once"


class _Fail(Exception):
    pass


def _int(node: cst.BaseExpression) -> Optional[int]:
    return int(node.value) if isinstance(node, cst.Integer) else None


def _enumerated(ctx: FileContext, loop: cst.For) -> Optional[Tuple[str, str, cst.BaseExpression]]:
    """``(i, row, x)`` of ``for i, row in enumerate(x)`` with ``x`` a tensor: the rows of ``x``."""
    it, target = loop.iter, loop.target
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    if not (isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.enumerate"}))
            and len(it.args) == 1 and it.args[0].keyword is None and not it.args[0].star):
        return None
    if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
        return None
    i, row = target.elements[0].value, target.elements[1].value
    walked = it.args[0].value
    if not (isinstance(i, cst.Name) and isinstance(row, cst.Name) and isinstance(walked, (cst.Name, cst.Attribute))):
        return None
    if not is_tensor(ctx, walked):
        return None  # a list walked the same way (of layers, of files)
    return i.value, row.value, walked


def _range_stop(ctx: FileContext, loop: cst.For) -> Optional[Tuple[str, cst.BaseExpression]]:
    """``(i, stop)`` of ``for i in range(stop)`` / ``range(0, stop)`` (no ``else``, not async); else None."""
    if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
        return None
    it = loop.iter
    if not (isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.range"}))):
        return None
    if any(a.keyword is not None or a.star for a in it.args):
        return None
    args = [a.value for a in it.args]
    if len(args) == 2 and _int(args[0]) == 0:
        args = args[1:]
    if len(args) != 1:
        return None  # a start or a step
    return loop.target.value, args[0]


def _range_var(ctx: FileContext, loop: cst.For) -> Optional[str]:
    """``i`` of ``for i in range(stop)`` / ``range(0, stop)`` with a stop that is not a literal."""
    found = _range_stop(ctx, loop)
    if found is None or _int(found[1]) is not None:
        return None  # a small fixed number of iterations
    return found[0]


def _lines(block: cst.BaseSuite) -> Optional[List[cst.BaseStatement]]:
    if isinstance(block, cst.SimpleStatementSuite):
        return None
    return list(block.body)  # type: ignore[union-attr]


class _Nest:
    def __init__(self, ctx: FileContext, outer: cst.For, inner: cst.For, i: str, j: str) -> None:
        self.ctx = ctx
        self.outer = outer
        self.inner = inner
        self.vars = (i, j)
        self.rows: Dict[str, str] = {}  # the row variable of `enumerate` -> its index variable
        self.walked: Dict[str, cst.BaseExpression] = {}  # the row variable -> the tensor it walks
        self.locals: Set[str] = set()
        self.masks: Set[str] = set()  # locals holding a mask built per position
        self.windows: Set[str] = set()  # locals holding a window (`patch = x[:, :, i:i + k, j:j + k]`)
        self.window = False
        self.masked = False
        self.evidence = False  # a torch function or a tensor-only method on the per-position data
        self.reduced = False
        self.product = False  # dot / matmul / `@` of per-position rows
        self.difference = False  # a row read at one index minus a row read at the other
        self.distance = False  # `F.pairwise_distance` / `torch.dist` of the two rows
        self.kernel = False  # a window multiplied by a tensor the loop does not change
        self.max = False
        self.mean = False
        self.read: List[str] = []
        self.read_nodes: List[cst.BaseExpression] = []
        self.read_at: Set[str] = set()  # which loop variables index the tensors read

    def fail(self) -> None:
        raise _Fail()

    # expressions ---------------------------------------------------------------------------------
    def depends(self, node: cst.CSTNode) -> bool:
        return any(self.ctx.names_in(node, v) for v in self.vars + tuple(self.rows)) or any(
            self.ctx.names_in(node, n) for n in self.locals
        )

    def expr(self, node: cst.BaseExpression) -> None:
        ctx = self.ctx
        if isinstance(node, cst.Name):
            if node.value in self.rows:
                walked = self.walked[node.value]
                code = ctx.code(walked).strip()
                if code not in self.read:
                    self.read.append(code)
                    self.read_nodes.append(walked)
                self.read_at.add(self.rows[node.value])
                return
            if node.value in self.vars or node.value in self.locals or node.value in ("None", "True", "False"):
                return
            if _assigned_in(ctx, self.outer, node.value):
                self.fail()  # a value carried between iterations, or the output read whole
            return
        if isinstance(node, (cst.Integer, cst.Float, cst.Ellipsis)):
            return
        if isinstance(node, cst.Attribute):
            if node.attr.value in ("T", "mT", "shape"):
                self.expr(node.value)
                return
            if ctx.names.qualified_names(node) or isinstance(node.value, cst.Name) and node.value.value == "self":
                return  # `self.kernel`, `torch.pi`: not assigned in the loop
            self.fail()
        if isinstance(node, cst.Subscript):
            self.subscript(node)
            return
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.MatrixMultiply):
                self.product = self.product or (self._row(node.left) and self._row(node.right))
            if isinstance(node.operator, cst.Multiply):
                self._multiply(node.left, node.right)
            if isinstance(node.operator, cst.Subtract) and self._row(node.left) and self._row(node.right) \
                    and self._var_of(node.left) != self._var_of(node.right):
                self.difference = True
            self.expr(node.left)
            self.expr(node.right)
            return
        if isinstance(node, cst.UnaryOperation):
            self.expr(node.expression)
            return
        if isinstance(node, cst.Comparison):
            self.expr(node.left)
            for c in node.comparisons:
                self.expr(c.comparator)
            return
        if isinstance(node, cst.Tuple):
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    self.fail()
                self.expr(el.value)
            return
        if isinstance(node, cst.Call):
            self.call(node)
            return
        self.fail()

    def _row(self, node: cst.BaseExpression) -> bool:
        """``a[i]`` / ``a[i, :]`` / ``row`` of ``enumerate(a)``: a row read at one loop variable."""
        if isinstance(node, cst.Name):
            return node.value in self.rows
        return isinstance(node, cst.Subscript) and isinstance(node.slice[0].slice, cst.Index) and isinstance(
            node.slice[0].slice.value, cst.Name) and node.slice[0].slice.value.value in self.vars

    def _multiply(self, a: cst.BaseExpression, b: cst.BaseExpression) -> None:
        for one, other in ((a, b), (b, a)):
            if isinstance(one, cst.Name) and one.value in self.masks:
                self.masked = True
            if self._is_window(one) and not self.depends(other) and not isinstance(other, (cst.Integer, cst.Float)):
                self.kernel = True
        if self._row(a) and self._row(b) and self._var_of(a) != self._var_of(b):
            self.product = True

    def _var_of(self, row: cst.BaseExpression) -> str:
        if isinstance(row, cst.Name):
            return self.rows[row.value]
        return row.slice[0].slice.value.value  # type: ignore[union-attr]

    def _is_window(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return node.value in self.windows
        return isinstance(node, cst.Subscript) and any(
            isinstance(el.slice, cst.Slice) and any(
                b is not None and self.depends(b) for b in (el.slice.lower, el.slice.upper)
            )
            for el in node.slice
        )

    def subscript(self, node: cst.Subscript) -> None:
        ctx = self.ctx
        self.expr(node.value)
        per_position = False
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                v = sl.value
                if isinstance(v, cst.Name) and v.value in self.masks:
                    self._reduced_selection(node)
                    self.masked = True
                    per_position = True
                    continue
                if isinstance(v, cst.Comparison):
                    self._reduced_selection(node)
                    self.expr(v)
                    self.masked = True
                    per_position = True
                    continue
                self.expr(v)
                if self.depends(v):
                    per_position = True
            else:
                assert isinstance(sl, cst.Slice)
                moving = False
                for b in (sl.lower, sl.upper, sl.step):
                    if b is None:
                        continue
                    self.expr(b)
                    moving = moving or self.depends(b)
                if moving:
                    if not self._window_bounds(sl):
                        self.fail()  # ragged (`x[i, :lengths[j]]`), strided by the data, or unknown
                    self.window = True
                    per_position = True
        if per_position and isinstance(node.value, (cst.Name, cst.Attribute)):
            code = ctx.code(node.value).strip()
            if code not in self.read:
                self.read.append(code)
                self.read_nodes.append(node.value)
            for v in self.vars:
                if ctx.names_in(node, v):
                    self.read_at.add(v)

    def _window_bounds(self, sl: cst.Slice) -> bool:
        """``i:i + k`` / ``i * s:i * s + k`` / ``i * s:(i + 1) * s``: both bounds move with the same loop
        variable, through arithmetic on names and numbers only, and the step is fixed."""
        if sl.lower is None or sl.upper is None or (sl.step is not None and self.depends(sl.step)):
            return False
        movers = [v for v in self.vars if self.ctx.names_in(sl.lower, v)]
        if len(movers) != 1 or not self.ctx.names_in(sl.upper, movers[0]):
            return False
        return _arithmetic(sl.lower) and _arithmetic(sl.upper)

    def _reduced_selection(self, node: cst.Subscript) -> None:
        """``x[mask]`` has a data-dependent shape: only a reduction of it to one value per position is
        uniform."""
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = self.ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in _REDUCTIONS \
                    and not call.args:
                return
        if isinstance(parent, cst.Arg):
            call = self.ctx.parent(parent)
            if isinstance(call, cst.Call) and len(call.args) == 1 and any(
                q.rsplit(".", 1)[-1] in _REDUCTIONS for q in self.ctx.names.qualified_names(call.func)
                if q.startswith("torch.")
            ):
                return
        self.fail()

    def call(self, call: cst.Call) -> None:
        ctx = self.ctx
        for a in call.args:
            if a.star:
                self.fail()
            if a.keyword is not None and isinstance(a.value, cst.SimpleString):
                continue
            if isinstance(a.value, cst.SimpleString) and a is call.args[0]:
                continue  # the equation of `torch.einsum`
            self.expr(a.value)
        func = call.func
        qn = ctx.names.qualified_names(func)
        if qn:
            torch = [q for q in qn if q.startswith("torch.")]
            if torch and not any(q.startswith(("torch.utils", "torch.distributed", "torch.cuda", "torch.save",
                                               "torch.load", "torch.manual_seed")) for q in torch):
                names = {q.rsplit(".", 1)[-1] for q in torch}
                if names & _DATA_DEPENDENT or any(n.endswith("_") for n in names):
                    self.fail()
                self._named(names, [a.value for a in call.args])
                self.evidence = True
                return
            if qn & _BUILTINS:
                return
            self.fail()
        if isinstance(func, cst.Attribute):
            name = func.attr.value
            if name not in _PURE_METHODS:
                self.fail()
            self.expr(func.value)
            self._named({name}, [func.value] + [a.value for a in call.args])
            self.evidence = True
            return
        self.fail()

    def _named(self, names: Set[str], operands: List[cst.BaseExpression]) -> None:
        if names & _REDUCTIONS:
            self.reduced = True
            self.max = self.max or bool(names & _MAX)
            self.mean = self.mean or bool(names & _MEAN)
        if names & (_PRODUCTS | _DISTANCES):
            rows = [o for o in operands if self._row(o)]
            if len({self._var_of(r) for r in rows}) == 2:  # type: ignore[arg-type]
                if names & _PRODUCTS:
                    self.product = True
                else:
                    self.distance = True

    # statements ----------------------------------------------------------------------------------
    def local(self, st: cst.Assign) -> None:
        if len(st.targets) != 1 or not isinstance(st.targets[0].target, cst.Name):
            self.fail()
        name = st.targets[0].target.value  # type: ignore[union-attr]
        if name in self.vars or name in self.rows or name in self.locals or self.ctx.names_in(st.value, name):
            self.fail()  # reassigned, or read before this iteration assigns it
        self.expr(st.value)
        if not self.depends(st.value):
            self.fail()  # loop-invariant work: not per position
        if isinstance(st.value, cst.Comparison):
            self.masks.add(name)
        if self._is_window(st.value):
            self.windows.add(name)
        self.locals.add(name)


def _arithmetic(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
    ):
        return _arithmetic(node.left) and _arithmetic(node.right)
    return False


def per_row_product(ctx: FileContext, loop: cst.For, tensor: cst.BaseExpression) -> bool:
    """Whether the loop body multiplies a row of ``tensor`` (``x[i]``) as a matrix: ``x[i] @ k.T``,
    ``torch.matmul(x[i], w)``, ``torch.dot(x[i], v)``, ``x[i].mm(w)`` — the per-row scores of one
    product."""
    code = ctx.code(tensor).strip()

    def row(node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Subscript) and ctx.code(node.value).strip() == code

    stack: List[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply) and (
            row(node.left) or row(node.right)
        ):
            return True
        if isinstance(node, cst.Call):
            qn = {q.rsplit(".", 1)[-1] for q in ctx.names.qualified_names(node.func) if q.startswith("torch.")}
            if isinstance(node.func, cst.Attribute) and not qn and node.func.attr.value in _PRODUCTS:
                qn = {node.func.attr.value}
                if row(node.func.value):
                    return True
            if qn & _PRODUCTS and any(row(a.value) for a in node.args):
                return True
        stack.extend(children(node))
    return False


def _assigned_in(ctx: FileContext, loop: cst.For, name: str) -> bool:
    for n in ctx.names_in(loop.body, name):
        parent = ctx.parent(n)
        if isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) or (
            isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is n
        ):
            return True
    return False


def _write_target(nest: _Nest, target: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``out[i, j]`` / ``out[:, :, i, j]`` / ``out[i][j]``: the output, written at exactly the nest's
    position (each loop variable once, as a plain index; the other indices whole)."""
    elements: List[cst.SubscriptElement] = []
    node = target
    while isinstance(node, cst.Subscript):
        elements = list(node.slice) + elements
        node = node.value
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    seen: List[str] = []
    for el in elements:
        sl = el.slice
        if isinstance(sl, cst.Index):
            v = sl.value
            if isinstance(v, cst.Name) and v.value in nest.vars:
                seen.append(v.value)
            elif not isinstance(v, cst.Integer) and not isinstance(v, cst.Ellipsis):
                return None
        elif any(b is not None for b in (sl.lower, sl.upper, sl.step)):
            return None
    if sorted(seen) != sorted(nest.vars):
        return None
    return node


def _index(ctx: FileContext, loop: cst.For) -> Tuple[Optional[str], Optional[Tuple[str, cst.BaseExpression]]]:
    """The loop's index variable, and for ``enumerate(x)`` its row variable and ``x``."""
    var = _range_var(ctx, loop)
    if var is not None:
        return var, None
    found = _enumerated(ctx, loop)
    if found is None:
        return None, None
    return found[0], (found[1], found[2])


def nested_slice_work(ctx: FileContext, outer: cst.For) -> Optional[NestedWork]:
    """The nest's per-position work when no position depends on another and it is one of the classes
    above, or None."""
    i, row_i = _index(ctx, outer)
    if i is None:
        return None
    lines = _lines(outer.body)
    if not lines or not isinstance(lines[-1], cst.For):
        return None
    inner = lines[-1]
    j, row_j = _index(ctx, inner)
    if j is None or j == i:
        return None
    inner_lines = _lines(inner.body)
    if not inner_lines:
        return None
    nest = _Nest(ctx, outer, inner, i, j)
    for var, row in ((i, row_i), (j, row_j)):
        if row is not None:
            if row[0] in nest.rows or row[0] in (i, j):
                return None
            nest.rows[row[0]] = var
            nest.walked[row[0]] = row[1]
    write: Optional[cst.BaseSmallStatement] = None
    output: Optional[cst.BaseExpression] = None
    inner_ids = set(map(id, inner_lines))
    try:
        for line in lines[:-1] + inner_lines:
            if not isinstance(line, cst.SimpleStatementLine):
                return None  # branches, deeper nests, with, try
            for st in line.body:
                if isinstance(st, cst.Assign) and len(st.targets) == 1 and isinstance(st.targets[0].target,
                                                                                       cst.Name):
                    nest.local(st)
                    continue
                if isinstance(st, (cst.Assign, cst.AugAssign)) and id(line) in inner_ids and write is None:
                    if isinstance(st, cst.Assign):
                        if len(st.targets) != 1:
                            return None
                        target = st.targets[0].target
                    else:
                        if not isinstance(st.operator, (cst.AddAssign, cst.SubtractAssign)):
                            return None
                        target = st.target
                    output = _write_target(nest, target)
                    if output is None:
                        return None
                    nest.expr(st.value)
                    if not nest.depends(st.value):
                        return None
                    write = st
                    continue
                return None
    except _Fail:
        return None
    if write is None or output is None or _output_read(ctx, outer, output, _target_of(write)):
        return None
    if not (nest.evidence or is_tensor(ctx, output)) or not nest.read:
        return None
    if not all(is_tensor(ctx, r) for r in nest.read_nodes):
        return None  # a list of tensors read per position (possibly ragged): nothing says it stacks
    if nest.window and nest.reduced:
        kind = "conv" if nest.kernel and not nest.max else "max_pool" if nest.max else (
            "avg_pool" if nest.mean else "window")
    elif nest.window:
        return None  # windows copied or reshaped, not reduced: no single op names it
    elif nest.masked and nest.reduced:
        kind = "masked"
    elif nest.product and nest.read_at == set(nest.vars):
        kind = "pairs"
    elif (nest.distance or nest.difference and nest.reduced) and nest.read_at == set(nest.vars):
        kind = "distance"
    else:
        return None
    return NestedWork(outer, inner, output, _target_expr(write), kind, list(nest.read))


def _target_expr(st: cst.BaseSmallStatement) -> cst.BaseExpression:
    return st.targets[0].target if isinstance(st, cst.Assign) else st.target  # type: ignore[union-attr]


def _target_of(st: cst.BaseSmallStatement) -> cst.CSTNode:
    if isinstance(st, cst.Assign):
        return st.targets[0]
    assert isinstance(st, cst.AugAssign)
    return st.target


def _kernel_var(ctx: FileContext, loop: cst.For) -> Optional[str]:
    """``k`` of ``for k in range(size)`` / ``range(0, size)``: a kernel offset (a literal size allowed)."""
    found = _range_stop(ctx, loop)
    if found is None or not _arithmetic(found[1]):
        return None
    return found[0]


def _only_loop(block: cst.BaseSuite) -> Optional[cst.For]:
    lines = _lines(block)
    if lines is not None and len(lines) == 1 and isinstance(lines[0], cst.For):
        return lines[0]
    return None


def _single(line: cst.BaseStatement) -> Optional[cst.BaseSmallStatement]:
    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
        return line.body[0]
    return None


class _Vars:
    def __init__(self, *names: str) -> None:
        self.vars = names


def _offset_index(ctx: FileContext, node: cst.BaseExpression, pos: str, off: str, others: Tuple[str, ...]) -> bool:
    """``i + di`` / ``i * s + di`` / ``di + i``: arithmetic reading the output position and the kernel
    offset of one axis, and no other loop variable."""
    return _arithmetic(node) and bool(ctx.names_in(node, pos)) and bool(ctx.names_in(node, off)) and not any(
        ctx.names_in(node, o) for o in others
    ) and not isinstance(node, cst.Name)


def _whole(el: cst.SubscriptElement) -> bool:
    sl = el.slice
    if isinstance(sl, cst.Slice):
        return sl.lower is None and sl.upper is None and sl.step is None
    return isinstance(sl.value, (cst.Integer, cst.Ellipsis))


def _window_factor(ctx: FileContext, node: cst.BaseExpression, i: str, j: str, di: str, dj: str) -> bool:
    """``x[i + di, j + dj]`` / ``x[:, :, i * s + di, j * s + dj]``."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, (cst.Name, cst.Attribute))):
        return False
    seen = []
    for el in node.slice:
        if _whole(el):
            continue
        sl = el.slice
        if not isinstance(sl, cst.Index):
            return False
        if _offset_index(ctx, sl.value, i, di, (j, dj)):
            seen.append("i")
        elif _offset_index(ctx, sl.value, j, dj, (i, di)):
            seen.append("j")
        else:
            return False
    return sorted(seen) == ["i", "j"]


def _kernel_factor(ctx: FileContext, node: cst.BaseExpression, di: str, dj: str) -> bool:
    """``w[di, dj]`` / ``w[:, :, di, dj]``: the kernel read at the offsets only."""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, (cst.Name, cst.Attribute))):
        return False
    seen = []
    for el in node.slice:
        if _whole(el):
            continue
        sl = el.slice
        if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Name) and sl.value.value in (di, dj):
            seen.append(sl.value.value)
        else:
            return False
    return sorted(seen) == sorted((di, dj))


def kernel_nest(ctx: FileContext, outer: cst.For) -> Optional[NestedWork]:
    """A convolution written as four loops, reported at ``outer``: two over output positions (``i``,
    ``j``), two over kernel offsets (``di``, ``dj``), and one accumulation of the input window times the
    kernel, ``out[i, j] += x[i + di, j + dj] * w[di, dj]`` (or ``acc = 0`` per position, ``acc += ...``
    in the kernel loops, ``out[i, j] = acc`` after them). Every position is written once from the input
    and a kernel the nest does not change: one ``F.conv2d``."""
    i = _range_var(ctx, outer)
    second = _only_loop(outer.body)
    if i is None or second is None:
        return None
    j = _range_var(ctx, second)
    lines = _lines(second.body)
    if j is None or not lines:
        return None
    acc: Optional[str] = None
    final: Optional[cst.BaseSmallStatement] = None
    if len(lines) == 1 and isinstance(lines[0], cst.For):
        third = lines[0]
    elif len(lines) == 3 and isinstance(lines[1], cst.For):
        third = lines[1]
        reset, final = _single(lines[0]), _single(lines[2])
        if not (isinstance(reset, cst.Assign) and len(reset.targets) == 1
                and isinstance(reset.targets[0].target, cst.Name)
                and isinstance(reset.value, (cst.Integer, cst.Float))):
            return None
        acc = reset.targets[0].target.value
        if not (isinstance(final, cst.Assign) and len(final.targets) == 1 and isinstance(final.value, cst.Name)
                and final.value.value == acc):
            return None
    else:
        return None
    di = _kernel_var(ctx, third)
    fourth = _only_loop(third.body)
    if di is None or fourth is None:
        return None
    dj = _kernel_var(ctx, fourth)
    inner = _lines(fourth.body)
    if dj is None or not inner or len(inner) != 1 or len({i, j, di, dj}) != 4:
        return None
    step = _single(inner[0])
    if not (isinstance(step, cst.AugAssign) and isinstance(step.operator, cst.AddAssign)):
        return None
    positions = _Vars(i, j)
    if acc is None:
        output = _write_target(positions, step.target)  # type: ignore[arg-type]
        written = step.target
    else:
        if not (isinstance(step.target, cst.Name) and step.target.value == acc):
            return None
        assert isinstance(final, cst.Assign)
        written = final.targets[0].target
        output = _write_target(positions, written)  # type: ignore[arg-type]
    if output is None:
        return None
    value = step.value
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply)):
        return None
    for window, kernel in ((value.left, value.right), (value.right, value.left)):
        if _window_factor(ctx, window, i, j, di, dj) and _kernel_factor(ctx, kernel, di, dj):
            break
    else:
        return None
    x, w = window.value, kernel.value  # type: ignore[union-attr]
    codes = {ctx.code(n).strip() for n in (x, w, output)}
    if len(codes) != 3:
        return None  # the output read as the input or the kernel
    for name in {n.value for n in _iter_names(step.value)} | {n.value for n in _iter_names(written)}:
        if name not in (i, j, di, dj) and _assigned_in(ctx, outer, name):
            return None  # a stride or a tensor changed inside the nest
    if acc is not None and len(ctx.names_in(outer.body, acc)) != 3:
        return None  # the accumulator read elsewhere
    if _output_read(ctx, outer, output, written):
        return None
    if not (is_tensor(ctx, x) or is_tensor(ctx, output) and is_tensor(ctx, w)):
        return None  # nothing says the values are tensors (lists of numbers are convolved the same way)
    return NestedWork(outer, second, output, written, "conv", [ctx.code(x).strip(), ctx.code(w).strip()])


def _output_read(ctx: FileContext, loop: cst.For, output: cst.BaseExpression, write: cst.CSTNode) -> bool:
    """The output mentioned in the nest other than by its write and its sizes (``range(out.size(1))``)."""
    code = ctx.code(output).strip()
    stack: List[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if node is write:
            continue
        if isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size") \
                and ctx.code(node.value).strip() == code:
            continue
        if isinstance(node, (cst.Name, cst.Attribute)) and ctx.code(node).strip() == code:
            return True
        stack.extend(children(node))
    return False


def _iter_names(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            found.append(n)
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
            continue
        stack.extend(children(n))
    return found


def inside_kernel_nest(ctx: FileContext, loop: cst.For) -> bool:
    """Whether ``loop`` is one of the three inner loops of a ``kernel_nest`` (reported at its outermost)."""
    node: Optional[cst.CSTNode] = loop
    for _ in range(3):
        walk = ctx.parent(node) if node is not None else None
        while walk is not None and not isinstance(walk, (cst.For, cst.FunctionDef, cst.ClassDef, cst.Module)):
            walk = ctx.parent(walk)
        if not isinstance(walk, cst.For):
            return False
        if kernel_nest(ctx, walk) is not None:
            return True
        node = walk
    return False


def inner_of_nest(ctx: FileContext, loop: cst.For) -> Optional[cst.For]:
    """The loop around ``loop`` when ``loop`` is the last statement of its body, or None."""
    line = ctx.parent(ctx.parent(loop))
    if isinstance(line, cst.For) and isinstance(line.body, cst.IndentedBlock) and line.body.body \
            and line.body.body[-1] is loop:
        return line
    return None


__all__ = ["NestedWork", "nested_slice_work", "inner_of_nest", "per_row_product", "kernel_nest",
           "inside_kernel_nest"]
