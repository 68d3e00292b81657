"""What torchlint knows about a project lives in a ``Project`` carried in the settings, not in
module-level tables: two projects share nothing, edits are seen, the editor's texts are a view."""
import os
import pickle
from dataclasses import replace

from torchlint.analysis.project import Project
from torchlint.engine import Settings, lint_source
from torchlint.fixes.project import use_runtime
from torchlint.rules import all_rules

MODELS = """import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return F.softmax(self.fc(x), dim=1)
"""

TRAIN = """import torch.nn.functional as F
from models import Net

model = Net()


def step(x, y):
    return F.cross_entropy(model(x), y)
"""


def _project_tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text(TRAIN)
    return str(tmp_path / "models.py"), str(tmp_path / "train.py")


def _codes(path, settings):
    with open(path) as fh:
        return [d.code for d in lint_source(path, fh.read(), settings).diagnostics]


def test_parsed_modules_are_per_project_and_keyed_by_content(tmp_path):
    models, _ = _project_tree(tmp_path)
    one, two = Project(), Project()
    first = one.load(models)
    assert first is not None and one.load(models) is first
    assert two.load(models) is not first  # nothing is shared through the process
    with open(models, "a") as fh:
        fh.write("\n# edited\n")
    edited = one.load(models)
    assert edited is not first and edited.source.endswith("# edited\n")


def test_the_table_of_parsed_modules_is_bounded(tmp_path):
    paths = []
    for i in range(4):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"x = {i}\n")
        paths.append(str(p))
    project = Project(parsed_max=2)
    first = project.load(paths[0])
    for p in paths[1:]:
        project.load(p)
    assert project.load(paths[0]) is not first  # pushed out, parsed again


def test_a_linted_file_is_the_projects_module_for_the_files_linted_after_it(tmp_path, monkeypatch):
    import torchlint.analysis.project as project_module

    parsed = []
    real = project_module.parse_module
    monkeypatch.setattr(project_module, "parse_module", lambda text: parsed.append(text) or real(text))
    models, train = _project_tree(tmp_path)
    project = Project()
    settings = Settings(all_rules(), project=project)
    assert _codes(models, settings) == []
    assert parsed == [MODELS]
    kept = project.load(models)
    assert parsed == [MODELS]  # not parsed again
    assert kept is not None and kept.walked and kept.facts == {}  # what the rules computed is dropped
    assert project.parsed_module(models, MODELS) is kept.module
    # the file importing it finds the same finding as in a project that loads the module itself
    assert _codes(train, settings) == ["TL103"] == _codes(train, Settings(all_rules(), project=Project()))
    assert project.load(models) is kept


def test_a_linted_text_that_is_not_the_files_is_not_kept(tmp_path):
    models, _ = _project_tree(tmp_path)
    project = Project()
    settings = Settings(all_rules(), project=project)
    other = MODELS.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)")
    lint_source(models, other, settings)  # a text given on standard input under the file's name
    loaded = project.load(models)
    assert loaded is not None and loaded.source == MODELS
    # a file the fixes changed: neither its text before nor after is kept (the fixes are not written yet)
    fixed = Settings(all_rules(), project=Project(), fix=True)
    text = "import torch\nx = torch.zeros(3).double()\n"
    (tmp_path / "fixme.py").write_text(text)
    result = lint_source(str(tmp_path / "fixme.py"), text, fixed)
    assert result.fixed_source == "import torch\nx = torch.zeros(3, dtype=torch.float64)\n"
    assert fixed.project.parsed_module(str(tmp_path / "fixme.py"), text) is None


def test_the_settings_carry_the_project_to_the_program_model(tmp_path):
    models, train = _project_tree(tmp_path)
    settings = Settings(all_rules())
    assert _codes(train, settings) == ["TL103"]  # Net.forward ends in softmax, read from models.py
    parsed = settings.project.load(models)
    assert _codes(train, replace(settings, fix=False)) == ["TL103"]
    assert settings.project.load(models) is parsed  # the linted file's import was parsed into this project


def test_the_editor_overlay_is_a_view_of_the_project(tmp_path):
    models, train = _project_tree(tmp_path)
    project = Project()
    settings = Settings(all_rules(), project=project)
    edited = {os.path.abspath(models): MODELS.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)")}
    assert _codes(train, replace(settings, project=project.with_overlay(edited))) == []
    assert _codes(train, settings) == ["TL103"]  # the project itself still reads the file on disk
    assert project.overlay == {}


def test_a_project_does_not_travel_between_processes(tmp_path):
    models, _ = _project_tree(tmp_path)
    project = Project({"/x.py": "x = 1\n"})
    project.load(models)
    copy = pickle.loads(pickle.dumps(Settings(all_rules(), project=project))).project
    assert isinstance(copy, Project) and copy.overlay == {} and copy.load(models) is not project.load(models)


def test_the_runtime_dependency_follows_edits(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch\n")
    path = str(tmp_path / "pkg" / "loss.py")
    os.makedirs(os.path.dirname(path))
    project = Project()
    assert use_runtime("auto", path, project) is False
    (tmp_path / "requirements.txt").write_text("torch\ntorchlint[runtime]\n")
    assert use_runtime("auto", path, project) is True
    (tmp_path / "requirements.txt").unlink()
    assert use_runtime("auto", path, project) is False


def test_one_upward_search_finds_the_root_and_the_declared_torch(tmp_path):
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "requirements.txt").write_text("torch>=1.13\n")
    project = Project()
    file = str(tmp_path / "pkg" / "sub" / "m.py")
    assert project.root(file) == str(tmp_path)
    assert project.declared_torch(file) == (1, 13)
    (tmp_path / "pkg" / "requirements.txt").write_text("torch>=2.2\n")
    assert project.declared_torch(file) == (1, 13)  # known until the project is refreshed
    project.refresh()
    assert project.declared_torch(file) == (2, 2)


def test_per_file_facts_are_typed_slots_of_the_context():
    import libcst as cst

    from torchlint.analysis.context import Fact, FileContext

    calls = []

    def count_classes(ctx):
        calls.append(ctx.path)
        return sum(isinstance(s, cst.ClassDef) for s in ctx.module.body)

    classes = Fact("test.classes", count_classes)
    same_name = Fact("test.classes")
    one = FileContext("a.py", "class A: pass\n", cst.parse_module("class A: pass\n"))
    two = FileContext("b.py", "x = 1\n", cst.parse_module("x = 1\n"))
    assert classes.of(one) == 1 and classes.of(one) == 1 and classes.of(two) == 0
    assert calls == ["a.py", "b.py"]  # once per file
    assert same_name.get(one) is None  # a fact is its own key, whatever its name
    assert same_name.put(one, 5) == 5 and classes.of(one) == 1
    assert not hasattr(one, "memo")


def test_a_text_worker_keeps_its_project_and_follows_the_hosts_refresh(tmp_path):
    import pickle as _pickle

    from torchlint.engine import FileTask
    from torchlint.workers import TextLinter

    # app/train.py imports `models`, which lies at the project root: found only once a root marker exists
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "app").mkdir()
    train = str(tmp_path / "app" / "train.py")
    host = Project()
    settings = Settings(all_rules(), project=host)
    worker = TextLinter()

    def lint():
        job = _pickle.loads(_pickle.dumps((FileTask(train), TRAIN, settings, None)))  # as over the pipe
        return [d.code for d in worker(job).diagnostics]

    assert lint() == []
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    assert lint() == []  # the worker's project still knows the folder as rootless
    host.refresh()  # the host saw the configuration change
    assert lint() == ["TL103"]
    assert worker.project.generation == host.generation == 1


def test_a_folder_the_host_checks_is_the_root_of_files_no_marker_claims(tmp_path):
    (tmp_path / "doc").mkdir()
    file = str(tmp_path / "doc" / "net.py")
    assert Project().root(file) is None
    project = Project(fallback_roots=(str(tmp_path), str(tmp_path / "doc")))
    assert project.root(file) == str(tmp_path / "doc")  # the innermost folder holding the file
    assert Project(fallback_roots=(str(tmp_path),)).root(file) == str(tmp_path)
    assert Project(fallback_roots=(str(tmp_path / "elsewhere"),)).root(file) is None
    copy = pickle.loads(pickle.dumps(Project(fallback_roots=(str(tmp_path),))))
    assert copy.root(file) == str(tmp_path)
    (tmp_path / "doc" / "setup.cfg").write_text("[metadata]\nname = p\n")  # a marker wins
    assert Project(fallback_roots=(str(tmp_path),)).root(str(tmp_path / "doc" / "other.py")) == str(tmp_path / "doc")


def test_files_linked_by_imports_either_way(tmp_path):
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    (tmp_path / "models.py").write_text("import layers\n")
    (tmp_path / "layers.py").write_text("import torch\n")
    (tmp_path / "train.py").write_text("from models import Net\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "demo.py").write_text("import torch\n")
    linked = Project().import_connected(str(tmp_path / "layers.py"))
    assert linked == {str(tmp_path / n) for n in ("models.py", "layers.py", "train.py")}
    assert Project().import_connected(str(tmp_path / "other" / "demo.py")) == {str(tmp_path / "other" / "demo.py")}


EVALUATE = '''
import torch


def test_epoch(model, loader):
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
'''

CALLER = '''
import torch.nn as nn

from evaluate import test_epoch

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
print(test_epoch(model, [(torch.randn(2, 4), torch.tensor([0, 1]))]))
'''


def test_callers_of_a_commonly_named_function_are_the_files_importing_its_module(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "ex").mkdir()
    (tmp_path / "ex" / "evaluate.py").write_text(EVALUATE)
    (tmp_path / "ex" / "main.py").write_text(CALLER)
    for i in range(15):  # other examples that mention the name without importing this module
        (tmp_path / f"other{i}.py").write_text("def test_epoch(model, loader):\n    return None\n")
    settings = replace(Settings(rules=[r for r in all_rules() if r.CODE == "TL106"]), project=Project())
    assert _codes(str(tmp_path / "ex" / "evaluate.py"), settings) == ["TL106"]


def test_an_editor_sets_its_workspace_folders_as_fallback_roots(tmp_path):
    (tmp_path / "ws" / "doc").mkdir(parents=True)
    file = str(tmp_path / "ws" / "doc" / "net.py")
    project = Project()
    assert project.root(file) is None
    project.use_fallback_roots([str(tmp_path / "ws")])
    assert project.root(file) == str(tmp_path / "ws")  # the answer found before is forgotten
    assert project.with_overlay({}).root(file) == str(tmp_path / "ws")
    project.use_fallback_roots([])
    assert project.root(file) is None


def test_a_module_with_a_ruler_of_dashes_in_a_comment_or_string_is_read(tmp_path):
    """A line of a hundred dashes in a comment (``# ------…``) or in a docstring is no run of unary
    operators: the module is parsed for the files that import it (TL103 sees the softmax in its model)."""
    ruler = "#" + "-" * 120 + "#\n"
    models = ruler + MODELS.replace('class Net', '"""' + "=" * 3 + "-" * 110 + '"""\n\n\nclass Net', 1)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models.py").write_text(models)
    (tmp_path / "train.py").write_text(TRAIN)
    project = Project()
    assert project.load(str(tmp_path / "models.py")) is not None
    assert _codes(str(tmp_path / "train.py"), Settings(all_rules(), project=Project())) == ["TL103"]


def test_a_module_with_a_run_of_unary_operators_in_its_code_is_not_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models.py").write_text(MODELS + "\nx = " + "- " * 120 + "1\n")
    assert Project().load(str(tmp_path / "models.py")) is None


def test_a_project_inside_the_repository_finds_its_own_modules(tmp_path):
    """``gan/scripts/sample.py`` importing ``models.psp`` (run from ``gan/``, or with ``..`` on ``sys.path``)
    reads ``gan/models/psp.py``; a script beside ``lib/`` finds the packages an ``_init_paths.py`` puts on
    the path; a module of the root comes first, and nothing is found above the root."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for rel in ("gan/models/psp.py", "gan/scripts/sample.py", "lib/core/config.py", "tools/valid.py",
                "gan/utils.py", "utils.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    project = Project()
    sample, valid = str(tmp_path / "gan/scripts/sample.py"), str(tmp_path / "tools/valid.py")
    assert project.module_file(sample, "models.psp", 0) == str(tmp_path / "gan/models/psp.py")
    assert project.module_file(valid, "core.config", 0) == str(tmp_path / "lib/core/config.py")
    assert project.module_file(sample, "utils", 0) == str(tmp_path / "utils.py")  # the root's, as before
    assert project.module_file(sample, "numpy", 0) is None
    (tmp_path.parent / "outside_module.py").write_text("x = 1\n")
    assert project.module_file(sample, "outside_module", 0) is None


def test_a_sigmoid_in_an_imported_model_brings_the_sigmoid_rules(tmp_path):
    """A training file that never spells `sigmoid` writes a binary cross-entropy by hand of a model whose
    `forward`, in another module of the project, ends in `nn.Sigmoid()`: TL207 runs (the imported module
    spells the word) and owns the finding, as it does when both are in one file."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "net.py").write_text(
        "from torch import nn\n\n\nclass Scorer(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.head = nn.Linear(n, n)\n        self.squash = nn.Sigmoid()\n\n    def forward(self, x):\n"
        "        return self.squash(self.head(x))\n")
    (tmp_path / "fit.py").write_text(
        "import torch\nfrom net import Scorer\n\nmodel = Scorer(8)\n\n\ndef step(x, y):\n    p = model(x)\n"
        "    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()\n    loss.backward()\n")
    assert _codes(str(tmp_path / "fit.py"), Settings(all_rules(), project=Project())) == ["TL207"]


def test_the_folders_above_a_package_inside_a_script_folder_are_searched(tmp_path):
    """``gan/scripts/tools/sample.py`` in a package (``tools/__init__.py``) importing ``models.psp`` of
    ``gan/``: every folder between the importer and the root is searched, past those searched already."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for rel in ("gan/models/psp.py", "gan/scripts/tools/__init__.py", "gan/scripts/tools/sample.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    sample = str(tmp_path / "gan/scripts/tools/sample.py")
    assert Project().module_file(sample, "models.psp", 0) == str(tmp_path / "gan/models/psp.py")
