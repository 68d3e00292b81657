"""Notebook fixes: an edit lands in the cell that holds its target, and a fix that would leave a cell
that does not parse on its own is not written (the user is told)."""
import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import torchlint.notebook as notebook
from torchlint.engine import Settings
from torchlint.notebook import lint_notebook, mask_cell, read_notebook
from torchlint.rules import all_rules

IMPORTS = "import torch\nimport torch.nn as nn"
VALIDATE = (
    "def validate(model, loader):\n"
    "    model.eval()\n"
    "    correct = 0\n"
    "    for x, y in loader:\n"
    "        correct += (model(x).argmax(1) == y).sum().item()\n"
    "    return correct"
)
TRAIN = (
    "model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for x, y in loader:\n"
    "    optimizer.zero_grad()\n"
    "    nn.functional.cross_entropy(model(x), y).backward()\n"
    "    optimizer.step()"
)
PREDICT = "logits = model(x[:1])\nprint(logits.argmax(1))"


def make(*cells):
    nb = new_notebook()
    nb.cells = [new_code_cell(c) if isinstance(c, str) else c for c in cells]
    return nbformat.writes(nb) + "\n"


def fix(text, unsafe=False, codes=None):
    rules = [r for r in all_rules() if codes is None or r.CODE in codes]
    return lint_notebook("nb.ipynb", text, Settings(rules, {}, True, True, unsafe, False))


def sources(text):
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in json.loads(text)["cells"]]


def test_decorator_for_a_function_in_a_later_cell_goes_into_that_cell():
    text = make(IMPORTS, new_markdown_cell("## Validation"), VALIDATE)
    res = fix(text)
    assert not res.errors, res.errors
    cells = sources(res.fixed_source)
    assert cells[0] == IMPORTS  # the cell before is untouched
    assert cells[2] == "@torch.no_grad()\n" + VALIDATE
    for cell in read_notebook(res.fixed_source).cells:  # every cell parses alone
        mask_cell(cell)
        compile(cell.python, "cell", "exec")


def test_statements_inserted_at_the_top_of_a_cell_stay_in_that_cell():
    text = make(IMPORTS, TRAIN, PREDICT)
    res = fix(text, unsafe=True, codes={"TL106"})  # TL106's fix: `model.eval()` before the prediction
    assert not res.errors, res.errors
    cells = sources(res.fixed_source)
    assert cells[1] == TRAIN  # the training cell does not get the prediction's `model.eval()`
    assert cells[2].startswith("model.eval()\n")
    assert "logits = model(x[:1])" in cells[2]


def test_a_fix_that_leaves_a_cell_unparsable_is_not_written(monkeypatch):
    real = notebook.split_fixed

    def misplaced(nb, program, fixed):
        # what a line diff without cell ownership did: the decorator at the end of the cell before
        out = real(nb, program, fixed)
        out[0] = out[0] + "@torch.no_grad()\n"
        out[1] = out[1].replace("@torch.no_grad()\n", "")
        return out

    monkeypatch.setattr(notebook, "split_fixed", misplaced)
    res = fix(make(IMPORTS, VALIDATE))
    assert res.fixed_source is None
    assert any("fixes not written" in e and "cell 1" in e for e in res.errors), res.errors
    assert "TL105" in [d.code for d in res.diagnostics]  # the finding is still reported


def test_cells_are_parsed_with_their_magics_masked():
    from torchlint.notebook import unparsable_cells

    nb = read_notebook(make("%matplotlib inline\nimport torch", "x = 1"))
    assert unparsable_cells(nb, {0: "%matplotlib inline\nimport torch\n", 1: "@torch.no_grad()\n"}) == [1]
