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

    for name in ("_settings", "_active", "_decide", "_named", "_noqa"):
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


# -- the settings of a file come from the file's project, wherever the tools are started ------------------

PROJECT_FILE = """\
import torch


def restore(path):
    return torch.load(path)


def scores(x):
    return torch.log(torch.softmax(x, dim=-1))
"""


@pytest.fixture
def pinned_project(tmp_path):
    """A project pinning an old torch in requirements.txt, with a [tool.torchlint] table that excludes a
    folder and turns a code off for another; the folder around it has no configuration."""
    proj = tmp_path / "parent" / "proj"
    for sub in ("scripts", "generated"):
        (proj / sub).mkdir(parents=True)
    (proj / "requirements.txt").write_text("torch==1.13.1\nnumpy\n")
    (proj / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-exclude = ["generated"]\nper-file-ignores = { "scripts/*" = ["TL202"] }\n'
    )
    for name in ("train.py", "scripts/s.py", "generated/g.py"):
        (proj / name).write_text(PROJECT_FILE)
    return proj


def _findings_cli(cwd, target, proj):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--output-format", "json", target])
    finally:
        os.chdir(old)
    assert res.exit_code in (0, 1), res.output
    return {(os.path.relpath(os.path.join(cwd, d["filename"]), proj), d["location"]["row"], d["code"],
             d["message"]) for d in json.loads(res.stdout)}


def _findings_flake8(cwd, target, proj, capsys):
    from flake8.main.application import Application

    capsys.readouterr()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        Application().run(["--jobs", "1", "--isolated", "--select", "TL", target])
    finally:
        os.chdir(old)
    got = set()
    for line in capsys.readouterr().out.splitlines():
        path, row, _col, rest = line.split(":", 3)
        code, message = rest.strip().split(" ", 1)
        got.add((os.path.relpath(os.path.join(cwd, path), proj), int(row), code, message))
    return got


def test_flake8_and_cli_find_the_project_from_the_file(pinned_project, capsys):
    proj = pinned_project
    parent = proj.parent
    places = [(proj, "."), (parent, "proj"), ("/", str(proj))]
    expected = None
    for cwd, target in places:
        cli = _findings_cli(str(cwd), target, str(proj))
        flake8 = _findings_flake8(str(cwd), target, str(proj), capsys)
        # flake8 shows no [*] fix marks; the findings are the same
        assert {(p, r, c, m.replace("[*] ", "")) for p, r, c, m in cli} == flake8, (cwd, cli, flake8)
        expected = cli if expected is None else expected
        assert cli == expected, (cwd, cli, expected)
    codes = {(p, c) for p, _, c, _ in expected}
    # torch 1.13 from requirements.txt: torch.load is unsafe there (TL501, not the 2.6 reading)
    assert ("train.py", "TL501") in codes
    assert (os.path.join("scripts", "s.py"), "TL202") not in codes  # per-file-ignores
    assert not any(p.startswith("generated") for p, _ in codes)  # the project's exclude


def test_server_finds_the_project_from_the_file(pinned_project):
    pytest.importorskip("pygls")
    from torchlint.lsp.documents import ConfigStore

    store = ConfigStore(all_rules())
    for name, excluded in (("train.py", False), ("generated/g.py", True)):
        config = store.resolve(str(pinned_project / name), "/")
        assert config.excluded is excluded
        if not excluded:
            assert config.settings.options["target-torch"] == "1.13"
    assert store.resolve(str(pinned_project / "scripts" / "s.py"), "/").ignore == ("TL202",)


# -- the same from separate processes, with no configuration file: the project is found from the file ------

VERSIONED = """\
import torch


def restore(path):
    return torch.load(path)


def make_scaler():
    return torch.cuda.amp.GradScaler()
"""


def _lines(text, cwd, proj):
    """(path relative to the project, line, code) of each `path:line:col: CODE ...` line."""
    got = set()
    for line in text.splitlines():
        parts = line.split(":", 3)
        if len(parts) < 4 or not parts[3].strip().startswith("TL"):
            continue
        got.add((os.path.relpath(os.path.join(cwd, parts[0]), proj), int(parts[1]), parts[3].split()[0]))
    return got


def test_flake8_and_cli_agree_from_the_project_its_parent_and_root(tmp_path, run):
    """A project that declares an old torch only in its requirements.txt, inside a folder named `build`
    (a default exclude, were paths read from the folder the tool runs in) whose own requirements.txt
    declares a new torch: from every folder both tools read the project's torch version (TL501, the
    unsafe `torch.load` of torch 1.13, and not TL509, the deprecation of torch 2.4) and lint the file."""
    import subprocess
    import sys

    parent = tmp_path / "build"
    proj = parent / "proj"
    proj.mkdir(parents=True)
    (parent / "requirements.txt").write_text("torch>=2.6\n")
    (proj / "requirements.txt").write_text("torch==1.13.1\nnumpy\n")
    (proj / "train.py").write_text(VERSIONED)
    expected = {("train.py", 5, "TL501")}
    for cwd, target in ((proj, "train.py"), (parent, "proj"), (parent, os.path.join("proj", "train.py")),
                        ("/", str(proj)), ("/", str(proj / "train.py"))):
        cli = run("check", "--no-cache", "--jobs", "1", "--force-exclude", target, cwd=cwd)
        assert cli.returncode == 1, (cwd, target, cli.stdout, cli.stderr)
        flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--jobs", "1", "--select", "TL", target],
                                cwd=str(cwd), capture_output=True, text=True, timeout=300)
        assert flake8.returncode == 1, (cwd, target, flake8.stdout, flake8.stderr)
        assert _lines(cli.stdout, str(cwd), str(proj)) == expected, (cwd, target, cli.stdout)
        assert _lines(flake8.stdout, str(cwd), str(proj)) == expected, (cwd, target, flake8.stdout)
    # the same file under the parent's own declaration: torch 2.6, so TL509 and not TL501
    (proj / "requirements.txt").unlink()
    cli = run("check", "--no-cache", "--jobs", "1", str(proj), cwd="/")
    assert _lines(cli.stdout, "/", str(proj)) == {("train.py", 9, "TL509")}, cli.stdout


def test_a_file_without_configuration_gets_its_excludes_from_its_own_project(tmp_path, monkeypatch):
    """The resolver of the command line matches excludes from the root of the project found from the
    file (the nearest folder with a project marker or a dependency declaration), not from the folder the
    command runs in; only a file in no project at all falls back to that folder."""
    from torchlint.projects import ConfigResolver

    proj = tmp_path / "build" / "proj"
    proj.mkdir(parents=True)
    (proj / "train.py").write_text(VERSIONED)
    monkeypatch.chdir(tmp_path)
    assert ConfigResolver(all_rules()).for_file(str(proj / "train.py")).root == str(tmp_path)  # no project
    (proj / "requirements.txt").write_text("torch==1.13.1\n")
    for cwd in ("/", tmp_path, tmp_path / "build", proj):
        monkeypatch.chdir(cwd)
        found = ConfigResolver(all_rules()).for_file(str(proj / "train.py"))
        assert found.root == str(proj) and not found.excluded, cwd
        assert found.config.options["target-torch"] == "1.13"
    # the project's own `build` folder is excluded from anywhere
    (proj / "build").mkdir()
    (proj / "build" / "gen.py").write_text(VERSIONED)
    for cwd in ("/", tmp_path, proj / "build"):
        monkeypatch.chdir(cwd)
        found = ConfigResolver(all_rules()).for_file(str(proj / "build" / "gen.py"))
        assert found.root == str(proj) and found.excluded, cwd


def test_the_three_hosts_build_the_same_engine_settings(pinned_project, monkeypatch):
    """The command line, the language server and the flake8 plugin give a file the same engine settings
    (rules, options with the declared torch version, fixable codes): one builder,
    :func:`torchlint.file_settings.engine_settings`."""
    pytest.importorskip("pygls")
    import torchlint.workers
    from torchlint.checker import CheckOptions, _settings
    from torchlint.flake8_plugin import TorchLintPlugin
    from torchlint.lsp.documents import ConfigStore
    from torchlint.projects import ConfigResolver

    (pinned_project / "pyproject.toml").write_text('[tool.torchlint]\nunfixable = ["TL202"]\n')
    path = str(pinned_project / "train.py")
    monkeypatch.chdir("/")
    rules = all_rules()
    cli = _settings(CheckOptions(paths=[path]), ConfigResolver(rules).for_path(path), rules)
    lsp = ConfigStore(rules).resolve(path, "/").settings
    seen = []
    monkeypatch.setattr(torchlint.workers, "lint_text",
                        lambda task, text, settings, *rest: seen.append(settings) or torchlint.workers.FileResult(path))
    for name in ("_settings", "_active", "_decide", "_named", "_noqa"):
        monkeypatch.setattr(TorchLintPlugin, name, getattr(TorchLintPlugin, name))
    TorchLintPlugin._settings, TorchLintPlugin._active, TorchLintPlugin._decide = None, True, None
    list(TorchLintPlugin(None, path, (pinned_project / "train.py").read_text().splitlines(keepends=True)).run())
    (flake8,) = seen
    for settings in (lsp, flake8):
        assert [r.CODE for r in settings.rules] == [r.CODE for r in cli.rules]
        assert settings.options == cli.options and settings.options["target-torch"] == "1.13"
        assert settings.fixable == cli.fixable and "TL202" not in cli.fixable
        assert settings.parse_errors == cli.parse_errors
