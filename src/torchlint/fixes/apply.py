"""Applying fixes: node-identity edits on one tree, and writing files back atomically.

The engine re-lints after each round of fixes until nothing applicable is left; this module applies
one round (fixes whose edits overlap an earlier fix wait for the next round) and writes the result.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState  # the state Module.code_for_node starts from

from torchlint.analysis.context import FileContext
from torchlint.rule import Fix


@dataclass(frozen=True)
class Edit:
    """One text edit: replace the span [line:col, end_line:end_col) (1-based) by ``content``."""

    content: str
    line: int
    col: int
    end_line: int
    end_col: int


# -- applying fixes to a tree ---------------------------------------------------------------------------------------
_EMPTY = cst.Module(body=[])


class _Applier(cst.CSTTransformer):
    def __init__(self, edits: Mapping[cst.CSTNode, Any]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        new = self.edits.get(original_node)
        if new is None:
            return updated_node
        # An expression's parentheses belong to its node.  A rule may drop them on purpose, but a
        # replacement that spans lines keeps the original's: they are what made the breaks legal.
        lpar = getattr(original_node, "lpar", None)
        if lpar and isinstance(new, cst.CSTNode) and hasattr(new, "lpar") and not new.lpar:
            if "\n" in _EMPTY.code_for_node(new):
                new = new.with_changes(lpar=lpar, rpar=original_node.rpar)
        return new


def apply_fixes(module: cst.Module, ctx: FileContext, fixes: Sequence[Fix], source: Optional[str] = None) -> Tuple[str, int]:
    """Apply every fix whose edits do not overlap an earlier one; returns (new source, count).  With
    ``source`` (the text ``module`` was parsed from), the lines no fix touched are that text's, byte
    for byte, even where libcst does not give the text back as it read it (see :func:`keep_untouched`)."""
    claimed: set = set()
    claimed_ancestors: set = set()
    edits: Dict[cst.CSTNode, Any] = {}
    applied = 0
    for fix in fixes:
        nodes = list(fix.edits)
        conflict = False
        for n in nodes:
            if n in claimed or n in claimed_ancestors or any(a in claimed for a in ctx.ancestors(n)):
                conflict = True
                break
        if conflict:
            continue
        for n in nodes:
            claimed.add(n)
            claimed_ancestors.update(ctx.ancestors(n))
        edits.update(fix.edits)
        applied += 1
    if not edits:
        return module.code, 0
    new_module = module.visit(_Applier(edits))
    if source is not None and _regenerates_differently(source):
        return keep_untouched(source, module.code, new_module.code), applied
    return new_module.code, applied


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_LONE_CR = re.compile(r"\r(?!\n)")


def _regenerates_differently(source: str) -> bool:
    """Whether libcst may write ``source`` back other than it read it: a form feed (dropped from a
    statement's indentation) or a lone ``\r`` line break (the last one dropped)."""
    return "\x0c" in source or _LONE_CR.search(source) is not None


def _split_lines(text: str) -> List[str]:
    """Lines with their breaks (``\r\n``, ``\r``, ``\n`` only: a form feed is not a line break here)."""
    return _LINE.findall(text)


def _ending(line: str) -> Tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


def keep_untouched(source: str, base: str, new: str, newline: Optional[str] = None) -> str:
    """``new`` (libcst's code of the fixed module) with every line no fix changed taken from ``source``
    instead of ``base`` (libcst's code of the unfixed module): where libcst does not give back what it
    read (a form feed before a statement, the last lone ``\r``), only the lines a fix rewrote differ
    from the input, and on those the input's line break and leading form feeds are kept.  ``new`` as
    it is when the lines of ``source`` and ``base`` do not correspond one to one.  ``newline``: the
    break given to the lines a fix added where ``new`` ends them with ``\n``."""
    import difflib

    if base == source:
        return new
    src, old, fixed = _split_lines(source), _split_lines(base), _split_lines(new)
    if len(src) != len(old):
        return new
    out: List[str] = []
    matcher = difflib.SequenceMatcher(None, old, fixed, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(src[i1:i2])
            continue
        for k, line in enumerate(fixed[j1:j2]):
            i = i1 + k
            if i < i2:  # a rewritten line: the input's break and the form feeds before its code stay
                body, end = _ending(line)
                old_body, old_end = _ending(old[i])
                src_body, src_end = _ending(src[i])
                if end == old_end:
                    end = src_end
                extra = src_body[: len(src_body) - len(old_body)] if src_body.endswith(old_body) else ""
                if extra and not extra.strip(" \t\x0c") and body:
                    body = extra + body
                line = body + end
            elif newline is not None and line.endswith("\n") and not line.endswith("\r\n"):
                line = line[:-1] + newline
            out.append(line)
    return "".join(out)


def fix_edits(module: cst.Module, fix: Fix, ctx: Optional[FileContext] = None) -> Tuple[Edit, ...]:
    """The fix as text edits (the smallest span that changes in each top-level statement it touches),
    for machine-readable output.  Use :class:`EditMaker` to compute the edits of many fixes of one file."""
    return EditMaker(module, ctx).edits(fix)


class EditMaker:
    """Text edits of fixes on one module.  Only the statements a fix touches are regenerated (with the
    fix applied) and compared: the innermost statement of a block that holds each edit, generated at
    its block's indentation (a fix inside a 2,000-line class regenerates one line, not the class), or,
    where that statement cannot be placed in the text, its top-level statement.  The edits of all fixes
    of a file cost a fraction of one code generation of the file, not one per fix.

    ``source`` is the text the module was parsed from and ``positions`` the engine's
    ``PositionProvider`` map: with both, a statement's place in the text comes from its position; else
    from generating the code of every top-level statement once."""

    def __init__(self, module: cst.Module, ctx: Optional[FileContext] = None, source: Optional[str] = None,
                 positions: Optional[Mapping[cst.CSTNode, Any]] = None) -> None:
        self.module = module
        self.ctx = ctx
        self.positions = positions
        self._text = source
        self._body = {id(stmt): stmt for stmt in module.body}
        self._offsets: Dict[Any, Tuple[int, str]] = {}  # id(stmt) or ("inner", id(stmt)) -> (offset, code)
        self._layout_done = False
        self._line_starts: Optional[List[int]] = None

    def text(self) -> str:
        if self._text is None:
            self._text = self.module.code
        return self._text

    def _place(self, stmt: cst.CSTNode) -> Tuple[int, str]:
        """(offset in the text, code) of a top-level statement."""
        known = self._offsets.get(id(stmt))
        if known is not None:
            return known
        code = self.module.code_for_node(stmt)
        offset = self._offset_from_position(stmt, code)
        if offset is None:
            self._layout()
            return self._offsets[id(stmt)]
        self._offsets[id(stmt)] = (offset, code)
        return offset, code

    def _offset_from_position(self, stmt: cst.CSTNode, code: str) -> Optional[int]:
        pos = self.positions.get(stmt) if self.positions is not None else None
        if pos is None:
            return None
        # the statement's code starts on a line of its own: its leading lines, decorators and the lines
        # after them come before the line its position names
        lead = len(getattr(stmt, "leading_lines", ()))
        decorators = getattr(stmt, "decorators", ())
        if decorators:
            lead += sum(self.module.code_for_node(d).count("\n") for d in decorators)
            lead += len(getattr(stmt, "lines_after_decorators", ()))
        line = pos.start.line - lead
        starts = self._starts()
        if not 1 <= line <= len(starts):
            return None
        offset = starts[line - 1]
        text = self.text()
        if text[offset:offset + len(code)] != code:
            last = code.endswith("\n") and text[offset:] == code[:-1]  # a file without a final newline
            if not last:
                return None  # not where expected: fall back to the full layout
        return offset

    def _starts(self) -> List[int]:
        if self._line_starts is None:
            text = self.text()
            starts = [0]
            find = text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return self._line_starts

    def _layout(self) -> None:
        if self._layout_done:
            return
        m = self.module
        pos = sum(len(m.code_for_node(line)) for line in m.header)
        for stmt in m.body:
            code = m.code_for_node(stmt)
            self._offsets[id(stmt)] = (pos, code)
            pos += len(code)
        self._layout_done = True

    def _top(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if self.ctx is None:
            return None
        if id(node) in self._body:
            return node
        for a in self.ctx.ancestors(node):
            if id(a) in self._body:
                return a
        return None

    def edits(self, fix: Fix) -> Tuple[Edit, ...]:
        inner = self._inner_edits(fix)
        return inner if inner is not None else self._top_edits(fix)

    def _inner_edits(self, fix: Fix) -> Optional[Tuple[Edit, ...]]:
        """Edits from the innermost block statements holding the fix's edits; None: not placeable."""
        if self.ctx is None or self.positions is None:
            return None
        ctx = self.ctx
        found: Dict[int, cst.CSTNode] = {}
        for n in fix.edits:
            stmt = ctx.statement_of(n)
            if stmt is None:
                return None
            found[id(stmt)] = stmt
        # a statement inside another one that is edited too is regenerated with it
        stmts = [st for st in found.values() if not any(id(a) in found for a in ctx.ancestors(st))]
        text = self.text()
        placed = []
        for st in stmts:
            indents = ctx.block_indents(st)
            if indents is None:
                return None
            key = ("inner", id(st))
            known = self._offsets.get(key)
            if known is None:
                before = _code_at(self.module, st, indents)
                offset = self._offset_from_position(st, before)
                if offset is None:
                    return None
                known = self._offsets[key] = (offset, before)
            placed.append((known, st, indents))
        placed.sort(key=lambda item: item[0][0])
        out = []
        for (offset, before), st, indents in placed:
            new = st.visit(_Applier(fix.edits))
            if isinstance(new, cst.FlattenSentinel):
                if not new.nodes:
                    return None  # the block may need a `pass`: its parent decides
                after = "".join(_code_at(self.module, n, indents) for n in new.nodes)
            elif isinstance(new, cst.RemovalSentinel):
                return None
            else:
                after = _code_at(self.module, new, indents)
            edit = _diff(text, before, after, offset)
            if edit is not None:
                out.append(edit)
        return tuple(out)

    def _top_edits(self, fix: Fix) -> Tuple[Edit, ...]:
        tops: Dict[int, cst.CSTNode] = {}
        for n in fix.edits:
            top = self._top(n)
            if top is None:
                return self._whole(fix)
            tops[id(top)] = top
        text = self.text()
        placed = sorted(((self._place(t), t) for t in tops.values()), key=lambda item: item[0][0])
        out = []
        for (offset, before), top in placed:
            new = top.visit(_Applier(fix.edits))
            if isinstance(new, cst.FlattenSentinel):
                after = "".join(self.module.code_for_node(n) for n in new.nodes)
            elif isinstance(new, cst.RemovalSentinel):
                after = ""
            else:
                after = self.module.code_for_node(new)
            edit = _diff(text, before, after, offset)
            if edit is not None:
                out.append(edit)
        return tuple(out)

    def _whole(self, fix: Fix) -> Tuple[Edit, ...]:
        before = self.text()
        after = self.module.visit(_Applier(fix.edits)).code
        edit = _diff(before, before, after, 0)
        return (edit,) if edit is not None else ()


def _code_at(module: cst.Module, node: cst.CSTNode, indents: Sequence[str]) -> str:
    """The code of a statement as it reads inside blocks indented by ``indents`` (outermost first)."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for indent in indents:
        state.increase_indent(indent)
    node._codegen(state)
    return "".join(state.tokens)


def differing_span(before: Sequence[Any], after: Sequence[Any]) -> Optional[Tuple[int, int, int]]:
    """``(start, end in before, end in after)`` of the smallest span where the texts (or the lists of
    lines) differ (None: equal)."""
    if before == after:
        return None
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_b, end_a = len(before), len(after)
    while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
        end_b -= 1
        end_a -= 1
    return start, end_b, end_a


def _diff(text: str, before: str, after: str, offset: int) -> Optional[Edit]:
    """The smallest edit turning ``before`` (found at ``offset`` in ``text``) into ``after``."""
    span = differing_span(before, after)
    if span is None:
        return None
    start, end_b, end_a = span
    sl, sc = _line_col(text, offset + start)
    el, ec = _line_col(text, offset + end_b)
    return Edit(after[start:end_a], sl, sc, el, ec)


def _line_col(text: str, offset: int) -> Tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    last = text.rfind("\n", 0, offset)
    return line, offset - last


from torchlint.atomic import FileChangedError, write_atomic  # noqa: E402,F401  (the write path lives there)
