"""The README's rule table and TorchFix map are generated from the rules; they must not drift."""
from __future__ import annotations

import pathlib

from torchlint.rule_table import TORCHFIX, render_readme, summary
from torchlint.rules import all_rules

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tables_match_the_rules():
    text = README.read_text(encoding="utf-8")
    assert render_readme(text, all_rules()) == text, "run `python -m torchlint.rule_table README.md`"


def test_summaries_are_whole_sentences():
    for rule in all_rules():
        s = summary(rule)
        assert s and "…" not in s and "\n" not in s, rule.CODE
        assert s.count("`") % 2 == 0, f"{rule.CODE}: unbalanced backticks in {s!r}"


def test_every_torchfix_code_is_mapped_to_an_existing_rule_or_explained():
    codes = {r.CODE for r in all_rules()}
    assert len(TORCHFIX) == 16
    for tor, (target, what) in TORCHFIX.items():
        assert target in codes or (target == "—" and "no equivalent" in what), tor


def test_rule_pages_name_their_torchfix_codes():
    pages = {r.CODE: r.documentation() for r in all_rules()}
    for tor, (target, _) in TORCHFIX.items():
        if target in pages and target.startswith("TL5"):
            assert tor in pages[target], f"{target}'s page does not mention {tor}"
