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
