"""The cache cannot hide findings, write outside its folder, or serve results of other code."""
import json
import os
import stat
import threading
import time

import pytest

from conftest import TRAIN_BUG
from torchlint import cache as cache_mod


def _cache_files(root):
    return [p for p in root.rglob("*.json") if p.parent.parent.name == ".torchlint_cache"]


def _read_entries(path):
    """The header line (the file's HMAC) and the entries of a cache file."""
    head, body = path.read_text().split("\n", 1)
    return head, json.loads(body)


@pytest.mark.slow
def test_planted_entry_cannot_hide_findings(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("m.py")
    assert r.returncode == 1
    [entry_file] = _cache_files(tmp_path)
    head, data = _read_entries(entry_file)
    # someone rewrites the entry to claim the file is clean (and commits it)
    for key in data:
        data[key][2] = []
    entry_file.write_text(head + "\n" + json.dumps(data))
    r = run("m.py")
    assert r.returncode == 1 and "TL101" in r.stdout


@pytest.mark.slow
def test_entry_bound_to_file_identity(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    assert run("m.py").returncode == 1
    [entry_file] = _cache_files(tmp_path)
    _head, entry = _read_entries(entry_file)
    (key, value), = entry.items()
    cache = cache_mod.Cache(str(tmp_path / ".torchlint_cache"), entry_file.stem, ["TL101"])
    st = os.stat(tmp_path / "m.py")
    ident = cache_mod.identity(st)
    assert cache.get(str(tmp_path / "m.py"), value[0], ident, 10) is not None
    other = (ident[0], ident[1] + 1, ident[2], ident[3])
    assert cache.get(str(tmp_path / "m.py"), value[0], other, 10) is None


def test_findings_validated_and_escaped(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    c = cache_mod.Cache(str(tmp_path / "c"), "k", ["TL101"])
    ident = (1, 2, 3, 4)
    rows_ok = [[2, 1, "TL101", "message", 2, 5, None]]
    for bad in (
        [[2, 1, "TL999", "message", 2, 5, None]],  # unknown code
        [[99, 1, "TL101", "message", 99, 5, None]],  # outside the file
        [[2, 1, "TL101", "evil\x1b[2J", 2, 5, None]],  # control characters
        [[2, 1, "TL101", "message", 2, 5, ["t", "bogus", []]]],
    ):
        c.entries[os.path.abspath("m.py")] = ["d", list(ident), bad, c._mac(os.path.abspath("m.py"), "d", ident, bad)]
        assert c.get("m.py", "d", ident, 10) is None
    c.entries[os.path.abspath("m.py")] = ["d", list(ident), rows_ok, c._mac(os.path.abspath("m.py"), "d", ident, rows_ok)]
    assert [d.code for d in c.get("m.py", "d", ident, 10)] == ["TL101"]


@pytest.mark.slow
def test_cache_dir_dot_does_not_hide_the_project(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ncache-dir = "."\n')
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("m.py")
    assert r.returncode == 1
    assert not (tmp_path / ".gitignore").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py", "pyproject.toml"]


@pytest.mark.slow
def test_symlinked_cache_dir_is_not_written_through(run, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text(TRAIN_BUG)
    os.symlink("..", project / ".torchlint_cache")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run("m.py", cwd=project)
    assert r.returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not (tmp_path / ".gitignore").exists()


@pytest.mark.slow
def test_gitignore_only_in_a_created_folder(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    run("m.py")
    folder = tmp_path / ".torchlint_cache"
    assert (folder / ".gitignore").exists() and (folder / cache_mod.MARKER).exists()


@pytest.mark.slow
def test_clean_removes_only_marked_folders(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    run("m.py")
    assert run("clean").returncode == 0
    assert not (tmp_path / ".torchlint_cache").exists()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("data")
    r = run("clean", "--cache-dir", "precious")
    assert r.returncode == 2 and "not a torchlint cache" in r.stderr
    assert (precious / "keep.txt").exists()
    os.symlink(str(precious), tmp_path / "link")
    (precious / cache_mod.MARKER).write_text(cache_mod.MARKER_TEXT)
    r = run("clean", "--cache-dir", "link")
    assert r.returncode == 2 and (precious / "keep.txt").exists()


@pytest.mark.slow
def test_fifo_named_py_does_not_hang(run, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    start = time.monotonic()
    r = run(".")  # discovery sees pipe.py; the cache's pre-read must not open it
    assert time.monotonic() - start < 60
    assert "m.py:8:9: TL101" in r.stdout
    r = run("pipe.py", "m.py")
    assert "pipe.py:1:1: TL000 not a regular file" in r.stdout


def test_cache_keyed_on_rule_code(tmp_path, monkeypatch):
    fp = cache_mod.code_fingerprint()
    assert len(fp) == 24
    cache_mod.code_fingerprint.cache_clear()
    import torchlint.rules

    fake_pkg = tmp_path / "rules"
    fake_pkg.mkdir()
    (fake_pkg / "__init__.py").write_text("# a rule that changed\n")
    monkeypatch.setattr(torchlint.rules, "__file__", str(fake_pkg / "__init__.py"))
    try:
        assert cache_mod.code_fingerprint() != fp
    finally:
        cache_mod.code_fingerprint.cache_clear()


def test_secret_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    s1 = cache_mod.machine_secret()
    assert s1 is not None and len(s1) >= 32
    assert cache_mod.machine_secret() == s1
    mode = stat.S_IMODE(os.stat(tmp_path / "xdg" / "torchlint" / "secret").st_mode)
    assert mode == 0o600


def test_existing_empty_cache_dir_is_adopted_and_a_foreign_one_is_left_alone(tmp_path):
    empty = tmp_path / "fresh"
    empty.mkdir()
    cache = cache_mod.Cache(str(empty), "k")
    assert cache.usable and (empty / cache_mod.MARKER).is_file()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert not cache_mod.Cache(str(foreign), "k").usable
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def _foreign_cache(folder):
    folder.mkdir()
    (folder / "CACHEDIR.TAG").write_text(
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n"
    )
    (folder / "build-output").write_text("precious")


def test_clean_refuses_a_cache_folder_of_another_tool(run, tmp_path):
    _foreign_cache(tmp_path / "target")
    r = run("clean", "--cache-dir", "target")
    assert r.returncode == 2 and "not a torchlint cache" in r.stderr
    assert (tmp_path / "target" / "build-output").read_text() == "precious"


def test_check_never_writes_into_a_cache_folder_of_another_tool(run, tmp_path):
    _foreign_cache(tmp_path / "target")
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("--cache-dir", "target", "m.py")
    assert r.returncode == 1 and "TL101" in r.stdout
    assert sorted(p.name for p in (tmp_path / "target").iterdir()) == ["CACHEDIR.TAG", "build-output"]
    assert "cache folder target not used" in r.stderr and "another tool" in r.stderr and "caching is off" in r.stderr


def test_cache_dir_dot_says_why_caching_is_off(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ncache-dir = "."\n')
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("m.py")
    assert r.returncode == 1
    assert r.stderr.count("warning: cache folder . not used: it holds other files") == 1
    assert "caching is off" in r.stderr
    assert not (tmp_path / "CACHEDIR.TAG").exists()


def test_a_skipped_file_is_never_served_from_the_cache(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 200\n")
    (tmp_path / "m.py").write_text(TRAIN_BUG)  # over 200 bytes
    for _ in range(2):
        r = run("m.py")
        assert "file too large" in r.stderr
        assert "All checks passed!" not in r.stdout and r.returncode == 1
