"""Habits a ruff user brings: colour on a terminal (``--color``, ``NO_COLOR``, ``FORCE_COLOR``),
``--show-fixes``, a ``.torchlint.toml`` configuration file, ``torchlint rule NAME`` and ``rule --all``,
``torchlint server --stdio``.  In-process (click's runner): fast."""
import io
import os

import pytest
from click.testing import CliRunner

from torchlint.cli import main
from torchlint.report import Paint, use_colour
from torchlint.rules import all_rules

# TL202 has a safe fix, TL501 (torch 2.0 declared) an unsafe one, TL101 none here
SOURCE = """\
import torch


def restore(path):
    return torch.load(path)


def scores(x):
    return torch.log(torch.softmax(x, dim=-1))
"""

ESC = "\x1b["


@pytest.fixture
def proj(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("torch==2.0.1\n")
    (tmp_path / "train.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args, env=None, stdin=None):
    return CliRunner().invoke(main, list(args), env=env, input=stdin)


# -- colour ------------------------------------------------------------------------------------------
class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("choice, env, tty, expected", [
    ("auto", {}, True, True),  # a terminal
    ("auto", {}, False, False),  # a pipe or a file
    ("auto", {"NO_COLOR": "1"}, True, False),
    ("auto", {"NO_COLOR": ""}, True, True),  # empty: unset (no-color.org)
    ("auto", {"FORCE_COLOR": "1"}, False, True),
    ("auto", {"FORCE_COLOR": ""}, False, False),
    ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),  # NO_COLOR wins
    ("always", {"NO_COLOR": "1"}, False, True),  # the flag wins over the environment
    ("never", {"FORCE_COLOR": "1"}, True, False),
])
def test_when_output_is_coloured(choice, env, tty, expected):
    stream = _Tty() if tty else io.StringIO()
    assert use_colour(choice, stream, env) is expected


def test_colour_paints_paths_codes_and_fix_marks_like_ruff(proj):
    plain = invoke("check", "--no-cache", "--jobs", "1", "train.py", env={"NO_COLOR": None, "FORCE_COLOR": None})
    assert plain.exit_code == 1 and ESC not in plain.output  # not a terminal: plain
    assert "train.py:9:12: TL202 [*] " in plain.output
    for args, env in ((["--color", "always"], {"NO_COLOR": "1"}), ([], {"FORCE_COLOR": "1", "NO_COLOR": None})):
        res = invoke("check", "--no-cache", "--jobs", "1", *args, "train.py", env=env)
        assert res.exit_code == 1
        out = res.output
        assert "\x1b[1mtrain.py\x1b[0m\x1b[36m:\x1b[0m9\x1b[36m:\x1b[0m12\x1b[36m:\x1b[0m" in out
        assert "\x1b[1m\x1b[31mTL202\x1b[0m \x1b[36m[*]\x1b[0m `torch.log(" in out
        assert "\x1b[36m[*]\x1b[0m 1 fixable with the `--fix` option." in out
        # without the escapes, the very lines of the plain output
        import re

        assert re.sub(r"\x1b\[[0-9;]*m", "", out) == plain.output
    never = invoke("check", "--no-cache", "--jobs", "1", "--color", "never", "train.py", env={"FORCE_COLOR": "1"})
    assert never.output == plain.output


def test_colour_never_reaches_machine_formats_or_an_output_file(proj):
    for fmt in ("json", "sarif", "github", "junit", "gitlab"):
        res = invoke("check", "--no-cache", "--jobs", "1", "--color", "always", "--output-format", fmt, "train.py")
        assert ESC not in res.output, fmt
    for args in (["--color", "always"], []):
        res = invoke("check", "--no-cache", "--jobs", "1", *args, "-o", "out.txt", "train.py",
                     env={"NO_COLOR": None, "FORCE_COLOR": "1"})
        text = (proj / "out.txt").read_text()
        assert res.exit_code == 1 and "TL202" in text and ESC not in text, args


def test_full_format_colours_the_carets():
    from torchlint.engine import Diagnostic
    from torchlint.report import format_full

    d = Diagnostic("m.py", 1, 5, "TL202", "msg", 1, 8)
    text = format_full([d], False, lambda path, cell: ["y = abc"], Paint(True))
    assert "\x1b[1m\x1b[31m^^^ TL202\x1b[0m" in text
    assert ESC not in format_full([d], False, lambda path, cell: ["y = abc"])


# -- --show-fixes ------------------------------------------------------------------------------------
def test_show_fixes_lists_the_fixes_available(proj):
    res = invoke("check", "--no-cache", "--jobs", "1", "--show-fixes", "train.py")
    assert res.exit_code == 1
    assert ("2 fixes available:\n- train.py:\n"
            "    1 \u00d7 TL202 (log-of-softmax) [*]\n"
            "    1 \u00d7 TL501 (torch-load-without-weights-only) (unsafe: --unsafe-fixes)\n") in res.output
    res = invoke("check", "--no-cache", "--jobs", "1", "--show-fixes", "--unsafe-fixes", "train.py")
    assert "    1 \u00d7 TL501 (torch-load-without-weights-only) [*]\n" in res.output
    # without the flag, no list
    assert "available" not in invoke("check", "--no-cache", "--jobs", "1", "train.py").output


def test_show_fixes_lists_the_fixes_applied_per_file_and_code(proj):
    (proj / "other.py").write_text(SOURCE.replace("scores", "more_scores"))
    res = invoke("check", "--no-cache", "--jobs", "1", "--fix", "--show-fixes", "train.py", "other.py")
    assert res.exit_code == 1  # TL501 remains (its fix is unsafe)
    assert ("Fixed 2 errors:\n- other.py:\n    1 \u00d7 TL202 (log-of-softmax)\n"
            "- train.py:\n    1 \u00d7 TL202 (log-of-softmax)\n") in res.output
    assert "Found 4 errors (2 fixed, 2 remaining)." in res.output
    assert "log_softmax" in (proj / "train.py").read_text()
    # nothing left to fix: no list
    res = invoke("check", "--no-cache", "--jobs", "1", "--fix", "--show-fixes", "train.py")
    assert "Fixed" not in res.output


def test_show_fixes_from_stdin_goes_with_the_summary_to_stderr(proj):
    res = invoke("check", "--fix", "--show-fixes", "--stdin-filename", "train.py", "-", stdin=SOURCE)
    assert "log_softmax" in res.stdout and "Fixed" not in res.stdout
    assert "Fixed 1 error:\n- train.py:\n    1 \u00d7 TL202 (log-of-softmax)\n" in res.stderr


# -- .torchlint.toml ---------------------------------------------------------------------------------
def _target(folder):
    """The torch version the settings of a file in ``folder`` target, and the configuration file."""
    from torchlint.file_settings import SettingsResolver

    found = SettingsResolver(all_rules()).for_file(str(folder / "train.py"))
    return found.config.options.get("target-torch"), found.config.path and os.path.basename(found.config.path)


def test_dot_torchlint_toml_configures_like_the_pyproject_table(proj):
    (proj / ".torchlint.toml").write_text('select = ["TL2"]\n')
    res = invoke("check", "--no-cache", "--jobs", "1", "train.py")
    assert "TL202" in res.output and "TL501" not in res.output
    res = invoke("check", "--show-settings", "train.py")
    assert f"config-file = \"{proj / '.torchlint.toml'}\"" in res.output


def test_configuration_precedence(tmp_path):
    """In one folder `.torchlint.toml` wins over `torchlint.toml`, which wins over `pyproject.toml`; a
    nearer folder wins over a farther one; a `pyproject.toml` without a `[tool.torchlint]` table
    configures nothing and the search goes on up; `--config KEY=VALUE` wins over every file."""
    top, sub = tmp_path, tmp_path / "sub"
    sub.mkdir()
    (sub / "train.py").write_text(SOURCE)
    (top / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch = "2.1"\n')
    assert _target(sub) == ("2.1", "pyproject.toml")
    (top / "torchlint.toml").write_text('target-torch = "2.2"\n')
    assert _target(sub) == ("2.2", "torchlint.toml")
    (top / ".torchlint.toml").write_text('target-torch = "2.3"\n')
    assert _target(sub) == ("2.3", ".torchlint.toml")
    (sub / "pyproject.toml").write_text('[project]\nname = "sub"\n')  # no table: not a configuration
    assert _target(sub) == ("2.3", ".torchlint.toml")
    (sub / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch = "2.4"\n')  # nearer wins
    assert _target(sub) == ("2.4", "pyproject.toml")
    (sub / ".torchlint.toml").write_text('target-torch = "2.5"\n')
    assert _target(sub) == ("2.5", ".torchlint.toml")
    res = CliRunner().invoke(main, ["check", "--show-settings", "--config", 'target-torch = "1.13"', str(sub)])
    assert 'target-torch = "1.13"' in res.output


def test_dot_torchlint_toml_is_read_by_flake8_and_the_server_too(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    (tmp_path / ".torchlint.toml").write_text('target-torch = "2.0"\nper-file-ignores = { "train.py" = ["TL202"] }\n')
    from torchlint.flake8_plugin import _resolver

    found = _resolver().for_file(str(tmp_path / "train.py"))
    assert found.config.options["target-torch"] == "2.0" and found.ignore == ("TL202",)
    pytest.importorskip("pygls")
    from torchlint.lsp.documents import CONFIG_NAMES, ConfigStore

    assert ".torchlint.toml" in CONFIG_NAMES  # a change to it is picked up
    doc = ConfigStore(all_rules()).resolve(str(tmp_path / "train.py"), "/")
    assert doc.settings.options["target-torch"] == "2.0" and doc.ignore == ("TL202",)


def test_a_bad_dot_torchlint_toml_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".torchlint.toml").write_text("no-such-key = 1\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    res = invoke("check", "--no-cache", "a.py")
    assert res.exit_code == 2 and "unknown key `no-such-key` in" in res.stderr and ".torchlint.toml" in res.stderr


# -- torchlint rule ----------------------------------------------------------------------------------
def test_rule_by_name_is_the_rule_by_code():
    by_code = invoke("rule", "TL101")
    assert by_code.exit_code == 0 and by_code.output.startswith("# missing-zero-grad (TL101)\n")
    for spelling in ("missing-zero-grad", "MISSING-ZERO-GRAD", "missing_zero_grad", "tl101"):
        res = invoke("rule", spelling)
        assert res.exit_code == 0 and res.output == by_code.output, spelling
    res = invoke("rule", "missing-zero")
    assert res.exit_code == 2 and "unknown rule `missing-zero`" in res.output


def test_rule_all_shows_every_page_with_its_name():
    res = invoke("rule", "--all")
    assert res.exit_code == 0
    for rule in all_rules():
        assert f"# {rule.NAME} ({rule.CODE})\n" in res.output, rule.CODE
    assert "# not-linted (TL000)" in res.output or "(TL000)\n" in res.output
    assert invoke("rule").exit_code == 2  # neither a rule nor --all
    assert invoke("rule", "--all", "TL101").exit_code == 2


# -- torchlint server --stdio ------------------------------------------------------------------------
def test_server_accepts_stdio(monkeypatch):
    pytest.importorskip("pygls")
    import torchlint.lsp.server as server

    calls = []
    monkeypatch.setattr(server, "main", lambda: calls.append("started"))
    for args in (["server", "--stdio"], ["server"]):
        res = invoke(*args)
        assert res.exit_code == 0, res.output
    assert calls == ["started", "started"]
    assert "--stdio" in invoke("server", "--help").output


def test_help_names_the_new_options():
    out = invoke("check", "--help").output
    for option in ("--color", "[auto|always|never]", "NO_COLOR", "FORCE_COLOR", "--show-fixes", ".torchlint.toml"):
        assert option in out, option
    assert "or its name" in invoke("rule", "--help").output


# -- a checked folder without a project marker -------------------------------------------------------
NORM = '''
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm


class SyncBN(_BatchNorm):
    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training)
'''

NET = '''
import torch.nn as nn

from lib.norm import SyncBN


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.skipbn = SyncBN(c)

    def forward(self, x):
        return self.conv(x) + x
'''


def test_a_checked_folder_is_the_project_of_files_no_marker_claims(tmp_path, monkeypatch):
    # a downloaded copy of a repository: no `.git`, no `pyproject.toml`; `app/net.py` imports `lib.norm`
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "norm.py").write_text(NORM)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "net.py").write_text(NET)
    monkeypatch.chdir(tmp_path)
    whole = invoke("check", "--no-cache", "--jobs", "1", "--select", "TL602", ".")
    assert whole.exit_code == 1 and "app/net.py:11:9: TL602" in whole.output
    alone = invoke("check", "--no-cache", "--jobs", "1", "--select", "TL602", "app")  # `lib` is not in view
    assert alone.exit_code == 0, alone.output
