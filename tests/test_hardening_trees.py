"""Fuzz-style: trees with FIFOs, device symlinks, dangling symlinks, huge and compact files in every
place torchlint reads.  Each run must end within its time budget, within its memory limit (the address
space of every process is capped), and with a truthful summary (see ``hostile_trees.problems``).

Set TORCHLINT_PROPERTY_EXAMPLES to run more random trees."""
import os
import random
import subprocess
import sys

import pytest

import hostile_trees as ht

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs FIFOs and /dev/zero")

BUDGET = 120.0  # seconds per run: far above what a run needs (a few seconds), far below "never ends"
RANDOM_TREES = max(1, int(os.environ.get("TORCHLINT_PROPERTY_EXAMPLES", "40")) // 20)


def _check(tmp_path, hostile, extra=()):
    folders = ht.build(str(tmp_path), hostile)
    try:
        r = ht.run_tree(str(tmp_path), folders, BUDGET, extra)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run did not end within {BUDGET:.0f} s: {hostile}")
    assert not ht.problems(r, hostile), (ht.problems(r, hostile), r.stdout[-2000:], r.stderr[-2000:])
    return r


@pytest.mark.parametrize("place", ht.PLACES)
def test_every_kind_of_hostile_file_in_one_place(tmp_path, place):
    r = _check(tmp_path, {f"{kind}": (place, kind) for kind in ht.KINDS})
    if place in ("gitignore", "git", "exclude"):
        for kind in ("fifo", "devzero", "huge"):  # refused, and said so
            assert f"{kind}/{ht._name(place)}: " in r.stderr.replace(os.sep, "/")


@pytest.mark.parametrize("seed", range(RANDOM_TREES))
def test_random_hostile_trees(tmp_path, seed):
    _check(tmp_path, ht.random_hostile(random.Random(seed), 6))


def test_fix_over_hostile_trees(tmp_path):
    hostile = {f"{place}_{kind}": (place, kind) for place in ("source", "notebook", "gitignore", "git")
               for kind in ("fifo", "devzero", "compact")}
    r = _check(tmp_path, hostile, ("--fix",))
    for folder in hostile:
        assert "optimizer.zero_grad()" in (tmp_path / folder / "ok.py").read_text()
