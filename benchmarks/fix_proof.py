"""Prove that fixing a tree leaves working code: every changed file compiles, every changed notebook
cell parses alone, and a second fix run changes nothing.

    python benchmarks/fix_proof.py TREE [TREE ...] [--keep DIR] [--json] [--programs]

For each mode (``--fix``, then ``--fix --unsafe-fixes``) the TREEs are copied into a scratch folder
(files made writable; the originals are never touched) and ``torchlint check --no-cache --jobs 1
--isolated`` runs over the copy twice.  Counted per mode:

- files (``.py``) and notebooks whose text the first run changed, and notebook cells changed;
- parse failures after the run: a changed ``.py`` that ``compile()`` refuses, or a changed code cell
  that does not compile on its own once its IPython syntax is masked the way the reader masks it;
- files the second run changed (idempotence: must be 0);
- runs that ended with an internal error (exit status 2).

``--programs`` also runs the fix-safety programs (``tests/fixes/test_fix_safety.py``): each program runs
with torch as written, after ``--fix`` and after ``--fix --unsafe-fixes``, and must print the same
(safe fixes) or the corrected result (unsafe fixes), as its first line declares.

Exit status 1 when any parse failure, non-idempotent file or internal error was found.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))

from torchlint.notebook import NotebookError, mask_cell, read_notebook  # noqa: E402

SUFFIXES = (".py", ".ipynb")


def snapshot(folder: str) -> Dict[str, bytes]:
    out = {}
    for base, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(SUFFIXES):
                path = os.path.join(base, name)
                with open(path, "rb") as fh:
                    out[os.path.relpath(path, folder)] = fh.read()
    return out


def copy_tree(trees: List[str], dest: str) -> List[str]:
    """Copy every tree under ``dest`` with plain, writable files; returns the copies."""
    out = []
    for n, tree in enumerate(trees):
        target = os.path.join(dest, f"{n}-{os.path.basename(os.path.normpath(tree))}")
        shutil.copytree(tree, target, copy_function=shutil.copyfile, symlinks=False,
                        ignore=shutil.ignore_patterns(".git", ".torchlint_cache", "__pycache__"))
        out.append(target)
    return out


def run_fix(paths: List[str], unsafe: bool) -> Tuple[int, str]:
    cmd = [sys.executable, "-m", "torchlint", "check", "--no-cache", "--jobs", "1", "--isolated", "--fix"]
    if unsafe:
        cmd.append("--unsafe-fixes")
    proc = subprocess.run(cmd + paths, capture_output=True, text=True)
    return proc.returncode, proc.stderr


def _cells(data: bytes) -> List[Tuple[int, str]]:
    nb = read_notebook(data.decode("utf-8"))
    out = []
    for cell in nb.cells:
        mask_cell(cell)
        out.append((cell.index, "" if cell.skip else cell.python))
    return out


def parses(python: str, name: str) -> bool:
    try:
        compile(python, name, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def check_changes(before: Dict[str, bytes], after: Dict[str, bytes]) -> dict:
    counts = {"files": 0, "notebooks": 0, "cells": 0, "parse_failures": []}
    for rel, new in sorted(after.items()):
        old = before.get(rel)
        if old is None or old == new:
            continue
        if rel.endswith(".py"):
            counts["files"] += 1
            if not parses(new.decode("utf-8", "replace"), rel):
                counts["parse_failures"].append(rel)
            continue
        counts["notebooks"] += 1
        try:
            old_cells = dict(_cells(old))
            new_cells = _cells(new)
        except (NotebookError, ValueError) as exc:
            counts["parse_failures"].append(f"{rel}: {exc}")
            continue
        for index, python in new_cells:
            if old_cells.get(index) == python:
                continue
            counts["cells"] += 1
            if python and not parses(python, f"{rel}:cell {index + 1}"):
                counts["parse_failures"].append(f"{rel}:cell {index + 1}")
    return counts


def prove(trees: List[str], unsafe: bool, keep: str = "") -> dict:
    scratch = tempfile.mkdtemp(prefix="fix-proof-", dir=keep or None)
    try:
        copies = copy_tree(trees, scratch)
        before = snapshot(scratch)
        status, stderr = run_fix(copies, unsafe)
        first = snapshot(scratch)
        counts = check_changes(before, first)
        status2, stderr2 = run_fix(copies, unsafe)
        second = snapshot(scratch)
        counts["not_idempotent"] = sorted(rel for rel in second if second[rel] != first.get(rel))
        counts["internal_errors"] = [
            line for line in (stderr + stderr2).splitlines() if "internal error" in line or "did not converge" in line
            or "produced invalid code" in line or "crossed a cell boundary" in line or "fixes not written" in line
        ]
        counts["exit"] = [status, status2]
        counts["checked"] = len(before)
        return counts
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def programs() -> int:
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            os.path.join(ROOT, "tests", "fixes", "test_fix_safety.py")], cwd=ROOT)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="*")
    ap.add_argument("--keep", default="", help="make the scratch copies under this folder and keep them")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument("--programs", action="store_true", help="also run the fix-safety programs")
    args = ap.parse_args(argv)
    bad = False
    results = {}
    if args.trees:
        for mode, unsafe in (("fix", False), ("fix+unsafe", True)):
            c = prove(args.trees, unsafe, args.keep)
            results[mode] = c
            bad |= bool(c["parse_failures"] or c["not_idempotent"] or c["internal_errors"] or 2 in c["exit"])
            if not args.json:
                print(f"{mode:<11} checked {c['checked']} files; changed {c['files']} .py, {c['notebooks']} notebooks "
                      f"({c['cells']} cells); parse failures {len(c['parse_failures'])}; "
                      f"changed by a second run {len(c['not_idempotent'])}; errors {len(c['internal_errors'])}; "
                      f"exit {c['exit'][0]}/{c['exit'][1]}")
                for what in ("parse_failures", "not_idempotent", "internal_errors"):
                    for item in c[what]:
                        print(f"  {what}: {item}")
    if args.json:
        print(json.dumps(results, indent=2))
    if args.programs:
        bad |= programs() != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
