"""The one engine behind the CLI, the language server and the flake8 plugin: lint one text.

prefilter (skip rules, and the whole text, whose trigger words are absent) -> parse once -> one
traversal (:mod:`torchlint.analysis.traversal`) that drives every enabled rule -> positions for what was
reported -> noqa filter -> diagnostics (with their fixes).  Reading files, notebooks and worker processes
are the driver's (:mod:`torchlint.workers`), above this module.  Nothing here prints; callers decide how
to show results.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.definitions import dependencies
from torchlint.analysis.parsing import MAX_BOOL_OPERANDS, MAX_CHAIN, MAX_OPERATORS, MAX_STATEMENT_NESTING, looks_deep
from torchlint.analysis.positions import positions_of
from torchlint.analysis.project import Project
from torchlint.analysis.traversal import Dispatcher, Headroom, analyze
from torchlint import carry
from torchlint.fixes import Edit, EditMaker, apply_fixes
from torchlint.precedence import apply_precedence
from torchlint.noqa_edit import comment_texts
from torchlint.rule import SAFE, UNSAFE, LintRule, Report

PARSE_ERROR = "TL000"

#: a ``# noqa`` comment, with the codes it lists in group ``codes`` (none: a bare noqa)
NOQA_COMMENT = re.compile(
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
    fixed_codes: Dict[str, int] = field(default_factory=dict)  # code -> findings the fixes made go
    skipped: bool = False  # prefilter: no rule could apply
    source_meta: Optional[Tuple[str, int, int]] = None  # (encoding, mtime_ns, size) as read
    original_source: Optional[str] = None  # kept when fixes changed the text, for --diff
    dependencies: Tuple[str, ...] = ()  # project files the program model read for this file
    cacheable: bool = True  # False for a result the watchdog made (a timeout or a dead worker)


@dataclass
class Settings:
    rules: Sequence[Type[LintRule]]
    options: Mapping[str, Any] = field(default_factory=dict)
    noqa: bool = True
    fix: bool = False
    unsafe_fixes: bool = False
    want_edits: bool = False
    parse_errors: bool = True  # report TL000 (off when the selection ignores it)
    fixable: Optional[frozenset] = None  # codes whose fixes may be applied (None: all)
    #: the project the files belong to (shared by every file linted with these settings; derive settings
    #: with ``dataclasses.replace`` to keep it)
    project: Project = field(default_factory=Project)


@dataclass
class FileTask:
    """A file to lint: its path and the rule codes ignored for it (per-file-ignores)."""

    path: str
    ignore: Tuple[str, ...] = ()  # per-file-ignores for this path


# -- noqa ----------------------------------------------------------------------------------------
def noqa_codes(line_text: str) -> Optional[frozenset]:
    """None: no noqa on the line; empty set: bare noqa (everything); else the listed codes."""
    m = NOQA_COMMENT.search(line_text)
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


def select_rules_for_source(source: str, rules: Sequence[Type[LintRule]], path: str = "",
                            project: Optional[Project] = None, consulted: Optional[List[str]] = None
                            ) -> List[Type[LintRule]]:
    """The rules whose trigger words occur in the source (a rule with no triggers always runs), and the
    rules that follow values across files whose ``IMPORT_TRIGGERS`` (the loss they are about) occur in
    a project module the source imports; those modules are added to ``consulted`` (what the result
    depends on)."""
    out = []
    deferred = []
    for r in rules:
        if not r.TRIGGERS or any(t in source for t in r.TRIGGERS):
            out.append(r)
        elif r.IMPORT_TRIGGERS and project is not None and path:
            deferred.append(r)
    if deferred:
        modules = project.imported_modules(path, source)
        if consulted is not None:
            consulted.extend(m for m in modules if m not in consulted)  # what the choice depends on
        texts = [project.module_text(m) for m in modules]
        for r in deferred:
            if any(text is not None and any(t in text for t in r.IMPORT_TRIGGERS) for text in texts):
                out.append(r)
    return [r for r in rules if r in out]


def parse_failure(path: str, source: str, exc: Exception) -> Diagnostic:
    """The TL000 diagnostic for ``source``, which libcst refused with ``exc``: CPython's verdict on it
    when it has one (too nested, too long, its own syntax error), else libcst's error."""
    fatal, syntax = cpython_verdict(path, source)
    return fatal or syntax or _parse_error(path, exc)


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
    positions: Optional[Mapping[cst.CSTNode, Any]] = None
    stand_in: bool = False  # analyzed a same-length stand-in of the text (no fixes)


def _too_long(tree: ast.AST) -> Optional[Tuple[int, str]]:
    """(line, reason) for a construct past the limits, by an iterative walk of CPython's tree."""
    stack: List[Tuple[ast.AST, int, int, bool]] = [(tree, 0, 0, False)]  # node, depths, parent is a BinOp
    while stack:
        node, edepth, sdepth, parent_binop = stack.pop()
        line = getattr(node, "lineno", 1)
        if isinstance(node, ast.BoolOp) and len(node.values) > MAX_BOOL_OPERANDS:
            return line, f"a chain of {len(node.values)} `and`/`or` operands (limit {MAX_BOOL_OPERANDS})"
        if isinstance(node, ast.BinOp) and not parent_binop:
            count = _operator_count(node)
            if count > MAX_OPERATORS:
                return line, f"an expression of {count} binary operators (limit {MAX_OPERATORS})"
        if edepth > MAX_CHAIN:
            return line, f"an expression nested {edepth} levels deep (limit {MAX_CHAIN})"
        if sdepth > MAX_STATEMENT_NESTING:
            return line, f"statements nested {sdepth} levels deep, `elif` included (limit {MAX_STATEMENT_NESTING})"
        is_expr = isinstance(node, ast.expr)
        is_stmt = isinstance(node, ast.stmt)
        is_binop = isinstance(node, ast.BinOp)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                stack.append((child, edepth + 1 if is_expr else 1, sdepth, is_binop))
            else:
                stack.append((child, 0, sdepth + 1 if is_stmt and isinstance(child, ast.stmt) else sdepth, False))
    return None


def _operator_count(root: ast.BinOp) -> int:
    """Binary operators in the expression ``root`` heads (operands that are binary operations too)."""
    count = 0
    pending: List[ast.AST] = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp):
            count += 1
            pending.append(node.left)
            pending.append(node.right)
    return count


def cpython_verdict(path: str, source: str) -> Tuple[Optional[Diagnostic], Optional[Diagnostic]]:
    """CPython's parser on the file: (fatal, syntax).  ``fatal``: too nested or too long for libcst to be
    handed the file (its native parser can overflow its stack and kill the process, or take minutes;
    CPython refuses such code quickly and safely, and its tree measures the rest).  ``syntax``: CPython's
    own syntax error, reported when libcst fails too."""
    try:
        tree = ast.parse(source)
    except (RecursionError, MemoryError):
        return Diagnostic(path, 1, 1, PARSE_ERROR, "too deeply nested to parse"), None
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "too many nested" in msg or "too complex" in msg:
            return Diagnostic(path, exc.lineno or 1, exc.offset or 1, PARSE_ERROR, f"too deeply nested to parse ({msg})"), None
        return None, Diagnostic(path, max(1, exc.lineno or 1), max(1, exc.offset or 1), PARSE_ERROR, f"SyntaxError: {msg}")
    except (ValueError, TypeError):
        return None, None
    found = _too_long(tree)
    if found is not None:
        line, reason = found
        return Diagnostic(path, max(1, line), 1, PARSE_ERROR, f"too long to parse safely: {reason}"), None
    return None, None


# -- adjacent string literals ----------------------------------------------------------------------
_MAX_ADJACENT_STRINGS = 1000  # libcst's parser gives up at about 4,000 adjacent literals


def _split_string_runs(source: str) -> Optional[str]:
    """The source with a ``+`` in place of one blank after every 1,000th literal of a run of adjacent
    string literals (same length, lines and columns), or None when there is no run to split.  Used only
    to analyze a file libcst refused; its fixes are not applied (the text is not the file's)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    offsets = [0]
    for ln in source.split("\n"):
        offsets.append(offsets[-1] + len(ln) + 1)
    chars = list(source)
    changed = False
    run = 0
    prev: Optional[tokenize.TokenInfo] = None
    for tok in tokens:
        if tok.type in (tokenize.NL, tokenize.COMMENT):
            continue
        if tok.type != tokenize.STRING:
            run, prev = 0, None
            continue
        run += 1
        if prev is not None and run > _MAX_ADJACENT_STRINGS:
            start = offsets[prev.end[0] - 1] + prev.end[1]
            end = offsets[tok.start[0] - 1] + tok.start[1]
            for i in range(start, end):
                if source[i] == "#":
                    break
                if source[i] in " \t":
                    chars[i] = "+"
                    changed = True
                    run = 1
                    break
        prev = tok
    return "".join(chars) if changed else None


def _run_rules(path: str, source: str, rule_types: Sequence[Type[LintRule]], settings: Settings,
               errors: List[str]) -> _Lint:
    if looks_deep(source):
        # a file that looks pathological and that CPython rejects is not handed to libcst either: its
        # parser can take minutes to fail on such text (a long run of unary operators with a `~not`)
        fatal, syntax = cpython_verdict(path, source)
        if fatal is not None or syntax is not None:
            return _Lint(None, [], fatal or syntax, None)
    stand_in = False
    try:
        module = settings.project.parse(path, source)
    except Exception as exc:  # ParserSyntaxError, RecursionError on absurd nesting, ...
        fatal, syntax = cpython_verdict(path, source)
        split = None if fatal or syntax else _split_string_runs(source)
        try:
            if split is None:
                raise exc
            module = cst.parse_module(split)
        except Exception:
            return _Lint(None, [], fatal or syntax or _parse_error(path, exc), None)
        source, stand_in = split, True
    ctx = FileContext(path, source, module, settings.project)
    rules = [r(ctx, settings.options) for r in rule_types]
    # the walkers of the family facts the rules read run first, once each, whichever rules need them
    binder_types = list(dict.fromkeys(b for r in rule_types for b in r.BINDERS))
    binders = [b(ctx) for b in binder_types]
    dispatcher = Dispatcher(ctx, [*binders, *rules], errors)
    try:
        dispatcher.run(module)
    except Exception as exc:  # an analysis failure: report it, keep what the rules found so far
        errors.append(f"{path}: analysis failed: {type(exc).__name__}: {exc}")
    failed = {type(b) for b in binders if b in dispatcher.dead}  # incomplete facts: their readers report nothing
    reports = apply_precedence(
        [rep for rule in rules if rule not in dispatcher.dead and not failed.intersection(rule.BINDERS)
         for rep in rule.reports],
        lambda rep, exc: errors.append(f"{path}: rule {rep.code} failed: {type(exc).__name__}: {exc}"),
    )
    if not reports:
        return _Lint(module, [], None, ctx)
    positions = positions_of(ctx)
    located = []
    for rep in reports:
        pos = positions.get(rep.node)
        if pos is None:
            errors.append(f"{path}: rule {rep.code} reported a node outside the module")
            continue
        if stand_in:
            rep = Report(rep.code, rep.node, rep.message, None)
        located.append((rep, (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)))
    return _Lint(module, located, None, ctx, positions, stand_in)


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
    consulted: List[str] = []
    rule_types = select_rules_for_source(source, rules, path, settings.project, consulted)
    if not rule_types:
        result.skipped = True
        result.dependencies = tuple(consulted)
        return result
    carrying = carry.eligible(path, settings)
    if carrying:
        found = carry.carried(path, source, settings, rule_types)
        if found is not None:
            return found

    current = source
    fixed_total = 0
    initial: Optional[Counter] = None  # the findings of the text as given, by code
    for _round in range(10):
        if _round:  # a fix may have brought in the trigger words of another rule
            rule_types = select_rules_for_source(current, rules, path, settings.project, consulted)
        errors: List[str] = []
        with Headroom():
            lint = _run_rules(path, current, rule_types, settings, errors)
        if lint.ctx is not None:
            result.dependencies = tuple(dict.fromkeys([*dependencies(lint.ctx), *consulted]))
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
        # each line's comment (from the token stream: "# noqa" inside a string is data, not a directive)
        noqa_at = comment_texts(current, lines) if settings.noqa else {}
        kept: List[Tuple[Report, Tuple[int, int, int, int]]] = []
        for rep, pos in lint.reports:
            if pos[0] in noqa_at and is_suppressed(rep.code, noqa_at[pos[0]]):
                continue
            kept.append((rep, pos))
        kept += _noqa_judgements(lint, kept, lines, noqa_at, rule_types, rules, settings, errors)
        if settings.fixable is not None:
            kept = [(rep, pos) if rep.fix is None or rep.code in settings.fixable
                    else (Report(rep.code, rep.node, rep.message, None), pos) for rep, pos in kept]
        if initial is None:
            initial = Counter(rep.code for rep, _ in kept)
        if settings.fix and lint.module is not None and lint.ctx is not None:
            applicable = [
                rep.fix for rep, _ in kept
                if rep.fix is not None and (rep.fix.applicability == SAFE or settings.unsafe_fixes)
            ]
            if applicable:
                with Headroom():
                    new_source, applied = apply_fixes(lint.module, lint.ctx, applicable, current)
                if applied and new_source != current:
                    current = new_source
                    fixed_total += applied
                    continue
        result.errors.extend(errors)
        with Headroom():
            maker = EditMaker(lint.module, lint.ctx, current, lint.positions) if settings.want_edits and lint.module is not None else None
            result.diagnostics = [_diagnostic(path, rep, pos, maker) for rep, pos in kept]
        break
    else:
        result.errors.append(f"{path}: fixes did not converge after 10 rounds")
    if current is source and lint.ctx is not None and not lint.stand_in:
        settings.project.remember(path, lint.ctx)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    if carrying:
        carry.keep(path, source, settings, rule_types, result)
    if current != source:
        result.fixed_source = current
        result.fixed_count = fixed_count(initial, result.diagnostics, fixed_total)
        result.fixed_codes = fixed_codes(initial, result.diagnostics)
    return result


# -- used noqa codes, for the rules that judge noqa comments (unused-noqa) ------------------------------
def used_noqa(reports: Sequence[Tuple[Report, Tuple[int, int, int, int]]],
              kept: Sequence[Tuple[Report, Tuple[int, int, int, int]]], noqa_at: Mapping[int, str]) -> Dict[int, set]:
    """Line -> the codes of its ``# noqa`` that suppressed one of ``reports`` (those not ``kept``); a
    bare noqa that suppressed something is recorded as ``""``.  ``noqa_at``: line -> its comment."""
    kept_ids = {id(rep) for rep, _ in kept}
    used: Dict[int, set] = {}
    for rep, pos in reports:
        if id(rep) in kept_ids or pos[0] not in noqa_at:
            continue
        codes = noqa_codes(noqa_at[pos[0]])
        if codes is None:
            continue
        mark = used.setdefault(pos[0], set())
        if codes:
            mark.update(c for c in codes if rep.code.startswith(c))
        else:
            mark.add("")
    return used


def _noqa_judgements(lint: _Lint, kept: Sequence[Tuple[Report, Tuple[int, int, int, int]]], lines: Sequence[str],
                     noqa_at: Mapping[int, str], rule_types: Sequence[Type[LintRule]], ran: Sequence[Type[LintRule]], settings: Settings,
                     errors: List[str]) -> List[Tuple[Report, Tuple[int, int, int, int]]]:
    """The reports of the rules that judge ``# noqa`` comments (a ``judge_noqa`` method: TL517), given
    which codes suppressed something; located, and subject to a noqa that lists their code.  Nothing is judged with
    noqa off, or when a rule failed (what it would have reported, and so suppressed, is unknown)."""
    judges = [r for r in rule_types if hasattr(r, "judge_noqa")]
    if not judges or not settings.noqa or errors or lint.module is None or lint.ctx is None:
        return []
    used = used_noqa(lint.reports, kept, noqa_at)
    if lint.positions is None:
        lint.positions = positions_of(lint.ctx)
    positions = lint.positions
    out: List[Tuple[Report, Tuple[int, int, int, int]]] = []
    for rule_type in judges:
        rule = rule_type(lint.ctx, settings.options)
        with Headroom():
            rule.judge_noqa(lines, used, frozenset(r.CODE for r in ran), positions)  # type: ignore[attr-defined]
        for rep in rule.reports:
            pos = positions.get(rep.node)
            if pos is None:
                continue
            where = (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)
            # a code list naming the judge suppresses it; a bare noqa does not (it is what is judged)
            if where[0] in noqa_at and noqa_codes(noqa_at[where[0]]) and is_suppressed(rep.code, noqa_at[where[0]]):
                continue
            if lint.stand_in:
                rep = Report(rep.code, rep.node, rep.message, None)
            out.append((rep, where))
    return out


def fixed_count(initial: Optional[Counter], remaining: Sequence[Diagnostic], applied: int) -> int:
    """How many findings the fixes made go: the findings of the text as given less those of the fixed
    text, per code (a finding a fix hid without fixing it stays; two findings one edit fixes count
    twice, the edit once).  ``applied`` (fixes applied) when the first findings are not known."""
    if initial is None:
        return applied
    after = Counter(d.code for d in remaining)
    return sum(max(0, n - after[code]) for code, n in initial.items())


def fixed_codes(initial: Optional[Counter], remaining: Sequence[Diagnostic]) -> Dict[str, int]:
    """:func:`fixed_count` by code (``--show-fixes``); empty when the first findings are not known."""
    if initial is None:
        return {}
    after = Counter(d.code for d in remaining)
    return {code: n - after[code] for code, n in sorted(initial.items()) if n > after[code]}


def _diagnostic(path: str, rep: Report, pos: Tuple[int, int, int, int], maker: Optional[EditMaker]) -> Diagnostic:
    info = None
    if rep.fix is not None:
        edits: Tuple[Edit, ...] = ()
        if maker is not None:  # only the top-level statements the fix touches are regenerated
            edits = maker.edits(rep.fix)
        info = FixInfo(rep.fix.title, rep.fix.applicability, edits)
    return Diagnostic(path, pos[0], pos[1], rep.code, rep.message, pos[2], pos[3], info)


__all__ = [
    "Diagnostic",
    "Edit",
    "FileTask",
    "FixInfo",
    "FileResult",
    "Settings",
    "lint_source",
    "parse_failure",
    "file_noqa",
    "noqa_codes",
    "NOQA_COMMENT",
    "analyze",
    "apply_fixes",
    "is_suppressed",
    "PARSE_ERROR",
    "SAFE",
    "UNSAFE",
    "cpython_verdict",
]
