"""TL517 unused-noqa with every rule as users run it: which `# noqa` codes suppressed something."""
import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from torchlint.engine import Settings, lint_source, FileTask
from torchlint.workers import lint_file
from torchlint.files import MAX_BYTES
from torchlint.notebook import lint_notebook
from torchlint.rules import all_rules

from conftest import CE_BUG

RULES = all_rules()
DEFAULT_ON = [r for r in RULES if r.DEFAULT_ENABLED]
WITH_TL517 = DEFAULT_ON + [r for r in RULES if r.CODE == "TL517"]

CE_LINE = "    return F.cross_entropy(torch.softmax(logits, dim=-1), target)"


def lint(code, rules=WITH_TL517, **kw):
    return lint_source("m.py", code, Settings(rules=rules, **kw))


def codes(result):
    return [(d.line, d.code, d.message) for d in result.diagnostics]


def test_used_code_is_silent_unused_one_is_reported_and_fixed():
    src = CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa: TL103, TL201")
    res = lint(src)
    assert codes(res) == [(6, "TL517", "Unused `noqa` directive (unused: `TL201`)")]
    fixed = lint(src, fix=True).fixed_source
    assert fixed == CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa: TL103")
    assert lint(fixed).diagnostics == []
    # the code alone and used: nothing
    assert lint(CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa: TL103")).diagnostics == []


def test_off_by_default_and_silent_without_noqa_processing():
    src = "x = 1  # noqa: TL101\n"
    assert lint(src, rules=DEFAULT_ON).diagnostics == []
    assert [d.code for d in lint(src).diagnostics] == ["TL517"]
    assert lint(src, noqa=False).diagnostics == []
    assert not any(r.DEFAULT_ENABLED for r in RULES if r.CODE == "TL517")


def test_codes_of_rules_that_did_not_run_are_not_judged():
    # TL503 is off by default: whether its noqa would suppress is unknown
    assert lint("x = 1  # noqa: TL503\n").diagnostics == []
    # turned off for this file by per-file-ignores: not judged either
    res = lint_file(FileTask("m.py", ("TL1",)), Settings(rules=WITH_TL517), MAX_BYTES, "x = 1  # noqa: TL101, TL201\n")
    assert [d.message for d in res.diagnostics] == ["Unused `noqa` directive (unused: `TL201`)"]


def test_a_prefix_counts_as_used_when_it_suppressed_a_family_member():
    src = CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa: TL1")
    assert lint(src).diagnostics == []
    res = lint(CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa: TL1, TL2"))
    assert [d.message for d in res.diagnostics] == ["Unused `noqa` directive (unused: `TL2`)"]


def test_a_noqa_naming_tl517_suppresses_it_and_other_tools_codes_stay():
    assert lint("x = 1  # noqa: TL101, TL517\n").diagnostics == []
    res = lint("x = 1  # noqa: E501, TL101  # reason\n", fix=True)
    assert res.fixed_source == "x = 1  # noqa: E501  # reason\n"


def test_bare_noqa_only_with_the_option():
    assert lint("x = 1  # noqa\n").diagnostics == []
    res = lint("x = 1  # noqa\n", options={"unused-noqa-bare": True}, fix=True)
    assert res.fixed_source == "x = 1\n"
    used = CE_BUG.replace(CE_LINE, CE_LINE + "  # noqa")
    assert lint(used, options={"unused-noqa-bare": True}).diagnostics == []


def test_fix_together_with_other_fixes_converges():
    src = CE_BUG + "\n\ndef g(x):\n    return x  # noqa: TL201\n"
    res = lint(src, fix=True)
    assert "F.cross_entropy(logits, target)" in res.fixed_source
    assert res.fixed_source.endswith("    return x\n")
    assert res.fixed_count == 2 and res.diagnostics == [] and not res.errors


def test_notebook_cell_positions_and_fix_stay_in_the_cell():
    nb = new_notebook(cells=[new_markdown_cell("# t"), new_code_cell("import torch\nx = 1  # noqa: TL201\nz = 0\n"),
                             new_code_cell("y = 2  # noqa: TL999, TL101\n")])
    text = nbformat.writes(nb)
    res = lint_notebook("nb.ipynb", text, Settings(rules=WITH_TL517))
    assert [(d.cell, d.line, d.col, d.code) for d in res.diagnostics] == [(2, 2, 8, "TL517"), (3, 1, 8, "TL517")]
    fixed = lint_notebook("nb.ipynb", text, Settings(rules=WITH_TL517, fix=True))
    cells = json.loads(fixed.fixed_source)["cells"]
    assert "".join(cells[1]["source"]) == "import torch\nx = 1\nz = 0\n"
    assert "".join(cells[2]["source"]) == "y = 2\n"
