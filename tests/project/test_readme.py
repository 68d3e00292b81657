"""The README's set-up commands and claims; the rule summaries and the TorchFix map behind the generated
rule table (``docs/rules/index.md``, kept current by ``tests/test_docs.py``)."""
from __future__ import annotations

import pathlib

from torchlint.rule_table import TORCHFIX, summary
from torchlint.rules import all_rules

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


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


def test_ci_runs_the_readme_test_command():
    """The README's full test command is one line, and `.ci/run` runs it (with the self-lint between
    the install and pytest)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line for line in readme.splitlines() if line.startswith("python3 -m venv .venv && ") and "pytest" in line]
    assert len(lines) == 1, lines
    install, _, test = lines[0].partition(" && .venv/bin/python -m pytest")
    assert "--index-url https://download.pytorch.org/whl/cpu" in install
    assert install in ci and test == ' -m ""' and '.venv/bin/python -m pytest -m ""' in ci
    assert "\n.venv/bin/torchlint --no-cache .\n" in ci
    assert "\n.venv/bin/python -m pytest\n" in readme  # the fast subset


def test_gpu_claim_says_what_ran():
    """The README names the one GPU the CUDA cases ran on, and the table it points to holds that run."""
    text = README.read_text(encoding="utf-8")
    assert "on CPU and GPU" not in text
    assert "NVIDIA H100" in text and "No other GPU has been tried" in text
    runtime = (README.parent / "docs" / "runtime.md").read_text(encoding="utf-8")
    assert "device: cuda (NVIDIA H100 80GB HBM3)" in runtime and "all checks passed" in runtime

