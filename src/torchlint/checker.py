"""``torchlint check``: configuration, discovery, cache, parallel linting, fixes, output, exit code."""
from __future__ import annotations

import contextlib
import difflib
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from torchlint.analysis.project import Project
from torchlint.cache import DEFAULT_DIR, Cache, FileIdentity, digest, settings_key
from torchlint.atomic import FileChangedError, is_temp_dir_name, remove_stale_temp_dirs, write_error, write_new_atomic
from torchlint.config import (
    Config,
    ConfigError,
    check_codes,
    ignored_for,
    rule_options,
    with_overrides,
)
from torchlint.selection import keep
from torchlint.engine import (
    PARSE_ERROR,
    Diagnostic,
    FileResult,
    FileTask,
    Settings,
)
from torchlint.files import (
    DEFAULT_EXCLUDE,
    MAX_BYTES,
    SourceError,
    decode,
    discover,
    file_limit,
    matches_any,
    read_regular,
)
from torchlint.fixes import write_atomic
from torchlint.reading import size_text
from torchlint.notebook import cell_diffs, is_notebook
from torchlint.workers import lint_file, lint_files, lint_text
from torchlint import report
from torchlint.projects import ConfigResolver, fixed_config, group_by_config
from torchlint.file_settings import engine_settings


@dataclass
class CheckOptions:
    paths: List[str]
    fix: bool = False
    unsafe_fixes: Optional[bool] = False  # None: the configuration's `unsafe-fixes`
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
    output_file: Optional[str] = None
    fix_only: bool = False
    exit_non_zero_on_fix: bool = False
    show_settings: bool = False
    docs_url: Optional[str] = None  # from the configuration (`docs-url`)
    show_files: bool = False
    add_noqa: bool = False
    show_fixes: bool = False  # list the fixes applied (--fix) or available, per file and code
    color: str = "auto"  # "auto" (a terminal, unless NO_COLOR / FORCE_COLOR say otherwise), "always", "never"
    #: ``KEY = VALUE`` overrides from the command line (``--config``, ``--per-file-ignores``,
    #: ``--target-torch``): they win over every configuration file
    overrides: Dict[str, Any] = field(default_factory=dict)


def _err(message: str) -> None:
    sys.stderr.write(f"torchlint: {report.escape(message)}\n")


class _Overridden(ConfigResolver):
    """Each file's configuration with the command line's ``KEY = VALUE`` overrides applied."""

    def __init__(self, base: ConfigResolver, overrides: Dict[str, Any]) -> None:
        super().__init__(base.rules, base.fixed)
        self.base = base
        self.overrides = overrides
        self._merged: Dict[int, Config] = {}

    def for_dir(self, folder: str) -> Config:
        cfg = self.base.for_dir(folder)
        merged = self._merged.get(id(cfg))
        if merged is None:
            merged = self._merged[id(cfg)] = with_overrides(cfg, self.overrides, self.rules)
        return merged


def _own_excludes(found: List[str], given: str, given_cfg: Config, resolver: ConfigResolver) -> List[str]:
    """``found`` without the files that the excludes of their own configuration leave out, where that is
    another configuration than the one of the path ``given`` (a project below the folder linted): a file
    gets the same settings whatever folder the command names."""
    if resolver.fixed is not None:
        return list(found)
    named = os.path.abspath(given)
    out: List[str] = []
    for f in found:
        if os.path.abspath(f) != named and resolver.for_path(f) is not given_cfg and resolver.for_file(f).excluded:
            continue
        out.append(f)
    return out


def run_check(opts: CheckOptions) -> int:
    """``torchlint check``; with ``--output-file``, what it prints on stdout goes to that file: kept in
    memory and written at the end through a temporary file and a rename (the file is never emptied
    before the run, and never written half).  The output file must not be a file being linted (checked
    after discovery, by name and by inode); no folder is created for it."""
    if not opts.output_file:
        return _run_check(opts)
    problem = _output_problem(opts.output_file)
    if problem is not None:
        _err(f"error: cannot write {opts.output_file}: {problem}")
        return 2
    import io

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
    with contextlib.redirect_stdout(out):
        status = _run_check(opts)
    if status == _OUTPUT_IS_INPUT:
        return 2
    out.flush()
    try:
        write_new_atomic(opts.output_file, raw.getvalue())
    except OSError as exc:
        _err(f"error: cannot write {opts.output_file}: {write_error(exc)}")
        return 2
    return status


#: what :func:`_run_check` returns when the output file is one of the files linted (nothing is written)
_OUTPUT_IS_INPUT = -2


def _output_problem(path: str) -> Optional[str]:
    """Why ``--output-file PATH`` cannot be written, before anything runs: its folder does not exist (no
    folder is created), or it is a folder."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return "it is a folder"
    if not os.path.isdir(folder):
        return f"folder {folder} does not exist (no folder is created for the output)"
    return None


def _output_among(path: str, files: Sequence[str]) -> Optional[str]:
    """The file among ``files`` that ``path`` names: the same inode, whatever the name (a path that does
    not exist yet is no file being linted)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident = (st.st_dev, st.st_ino)
    for f in files:
        try:
            fst = os.stat(f)
        except OSError:
            continue
        if (fst.st_dev, fst.st_ino) == ident:
            return f
    return None


@dataclass
class _Run:
    """What the configure phase decided for one ``torchlint check`` run."""

    rules: List[Any]
    resolver: ConfigResolver
    cfg: Config  # the configuration of the first path (``--show-settings``, stdin)
    start: str  # the folder of the first path
    rule_map: Dict[str, Any]
    use_stdin: bool


@dataclass
class _Linted:
    """What the lint and fix phases produced, by path."""

    tasks: List[FileTask] = field(default_factory=list)
    results: Dict[str, FileResult] = field(default_factory=dict)
    #: per fixed file: the diff to show (--diff) or the error of a write that failed (--fix); the texts
    #: themselves are written or diffed as each result arrives and released, so memory does not grow
    #: with the number of fixed files
    diffs: Dict[str, str] = field(default_factory=dict)
    write_errors: Dict[str, str] = field(default_factory=dict)
    fixed: int = 0
    fixed_codes: Dict[str, Dict[str, int]] = field(default_factory=dict)  # path -> code -> findings fixed


def _run_check(opts: CheckOptions) -> int:
    """The phases of a run: configure, discover, lint (with fix and write, and a re-lint of a file whose
    fixes could not be written), report, exit code."""
    run = _configure(opts)
    if isinstance(run, int):
        return run
    if opts.show_settings:
        sys.stdout.write(show_settings(opts, run.cfg, run.rules, run.start))
        return 0
    if run.use_stdin:
        if opts.output_file and opts.stdin_filename and _output_among(opts.output_file, [opts.stdin_filename]):
            _err(f"error: the output file {opts.output_file} is the file being linted; nothing written")
            return _OUTPUT_IS_INPUT
        return _check_stdin(opts, run)
    found = _discover(opts, run)
    if isinstance(found, int):
        return found
    files, status, groups = found
    if opts.show_files:
        sys.stdout.write("".join(report.escape(f) + "\n" for f in files))
        return status
    if opts.output_file:
        same = _output_among(opts.output_file, files)
        if same is not None:
            _err(f"error: the output file {opts.output_file} is a file being linted ({same}); nothing written")
            return _OUTPUT_IS_INPUT
    linted = _lint(opts, run, groups)
    return _report_and_exit(opts, run, linted, status)


def _configure(opts: CheckOptions) -> Union[int, _Run]:
    """Configure: the rules, each file's settings resolver (``--config``, ``--isolated``, ``KEY = VALUE``
    overrides), the command line's selectors checked; an exit code when the configuration is bad."""
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
        if opts.overrides:
            resolver = _Overridden(resolver, opts.overrides)
        cfg = resolver.for_dir(start)
        for name, codes in (("--select", opts.select or []), ("--extend-select", opts.extend_select), ("--ignore", opts.ignore)):
            check_codes(codes, rules, name)
    except ConfigError as exc:
        _err(f"error: {exc}")
        return 2
    if opts.unsafe_fixes is None:  # not on the command line: the configuration's `unsafe-fixes`
        opts.unsafe_fixes = bool(cfg.unsafe_fixes)
    opts.docs_url = cfg.docs_url
    if opts.fix_only:
        opts.fix = True
    return _Run(rules, resolver, cfg, start, {r.CODE: r for r in rules}, use_stdin)


def _discover(opts: CheckOptions, run: _Run) -> Union[int, Tuple[List[str], int, Dict[int, Tuple[Config, list]]]]:
    """Discover: each path argument with its own configuration's excludes (matched from the root of the
    project found from the path); returns (files, status, files grouped by configuration), or an exit
    code when a configuration is bad."""
    resolver = run.resolver
    files: List[str] = []
    status = 0
    try:
        for p in opts.paths:
            exists = os.path.lexists(p)
            pcfg = resolver.for_path(p) if exists else run.cfg
            exclude, force_exclude, respect_gitignore = _discovery_options(opts, pcfg)
            found = discover([p], resolver.root_of(p, pcfg) if exists else pcfg.root, exclude, force_exclude,
                             respect_gitignore)
            files.extend(_own_excludes(found.files, p, pcfg, resolver))
            for missing in found.missing:
                _err(f"error: {missing}: no such file or directory")
                status = 2
            for problem in found.unreadable:
                _err(f"error: {problem}")
                status = 2
            for note in found.warnings:
                _err(f"warning: {note}")
            remove_stale_temp_dirs(found.temps)
        files = sorted({os.path.abspath(f): f for f in reversed(files)}.values())
        if not files and status == 0:
            _err(f"warning: No Python files found under {', '.join(opts.paths)}")
        remove_stale_temp_dirs(_temps_beside([p for p in opts.paths if os.path.isfile(p)]))
        groups = group_by_config(files, resolver)
    except ConfigError as exc:
        _err(f"error: {exc}")
        return 2
    return files, status, groups


def _lint(opts: CheckOptions, run: _Run, groups: Dict[int, Tuple[Config, list]]) -> _Linted:
    """Lint each group of files that share a configuration (through the cache when no fix is asked),
    fixing and writing each file as its result arrives."""
    linted = _Linted()
    cache_warnings: Dict[str, str] = {}
    for gcfg, gfiles in groups.values():
        settings = _settings(opts, gcfg, run.rules)
        max_bytes = gcfg.max_file_size or MAX_BYTES
        gtasks = [FileTask(p, run.resolver.for_file(p).ignore) for p in gfiles]
        linted.tasks.extend(gtasks)
        by_path = {t.path: t for t in gtasks}
        _lint_group(opts, gcfg, gtasks, settings, max_bytes, bool(opts.fix or opts.diff), linted.results,
                    lambda res, s=settings, m=max_bytes: _settle(opts, linted, res, by_path[res.path], s, m),
                    cache_warnings)
    for folder, why in cache_warnings.items():
        _err(f"warning: cache folder {folder} not used: {why}; caching is off")
    linted.tasks.sort(key=lambda t: t.path)
    return linted


def _settle(opts: CheckOptions, linted: _Linted, res: FileResult, task: FileTask, settings: Settings,
            max_bytes: int) -> FileResult:
    """Fix and write: the fixed text of one result diffed (``--diff``) or written in place; a file whose
    write failed is unchanged and re-linted without fixes, so that what is shown is what it holds."""
    if res.fixed_source is None:
        return res
    if opts.diff:
        linted.diffs[res.path] = _file_diff(res.path, res.original_source or "", res.fixed_source)
        _count_fixed(linted, res)
    else:
        encoding, mtime, size = res.source_meta  # type: ignore[misc]
        try:
            write_atomic(res.path, res.fixed_source, encoding, mtime, size)
            _count_fixed(linted, res)
        except FileChangedError as exc:
            if _already_written(res.path, res.fixed_source, encoding):
                # another name of the same file (a hard link) was fixed first, to this very text
                _count_fixed(linted, res)
            else:
                linted.write_errors[res.path] = f"{res.path}: fixes not written: {exc}"
                res.diagnostics = _relint(task, settings, max_bytes)
        except (OSError, UnicodeEncodeError) as exc:
            linted.write_errors[res.path] = f"{res.path}: fixes not written: {write_error(exc)}"
            res.diagnostics = _relint(task, settings, max_bytes)
    res.fixed_source = res.original_source = None
    return res


def _count_fixed(linted: _Linted, res: FileResult) -> None:
    linted.fixed += res.fixed_count
    if res.fixed_codes:
        linted.fixed_codes[res.path] = dict(res.fixed_codes)


def _relint(task: FileTask, settings: Settings, max_bytes: int) -> List[Diagnostic]:
    """Re-lint: the findings of a file as it is on disk, fixes not applied."""
    return lint_file(FileTask(task.path, task.ignore), _no_fix(settings), max_bytes).diagnostics


def _report_and_exit(opts: CheckOptions, run: _Run, linted: _Linted, status: int) -> int:
    """Report the findings, the problems and the diffs in path order; then the exit code."""
    diagnostics: List[Diagnostic] = []
    not_checked = 0  # files skipped (over a size limit): the run cannot say all checks passed
    skipped: List[Tuple[str, str]] = []  # (path, warning) of those files, for the machine-readable formats
    for t in linted.tasks:
        res = linted.results[t.path]
        not_checked += bool(res.warnings)
        for w in res.warnings:
            _err(f"warning: {w}")
            skipped.append((t.path, w))
        for e in res.errors:
            _err(f"error: {e}")
            status = 2
        diagnostics.extend(res.diagnostics)
        if t.path in linted.diffs:
            sys.stdout.write(linted.diffs[t.path])
        if t.path in linted.write_errors:
            _err(f"error: {linted.write_errors[t.path]}")
            status = 2
    diagnostics.sort(key=Diagnostic.sort_key)
    if opts.add_noqa:
        added, problems = add_noqa(diagnostics)
        for problem in problems:
            _err(f"error: {problem}")
        sys.stderr.write(f"Added {added} noqa directive{'s' if added != 1 else ''}.\n")
        return 2 if status == 2 or problems else 0
    if opts.fix_only:  # leftover findings are not reported; a file that could not be read still is
        diagnostics = [d for d in diagnostics if d.code == PARSE_ERROR]
    tasks = linted.tasks
    _emit(opts, diagnostics, linted.fixed, run.rule_map, nothing_checked=not tasks, failed=status == 2,
          checked=[t.path for t in tasks], not_checked=not_checked, skipped=skipped,
          fixed_codes=linted.fixed_codes)
    if opts.diff and not linted.diffs and tasks and status != 2:
        _no_fixes_line(opts, diagnostics)
    return _exit_code(opts, status, not_checked, diagnostics, bool(linted.diffs), linted.fixed)


def _exit_code(opts: CheckOptions, status: int, not_checked: int, diagnostics: Sequence[Diagnostic],
               diff_changes: bool, fixed: int) -> int:
    if status == 2:
        return 2
    if not_checked:  # a file skipped is a file not checked: never a clean exit, even with --exit-zero
        return 1
    if opts.diff:
        return 1 if diff_changes else (0 if not diagnostics or opts.exit_zero else 1)
    if diagnostics and not opts.exit_zero:
        return 1
    if fixed and opts.exit_non_zero_on_fix:
        return 1
    return 0


def _discovery_options(opts: CheckOptions, cfg: Config) -> Tuple[List[str], bool, bool]:
    exclude = list(opts.exclude if opts.exclude is not None else (cfg.exclude if cfg.exclude is not None else DEFAULT_EXCLUDE))
    exclude += cfg.extend_exclude + opts.extend_exclude
    force_exclude = opts.force_exclude if opts.force_exclude is not None else cfg.force_exclude
    respect_gitignore = opts.respect_gitignore if opts.respect_gitignore is not None else cfg.respect_gitignore
    return exclude, force_exclude, respect_gitignore


def _settings(opts: CheckOptions, cfg: Config, rules) -> Settings:
    # a folder given on the command line is the project of the files under it that no project marker
    # (`.git`, `pyproject.toml`, ...) claims
    folders = tuple(p for p in opts.paths if p != "-" and os.path.isdir(p))
    return engine_settings(cfg, rules, (opts.select, opts.extend_select, opts.ignore), noqa=opts.noqa,
                           fix=opts.fix or opts.diff, unsafe_fixes=bool(opts.unsafe_fixes),
                           want_edits=opts.output_format in ("json", "sarif"), project=Project(fallback_roots=folders))


def _temps_beside(files: Sequence[str]) -> List[str]:
    """Write folders of ours in the folders of ``files`` (a killed write leaves one beside its file)."""
    out: List[str] = []
    for folder in sorted({os.path.dirname(os.path.abspath(f)) for f in files}):
        try:
            with os.scandir(folder) as it:
                out.extend(e.path for e in it if is_temp_dir_name(e.name))
        except OSError:
            continue
    return out


def _lint_group(opts: CheckOptions, cfg: Config, tasks: List[FileTask], settings: Settings, max_bytes: int,
                fixing: bool, results: Dict[str, FileResult],
                settle: Callable[[FileResult], FileResult] = lambda res: res,
                cache_warnings: Optional[Dict[str, str]] = None) -> None:
    """Lint the files that share one configuration, through the cache when it may be used; ``settle``
    handles each fresh result as it arrives (writes its fixes) before it is kept.  Why a cache folder
    could not be used goes into ``cache_warnings`` (folder -> reason)."""
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
                settings.parse_errors,
                cfg.per_file_ignores,
                max_bytes,
                sorted(settings.fixable) if settings.fixable is not None else None,
                settings.project.fallback_roots,  # where a file without a project marker finds its modules
            ]
        )
        cache = Cache(opts.cache_dir or cfg.cache_dir or os.path.join(cfg.root, DEFAULT_DIR), key, [r.CODE for r in enabled])
        if cache.problem is not None and cache_warnings is not None:
            cache_warnings.setdefault(cache.root, cache.problem)
        todo = []
        for t in tasks:
            # the whole file or nothing: a digest of a prefix would serve one file's results for another
            pre = read_regular(t.path, file_limit(t.path, max_bytes)) if cache.usable else None
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
        if cache is not None and not res.errors and not res.warnings and res.cacheable and res.path in digests:
            cache.put(res.path, *digests[res.path], res.diagnostics, res.dependencies)
    if cache is not None:
        cache.save()


def _already_written(path: str, fixed_source: str, encoding: str) -> bool:
    """Whether the file already holds exactly ``fixed_source`` (a hard link to it was fixed first)."""
    try:
        expected = fixed_source.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    got = read_regular(path, len(expected))
    return got is not None and got[0] == expected


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
          nothing_checked: bool = False, failed: bool = False, checked: Sequence[str] = (), not_checked: int = 0,
          lines_of: Optional[report.LineSource] = None, skipped: report.Skipped = (),
          fixed_codes: Optional[Dict[str, Dict[str, int]]] = None) -> None:
    out = stream or sys.stdout
    fmt = opts.output_format
    unsafe = bool(opts.unsafe_fixes)
    # an output file is never coloured: it is read by programs, not on a terminal
    paint = report.Paint(not opts.output_file and report.use_colour(opts.color, out))
    if opts.statistics:
        out.write(report.format_statistics(diagnostics, rule_map, unsafe, as_json=fmt == "json"))
        return
    if fmt == "json":
        out.write(report.format_json(diagnostics, rule_map, skipped, opts.docs_url))
    elif fmt == "sarif":
        out.write(report.format_sarif(diagnostics, rule_map, skipped, opts.docs_url))
    elif fmt == "github":
        out.write(report.format_github(diagnostics))
    elif fmt == "junit":
        out.write(report.format_junit(diagnostics, checked, skipped))
    elif fmt == "gitlab":
        out.write(report.format_gitlab(diagnostics, skipped))
    else:
        if opts.diff:
            return
        if fmt == "full":
            out.write(report.format_full(diagnostics, unsafe, lines_of or report.file_lines, paint))
        else:
            out.write(report.format_text(diagnostics, unsafe, paint))
        if opts.show_fixes and not opts.quiet:
            if opts.fix:
                out.write(report.format_fixes_applied(fixed_codes or {}, rule_map, paint))
            else:
                out.write(report.format_fixes_available(diagnostics, rule_map, unsafe, paint))
        if opts.fix_only:
            if not opts.quiet and fixed:
                out.write(f"Fixed {fixed} error{'s' if fixed != 1 else ''}.\n")
            elif not opts.quiet and not nothing_checked and not diagnostics:
                out.write("No errors fixed.\n")
            return
        if not opts.quiet and not (nothing_checked and not diagnostics and not fixed):
            text = report.summary(diagnostics, fixed, unsafe, opts.fix, paint)
            if failed:  # errors were reported: the checks did not all pass
                text = text.replace("All checks passed!\n", "Errors occurred; see the messages above.\n")
            elif not_checked:  # files were skipped: they were not checked, so nothing says they pass
                skipped = f"{not_checked} file{'s' if not_checked != 1 else ''} not checked; see the warnings above.\n"
                if "All checks passed!\n" in text:
                    text = text.replace("All checks passed!\n", skipped)
                else:
                    first, _, rest = text.partition("\n")
                    text = first + "\n" + skipped + rest
            out.write(text)


def _no_fixes_line(opts: CheckOptions, diagnostics: Sequence[Diagnostic]) -> None:
    """``--diff`` with nothing to show says so (on stderr: stdout stays a diff a patch tool can read)."""
    if opts.quiet:
        return
    if not diagnostics:
        _err("No fixes available: no findings.")
        return
    hidden = sum(1 for d in diagnostics if d.fix is not None and not report.is_applicable(d, opts.unsafe_fixes))
    n = len(diagnostics)
    line = f"No fixes available ({n} finding{'s' if n != 1 else ''} without an applicable fix"
    if hidden:
        line += f"; {hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
    _err(line + ").")


def _check_stdin(opts: CheckOptions, run: _Run) -> int:
    cfg, rule_map = run.cfg, run.rule_map
    settings = _settings(opts, cfg, run.rules)
    exclude, force_exclude, _ = _discovery_options(opts, cfg)
    root = run.resolver.root_of(opts.stdin_filename, cfg) if opts.stdin_filename else cfg.root
    name = opts.stdin_filename or "-"
    max_bytes = cfg.max_file_size or MAX_BYTES
    limit = file_limit(name, max_bytes)
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:  # not read whole: with --fix, what came in goes out unchanged
        _err(f"warning: {name}: input too large (over {size_text(limit)}); skipped")
        if opts.fix:
            sys.stdout.buffer.write(data)
            for chunk in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
                sys.stdout.buffer.write(chunk)
        elif not opts.quiet and opts.output_format == "text" and not opts.diff:
            sys.stdout.write("1 file not checked; see the warnings above.\n")
        return 1
    if opts.stdin_filename and force_exclude:
        try:
            rel = os.path.relpath(os.path.abspath(opts.stdin_filename), root)
        except ValueError:
            rel = opts.stdin_filename
        if matches_any(rel, exclude):
            if opts.fix:
                sys.stdout.buffer.write(data)
            return 0
    try:
        text, encoding = decode(data)
    except SourceError as exc:
        diags = keep([Diagnostic(name, 1, 1, "TL000", str(exc))], settings.parse_errors)
        _emit(opts, diags, 0, rule_map, sys.stderr if opts.fix else None)
        if opts.fix:
            sys.stdout.buffer.write(data)
        return 1
    ignore = tuple(ignored_for(name, root, cfg.per_file_ignores)) if opts.stdin_filename else ()
    res = lint_text(FileTask(name, ignore), text, settings, cfg.file_timeout)
    status = 0
    for e in res.errors:
        _err(f"error: {e}")
        status = 2
    failed = status == 2
    if opts.fix_only:
        res.diagnostics = [d for d in res.diagnostics if d.code == PARSE_ERROR]
    if opts.fix:
        new = res.fixed_source if res.fixed_source is not None else text
        sys.stdout.buffer.write(new.encode(encoding))
        sys.stdout.flush()
        _emit(opts, res.diagnostics, res.fixed_count, rule_map, sys.stderr, failed=failed,
              lines_of=lambda path, cell: report.lines_of_text(path, new, cell), fixed_codes={name: res.fixed_codes})
    elif opts.diff:
        if res.fixed_source is not None:
            sys.stdout.write(_file_diff(name, text, res.fixed_source))
            return status or 1
        if status:
            return status
        _no_fixes_line(opts, res.diagnostics)
        return 1 if res.diagnostics and not opts.exit_zero else 0
    else:
        _emit(opts, res.diagnostics, 0, rule_map, failed=failed,
              lines_of=lambda path, cell: report.lines_of_text(path, text, cell))
    if status:
        return status
    if res.fixed_count and opts.fix and opts.exit_non_zero_on_fix:
        return 1
    return 1 if res.diagnostics and not opts.exit_zero else 0


# -- --add-noqa ----------------------------------------------------------------------------------
def add_noqa(diagnostics: Sequence[Diagnostic]) -> Tuple[int, List[str]]:
    """Add ``# noqa: CODE`` to the line each finding starts on (merged into the line's directive when
    it has one; notebooks: in the cell), writing each file once, atomically.  Returns (directives
    added or extended, problems).  A line that ends inside a string or with a backslash gets none."""
    from torchlint.files import read_source
    from torchlint.noqa_edit import add_codes, comments, unsafe_lines

    wanted: Dict[str, Dict[Tuple[int, int], set]] = {}
    for d in diagnostics:
        if d.code in (PARSE_ERROR, "TL517"):
            continue
        wanted.setdefault(d.path, {}).setdefault((d.cell, d.line), set()).add(d.code)
    added = 0
    problems: List[str] = []
    for path in sorted(wanted):
        try:
            src = read_source(path)
        except (SourceError, OSError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        by_cell: Dict[int, Dict[int, set]] = {}
        for (cell, line), codes in wanted[path].items():
            by_cell.setdefault(cell, {})[line] = codes
        texts: Dict[int, str] = {}
        if 0 in by_cell:
            texts[0] = src.text
        nb = None
        if any(by_cell):
            from torchlint.notebook import NotebookError, mask_cell, read_notebook

            try:
                nb = read_notebook(src.text)
            except NotebookError as exc:
                problems.append(f"{path}: {exc}")
                continue
            for k, cell in enumerate(nb.cells):
                if cell.index + 1 in by_cell:
                    mask_cell(cell)
                    texts[cell.index + 1] = cell.text
        changed: Dict[int, str] = {}
        count = 0
        for cell_no, lines_wanted in by_cell.items():
            text = texts.get(cell_no)
            if text is None:
                continue
            lines = text.split("\n")
            python = text if nb is None else next(c.python for c in nb.cells if c.index + 1 == cell_no)
            blocked = unsafe_lines(python)
            # where each line's comment starts (token stream: a "# noqa" in a string is not one)
            comment_at = {n: col for n, (col, _) in (comments(python) or {}).items()}
            for line, codes in sorted(lines_wanted.items()):
                if not 0 < line <= len(lines):
                    continue
                where = f"{path}:{'cell ' + str(cell_no) + ':' if cell_no else ''}{line}"
                if line in blocked:
                    problems.append(f"{where}: no noqa added (the line ends inside a string or continues with a backslash)")
                    continue
                body = lines[line - 1]
                cr = "\r" if body.endswith("\r") else ""
                new = add_codes(body[: len(body) - len(cr)], codes, comment_at.get(line)) + cr
                if new != body:
                    lines[line - 1] = new
                    count += 1
            new_text = "\n".join(lines)
            if new_text != text:
                changed[cell_no] = new_text
        if not changed:
            continue
        try:
            if nb is None:
                write_atomic(path, changed[0], src.encoding, src.mtime_ns, src.size)
            else:
                from torchlint.notebook import cell_own_breaks, write_cells

                cells = {k: c for k, c in enumerate(nb.cells)}
                new_cells = {}
                for k, cell in cells.items():
                    if cell.index + 1 in changed:
                        t = changed[cell.index + 1]
                        new_cells[k] = cell_own_breaks(cell, t)
                write_atomic(path, write_cells(nb, new_cells), src.encoding, src.mtime_ns, src.size)
            added += count
        except (OSError, UnicodeEncodeError, ValueError) as exc:
            problems.append(f"{path}: noqa directives not written: {exc}")
    return added, problems


# -- --show-settings -----------------------------------------------------------------------------
def show_settings(opts: CheckOptions, cfg: Config, rules, start: str) -> str:
    """The settings the first path is linted with, as TOML-like lines (every rule option included,
    with its default when not set)."""
    import json

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"
        if v is None:
            return '"none"'
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        return str(v)

    settings = _settings(opts, cfg, rules)
    exclude, force_exclude, respect_gitignore = _discovery_options(opts, cfg)
    enabled = [r.CODE for r in settings.rules]
    fixable = sorted(settings.fixable) if settings.fixable is not None else [r.CODE for r in rules]
    rows = [
        ("config-file", cfg.path or "none (defaults)"),
        ("root", cfg.root),
        ("enabled", enabled),
        ("fixable", [r.CODE for r in settings.rules if r.fix_availability() != "none" and r.CODE in fixable]),
        ("unsafe-fixes", bool(opts.unsafe_fixes)),
        ("noqa", opts.noqa),
        ("per-file-ignores", cfg.per_file_ignores),
        ("exclude", exclude),
        ("force-exclude", force_exclude),
        ("respect-gitignore", respect_gitignore),
        ("cache-dir", opts.cache_dir or cfg.cache_dir or os.path.join(cfg.root, DEFAULT_DIR)),
        ("cache", opts.use_cache),
        ("max-file-size", cfg.max_file_size or MAX_BYTES),
        ("file-timeout", cfg.file_timeout if cfg.file_timeout is not None else "default"),
        ("output-format", opts.output_format),
        ("docs-url", cfg.docs_url or "none (rule pages are embedded in SARIF and the editor's hover)"),
    ]
    out = [f"# settings for {report.escape(start)}"]
    out += [f"{k} = {value(v)}" for k, v in rows]
    out.append("")
    out.append("# rule options")
    for key, opt in sorted(rule_options(rules).items()):
        line = f"{key} = {value(cfg.options.get(key, opt.default))}"
        if key == "target-torch" and cfg.target_torch_from is not None:
            line += f"  # declared in {report.escape(cfg.target_torch_from)}"
        elif key == "target-torch" and cfg.options.get(key, "auto") == "auto":
            line += "  # no torch requirement declared: 2.6 is assumed"
        out.append(line)
    return "\n".join(out) + "\n"
