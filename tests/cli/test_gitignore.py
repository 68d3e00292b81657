"""Ignore files follow git: checked against `git ls-files --others --ignored --exclude-standard`."""
import os
import shutil
import subprocess

import pytest

from torchlint.files import _wildmatch_regex, discover

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

FILES = [
    "a.py", "b.py", "c.py", "[x].py", "x.py", "#hash.py", "!bang.py", "sp .py", "star*.py", "q.py",
    "deep/a.py", "deep/er/b.py", "deep/er/est/c.py", "keep/a.py", "keep/b.py", "z/a.py", "z/y/a.py",
    "logs/x.py", "logs/sub/y.py", "src/gen/a.py", "src/gen/keep.py", "src/other.py", "m/n/o/p.py",
    "local.py", "global.py", "lower/abc.py", "lower/ABC.py", "d-1/x.py", "d_2/x.py",
]

GITIGNORE = "\n".join([
    "[]",          # invalid: matches nothing
    "[!]",         # invalid
    "[z-a].py",    # empty range: matches nothing
    "[a-b].py",
    "\\[x\\].py",  # escaped brackets: the literal name
    "\\#hash.py",
    "\\!bang.py",
    "sp\\ .py",
    "star\\*.py",
    "deep/**/c.py",
    "**/er/b.py",
    "keep/*",
    "!keep/b.py",
    "z/**",
    "!z/y/",
    "logs/",
    "/src/gen/*",
    "!/src/gen/keep.py",
    "m/**/p.py",
    "lower/[[:lower:]]*.py",
    "d[-_]?/",
    "trailing.py   ",
    "",
])


def _git(cwd, *args, env=None):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout


def _tree(root):
    for name in FILES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\n")


def _expected(root, env):
    ignored = set(_git(root, "ls-files", "--others", "--ignored", "--exclude-standard", env=env).split("\n")) - {""}
    return sorted(n for n in FILES if n not in ignored)


def _ours(root):
    found = discover(["."], str(root), [], respect_gitignore=True)
    return sorted(os.path.relpath(f, ".").replace(os.sep, "/") for f in found.files)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    _git(root, "init", "-q", env=env)
    _tree(root)
    monkeypatch.chdir(root)
    return root, home, env


def test_gitignore_patterns_match_git(repo):
    root, _, env = repo
    (root / ".gitignore").write_text(GITIGNORE)
    expected = _expected(root, env)
    assert "a.py" not in expected and "keep/b.py" in expected and "[x].py" not in expected  # the test bites
    assert _ours(root) == expected


def test_info_exclude_and_core_excludes_file(repo):
    root, home, env = repo
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("local.py\n")
    (home / "global-ignore").write_text("global.py\n")
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/global-ignore\n")
    expected = _expected(root, env)
    assert "local.py" not in expected and "global.py" not in expected
    assert _ours(root) == expected


def test_default_excludes_file_under_xdg(repo):
    root, home, env = repo
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("q.py\n")
    expected = _expected(root, env)
    assert "q.py" not in expected
    assert _ours(root) == expected


def test_nested_gitignore_overrides_parent(repo):
    root, _, env = repo
    (root / ".gitignore").write_text("*.py\n!*/\n")
    (root / "deep" / ".gitignore").write_text("!a.py\n")
    assert _ours(root) == _expected(root, env)


@pytest.mark.parametrize("pattern", ["[]", "[!]", "[z-a]", "[", "abc\\", "[[:nope:]]"])
def test_invalid_patterns_never_raise(pattern):
    regex = _wildmatch_regex(pattern)
    assert regex is None or regex == "(?!)"


def test_the_reader_refuses_special_and_large_files(tmp_path):
    from torchlint.reading import ReadRefused, read_limited

    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    (tmp_path / "big").write_bytes(b"x" * 2000)
    (tmp_path / "ok").write_bytes(b"fine\n")
    for name, reason in (("fifo", "not a regular file"), ("zero", "not a regular file"),
                         ("big", "file too large (1.95 KiB"), ("missing", "cannot read file: No such file")):
        with pytest.raises(ReadRefused) as info:
            read_limited(str(tmp_path / name), 1000)
        assert str(info.value).startswith(reason.replace("1.95", "2.0")), str(info.value)
    assert read_limited(str(tmp_path / "ok"), 1000)[0] == b"fine\n"


@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude", "core.excludesFile", ".git"])
@pytest.mark.parametrize("kind", ["fifo", "devzero", "huge"])
def test_hostile_ignore_files_are_refused_with_a_message(repo, where, kind):
    root, home, _env = repo
    if where == "core.excludesFile":
        (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {root / 'ignores'}\n")
        path = root / "ignores"
    elif where == ".git":
        import shutil as sh

        sh.rmtree(root / ".git")
        path = root / ".git"
    else:
        path = root / where
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        os.symlink("/dev/zero", path)
    else:
        path.write_bytes(b"#" * (2 << 20))
    found = discover(["."], str(root), [], respect_gitignore=True)
    assert len(found.files) == len(FILES)
    assert len(found.warnings) == 1 and found.warnings[0].endswith("; not used")
    assert ("not a regular file" if kind != "huge" else "file too large") in found.warnings[0]
