"""The fix-proof harness (benchmarks/fix_proof.py) on a small tree made here: both fix runs change the
script and the notebook, every changed file compiles, every changed cell parses alone, a second run
changes nothing, and the originals are untouched."""
import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "fix_proof.py"

SCRIPT = """\
import torch


def validate(model, loader):
    model.eval()
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct
"""


def _harness():
    spec = importlib.util.spec_from_file_location("fix_proof", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "nbs").mkdir(parents=True)
    (tree / "validate.py").write_text(SCRIPT)
    nb = new_notebook()
    nb.cells = [new_code_cell("%matplotlib inline\nimport torch\nimport torch.nn as nn"),
                new_code_cell(SCRIPT.split("\n\n\n", 1)[1].strip())]
    (tree / "nbs" / "eval.ipynb").write_text(nbformat.writes(nb) + "\n")
    (tree / "validate.py").chmod(0o444)  # a read-only original: the copy is still fixed
    return tree


@pytest.mark.slow  # the harness runs torchlint four times
def test_fix_proof_on_a_small_tree(tmp_path):
    fix_proof = _harness()
    tree = _tree(tmp_path)
    before = fix_proof.snapshot(str(tree))
    for unsafe in (False, True):
        counts = fix_proof.prove([str(tree)], unsafe)
        assert counts["checked"] == 2
        assert (counts["files"], counts["notebooks"], counts["cells"]) == (1, 1, 1)
        assert counts["parse_failures"] == []
        assert counts["not_idempotent"] == []
        assert counts["internal_errors"] == []
    assert fix_proof.snapshot(str(tree)) == before


def test_fix_proof_finds_a_cell_that_does_not_parse_alone(tmp_path):
    fix_proof = _harness()
    nb = new_notebook()
    nb.cells = [new_code_cell("import torch"), new_code_cell("def f():\n    pass")]
    before = {"a.ipynb": (nbformat.writes(nb) + "\n").encode()}
    nb.cells[0].source = "import torch\n@torch.no_grad()"
    after = {"a.ipynb": (nbformat.writes(nb) + "\n").encode()}
    counts = fix_proof.check_changes(before, after)
    assert counts["cells"] == 1 and counts["parse_failures"] == ["a.ipynb:cell 1"]
