"""``torchlint check --watch``: lint, then lint again whenever a linted file, a file that would be
linted, or a configuration file changes.  Polling (once a second by default), no extra dependency."""
from __future__ import annotations

import os
import sys
import time
from typing import Dict, Optional, Tuple

from torchlint.checker import CheckOptions, run_check

Snapshot = Dict[str, Tuple[int, int]]

_CONFIG_NAMES = ("pyproject.toml", "torchlint.toml", ".gitignore")


def snapshot(opts: CheckOptions) -> Snapshot:
    """(mtime, size) of every file the run would lint, and of the configuration files around them."""
    from torchlint.files import DEFAULT_EXCLUDE, discover

    exclude = list(opts.exclude if opts.exclude is not None else DEFAULT_EXCLUDE) + list(opts.extend_exclude)
    found = discover(opts.paths, os.getcwd(), exclude, bool(opts.force_exclude), opts.respect_gitignore is not False)
    watched = set(found.files)
    for p in opts.paths:
        folder = os.path.abspath(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)))
        while True:  # configuration files from each path up to the filesystem root
            watched.update(os.path.join(folder, n) for n in _CONFIG_NAMES)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    if opts.config_path:
        watched.add(opts.config_path)
    out: Snapshot = {}
    for path in watched:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[path] = (st.st_mtime_ns, st.st_size)
    return out


def watch_loop(opts: CheckOptions, interval: float = 1.0, runs: Optional[int] = None) -> int:
    """Run the check, then again after each change, until interrupted (or ``runs`` runs).  Returns the
    last run's exit status."""
    stamp = time.strftime("%H:%M:%S")
    sys.stderr.write(f"[{stamp}] Starting linter in watch mode...\n")
    sys.stderr.flush()
    before = snapshot(opts)
    status = run_check(_fresh(opts))
    sys.stdout.flush()
    done = 1
    while runs is None or done < runs:
        time.sleep(interval)
        now = snapshot(opts)
        if now == before:
            continue
        before = now
        stamp = time.strftime("%H:%M:%S")
        sys.stderr.write(f"[{stamp}] File change detected...\n")
        sys.stderr.flush()
        status = run_check(_fresh(opts))
        sys.stdout.flush()
        done += 1
    return status


def _fresh(opts: CheckOptions) -> CheckOptions:
    """A copy for one run (a run fills in settings it resolved, such as unsafe-fixes)."""
    import copy

    return copy.copy(opts)
