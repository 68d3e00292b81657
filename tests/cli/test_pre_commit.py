"""The pre-commit manifest, and `pre-commit try-repo` against this repository."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

import pytest

from conftest import TRAIN_BUG

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

ROOT = Path(__file__).resolve().parents[2]


def test_manifest():
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"torchlint", "torchlint-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert "--force-exclude" in hook["entry"]
        assert hook["entry"].startswith("torchlint check")
        assert set(hook["types_or"]) == {"python", "pyi", "jupyter"}
    assert "--fix" in hooks["torchlint-fix"]["entry"] and "--fix" not in hooks["torchlint"]["entry"]


def _notebook(code):
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": code.splitlines(keepends=True)}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}, indent=1) + "\n"


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _repo_copy(tmp_path):
    """A committed copy of the project (try-repo installs what the repository holds)."""
    src = tmp_path / "torchlint-src"
    ignore = shutil.ignore_patterns(".git", ".venv", "*.egg-info", "__pycache__", ".torchlint_cache", "build")
    shutil.copytree(ROOT, src, ignore=ignore)
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "snapshot")
    return src


def test_try_repo_fails_on_finding_and_fixes(tmp_path):
    src = _repo_copy(tmp_path)
    target = tmp_path / "target"
    target.mkdir()
    _git(target, "init", "-q")
    (target / "train.py").write_text(TRAIN_BUG)
    (target / "train.ipynb").write_text(_notebook(TRAIN_BUG))
    (target / "pyproject.toml").write_text('[tool.torchlint]\nextend-exclude = ["vendored"]\n')
    (target / "vendored").mkdir()
    (target / "vendored" / "old.py").write_text(TRAIN_BUG)
    _git(target, "add", "-A")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pc-home"))
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(src)]

    check = subprocess.run(cmd + ["torchlint", "--all-files"], cwd=target, env=env, capture_output=True, text=True)
    out = check.stdout + check.stderr
    assert check.returncode == 1, out
    assert "train.py:8:9: TL101" in out
    assert "train.ipynb:cell 1:8:9: TL101" in out
    assert "vendored/old.py" not in out  # configured excludes apply to the names pre-commit passes

    fix = subprocess.run(cmd + ["torchlint-fix", "--all-files"], cwd=target, env=env, capture_output=True, text=True)
    assert fix.returncode == 1  # pre-commit fails a hook that modified files
    assert "optimizer.zero_grad()" in (target / "train.py").read_text()
    assert "optimizer.zero_grad()" in (target / "train.ipynb").read_text()
    assert (target / "vendored" / "old.py").read_text() == TRAIN_BUG

    again = subprocess.run(cmd + ["torchlint", "--all-files"], cwd=target, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
