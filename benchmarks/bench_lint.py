"""Time torchlint against the parse floor and its peers on a corpus, in one run.

    python benchmarks/bench_lint.py CORPUS [--torchfix PATH] [--repeat N]

CORPUS is the folder made by the corpus script (with ``small/`` and ``large/`` inside), or any folder
of Python files (then it is measured as one set).  Rows:

- libcst parse only: every file read and parsed once in this process (the floor);
- torchlint cold, ``--jobs 1`` and ``--jobs N`` (N = cores), no cache;
- torchlint cached: the same command a second time with a warm cache;
- TorchFix (its own CLI, default rules, ``-j 1`` and default jobs) when ``--torchfix`` points at it;
- flake8 with the torchlint plugin (``--select TL``), flake8's own default parallelism.

The peers are slow (TorchFix takes about a minute per 20k lines here), so by default they only run on
sets of up to 100k lines (``--peer-max-lines``).

Each command runs in a subprocess and the best of ``--repeat`` wall-clock times is kept.  torchlint's
modules are byte-compiled first, as ``pip install`` does (``--no-precompile`` skips it).  Numbers
depend on the machine; the script prints what it ran on.
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence, Tuple


def python_files(root: str) -> List[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    return out


def count_lines(files: Sequence[str]) -> int:
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            total += fh.read().count(b"\n")
    return total


def parse_floor(files: Sequence[str]) -> float:
    import libcst

    start = time.perf_counter()
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        try:
            libcst.parse_module(data.decode("utf-8"))
        except Exception:
            pass
    return time.perf_counter() - start


def timed(cmd: Sequence[str], repeat: int, env: Optional[dict] = None, before=None) -> Tuple[float, int]:
    best = float("inf")
    code = 0
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        best = min(best, time.perf_counter() - start)
        code = proc.returncode
        if code not in (0, 1):
            sys.stderr.write(f"warning: {' '.join(cmd)} exited {code}: {proc.stderr.decode()[-400:]}\n")
    return best, code


def precompile() -> None:
    """Byte-compile torchlint's modules, as ``pip install`` does: every run then starts the way an
    installed torchlint starts."""
    import compileall

    import torchlint
    import torchlint.rules

    for package in (torchlint, torchlint.rules):
        for folder in package.__path__:
            compileall.compile_dir(folder, quiet=1)


def measure(name: str, folder: str, args: argparse.Namespace) -> List[Tuple[str, float]]:
    files = python_files(folder)
    lines = count_lines(files)
    print(f"\n## {name}: {len(files)} files, {lines:,} lines ({folder})\n")
    rows: List[Tuple[str, float]] = []
    floor = min(parse_floor(files) for _ in range(args.repeat))
    rows.append(("libcst parse only (floor)", floor))
    cores = os.cpu_count() or 1
    cache = tempfile.mkdtemp(prefix="torchlint-bench-cache-")
    base = [sys.executable, "-m", "torchlint", "check", "--isolated", "--exit-zero", "-q", folder]
    rows.append(("torchlint cold --jobs 1", timed(base + ["--no-cache", "--jobs", "1"], args.repeat)[0]))
    rows.append((f"torchlint cold --jobs {cores}", timed(base + ["--no-cache", "--jobs", str(cores)], args.repeat)[0]))
    warm = base + ["--cache-dir", cache, "--jobs", str(cores)]
    timed(warm, 1)
    rows.append(("torchlint cached", timed(warm, args.repeat)[0]))
    shutil.rmtree(cache, ignore_errors=True)
    peers = lines <= args.peer_max_lines
    if not peers:
        print(f"(TorchFix and flake8 skipped: more than {args.peer_max_lines:,} lines; see --peer-max-lines)\n")
    if args.torchfix and peers:
        rows.append(("TorchFix 0.7.0 --jobs 1", timed([args.torchfix, "-j", "1", folder], args.repeat)[0]))
        rows.append((f"TorchFix 0.7.0 --jobs {cores}", timed([args.torchfix, "-j", str(cores), folder], args.repeat)[0]))
    if peers:
        flake8 = [sys.executable, "-m", "flake8", "--select", "TL", "--exit-zero", folder]
        rows.append(("flake8 --select TL (plugin)", timed(flake8, args.repeat)[0]))

    tf = {n: s for n, s in rows if n.startswith("TorchFix")}
    tf1 = tf.get("TorchFix 0.7.0 --jobs 1")
    print(f"| {'what':<32} | {'seconds':>8} | {'lines/s':>10} | {'x floor':>7} | {'TorchFix -j1 / this':>19} |")
    print(f"|{'-' * 34}|{'-' * 10}:|{'-' * 11}:|{'-' * 8}:|{'-' * 20}:|")
    for what, secs in rows:
        ratio_tf = f"{tf1 / secs:.1f}x" if tf1 else "n/a"
        print(f"| {what:<32} | {secs:>8.2f} | {lines / secs:>10,.0f} | {secs / floor:>7.2f} | {ratio_tf:>19} |")
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--torchfix", default=shutil.which("torchfix"), help="path of the torchfix executable")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=["small", "large"], default=None)
    parser.add_argument(
        "--peer-max-lines",
        type=int,
        default=100_000,
        help="run TorchFix and flake8 only on sets up to this many lines (they take minutes per 100k lines)",
    )
    parser.add_argument(
        "--no-precompile",
        action="store_true",
        help="do not byte-compile torchlint's modules first (pip does it at install; an editable install "
        "under PYTHONDONTWRITEBYTECODE=1 otherwise compiles them again at every start)",
    )
    args = parser.parse_args(argv)
    if not args.no_precompile:
        precompile()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )
    parts = [p for p in ("small", "large") if os.path.isdir(os.path.join(args.corpus, p))]
    if args.only:
        parts = [args.only]
    if not parts:
        measure(os.path.basename(os.path.abspath(args.corpus)), args.corpus, args)
    for part in parts:
        measure(part, os.path.join(args.corpus, part), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
