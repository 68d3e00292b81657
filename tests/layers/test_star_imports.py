"""``from utils import *`` of a project module: the names its imports bind (``torch``, ``nn``, ``F``) are
bound in the importing file as the same imports, so the file is read as code that uses torch."""
from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.definitions import dependencies
from torchlint.analysis.project import Project
from torchlint.analysis.traversal import analyze
from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

UTILS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom torch import optim\n"
EVAL = """from utils import *

device = torch.device("cpu")


def evaluate(model, loader):
    model.eval()
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits
"""


def _project(tmp_path, utils=UTILS):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "utils.py").write_text(utils)
    path = tmp_path / "ev.py"
    path.write_text(EVAL)
    return str(path)


def _walked(path, project):
    source = open(path).read()
    ctx = FileContext(path, source, cst.parse_module(source), project)
    analyze(ctx)
    return ctx


def _origins(ctx, name):
    node = next(n for n in ctx.names_in(ctx.module, name))
    return ctx.names.qualified_names_at(node)


def test_a_star_import_binds_the_imports_of_a_project_module(tmp_path):
    path = _project(tmp_path)
    ctx = _walked(path, Project())
    assert ctx.names.imports_torch
    assert _origins(ctx, "torch") == {"torch"}
    assert str(tmp_path / "utils.py") in dependencies(ctx)  # a change of utils.py changes this file's answers


def test_all_and_underscores_decide_what_a_star_import_copies(tmp_path):
    path = _project(tmp_path, UTILS + "__all__ = ['nn']\n")
    ctx = _walked(path, Project())
    assert _origins(ctx, "torch") == frozenset()
    hidden = _project(tmp_path, "import torch as _torch\n")
    assert _origins(_walked(hidden, Project()), "torch") == frozenset()


def test_a_module_outside_the_project_binds_nothing(tmp_path):
    path = _project(tmp_path)
    (tmp_path / "utils.py").unlink()
    ctx = _walked(path, Project())
    assert not ctx.names.imports_torch and _origins(ctx, "torch") == frozenset()


def test_the_rules_read_torch_through_the_star_import(tmp_path):
    path = _project(tmp_path)
    found = lint_source(path, EVAL, Settings(all_rules())).diagnostics
    assert [d.code for d in found] == ["TL105"]
    (tmp_path / "utils.py").write_text("import os\n")
    assert lint_source(path, EVAL, Settings(all_rules())).diagnostics == []


def test_a_package_without_init_files_named_from_inside_it(tmp_path):
    """``from pkg.sub.utils import *`` in ``pkg/sub/test.py`` with no ``__init__.py`` on the way and no
    project marker (a script that puts the folder above ``pkg`` on ``sys.path``): the folder named ``pkg``
    above the importer is where the module is; a ``no_grad`` spelled with the star-imported ``torch`` is
    one."""
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    (sub / "utils.py").write_text(UTILS)
    source = (
        "import torch.nn as nn\nfrom pkg.sub.utils import *\n\n\n"
        "def test(model, loader):\n    model.eval()\n    hits = 0\n    with torch.no_grad():\n"
        "        for x, y in loader:\n            hits += (model(x).argmax(1) == y).sum().item()\n    return hits\n"
    )
    path = sub / "check.py"
    path.write_text(source)
    ctx = _walked(str(path), Project())
    assert _origins(ctx, "torch") == {"torch"}
    assert lint_source(str(path), source, Settings(all_rules())).diagnostics == []
    (sub / "utils.py").unlink()  # the module gone, `torch` is unknown again: the star binds nothing
    assert _origins(_walked(str(path), Project()), "torch") == frozenset()


def test_a_star_import_chain_binds_what_the_inner_module_imports(tmp_path):
    """``from data import *`` where ``data.py`` itself does ``from conf import *`` and ``conf.py`` imports
    torch: the names reach the file through both star imports (``__all__`` of the outer one still filters),
    and both modules are what the file's answers depend on."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "conf.py").write_text(UTILS)
    (tmp_path / "utils.py").write_text("from conf import *\nimport os\n")
    path = tmp_path / "ev.py"
    source = EVAL.replace("    model.eval()\n    hits = 0\n", "    model.eval()\n    hits = 0\n    with torch.no_grad():\n")
    source = source.replace("    for x, y in loader:\n        hits +=", "        for x, y in loader:\n            hits +=")
    path.write_text(source)
    ctx = _walked(str(path), Project())
    assert _origins(ctx, "torch") == {"torch"}
    assert {str(tmp_path / "utils.py"), str(tmp_path / "conf.py")} <= set(dependencies(ctx))
    assert lint_source(str(path), source, Settings(all_rules())).diagnostics == []  # the `no_grad` is torch's
    (tmp_path / "utils.py").write_text("from conf import *\n__all__ = ['os']\n")
    assert _origins(_walked(str(path), Project()), "torch") == frozenset()


def test_a_star_import_cycle_ends(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "a.py").write_text("from b import *\nimport torch\n")
    (tmp_path / "b.py").write_text("from a import *\nimport torch.nn as nn\n")
    path = tmp_path / "ev.py"
    path.write_text("from a import *\n")
    ctx = _walked(str(path), Project())
    assert ctx.names.imports_torch
