"""Each notebook cell must parse on its own (issue 39, item 13): Jupyter runs cells one at a time, so two
cells that parse only when joined (a string opened in one, closed in the next) are each a TL000."""
import json

from torchlint.engine import Settings
from torchlint.notebook import lint_notebook
from torchlint.rules import all_rules


def _nb(*sources):
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": list(src)}
             for src in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_cells_that_parse_only_when_joined_are_reported():
    text = _nb(["import torch\n", 's = """opened here\n'], ['closed here"""\n', "x = torch.softmax(y, dim=0)\n"])
    res = lint_notebook("nb.ipynb", text, Settings(rules=all_rules()))
    assert sorted((d.cell, d.code) for d in res.diagnostics) == [(1, "TL000"), (2, "TL000")]


def test_cells_that_each_parse_are_one_program():
    text = _nb(["import torch\n", "def f(y):\n", "    return y\n"], ["x = f(torch.ones(2))\n"])
    res = lint_notebook("nb.ipynb", text, Settings(rules=all_rules()))
    assert not [d for d in res.diagnostics if d.code == "TL000"]
