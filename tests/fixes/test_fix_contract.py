"""The per-rule fix table (docs/rules/index.md) is generated from the rules; runtime-targeting fixes follow the
project's declared dependencies."""
from pathlib import Path

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.fixes.project import project_declares_runtime, use_runtime
from torchlint.fixes.table import END, START, fix_safety_text, fix_table, replace_table
from torchlint.rules import all_rules

RULES_INDEX = Path(__file__).resolve().parents[2] / "docs" / "rules" / "index.md"


def test_docs_fix_table_is_generated_from_the_rules():
    text = RULES_INDEX.read_text(encoding="utf-8")
    assert START in text and END in text
    assert replace_table(text, fix_table(all_rules())) == text, (
        "docs/rules/index.md's fix table is stale: run `python -m torchlint.docs`"
    )


def test_every_rule_row_says_safe_unsafe_or_none_and_why():
    table = fix_table(all_rules()).splitlines()[2:]
    assert len(table) == len(all_rules())
    for rule, row in zip(all_rules(), table):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[0] == rule.CODE
        assert cells[1] in ("safe", "unsafe", "none")
        if rule.FIX_TITLE:
            assert fix_safety_text(rule), f"{rule.CODE} has a fix but no Fix safety section"
            assert cells[3] != "—"


@pytest.mark.parametrize(
    "name, text, declared",
    [
        ("pyproject.toml", '[project]\ndependencies = ["torch", "torchlint[runtime]>=0.1"]\n', True),
        ("pyproject.toml", '[project.optional-dependencies]\nfast = ["torchlint[cli, runtime]"]\n', True),
        ("pyproject.toml", '[project]\ndependencies = ["torch", "torchlint"]\n', False),
        ("pyproject.toml", '[project]\n# dependencies = ["torchlint[runtime]"]\n', False),
        ("requirements-dev.txt", "torch>=2\nTorchLint[runtime]==0.1.0\n", True),
        ("setup.cfg", "[options]\ninstall_requires =\n    torchlint[runtime]\n", True),
        ("environment.yml", "dependencies:\n  - pip:\n    - torchlint[runtime]\n", True),
        ("requirements.txt", "mytorchlint[runtime]\n", False),
    ],
)
def test_project_declares_runtime(tmp_path, name, text, declared):
    (tmp_path / name).write_text(text)
    sub = tmp_path / "pkg" / "models"
    sub.mkdir(parents=True)
    path = str(sub / "loss.py")
    assert project_declares_runtime(path) is declared
    assert use_runtime("auto", path) is declared
    assert use_runtime("runtime", path) is True
    assert use_runtime("torch", path) is False


GATHER = '''import torch


def gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output.append(tensor[i][indices[i]])
    return torch.stack(output)


def xent(labels, logits):
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=-1)))
'''


@pytest.mark.parametrize("declared", [True, False])
def test_runtime_fixes_follow_the_project(tmp_path, declared):
    deps = '"torch", "torchlint[runtime]"' if declared else '"torch"'
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'p'\ndependencies = [{deps}]\n")
    rules = [r for r in all_rules() if r.CODE in ("TL206", "TL302")]
    result = lint_source(str(tmp_path / "m.py"), GATHER, Settings(rules=rules, fix=True, unsafe_fixes=True))
    fixed = result.fixed_source
    assert fixed is not None and not result.errors
    if declared:
        # one import for both fixes, with the file's imports
        assert fixed.startswith("import torch\nfrom torchlint.runtime import batch_gather, softmax_cross_entropy\n") or \
            fixed.startswith("import torch\nfrom torchlint.runtime import softmax_cross_entropy, batch_gather\n")
        assert fixed.count("torchlint") == 1  # no second import
    else:
        assert "torchlint" not in fixed
        assert "torch.log_softmax(logits, dim=-1)" in fixed and "torch.arange(" in fixed
