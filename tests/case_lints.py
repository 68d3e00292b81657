"""One lint per distinct text and settings in a test run.

Several checks lint the same rule case the same way (the page's cases, the message quote, the rule
independence checks): `lint_once` lints each distinct (path, text, rules, options, flags) once per test
run and hands every caller its own copy of the result. Each lint gets a fresh `Project`, as
`Settings()` gives one, so a result never depends on which test asked first.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type

from torchlint.engine import FileResult, Settings, lint_source
from torchlint.rule import LintRule

_RESULTS: Dict[Tuple[Any, ...], FileResult] = {}


def lint_once(path: str, source: str, rules: Sequence[Type[LintRule]], options: Optional[Mapping[str, Any]] = None,
              **flags: Any) -> FileResult:
    """``lint_source(path, source, Settings(rules=rules, options=options, **flags))``, linted once per run."""
    assert "project" not in flags, "a shared project would carry one lint's files into the next"
    options = dict(options or {})
    key = (path, source, tuple(rules), repr(sorted(options.items())), tuple(sorted(flags.items())))
    result = _RESULTS.get(key)
    if result is None:
        result = _RESULTS[key] = lint_source(path, source, Settings(rules=list(rules), options=options, **flags))
    return dataclasses.replace(result, diagnostics=list(result.diagnostics), errors=list(result.errors),
                               warnings=list(result.warnings), fixed_codes=dict(result.fixed_codes))
