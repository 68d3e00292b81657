"""The parse of a file's text: ``libcst.parse_module`` without the checks libcst runs on every node it
builds.

A libcst node checks its own fields when it is made (``cst.CSTNode.__post_init__`` calls ``_validate``:
parentheses that must be there, whitespace that must be whitespace, a name that must be an identifier).
Those checks are for trees built by hand; the parser only builds nodes its grammar accepted, and it
rejects the texts the checks would (the tests compare both parses, tree for tree and error for error).
On library code the checks are about a fifth of the parse.  Nodes built while no parse runs (the
fixes' replacements) are checked as before.

Skipping them means replacing the one class attribute every node reaches, while a parse runs: this
module's lock and count make overlapping parses in several threads (a language server's) share one
replacement and put the original back when the last one ends.
"""
from __future__ import annotations

import re
import threading
from itertools import accumulate
from typing import Any, Callable

import libcst as cst


def _unchecked(self: Any) -> None:
    """A node made by the parser: nothing to check."""


class _Unchecked:
    """While at least one parse runs, nodes are made without their checks."""

    _parse_lock = threading.Lock()
    _parses_running = 0
    _node_check: Callable[[Any], None] = cst.CSTNode.__post_init__

    def __enter__(self) -> None:
        with _Unchecked._parse_lock:
            if _Unchecked._parses_running == 0:
                _Unchecked._node_check = cst.CSTNode.__dict__["__post_init__"]
                cst.CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
            _Unchecked._parses_running += 1

    def __exit__(self, *exc: Any) -> None:
        with _Unchecked._parse_lock:
            _Unchecked._parses_running -= 1
            if _Unchecked._parses_running == 0:
                cst.CSTNode.__post_init__ = _Unchecked._node_check  # type: ignore[method-assign]


def parse_module(source: str, config: Any = None) -> cst.Module:
    """``libcst.parse_module(source)`` (``config``: libcst's parser configuration), the same tree and
    the same errors, made without libcst's per-node checks."""
    with _Unchecked():
        if config is None:
            return cst.parse_module(source)
        return cst.parse_module(source, config=config)


# -- texts libcst cannot take in reasonable time or depth ---------------------------------------------
_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
_DEPTH_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
# a run of 100 unary operators; spelled to start with a character class, so that the regular expression
# engine skips ahead to the next candidate character instead of trying every position (8x faster)
_UNARY_RUN = re.compile(r"[-+~n](?:(?<=[-+~])|(?<=\bn)ot\b)\s*(?:(?:[-+~]|\bnot\b)\s*){99}")
# Strings and comments, blanked before counting chain links (their brackets and dots are not code).
_STRINGS_AND_COMMENTS = re.compile(
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:"""|\Z)'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'?"
    r"|#[^\n]*",
    re.DOTALL,
)


def without_comments(code: str) -> str:
    """``code`` with its comments removed (``#`` to the end of the line, outside strings), its strings and
    line breaks kept: a search of code for what it does must not find what a comment says.  ``code`` starts
    outside a string (the code of a node)."""
    if "#" not in code:
        return code
    return _STRINGS_AND_COMMENTS.sub(_keep_strings, code)


def _keep_strings(m: "re.Match[str]") -> str:
    text = m.group(0)
    return "" if text.startswith("#") else text


# One link of a chain libcst nests: a binary or boolean operator, `.attr`, a call or a subscript
# (counted with str.count, an over-estimate: `and` inside a name counts too).
_LINK_CHARS = ".([+-*/%@&|^"


def _links(text: str) -> int:
    return sum(map(text.count, _LINK_CHARS)) + text.count("and") + text.count("or")


_LINE_CONTINUED = re.compile(r"\\[ \t]*$")
# Below these, libcst parses in about a second at most and the analysis fits the recursion headroom.
MAX_CHAIN = 600  # nested expression links (`a + a + ...`, `a.b.c...`, `f()()...`, `a[0][0]...`)
MAX_BOOL_OPERANDS = 3000  # `a and a and ...` (libcst's native parser dies past ~7,000)
MAX_OPERATORS = 800  # binary operators in one expression: libcst's parse time grows with their square
MAX_STATEMENT_NESTING = 1500  # `if ... elif ...` chains nest one statement per branch


def _long_statement(source: str) -> bool:
    """An over-estimate: a statement (a line, or lines joined by brackets or backslashes) with as many
    chain links as the chain limit, or as many ``elif`` as the nesting limit."""
    if source.count("elif") >= MAX_STATEMENT_NESTING:
        return True
    if _links(source) < MAX_CHAIN:
        return False
    code = _STRINGS_AND_COMMENTS.sub("''", source)
    links = depth = 0
    for line in code.split("\n"):
        links += _links(line)
        if links >= MAX_CHAIN:
            return True
        depth += line.count("(") + line.count("[") + line.count("{")
        depth -= line.count(")") + line.count("]") + line.count("}")
        if depth <= 0 and not _LINE_CONTINUED.search(line):
            links = depth = 0
    return False


def looks_deep(source: str) -> bool:
    """A cheap over-estimate of what libcst cannot take: bracket depth (strings included), a long unary
    chain in the code (a ruler of dashes in a comment or a string is none), or a long statement (see
    ``_long_statement``)."""
    brackets = _NOT_BRACKET.sub("", source)
    if len(brackets) > 200 and max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) > 100:
        return True
    if _UNARY_RUN.search(source) is not None and _UNARY_RUN.search(_STRINGS_AND_COMMENTS.sub("''", source)) is not None:
        return True
    return _long_statement(source)



__all__ = ["MAX_BOOL_OPERANDS", "MAX_CHAIN", "MAX_OPERATORS", "MAX_STATEMENT_NESTING", "looks_deep", "parse_module",
           "without_comments"]
