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

import threading
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


__all__ = ["parse_module"]
