"""The precedence table: where two rules recognise one mistake, the owner's finding stays when both run,
and either rule alone still reports it."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.engine import Settings, lint_source
from torchlint.precedence import PRECEDENCE, apply_precedence, owners_of
from torchlint.rule import Report
from torchlint.rules import all_rules

BY_CODE = {r.CODE: r for r in all_rules()}

# (owner, lower-ranked rule, code where both recognise the same log call or loop)
SHARED = [
    ("TL206", "TL202", """
        import torch

        def loss(labels, logits):
            return -torch.sum(labels * torch.log(torch.softmax(logits, dim=1)))
    """),
    ("TL206", "TL208", """
        import torch

        def loss(labels, logits):
            p = torch.softmax(logits, dim=1)
            return -torch.sum(labels * torch.log(p))
    """),
    ("TL207", "TL204", """
        import torch

        def loss(y, z):
            return -(y * torch.log(torch.sigmoid(z)) + (1 - y) * torch.log(1 - torch.sigmoid(z))).mean()
    """),
    ("TL202", "TL208", """
        import torch

        def score(x):
            return torch.log(torch.softmax(x, dim=-1))
    """),
    ("TL204", "TL208", """
        import torch

        def score(x):
            return torch.log(torch.sigmoid(x))
    """),
    ("TL204", "TL205", """
        import torch

        def f(z):
            return torch.log(1 + torch.exp(z))
    """),
    ("TL208", "TL205", """
        import torch

        def f(z):
            p = torch.softmax(z, dim=1)
            return torch.log(1 - p)
    """),
    ("TL301", "TL303", """
        import torch

        def f(x):
            z = torch.zeros(x.size(1))
            for i in range(x.size(0)):
                z += x[i]
            return z
    """),
]


def _codes(code, codes):
    rules = [BY_CODE[c] for c in codes]
    result = lint_source("case.py", textwrap.dedent(code), Settings(rules=rules, options={}))
    assert not result.errors
    return [d.code for d in result.diagnostics]


@pytest.mark.parametrize("owner, lower, code", SHARED, ids=[f"{o}-over-{l}" for o, l, _ in SHARED])
def test_the_owner_reports_a_shared_mistake_once(owner, lower, code):
    assert (owner, lower) in {(o, l) for o, l, _ in PRECEDENCE}
    assert lower in _codes(code, [lower]), "the lower-ranked rule alone reports it"
    assert owner in _codes(code, [owner]), "the owner alone reports it"
    both = _codes(code, [owner, lower])
    assert owner in both and lower not in both
    every = _codes(code, sorted(BY_CODE))
    assert owner in every and lower not in every


def _report(code, node, covers=()):
    return Report(code, node, "m", None, tuple(covers))


def test_a_finding_stays_when_the_owner_reported_another_node():
    log_a, log_b, loss = cst.parse_expression("a"), cst.parse_expression("b"), cst.parse_expression("s")
    lower = _report("TL202", log_a)
    kept = apply_precedence([_report("TL206", loss, covers=[log_b]), lower])
    assert lower in kept


def test_a_finding_on_a_covered_node_is_left_to_the_owner():
    log_a, loss = cst.parse_expression("a"), cst.parse_expression("s")
    owner = _report("TL206", loss, covers=[log_a])
    assert apply_precedence([_report("TL202", log_a), owner]) == [owner]


def test_an_unranked_pair_keeps_both_findings():
    node = cst.parse_expression("a")
    reports = [_report("TL202", node), _report("TL501", node)]
    assert apply_precedence(reports) == reports


def test_a_chain_is_decided_on_the_findings_as_reported():
    log_a, loss = cst.parse_expression("a"), cst.parse_expression("s")
    owner = _report("TL206", loss, covers=[log_a])
    # TL208 is below TL202 and TL206; TL202 is below TL206: only the loss finding stays, in any order
    reports = [_report("TL208", log_a), _report("TL202", log_a), owner]
    assert apply_precedence(reports) == [owner]
    assert apply_precedence(list(reversed(reports))) == [owner]


def test_the_table_names_rules_that_exist_and_has_no_cycle():
    for owner, lower, why in PRECEDENCE:
        assert owner in BY_CODE and lower in BY_CODE and owner != lower and why
    for code in BY_CODE:
        seen, todo = set(), [code]
        while todo:
            for owner in owners_of(todo.pop()):
                assert owner != code, f"{code} ranks above itself"
                if owner not in seen:
                    seen.add(owner)
                    todo.append(owner)


def test_a_fix_built_after_the_walk_is_built_only_for_a_kept_finding():
    log_a, loss = cst.parse_expression("a"), cst.parse_expression("s")
    built = []

    def build():
        built.append(1)
        return None

    kept = apply_precedence([Report("TL202", log_a, "m", build), _report("TL206", loss, covers=[log_a])])
    assert [r.code for r in kept] == ["TL206"] and not built
    kept = apply_precedence([Report("TL202", log_a, "m", build)])
    assert built == [1] and kept[0].fix is None


def test_a_fix_that_fails_to_build_leaves_the_finding_and_says_so():
    node = cst.parse_expression("a")

    def broken():
        raise ValueError("no fix")

    failures = []
    kept = apply_precedence([Report("TL208", node, "m", broken)], lambda rep, exc: failures.append((rep.code, str(exc))))
    assert [(r.code, r.fix) for r in kept] == [("TL208", None)]
    assert failures == [("TL208", "no fix")]
