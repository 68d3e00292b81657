"""Peak resident memory of ``torchlint check`` on large inputs: notebooks of 5, 20 and 40 MB whose code
has a finding, and an 8 MB generated source file (a data table, under the default ``max-file-size``).

    python benchmarks/bench_memory.py [--notebooks 5 20 40] [--table 8] [--cap-gb 6]

Each input is linted by ``python -m torchlint check --no-cache --jobs 1 FILE`` in a fresh process; the
peak is the largest resident set of that process and its workers (``ru_maxrss`` of the waited-for
descendants), with the wall time, the exit status and the codes reported.  ``--cap-gb`` caps every
process's address space (``RLIMIT_AS``) so that a run that would take the machine's memory ends with
an error instead (shown as ``capped``).

A notebook is one code cell with a finding (a softmax fed to ``cross_entropy``) and outputs: one image
(base64 text of the size asked for, one JSON string) and a stream of text lines.  The data table is one
list literal of tuples, one row a line, in a module that imports torch (so it is analysed).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from typing import List

CODE = [
    "import torch\n",
    "import torch.nn.functional as F\n",
    "\n",
    "logits = torch.randn(4, 3)\n",
    "target = torch.tensor([0, 1, 2, 0])\n",
    "loss = F.cross_entropy(torch.softmax(logits, dim=-1), target)\n",
]

WRAPPER = r"""
import json, resource, subprocess, sys, time
cap = int(sys.argv[1])
def limit():
    if cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
start = time.perf_counter()
out = subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--jobs", "1",
                      "--output-format", "json", sys.argv[2]], capture_output=True, text=True, preexec_fn=limit)
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
try:
    codes = sorted({d["code"] for d in json.loads(out.stdout)})
except ValueError:
    codes = []
print(json.dumps({"status": out.returncode, "peak": peak, "wall": wall, "codes": codes,
                  "stderr": out.stderr.strip().splitlines()[-1:]}))
"""


def notebook(megabytes: float) -> str:
    rng = random.Random(7)
    image = base64.b64encode(rng.randbytes(int(megabytes * 1e6 * 0.9 * 3 / 4))).decode()
    lines = [f"step {i}: loss {rng.random():.6f}\n" for i in range(int(megabytes * 1e6 * 0.1 / 28))]
    nb = {
        "cells": [{
            "cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {}, "source": CODE,
            "outputs": [
                {"output_type": "display_data", "metadata": {}, "data": {"image/png": image, "text/plain": ["<Figure>"]}},
                {"output_type": "stream", "name": "stdout", "text": lines},
            ],
        }],
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1)


def table(megabytes: float) -> str:
    rows: List[str] = ["import torch\n\nTABLE = [\n"]
    size, i = len(rows[0]), 0
    while size < megabytes * 1e6 - 100:
        row = f"    ({i}, {i * 0.5!r}, \"name_{i}\", ({i % 7}, {i % 11})),\n"
        rows.append(row)
        size += len(row)
        i += 1
    rows.append("]\nWEIGHTS = torch.tensor([row[1] for row in TABLE])\n")
    return "".join(rows)


def measure(path: str, cap: int) -> dict:
    out = subprocess.run([sys.executable, "-c", WRAPPER, str(cap), path], capture_output=True, text=True, check=False)
    if not out.stdout.strip():
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: List[str] = None) -> None:  # type: ignore[assignment]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=float, nargs="*", default=[5, 20, 40], help="notebook sizes (MB)")
    parser.add_argument("--table", type=float, nargs="*", default=[8], help="data table sizes (MB)")
    parser.add_argument("--cap-gb", type=float, default=6.0, help="address-space cap per process (0: none)")
    args = parser.parse_args(argv)
    cap = int(args.cap_gb * (1 << 30))
    print(f"python {platform.python_version()} on {platform.machine()}, address space capped at "
          f"{args.cap_gb:g} GiB per process" if cap else "no cap")
    print(f"{'input':<22} {'size (MB)':>9} {'peak RSS (MB)':>13} {'wall (s)':>8} {'exit':>4}  codes")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(f"notebook {mb:g} MB", f"nb{mb:g}.ipynb", notebook(mb)) for mb in args.notebooks]
        cases += [(f"data table {mb:g} MB", f"table{mb:g}.py", table(mb)) for mb in args.table]
        for label, name, text in cases:
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            got = measure(path, cap)
            note = " ".join(got["codes"]) or (got["stderr"][0][:60] if got["stderr"] else "")
            print(f"{label:<22} {os.path.getsize(path) / 1e6:>9.1f} {got['peak'] / 1e6:>13.0f} {got['wall']:>8.1f} "
                  f"{got['status']:>4}  {note}", flush=True)
            os.unlink(path)


if __name__ == "__main__":
    main()
