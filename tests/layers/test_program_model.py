"""The program model across files: model classes and loss helpers imported from the project's modules."""
from __future__ import annotations

import os
import textwrap

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = all_rules()


def _write(root, files):
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))


def _lint(path, codes=None):
    rules = [r for r in RULES if codes is None or r.CODE in codes]
    result = lint_source(str(path), path.read_text(), Settings(rules=rules))
    assert not result.errors
    return [(d.code, d.line) for d in result.diagnostics]


SOFTMAX_MODEL = """
    import torch.nn as nn
    import torch.nn.functional as F

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            return F.softmax(self.fc(x), dim=1)

    class Logits(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            return self.fc(x)
"""

TRAIN = """
    import torch.nn as nn
    from {module} import CNN, Logits

    cnn = CNN()
    plain = Logits()
    criterion = nn.CrossEntropyLoss()

    def train(x, y):
        loss = criterion(cnn(x), y)
        loss = loss + criterion(plain(x), y)
        return loss
"""


def test_model_class_from_a_sibling_module(tmp_path):
    _write(tmp_path, {"models.py": SOFTMAX_MODEL, "train.py": TRAIN.format(module="models")})
    assert _lint(tmp_path / "train.py", {"TL103"}) == [("TL103", 10)]


def test_model_class_through_a_relative_import_and_a_package_reexport(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/nets/__init__.py": "from .cnn import CNN, Logits\n",
            "pkg/nets/cnn.py": SOFTMAX_MODEL,
            "pkg/train.py": TRAIN.format(module=".nets"),
            "scripts/run.py": TRAIN.format(module="pkg.nets"),
        },
    )
    assert _lint(tmp_path / "pkg" / "train.py", {"TL103"}) == [("TL103", 10)]
    assert _lint(tmp_path / "scripts" / "run.py", {"TL103"}) == [("TL103", 10)]


def test_loss_helper_in_another_module_gets_softmax_output(tmp_path):
    _write(
        tmp_path,
        {
            "losses.py": """
                import torch.nn.functional as F

                def classification_loss(scores, target):
                    return F.cross_entropy(scores, target)

                def bce_loss(prob, target):
                    return F.binary_cross_entropy(prob, target)

                def metric(scores, target):
                    return (scores.argmax(1) == target).float().mean()
            """,
            "train.py": """
                import torch
                from losses import classification_loss, bce_loss, metric

                def step(model, x, y):
                    logits = model(x)
                    probs = torch.softmax(logits, dim=1)
                    acc = metric(probs, y)
                    loss = classification_loss(probs, y) + classification_loss(logits, y)
                    return loss + bce_loss(torch.sigmoid(logits[:, 0]), y.float()), acc
            """,
        },
    )
    assert _lint(tmp_path / "train.py", {"TL103", "TL207"}) == [("TL103", 9), ("TL207", 10)]


def test_sigmoid_model_in_another_module(tmp_path):
    _write(
        tmp_path,
        {
            "gan/models.py": """
                import torch.nn as nn

                class D(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.net = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())

                    def forward(self, x):
                        return self.net(x)
            """,
            "gan/__init__.py": "",
            "gan/train.py": """
                import torch.nn as nn
                from gan.models import D

                netD = D()
                bce = nn.BCELoss()

                def step(real, ones):
                    return bce(netD(real), ones)
            """,
        },
    )
    assert _lint(tmp_path / "gan" / "train.py", {"TL207"}) == [("TL207", 9)]


def test_import_cycles_and_base_class_cycles_terminate(tmp_path):
    _write(
        tmp_path,
        {
            "a.py": """
                import torch.nn as nn
                from b import B

                class A(B):
                    pass
            """,
            "b.py": """
                from a import A

                class B(A):
                    pass
            """,
            "train.py": """
                import torch.nn as nn
                from a import A

                model = A()
                criterion = nn.CrossEntropyLoss()

                def step(x, y):
                    return criterion(model(x), y)
            """,
        },
    )
    assert _lint(tmp_path / "train.py") == []


def test_changing_the_imported_module_changes_the_result(tmp_path):
    _write(tmp_path, {"models.py": SOFTMAX_MODEL, "train.py": TRAIN.format(module="models")})
    assert _lint(tmp_path / "train.py", {"TL103"}) == [("TL103", 10)]
    (tmp_path / "models.py").write_text(textwrap.dedent(SOFTMAX_MODEL).replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)"))
    assert _lint(tmp_path / "train.py", {"TL103"}) == []


@pytest.mark.slow
def test_cached_result_is_invalidated_when_an_imported_module_changes(tmp_path, run):
    _write(tmp_path, {"models.py": SOFTMAX_MODEL, "train.py": TRAIN.format(module="models")})
    first = run("check", "train.py", "--select", "TL103")
    assert "train.py:10:" in first.stdout and "TL103" in first.stdout
    cached = run("check", "train.py", "--select", "TL103")
    assert cached.stdout == first.stdout
    (tmp_path / "models.py").write_text(textwrap.dedent(SOFTMAX_MODEL).replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)"))
    after = run("check", "train.py", "--select", "TL103")
    assert "TL103" not in after.stdout
    assert after.returncode == 0



@pytest.mark.slow
def test_cached_result_is_invalidated_when_an_imported_module_gains_the_softmax(tmp_path, run):
    # the other direction: models.py first never spells "softmax", so it is not even parsed; the
    # cached result of train.py must still depend on it
    plain = textwrap.dedent(SOFTMAX_MODEL).replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)")
    _write(tmp_path, {"models.py": plain, "train.py": TRAIN.format(module="models")})
    first = run("check", "train.py", "--select", "TL103")
    assert "TL103" not in first.stdout and first.returncode == 0
    (tmp_path / "models.py").write_text(textwrap.dedent(SOFTMAX_MODEL))
    after = run("check", "train.py", "--select", "TL103")
    assert "train.py:10:" in after.stdout and "TL103" in after.stdout


HAND_WRITTEN_OPTIMIZER = """
import torch

class PlainSGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    @torch.no_grad()
    def step(self):
        for p in self.params:
            p -= self.lr * p.grad

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = PlainSGD(model.parameters(), lr=0.01)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for x, y in data:
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
print(round(float(model.weight.sum()), 4))
"""


@pytest.mark.slow
def test_tl101_never_inserts_zero_grad_on_an_object_without_one(tmp_path):
    """The mistake is reported, but no fix calls a `zero_grad` the optimizer does not have: the fixed
    program still runs and prints the same."""
    import subprocess
    import sys

    from torchlint.rules import all_rules

    settings = Settings(rules=all_rules(), fix=True, unsafe_fixes=True)
    result = lint_source("train.py", HAND_WRITTEN_OPTIMIZER, settings)
    assert any(d.code == "TL101" and d.fix is None for d in result.diagnostics)
    fixed = result.fixed_source or HAND_WRITTEN_OPTIMIZER
    assert "opt.zero_grad()" not in fixed
    runs = []
    for code in (HAND_WRITTEN_OPTIMIZER, fixed):
        path = tmp_path / "prog.py"
        path.write_text(code)
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        runs.append(done.stdout)
    assert runs[0] == runs[1]


MOVED_MODEL = """
    import torch
    import torch.nn.functional as F

    class AE(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.drop = torch.nn.Dropout(0.2)

        def forward(self, x):
            return torch.sigmoid(self.drop(self.fc(x)))

    model = AE()
    model = model.to("cpu")
    optimizer = torch.optim.Adam(model.parameters())

    def train(loader):
        for x in loader:
            optimizer.zero_grad()
            loss = F.binary_cross_entropy(model(x), x)
            loss.backward()
            optimizer.step()

    def accuracy(loader):
        correct = 0
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
        return correct
"""


def test_a_model_moved_onto_itself_keeps_its_role_and_summary(tmp_path):
    """`model = model.to(device)` rebinds the same module: its forward's sigmoid (TL207) and its
    mode-dependent layers (TL106) are still known."""
    _write(tmp_path, {"train.py": MOVED_MODEL})
    found = _lint(tmp_path / "train.py", {"TL207", "TL105", "TL106"})
    assert ("TL207", 21) in found
    assert ("TL105", 28) in found and ("TL106", 28) in found


def test_module_level_global_statement_does_not_loop(tmp_path):
    _write(tmp_path, {"g.py": "import torch\nglobal net\nnet = torch.nn.Linear(2, 2)\n\ndef f(x):\n    return net(x)\n"})
    assert _lint(tmp_path / "g.py") is not None


REDEFINED_HELPER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    model = nn.Linear(4, 3)
    criterion = nn.CrossEntropyLoss()
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))


    def compute_loss(scores, target):
        return criterion(scores, target)


    probs = F.softmax(model(x), dim=1)
    loss = compute_loss(probs, y)


    def compute_loss(scores, target):
        return ((scores - F.one_hot(target, 3)) ** 2).mean()


    loss = compute_loss(probs, y)


    def later(p):
        return compute_loss(p, y)


    later(F.softmax(model(x), dim=1))
"""


def test_a_helper_redefined_further_down_is_the_one_bound_where_module_code_calls_it(tmp_path):
    # a notebook defines compute_loss in one cell and redefines it in a later one: the first call goes to
    # the cross-entropy version (TL103), the second to the squared-error one (silent); a call inside a
    # function body may run with either, and stays silent
    _write(tmp_path, {"nb.py": REDEFINED_HELPER})
    assert _lint(tmp_path / "nb.py", {"TL103"}) == [("TL103", 16)]


def test_an_imported_name_defined_twice_is_its_last_definition(tmp_path):
    twice = SOFTMAX_MODEL.replace("class CNN(nn.Module):", "class CNN(nn.Module):\n        pass\n\n    class CNN(nn.Module):", 1)
    assert twice.count("class CNN(") == 2
    _write(tmp_path, {"models.py": twice, "train.py": TRAIN.format(module="models")})
    assert _lint(tmp_path / "train.py", {"TL103"}) == [("TL103", 10)]


EVAL_HELPER = """
    import torch


    def evaluate(model, loader):
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
        {restore}return correct
"""
FIT_LOOP = """
    import torch
    import torch.nn as nn

    from metrics import evaluate

    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()


    def fit(loader, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                criterion(net(x), y).backward()
                opt.step()
            print(epoch, evaluate(net, loader))
"""


def test_an_evaluation_helper_of_another_file_that_leaves_eval_mode_on_is_tl107(tmp_path):
    _write(tmp_path, {"metrics.py": EVAL_HELPER.format(restore=""), "train.py": FIT_LOOP})
    assert _lint(tmp_path / "train.py", {"TL107"}) == [("TL107", 18)]


def test_an_evaluation_helper_of_another_file_that_restores_train_mode_is_silent(tmp_path):
    _write(tmp_path, {"metrics.py": EVAL_HELPER.format(restore="model.train()\n        "), "train.py": FIT_LOOP})
    assert _lint(tmp_path / "train.py", {"TL107"}) == []


def test_a_training_helper_of_another_file_that_sets_train_mode_is_silent(tmp_path):
    helpers = EVAL_HELPER.format(restore="") + "\n\ndef step_all(model, loader, opt, criterion):\n    model.train()\n    for x, y in loader:\n        opt.zero_grad()\n        criterion(model(x), y).backward()\n        opt.step()\n"
    loop = FIT_LOOP.replace("from metrics import evaluate", "from metrics import evaluate, step_all").replace(
        "            for x, y in loader:\n                opt.zero_grad()\n                criterion(net(x), y).backward()\n                opt.step()\n",
        "            step_all(net, loader, opt, criterion)\n            opt.step()\n",
    )
    assert "step_all(net" in loop
    _write(tmp_path, {"metrics.py": helpers, "train.py": loop})
    assert _lint(tmp_path / "train.py", {"TL107"}) == []


REGRESSOR = """
    import torch.nn as nn

    class Regressor(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n, 32), nn.ReLU())
            self.head = nn.Linear(32, 1)

        def forward(self, x):
            h = self.body(x)
            return self.head(h)

    class Scores(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.head = nn.Linear(n, 4)

        def forward(self, x):
            return self.head(x)
"""


def test_output_shape_of_a_model_class_from_another_module(tmp_path):
    """TL402 and TL401 know the last dimension of a model defined in a sibling module: [N, 1] against
    targets [N] broadcasts; [N, 4] squeezed has no dimension known to be 1."""
    _write(tmp_path, {
        "models.py": REGRESSOR,
        "train.py": """
            import torch
            import torch.nn.functional as F
            from models import Regressor, Scores

            model = Regressor(8)
            scorer = Scores(8)

            def step(x, rows):
                y = torch.tensor([float(r) for r in rows])
                loss = F.mse_loss(model(x), y)
                return loss + F.mse_loss(scorer(x), y), model(x).squeeze()
        """,
    })
    found = _lint(tmp_path / "train.py", {"TL402", "TL401"})
    assert ("TL402", 11) in found and ("TL402", 12) not in found
    fixed = lint_source(str(tmp_path / "train.py"), (tmp_path / "train.py").read_text(),
                        Settings(rules=[r for r in RULES if r.CODE == "TL401"]))
    assert [d.message for d in fixed.diagnostics if d.line == 12] and all(
        "squeeze(-1)" in d.message for d in fixed.diagnostics if d.line == 12
    )


def test_tensors_built_by_torch_nn_are_not_modules():
    """``nn.Buffer``/``nn.Parameter`` (and their uninitialised kinds) build tensors held by a module; only
    the layer classes of ``torch.nn`` build modules."""
    import libcst as cst

    from torchlint.analysis.context import FileContext
    from torchlint.analysis.roles import is_module_value
    from torchlint.engine import analyze

    code = textwrap.dedent(
        """
        import torch
        import torch.nn as nn

        a = nn.Buffer(torch.zeros(3))
        b = nn.Parameter(torch.zeros(3))
        c = nn.UninitializedParameter()
        d = torch.nn.parameter.Buffer(torch.ones(2))
        e = nn.Linear(3, 3)
        """
    )
    ctx = FileContext("m.py", code, cst.parse_module(code))
    analyze(ctx)
    values = {s.body[0].targets[0].target.value: s.body[0].value for s in ctx.module.body
              if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)}
    assert {k: is_module_value(ctx, v) for k, v in values.items()} == {
        "a": False, "b": False, "c": False, "d": False, "e": True}



def test_library_tokenizers_and_configs_from_pretrained_are_not_modules():
    """``from_pretrained`` of a library's tokenizer, processor or config builds no module (a message must
    not call a tokenizer's output a model's); of its model classes it does."""
    import libcst as cst

    from torchlint.analysis.context import FileContext
    from torchlint.analysis.roles import is_module_value
    from torchlint.engine import analyze

    code = textwrap.dedent(
        """
        from transformers import AutoConfig, AutoModel, GPT2Tokenizer, AutoImageProcessor

        a = GPT2Tokenizer.from_pretrained("gpt2")
        b = AutoConfig.from_pretrained("gpt2")
        c = AutoImageProcessor.from_pretrained("vit")
        d = AutoModel.from_pretrained("gpt2")
        """
    )
    ctx = FileContext("m.py", code, cst.parse_module(code))
    analyze(ctx)
    values = {s.body[0].targets[0].target.value: s.body[0].value for s in ctx.module.body
              if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)}
    assert {k: is_module_value(ctx, v) for k, v in values.items()} == {"a": False, "b": False, "c": False, "d": True}

# -- TL602: a layer read from another file of the project ---------------------------------------------
AUX_MODEL = """
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.aux_head = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
"""
AUX_TRAIN = """
    import torch
    from model import Net

    model = Net()
    x = torch.randn(2, 4)
    out = model(x)
"""


def test_tl602_a_layer_read_only_in_another_project_file_is_used(tmp_path):
    # another model's own layer of that name (`self.aux_head` in a class built on nn.Module) is no use
    other = AUX_MODEL.replace("class Net", "class Other").replace("return self.fc(x)", "return self.aux_head(x)")
    _write(tmp_path, {"model.py": AUX_MODEL, "other.py": other, "train.py": AUX_TRAIN})
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    (tmp_path / "train.py").write_text(textwrap.dedent(AUX_TRAIN) + "aux = model.aux_head(out)\n")
    assert _lint(tmp_path / "model.py", {"TL602"}) == []
    (tmp_path / "train.py").write_text(textwrap.dedent(AUX_TRAIN) + "heads = [getattr(model, 'aux_head')]\n")
    assert _lint(tmp_path / "model.py", {"TL602"}) == []


def test_tl602_a_layer_read_in_a_notebook_of_the_project_is_used(tmp_path):
    import nbformat

    _write(tmp_path, {"model.py": AUX_MODEL})
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%matplotlib inline\nfrom model import Net"),
                nbformat.v4.new_code_cell("model = Net()\nmodel.aux_head")]
    (tmp_path / "explore.ipynb").write_text(nbformat.writes(nb))
    assert _lint(tmp_path / "model.py", {"TL602"}) == []
    nb.cells[1] = nbformat.v4.new_code_cell("model = Net()\nmodel.fc")
    (tmp_path / "explore.ipynb").write_text(nbformat.writes(nb))
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]


def test_tl602_a_notebook_heavy_with_outputs_is_read_by_its_code(tmp_path):
    # a notebook whose outputs (images, logs) weigh more than a module the program model reads: its code
    # cells are what counts, and they read the layer or not
    import nbformat

    _write(tmp_path, {"model.py": AUX_MODEL})
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("from model import Net\nmodel = Net()\nmodel.fc")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="loss 0.1\n" * 300_000)]
    nb.cells = [cell]
    (tmp_path / "explore.ipynb").write_text(nbformat.writes(nb))
    assert (tmp_path / "explore.ipynb").stat().st_size > 2_000_000
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    nb.cells[0].source = "from model import Net\nmodel = Net()\nmodel.aux_head"
    (tmp_path / "explore.ipynb").write_text(nbformat.writes(nb))
    assert _lint(tmp_path / "model.py", {"TL602"}) == []


def test_tl602_cached_result_follows_the_other_files(tmp_path, run):
    _write(tmp_path, {"model.py": AUX_MODEL, "train.py": AUX_TRAIN})
    first = run("check", "model.py", "--select", "TL602")
    assert "model.py:8:" in first.stdout and "TL602" in first.stdout
    assert run("check", "model.py", "--select", "TL602").stdout == first.stdout
    # the other file starts to read the layer: the cached finding is not served
    (tmp_path / "train.py").write_text(textwrap.dedent(AUX_TRAIN) + "aux = model.aux_head(out)\n")
    after = run("check", "model.py", "--select", "TL602")
    assert "TL602" not in after.stdout and after.returncode == 0
    # and stops reading it: the finding is back
    (tmp_path / "train.py").write_text(textwrap.dedent(AUX_TRAIN))
    assert "model.py:8:" in run("check", "model.py", "--select", "TL602").stdout
    # a new file of the project reads it
    (tmp_path / "probe.py").write_text("from model import Net\nNet().aux_head\n")
    after = run("check", "model.py", "--select", "TL602")
    assert "TL602" not in after.stdout and after.returncode == 0


ATTENTION = """
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self, factor=1, attention_dropout=0.1):
            super().__init__()
            self.factor = factor
            self.proj = nn.Linear(4, 4)
            self.dropout = nn.Dropout(attention_dropout)

        def forward(self, x):
            return self.proj(x) * self.factor
"""
SETTINGS_MODEL = """
    import torch.nn as nn
    from attention import Attention

    class Model(nn.Module):
        def __init__(self, configs):
            super().__init__()
            self.seq_len = configs.seq_len
            self.attn = Attention(configs.factor, attention_dropout=configs.dropout)

        def forward(self, x):
            return self.attn(x)
"""


def test_tl602_a_settings_object_of_another_file_is_no_instance_of_the_class(tmp_path):
    # `configs.dropout` beside `configs.seq_len`, which no `Attention` has: a settings object, no layer read
    _write(tmp_path, {"attention.py": ATTENTION, "model.py": SETTINGS_MODEL})
    assert _lint(tmp_path / "attention.py", {"TL602"}) == [("TL602", 9)]
    # read only for what an Attention also has (`factor`): it may be one, the read counts
    _write(tmp_path, {"model.py": SETTINGS_MODEL.replace("configs.seq_len", "configs.factor")})
    assert _lint(tmp_path / "attention.py", {"TL602"}) == []
    # the other attribute read only under a condition: it says nothing of every value
    guarded = SETTINGS_MODEL.replace("            self.seq_len = configs.seq_len\n",
                                     "            if configs:\n                self.seq_len = configs.seq_len\n")
    _write(tmp_path, {"model.py": guarded})
    assert _lint(tmp_path / "attention.py", {"TL602"}) == []
    # the file sets `seq_len` on a value that may be an Attention: it may have it
    _write(tmp_path, {"model.py": SETTINGS_MODEL + "\n    def widen(m):\n        m.seq_len = 3\n"})
    assert _lint(tmp_path / "attention.py", {"TL602"}) == []


SETTINGS_CONFIG = """
    class Config:
        hidden = 8
        dropout_keep = 0.5
"""
SETTINGS_NET = """
    import torch
    import torch.nn as nn
    from config import Config


    class Net(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.fc = nn.Linear(4, config.hidden)
            self.dropout = nn.Dropout(self.config.dropout_keep)

        def forward(self, x):
            return self.dropout(self.fc(x))


    def accuracy(model, batches):
        with torch.no_grad():
            return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


    model = Net(Config())
    print(accuracy(model, [(torch.randn(2, 4), torch.tensor([0, 1]))]))
"""


def test_tl106_a_rate_from_a_settings_class_of_another_file_and_the_cache_follows_it(tmp_path, run):
    _write(tmp_path, {"config.py": SETTINGS_CONFIG, "net.py": SETTINGS_NET})
    first = run("check", "net.py", "--select", "TL106")
    assert "net.py:20:" in first.stdout and "TL106" in first.stdout
    assert run("check", "net.py", "--select", "TL106").stdout == first.stdout
    # the settings class turns the dropout off: the cached finding is not served
    (tmp_path / "config.py").write_text(textwrap.dedent(SETTINGS_CONFIG).replace("0.5", "0.0"))
    after = run("check", "net.py", "--select", "TL106")
    assert "TL106" not in after.stdout and after.returncode == 0


def test_tl602_a_subclass_in_another_file_uses_the_layer_and_an_unrelated_class_does_not(tmp_path):
    unrelated = """
        import torch.nn as nn

        class Block(nn.Module):
            pass

        class Other(Block):
            def __init__(self):
                super().__init__()
                self.aux_head = nn.Linear(4, 2)

            def forward(self, x):
                return self.aux_head(x)
    """
    sub = """
        from model import Net

        class WithAux(Net):
            def forward(self, x):
                return self.aux_head(self.fc(x))
    """
    _write(tmp_path, {"model.py": AUX_MODEL, "other.py": unrelated, "train.py": AUX_TRAIN})
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    (tmp_path / "sub.py").write_text(textwrap.dedent(sub))
    assert _lint(tmp_path / "model.py", {"TL602"}) == []


def test_tl602_a_read_elsewhere_counts_only_on_a_receiver_that_may_be_the_model(tmp_path):
    # reads of the same name on values known to be something else: a config dataclass (annotated or
    # built), a module-level dict constant, a tensor; and strings that only name it (a list, a key map)
    config = """
        from dataclasses import dataclass
        import torch
        from model import Net

        @dataclass
        class HeadCfg:
            aux_head: int = 2

        DEFAULTS = {"aux_head": 2}
        DEFAULTS_OBJ = HeadCfg()
        KEEP = ["fc", "aux_head"]
        RENAME = {"old_aux": "aux_head"}


        def build(cfg: HeadCfg, t: torch.Tensor, n: int):
            made = HeadCfg(aux_head=3)
            key = "aux.weight".replace("aux", "aux_head")
            size = DEFAULTS["aux_head"] + getattr(cfg, "aux_head")
            return cfg.aux_head + made.aux_head + DEFAULTS_OBJ.aux_head + t.aux_head + n.aux_head, key, size
    """
    _write(tmp_path, {"model.py": AUX_MODEL, "config.py": config, "train.py": AUX_TRAIN})
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    # a receiver that may be the model still counts: a parameter annotated with its base, one not annotated
    for read in ("def peek(m: nn.Module):\n    return m.aux_head\n",
                 "def peek(m):\n    return m.aux_head\n",
                 "def peek(m: Net):\n    return m.aux_head\n",
                 "state = model.state_dict()\nw = state['aux_head.weight']\n",
                 "model.get_submodule('aux_head')\n"):
        (tmp_path / "train.py").write_text(textwrap.dedent(AUX_TRAIN) + "import torch.nn as nn\n" + read)
        assert _lint(tmp_path / "model.py", {"TL602"}) == [], read


DROP_MODEL = """
    import torch.nn as nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x):
            return self.fc(x)
"""


def test_tl602_library_modules_options_and_settings_in_other_files_read_no_layer(tmp_path):
    # `F.dropout` (a library module), the "dropout" key of an options mapping, a message, and the
    # `cfg.dropout` of a constructor parameter every construction fills with a settings object
    train = """
        import torch
        import torch.nn.functional as F
        from model import Tagger


        class Settings:
            def __init__(self):
                self.dropout = 0.1


        class Trainer:
            def __init__(self, cfg):
                self.rate = cfg.dropout


        def noisy(x, options):
            print(f"dropout {options['dropout']}")
            return F.dropout(x, options["dropout"])


        model = Tagger()
        trainer = Trainer(Settings())
        out = noisy(model(torch.randn(2, 4)), {"dropout": 0.5})
    """
    _write(tmp_path, {"model.py": DROP_MODEL, "train.py": train})
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    # a helper of the project that reaches the layer through the model's `_modules` uses it
    (tmp_path / "probe.py").write_text("def pick(m):\n    return m._modules['dropout']\n")
    assert _lint(tmp_path / "model.py", {"TL602"}) == []


def test_tl602_other_files_are_parsed_only_when_their_text_may_read_the_layer(tmp_path, monkeypatch):
    """A file whose only spelling of the layer is `self.<name>` in classes that name neither the model's
    class nor a subclass of it is not parsed; a subclass reached through a chain of files is, and uses it."""
    from torchlint.analysis.project import Project

    unrelated = """
        import torch.nn as nn

        class Other(nn.Module):
            def __init__(self):
                super().__init__()
                self.aux_head = nn.Linear(4, 2)

            def forward(self, x):
                return self.aux_head(x)
    """
    loaded = []
    real_load = Project.load

    def counting(self, path):
        loaded.append(os.path.basename(path))
        return real_load(self, path)

    monkeypatch.setattr(Project, "load", counting)
    _write(tmp_path, {"model.py": AUX_MODEL, "other.py": unrelated})
    assert _lint(tmp_path / "model.py", {"TL602"}) == [("TL602", 8)]
    assert "other.py" not in loaded
    # a subclass of a subclass, in two more files: the chain is followed by text, and the use counts
    _write(tmp_path, {
        "mid.py": "from model import Net\n\nclass Mid(Net):\n    pass\n",
        "leaf.py": "from mid import Mid\n\nclass Leaf(Mid):\n    def forward(self, x):\n        return self.aux_head(x)\n",
    })
    assert _lint(tmp_path / "model.py", {"TL602"}) == []
    assert "leaf.py" in loaded


GAN_MODELS = """
    import torch.nn as nn

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, z):
            return self.fc(z)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 1)

        def forward(self, x):
            return self.fc(x)
"""

GAN_SCRIPT = """
    import torch
    from models import *

    generator = Generator()
    discriminator = Discriminator()
    if torch.cuda.is_available():
        generator.cuda()
    optimizer_G = torch.optim.Adam({held}.parameters())
    optimizer_D = torch.optim.Adam(discriminator.parameters())
    for real in []:
        optimizer_G.zero_grad()
        g_loss = -discriminator(generator(torch.randn(4, 8))).mean()
        g_loss.backward()
        optimizer_G.step()
"""


def test_model_classes_through_a_star_import_of_a_project_module(tmp_path):
    _write(tmp_path, {"models.py": GAN_MODELS, "gan.py": GAN_SCRIPT.format(held="discriminator"),
                      "ok.py": GAN_SCRIPT.format(held="generator")})
    assert _lint(tmp_path / "gan.py", {"TL603"}) == [("TL603", 14)]  # the generator is never trained
    assert _lint(tmp_path / "ok.py", {"TL603"}) == []


TRAINER = """
    import torch
    import torch.nn as nn

    class Fitter:
        def __init__(self, net, objective=nn.CrossEntropyLoss()):
            self.net = net
            self.objective = objective

        def update(self, x, y):
            return self.objective(torch.softmax(self.net(x), dim=1), y)
    """


@pytest.mark.parametrize("main, expected", [
    ("from fitting import Fitter\nfitter = Fitter(object())\n", [("TL103", 11)]),
    ("import torch.nn as nn\nfrom fitting import Fitter\nfitter = Fitter(object(), objective=nn.NLLLoss())\n", []),
    ("from fitting import Fitter\n\nclass Mine(Fitter):\n    def __init__(self, net):\n"
     "        super().__init__(net, print)\n", []),
    ("from fitting import Fitter\n\ndef build(net, **options):\n    return Fitter(net, **options)\n\n"
     "fitter = build(object(), objective=None)\n", []),
])
def test_a_constructor_default_criterion_is_read_unless_a_construction_in_the_project_passes_one(
        tmp_path, main, expected):
    _write(tmp_path, {"fitting.py": TRAINER, "main.py": main})
    assert _lint(tmp_path / "fitting.py", {"TL103"}) == expected
