"""flake8 adapter: the same engine, the same codes, lines and messages as the CLI.

flake8 keeps its own selection and ``# noqa`` handling.  The plugin asks flake8's own decision engine
(``--select``, ``--extend-select``, ``--ignore``, ``--extend-ignore`` and the defaults) which TL codes
can be reported at all, and runs only those rules; when none can be, it imports nothing and lints
nothing, so ``flake8 --select E,W,F`` costs the same with the plugin installed as without it.  Rules
that are off by default in the CLI go into flake8's default ignore list.  Only rule options and
``file-timeout`` are read from ``[tool.torchlint]``; its ``select``/``ignore`` keys are the CLI's and
flake8 does not read them.  Files are linted in one watchdog worker per flake8 process.
Columns are handed to flake8 0-based; it prints them 1-based, so the two tools show the same positions.

Nothing heavy (libcst, the rules, the configuration) is imported at module level or while flake8
registers options: this module is imported by every flake8 run once the package is installed.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type

from torchlint import __version__

#: Codes of the rules whose ``DEFAULT_ENABLED`` is False (kept equal by a test, so that registering
#: flake8's options does not need to import the rules).
OFF_BY_DEFAULT: Tuple[str, ...] = ("TL503", "TL517")


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


def decider(options: Any) -> Optional[Callable[[str], bool]]:
    """Whether flake8's decision engine would report a code under ``options`` (None: flake8 without that
    engine, so run everything and let flake8 filter)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
    except Exception:  # pragma: no cover - another flake8, or options without the usual attributes
        return None
    return lambda code: engine.decision_for(code) is Decision.Selected


def _probe_codes() -> List[str]:
    """Every code a TL selector could name, without importing the rules: the code of each rule module
    (``tlNNN_*.py`` in the rules package)."""
    import importlib.util

    spec = importlib.util.find_spec("torchlint.rules")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    codes = set()
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("tl") and name.endswith(".py") and name[2:5].isdigit():
                codes.add("TL" + name[2:5])
    return sorted(codes)


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
    _active = True  # some TL code can be reported
    _decide: Optional[Callable[[str], bool]] = None  # flake8's verdict on a code (None: every code)
    _timeout: Optional[float] = None
    _supervisor: Any = None  # one watchdog worker per flake8 process, started on first use

    def __init__(self, tree: Any, filename: str, lines: List[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        if OFF_BY_DEFAULT:
            parser.extend_default_ignore(list(OFF_BY_DEFAULT))

    @classmethod
    def parse_options(cls, options: Any) -> None:
        decide = cls._decide = decider(options)
        active = cls._active = decide is None or any(decide(code) for code in _probe_codes())
        cls._options = _load_options() if active else {}
        cls._timeout = _load_timeout() if active else None

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchLintPlugin"]]]:
        if not self._active:
            return
        decide = type(self)._decide  # a plain function: not through the instance, which would bind it
        from torchlint.engine import FileTask, Settings
        from torchlint.rules import all_rules
        from torchlint.workers import lint_text, text_supervisor

        rules = [r for r in all_rules() if decide is None or decide(r.CODE)]
        if not rules:
            return
        source = "".join(self.lines)
        if source.startswith("\ufeff"):
            source = source[1:]
        settings = Settings(rules=rules, options=self._options, noqa=False)
        try:
            if TorchLintPlugin._supervisor is None:
                TorchLintPlugin._supervisor = text_supervisor()
            result = lint_text(FileTask(self.filename), source, settings, self._timeout, TorchLintPlugin._supervisor)
        except Exception as exc:  # noqa: BLE001 - an error line, never a crashed flake8 run
            yield 1, 0, f"TL000 internal error: {type(exc).__name__}: {exc}", type(self)
            return
        for d in result.diagnostics:
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
        for error in result.errors:  # a rule or the analysis failed: say so instead of staying silent
            yield 1, 0, f"TL000 {error.replace(chr(10), ' ')}", type(self)
