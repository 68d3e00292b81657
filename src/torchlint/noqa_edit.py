"""Editing ``# noqa`` directives: removing dead codes (unused-noqa's fix, TL517) and adding codes
(``--add-noqa``).  The directive is read as the engine reads it: ``# noqa`` or ``# noqa: TL101, TL2``
anywhere in a line's comment, in any case."""
from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable, Optional, Set

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


def add_codes(line: str, codes: Iterable[str]) -> str:
    """``line`` (without its line break) with ``# noqa: CODES`` added: merged into the line's noqa
    directive when it has one, else appended after the code and any comment."""
    new = sorted({c.upper() for c in codes})
    m = DIRECTIVE.search(line)
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
