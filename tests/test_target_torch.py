"""`target-torch`: the torch version the version-aware TL5 rules assume, read from the project when "auto"."""
from __future__ import annotations

import pytest

from torchlint.analysis.torch_version import declared_torch, lower_bound, target_version

LOAD = "import torch\n\nstate = torch.load('ckpt.pt')\n"


@pytest.mark.parametrize(
    "requirement, expected",
    [
        ("torch>=2.1,<2.5", (2, 1)),
        ("torch==1.13.1", (1, 13)),
        ("torch ~= 2.4.0", (2, 4)),
        ("torch[opt]>=2.0; python_version>'3.8'", (2, 0)),
        ("torch<3", None),
        ("torch", None),
        ("torchvision>=0.10", None),
        ("pytorch-lightning>=2.0", None),
    ],
)
def test_lower_bound(requirement, expected):
    assert lower_bound(requirement) == expected


def test_target_version_defaults_to_the_2_6_behaviour():
    assert target_version("auto") == (2, 6)
    assert target_version("1.13") == (1, 13)


def test_declared_torch_from_pyproject_and_requirements(tmp_path):
    (tmp_path / "pkg").mkdir()
    assert declared_torch(str(tmp_path / "pkg")) is None
    (tmp_path / "requirements.txt").write_text("numpy\ntorch>=2.2  # cpu\n")
    assert declared_torch(str(tmp_path / "pkg")) == (2, 2)
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\ndependencies=['torch>=1.12']\n")
    assert declared_torch(str(tmp_path / "pkg")) == (1, 12)


def test_auto_reads_the_projects_requirement(run, tmp_path):
    (tmp_path / "train.py").write_text(LOAD)
    # no declared requirement: torch >= 2.6, where weights_only=True is the default
    assert "TL501" not in run("--select", "TL501", "train.py").stdout
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\ndependencies=['torch>=2.1']\n")
    r = run("--select", "TL501", "train.py")
    assert "TL501" in r.stdout and "torch 2.1" in r.stdout
    # an explicit value wins over the declared requirement
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname='x'\ndependencies=['torch>=2.1']\n\n[tool.torchlint]\ntarget-torch = '2.6'\n"
    )
    assert "TL501" not in run("--select", "TL501", "train.py").stdout


def test_bad_target_is_a_config_error(run, tmp_path):
    (tmp_path / "train.py").write_text(LOAD)
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\ntarget-torch = 'latest'\n")
    r = run("train.py")
    assert r.returncode == 2 and "target-torch" in r.stderr
