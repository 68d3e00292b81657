"""Editing ``# noqa`` directives: removing dead codes (unused-noqa's fix, TL517) and adding codes
(``--add-noqa``).  The directive is read as the engine reads it: ``# noqa`` or ``# noqa: TL101, TL2``
anywhere in a line's comment, in any case.  Which part of a line is its comment comes from the token
stream (:func:`comments`): a ``#`` inside a string literal is data, never a directive, and is never
edited."""
from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, Iterable, Optional, Set, Tuple

DIRECTIVE = re.compile(
    r"#\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def remove_codes(comment: str, dead: Set[str], bare: bool = False) -> Optional[str]:
    """The comment without the ``dead`` codes of its noqa directive (the whole directive when ``bare``
    or when no code is left; the rest of the comment stays); None when nothing of the comment is left."""
    m = DIRECTIVE.search(comment)
    if m is None:
        return comment
    if not bare and m.group("codes") is not None:
        codes = CODE.findall(m.group("codes"))
        keep = [c for c in codes if c.upper() not in dead]
        if keep:
            return comment[: m.start("codes")] + ", ".join(keep) + comment[m.end("codes"):]
    before = comment[: m.start()].rstrip()
    after = comment[m.end():].strip()
    if not before:
        if not after:
            return None
        return after if after.startswith("#") else "# " + after
    return f"{before}  {after}" if after else before


def comments(source: str) -> Optional[Dict[int, Tuple[int, str]]]:
    """1-based line -> (column, text) of the comment on that line, read from the token stream (a ``#``
    inside a string is not a comment); None when the source does not tokenize."""
    out: Dict[int, Tuple[int, str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = (tok.start[1], tok.string)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return out


def comment_texts(source: str, lines: Iterable[str]) -> Dict[int, str]:
    """1-based line -> its comment's text, for reading noqa directives: only lines with a comment,
    and nothing at all when the source holds no ``noqa``.  A source that does not tokenize falls back
    to whole lines (as read before the token stream was used)."""
    if "noqa" not in source.lower():
        return {}
    found = comments(source)
    if found is None:
        return {n: text for n, text in enumerate(lines, 1) if "noqa" in text.lower()}
    return {n: text for n, (_, text) in found.items()}


def add_codes(line: str, codes: Iterable[str], comment_col: Optional[int] = None) -> str:
    """``line`` (without its line break) with ``# noqa: CODES`` added: merged into the noqa directive
    of the line's comment when it has one, else appended after the code and any comment.
    ``comment_col``: where the line's comment starts, from the token stream (None: no comment); a
    ``# noqa`` before it is inside a string and is left alone."""
    new = sorted({c.upper() for c in codes})
    m = None
    if comment_col is not None and line[comment_col:comment_col + 1] == "#":
        m = DIRECTIVE.search(line, comment_col)
    if m is None:
        return line.rstrip(" \t") + "  # noqa: " + ", ".join(new)
    if m.group("codes") is None:  # a bare noqa already covers everything
        return line
    have = CODE.findall(m.group("codes"))
    missing = [c for c in new if c not in {h.upper() for h in have}]
    if not missing:
        return line
    return line[: m.start("codes")] + ", ".join(have + missing) + line[m.end("codes"):]


def unsafe_lines(source: str) -> Set[int]:
    """1-based lines whose end a comment cannot be added to: inside a string that spans lines, or
    continued with a backslash (and every line when the source does not tokenize)."""
    out: Set[int] = set()
    lines = source.split("\n")
    for n, text in enumerate(lines, 1):
        if text.rstrip("\r").endswith("\\"):
            out.add(n)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.start[0] != tok.end[0] and tok.type not in (tokenize.NL, tokenize.NEWLINE):
                out.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set(range(1, len(lines) + 1))
    return out
