"""The findings of an edited document carried over from its previous text, when the edit cannot change
them: an editor re-lints the whole text after each keystroke, and some edits do not change what the
program does nor any code a finding quotes.

An edit is carried over when, after the top-level statements it touches are lined up with those of
the previous text and the statements that are the same but for blank lines are set aside at both
ends, what is left on both sides is *inert*: statements that bind plain names to constants
(``lr = 3e-4``, ``NOTE = "..."``), ``pass`` and constant expressions, whose names occur nowhere else in
either text; and the lines the edit changed outside them are blank lines outside brackets and
strings.  Nothing reads such a statement, so no finding elsewhere depends on it, and no rule
reports one (a test runs every rule's cases with such edits and compares with a full analysis).
A statement whose comments alone changed (a comment typed on a line of its own or after the code of a
line, outside brackets) is set aside like one that did not change: no analysis reads a comment (a text
search for what the code does reads its code without comments, a message quotes code without them).

Everything else is analysed in full, among it:

- a comment inside brackets (part of an expression's code), a statement holding ``noqa`` or
  ``torchlint`` anywhere (a directive may have been written or moved), spacing within a line, a
  docstring;
- an inert statement holding ``noqa`` or ``torchlint``;
- a finding on a line the edit changed, or whose message cites a line the edit moved (``(line 12)``,
  ``(train.py:12)``);
- other settings, other texts of the project's files (the editor's or on disk), a project refreshed
  since, other rules selected by their trigger words, fixes or fix edits asked for, notebooks.

The findings kept are moved with the text: a line after the edit moves by the lines it added or
removed."""
from __future__ import annotations

import io
import os
import re
import tokenize
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.parsing import looks_deep
from torchlint.analysis.project import Project
from torchlint.analysis.reparse import Statements
from torchlint.fixes.apply import differing_span

#: how many documents' findings are kept
KEPT = 8
_DIRECTIVE = re.compile(r"noqa|torchlint", re.IGNORECASE)
_TRIVIA = (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING)


@dataclass
class Carried:
    """The findings of one text of a document, with what they were found from."""

    text: str
    settings: Any  # the engine's settings, their project left out
    overlay: Dict[str, str]
    generation: int
    rules: Tuple[type, ...]  # the rules its trigger words selected
    dependencies: Tuple[str, ...]
    keys: Tuple[Any, ...]  # the content keys of ``dependencies``
    result: Any  # the engine's ``FileResult``


def _settings_key(settings: Any) -> Any:
    return replace(settings, project=None)


def eligible(path: str, settings: Any) -> bool:
    """Whether findings of ``path`` linted with ``settings`` may be carried: an editor's document (its
    project parses edits), not a notebook, without fixes or their edits."""
    return (
        settings.project.parses_edits
        and not path.endswith(".ipynb")
        and not settings.fix
        and not settings.want_edits
    )


def keep(path: str, source: str, settings: Any, rules: Sequence[type], result: Any) -> None:
    """Remember ``result``, the findings of ``source`` (the text of the document ``path``), for the
    next text of the document."""
    project: Project = settings.project
    table = project.carried
    if result.errors or result.fixed_source is not None:
        table.pop(path, None)
        return
    deps = tuple(result.dependencies)
    own = replace(result, diagnostics=list(result.diagnostics), errors=[], warnings=list(result.warnings))
    _store(table, path, Carried(source, _settings_key(settings), dict(project.overlay), project.generation,
                                tuple(rules), deps, project.content_keys(deps), own))


def _store(table: "OrderedDict[str, Carried]", path: str, entry: Carried) -> None:
    table[path] = entry
    table.move_to_end(path)
    while len(table) > KEPT:
        table.popitem(last=False)


def carried(path: str, source: str, settings: Any, rules: Sequence[type]) -> Optional[Any]:
    """The findings of ``source`` carried over from the document's previous text (a new ``FileResult``),
    or None when it has to be analysed.  ``rules``: those its trigger words select."""
    project: Project = settings.project
    last = project.carried.get(path)
    if last is None or last.text == source:
        return None  # the same text again: something else changed (a project file, a setting)
    if (
        last.generation != project.generation
        or tuple(rules) != last.rules
        or last.overlay != project.overlay
        or last.settings != _settings_key(settings)
        or project.content_keys(last.dependencies) != last.keys
    ):
        return None
    before = project.statements(path)
    if before is None or before.text != last.text or looks_deep(source):
        return None  # (a text that may take libcst long to parse is screened by the engine first)
    try:
        project.parse(path, source)
    except Exception:
        return None
    after = project.statements(path)
    if after is None or after.text != source:
        return None
    moved = _move(before, after, os.path.basename(path))
    if moved is None:
        return None
    result = replace(last.result, diagnostics=[], errors=[], warnings=list(last.result.warnings))
    for d in last.result.diagnostics:
        new = moved(d)
        if new is None:
            return None
        result.diagnostics.append(new)
    # what the findings were found from is what they were carried with: only the text is new
    _store(project.carried, path, replace(last, text=source, result=replace(result, diagnostics=list(result.diagnostics))))
    return result


# -- the edit ----------------------------------------------------------------------------------------
def _changed_lines(old: str, new: str) -> Optional[Tuple[int, int, int]]:
    """``(first, old_end, new_end)``: 0-based lines; the edit replaced old lines ``[first, old_end)`` by
    new lines ``[first, new_end)`` (None: the texts are equal)."""
    a, b = old.split("\n"), new.split("\n")
    span = differing_span(a, b)
    if span is None:
        return None
    first, old_end, new_end = span
    if first == min(len(a), len(b)):  # one text's lines begin the other's: its last line ends the text, not a
        first -= 1  # line break, so that line changed too
    return first, old_end, new_end


def _move(before: Statements, after: Statements, name: str) -> Optional[Any]:
    """A function moving a finding of ``before``'s text to ``after``'s (None: the finding cannot be
    carried), or None when the edit may change findings."""
    old, new = before.text, after.text
    lines = _changed_lines(old, new)
    if lines is None or not before.spans or not after.spans:
        return None
    first, old_last, new_last = lines
    old_starts, new_starts = _line_starts(old), _line_starts(new)
    start = old_starts[first]  # the same offset in both texts
    old_end = old_starts[old_last] if old_last < len(old_starts) else len(old)
    new_end = new_starts[new_last] if new_last < len(new_starts) else len(new)
    if start < before.spans[0][1] or start < after.spans[0][1]:
        return None  # the module's header (encoding, first comments) changed
    lo0, hi0 = _touched(before, start, old_end)
    lo1, hi1 = _touched(after, start, new_end)
    if lo0 != lo1 or len(before.spans) - hi0 != len(after.spans) - hi1:
        return None  # the statements before and after the edit are not the same ones
    region0, region1 = list(before.spans[lo0:hi0]), list(after.spans[lo1:hi1])
    # set aside the statements that did not change but for blank lines and comments, at both ends of the
    # region; the lines of those whose comments changed are no trivia but changed nothing
    aside0: List[Tuple[int, int]] = []
    aside1: List[Tuple[int, int]] = []

    def same(span0: Tuple[cst.BaseStatement, int, int], span1: Tuple[cst.BaseStatement, int, int]) -> bool:
        if _same(old, span0, new, span1):
            return True
        if not _same_code(old, span0, new, span1):
            return False
        aside0.append(span0[1:])
        aside1.append(span1[1:])
        return True

    while region0 and region1 and same(region0[0], region1[0]):
        region0.pop(0)
        region1.pop(0)
    while region0 and region1 and same(region0[-1], region1[-1]):
        region0.pop()
        region1.pop()
    if not _quiet(old, region0) or not _quiet(new, region1):
        return None
    # outside the inert statements, only blank lines (outside brackets and strings)
    if not _trivia(old, before, lo0, hi0, region0, old_starts, first, old_last, aside0):
        return None
    if not _trivia(new, after, lo1, hi1, region1, new_starts, first, new_last, aside1):
        return None
    first_line = first + 1  # 1-based: the first line the edit changed
    shift = new_last - old_last
    # how a message cites a line of this file, outside the code it quotes: ``(line 12)``, ``(built at line
    # 12)``, ``(train.py:12)``; moved with the line it cites
    cited = re.compile(r"(\((?:built at |built in )?line |\(" + re.escape(name) + r":)(\d+)\)")
    loose = re.compile(r"\blines? (\d+)|(?<![\w.])" + re.escape(name) + r":(\d+)")

    def line_of(line: int) -> Optional[int]:
        if line < first_line:
            return line
        if line > old_last:
            return line + shift
        return None  # on a line the edit changed

    def cite(text: str) -> Optional[str]:
        """``text`` with the lines it cites moved (None: a citation that cannot be moved)."""
        if not shift or not loose.search(text):
            return text
        parts = text.split("`")
        for i, part in enumerate(parts):
            spans = [] if i % 2 else [m.span() for m in cited.finditer(part)]  # quoted code: the code's own
            for m in loose.finditer(part):
                if int(m.group(1) or m.group(2)) >= first_line and not any(a <= m.start() < b for a, b in spans):
                    return None
            out, at = [], 0
            for m in (cited.finditer(part) if spans else ()):
                line = line_of(int(m.group(2)))
                if line is None:
                    return None
                out.append(part[at:m.start()] + f"{m.group(1)}{line})")
                at = m.end()
            parts[i] = "".join(out) + part[at:]
        return "`".join(parts)

    def moved(d: Any) -> Optional[Any]:
        if d.cell or d.line < 1:
            return None
        message = cite(d.message)
        title = cite(d.fix.title) if d.fix is not None else None
        if message is None or (d.fix is not None and title is None):
            return None
        line = line_of(d.line)
        end_line = line_of(d.end_line) if d.end_line else 0
        if line is None or end_line is None:
            return None
        fix = replace(d.fix, title=title) if d.fix is not None and title != d.fix.title else d.fix
        return replace(d, line=line, end_line=end_line, message=message, fix=fix)

    return moved


def _line_starts(text: str) -> List[int]:
    starts = [0]
    find = text.find
    at = find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = find("\n", at + 1)
    return starts


def _trivia(text: str, parsed: Statements, lo: int, hi: int, region: Sequence[Tuple[cst.BaseStatement, int, int]],
            starts: Sequence[int], first: int, last: int, aside: Sequence[Tuple[int, int]] = ()) -> bool:
    """Whether the lines ``[first, last)`` of ``text`` that no statement of ``region`` holds are blank,
    none of them inside brackets or a string (where they are part of an expression's code); lines of the
    statements ``aside`` (offsets: those whose comments alone changed) need not be."""
    held = (region[0][1], region[-1][2]) if region else (0, 0)
    inside: Optional[set] = None
    for i in range(first, last):
        at = starts[i]
        if held[0] <= at < held[1] or any(a <= at < b for a, b in aside):
            continue
        end = text.find("\n", at)
        if text[at:end if end >= 0 else len(text)].strip():
            return False
        if inside is None:
            inside = _bracketed(text, parsed.spans[lo:hi])
        if i in inside:
            return False
    return True


def _same(old: str, span0: Tuple[cst.BaseStatement, int, int], new: str, span1: Tuple[cst.BaseStatement, int, int]) -> bool:
    """Whether two statements are the same code but for blank lines (outside strings): the same
    tokens, the same comments, the same spacing."""
    a, b = old[span0[1]:span0[2]], new[span1[1]:span1[2]]
    if a == b:
        return True
    if _unblank(a) != _unblank(b):
        return False
    return _tokens(old, span0) == _tokens(new, span1)


def _same_code(old: str, span0: Tuple[cst.BaseStatement, int, int], new: str,
               span1: Tuple[cst.BaseStatement, int, int]) -> bool:
    """Whether two statements differ at most in comments outside brackets and in blank lines: the same
    tokens at the same columns, the comments inside brackets included; neither holds a directive."""
    if _DIRECTIVE.search(old, span0[1], span0[2]) or _DIRECTIVE.search(new, span1[1], span1[2]):
        return False
    return _code_key(old, span0) == _code_key(new, span1)


_NO_COLUMN = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER})


def _code_key(text: str, span: Tuple[cst.BaseStatement, int, int]) -> Tuple[Tuple[int, str, int], ...]:
    """The statement's tokens with their columns, but for comments and line breaks outside brackets (a
    statement that does not tokenize alone gets a key equal to no other's)."""
    _, a, b = span
    out: List[Tuple[int, str, int]] = []
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text[a:b]).readline):
            kind = tok.type
            if kind == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                elif tok.string in ")]}":
                    depth -= 1
            elif kind in (tokenize.COMMENT, tokenize.NL) and depth <= 0:
                continue
            out.append((kind, tok.string, -1 if kind in _NO_COLUMN else tok.start[1]))
    except (tokenize.TokenError, SyntaxError):
        return ((-1, "", id(text)),)
    return tuple(out)


def _unblank(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if line.strip())


def _bracketed(text: str, spans: Sequence[Tuple[cst.BaseStatement, int, int]]) -> set:
    """The 0-based lines of ``text`` in ``spans`` that are inside brackets or a string: their comments
    and blank lines are part of an expression's code."""
    out: set = set()
    for _, a, b in spans:
        base = text.count("\n", 0, a) - 1  # tokenize counts lines from 1
        depth = 0
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text[a:b]).readline):
                if tok.end[0] > tok.start[0]:  # a string over several lines
                    out.update(range(base + tok.start[0] + 1, base + tok.end[0] + 1))
                if tok.type == tokenize.OP:
                    if tok.string in "([{":
                        depth += 1
                    elif tok.string in ")]}":
                        depth -= 1
                elif depth > 0 and tok.type in (tokenize.COMMENT, tokenize.NL):
                    out.add(base + tok.start[0])
        except (tokenize.TokenError, SyntaxError):
            out.update(range(base + 1, base + 2 + text.count("\n", a, b)))
    return out


def _touched(parsed: Statements, start: int, end: int) -> Tuple[int, int]:
    """``[lo, hi)``: the statements whose spans meet ``[start, end]`` (ends included)."""
    spans = parsed.spans
    lo = next((i for i, (_, a, b) in enumerate(spans) if b >= start), len(spans))
    hi = lo
    while hi < len(spans) and spans[hi][1] <= end:
        hi += 1
    return lo, hi


def _tokens(text: str, span: Tuple[cst.BaseStatement, int, int]) -> Tuple[Tuple[int, Any], ...]:
    """The statement's tokens without its comments and blank lines (a statement that does not tokenize
    alone gets tokens equal to no other's)."""
    _, a, b = span
    try:
        return tuple(
            (tok.type, tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(text[a:b]).readline)
            if tok.type not in _TRIVIA
        )
    except (tokenize.TokenError, SyntaxError):
        return ((-1, object()),)


def _quiet(text: str, region: Sequence[Tuple[cst.BaseStatement, int, int]]) -> bool:
    """Whether every statement of ``region`` is inert and the names it binds occur nowhere else in
    ``text``."""
    if not region:
        return True
    a, b = region[0][1], region[-1][2]
    if _DIRECTIVE.search(text, a, b):
        return False
    names: List[str] = []
    for node, _, _ in region:
        if not _inert(node, names):
            return False
    rest_before, rest_after = text[:a], text[b:]
    for name in names:
        word = re.compile(r"\b" + re.escape(name) + r"\b")
        if word.search(rest_before) or word.search(rest_after):
            return False
    return True


_CONSTANT_NAMES = frozenset({"True", "False", "None"})
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)


def _constant(node: cst.CSTNode) -> bool:
    if isinstance(node, _LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value in _CONSTANT_NAMES
    if isinstance(node, cst.ConcatenatedString):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _constant(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _constant(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _constant(e.key) and _constant(e.value) for e in node.elements)
    return False


def _bound(target: cst.BaseExpression, names: List[str]) -> bool:
    if isinstance(target, cst.Name):
        if target.value.startswith("__") or target.value in _CONSTANT_NAMES:
            return False  # ``__all__``, ``__version__``: read by the import system and tools
        names.append(target.value)
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _bound(e.value, names) for e in target.elements)
    return False


def _inert(node: cst.BaseStatement, names: List[str]) -> bool:
    """A statement that binds plain names (added to ``names``) to constants, or does nothing."""
    if not isinstance(node, cst.SimpleStatementLine):
        return False
    for small in node.body:
        if isinstance(small, cst.Pass):
            continue
        if isinstance(small, cst.Expr) and _constant(small.value):
            continue
        if isinstance(small, cst.Assign) and _constant(small.value):
            if all(_bound(t.target, names) for t in small.targets):
                continue
        return False
    return True


__all__ = ["Carried", "KEPT", "carried", "eligible", "keep"]
