"""What the language server needs to know about one document, without any LSP machinery: its
configuration (found exactly as the CLI finds it), its findings with the edits of their fixes, the text
after every safe fix, and the ``# noqa`` edit that silences one finding.

Positions here are 0-based lines and code-point columns over lines split at ``\\r\\n``, ``\\r`` or
``\\n`` (the line breaks of the LSP); the server converts columns to the client's encoding.
"""
from __future__ import annotations

import io
import json
import os
import re
import threading
import tokenize
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, Type

from torchlint.analysis.project import Project
from torchlint.config import CONFIG_FILES, ConfigError
from torchlint.file_settings import SettingsResolver, engine_settings
from torchlint.fixes.apply import differing_span
from torchlint.engine import NOQA_COMMENT, PARSE_ERROR, Diagnostic, FileTask, Settings
from torchlint.noqa_edit import comments
from torchlint.files import MAX_BYTES
from torchlint.reading import too_large
from torchlint.rule import SAFE, LintRule
from torchlint.workers import lint_file, lint_text

#: files whose edits change how documents are linted: configuration, and the dependency files the
#: project's declared torch version and runtime dependency are read from
CONFIG_NAMES = CONFIG_FILES + ("requirements.txt", "setup.cfg", "setup.py", "environment.yml")
NOTEBOOK_SUFFIX = ".ipynb"
_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """The document's lines as the LSP counts them (without their line breaks)."""
    return _BREAK.split(text)


@dataclass(frozen=True)
class UserSettings:
    """Settings that come from the editor (``initializationOptions`` / ``workspace/didChangeConfiguration``
    under the ``torchlint`` key), not from the project's configuration file."""

    unsafe_fixes: bool = False  # mark unsafe fixes applicable: `[*]` on them and part of fix-all

    @classmethod
    def from_client(cls, value: Any, current: Optional["UserSettings"] = None) -> "UserSettings":
        base = current or cls()
        if not isinstance(value, Mapping):
            return base
        inner = value.get("torchlint", value)
        if not isinstance(inner, Mapping):
            return base
        unsafe = inner.get("unsafeFixes", base.unsafe_fixes)
        return replace(base, unsafe_fixes=bool(unsafe) if isinstance(unsafe, bool) else base.unsafe_fixes)


@dataclass
class DocConfig:
    """How one path is linted: what ``torchlint check --stdin-filename PATH --force-exclude`` would use."""

    settings: Optional[Settings] = None  # None: nothing to lint (excluded, or a configuration error)
    ignore: Tuple[str, ...] = ()
    max_bytes: int = MAX_BYTES
    excluded: bool = False
    error: Optional[str] = None
    config_path: Optional[str] = None
    timeout: Optional[float] = None  # ``file-timeout`` (None: the default)
    docs_url: Optional[str] = None  # ``docs-url``: where the project publishes the rule pages


class ConfigStore:
    """Configurations by folder, read once and kept until :meth:`clear` (a config file changed), and the
    workspace's one :class:`Project`, carried in the settings of every document."""

    def __init__(self, rules: Sequence[Type[LintRule]], project: Optional[Project] = None) -> None:
        self.rules = list(rules)
        self.project = project if project is not None else Project()
        self._resolver = SettingsResolver(self.rules, project=self.project)
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._resolver = SettingsResolver(self.rules, project=self.project)
            self.project.refresh()

    def resolve(self, path: Optional[str], fallback_root: str) -> DocConfig:
        """The configuration for a document at ``path`` (None: not a file on disk, e.g. an unsaved
        buffer); ``fallback_root`` is where to look then.  The settings of a file on disk are those the
        command line and flake8 give it (:mod:`torchlint.file_settings`)."""
        with self._lock:
            resolver = self._resolver
        excluded = False
        ignore: Tuple[str, ...] = ()
        try:
            if path:
                found = resolver.for_file(path)
                cfg, excluded, ignore = found.config, found.excluded, found.ignore
            else:
                cfg = resolver.for_dir(fallback_root)
        except ConfigError as exc:
            return DocConfig(error=str(exc))
        settings = engine_settings(cfg, self.rules, noqa=True, fix=False, want_edits=False, project=self.project)
        return DocConfig(
            settings=None if excluded else settings,
            ignore=ignore,
            max_bytes=cfg.max_file_size or MAX_BYTES,
            excluded=excluded,
            config_path=cfg.path,
            timeout=cfg.file_timeout,
            docs_url=cfg.docs_url,
        )


@dataclass(frozen=True)
class Cell:
    """One cell of a notebook open in the editor: its document's uri, whether it is Python code, its text."""

    uri: str
    code: bool
    text: str


@dataclass
class Analysis:
    """The findings for one version of one document (or notebook: then ``text`` is the notebook file
    made of ``cells`` and each finding's ``cell`` says which one, 1-based)."""

    text: str
    version: Optional[int]
    config: DocConfig
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # internal errors, for the log
    cells: Optional[List[Cell]] = None
    #: the project files (absolute paths) the program model read: editing one of them re-analyses this
    dependencies: FrozenSet[str] = frozenset()
    #: why the document was not analysed (too large), shown in the editor instead of an empty list
    notice: Optional[str] = None
    #: seconds the analysis took (wall clock, where it ran): the server's debounce follows it
    seconds: float = 0.0


def notebook_text(cells: Sequence[Cell]) -> str:
    """A notebook file (nbformat 4) holding the editor's cells in order: code cells as code, the others
    as markdown, so that a finding's cell number is the cell's position + 1."""
    doc = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c.text}
            if c.code
            else {"cell_type": "markdown", "metadata": {}, "source": c.text}
            for c in cells
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def notebook_cells(text: str, count: int) -> List[Optional[str]]:
    """The sources of the first ``count`` cells of a notebook file (None for a cell that is not code)."""
    try:
        data = json.loads(text)
        cells = data["cells"]
    except (ValueError, KeyError, TypeError):
        return [None] * count
    out: List[Optional[str]] = []
    for cell in list(cells)[:count]:
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if isinstance(source, list):
            source = "".join(source)
        out.append(source if isinstance(cell, dict) and cell.get("cell_type") == "code" else None)
    return out + [None] * (count - len(out))


def _lint(name: str, text: str, config: DocConfig, settings: Settings, supervisor: Any,
          overlay: Optional[Dict[str, str]] = None) -> Any:
    """``workers.lint_file`` on the text; under the watchdog when a ``workers.Supervisor`` is given (the
    server keeps one: a file that hangs or kills its worker becomes one TL000, the server lives on).
    ``overlay``: the editor's texts of other project files, read instead of the files on disk."""
    task = FileTask(name, config.ignore)
    if supervisor is None:
        return lint_file(task, replace(settings, project=settings.project.with_overlay(overlay)), config.max_bytes,
                         source_text=text)
    return lint_text(task, text, settings, editor_timeout(config.timeout, len(text.encode("utf-8", "surrogatepass"))),
                     supervisor, overlay)


#: an editor waits for at most this many times ``file-timeout`` for a document, whatever its size (the
#: command line gives a large file proportionally more)
EDITOR_BUDGET_FACTOR = 2.0


def editor_timeout(timeout: Optional[float], size: int) -> float:
    """The ``file-timeout`` to lint a document of ``size`` bytes with, so that its budget (scaled up with
    the size by the watchdog) stays within :data:`EDITOR_BUDGET_FACTOR` times ``file-timeout``: a
    6 MB buffer gets a TL000 notice in seconds instead of minutes of silence."""
    from torchlint.workers import DEFAULT_FILE_TIMEOUT, budget

    limit = DEFAULT_FILE_TIMEOUT if timeout is None else timeout
    scale = budget(1.0, size)  # how many times file-timeout the watchdog gives this size
    return limit if scale <= EDITOR_BUDGET_FACTOR else limit * EDITOR_BUDGET_FACTOR / scale


def analyse(name: str, text: str, version: Optional[int], config: DocConfig, with_edits: bool = False,
            supervisor: Any = None, overlay: Optional[Dict[str, str]] = None) -> Analysis:
    """Lint ``text`` as the CLI would lint the file ``name`` (never raises).  ``with_edits``: also the text
    edits of each fix (one tree transform per fix: several times the cost of the analysis, so only for
    code actions).  ``overlay``: the editor's texts of other project files (absolute path -> text)."""
    out = Analysis(text, version, config)
    if config.settings is None:
        return out
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > config.max_bytes:
        out.notice = f"torchlint: {too_large(size, config.max_bytes)}; not checked (`max-file-size`)"
        return out
    settings = replace(config.settings, want_edits=with_edits)
    res = _lint(name, text, config, settings, supervisor, overlay)
    out.diagnostics = list(res.diagnostics)
    out.errors = list(res.errors)
    out.dependencies = frozenset(os.path.abspath(p) for p in res.dependencies)
    return out


def fix_all(name: str, text: str, config: DocConfig, unsafe: bool, supervisor: Any = None,
            overlay: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The text after every applicable fix (safe ones, and unsafe ones when ``unsafe``); None: no change."""
    if config.settings is None:
        return None
    s = config.settings
    settings = replace(s, fix=True, unsafe_fixes=unsafe, want_edits=False)
    res = _lint(name, text, config, settings, supervisor, overlay)
    if res.fixed_source is None or res.fixed_source == text or res.errors:
        return None
    return res.fixed_source


def is_applicable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and (d.fix.applicability == SAFE or unsafe)


# -- text edits ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TextEdit:
    """Replace [start, end) by ``new_text``; positions are (0-based line, code-point column)."""

    start: Tuple[int, int]
    end: Tuple[int, int]
    new_text: str


def _offset_to_position(text: str, offset: int) -> Tuple[int, int]:
    line = 0
    last = 0
    for m in _BREAK.finditer(text, 0, offset):
        if m.end() > offset:  # the middle of a \r\n pair
            break
        line += 1
        last = m.end()
    return line, offset - last


def minimal_edit(before: str, after: str) -> Optional[TextEdit]:
    """One edit turning ``before`` into ``after``: the smallest span that differs (None: equal)."""
    span = differing_span(before, after)
    if span is None:
        return None
    start, end_b, end_a = span
    # never split a \r\n pair
    if start > 0 and before[start - 1] == "\r" and start < len(before) and before[start] == "\n":
        start -= 1
    if 0 < end_b < len(before) and before[end_b - 1] == "\r" and before[end_b] == "\n":
        end_b += 1
        end_a += 1
    return TextEdit(_offset_to_position(before, start), _offset_to_position(before, end_b), after[start:end_a])


def fix_edit(text: str, d: Diagnostic) -> Optional[TextEdit]:
    """The finding's fix as an edit on the document (None: no fix)."""
    if d.fix is None or not d.fix.edits:
        return None
    after = apply_engine_edits(text, d.fix.edits)
    return minimal_edit(text, after) if after is not None else None


def apply_engine_edits(text: str, edits: Sequence[Any]) -> Optional[str]:
    """Apply the engine's 1-based edits (lines split at ``\\n``, columns in code points)."""
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)

    def offset(line: int, col: int) -> Optional[int]:
        if not 1 <= line <= len(starts):
            return None
        return starts[line - 1] + col - 1

    spans = []
    for e in edits:
        a, b = offset(e.line, e.col), offset(e.end_line, e.end_col)
        if a is None or b is None or b < a or b > len(text):
            return None
        spans.append((a, b, e.content))
    out = text
    for a, b, content in sorted(spans, reverse=True):
        out = out[:a] + content + out[b:]
    return out


def _line_ends_in_string(text: str, line0: int) -> bool:
    """True when line ``line0`` (0-based) ends inside a string or continues with a backslash, where a
    comment cannot go; also True when the text does not tokenize."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.ERRORTOKEN:
                return True
            if tok.start[0] - 1 > line0:
                break
            if tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_START", -1)) or tok.type == getattr(
                tokenize, "FSTRING_MIDDLE", -2
            ):
                if tok.start[0] - 1 <= line0 < tok.end[0] - 1:
                    return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return False


def noqa_edit(text: str, line0: int, code: str) -> Optional[TextEdit]:
    """The edit adding ``code`` to line ``line0``'s ``# noqa`` (or adding ``# noqa: CODE``); None when the
    line cannot take a comment or a bare ``# noqa`` already silences everything there."""
    lines = text.split("\n")
    if not 0 <= line0 < len(lines):
        return None
    raw = lines[line0]
    line = raw[:-1] if raw.endswith("\r") else raw
    if "\r" in line:  # a lone \r line break: positions would not match the engine's lines
        return None
    # the line's comment from the token stream: a "# noqa" inside a string is data, never edited
    found = comments(text) if "noqa" in line.lower() else {}
    col = (found or {}).get(line0 + 1, (None, ""))[0]
    m = NOQA_COMMENT.search(line, col) if col is not None and line[col:col + 1] == "#" else None
    if m is not None:
        if not m.group("codes"):
            return None
        end = m.end("codes")
        return TextEdit((line0, end), (line0, end), f", {code}")
    if line.rstrip().endswith("\\") or _line_ends_in_string(text, line0):
        return None
    body = line.rstrip()
    if not body.strip():
        return None
    return TextEdit((line0, len(body)), (line0, len(line)), f"  # noqa: {code}")


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """Apply non-overlapping edits (positions over :func:`split_lines`) to ``text`` (for tests and tools)."""
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def offset(pos: Tuple[int, int]) -> int:
        return starts[pos[0]] + pos[1]

    out = text
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[: offset(e.start)] + e.new_text + out[offset(e.end):]
    return out


# -- rule pages --------------------------------------------------------------------------------------------
def rule_page(rule: Type[LintRule]) -> str:
    """The rule's documentation page as markdown (what ``torchlint rule CODE`` prints)."""
    fix = {
        "safe": "Fix is available (safe).",
        "unsafe": "Fix is available (unsafe: may change behaviour beyond the bug).",
        "none": "No fix.",
    }[rule.fix_availability()]
    return f"# {rule.NAME} ({rule.CODE})\n\n{fix}\n\n{rule.documentation()}"


def diagnostic_range(d: Diagnostic, lines: Sequence[str]) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    """(start, end) of a finding, 0-based; a finding without an end covers the rest of its line."""
    start = (max(0, d.line - 1), max(0, d.col - 1))
    if d.end_line and (d.end_line, d.end_col) > (d.line, d.col):
        end = (d.end_line - 1, max(0, d.end_col - 1))
    else:
        row = start[0]
        width = len(lines[row]) if row < len(lines) else start[1]
        end = (row, max(width, start[1]))
    return start, end


__all__ = [
    "Analysis",
    "Cell",
    "NOTEBOOK_SUFFIX",
    "notebook_cells",
    "notebook_text",
    "ConfigStore",
    "DocConfig",
    "PARSE_ERROR",
    "TextEdit",
    "UserSettings",
    "analyse",
    "apply_edits",
    "diagnostic_range",
    "fix_all",
    "fix_edit",
    "is_applicable",
    "minimal_edit",
    "noqa_edit",
    "rule_page",
    "split_lines",
    "CONFIG_NAMES",
]
