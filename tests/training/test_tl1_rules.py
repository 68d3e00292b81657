"""Engine-level tests of the training/evaluation-loop rules (TL102, TL104-TL109) beyond their cases:
options, fixes of several rules together, chains of fixes that must converge, and the evaluation
analysis they share."""
from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

TL1 = [r for r in all_rules() if r.CODE.startswith("TL1")]
BY_CODE = {r.CODE: r for r in all_rules()}


def lint(code: str, rules=None, **kw):
    return lint_source("train.py", textwrap.dedent(code), Settings(rules=rules or TL1, **kw))


def codes(result):
    return [(d.line, d.code) for d in result.diagnostics]


TRAIN_SCRIPT = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.dropout(F.relu(self.fc1(x)), 0.5)
        return self.fc2(x)


def validate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def main(train_loader, val_loader, epochs=5):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    history = []
    for epoch in range(epochs):
        scheduler.step()
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.zero_grad()
            optimizer.step()
            history.append(loss)
        print(epoch, validate(model, val_loader))
    return history
"""


def test_training_script_reports_each_mistake_once():
    result = lint(TRAIN_SCRIPT)
    assert not result.errors
    found = sorted({code for _, code in codes(result)})
    assert found == ["TL102", "TL104", "TL105", "TL106", "TL108", "TL109"]
    assert len(result.diagnostics) == 6


def test_all_fixes_together_converge_and_leave_nothing():
    result = lint(TRAIN_SCRIPT, fix=True, unsafe_fixes=True)
    assert not result.errors
    fixed = result.fixed_source
    assert fixed is not None
    cst.parse_module(fixed)
    again = lint_source("train.py", fixed, Settings(rules=TL1, fix=True, unsafe_fixes=True))
    assert again.fixed_source is None
    # TL106's fix puts the model in eval mode inside the epoch loop; TL107 then restores train mode
    assert codes(lint_source("train.py", fixed, Settings(rules=TL1))) == []
    assert "model.train()" in fixed and "model.eval()" in fixed
    assert "training=self.training" in fixed
    assert "history.append(loss.item())" in fixed
    assert fixed.index("optimizer.zero_grad()") < fixed.index("loss.backward()")
    assert fixed.index("optimizer.step()") < fixed.index("scheduler.step()")


def test_safe_fixes_only_leave_unsafe_findings():
    result = lint(TRAIN_SCRIPT, fix=True)
    assert not result.errors
    remaining = sorted({code for _, code in codes(result)})
    # TL104 (the list is returned), TL106 and TL109 have unsafe fixes here
    assert remaining == ["TL104", "TL106", "TL109"]


# -- TL104 options ---------------------------------------------------------------------------------
ACCUMULATE = """
def run_epoch(model, loader, criterion, optimizer):
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss
    print(total_loss)
"""


@pytest.mark.parametrize(
    "how, expected", [("item", "total_loss += loss.item()"), ("detach", "total_loss += loss.detach()")]
)
def test_loss_accumulation_fix_option(how, expected):
    result = lint(ACCUMULATE, [BY_CODE["TL104"]], options={"loss-accumulation-fix": how}, fix=True)
    assert expected in result.fixed_source


def test_loss_accumulation_fix_option_is_validated():
    option = BY_CODE["TL104"].OPTIONS["loss-accumulation-fix"]
    assert option.default == "item"
    assert option.validate("loss-accumulation-fix", "detach") == "detach"
    with pytest.raises(ValueError):
        option.validate("loss-accumulation-fix", "float")


def test_item_fix_is_unsafe_when_the_total_leaves_the_function_and_detach_is_safe():
    code = ACCUMULATE.replace("print(total_loss)", "return total_loss")
    item = lint(code, [BY_CODE["TL104"]])
    assert item.diagnostics[0].fix.applicability == "unsafe"
    detach = lint(code, [BY_CODE["TL104"]], options={"loss-accumulation-fix": "detach"})
    assert detach.diagnostics[0].fix.applicability == "safe"


def test_noqa_suppresses_tl104():
    code = ACCUMULATE.replace("total_loss += loss\n", "total_loss += loss  # noqa: TL104\n")
    assert codes(lint(code, [BY_CODE["TL104"]])) == []


# -- evaluation analysis ------------------------------------------------------------------------------
VALIDATE = """
import torch


def validate(model, val_loader, device):
    correct = 0
    total = 0
    for images, labels in val_loader:
        images, labels = images.to(device), labels.to(device)
        outputs = model(images)
        predicted = torch.argmax(outputs, dim=1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return correct / total
"""


#: VALIDATE whose parameter shows it holds a module (its parameters are read), by behaviour, not by name
VALIDATE_USED = VALIDATE.replace(
    "def validate(model, val_loader, device):\n", "def validate(model, val_loader, device):\n"
    "    print(sum(p.numel() for p in model.parameters()))\n")


def test_validate_without_no_grad_or_eval():
    # the model is a parameter of a function nothing in the project calls: only the function can switch
    # the mode it is handed the model in, so both the gradient and the mode mistake are reported
    assert codes(lint(VALIDATE_USED)) == [(11, "TL105"), (11, "TL106")]
    # what flows in and out says so too: a batch of the loop goes in, its output is ranked (`argmax`)
    assert codes(lint(VALIDATE)) == [(10, "TL105"), (10, "TL106")]
    renamed = VALIDATE_USED.replace("model", "f")
    assert codes(lint(renamed)) == [(11, "TL105"), (11, "TL106")]
    # ... and its name decides nothing: a caller that passes a plain function makes it none
    scorer = VALIDATE + "\n\nprint(validate(lambda images: images.mean(1), [], 'cpu'))\n"
    assert codes(lint(scorer)) == []
    unranked = VALIDATE.replace("predicted = torch.argmax(outputs, dim=1)", "predicted = outputs")
    assert codes(lint(unranked)) == []


def test_validate_called_in_the_file_decides_by_what_the_callers_pass():
    # the same function, now called with a model built from Linear layers only: eval() changes nothing
    called = VALIDATE + """

mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
print(validate(mlp, [], "cpu"))
"""
    assert codes(lint(called)) == [(10, "TL105")]
    # ... and with one that has dropout: reported with the layer as evidence
    dropped = called.replace("torch.nn.ReLU()", "torch.nn.Dropout(0.5)")
    found = lint(dropped)
    assert codes(found) == [(10, "TL105"), (10, "TL106")]
    assert "Dropout" in [d for d in found.diagnostics if d.code == "TL106"][0].message
    with_model = VALIDATE.replace("import torch\n", "import torch\nimport torch.nn as nn\n") + (
        "\n\nprint(validate(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)), [], 'cpu'))\n"
    )
    assert codes(lint(with_model)) == [(11, "TL105"), (11, "TL106")]


def test_same_code_without_torch_import_is_not_torch_evaluation():
    code = VALIDATE.replace("import torch\n", "import numpy as torch\n")
    assert codes(lint(code)) == []


def test_callers_in_the_module_decide_grad_and_mode():
    code = VALIDATE + """

def main(model, val_loader, device):
    model.eval()
    with torch.no_grad():
        return validate(model, val_loader, device)
"""
    assert codes(lint(code)) == []


def test_one_caller_without_no_grad_is_enough_to_report():
    code = VALIDATE + """

def main(model, val_loader, device):
    model.eval()
    with torch.no_grad():
        validate(model, val_loader, device)
    return validate(model, val_loader, device)
"""
    assert codes(lint(code)) == [(10, "TL105")]


def test_facts_do_not_leak_between_files():
    first = lint(VALIDATE_USED)
    assert codes(first)
    second = lint("import torch\n\ndef f(model, x):\n    return model(x)\n")
    assert codes(second) == []
    assert codes(lint(VALIDATE_USED)) == codes(first)


def test_results_are_deterministic():
    runs = {tuple(codes(lint(TRAIN_SCRIPT))) for _ in range(3)}
    assert len(runs) == 1


def test_fix_of_tl105_uses_the_module_spelling_of_torch():
    code = VALIDATE_USED.replace("import torch\n", "import torch as th\n").replace("torch.argmax", "th.argmax")
    result = lint(code, [BY_CODE["TL105"]], fix=True)
    assert "@th.no_grad()\ndef " in result.fixed_source


def test_tl106_fix_goes_inside_a_loop_that_builds_the_model():
    code = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))


def evaluate(paths, loader):
    scores = []
    for path in paths:
        model = Net()
        model.load_state_dict(torch.load(path))
        with torch.no_grad():
            scores.append(sum((model(x).argmax(1) == y).sum().item() for x, y in loader))
    return scores
"""
    result = lint(code, [BY_CODE["TL106"]], fix=True, unsafe_fixes=True)
    fixed = result.fixed_source
    assert fixed.index("model.load_state_dict(torch.load(path))") < fixed.index("model.eval()")


# -- fixes that must compose: the bundled example ------------------------------------------------------
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train.py"


def _random_batches(torch, count=4):
    gen = torch.Generator().manual_seed(0)
    return [(torch.randn(8, 20, generator=gen), torch.randint(0, 3, (8,), generator=gen)) for _ in range(count)]


def test_total_of_a_reported_accumulation_is_not_reported_again():
    # `history.append(total_loss / n)` only carries a graph through `total_loss += loss`; once that is
    # fixed the total is a float, and a second `.item()` on it would crash
    case = next(c for c in BY_CODE["TL104"].INVALID if "history.append(total_loss / len(loader))" in c.code)
    result = lint(case.code, [BY_CODE["TL104"]])
    assert codes(result) == [(19, "TL104")]
    nested = case.code.replace(
        "        history.append(total_loss / len(loader))\n",
        "        history.append(total_loss / len(loader))\n        epoch_total += total_loss\n",
    )
    assert codes(lint(nested, [BY_CODE["TL104"]])) == [(19, "TL104")]


def test_use_before_the_accumulation_still_reports_only_the_accumulation():
    code = """
def run(model, loader, criterion, optimizer, epochs):
    history = []
    total = 0.0
    for epoch in range(epochs):
        history.append(total)
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss
    return history
"""
    assert codes(lint(code, [BY_CODE["TL104"]])) == [(12, "TL104")]


def test_total_of_an_accumulation_that_is_not_reported_is_still_reported():
    # `total` is reset every iteration, so `total += loss` is no accumulation across iterations; the
    # epoch loop still keeps each epoch's last graph in `history`
    code = """
def run(model, loader, criterion, optimizer, epochs):
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            total = 0.0
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss
        history.append(total)
    return history
"""
    assert codes(lint(code, [BY_CODE["TL104"]])) == [(12, "TL104")]


@pytest.mark.slow
def test_accumulation_fix_keeps_the_program_running():
    torch = pytest.importorskip("torch")
    case = next(c for c in BY_CODE["TL104"].INVALID if "history.append(total_loss / len(loader))" in c.code)
    fixed = lint(case.code, TL1, fix=True, unsafe_fixes=True).fixed_source
    assert fixed == case.fixed
    namespace: dict = {"__name__": "case"}
    exec(compile(fixed, "case.py", "exec"), namespace)
    history = namespace["train"](_random_batches(torch), epochs=2)
    assert len(history) == 2 and all(isinstance(h, float) for h in history)


def test_bundled_example_fixes_converge_and_the_fixed_program_trains_in_train_mode():
    torch = pytest.importorskip("torch")
    if not EXAMPLE.exists():
        pytest.skip("examples/ is not shipped with this installation")
    settings = Settings(rules=all_rules(), fix=True, unsafe_fixes=True)
    first = lint_source("train.py", EXAMPLE.read_text(encoding="utf-8"), settings)
    assert not first.errors
    fixed = first.fixed_source
    assert fixed is not None and first.diagnostics == []
    assert lint_source("train.py", fixed, settings).fixed_source is None
    assert "total_loss += loss.item()" in fixed and ".item() / len(loader)" not in fixed
    # TL106 puts the model in eval mode in `validate`, called from the epoch loop, and switches it back
    # where training resumes
    assert fixed.count("model.eval()") == 1 and fixed.count("model.train()") == 1
    namespace: dict = {"__name__": "example"}
    exec(compile(fixed, "train.py", "exec"), namespace)
    modes = []
    namespace["model"].register_forward_pre_hook(
        lambda module, args: modes.append(module.training) if torch.is_grad_enabled() else None
    )
    history = namespace["train"](_random_batches(torch), epochs=2)
    assert len(history) == 2 and all(isinstance(h, float) for h in history)
    assert modes and all(modes), "a training forward pass ran in eval mode"


PIPELINE = """
import torch
import torch.nn as nn
from transformers import Pipeline


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.fc(self.drop(x))


{header}
    def predict(self, batches):
        preds = []
        for batch in batches:
            preds.append(self.model.encoder(batch).argmax(-1))
        return preds

    def weights(self):
        return self.model.state_dict()
"""


@pytest.mark.parametrize(
    "header",
    [
        "class Labeller(Pipeline):\n    pass",
        # a same-module base that derives from the framework class
        "class Base(Pipeline):\n    pass\n\n\nclass Labeller(Base):\n    pass",
        # the model is passed in (or moved), not built here
        "class Labeller(Pipeline):\n    def __init__(self, model, device):\n        self.model = model.to(device)",
    ],
)
def test_model_of_a_framework_class_that_does_not_build_it_is_left_to_the_framework(header):
    code = PIPELINE.format(header=header)
    assert codes(lint(code, [BY_CODE["TL105"], BY_CODE["TL106"]])) == []


@pytest.mark.parametrize(
    "header",
    [
        # the class builds the model: its mode and grad are the class's business
        "class Labeller(Pipeline):\n    def __init__(self):\n        self.model = Net().to('cuda')",
        # no framework base: a user's trainer given its model
        "class Labeller:\n    def __init__(self, model):\n        self.model = model",
        "class Labeller(object):\n    def __init__(self, model):\n        self.model = model",
    ],
)
def test_model_of_a_class_that_builds_it_or_has_no_framework_base_is_reported(header):
    code = PIPELINE.format(header=header)
    line = code.splitlines().index("            preds.append(self.model.encoder(batch).argmax(-1))") + 1
    # `encoder` is built by no class in view (`Net` has none): an attribute of a module that may be a
    # method doing anything (`init_hidden`) is no evidence of a forward pass
    assert codes(lint(code, [BY_CODE["TL105"], BY_CODE["TL106"]])) == []
    direct = code.replace("self.model.encoder(batch)", "self.model(batch)")
    expected = [(line, "TL105"), (line, "TL106")] if "Net()" in header else [(line, "TL105")]
    assert codes(lint(direct, [BY_CODE["TL105"], BY_CODE["TL106"]])) == expected
