"""Fix notebooks and check that every written notebook still is one.

    python benchmarks/notebook_roundtrip.py [FOLDER ...] [--generate N] [--keep DIR]

Copies every ``.ipynb`` under the FOLDERs (and N notebooks generated from the rules' INVALID cases,
in varied layouts: nbformat 4.0-4.5, with and without outputs, list or string sources, CRLF inside
sources, indent 1 or 2, escaped or raw non-ASCII, magics and non-Python cells, a cell that does not
parse) into a scratch folder, then runs ``torchlint --fix --unsafe-fixes`` on the copy twice.  Checks:
the run does not crash (exit 0 or 1, no internal error), every notebook validates with ``nbformat`` and
re-opens, only code-cell sources changed, and the second run changes nothing.  Needs ``nbformat``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

MAGIC_CELLS = [
    "%matplotlib inline",
    "!pip install -q torch",
    "%%bash\necho setup",
    "%%writefile helper.py\ndef f(:\n    pass",
    "files = !ls\nfiles",
    "torch.nn.Linear?",
]


def _chunks(code: str) -> List[str]:
    """Split a module into cells at top-level statements that follow a blank line."""
    cells: List[List[str]] = [[]]
    lines = code.split("\n")
    for i, line in enumerate(lines):
        if cells[-1] and line and not line[0].isspace() and i and not lines[i - 1].strip() and not line.startswith((")", "]", "}")):
            cells.append([])
        cells[-1].append(line)
    return ["\n".join(c).strip("\n") for c in cells if "".join(c).strip()]


def generate(folder: str, n: int, seed: int = 0) -> List[str]:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    from torchlint.rules import all_rules

    rng = random.Random(seed)
    cases = [case.code for rule in all_rules() for case in rule.INVALID]
    paths = []
    for k in range(n):
        picked = rng.sample(cases, min(len(cases), rng.randint(1, 3)))
        cells = [new_markdown_cell(f"# Notebook {k}\nSome *text* — with ünïcode.")]
        if rng.random() < 0.5:
            cells.append(new_code_cell(rng.choice(MAGIC_CELLS)))
        for code in picked:
            for chunk in _chunks(code):
                if rng.random() < 0.15:
                    chunk = "%%time\n" + chunk
                cells.append(new_code_cell(chunk))
            if rng.random() < 0.3:
                cells.append(new_raw_cell("raw text"))
        if rng.random() < 0.2:
            cells.insert(rng.randrange(1, len(cells) + 1), new_code_cell("criterion = # TODO"))
        if rng.random() < 0.2:
            cells.append(new_code_cell(""))
        nb = new_notebook(cells=cells)
        nb.nbformat_minor = rng.choice([0, 1, 2, 4, 5])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        for c in nb.cells:
            if nb.nbformat_minor < 5:
                c.pop("id", None)
            if c.cell_type == "code" and rng.random() < 0.5:
                c.execution_count = rng.randint(1, 99)
                c.outputs = [new_output("stream", text="loss 0.1\n"), new_output("execute_result", {"text/plain": "tensor(1.)"}, execution_count=c.execution_count)]
        data = json.loads(nbformat.writes(nb))
        for c in data["cells"]:
            if c["cell_type"] != "code":
                continue
            if rng.random() < 0.3:
                c["source"] = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            if rng.random() < 0.15:
                src = c["source"]
                c["source"] = [s.replace("\n", "\r\n") for s in src] if isinstance(src, list) else src.replace("\n", "\r\n")
        text = json.dumps(data, indent=rng.choice([1, 2]), ensure_ascii=rng.random() < 0.3, sort_keys=True)
        if rng.random() < 0.8:
            text += "\n"
        path = os.path.join(folder, f"generated_{k:03d}.ipynb")
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        paths.append(path)
    return paths


def _hashes(paths: List[str]) -> Dict[str, str]:
    out = {}
    for p in paths:
        with open(p, "rb") as fh:
            out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _without_sources(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    for c in data.get("cells", []):
        if c.get("cell_type") == "code":
            c.pop("source", None)
    return data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--generate", type=int, default=40)
    ap.add_argument("--keep", default=None, help="work in this folder (kept) instead of a temporary one")
    ap.add_argument("--torchlint", default=os.path.join(os.path.dirname(sys.executable), "torchlint"))
    args = ap.parse_args(argv)

    work = args.keep or tempfile.mkdtemp(prefix="nb-roundtrip-")
    os.makedirs(work, exist_ok=True)
    paths: List[str] = []
    for root in args.folders:
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".ipynb"):
                    rel = os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "__")
                    dst = os.path.join(work, f"{len(paths):04d}_{rel}")
                    shutil.copyfile(os.path.join(folder, f), dst)
                    paths.append(dst)
    found = len(paths)
    paths += generate(work, args.generate)
    originals = {}
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            originals[p] = fh.read()

    cmd = [args.torchlint, "check", "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", "--jobs", "1", work]
    first = subprocess.run(cmd, capture_output=True, text=True)
    after_first = _hashes(paths)
    second = subprocess.run(cmd, capture_output=True, text=True)
    after_second = _hashes(paths)

    problems = []
    for run_no, r in ((1, first), (2, second)):
        if r.returncode not in (0, 1) or "internal error" in r.stderr or "failed:" in r.stderr:
            problems.append(f"run {run_no}: exit {r.returncode}: {r.stderr.strip()[:2000]}")
    changed = 0
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            text = fh.read()
        if text == originals[p]:
            continue
        changed += 1
        try:
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
        except Exception as exc:  # noqa: BLE001 - any failure to re-open is a finding of this check
            problems.append(f"{p}: does not validate after fix: {type(exc).__name__}: {exc}")
            continue
        if _without_sources(json.loads(text)) != _without_sources(json.loads(originals[p])):
            problems.append(f"{p}: something other than code-cell sources changed")
    for p in paths:
        if after_first[p] != after_second[p]:
            problems.append(f"{p}: the second fix changed it again")
    fixes_line = [line for line in first.stdout.splitlines() if "fixed" in line]
    print(f"notebooks: {found} copied + {args.generate} generated = {len(paths)}; changed by the fix: {changed}")
    print(f"first run exit {first.returncode}; second run exit {second.returncode}; {fixes_line[-1] if fixes_line else ''}")
    print(f"problems: {len(problems)}")
    for line in problems:
        print("  " + line)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
