"""The one pre-order walk over a parsed file: it fills the :class:`FileContext` (parent links, node order,
names, the contents of loops and functions) and drives the visitors of whatever listens (the engine's
rules; nothing for a project file the program model reads).

libcst's code generation and metadata are recursive: :class:`Headroom` gives them the recursion the
engine's screen of pathological files leaves possible.
"""
from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import LEAVE_TYPES, FileContext
from torchlint.analysis.walk import children

#: what the walk calls for one node type: (the listener, its bound ``visit_``/``leave_`` method)
Handlers = List[Tuple[Any, Callable[[cst.CSTNode], None]]]


class Dispatcher:
    """Walks a module once, calling the ``visit_<Type>``/``leave_<Type>`` methods of ``listeners`` (the
    binders of family facts, then the rules: objects with a ``CODE``), in that order at each node.  A listener that raises is dropped for the rest of the file and its failure is
    added to ``errors``; the others go on."""

    def __init__(self, ctx: FileContext, listeners: Sequence[Any], errors: List[str]) -> None:
        self.ctx = ctx
        self.errors = errors
        self.visit: Dict[type, Handlers] = {}
        self.leave: Dict[type, Handlers] = {}
        self.dead: set = set()
        for rule in listeners:
            for attr in dir(type(rule)):
                if attr.startswith("visit_") or attr.startswith("leave_"):
                    kind, _, tname = attr.partition("_")
                    node_type = getattr(cst, tname, None)
                    if not isinstance(node_type, type):
                        continue
                    table = self.visit if kind == "visit" else self.leave
                    table.setdefault(node_type, []).append((rule, getattr(rule, attr)))

    def _call(self, fns: Handlers, node: cst.CSTNode) -> None:
        for rule, fn in fns:
            if rule in self.dead:
                continue
            try:
                fn(node)
            except Exception as exc:  # a crashing rule must not take the others down
                self.dead.add(rule)
                tb = traceback.extract_tb(exc.__traceback__)
                where = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
                self.errors.append(
                    f"{self.ctx.path}: rule {rule.CODE} failed: {type(exc).__name__}: {exc}{where}"
                )

    def run(self, module: cst.Module, hook: Optional[Callable[[cst.CSTNode], None]] = None) -> None:
        """One pre-order walk: context facts first, then the listeners' visitors; leave events only for
        the node types something listens to.  Each node is numbered in pre-order (``ctx.order``)."""
        ctx = self.ctx
        parents = ctx.parents
        order = ctx.order
        enter, close, leave = ctx.enter, ctx.close, ctx.leave
        visit_map, leave_map, call = self.visit, self.leave, self._call
        needs_leave = LEAVE_TYPES | frozenset(leave_map)
        stack: List[Any] = [module]
        pop, push = stack.pop, stack.append
        n = len(order)
        while stack:
            node = pop()
            t = type(node)
            if t is Leaving:
                node = node.node
                t = type(node)
                ctx.current = node
                close(node, t)
                fns = leave_map.get(t)
                if fns:
                    call(fns, node)
                leave(node, t)
                continue
            ctx.current = node
            order[id(node)] = n
            n += 1
            enter(node, t)
            if hook is not None:
                hook(node)
            fns = visit_map.get(t)
            if fns:
                call(fns, node)
            if t in needs_leave:
                push(Leaving(node))
            kids = children(node)
            for i in range(len(kids) - 1, -1, -1):
                kid = kids[i]
                parents[id(kid)] = node
                push(kid)


class Leaving:
    """On the walk's stack: the children of ``node`` are done, its leave events are due."""

    __slots__ = ("node",)

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node


def analyze(ctx: FileContext, hook: Optional[Callable[[cst.CSTNode], None]] = None) -> None:
    """Walk ``ctx.module`` filling the context (parents, names, contents) with no rule attached;
    ``hook(node)`` runs at each node once the context has seen it (for tests and tools)."""
    with Headroom():
        Dispatcher(ctx, [], []).run(ctx.module, hook)


class Headroom:
    """Raises the interpreter's recursion limit to :attr:`LIMIT` while at least one analysis runs, and
    restores it when the last one ends.

    This is the one piece of process-wide state in the analysis, and it has to be: the recursion limit
    belongs to the interpreter, not to a file or a project, and analyses may overlap in threads (a
    language server's worker and its main thread).  The count of analyses inside is kept on the class so
    that one ending does not take the headroom from another still running."""

    LIMIT = 25000
    _lock = threading.Lock()
    _users = 0
    _saved = 0

    def __enter__(self) -> None:
        with Headroom._lock:
            if Headroom._users == 0:
                Headroom._saved = sys.getrecursionlimit()
                if Headroom._saved < self.LIMIT:
                    sys.setrecursionlimit(self.LIMIT)
            Headroom._users += 1

    def __exit__(self, *exc: Any) -> None:
        with Headroom._lock:
            Headroom._users -= 1
            if Headroom._users == 0 and Headroom._saved < self.LIMIT:
                sys.setrecursionlimit(Headroom._saved)


__all__ = ["Dispatcher", "Headroom", "Leaving", "analyze"]
