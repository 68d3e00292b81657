"""Parsing an edited text again only where it changed: the top-level statements around the edit are
parsed, the others are taken from the text's previous parse, and the module built of them equals
``libcst.parse_module`` of the whole text (node for node: ``deep_equals``).

An editor sends the whole text after each keystroke; libcst's parse of a 300-line file is a fifth of
the analysis of a file with many findings.  What makes the pieces equal to a whole parse:

- the region parsed again runs from the top-level statement before the first one the edit touches
  to the one after the last (a comment typed after a block can belong to that block's footer, text
  typed before a statement can join it), so its two ends are text the previous parse already split
  there; the statement after the edit must come back whole (an edit that joins it to the statement
  before changes which block the comment lines after it belong to);
- a statement's leading comment lines are its own in a whole parse, but the header of a region
  parsed alone: they are given back to its first statement; a region that ends before the end of
  the file must leave nothing in its footer;
- the module's default newline and indentation (what a node's ``None`` newline or indent stands for)
  must be those the region was parsed with, and stay what a whole parse would detect: the first
  indented block of the file decides the indentation, the first line break the newline;
- the encoding cookie sits on the first two lines: a region starting after them leaves it as it was.

Anything else (the region does not parse, the edit is in the module's header, the region is most of
the file) parses the whole text.  One previous parse is kept per name, for the last few names."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.parsing import parse_module

#: how many documents' last parses are kept, and how many characters of text at most (the newest is
#: kept whatever its size): a parse holds tens of times its text's size
KEPT = 8
KEPT_CHARS = 2_000_000
#: a region longer than this share of the text is parsed with the rest: no gain worth the bookkeeping
MOST = 0.5
#: after this many edits in a row whose regions were too long (a file of a few large classes), the
#: document's next :data:`COARSE_PAUSE` parses are whole parses that keep nothing (keeping a parse
#: costs a code generation of it)
COARSE_AFTER = 3
COARSE_PAUSE = 10


@dataclass
class _Top:
    node: cst.BaseStatement
    length: int  # characters of its code, its leading comment and blank lines included
    indented: Optional[bool] = None  # holds an indented block (computed when asked)


@dataclass
class _Parse:
    text: str
    module: cst.Module
    header: int  # characters before the first statement's code
    tops: List[_Top]
    #: what the code of a node alone decides (``FileContext.of_code``): handed on to the parses made
    #: from this one, which share the nodes of the statements an edit did not touch
    facts: Dict[str, Dict[int, Any]] = field(default_factory=dict)


def _has_indented_block(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.IndentedBlock):
        return True
    if isinstance(node, (cst.SimpleStatementLine, cst.BaseExpression)):
        return False
    return any(_has_indented_block(child) for child in node.children)


def _indented(top: _Top) -> bool:
    if top.indented is None:
        top.indented = _has_indented_block(top.node)
    return top.indented


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _split(module: cst.Module, text: str, at: int, nodes: Sequence[cst.BaseStatement]) -> Optional[List[_Top]]:
    """The statements ``nodes`` of ``module`` with the lengths of their code, which must be ``text``
    from ``at`` on, one after another; None where it is not (libcst does not give back every text
    it parses).  The last statement of a text without a final line break is generated with one."""
    out = []
    for i, node in enumerate(nodes):
        code = module.code_for_node(node)
        if not text.startswith(code, at) and (i < len(nodes) - 1 or module.has_trailing_newline):
            return None
        out.append(_Top(node, len(code)))
        at += len(code)
    return out


class Statements(NamedTuple):
    """A document's last parse seen as text: its top-level statements with the span of text each one
    holds (its leading comment and blank lines included), in order; the module's header is the text
    before the first span, its footer the text after the last."""

    text: str
    module: cst.Module
    spans: Tuple[Tuple[cst.BaseStatement, int, int], ...]  # (statement, start, end) in ``text``


class Reparser:
    """The last parse of each of a few documents, and :meth:`parse`, which parses a document's new
    text from it."""

    def __init__(self, kept: int = KEPT, most: float = MOST) -> None:
        self.kept = kept
        self.most = most
        self._last: "OrderedDict[str, _Parse]" = OrderedDict()
        self.reused = 0  # parses made from a previous one (for tests and measurements)
        self._coarse: Dict[str, int] = {}  # name -> whole parses left before one is kept again
        self._too_long_runs: Dict[str, int] = {}  # name -> edits in a row whose region was too long
        self._too_long = False  # set by _incremental: the region was most of the text

    def code_facts(self, name: str, module: cst.Module) -> Optional[Dict[str, Dict[int, Any]]]:
        """The table of facts decided by code alone kept for the last parse of ``name`` when it is
        ``module``; None for any other module."""
        last = self._last.get(name)
        return last.facts if last is not None and last.module is module else None

    def statements(self, name: str) -> Optional[Statements]:
        """The last parse of ``name`` as :class:`Statements` (None: none kept)."""
        last = self._last.get(name)
        if last is None:
            return None
        spans = []
        at = last.header
        for top in last.tops:
            spans.append((top.node, at, at + top.length))
            at += top.length
        return Statements(last.text, last.module, tuple(spans))

    def parse(self, name: str, text: str) -> cst.Module:
        """``libcst.parse_module(text)``, parsing again only what changed since the last text of
        ``name``; raises what ``parse_module`` raises."""
        last = self._last.get(name)
        module = None
        if last is not None:
            if last.text == text:
                module = last.module
            else:
                self._too_long = False
                module = self._incremental(last, text)
                runs = self._too_long_runs.get(name, 0) + 1 if self._too_long else 0
                self._too_long_runs[name] = runs
                if module is not None:
                    self.reused += 1
                elif runs >= COARSE_AFTER:  # its statements are too large for pieces to pay: pause keeping
                    self._coarse[name] = COARSE_PAUSE
                    self._too_long_runs[name] = 0
                    del self._last[name]
        if module is None:
            module = parse_module(text)  # raises for a text that does not parse: the last parse stays
            pause = self._coarse.get(name, 0)
            if pause:
                self._coarse[name] = pause - 1
                return module
            header = "".join(module.code_for_node(h) for h in module.header)
            tops = _split(module, text, len(header), module.body) if text.startswith(header) else None
            if tops is not None:
                self._store(name, _Parse(text, module, len(header), tops))
        return module

    def _store(self, name: str, parsed: _Parse) -> None:
        self._last[name] = parsed
        self._last.move_to_end(name)
        while len(self._last) > self.kept or (
            len(self._last) > 1 and sum(len(p.text) for p in self._last.values()) > KEPT_CHARS
        ):
            self._last.popitem(last=False)

    def _incremental(self, last: _Parse, text: str) -> Optional[cst.Module]:
        old, tops, m0 = last.text, last.tops, last.module
        n = len(tops)
        if n < 3:
            return None
        prefix = _common_prefix(old, text)
        suffix = _common_suffix(old, text, min(len(old), len(text)) - prefix)
        if prefix < last.header:
            return None  # an edit of the module's header
        old_end = len(old) - suffix  # the edit replaced old[prefix:old_end]
        starts = []
        at = last.header
        for top in tops:
            starts.append(at)
            at += top.length
        first = next((i for i in range(n) if starts[i] + tops[i].length > prefix), n - 1)
        last_i = max((i for i in range(n) if starts[i] < old_end), default=0)
        lo = max(0, min(first, last_i) - 1)
        hi = min(n - 1, max(first, last_i) + 1)
        if lo == 0:
            return None  # the module's header and encoding would come from the region: parse it all
        to_end = hi == n - 1
        start = starts[lo]
        end = len(text) if to_end else starts[hi] + tops[hi].length + len(text) - len(old)
        if end - start > self.most * len(text):
            self._too_long = True
            return None
        if text.count("\n", 0, start) < 2:
            return None
        try:
            region = parse_module(text[start:end])
        except Exception:  # the region alone does not parse: the whole text decides
            return None
        if not region.body or (region.footer and not to_end):
            return None
        if region.default_newline != m0.default_newline:
            return None
        new_tops = [_Top(node, 0) for node in region.body]
        new_indented = any(_indented(t) for t in new_tops)
        if new_indented and region.default_indent != m0.default_indent:
            return None
        if not any(_indented(t) for t in tops[:lo]) and not new_indented and any(_indented(t) for t in tops[lo:hi + 1]):
            return None  # the file's first indented block went: its default indentation may change
        head = region.body[0]
        if region.header:
            head = head.with_changes(leading_lines=[*region.header, *head.leading_lines])
            new_tops[0] = _Top(head, 0, new_tops[0].indented)
        body = [t.node for t in tops[:lo]] + [t.node for t in new_tops] + [t.node for t in tops[hi + 1:]]
        module = m0.with_changes(
            body=body,
            footer=region.footer if to_end else m0.footer,
            has_trailing_newline=region.has_trailing_newline if to_end else m0.has_trailing_newline,
        )
        placed = _split(module, text, start, [t.node for t in new_tops])
        if placed is None or (not to_end and start + sum(p.length for p in placed) != end):
            return None  # libcst does not give this text back (as a whole parse would not either)
        if not to_end and placed[-1].length != tops[hi].length:
            # the statement after the edit did not come back as it was (the edit joined it to the one
            # before): the comment lines after it may now belong to another block
            return None
        for t, p in zip(new_tops, placed):
            t.length = p.length
        self._store_from(last, text, module, tops[:lo] + new_tops + tops[hi + 1:])
        return module

    def _store_from(self, last: _Parse, text: str, module: cst.Module, tops: List[_Top]) -> None:
        for name, parsed in self._last.items():
            if parsed is last:
                self._store(name, _Parse(text, module, last.header, tops, last.facts))
                return


__all__ = ["Reparser", "Statements", "KEPT", "KEPT_CHARS"]
