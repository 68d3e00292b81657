"""Tests generated from every rule's VALID and INVALID cases: adding a rule adds its tests."""
from __future__ import annotations

import re

import libcst as cst
import pytest

from case_lints import lint_once
from torchlint.rule import SAFE, UNSAFE, Valid
from torchlint.rules import all_rules

RULES = all_rules()

VALID_CASES = [
    pytest.param(rule, case if isinstance(case, Valid) else Valid(case), id=f"{rule.CODE}-valid-{i}")
    for rule in RULES
    for i, case in enumerate(rule.VALID)
]
INVALID_CASES = [
    pytest.param(rule, case, id=f"{rule.CODE}-invalid-{i}") for rule in RULES for i, case in enumerate(rule.INVALID)
]


def _lint(rule, code, options, **kw):
    return lint_once("case.py", code, [rule], options, **kw)


@pytest.mark.parametrize("rule, case", VALID_CASES)
def test_valid_case_is_silent(rule, case):
    # with every rule on, as users run it: a rule may leave a case to another rule that runs
    result = lint_once("case.py", case.code, RULES, case.options)
    assert not result.errors
    found = [d for d in result.diagnostics if d.code == rule.CODE]
    assert found == [], f"{rule.CODE} reported on a valid case: {found}"


@pytest.mark.parametrize("rule, case", INVALID_CASES)
def test_invalid_case_is_reported_and_fixed(rule, case):
    result = _lint(rule, case.code, case.options)
    assert not result.errors
    found = [d for d in result.diagnostics if d.code == rule.CODE]
    assert len(found) == case.count, f"expected {case.count} x {rule.CODE}, got {found}"
    if case.line is not None:
        assert found[0].line == case.line
    if case.col is not None:
        assert found[0].col == case.col
    if case.message is not None:
        assert case.message in found[0].message
    if case.fixed is None:
        assert all(d.fix is None for d in found), "a fix is offered but the case expects none"
        return
    assert all(d.fix is not None for d in found), "the case expects a fix but none is offered"
    expected = UNSAFE if case.unsafe else SAFE
    assert {d.fix.applicability for d in found} == {expected}
    fixed = _lint(rule, case.code, case.options, fix=True, unsafe_fixes=True)
    assert not fixed.errors
    assert fixed.fixed_source == case.fixed
    cst.parse_module(fixed.fixed_source)
    # the fixed code is clean for this rule, and fixing it again changes nothing
    again = _lint(rule, fixed.fixed_source, case.options, fix=True, unsafe_fixes=True)
    assert again.fixed_source is None
    assert [d for d in again.diagnostics if d.code == rule.CODE] == []
    if case.unsafe:
        safe_only = _lint(rule, case.code, case.options, fix=True)
        assert safe_only.fixed_source is None, "an unsafe fix was applied without --unsafe-fixes"


#: Public sources a page may cite (names a user can look up and open)
#: (a rule about the linter's own conventions cites the linter that set them: ruff's rule pages)
PUBLIC_SOURCES = ("PyTorch Cookbook", "Effective PyTorch", "https://pytorch.org/docs/", "https://docs.astral.sh/ruff/")

SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"]


@pytest.mark.parametrize("rule", RULES, ids=[r.CODE for r in RULES])
def test_rule_page(rule):
    assert re.fullmatch(r"TL\d{3}", rule.CODE)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.NAME)
    assert not rule.NAME.startswith(("no-", "ban-"))
    assert rule.MESSAGE and rule.TRIGGERS
    doc = rule.documentation()
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions), f"missing sections in {rule.CODE}"
    assert positions == sorted(positions)
    assert "shared/" not in doc and "seeds/" not in doc, "a page must not cite paths that do not ship"
    references = doc.partition("## References")[2]
    assert any(src in references for src in PUBLIC_SOURCES), "the page must cite a public source"
    assert rule.VALID and rule.INVALID
    assert len(rule.VALID) >= len(rule.INVALID) or len(rule.VALID) >= 3
    if rule.FIX_TITLE:
        assert rule.FIX_SAFETY in (SAFE, UNSAFE)
        assert any(c.fixed for c in rule.INVALID), "a rule with a fix must test it"
    module = rule.__module__.rsplit(".", 1)[-1]
    assert module.startswith(rule.CODE.lower() + "_")


def test_codes_unique_and_sorted():
    codes = [r.CODE for r in RULES]
    assert codes == sorted(set(codes))


#: rules whose message opens with the evidence, spelled elsewhere in the file, rather than with the reported
#: code: the optimizer or loop function that never clears (TL101), the model or layer whose output ends in
#: softmax/sigmoid (TL103, TL110, TL207), the model put in eval mode (TL107), the module no optimizer trains
#: (TL603).  Their quote is checked against the whole file; every other rule's against the lines of the finding.
QUOTES_EVIDENCE = frozenset({"TL101", "TL103", "TL107", "TL110", "TL207", "TL603"})


def _quoted_in(quote: str, source: str) -> bool:
    """Whether ``quote`` (a message's spelling of code: whitespace folded, ``...`` for a part left out)
    is spelled in ``source``."""
    parts = ["".join(p.split()) for p in quote.split("...")]
    pattern = ".*?".join(re.escape(p) for p in parts)
    return re.search(pattern, "".join(source.split()), re.S) is not None


def test_quoted_in():
    assert _quoted_in("torch.log(1. - x)", "y = torch.log(1. -\n    x)")
    assert _quoted_in("torch.log(torch.exp(a) + ...)", "torch.log(torch.exp(a) + torch.exp(b))")
    assert not _quoted_in("log(1 + x)", "torch.log(1. - x)")


@pytest.mark.parametrize("rule, case", INVALID_CASES)
def test_message_quotes_the_spelling_found(rule, case):
    """Every message is one line and its first quoted code is what the source spells (not a pattern
    such as `log(1 + x)` for `torch.log(1. - p)`)."""
    result = _lint(rule, case.code, case.options)
    for d in (d for d in result.diagnostics if d.code == rule.CODE):
        assert "\n" not in d.message and "\r" not in d.message, d.message
        quotes = re.findall(r"`([^`]+)`", d.message)
        assert quotes, f"the message quotes nothing: {d.message}"
        span = case.code if rule.CODE in QUOTES_EVIDENCE else _span(case.code, d)
        assert _quoted_in(quotes[0], span), f"`{quotes[0]}` is not in the finding's source `{span}`: {d.message}"


def _span(source: str, d) -> str:
    """The source lines a diagnostic covers, whole (a message may quote `def f` for a finding on `f`, or the
    parentheses around a reported expression)."""
    lines = source.splitlines(keepends=True)
    return "".join(lines[d.line - 1:(d.end_line or d.line)])


def test_span_is_the_reported_lines():
    class D:
        line, col, end_line, end_col = 2, 5, 3, 6
    assert _span("a = 1\nb = torch.log(\n  x) + y\nz\n", D) == "b = torch.log(\n  x) + y\n"


def test_a_case_linted_once_gives_each_check_its_own_result():
    """The checks above share one lint per case and settings: each gets a copy it may change, equal to a
    lint of its own."""
    import os

    from case_lints import case_folder
    from torchlint.engine import Settings, lint_source

    rule = RULES[0]
    case = rule.INVALID[0]
    first = _lint(rule, case.code, case.options)
    assert first.diagnostics
    first.diagnostics.clear()
    first.errors.append("changed by a caller")
    again = _lint(rule, case.code, case.options)
    alone = lint_source(os.path.join(case_folder(), "case.py"), case.code,
                        Settings(rules=[rule], options=dict(case.options)))
    assert again.diagnostics == alone.diagnostics and again.errors == alone.errors == []
