"""flake8 adapter: the same engine, the same codes, lines and messages as the CLI.

flake8 keeps its own selection.  The plugin asks flake8's own decision engine (``--select``,
``--extend-select``, ``--ignore``, ``--extend-ignore`` and the defaults) which TL codes can be reported
at all, and runs, of those, the rules the CLI's default selection enables plus any rule off by default
whose full code flake8's ``--select``/``--extend-select`` names (:func:`torchlint.selection.for_flake8`):
``flake8 --select TL`` reports what ``torchlint`` reports.  When no TL code can be reported it imports
nothing and lints nothing, so ``flake8 --select E,W,F`` costs the same with the plugin installed as
without it.  Rules that are off by default also go into flake8's default ignore list.

``TL000`` (a file that could not be linted, a crashed rule) is never hidden by a selection: when some
rule runs, the plugin adds ``TL000`` to flake8's ``extend-select``, unless an ignore names it (``TL000``,
``TL00``, ``TL0``), as in the CLI.  flake8 runs no plugin on a file its own parser rejects (it reports
E999 and stops); the plugin wraps flake8's AST step so that such a file, or a binary one, is linted by
torchlint too and gets its TL000, as the CLI gives it.

``# noqa`` is applied twice, with the same result: by torchlint (case-insensitive codes, so
``# NOQA: tl201`` suppresses as in the CLI; ``# torchlint: noqa`` for a whole file) and by flake8
(``--disable-noqa`` turns both off).  Each file gets the settings its project gives it, found from the
file and never from the folder flake8 runs in (:mod:`torchlint.file_settings`, as for the CLI and the
language server): rule options with the declared torch version, ``file-timeout``, ``exclude`` and
``per-file-ignores`` from the nearest ``[tool.torchlint]``; its ``select``/``ignore`` keys are the CLI's
and flake8 keeps its own selection.  A configuration file the CLI rejects gives the file a ``TL000``.
Files are linted in one watchdog worker per flake8 process.
Columns are handed to flake8 0-based; it prints them 1-based, so the two tools show the same positions.

Nothing heavy (libcst, the rules, the configuration) is imported at module level or while flake8
registers options: this module is imported by every flake8 run once the package is installed.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator, List, Optional, Tuple, Type

from torchlint import __version__

#: Codes of the rules whose ``DEFAULT_ENABLED`` is False (kept equal by a test, so that registering
#: flake8's options does not need to import the rules).
OFF_BY_DEFAULT: Tuple[str, ...] = ("TL503", "TL517")


def _resolver() -> Any:
    """The settings of each file, found from the file (:mod:`torchlint.file_settings`), as the command
    line and the language server find them."""
    from torchlint.file_settings import SettingsResolver
    from torchlint.rules import all_rules

    return SettingsResolver(all_rules())


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


def _selectors(options: Any, *names: str) -> List[str]:
    out: List[str] = []
    for name in names:
        out.extend(str(v).strip().upper() for v in (getattr(options, name, None) or ()) if str(v).strip())
    return out


def _report_unparsable(checker: Any) -> None:
    """Lint a file flake8's parser rejected and report torchlint's TL000 for it (flake8 then reports
    its own E999 and stops)."""
    processor = getattr(checker, "processor", None)
    if processor is None or not TorchLintPlugin._active:
        return
    plugin = TorchLintPlugin(None, checker.filename, list(processor.lines))
    for line, col, text, _ in plugin.run():
        checker.report(None, line, col, text)


def _hook_unparsable() -> None:
    """Wrap flake8's AST step once per process (see the module docstring)."""
    try:
        from flake8.checker import FileChecker
    except ImportError:  # pragma: no cover - another flake8
        return
    original = getattr(FileChecker, "run_ast_checks", None)
    if original is None or getattr(original, "_torchlint", False):
        return

    def run_ast_checks(self: Any) -> None:
        try:
            original(self)
        except (SyntaxError, ValueError):
            _report_unparsable(self)
            raise

    run_ast_checks._torchlint = True  # type: ignore[attr-defined]
    FileChecker.run_ast_checks = run_ast_checks  # type: ignore[method-assign]


class TorchLintPlugin:
    name = "torchlint"
    version = __version__
    _settings: Any = None  # the settings resolver of the run (None: not configured yet)
    _active = True  # some TL code can be reported
    _decide: Optional[Callable[[str], bool]] = None  # flake8's verdict on a code (None: every code)
    _named: Tuple[str, ...] = ()  # flake8's --select and --extend-select entries
    _noqa = True  # False under flake8's --disable-noqa
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
        from torchlint.selection import PARSE_ERROR, names_parse_error

        decide = decider(options)
        active = cls._active = decide is None or any(decide(code) for code in _probe_codes())
        if active and decide is not None and not names_parse_error(_selectors(options, "ignore", "extend_ignore")):
            # TL000 is reported whatever the selection, as in the CLI (flake8 builds its style guide
            # from these options after the plugins have seen them)
            extend = list(getattr(options, "extend_select", None) or [])
            if PARSE_ERROR not in extend:
                options.extend_select = extend + [PARSE_ERROR]
            decide = decider(options)
        cls._decide = decide
        cls._named = tuple(_selectors(options, "select", "extend_select"))
        cls._noqa = not getattr(options, "disable_noqa", False)
        cls._settings = _resolver() if active else None
        if active:
            _hook_unparsable()

    def run(self) -> Iterator[Tuple[int, int, str, Type["TorchLintPlugin"]]]:
        if not self._active:
            return
        decide = type(self)._decide  # a plain function: not through the instance, which would bind it
        from torchlint.engine import FileTask
        from torchlint.file_settings import engine_settings
        from torchlint.rules import all_rules
        from torchlint.selection import PARSE_ERROR, for_flake8
        from torchlint.workers import lint_text, text_supervisor

        chosen = for_flake8(all_rules(), decide, self._named)
        if not chosen.rules:
            return
        source = "".join(self.lines)
        if source.startswith("\ufeff"):
            source = source[1:]
        if "\x00" in source:  # what the CLI says of a binary file (flake8 reads it as text)
            if chosen.parse_errors:
                yield 1, 0, f"{PARSE_ERROR} binary file (contains NUL bytes)", type(self)
            return
        from torchlint.config import ConfigError

        resolver = TorchLintPlugin._settings
        if resolver is None:
            resolver = TorchLintPlugin._settings = _resolver()
        try:
            found = resolver.for_file(self.filename)
        except ConfigError as exc:  # what the command line stops on
            yield 1, 0, f"TL000 configuration error: {exc}".replace("\n", " "), type(self)
            return
        if found.excluded:
            return
        settings = engine_settings(found.config, all_rules(), chosen=chosen, noqa=self._noqa)
        try:
            if TorchLintPlugin._supervisor is None:
                TorchLintPlugin._supervisor = text_supervisor()
            result = lint_text(FileTask(self.filename, found.ignore), source, settings, found.config.file_timeout,
                               TorchLintPlugin._supervisor)
        except Exception as exc:  # noqa: BLE001 - an error line, never a crashed flake8 run
            yield 1, 0, f"TL000 internal error: {type(exc).__name__}: {exc}", type(self)
            return
        for d in result.diagnostics:
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
        for error in result.errors:  # a rule or the analysis failed: say so instead of staying silent
            yield 1, 0, f"TL000 {error.replace(chr(10), ' ')}", type(self)
