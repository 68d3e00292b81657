"""The fast default run: `slow` is registered and deselected by default, every marker a test carries is
a registered or built-in one (a misspelt `slow` would silently join the fast subset), and every test file
lives in the folder of its layer or rule family."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_slow_is_registered_and_deselected_by_default():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["addopts"] == "-m 'not slow'"
    assert any(m.startswith("slow:") for m in options["markers"])


BUILT_IN = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}


def _test_files():
    return sorted((ROOT / "tests").rglob("test_*.py"))


def test_every_marker_is_registered_or_built_in():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {m.split(":", 1)[0].strip() for m in options["markers"]}
    for path in _test_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and node.value.attr == "mark" and isinstance(node.value.value, ast.Name)
                    and node.value.value.id == "pytest"):
                assert node.attr in registered | BUILT_IN, f"{path.relative_to(ROOT)}:{node.lineno}: pytest.mark.{node.attr}"


def test_test_files_live_in_a_group_folder():
    for path in _test_files():
        parts = path.relative_to(ROOT / "tests").parts
        assert len(parts) == 2, f"{path.relative_to(ROOT)}: put it in the folder of its layer or rule family"
