"""Facts about Python loops that walk the rows of a tensor, shared by the TL3 rules.

A *row loop* is ``for i in range(<n>)`` whose body indexes ``x[i]`` where ``x`` is known to be a tensor
(``x = torch.rand(...)``, a ``Tensor`` annotation, ``range(x.size(0))``), or ``for row in x`` over such a
tensor.  This module recognises the shapes of those loops — the bound (``x.size(0)``, ``x.shape[0]``,
``len(x)``, ``n`` with ``n, d = x.shape``), how the loop variable is used (only as ``x[i]``, as a read or a
write), whether the loop carries state from one iteration to the next (RNN time steps, running maxima),
and whether the rows are ragged (``x[i, :lengths[i]]``) — and the three patterns the rules fix: row-wise
accumulation (``z += x[i]``), batch gathers (``out.append(t[i][idx[i]])`` + ``torch.stack``) and plain
per-row indexing.

Every answer leans towards "not a row loop": loops over modules, heads, layers, lists, epochs or any
bound that is not tied to a tensor's first dimension are left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext, arg, assignment_targets, written_target
from torchlint.analysis.names import root_name, target_names
from torchlint.analysis.walk import iter_nodes
from torchlint.families.shapes.shapes import int_literal, is_tensor, shape_of
from torchlint.families.loops.rowwork import small_dim

RANGE = frozenset({"builtins.range"})
ZIP = frozenset({"builtins.zip"})
LEN = frozenset({"builtins.len"})
UNBIND = frozenset({"torch.unbind"})
STACK = frozenset({"torch.stack"})


# -- small structural helpers ------------------------------------------------------------------


def same(ctx: FileContext, a: Optional[cst.CSTNode], b: Optional[cst.CSTNode]) -> bool:
    """Whether two expressions read the same (by source text)."""
    if a is None or b is None:
        return False
    return ctx.code(a).strip() == ctx.code(b).strip()


def simple_ref(expr: cst.BaseExpression) -> bool:
    """``x`` or ``self.x`` (a name or an attribute chain on a name): cheap and side-effect free."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)


def _constant_index(expr: Optional[cst.BaseExpression]) -> bool:
    if expr is None or isinstance(expr, cst.Integer):
        return True
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(
        expr.expression, cst.Integer)


def pure_view(expr: cst.BaseExpression) -> bool:
    """:func:`simple_ref`, or a view of one by constant indices and slices (``logits[:, -1]``, ``h[0]``):
    the same rows however often it is read, while its root is not rebound."""
    while isinstance(expr, cst.Subscript):
        for element in expr.slice:
            sl = element.slice
            if isinstance(sl, cst.Index):
                if sl.star is not None or not _constant_index(sl.value):
                    return False
            elif not (_constant_index(sl.lower) and _constant_index(sl.upper) and _constant_index(sl.step)):
                return False
        expr = expr.value
    return simple_ref(expr)


def single_index(sub: cst.Subscript) -> Optional[cst.BaseExpression]:
    """``x[i]`` -> ``i`` (one plain index), else None."""
    if len(sub.slice) != 1:
        return None
    sl = sub.slice[0].slice
    if isinstance(sl, cst.Index) and sl.star is None:
        return sl.value
    return None


def first_index(sub: cst.Subscript) -> Optional[cst.BaseExpression]:
    """``x[i, ...]`` -> ``i``."""
    if not sub.slice:
        return None
    sl = sub.slice[0].slice
    if isinstance(sl, cst.Index) and sl.star is None:
        return sl.value
    return None


def is_name(expr: Optional[cst.CSTNode], name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def statements(block: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(block, cst.IndentedBlock):
        return block.body
    return []


def only_small_statement(block: cst.BaseSuite) -> Optional[cst.BaseSmallStatement]:
    """The one small statement of a body such as ``z += x[i]`` (on its own line or after the colon)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return block.body[0] if len(block.body) == 1 else None
    body = statements(block)
    if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        return body[0].body[0]
    return None


_ESCAPES = (cst.Break, cst.Return, cst.Continue, cst.Raise)


def has_escape(block: cst.BaseSuite) -> bool:
    """Whether the body can leave the loop early or yield (``break``, ``return``, ``continue``,
    ``raise``, ``yield``): data-dependent control flow that a vectorized form would not reproduce."""
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                if isinstance(small, _ESCAPES):
                    return True
                if isinstance(small, cst.Expr) and isinstance(small.value, (cst.Yield, cst.Await)):
                    return True
                if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and isinstance(
                    getattr(small, "value", None), cst.Yield
                ):
                    return True
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(node, cst.IndentedBlock):
            stack.extend(node.body)
        elif isinstance(node, cst.BaseCompoundStatement):
            stack.append(node.body)
            for extra in ("orelse", "handlers", "finalbody"):
                sub = getattr(node, extra, None)
                if sub is None:
                    continue
                if isinstance(sub, (list, tuple)):
                    stack.extend(sub)
                else:
                    stack.append(sub)
        elif isinstance(node, (cst.Else, cst.ExceptHandler, cst.Finally)):
            stack.append(node.body)
    return False


# -- ranges and bounds -------------------------------------------------------------------------


@dataclass
class RangeLoop:
    """``for <var> in range([start,] stop[, step])``."""

    loop: cst.For
    var: cst.Name
    start: Optional[cst.BaseExpression]
    stop: cst.BaseExpression
    step: Optional[cst.BaseExpression]

    @property
    def from_zero(self) -> bool:
        return self.start is None or int_literal(self.start) == 0

    @property
    def unit_step(self) -> bool:
        return self.step is None or int_literal(self.step) == 1


Bounds = Tuple[Optional[cst.BaseExpression], cst.BaseExpression, Optional[cst.BaseExpression]]


def range_call(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Bounds]:
    """(start, stop, step) of ``range(...)``."""
    if not isinstance(expr, cst.Call) or not ctx.names.matches(expr.func, RANGE):
        return None
    if any(a.star or a.keyword is not None for a in expr.args):
        return None
    vals = [a.value for a in expr.args]
    if len(vals) == 1:
        return None, vals[0], None
    if len(vals) == 2:
        return vals[0], vals[1], None
    if len(vals) == 3:
        return vals[0], vals[1], vals[2]
    return None


def range_loop(ctx: FileContext, loop: cst.For) -> Optional[RangeLoop]:
    if not isinstance(loop.target, cst.Name) or loop.asynchronous is not None:
        return None
    r = range_call(ctx, loop.iter)
    if r is None:
        return None
    return RangeLoop(loop, loop.target, r[0], r[1], r[2])


@dataclass
class Rows:
    """``stop`` denotes the size of the first dimension of ``tensor``; ``how`` says how we know."""

    tensor: cst.BaseExpression
    how: str  # "size" (x.size(0), n, d = x.size()) | "shape" (x.shape[0], n, d = x.shape) | "len" (len(x))
    unpacked: bool = False


def _dim0_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Rows]:
    # x.size(0) / x.size(dim=0) / x.size()[0] / x.shape[0]
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
        a = arg(expr, 0, "dim")
        if a is not None and int_literal(a.value) == 0 and len(expr.args) == 1:
            return Rows(expr.func.value, "size")
        return None
    if isinstance(expr, cst.Subscript):
        idx = single_index(expr)
        if idx is None or int_literal(idx) != 0:
            return None
        base = expr.value
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            return Rows(base.value, "shape")
        if (
            isinstance(base, cst.Call)
            and not base.args
            and isinstance(base.func, cst.Attribute)
            and base.func.attr.value == "size"
        ):
            return Rows(base.func.value, "size")
        return None
    if isinstance(expr, cst.Call) and ctx.names.matches(expr.func, LEN) and len(expr.args) == 1:
        return Rows(expr.args[0].value, "len")
    return None


def _unpacked_dim0(ctx: FileContext, name: cst.Name) -> Optional[Rows]:
    """``n`` bound by ``n, d = x.shape`` / ``n, *_ = x.size()`` / ``n, c = x.shape[:2]``."""
    scope = ctx.names.function_scope_node() or ctx.module
    for assign in ctx.contents(scope).assigns:
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            continue
        target = assign.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements:
            continue
        first = target.elements[0].value
        if not is_name(first, name.value):
            continue
        value = assign.value
        if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
            sl = value.slice[0].slice
            if sl.lower is None or int_literal(sl.lower) == 0:
                value = value.value
        if isinstance(value, cst.Attribute) and value.attr.value == "shape":
            return Rows(value.value, "shape", True)
        if (
            isinstance(value, cst.Call)
            and not value.args
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "size"
        ):
            return Rows(value.func.value, "size", True)
    return None


def rows_of(ctx: FileContext, stop: cst.BaseExpression) -> Optional[Rows]:
    """The tensor whose first dimension ``stop`` measures, when the code says so."""
    found = _dim0_of(ctx, stop)
    if found is not None:
        return found
    if isinstance(stop, cst.Name):
        vals = ctx.names.bound_values(stop)
        if not vals:
            return None
        if all(v is not None for v in vals):
            if len(vals) == 1:
                found = _dim0_of(ctx, vals[0])
                if found is not None:
                    return found
            return None
        if len(vals) == 1:
            return _unpacked_dim0(ctx, stop)
    return None


def tensor_evidence(ctx: FileContext, expr: cst.BaseExpression, rows: Optional[Rows] = None) -> bool:
    """Whether ``expr`` is a tensor: by :func:`is_tensor`, or because the loop bound called
    ``expr.size(0)`` (lists and arrays have no ``size()`` method)."""
    if rows is not None and rows.how == "size" and same(ctx, rows.tensor, expr):
        return True
    return is_tensor(ctx, expr)


def covers_all_rows(ctx: FileContext, rl: RangeLoop, tensor: cst.BaseExpression) -> bool:
    """``range(len(x))``, ``range(x.size(0))``, or ``range(500)`` with ``x`` known to have 500 rows."""
    if not rl.from_zero or not rl.unit_step:
        return False
    rows = rows_of(ctx, rl.stop)
    if rows is not None and same(ctx, rows.tensor, tensor):
        return True
    n = int_literal(rl.stop)
    if n is not None:
        shape = shape_of(ctx, tensor)
        if shape is not None:
            known, size = shape.size(0)
            return known and size == n
    return False


# -- uses of the loop variable -------------------------------------------------------------------


@dataclass
class IndexUse:
    """One use of the loop variable ``i``; ``subscript`` is set when the use is the first index of
    ``base[i, ...]``."""

    name: cst.Name
    subscript: Optional[cst.Subscript] = None
    base: Optional[cst.BaseExpression] = None
    store: bool = False  # the subscript is written (``x[i] = ...``, ``x[i] += ...``, ``x[i].add_()``)


def _is_store(ctx: FileContext, sub: cst.CSTNode) -> bool:
    node = sub
    parent = ctx.parent(node)
    # x[i][j] = ... writes into x[i]
    while isinstance(parent, cst.Subscript) and parent.value is node:
        node, parent = parent, ctx.parent(parent)
    if written_target(ctx, node):  # (`a, x[i] = ...` too)
        return True
    if isinstance(parent, cst.Del):
        return True
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value.endswith("_"):
        return not parent.attr.value.startswith("_")
    return False


def index_uses(ctx: FileContext, scope: cst.CSTNode, var: str) -> List[IndexUse]:
    """Every use of ``var`` under ``scope`` (a loop body), classified."""
    out: List[IndexUse] = []
    for name in ctx.names_in(scope, var):
        parent = ctx.parent(name)
        use = IndexUse(name)
        if isinstance(parent, cst.Index) and parent.value is name:
            el = ctx.parent(parent)
            sub = ctx.parent(el) if isinstance(el, cst.SubscriptElement) else None
            if isinstance(sub, cst.Subscript) and sub.slice and sub.slice[0] is el:
                use.subscript = sub
                use.base = sub.value
                use.store = _is_store(ctx, sub)
        out.append(use)
    return out


def used_outside(ctx: FileContext, loop: cst.For, var: str) -> bool:
    """Whether ``var`` is read outside ``loop`` in the enclosing function (or module)."""
    scope = ctx.names.function_scope_node() or ctx.module
    for name in ctx.names_in(scope, var):
        if name is loop.target:
            continue
        if not ctx.is_inside(name, loop):
            return True
    return False


def carries_state(ctx: FileContext, loop: cst.For) -> bool:
    """Whether an iteration reads a value that the previous iteration assigned (``h = cell(x[t], h)``,
    ``prev = cur``): a recurrence, which runs step by step by nature.  Augmented accumulations
    (``total += ...``) are reductions, not recurrences, and do not count."""
    body = loop.body
    assigned: List[Tuple[str, cst.Assign]] = []
    for node in ctx.contents(loop).assigns:
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for n in target_names(t.target):
                    assigned.append((n.value, node))
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.value is not None:
            assigned.append((node.target.value, node))  # type: ignore[arg-type]
    seen = set()
    for name, first_assign in assigned:
        if name in seen:
            continue
        seen.add(name)
        if ctx.names_in(first_assign.value, name):
            return True
        for use in ctx.names_in(body, name):
            if ctx.is_inside(use, first_assign):
                break  # reached the first assignment: earlier uses would have been found
            if not _is_target_name(ctx, use):
                return True
    return False


def _is_target_name(ctx: FileContext, name: cst.Name) -> bool:
    parent = ctx.parent(name)
    return isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor)) or (
        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is name
    )


def assigns_to(ctx: FileContext, loop: cst.For, expr: cst.BaseExpression) -> bool:
    """Whether the loop rebinds ``expr`` (``x = ...`` / ``self.x = ...``) anywhere in its body."""
    code = ctx.code(expr).strip()
    for node in ctx.contents(loop).assigns:
        for t in assignment_targets(node):
            names = list(target_names(t)) if not isinstance(t, cst.Attribute) else [t]
            if any(ctx.code(n).strip() == code for n in names):
                return True
    return False


# -- the patterns ------------------------------------------------------------------------------


@dataclass
class Accumulation:
    """``for i in range(n): z += x[i]`` / ``for row in x: z += row``."""

    loop: cst.For
    statement: cst.BaseSmallStatement
    accumulator: cst.BaseExpression
    tensor: cst.BaseExpression
    start: Optional[cst.BaseExpression] = None
    stop: Optional[cst.BaseExpression] = None  # None: every row
    dim: int = 0
    augmented: bool = True
    var: Optional[cst.Name] = None


def _accumulated(stmt: cst.BaseSmallStatement) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression, bool]]:
    """(accumulator, added value, augmented) for ``z += v`` / ``z = z + v`` / ``z = v + z``."""
    if isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.AddAssign):
        return stmt.target, stmt.value, True
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0].target
        value = stmt.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) and not value.lpar:
            if _same_simple(target, value.left):
                return target, value.right, False
            if _same_simple(target, value.right):
                return target, value.left, False
    return None


def _same_simple(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    if isinstance(a, cst.Name) and isinstance(b, cst.Name):
        return a.value == b.value
    if isinstance(a, cst.Attribute) and isinstance(b, cst.Attribute):
        return a.attr.value == b.attr.value and _same_simple(a.value, b.value)  # type: ignore[arg-type]
    return False


def row_accumulation(ctx: FileContext, loop: cst.For) -> Optional[Accumulation]:
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    stmt = only_small_statement(loop.body)
    if stmt is None:
        return None
    acc = _accumulated(stmt)
    if acc is None:
        return None
    target, value, augmented = acc
    if not simple_ref(target):
        return None
    rl = range_loop(ctx, loop)
    if rl is not None:
        if not isinstance(value, cst.Subscript) or not is_name(single_index(value), rl.var.value):
            return None
        tensor = value.value
        if not simple_ref(tensor) or ctx.names_in(tensor, rl.var.value) or same(ctx, tensor, target):
            return None
        if not rl.unit_step:
            return None
        rows = rows_of(ctx, rl.stop)
        if not tensor_evidence(ctx, tensor, rows):
            return None
        if covers_all_rows(ctx, rl, tensor):
            return Accumulation(loop, stmt, target, tensor, augmented=augmented, var=rl.var)
        if rows is not None and not same(ctx, rows.tensor, tensor):
            return None  # rows of another tensor: `x[:n]` would still be right, but keep to the clear case
        return Accumulation(loop, stmt, target, tensor, rl.start, rl.stop, augmented=augmented, var=rl.var)
    # for row in x / for row in torch.unbind(x[, dim])
    if not isinstance(loop.target, cst.Name) or not is_name(value, loop.target.value):
        return None
    it = loop.iter
    dim = 0
    if isinstance(it, cst.Call) and ctx.names.matches(it.func, UNBIND):
        x = arg(it, 0, "input")
        d = arg(it, 1, "dim")
        if x is None:
            return None
        if d is not None:
            dv = int_literal(d.value)
            if dv is None:
                return None
            dim = dv
        it = x.value
    elif isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "unbind":
        d = arg(it, 0, "dim")
        if d is not None:
            dv = int_literal(d.value)
            if dv is None:
                return None
            dim = dv
        it = it.func.value
        if not is_tensor(ctx, it):
            return None
    elif not is_tensor(ctx, it):
        return None
    if not simple_ref(it) or same(ctx, it, target):
        return None
    return Accumulation(loop, stmt, target, it, dim=dim, augmented=augmented, var=loop.target)


@dataclass
class Gather:
    """A batch gather: rows ``tensor[i][indices[i]]`` collected and stacked."""

    node: cst.CSTNode  # the loop, or the torch.stack call of a comprehension
    tensor: cst.BaseExpression
    indices: cst.BaseExpression
    stack: Optional[cst.Call] = None
    init: Optional[cst.CSTNode] = None  # `out = []` statement (loop form)
    collected: Optional[str] = None  # the list's name (loop form)
    stop: Optional[cst.BaseExpression] = None  # None: every row; else rows [:stop]
    full: bool = True


def gathered(
    ctx: FileContext, elem: cst.BaseExpression, var: str
) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(tensor, indices) when ``elem`` is ``tensor[i][indices[i]]`` or ``tensor[i, indices[i]]``."""
    if not isinstance(elem, cst.Subscript):
        return None
    tensor: Optional[cst.BaseExpression] = None
    picked: Optional[cst.BaseExpression] = None
    if len(elem.slice) == 2 and isinstance(elem.slice[1].slice, cst.Index):
        if is_name(first_index(elem), var):
            tensor = elem.value
            picked = elem.slice[1].slice.value  # type: ignore[union-attr]
    elif len(elem.slice) == 1 and isinstance(elem.value, cst.Subscript):
        inner = elem.value
        if is_name(single_index(inner), var):
            tensor = inner.value
            picked = single_index(elem)
    if tensor is None or picked is None or not isinstance(picked, cst.Subscript):
        return None
    if not is_name(single_index(picked), var):
        return None
    indices = picked.value
    if not simple_ref(tensor) or not simple_ref(indices) or same(ctx, tensor, indices):
        return None
    return tensor, indices


def _zip_gathered(ctx: FileContext, target: cst.BaseExpression, it: cst.BaseExpression,
                  elem: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``for row, j in zip(t, idx): ... row[j]``."""
    if not isinstance(target, cst.Tuple) or len(target.elements) != 2:
        return None
    if not isinstance(it, cst.Call) or not ctx.names.matches(it.func, ZIP) or len(it.args) != 2:
        return None
    row, j = target.elements[0].value, target.elements[1].value
    if not isinstance(row, cst.Name) or not isinstance(j, cst.Name):
        return None
    if not isinstance(elem, cst.Subscript) or not is_name(elem.value, row.value):
        return None
    if not is_name(single_index(elem), j.value):
        return None
    tensor, indices = it.args[0].value, it.args[1].value
    if not simple_ref(tensor) or not simple_ref(indices) or it.args[0].star or it.args[1].star:
        return None
    return tensor, indices


def _range_from_zero(ctx: FileContext, comp: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The stop of a comprehension's ``for i in range(stop)`` (from 0, step 1); None for any other iterable."""
    bounds = range_call(ctx, comp.for_in.iter)  # type: ignore[attr-defined]
    if bounds is None:
        return None
    start, stop, step = bounds
    if (start is not None and int_literal(start) != 0) or step is not None:
        return None
    return stop


def _stack_dim0(ctx: FileContext, call: cst.Call) -> bool:
    d = arg(call, 1, "dim")
    return d is None or int_literal(d.value) == 0


def gather_comprehension(ctx: FileContext, call: cst.Call) -> Optional[Gather]:
    """``torch.stack([t[i][idx[i]] for i in range(t.size(0))])`` / ``... for r, j in zip(t, idx)``."""
    if not ctx.names.matches(call.func, STACK) or not _stack_dim0(ctx, call):
        return None
    first = arg(call, 0, "tensors")
    if first is None or not isinstance(first.value, (cst.ListComp, cst.GeneratorExp)):
        return None
    comp = first.value
    cf = comp.for_in
    if cf.ifs or cf.inner_for_in is not None or cf.asynchronous is not None:
        return None
    if isinstance(cf.target, cst.Name):
        stop = _range_from_zero(ctx, comp)
        if stop is None:
            return None
        found = gathered(ctx, comp.elt, cf.target.value)
        if found is None:
            return None
        tensor, indices = found
        rows = rows_of(ctx, stop)
        if not _stacked_gather_evidence(ctx, tensor, comp.elt, rows):
            return None
        full = rows is not None and same(ctx, rows.tensor, tensor)
        return Gather(call, tensor, indices, stack=call, stop=None if full else stop, full=full)
    found = _zip_gathered(ctx, cf.target, cf.iter, comp.elt)
    if found is None or not is_tensor(ctx, found[0]):
        return None
    return Gather(call, found[0], found[1], stack=call)


def gather_loop(ctx: FileContext, loop: cst.For) -> Optional[Gather]:
    """``out = []`` / ``for i in range(t.size(0)): out.append(t[i][idx[i]])`` (or ``out += [...]``) /
    ``torch.stack(out)``.  Without the stack after the loop it is not a batch gather (None); ``init``
    is None when the list has other uses (no fix)."""
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    stmt = only_small_statement(loop.body)
    if stmt is None:
        return None
    collected: Optional[cst.BaseExpression] = None
    elem: Optional[cst.BaseExpression] = None
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        c = stmt.value
        if isinstance(c.func, cst.Attribute) and c.func.attr.value == "append" and len(c.args) == 1:
            collected, elem = c.func.value, c.args[0].value
    elif isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.AddAssign):
        if isinstance(stmt.value, cst.List) and len(stmt.value.elements) == 1:
            collected, elem = stmt.target, stmt.value.elements[0].value
    if not isinstance(collected, cst.Name) or elem is None:
        return None
    rl = range_loop(ctx, loop)
    if rl is not None:
        if not rl.from_zero or not rl.unit_step:
            return None
        found = gathered(ctx, elem, rl.var.value)
        if found is None:
            return None
        tensor, indices = found
        rows = rows_of(ctx, rl.stop)
        full = rows is not None and same(ctx, rows.tensor, tensor)
        full = full or covers_all_rows(ctx, rl, tensor)
        stop: Optional[cst.BaseExpression] = None if full else rl.stop
    else:
        found = _zip_gathered(ctx, loop.target, loop.iter, elem)
        if found is None:
            return None
        tensor, indices = found
        rows = None
        full, stop = True, None
    g = Gather(loop, tensor, indices, collected=collected.value, stop=stop, full=full)
    _find_init_and_stack(ctx, loop, collected.value, g)
    if g.stack is None:
        return None  # rows kept in a list: often ragged, not a batch gather
    if not _stacked_gather_evidence(ctx, tensor, elem, rows):
        return None
    return g


def _stacked_gather_evidence(ctx: FileContext, tensor: cst.BaseExpression, elem: cst.BaseExpression,
                             rows: Optional[Rows]) -> bool:
    """Evidence that a gathered-and-stacked ``tensor`` is one tensor, not a list of tensors (ragged).
    ``torch.stack`` needs tensors, so ``tensor[i, idx[i]]`` (tuple indexing) or a bound read from
    ``tensor.shape``/``tensor.size()`` means an array, and an array whose rows stack is a tensor."""
    if tensor_evidence(ctx, tensor, rows):
        return True
    if isinstance(elem, cst.Subscript) and len(elem.slice) == 2:
        return True
    return rows is not None and rows.how in ("size", "shape") and same(ctx, rows.tensor, tensor)


def _find_init_and_stack(ctx: FileContext, loop: cst.For, name: str, g: Gather) -> None:
    """Find ``torch.stack(name)`` in a statement after the loop (``g.stack``),
    and ``name = []`` before the loop (``g.init``, set only when the list has no other use, the stack
    is along dim 0 and the fix can drop all three)."""
    block = ctx.block_of(loop)
    if block is None:
        return
    pos = next((i for i, s in enumerate(block) if s is loop), None)
    if pos is None:
        return
    stack_call = None
    for later in block[pos + 1:]:
        if not ctx.names_in(later, name):
            continue
        for call in ctx.contents(later).calls:
            if ctx.names.matches(call.func, STACK):
                first = arg(call, 0, "tensors")
                if first is not None and is_name(first.value, name):
                    stack_call = call
                    break
        if stack_call is not None:
            break
    if stack_call is None:
        return
    g.stack = stack_call
    if not _stack_dim0(ctx, stack_call):
        return
    init = None
    for prev in reversed(block[:pos]):
        if isinstance(prev, cst.SimpleStatementLine) and len(prev.body) == 1 and isinstance(prev.body[0], cst.Assign):
            a = prev.body[0]
            if (
                len(a.targets) == 1
                and is_name(a.targets[0].target, name)
                and isinstance(a.value, cst.List)
                and not a.value.elements
            ):
                init = prev
                break
        if ctx.names_in(prev, name):
            return
    if init is None:
        return
    scope = ctx.names.function_scope_node() or ctx.module
    # the list is used by its initialisation, the loop body and the stack: nothing else
    if len(ctx.names_in(scope, name)) == 3:
        g.init = init


@dataclass
class RowIndexing:
    """``for i in range(<rows of x>)`` whose body indexes ``x[i]``."""

    loop: cst.For
    var: cst.Name
    tensor: cst.BaseExpression
    indexed: List[cst.BaseExpression] = field(default_factory=list)  # every tensor indexed by i
    uses: List[IndexUse] = field(default_factory=list)
    reads_only_rows: bool = False  # the body only reads tensor[i] (i has no other use)
    full: bool = False


def row_indexing(ctx: FileContext, loop: cst.For) -> Optional[RowIndexing]:
    """The loop over the rows of a tensor that indexes them one at a time, or None.  Recurrences,
    ragged rows, early exits and loops whose variable is used for more than indexing are None."""
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    rl = range_loop(ctx, loop)
    if rl is None or not rl.unit_step:
        return None
    rows = rows_of(ctx, rl.stop)
    if rows is None:
        return None
    tensor = rows.tensor
    if not pure_view(tensor) or not tensor_evidence(ctx, tensor, rows):
        return None
    if small_dim(ctx, tensor, 0):
        return None  # a handful of rows (`torch.tensor([4, 5, 6])`): a few whole-tensor operations
    if isinstance(tensor, cst.Subscript) and assigns_to(ctx, loop, root_name(tensor) or tensor):
        return None  # `logits[:, -1]` with `logits` rebound in the loop: other rows each time
    uses = index_uses(ctx, loop.body, rl.var.value)
    if not uses:
        return None
    row_uses = [u for u in uses if u.subscript is not None and same(ctx, u.base, tensor)]
    if not row_uses:
        return None
    if any(u.subscript is None for u in uses):
        return None  # i also used as a number (arithmetic, a call argument, a key)
    if any(_ragged(ctx, u.subscript) for u in uses if u.subscript is not None):
        return None
    if has_escape(loop.body) or carries_state(ctx, loop):
        return None
    if any(u.store for u in row_uses) or assigns_to(ctx, loop, tensor):
        return None  # the loop writes the rows it reads: an in-place recurrence
    if not batchable_body(ctx, loop, [u.subscript for u in uses if u.subscript is not None and not u.store]):
        return None
    indexed: List[cst.BaseExpression] = []
    for u in uses:
        if u.base is not None and not any(same(ctx, u.base, b) for b in indexed):
            indexed.append(u.base)
    only_rows = all(same(ctx, u.base, tensor) and not u.store for u in uses)
    return RowIndexing(loop, rl.var, tensor, indexed, uses, only_rows, rl.from_zero)


# data-dependent shapes or a trip to Python: the per-row result cannot be batched as it is
DATA_DEPENDENT_METHODS = frozenset(
    {"nonzero", "unique", "unique_consecutive", "masked_select", "item", "tolist", "numpy", "argwhere",
     "nonzero_static", "split", "tensor_split", "chunk"}
)
DATA_DEPENDENT_FUNCS = frozenset("torch." + n for n in DATA_DEPENDENT_METHODS if n not in ("item", "tolist", "numpy"))
COLLECTORS = frozenset({"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.vstack",
                        "torch.hstack", "torch.dstack"})
_ARITH = (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison)


def batchable_body(ctx: FileContext, loop: cst.For, rows: Sequence[cst.Subscript]) -> bool:
    """Whether every row read in the loop flows only through operations known to work on a batch
    (arithmetic, torch functions, tensor methods, ``nn`` layers) into a uniform result: a list that is
    stacked or concatenated after the loop, a write ``out[i] = ...``, or an accumulation ``+=``.

    Rows passed to functions of unknown behaviour (``save_image(x[i])``, ``self._erase(x[i])``), rows
    with data-dependent shapes (``x[i][mask[i]]``, ``.nonzero()``), rows that steer control flow
    (``if x[i] > 0``), per-row lists that are returned as lists (ragged results) and scalar parameter
    sweeps (``preds >= thresholds[i]``) are not batchable as written."""
    body = loop.body
    work: List[cst.BaseExpression] = list(rows)
    seen: set = set()
    collected = False
    row_set = set(rows)
    while work:
        expr = work.pop()
        if expr in seen:
            continue
        seen.add(expr)
        node: cst.CSTNode = expr
        while True:
            parent = ctx.parent(node)
            if parent is None or parent is body:
                return False
            if isinstance(parent, cst.Subscript) and parent.value is node:
                if any(not _plain_index(el) for el in parent.slice):
                    return False  # x[i][mask], x[i][idx]: data-dependent or a gather
                node = parent
                continue
            if isinstance(parent, cst.Attribute) and parent.value is node:
                call = ctx.parent(parent)
                if isinstance(call, cst.Call) and call.func is parent:
                    if parent.attr.value in DATA_DEPENDENT_METHODS:
                        return False
                    if parent.attr.value == "append":
                        return False  # appending to a row: not a tensor operation
                    node = call
                    continue
                break  # x[i].shape, x[i].dtype: metadata
            if isinstance(parent, cst.Arg):
                call = ctx.parent(parent)
                if not isinstance(call, cst.Call):
                    return False
                verdict = _call_sink(ctx, call, loop)
                if verdict == "collect":
                    collected = True
                    break
                if verdict != "tensor":
                    return False
                node = call
                continue
            if isinstance(parent, (cst.ComparisonTarget,)):
                node = parent
                continue
            if isinstance(parent, _ARITH):
                row = node.comparator if isinstance(node, cst.ComparisonTarget) else node
                if row in row_set and _scalar_sweep(ctx, parent, row):
                    return False
                node = parent
                continue
            if isinstance(parent, (cst.Element, cst.List, cst.Tuple)):
                node = parent
                continue
            if isinstance(parent, cst.Assign) and parent.value is node:
                for t in parent.targets:
                    target = t.target
                    if isinstance(target, cst.Subscript):
                        collected = True  # out[i] = ...
                    elif isinstance(target, (cst.Name, cst.Tuple, cst.List)):
                        for name in target_names(target):
                            work.extend(
                                n for n in ctx.names_in(body, name.value) if not _is_target_name(ctx, n)
                            )
                    else:
                        return False
                break
            if isinstance(parent, cst.AugAssign) and parent.value is node:
                collected = True
                break
            if isinstance(parent, (cst.AssignTarget, cst.Index, cst.SubscriptElement)):
                return False  # the row used as a key or index elsewhere
            return False  # control flow, returns, f-strings, anything else
    return collected


def _plain_index(el: cst.SubscriptElement) -> bool:
    sl = el.slice
    if isinstance(sl, cst.Slice):
        return all(b is None or int_literal(b) is not None for b in (sl.lower, sl.upper, sl.step))
    if isinstance(sl, cst.Index):
        v = sl.value
        if isinstance(v, cst.Name):
            return v.value == "None"
        return int_literal(v) is not None or isinstance(v, cst.Ellipsis)
    return False


def _call_sink(ctx: FileContext, call: cst.Call, loop: cst.For) -> str:
    """"tensor" (the call maps tensors to tensors and batches), "collect" (``out.append(row)`` to a list
    stacked after the loop), or "unknown"."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name):
        return "collect" if _stacked_after(ctx, loop, func.value.value) else "unknown"
    qn = ctx.names.qualified_names(func)
    if qn:
        if not qn.isdisjoint(DATA_DEPENDENT_FUNCS):
            return "unknown"
        if any(q.startswith("torch.") and not q.startswith(("torch.utils", "torch.distributed", "torch.cuda"))
               for q in qn):
            return "tensor"
        return "unknown"
    if isinstance(func, cst.Attribute) and not ctx.names.qualified_names(func.value):
        # a tensor method on something computed from the row: `y.matmul(x[i])`
        if func.attr.value in DATA_DEPENDENT_METHODS:
            return "unknown"
    layer = ctx.names.instance_of(func)
    if any(q.startswith("torch.nn.") for q in layer):
        return "tensor"
    return "unknown"


def _stacked_after(ctx: FileContext, loop: cst.For, name: str) -> bool:
    """Whether the list ``name`` is stacked or concatenated by a statement after the loop."""
    block = ctx.block_of(loop)
    if block is None:
        return False
    pos = next((i for i, st in enumerate(block) if st is loop), None)
    if pos is None:
        return False
    for later in block[pos + 1:]:
        for call in ctx.contents(later).calls:
            if ctx.names.matches(call.func, COLLECTORS):
                first = arg(call, 0, "tensors")
                if first is not None and is_name(first.value, name):
                    return True
    return False


def _scalar_sweep(ctx: FileContext, op: cst.CSTNode, row: cst.CSTNode) -> bool:
    """``preds >= thresholds[i]``: one element of a vector against a whole tensor — a sweep over
    parameter values, each step as large as the data (vectorizing it multiplies memory)."""
    if not isinstance(row, cst.Subscript) or len(row.slice) != 1:
        return False
    others: List[cst.BaseExpression] = []
    if isinstance(op, cst.BinaryOperation):
        if isinstance(op.operator, cst.MatrixMultiply):
            return False  # `q[i] @ k.T`: a row's scores, not one value against a whole tensor
        others = [op.left if op.right is row else op.right]
    elif isinstance(op, cst.Comparison):
        others = [op.left] + [c.comparator for c in op.comparisons]
    elif isinstance(op, cst.UnaryOperation):
        return False
    others = [o for o in others if o is not row]
    return any(isinstance(o, (cst.Name, cst.Attribute)) for o in others)


def _ragged(ctx: FileContext, sub: cst.Subscript) -> bool:
    """``x[i, :lengths[i]]`` / ``x[i][:n]``: rows cut to a per-row length."""
    elements: List[cst.SubscriptElement] = list(sub.slice[1:])
    parent = ctx.parent(sub)
    if isinstance(parent, cst.Subscript) and parent.value is sub:
        elements.extend(parent.slice)
    for el in elements:
        sl = el.slice
        if isinstance(sl, cst.Slice):
            for bound in (sl.lower, sl.upper, sl.step):
                if bound is not None and int_literal(bound) is None:
                    return True
    return False



@dataclass
class ComprehensionTally:
    """``[1 if pred[j] == y[j] else 0 for j in range(n)]``: a comprehension that tests tensors element by
    element (``var`` indexes each of ``tensors``), one Python number per element."""

    comp: cst.CSTNode
    var: str
    tensors: List[cst.BaseExpression]
    test: cst.Comparison
    operands: Tuple[cst.BaseExpression, cst.BaseExpression]  # each side as a whole tensor (or a constant)


#: what turns one element (or one test) into a Python number: ``.item()``, a host copy, a cast
_TO_NUMBER_METHODS = ("item", "cpu", "long", "int", "float", "double", "bool")
_TO_NUMBER_BUILTINS = ("int", "float", "bool")


def _number_of(ctx: FileContext, expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x[j].item()``, ``int(x[j])``, ``(a == b).float()`` -> what is turned into a number."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args \
                and expr.func.attr.value in _TO_NUMBER_METHODS:
            expr = expr.func.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and len(expr.args) == 1 \
                and expr.func.value in _TO_NUMBER_BUILTINS and not ctx.names.qualified_names_at(expr.func) \
                and not expr.args[0].star and expr.args[0].keyword is None:
            expr = expr.args[0].value
        else:
            return expr


def comprehension_tally(ctx: FileContext, comp: cst.CSTNode) -> Optional[ComprehensionTally]:
    """A list comprehension or generator over ``range(n)`` (from 0, step 1, no condition) whose element is a
    test of tensor elements at the comprehension's index, as a number: ``1 if pred[j] == y[j] else 0``,
    ``int(pred[j] == y[j])``, ``(pred[j] == y[j]).item()``, ``pred[j].item() == 0``.  Every index of the
    test is a plain ``t[j]`` of a name or attribute, at least one of which is a tensor, and the index is
    used for nothing else."""
    if not isinstance(comp, (cst.ListComp, cst.GeneratorExp)):
        return None
    cf = comp.for_in
    if cf.ifs or cf.inner_for_in is not None or cf.asynchronous is not None or not isinstance(cf.target, cst.Name):
        return None
    if _range_from_zero(ctx, comp) is None:
        return None
    var = cf.target.value
    elt = comp.elt
    if isinstance(elt, cst.IfExp):  # `1 if test else 0`
        if not (isinstance(elt.body, cst.Integer) and isinstance(elt.orelse, cst.Integer)):
            return None
        elt = elt.test
    test = _number_of(ctx, elt)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    tensors: List[cst.BaseExpression] = []
    operands: List[cst.BaseExpression] = []
    for side in (test.left, test.comparisons[0].comparator):
        core = _number_of(ctx, side)
        if isinstance(core, cst.Subscript) and is_name(single_index(core), var) \
                and isinstance(core.value, (cst.Name, cst.Attribute)):
            tensors.append(core.value)
            operands.append(core.value)
        elif isinstance(core, (cst.Integer, cst.Float)):
            operands.append(core)
        else:
            return None
    if not tensors or not all(is_tensor(ctx, t) for t in tensors):
        return None  # (a dict or a list on one side has no element-wise comparison)
    if sum(1 for n in iter_nodes(comp.elt) if is_name(n, var)) != len(tensors):
        return None  # the index used as a number, or twice in one operand
    return ComprehensionTally(comp, var, tensors, test, (operands[0], operands[1]))

__all__ = [
    "ComprehensionTally",
    "comprehension_tally",
    "RangeLoop",
    "Rows",
    "IndexUse",
    "Accumulation",
    "Gather",
    "RowIndexing",
    "range_loop",
    "range_call",
    "rows_of",
    "tensor_evidence",
    "covers_all_rows",
    "index_uses",
    "used_outside",
    "carries_state",
    "assigns_to",
    "row_accumulation",
    "gather_loop",
    "gather_comprehension",
    "gathered",
    "row_indexing",
    "has_escape",
    "same",
    "pure_view",
    "simple_ref",
    "single_index",
]
