"""Import-alias name resolution and scope facts, computed during the engine's single traversal.

This answers the questions libcst's ``QualifiedNameProvider`` answers for rules — "is ``F.softmax`` here
``torch.nn.functional.softmax``?" — without building the full scope graph up front, which costs several
times the parse itself on real code.  Python's own lookup order is followed: the enclosing function scopes
(class bodies skipped), then module-level imports (collected from the top-level statements before the
walk, so a function may use a name imported further down), then builtins.  A name bound by an assignment
or a parameter in a function shadows a module import of the same name.

Answers are frozensets of dotted names, so they never depend on set iteration order.
"""
from __future__ import annotations

import builtins
from bisect import bisect_left
from itertools import islice
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union, overload

import libcst as cst

from torchlint.analysis.walk import children, has_ancestor, iter_nodes

_BUILTINS = frozenset(dir(builtins))
_ParentOf = Callable[[cst.CSTNode], Optional[cst.CSTNode]]
EMPTY: FrozenSet[str] = frozenset()


class Binding:
    """One name in one scope: its import origins, and the values bound to it in source order (None where
    the value is unknown), each with the position (:meth:`NameResolver.position`) of the node that
    bound it."""

    __slots__ = ("imports", "values", "assigned", "at", "changed", "since", "imported")

    def __init__(self, since: int) -> None:
        self.imports: List[str] = []
        self.values: List[Optional[cst.BaseExpression]] = []
        self.assigned = False
        self.at: List[int] = []  # the position of each entry of ``values``
        self.changed: List[Tuple[int, cst.AugAssign]] = []  # the augmented assignments (``x += 1``), placed
        self.since = since  # the position of the first node that bound the name (-1: before the walk)
        self.imported: Optional[int] = None  # the position of its first import


class Prefix(Sequence[Optional[cst.BaseExpression]]):
    """The first ``n`` values of a binding, without a copy: a lookup costs the same however many times
    the name was bound (``x = f(x)`` 20,000 times; copying the earlier values on each made it quadratic).
    The binding only grows at its end, so the view stays what it was when made."""

    __slots__ = ("items", "n")

    def __init__(self, items: List[Optional[cst.BaseExpression]], n: int) -> None:
        self.items = items
        self.n = n

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> Optional[cst.BaseExpression]: ...

    @overload
    def __getitem__(self, i: slice) -> List[Optional[cst.BaseExpression]]: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[Optional[cst.BaseExpression], List[Optional[cst.BaseExpression]]]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            return self.items[start:stop:step]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("binding index out of range")
        return self.items[i]

    def __iter__(self) -> Iterator[Optional[cst.BaseExpression]]:
        return islice(self.items, self.n)

    def __reversed__(self) -> Iterator[Optional[cst.BaseExpression]]:
        items = self.items
        return (items[i] for i in range(self.n - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Prefix, list, tuple)):
            return len(other) == self.n and all(a is b or a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Prefix({self.items[:self.n]!r})"


_NO_VALUES = Prefix([], 0)


class Assignments:
    """The plain assignments (``x = v``, ``a, b = v``) of one name in one scope, in source order, with
    their positions once asked for: indexed once, so finding the one that reaches a node is a binary
    search, however many times the name is reassigned."""

    __slots__ = ("entries", "positions")

    def __init__(self) -> None:
        self.entries: List[Tuple[cst.Assign, Optional[int]]] = []  # (assignment, tuple position or None)
        self.positions: List[int] = []


class Scope:
    __slots__ = ("node", "kind", "parent", "bindings", "attrs", "attr_at", "self_name", "globals", "global_at",
                 "assigns")

    def __init__(self, node: cst.CSTNode, kind: str, parent: Optional["Scope"]) -> None:
        self.node = node
        self.kind = kind  # "module" | "function" | "class" | "lambda"
        self.parent = parent
        self.bindings: Dict[str, Binding] = {}
        self.attrs: Dict[str, List[cst.BaseExpression]] = {}  # class scopes: self.<attr> = value
        self.attr_at: Dict[str, List[int]] = {}  # the position of each entry of ``attrs``
        self.self_name: Optional[str] = None  # functions defined in a class: name of the first param
        self.globals: set = set()
        self.global_at: Dict[str, int] = {}  # the position of a name's first ``global`` declaration
        self.assigns: Dict[str, Assignments] = {}

    def bind(self, name: str, at: int) -> Binding:
        b = self.bindings.get(name)
        if b is None:
            b = self.bindings[name] = Binding(at)
        return b


def _names_bound_in(node: Any, walrus: bool = True) -> Set[str]:
    """Every plain name a statement (or part of one) binds anywhere inside it: assignment, loop and ``with``
    targets, ``def``/``class`` names, walrus targets (an over-approximation is safe: it only refuses an
    alias).  With ``walrus`` False (the module's text holds no ``:=``) no expression can bind a name of
    the statement's scope, and none is looked into."""
    found: Set[str] = set()
    pending: List[Any] = list(node) if isinstance(node, (list, tuple)) else [node]
    while pending:
        item = pending.pop()
        if isinstance(item, (cst.FunctionDef, cst.ClassDef)):
            found.add(item.name.value)
            continue
        if isinstance(item, (cst.AssignTarget, cst.AsName, cst.NamedExpr, cst.AugAssign, cst.AnnAssign, cst.For,
                             cst.CompFor)):
            target = item.name if isinstance(item, cst.AsName) else item.target
            found.update(n.value for n in target_names(target))
        if isinstance(item, cst.CSTNode) and (walrus or not isinstance(item, cst.BaseExpression)):
            pending.extend(item.children)
    return found


def _module_rebinds(small: cst.BaseSmallStatement, aliases: List[Tuple[str, cst.BaseExpression]],
                    rebound: Set[str], walrus: bool = True) -> None:
    """Sort a module-level small statement's bindings: ``name = a.b.c`` is a candidate alias, every other
    name it binds is not one."""
    if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and _chain(small.value)[0] is not None):
        aliases.append((small.targets[0].target.value, small.value))
        return
    rebound.update(_names_bound_in(small, walrus))


def _chain(node: cst.BaseExpression) -> Tuple[Optional[cst.Name], str]:
    """``a.b.c`` -> (the Name ``a``, ``".b.c"``); (None, "") when the chain does not start at a name."""
    rest: List[str] = []
    expr = node
    while type(expr) is cst.Attribute:
        rest.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is not cst.Name:
        return None, ""
    return expr, "".join("." + part for part in reversed(rest))  # type: ignore[return-value]


def root_name(expr: cst.BaseExpression, calls: bool = False) -> Optional[cst.Name]:
    """The name an expression starts from, through attributes and subscripts (and, with ``calls``, the
    callee of a call): ``logits`` of ``logits[:, -1]`` or ``logits.data``; ``self`` of ``self.net[0]``."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)) or calls and isinstance(expr, cst.Call):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr if isinstance(expr, cst.Name) else None


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: List[str] = []
    while type(node) is cst.Attribute:  # (libcst's concrete classes have no subclasses)
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is cst.Name:
        parts.append(node.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


#: what a star import of a library that is not read binds, where the library re-exports torch's modules
#: under their usual names (torch_snippets and fastai's ``all`` modules import them for their users)
LIBRARY_STAR_EXPORTS: Dict[str, Dict[str, str]] = {
    "torch_snippets": {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim"},
    "fastai": {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional"},
}
#: ``(module, level) -> (files read, {name: [qualified origins]})``: what a star import of a project module
#: binds (through the star imports it makes in turn)
StarExports = Callable[[str, int], Optional[Tuple[Tuple[str, ...], Dict[str, List[str]]]]]


def _import_module_name(node: cst.ImportFrom) -> str:
    mod = dotted_name(node.module) if node.module is not None else ""
    return "." * len(node.relative) + (mod or "")


def _paired_elements(target: cst.BaseExpression, value: cst.BaseExpression
                     ) -> Optional[List[Tuple[cst.Name, cst.BaseExpression]]]:
    """``a, b = X(), Y()``: each name of a flat tuple target with the element of the tuple (or list)
    literal in the same place, when both have the same length and nothing is starred; None otherwise
    (the elements of another value are unknown).  A swap (``a, b = b, a``) reads names the same statement
    rebinds: unknown too."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return None
    if len(target.elements) != len(value.elements):
        return None
    if any(isinstance(e, cst.StarredElement) or not isinstance(e.value, cst.Name) for e in target.elements):
        return None
    if any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    bound = {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
    for e in value.elements:
        for n in _walk_names(e.value):
            if n in bound:
                return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)
            if isinstance(t.value, cst.Name)]


def _walk_names(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    for child in node.children:
        yield from _walk_names(child)


def target_names(target: cst.BaseExpression) -> Iterable[cst.Name]:
    """The names an assignment, loop or ``with`` target binds (``a, (b, *c)`` -> a, b, c)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from target_names(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def _last_known(b: Binding, n: int, count: int, skip: Optional[Callable[[cst.BaseExpression], bool]] = None
                ) -> List[Tuple[int, cst.BaseExpression]]:
    """Up to ``count`` (position, value) of the last known values among the first ``n`` of ``b``, the
    last first; values for which ``skip`` says true are passed over."""
    out: List[Tuple[int, cst.BaseExpression]] = []
    values, at = b.values, b.at
    for k in range(n - 1, -1, -1):
        v = values[k]
        if v is not None and (skip is None or not skip(v)):
            out.append((at[k], v))
            if len(out) == count:
                break
    return out


def _built_or_none(value: cst.IfExp) -> cst.BaseExpression:
    """``X(...) if test else None`` (either way round): the branch that builds something; the expression
    itself otherwise."""
    arms = (value.body, value.orelse)
    nones = [type(a) is cst.Name and a.value == "None" for a in arms]  # type: ignore[attr-defined]
    if nones.count(True) != 1:
        return value
    return arms[1] if nones[0] else arms[0]


class NameResolver:
    """The file's bindings, and the one answer to "what value does this name hold here".

    The value a name holds at a node: :meth:`values_before` and :meth:`bound_values` (the values
    assigned before the node), :meth:`value_of` (the one that reaches it; ``through_updates``: the one
    last assigned, whatever ``+=`` did since), :meth:`sole_value` (the value of the only binding
    before the node) and :meth:`reaching_value` (the one value on every path, after the walk), placed by the node's
    position, so they answer the same during the walk (rules run during it) and after it;
    :meth:`reaching_assignment` (the assignment that runs on every path to the node).  Every value a name
    is given in its scope: :meth:`values_at`.  Import origins and bindings: during the walk, from the
    scope being visited (:meth:`lookup`, :meth:`qualified_names`, :meth:`is_param`: what is bound *so
    far*); after the walk (or about a node away from the walk), from the scope that holds a node
    (:meth:`scope_at`, :meth:`binding_at`, :meth:`qualified_names_at`).  ``parents`` (id(node) ->
    parent, filled by the walk) places a node in its scope."""

    def __init__(self, module: cst.Module, parents: Optional[Dict[int, cst.CSTNode]] = None,
                 order: Optional[Dict[int, int]] = None, star_exports: Optional[StarExports] = None,
                 walrus: bool = True) -> None:
        """``walrus``: whether the module's text may hold an assignment expression (``:=``); False spares
        the scan of module-level bindings a look into every expression."""
        self.parents: Dict[int, cst.CSTNode] = parents if parents is not None else {}
        #: id(node) -> pre-order index, filled by the walk (numbered here when asked about a node the
        #: walk has not reached)
        self.order: Dict[int, int] = order if order is not None else {}
        self._numbered: Optional[Dict[int, int]] = None
        self.module_scope = Scope(module, "module", None)
        self.scope = self.module_scope
        self.imports_torch = False
        #: what ``from <module> import *`` of a module of the project binds (given by the project, which
        #: reads the module's imports), and the files read for it
        self._star_exports = star_exports
        self.star_sources: List[str] = []
        self._scope_of: Dict[cst.CSTNode, Scope] = {module: self.module_scope}
        #: the position of the node being entered (-1: the module-level imports, bound before the walk)
        self._pos = -1
        #: the node the walk entered last, and whether the walk has left the module
        self.cursor: Optional[cst.CSTNode] = None
        self.done = False
        #: every node of the module has been entered (the bindings are final; the rules may still be leaving
        #: the module): set by the walk's owner
        self.entered_all = False
        self._ahead: Optional["NameResolver"] = None
        self._below: Optional[_Below] = None
        #: once every node was entered, :meth:`scope_at` and :meth:`qualified_names_at` of the walked nodes,
        #: by id (the scopes no longer change then; rules ask the same nodes many times)
        self._scope_memo: Dict[int, Scope] = {}
        self._names_memo: Dict[int, FrozenSet[str]] = {}
        #: the same for :meth:`qualified_names` (a builtin included) and :meth:`instance_of` of the walked
        #: nodes, and for the scope :meth:`_place` finds around them
        self._after_memo: Dict[int, FrozenSet[str]] = {}
        self._instance_memo: Dict[int, FrozenSet[str]] = {}
        self._around_memo: Dict[int, Scope] = {}
        #: :meth:`qualified_names` where the walk is now, by id (with the node, which keeps the id its
        #: own): the many rules that ask about the call being visited get one answer; emptied whenever
        #: a binding or the current scope changes
        self._here_memo: Dict[int, Tuple[cst.CSTNode, FrozenSet[str]]] = {}
        self._walrus = walrus
        self._prescan(module.body)

    # -- module-level imports, before the walk --------------------------------------------------
    def _prescan(self, body: Iterable[cst.CSTNode]) -> None:
        # iterative: an `elif` chain nests one `If` per branch
        pending: List[cst.CSTNode] = list(body)
        pending.reverse()
        aliases: List[Tuple[str, cst.BaseExpression]] = []
        rebound: Set[str] = set()
        while pending:
            stmt = pending.pop()
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self._bind_import(self.module_scope, small)
                    else:
                        _module_rebinds(small, aliases, rebound, self._walrus)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                rebound.add(stmt.name.value)
            elif isinstance(stmt, (cst.For, cst.While)):
                rebound.update(_names_bound_in(stmt, self._walrus))
            elif isinstance(stmt, (cst.If, cst.Try, cst.With, cst.Else, cst.ExceptHandler, cst.Finally)):
                if isinstance(stmt, cst.With):
                    rebound.update(_names_bound_in(stmt.items, self._walrus))
                elif isinstance(stmt, cst.ExceptHandler) and stmt.name is not None:
                    rebound.update(_names_bound_in(stmt.name, self._walrus))
                found: List[cst.CSTNode] = []
                inner = stmt.body
                if isinstance(inner, cst.IndentedBlock):
                    found.extend(inner.body)
                for extra in ("orelse", "handlers", "finalbody"):
                    sub = getattr(stmt, extra, None)
                    if sub is None:
                        continue
                    if isinstance(sub, (list, tuple)):
                        found.extend(sub)
                    else:
                        found.append(sub)
                pending.extend(reversed(found))
        self._bind_aliases(aliases, rebound)

    def _bind_aliases(self, aliases: List[Tuple[str, cst.BaseExpression]], rebound: Set[str]) -> None:
        """``Norm = nn.BatchNorm2d`` at module level: the name holds what the chain names, as an import would
        (``Norm(8)`` builds a batch-norm layer), where every module-level binding of it is such a chain of
        imported names (in the arms of an ``if``: each origin, as for imports in ``try``/``except``);
        bound any other way too (a loop, a ``def``, another value), the name is left to its values."""
        grouped: Dict[str, List[cst.BaseExpression]] = {}
        for name, value in aliases:
            grouped.setdefault(name, []).append(value)
        for name, values in grouped.items():
            if name in rebound:
                continue
            found: List[str] = []
            for value in values:
                root, suffix = _chain(value)
                origins = self.module_scope.bindings.get(root.value) if root is not None else None
                if root is None or root.value in rebound or origins is None or not origins.imports:
                    found = []
                    break
                found.extend(base + suffix for base in origins.imports if base + suffix not in found)
            if not found:
                continue
            b = self.module_scope.bind(name, self._pos)
            b.imports.extend(o for o in found if o not in b.imports)
            if any(o.split(".")[0] == "torch" for o in found):
                self.imports_torch = True

    def _bind_star(self, scope: Scope, mod: str) -> None:
        """``from utils import *`` of a project module that imports torch: the names its imports bind
        (``torch``, ``nn``, ``F``) are bound here as the same imports."""
        bare = mod.lstrip(".")
        if bare.split(".")[0] in ("torch", "numpy", "builtins"):
            return
        found = self._star_exports(bare, len(mod) - len(bare)) if self._star_exports is not None else None
        if found is None:
            library = LIBRARY_STAR_EXPORTS.get(bare.split(".")[0]) if bare == mod else None
            if library is not None:  # a library that re-exports torch's modules (`from torch_snippets import *`)
                found = ((), {local: [origin] for local, origin in library.items()})
            else:
                return
        sources, exports = found
        self.star_sources.extend(s for s in sources if s not in self.star_sources)
        for local, origins in exports.items():
            b = self._import_binding(scope, local)
            for origin in origins:
                if origin not in b.imports:
                    b.imports.append(origin)
                if origin.split(".")[0] == "torch":
                    self.imports_torch = True

    def _bind_import(self, scope: Scope, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if full.split(".")[0] == "torch":
                    self.imports_torch = True
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    b = self._import_binding(scope, alias.asname.name.value)
                    if full not in b.imports:
                        b.imports.append(full)
                else:
                    top = full.split(".")[0]
                    b = self._import_binding(scope, top)
                    if top not in b.imports:
                        b.imports.append(top)
        elif isinstance(node, cst.ImportFrom):
            mod = _import_module_name(node)
            if mod.split(".")[0] == "torch":
                self.imports_torch = True
            if isinstance(node.names, cst.ImportStar):
                if scope is self.module_scope:
                    self._bind_star(scope, mod)
                return
            for alias in node.names:
                name = dotted_name(alias.name) or ""
                local = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                full = f"{mod}.{name}" if mod and not mod.endswith(".") else f"{mod}{name}"
                b = self._import_binding(scope, local)
                if full not in b.imports:
                    b.imports.append(full)

    def _import_binding(self, scope: Scope, name: str) -> Binding:
        b = scope.bind(name, self._pos)
        if b.imported is None:
            b.imported = self._pos
        return b

    # -- traversal hooks (called by FileContext for every node) ---------------------------------
    def enter(self, node: cst.CSTNode) -> None:
        self.cursor = node
        handler = _ENTER.get(type(node))
        if handler is not None:
            self._pos = self.order[id(node)]
            handler(self, node)
            if self._here_memo:
                self._here_memo.clear()

    def leave(self, node: cst.CSTNode) -> None:
        if type(node) in SCOPE_TYPES and self.scope.node is node:
            self.scope = self.scope.parent or self.module_scope
            if self._here_memo:
                self._here_memo.clear()
        elif node is self.module_scope.node:
            self.done = True

    def _push(self, node: cst.CSTNode, kind: str) -> Scope:
        scope = Scope(node, kind, self.scope)
        self._scope_of[node] = scope
        self.scope = scope
        return scope

    def _enter_function(self, node: cst.FunctionDef) -> None:
        self._bind_local(self.scope, node.name.value, None)
        outer = self.scope
        scope = self._push(node, "function")
        if outer.kind == "class":
            params = list(node.params.posonly_params) + list(node.params.params)
            if params:
                scope.self_name = params[0].name.value

    def _enter_lambda(self, node: cst.Lambda) -> None:
        self._push(node, "lambda")

    def _enter_class(self, node: cst.ClassDef) -> None:
        self._bind_local(self.scope, node.name.value, None)
        self._push(node, "class")

    def _enter_param(self, node: cst.Param) -> None:
        self._bind_local(self.scope, node.name.value, None)  # a parameter's value is unknown

    def _bind_local(self, scope: Scope, name: str, value: Optional[cst.BaseExpression]) -> None:
        if name in scope.globals:
            scope = self.module_scope
        b = scope.bind(name, self._pos)
        b.assigned = True
        b.values.append(value)
        b.at.append(self._pos)

    def _enter_assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._index_assignment(node, node.targets[0].target)
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name):
                self._bind_local(self.scope, target.value, node.value)
            elif isinstance(target, cst.Attribute):
                self._record_attr(target, node.value)
            else:
                paired = _paired_elements(target, node.value)
                if paired is not None:
                    for name, value in paired:
                        self._bind_local(self.scope, name.value, value)
                    continue
                for name in target_names(target):
                    self._bind_local(self.scope, name.value, None)

    def _index_assignment(self, node: cst.Assign, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            bound: Iterable[Tuple[str, Optional[int]]] = ((target.value, None),)
        elif isinstance(target, (cst.Tuple, cst.List)) and not any(
            isinstance(el, cst.StarredElement) for el in target.elements
        ):
            first: Dict[str, Optional[int]] = {}
            for i, el in enumerate(target.elements):
                if isinstance(el.value, cst.Name):
                    first.setdefault(el.value.value, i)
            bound = first.items()
        else:
            return
        table = self.scope.assigns
        for name, index in bound:
            found = table.get(name)
            if found is None:
                found = table[name] = Assignments()
            found.entries.append((node, index))

    def _enter_annassign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind_local(self.scope, node.target.value, node.value)
        elif isinstance(node.target, cst.Attribute) and node.value is not None:
            self._record_attr(node.target, node.value)

    def _enter_augassign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            b = self.scope.bind(node.target.value, self._pos)
            b.assigned = True
            b.changed.append((self._pos, node))

    def _record_attr(self, target: cst.Attribute, value: cst.BaseExpression) -> None:
        scope = self.scope
        if (
            scope.kind == "function"
            and scope.self_name is not None
            and isinstance(target.value, cst.Name)
            and target.value.value == scope.self_name
            and scope.parent is not None
        ):
            scope.parent.attrs.setdefault(target.attr.value, []).append(value)
            scope.parent.attr_at.setdefault(target.attr.value, []).append(self._pos)

    def _enter_for(self, node: cst.For) -> None:
        for name in target_names(node.target):
            self._bind_local(self.scope, name.value, None)

    def _enter_comp_for(self, node: cst.CompFor) -> None:
        for name in target_names(node.target):
            self._bind_local(self.scope, name.value, None)

    def _enter_with_item(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in target_names(node.asname.name):
                self._bind_local(self.scope, name.value, None)

    def _enter_import(self, node: cst.CSTNode) -> None:
        if self.scope is not self.module_scope:
            self._bind_import(self.scope, node)
        else:
            self._bind_import(self.module_scope, node)  # idempotent with the prescan

    def _enter_global(self, node: cst.Global) -> None:
        for item in node.names:
            self.scope.globals.add(item.name.value)
            self.scope.global_at.setdefault(item.name.value, self._pos)

    def _enter_named_expr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self._bind_local(self.scope, node.target.value, node.value)

    def _enter_except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind_local(self.scope, node.name.name.value, None)

    # -- queries --------------------------------------------------------------------------------
    def lookup(self, name: str) -> Optional[Binding]:
        scope: Optional[Scope] = self.scope
        first = True
        while scope is not None:
            if scope.kind != "class" or first:
                if name in scope.globals and scope is not self.module_scope:
                    # ``global x`` sends the lookup to the module, once: at module level the
                    # statement is a no-op (following it again would never end)
                    scope = self.module_scope
                    continue
                b = scope.bindings.get(name)
                if b is not None:
                    return b
            first = False
            scope = scope.parent
        return None

    def qualified_names(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Dotted origins of a Name/Attribute chain: ``F.softmax`` -> {"torch.nn.functional.softmax"}: during
        the walk, from the bindings where the walk is; after it, for a node of the module, from the
        scope the node is in (:meth:`qualified_names_at`, a builtin included): one answer whenever a
        rule asks."""
        if self.entered_all:
            key = id(node)
            found = self._after_memo.get(key)
            if found is not None:
                return found
            if key in self.order:
                found = self._after_memo[key] = self._qualified_names_after(node)
                return found
        memo = self._here_memo
        known = memo.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        found = self._qualified_names(node)
        memo[id(node)] = (node, found)
        return found

    def _qualified_names(self, node: cst.BaseExpression) -> FrozenSet[str]:
        rest: List[str] = []
        while type(node) is cst.Attribute:
            rest.append(node.attr.value)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        if type(node) is not cst.Name:
            return EMPTY
        b = self.lookup(node.value)
        if b is None:
            bases = ("builtins." + node.value,) if node.value in _BUILTINS else ()
        elif b.imports and b.values and self._import_hidden(b, node):
            bases = ()
        else:
            bases = tuple(b.imports)
        if not bases:
            return EMPTY
        suffix = "".join("." + part for part in reversed(rest))
        return frozenset(base + suffix for base in bases)

    def matches(self, node: cst.BaseExpression, names: Iterable[str]) -> bool:
        qn = self.qualified_names(node)
        if not qn:
            return False
        return not qn.isdisjoint(names)

    def instance_of(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """Qualified names of the class (or factory) that built the value of ``node``."""
        if type(node) is cst.Call:
            return self.qualified_names(node.func)
        after = self.entered_all and id(node) in self.order
        if after:
            found = self._instance_memo.get(id(node))
            if found is not None:
                return found
        out: set = set()
        for value in self.values_reaching(node):
            if type(value) is cst.IfExp:
                value = _built_or_none(value)  # `Sched(opt) if args.sched else None`: the object, where it is one
            if type(value) is cst.Call:
                out |= self.qualified_names(value.func)  # type: ignore[attr-defined]
        found = frozenset(out)
        if after:
            self._instance_memo[id(node)] = found
        return found

    def values_reaching(self, node: cst.BaseExpression) -> List[cst.BaseExpression]:
        """The known values of :meth:`values_before` that may still be held at ``node``: for a ``Name``,
        the values from the last assignment that runs on every path to ``node`` and gives the name a
        value computed without it (``loss_f = nn.BCELoss()`` at the top of the block that reads it,
        after an earlier ``loss_f = nn.CrossEntropyLoss()``) on; ``x = x.to(device)`` keeps what ``x``
        held before."""
        if type(node) is not cst.Name:
            return self.values_before(node)
        placed = self._place(node)
        if placed is None:
            return []
        parent_of = placed[2]
        bound = self.bound_values(node)
        out: List[cst.BaseExpression] = []
        for k in range(len(bound) - 1, -1, -1):
            value = bound[k]
            if value is None:
                continue
            out.append(value)
            if _overwrites(value, node, parent_of):
                break
        out.reverse()
        return out

    def is_param(self, node: cst.Name) -> bool:
        """Whether ``node`` names a parameter (or another binding whose value is unknown) where the walk is."""
        b = self.lookup(node.value)
        return b is not None and b.assigned and not any(v is not None for v in b.values)

    # -- queries about a node, after the walk ----------------------------------------------------
    def scope_at(self, node: cst.CSTNode) -> Scope:
        """The scope ``node``'s names are looked up in after the walk: the innermost function or lambda
        around it that the walk has entered, else the module (a class body reads through to the scope
        around the class)."""
        key = id(node)
        memo = self._scope_memo
        found = memo.get(key)
        if found is not None:
            return found
        scopes = self._scope_of
        parents = self.parents
        p = parents.get(key)
        came_from: cst.CSTNode = node
        found = self.module_scope
        while p is not None:
            if type(p) is cst.FunctionDef or type(p) is cst.Lambda:
                inner = scopes.get(p)
                # a decorator is evaluated where the function is defined (`@torch.no_grad()` above
                # `def f(torch): ...` names the module, not the parameter)
                if inner is not None and type(came_from) is not cst.Decorator:
                    found = inner
                    break
            came_from = p
            p = parents.get(id(p))
        if self.entered_all and key in self.order:
            memo[key] = found
        return found

    def binding_at(self, node: cst.CSTNode, name: str) -> Optional[Binding]:
        """The binding ``name`` has where ``node`` is, after the walk: searched from :meth:`scope_at`
        outwards (class scopes skipped), a ``global`` declaration sending it to the module once."""
        scope: Optional[Scope] = self._scope_memo.get(id(node)) or self.scope_at(node)
        jumped = False
        while scope is not None:
            if scope.kind != "class":
                if name in scope.globals and not jumped:
                    jumped = True  # once: a module-level `global x` names the module scope itself
                    scope = self.module_scope
                    continue
                b = scope.bindings.get(name)
                if b is not None:
                    return b
            scope = scope.parent
        return None

    def unpacked_values(self, node: cst.Name) -> List[Tuple[cst.BaseExpression, int]]:
        """For a name bound by unpacking (``model, transforms = build()``) in the scope :meth:`binding_at`
        finds for it: each such assignment's value and the name's position in its target, in source order
        (the bindings whose value :meth:`values_at` leaves out as unknown).  After the walk."""
        scope: Optional[Scope] = self.scope_at(node)
        jumped = False
        while scope is not None:
            if scope.kind != "class":
                if node.value in scope.globals and not jumped:
                    jumped = True
                    scope = self.module_scope
                    continue
                if node.value in scope.bindings:
                    found = scope.assigns.get(node.value)
                    return [(a.value, i) for a, i in found.entries if i is not None] if found is not None else []
            scope = scope.parent
        return []

    def qualified_names_at(self, node: cst.BaseExpression) -> FrozenSet[str]:
        """:meth:`qualified_names` of a Name/Attribute chain from the imports visible where it is, after
        the walk; only imported origins (a builtin, unlike during the walk, has none)."""
        key = id(node)
        found = self._names_memo.get(key)
        if found is not None:
            return found
        expr, suffix = _chain(node)
        if expr is None:
            return EMPTY
        b = self.binding_at(expr, expr.value)
        found = frozenset(base + suffix for base in b.imports) if b is not None and b.imports else EMPTY
        if found and b is not None and b.values and self._import_hidden(b, expr):
            found = EMPTY
        if self.entered_all and key in self.order:
            self._names_memo[key] = found
        return found

    def _qualified_names_after(self, node: cst.BaseExpression) -> FrozenSet[str]:
        found = self.qualified_names_at(node)
        if found:
            return found
        root, suffix = _chain(node)
        if root is None or root.value not in _BUILTINS:
            return EMPTY
        if self.binding_at(root, root.value) is not None:
            return EMPTY  # the builtin's name rebound (and not to an import)
        return frozenset({"builtins." + root.value + suffix})

    def is_param_at(self, node: cst.Name) -> bool:
        """:meth:`is_param` after the walk: ``node`` names a parameter (a local binding whose values are
        all unknown) where it is."""
        b = self.binding_at(node, node.value)
        return b is not None and b.assigned and not b.imports and not any(v is not None for v in b.values)

    def reads_parameter(self, node: cst.Name) -> bool:
        """Whether ``node`` reads the value its function was called with: the name is a parameter of the
        function around it and no other binding of it runs before the read (``yhat = yhat.squeeze()``
        reads the parameter: the assignment binds after its value is computed).  After the walk."""
        scope = self.scope_at(node)
        function = scope.node if scope is not None and scope.kind == "function" else None
        if not isinstance(function, (cst.FunctionDef, cst.Lambda)) or node.value in scope.globals:
            return False
        params = function.params
        if not any(p.name.value == node.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]):
            return False
        before = self.bound_values(node)
        return len(before) >= 1 and before[0] is None and all(
            v is not None and self._contains(v, node) for v in before[1:])

    def values_at(self, node: cst.BaseExpression) -> List[cst.BaseExpression]:
        """Every value assigned to a local name where ``node`` is (after the walk: the whole scope's
        assignments, in source order), or to ``self.<attr>`` in the class around ``node``."""
        if isinstance(node, cst.Name):
            b = self.binding_at(node, node.value)
            if b is None or b.imports and not self._import_hidden(b, node):
                return []
            return [v for v in b.values if v is not None]
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            p = self.parents.get(id(node))
            while p is not None and type(p) is not cst.ClassDef:
                p = self.parents.get(id(p))
            scope = self._scope_of.get(p) if p is not None else None
            if scope is not None:
                return list(scope.attrs.get(node.attr.value, ()))
        return []

    # -- the value a name holds at a node: the same answer during the walk and after it ------------
    def values_before(self, node: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> List[cst.BaseExpression]:
        """The values assigned, in source order, to the local name ``node`` (a ``Name``), or to
        ``self.<attr>`` in the class of the method around it, by the assignments before ``at`` (a node
        of this module; default ``node`` itself), looked up where ``at`` is.  An assignment ``at`` is part
        of counts (it runs first), not one whose value holds ``at`` (that read runs before it).  Bindings
        whose value is unknown (a parameter, a loop target, an element of an unpacked tuple) are left out;
        a name imported before ``at`` has no values.

        The answer does not depend on where the walk is: a node the walk has not reached yet is
        placed by looking ahead (see :meth:`_place`)."""
        if type(node) is cst.Name:
            return [v for v in self.bound_values(node, at) if v is not None]  # type: ignore[arg-type]
        ref = node if at is None else at
        placed = self._place(ref)
        if placed is None:
            return []
        resolver, pos, _, around = placed
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            scope: Optional[Scope] = around
            while scope is not None and scope.kind != "function":
                scope = scope.parent
            if scope is not None and scope.self_name == node.value.value and scope.parent is not None:
                attr = node.attr.value
                values = scope.parent.attrs.get(attr, ())
                return [v for v, p in zip(values, scope.parent.attr_at.get(attr, ())) if p < pos]
        return []

    def bound_values(self, node: cst.Name, at: Optional[cst.CSTNode] = None) -> Sequence[Optional[cst.BaseExpression]]:
        """Every binding of the local name ``node`` before ``at`` (default ``node``; looked up where
        ``at`` is), in source order: the value assigned, or None where the value is unknown (a parameter,
        a loop or ``with`` target, an element of an unpacked tuple).  Empty when the name is no local
        there (unbound, or imported).  Placed like :meth:`values_before`.  A view of the binding's
        values (:class:`Prefix`), found by a binary search: no copy of the earlier bindings per query."""
        ref = node if at is None else at
        placed = self._place(ref)
        if placed is None:
            return _NO_VALUES
        resolver, pos, parent_of, around = placed
        b = resolver._binding_before(around, node.value, pos)
        if b is None or (b.imported is not None and b.imported < pos and not resolver._import_hidden(b, ref, node.value)):
            return _NO_VALUES
        n = bisect_left(b.at, pos)  # ``at`` grows with the walk: sorted
        while n and b.values[n - 1] is not None and _inside(ref, b.values[n - 1], parent_of):  # type: ignore[arg-type]
            n -= 1  # `state = torch.tensor(state.reshape(1, -1))`: the read runs before its own assignment
        return Prefix(b.values, n)

    def value_of(self, node: cst.BaseExpression, *, through_updates: bool = False) -> Optional[cst.BaseExpression]:
        """The value the local name ``node`` holds where it is: the last value assigned to it before
        ``node`` (:meth:`values_before`), or the one before that when ``node`` is part of it (the ``g``
        read in ``g = torch.exp(-g / s)``).  None when ``node`` is no local name, its value is unknown,
        or an augmented assignment (``x += 1``) changed it since.

        ``through_updates=True`` asks for the value last assigned whatever updated it in place since
        (``loss = a + b`` for the ``loss`` read after ``loss += c``: the caller reads the updates itself),
        skipping every value ``node`` is part of."""
        if not isinstance(node, cst.Name):
            return None
        placed = self._place(node)
        if placed is None:
            return None
        resolver, pos, parent_of, around = placed
        b = resolver._binding_before(around, node.value, pos)
        if b is None or (b.imported is not None and b.imported < pos and not resolver._import_hidden(b, node)):
            return None
        if through_updates:
            values = b.values
            for k in range(bisect_left(b.at, pos) - 1, -1, -1):
                v = values[k]
                if v is not None and not _inside(node, v, parent_of):
                    return v
            return None
        # the last two known values before ``pos``, but not one bound in another branch of an `if` than
        # ``node`` (`if log: q = log_softmax(q)` / `else: q = exp(q) / ...`: the `else` reads the value before)
        known = _last_known(b, bisect_left(b.at, pos), 2, lambda v: exclusive(v, node, parent_of))
        if not known:
            return None
        p, value = known[0]
        if value is node:
            return None
        if _inside(node, value, parent_of):
            if len(known) < 2:
                return None
            p, value = known[1]
            if _inside(node, value, parent_of):
                return None
        changed = b.changed
        for k in range(bisect_left(changed, (p + 1,)), len(changed)):  # sorted by position
            c, aug = changed[k]
            if c >= pos:
                break
            if not _inside(node, aug, parent_of):
                return None  # changed in place since (``x += 1``; the ``x`` read by that statement is the value before)
        return value

    def sole_value(self, node: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> Optional[cst.BaseExpression]:
        """The value of the only binding the local name ``node`` has before ``at`` (default ``node``;
        placed like :meth:`bound_values`), or, for ``self.<attr>`` in a method, the only value assigned to
        it before ``at`` (:meth:`values_before`).  None when the name is bound more than once before
        ``at`` (a parameter given a new value counts twice), never, or to a value that is unknown (a
        parameter, a loop target, an element of an unpacked tuple)."""
        if isinstance(node, cst.Name):
            bound = self.bound_values(node, at)
            return bound[0] if len(bound) == 1 else None
        if isinstance(node, cst.Attribute):
            values = self.values_before(node, at)
            return values[0] if len(values) == 1 else None
        return None

    def reaching_value(self, node: cst.Name) -> Optional[cst.BaseExpression]:
        """The one value the name ``node`` holds on every path to it, after the walk: the value of the
        plain assignment (not an element of an unpacked tuple) that reaches it on every path
        (:meth:`reaching_assignment`) when that is also the last value assigned before it
        (:meth:`value_of`); for a module-level name read in a function or lambda (which may run after
        any statement of the module), its only value in the module.  None otherwise: an import, a
        parameter, a name bound on some paths only, more than once at module level, or changed in place."""
        b = self.binding_at(node, node.value)
        if b is None or b.imports and not self._import_hidden(b, node):
            return None
        function = self.parents.get(id(node))
        while function is not None and type(function) is not cst.FunctionDef and type(function) is not cst.Lambda:
            function = self.parents.get(id(function))
        if function is not None and node.value not in self.scope_at(node).bindings:
            return b.values[0] if len(b.values) == 1 else None
        value = self.value_of(node)
        if value is None:
            return None
        found = self.reaching_assignment(node.value, node, function)
        if found is None or found[0].value is not value or found[1] is not None:
            return None  # bound on some paths only, or an element of an unpacked tuple
        return value

    def reaching_attribute_value(self, node: cst.Attribute) -> Optional[cst.BaseExpression]:
        """For ``self.<attr>`` read in a method: the value the same method assigned it last before the read,
        when that assignment runs on every path to the read (it sits in no branch, loop, ``with`` or
        ``try`` the read is outside of): ``self.loss_G = self.loss_A + self.loss_B``, then
        ``self.loss_G.backward()``.  None otherwise (set in another method, on some paths only, or not)."""
        if not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            return None
        function = self.parents.get(id(node))
        while function is not None and type(function) is not cst.FunctionDef:
            function = self.parents.get(id(function))
        if function is None:
            return None
        here = [v for v in self.values_before(node) if self._contains(function, v)]
        if not here:
            return None
        value = here[-1]
        around = self.parents.get(id(value))
        while around is not None and around is not function:
            if isinstance(around, (cst.If, cst.For, cst.While, cst.With, cst.Try, cst.Lambda, cst.FunctionDef)) \
                    and not self._contains(around, node):
                return None
            around = self.parents.get(id(around))
        return value

    def constant_truth(self, test: cst.BaseExpression) -> Optional[bool]:
        """Whether the condition ``test`` is true, when the code decides it alone: a literal (``0``,
        ``True``, ``""``), ``not`` of one, or a name whose value on every path to it is one (``flag = 0``
        then ``if flag:``, after the walk; :meth:`reaching_value`).  None when it depends on the run."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.constant_truth(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.Name):
            if test.value in ("True", "False", "None"):
                return test.value == "True"
            value = self.reaching_value(test)
            return None if value is None or isinstance(value, cst.Name) else self.constant_truth(value)
        if isinstance(test, (cst.Integer, cst.Float)):
            return float(test.evaluated_value) != 0
        if isinstance(test, cst.SimpleString):
            return bool(test.evaluated_value)
        return None

    def _place(self, node: cst.CSTNode) -> Optional[Tuple["NameResolver", int, _ParentOf, Scope]]:
        """Where ``node`` is: the resolver that knows every binding before it, its position, its parent
        links, and the scope its names are looked up in.  A node the walk has reached is answered from
        what the walk collected (every binding before it is entered).  So is one below the node being
        entered when nothing between the two binds a name or opens a scope: its position and parent
        links come from numbering that node's subtree, and it is in the scope the walk is in.
        Any other node of the module (further on, during the walk) is answered by a resolver that walks
        the whole module once, ahead.  None for a node of another tree."""
        order = self.order
        pos = order.get(id(node))
        if pos is not None:
            return self, pos, self._parent, self._scope_around(node)
        cursor = self.cursor
        if not self.done and cursor is not None and id(cursor) in order:
            below = self._below
            if below is None or below.root is not cursor:
                below = self._below = _Below(cursor, order[id(cursor)], self.parents)
            pos = below.find(node)
            if pos is not None:
                return self, pos, below.parent, self.scope
        if self._ahead is None:
            if self.done:
                return None  # the walk saw every node of the module: this one belongs to another tree
            self._ahead = _walked(self.module_scope.node)
        ahead = self._ahead
        pos = ahead.order.get(id(node))
        if pos is None:
            return None
        return ahead, pos, ahead._parent, ahead._scope_around(node)

    def _parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(id(node))

    def _scope_around(self, node: cst.CSTNode) -> Scope:
        """The innermost scope a node the walk has reached sits in: a function's or a lambda's, or a
        class body's."""
        key = id(node)
        memo = self._around_memo
        found = memo.get(key)
        if found is not None:
            return found
        scopes = self._scope_of
        parents = self.parents
        found = self.module_scope
        p = parents.get(key)
        while p is not None:
            t = type(p)
            if t is cst.FunctionDef or t is cst.Lambda or t is cst.ClassDef:
                inner = scopes.get(p)
                if inner is not None:
                    found = inner
                    break
            p = parents.get(id(p))
        if self.entered_all and key in self.order:
            memo[key] = found
        return found

    def _binding_before(self, around: Scope, name: str, pos: int) -> Optional[Binding]:
        """The binding ``name`` has at position ``pos`` in the scope ``around``: Python's lookup from there
        (a class body only when it is ``around``), among the bindings made before ``pos``, a ``global``
        declaration before ``pos`` sending it to the module."""
        scope: Optional[Scope] = around
        first = True
        while scope is not None:
            if scope.kind != "class" or first:
                declared = scope.global_at.get(name)
                if declared is not None and declared < pos and scope is not self.module_scope:
                    scope = self.module_scope
                    continue
                b = scope.bindings.get(name)
                if b is not None and b.since < pos:
                    return b
            first = False
            scope = scope.parent
        return None

    def position(self, node: cst.CSTNode) -> int:
        """A key ordering the nodes of the file by source position (the walk's pre-order index; -1 for
        a node of another tree)."""
        found = self.order.get(id(node))
        if found is not None:
            return found
        if self._numbered is None:  # asked about a node the walk has not reached: number the module
            self._numbered = {id(n): i for i, n in enumerate(iter_nodes(self.module_scope.node))}
        return self._numbered.get(id(node), -1)

    def scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        """The scope a function, lambda, comprehension or class ``node`` opens (the module's for the
        module); None while the walk has not reached ``node``."""
        return self._scope_of.get(node)

    def holds_import(self, node: cst.Name) -> bool:
        """Whether the name ``node`` holds what an import bound to it, where it is (after the walk): its
        binding imports it and no plain assignment made after the import reaches it on every path
        (``import model`` then ``model = model.mnist()``: later reads hold the model)."""
        b = self.binding_at(node, node.value)
        return b is not None and bool(b.imports) and not self._import_hidden(b, node)

    def _import_hidden(self, b: Binding, node: cst.CSTNode, name: Optional[str] = None) -> bool:
        """``import model`` then ``model = model.mnist()``: where ``node`` reads the name, a plain assignment
        made after its import reaches it on every path (:meth:`reaching_assignment`), so the name holds
        that value, not the module."""
        if b.imported is None or not b.values:
            return False
        if name is None:
            name = node.value  # type: ignore[attr-defined]
        scope: Optional[Scope] = self.module_scope if self.module_scope.bindings.get(name) is b else None
        if scope is None:
            scope = self.scope_at(node) if self.entered_all else self.scope
            while scope is not None and scope.bindings.get(name) is not b:
                scope = scope.parent
        if scope is None:
            return False
        scope_node = None if scope is self.module_scope else scope.node
        found = self.reaching_assignment(name, node, scope_node)
        if found is not None:
            return self.position(found[0]) > b.imported
        # the last assignment before `node` runs on some paths only (`if use_gpu: model = model.cuda()`): an
        # earlier one made after the import on every path still hides it, since no assignment brings back
        # what an import bound (a later import is another binding)
        return self._assigned_after_import(name, node, scope_node, b.imported)

    def _assigned_after_import(self, name: str, at: cst.CSTNode, scope_node: Optional[cst.CSTNode],
                               imported: int) -> bool:
        scope = self.module_scope if scope_node is None else self._scope_of.get(scope_node)
        found = scope.assigns.get(name) if scope is not None else None
        if found is None:
            return False
        stop = scope_node if scope_node is not None else self.module_scope.node
        around = set(map(id, self._branches(at, stop)))
        where = self.position(at)
        arms: Dict[int, Set[int]] = {}  # id(if statement) -> ids of its arms that assign on every path through them
        for assign, _ in found.entries:
            position = self.position(assign)
            if not imported < position < where or self._contains(assign, at):
                continue
            # (a `with` body runs on every path past it; an `else` is its `if`'s arm)
            extra = [b for b in self._branches(assign, stop) if id(b) not in around and type(b) not in (cst.With, cst.Else)]
            if not extra:
                return True
            # `if cpu: lm = torch.load(f, ...)` / `else: lm = torch.load(f)`: both arms of one `if`
            if len(extra) == 1 and type(extra[0]) is cst.If and extra[0].orelse is not None \
                    and type(extra[0].orelse) is cst.Else:
                arm = extra[0].body if self._contains(extra[0].body, assign) else extra[0].orelse
                arms.setdefault(id(extra[0]), set()).add(id(arm))
                if len(arms[id(extra[0])]) == 2:
                    return True
        return False

    def reaching_assignment(self, name: str, at: cst.CSTNode,
                            scope_node: Optional[cst.CSTNode] = None) -> Optional[Tuple[cst.Assign, Optional[int]]]:
        """The plain assignment of ``name`` in the scope of ``scope_node`` (a function; None: the module)
        whose value ``name`` holds at ``at``: the last one before ``at`` (not the one ``at`` is part
        of), provided it runs on every path to ``at`` (it sits in no branch, loop, ``with`` or ``try``
        that ``at`` is outside of).  ``(assignment, index)``, ``index`` the tuple position for
        ``a, b = value``; None when no such assignment is known."""
        scope = self.module_scope if scope_node is None else self._scope_of.get(scope_node)
        found = scope.assigns.get(name) if scope is not None else None
        if found is None:
            return None
        entries, positions = found.entries, found.positions
        for assign, _ in entries[len(positions):]:  # positions in source order, asked for once each
            positions.append(self.position(assign))
        i = bisect_left(positions, self.position(at)) - 1
        stop = scope_node if scope_node is not None else self.module_scope.node
        arms = self._if_arms(at, stop)
        while i >= 0 and (self._contains(entries[i][0], at) or arms and self._other_arm(entries[i][0], arms, stop)):
            i -= 1  # `x = f(x)`: the `x` read is the value bound before; `if c: x = a` `else: f(x)`: never reaches
        if i < 0:
            return None
        assign, index = entries[i]
        around = set(map(id, self._branches(at, stop)))
        if not set(map(id, self._branches(assign, stop))) <= around:
            return None  # assigned only on some paths
        return assign, index

    def _contains(self, container: cst.CSTNode, node: cst.CSTNode) -> bool:
        return has_ancestor(self.parents, node, container)

    def _if_arms(self, at: cst.CSTNode, stop: cst.CSTNode) -> Dict[int, cst.CSTNode]:
        """id(``if`` statement around ``at``, inside ``stop``) -> the part of it holding ``at``."""
        parents = self.parents
        arms: Dict[int, cst.CSTNode] = {}
        child, p = at, parents.get(id(at))
        while p is not None and p is not stop:
            if type(p) is cst.If:
                arms[id(p)] = child
            child, p = p, parents.get(id(p))
        return arms

    def _other_arm(self, node: cst.CSTNode, arms: Dict[int, cst.CSTNode], stop: cst.CSTNode) -> bool:
        """Whether ``node`` sits in the other arm (the body, or the ``else``/``elif`` part) of the innermost
        ``if`` statement of ``arms`` (:meth:`_if_arms` of a node) around it: one never runs after the other."""
        parents = self.parents
        child, p = node, parents.get(id(node))
        while p is not None and p is not stop:
            other = arms.get(id(p))
            if other is not None:
                return child is not other and {id(child), id(other)} <= {id(p.body), id(p.orelse)}  # type: ignore[attr-defined]
            child, p = p, parents.get(id(p))
        return False

    def _branches(self, node: cst.CSTNode, stop: cst.CSTNode) -> List[cst.CSTNode]:
        """The compound statements (and conditional expressions) around ``node``, inside ``stop``."""
        out = []
        parents = self.parents
        p = parents.get(id(node))
        while p is not None and p is not stop:
            if type(p) in _BRANCHES:
                out.append(p)
            p = parents.get(id(p))
        return out

    def scope_node(self) -> cst.CSTNode:
        return self.scope.node

    def function_scope_node(self) -> Optional[cst.CSTNode]:
        scope: Optional[Scope] = self.scope
        while scope is not None and scope.kind not in ("function", "lambda"):
            scope = scope.parent
        return scope.node if scope is not None else None


def exclusive(a: cst.CSTNode, b: cst.CSTNode, parent_of: "_ParentOf") -> bool:
    """Whether ``a`` and ``b`` sit in different branches of one ``if`` statement (its body and its
    ``else`` or ``elif``): no run passes both."""
    path: Dict[int, cst.CSTNode] = {}
    child, p = a, parent_of(a)
    while p is not None:
        path[id(p)] = child
        child, p = p, parent_of(p)
    child, p = b, parent_of(b)
    while p is not None:
        other = path.get(id(p))
        if other is not None:  # the innermost node around both
            return type(p) is cst.If and other is not child \
                and {id(other), id(child)} == {id(p.body), id(p.orelse)}  # type: ignore[attr-defined]
        child, p = p, parent_of(p)
    return False


def _overwrites(value: cst.BaseExpression, read: cst.Name, parent_of: "_ParentOf") -> bool:
    """Whether the assignment of ``value`` (``name = value`` as a statement of its own, the name its only
    target) runs on every path to ``read`` and ``value`` does not read the name: its block holds
    ``read``, and ``read`` is not part of it.  No earlier value of the name reaches ``read`` then."""
    assign = parent_of(value)
    if type(assign) is not cst.Assign or len(assign.targets) != 1 \
            or type(assign.targets[0].target) is not cst.Name:  # type: ignore[attr-defined]
        return False
    line = parent_of(assign)
    block = parent_of(line) if line is not None else None
    if type(line) is not cst.SimpleStatementLine or block is None or _inside(read, assign, parent_of) \
            or not _inside(read, block, parent_of):
        return False
    name = read.value
    stack: List[cst.CSTNode] = [value]
    while stack:
        n = stack.pop()
        if type(n) is cst.Name and n.value == name:  # type: ignore[attr-defined]
            return False
        stack.extend(children(n))
    return True


def _inside(node: cst.CSTNode, container: cst.CSTNode, parent_of: "_ParentOf") -> bool:
    p = parent_of(node)
    while p is not None:
        if p is container:
            return True
        p = parent_of(p)
    return False


class _Below:
    """The nodes below the node the walk is entering, numbered in pre-order (the positions the walk will
    give them) as far as a query needs and no further than the first that binds a name or opens a scope:
    up to there, what the walk has collected is every binding before them."""

    __slots__ = ("root", "index", "stack", "parents", "n", "closed")

    def __init__(self, root: cst.CSTNode, at: int, parents: Dict[int, cst.CSTNode]) -> None:
        self.root = root
        self.index: Dict[int, Tuple[int, cst.CSTNode]] = {}  # id -> (position, parent)
        self.stack: List[Tuple[cst.CSTNode, cst.CSTNode]] = [(kid, root) for kid in reversed(children(root))]
        self.parents = parents
        self.n = at
        self.closed = False  # a node that binds a name was reached: the numbering stops there

    def find(self, node: cst.CSTNode) -> Optional[int]:
        """``node``'s position, when it is below the root with nothing binding a name before it."""
        index = self.index
        found = index.get(id(node))
        while found is None and self.stack and not self.closed:
            kid, parent = self.stack.pop()
            self.n += 1
            index[id(kid)] = (self.n, parent)
            if type(kid) in _ENTER:
                self.closed = True
            else:
                kids = children(kid)
                for i in range(len(kids) - 1, -1, -1):
                    self.stack.append((kids[i], kid))
            if kid is node:
                found = index[id(kid)]
        return found[0] if found is not None else None

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        got = self.index.get(id(node))
        return got[1] if got is not None else self.parents.get(id(node))


def _walked(module: cst.Module) -> NameResolver:
    """A resolver that has seen the whole of ``module``: the walk's bindings, collected ahead of it."""
    resolver = NameResolver(module)
    order, parents = resolver.order, resolver.parents
    stack: List[object] = [module]
    n = 0
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            resolver.leave(node[0])  # type: ignore[index]
            continue
        order[id(node)] = n
        n += 1
        resolver.enter(node)  # type: ignore[arg-type]
        if type(node) in SCOPE_TYPES or node is module:
            stack.append((node,))
        kids = children(node)  # type: ignore[arg-type]
        for i in range(len(kids) - 1, -1, -1):
            parents[id(kids[i])] = node  # type: ignore[assignment]
            stack.append(kids[i])
    return resolver


SCOPE_TYPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
#: what a statement may run inside of on some paths only
_BRANCHES = frozenset({cst.If, cst.For, cst.While, cst.Try, cst.With, cst.Else, cst.ExceptHandler, cst.Finally, cst.IfExp})

_ENTER = {
    cst.FunctionDef: NameResolver._enter_function,
    cst.Lambda: NameResolver._enter_lambda,
    cst.ClassDef: NameResolver._enter_class,
    cst.Param: NameResolver._enter_param,
    cst.Assign: NameResolver._enter_assign,
    cst.AnnAssign: NameResolver._enter_annassign,
    cst.AugAssign: NameResolver._enter_augassign,
    cst.For: NameResolver._enter_for,
    cst.CompFor: NameResolver._enter_comp_for,
    cst.WithItem: NameResolver._enter_with_item,
    cst.Import: NameResolver._enter_import,
    cst.ImportFrom: NameResolver._enter_import,
    cst.Global: NameResolver._enter_global,
    cst.NamedExpr: NameResolver._enter_named_expr,
    cst.ExceptHandler: NameResolver._enter_except,
}
