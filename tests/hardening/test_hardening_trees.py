"""Fuzz-style: a tree with a FIFO, a symlink to /dev/zero, a dangling symlink, a huge and a compact file
in every place torchlint reads (a folder for each).  Each run must end within its time budget, within
its memory limit (the address space of every process is capped), and with a truthful summary (see
``hostile_trees.problems``).  ``benchmarks/fuzz_robustness.py --trees N`` runs random trees of the same
kind."""
import os
import subprocess
import sys

import pytest

import hostile_trees as ht

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs FIFOs and /dev/zero"),
    pytest.mark.slow,  # a torchlint run over a tree in each test: seconds each
]

BUDGET = 120.0  # seconds per run: far above what a run needs (seconds), far below "never ends"

# a configuration file over its limit stops the run (its own test below); everything else in one tree
EVERYWHERE = {f"{place}_{kind}": (place, kind) for place in ht.PLACES for kind in ht.KINDS
              if (place, kind) != ("pyproject", "huge")}


def _check(tmp_path, hostile, extra=()):
    folders = ht.build(str(tmp_path), hostile)
    try:
        r = ht.run_tree(str(tmp_path), folders, BUDGET, extra)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run did not end within {BUDGET:.0f} s")
    assert not ht.problems(r, hostile), (ht.problems(r, hostile), r.stdout[-3000:], r.stderr[-3000:])
    return r


def test_hostile_files_in_every_place(tmp_path):
    r = _check(tmp_path, EVERYWHERE)
    err = r.stderr.replace(os.sep, "/")
    for place in ("gitignore", "git", "exclude"):
        for kind in ("fifo", "devzero", "huge"):  # refused, and said so
            assert f"{place}_{kind}/{ht._name(place)}: " in err, place + kind
    assert "source_huge/bad.py: file too large" in err
    assert "source_fifo/bad.py:1:1: TL000 not a regular file" in r.stdout
    assert r.returncode == 1


def test_fix_over_hostile_files_in_every_place(tmp_path):
    hostile = {k: v for k, v in EVERYWHERE.items() if v[0] in ("source", "notebook", "gitignore", "git", "exclude")}
    _check(tmp_path, hostile, ("--fix",))
    for folder in hostile:
        assert "optimizer.zero_grad()" in (tmp_path / folder / "ok.py").read_text()
    for kind in ("huge", "compact"):
        assert "optimizer.zero_grad()" in (tmp_path / f"notebook_{kind}" / "bad.ipynb").read_text()
    assert "\n" not in (tmp_path / "notebook_compact" / "bad.ipynb").read_text()


def test_a_configuration_file_over_its_limit_is_an_error(tmp_path):
    hostile = {"pyproject_huge": ("pyproject", "huge")}
    r = _check(tmp_path, hostile)
    assert r.returncode == 2
    assert "pyproject.toml: file too large (9.0 MiB > 1 MiB)" in r.stderr
