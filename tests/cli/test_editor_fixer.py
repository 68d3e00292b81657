"""`torchlint --fix -` as an editor fixer: the buffer on stdin, the fixed text on stdout, nothing else there."""

import pytest
from conftest import TRAIN_BUG, CE_BUG


@pytest.mark.slow
def test_stdin_fixer_prints_fixed_text_and_uses_the_files_configuration(run, project):
    (project / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL101"]\n')
    both = TRAIN_BUG + "\n\n" + CE_BUG
    res = run("--fix", "--exit-zero", "--quiet", "--stdin-filename", "pkg/train.py", "-", stdin=both)
    assert res.returncode == 0, res.stderr
    assert "F.cross_entropy(logits, target)" in res.stdout  # TL103 fixed
    assert "zero_grad" not in res.stdout  # TL101 is ignored by the configuration found from pkg/
    assert res.stdout == both.replace("F.cross_entropy(torch.softmax(logits, dim=-1), target)", "F.cross_entropy(logits, target)")
    clean = run("--fix", "--exit-zero", "--quiet", "--stdin-filename", "pkg/train.py", "-", stdin=res.stdout)
    assert clean.returncode == 0 and clean.stdout == res.stdout
