"""Which codes a run reports: one answer for the CLI, the language server and the flake8 plugin.

``TL000`` (a file that could not be linted: a syntax error, a binary or undecodable file, a file that
hit its time budget, a crashed rule) is on unless an ignore names it: ``--ignore TL000`` (or ``TL0``,
``TL00``) turns it off; ``--select TL1`` does not, so that narrowing the rules never hides a file that
was not linted.  It is a known selector everywhere (``--select TL000`` and ``--extend-select TL000``
are accepted and turn it back on after a configuration file ignored it).

A rule that is off by default (TL503) is enabled only by a selector that is its full code
(``--extend-select TL503``); prefixes and ``ALL`` select the rules that are on by default.

The CLI and the server apply ruff's layers (:func:`resolve`).  flake8 keeps its own ``--select`` and
``--ignore``; :func:`for_flake8` runs, of the codes flake8 would report, those the default selection
enables, plus any code off by default that flake8's selection names in full: ``flake8 --select TL``
reports what ``torchlint`` reports, ``flake8 --extend-select TL503`` adds TL503 as
``torchlint --extend-select TL503`` does.  Nothing is imported here at module level but typing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Type

#: the code of a file that could not be linted (the same as ``engine.PARSE_ERROR``)
PARSE_ERROR = "TL000"

Layer = Tuple[Optional[Sequence[str]], Sequence[str], Sequence[str]]  # select, extend-select, ignore


@dataclass(frozen=True)
class Selection:
    rules: Tuple[type, ...]  # the rule classes to run
    parse_errors: bool  # whether TL000 is reported

    @property
    def codes(self) -> FrozenSet[str]:
        return frozenset(r.CODE for r in self.rules) | ({PARSE_ERROR} if self.parse_errors else set())


class NotLinted:
    """## What it does
Reports a file, or a notebook cell, that torchlint could not lint, with the reason: a syntax error
(at the parser's line and column), a binary file (NUL bytes), a file that cannot be decoded, a file
too large, too deeply nested or too long to parse safely, a file whose analysis ran past its time
budget (`file-timeout`) or over its memory (1 GiB: "too large to analyse"), or a rule that crashed on
it.  Nothing else is reported for that file (for
a notebook: for that cell), so a clean run never hides a file that was not checked.

## Why is this bad?
A file that is not linted gets no findings, which looks the same as a file with nothing wrong.  ruff
and flake8 report syntax errors too (flake8 as `E999`).

## Example
```python
import torch
def train(:
    ...
```
`TL000 SyntaxError: ...` at line 2.

## Use instead
Fix the syntax error; for a file over a limit, raise `max-file-size` or `file-timeout`, or exclude
the file.

## Fix safety
No fix.

## Options
On unless an ignore names it: `--ignore TL000` (also `TL0`, `TL00`, in `ignore`,
`extend-ignore` or `per-file-ignores`).  Narrowing the rules (`--select TL1`) does not turn it off;
`--select TL000` or `--extend-select TL000` turns it on again after a configuration file ignored it.
In flake8, `TL000` is reported whatever `--select` says, unless `--ignore`/`--extend-ignore` names it.
Files whose text holds no trigger word of any selected rule are not parsed, so a syntax error in a
file that does not use torch is not reported.

## References
- flake8's `E999` and ruff's syntax errors
"""

    CODE = "TL000"
    NAME = "syntax-error"
    MESSAGE = "the file could not be linted"
    DEFAULT_ENABLED = True
    FIX_TITLE = None
    FIX_SAFETY = "none"

    @classmethod
    def documentation(cls) -> str:
        return (cls.__doc__ or "").strip("\n")

    @classmethod
    def fix_availability(cls) -> str:
        return "none"


def _specificity(code: str, selectors: Sequence[str]) -> int:
    best = -1
    for s in selectors:
        if s == "ALL":
            best = max(best, 0)
        elif code.startswith(s):
            best = max(best, len(s))
    return best


def _picked(code: str, default_on: bool, selectors: Sequence[str]) -> int:
    """How specifically ``selectors`` select ``code`` (-1: not at all).  A rule off by default is
    selected only by its full code (ruff does the same for its deprecated rules): ``--select TL5``,
    ``--select ALL`` and flake8's ``--select TL`` leave it off."""
    if default_on:
        return _specificity(code, selectors)
    return len(code) if code in selectors else -1


def _apply(defaults: Sequence[Tuple[str, bool]], layers: Iterable[Layer]) -> FrozenSet[str]:
    current = {code for code, on in defaults if on}
    for select, extend_select, ignore in layers:
        chosen = set()
        for code, default_on in defaults:
            on = (0 if code in current else -1) if select is None else _picked(code, default_on, select)
            on = max(on, _picked(code, default_on, extend_select))
            if on >= 0 and on > _specificity(code, ignore):
                chosen.add(code)
        # TL000: only an ignore that names it (TL0, TL00, TL000) turns it off, a selection that names
        # it turns it on again
        named_on = max(_specificity(PARSE_ERROR, select or ()), _specificity(PARSE_ERROR, extend_select))
        named_off = _specificity(PARSE_ERROR, ignore)
        named_off = named_off if named_off > 2 else -1
        chosen.discard(PARSE_ERROR)
        if (named_on > 2 and named_on > named_off) or (named_off < 0 and PARSE_ERROR in current):
            chosen.add(PARSE_ERROR)
        current = chosen
    return frozenset(current)


def resolve(rules: Sequence[Type], *layers: Layer) -> Selection:
    """Apply selection layers in order (the configuration file, then the command line), ruff's way.

    A layer with ``select`` starts over from that selection; one without keeps the previous result.
    Within a layer, a code is on when its most specific ``select``/``extend-select`` match is more
    specific than its most specific ``ignore`` match.  ``TL000`` takes part as a code on by default.
    """
    defaults = [(PARSE_ERROR, True)] + [(r.CODE, bool(r.DEFAULT_ENABLED)) for r in rules]
    on = _apply(defaults, layers)
    return Selection(tuple(r for r in rules if r.CODE in on), PARSE_ERROR in on)


def fixable_codes(rules: Sequence[Type], fixable: Optional[Sequence[str]],
                  unfixable: Sequence[str]) -> Optional[FrozenSet[str]]:
    """The codes whose fixes may be applied: ``fixable`` (default ALL) minus ``unfixable``, the most
    specific selector deciding, as for ``select``/``ignore``; None when neither is set (every fix)."""
    if fixable is None and not unfixable:
        return None
    on_list = ["ALL"] if fixable is None else list(fixable)
    return frozenset(
        r.CODE for r in rules
        if _specificity(r.CODE, on_list) >= 0 and _specificity(r.CODE, on_list) > _specificity(r.CODE, unfixable)
    )


def for_flake8(rules: Sequence[Type], decide: Optional[Callable[[str], bool]], named: Iterable[str]) -> Selection:
    """The rules the flake8 plugin runs: of those flake8's decision engine would report (``decide``;
    None: flake8 filters, so every one it could), the ones the default selection enables and those that
    ``named`` (flake8's ``--select`` and ``--extend-select`` entries) names by their full code.
    ``TL000`` is reported whenever some rule runs, unless flake8's decision engine drops it (the plugin
    adds ``TL000`` to flake8's ``extend-select`` unless an ignore names it, see :func:`names_parse_error`)."""
    full = {n.strip().upper() for n in named}
    default = resolve(rules)
    on = [r for r in rules if (r in default.rules or r.CODE in full) and (decide is None or decide(r.CODE))]
    return Selection(tuple(on), bool(on) and (decide is None or decide(PARSE_ERROR)))


def names_parse_error(selectors: Iterable[str]) -> bool:
    """Whether some selector is ``TL000`` itself or one of its family prefixes longer than ``TL``."""
    return any(PARSE_ERROR.startswith(s.strip().upper()) and len(s.strip()) > 2 for s in selectors)


def known(code: str, rule_codes: Sequence[str]) -> bool:
    """Whether ``code`` is a selector of some code: ``ALL``, or a prefix of a rule's code or of TL000."""
    return code == "ALL" or any(c.startswith(code) for c in list(rule_codes) + [PARSE_ERROR])


def keep(diagnostics: Sequence, selection_parse_errors: bool, ignore: Sequence[str] = ()) -> List:
    """``diagnostics`` without TL000 when it is not selected or ``ignore`` (per-file-ignores) drops it."""
    if selection_parse_errors and not names_parse_error(ignore):
        return list(diagnostics)
    return [d for d in diagnostics if d.code != PARSE_ERROR]


__all__ = ["PARSE_ERROR", "Layer", "NotLinted", "Selection", "fixable_codes", "for_flake8", "keep", "known", "names_parse_error", "resolve"]
