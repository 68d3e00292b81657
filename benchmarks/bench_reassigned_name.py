"""Time linting a script that reassigns one name on every line, each line a finding.

    python benchmarks/bench_reassigned_name.py [--lines 500 2000] [--repeat 3]

The script is ``x = torch.log(torch.softmax(y, dim=1))`` repeated (one TL202 finding per line, all on
the name ``x``), plus the same number of lines with distinct names for comparison.  Every per-finding
step (the assignments that reach a name, fixes, positions, noqa) must cost the same per line however
many lines share the name: the time for 4x the lines should stay within about 5x.  Each run lints the
text in this process (``lint_source``, all rules, no cache); the best of ``--repeat`` is kept.
"""
from __future__ import annotations

import argparse
import platform
import time
from typing import List

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

LINE_SAME = "x = torch.log(torch.softmax(y, dim=1))\n"


def script(lines: int, same: bool) -> str:
    head = "import torch\n\ny = torch.randn(4, 3)\n"
    if same:
        return head + LINE_SAME * lines
    return head + "".join(f"x{i} = torch.log(torch.softmax(y, dim=1))\n" for i in range(lines))


def best_time(text: str, repeat: int) -> float:
    settings = Settings(rules=all_rules(), options={})
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = lint_source("bench.py", text, settings)
        best = min(best, time.perf_counter() - start)
        assert not result.errors, result.errors
    return best


def main(argv: List[str] = None) -> None:  # type: ignore[assignment]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()} on {platform.machine()}, best of {args.repeat}")
    print(f"{'lines':>6} {'one name (s)':>13} {'distinct names (s)':>19}")
    times = []
    for n in args.lines:
        same, distinct = best_time(script(n, True), args.repeat), best_time(script(n, False), args.repeat)
        times.append(same)
        print(f"{n:>6} {same:>13.2f} {distinct:>19.2f}")
    if len(times) > 1:
        print(f"one name: {args.lines[-1] / args.lines[0]:.0f}x the lines took {times[-1] / times[0]:.1f}x the time")


if __name__ == "__main__":
    main()
