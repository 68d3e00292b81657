"""Inputs that used to crash or stall a run: long chains, long elif chains, adjacent string literals.

Each file is linted in a subprocess, so a crash of the native parser fails the test instead of killing
the test run."""
import subprocess
import sys

import pytest

from conftest import TRAIN_BUG
from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules


def _chain(kind, n):
    return {
        "and": "y = " + " and ".join(["a"] * n),
        "or": "y = " + " or ".join(["a"] * n),
        "attr": "y = a" + ".b" * n,
        "plus": "y = " + " + ".join(["a"] * n),
        "call": "y = f" + "()" * n,
        "subscript": "y = a" + "[0]" * n,
        "plus-multiline": "y = (\n" + "".join("    a +\n" for _ in range(n)) + "    a)",
        # mixed precedence keeps the tree shallow, but libcst's parse time grows with the operator count
        "mixed": "y = (\n" + "".join(f"    a {'+*-/'[i % 4]}\n" for i in range(n)) + "    a)",
    }[kind]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["and", "or", "attr", "plus", "call", "subscript", "plus-multiline", "mixed"])
def test_long_chain_is_tl000_not_a_crash(run, tmp_path, kind):
    n = 8000
    (tmp_path / "chain.py").write_text(TRAIN_BUG + _chain(kind, n) + "\n")
    (tmp_path / "ok.py").write_text(TRAIN_BUG)
    r = run("--no-cache", "--jobs", "1", "chain.py", "ok.py")
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stdout.splitlines() if ": TL" in line]
    assert lines[0].startswith("chain.py:") and "TL000 too" in lines[0]
    assert lines[1].startswith("ok.py:8:9: TL101")


def _lint(text, **kw):
    return lint_source("m.py", text, Settings(all_rules(), **kw))


@pytest.mark.slow
def test_500_term_plus_chain_lints_and_fixes():
    text = TRAIN_BUG + "total = " + " + ".join(["torch.tensor(1.0)"] * 500) + "\n"
    res = _lint(text)
    assert res.errors == []
    assert [d.code for d in res.diagnostics] == ["TL101"]
    fixed = _lint(text, fix=True)
    assert fixed.errors == [] and "optimizer.zero_grad()" in fixed.fixed_source


@pytest.mark.slow
def test_1000_branch_elif_chain():
    branches = "".join(f"    elif x == {i}:\n        y = {i}\n" for i in range(1000))
    body = TRAIN_BUG + "\n\ndef pick(x):\n    if x:\n        y = 0\n" + branches + "    return y\n"
    res = _lint(body)
    assert res.errors == []
    assert [d.code for d in res.diagnostics] == ["TL101"]
    fixed = _lint(body, fix=True)
    assert fixed.errors == [] and fixed.fixed_count == 1


@pytest.mark.slow
def test_5000_adjacent_string_literals_are_not_a_parse_error():
    text = TRAIN_BUG + 'doc = (\n' + "".join('    "a"\n' for _ in range(5000)) + ")\n"
    res = _lint(text)
    assert [d.code for d in res.diagnostics] == ["TL101"], res.diagnostics[:1]
    assert res.diagnostics[0].fix is None  # analyzed a stand-in text: no fix offered
    one_line = TRAIN_BUG + "doc = (" + " ".join(['"a"'] * 5000) + ")\n"
    assert [d.code for d in _lint(one_line).diagnostics] == ["TL101"]


def test_recursion_limit_is_restored():
    before = sys.getrecursionlimit()
    _lint(TRAIN_BUG)
    assert sys.getrecursionlimit() == before


def test_short_chains_are_not_screened():
    text = TRAIN_BUG + "y = " + " + ".join(["a"] * 300) + "\n" + "z = a" + ".b" * 300 + "\n"
    assert [d.code for d in _lint(text).diagnostics] == ["TL101"]


def test_long_invalid_unary_run_fails_fast():
    import time

    text = TRAIN_BUG + "y = " + "~not -" * 400 + "a\n"
    start = time.monotonic()
    res = _lint(text)
    assert [d.code for d in res.diagnostics] == ["TL000"]
    assert "SyntaxError" in res.diagnostics[0].message
    assert time.monotonic() - start < 10
