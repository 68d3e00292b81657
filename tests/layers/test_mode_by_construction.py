"""Whether a model behaves differently in training and evaluation mode, proven from how it is built
(TL106, TL107): dropout with p > 0, batch norm tracking statistics, a stacked recurrent layer with dropout,
through containers, comprehensions and project classes; LayerNorm, GroupNorm and Embedding are mode-free,
and anything unknown stays unknown."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.engine import analyze
from torchlint.families.training.evaluation import evaluation_facts, model_mode_dependent


def _verdict(build: str, prelude: str = ""):
    code = textwrap.dedent(
        """
        import collections
        import torch.nn as nn
        import torchvision
        {prelude}

        def use(model):
            return model

        use({build})
        """
    ).format(prelude=textwrap.dedent(prelude), build=build)
    module = cst.parse_module(code)
    ctx = FileContext("case.py", code, module)

    def on_visit(node):
        if isinstance(node, cst.Call):
            evaluation_facts(ctx).record(node)

    analyze(ctx, on_visit)
    use = [f for fs in ctx.functions().values() for f in fs if f.name.value == "use"][0]
    name = next(n for n in ctx.names_in(use.body, "model"))
    return model_mode_dependent(ctx, name)


PROJECT_CLASSES = """
class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

class Noisy(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(2):
            self.layers.append(nn.Dropout(0.1))

class Gated(nn.Module):
    def forward(self, x):
        return x * 0.5 if self.training else x

class Configured(nn.Module):
    def __init__(self, dim, layers=2, dp_rate=0.1):
        super().__init__()
        self.rnn = nn.GRU(dim, dim, num_layers=layers, dropout=dp_rate)

class Single(nn.Module):
    def __init__(self, dim, dp_rate=0.1):
        super().__init__()
        self.rnn = nn.GRU(dim, dim, num_layers=1, dropout=dp_rate)

def make_noisy(dim):
    net = Noisy(dim)
    return net

def make_block():
    return Block(4)

class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(Block(4), Noisy(4))
"""


@pytest.mark.parametrize("build, expected", [
    # the dropout family: p > 0 (default 0.5)
    ("nn.Dropout()", True),
    ("nn.Dropout(0.1)", True),
    ("nn.Dropout(p=0.0)", False),
    ("nn.Dropout2d(0)", False),
    ("nn.AlphaDropout(0.2)", True),
    # batch norm tracks statistics unless told not to; instance norm only when told to
    ("nn.BatchNorm1d(8)", True),
    ("nn.BatchNorm2d(8, track_running_stats=False)", False),
    ("nn.InstanceNorm2d(8)", False),
    ("nn.InstanceNorm2d(8, track_running_stats=True)", True),
    # recurrent layers: dropout applies only between stacked layers
    ("nn.GRU(8, 8, num_layers=1, dropout=0.3)", False),
    ("nn.GRU(8, 8, dropout=0.3)", False),
    ("nn.LSTM(8, 8, 2, dropout=0.3)", True),
    ("nn.LSTM(8, 8, num_layers=3, dropout=0.0)", False),
    ("nn.RNN(8, 8, num_layers=2, dropout=0.5)", True),
    # attention and transformer layers: their dropout argument
    ("nn.MultiheadAttention(16, 4)", False),
    ("nn.MultiheadAttention(16, 4, dropout=0.1)", True),
    ("nn.TransformerEncoderLayer(16, 4)", True),
    ("nn.TransformerEncoderLayer(16, 4, dropout=0.0)", False),
    ("nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, dropout=0.0), 2)", False),
    # mode-free layers
    ("nn.LayerNorm(8)", False),
    ("nn.GroupNorm(2, 8)", False),
    ("nn.Embedding(10, 8)", False),
    # containers, comprehensions included
    ("nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Dropout(0.2))", True),
    ("nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4))", False),
    ("nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])", False),
    ("nn.ModuleList([nn.BatchNorm1d(4) for _ in range(3)])", True),
    ("nn.ModuleDict({k: nn.Conv2d(3, 3, 1) for k in 'ab'})", False),
    ("nn.ModuleDict({'a': nn.Linear(2, 2), 'b': nn.Dropout(0.1)})", True),
    ("nn.Sequential(collections.OrderedDict([('fc', nn.Linear(2, 2)), ('bn', nn.BatchNorm1d(2))]))", True),
    # unknown: a layer count or probability held by a variable, a layer list unpacked
    ("nn.LSTM(8, 8, num_layers=n, dropout=0.2)", None),
    ("nn.Dropout(rate)", None),
    ("nn.Dropout(fixed)", True),
    ("nn.Sequential(*layers)", None),
    # torchvision models from the table
    ("torchvision.models.resnet18()", True),
    ("torchvision.models.vgg16(weights=None)", True),
])
def test_mode_dependence_by_construction(build, expected):
    assert _verdict(build, "n = int('2')\nrate = float('0.1')\nlayers = []\nfixed = 0.25\n") is expected


@pytest.mark.parametrize("build, expected", [
    ("Block(4)", False),  # Linear and LayerNorm only
    ("Noisy(4)", True),  # dropout appended to a ModuleList in a loop
    ("Gated()", True),  # reads self.training
    ("Outer()", True),  # a project class inside a container inside a project class
    ("Configured(4)", True),  # the parameters' literal defaults: two layers, dropout 0.1
    ("Single(4)", False),  # one layer: the dropout argument changes nothing
    ("make_noisy(4)", True),  # a project factory: what it returns
    ("make_block()", False),
])
def test_mode_dependence_of_project_classes(build, expected):
    assert _verdict(build, PROJECT_CLASSES) is expected


STACKS = """
stack = [nn.Linear(4, 4)]
stack.append(nn.BatchNorm1d(4))
plain = [nn.Linear(4, 4), nn.ReLU()]
plain += [nn.Linear(4, 4)]
repeated = [nn.Linear(4, 4)]
repeated += 2 * [nn.Dropout(0.1)]
loaded = load_layers()
mixed = [nn.Linear(4, 4)] + load_layers()

class Chain(nn.Sequential):
    def forward(self, x):
        for module in self:
            x = module(x)
        return x

class Stack(nn.Sequential):
    def __init__(self, *layers):
        super().__init__(*layers)

class Fixed(nn.Sequential):
    def __init__(self, dim):
        super().__init__(nn.Linear(dim, dim), nn.LayerNorm(dim))

class Deeper(Chain):
    pass
"""


@pytest.mark.parametrize("build, expected", [
    # a list unpacked into a container: what its displays, `+=` and `append` put in it
    ("nn.Sequential(*stack)", True),
    ("nn.Sequential(*plain)", False),
    ("nn.Sequential(*repeated)", True),
    ("nn.Sequential(*[nn.Linear(4, 4), nn.Dropout(0.1)])", True),
    ("nn.Sequential(*loaded)", None),  # a list from a call: unknown
    ("nn.Sequential(*mixed)", None),
    # a container subclass holds what it is built from (with no `__init__`, or one handing it on)
    ("Chain(nn.Linear(4, 4), nn.BatchNorm1d(4))", True),
    ("Deeper(nn.Linear(4, 4), nn.Dropout(0.2))", True),
    ("Stack(nn.Linear(4, 4), nn.Dropout(0.1))", True),
    ("Chain(nn.Linear(4, 4), nn.LayerNorm(4))", None),  # not proven mode-free by the class alone
    ("Fixed(4)", False),  # builds its own layers
])
def test_mode_dependence_of_unpacked_lists_and_container_subclasses(build, expected):
    assert _verdict(build, STACKS) is expected


REGISTRY = """
import argparse
import torchvision.models as tvm
parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--vit", default="vit_b_16")
parser.add_argument("--any")
parser.add_argument("--named", default="resnet18", required=True)
args = parser.parse_args()
"""


@pytest.mark.parametrize("build, expected", [
    ("tvm.__dict__[args.arch]()", True),  # the option's default names a torchvision ResNet
    ("torchvision.models.__dict__[args.arch](num_classes=10)", True),
    ("tvm.__dict__[args.vit]()", None),  # not in the table of mode-dependent builders
    ("tvm.__dict__[args.any]()", None),  # no default: any builder
    ("tvm.__dict__[args.named]()", None),  # required: the default is never read
])
def test_a_builder_picked_from_a_module_by_an_options_default(build, expected):
    assert _verdict(build, REGISTRY) is expected


TABLE = """
import argparse
import torch.nn as nn
from somewhere import make_anything


def conv_bn(c):
    return nn.Sequential(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))


def plain(c):
    return nn.Sequential(nn.Conv2d(c, c, 3), nn.ReLU())


class Stack(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.stem = conv_bn(c)


BUILDERS = {"stack": Stack, "bn": conv_bn, "plain": plain}
NORMED = {"stack": Stack, "bn": conv_bn}
FLAT = {"plain": plain, "also": plain}
MIXED = {"plain": plain, "lib": make_anything}
parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="stack")
parser.add_argument("--flat", default="plain")
args = parser.parse_args()
"""


@pytest.mark.parametrize("build, expected", [
    ("BUILDERS[args.arch](8)", True),  # a class whose stem is what a factory returns: a batch norm
    ("BUILDERS[args.flat](8)", False),  # a factory of a convolution and a ReLU
    # no such option: any builder may be picked, and two of the three have batch norm
    ("BUILDERS[args.other](8)", True),
    ("NORMED[args.other](8)", True),  # no such option, and every builder has batch norm
    ("FLAT[args.other](8)", False),  # no such option, and no builder has a layer that minds the mode
    ("MIXED[args.other](8)", None),  # one builder is unknown, the other has none
    ("conv_bn(8)", True),
])
def test_a_builder_picked_from_a_dict_display_and_module_level_factories(build, expected):
    assert _verdict(build, TABLE) is expected


# -- a model handed in by a caller in another file of the project -------------------------------------
LAYERS_FILE = """import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 6), nn.Dropout({rate}), nn.Linear(6, 2))

    def forward(self, x):
        return self.body(x)
"""

MEASURE_FILE = """import torch


def hit_rate(net, pairs):
    right = 0
    with torch.no_grad():
        for x, y in pairs:
            right += (net(x).argmax(-1) == y).sum().item()
    return right / len(pairs)
"""

MAIN_FILE = """import torch
from layers import Scorer
from measure import hit_rate

scorer = Scorer()
pairs = [(torch.zeros(3, 6), torch.zeros(3, dtype=torch.long))]
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
for x, y in pairs:
    opt.zero_grad()
    torch.nn.functional.cross_entropy(scorer(x), y).backward()
    opt.step()
print(hit_rate(scorer, pairs))
"""


def _tree(tmp_path, rate):
    from torchlint.engine import Settings
    from torchlint.rules import all_rules

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "layers.py").write_text(LAYERS_FILE.format(rate=rate))
    (tmp_path / "measure.py").write_text(MEASURE_FILE)
    (tmp_path / "main.py").write_text(MAIN_FILE)
    return str(tmp_path / "measure.py"), Settings(all_rules())


@pytest.mark.parametrize("rate, expected", [(0.3, ["TL106"]), (0.0, [])])
def test_a_parameter_takes_the_models_callers_in_other_files_pass(tmp_path, rate, expected):
    """``hit_rate(net, ...)`` is called only from ``main.py``, with a ``Scorer`` built in ``layers.py``:
    its dropout (p > 0) is what proves the evaluation needs ``eval()``; with ``p = 0`` it does not."""
    from torchlint.engine import lint_source

    path, settings = _tree(tmp_path, rate)
    with open(path) as fh:
        codes = sorted(d.code for d in lint_source(path, fh.read(), settings).diagnostics)
    assert codes == expected


def test_the_message_names_the_layer_and_where_it_is_built(tmp_path):
    """TL106 names the mode-dependent layer that proves the finding, and the file and line of its
    construction (here in another file of the project)."""
    from torchlint.engine import lint_source

    path, settings = _tree(tmp_path, 0.3)
    with open(path) as fh:
        found = [d for d in lint_source(path, fh.read(), settings).diagnostics if d.code == "TL106"]
    assert len(found) == 1
    assert "`nn.Dropout(0.3)`" in found[0].message and "layers.py:7" in found[0].message


@pytest.mark.parametrize("body, layer", [
    ("self.drop = nn.Dropout(0.25)", "`nn.Dropout(0.25)` (built at line 10)"),
    ("self.seq = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))", "`nn.BatchNorm1d(4)` (built at line 10)"),
])
def test_the_message_names_a_layer_of_the_same_file(body, layer):
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    code = textwrap.dedent(
        """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                {body}

        def measure(net, rows):
            with torch.no_grad():
                return sum((net(x).argmax(1) == y).sum().item() for x, y in rows)


        net = Net()
        print(measure(net, []))
        """
    ).format(body=body)
    found = [d for d in lint_source("m.py", code, Settings(all_rules())).diagnostics if d.code == "TL106"]
    assert len(found) == 1 and layer in found[0].message, [d.message for d in found]


LIBRARIES = """
import timm
import transformers
from transformers import AutoModel, AutoModelForCausalLM, BertConfig, BertModel, GPT2LMHeadModel, LlamaForCausalLM
"""


@pytest.mark.parametrize("build, expected", [
    # timm: batch-norm architectures, or any model given a drop rate
    ('timm.create_model("resnet50", pretrained=True)', True),
    ('timm.create_model("efficientnet_b0")', True),
    ('timm.create_model("vit_base_patch16_224", drop_path_rate=0.1)', True),
    ('timm.create_model("vit_base_patch16_224")', None),  # LayerNorm and no dropout by default: not proven
    ('timm.create_model("resnet50", drop_rate=0.0)', True),  # still batch norm
    ('timm.create_model(name)', None),
    # transformers: architectures whose configurations default to dropout
    ("BertModel(BertConfig())", True),
    ('GPT2LMHeadModel.from_pretrained("gpt2")', True),
    ('AutoModel.from_pretrained("bert-base-uncased")', True),
    ('transformers.AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")', True),
    ('AutoModelForCausalLM.from_pretrained(path)', None),
    ('AutoModel.from_config(config)', None),
    ('LlamaForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")', None),  # attention dropout 0.0 by default
])
def test_mode_dependence_of_library_models(build, expected):
    assert _verdict(build, LIBRARIES + "name = 'x'\npath = 'p'\nconfig = None\n") is expected


OPTIONS = """
import argparse
import timm
parser = argparse.ArgumentParser()
parser.add_argument("--drop-path", type=float, default=0.1)
parser.add_argument("--drop", type=float, default=0.0)
parser.add_argument("--rate", dest="keep", type=float, default=0.3)
args = parser.parse_args()
cfg = {"p": 0.25, "none": 0.0}
"""


@pytest.mark.parametrize("build, expected", [
    # a rate read from the command line's declared default, or from a configuration dict display
    ('timm.models.create_model(args.model, drop_path_rate=args.drop_path)', True),
    ('timm.create_model(args.model, drop_rate=args.drop)', None),
    ("nn.Dropout(args.keep)", True),
    ('nn.Dropout(cfg["p"])', True),
    ('nn.Dropout(cfg["none"])', False),
    ('nn.Dropout(cfg["missing"])', None),
    ("nn.Dropout(args.unknown)", None),
])
def test_rates_from_options_and_configuration(build, expected):
    assert _verdict(build, OPTIONS) is expected


# -- a builder of a project package picked by an option -----------------------------------------------
PACKAGE_INIT = "from .small import *\n"
PACKAGE_MODULE = """import torch.nn as nn


def small_bn():
    return nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))


def small_plain():
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU())
"""
PACKAGE_MAIN = """import argparse

import torch

import models

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="{arch}")


def validate(loader, model):
    with torch.no_grad():
        return sum(model(x).sum().item() for x in loader)


def main_worker(loader, args):
    model = models.__dict__[args.arch]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for x in loader:
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    return validate(loader, model)


def main(loader):
    args = parser.parse_args()
    return main_worker(loader, args)
"""


@pytest.mark.parametrize("arch, expected", [("small_bn", ["TL106"]), ("small_plain", [])])
def test_a_builder_of_a_project_package_picked_by_the_options_default(tmp_path, arch, expected):
    """``models.__dict__[args.arch]()`` with ``args`` handed to the function by its caller: the builder the
    option's default names, re-exported by the package with ``from .small import *``."""
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text(PACKAGE_INIT)
    (tmp_path / "models" / "small.py").write_text(PACKAGE_MODULE)
    path = tmp_path / "main.py"
    path.write_text(PACKAGE_MAIN.format(arch=arch))
    codes = sorted(d.code for d in lint_source(str(path), path.read_text(), Settings(all_rules())).diagnostics)
    assert codes == expected


SETTINGS_OBJECTS = """
import argparse
from types import SimpleNamespace
import torch.nn as nn
ns = argparse.Namespace(p=0.3, off=0.0, name="x")
simple = SimpleNamespace(q=0.2)
plain = dict(r=0.1)
"""


@pytest.mark.parametrize("build, expected", [
    ("nn.Dropout(ns.p)", True),  # a keyword of an `argparse.Namespace` built in the file
    ("nn.Dropout(ns.off)", False),  # the same object, a zero rate
    ("nn.Dropout(simple.q)", True),
    ("nn.Dropout(plain.r)", None),  # a dict's keys are no attributes
    ("nn.Dropout(ns.name)", None),  # not a number
    ("nn.Dropout(ns.missing)", None),  # no build gives it
])
def test_a_rate_from_a_settings_object_built_from_keywords(build, expected):
    assert _verdict(build, SETTINGS_OBJECTS) is expected
