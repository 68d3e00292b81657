"""Bad input never crashes a run or loses data."""
import os
import stat

import pytest

from conftest import CLEAN, TRAIN_BUG
from torchlint.engine import FileTask, Settings, lint_source
from torchlint.workers import lint_file
from torchlint.rule import LintRule
from torchlint.rules import all_rules


def _lines(r):
    return [line for line in r.stdout.splitlines() if ": TL" in line]


def test_syntax_error_reported_and_run_continues(run, tmp_path):
    (tmp_path / "bad.py").write_text("import torch\n\ndef f(:\n    loss.backward()\n")
    (tmp_path / "good.py").write_text(TRAIN_BUG)
    r = run(".")
    assert r.returncode == 1
    lines = _lines(r)
    assert lines[0].startswith("bad.py:3:") and " TL000 SyntaxError" in lines[0]
    assert lines[1].startswith("good.py:8:9: TL101")


def test_binary_and_undecodable(run, tmp_path):
    (tmp_path / "nul.py").write_bytes(b"import torch\x00\x01\x02 backward")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9' # backward\n")  # no cookie: not UTF-8
    r = run(".")
    assert r.returncode == 1
    assert any(line.startswith("nul.py:1:1: TL000 binary file") for line in _lines(r))
    assert any(line.startswith("latin.py:1:1: TL000 cannot decode") for line in _lines(r))


def test_latin1_cookie_fix_keeps_encoding(run, tmp_path):
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + TRAIN_BUG
    (tmp_path / "m.py").write_bytes(src.encode("latin-1"))
    r = run("--fix", "m.py")
    assert r.returncode == 0, r.stdout + r.stderr
    data = (tmp_path / "m.py").read_bytes()
    assert b"caf\xe9" in data and b"optimizer.zero_grad()" in data


def test_bom_crlf_tabs_preserved(run, tmp_path):
    src = TRAIN_BUG.replace("    ", "\t").replace("\n", "\r\n")
    (tmp_path / "m.py").write_bytes(b"\xef\xbb\xbf" + src.encode())
    r = run("--fix", "m.py")
    assert r.returncode == 0, r.stdout + r.stderr
    data = (tmp_path / "m.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"\t\toptimizer.zero_grad()\r\n\t\tloss.backward()\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_mixed_newlines_kept(run, tmp_path):
    lines = TRAIN_BUG.splitlines(keepends=True)
    lines[0] = lines[0].replace("\n", "\r\n")
    src = "".join(lines)
    (tmp_path / "m.py").write_bytes(src.encode())
    run("--fix", "m.py")
    data = (tmp_path / "m.py").read_bytes()
    assert data.startswith(b"import torch\r\n") and b"optimizer.zero_grad()" in data


def test_empty_file(run, tmp_path):
    (tmp_path / "empty.py").write_text("")
    r = run("empty.py")
    assert r.returncode == 0


def test_huge_file_is_skipped_with_message(run, tmp_path):
    big = tmp_path / "big.py"
    with open(big, "w") as fh:
        fh.write(TRAIN_BUG)
        line = "x = 1  # padding to make the file large " + "." * 60 + "\n"
        fh.write(line * (20 * 1024 * 1024 // len(line)))
    (tmp_path / "small.py").write_text(TRAIN_BUG)
    r = run(".")
    assert "big.py: file too large" in r.stderr
    assert [line.split(":")[0] for line in _lines(r)] == ["small.py"]
    assert r.returncode == 1


def test_file_vanishing_between_discovery_and_reading(tmp_path):
    res = lint_file(FileTask(str(tmp_path / "gone.py")), Settings(all_rules()), 1 << 20)
    assert [d.code for d in res.diagnostics] == ["TL000"]
    assert "cannot read file" in res.diagnostics[0].message


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    real_open = open

    def deny(p, *a, **k):
        if str(p) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(p, *a, **k)

    real_os_open = os.open

    def deny_os(p, *a, **k):
        if str(p) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_os_open(p, *a, **k)

    monkeypatch.setattr("builtins.open", deny)
    monkeypatch.setattr(os, "open", deny_os)
    res = lint_file(FileTask(str(path)), Settings(all_rules()), 1 << 20)
    assert res.diagnostics[0].code == "TL000" and "Permission denied" in res.diagnostics[0].message


@pytest.mark.slow
def test_symlink_loop(run, tmp_path):
    os.symlink(tmp_path / "a.py", tmp_path / "b.py")
    os.symlink(tmp_path / "b.py", tmp_path / "a.py")
    (tmp_path / "ok.py").write_text(CLEAN)
    r = run(".")  # directory walks skip symlinks
    assert r.returncode == 0, r.stdout + r.stderr
    r = run("a.py")
    assert r.returncode == 1
    assert "TL000 cannot read file" in r.stdout


def test_read_only_file_under_fix(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    r = run("--fix", "m.py")
    assert r.returncode == 2
    assert "not writable" in r.stderr
    assert path.read_text() == TRAIN_BUG
    assert "TL101" in r.stdout  # still reported, unfixed


def test_fix_keeps_mode(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    path.chmod(0o751)
    run("--fix", "m.py")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert "zero_grad" in path.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".torchlint-")] == []


@pytest.mark.slow
def test_missing_path(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("nope.py", "m.py")
    assert r.returncode == 2
    assert "nope.py: no such file or directory" in r.stderr
    assert "m.py:8:9: TL101" in r.stdout


class _Crashing(LintRule):
    CODE = "TL999"
    NAME = "crashing-rule"
    MESSAGE = "never"
    TRIGGERS = ("backward",)

    def visit_Call(self, node):
        raise RuntimeError("boom")


def test_crashing_rule_does_not_take_others_down():
    res = lint_source("m.py", TRAIN_BUG, Settings([_Crashing] + all_rules()))
    assert [d.code for d in res.diagnostics] == ["TL101"]
    assert len(res.errors) == 1 and "TL999" in res.errors[0] and "boom" in res.errors[0]


@pytest.mark.parametrize("text", ["(" * 5000, "x = " + "[" * 5000 + "]" * 5000, "x = " + "-" * 8000 + "1"])
def test_absurd_nesting_is_reported_not_raised(text):
    res = lint_source("m.py", text + "\n# backward cross_entropy\n", Settings(all_rules()))
    assert [d.code for d in res.diagnostics] == ["TL000"]
    assert "nested" in res.diagnostics[0].message


def test_read_only_file_error_says_it_once(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    r = run("--fix", "--no-cache", "m.py")
    assert r.returncode == 2
    errors = [line for line in r.stderr.splitlines() if "m.py" in line]
    assert errors == ["torchlint: error: m.py: fixes not written: file is not writable"], r.stderr
