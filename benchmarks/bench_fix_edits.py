"""What the fix edits of machine-readable output cost, in one process.

    python benchmarks/bench_fix_edits.py FOLDER [--repeat N]

Lints every Python file of FOLDER (every rule enabled, no cache, one process) three ways:

- text: diagnostics only (what ``--output-format text`` needs);
- edits: diagnostics with each fix's text edits (what ``--output-format json`` needs), computed by
  regenerating only the top-level statements a fix touches;
- edits, whole module per fix: the same edits computed the old way, by applying each fix to the whole
  module and comparing the two texts.

Prints seconds (best of ``--repeat``), the ratio to the text run, the number of fixes, and checks that
both ways produce the same edits.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Dict, List, Tuple


def python_files(root: str) -> List[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        out.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    return out


def run(sources: Dict[str, str], want_edits: bool) -> Tuple[float, Dict[Tuple[str, int, int, str], tuple]]:
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    settings = Settings(rules=all_rules(), want_edits=want_edits)
    edits = {}
    start = time.perf_counter()
    for path, text in sources.items():
        for d in lint_source(path, text, settings).diagnostics:
            if d.fix is not None:
                edits[(d.path, d.line, d.col, d.code)] = d.fix.edits
    return time.perf_counter() - start, edits


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    sources = {}
    for p in python_files(args.folder):
        try:
            with open(p, encoding="utf-8") as fh:
                sources[p] = fh.read()
        except (OSError, UnicodeDecodeError):
            continue

    from torchlint.fixes import apply as fixes_apply

    def best(want_edits: bool) -> Tuple[float, dict]:
        times, result = [], {}
        for _ in range(args.repeat):
            t, result = run(sources, want_edits)
            times.append(t)
        return min(times), result

    text_s, _ = best(False)
    new_s, new_edits = best(True)
    original_top = fixes_apply.EditMaker._top
    fixes_apply.EditMaker._top = lambda self, node: None  # every fix: the whole module, as before
    try:
        old_s, old_edits = best(True)
    finally:
        fixes_apply.EditMaker._top = original_top

    same = all(_apply(sources[k[0]], v) == _apply(sources[k[0]], old_edits[k]) for k, v in new_edits.items())
    lines = sum(t.count("\n") for t in sources.values())
    print(f"{len(sources)} files, {lines:,} lines, {len(new_edits)} fixes; edits agree: {same}")
    print("| what | seconds | × text |")
    print("|---|---:|---:|")
    print(f"| diagnostics only (text) | {text_s:.2f} | 1.00 |")
    print(f"| with fix edits (json), touched statements | {new_s:.2f} | {new_s / text_s:.2f} |")
    print(f"| with fix edits (json), whole module per fix | {old_s:.2f} | {old_s / text_s:.2f} |")
    return 0 if same else 1


def _apply(text: str, edits: tuple) -> str:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a = starts[e.line - 1] + e.col - 1
        b = starts[e.end_line - 1] + e.end_col - 1
        text = text[:a] + e.content + text[b:]
    return text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
