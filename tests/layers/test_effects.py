"""The table of torch API effects and the modules values held by objects hold
(:mod:`torchlint.analysis.effects`), asked directly of small programs."""
from __future__ import annotations

import libcst as cst
import pytest

from torchlint.analysis import effects
from torchlint.analysis.context import FileContext
from torchlint.analysis.traversal import analyze
from torchlint.analysis.walk import iter_nodes


def _ctx(src):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    return ctx


def _node(ctx, kind, code):
    return next(n for n in iter_nodes(ctx.module) if isinstance(n, kind) and ctx.code(n) == code)


METHODS = '''
import torch.nn as nn


def init(m):
    nn.init.zeros_(m.weight)


def freeze(m):
    m.requires_grad_(False)


net = nn.Linear(2, 2)
net.cuda()
net.eval()
net.requires_grad_(False)
net.requires_grad_()
net.apply(init)
net.apply(freeze)
net.share_memory()
net.forward(None)
'''


@pytest.mark.parametrize("code, effect", [
    ("net.cuda()", effects.MOVES),
    ("net.eval()", effects.MODE),
    ("net.requires_grad_(False)", effects.FREEZES),
    ("net.requires_grad_()", effects.UNFREEZES),
    ("net.apply(init)", effects.INITIALISES),
    ("net.apply(freeze)", effects.UNKNOWN),
    ("net.share_memory()", effects.SHARES),
    ("net.forward(None)", None),
])
def test_what_a_module_method_changes(code, effect):
    ctx = _ctx(METHODS)
    assert effects.method_effect(ctx, _node(ctx, cst.Call, code)) == effect


HELD = '''
import copy
import torch
import torch.nn as nn

G = nn.Linear(4, 2)
D = nn.Linear(2, 1)
D.apply(lambda m: None)
if torch.cuda.is_available():
    G = G.cuda()
    D = nn.DataParallel(D.cuda())
E = nn.Linear(2, 1)
E = nn.Linear(2, 2)
T = copy.deepcopy(G)
nets = {"g": G, "d": D}
opt = torch.optim.Adam([{"params": G.parameters()}, {"params": filter(lambda p: p.requires_grad, D.parameters())}])
print(G, D, E, T, nets["d"])
'''


def test_a_name_rebound_to_the_same_module_under_an_if_holds_its_one_construction():
    ctx = _ctx(HELD)
    printed = _node(ctx, cst.Call, 'print(G, D, E, T, nets["d"])')
    g, d, e, t = (a.value for a in printed.args[:4])
    assert ctx.code(effects.held_module(ctx, g)) == "nn.Linear(4, 2)"
    assert ctx.code(effects.held_module(ctx, d)) == "nn.Linear(2, 1)"
    with pytest.raises(effects.Unknown):
        effects.held_module(ctx, e)  # two constructions
    with pytest.raises(effects.Unknown):
        effects.held_module(ctx, t)  # a copy: not a module construction of its own here
    assert ctx.code(effects.keyed_value(ctx, printed.args[4].value)) == "D"


def test_parameter_sources_through_groups_and_filters():
    ctx = _ctx(HELD)
    call = _node(ctx, cst.Call, next(ctx.code(c) for c in ctx.calls_in(ctx.module)
                                     if ctx.code(c).startswith("torch.optim.Adam")))
    assert effects.is_optimizer(ctx, call)
    assert [ctx.code(r) for r in effects.parameter_sources(ctx, call.args[0].value)] == ["G", "D"]


TRAINER = '''
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, gen):
        self.G = gen
        self.D = nn.Linear(2, 1).to("cpu")
        self.setup()

    def setup(self):
        self.opt = torch.optim.SGD(self.D.parameters(), lr=0.1)
        self.D = self.D.cuda()

    def load(self, other):
        self.G = other

    def step(self, x):
        return self.D(x), self.G(x), self.opt
'''


def test_self_attributes_set_by_the_constructor_and_the_methods_it_calls():
    ctx = _ctx(TRAINER)
    d = _node(ctx, cst.Attribute, "self.D")
    reads = [n for n in iter_nodes(ctx.module) if isinstance(n, cst.Attribute) and ctx.code(n) in (
        "self.D", "self.G", "self.opt") and isinstance(ctx.parent(n), (cst.Call, cst.Element))]
    d, g, opt = reads[-3], reads[-2], reads[-1]
    assert ctx.code(effects.self_module(ctx, d)) == 'nn.Linear(2, 1)'
    assert ctx.code(effects.self_optimizer(ctx, opt)).startswith("torch.optim.SGD")
    with pytest.raises(effects.Unknown):
        effects.self_module(ctx, g)  # also set in `load`, which the constructor does not call


DATA = '''
import pandas as pd
import torch
import torch.nn as nn

frame = pd.read_csv("x.csv")
frame = frame.dropna()
t = torch.zeros(3)
model = torch.load("m.pt")
layer = nn.Linear(2, 2)
print(frame, t, model, layer)
'''


def test_data_values_and_layers_that_hold_nothing():
    ctx = _ctx(DATA)
    values = {ctx.code(a.targets[0].target) + "=" + ctx.code(a.value): a.value
              for a in iter_nodes(ctx.module) if isinstance(a, cst.Assign)}
    assert effects.data_value(ctx, values['frame=pd.read_csv("x.csv")'])
    assert effects.data_value(ctx, values["frame=frame.dropna()"])
    assert effects.data_value(ctx, values["t=torch.zeros(3)"])
    assert not effects.data_value(ctx, values['model=torch.load("m.pt")'])  # may be a pickled model
    assert not effects.data_value(ctx, values["layer=nn.Linear(2, 2)"])
    src = "import torch.nn as nn\na = nn.MSELoss()\nb = nn.CrossEntropyLoss(weight=w)\nc = nn.ReLU()\nd = nn.Dropout()\ne = nn.Linear(2, 2)\n"
    ctx = _ctx(src)
    held = {ctx.code(a.targets[0].target): a.value for a in iter_nodes(ctx.module) if isinstance(a, cst.Assign)}
    assert [k for k in "abcde" if effects.holds_nothing(ctx, held[k])] == ["a", "c"]
    assert [k for k in "abcde" if effects.parameter_free(ctx, held[k])] == ["a", "c", "d"]


UNPACKED = '''
import torch
import torch.nn as nn

gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
if torch.cuda.is_available():
    gen = gen.cuda()
a, b = b, a
out, h = disc(gen(None)), 1
rec, mu = gen(None)
print(gen, disc, a, out, rec)
'''


def test_unpacked_names_hold_their_tuple_element_or_the_value_they_come_from():
    ctx = _ctx(UNPACKED)
    read = {n.value: n for n in iter_nodes(ctx.module.body[-1]) if isinstance(n, cst.Name)}
    value, exact = effects.unpacked(ctx, read["disc"])
    assert exact and ctx.code(value) == "nn.Linear(4, 1)"
    assert effects.unpacked(ctx, read["a"]) is None  # a swap: each element is read before the targets bind
    value, exact = effects.unpacked(ctx, read["rec"])
    assert not exact and ctx.code(value) == "gen(None)"
    assert ctx.code(effects.held_module(ctx, read["gen"])) == "nn.Linear(4, 4)"  # rebound to its move under `if`


MEMBERS = '''
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.name = "pair"


pair = Pair().to("cpu")
opt = torch.optim.Adam(pair.gen.parameters())
print(pair.gen, pair.name)
'''


def test_modules_held_by_an_instance_of_a_class_of_the_file():
    ctx = _ctx(MEMBERS)
    gen = _node(ctx, cst.Attribute, "pair.gen")
    assert ctx.code(effects.member_module(ctx, gen)) == "nn.Linear(4, 4)"
    with pytest.raises(effects.Unknown):
        effects.member_module(ctx, _node(ctx, cst.Attribute, "pair.name"))  # a string, no module
    assert effects.trained_by_optimizer(ctx, gen)
    assert not effects.trained_by_optimizer(ctx, _node(ctx, cst.Attribute, "pair.name"))


RESETS = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, head):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.head = head
        self.norm.reset_parameters()
        self.head.reset_parameters()
        self.norm.forward(None)
'''


def test_reset_parameters_of_a_torch_layer_only_initialises_it():
    # `reset_parameters()` of a `torch.nn` layer writes its weights; of a value not known, it may do anything
    ctx = _ctx(RESETS)
    reads = [n for n in iter_nodes(ctx.module)
             if isinstance(n, cst.Attribute) and ctx.code(n) in ("self.norm", "self.head")
             and isinstance(ctx.parent(n), cst.Attribute)
             and ctx.parent(n).attr.value in ("reset_parameters", "forward")]
    assert [(ctx.code(ctx.parent(n)), effects.initialising_read(ctx, n)) for n in reads] == [
        ("self.norm.reset_parameters", True), ("self.head.reset_parameters", False), ("self.norm.forward", False)]


RECORDING = '''
import torch
import torch.nn as nn


class Plain(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = torch.zeros(d, 1).to("cpu")
        self.b = torch.scalar_tensor(0)

    def forward(self, x):
        return torch.sigmoid(self.w.T @ x + self.b)

    def update(self, x, g, lr):
        self.w = self.w - lr * (x @ g.T) / x.shape[1]


class WithParameter(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(d, 1))


class AsksForGrad(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = torch.zeros(d, 1, requires_grad=True)


class HoldsGiven(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder


class HoldsLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 1)


class OtherBase(Plain):
    pass
'''


def test_a_model_of_plain_tensors_records_nothing_and_one_with_weights_does():
    ctx = _ctx(RECORDING)
    classes = {n.name.value: n for n in ctx.module.body if isinstance(n, cst.ClassDef)}
    assert effects.records_nothing(ctx, classes["Plain"])
    for name in ("WithParameter", "AsksForGrad", "HoldsGiven", "HoldsLayer", "OtherBase"):
        assert not effects.records_nothing(ctx, classes[name]), name


def test_a_class_body_runs_in_the_grad_mode_of_the_code_that_defines_it():
    # a class body runs where the class is defined: under the decorator of the function around it; a method
    # of that class runs when it is called, in its caller's mode
    from torchlint.analysis.training import under_no_grad

    module = cst.parse_module(
        "import torch\n"
        "@torch.no_grad()\n"
        "def evaluate(model, x):\n"
        "    class Probe:\n"
        "        out = model(x)\n"
        "        def later(self):\n"
        "            return model(x)\n"
        "    return Probe\n"
    )
    ctx = FileContext("probe.py", module.code, module)
    analyze(ctx)
    calls = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and ctx.code(n) == "model(x)"]
    assert [under_no_grad(ctx, c) for c in calls] == [True, False]
