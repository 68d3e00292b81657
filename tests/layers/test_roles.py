"""One role answer: "does this value hold a model" is :func:`effects.model_evidence`, with the strength of
its evidence explicit (strong: built or trained as one; provably no module; weak: used as one), and a
name alone says nothing."""
from __future__ import annotations

import textwrap
from typing import List

import libcst as cst

from torchlint.analysis import effects
from torchlint.analysis.context import FileContext
from torchlint.analysis.roles import is_module_value
from torchlint.engine import analyze

CODE = """
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return x


class Plain:
    def forward(self, x):
        return x


class Trainer:
    def __init__(self):
        self.body = make_body()
        self.opt = torch.optim.Adam(self.body.parameters())

    def step(self, x):
        return self.body(x)


def run_plain(net, x):
    return net(x)


def main(x, model, thing, weights: nn.Module, clf):
    cnn = Net()
    G, D = Net(), Net().cuda()
    model(x)
    clf.eval()
    clf(x)
    thing(x)
    weights(x)
    mlp = Plain()
    network = Plain()
    criterion = nn.CrossEntropyLoss()
    run_plain(Plain(), x)
    return cnn(x), G(x), D(x), mlp(x), network(x), criterion(x, x)
"""


def _walked(code: str) -> FileContext:
    code = textwrap.dedent(code)
    ctx = FileContext("case.py", code, cst.parse_module(code))
    analyze(ctx)
    return ctx


def _called(ctx: FileContext) -> List[cst.BaseExpression]:
    """The callees of the calls with one positional argument ``x`` (the models' and others' runs)."""
    out = []
    stack: List[cst.CSTNode] = [ctx.module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and node.args and isinstance(node.args[-1].value, cst.Name) \
                and node.args[-1].value.value == "x" and isinstance(node.func, (cst.Name, cst.Attribute)):
            out.append(node.func)
        stack.extend(reversed(node.children))
    return out


def test_the_evidence_that_a_value_holds_a_model():
    ctx = _walked(CODE)
    found = {ctx.code(f): effects.model_evidence(ctx, f) for f in _called(ctx)}
    assert found == {
        "self.body": effects.STRONG,  # an optimizer is given its parameters
        "model": None,                # a parameter no call in view passes: its name alone says nothing
        "clf": effects.WEAK,          # its mode switched: used as a module
        "thing": None,                # neither
        "weights": effects.STRONG,    # annotated with a module class
        "cnn": effects.STRONG,        # built from a project nn.Module: whatever its name
        "G": effects.STRONG,          # the element of a tuple of constructions
        "D": effects.STRONG,          # moved with `.cuda()`: the same module
        "mlp": effects.NO,            # an instance of a plain class
        "network": effects.NO,        # spelled like a model, built as no module: what it does wins
        "criterion": None,            # a module, but a loss
        "net": effects.NO,            # a parameter every caller passes a plain instance for
        "run_plain": None,
    }


def test_holds_model_is_the_strong_evidence():
    ctx = _walked(CODE)
    for f in _called(ctx):
        assert effects.holds_model(ctx, f) == (effects.model_evidence(ctx, f) == effects.STRONG), ctx.code(f)


def test_a_library_class_that_builds_no_module_is_read_by_its_library_name():
    ctx = _walked("""
        from transformers import AutoTokenizer as Tok, AutoModel as Auto, AutoConfig
        import transformers as tf

        tokenizer = Tok.from_pretrained("bert-base-uncased")
        config = AutoConfig.from_pretrained("bert-base-uncased")
        other = tf.BertTokenizerFast.from_pretrained("bert-base-uncased")
        encoder = Auto.from_pretrained("bert-base-uncased")
        full = tf.AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    """)
    values = [s.body[0].value for s in ctx.module.body[2:]]
    assert [is_module_value(ctx, v) for v in values] == [False, False, False, True, True]


def test_whose_mode_the_code_switches():
    from torchlint.analysis.roles import switches_mode

    ctx = _walked("""
        def decode(decoder, x):
            return decoder(x)

        def fit(trainer, net, x):
            trainer.train(net, x)  # some other object's `train`: no mode switch
            return trainer(x), net(x)

        class Agent:
            def act(self, x):
                self.policy.eval()
                self.agent.net.train(False)
                return self.policy(x), self.agent.net(x), self.other(x)

        def run(agent, x):
            agent.net.eval()
            return agent.net(x), agent.head(x)

        decoder = load()
        decoder.eval()
        decode(decoder, 1)
        fit(object(), load(), 2)
        lm.train()
        lm(3)
    """)
    calls = {ctx.code(c.func): c for c in ctx.calls_in(ctx.module) if c.args}
    expected = {
        "decoder": True,      # a parameter: its caller passes a module whose mode the script switches
        "trainer": False,
        "net": False,
        "self.policy": True,  # the same member of the class
        "self.agent.net": True,
        "self.other": False,
        "agent.net": True,    # the same code in the same function
        "agent.head": False,
        "lm": True,           # a name the file never binds (a notebook's earlier cell)
    }
    assert {name: switches_mode(ctx, calls[name].func) for name in expected} == expected


def test_a_kept_constructor_argument_is_a_layer_by_its_use_not_its_name():
    from torchlint.analysis.roles import class_summary

    ctx = _walked("""
        import torch
        from torch import nn

        class Runs(nn.Module):
            def __init__(self, block, size):
                super().__init__()
                self.block = block      # run below: whatever the caller passes decides the mode
                self.size = size
                self.out = nn.Linear(size, 2)

            def forward(self, x):
                return self.out(self.block(x).view(-1, self.size))

        class Keeps(nn.Module):
            def __init__(self, model, hidden):
                super().__init__()
                self.model = model      # named like a model, never used as a layer: a value it keeps
                self.hidden = hidden
                self.out = nn.Linear(hidden, 2)

            def forward(self, x):
                return self.out(x) * self.model

        class Wraps(nn.Module):
            def __init__(self, head):
                super().__init__()
                self.head = head
                self.body = nn.Sequential(nn.Linear(4, 4), self.head)

            def forward(self, x):
                return self.body(x)

        class Switches(nn.Module):
            def __init__(self, encoder):
                super().__init__()
                self.encoder = encoder

            def forward(self, x):
                self.encoder.eval()
                return x
    """)
    verdicts = {name: class_summary(ctx, cls).mode_dependent for name, cls in ctx.classes().items()}
    assert verdicts == {"Runs": None, "Keeps": False, "Wraps": None, "Switches": None}
