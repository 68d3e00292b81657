"""The flake8 plugin turns a crashed rule or a file libcst cannot take into a flake8 error line."""
import ast
import subprocess
import sys

import pytest

import torchlint.rules
from conftest import TRAIN_BUG
from torchlint.flake8_plugin import TorchLintPlugin
from torchlint.rule import LintRule


class _Crashing(LintRule):
    CODE = "TL999"
    NAME = "crashing-rule"
    MESSAGE = "never"
    TRIGGERS = ("backward",)

    def visit_Call(self, node):
        raise RuntimeError("boom")


def _plugin_lines(source):
    plugin = TorchLintPlugin(ast.parse(source), "m.py", source.splitlines(keepends=True))
    return [(line, col, text) for line, col, text, _ in plugin.run()]


def test_crashed_rule_is_an_error_line(monkeypatch):
    real = torchlint.rules.all_rules
    monkeypatch.setattr(torchlint.rules, "all_rules", lambda: [_Crashing] + list(real()))
    lines = _plugin_lines(TRAIN_BUG)
    texts = [t for _, _, t in lines]
    assert any(t.startswith("TL101 ") for t in texts)
    assert any(t.startswith("TL000 ") and "TL999" in t and "boom" in t for t in texts)


def test_unexpected_exception_is_an_error_line(monkeypatch):
    import torchlint.workers

    def boom(*a, **k):
        raise ValueError("bad")

    # the plugin's call into the engine (through the watchdog's supervisor) raises
    monkeypatch.setattr(torchlint.workers, "lint_text", boom)
    assert _plugin_lines(TRAIN_BUG) == [(1, 0, "TL000 internal error: ValueError: bad")]


@pytest.mark.slow
def test_flake8_reports_a_file_libcst_cannot_take(tmp_path):
    (tmp_path / "chain.py").write_text(TRAIN_BUG + "y = " + " and ".join(["a"] * 8000) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TL", "chain.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert r.returncode == 1, r.stderr
    assert "TL000 too long to parse safely" in r.stdout
