r"""Bytes outside an edit are the input's, byte for byte (issue 39, item 8): a CR-only file keeps its
last `\r`, a form feed before an edited statement stays, a notebook cell mixing line breaks keeps them,
and escapes such as `\/` in a notebook's JSON are not rewritten."""
import json

import pytest

from conftest import CE_BUG
from torchlint.checker import CheckOptions, run_check

FIXED_LINE = "return F.cross_entropy(logits, target)"


def _fix(path):
    return run_check(CheckOptions(paths=[str(path)], fix=True, use_cache=False, quiet=True))


@pytest.mark.parametrize(
    "name, before",
    [
        ("cr-only", CE_BUG.replace("\n", "\r")),
        ("form feed before the function", CE_BUG.replace("def loss_fn", "\x0cdef loss_fn")),
        ("form feed line in the body", CE_BUG.replace("    return", "    \x0c\n    return")),
        ("form feed on the edited line", CE_BUG.replace("    return", "\x0c    return")),
        ("crlf", CE_BUG.replace("\n", "\r\n")),
    ],
)
def test_only_the_edited_span_changes(tmp_path, name, before):
    path = tmp_path / "m.py"
    path.write_bytes(before.encode())
    assert _fix(path) == 0
    after = path.read_bytes().decode()
    assert FIXED_LINE in after
    old = "return F.cross_entropy(torch.softmax(logits, dim=-1), target)"
    assert after == before.replace(old, FIXED_LINE)


def _notebook(source_lines, extra_line):
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
              "source": source_lines + [extra_line]}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_notebook_cell_with_mixed_line_breaks_keeps_them(tmp_path):
    lines = [ln + ("\r\n" if k % 2 else "\n") for k, ln in enumerate(CE_BUG.rstrip("\n").split("\n"))]
    text = _notebook(lines[:-1], lines[-1].rstrip("\r\n"))
    path = tmp_path / "nb.ipynb"
    path.write_text(text)
    assert _fix(path) == 0
    got = "".join(json.loads(path.read_text())["cells"][0]["source"])
    want = "".join(lines).rstrip("\r\n").replace("return F.cross_entropy(torch.softmax(logits, dim=-1), target)", FIXED_LINE)
    assert got == want


def test_notebook_escapes_outside_the_edit_are_kept(tmp_path):
    lines = [ln + "\n" for ln in CE_BUG.rstrip("\n").split("\n")]
    text = _notebook(["url = 'a/b'\n"] + lines[:-1], lines[-1].rstrip("\n"))
    text = text.replace("'a/b'", "'a\\/b \\u00e9'")
    path = tmp_path / "nb.ipynb"
    path.write_text(text)
    assert _fix(path) == 0
    after = path.read_text()
    assert "'a\\/b \\u00e9'" in after and FIXED_LINE in after
    old = "return F.cross_entropy(torch.softmax(logits, dim=-1), target)"
    assert after == text.replace(old, FIXED_LINE)
