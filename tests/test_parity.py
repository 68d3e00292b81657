"""One selection and one ``# noqa`` answer for the CLI, flake8 and the language server
(:mod:`torchlint.selection`): the same files, lines and codes under each selection, TL000 included."""
import json
import os

import pytest
from click.testing import CliRunner

import torchlint.rules
from torchlint.cli import main
from torchlint.rule import LintRule
from torchlint.rules import all_rules

OFF_DEFAULT = """\
import torch

x = torch.randn(3)
a = torch.log(torch.softmax(x, dim=0))
b = torch.log(torch.softmax(x, dim=0))  # NOQA: tl202
c = x.data
"""

FILES = {
    "offdef.py": OFF_DEFAULT.encode(),
    "syn.py": b"import torch\ndef f(:\n    pass\n",
    "binary.py": b"import torch\x00\nx = 1\n",
}

DEFAULT = {("offdef.py", 4, "TL202"), ("syn.py", 2, "TL000"), ("binary.py", 1, "TL000")}

# (CLI arguments, flake8 arguments, [tool.torchlint] lines for the server, expected findings)
CASES = {
    "default": ([], ["--select", "TL"], "", DEFAULT),
    "flake8-default-selection": ([], [], "", DEFAULT),
    "prefix-leaves-off-by-default-rules-off": (["--select", "TL5,TL2"], ["--select", "TL5,TL2"],
                                               'select = ["TL5", "TL2"]', DEFAULT),
    "full-code-enables-them": (["--extend-select", "TL503"], ["--select", "TL", "--extend-select", "TL503"],
                               'extend-select = ["TL503"]', DEFAULT | {("offdef.py", 6, "TL503")}),
    "narrow-selection-keeps-tl000": (["--select", "TL1"], ["--select", "TL1"], 'select = ["TL1"]',
                                     {("syn.py", 2, "TL000"), ("binary.py", 1, "TL000")}),
    "ignore-tl000": (["--ignore", "TL000"], ["--select", "TL", "--extend-ignore", "TL000"], 'ignore = ["TL000"]',
                     {("offdef.py", 4, "TL202")}),
}


@pytest.fixture(autouse=True)
def _plugin_state(monkeypatch):
    """flake8 runs in this process here: give the plugin's class-level settings back afterwards."""
    from torchlint.flake8_plugin import TorchLintPlugin

    for name in ("_options", "_active", "_decide", "_named", "_noqa", "_timeout"):
        monkeypatch.setattr(TorchLintPlugin, name, getattr(TorchLintPlugin, name))


@pytest.fixture
def tree(tmp_path):
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def _cli(folder, args):
    old = os.getcwd()
    os.chdir(folder)
    try:
        res = CliRunner().invoke(main, ["check", "--no-cache", "--isolated", "--output-format", "json", *args, "."])
    finally:
        os.chdir(old)
    assert res.exit_code in (0, 1), res.output
    return {(os.path.basename(d["filename"]), d["location"]["row"], d["code"]) for d in json.loads(res.stdout)}


def _flake8(folder, args, capsys):
    from flake8.main.application import Application

    capsys.readouterr()
    old = os.getcwd()
    os.chdir(folder)
    try:
        app = Application()
        app.run(["--jobs", "1", "--isolated", *args, "."])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    got = set()
    for line in out.splitlines():
        path, row, _col, rest = line.split(":", 3)
        code = rest.split()[0]
        if code.startswith("TL"):
            got.add((os.path.basename(path), int(row), code))
    return got


def _server(folder, toml):
    from torchlint.lsp.documents import ConfigStore, analyse

    if toml:
        (folder / "pyproject.toml").write_text("[tool.torchlint]\n" + toml + "\n")
    store = ConfigStore(all_rules())
    got = set()
    for name, data in FILES.items():
        path = str(folder / name)
        text = data.decode("utf-8")  # an editor holds text; NUL bytes included
        for d in analyse(path, text, 1, store.resolve(path, str(folder))).diagnostics:
            got.add((name, d.line, d.code))
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_flake8_and_server_agree(tree, case, capsys):
    cli_args, flake8_args, toml, expected = CASES[case]
    assert _cli(tree, cli_args) == expected
    assert _flake8(tree, flake8_args, capsys) == expected
    if case != "flake8-default-selection":
        pytest.importorskip("pygls")
        assert _server(tree, toml) == expected


def test_flake8_lowercase_noqa_and_disable_noqa(tree, capsys):
    assert ("offdef.py", 5, "TL202") not in _flake8(tree, ["--select", "TL"], capsys)  # `# NOQA: tl202`
    got = _flake8(tree, ["--select", "TL", "--disable-noqa"], capsys)
    assert ("offdef.py", 5, "TL202") in got
    assert ("offdef.py", 5, "TL202") in _cli(tree, ["--no-noqa"])


class _CrashingLogSumExp(LintRule):
    CODE = "TL203"
    NAME = "log-sum-exp-by-hand"
    MESSAGE = "never"
    TRIGGERS = ("torch",)

    def visit_Call(self, node):
        raise RuntimeError("boom")


@pytest.mark.parametrize("select", ["TL203", "TL2"])
def test_flake8_selection_never_hides_a_crashed_rule(tmp_path, monkeypatch, capsys, select):
    (tmp_path / "m.py").write_text(OFF_DEFAULT)
    real = torchlint.rules.all_rules
    monkeypatch.setattr(torchlint.rules, "all_rules", lambda: [_CrashingLogSumExp] + [r for r in real() if r.CODE != "TL203"])
    from flake8.main.application import Application

    monkeypatch.chdir(tmp_path)
    app = Application()
    app.run(["--jobs", "1", "--isolated", "--select", select, "m.py"])
    out = capsys.readouterr().out
    assert "TL000" in out and "boom" in out, out
    assert app.exit_code() == 1


def test_tl000_is_a_documented_code():
    runner = CliRunner()
    page = runner.invoke(main, ["rule", "tl000"])
    assert page.exit_code == 0 and "syntax-error (TL000)" in page.output and "--ignore TL000" in page.output
    listing = runner.invoke(main, ["rules", "--output-format", "json"])
    assert "TL000" in [r["code"] for r in json.loads(listing.output)]


def test_tl000_selectors_are_known(tree):
    # --ignore TL000 used to be "unknown rule selector"
    assert _cli(tree, ["--ignore", "TL000"]) == {("offdef.py", 4, "TL202")}
    assert {code for _, _, code in _cli(tree, ["--select", "TL000"])} <= {"TL000"}


def test_per_file_ignores_can_drop_tl000(tree):
    (tree / "pyproject.toml").write_text('[tool.torchlint]\nper-file-ignores = {"syn.py" = ["TL000"]}\n')
    old = os.getcwd()
    os.chdir(tree)
    try:
        res = CliRunner().invoke(main, ["check", "--no-cache", "--output-format", "json", "."])
    finally:
        os.chdir(old)
    got = {(os.path.basename(d["filename"]), d["code"]) for d in json.loads(res.stdout)}
    assert ("syn.py", "TL000") not in got and ("binary.py", "TL000") in got


def test_resolve_off_by_default_needs_the_full_code():
    from torchlint.selection import resolve

    rules = all_rules()
    assert "TL503" not in resolve(rules, (["ALL"], [], [])).codes
    assert "TL503" not in resolve(rules, (["TL5"], [], [])).codes
    assert "TL503" in resolve(rules, (None, ["TL503"], [])).codes
    # a configuration that ignores TL000, a command line that selects it again
    assert not resolve(rules, (None, [], ["TL0"])).parse_errors
    assert resolve(rules, (None, [], ["TL000"]), (None, ["TL000"], [])).parse_errors
    assert resolve(rules, (None, [], ["TL"]), (["TL1"], [], [])).parse_errors
