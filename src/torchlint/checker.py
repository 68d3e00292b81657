"""``torchlint check``: configuration, discovery, cache, parallel linting, fixes, output, exit code."""
from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchlint.cache import DEFAULT_DIR, Cache, FileIdentity, digest, settings_key
from torchlint.atomic import is_temp_name, remove_stale_temps
from torchlint.config import Config, ConfigError, check_codes, ignored_for, select_rules
from torchlint.engine import Diagnostic, FileResult, FileTask, Settings
from torchlint.files import DEFAULT_EXCLUDE, MAX_BYTES, SourceError, decode, discover, matches_any, read_regular
from torchlint.fixes import write_atomic
from torchlint.notebook import cell_diffs, is_notebook
from torchlint.workers import lint_file, lint_files, lint_text
from torchlint import report
from torchlint.projects import ConfigResolver, fixed_config, group_by_config


@dataclass
class CheckOptions:
    paths: List[str]
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    select: Optional[List[str]] = None
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    exclude: Optional[List[str]] = None
    extend_exclude: List[str] = field(default_factory=list)
    force_exclude: Optional[bool] = None
    respect_gitignore: Optional[bool] = None
    output_format: str = "text"
    statistics: bool = False
    exit_zero: bool = False
    config_path: Optional[str] = None
    isolated: bool = False
    jobs: int = 1
    use_cache: bool = True
    cache_dir: Optional[str] = None
    stdin_filename: Optional[str] = None
    quiet: bool = False
    noqa: bool = True


def _err(message: str) -> None:
    sys.stderr.write(f"torchlint: {report.escape(message)}\n")


def run_check(opts: CheckOptions) -> int:
    from torchlint.rules import all_rules

    rules = all_rules()
    use_stdin = opts.paths == ["-"]
    if use_stdin:
        start = os.path.dirname(os.path.abspath(opts.stdin_filename)) if opts.stdin_filename else os.getcwd()
    else:
        first = opts.paths[0]
        start = first if os.path.isdir(first) else (os.path.dirname(os.path.abspath(first)) or ".")
    try:
        resolver = ConfigResolver(rules, fixed_config(opts.isolated, opts.config_path, start, rules))
        cfg = resolver.for_dir(start)
        for name, codes in (("--select", opts.select or []), ("--extend-select", opts.extend_select), ("--ignore", opts.ignore)):
            check_codes(codes, rules, name)
    except ConfigError as exc:
        _err(f"error: {exc}")
        return 2
    fixing = opts.fix or opts.diff
    rule_map = {r.CODE: r for r in rules}

    if use_stdin:
        exclude, force_exclude, _ = _discovery_options(opts, cfg)
        return _check_stdin(opts, cfg, _settings(opts, cfg, rules), exclude, force_exclude, rule_map)

    # discovery: each path argument with its own configuration's excludes
    files: List[str] = []
    status = 0
    try:
        for p in opts.paths:
            pcfg = resolver.for_path(p) if os.path.lexists(p) else cfg
            exclude, force_exclude, respect_gitignore = _discovery_options(opts, pcfg)
            found = discover([p], pcfg.root, exclude, force_exclude, respect_gitignore)
            files.extend(found.files)
            for missing in found.missing:
                _err(f"error: {missing}: no such file or directory")
                status = 2
            for problem in found.unreadable:
                _err(f"error: {problem}")
                status = 2
            remove_stale_temps(found.temps)
        files = sorted({os.path.abspath(f): f for f in reversed(files)}.values())
        if not files and status == 0:
            _err(f"warning: No Python files found under {', '.join(opts.paths)}")
        remove_stale_temps(_temps_beside([p for p in opts.paths if os.path.isfile(p)]))
        groups = group_by_config(files, resolver)
    except ConfigError as exc:
        _err(f"error: {exc}")
        return 2

    tasks: List[FileTask] = []
    results: Dict[str, FileResult] = {}
    #: per fixed file: the diff to show (--diff) or the error of a write that failed (--fix); the texts
    #: themselves are written or diffed as each result arrives and released, so memory does not grow
    #: with the number of fixed files
    diffs: Dict[str, str] = {}
    write_errors: Dict[str, str] = {}
    fixed = 0

    def settle(res: FileResult, task: FileTask, settings: Settings, max_bytes: int) -> FileResult:
        nonlocal fixed
        if res.fixed_source is None:
            return res
        if opts.diff:
            diffs[res.path] = _file_diff(res.path, res.original_source or "", res.fixed_source)
            fixed += res.fixed_count
        else:
            encoding, mtime, size = res.source_meta  # type: ignore[misc]
            try:
                write_atomic(res.path, res.fixed_source, encoding, mtime, size)
                fixed += res.fixed_count
            except (OSError, UnicodeEncodeError) as exc:
                write_errors[res.path] = f"{res.path}: fixes not written: {exc}"
                # the file is unchanged: show what was found in it, fixes not applied
                again = lint_file(FileTask(task.path, task.ignore), _no_fix(settings), max_bytes)
                res.diagnostics = again.diagnostics
        res.fixed_source = res.original_source = None
        return res

    for gcfg, gfiles in groups.values():
        settings = _settings(opts, gcfg, rules)
        max_bytes = gcfg.max_file_size or MAX_BYTES
        gtasks = [FileTask(p, tuple(ignored_for(p, gcfg.root, gcfg.per_file_ignores))) for p in gfiles]
        tasks.extend(gtasks)
        by_path = {t.path: t for t in gtasks}
        _lint_group(opts, gcfg, gtasks, settings, max_bytes, fixing, results,
                    lambda res, s=settings, m=max_bytes: settle(res, by_path[res.path], s, m))
    tasks.sort(key=lambda t: t.path)

    diagnostics: List[Diagnostic] = []
    for t in tasks:
        res = results[t.path]
        for w in res.warnings:
            _err(f"warning: {w}")
        for e in res.errors:
            _err(f"error: {e}")
            status = 2
        diagnostics.extend(res.diagnostics)
        if t.path in diffs:
            sys.stdout.write(diffs[t.path])
        if t.path in write_errors:
            _err(f"error: {write_errors[t.path]}")
            status = 2
    diff_changes = bool(diffs)

    diagnostics.sort(key=Diagnostic.sort_key)
    _emit(opts, diagnostics, fixed, rule_map, nothing_checked=not tasks, failed=status == 2)
    if status == 2:
        return 2
    if opts.diff:
        return 1 if diff_changes else (0 if not diagnostics or opts.exit_zero else 1)
    if diagnostics and not opts.exit_zero:
        return 1
    return 0


def _discovery_options(opts: CheckOptions, cfg: Config) -> Tuple[List[str], bool, bool]:
    exclude = list(opts.exclude if opts.exclude is not None else (cfg.exclude if cfg.exclude is not None else DEFAULT_EXCLUDE))
    exclude += cfg.extend_exclude + opts.extend_exclude
    force_exclude = opts.force_exclude if opts.force_exclude is not None else cfg.force_exclude
    respect_gitignore = opts.respect_gitignore if opts.respect_gitignore is not None else cfg.respect_gitignore
    return exclude, force_exclude, respect_gitignore


def _settings(opts: CheckOptions, cfg: Config, rules) -> Settings:
    enabled = select_rules(
        rules, (cfg.select, cfg.extend_select, cfg.ignore), (opts.select, opts.extend_select, opts.ignore)
    )
    return Settings(
        rules=enabled,
        options=dict(cfg.options),
        noqa=opts.noqa,
        fix=opts.fix or opts.diff,
        unsafe_fixes=opts.unsafe_fixes,
        want_edits=opts.output_format in ("json", "sarif"),
    )


def _temps_beside(files: Sequence[str]) -> List[str]:
    """Temporary files of ours in the folders of ``files`` (a killed write leaves one beside its file)."""
    out: List[str] = []
    for folder in sorted({os.path.dirname(os.path.abspath(f)) for f in files}):
        try:
            with os.scandir(folder) as it:
                out.extend(e.path for e in it if is_temp_name(e.name))
        except OSError:
            continue
    return out


def _lint_group(opts: CheckOptions, cfg: Config, tasks: List[FileTask], settings: Settings, max_bytes: int,
                fixing: bool, results: Dict[str, FileResult],
                settle: Callable[[FileResult], FileResult] = lambda res: res) -> None:
    """Lint the files that share one configuration, through the cache when it may be used; ``settle``
    handles each fresh result as it arrives (writes its fixes) before it is kept."""
    cache: Optional[Cache] = None
    digests: Dict[str, Tuple[str, FileIdentity]] = {}
    todo = tasks
    if opts.use_cache and not fixing:
        enabled = settings.rules
        key = settings_key(
            [
                [r.CODE for r in enabled],
                sorted(settings.options.items()),
                opts.noqa,
                settings.want_edits,
                cfg.per_file_ignores,
                max_bytes,
            ]
        )
        cache = Cache(opts.cache_dir or cfg.cache_dir or os.path.join(cfg.root, DEFAULT_DIR), key, [r.CODE for r in enabled])
        todo = []
        for t in tasks:
            pre = read_regular(t.path, max_bytes) if cache.usable else None
            if pre is None:  # not a regular file (a FIFO must not be opened for reading), or unreadable
                todo.append(t)
                continue
            data, ident = pre
            d = digest(data)
            digests[t.path] = (d, ident)
            hit = cache.get(t.path, d, ident, data.count(b"\n") + 1)
            if hit is None:
                todo.append(t)
            else:
                results[t.path] = FileResult(t.path, hit)

    for res in lint_files(todo, settings, opts.jobs, max_bytes, cfg.file_timeout):
        results[res.path] = settle(res)
        if cache is not None and not res.errors and res.cacheable and res.path in digests:
            cache.put(res.path, *digests[res.path], res.diagnostics, res.dependencies)
    if cache is not None:
        cache.save()


def _no_fix(settings: Settings) -> Settings:
    return replace(settings, fix=False)


def _unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=path, tofile=path
    )
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _file_diff(path: str, before: str, after: str) -> str:
    return cell_diffs(path, before, after) if is_notebook(path) else _unified_diff(path, before, after)


def _emit(opts: CheckOptions, diagnostics: Sequence[Diagnostic], fixed: int, rule_map, stream=None,
          nothing_checked: bool = False, failed: bool = False) -> None:
    out = stream or sys.stdout
    fmt = opts.output_format
    if opts.statistics:
        out.write(report.format_statistics(diagnostics, rule_map, opts.unsafe_fixes, as_json=fmt == "json"))
        return
    if fmt == "json":
        out.write(report.format_json(diagnostics, rule_map))
    elif fmt == "sarif":
        out.write(report.format_sarif(diagnostics, rule_map))
    elif fmt == "github":
        out.write(report.format_github(diagnostics))
    else:
        if opts.diff:
            return
        out.write(report.format_text(diagnostics, opts.unsafe_fixes))
        if not opts.quiet and not (nothing_checked and not diagnostics and not fixed):
            text = report.summary(diagnostics, fixed, opts.unsafe_fixes, opts.fix)
            if failed:  # errors were reported: the checks did not all pass
                text = text.replace("All checks passed!\n", "Errors occurred; see the messages above.\n")
            out.write(text)


def _check_stdin(opts: CheckOptions, cfg: Config, settings: Settings, exclude, force_exclude, rule_map) -> int:
    name = opts.stdin_filename or "-"
    data = sys.stdin.buffer.read()
    if opts.stdin_filename and force_exclude:
        try:
            rel = os.path.relpath(os.path.abspath(opts.stdin_filename), cfg.root)
        except ValueError:
            rel = opts.stdin_filename
        if matches_any(rel, exclude):
            if opts.fix:
                sys.stdout.buffer.write(data)
            return 0
    try:
        text, encoding = decode(data)
    except SourceError as exc:
        diags = [Diagnostic(name, 1, 1, "TL000", str(exc))]
        _emit(opts, diags, 0, rule_map, sys.stderr if opts.fix else None)
        if opts.fix:
            sys.stdout.buffer.write(data)
        return 1
    ignore = tuple(ignored_for(name, cfg.root, cfg.per_file_ignores)) if opts.stdin_filename else ()
    res = lint_text(FileTask(name, ignore), text, settings, cfg.file_timeout)
    status = 0
    for e in res.errors:
        _err(f"error: {e}")
        status = 2
    failed = status == 2
    if opts.fix:
        new = res.fixed_source if res.fixed_source is not None else text
        sys.stdout.buffer.write(new.encode(encoding))
        sys.stdout.flush()
        _emit(opts, res.diagnostics, res.fixed_count, rule_map, sys.stderr, failed=failed)
    elif opts.diff:
        if res.fixed_source is not None:
            sys.stdout.write(_file_diff(name, text, res.fixed_source))
            return status or 1
        return status or 0
    else:
        _emit(opts, res.diagnostics, 0, rule_map, failed=failed)
    if status:
        return status
    return 1 if res.diagnostics and not opts.exit_zero else 0
