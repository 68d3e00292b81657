"""Per-file facts shared by all rules, gathered during the engine's one traversal.

``FileContext`` is what a rule reaches through ``self.ctx``: the module and its source, the name resolver
(:mod:`torchlint.analysis.names`), parent links (set by the walk before a node is visited), and an index of the
calls and assignments under each loop, function, ``with`` and ``if`` — so a rule that looks at a loop in
``leave_For`` finds everything inside it without walking the subtree again.  Queries about nodes that
were not indexed (or not yet finished) fall back to a cached sub-walk.  What an analysis module
computes once per file is a typed slot of the context (:class:`Fact`); what is known about the project
around the file is ``ctx.project``: a :class:`~torchlint.analysis.project.Project`, which the layer above
this one defines and fills in (read it through :func:`~torchlint.analysis.project.project_of`).
"""
from __future__ import annotations

from typing import (Any, Callable, Dict, FrozenSet, Generic, Iterator, List, Optional, Sequence, Tuple, Type,
                    TypeVar, Union)

import libcst as cst

from torchlint.analysis.parsing import without_comments
from torchlint.analysis.names import SCOPE_TYPES, NameResolver, dotted_name, exclusive
from torchlint.analysis.walk import LEAF_CLASSES, has_ancestor, iter_nodes

D = TypeVar("D", bound=cst.CSTNode)
T = TypeVar("T")

_OWNER_TYPES = (cst.Module, cst.For, cst.While, cst.FunctionDef, cst.With, cst.If, cst.Lambda, cst.ClassDef, cst.Try)
_OWNER_SET = frozenset(_OWNER_TYPES)
#: node types whose end the walk must report to the context (owners of indexed contents, scopes)
LEAVE_TYPES = _OWNER_SET | SCOPE_TYPES


class Contents:
    """Calls and assignments found under one node, in source order."""

    __slots__ = ("calls", "assigns", "complete")

    def __init__(self) -> None:
        self.calls: List[cst.Call] = []
        self.assigns: List[cst.BaseSmallStatement] = []
        self.complete = False


class Fact(Generic[T]):
    """One fact about a file, kept (and released) with its :class:`FileContext`: declared once, at module
    level, by the analysis module that owns it, and typed by what it holds::

        SUMMARIES: Fact[Dict[cst.ClassDef, ModelSummary]] = Fact("roles.summaries", dict)
        table = SUMMARIES.of(ctx)            # computed on first use: compute(ctx)
        found = SITES.get(ctx)               # None until put
        SITES.put(ctx, index)

    A fact is its own key (two facts never collide, whatever their names); ``name`` is for reading.
    Never keep per-file facts in module-level tables."""

    __slots__ = ("name", "compute")

    def __init__(self, name: str, compute: Optional[Callable[["FileContext"], T]] = None) -> None:
        self.name = name
        self.compute = compute

    def of(self, ctx: "FileContext") -> T:
        """The fact for ``ctx``, computed by ``compute(ctx)`` the first time it is asked."""
        facts = ctx.facts
        if self in facts:
            return facts[self]
        if self.compute is None:
            raise LookupError(f"fact {self.name} was not computed for {ctx.path}")
        value = facts[self] = self.compute(ctx)
        return value

    def get(self, ctx: "FileContext") -> Optional[T]:
        return ctx.facts.get(self)

    def put(self, ctx: "FileContext", value: T) -> T:
        ctx.facts[self] = value
        return value

    def __repr__(self) -> str:
        return f"Fact({self.name!r})"


def _exact_types(types: Union[type, Tuple[type, ...]]) -> Optional[Tuple[type, ...]]:
    """``types`` as a tuple to test ``type(node)`` against, when none of them has subclasses (libcst's
    concrete node classes); None when an ``isinstance`` is needed (``cst.BaseExpression``, ...)."""
    if type(types) is tuple:
        return types if LEAF_CLASSES.issuperset(types) else None  # type: ignore[return-value,arg-type]
    return (types,) if types in LEAF_CLASSES else None  # type: ignore[return-value]


def _contents_of(node: cst.CSTNode) -> Contents:
    c = Contents()
    for n in iter_nodes(node):
        t = type(n)
        if t is cst.Call:
            c.calls.append(n)  # type: ignore[arg-type]
        elif t is cst.Assign or t is cst.AugAssign or t is cst.AnnAssign:
            c.assigns.append(n)  # type: ignore[arg-type]
    c.complete = True
    return c


def _nodes_of(node: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
    return tuple(iter_nodes(node))


def _name_index_of(node: cst.CSTNode) -> Dict[str, List[cst.Name]]:
    index: Dict[str, List[cst.Name]] = {}
    for n in iter_nodes(node):
        if type(n) is cst.Name:
            index.setdefault(n.value, []).append(n)  # type: ignore[attr-defined]
    return index


class FileContext:
    def __init__(self, path: str, source: str, module: cst.Module, project: Any = None) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.parents: Dict[int, cst.CSTNode] = {}  # id(node) -> parent: int keys hash fast
        #: id(node) -> pre-order index, filled by the engine's walk; complete once ``walked`` is true
        self.order: Dict[int, int] = {}
        exports = getattr(project, "star_exports", None)
        self.names = NameResolver(module, self.parents, self.order, star_exports=(
            (lambda module_name, level: exports(path, module_name, level)) if exports is not None and path else None),
            walrus=":=" in source)
        self.current: Optional[cst.CSTNode] = None  # the node whose visit or leave is running
        self._contents: Dict[cst.CSTNode, Contents] = {}
        self._open: List[Contents] = []
        self._name_index: Dict[cst.CSTNode, Dict[str, List[cst.Name]]] = {}
        self._functions: Optional[Dict[str, List[cst.FunctionDef]]] = None
        self._classes: Optional[Dict[str, cst.ClassDef]] = None
        #: the project the file belongs to (its modules, root, declared versions): a ``Project`` of the
        #: layer above, opaque here; None: the program model makes one for this file alone
        #: (:func:`torchlint.analysis.project.project_of`, which also gives it its type)
        self.project = project
        #: the facts analysis modules computed for this file (see :class:`Fact`)
        self.facts: Dict[Fact, Any] = {}
        self.walked = False
        #: what a node's code alone decides (:meth:`of_code`), by kind, then by id(node) -> (node, fact):
        #: an editor's project gives the table of the document's last parse, whose entries for the
        #: statements an edit did not touch still hold (the nodes are the same objects)
        kept = getattr(project, "code_facts", None)
        table = kept(path, module) if kept is not None else None
        self._code_facts: Dict[str, Dict[int, Tuple[cst.CSTNode, Any]]] = table if table is not None else {}
        self._kept_facts = table is not None
        self._parse_config: Optional[cst.PartialParserConfig] = None

    # -- traversal hooks, called by the engine around every node --------------------------------
    def enter(self, node: cst.CSTNode, t: type) -> None:
        """Before ``node``'s children (its parent link is already set by the walk)."""
        self.names.enter(node)
        if t is cst.Call:
            for c in self._open:
                c.calls.append(node)  # type: ignore[arg-type]
        elif t is cst.Assign or t is cst.AugAssign or t is cst.AnnAssign:
            for c in self._open:
                c.assigns.append(node)  # type: ignore[arg-type]
        if t in _OWNER_SET:
            c = Contents()
            self._contents[node] = c
            self._open.append(c)

    def close(self, node: cst.CSTNode, t: type) -> None:
        """After ``node``'s children, before the rules leave it (types in ``LEAVE_TYPES``): what was
        collected under ``node`` is complete, so a rule's ``leave_`` handler reads it without a walk."""
        if t in _OWNER_SET:
            self._open.pop().complete = True
            if t is cst.Module:
                self.walked = True
                self.names.entered_all = True
                if self._kept_facts:  # drop what was kept of the statements an edit replaced (and of nodes
                    # that are no part of the module: a fix's replacement)
                    order = self.order
                    for table in self._code_facts.values():
                        for key in [key for key in table if key not in order]:
                            del table[key]

    def leave(self, node: cst.CSTNode, t: type) -> None:
        """After the rules left ``node``; called only for the types in ``LEAVE_TYPES``."""
        self.names.leave(node)

    @property
    def stack(self) -> List[cst.CSTNode]:
        """The nodes enclosing the walk's position, outermost first, ending with the current node."""
        cur = self.current
        if cur is None:
            return []
        out = [cur, *self.ancestors(cur)]
        out.reverse()
        return out

    # -- structure ------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parents = self.parents
        p = parents.get(id(node))
        while p is not None:
            yield p
            p = parents.get(id(p))

    def enclosing(
        self, node: cst.CSTNode, types: Union[Type[cst.CSTNode], Tuple[Type[cst.CSTNode], ...]]
    ) -> Optional[cst.CSTNode]:
        parents = self.parents
        p = parents.get(id(node))
        if types in LEAF_CLASSES:  # one concrete class (the common question): tested by identity
            while p is not None and type(p) is not types:
                p = parents.get(id(p))
            return p
        exact = _exact_types(types)
        if exact is not None:  # libcst's concrete node classes have no subclasses: no isinstance through ABCMeta
            while p is not None and type(p) not in exact:
                p = parents.get(id(p))
            return p
        while p is not None and not isinstance(p, types):
            p = parents.get(id(p))
        return p

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return has_ancestor(self.parents, node, container)

    def exclusive(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """Whether the two nodes sit in different branches of one ``if`` statement: no run passes both."""
        return exclusive(node, other, self.parent)

    def shares_loop(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """Whether a ``for`` or ``while`` loop holds both nodes (one iteration may see what the other left)."""
        loop = self.enclosing(node, (cst.For, cst.While))
        while loop is not None:
            if self.is_inside(other, loop):
                return True
            loop = self.enclosing(loop, (cst.For, cst.While))
        return False

    def may_run_before(self, first: cst.CSTNode, then: cst.CSTNode) -> bool:
        """Whether ``first`` may run before ``then``: it comes earlier in the file, or a loop holds both (a
        later pass of the loop follows it)."""
        return self.names.position(first) < self.names.position(then) or self.shares_loop(first, then)

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement holding ``node`` that sits directly in a block (a body list)."""
        cur: Optional[cst.CSTNode] = node
        while cur is not None:
            parent = self.parents.get(id(cur))
            if isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and isinstance(
                parent, (cst.IndentedBlock, cst.Module)
            ):
                return cur
            cur = parent
        return None

    def block_of(self, stmt: cst.CSTNode) -> Optional[Sequence[cst.CSTNode]]:
        parent = self.parents.get(id(stmt))
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return parent.body
        return None

    def block_indents(self, stmt: cst.CSTNode) -> Optional[List[str]]:
        """The indentation of each block around a statement of a block, outermost first (``[]`` at
        module level; None when ``stmt`` does not sit directly in a block)."""
        parent = self.parents.get(id(stmt))
        if parent is self.module:
            return []
        if not isinstance(parent, cst.IndentedBlock):
            return None
        default = self.module.default_indent
        out = [b.indent if b.indent is not None else default
               for b in [parent, *self.ancestors(parent)] if isinstance(b, cst.IndentedBlock)]
        out.reverse()
        return out

    # -- indexes --------------------------------------------------------------------------------
    def contents(self, node: cst.CSTNode) -> Contents:
        c = self._contents.get(node)
        if c is not None and c.complete:
            return c
        if node is self.module:  # the module's, made of its statements' (which an edit mostly keeps)
            c = Contents()
            for top in self.module.body:
                part = self.of_code("contents", top, _contents_of)
                c.calls.extend(part.calls)
                c.assigns.extend(part.assigns)
            c.complete = True
        else:
            c = self.of_code("contents", node, _contents_of)
        self._contents[node] = c
        return c

    def calls_in(self, node: cst.CSTNode) -> List[cst.Call]:
        return self.contents(node).calls

    def nodes(self, node: cst.CSTNode) -> Tuple[cst.CSTNode, ...]:
        """Every structural node under ``node`` (inclusive), in pre-order (``walk.iter_nodes``), listed
        once per node (:meth:`of_code`): for the questions that scan the same function or class again."""
        return self.of_code("nodes", node, _nodes_of)

    def assigned_names(self, node: cst.CSTNode) -> FrozenSet[str]:
        """Every name an assignment under ``node`` writes (nested functions included), once per node
        (:meth:`of_code`)."""
        return self.of_code("assigned", node, self._assigned_names_of)

    def _assigned_names_of(self, node: cst.CSTNode) -> FrozenSet[str]:
        return frozenset(n.value for a in self.contents(node).assigns for t in assignment_targets(a)
                         for n in self.nodes(t) if type(n) is cst.Name)

    def names_in(self, node: cst.CSTNode, name: str) -> List[cst.Name]:
        """Every ``Name`` node spelled ``name`` under ``node`` (lazy, cached per node)."""
        index = self._name_index.get(node)
        if index is None:
            if node is self.module:  # the module's, made of its statements' (which an edit mostly keeps)
                index = {}
                for top in self.module.body:
                    for key, found in self.of_code("names", top, _name_index_of).items():
                        index.setdefault(key, []).extend(found)
            else:
                index = self.of_code("names", node, _name_index_of)
            self._name_index[node] = index
        return index.get(name, [])

    @property
    def keeps_code_facts(self) -> bool:
        """Whether :meth:`of_code` keeps its facts for the next parses of the document (an editor's)."""
        return self._kept_facts

    def of_code(self, kind: str, node: cst.CSTNode, compute: Callable[[cst.CSTNode], T]) -> T:
        """``compute(node)``, a fact of the kind ``kind`` that the code of the top-level statement holding
        ``node`` alone decides (the code under ``node``, the blocks it sits in; no name's binding, no
        line it starts on), computed once per node.  In an editor's project it is kept for the
        document's next parses while they share the node (a kept node keeps its top-level statement):
        an edit re-derives such facts only for the statements it touched."""
        key = id(node)  # (the table holds the node: while it is there, no other object has its id)
        table = self._code_facts.get(kind)
        if table is None:
            table = self._code_facts[kind] = {}
        found = table.get(key)
        if found is not None and found[0] is node:
            return found[1]  # type: ignore[no-any-return]
        value = compute(node)
        table[key] = (node, value)
        return value

    def functions(self) -> Dict[str, List[cst.FunctionDef]]:
        """Functions defined at module level or in a module-level class, by name (lazy)."""
        if self._functions is None:
            found: Dict[str, List[cst.FunctionDef]] = {}

            def scan(body: Sequence[cst.CSTNode], in_class: bool) -> None:
                for stmt in body:
                    if isinstance(stmt, cst.FunctionDef):
                        found.setdefault(stmt.name.value, []).append(stmt)
                    elif isinstance(stmt, cst.ClassDef) and not in_class:
                        if isinstance(stmt.body, cst.IndentedBlock):
                            scan(stmt.body.body, True)

            scan(self.module.body, False)
            self._functions = found
        return self._functions

    def classes(self) -> Dict[str, cst.ClassDef]:
        """The classes defined at module level, by name (the last of a name defined twice; lazy)."""
        if self._classes is None:
            self._classes = {stmt.name.value: stmt  # type: ignore[attr-defined]
                             for stmt in self.module.body if type(stmt) is cst.ClassDef}
        return self._classes

    def function_for_call(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The same-module function or method a call targets (``helper(x)``, ``self.helper(x)``)."""
        func = call.func
        name = None
        if type(func) is cst.Name:
            name = func.value  # type: ignore[attr-defined]
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and \
                func.value.value in ("self", "cls"):  # type: ignore[attr-defined]
            name = func.attr.value  # type: ignore[attr-defined]
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and \
                func.value.value in self.classes():  # type: ignore[attr-defined]
            # `Policy.train_model(net, ...)`: a class method of that class of the file (called as any method is,
            # its first parameter not passed)
            cls = self.classes()[func.value.value]  # type: ignore[attr-defined]
            found = [d for d in self.functions().get(func.attr.value, ())  # type: ignore[attr-defined]
                     if isinstance(cls.body, cst.IndentedBlock) and d in cls.body.body and any(
                         isinstance(dec.decorator, cst.Name) and dec.decorator.value == "classmethod"
                         for dec in d.decorators)]
            return found[0] if len(found) == 1 else None
        if name is None:
            return None
        defs = self.functions().get(name)
        if defs and len(defs) == 1:
            return defs[0]
        if defs and isinstance(func, cst.Name):
            return self.definition_before(defs, call)
        return None

    def definition_before(self, defs: Sequence[D], call: cst.CSTNode) -> Optional[D]:
        """Of a name defined several times at module level (a notebook redefining a helper in a later
        cell), the definition bound when the top-level statement holding ``call`` (a call, or any use of
        the name) runs: the last one before it."""
        order = _TOP_ORDER.of(self)
        if any(id(d) not in order for d in defs):
            return None  # a method of a class, or a nested definition: not a rebinding of one global
        top: Optional[cst.CSTNode] = call
        for a in [call, *self.ancestors(call)]:
            if id(a) in order and self.parents.get(id(a)) is self.module:
                top = a
                break
        else:
            return None
        at = order[id(top)]
        before = [d for d in defs if order[id(d)] < at]
        return before[-1] if before else None

    # -- code -----------------------------------------------------------------------------------
    def code(self, node: cst.CSTNode) -> str:
        return self.of_code("code", node, self.module.code_for_node)

    def bare_code(self, node: cst.CSTNode) -> str:
        """The code under ``node`` without its comments: what a text search for what the code does (a
        word, a call spelled in a function's body) reads, so that typing a comment changes no answer."""
        return self.of_code("bare_code", node, self._bare_code)

    def _bare_code(self, node: cst.CSTNode) -> str:
        return without_comments(self.code(node))

    def parse_expression(self, code: str) -> cst.BaseExpression:
        """Parse replacement code built from source snippets.  A snippet taken from inside
        parentheses may span lines (``x\n    .squeeze()``) and only parses within parentheses;
        such code comes back parenthesized, which keeps its meaning."""
        return self._snippet("expression", code)  # type: ignore[return-value]

    def parse_statement(self, code: str) -> cst.BaseStatement:
        return self._snippet("statement", code)  # type: ignore[return-value]

    def _snippet(self, kind: str, code: str) -> cst.CSTNode:
        # A tree is immutable: the same code under the same module settings gives one tree, parsed once
        # per project (fixes are built again at every analysis of an edited document).
        module = self.module
        key = (kind, code, module.encoding, module.default_indent, module.default_newline)
        table = getattr(self.project, "snippets", None)
        found = table.get(key) if table is not None else None
        if found is not None:
            return found  # type: ignore[no-any-return]
        if self._parse_config is None:
            self._parse_config = module.config_for_parsing
        config = self._parse_config
        if kind == "statement":
            node: cst.CSTNode = cst.parse_statement(code, config=config)
        else:
            try:
                node = cst.parse_expression(code, config=config)
            except cst.ParserSyntaxError:
                if "\n" not in code and "\r" not in code:
                    raise
                node = cst.parse_expression(f"({code})", config=config)
        if table is not None:
            table[key] = node
        return node


def _top_order(ctx: FileContext) -> Dict[int, int]:
    return {id(stmt): i for i, stmt in enumerate(ctx.module.body)}


#: id(top-level statement) -> its index in the module's body
_TOP_ORDER: Fact[Dict[int, int]] = Fact("context.top_order", _top_order)


def module_ref(ctx: FileContext, module: str) -> Optional[str]:
    """A name (or dotted path) visible here that refers to ``module``: ``F`` for torch.nn.functional
    under ``import torch.nn.functional as F``, ``torch.nn.functional`` under ``import torch``."""
    candidates: List[Tuple[int, str]] = []
    scopes = []
    scope = ctx.names.scope
    while scope is not None:
        scopes.append(scope)
        scope = scope.parent
    for scope in scopes:
        for local, binding in scope.bindings.items():
            for imported in binding.imports:
                if imported == module:
                    candidates.append((0, local))
                elif module.startswith(imported + "."):
                    candidates.append((module.count(".") - imported.count("."), local + module[len(imported):]))
    for _, path in sorted(candidates):
        head = path.split(".")[0]
        qn = ctx.names.qualified_names(cst.parse_expression(path))
        if module in qn and head:
            return path
    return None


def assignment_targets(node: cst.CSTNode) -> List[cst.BaseExpression]:
    """The target expressions of an ``Assign`` (all of ``a = b = ...``), ``AugAssign`` or ``AnnAssign``."""
    if isinstance(node, cst.Assign):
        return [t.target for t in node.targets]
    if isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        return [node.target]
    return []


def written_target(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """Whether ``node`` is written by the statement around it rather than read: a target of an assignment
    (an element of an unpacked one too: ``pred, _ = model(x)``), of an augmented or annotated one, or of a
    ``for`` loop or a comprehension."""
    prev, cur = node, ctx.parent(node)
    while isinstance(cur, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        prev, cur = cur, ctx.parent(cur)
    if isinstance(cur, cst.AssignTarget):
        return cur.target is prev
    if isinstance(cur, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)):
        return cur.target is prev
    return False


def method_name(call: cst.Call) -> Optional[str]:
    """``x.backward()`` -> "backward"; None when the callee is not an attribute."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value  # type: ignore[attr-defined]
    return None


def receiver(call: cst.Call) -> Optional[cst.BaseExpression]:
    func = call.func
    if type(func) is cst.Attribute:
        return func.value  # type: ignore[attr-defined]
    return None


#: the methods that run a module the way calling it does: ``m.forward(x)`` and ``m.__call__(x)`` are ``m(x)``
RUN_METHODS = frozenset({"forward", "__call__"})


def run_object(func: cst.BaseExpression) -> cst.BaseExpression:
    """The object a call with callee ``func`` runs as a module: ``m`` for ``m.forward`` and
    ``m.__call__``; ``func`` itself for anything else (``m`` in ``m(x)``)."""
    if type(func) is cst.Attribute and func.attr.value in RUN_METHODS:  # type: ignore[attr-defined]
        return func.value  # type: ignore[attr-defined]
    return func


def callee_name(call: cst.Call) -> Optional[str]:
    """Last segment of the callee: ``torch.nn.functional.softmax`` and ``x.softmax`` -> "softmax"."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value  # type: ignore[attr-defined]
    if type(func) is cst.Name:
        return func.value  # type: ignore[attr-defined]
    return None


def canonical_keyword(name: str) -> str:
    """The name torch documents for a keyword that its native functions and tensor methods also accept in
    numpy's spelling: ``x.sum(axis=1, keepdims=True)`` is ``x.sum(dim=1, keepdim=True)``."""
    if name == "axis":
        return "dim"
    if name == "keepdims":
        return "keepdim"
    return name


def _named(a: cst.Arg, keyword: str) -> bool:
    name = a.keyword.value  # type: ignore[union-attr]
    return name == keyword or canonical_keyword(name) == keyword


def arg(call: cst.Call, position: int, keyword: Optional[str] = None) -> Optional[cst.Arg]:
    """The argument at ``position`` (positional) or named ``keyword`` (in either spelling of
    :func:`canonical_keyword`)."""
    positional = 0
    for a in call.args:
        if a.keyword is not None:
            if keyword is not None and _named(a, keyword):
                return a
            continue
        if a.star:
            return None
        if positional == position:
            return a
        positional += 1
    return None


def keyword_arg(call: cst.Call, keyword: str) -> Optional[cst.Arg]:
    """The argument named ``keyword`` (in either spelling of :func:`canonical_keyword`)."""
    for a in call.args:
        if a.keyword is not None and _named(a, keyword):
            return a
    return None


__all__ = [
    "Fact",
    "FileContext",
    "module_ref",
    "Contents",
    "assignment_targets",
    "written_target",
    "method_name",
    "receiver",
    "callee_name",
    "run_object",
    "RUN_METHODS",
    "arg",
    "keyword_arg",
    "canonical_keyword",
    "dotted_name",
    "LEAVE_TYPES",
]
