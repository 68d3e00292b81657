"""The structural children of a libcst node, for a lean pre-order walk (the engine's, and sub-walks).

libcst's own ``node.visit(visitor)`` rebuilds every node it passes (and validates it) even for read-only
visitors, which costs more than the parse.  Rules only read the tree, so the engine walks the dataclass
fields directly, skipping whitespace, comments and punctuation nodes that no rule inspects.  Children are
visited in source order (decorators before the function they decorate).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, List, Mapping, Tuple, Type

import libcst as cst

_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "comma",
        "semicolon",
        "colon",
        "equal",
        "header",
        "footer",
        "leading_lines",
        "lines_after_decorators",
        "trailing_whitespace",
        "newline",
        "operator",
        "dot",
        "asynchronous",
        "star_arg",
        "whitespace_before_colon",
        "default_indent",
        "default_newline",
        "encoding",
        "indent",
    }
)

_FIRST = {cst.FunctionDef: ("decorators",), cst.ClassDef: ("decorators",)}
# Names that are not variable references: `x.attr`'s attr, `f(key=...)`'s key.
_SKIP_PER_TYPE = {cst.Attribute: ("attr",), cst.Arg: ("keyword",)}

_TOKEN_TYPES: Tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
)


def _fields(t: Type[cst.CSTNode]) -> Tuple[str, ...]:
    names = [
        f.name
        for f in dataclasses.fields(t)
        if f.name not in _SKIP_FIELDS
        and not f.name.startswith("whitespace")
        and f.name not in _SKIP_PER_TYPE.get(t, ())
    ]
    first = _FIRST.get(t, ())
    return tuple(first) + tuple(n for n in names if n not in first)


def _kind(t: type) -> int:
    """0: not a node, or a token (skipped); 1: a structural node."""
    return 1 if issubclass(t, cst.CSTNode) and not issubclass(t, _TOKEN_TYPES) else 0


def _node_classes() -> List[type]:
    out: List[type] = []
    pending: List[type] = [cst.CSTNode]
    while pending:
        t = pending.pop()
        out.append(t)
        pending.extend(t.__subclasses__())
    return out


def _field_table() -> Dict[type, Tuple[str, ...]]:
    table: Dict[type, Tuple[str, ...]] = {}
    for t in _node_classes():
        if dataclasses.is_dataclass(t):
            table[t] = _fields(t)
    return table


#: the fields the walk reads, per libcst node class; and, per class of a field's value, whether it is
#: a structural node (isinstance() against libcst's abstract classes is slow).  Both are made once, from
#: libcst's classes, and never change (plain dicts: the walk's hottest lookups); a class missing from them (none is expected) is classified on
#: the spot.
_FIELDS: Dict[type, Tuple[str, ...]] = _field_table()
#: libcst's node classes that no class derives from (``cst.Call``, ``cst.FunctionDef``): a node is one of
#: them exactly when its type is, so a test needs no ``isinstance``
LEAF_CLASSES: FrozenSet[type] = frozenset(t for t in _node_classes() if not t.__subclasses__())
_KIND: Dict[type, int] = {
    t: _kind(t) for t in [*_node_classes(), str, bool, int, float, bytes, type(None), cst.MaybeSentinel]
}


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    t = type(node)
    names = _FIELDS.get(t)
    if names is None:
        names = _fields(t)
    out: List[cst.CSTNode] = []
    kind = _KIND
    for name in names:
        v = getattr(node, name)
        tv = type(v)
        if tv is tuple or tv is list:
            for x in v:
                k = kind.get(type(x))
                if k is None:
                    k = _kind(type(x))
                if k:
                    out.append(x)
        else:
            k = kind.get(tv)
            if k is None:
                k = _kind(tv)
            if k:
                out.append(v)
    return out


def has_ancestor(parents: Mapping[int, cst.CSTNode], node: cst.CSTNode, container: cst.CSTNode) -> bool:
    """Whether ``container`` is among the ancestors of ``node`` in the parent links ``parents`` (by id)."""
    p = parents.get(id(node))
    while p is not None:
        if p is container:
            return True
        p = parents.get(id(p))
    return False


def iter_nodes(root: cst.CSTNode) -> List[cst.CSTNode]:
    """All structural nodes under ``root`` (inclusive), in pre-order."""
    out: List[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        kids = children(node)
        stack.extend(reversed(kids))
    return out


def target_names(target: cst.CSTNode) -> List[cst.Name]:
    """The names an assignment or loop target binds: the name itself, or the names of the tuple or list
    it unpacks into (``a, (b, *c)``); none for ``x.attr`` or ``x[i]``, which change an object and bind
    nothing."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []
