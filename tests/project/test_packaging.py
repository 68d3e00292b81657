"""The wheel ships the rule catalog as `torchlint.rules` and declares no torch dependency."""
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_contents(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("torchlint-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    rule_files = sorted(p.name for p in (ROOT / "rules").glob("tl*.py"))
    assert rule_files and all(f"torchlint/rules/{name}" in names for name in rule_files)
    assert "torchlint/rules/__init__.py" in names
    assert "torchlint/runtime/__init__.py" in names
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    plain = [r for r in requires if "extra ==" not in r]
    assert plain and not any(r.split()[1].lower().startswith("torch") for r in plain)
    # the runtime extra does not pick torch's build (CPU, CUDA, ROCm): the user installs torch first
    assert "Provides-Extra: runtime" in metadata
    assert not any(r.split()[1].lower().startswith("torch") for r in requires)
    assert "torchlint = torchlint.cli:main" in entry_points
    assert "TL = torchlint.flake8_plugin:TorchLintPlugin" in entry_points


def _build(out):
    """`python -m build` (sdist, then the wheel from it) without network: the build backend of this
    environment (build isolation would download setuptools)."""
    pytest.importorskip("build")
    res = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--skip-dependency-check", "-o", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
        cwd=out.parent,  # not the checkout: a `build/` folder there (setuptools' own) would shadow the `build` tool
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return next(out.glob("torchlint-*.whl")), next(out.glob("torchlint-*.tar.gz"))


def test_version_is_written_in_one_place():
    import torchlint

    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'version = {attr = "torchlint.__version__"}' in text
    assert "\nversion =" not in text.split("[tool.")[0]  # no second copy in [project]
    assert f"## {torchlint.__version__}" in (ROOT / "CHANGELOG.md").read_text()


@pytest.mark.slow
def test_release_builds_installs_in_a_fresh_venv_and_lints_the_examples(tmp_path):
    """The release path of the README: build sdist and wheel, `twine check`, install the wheel in a
    fresh virtual environment (its dependencies from the system site-packages, so nothing is
    downloaded) and lint `examples/` with the installed command, away from the checkout."""
    import torchlint

    wheel, sdist = _build(tmp_path / "dist")
    assert wheel.name == f"torchlint-{torchlint.__version__}-py3-none-any.whl"
    pytest.importorskip("twine")
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    pip = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr
    work = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "examples", work / "examples")
    where = subprocess.run([str(bindir / "python"), "-c", "import torchlint; print(torchlint.__file__)"],
                           cwd=work, capture_output=True, text=True, timeout=300)
    assert str(venv) in where.stdout, where.stdout + where.stderr  # the installed copy, not the checkout
    version = subprocess.run([str(bindir / "torchlint"), "--version"], capture_output=True, text=True, timeout=300)
    assert version.stdout.strip() == f"torchlint {torchlint.__version__}"
    lint = subprocess.run([str(bindir / "torchlint"), "--no-cache", "examples/"], cwd=work,
                          capture_output=True, text=True, timeout=600)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "examples/train.py:" in lint.stdout and "TL101" in lint.stdout and "tutorial.ipynb:cell" in lint.stdout
    page = subprocess.run([str(bindir / "torchlint"), "rule", "TL101"], capture_output=True, text=True, timeout=300)
    assert page.returncode == 0 and "## What it does" in page.stdout


def test_rule_links_are_never_machine_local():
    """A rule's link (json `url`, SARIF `helpUri`, the editor's code link) exists only where the project
    says where it publishes the pages (`docs-url`); never a `file://` path into site-packages, which
    means nothing in code scanning or on another machine."""
    from torchlint.report import rule_url
    from torchlint.rules import all_rules
    from torchlint.selection import NotLinted

    for rule in [NotLinted, *all_rules()]:
        assert rule_url(rule) is None
        assert rule_url(rule, "https://docs.example.org/rules/{code}.html") == (
            f"https://docs.example.org/rules/{rule.CODE or 'TL000'}.html")


def test_no_install_advice_for_a_package_index_release():
    """No release is on a package index: neither the README, the docs nor an error message may say
    `pip install torchlint` (plain or with an extra)."""
    import re

    pattern = re.compile(r"pip install '?torchlint(\[|\b(?![-/.]))")
    docs = [ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for path in [ROOT / "README.md", *docs, *sorted((ROOT / "src" / "torchlint").rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert not pattern.search(text), (path.name, pattern.search(text).group(0))
    assert "rev: main" not in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_project_lints_itself_clean():
    """`torchlint .` on this repository (CI runs it): clean; the deliberate naive references carry a
    `# noqa` with a reason, and the programs that are wrong on purpose are excluded in pyproject.toml."""
    res = subprocess.run([sys.executable, "-m", "torchlint", "--no-cache", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "All checks passed!" in res.stdout
    for line in (ROOT / "src" / "torchlint" / "runtime" / "verify.py").read_text().splitlines():
        if "# noqa: TL" in line:
            assert line.split("# noqa: ", 1)[1].split(" - ", 1)[1].strip(), line  # a reason follows the code
