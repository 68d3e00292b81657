"""Evaluation by behaviour through the project's own helpers in other files (TL105): an output handed to
a function of another module whose code takes no gradient (a box suppression, a rescaling) stays an
evaluation, with a safe fix; one handed to a function that backpropagates is training.  Imports of the
form ``pkg.mod`` resolve from the folder above the outermost package even without a project marker."""
from __future__ import annotations

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RUN = """import torch
from {pkg}.post import tidy


def detect(model, image):
    model.eval()
    out = model(image)
    out = tidy(out, 0.5)
    return out.numpy()
"""

POST_PLAIN = """import torch


def tidy(pred, thres):
    keep = pred[..., 0] > thres
    return pred[keep]
"""

POST_GRAD = """import torch


def tidy(pred, thres):
    pred.sum().backward()
    return pred.detach()
"""


@pytest.mark.parametrize("post, expected", [(POST_PLAIN, [("TL105", "safe")]), (POST_GRAD, [])])
@pytest.mark.parametrize("marker", [True, False])
def test_an_output_through_a_helper_of_another_file(tmp_path, post, expected, marker):
    if marker:
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    pkg = tmp_path / "detector"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "post.py").write_text(post)
    run = pkg / "run.py"
    run.write_text(RUN.format(pkg="detector"))
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    got = [(d.code, "none" if d.fix is None else d.fix.applicability) for d in found if d.code == "TL105"]
    assert got == expected
