"""Output never over input, files not checked in every format, configuration errors that say what is
wrong: the review's reproducers of issue 39, items 2, 10 and 11."""
import json
import os
import xml.etree.ElementTree as ET

import pytest

from conftest import CE_BUG


def test_output_file_naming_a_linted_file_is_refused(run, tmp_path):
    (tmp_path / "a.py").write_text(CE_BUG)
    r = run("--no-cache", "a.py", "-o", "a.py")
    assert r.returncode == 2
    assert "is a file being linted" in r.stderr
    assert (tmp_path / "a.py").read_text() == CE_BUG
    os.link(tmp_path / "a.py", tmp_path / "report.txt")  # the same inode under another name
    r = run("--no-cache", ".", "-o", "report.txt")
    assert r.returncode == 2 and "is a file being linted" in r.stderr
    assert (tmp_path / "a.py").read_text() == CE_BUG


def test_output_file_is_written_whole_and_creates_no_folder(run, tmp_path):
    (tmp_path / "a.py").write_text(CE_BUG)
    (tmp_path / "out.txt").write_text("old report\n")
    r = run("--no-cache", "a.py", "-o", "out.txt")
    assert r.returncode == 1 and r.stdout == ""
    assert "TL103" in (tmp_path / "out.txt").read_text()
    assert sorted(os.listdir(tmp_path)) == ["a.py", "out.txt"]  # no temporary left beside it
    r = run("--no-cache", "a.py", "-o", "new/deep/out.txt")
    assert r.returncode == 2 and "does not exist" in r.stderr
    assert not (tmp_path / "new").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_file_write_error_is_a_clean_error(run, tmp_path):
    (tmp_path / "a.py").write_text(CE_BUG)
    r = run("--no-cache", "a.py", "-o", "/dev/full")
    assert r.returncode == 2
    assert "internal error" not in r.stderr
    assert "cannot write /dev/full" in r.stderr


def _skipped_run(tmp_path, capsys, fmt):
    from torchlint.checker import CheckOptions, run_check

    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 100\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 200)
    status = run_check(CheckOptions(paths=[str(tmp_path / "big.py")], use_cache=False, output_format=fmt))
    assert status == 1
    return capsys.readouterr().out


def test_json_and_gitlab_report_a_file_not_checked(tmp_path, capsys):
    entries = json.loads(_skipped_run(tmp_path, capsys, "json"))
    assert [(e["code"], e["name"]) for e in entries] == [("TL000", "not-checked")]
    assert entries[0]["filename"].endswith("big.py") and "file too large" in entries[0]["message"]
    gitlab = json.loads(_skipped_run(tmp_path, capsys, "gitlab"))
    assert [e["check_name"] for e in gitlab] == ["TL000"]


def test_sarif_reports_a_file_not_checked_as_a_notification(tmp_path, capsys):
    run = json.loads(_skipped_run(tmp_path, capsys, "sarif"))["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "file too large" in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("big.py")


def test_junit_file_not_checked_is_an_error_not_a_passing_case(tmp_path, capsys):
    root = ET.fromstring(_skipped_run(tmp_path, capsys, "junit"))
    assert root.get("errors") == "1"
    cases = root.findall(".//testcase")
    assert len(cases) == 1 and cases[0].find("error") is not None


@pytest.mark.parametrize(
    "content, needle",
    [
        ("file-timeout = 1e300\n", "at most 86400 seconds"),
        ('target-torch = "2.x"\n', "invalid value '2.x' for `target-torch`"),
        ("deep = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("deep = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "nested too deeply"),
    ],
)
def test_configuration_edge_values_are_clear_errors(tmp_path, content, needle):
    from torchlint.config import ConfigError, load_config
    from torchlint.rules import all_rules

    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\n" + content)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("(", r"\(")):
        load_config(None, str(tmp_path), all_rules())


def test_configuration_edge_value_exits_2_without_internal_error(run, tmp_path):
    (tmp_path / "a.py").write_text(CE_BUG)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nfile-timeout = 1e300\n")
    r = run("--no-cache", "a.py")
    assert r.returncode == 2 and "internal error" not in r.stderr and "file-timeout" in r.stderr


def test_all_in_per_file_ignores_ignores_every_rule(tmp_path, capsys):
    from torchlint.checker import CheckOptions, run_check

    (tmp_path / "a.py").write_text(CE_BUG)
    (tmp_path / "b.py").write_text(CE_BUG)
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nper-file-ignores = {"a.py" = ["ALL"]}\n')
    assert run_check(CheckOptions(paths=[str(tmp_path)], use_cache=False, output_format="json")) == 1
    assert [os.path.basename(e["filename"]) for e in json.loads(capsys.readouterr().out)] == ["b.py"]


def test_relative_cache_dir_is_the_configuration_files_and_clean_removes_it(run, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ncache-dir = "build/lint-cache"\n')
    (tmp_path / "build").mkdir()
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "a.py").write_text(CE_BUG)
    r = run("a.py", cwd=sub)
    assert r.returncode == 1
    assert (tmp_path / "build" / "lint-cache").is_dir() and not (sub / "build").exists()
    r = run("clean", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "build" / "lint-cache").exists()
