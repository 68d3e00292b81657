import pytest

from conftest import CE_BUG, TRAIN_BUG


def _pyproject(root, body):
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.torchlint]\n" + body)


@pytest.mark.slow
def test_select_and_ignore_from_pyproject(run, project):
    _pyproject(project, 'ignore = ["TL103"]\n')
    r = run("pkg")
    assert "TL101" in r.stdout and "TL103" not in r.stdout
    # the command line wins over the file
    r = run("--select", "TL103", "pkg")
    assert "TL103" in r.stdout and "TL101" not in r.stdout


@pytest.mark.slow
def test_config_found_from_subfolder(run, project):
    _pyproject(project, 'select = ["TL101"]\n')
    r = run(".", cwd=project / "pkg")
    assert "TL101" in r.stdout and "TL103" not in r.stdout


@pytest.mark.slow
def test_per_file_ignores(run, project):
    _pyproject(project, '[tool.torchlint.per-file-ignores]\n"pkg/train.py" = ["TL1"]\n')
    r = run("pkg")
    assert "train.py" not in r.stdout and "losses.py" in r.stdout


@pytest.mark.slow
def test_exclude_and_extend_exclude(run, project):
    _pyproject(project, 'extend-exclude = ["pkg/losses.py"]\n')
    r = run(".")
    assert "losses.py" not in r.stdout and "train.py" in r.stdout
    # an explicit path is linted anyway, unless --force-exclude
    assert "losses.py" in run("pkg/losses.py").stdout
    assert run("--force-exclude", "pkg/losses.py").returncode == 0


@pytest.mark.slow
def test_default_excludes_and_gitignore(run, project):
    for folder in ("venv", ".venv", "build", "site-packages", ".git"):
        (project / folder).mkdir()
        (project / folder / "x.py").write_text(TRAIN_BUG)
    (project / "generated").mkdir()
    (project / "generated" / "y.py").write_text(TRAIN_BUG)
    (project / ".gitignore").write_text("generated/\n")
    r = run(".")
    files = sorted({line.split(":")[0] for line in r.stdout.splitlines() if ": TL" in line})
    assert files == ["pkg/losses.py", "pkg/train.py"]
    r = run("--no-respect-gitignore", ".")
    assert "generated/y.py" in r.stdout


def test_unknown_key_is_named(run, project):
    _pyproject(project, 'selectt = ["TL1"]\n')
    r = run("pkg")
    assert r.returncode == 2
    assert "unknown key `selectt`" in r.stderr and "pyproject.toml" in r.stderr


@pytest.mark.slow
def test_bad_values(run, project):
    _pyproject(project, 'select = "TL1"\n')
    r = run("pkg")
    assert r.returncode == 2 and "`select`" in r.stderr
    _pyproject(project, 'select = ["TL9"]\n')
    r = run("pkg")
    assert r.returncode == 2 and "TL9" in r.stderr
    (project / "pyproject.toml").write_text("[tool.torchlint\n")
    r = run("pkg")
    assert r.returncode == 2 and "invalid TOML" in r.stderr


@pytest.mark.slow
def test_explicit_config_file(run, project, tmp_path):
    cfg = project / "custom.toml"
    cfg.write_text('select = ["TL103"]\n')
    r = run("--config", "custom.toml", "pkg")
    assert "TL103" in r.stdout and "TL101" not in r.stdout
    assert run("--config", "missing.toml", "pkg").returncode == 2


@pytest.mark.slow
def test_isolated_ignores_config(run, project):
    _pyproject(project, 'select = ["TL103"]\n')
    assert "TL101" in run("--isolated", "pkg").stdout


@pytest.mark.slow
def test_ce_only_file(run, tmp_path):
    (tmp_path / "m.py").write_text(CE_BUG)
    assert run("m.py").returncode == 1


@pytest.mark.slow
def test_command_line_ignore_applies_over_config_select(run, project):
    _pyproject(project, 'select = ["TL101", "TL103"]\n')
    r = run("--ignore", "TL1", "pkg")
    assert r.returncode == 0, r.stdout


@pytest.mark.slow
def test_default_excludes_do_not_apply_to_folders_above_a_named_path(tmp_path):
    """`torchlint venv/lib/site-packages/pkg` lints pkg: only what the walk enters is matched against
    single-component excludes; inside a walked tree an excluded folder is still skipped."""
    import subprocess
    import sys

    bug = "import torch\nfor x in range(3):\n    loss = torch.ones(1, requires_grad=True).sum()\n    loss.backward()\n    opt.step()\n"
    pkg = tmp_path / "site-packages" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text(bug)
    (tmp_path / "proj" / ".venv").mkdir(parents=True)
    (tmp_path / "proj" / ".venv" / "b.py").write_text(bug)
    (tmp_path / "proj" / "c.py").write_text(bug)
    run = lambda *args: subprocess.run([sys.executable, "-m", "torchlint", "--no-cache", *args], cwd=tmp_path,
                                       capture_output=True, text=True)
    r = run(str(pkg))
    assert r.returncode == 1 and "a.py:4:5: TL101" in r.stdout
    r = run("proj")
    assert "c.py:4:5: TL101" in r.stdout and "b.py" not in r.stdout
