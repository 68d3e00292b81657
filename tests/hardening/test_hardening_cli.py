"""Configuration errors, exit codes and messages, unreadable folders, control characters, --jobs."""
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import CE_BUG, CLEAN, TRAIN_BUG
from torchlint import checker, cli
from torchlint.cpus import available_cpus
from torchlint.files import discover


@pytest.mark.slow
@pytest.mark.parametrize(
    "content, needle",
    [
        (b"tool = 5\n", "`tool`"),
        (b'[tool.torchlint]\nselect = ["TL1"]  # caf\xe9\n', "not UTF-8"),
        (b"[tool.torchlint]\nmax-file-size = true\n", "max-file-size"),
    ],
)
def test_bad_configuration_is_one_error_line(run, tmp_path, content, needle):
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "m.py").write_text(TRAIN_BUG)
    r = run("m.py")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert needle in r.stderr and r.stderr.count("\n") == 1


def _invoke(monkeypatch, exc, *args):
    def boom(opts):
        raise exc

    monkeypatch.setattr(checker, "run_check", boom)
    return CliRunner().invoke(cli.main, ["check", *args])


def test_unexpected_exception_exits_2_with_one_line(monkeypatch):
    r = _invoke(monkeypatch, RuntimeError("kaput"), ".")
    assert r.exit_code == 2
    assert "internal error: RuntimeError: kaput" in r.output and "--verbose" in r.output
    assert "Traceback" not in r.output
    r = _invoke(monkeypatch, RuntimeError("kaput"), "--verbose", ".")
    assert r.exit_code == 2 and "Traceback" in r.output


def test_ctrl_c_exits_130(monkeypatch):
    r = _invoke(monkeypatch, KeyboardInterrupt(), ".")
    assert r.exit_code == 130
    assert "Aborted" not in r.output


@pytest.mark.slow
def test_no_all_checks_passed_when_exiting_2(run, tmp_path):
    (tmp_path / "m.py").write_text(CLEAN)
    r = run("m.py", "missing.py")
    assert r.returncode == 2
    assert "All checks passed!" not in r.stdout


@pytest.mark.slow
def test_too_deep_folder_is_reported(run, tmp_path):
    (tmp_path / "m.py").write_text(CLEAN)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        os.mkdir("deep")
        os.chdir("deep")
        for _ in range(25):  # a path of over 5,000 characters: longer than the system allows
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        with open("x.py", "w") as fh:
            fh.write(TRAIN_BUG)
    finally:
        os.chdir(cwd)
    r = run(".")
    assert r.returncode == 2
    assert "cannot read" in r.stderr
    assert "All checks passed!" not in r.stdout


def test_unreadable_folder_is_reported(tmp_path, monkeypatch):
    (tmp_path / "locked").mkdir()
    (tmp_path / "m.py").write_text(CLEAN)
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(str(path)) == "locked":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover([str(tmp_path)], str(tmp_path), [])
    assert found.files == [str(tmp_path / "m.py")]
    assert len(found.unreadable) == 1 and "Permission denied" in found.unreadable[0]


@pytest.mark.slow
def test_control_characters_in_file_names_are_escaped(run, tmp_path):
    name = "evil\x1b[2J\nname.py"
    (tmp_path / name).write_text(TRAIN_BUG)
    r = run(".")
    assert r.returncode == 1
    assert "\x1b" not in r.stdout
    line = [ln for ln in r.stdout.splitlines() if "TL101" in ln][0]
    assert line.startswith("evil\\x1b[2J\\nname.py:8:9: TL101")


def test_jobs_capped_at_available_cpus(tmp_path):
    assert 1 <= available_cpus() <= (os.cpu_count() or 1)
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert available_cpus(str(tmp_path)) == min(2, available_cpus())
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert available_cpus(str(tmp_path)) == available_cpus("/nonexistent")
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert available_cpus(str(v1)) == 1


def test_jobs_option_is_capped(monkeypatch):
    seen = {}

    def capture(opts):
        seen["jobs"] = opts.jobs
        return 0

    monkeypatch.setattr(checker, "run_check", capture)
    CliRunner().invoke(cli.main, ["check", "--jobs", "512", "."])
    assert seen["jobs"] == available_cpus()


def test_a_skipped_file_is_never_all_checks_passed(run, tmp_path):
    big = tmp_path / "big.py"
    with open(big, "w") as fh:
        fh.write(CLEAN)
        fh.write("x = 1  # padding .......................................................\n" * 140000)
    r = run("--no-cache", "big.py")
    assert "big.py: file too large (9.7 MiB > 8 MiB); skipped" in r.stderr
    assert "All checks passed!" not in r.stdout
    assert "1 file not checked; see the warnings above." in r.stdout
    assert r.returncode == 1
    r = run("--no-cache", "--exit-zero", "big.py")
    assert r.returncode == 1


@pytest.mark.slow  # a torchlint run over 300 files
def test_output_to_a_closed_pipe_ends_quietly_with_the_runs_status(tmp_path):
    # over 128 KiB of output: more than a pipe holds, so writing goes on after the reader has gone
    for i in range(300):
        (tmp_path / f"m{i:03}{'_' * 150}.py").write_text(TRAIN_BUG + "\n\n" + CE_BUG)
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "--no-cache", "--jobs", "1", "."], cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 1
    assert first.startswith(b"m000_") and b"TL101" in first
    assert err == b""


def test_stdin_over_the_size_limit_is_passed_through_unchecked(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 200\n")
    r = run("--fix", "--stdin-filename", "m.py", "-", stdin=TRAIN_BUG)  # over 200 bytes
    assert r.stdout == TRAIN_BUG  # unchanged, whole
    assert "m.py: input too large (over 200 bytes); skipped" in r.stderr
    assert r.returncode == 1
    r = run("--stdin-filename", "m.py", "-", stdin=TRAIN_BUG)
    assert "All checks passed!" not in r.stdout and r.returncode == 1
