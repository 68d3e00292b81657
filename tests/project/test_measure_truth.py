"""The ground-truth measurement (benchmarks/measure_truth.py) on a truth file and a JSON output made
here: matching within the line slack, per rule recall and precision, unlabelled findings, two runs,
and clear errors for malformed truth files."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "measure_truth.py"

TRUTH = """\
[[case]]
path = "train.py"
line = 10
rule = "TL101"
verdict = "true"
note = "no gradient reset in the loop"

[[case]]
path = "train.py"
line = 40
rule = "TL101"
verdict = "true"
note = "second loop, same mistake"

[[case]]
path = "train.py"
line = 60
rule = "TL101"
verdict = "near"
note = "gradient accumulation"

[[case]]
path = "nb.ipynb"
cell = 3
line = 2
rule = "TL105"
verdict = "true"
note = "sampling with autograd on"

[[case]]
path = "nb.ipynb"
cell = 4
line = 7
rule = "TL105"
verdict = "unsure"
note = "cannot tell"
"""


def _module():
    spec = importlib.util.spec_from_file_location("measure_truth", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def _finding(root, path, line, code, cell=None):
    return {"code": code, "message": f"{code} here", "filename": f"{root}/me+repo/{path}",
            "cell": cell, "location": {"row": line, "column": 1}}


@pytest.fixture
def tree(tmp_path):
    realcode = tmp_path / "realcode"
    (realcode / "me+repo").mkdir(parents=True)
    (realcode / "me+repo" / "train.py").write_text("import torch\n")
    (realcode / "me+repo" / "nb.ipynb").write_text("{}")
    (realcode / "other+repo").mkdir()
    truth = tmp_path / "truth"
    truth.mkdir()
    (truth / "me+repo.toml").write_text(TRUTH)
    before = [
        _finding(realcode, "train.py", 12, "TL101"),      # true case at 10: within the slack
        _finding(realcode, "train.py", 63, "TL101"),      # 3 lines from the near case: unlabelled
        _finding(realcode, "nb.ipynb", 2, "TL105", 3),    # true case in cell 3
        _finding(realcode, "nb.ipynb", 2, "TL105", 2),    # another cell: unlabelled
        _finding(realcode, "train.py", 10, "TL104"),      # another rule: unlabelled
        _finding(realcode, "nb.ipynb", 7, "TL105", 4),    # the unsure case: counted nowhere
        {"code": "TL101", "message": "m", "filename": f"{realcode}/other+repo/x.py",
         "cell": None, "location": {"row": 1, "column": 1}},   # no truth file: ignored
    ]
    after = [
        _finding("/elsewhere/realcode", "train.py", 40, "TL101"),   # another root still matches
        _finding("/elsewhere/realcode", "train.py", 11, "TL101"),
        _finding("/elsewhere/realcode", "train.py", 59, "TL101"),   # the near miss flagged
    ]
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    return tmp_path, realcode, truth


def test_counts_per_rule(tree):
    tmp, realcode, truth = tree
    m = _module()
    cases = m.load_truth(str(truth), str(realcode))
    assert len(cases) == 5
    before = m.measure(cases, m.load_findings(str(tmp / "before.json"), ["me+repo"]))
    assert (before["TL101"].true, before["TL101"].caught, before["TL101"].near) == (2, 1, 1)
    assert before["TL101"].near_flagged == 0 and before["TL101"].findings_true == 1
    assert [f.line for f in before["TL101"].unlabelled] == [63]
    assert (before["TL105"].true, before["TL105"].caught, before["TL105"].unsure) == (1, 1, 1)
    assert [(f.cell, f.line) for f in before["TL105"].unlabelled] == [(2, 2)]
    assert before["TL105"].findings_unsure == 1
    assert [f.line for f in before["TL104"].unlabelled] == [10]
    after = m.measure(cases, m.load_findings(str(tmp / "after.json"), ["me+repo"]))
    assert (after["TL101"].caught, after["TL101"].near_flagged) == (2, 1)
    assert (after["TL101"].findings_true, after["TL101"].findings_near) == (2, 1)
    assert after["TL105"].caught == 0 and after["TL105"].missed[0].cell == 3


def test_command_line_table(tree, capsys):
    tmp, realcode, truth = tree
    m = _module()
    assert m.main([str(realcode), str(truth), str(tmp / "before.json"), str(tmp / "after.json")]) == 0
    out = capsys.readouterr().out
    rows = {line.split(" | ")[0].strip("| *"): line for line in out.splitlines() if line.startswith("| TL")
            or line.startswith("| **all")}
    # rule | true | near | caught | recall | near flagged | precision | unlabelled  (before, then after)
    cells = lambda row: [c.strip(" *") for c in row.strip("|").split("|")]
    assert cells(rows["TL101"]) == ["TL101", "2", "1", "1", "0.50", "0", "1.00", "1",
                                    "2", "1.00", "1", "0.67", "0"]
    assert cells(rows["TL105"]) == ["TL105", "1", "0", "1", "1.00", "0", "1.00", "1",
                                    "0", "0.00", "0", "–", "0"]
    assert cells(rows["all"])[:8] == ["all", "3", "1", "2", "0.67", "0", "1.00", "3"]
    assert "before: unlabelled findings" in out and "me+repo/train.py:63" in out
    assert "after: near misses flagged" in out and "gradient accumulation" in out
    assert "other+repo" not in out


@pytest.mark.parametrize("edit, error", [
    (('verdict = "unsure"', 'verdict = "maybe"'), "`verdict` must be one of"),
    (('rule = "TL105"\nverdict = "true"', 'rule = "105"\nverdict = "true"'), "`rule` must be a code"),
    (("cell = 3\n", ""), "a notebook case needs `cell`"),
    (("line = 40", "line = 0"), "`line` must be a positive integer"),
    (('path = "train.py"\nline = 10', 'path = "missing.py"\nline = 10'), "does not exist"),
    (('note = "cannot tell"', 'note = "cannot tell"\nlne = 3'), "unknown keys"),
    (("[[case]]", "[[case]"), "truth"),
])
def test_bad_truth_file_is_a_clear_error(tree, capsys, edit, error):
    tmp, realcode, truth = tree
    (truth / "me+repo.toml").write_text(TRUTH.replace(*edit, 1))
    m = _module()
    assert m.main([str(realcode), str(truth), str(tmp / "before.json")]) == 2
    assert error in capsys.readouterr().err


@pytest.mark.slow  # --run runs torchlint
def test_run_uses_torchlint(tree, capsys):
    """--run lints the repositories with torchlint itself (here on a file with one TL101 mistake)."""
    tmp, realcode, truth = tree
    (realcode / "me+repo" / "train.py").write_text(
        "import torch\n\n\n\n\n\ndef fit(model, opt, loader):\n    for x, y in loader:\n"
        "        loss = model(x).sum()\n        loss.backward()\n        opt.step()\n"
    )   # the backward pass, where TL101 reports, is line 10: the first true case
    m = _module()
    assert m.main([str(realcode), str(truth), "--run", "--no-details"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| TL101"))
    assert [c.strip() for c in row.strip("|").split("|")][:5] == ["TL101", "2", "1", "1", "0.50"]


def test_a_case_of_a_lower_ranked_rule_is_caught_by_its_owner(tmp_path):
    """One mistake, one finding: a `log(1 - p)` labelled TL205 and TL208 is caught by TL208's finding
    (the precedence table gives it to TL208), but not by a finding of an unrelated rule."""
    realcode = tmp_path / "realcode"
    (realcode / "me+repo").mkdir(parents=True)
    (realcode / "me+repo" / "loss.py").write_text("import torch\n")
    truth = tmp_path / "truth"
    truth.mkdir()
    (truth / "me+repo.toml").write_text(
        '[[case]]\npath = "loss.py"\nline = 5\nrule = "TL205"\nverdict = "true"\nnote = "log(1 - p)"\n\n'
        '[[case]]\npath = "loss.py"\nline = 5\nrule = "TL208"\nverdict = "true"\nnote = "p a softmax"\n\n'
        '[[case]]\npath = "loss.py"\nline = 20\nrule = "TL205"\nverdict = "true"\nnote = "log(1 + x)"\n\n'
        '[[case]]\npath = "loss.py"\nline = 30\nrule = "TL205"\nverdict = "true"\nnote = "inside a BCE by hand"\n'
    )
    m = _module()
    cases = m.load_truth(str(truth), str(realcode))
    findings = m.parse_findings([_finding(realcode, "loss.py", 5, "TL208"), _finding(realcode, "loss.py", 20, "TL104"),
                                 _finding(realcode, "loss.py", 30, "TL207")], ["me+repo"])
    counts = m.measure(cases, findings)  # TL207 owns TL208, which owns TL205: a chain
    assert (counts["TL208"].caught, counts["TL205"].true, counts["TL205"].caught) == (1, 3, 2)
    assert [c.line for c in counts["TL205"].missed] == [20]
