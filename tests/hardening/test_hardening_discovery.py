"""Discovery under a watchdog (issue 39, item 6): ignore patterns matched in time linear in the path,
and the walk has a time budget that ends it with a clear problem."""
import re
import time

import pytest

from torchlint.files import _GitIgnore, _Glob, _wildmatch_parts, discover


@pytest.mark.parametrize(
    "pattern, text",
    [
        ("*a*a*a*b", "xaxaxab"), ("*a*a*a*b", "aaaa"), ("**/x/**/y/**/z", "x/y/z"), ("**/x/**/y/**/z", "q/x/r/s/y/z"),
        ("a/**/b*c*d", "a/b/bxcyd"), ("a/**/b*c*d", "a/b/bxcy/d"), ("[!a-c]?*x*y*", "dqxay"), ("*.py*[0-9]*", "m.py7"),
        ("**/**/**/a", "a"), ("**/**/**/a", "b/a/"), ("x/**", "x/y/z"), ("*a*a*", "a/a"),
    ],
)
def test_glob_agrees_with_the_regex(pattern, text):
    parts = ["(?:.*/)?"] + _wildmatch_parts(pattern)
    expected = re.fullmatch("".join(parts), text, re.DOTALL) is not None
    assert _Glob(parts).fullmatch(text) is expected


def test_crafted_gitignore_patterns_match_in_linear_time():
    gi = _GitIgnore("/r", ["*a*a*a*a*a*a*a*a*b", "**/" * 12 + "q"])
    name = "a" * 3000
    deep = "/".join(["d"] * 1500)
    start = time.monotonic()
    assert gi.verdict(name, False) is None
    assert gi.verdict(deep, True) is None
    assert gi.verdict("a" * 40 + "b", False) is True
    assert gi.verdict(deep + "/q", False) is True
    assert time.monotonic() - start < 5.0


def test_the_walk_stops_at_its_budget_with_a_clear_problem(tmp_path):
    for i in range(3):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "m.py").write_text("x = 1\n")
    found = discover([str(tmp_path)], str(tmp_path), [], budget_s=0.0)
    assert found.unreadable and "finding the files took over 0 s" in found.unreadable[0]
    assert len(discover([str(tmp_path)], str(tmp_path), []).files) == 3
