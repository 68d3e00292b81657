"""Command line: ``torchlint [check] PATH...``, ``torchlint rule CODE``, ``torchlint rules``,
``torchlint clean``, ``torchlint server``, ``torchlint verify-runtime``.

Exit codes: 0 nothing left to report, 1 findings remain (or a file was skipped), 2 usage, configuration or
internal error.
Heavy modules (libcst, the rules) are imported inside the commands so ``--version`` stays instant.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional, Sequence, Tuple

import click

from torchlint import __version__
from torchlint.cpus import available_cpus

#: ``text`` is the old name of ``concise`` (the default)
FORMATS = ("concise", "full", "text", "json", "sarif", "github", "junit", "gitlab")


class _DefaultGroup(click.Group):
    """A group that runs ``check`` when the first argument is not a sub-command."""

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check"] + list(args)
        return super().parse_args(ctx, args)


def _split(values: Sequence[str]) -> List[str]:
    out: List[str] = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def _codes(values: Sequence[str]) -> List[str]:
    """Rule selectors, case-insensitive like `torchlint rule tl103`."""
    return [c.upper() for c in _split(values)]


def _fail(message: str) -> "NoReturn":  # type: ignore[name-defined]  # noqa: F821
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(2)


_MAIN_EPILOG = """\b
Main `check` options (all of them: `torchlint check --help`):
  --fix                 apply the safe fixes (--unsafe-fixes: the unsafe ones too)
  --diff                show the fixes as a diff instead of writing them
  --select CODES        rules to enable, e.g. TL1,TL201 (--ignore, --extend-select)
  --output-format FMT   concise (default), full, json, sarif, github, junit or gitlab
  --statistics          count findings per rule
  --watch               lint again whenever a file changes
  --add-noqa            add `# noqa: CODE` to every line with a finding
  --config KEY=VALUE    a setting that wins over the configuration files
  --stdin-filename NAME name of the file read from `-` (a .ipynb name reads a notebook)
\b
Examples:
  torchlint examples/            lint a folder (.py, .pyi and .ipynb files)
  torchlint --fix train.ipynb    fix a notebook in place
  torchlint rule TL101           what a rule finds and why
"""


@click.group(cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_MAIN_EPILOG)
@click.version_option(__version__, "--version", prog_name="torchlint", message="%(prog)s %(version)s")
def main() -> None:
    """Find PyTorch anti-patterns, and fix them.

    Runs `check` when no command is given: `torchlint src/` is `torchlint check src/`.
    """


@main.command()
@click.argument("paths", nargs=-1, type=str)
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="Also offer and apply fixes that may change behaviour beyond the bug (default: the `unsafe-fixes` setting, else off).")
@click.option("--fix-only", is_flag=True, help="Apply the fixes and report only what was fixed, not the findings left (exit 0).")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix was applied, even if nothing is left to report.")
@click.option("--diff", is_flag=True, help="Show the fixes as a unified diff instead of writing them.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding (merged into its noqa comment).")
@click.option("--watch", "-w", is_flag=True, help="Lint again whenever a file changes (file-system events with the `watch` extra, else polling; Ctrl-C stops).")
@click.option("--select", multiple=True, help="Rules to enable (codes or prefixes, comma separated; ALL for every rule).")
@click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rules to disable (codes or prefixes, comma separated).")
@click.option("--extend-ignore", multiple=True, help="Rules to disable on top of --ignore (same as --ignore).")
@click.option("--per-file-ignores", multiple=True, metavar="PATTERN:CODES",
              help="Codes to ignore in files matching a glob, e.g. 'tests/*:TL1,TL304' (added to the configured ones).")
@click.option("--target-torch", type=str, default=None, metavar="VERSION",
              help='Oldest torch the project supports ("2.4") or "auto" (the `target-torch` setting).')
@click.option("--exclude", multiple=True, help="Glob patterns of paths to exclude (replaces the configured list).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to exclude on top of the defaults.")
@click.option("--force-exclude/--no-force-exclude", default=None, help="Apply excludes to paths given explicitly too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files ignored by .gitignore.")
@click.option("--output-format", type=click.Choice(FORMATS), default=None,
              help="Output format (default: concise, one line per finding; full adds the source with a caret).")
@click.option("-o", "--output-file", type=str, default=None, help="Write the output to this file instead of stdout.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--show-fixes", is_flag=True,
              help="List the fixes applied (with --fix) or available, per file and rule.")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the findings: auto colours a terminal only (NO_COLOR turns it off, FORCE_COLOR on).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--config", "config_args", multiple=True, metavar="FILE | KEY=VALUE",
              help="A configuration file (pyproject.toml, .torchlint.toml or torchlint.toml), or a TOML `KEY = VALUE` "
                   "setting that wins over every file, e.g. 'target-torch = \"2.0\"' (repeatable).")
@click.option("--show-settings", is_flag=True, help="Print the settings the first path is linted with, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, and exit.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes (0: one per core).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--cache-dir", type=str, default=None, help="Cache folder (default: .torchlint_cache).")
@click.option("--stdin-filename", type=str, default=None, help="Name of the file read from stdin (with `-`).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--no-noqa", "disable_noqa", is_flag=True, help="Ignore `# noqa` comments.")
@click.option("-v", "--verbose", is_flag=True, help="Show the traceback of an internal error.")
def check(
    paths: Tuple[str, ...],
    fix: bool,
    unsafe_fixes: Optional[bool],
    fix_only: bool,
    exit_non_zero_on_fix: bool,
    diff: bool,
    add_noqa: bool,
    watch: bool,
    select: Tuple[str, ...],
    extend_select: Tuple[str, ...],
    ignore: Tuple[str, ...],
    extend_ignore: Tuple[str, ...],
    per_file_ignores: Tuple[str, ...],
    target_torch: Optional[str],
    exclude: Tuple[str, ...],
    extend_exclude: Tuple[str, ...],
    force_exclude: Optional[bool],
    respect_gitignore: Optional[bool],
    output_format: Optional[str],
    output_file: Optional[str],
    statistics: bool,
    show_fixes: bool,
    color: str,
    exit_zero: bool,
    config_args: Tuple[str, ...],
    isolated: bool,
    jobs: int,
    no_cache: bool,
    cache_dir: Optional[str],
    stdin_filename: Optional[str],
    quiet: bool,
    disable_noqa: bool,
    show_settings: bool,
    show_files: bool,
    verbose: bool,
) -> None:
    """Lint PATHS: .py, .pyi and .ipynb files (default: the current folder); `-` reads stdin."""
    from torchlint.checker import CheckOptions, run_check

    config_path, overrides = _config_args(config_args)
    if per_file_ignores:
        table = overrides.setdefault("per-file-ignores", {})
        if not isinstance(table, dict):
            _fail("--per-file-ignores and a `per-file-ignores` override that is not a table")
        for entry in per_file_ignores:
            pattern, sep, codes = entry.rpartition(":")
            if not sep or not pattern or not _codes([codes]):
                _fail(f"--per-file-ignores expects PATTERN:CODES (such as 'tests/*:TL1'), got `{entry}`")
            table.setdefault(pattern, []).extend(_codes([codes]))
    if target_torch is not None:
        overrides["target-torch"] = target_torch
    stdin = list(paths) == ["-"]
    if watch and (diff or add_noqa or stdin):
        _fail("--watch reports (and, with --fix or --fix-only, fixes): it cannot be combined with --diff, "
              "--add-noqa or stdin")
    if add_noqa and (fix or fix_only or diff or stdin):
        _fail("--add-noqa cannot be combined with --fix, --fix-only, --diff or stdin")
    opts = CheckOptions(
        paths=list(paths) or ["."],
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        select=_codes(select) or None,
        extend_select=_codes(extend_select),
        ignore=_codes(ignore) + _codes(extend_ignore),
        exclude=_split(exclude) or None,
        extend_exclude=_split(extend_exclude),
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        output_format="concise" if output_format in (None, "text") else output_format,
        statistics=statistics,
        exit_zero=exit_zero,
        config_path=config_path,
        isolated=isolated,
        jobs=available_cpus() if jobs == 0 else min(jobs, available_cpus()),
        use_cache=not no_cache,
        cache_dir=cache_dir,
        stdin_filename=stdin_filename,
        quiet=quiet,
        noqa=not disable_noqa,
        output_file=output_file,
        fix_only=fix_only,
        exit_non_zero_on_fix=exit_non_zero_on_fix,
        show_settings=show_settings,
        show_files=show_files,
        add_noqa=add_noqa,
        show_fixes=show_fixes,
        color=color,
        overrides=overrides,
    )
    from torchlint.atomic import restore_sigterm, terminate_cleanly

    # SIGTERM ends the run through `finally`: a write under way removes its temporary file
    previous = terminate_cleanly()
    try:
        if watch and not (show_settings or show_files):
            from torchlint.watch import watch_loop

            status = guarded(lambda: watch_loop(opts), verbose)
        else:
            status = guarded(lambda: _quiet_broken_pipe(lambda: run_check(opts)), verbose)
    finally:
        restore_sigterm(previous)
    sys.exit(status)


class _PipeGuard:
    """A stream that ends quietly when its reader goes away (``torchlint . | head``): the first
    ``BrokenPipeError`` points the descriptor at the null device, and what is written after it is
    dropped, so the run finishes and exits with its own status, as grep and ruff do."""

    def __init__(self, stream):
        self._stream = stream
        self._buffer = None
        self.broken = False

    def _call(self, method: str, *args):
        if self.broken:
            return len(args[0]) if args else None
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            self.broken = True
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stream.fileno())
                os.close(null)
            except (OSError, ValueError, AttributeError):
                pass
            return len(args[0]) if args else None

    def write(self, text):
        return self._call("write", text)

    def flush(self):
        return self._call("flush")

    @property
    def buffer(self):
        if self._buffer is None:
            self._buffer = _PipeGuard(self._stream.buffer)
        return self._buffer

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _quiet_broken_pipe(command: "Callable[[], int]") -> int:
    """Run ``command`` with stdout guarded by :class:`_PipeGuard`."""
    real = sys.stdout
    guard = _PipeGuard(real)
    sys.stdout = guard  # type: ignore[assignment]
    try:
        status = command()
        guard.flush()
        return status
    finally:
        sys.stdout = real


def _config_args(values: Sequence[str]) -> "Tuple[Optional[str], dict]":
    """``--config`` values: at most one file, and any number of TOML ``KEY = VALUE`` overrides (a value
    that names an existing file is a file, as in ruff)."""
    import os

    from torchlint.config import ConfigError, parse_override

    path: Optional[str] = None
    overrides: dict = {}
    for value in values:
        if os.path.isfile(value) or ("=" not in value and not os.path.exists(value)):
            if "=" not in value and not os.path.isfile(value):
                _fail(f"config file not found: {value}")
            if path is not None:
                _fail(f"--config names two files ({path}, {value}); give one, and settings as KEY = VALUE")
            path = value
            continue
        try:
            overrides.update(parse_override(value))
        except ConfigError as exc:
            _fail(str(exc))
    return path, overrides


def guarded(command: "Callable[[], int]", verbose: bool) -> int:
    """Run a command: Ctrl-C exits 130; an unexpected exception exits 2 with one line (the traceback
    with --verbose), never 1, which means findings; SIGTERM (see ``terminate_cleanly``) exits 143."""
    from torchlint.atomic import Terminated

    try:
        return command()
    except KeyboardInterrupt:
        sys.stderr.write("torchlint: interrupted\n")
        return 130
    except Terminated:
        sys.stderr.write("torchlint: terminated\n")
        return 143
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        if verbose:
            import traceback

            traceback.print_exc()
        from torchlint.report import escape

        sys.stderr.write(
            f"torchlint: error: internal error: {type(exc).__name__}: {escape(str(exc))}"
            + ("\n" if verbose else " (run with --verbose for the traceback)\n")
        )
        return 2


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show the page of every rule.")
def rule_cmd(code: Optional[str], show_all: bool) -> None:
    """Show the page of rule CODE, by its code (TL101) or its name (missing-zero-grad)."""
    from torchlint.rules import all_rules
    from torchlint.selection import NotLinted

    rules = [NotLinted, *all_rules()]
    if show_all == (code is not None):
        _fail("give a rule code or name (such as TL101 or missing-zero-grad), or --all")
    if show_all:
        click.echo("\n".join(_rule_page(rule) for rule in rules), nl=False)
        return
    by_key = {r.CODE: r for r in rules}
    by_key.update({r.NAME.lower(): r for r in rules if r.NAME})
    key = code.strip()  # type: ignore[union-attr]
    rule = by_key.get(key.upper()) or by_key.get(key.lower().replace("_", "-"))
    if rule is None:
        _fail(f"unknown rule `{code}`: give a code (TL101) or a name (missing-zero-grad); see `torchlint rules`")
    click.echo(_rule_page(rule), nl=False)


def _rule_page(rule: type) -> str:
    fix = {"safe": "Fix is available (safe).", "unsafe": "Fix is available (unsafe: needs --unsafe-fixes).", "none": "No fix."}[
        rule.fix_availability()  # type: ignore[attr-defined]
    ]
    state = ("enabled by default" if rule.DEFAULT_ENABLED  # type: ignore[attr-defined]
             else "disabled by default (enable with --extend-select)")
    return f"# {rule.NAME} ({rule.CODE})\n\n{fix} Rule is {state}.\n\n{rule.documentation()}\n"  # type: ignore[attr-defined]


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rules_cmd(output_format: str) -> None:
    """List every rule with its fix availability and default state."""
    import json

    from torchlint.rules import all_rules
    from torchlint.selection import NotLinted

    rows = [
        {
            "code": r.CODE,
            "name": r.NAME,
            "fix": r.fix_availability(),
            "default": r.DEFAULT_ENABLED,
            "message": r.MESSAGE,
        }
        for r in [NotLinted, *all_rules()]
    ]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    click.echo(f"{'code':<6} {'name':<{width}}  {'fix':<6}  default")
    for r in rows:
        click.echo(f"{r['code']:<6} {r['name']:<{width}}  {r['fix']:<6}  {'on' if r['default'] else 'off'}")


@main.command("clean")
@click.option("--cache-dir", type=str, default=None, help="Cache folder (default: the configured `cache-dir`).")
@click.option("--config", "config_path", type=str, default=None, metavar="FILE",
              help="The configuration file whose `cache-dir` to clean (default: the nearest one).")
def clean_cmd(cache_dir: Optional[str], config_path: Optional[str]) -> None:
    """Remove the cache folder: the one `check` uses here (`--cache-dir`, else the configured
    `cache-dir`, else `.torchlint_cache` at the project root)."""
    from torchlint.cache import DEFAULT_DIR, CleanError, clean
    from torchlint.config import ConfigError, load_config
    from torchlint.rules import all_rules

    if cache_dir is None:
        try:
            cfg = load_config(config_path, os.getcwd(), all_rules())
        except ConfigError as exc:
            _fail(str(exc))
        cache_dir = cfg.cache_dir or os.path.join(cfg.root, DEFAULT_DIR)
        if os.path.abspath(cache_dir) == os.path.abspath(DEFAULT_DIR):
            cache_dir = DEFAULT_DIR  # say it as before: relative to here
    try:
        removed = clean(cache_dir)
    except (CleanError, OSError) as exc:
        _fail(str(exc))
    click.echo(f"Removed {removed}" if removed else "No cache to remove")


@main.command("server")
@click.option("--stdio", is_flag=True, help="Talk LSP over stdin and stdout (the default and only transport; "
                                            "accepted as editors' clients pass it).")
def server_cmd(stdio: bool) -> None:
    """Run the language server (LSP over stdio) for editors."""
    try:
        from torchlint.lsp.server import main as server_main
    except ImportError as exc:
        _fail(
            "the language server needs pygls and lsprotocol (the `lsp` extra: `pip install 'pygls>=2,<3' "
            f"'lsprotocol>=2025.0.0'`, or install torchlint's wheel or checkout with `[lsp]`) ({exc})"
        )
    server_main()


@main.command("verify-runtime")
@click.option("--device", "devices", multiple=True, help="Devices to check (default: cpu, and cuda when available).")
def verify_runtime_cmd(devices: Tuple[str, ...]) -> None:
    """Check torchlint.runtime against float64 references on this machine (needs torch)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        _fail("verify-runtime needs torch: install the build for your machine first (CPU or CUDA, "
              "https://pytorch.org/get-started/locally/), then run it again")
    from torchlint.runtime.verify import main as verify_main

    sys.exit(verify_main(list(devices) or None))


if __name__ == "__main__":  # pragma: no cover
    main()
