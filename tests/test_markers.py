"""The fast default run: `slow` is registered and deselected by default, and every file and test the
conftest marks slow exists (a renamed test would silently join the fast subset)."""
import ast
import sys
from pathlib import Path

import conftest

ROOT = Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_slow_is_registered_and_deselected_by_default():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["addopts"] == "-m 'not slow'"
    assert any(m.startswith("slow:") for m in options["markers"])


def test_marked_files_and_tests_exist():
    tests = ROOT / "tests"
    for name in conftest.SLOW_FILES:
        assert (tests / name).is_file(), name
    for name, functions in conftest.SLOW_TESTS.items():
        tree = ast.parse((tests / name).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        missing = sorted(set(functions) - defined)
        assert not missing, (name, missing)
