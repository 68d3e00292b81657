"""Memory of the main process against the number of findings it keeps for sorted output.

    python benchmarks/bench_findings_memory.py --files 500 2000 --per-file 50

For each file count, a generated tree (each file holds ``--per-file`` training functions that never
clear gradients: one TL101 each) is linted by ``torchlint check`` run inside a fresh process
(``--jobs 1 --no-cache``, every rule, text output to the null device).  The peak resident memory of
that main process (``ru_maxrss``; the workers are other processes) is printed with the number of
findings, and the slope between the first and the last tree gives the bytes kept per finding.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

FUNCTION = """\
def train_{i}(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


"""

CHILD = r"""
import contextlib, json, os, resource, sys
from torchlint.checker import CheckOptions, run_check
from torchlint.rules import all_rules
all_rules()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    status = run_check(CheckOptions(paths=[sys.argv[1]], jobs=1, use_cache=False, select=["ALL"]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": status, "start_kb": base, "peak_kb": peak}))
"""


def build(root: str, files: int, per_file: int) -> None:
    os.makedirs(root)
    body = "import torch\n\n\n" + "".join(FUNCTION.format(i=i) for i in range(per_file))
    for k in range(files):
        with open(os.path.join(root, f"m{k:05}.py"), "w") as fh:
            fh.write(body)


def measure(root: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, root], capture_output=True, text=True, check=False)
    if not out.stdout.strip():
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--per-file", type=int, default=50)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.files:
            root = os.path.join(tmp, f"t{n}")
            build(root, n, args.per_file)
            got = measure(root)
            findings = n * args.per_file
            rows.append((n, findings, got["peak_kb"]))
            print(f"{n} files, {findings} findings: main process peak {got['peak_kb'] / 1024:.0f} MB "
                  f"(after start-up {got['start_kb'] / 1024:.0f} MB), exit {got['status']}", flush=True)
    if len(rows) > 1:
        (_, f0, m0), (_, f1, m1) = rows[0], rows[-1]
        print(f"kept per finding: {(m1 - m0) * 1024 / (f1 - f0):.0f} bytes")


if __name__ == "__main__":
    main()
