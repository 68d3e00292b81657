"""--fix keeps what the file was (owner, group, xattrs, hard links), refuses lost updates, and a later
run removes the temporary files of a killed write; each file uses its nearest configuration."""
import errno
import os
import subprocess
import sys
import time

import pytest

from conftest import CE_BUG, TRAIN_BUG
from torchlint import atomic
from torchlint.atomic import FileChangedError, write_atomic


def _read_meta(path):
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_fix_as_root_keeps_owner_and_group(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    os.chown(path, 4321, 8765)
    r = run("--fix", "m.py")
    assert r.returncode == 0, r.stderr
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (4321, 8765)
    assert "zero_grad" in path.read_text()


def _set_xattr(path):
    for name in (b"user.torchlint-test", b"trusted.torchlint-test"):
        try:
            os.setxattr(path, name, b"kept")
            return name
        except OSError as exc:
            if exc.errno not in (errno.ENOTSUP, errno.EPERM, errno.EOPNOTSUPP):
                raise
    return None


@pytest.mark.slow
def test_fix_keeps_extended_attributes(run, tmp_path):
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    name = _set_xattr(path)
    if name is None:
        pytest.skip("this file system takes no extended attributes")
    assert run("--fix", "m.py").returncode == 0
    assert os.getxattr(path, name) == b"kept" and "zero_grad" in path.read_text()


@pytest.mark.slow
def test_hard_linked_file_is_written_in_place(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    os.link(path, tmp_path / "other_name.txt")
    inode = os.stat(path).st_ino
    assert run("--fix", "m.py").returncode == 0
    assert os.stat(path).st_ino == inode and os.stat(path).st_nlink == 2
    assert (tmp_path / "other_name.txt").read_text() == path.read_text()
    assert "zero_grad" in path.read_text()


def test_change_just_before_rename_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    mtime, size = _read_meta(path)
    real_fsync = os.fsync

    def fsync_then_someone_edits(fd):
        real_fsync(fd)
        with open(path, "a") as fh:
            fh.write("# edited meanwhile\n")

    monkeypatch.setattr(os, "fsync", fsync_then_someone_edits)
    with pytest.raises(FileChangedError):
        write_atomic(str(path), "new text\n", "utf-8", mtime, size)
    assert path.read_text().endswith("# edited meanwhile\n")
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


@pytest.mark.slow
def test_temp_files_of_a_killed_write_are_removed_next_run(run, tmp_path):
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".torchlint-{dead_pid}-abc123.tmpdir"
    stale.mkdir()
    (stale / "content").write_text("half a file")
    live = tmp_path / f".torchlint-{os.getpid()}-live.tmpdir"  # a writer that is still running
    live.mkdir()
    (live / "content").write_text("in progress")
    run(".")
    assert not stale.exists() and live.exists()
    stale.mkdir()
    (stale / "content").write_text("again")
    run("m.py")  # a file named explicitly: its folder is looked at too
    assert not stale.exists()


def test_killed_fixer_leaves_nothing_after_next_run(run, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    code = (
        "import os, sys\n"
        "from torchlint import atomic\n"
        "def stop(fd):\n"
        "    os._exit(9)\n"
        "os.fsync = stop\n"
        "st = os.stat(sys.argv[1])\n"
        "atomic.write_atomic(sys.argv[1], 'x = 1\\n', 'utf-8', st.st_mtime_ns, st.st_size)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=False)
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmpdir")]
    run(".")
    assert sorted(os.listdir(tmp_path)) in (["m.py"], [".torchlint_cache", "m.py"])
    assert path.read_text() == TRAIN_BUG


@pytest.mark.slow
def test_nearest_configuration_per_file(run, tmp_path):
    for pkg, select in (("pkgA", "TL101"), ("pkgB", "TL103")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "pyproject.toml").write_text(f'[tool.torchlint]\nselect = ["{select}"]\n')
        (tmp_path / pkg / "m.py").write_text(TRAIN_BUG + "\n\n" + CE_BUG.replace("import torch\n", ""))
    forward = run("--no-cache", "pkgA/m.py", "pkgB/m.py")
    backward = run("--no-cache", "pkgB/m.py", "pkgA/m.py")
    assert forward.stdout == backward.stdout
    codes = {(line.split(":")[0], line.split()[1]) for line in forward.stdout.splitlines() if ": TL" in line}
    assert codes == {("pkgA/m.py", "TL101"), ("pkgB/m.py", "TL103")}
    walked = run("--no-cache", ".")
    assert walked.stdout == forward.stdout


def test_stale_detection_needs_our_name(tmp_path):
    other = tmp_path / ".torchlint-notes.txt"
    other.write_text("user data")
    assert not atomic.is_stale_temp(str(other))


def test_user_files_named_like_temporaries_are_never_deleted(tmp_path):
    """A lint run removes only write folders of its own (holding nothing but their one file); a user's
    `.torchlint-notes.tmp`, however old, and a look-alike folder with other content stay."""
    from torchlint.checker import CheckOptions, run_check

    (tmp_path / "m.py").write_text("x = 1\n")
    past = time.time() - 7200
    notes = tmp_path / ".torchlint-notes.tmp"
    notes.write_text("user data")
    numbered = tmp_path / ".torchlint-1-abc.tmp"
    numbered.write_text("user data too")
    folder = tmp_path / ".torchlint-1-keep.tmpdir"
    folder.mkdir()
    (folder / "mine.txt").write_text("user file")
    for p in (notes, numbered, folder):
        os.utime(p, (past, past))
    assert run_check(CheckOptions(paths=[str(tmp_path)], use_cache=False, quiet=True)) == 0
    assert notes.read_text() == "user data" and numbered.exists() and (folder / "mine.txt").exists()


def test_sigterm_during_a_write_leaves_no_temporary(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    code = (
        "import os, signal, sys\n"
        "from torchlint import atomic\n"
        "atomic.terminate_cleanly()\n"
        "real = os.fsync\n"
        "def stop(fd):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    real(fd)\n"
        "os.fsync = stop\n"
        "st = os.stat(sys.argv[1])\n"
        "try:\n"
        "    atomic.write_atomic(sys.argv[1], 'x = 1\\n', 'utf-8', st.st_mtime_ns, st.st_size)\n"
        "except atomic.Terminated:\n"
        "    sys.exit(143)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(path)], check=False, capture_output=True, text=True)
    assert r.returncode == 143, r.stderr
    assert os.listdir(tmp_path) == ["m.py"]
    assert path.read_text() == TRAIN_BUG


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6755])
def test_fix_keeps_setuid_and_setgid_bits(run, tmp_path, mode):
    path = tmp_path / "m.py"
    path.write_text(TRAIN_BUG)
    os.chmod(path, mode)
    r = run("--fix", "m.py")
    assert r.returncode == 0, r.stderr
    assert "zero_grad" in path.read_text()
    assert oct(os.stat(path).st_mode & 0o7777) == oct(mode)


def test_hard_links_fixed_by_parallel_workers(run, tmp_path):
    for i in range(3):  # a few files, so both workers are busy
        (tmp_path / f"f{i}.py").write_text(CE_BUG)
    (tmp_path / "a.py").write_text(TRAIN_BUG)
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    r = run("--fix", "--no-cache", "--jobs", "2", ".")
    assert "fixes not written" not in r.stderr and "changed while" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "a.py").read_text() == (tmp_path / "b.py").read_text()
    assert (tmp_path / "a.py").read_text().count("optimizer.zero_grad()") == 1
    assert os.stat(tmp_path / "a.py").st_ino == os.stat(tmp_path / "b.py").st_ino
