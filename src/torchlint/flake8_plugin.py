"""flake8 adapter: the same engine, the same codes, lines and messages as the CLI.

flake8 keeps its own selection and ``# noqa`` handling, so the plugin runs every rule and reports
everything (rules that are off by default in the CLI go into flake8's default ignore list).  Only rule
options are read from ``[tool.torchlint]``.  Columns are handed to flake8 0-based; it prints them
1-based, so the two tools show the same positions.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional, Tuple, Type

from torchlint import __version__


def _load_options() -> Dict[str, Any]:
    from torchlint.config import ConfigError, find_config, parse_table, rule_options
    from torchlint.rules import all_rules

    try:
        found = find_config(os.getcwd())
    except ConfigError:
        return {}
    if found is None:
        return {}
    path, table = found
    options = rule_options(all_rules())
    picked = {k: v for k, v in table.items() if k in options}
    try:
        return parse_table(picked, path, all_rules()).options
    except ConfigError:
        return {}


def _load_timeout() -> Optional[float]:
    """``file-timeout`` from ``[tool.torchlint]`` (None: the default)."""
    from torchlint.config import ConfigError, find_config, parse_file_timeout

    try:
        found = find_config(os.getcwd())
        if found is None or "file-timeout" not in found[1]:
            return None
        return parse_file_timeout(found[1]["file-timeout"], found[0])
    except ConfigError:
        return None


class TorchLintPlugin:
    name = "torchlint"
    version = __version__
    _options: Dict[str, Any] = {}
    _timeout: Optional[float] = None
    _supervisor: Any = None  # one watchdog worker per flake8 process, started on first use

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
        cls._timeout = _load_timeout()

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchLintPlugin"]]]:
        from torchlint.engine import FileTask, Settings
        from torchlint.rules import all_rules
        from torchlint.workers import lint_text, text_supervisor

        source = "".join(self.lines)
        if source.startswith("\ufeff"):
            source = source[1:]
        settings = Settings(rules=all_rules(), options=self._options, noqa=False)
        if TorchLintPlugin._supervisor is None:
            TorchLintPlugin._supervisor = text_supervisor()
        result = lint_text(FileTask(self.filename), source, settings, self._timeout, TorchLintPlugin._supervisor)
        for d in result.diagnostics:
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
