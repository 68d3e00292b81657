"""The structural children of a libcst node, for a lean pre-order walk (the engine's, and sub-walks).

libcst's own ``node.visit(visitor)`` rebuilds every node it passes (and validates it) even for read-only
visitors, which costs more than the parse.  Rules only read the tree, so the engine walks the dataclass
fields directly, skipping whitespace, comments and punctuation nodes that no rule inspects.  Children are
visited in source order (decorators before the function they decorate).
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Tuple, Type

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

_FIELDS: Dict[Type[cst.CSTNode], Tuple[str, ...]] = {}

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
    ordered = tuple(first) + tuple(n for n in names if n not in first)
    _FIELDS[t] = ordered
    return ordered


# Per concrete type: 0 not a node or a token (skip), 1 a structural node.  isinstance() against
# libcst's abstract base classes is slow, so each type is classified once.
_KIND: Dict[type, int] = {}


def _kind(t: type) -> int:
    k = _KIND.get(t)
    if k is None:
        k = _KIND[t] = 1 if issubclass(t, cst.CSTNode) and not issubclass(t, _TOKEN_TYPES) else 0
    return k


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
