"""Cost per code line of a notebook against the same code as a ``.py`` file.

    python benchmarks/bench_notebooks.py FOLDER [--repeat N]

Every ``.ipynb`` under FOLDER is linted as a notebook, and its code cells (IPython syntax masked, the
text torchlint analyses) are written to a ``.py`` file and linted as such; both sets run in this
process with every rule enabled and no cache, best of ``--repeat``.  The difference is what a notebook
costs on top of its code: reading the JSON, masking, mapping positions back to cells.  A second row
times the whole command (``torchlint --no-cache --jobs 1``) on both folders.
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
from typing import List, Tuple


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from torchlint.engine import FileTask, Settings
    from torchlint.workers import lint_file
    from torchlint.notebook import NotebookError, build_program, mask_cell, read_notebook
    from torchlint.rules import all_rules

    work = tempfile.mkdtemp(prefix="bench-nb-")
    nb_dir, py_dir = os.path.join(work, "nb"), os.path.join(work, "py")
    os.makedirs(nb_dir)
    os.makedirs(py_dir)
    pairs: List[Tuple[str, str]] = []
    lines = 0
    for folder, dirs, files in os.walk(args.folder):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".ipynb"):
                continue
            with open(os.path.join(folder, f), encoding="utf-8") as fh:
                text = fh.read()
            try:
                nb = read_notebook(text)
            except NotebookError:
                continue
            for cell in nb.cells:
                mask_cell(cell)
            source = build_program(nb).source
            name = f"{len(pairs):04d}"
            nb_path, py_path = os.path.join(nb_dir, name + ".ipynb"), os.path.join(py_dir, name + ".py")
            with open(nb_path, "w", encoding="utf-8") as fh:
                fh.write(text)
            with open(py_path, "w", encoding="utf-8") as fh:
                fh.write(source)
            pairs.append((nb_path, py_path))
            lines += source.count("\n")

    settings = Settings(rules=all_rules())

    def best(paths: List[str]) -> float:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            for p in paths:
                lint_file(FileTask(p), settings, 8 * 1024 * 1024)
            times.append(time.perf_counter() - start)
        return min(times)

    def command(folder: str) -> float:
        times = []
        exe = os.path.join(os.path.dirname(sys.executable), "torchlint")
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run([exe, "--no-cache", "--jobs", "1", "--select", "ALL", "-q", folder], capture_output=True)
            times.append(time.perf_counter() - start)
        return min(times)

    nb_t = best([a for a, _ in pairs])
    py_t = best([b for _, b in pairs])
    nb_c, py_c = command(nb_dir), command(py_dir)
    print(f"{len(pairs)} notebooks, {lines} code lines; {platform.machine()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cores")
    print(f"{'':24} {'notebooks':>10} {'.py':>10} {'ratio':>6}")
    print(f"{'in process, s':24} {nb_t:10.2f} {py_t:10.2f} {nb_t / py_t:6.2f}")
    print(f"{'  us per code line':24} {1e6 * nb_t / lines:10.1f} {1e6 * py_t / lines:10.1f}")
    print(f"{'command, s':24} {nb_c:10.2f} {py_c:10.2f} {nb_c / py_c:6.2f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
