"""The flake8 plugin costs nothing unless flake8 can report a TL code, and runs only what it can report."""
import subprocess
import sys

import pytest

from torchlint import flake8_plugin
from torchlint.rules import all_rules


def _flake8(cwd, *args, importtime=False):
    pre = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *pre, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _codes(out):
    return sorted({line.split(":", 3)[3].split()[0] for line in out.splitlines() if line.count(":") >= 3})


@pytest.mark.slow
@pytest.mark.parametrize("select", [["--select", "E,W,F"], ["--select", "E", "--extend-select", "W"], ["--ignore", "TL"]])
def test_nothing_imported_when_no_tl_code_is_selected(project, select):
    res = _flake8(project, *select, "pkg", importtime=True)
    assert "TL1" not in res.stdout
    imported = [line for line in res.stderr.splitlines() if "import time:" in line]
    assert imported, res.stderr[-2000:]
    assert not any("libcst" in line or "torchlint.rules" in line for line in imported)


@pytest.mark.slow
def test_rules_imported_when_tl_is_selected(project):
    res = _flake8(project, "--select", "TL", "pkg", importtime=True)
    assert "TL101" in res.stdout
    assert any("libcst" in line for line in res.stderr.splitlines())


@pytest.mark.slow
def test_selection_follows_flake8_options(project):
    everything = _codes(_flake8(project, "--select", "TL", "pkg").stdout)
    assert {"TL101", "TL103"} <= set(everything)
    assert _codes(_flake8(project, "--select", "TL103", "pkg").stdout) == ["TL103"]
    assert _codes(_flake8(project, "--select", "TL", "--ignore", "TL103", "pkg").stdout) == [
        c for c in everything if c != "TL103"
    ]
    assert "TL103" in _codes(_flake8(project, "--select", "E", "--extend-select", "TL10", "pkg").stdout)


def test_probe_codes_are_the_rule_codes():
    assert flake8_plugin._probe_codes() == sorted(r.CODE for r in all_rules())


def test_off_by_default_list_matches_the_rules():
    assert sorted(flake8_plugin.OFF_BY_DEFAULT) == sorted(r.CODE for r in all_rules() if not r.DEFAULT_ENABLED)
