"""Robustness run: lint generated programs in a worker process that may die, under a time budget.

    python benchmarks/fuzz_robustness.py --hypothesmith 1000 --stress 1000 --out /tmp/fuzz
    python benchmarks/fuzz_robustness.py --hypothesmith 0 --stress 0 --trees 50

Programs come from hypothesmith (grammar-generated Python) and from ``tests/stress_parse.py``
(long chains, deep nesting, long ``elif`` chains, adjacent strings).  Each is linted with every rule
and all fixes; every 40th is also run through the command line.  Counted: crashes (the worker died or
the engine raised), hangs (over the time budget), internal errors (a rule or the analysis failed),
command-line runs that printed nothing or exited with a status other than 0/1, and fixes that left
code that does not parse.  Programs that failed are written to ``--out``.

``--trees N`` also builds N random project trees with hostile files in the places torchlint reads
(FIFOs, symlinks to ``/dev/zero``, dangling symlinks, huge and compact files: ``tests/hostile_trees.py``)
and runs the command line over each, with and without ``--fix``, under the time budget and a memory
cap; counted: runs over the budget and runs whose outcome is untrue (``hostile_trees.problems``).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.monotonic()
CLI_EVERY = 40
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def _lint_one(source: str) -> dict:
    import libcst as cst

    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    rules = all_rules()
    out = {"codes": [], "errors": [], "bad_fix": False}
    res = lint_source("gen.py", source, Settings(rules, fix=True, unsafe_fixes=True))
    out["codes"] = sorted({d.code for d in res.diagnostics})
    out["errors"] = res.errors
    if res.fixed_source is not None:
        try:
            cst.parse_module(res.fixed_source)
        except Exception:
            out["bad_fix"] = True
    return out


def _emit(kind: str, index: int, source: str, payload: dict) -> None:
    sys.stdout.write(json.dumps({"kind": kind, "i": index, "source": source, **payload}) + "\n")
    sys.stdout.flush()


def _worker(source_kind: str, start: int, count: int, seed: int) -> None:
    triggers = "\n# backward step zero_grad softmax cross_entropy item detach squeeze gather\n"
    if source_kind == "stress":
        from stress_parse import program

        for i in range(start, count):
            text = program(random.Random(seed * 1_000_003 + i))
            _emit("start", i, text, {})
            _emit("done", i, text, _lint_one(text))
        return
    import hypothesmith
    from hypothesis import HealthCheck, given, settings

    state = {"i": start}

    @settings(max_examples=count - start, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_grammar())
    def run(text: str) -> None:
        if state["i"] >= count:
            return
        text = text + triggers
        i = state["i"]
        _emit("start", i, text, {})
        _emit("done", i, text, _lint_one(text))
        state["i"] += 1

    run()


def _cli_check(text: str, budget: float) -> str:
    """'' when the command line printed something and exited 0 or 1, else what went wrong."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gen.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            r = subprocess.run([sys.executable, "-m", "torchlint", "--no-cache", "--select", "ALL", "gen.py"],
                               cwd=tmp, capture_output=True, text=True, timeout=budget)
        except subprocess.TimeoutExpired:
            return "cli hang"
    if r.returncode not in (0, 1):
        return f"cli exit {r.returncode}: {r.stderr.strip()[-300:]}"
    if not r.stdout.strip():
        return "cli printed nothing"
    return ""


def _drive(source_kind: str, count: int, seed: int, budget: float, out_dir: str, stats: dict) -> None:
    start = 0
    while start < count:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", source_kind, str(start), str(count), str(seed)],
                                stdout=subprocess.PIPE, text=True, bufsize=1)
        current = None
        done_here = False
        last_index = start - 1
        began = time.monotonic()
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, budget - (time.monotonic() - began)))
            if not ready and current is None:  # the generator stalled between programs: not a lint hang
                proc.kill()
                proc.wait()
                stats["generator_stalls"] = stats.get("generator_stalls", 0) + 1
                # go on after the last program it finished; one that finished none gives nothing more
                start = last_index + 1 if done_here and last_index + 1 < count else count
                break
            if not ready:  # over the budget: a hang
                proc.kill()
                proc.wait()
                stats["hangs"] += 1
                _save(out_dir, "hang", current)
                start = (current["i"] + 1) if current else start + 1
                stats["programs"] += 1
                break
            line = proc.stdout.readline()
            if not line:
                code = proc.wait()
                if current is not None:  # died in the middle of a program
                    stats["crashes"] += 1
                    _save(out_dir, f"crash{code}", current)
                    stats["programs"] += 1
                    start = current["i"] + 1
                else:
                    start = count
                break
            msg = json.loads(line)
            if msg["kind"] == "start":
                current = msg
                began = time.monotonic()
                continue
            current = None
            done_here, last_index = True, msg["i"]
            stats["programs"] += 1
            if stats["programs"] % 50 == 0:
                sys.stderr.write(f"{source_kind}: {stats['programs']} programs, {time.monotonic() - T0:.0f} s\n")
                sys.stderr.flush()
            if msg["errors"]:
                stats["internal_errors"] += 1
                _save(out_dir, "error", msg)
            if msg["bad_fix"]:
                stats["bad_fixes"] += 1
                _save(out_dir, "badfix", msg)
            for code in msg["codes"]:
                stats["codes"][code] = stats["codes"].get(code, 0) + 1
            if msg["i"] % CLI_EVERY == 0:
                stats["cli_runs"] += 1
                problem = _cli_check(msg["source"], budget)
                if problem:
                    stats["cli_problems"] += 1
                    _save(out_dir, "cli", dict(msg, problem=problem))
            began = time.monotonic()
        else:
            pass
    stats["by_source"][source_kind] = stats["by_source"].get(source_kind, 0) + count


def _save(out_dir: str, tag: str, msg) -> None:
    if msg is None:
        return
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{tag}-{msg['i']}.json"), "w", encoding="utf-8") as fh:
        json.dump(msg, fh)


def _trees(count: int, seed: int, budget: float, out_dir: str, stats: dict) -> None:
    import random
    import shutil

    import hostile_trees as ht

    rng = random.Random(seed)
    for i in range(count):
        hostile = ht.random_hostile(rng, rng.randint(1, 8))
        for extra in ((), ("--fix",)):
            tmp = tempfile.mkdtemp(prefix="torchlint-tree-")
            try:
                folders = ht.build(tmp, hostile)
                stats["tree_runs"] += 1
                try:
                    r = ht.run_tree(tmp, folders, budget, extra)
                except subprocess.TimeoutExpired:
                    stats["tree_hangs"] += 1
                    _save(out_dir, "tree-hang", {"i": i, "hostile": hostile, "extra": list(extra)})
                    continue
                found = ht.problems(r, hostile)
                if found:
                    stats["tree_problems"] += 1
                    _save(out_dir, "tree", {"i": i, "hostile": hostile, "extra": list(extra), "problems": found,
                                            "stdout": r.stdout[-2000:], "stderr": r.stderr[-2000:]})
            finally:
                shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--hypothesmith", type=int, default=1000)
    ap.add_argument("--stress", type=int, default=1000)
    ap.add_argument("--trees", type=int, default=0, help="random trees of hostile files to run the command line over")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per program before it counts as a hang")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "torchlint-fuzz"))
    args = ap.parse_args()
    stats = {"programs": 0, "crashes": 0, "hangs": 0, "internal_errors": 0, "bad_fixes": 0, "cli_runs": 0,
             "cli_problems": 0, "codes": {}, "by_source": {}, "tree_runs": 0, "tree_hangs": 0, "tree_problems": 0}
    t0 = time.monotonic()
    if args.stress:
        _drive("stress", args.stress, args.seed, args.budget, args.out, stats)
    if args.hypothesmith:
        _drive("hypothesmith", args.hypothesmith, args.seed, args.budget, args.out, stats)
    if args.trees:
        _trees(args.trees, args.seed, args.budget, args.out, stats)
    stats["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(stats, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
