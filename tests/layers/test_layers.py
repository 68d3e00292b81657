"""The package is layered: each module imports only modules of its own layer or of lower layers, and no
import cycle exists (function-local imports count: they hide a cycle, they do not remove it).  The
analysis and the fixes keep no module-level mutable state: per-file facts live in the file's context,
what is known about a project in its ``Project``.

The layer order is written once, here: module name prefix -> layer (the longest matching prefix wins;
a module that no prefix matches fails the test, so a new module gets a place in the table).
"""
import ast
import os
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from source_trees import tree_of

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"torchlint": ROOT / "src" / "torchlint", "torchlint.rules": ROOT / "rules"}

#: module prefix -> layer, lowest first.  A module may import its own layer and the layers below it.
LAYERS: Dict[str, int] = {
    # 0 -- base: the version, paths, atomic writes, the runtime companion module
    "torchlint": 0,  # the package itself (``__version__``); matches only itself, not every module
    "torchlint.folders": 0,
    "torchlint.reading": 0,  # the one way files are read
    "torchlint.noqa_edit": 0,  # noqa comments as text
    "torchlint.atomic": 0,
    "torchlint.cpus": 0,
    "torchlint.files": 0,
    "torchlint.runtime": 0,
    "torchlint.options": 0,  # a rule's option (read by the torch-version declarations too)
    # 1 -- which codes a run reports
    "torchlint.selection": 1,
    "torchlint.analysis": 2,  # the core's package (no module of its own)
    # 2 -- syntax: the structural walk, name bindings, identifier spelling, version declarations
    "torchlint.analysis.walk": 2,
    "torchlint.analysis.names": 2,
    "torchlint.analysis.naming": 2,
    "torchlint.analysis.torch_version": 2,
    "torchlint.analysis.parsing": 2,  # the parse of a text (libcst without its per-node checks)
    "torchlint.analysis.reparse": 2,  # an edited text parsed again where it changed
    # 3 -- one file: its context (parents, order, contents, facts) and the walk that fills it
    "torchlint.analysis.context": 3,
    "torchlint.analysis.traversal": 3,
    "torchlint.analysis.positions": 3,  # where a node is: positions one statement at a time
    # 4 -- the project: root, modules, parsed modules, editor overlay, declared versions
    "torchlint.analysis.project": 4,
    # 5 -- facts the program model is built from: ops, training steps
    "torchlint.analysis.ops": 5,
    "torchlint.analysis.training": 5,
    "torchlint.analysis.dtypes": 6,  # dtypes from construction, through the returns of project functions
    "torchlint.analysis.mode_layers": 5,  # which library layers depend on train/eval mode, by construction
    # 6 -- the program model, across the project: definitions and the call graph; roles, class and
    #      function summaries; values through calls
    "torchlint.analysis.definitions": 6,  # what a name or call defines; calls of a function; bound arguments
    "torchlint.analysis.roles": 6,  # roles by construction; class summaries (output kind, mode dependence)
    "torchlint.analysis.values": 6,  # values through calls: frames, evidence, what a value or loss is
    "torchlint.analysis.effects": 6,  # what library calls do to modules; modules held by objects
    # 7 -- family facts, one package per family (training, numerics, loops, shapes, api, gradflow)
    "torchlint.families": 7,
    # 8 -- the rule contract (a rule over a file's context: options, fixes, reports), building fixes
    "torchlint.rule": 8,
    "torchlint.precedence": 8,  # which rule owns a mistake two rules report
    "torchlint.fixes": 8,
    # 9 -- the rules
    "torchlint.rules": 9,
    "torchlint.rule_table": 9,
    # 10 -- the engine: lint one text
    "torchlint.engine": 10,
    "torchlint.carry": 10,  # an editor's findings carried over an edit that cannot change them
    "torchlint.fixes.table": 10,  # the fix table of docs/rules/index.md, from the rules
    "torchlint.docs": 10,  # generates docs/rules/ (the rule pages and tables) from the rules
    # 11 -- the driver: notebooks as files, files read, worker processes
    "torchlint.notebook": 11,
    "torchlint.workers": 11,
    # 12 -- configuration, cache, reports
    "torchlint.config": 12,
    "torchlint.projects": 12,
    "torchlint.file_settings": 12,  # the settings of a file, found from the file
    "torchlint.cache": 12,
    "torchlint.report": 12,
    # 13 -- hosts: the command line's check, the language server, the flake8 plugin
    "torchlint.checker": 13,
    "torchlint.lsp": 13,
    "torchlint.flake8_plugin": 13,
    # 14 -- the command line
    "torchlint.cli": 14,
    "torchlint.__main__": 14,
    "torchlint.watch": 14,
}


#: keys that name a package itself, not everything under it: a new module of the core gets a line above
EXACT = {"torchlint", "torchlint.analysis"}


def layer_of(module: str) -> int:
    best = None
    for prefix, layer in LAYERS.items():
        if module == prefix or (prefix not in EXACT and module.startswith(prefix + ".")):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    if best is None:
        raise KeyError(module)
    return best[1]


def _modules() -> Dict[str, Path]:
    out: Dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join((package,) + rel)] = path
    return out


def import_graph() -> Dict[str, Set[Tuple[str, int]]]:
    """module -> {(imported project module, line)}, function-local imports included, and imports made for
    annotations only (``if TYPE_CHECKING:``): a lower layer that names a higher one's type depends on it."""
    modules = _modules()
    graph: Dict[str, Set[Tuple[str, int]]] = {}
    for name, path in modules.items():
        tree = tree_of(path)
        is_package = path.name == "__init__.py"
        edges: Set[Tuple[str, int]] = set()
        for node in ast.walk(tree):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            for target in targets:
                while target and target not in modules:  # `import a.b.c` of a module: its deepest known part
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.add((target, node.lineno))
        graph[name] = edges
    return graph


def _cycles(graph: Dict[str, Set[Tuple[str, int]]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    found: List[List[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted({t for t, _ in graph[root]})))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted({t for t, _ in graph.get(child, ())}))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    missing = [m for m in _modules() if not any(m == p or m.startswith(p + ".") for p in LAYERS)]
    assert not missing, f"add these modules to LAYERS in {os.path.basename(__file__)}: {missing}"


def test_no_import_cycle():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles (function-local imports included): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_imports_go_down_the_layers():
    modules = _modules()
    wrong = []
    for name, edges in sorted(import_graph().items()):
        for target, line in sorted(edges):
            if layer_of(target) > layer_of(name):
                rel = modules[name].relative_to(ROOT)
                wrong.append(f"{rel}:{line}: {name} (layer {layer_of(name)}) imports {target} (layer {layer_of(target)})")
    assert not wrong, "imports from a lower layer into a higher one:\n" + "\n".join(wrong)


def test_the_checks_see_function_local_and_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "torchlint"
    (pkg / "analysis").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "analysis" / "__init__.py").write_text("")
    (pkg / "engine.py").write_text("from torchlint.analysis import program\n")
    (pkg / "analysis" / "program.py").write_text(
        "def load():\n    from ..engine import analyze\n    return analyze\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from torchlint.analysis import names\n"
    )
    (pkg / "analysis" / "names.py").write_text("from torchlint.analysis import program\n")
    monkeypatch.setitem(SOURCES, "torchlint", pkg)
    monkeypatch.setitem(SOURCES, "torchlint.rules", tmp_path / "none")
    graph = import_graph()
    assert ("torchlint.engine", 2) in graph["torchlint.analysis.program"]
    assert ("torchlint.analysis.names", 6) in graph["torchlint.analysis.program"]  # an annotation import counts
    assert _cycles(graph) == [["torchlint.analysis.names", "torchlint.analysis.program", "torchlint.engine"]]


# -- module-level mutable state ------------------------------------------------------------------
STATE_SCANNED = [ROOT / "src" / "torchlint" / "analysis", ROOT / "src" / "torchlint" / "families",
                 ROOT / "src" / "torchlint" / "fixes",
                 ROOT / "src" / "torchlint" / "folders.py"]

#: the only process-wide state allowed, and why
STATE_ALLOWED = {
    "traversal.py:Headroom": "the recursion limit belongs to the interpreter; overlapping analyses "
    "(threads of a host) must share one count of users to restore it",
    "parsing.py:_Unchecked": "the check every libcst node runs when it is made belongs to libcst's node "
    "class, in the whole process; overlapping parses (threads of a host) must share one count to put it back",
}

_MUTABLE_CALLS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque", "Counter", "bytearray",
                  "Lock", "RLock", "WeakValueDictionary", "WeakKeyDictionary", "local"}
_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear", "remove",
             "discard", "move_to_end", "appendleft", "__setitem__"}
_FILE_READS = {"open", "stat", "lstat", "listdir", "scandir", "exists", "isfile", "isdir", "read_text",
               "read_bytes", "walk", "load", "getmtime", "getsize"}


def _is_mutable_value(value: ast.AST) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        return name in _MUTABLE_CALLS
    return False


def _base_name(node: ast.AST):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mutated_names(tree: ast.AST) -> Set[str]:
    """Names whose object the module changes: ``X[k] = v``, ``X.attr = v``, ``X += ...``, ``del X[k]``,
    ``X.append(...)`` and the like."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, (ast.Subscript, ast.Attribute)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = [t for t in node.targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            targets = [node.func.value]
        for t in targets:
            name = _base_name(t)
            if name is not None:
                out.add(name)
    return out


def _file_reading_functions(tree: ast.Module) -> Set[str]:
    """Functions of the module that read files, directly or through other functions of the module."""
    calls: Dict[str, Set[str]] = {}
    reads: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            called = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    f = sub.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                    if name in _FILE_READS:
                        reads.add(node.name)
                    if name:
                        called.add(name)
            calls[node.name] = called
    changed = True
    while changed:
        changed = False
        for fn, called in calls.items():
            if fn not in reads and called & reads:
                reads.add(fn)
                changed = True
    return reads


def module_state(path: Path) -> List[str]:
    tree = tree_of(path)
    mutated = _mutated_names(tree)
    found: List[str] = []
    where = path.name

    def scan(body, owner):
        for node in body:
            if isinstance(node, ast.ClassDef) and owner is None:
                if f"{where}:{node.name}" in STATE_ALLOWED:
                    continue
                scan(node.body, node.name)
                if node.name in mutated:
                    found.append(f"{where}:{node.lineno}: class {node.name} changes its own class attributes")
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                names = [t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                         if isinstance(t, ast.Name)]
                if _is_mutable_value(node.value) and names != ["__all__"]:
                    for name in names:
                        if owner is not None or name in mutated:
                            label = f"{owner}.{name}" if owner else name
                            found.append(f"{where}:{node.lineno}: {label} is mutable state")

    scan(tree.body, None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{where}:{node.lineno}: global {', '.join(node.names)}")
    readers = _file_reading_functions(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in readers:
            for deco in node.decorator_list:
                text = ast.unparse(deco)
                if "cache" in text:
                    found.append(f"{where}:{node.lineno}: {node.name} reads files and is cached by @{text}")
    return found


def _scanned_files() -> List[Path]:
    out: List[Path] = []
    for p in STATE_SCANNED:
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.exists() else [])
    return out


def test_no_module_level_mutable_state_in_the_analysis_and_the_fixes():
    found = [f for path in _scanned_files() for f in module_state(path)]
    assert not found, "module-level state (keep it in the FileContext or the Project):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code, kind",
    [
        ("_ROOTS = {}\ndef root(p):\n    _ROOTS[p] = 1\n", "_ROOTS is mutable state"),
        ("from collections import OrderedDict\n_PARSED = OrderedDict()\ndef f(k):\n    _PARSED.move_to_end(k)\n",
         "_PARSED is mutable state"),
        ("_OVERLAY = {}\ndef set_overlay(t):\n    _OVERLAY.clear()\n", "_OVERLAY is mutable state"),
        ("N = 0\ndef bump():\n    global N\n    N += 1\n", "global N"),
        ("import functools, os\ndef _files(d):\n    return os.listdir(d)\n"
         "@functools.lru_cache(maxsize=8)\ndef declares(d):\n    return any(_files(d))\n", "reads files and is cached"),
        ("class C:\n    users = 0\n    def enter(self):\n        C.users += 1\n", "changes its own class attributes"),
        ("class C:\n    table = {}\n", "C.table is mutable state"),
    ],
)
def test_the_state_scan_finds(tmp_path, code, kind):
    path = tmp_path / "m.py"
    path.write_text(code)
    assert any(kind in f for f in module_state(path)), module_state(path)


def test_the_state_scan_leaves_constants_and_pure_caches_alone(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import functools, re\nTABLE = {'a': 1}\nNAMES = ['x']\nPATTERN = re.compile('x')\n"
        "@functools.lru_cache(maxsize=8)\ndef snake(s):\n    return s.lower()\n"
        "def read(t):\n    return TABLE.get(t)\n__all__ = ['read']\n"
    )
    assert module_state(path) == []


def test_no_rule_code_in_the_analysis_or_the_families():
    """The core and the family facts answer questions about code; which rule reports what is the rules'
    business (and the precedence table's), so no rule code is spelled there."""
    import re

    code = re.compile(r"\bTL[0-9]{3}\b")
    found = []
    for folder in ("analysis", "families"):
        for path in sorted((ROOT / "src" / "torchlint" / folder).rglob("*.py")):
            for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if code.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert not found, "rule codes in the analysis:\n" + "\n".join(found)


def test_every_family_is_a_package_of_its_own():
    """A family's facts live in its package under ``torchlint.families``; the core has no family module."""
    families = ROOT / "src" / "torchlint" / "families"
    packages = sorted(p.name for p in families.iterdir() if (p / "__init__.py").exists())
    assert packages == ["api", "gradflow", "loops", "numerics", "shapes", "training"]
    stray = sorted(p.name for p in families.glob("*.py") if p.name != "__init__.py")
    assert not stray, f"family modules outside a family package: {stray}"
    core = {p.stem for p in (ROOT / "src" / "torchlint" / "analysis").glob("*.py")}
    assert all(f"torchlint.analysis.{m}" in LAYERS for m in core), sorted(
        m for m in core if f"torchlint.analysis.{m}" not in LAYERS)
