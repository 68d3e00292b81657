"""The options and output formats a ruff user reaches for: each as a user runs it (a subprocess)."""
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import pytest

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from conftest import CE_BUG, CLEAN, TRAIN_BUG

OLD_LOAD = "import torch\n\n\ndef restore(model, path):\n    model.load_state_dict(torch.load(path))\n"


def notebook(*sources):
    cells = [new_markdown_cell("# title")] + [new_code_cell(s) for s in sources]
    return nbformat.writes(new_notebook(cells=cells))


def test_check_help_lists_the_options(run):
    r = run("check", "--help")
    assert r.returncode == 0
    for option in ("--extend-ignore", "--watch", "--show-settings", "--show-files", "--add-noqa", "--output-file",
                   "--fix-only", "--exit-non-zero-on-fix", "--no-unsafe-fixes", "--per-file-ignores",
                   "--target-torch", "KEY=VALUE", "junit", "gitlab", "full", "concise"):
        assert option in r.stdout, option


def test_config_key_value_overrides_and_a_path_still_works(run, tmp_path):
    (tmp_path / "load.py").write_text(OLD_LOAD)
    assert run("--no-cache", "load.py").returncode == 0  # target-torch auto: 2.6, where the default is safe
    r = run("--no-cache", "--config", 'target-torch="2.0"', "load.py")
    assert r.returncode == 1 and "TL501" in r.stdout and "torch 2.0" in r.stdout, r.stdout + r.stderr
    r = run("--no-cache", "--target-torch", "2.4", "load.py")
    assert r.returncode == 1 and "torch 2.4" in r.stdout
    # several overrides, with spaces, and a selection
    r = run("--no-cache", "--config", 'target-torch = "2.4"', "--config", 'select = ["TL2"]', "load.py")
    assert r.returncode == 0, r.stdout
    # a file still works, and an override wins over it
    (tmp_path / "cfg.toml").write_text('target-torch = "2.4"\n')
    assert run("--no-cache", "--config", "cfg.toml", "load.py").returncode == 1
    r = run("--no-cache", "--config", "cfg.toml", "--config", "target-torch='2.6'", "load.py")
    assert r.returncode == 0, r.stdout
    # errors name what was wrong
    r = run("--config", "missing.toml", "load.py")
    assert r.returncode == 2 and "config file not found: missing.toml" in r.stderr
    r = run("--config", "no-such-key = 1", "load.py")
    assert r.returncode == 2 and "unknown key `no-such-key`" in r.stderr
    r = run("--config", 'target-torch = "2.0', "load.py")
    assert r.returncode == 2 and "KEY = VALUE" in r.stderr


def test_per_file_ignores_on_the_command_line(run, project):
    r = run("--no-cache", "--per-file-ignores", "pkg/train.py:TL1", "pkg")
    assert r.returncode == 1
    assert "TL101" not in r.stdout and "pkg/losses.py:6:28: TL103" in r.stdout
    r = run("--no-cache", "--per-file-ignores", "pkg/*:TL101,TL103", "pkg")
    assert r.returncode == 0, r.stdout
    r = run("--per-file-ignores", "no-colon", "pkg")
    assert r.returncode == 2 and "PATTERN:CODES" in r.stderr


def test_output_file(run, project):
    r = run("--no-cache", "--output-format", "json", "--output-file", "out/report.json", "pkg")
    assert r.returncode == 2 and "does not exist" in r.stderr  # no folder is created for it
    (project / "out").mkdir()
    r = run("--no-cache", "--output-format", "json", "--output-file", "out/report.json", "pkg")
    assert r.returncode == 1 and r.stdout == ""
    data = json.loads((project / "out" / "report.json").read_text())
    assert sorted(d["code"] for d in data) == ["TL101", "TL103"]


def test_fix_only_and_exit_non_zero_on_fix(run, tmp_path):
    (tmp_path / "a.py").write_text(CE_BUG)
    # TL106 has no fix: it stays, and --fix-only does not report it
    (tmp_path / "b.py").write_text(
        "import torch\n\n\ndef evaluate(model, loader):\n    with torch.no_grad():\n"
        "        for x, y in loader:\n            print(model(x))\n"
    )
    r = run("--no-cache", "--fix-only", ".")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fixed 1 error." in r.stdout and "TL106" not in r.stdout
    assert "F.cross_entropy(logits, target)" in (tmp_path / "a.py").read_text()
    r = run("--no-cache", "--fix-only", ".")
    assert r.returncode == 0 and "No errors fixed." in r.stdout
    (tmp_path / "a.py").write_text(CE_BUG)
    (tmp_path / "b.py").unlink()
    r = run("--no-cache", "--fix", "--exit-non-zero-on-fix", ".")
    assert r.returncode == 1 and "1 fixed, 0 remaining" in r.stdout
    assert run("--no-cache", "--fix", "--exit-non-zero-on-fix", ".").returncode == 0


def test_unsafe_fixes_setting_and_no_unsafe_fixes(run, tmp_path):
    (tmp_path / "load.py").write_text(OLD_LOAD)
    (tmp_path / "torchlint.toml").write_text('target-torch = "2.4"\nunsafe-fixes = true\n')
    r = run("--no-cache", "load.py")
    assert "TL501 [*]" in r.stdout, r.stdout + r.stderr
    r = run("--no-cache", "--no-unsafe-fixes", "load.py")
    assert "TL501 [*]" not in r.stdout and "1 hidden fix" in r.stdout


def test_fixable_and_unfixable(run, project):
    (project / "torchlint.toml").write_text('unfixable = ["TL103"]\n')
    r = run("--no-cache", "pkg")
    assert "TL103 [*]" not in r.stdout and "TL101 [*]" in r.stdout, r.stdout + r.stderr
    r = run("--no-cache", "--fix", "pkg")
    assert (project / "pkg" / "losses.py").read_text() == CE_BUG
    assert "optimizer.zero_grad()" in (project / "pkg" / "train.py").read_text()
    (project / "torchlint.toml").write_text('fixable = ["TL2"]\n')
    r = run("--no-cache", "pkg")
    assert "[*]" not in r.stdout.split("Found")[0]
    (project / "torchlint.toml").write_text('fixable = ["TL999"]\n')
    r = run("--no-cache", "pkg")
    assert r.returncode == 2 and "TL999" in r.stderr


def test_show_files_and_show_settings(run, project):
    (project / "pkg" / "nb.ipynb").write_text(notebook("x = 1\n"))
    r = run("--show-files", "pkg")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["pkg/clean.py", "pkg/losses.py", "pkg/nb.ipynb", "pkg/train.py"]
    (project / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL103"]\neps = 1e-5\n')
    r = run("--show-settings", "--config", "target-torch = '2.2'", "pkg")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "pyproject.toml" in out and 'target-torch = "2.2"' in out and "eps = 1e-05" in out
    enabled = next(line for line in out.splitlines() if line.startswith("enabled = "))
    assert '"TL101"' in enabled and '"TL103"' not in enabled
    assert "loss-accumulation-fix = " in out and ".ipynb_checkpoints" in out


def test_add_noqa_merges_and_is_idempotent_notebooks_included(run, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa: E501"))
    (tmp_path / "losses.py").write_text(CE_BUG.replace("target)\n", "target)  # why\n"))
    (tmp_path / "clean.py").write_text(CLEAN)
    nb = notebook("import torch\nimport torch.nn.functional as F\n",
                  "%matplotlib inline\ndef f(logits, y):\n    return F.cross_entropy(torch.softmax(logits, dim=-1), y)\n")
    (tmp_path / "nb.ipynb").write_text(nb)
    r = run("--no-cache", "--add-noqa", ".")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Added 3 noqa directives." in r.stderr
    assert "        loss.backward()  # noqa: E501, TL101\n" in (tmp_path / "train.py").read_text()
    assert "target)  # why  # noqa: TL103\n" in (tmp_path / "losses.py").read_text()
    assert (tmp_path / "clean.py").read_text() == CLEAN
    cells = nbformat.reads((tmp_path / "nb.ipynb").read_text(), as_version=4).cells
    assert cells[2].source == ("%matplotlib inline\ndef f(logits, y):\n"
                               "    return F.cross_entropy(torch.softmax(logits, dim=-1), y)  # noqa: TL103\n")
    assert run("--no-cache", ".").returncode == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    r = run("--no-cache", "--add-noqa", ".")
    assert "Added 0 noqa directives." in r.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_add_noqa_leaves_a_line_that_ends_inside_a_string(run, tmp_path):
    src = 'import torch\n\n\ndef f(x, n):\n    return torch.log(torch.softmax(x, dim=-1)), """\n  text\n"""\n'
    (tmp_path / "s.py").write_text(src)
    assert "s.py:5:12: TL202" in run("--no-cache", "s.py").stdout
    r = run("--no-cache", "--add-noqa", "s.py")
    assert r.returncode == 2 and "Added 0 noqa directives." in r.stderr
    assert "s.py:5: no noqa added (the line ends inside a string" in r.stderr
    assert (tmp_path / "s.py").read_text() == src


def test_output_formats_full_concise_junit_gitlab(run, project):
    concise = run("--no-cache", "--output-format", "concise", "pkg")
    assert concise.stdout == run("--no-cache", "pkg").stdout == run("--no-cache", "--output-format", "text", "pkg").stdout
    full = run("--no-cache", "--output-format", "full", "pkg")
    assert full.returncode == 1
    assert (
        "pkg/losses.py:6:28: TL103 [*] `torch.softmax(logits, dim=-1)` passed to cross-entropy: `CrossEntropyLoss` "
        "applies log-softmax itself, pass the logits\n"
        "  |\n"
        "5 | def loss_fn(logits, target):\n"
        "6 |     return F.cross_entropy(torch.softmax(logits, dim=-1), target)\n"
        "  |                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ TL103\n"
        "  |\n"
        "  = help: "
    ) in full.stdout
    assert "Found 2 errors." in full.stdout
    junit = run("--no-cache", "--output-format", "junit", "pkg")
    root = ET.fromstring(junit.stdout)
    assert root.tag == "testsuites" and root.get("failures") == "2" and root.get("tests") == "3"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["torchlint.TL103"].get("classname") == "pkg/losses.py"
    assert cases["torchlint.TL103"].find("failure").get("message").endswith("passed to cross-entropy: `CrossEntropyLoss` applies log-softmax itself, pass the logits")
    assert "pkg/clean.py" in cases  # a file checked and clean is a passing case
    gitlab = json.loads(run("--no-cache", "--output-format", "gitlab", "pkg").stdout)
    assert [(g["check_name"], g["location"]["path"], g["location"]["lines"]["begin"]) for g in gitlab] == [
        ("TL103", "pkg/losses.py", 6), ("TL101", "pkg/train.py", 8)]
    assert len({g["fingerprint"] for g in gitlab}) == 2 and all(g["severity"] for g in gitlab)


def test_formats_give_notebook_cells_as_text_does(run, tmp_path):
    (tmp_path / "nb.ipynb").write_text(notebook(CE_BUG))
    text = run("--no-cache", "nb.ipynb").stdout
    assert "nb.ipynb:cell 2:6:28: TL103" in text
    full = run("--no-cache", "--output-format", "full", "nb.ipynb").stdout
    assert "nb.ipynb:cell 2:6:28: TL103" in full
    assert "6 |     return F.cross_entropy(torch.softmax(logits, dim=-1), target)\n" in full
    gitlab = json.loads(run("--no-cache", "--output-format", "gitlab", "nb.ipynb").stdout)
    assert "nb.ipynb:cell 2:6:28" in gitlab[0]["description"]
    junit = ET.fromstring(run("--no-cache", "--output-format", "junit", "nb.ipynb").stdout)
    assert "cell 2, line 6, col 28" in next(junit.iter("failure")).text


def test_notebook_checkpoints_and_default_excludes(run, tmp_path):
    (tmp_path / "nb.ipynb").write_text(notebook(CE_BUG))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb").write_text(notebook(CE_BUG))
    for folder in (".pytype", ".vscode", ".pyenv", ".git-rewrite"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(CE_BUG)
    r = run("--no-cache", ".")
    assert r.returncode == 1 and "Found 1 error." in r.stdout, r.stdout
    assert "checkpoint" not in r.stdout
    # named explicitly: linted, unless --force-exclude
    checkpoint = os.path.join(".ipynb_checkpoints", "nb-checkpoint.ipynb")
    assert "TL103" in run("--no-cache", checkpoint).stdout
    r = run("--no-cache", "--force-exclude", checkpoint)
    assert r.returncode == 0 and "TL103" not in r.stdout
    # --exclude replaces the defaults, --extend-exclude adds to them
    assert "Found 6 errors." in run("--no-cache", "--exclude", "nothing", ".").stdout
    assert "Found 1 error." in run("--no-cache", "--extend-exclude", "other", ".").stdout
    assert run("--no-cache", "--extend-exclude", "nb.ipynb", ".").returncode == 0


@pytest.mark.slow  # a watching torchlint process
def test_watch_lints_again_on_change(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "--no-cache", "--watch", "."], cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(text):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if text in "".join(seen):
                return True
            time.sleep(0.1)
        return False

    try:
        assert wait_for("All checks passed!")
        time.sleep(1.1)  # a later mtime than the first snapshot's
        (tmp_path / "a.py").write_text(CE_BUG)
        assert wait_for("a.py:6:28: TL103")
        assert proc.poll() is None  # still watching
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Starting linter in watch mode" in proc.stderr.read()
    r = subprocess.run([sys.executable, "-m", "torchlint", "--watch", "--diff", "."], cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--watch" in r.stderr


@pytest.mark.slow  # a watching torchlint process
def test_watch_fix_fixes_each_change_once(tmp_path):
    (tmp_path / "a.py").write_text(CLEAN)
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "--no-cache", "--watch", "--fix", "."],
                            cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(check):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if check():
                return True
            time.sleep(0.1)
        return False

    try:
        assert wait_for(lambda: "All checks passed!" in "".join(seen))
        time.sleep(1.1)  # a later mtime than the first snapshot's
        (tmp_path / "a.py").write_text(CE_BUG)
        assert wait_for(lambda: "softmax" not in (tmp_path / "a.py").read_text())  # TL103's safe fix
        assert wait_for(lambda: "Found 1 error (1 fixed, 0 remaining)." in "".join(seen))
        time.sleep(3)  # the fix the run wrote is not a change: no run after it
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.stderr.read().count("File change detected") == 1


def test_full_format_tabs_and_a_span_over_several_lines():
    from torchlint.engine import Diagnostic
    from torchlint.report import format_full

    lines = ["def f(x):", "\tif x:", "\t\treturn g(a,", "\t\t\tb,", "\t\t\tc,", "\t\t\td,", "\t\t\te,", "\t\t\tf)", "z = 1"]
    out = format_full([Diagnostic("m.py", 3, 10, "TL999", "msg", 8, 6)], False, lambda path, cell: lines)
    assert out == (
        "m.py:3:10: TL999 msg\n"
        "  |\n"
        "2 |     if x:\n"
        "3 |         return g(a,\n"
        "  |                ^^^^ TL999\n"
        "4 |             b,\n"
        ". | ...\n"
        "8 |             f)\n"
        "9 | z = 1\n"
        "  |\n"
        "\n"
    )
    one = format_full([Diagnostic("m.py", 3, 10, "TL999", "msg", 3, 12)], False, lambda path, cell: lines)
    assert "3 |         return g(a,\n  |                ^^ TL999\n" in one
    # a file that cannot be read: the finding's line alone
    assert format_full([Diagnostic("gone.py", 1, 1, "TL999", "msg")], False, lambda path, cell: None) == (
        "gone.py:1:1: TL999 msg\n\n")


def test_readme_configuration_documents_every_key():
    import pathlib
    import re

    from torchlint.config import CORE_KEYS, rule_options
    from torchlint.rules import all_rules

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    block = section.split("```toml", 1)[1].split("```", 1)[0]
    documented = set(re.findall(r"^([a-z][a-z0-9-]*) = ", block, re.MULTILINE))
    documented |= {"per-file-ignores"} if "[tool.torchlint.per-file-ignores]" in block else set()
    assert documented == set(CORE_KEYS) | set(rule_options(all_rules()))
