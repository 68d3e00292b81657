"""Property tests: whatever the program, the engine does not raise and fixes keep it parseable.

Example counts stay modest so the suite is quick; set TORCHLINT_PROPERTY_EXAMPLES to run more. The programs are
the same on every run (CI must not turn red by the draw); set TORCHLINT_PROPERTY_EXPLORE=1 to draw new ones.
"""
import os
import textwrap

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

RULES = all_rules()
EXAMPLES = int(os.environ.get("TORCHLINT_PROPERTY_EXAMPLES", "40"))
EXPLORE = bool(os.environ.get("TORCHLINT_PROPERTY_EXPLORE"))
# every rule's trigger words, so the prefilter lets every rule see the generated code
TRIGGERS = "# " + " ".join(sorted({t for r in RULES for t in r.TRIGGERS})) + "\n"
SNIPPETS = [textwrap.dedent(c if isinstance(c, str) else c.code) for r in RULES for c in list(r.VALID) + list(r.INVALID)]

PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not EXPLORE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _check(source: str) -> None:
    fixed = lint_source("gen.py", source, Settings(RULES, fix=True, unsafe_fixes=True))
    assert not fixed.errors, fixed.errors
    if fixed.fixed_source is not None:
        cst.parse_module(fixed.fixed_source)
        again = lint_source("gen.py", fixed.fixed_source, Settings(RULES, fix=True, unsafe_fixes=True))
        assert not again.errors
        assert again.fixed_source is None, "a second --fix changed the file again"
    plain = lint_source("gen.py", source, Settings(RULES))
    assert not plain.errors


def _grammar_programs():
    # hypothesmith builds its grammar (seconds) when the test first draws, not when the file is collected
    import hypothesmith

    return hypothesmith.from_grammar()


@PROPERTY
@given(st.deferred(_grammar_programs))
def test_generated_programs(source):
    _check(source + "\n" + TRIGGERS)


def _indent(code: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in code.splitlines(keepends=True))


@PROPERTY
@given(
    st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=4),
    st.sampled_from(["", "def wrapper():\n", "for _epoch in range(3):\n", "class Holder:\n"]),
)
def test_combined_rule_cases(parts, wrapper):
    body = "\n".join(parts)
    if wrapper:
        body = wrapper + _indent(body, "    ") + "\n    pass\n"
    try:
        cst.parse_module(body)
    except Exception:
        return  # an indented `from __future__` or similar: not a program
    _check(body)
