"""``torchlint check --watch``: lint, then lint again whenever a linted file, a file that would be
linted, or a configuration file changes.

Where the optional ``watchfiles`` package is installed (the ``watch`` extra: inotify,
FSEvents, ReadDirectoryChangesW through one well-kept library), the folders named are watched for
file-system events and an idle watch costs nothing; a batch of events about Python files, notebooks or
configuration files makes torchlint look again (the same comparison as below decides whether to lint).
Configuration files above the folders named are checked once a second (a few ``stat`` calls).
With ``--fix`` (or ``--fix-only``) each run also writes its fixes; what the run itself wrote is not a
change to look at again (the comparison starts from the files as the run left them).
Without it, torchlint polls: it lists the files the run would lint and compares their modification
times and sizes, once a second at first, then backing off to every :data:`MAX_POLL` seconds while
nothing changes (back to once a second after a change)."""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from torchlint.checker import CheckOptions, run_check
from torchlint.config import CONFIG_FILES

Snapshot = Dict[str, Tuple[int, int]]
_sleep = time.sleep

_CONFIG_NAMES = CONFIG_FILES + (".gitignore",)
_WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb")
#: the longest pause, in seconds, between two looks of a polling watch that has seen no change
MAX_POLL = 8.0


def _config_files(opts: CheckOptions) -> List[str]:
    """The configuration files that may apply: from each path up to the filesystem root, and ``--config``."""
    out: List[str] = []
    for p in opts.paths:
        folder = os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)))
        while True:
            out.extend(os.path.join(folder, n) for n in _CONFIG_NAMES)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    if opts.config_path:
        out.append(opts.config_path)
    return out


def _stats(paths: Iterable[str]) -> Snapshot:
    out: Snapshot = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[path] = (st.st_mtime_ns, st.st_size)
    return out


def snapshot(opts: CheckOptions) -> Snapshot:
    """(mtime, size) of every file the run would lint, and of the configuration files around them."""
    from torchlint.files import DEFAULT_EXCLUDE, discover

    exclude = list(opts.exclude if opts.exclude is not None else DEFAULT_EXCLUDE) + list(opts.extend_exclude)
    found = discover(opts.paths, os.getcwd(), exclude, bool(opts.force_exclude), opts.respect_gitignore is not False)
    return _stats(set(found.files) | set(_config_files(opts)))


def _relevant(path: str, skip: Tuple[str, ...]) -> bool:
    """Whether an event about ``path`` may change what a run reports (not one in the cache folder)."""
    if any(path == s or path.startswith(s + os.sep) for s in skip):
        return False
    name = os.path.basename(path)
    # a folder (created, removed, renamed: its files get no events of their own) has no suffix, mostly
    return name.endswith(_WATCHED_SUFFIXES) or name in _CONFIG_NAMES or "." not in name or os.path.isdir(path)


def file_events(opts: CheckOptions, tick: float = 1.0) -> Optional[Iterator[bool]]:
    """Through ``watchfiles`` (None where it is not installed): an endless iterator that yields True
    after a batch of relevant events in the folders named, and False every ``tick`` seconds without
    one."""
    try:
        import watchfiles
    except ImportError:
        return None
    # a file named is watched through its folder: an editor that saves by renaming a new file over it
    # replaces the file that a watch on the file itself would follow
    roots = sorted({os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)))
                    for p in opts.paths if os.path.exists(p)})
    if not roots:
        return None
    cache = opts.cache_dir or ".torchlint_cache"
    skip = tuple({os.path.abspath(cache), *(os.path.join(r, ".torchlint_cache") for r in roots if os.path.isdir(r))})

    def keep(_change: Any, path: str) -> bool:
        return _relevant(os.path.abspath(path), skip) and watchfiles.DefaultFilter()(_change, path)

    def events() -> Iterator[bool]:
        for changes in watchfiles.watch(*roots, watch_filter=keep, rust_timeout=int(tick * 1000),
                                        yield_on_timeout=True, debounce=200):
            yield bool(changes)

    return events()


def watch_loop(opts: CheckOptions, interval: float = 1.0, runs: Optional[int] = None,
               events: Optional[Callable[[CheckOptions], Optional[Iterator[bool]]]] = None) -> int:
    """Run the check, then again after each change, until interrupted (or ``runs`` runs).  Returns the
    last run's exit status.  ``events``: the source of file-system events (:func:`file_events`)."""
    stamp = time.strftime("%H:%M:%S")
    sys.stderr.write(f"[{stamp}] Starting linter in watch mode...\n")
    sys.stderr.flush()
    writes = bool(opts.fix or opts.fix_only)
    before = snapshot(opts)
    status = run_check(_fresh(opts))
    if writes:  # the run's own fixes are not a change
        before = snapshot(opts)
    sys.stdout.flush()
    done = 1
    stream = (events or file_events)(opts)
    configs = _config_files(opts)
    config_stamp = _stats(configs)
    pause = interval
    while runs is None or done < runs:
        if stream is not None:
            seen = next(stream, None)
            if seen is None:  # the watcher stopped: poll from here on
                stream = None
                continue
            if not seen:  # a quiet tick: only the configuration files above the folders are looked at
                now_configs = _stats(configs)
                if now_configs == config_stamp:
                    continue
                config_stamp = now_configs
        else:
            _sleep(pause)
        now = snapshot(opts)
        if now == before:
            if stream is None:
                pause = min(MAX_POLL, pause * 2)  # nothing changed: look less often
            continue
        pause = interval
        before = now
        config_stamp = _stats(configs)
        stamp = time.strftime("%H:%M:%S")
        sys.stderr.write(f"[{stamp}] File change detected...\n")
        sys.stderr.flush()
        status = run_check(_fresh(opts))
        if writes:
            before = snapshot(opts)
        sys.stdout.flush()
        done += 1
    return status


def _fresh(opts: CheckOptions) -> CheckOptions:
    """A copy for one run (a run fills in settings it resolved, such as unsafe-fixes)."""
    import copy

    return copy.copy(opts)
