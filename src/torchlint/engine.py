"""The one engine behind the CLI and the flake8 plugin.

read -> prefilter (skip rules, and the whole file, whose trigger words are absent) -> parse once ->
one traversal that drives every enabled rule -> positions for what was reported -> noqa filter ->
diagnostics (with their fixes).  Nothing here prints; callers decide how to show results.
"""
from __future__ import annotations

import ast
import re
import traceback
from itertools import accumulate
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.analysis.context import LEAVE_TYPES, FileContext
from torchlint.analysis.walk import children
from torchlint.fixes import Edit, apply_fixes, fix_edits
from torchlint.rule import SAFE, UNSAFE, LintRule, Report

PARSE_ERROR = "TL000"

_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_FILE_NOQA = re.compile(
    r"^\s*#\s*torchlint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class FixInfo:
    title: str
    applicability: str  # "safe" | "unsafe"
    edits: Tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int  # 1-based
    col: int  # 1-based
    code: str
    message: str
    end_line: int = 0
    end_col: int = 0
    fix: Optional[FixInfo] = None
    cell: int = 0  # notebooks: the cell (1-based among all cells); line/col are within it
    file_line: int = 0  # notebooks: the line of the .ipynb file that holds it (0: not a notebook)
    file_end_line: int = 0

    def sort_key(self) -> Tuple[str, int, int, int, str, str]:
        return (self.path, self.cell, self.line, self.col, self.code, self.message)


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # internal errors: the run must exit 2
    warnings: List[str] = field(default_factory=list)
    fixed_source: Optional[str] = None  # set when fixes changed the file
    fixed_count: int = 0
    skipped: bool = False  # prefilter: no rule could apply
    source_meta: Optional[Tuple[str, int, int]] = None  # (encoding, mtime_ns, size) as read
    original_source: Optional[str] = None  # kept when fixes changed the text, for --diff
    cacheable: bool = True  # False for a result the watchdog made (a timeout or a dead worker)


@dataclass
class Settings:
    rules: Sequence[Type[LintRule]]
    options: Mapping[str, Any] = field(default_factory=dict)
    noqa: bool = True
    fix: bool = False
    unsafe_fixes: bool = False
    want_edits: bool = False


# -- noqa ----------------------------------------------------------------------------------------
def noqa_codes(line_text: str) -> Optional[frozenset]:
    """None: no noqa on the line; empty set: bare noqa (everything); else the listed codes."""
    m = _NOQA.search(line_text)
    if m is None:
        return None
    codes = m.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in _CODE.findall(codes))


def is_suppressed(code: str, line_text: str) -> bool:
    codes = noqa_codes(line_text)
    if codes is None:
        return False
    return not codes or code in codes or any(code.startswith(c) for c in codes)


def file_noqa(source: str) -> Optional[frozenset]:
    """``# torchlint: noqa`` (whole file) or ``# torchlint: noqa: TL101`` (those codes)."""
    if "torchlint" not in source:
        return None
    m = _FILE_NOQA.search(source)
    if m is None:
        return None
    codes = m.group("codes")
    return frozenset(c.upper() for c in _CODE.findall(codes)) if codes else frozenset()


# -- the traversal -------------------------------------------------------------------------------
class _Dispatcher:
    def __init__(self, ctx: FileContext, rules: Sequence[LintRule], errors: List[str]) -> None:
        self.ctx = ctx
        self.errors = errors
        self.visit: Dict[type, List[Tuple[LintRule, Callable]]] = {}
        self.leave: Dict[type, List[Tuple[LintRule, Callable]]] = {}
        self.dead: set = set()
        for rule in rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_") or attr.startswith("leave_"):
                    kind, _, tname = attr.partition("_")
                    node_type = getattr(cst, tname, None)
                    if not isinstance(node_type, type):
                        continue
                    table = self.visit if kind == "visit" else self.leave
                    table.setdefault(node_type, []).append((rule, getattr(rule, attr)))

    def _call(self, fns: List[Tuple[LintRule, Callable]], node: cst.CSTNode) -> None:
        for rule, fn in fns:
            if rule in self.dead:
                continue
            try:
                fn(node)
            except Exception as exc:  # a crashing rule must not take the others down
                self.dead.add(rule)
                tb = traceback.extract_tb(exc.__traceback__)
                where = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
                self.errors.append(
                    f"{self.ctx.path}: rule {rule.CODE} failed: {type(exc).__name__}: {exc}{where}"
                )

    def run(self, module: cst.Module, hook: Optional[Callable[[cst.CSTNode], None]] = None) -> None:
        """One pre-order walk: context facts first, then the rules' visitors; leave events only for
        the node types something listens to."""
        ctx = self.ctx
        parents = ctx.parents
        enter, leave = ctx.enter, ctx.leave
        visit_map, leave_map, call = self.visit, self.leave, self._call
        needs_leave = LEAVE_TYPES | frozenset(leave_map)
        stack: List[Tuple[cst.CSTNode, bool]] = [(module, False)]
        pop, push = stack.pop, stack.append
        while stack:
            node, leaving = pop()
            t = type(node)
            if leaving:
                ctx.current = node
                fns = leave_map.get(t)
                if fns:
                    call(fns, node)
                leave(node, t)
                continue
            ctx.current = node
            enter(node, t)
            if hook is not None:
                hook(node)
            fns = visit_map.get(t)
            if fns:
                call(fns, node)
            if t in needs_leave:
                push((node, True))
            kids = children(node)
            for i in range(len(kids) - 1, -1, -1):
                kid = kids[i]
                parents[id(kid)] = node
                push((kid, False))


def analyze(ctx: FileContext, hook: Optional[Callable[[cst.CSTNode], None]] = None) -> None:
    """Walk ``ctx.module`` filling the context (parents, names, contents) with no rule attached;
    ``hook(node)`` runs at each node once the context has seen it (for tests and tools)."""
    _Dispatcher(ctx, [], []).run(ctx.module, hook)


def select_rules_for_source(source: str, rules: Sequence[Type[LintRule]]) -> List[Type[LintRule]]:
    """The rules whose trigger words occur in the source (a rule with no triggers always runs)."""
    return [r for r in rules if not r.TRIGGERS or any(t in source for t in r.TRIGGERS)]


def _parse_error(path: str, exc: Exception) -> Diagnostic:
    if isinstance(exc, cst.ParserSyntaxError):
        line = max(1, exc.raw_line)
        col = max(1, exc.raw_column + 1)
        msg = exc.message.strip().splitlines()[0] if exc.message else "invalid syntax"
        return Diagnostic(path, line, col, PARSE_ERROR, f"SyntaxError: {msg}")
    return Diagnostic(path, 1, 1, PARSE_ERROR, f"could not parse file: {type(exc).__name__}: {exc}")


@dataclass
class _Lint:
    module: Optional[cst.Module]
    reports: List[Tuple[Report, Tuple[int, int, int, int]]]
    parse_error: Optional[Diagnostic]
    ctx: Optional[FileContext]


_NOT_BRACKET = re.compile(r"[^()\[\]{}]+")
_DEPTH_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_UNARY_RUN = re.compile(r"(?:(?:[-+~]|\bnot\b)\s*){100}")


def _looks_deep(source: str) -> bool:
    """A cheap over-estimate of nesting: bracket depth (strings included) or a long unary chain."""
    brackets = _NOT_BRACKET.sub("", source)
    if len(brackets) > 200 and max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) > 100:
        return True
    return _UNARY_RUN.search(source) is not None


def _cpython_verdict(path: str, source: str) -> Tuple[Optional[Diagnostic], Optional[Diagnostic]]:
    """CPython's parser on the file: (fatal, syntax).  ``fatal``: too nested for libcst to be handed the
    file (its native parser can overflow its stack and kill the process; CPython refuses such code
    quickly and safely).  ``syntax``: CPython's own syntax error, reported when libcst fails too."""
    try:
        ast.parse(source)
    except (RecursionError, MemoryError):
        return Diagnostic(path, 1, 1, PARSE_ERROR, "too deeply nested to parse"), None
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "too many nested" in msg or "too complex" in msg:
            return Diagnostic(path, exc.lineno or 1, exc.offset or 1, PARSE_ERROR, f"too deeply nested to parse ({msg})"), None
        return None, Diagnostic(path, max(1, exc.lineno or 1), max(1, exc.offset or 1), PARSE_ERROR, f"SyntaxError: {msg}")
    except (ValueError, TypeError):
        pass
    return None, None


def _run_rules(path: str, source: str, rule_types: Sequence[Type[LintRule]], settings: Settings,
               errors: List[str]) -> _Lint:
    if _looks_deep(source):
        fatal, _ = _cpython_verdict(path, source)
        if fatal is not None:
            return _Lint(None, [], fatal, None)
    try:
        module = cst.parse_module(source)
    except Exception as exc:  # ParserSyntaxError, RecursionError on absurd nesting, ...
        fatal, syntax = _cpython_verdict(path, source)
        return _Lint(None, [], fatal or syntax or _parse_error(path, exc), None)
    ctx = FileContext(path, source, module)
    rules = [r(ctx, settings.options) for r in rule_types]
    dispatcher = _Dispatcher(ctx, rules, errors)
    try:
        dispatcher.run(module)
    except Exception as exc:  # an analysis failure: report it, keep what the rules found so far
        errors.append(f"{path}: analysis failed: {type(exc).__name__}: {exc}")
    reports = [rep for rule in rules if rule not in dispatcher.dead for rep in rule.reports]
    if not reports:
        return _Lint(module, [], None, ctx)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    located = []
    for rep in reports:
        pos = positions.get(rep.node)
        if pos is None:
            errors.append(f"{path}: rule {rep.code} reported a node outside the module")
            continue
        located.append((rep, (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)))
    return _Lint(module, located, None, ctx)


def lint_source(path: str, source: str, settings: Settings) -> FileResult:
    """Lint one file's text; apply fixes when ``settings.fix`` (the result holds the new text)."""
    result = FileResult(path)
    file_level = file_noqa(source) if settings.noqa else None
    rules = list(settings.rules)
    if file_level is not None:
        if not file_level:
            result.skipped = True
            return result
        rules = [r for r in rules if not any(r.CODE.startswith(c) for c in file_level)]
    rule_types = select_rules_for_source(source, rules)
    if not rule_types:
        result.skipped = True
        return result

    current = source
    fixed_total = 0
    for _round in range(10):
        if _round:  # a fix may have brought in the trigger words of another rule
            rule_types = select_rules_for_source(current, rules)
        errors: List[str] = []
        lint = _run_rules(path, current, rule_types, settings, errors)
        if lint.parse_error is not None:
            if current is not source:
                # a fix produced code that does not parse: keep the last good text, say so
                result.errors.append(f"{path}: fixes produced invalid code; fixes not applied")
                current = source
                fixed_total = 0
                continue
            result.diagnostics = [lint.parse_error]
            result.errors.extend(errors)
            return result
        lines = current.split("\n")
        kept: List[Tuple[Report, Tuple[int, int, int, int]]] = []
        for rep, pos in lint.reports:
            if settings.noqa and 0 < pos[0] <= len(lines) and is_suppressed(rep.code, lines[pos[0] - 1]):
                continue
            kept.append((rep, pos))
        if settings.fix and lint.module is not None and lint.ctx is not None:
            applicable = [
                rep.fix for rep, _ in kept
                if rep.fix is not None and (rep.fix.applicability == SAFE or settings.unsafe_fixes)
            ]
            if applicable:
                new_source, applied = apply_fixes(lint.module, lint.ctx, applicable)
                if applied and new_source != current:
                    current = new_source
                    fixed_total += applied
                    continue
        result.errors.extend(errors)
        result.diagnostics = [
            _diagnostic(path, rep, pos, lint.module, settings) for rep, pos in kept
        ]
        break
    else:
        result.errors.append(f"{path}: fixes did not converge after 10 rounds")
    result.diagnostics.sort(key=Diagnostic.sort_key)
    if current != source:
        result.fixed_source = current
        result.fixed_count = fixed_total
    return result


def _diagnostic(path: str, rep: Report, pos: Tuple[int, int, int, int], module: Optional[cst.Module],
                settings: Settings) -> Diagnostic:
    info = None
    if rep.fix is not None:
        edits: Tuple[Edit, ...] = ()
        if settings.want_edits and module is not None:
            edits = fix_edits(module, rep.fix)
        info = FixInfo(rep.fix.title, rep.fix.applicability, edits)
    return Diagnostic(path, pos[0], pos[1], rep.code, rep.message, pos[2], pos[3], info)


__all__ = [
    "Diagnostic",
    "Edit",
    "FixInfo",
    "FileResult",
    "Settings",
    "lint_source",
    "apply_fixes",
    "is_suppressed",
    "PARSE_ERROR",
    "SAFE",
    "UNSAFE",
]


# -- files ---------------------------------------------------------------------------------------
@dataclass
class FileTask:
    path: str
    ignore: Tuple[str, ...] = ()  # per-file-ignores for this path


def lint_file(task: FileTask, settings: Settings, max_bytes: int, source_text: Optional[str] = None) -> FileResult:
    """Read, lint (and fix, in memory) one file; I/O problems become a TL000 diagnostic or a warning."""
    from torchlint.files import SourceError, read_source

    result = FileResult(task.path)
    if source_text is None:
        try:
            src = read_source(task.path, max_bytes)
        except SourceError as exc:
            if exc.warning:
                result.warnings.append(f"{task.path}: {exc}")
            else:
                result.diagnostics.append(Diagnostic(task.path, 1, 1, PARSE_ERROR, str(exc)))
            return result
        text = src.text
        result.source_meta = (src.encoding, src.mtime_ns, src.size)
    else:
        text = source_text
    rules = settings.rules
    if task.ignore:
        rules = [r for r in rules if not any(r.CODE.startswith(c) for c in task.ignore)]
    sub = Settings(rules, settings.options, settings.noqa, settings.fix, settings.unsafe_fixes, settings.want_edits)
    from torchlint.notebook import is_notebook, lint_notebook

    try:
        inner = (lint_notebook if is_notebook(task.path) else lint_source)(task.path, text, sub)
    except Exception as exc:  # never lose the run to one file
        result.errors.append(f"{task.path}: internal error: {type(exc).__name__}: {exc}")
        return result
    inner.source_meta = result.source_meta
    inner.original_source = text if inner.fixed_source is not None else None
    return inner


def lint_files(tasks: Sequence[FileTask], settings: Settings, jobs: int, max_bytes: int,
               timeout: Optional[float] = None) -> Iterator[FileResult]:
    """Lint files in worker processes under a watchdog (:mod:`torchlint.workers`); results stream out
    as files finish, not in input order.  ``timeout``: the ``file-timeout`` budget in seconds."""
    from torchlint import workers

    return workers.lint_files(tasks, settings, jobs, max_bytes, timeout)
