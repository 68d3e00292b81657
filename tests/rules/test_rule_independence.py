"""Rules never silence each other: a rule leaves a finding to another rule only when that rule runs."""
from __future__ import annotations

import textwrap

import pytest

from case_lints import lint_once
from source_trees import tree_of
from torchlint.config import select_rules
from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = all_rules()
BY_CODE = {r.CODE: r for r in RULES}
CASES = [
    pytest.param(rule, case, id=f"{rule.CODE}-invalid-{i}") for rule in RULES for i, case in enumerate(rule.INVALID)
]


def _codes(code, rules, options=None):
    result = lint_once("case.py", textwrap.dedent(code), rules, options)
    assert not result.errors
    return [d.code for d in result.diagnostics]


@pytest.mark.parametrize("rule, case", CASES)
def test_invalid_case_reported_when_only_its_rule_is_selected(rule, case):
    only = select_rules(RULES, ([rule.CODE], [], []))
    assert [r.CODE for r in only] == [rule.CODE]
    assert _codes(case.code, only, case.options).count(rule.CODE) == case.count


@pytest.mark.parametrize("rule, case", CASES)
def test_invalid_case_reported_when_every_rule_runs(rule, case):
    """With every rule on, the mistake is still reported: by this rule, or by the one it defers to."""
    every = [r for r in RULES]
    assert _codes(case.code, every, case.options), f"{rule.CODE}: nothing reported with every rule on"


HANDWRITTEN_CE = """
import torch

def loss(labels, logits):
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=1)))
"""


def test_handwritten_cross_entropy_with_every_rule_is_tl206():
    assert _codes(HANDWRITTEN_CE, RULES) == ["TL206"]


@pytest.mark.parametrize(
    "layer",
    [(None, [], ["TL206"]), (["TL202"], [], []), (["TL2"], [], ["TL206"])],
    ids=["ignore-TL206", "select-TL202", "select-TL2-ignore-TL206"],
)
def test_handwritten_cross_entropy_without_tl206_is_tl202(layer):
    rules = select_rules(RULES, layer)
    assert "TL206" not in [r.CODE for r in rules]
    assert _codes(HANDWRITTEN_CE, rules) == ["TL202"]


def test_log_of_softmax_left_to_tl202_only_when_it_runs():
    code = """
import torch

def score(x):
    return torch.log(torch.softmax(x, dim=-1))
"""
    assert _codes(code, RULES) == ["TL202"]
    assert _codes(code, [BY_CODE["TL208"]]) == ["TL208"]


def test_log1p_of_sigmoid_left_to_tl204_only_when_it_runs():
    code = """
import torch

def f(z):
    return torch.log(1 - torch.sigmoid(z))
"""
    assert "TL205" not in _codes(code, RULES)
    result = lint_source("case.py", textwrap.dedent(code), Settings(rules=[BY_CODE["TL205"]]))
    assert [d.code for d in result.diagnostics] == ["TL205"]
    assert result.diagnostics[0].fix is None  # log1p(-sigmoid(z)) is still -inf for large z: no fix


def test_binary_cross_entropy_log_left_to_tl207_only_when_it_runs():
    code = """
import torch

def bce(z, y):
    p = torch.sigmoid(z)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
"""
    assert "TL207" in _codes(code, RULES)
    assert "TL204" not in _codes(code, RULES)
    assert "TL204" in _codes(code, [BY_CODE["TL204"]])


# -- facts are recorded by binders in the walk, never by a rule ------------------------------------
def _rule_modules():
    import inspect

    for rule in RULES:
        module = inspect.getmodule(rule)
        yield rule, tree_of(inspect.getsourcefile(module), inspect.getsource(module))


def _records_facts(tree) -> list:
    """Lines where ``<something>_facts(...).record(...)`` (or ``facts.record(...)``) is called."""
    import ast

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "record":
            receiver = node.func.value
            name = receiver.func if isinstance(receiver, ast.Call) else receiver
            spelled = name.id if isinstance(name, ast.Name) else getattr(name, "attr", "")
            if spelled.endswith("facts"):
                out.append(node.lineno)
    return out


def test_no_rule_records_facts():
    recording = {rule.CODE: lines for rule, tree in _rule_modules() if (lines := _records_facts(tree))}
    assert not recording, f"rules recording facts for others (give the facts a binder): {recording}"


def test_the_record_scan_finds_a_recording():
    import ast

    tree = ast.parse("def visit_Call(self, node):\n    evaluation_facts(self.ctx).record(node)\n")
    assert _records_facts(tree) == [2]


def test_a_rule_reading_evaluation_facts_names_their_binder():
    from torchlint.families.training.evaluation import EvaluationBinder

    for rule, tree in _rule_modules():
        import ast

        reads = any(isinstance(n, ast.Name) and n.id == "evaluation_facts" for n in ast.walk(tree))
        assert reads == (EvaluationBinder in rule.BINDERS), rule.CODE


def test_a_failing_binder_silences_only_its_readers(monkeypatch):
    from torchlint.families.training import evaluation

    case = BY_CODE["TL105"].INVALID[0]

    def broken(self, call):
        raise RuntimeError("boom")

    monkeypatch.setattr(evaluation.EvaluationFacts, "record", broken)
    settings = Settings(rules=[BY_CODE["TL105"], BY_CODE["TL101"]])
    result = lint_source("case.py", textwrap.dedent(case.code), settings)
    assert "TL105" not in [d.code for d in result.diagnostics]
    assert any("evaluation-facts failed" in e and "boom" in e for e in result.errors), result.errors
