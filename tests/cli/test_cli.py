"""The command line as a user runs it: a subprocess per call."""
import json
import sys

import pytest

from conftest import CE_BUG, CLEAN, TRAIN_BUG


@pytest.mark.slow
def test_findings_exit_1_with_ruff_style_lines(run, project):
    r = run("pkg")
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stdout.splitlines() if ": TL" in line]
    assert lines == [
        "pkg/losses.py:6:28: TL103 [*] "
        "`torch.softmax(logits, dim=-1)` passed to cross-entropy: `CrossEntropyLoss` applies log-softmax itself, "
        "pass the logits",
        "pkg/train.py:8:9: TL101 [*] "
        "Training loop calls `backward()` and `step()` but never clears gradients; they accumulate across iterations",
    ]
    assert "Found 2 errors." in r.stdout


@pytest.mark.slow
def test_clean_exit_0_and_default_path(run, tmp_path):
    (tmp_path / "ok.py").write_text(CLEAN)
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "All checks passed!" in r.stdout
    r = run("check", ".")
    assert r.returncode == 0


@pytest.mark.slow
def test_fix_without_check_word_then_clean(run, project):
    r = run("--fix", "pkg")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 fixed, 0 remaining" in r.stdout
    assert "optimizer.zero_grad()\n        loss.backward()" in (project / "pkg" / "train.py").read_text()
    assert "F.cross_entropy(logits, target)" in (project / "pkg" / "losses.py").read_text()
    assert (project / "pkg" / "clean.py").read_text() == CLEAN
    before = {p.name: p.read_text() for p in (project / "pkg").iterdir()}
    r = run("--fix", "pkg")
    assert r.returncode == 0
    assert {p.name: p.read_text() for p in (project / "pkg").iterdir()} == before


@pytest.mark.slow
def test_fix_does_not_touch_unreported_files(run, project):
    clean = project / "pkg" / "clean.py"
    stamp = clean.stat().st_mtime_ns
    run("--fix", "pkg")
    assert clean.stat().st_mtime_ns == stamp


@pytest.mark.slow
def test_diff_shows_without_writing(run, project):
    r = run("--diff", "pkg")
    assert r.returncode == 1
    assert "+        optimizer.zero_grad()\n" in r.stdout
    assert "--- pkg/train.py" in r.stdout
    assert (project / "pkg" / "train.py").read_text() == TRAIN_BUG


@pytest.mark.slow
def test_unsafe_fix_needs_flag(run, tmp_path):
    src = (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def f(out, y):\n    p = out.softmax(dim=1)\n    print(p.max())\n    return F.cross_entropy(p, y)\n"
    )
    (tmp_path / "m.py").write_text(src)
    r = run("m.py")
    assert "TL103 `p`, assigned" in r.stdout  # no [*]: the fix is unsafe
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option" in r.stdout
    r = run("--fix", "m.py")
    assert r.returncode == 1 and (tmp_path / "m.py").read_text() == src
    r = run("--fix", "--unsafe-fixes", "m.py")
    assert r.returncode == 0, r.stdout
    assert "    p = out\n" in (tmp_path / "m.py").read_text()


@pytest.mark.slow
def test_stdin(run, tmp_path):
    r = run("-", "--stdin-filename", "pkg/train.py", stdin=TRAIN_BUG)
    assert r.returncode == 1
    assert r.stdout.startswith("pkg/train.py:8:9: TL101")
    r = run("--fix", "-", "--stdin-filename", "train.py", stdin=TRAIN_BUG)
    assert r.returncode == 0
    assert "optimizer.zero_grad()" in r.stdout
    assert "1 fixed" in r.stderr
    r = run("-", stdin=CLEAN)
    assert r.returncode == 0


@pytest.mark.slow
def test_select_ignore_prefixes(run, project):
    assert "TL101" not in run("--select", "TL103", "pkg").stdout
    assert "TL103" not in run("--ignore", "TL103", "pkg").stdout
    r = run("--select", "TL1", "--ignore", "TL101", "pkg")
    assert "TL103" in r.stdout and "TL101" not in r.stdout
    r = run("--ignore", "TL1", "--extend-select", "TL101", "pkg")
    assert "TL101" in r.stdout and "TL103" not in r.stdout
    r = run("--select", "ALL", "--ignore", "TL1", "pkg")
    assert "TL101" not in r.stdout and "TL103" not in r.stdout
    r = run("--select", "TL101,TL103", "pkg")
    assert "TL101" in r.stdout and "TL103" in r.stdout


def test_unknown_selector_is_usage_error(run, project):
    r = run("--select", "XYZ9", "pkg")
    assert r.returncode == 2
    assert "XYZ9" in r.stderr


def test_bad_option_is_usage_error(run, project):
    r = run("--output-format", "xml", "pkg")
    assert r.returncode == 2


@pytest.mark.slow
def test_json_output(run, project):
    r = run("--output-format", "json", "pkg")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert [d["code"] for d in data] == ["TL103", "TL101"]
    ce = data[0]
    assert ce["filename"] == "pkg/losses.py"
    assert ce["location"] == {"row": 6, "column": 28}
    assert ce["end_location"]["row"] == 6
    assert ce["fix"]["applicability"] == "safe"
    edit = ce["fix"]["edits"][0]
    assert edit["content"] == "logits"
    assert edit["location"] == {"row": 6, "column": 28}
    tl101 = data[1]
    assert tl101["fix"]["edits"][0]["content"].strip() == "optimizer.zero_grad()"


@pytest.mark.slow
def test_sarif_output(run, project):
    data = json.loads(run("--output-format", "sarif", "pkg").stdout)
    assert data["version"] == "2.1.0"
    run0 = data["runs"][0]
    rules = {r["id"]: r for r in run0["tool"]["driver"]["rules"]}
    assert {"TL101", "TL103"} <= set(rules)
    assert "helpUri" not in rules["TL101"]  # no docs-url: no link (never a machine-local path)
    assert "What it does" in rules["TL101"]["help"]["text"]
    assert rules["TL101"]["help"]["markdown"].startswith("## What it does")
    results = run0["results"]
    assert {r["ruleId"] for r in results} == {"TL101", "TL103"}
    region = [r for r in results if r["ruleId"] == "TL101"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (8, 9)


@pytest.mark.slow
def test_github_output(run, project):
    r = run("--output-format", "github", "pkg")
    lines = r.stdout.splitlines()
    assert lines[1].startswith("::error file=pkg/train.py,line=8,col=9,")
    assert "title=torchlint (TL101)::" in lines[1]


@pytest.mark.slow
def test_statistics_and_exit_zero(run, project):
    r = run("--statistics", "pkg")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["1\tTL101\t[*] missing-zero-grad", "1\tTL103\t[*] softmax-before-cross-entropy"]
    assert run("--exit-zero", "pkg").returncode == 0


@pytest.mark.slow
def test_deterministic_across_hash_seeds_and_jobs(run, project):
    for i in range(6):
        (project / "pkg" / f"copy{i}.py").write_text(TRAIN_BUG + "\n" + CE_BUG.replace("import", "import", 1))
    outputs = {
        run("--no-cache", "-j", jobs, "pkg", env={"PYTHONHASHSEED": seed}).stdout
        for seed in ("0", "1", "12345")
        for jobs in ("1", "2")
    }
    assert len(outputs) == 1


@pytest.mark.slow
def test_rule_and_rules_commands(run, tmp_path):
    r = run("rule", "TL101")
    assert r.returncode == 0
    assert "# missing-zero-grad (TL101)" in r.stdout and "## Why is this bad?" in r.stdout
    assert run("rule", "TL999").returncode == 2
    r = run("rules")
    assert r.returncode == 0
    assert any(line.split()[:4] == ["TL101", "missing-zero-grad", "safe", "on"] for line in r.stdout.splitlines())
    data = json.loads(run("rules", "--output-format", "json").stdout)
    assert {"code": "TL103", "name": "softmax-before-cross-entropy"}.items() <= data[[d["code"] for d in data].index("TL103")].items()


def test_version_does_not_import_heavy_modules(run):
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("torchlint ")
    import subprocess

    probe = subprocess.run(
        [sys.executable, "-c", "import sys, torchlint.cli; print(sorted(m for m in ('libcst', 'torch') if m in sys.modules))"],
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "[]"


@pytest.mark.slow
def test_linter_never_imports_torch(run, project):
    import subprocess

    code = (
        "import sys; from torchlint.checker import CheckOptions, run_check;"
        "run_check(CheckOptions(paths=['pkg'], use_cache=False));"
        "print('torch' in sys.modules, file=sys.stderr)"
    )
    probe = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert probe.stderr.strip().splitlines()[-1] == "False"


@pytest.mark.slow
def test_cache_hit_and_clean(run, project):
    first = run("pkg")
    assert (project / ".torchlint_cache").is_dir()
    second = run("pkg")
    assert first.stdout == second.stdout
    # a changed file misses the cache
    (project / "pkg" / "train.py").write_text(CLEAN)
    assert "TL101" not in run("pkg").stdout
    r = run("clean")
    assert r.returncode == 0 and not (project / ".torchlint_cache").exists()
