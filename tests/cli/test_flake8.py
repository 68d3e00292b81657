"""flake8 reports exactly what the CLI reports: same files, lines, columns, codes and messages."""
import json
import subprocess
import sys

import pytest

from conftest import TRAIN_BUG


def _flake8(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TL", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.slow
def test_same_findings_as_cli(run, project):
    (project / "pkg" / "tabs.py").write_text(TRAIN_BUG.replace("    ", "\t"))
    cli = json.loads(run("--output-format", "json", "--no-cache", "pkg").stdout)
    expected = sorted((d["filename"], d["location"]["row"], d["location"]["column"], d["code"], d["message"]) for d in cli)
    out = _flake8(project, "pkg").stdout.splitlines()
    got = []
    for line in out:
        path, row, col, rest = line.split(":", 3)
        code, message = rest.strip().split(" ", 1)
        got.append((path, int(row), int(col), code, message))
    assert sorted(got) == expected
    assert len(expected) == 3


@pytest.mark.slow
def test_flake8_noqa_is_honoured(project):
    (project / "pkg" / "train.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL101"))
    out = _flake8(project, "pkg").stdout
    assert "TL101" not in out and "TL103" in out
    out = _flake8(project, "--disable-noqa", "pkg").stdout
    assert "TL101" in out


@pytest.mark.slow
def test_flake8_extend_ignore(project):
    out = _flake8(project, "--extend-ignore", "TL103", "pkg").stdout
    assert "TL103" not in out and "TL101" in out


def test_plugin_registered_under_tl_prefix():
    from importlib.metadata import entry_points

    eps = [ep for ep in entry_points(group="flake8.extension") if ep.name == "TL"]
    assert len(eps) == 1 and eps[0].value == "torchlint.flake8_plugin:TorchLintPlugin"
    assert not any(ep.name == "TOR" and ep.value.startswith("torchlint") for ep in entry_points(group="flake8.extension"))
