"""A `#` inside a string is not a comment: `--add-noqa`, TL517's fix, the editor's "Suppress" and the
noqa filter read the comment from the token stream, never a `# noqa` in a string literal (issue 39,
item 5)."""
import pytest

from torchlint.engine import Settings, lint_source
from torchlint.noqa_edit import add_codes, comments
from torchlint.rules import all_rules

LINE = 's = "# noqa: X1"; y = F.cross_entropy(torch.softmax(x, dim=-1), t)'
SOURCE = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x, t):\n    " + LINE + "\n    return s, y\n"


def test_add_codes_appends_a_comment_after_a_string_that_looks_like_one():
    col = comments(LINE + "\n")
    assert col == {}  # the line has no comment at all
    assert add_codes(LINE, ["TL103"], None) == LINE + "  # noqa: TL103"
    line = 's = "# noqa: X1"  # noqa: E501'
    assert add_codes(line, ["TL103"], comments(line + "\n")[1][0]) == 's = "# noqa: X1"  # noqa: E501, TL103'


def test_a_noqa_inside_a_string_suppresses_nothing():
    rules = [r for r in all_rules() if r.CODE == "TL103"]
    text = SOURCE.replace('"# noqa: X1"', '"# noqa: TL103"')
    res = lint_source("m.py", text, Settings(rules=rules))
    assert [d.code for d in res.diagnostics] == ["TL103"]


def test_add_noqa_edits_the_comment_and_not_the_string(tmp_path, capsys):
    from torchlint.checker import CheckOptions, run_check

    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    assert run_check(CheckOptions(paths=[str(path)], use_cache=False, add_noqa=True)) == 0
    text = path.read_text()
    assert '"# noqa: X1"' in text and text.count("# noqa: TL103") == 1
    assert text.splitlines()[5].endswith("  # noqa: TL103")
    capsys.readouterr()
    assert run_check(CheckOptions(paths=[str(path)], use_cache=False)) == 0  # the finding is silenced


def test_editor_suppress_edits_the_comment_and_not_the_string():
    pytest.importorskip("pygls")
    from torchlint.lsp.documents import apply_edits, noqa_edit

    text = 's = "# noqa: X1"; y = f(a)\n'
    edit = noqa_edit(text, 0, "TL103")
    assert apply_edits(text, [edit]) == 's = "# noqa: X1"; y = f(a)  # noqa: TL103\n'
    text = 's = "# noqa: X1"; y = f(a)  # noqa: E501\n'
    assert apply_edits(text, [noqa_edit(text, 0, "TL103")]) == 's = "# noqa: X1"; y = f(a)  # noqa: E501, TL103\n'
