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


@pytest.mark.slow
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


# -- every file a project declares torch in: one test per source, each failing before it was read ----------
def _declared_in(tmp_path, name: str, text: str):
    from torchlint.analysis.torch_version import declared_torch_source

    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    (tmp_path / "pkg").mkdir(exist_ok=True)
    return declared_torch_source(str(tmp_path / "pkg"))


@pytest.mark.parametrize(
    "spec, expected",
    [
        ('">=1.10,<1.13"', (1, 10)),
        ('"^1.11"', (1, 11)),
        ('"~1.12.1"', (1, 12)),
        ('"1.9.*"', (1, 9)),
        ('{version = "^2.0", source = "pytorch-cpu"}', (2, 0)),
        ('[{version = "^1.13", python = "<3.11"}, {version = "^2.1", python = ">=3.11"}]', (1, 13)),
        ('"*"', None),
    ],
)
def test_poetry_dependencies(tmp_path, spec, expected):
    text = f'[tool.poetry]\nname = "x"\n\n[tool.poetry.dependencies]\npython = "^3.9"\ntorch = {spec}\n'
    found = _declared_in(tmp_path, "pyproject.toml", text)
    assert (found[0] if found else None) == expected
    if expected is not None:
        assert found[1] == str(tmp_path / "pyproject.toml")


def test_poetry_dependency_group(tmp_path):
    text = '[tool.poetry]\nname = "x"\n\n[tool.poetry.group.train.dependencies]\ntorch = "~1.13"\n'
    assert _declared_in(tmp_path, "pyproject.toml", text)[0] == (1, 13)


def test_setup_py_install_requires_read_without_running_it(tmp_path):
    text = (
        "import sys\nfrom setuptools import setup\n\nsys.exit('never run')\n"
        "setup(name='x', install_requires=['numpy', 'torch>=1.8.1,<2'], extras_require={'viz': ['matplotlib']})\n"
    )
    assert _declared_in(tmp_path, "setup.py", text) == ((1, 8), str(tmp_path / "setup.py"))


def test_setup_cfg_install_requires_and_extras(tmp_path):
    text = "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    numpy\n    torch >= 1.11\n\n" \
           "[options.extras_require]\ngpu = torch>=1.10; python_version >= '3.8'\n"
    assert _declared_in(tmp_path, "setup.cfg", text)[0] == (1, 10)


def test_environment_yml_conda_and_pip(tmp_path):
    text = ("name: x\nchannels:\n  - pytorch\ndependencies:\n  - python=3.9\n  - pytorch::pytorch=1.12.1=py3.9_cuda11.6\n"
            "  - pip\n  - pip:\n    - torchvision\n")
    assert _declared_in(tmp_path, "environment.yml", text) == ((1, 12), str(tmp_path / "environment.yml"))
    text = "dependencies:\n  - pip:\n    - torch>=1.7  # pip inside conda\n"
    assert _declared_in(tmp_path, "environment.yml", text)[0] == (1, 7)


def test_requirements_folder(tmp_path):
    assert _declared_in(tmp_path, "requirements/base.txt", "numpy\n") is None
    found = _declared_in(tmp_path, "requirements/train.txt", "-r base.txt\ntorch==1.10.2\n")
    assert found == ((1, 10), str(tmp_path / "requirements" / "train.txt"))


def test_show_settings_names_the_file_that_declared_torch(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from torchlint import cli

    (tmp_path / "pyproject.toml").write_text('[tool.poetry.dependencies]\ntorch = "^1.12"\n')
    (tmp_path / "train.py").write_text(LOAD)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli.main, ["check", "--show-settings", "train.py"]).output
    line = next(x for x in out.splitlines() if x.startswith("target-torch"))
    assert line == f'target-torch = "1.12"  # declared in {tmp_path / "pyproject.toml"}'
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntarget-torch = "2.4"\n')
    out = CliRunner().invoke(cli.main, ["check", "--show-settings", "train.py"]).output
    assert 'target-torch = "2.4"\n' in out
