"""Module hygiene of the package and the rules: ``__all__`` lists say what a module offers, other modules
import only that (or public names), and no private name crosses a module boundary."""
from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import pathlib
import re
from typing import Dict, Iterator, List, Mapping, Optional, Set, Tuple

import pytest

from source_trees import tree_of

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "torchlint").rglob("*.py")) + sorted((ROOT / "rules").glob("*.py"))


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    parts = parts[1:] if parts[0] == "src" else ["torchlint", "rules"] + parts[1:]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: Dict[str, pathlib.Path] = {_module_name(p): p for p in SOURCES}


class _Trees(Mapping):
    """The module trees, each parsed when first asked for: collecting the tests parses nothing (each
    test process collects them all; the tests that read every tree run once)."""

    def __getitem__(self, name: str) -> ast.Module:
        return tree_of(MODULES[name])

    def __iter__(self) -> Iterator[str]:
        return iter(MODULES)

    def __len__(self) -> int:
        return len(MODULES)


TREES: Mapping[str, ast.Module] = _Trees()
#: the modules with an ``__all__`` list (a top-level assignment; read from the text at collection)
LISTING = sorted(m for m, p in MODULES.items()
                 if re.search(r"^__all__\s*(:[^=]*)?=", p.read_text(encoding="utf-8"), re.MULTILINE))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, node: ast.ImportFrom) -> Optional[str]:
    if not node.level:
        return node.module
    base = module.split(".")
    if MODULES[module].name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _defined(tree: ast.Module) -> Set[str]:
    """Names bound at the top level of a module (in any branch of a top-level if/try)."""
    names: Set[str] = set()

    def block(stmts: List[ast.stmt]) -> None:
        for s in stmts:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(s.name)
            elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for a in s.names:
                    names.add(a.asname or a.name.split(".")[0])
            elif isinstance(s, ast.If):
                block(s.body)
                block(s.orelse)
            elif isinstance(s, ast.Try):
                block(s.body)
                block(s.orelse)
                block(s.finalbody)
                for h in s.handlers:
                    block(h.body)

    block(tree.body)
    return names


def _all(tree: ast.Module) -> Optional[List[str]]:
    for s in tree.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return [ast.literal_eval(e) for e in s.value.elts]  # type: ignore[union-attr]
    return None


def _imports() -> Iterator[Tuple[str, str, str, int]]:
    """(importing module, imported module, name, line) for every ``from M import name`` of a project
    module and every ``M.name`` read through a module imported as a whole."""
    for module, tree in TREES.items():
        aliases: Dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, node)
                if source not in MODULES:
                    continue
                for a in node.names:
                    if f"{source}.{a.name}" in MODULES:
                        aliases[a.asname or a.name] = f"{source}.{a.name}"
                    else:
                        yield module, source, a.name, node.lineno
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in MODULES and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                yield module, aliases[node.value.id], node.attr, node.lineno


@functools.lru_cache(maxsize=None)
def _import_list() -> List[Tuple[str, str, str, int]]:
    return list(_imports())


def test_the_scan_sees_the_package():
    assert "torchlint.engine" in MODULES and "torchlint.analysis.names" in MODULES
    assert any(source == "torchlint.analysis.context" for _, source, _, _ in _import_list())


def test_no_private_name_is_imported_across_modules():
    crossing = [f"{m}:{line} uses {source}.{name}" for m, source, name, line in _import_list()
                if _is_private(name) and source != m]
    assert not crossing, "\n".join(crossing)


def _private_attributes(tree: ast.Module) -> Tuple[Set[str], List[Tuple[str, int]]]:
    """The private attribute names a module defines (methods, class attributes, ``self._x = ...``) and
    the private attributes it reads on anything but ``self``/``cls``."""
    defined: Set[str] = set()
    read: List[Tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _is_private(node.name):
            defined.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
                defined.update(t.id for t in targets if isinstance(t, ast.Name) and _is_private(t.id))
        elif isinstance(node, ast.Attribute) and _is_private(node.attr):
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if on_self and isinstance(node.ctx, ast.Store):
                defined.add(node.attr)
            elif not on_self:
                read.append((node.attr, node.lineno))
    return defined, read


@functools.lru_cache(maxsize=None)
def _private() -> Dict[str, Tuple[Set[str], List[Tuple[str, int]]]]:
    return {m: _private_attributes(tree) for m, tree in TREES.items()}


def test_no_private_attribute_is_read_across_modules():
    """``obj._x`` where only other modules define ``_x``: the reader depends on another module's
    internals (ask the owner for a public accessor instead)."""
    owners: Dict[str, Set[str]] = {}
    for m, (defined, _) in _private().items():
        for name in defined:
            owners.setdefault(name, set()).add(m)
    crossing = [f"{m}:{line} reads .{name} (defined in {sorted(owners[name])})"
                for m, (defined, read) in _private().items() for name, line in read
                if name in owners and m not in owners[name]]
    assert not crossing, "\n".join(crossing)


def test_the_private_attribute_scan_finds_a_crossing():
    defined, read = _private_attributes(ast.parse("class A:\n    def _f(self):\n        self._g = 1\nx._h\nself._i\n"))
    assert defined == {"_f", "_g"} and read == [("_h", 4)]


@pytest.mark.parametrize("module", LISTING)
def test_all_lists_only_what_the_module_defines(module):
    listed = _all(TREES[module])
    assert listed is not None
    assert len(listed) == len(set(listed)), "a name listed twice"
    missing = sorted(set(listed) - _defined(TREES[module]))
    if "__getattr__" in _defined(TREES[module]):  # names the module serves on first use
        loaded = importlib.import_module(module)
        missing = [name for name in missing if not hasattr(loaded, name)]
    assert not missing, f"{module}.__all__ lists names it does not define: {missing}"


@pytest.mark.parametrize("module", LISTING)
def test_what_other_modules_import_is_in_all(module):
    listed = set(_all(TREES[module]) or ())
    unlisted = sorted({f"{name} (by {m}:{line})" for m, source, name, line in _import_list()
                       if source == module and m != module and name not in listed})
    assert not unlisted, f"imported from {module} but not in its __all__: {unlisted}"


def test_no_rule_asks_whether_another_rule_runs():
    """Which rule owns a mistake two rules recognise is the precedence table's answer, not a rule's."""
    for name, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        assert "rule_enabled" not in text, name


def test_the_analysis_names_no_rule_code():
    import re

    for name, path in MODULES.items():
        if name.startswith("torchlint.analysis."):
            assert not re.search(r"\bTL[0-9]{3}\b", path.read_text(encoding="utf-8")), name


def test_the_scan_finds_what_it_looks_for():
    """The checks above see each kind of import and definition (not a vacuous pass)."""
    found = {(m, source, name) for m, source, name, _ in _import_list()}
    assert ("torchlint.engine", "torchlint.precedence", "apply_precedence") in found
    tree = ast.parse("from torchlint.engine import _x\nif X:\n    def f(): pass\n__all__ = ['f', 'z']\n")
    assert _all(tree) == ["f", "z"] and {"_x", "f"} <= _defined(tree) and "z" not in _defined(tree)
    assert _is_private("_x") and not _is_private("__all__")


def test_every_analysis_name_is_used():
    """A function, class or constant of the analysis package that nothing reads is dead code."""
    import collections
    import re

    others = SOURCES + sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "benchmarks").rglob("*.py"))
    words: collections.Counter = collections.Counter()
    for path in others:
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(encoding="utf-8")))
    dead = []
    for module, tree in TREES.items():
        if not module.startswith("torchlint.analysis."):
            continue
        listed = set(_all(tree) or ())
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                names = [stmt.name]
            elif isinstance(stmt, ast.Assign):
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            else:
                continue
            for name in names:
                # the definition itself, and its entry in __all__, are no use
                if not name.startswith("__") and words[name] - (name in listed) <= 1:
                    dead.append(f"{module}.{name}")
    assert not dead, dead


#: the value-following code paths the names layer replaced: a class, or a function or method, of these
#: names must not come back (``NameResolver.values``/``last_value`` answered "so far" during the walk)
_REPLACED_VALUE_APIS = {("class", "Flow"), ("def", "values_of"), ("def", "_local_value"),
                        ("method NameResolver", "values"), ("method NameResolver", "last_value")}


def _value_apis(trees: Dict[str, ast.Module]) -> List[str]:
    found = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                if ("class", node.name) in _REPLACED_VALUE_APIS:
                    found.append(f"{module}: class {node.name}")
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        f"method {node.name}", item.name
                    ) in _REPLACED_VALUE_APIS:
                        found.append(f"{module}: {node.name}.{item.name}")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ("def", node.name) in _REPLACED_VALUE_APIS:
                found.append(f"{module}: def {node.name}")
    return found


def test_one_value_api():
    """What a name holds is the names layer's answer (``values_before``, ``value_of``, ``values_at``,
    ``reaching_assignment``); no module keeps its own copy of it."""
    found = _value_apis(TREES)
    assert not found, found


def test_the_value_api_scan_finds_each_copy():
    trees = {"m": ast.parse(
        "class Flow:\n    pass\n"
        "class NameResolver:\n    def values(self): pass\n    def last_value(self): pass\n"
        "def values_of(): pass\n"
        "class P:\n    def _local_value(self): pass\n"
    )}
    assert sorted(_value_apis(trees)) == sorted([
        "m: class Flow", "m: NameResolver.values", "m: NameResolver.last_value", "m: def values_of",
        "m: def _local_value",
    ])
