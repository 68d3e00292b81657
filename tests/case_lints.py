"""One lint per distinct text and settings in a test run, in a project of its own.

Several checks lint the same rule case the same way (the page's cases, the message quote, the rule
independence checks): `lint_once` lints each distinct (path, text, rules, options, flags) once per test
run and hands every caller its own copy of the result. Each lint gets a fresh `Project`, as
`Settings()` gives one, so a result never depends on which test asked first.

A case is a file of a project that holds nothing else: a folder with a copy of this repository's
`pyproject.toml` (the same declared dependencies), not the repository, whose own files are no part of
any case (the program model would otherwise list and read them for each lint that asks about other
files, such as the callers of a function).
"""
from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

from torchlint.engine import FileResult, Settings, lint_source
from torchlint.rule import LintRule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_RESULTS: Dict[Tuple[Any, ...], FileResult] = {}
_FOLDER: List[str] = []


def case_folder() -> str:
    """The folder the cases are linted in (made at the first lint, removed when the run ends)."""
    if not _FOLDER:
        folder = tempfile.mkdtemp(prefix="torchlint-cases-")
        atexit.register(shutil.rmtree, folder, True)
        shutil.copy(os.path.join(ROOT, "pyproject.toml"), folder)
        _FOLDER.append(folder)
    return _FOLDER[0]


def lint_once(path: str, source: str, rules: Sequence[Type[LintRule]], options: Optional[Mapping[str, Any]] = None,
              **flags: Any) -> FileResult:
    """``lint_source(path, source, Settings(rules=rules, options=options, **flags))`` with ``path`` (a file
    name) in the cases' folder, linted once per run."""
    assert "project" not in flags, "a shared project would carry one lint's files into the next"
    options = dict(options or {})
    key = (path, source, tuple(rules), repr(sorted(options.items())), tuple(sorted(flags.items())))
    result = _RESULTS.get(key)
    if result is None:
        where = os.path.join(case_folder(), path)
        result = _RESULTS[key] = lint_source(where, source, Settings(rules=list(rules), options=options, **flags))
    return dataclasses.replace(result, diagnostics=list(result.diagnostics), errors=list(result.errors),
                               warnings=list(result.warnings), fixed_codes=dict(result.fixed_codes))
