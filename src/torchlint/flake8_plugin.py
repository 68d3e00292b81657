"""flake8 adapter: the same engine, the same codes, lines and messages as the CLI.

flake8 keeps its own selection and ``# noqa`` handling, so the plugin runs every rule and reports
everything (rules that are off by default in the CLI go into flake8's default ignore list).  Only rule
options are read from ``[tool.torchlint]``.  Columns are handed to flake8 0-based; it prints them
1-based, so the two tools show the same positions.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Tuple, Type

from torchlint import __version__


def _load_options() -> Dict[str, Any]:
    from torchlint.config import ConfigError, find_config, parse_table, rule_options
    from torchlint.rules import all_rules

    from torchlint.analysis.torch_version import resolve_auto

    try:
        found = find_config(os.getcwd())
    except ConfigError:
        return {}
    resolved: Dict[str, Any] = {}
    if found is not None:
        path, table = found
        options = rule_options(all_rules())
        picked = {k: v for k, v in table.items() if k in options}
        try:
            resolved = parse_table(picked, path, all_rules()).options
        except ConfigError:
            return {}
    resolve_auto(resolved, found[0] if found is not None else os.getcwd())
    return resolved


class TorchLintPlugin:
    name = "torchlint"
    version = __version__
    _options: Dict[str, Any] = {}

    def __init__(self, tree: Any, filename: str, lines: List[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        from torchlint.rules import all_rules

        off = [r.CODE for r in all_rules() if not r.DEFAULT_ENABLED]
        if off:
            parser.extend_default_ignore(off)

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls._options = _load_options()

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchLintPlugin"]]]:
        from torchlint.engine import Settings, lint_source
        from torchlint.rules import all_rules

        source = "".join(self.lines)
        if source.startswith("\ufeff"):
            source = source[1:]
        settings = Settings(rules=all_rules(), options=self._options, noqa=False)
        try:
            result = lint_source(self.filename, source, settings)
        except Exception as exc:  # noqa: BLE001 - an error line, never a crashed flake8 run
            yield 1, 0, f"TL000 internal error: {type(exc).__name__}: {exc}", type(self)
            return
        for d in result.diagnostics:
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
        for error in result.errors:  # a rule or the analysis failed: say so instead of staying silent
            yield 1, 0, f"TL000 {error.replace(chr(10), ' ')}", type(self)
