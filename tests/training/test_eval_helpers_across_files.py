"""Evaluation by behaviour through the project's own helpers in other files (TL105): an output handed to
a function of another module whose code takes no gradient (a box suppression, a rescaling) stays an
evaluation, with a safe fix; one handed to a function that backpropagates is training.  Imports of the
form ``pkg.mod`` resolve from the folder above the outermost package even without a project marker."""
from __future__ import annotations

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RUN = """import torch
from {pkg}.post import tidy


def detect(model, image):
    model.eval()
    out = model(image)
    out = tidy(out, 0.5)
    return out.numpy()
"""

POST_PLAIN = """import torch


def tidy(pred, thres):
    keep = pred[..., 0] > thres
    return pred[keep]
"""

POST_GRAD = """import torch


def tidy(pred, thres):
    pred.sum().backward()
    return pred.detach()
"""


@pytest.mark.parametrize("post, expected", [(POST_PLAIN, [("TL105", "safe")]), (POST_GRAD, [])])
@pytest.mark.parametrize("marker", [True, False])
def test_an_output_through_a_helper_of_another_file(tmp_path, post, expected, marker):
    if marker:
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    pkg = tmp_path / "detector"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "post.py").write_text(post)
    run = pkg / "run.py"
    run.write_text(RUN.format(pkg="detector"))
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    got = [(d.code, "none" if d.fix is None else d.fix.applicability) for d in found if d.code == "TL105"]
    assert got == expected


PARTS = """import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.{norm}(width), nn.ReLU())

    def forward(self, x):
        return self.body(x)
"""

MODEL = """from .parts import *


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block(3)
        self.second = Block(3)

    def forward(self, x):
        return self.second(self.first(x))
"""

PREDICT = """import torch

from seg import Net


def predict(net, image):
    with torch.no_grad():
        return net(image).argmax(1)


if __name__ == "__main__":
    net = Net()
    net.load_state_dict(torch.load("net.pt", weights_only=True))
    print(predict(net, torch.rand(1, 3, 8, 8)))
"""


@pytest.mark.parametrize("norm, expected", [("BatchNorm2d", ["TL106"]), ("Identity", [])])
def test_a_model_class_whose_torch_base_comes_through_a_star_import(tmp_path, norm, expected):
    # `class Net(nn.Module)` where `nn` is the `import torch.nn as nn` of the module `from .parts import *`
    # reads: the class is a module, and its blocks' batch norm makes it behave differently in eval mode
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "seg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .model import Net\n")
    (pkg / "parts.py").write_text(PARTS.format(norm=norm))
    (pkg / "model.py").write_text(MODEL)
    path = tmp_path / "predict.py"
    path.write_text(PREDICT)
    result = lint_source(str(path), PREDICT, Settings(rules=[r for r in all_rules() if r.CODE == "TL106"]))
    assert not result.errors
    assert [d.code for d in result.diagnostics] == expected


# -- a model built from the options a script parses: the rate is the option's default there ------------
OPTIONS_MAIN = """import argparse

import torch

import nets
import loops

parser = argparse.ArgumentParser()
parser.add_argument("--hidden", type=int, default=16)
parser.add_argument("--drop-rate", type=float, default={rate})
args = parser.parse_args()
net = nets.Scorer(args)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
loops.fit(net, opt, [(torch.randn(8, 4), torch.randint(0, 3, (8,)))])
print(loops.score(net, [(torch.randn(8, 4), torch.randint(0, 3, (8,)))]))
"""

OPTIONS_NETS = """import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.body = nn.Linear(4, args.hidden)
        self.drop = nn.Dropout(args.drop_rate)
        self.out = nn.Linear(args.hidden, 3)

    def forward(self, x):
        return self.out(self.drop(self.body(x).relu()))
"""

OPTIONS_LOOPS = """import torch
import torch.nn.functional as F


def fit(net, opt, batches):
    net.train()
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()


def score(net, batches):
    hits = 0
    with torch.no_grad():
        for x, y in batches:
            hits += (net(x).argmax(1) == y).sum().item()
    return hits
"""


@pytest.mark.parametrize("rate, expected", [("0.5", ["TL106"]), ("0.0", [])])
def test_a_rate_from_the_options_another_file_parses(tmp_path, rate, expected):
    """``nn.Dropout(args.drop_rate)`` with ``args`` handed in: the default the project's script declares
    for ``--drop-rate`` decides whether the scoring loop runs a layer that depends on the mode."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "main.py").write_text(OPTIONS_MAIN.format(rate=rate))
    (tmp_path / "nets.py").write_text(OPTIONS_NETS)
    loops = tmp_path / "loops.py"
    loops.write_text(OPTIONS_LOOPS)
    found = lint_source(str(loops), loops.read_text(), Settings(all_rules())).diagnostics
    assert [d.code for d in found if d.code == "TL106"] == expected


BASE_PLAIN = """import torch
import torch.nn as nn


class TabModel:
    def __init__(self):
        self.network = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))
        self.optimizer = torch.optim.Adam(self.network.parameters())

    def fit(self, batches):
        self.network.train()
        for x, y in batches:
            loss = nn.functional.cross_entropy(self.network(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""

BASE_MODULE = """import torch.nn as nn


class TabModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))

    def forward(self, x):
        return self.network(x)
"""

SUBCLASS = """import torch
from {base} import TabModel


class Classifier(TabModel):
    def predict_proba(self, batches):
        self.network.eval()
        out = []
        for x in batches:
            out.append(torch.softmax(self.network(x), dim=1).detach().numpy())
        return out
"""


@pytest.mark.parametrize("base, expected", [
    (BASE_PLAIN, ["TL105"]),  # a trainer class of the project: its subclass's prediction is evaluation code
    (BASE_MODULE, []),  # a module class of the project: the subclass's method is a model's own API
    (None, []),  # a library base that is not in view: a framework that may run it under `no_grad`
])
def test_a_subclass_of_a_project_class_in_another_file(tmp_path, base, expected):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    if base is not None:
        (tmp_path / "models.py").write_text(base)
    source = SUBCLASS.format(base="models" if base is not None else "frameworklib.models")
    path = tmp_path / "predict.py"
    path.write_text(source)
    found = lint_source(str(path), source, Settings(all_rules())).diagnostics
    assert [d.code for d in found if d.code.startswith("TL1")] == expected


def test_a_model_method_run_on_what_a_factory_of_another_file_returns(tmp_path):
    """``model = load_model(h)`` of another module (which may pass the model through a helper that hands
    it back) is an instance of the project's class: its own ``inference`` method run on an input, the
    output read off the graph, is evaluation."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n"
        "    def inference(self, x):\n        return F.dropout(self.fc(x), 0.5, self.training)\n")
    (tmp_path / "train.py").write_text(
        "from model import Net\n\n\ndef wrap(module):\n    module.flag = True\n    return module\n\n\n"
        "def load_model(h):\n    model = Net()\n    if h:\n        model = wrap(model)\n    return model\n")
    source = ("import torch\nfrom train import load_model\n\nmodel = load_model(None)\n"
              "model.load_state_dict(torch.load('c.pt', map_location='cpu'))\nmodel.eval()\n"
              "out = model.inference(torch.randn(1, 4))\nprint(out.numpy())\n")
    path = tmp_path / "infer.py"
    path.write_text(source)
    found = lint_source(str(path), source, Settings(all_rules())).diagnostics
    assert [(d.code, d.line) for d in found] == [("TL105", 7)]


BUILDERS = """import torch.nn as nn


class ResNet(nn.Module):
    def __init__(self, depth, num_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


def resnet8(**kwargs):
    return ResNet(8, **kwargs)


def linear(num_classes=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(192, num_classes))
"""

TABLE = """from .nets import resnet8, linear

model_dict = {{
    'resnet8': resnet8,
    {second}
}}
"""

LOOPS = """import torch


def validate(loader, model, criterion):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += criterion(model(x), y).item()
    return total
"""

TRAIN = """import argparse

import torch
import torch.nn as nn

from helper.loops import validate
from models import model_dict


def parse_option():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', type=str, default='{default}')
    return parser.parse_args()


def main():
    opt = parse_option()
    model = model_dict[{key}](num_classes=10)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,)))]
    for epoch in range(3):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        print(validate(loader, model, criterion))


main()
"""


@pytest.mark.parametrize("default, key, second, reported", [
    ("resnet8", "opt.model", "'linear': linear,", True),  # the option's default picks a batch-norm network
    ("linear", "opt.model", "'linear': linear,", False),  # ... a linear model: nothing to switch
    ("x", "opt.model.lower()", "'resnet20': resnet8,", True),  # the key unknown: every builder has batch norm
    # the key unknown: the option may pick the batch-norm network, and then the validation is wrong
    ("x", "opt.model.lower()", "'linear': linear,", True),
])
def test_a_model_built_from_a_dict_of_builders_of_a_package(tmp_path, default, key, second, reported):
    # `model_dict[opt.model](num_classes=10)` with `model_dict` a display of the models package, the model
    # then validated by a helper of another package that never switches it
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    models = tmp_path / "models"
    models.mkdir()
    (models / "nets.py").write_text(BUILDERS)
    (models / "__init__.py").write_text(TABLE.format(second=second))
    helper = tmp_path / "helper"
    helper.mkdir()
    (helper / "__init__.py").write_text("")
    loops = helper / "loops.py"
    loops.write_text(LOOPS)
    (tmp_path / "train.py").write_text(TRAIN.format(default=default, key=key))
    found = lint_source(str(loops), loops.read_text(), Settings(all_rules())).diagnostics
    assert [d.line for d in found if d.code == "TL106"] == ([8] if reported else [])


FACTORY_CLASS = """import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 3)

    def forward(self, x):
        return self.body(x)

    def make_check(self):
        def check(x, y):
            return F.cross_entropy(self(x), y)
        return check

    def score(self, x):
        return self(x).argmax(-1)
"""

FACTORY_RUN = """import torch
from scorer import Scorer

net = Scorer()
net.load_state_dict(torch.load("scorer.pt", weights_only=True))
check = net.make_check()
top = net.score(torch.randn(2, 6))
print(top.tolist())
"""


def test_a_method_that_returns_a_closure_runs_no_model(tmp_path):
    # `net.make_check()` builds a function that runs the model later: that call is no forward pass; the
    # method that runs the model (`net.score(x)`) still is
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "scorer.py").write_text(FACTORY_CLASS)
    run = tmp_path / "run.py"
    run.write_text(FACTORY_RUN)
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    assert [(d.code, d.line) for d in found if d.code == "TL105"] == [("TL105", 7)]


MODEL_MODULE = """import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.n, cfg.n)
{extra}
    def forward(self, x):
        return {body}
"""

EXPERIMENT = """import torch
from models import Linear, Former


class Experiment:
    def __init__(self, args):
        self.args = args
        self.model = self._build_model()

    def _build_model(self):
        model_dict = {{"Linear": Linear, "Former": Former}}
        return model_dict[self.args.model].Model(self.args).float()

    def train(self, loader):
        opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.model.train()
        for x, y in loader:
            opt.zero_grad()
            ((self.model(x) - y) ** 2).mean().backward()
            opt.step()

    def test(self, loader):
{switch}        with torch.no_grad():
            return [self.model(x) for x, _ in loader]
"""


@pytest.mark.parametrize("dropout, switch, reported", [
    (True, "", True),  # one of the modules the option picks from has dropout
    (False, "", False),  # neither has a layer that minds the mode
    (True, "        self.model.eval()\n", False),  # switched
])
def test_a_class_picked_from_a_dict_of_modules_by_a_factory_method(tmp_path, dropout, switch, reported):
    # `self.model = self._build_model()`, the method returning `model_dict[self.args.model].Model(self.args)`
    # with `model_dict` a display of the project's model modules, each defining a class `Model`
    models = tmp_path / "models"
    models.mkdir()
    (models / "__init__.py").write_text("")
    (models / "Linear.py").write_text(MODEL_MODULE.format(extra="", body="self.fc(x)"))
    extra = "        self.drop = nn.Dropout(0.1)\n" if dropout else ""
    body = "self.drop(self.fc(x))" if dropout else "self.fc(x).relu()"
    (models / "Former.py").write_text(MODEL_MODULE.format(extra=extra, body=body))
    run = tmp_path / "experiment.py"
    run.write_text(EXPERIMENT.format(switch=switch))
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    got = [d.line for d in found if d.code == "TL106"]
    assert got == ([24] if reported else []), got


NETS_SMALL = """import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, 2)

    def forward(self, x):
        return self.fc(x)
"""

NETS_BIG = """import torch.nn as nn


class Big(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(n, n), nn.{norm}, nn.Linear(n, 2))

    def forward(self, x):
        return self.fc(x)
"""

BY_NAME = """import json
import torch
import nets as net_module


def get_instance(module, name, config, *args):
    return getattr(module, config[name]["type"])(*args)


def evaluate(model, loader):
    with torch.no_grad():
        return [model(x).argmax(1) for x in loader]


config = json.load(open("config.json"))
model = {build}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [torch.randn(4, 8) for _ in range(3)]
model.train()
for x in loader:
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
print(evaluate(model, loader))
"""


@pytest.mark.parametrize("build, norm, reported", [
    ('getattr(net_module, config["arch"])(8)', "BatchNorm1d(n)", True),  # any class of the package
    ('get_instance(net_module, "arch", config, 8)', "BatchNorm1d(n)", True),  # through a factory's parameter
    ('getattr(net_module, config["arch"])(8)', "ReLU()", False),  # no class minds the mode
    ('getattr(net_module, "Small")(8)', "BatchNorm1d(n)", False),  # the name given: that class
    ('getattr(net_module, "Big")(8)', "BatchNorm1d(n)", True),
])
def test_a_model_class_picked_from_a_package_by_a_name(tmp_path, build, norm, reported):
    # `getattr(net_module, config["arch"])(8)`: the name comes from a configuration file, so any model
    # class of the package may be built; an evaluation must suit every one
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    nets = tmp_path / "nets"
    nets.mkdir()
    (nets / "__init__.py").write_text("from .small import Small\nfrom .big import Big\n")
    (nets / "small.py").write_text(NETS_SMALL)
    (nets / "big.py").write_text(NETS_BIG.format(norm=norm))
    run = tmp_path / "run.py"
    run.write_text(BY_NAME.format(build=build))
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    assert [d.line for d in found if d.code == "TL106"] == ([12] if reported else [])


CONFIG_PARSER = """class ConfigParser:
    def __init__(self, config):
        self.config = config

    def __getitem__(self, name):
        return self.config[name]

    def init_obj(self, name, module, *args, **kwargs):
        module_args = dict(self[name]["args"])
        module_args.update(kwargs)
        return getattr(module, self[name]["type"])(*args, **module_args)
"""

TEMPLATE_MODEL = """import torch.nn as nn


class MnistModel(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.{layer}, nn.Linear(16, num_classes))

    def forward(self, x):
        return self.net(x)
"""

TEMPLATE_TEST = """import torch
import model.model as module_arch
from parse_config import ConfigParser

config = ConfigParser({"arch": {"type": "MnistModel", "args": {"num_classes": 3}}})
model = config.init_obj("arch", module_arch)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    print(model(torch.randn(2, 4)).sum().item())
"""


@pytest.mark.parametrize("layer, reported", [("Dropout(0.5)", True), ("ReLU()", False)])
def test_a_model_built_by_a_config_objects_method_from_a_module_name(tmp_path, layer, reported):
    # the project template's `config.init_obj("arch", module_arch)`: a method of a project class that builds
    # `getattr(module, name)(...)` from the module it is given
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text("")
    (tmp_path / "model" / "model.py").write_text(TEMPLATE_MODEL.format(layer=layer))
    (tmp_path / "parse_config.py").write_text(CONFIG_PARSER)
    run = tmp_path / "test.py"
    run.write_text(TEMPLATE_TEST)
    found = lint_source(str(run), run.read_text(), Settings(all_rules())).diagnostics
    assert [d.line for d in found if d.code == "TL106"] == ([14] if reported else [])


CALLER = """import torch
from torch import nn
from plots import show


def fit(model, data, opt, epochs):
    for _ in range(epochs):
        model.train()
        for x, y in data:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        {after}


net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
batches = [(torch.randn(4, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
fit(net, batches, torch.optim.SGD(net.parameters(), lr=0.1), epochs=2)
{before}
show(net, batches)
"""

HELPER = """import torch


def show(model, loader):
    with torch.no_grad():
        for x, _ in loader:
            print(torch.argmax(model(x), dim=1).tolist())
"""


@pytest.mark.parametrize("after, before, reported", [
    ("model.eval()", "", False),  # the caller's training function leaves the model in eval mode before the call
    ("print(loss.item())", "", True),  # it leaves it training: the helper of the other file runs it so
    ("print(loss.item())", "if len(batches) > 2:\n    net.eval()", True),  # switched on some paths only
    ("print(loss.item())", "net.eval()", False),
])
def test_a_model_arrives_from_another_file_in_the_mode_its_caller_left(tmp_path, after, before, reported):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "main.py").write_text(CALLER.format(after=after, before=before))
    helper = tmp_path / "plots.py"
    helper.write_text(HELPER)
    found = lint_source(str(helper), helper.read_text(), Settings(all_rules())).diagnostics
    assert [d.code for d in found if d.code == "TL106"] == (["TL106"] if reported else [])


MODEL_FILE = """import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 4))

    def forward(self, x):
        return self.body(x)


def restore(path, device):
    model = Tagger()
    model.load_state_dict(torch.load(path))
    {switch}
    model = model.to(device)
    return model
"""

SCRIPT = """import torch
from models import restore


def label(model, batch):
    with torch.no_grad():
        return model(batch).argmax(1)


def main():
    tagger = restore("tagger.pt", torch.device("cpu"))
    print(label(tagger, torch.randn(4, 8)).tolist())


main()
"""


@pytest.mark.parametrize("switch, reported", [
    ("model.eval()", False),  # the factory of the other file hands the model back in eval mode
    ("pass", True),  # built anew: a new module is in training mode
])
def test_a_factory_of_another_file_that_returns_the_model_in_eval_mode(tmp_path, switch, reported):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models.py").write_text(MODEL_FILE.format(switch=switch))
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    found = lint_source(str(script), script.read_text(), Settings(all_rules())).diagnostics
    assert [d.code for d in found if d.code == "TL106"] == (["TL106"] if reported else [])


SCORER = """import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)

    def predict(self, x):
        self.eval()
        return self.forward(x).argmax(1)


if __name__ == "__main__":
    scorer = Scorer()
    with torch.no_grad():
        print(scorer.predict(torch.randn(2, 8)))
"""

APP = """import torch
{imports}


def run(x):
    scorer = Scorer()
    return scorer.predict(x).tolist()
"""


@pytest.mark.parametrize("imports, reported", [
    ("from scorer import Scorer", True),  # another file calls the method with gradients on
    ("from other import Scorer", False),  # a class of another module, spelled alike: not this one's caller
])
def test_a_method_called_from_another_file_keeps_its_callers_open(tmp_path, imports, reported):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "app.py").write_text(APP.format(imports=imports))
    scorer = tmp_path / "scorer.py"
    scorer.write_text(SCORER)
    found = lint_source(str(scorer), scorer.read_text(), Settings(all_rules())).diagnostics
    assert [d.code for d in found if d.code == "TL105"] == (["TL105"] if reported else [])



RECOMMENDER = """import torch
import torch.nn as nn


class Rec(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.emb = nn.Embedding(n, 8)

    def forward(self, seq, items):
        return (self.emb(items) * self.emb(seq).mean(1, keepdim=True)).sum(-1)

    def predict(self, seq, items):
        return self(seq, items)
"""

SCORING = """import torch


def {name}(model, users):
    ranks = [model.predict(torch.tensor([u]), torch.tensor([[1, 2, 3]]))[0].argmax().item() for u in users]
    return sum(r == 0 for r in ranks) / len(users)
"""

TRAINING = """import torch
from rec import Rec
from {module} import {name}

model = Rec(10)
opt = torch.optim.Adam(model.parameters())
for epoch in range(3):
    loss = model(torch.tensor([[1, 2]]), torch.tensor([[3, 4]])).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
{call}
    model.train()
"""


@pytest.mark.parametrize("module, name, wrapped, expected", [
    ("scoring", "evaluate", False, [("TL105", 5)]),
    # the only caller, in the training script, turns gradients off around the call
    ("scoring", "evaluate", True, []),
    # a `test` function of a `*_test.py` file that the training script calls is no test of a test suite
    ("batch_test", "test", False, [("TL105", 5)]),
])
def test_a_model_method_run_by_a_helper_the_training_script_calls(tmp_path, module, name, wrapped, expected):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "rec.py").write_text(RECOMMENDER)
    call = f"    print({name}(model, [1, 2]))"
    if wrapped:
        call = f"    with torch.no_grad():\n    {call}"
    (tmp_path / "main.py").write_text(TRAINING.format(module=module, name=name, call=call))
    helper = tmp_path / f"{module}.py"
    helper.write_text(SCORING.format(name=name))
    result = lint_source(str(helper), helper.read_text(), Settings(rules=[r for r in all_rules() if r.CODE == "TL105"]))
    assert not result.errors
    assert [(d.code, d.line) for d in result.diagnostics] == expected


def test_a_test_of_a_test_file_that_no_code_calls_is_left_to_the_test_suite(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "rec.py").write_text(RECOMMENDER)
    helper = tmp_path / "batch_test.py"
    helper.write_text(SCORING.format(name="test"))
    result = lint_source(str(helper), helper.read_text(), Settings(rules=[r for r in all_rules() if r.CODE == "TL105"]))
    assert not result.errors and result.diagnostics == []


SALIENCY = """import torch


def saliency(images, labels, model):
    model.eval()
    images.requires_grad_()
    model(images).gather(1, labels.view(-1, 1)).sum().backward()
    {after}
    return images.grad.abs().amax(dim=1)
"""

INSPECT = """import torch
import torch.nn as nn
from saliency import saliency

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.LazyLinear(5))
model.load_state_dict(torch.load("classifier.pt", weights_only=True))
images, labels = torch.randn(5, 3, 16, 16), torch.tensor([1, 2, 3, 4, 0])
print(saliency(images, labels, model).shape)
with torch.no_grad():
    print(model(images).argmax(1))
"""


@pytest.mark.parametrize("after, expected", [
    ("pass", []),
    # the helper puts the model back in training mode before it returns: the prediction runs in it
    ("model.train()", [("TL106", 10)]),
])
def test_a_switch_made_by_a_helper_of_another_file(tmp_path, after, expected):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "saliency.py").write_text(SALIENCY.format(after=after))
    script = tmp_path / "inspect_model.py"
    script.write_text(INSPECT)
    result = lint_source(str(script), script.read_text(), Settings(rules=[r for r in all_rules() if r.CODE == "TL106"]))
    assert not result.errors
    assert [(d.code, d.line) for d in result.diagnostics] == expected
