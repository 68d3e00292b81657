"""Evaluation and mode evidence read from what the code does: decoding and sampling code, predictions
after training in a script's main block, models with or without mode-dependent layers, class objects
passed as values, and the dtype and use of values (float64 by construction, results never read)."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.analysis.dtypes import float64_value, never_read
from torchlint.families.training.evaluation import (
    decoding_flow,
    evaluation_facts,
    hands_graph_away,
    model_mode_dependent,
    passed_classes,
    runs_without_grad,
)
from torchlint.engine import analyze


def _walked(code):
    code = textwrap.dedent(code)
    module = cst.parse_module(code)
    ctx = FileContext("case.py", code, module)

    def on_visit(node):
        if isinstance(node, cst.Call):
            evaluation_facts(ctx).record(node)

    analyze(ctx, on_visit)
    return ctx


def _sites(code):
    ctx = _walked(code)
    return ctx, evaluation_facts(ctx).sites()


def _function(ctx, name):
    found = [f for fs in ctx.functions().values() for f in fs if f.name.value == name]
    assert found, name
    return found[0]


def _name(ctx, function, name):
    """The first Name ``name`` read in ``function`` (not an assignment target)."""
    for n in ctx.names_in(function, name):
        parent = ctx.parent(n)
        if not isinstance(parent, (cst.AssignTarget, cst.Param)):
            return n
    raise AssertionError(name)


# -- decoding and sampling code ---------------------------------------------------------------------
DECODERS = {
    "greedy-while": """
        import torch

        def extend(net, ids, limit):
            net.eval()
            while ids.size(1) < limit:
                step = net(ids)[:, -1].argmax(-1, keepdim=True)
                ids = torch.cat([ids, step], dim=1)
            return ids
    """,
    "multinomial": """
        import torch

        def draw(model, ids, count):
            model.eval()
            for _ in range(count):
                probs = torch.softmax(model(ids)[:, -1], dim=-1)
                ids = torch.cat((ids, torch.multinomial(probs, 1)), dim=1)
            return ids
    """,
    "topk-unpacked": """
        def beam_one(decoder, token, hidden, length):
            decoder.eval()
            words = []
            for _ in range(length):
                scores, hidden = decoder(token, hidden)
                _, best = scores.topk(1)
                token = best.squeeze(-1)
                words.append(token.item())
            return words
    """,
    "distribution-sample": """
        import torch

        def act(policy_net, state, horizon):
            policy_net.eval()
            taken = []
            for _ in range(horizon):
                action = torch.distributions.Categorical(logits=policy_net(state)).sample()
                taken.append(int(action))
                state = state.roll(1) + action
            return taken
    """,
    "max-indices": """
        import torch

        def decode(model, token, steps):
            model.eval()
            out = []
            for _ in range(steps):
                token = model(token).max(dim=-1)[1]
                out.append(token)
            return torch.stack(out)
    """,
}


@pytest.mark.parametrize("code", DECODERS.values(), ids=list(DECODERS))
def test_decoding_code_is_evaluation_whatever_its_name(code):
    _ctx, sites = _sites(code)
    assert [(s.kind, s.decoding) for s in sites] == [("function", "picked")]


def test_a_fed_back_hidden_state_is_weaker_evidence():
    _ctx, sites = _sites("""
        def tag(rnn_model, frames):
            rnn_model.eval()
            hidden = None
            tags = []
            for frame in frames:
                out, hidden = rnn_model(frame, hidden)
                tags.append(out.argmax(-1).tolist())
            return tags
    """)
    assert [s.decoding for s in sites] == ["output"]


NOT_DECODERS = {
    "backward": """
        import torch

        def fit_while_sampling(model, ids, steps):
            model.train()
            for _ in range(steps):
                out = model(ids)
                out.logsumexp(-1).mean().backward()
                ids = torch.cat([ids, out[:, -1].argmax(-1, keepdim=True)], 1)
    """,
    "loss": """
        import torch
        import torch.nn.functional as F

        def scheduled(model, ids, target, steps):
            model.train()
            total = 0
            for _ in range(steps):
                out = model(ids)
                total = total + F.cross_entropy(out[:, -1], target)
                ids = torch.cat([ids, out[:, -1].argmax(-1, keepdim=True)], 1)
            return total.item()
    """,
    "returns-log-probs": """
        import torch

        def rollout(policy_net, state, horizon):
            policy_net.eval()
            log_probs = []
            for _ in range(horizon):
                dist = torch.distributions.Categorical(logits=policy_net(state))
                action = dist.sample()
                log_probs.append(dist.log_prob(action))
                state = state.roll(1) + action
            return log_probs
    """,
    "hands-loss-away": """
        import torch

        def rollout(policy_net, state, horizon, scaler):
            policy_net.eval()
            log_probs = []
            for _ in range(horizon):
                dist = torch.distributions.Categorical(logits=policy_net(state))
                action = dist.sample()
                log_probs.append(dist.log_prob(action))
                state = state.roll(1) + action
            scaler(-torch.stack(log_probs).sum())
    """,
    "no-pick": """
        def refine(model, x, steps):
            model.eval()
            for _ in range(steps):
                x = x - 0.1 * model(x)
            return x.detach()
    """,
    "own-sample": """
        def dream(model, z, steps):
            model.eval()
            for _ in range(steps):
                z = model(z).sample()
            return z
    """,
    "not-fed-back": """
        def label_all(model, batches):
            model.eval()
            labels = []
            for batch in batches:
                labels.append(model(batch).argmax(-1).tolist())
            return labels
    """,
}


@pytest.mark.parametrize("code", NOT_DECODERS.values(), ids=list(NOT_DECODERS))
def test_no_decoding_site_without_the_evidence_or_with_training(code):
    _ctx, sites = _sites(code)
    assert not any(s.decoding for s in sites)


def test_decoding_flow_separates_picked_tokens_from_the_graph():
    ctx = _walked(DECODERS["topk-unpacked"])
    function = _function(ctx, "beam_one")
    calls = {c for c, _m in evaluation_facts(ctx).model_calls}
    flow = decoding_flow(ctx, function, calls)
    assert {"scores", "hidden"} <= flow.graph
    assert {"best", "token", "words"} <= flow.picked
    assert not ({"best", "token", "words"} & flow.graph)
    assert flow.picks


# -- predictions after training in a script's main block ------------------------------------------
MAIN_BLOCKS = {
    "main-function": """
        import torch
        import torch.nn as nn

        def main(loader, x_new):
            net = nn.Linear(4, 2)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for x, y in loader:
                opt.zero_grad()
                nn.functional.cross_entropy(net(x), y).backward()
                opt.step()
            guess = net(x_new).argmax(1)
            print(guess)
    """,
    "dunder-main": """
        import torch
        import torch.nn as nn

        if __name__ == "__main__":
            net = nn.Linear(4, 2)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for x, y in []:
                opt.zero_grad()
                nn.functional.cross_entropy(net(x), y).backward()
                opt.step()
            print(net(torch.ones(1, 4)))
    """,
}


@pytest.mark.parametrize("code", MAIN_BLOCKS.values(), ids=list(MAIN_BLOCKS))
def test_a_prediction_after_training_in_the_main_block_is_evaluation(code):
    ctx, sites = _sites(code)
    assert [s.kind for s in sites] == ["statement"]
    assert isinstance(sites[0].node, cst.SimpleStatementLine)


@pytest.mark.parametrize("tail", [
    "    return net(x_new)\n",  # returned: the caller may differentiate it
    "    out = net(x_new)\n    return out\n",
    "    net = nn.Linear(4, 2)\n    print(net(x_new))\n",  # a new, untrained model
])
def test_no_main_block_prediction_when_the_output_escapes_or_the_model_is_new(tail):
    code = textwrap.dedent("""
        import torch
        import torch.nn as nn

        def main(loader, x_new):
            net = nn.Linear(4, 2)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for x, y in loader:
                opt.zero_grad()
                nn.functional.cross_entropy(net(x), y).backward()
                opt.step()
    """) + tail
    _ctx, sites = _sites(code)
    assert sites == []


def test_unwrapping_the_trained_model_is_no_prediction():
    _ctx, sites = _sites("""
        import torch
        import torch.nn as nn

        def main(loader, runner):
            net = nn.Linear(4, 2)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for x, y in loader:
                opt.zero_grad()
                runner.backward(nn.functional.mse_loss(net(x), y))
                opt.step()
            net = runner.unwrap_model(net).cpu()
            print(net.weight)
    """)
    assert sites == []


# -- module-level predictions: a model's own method, weights loaded from a checkpoint ----------------
_PAIR = """
    import torch
    import torch.nn as nn

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.gen = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.2), nn.Linear(16, 4))
            self.critic = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())

        def make(self, z):
            return self.gen(z)

        def judge(self, x):
            return self.critic(x).view(-1)

        def train_round(self, z, opt):
            opt.zero_grad()
            loss = self.critic(self.gen(z)).mean()
            loss.backward()
            opt.step()
            return loss.item()

    pair = Pair()
    opt = torch.optim.Adam(pair.parameters())
    for step in range(10):
        z = torch.randn(4, 8)
        loss = nn.functional.binary_cross_entropy(pair.judge(pair.make(z)), torch.ones(4))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_models_own_method_run_after_training_is_a_prediction():
    ctx, sites = _sites(_PAIR + """
    pair.eval()
    pictures = pair.make(torch.randn(5, 8))
    print(pictures.detach())
    """)
    assert [(s.kind, ctx.code(s.node).strip()) for s in sites] == [
        ("statement", "pictures = pair.make(torch.randn(5, 8))")
    ]


@pytest.mark.parametrize("tail", [
    "last = pair.train_round(torch.randn(5, 8), opt)\n",  # the method trains
    "pictures = pair.make(torch.randn(5, 8))\npictures.sum().backward()\n",  # differentiated later
    "pair = Pair()\npictures = pair.make(torch.randn(5, 8))\n",  # a new, untrained model
])
def test_no_prediction_from_a_method_that_trains_or_feeds_a_backward(tail):
    _ctx, reported = _sites(_PAIR + "    pictures = pair.make(torch.randn(5, 8))\n")
    _ctx, sites = _sites(_PAIR + textwrap.indent(tail, "    "))
    assert len(reported) == 1 and sites == []


LOADED = {
    "load_state_dict": """
        net = Net()
        net.load_state_dict(torch.load("net.pt"))
        net.eval()
        print(net(torch.ones(1, 4)).argmax(1))
    """,
    "whole-model": """
        net = torch.load("net.pt", weights_only=False)
        print(net(torch.ones(1, 4)).argmax(1))
    """,
    "sampling-loop": """
        net = Net().to("cpu")
        net.load_state_dict(torch.load("net.pt"))
        for batch in range(3):
            shown = net(torch.ones(2, 4))
            break
    """,
}

_NET = """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.1), nn.Linear(8, 2))

        def forward(self, x):
            return self.body(x)
"""


@pytest.mark.parametrize("code", LOADED.values(), ids=list(LOADED))
def test_a_prediction_with_reloaded_weights_is_evaluation(code):
    _ctx, sites = _sites(_NET + textwrap.indent(textwrap.dedent(code), "    "))
    assert [s.kind for s in sites] == ["statement"]


@pytest.mark.parametrize("code", [
    # built anew after the weights were loaded: untrained
    """
    net = Net()
    net.load_state_dict(torch.load("net.pt"))
    net = Net()
    print(net(torch.ones(1, 4)))
    """,
    # the weights of another model
    """
    net, other = Net(), Net()
    other.load_state_dict(torch.load("net.pt"))
    print(net(torch.ones(1, 4)))
    """,
    # fine-tuned after loading: the output is differentiated
    """
    net = Net()
    net.load_state_dict(torch.load("net.pt"))
    out = net(torch.ones(1, 4))
    out.sum().backward()
    """,
])
def test_no_prediction_without_loaded_weights_or_with_a_backward(code):
    _ctx, reported = _sites(_NET + textwrap.indent(textwrap.dedent(LOADED["load_state_dict"]), "    "))
    _ctx, sites = _sites(_NET + textwrap.indent(textwrap.dedent(code), "    "))
    assert len(reported) == 1 and sites == []


# -- mode-dependent layers ------------------------------------------------------------------------
MODELS = """
    import torch.nn as nn
    from torchvision.models import resnet18

    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 8)
            self.fc = nn.Linear(8, 2)
            self.act = nn.ReLU()

    class Dropped(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 2)
            self.drop = nn.Dropout(0.5)

    def use(a, b, c, d, e, f, g):
        return a, b, c, d, e, f, g

    def orphan(model):
        return model

    use(Plain(), Dropped(), resnet18(), nn.Sequential(nn.Linear(2, 2), nn.Tanh()),
        nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)), nn.GRU(2, 2, num_layers=2, dropout=0.2),
        nn.GRU(2, 2, dropout=0))
"""


@pytest.mark.parametrize("param, expected", [
    ("a", False), ("b", True), ("c", True), ("d", False), ("e", True), ("f", True), ("g", False),
])
def test_mode_dependence_of_the_model_a_parameter_receives(param, expected):
    ctx = _walked(MODELS)
    use = _function(ctx, "use")
    assert model_mode_dependent(ctx, _name(ctx, use.body, param)) is expected


def test_a_parameter_no_caller_explains_may_have_mode_dependent_layers():
    ctx = _walked(MODELS)
    orphan = _function(ctx, "orphan")
    assert model_mode_dependent(ctx, _name(ctx, orphan.body, "model")) is None


# -- class objects passed as values ----------------------------------------------------------------
def test_a_class_passed_as_a_value_is_no_model():
    ctx = _walked("""
        import torch.nn as nn

        class Critic(nn.Module):
            pass

        def build(model, dim):
            return model(dim)

        def run(model, x):
            return model(x)

        def layer(net_cls=nn.Linear):
            return net_cls(2, 2)

        build(Critic, 8)
        build(nn.Linear, 8)
        run(Critic(), 1)
    """)
    build, run, layer = (_function(ctx, n) for n in ("build", "run", "layer"))
    assert passed_classes(ctx, _name(ctx, build.body, "model"))
    assert not passed_classes(ctx, _name(ctx, run.body, "model"))
    assert passed_classes(ctx, _name(ctx, layer.body, "net_cls"))


# -- dtype by construction, results never read -----------------------------------------------------
@pytest.mark.parametrize("spelling, expected", [
    ("u = torch.rand(3, dtype=torch.float64)", True),
    ("u = torch.zeros(3, dtype=torch.double).clamp(0, 1)", True),
    ("u = x.double()", True),
    ("u = x.to(torch.float64)", True),
    ("u = x.to(dtype=torch.float64)", True),
    ("u = torch.DoubleTensor([0.5])", True),
    ("u = torch.full_like(torch.ones(2, dtype=torch.float64), 0.5)", True),
    ("u = torch.rand(3, dtype=torch.float64) * 0.5", True),
    ("u = torch.rand(3)", False),
    ("u = x.float()", False),
    ("u = x", False),
    # a float64 tensor with dimensions keeps its dtype against any real tensor or number (type promotion)
    ("u = torch.rand(3, dtype=torch.float64) * x", True),
])
def test_float64_by_construction(spelling, expected):
    ctx = _walked(f"""
        import torch

        def f(x):
            {spelling}
            return torch.log(1 - u)
    """)
    f = _function(ctx, "f")
    assert float64_value(ctx, _name(ctx, f.body.body[-1], "u")) is expected


def test_float64_buffer_and_attribute():
    ctx = _walked("""
        import torch
        import torch.nn as nn

        class Flow(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("alpha", torch.zeros(3, dtype=torch.float64))
                self.beta = torch.ones(3, dtype=torch.float64)
                self.gamma = torch.ones(3)

            def forward(self):
                return self.alpha, self.beta, self.gamma
    """)
    forward = _function(ctx, "forward")
    value = forward.body.body[0].body[0].value
    alpha, beta, gamma = (el.value for el in value.elements)
    assert float64_value(ctx, alpha) and float64_value(ctx, beta)
    assert not float64_value(ctx, gamma)


def test_results_never_read():
    ctx = _walked("""
        import torch

        def f(x):
            dropped = torch.log(1 + x)
            torch.log(x + 1)
            kept = torch.log(1 + x)
            again = torch.log(1 + x)
            again = again * 2
            return kept + again

        def g(x):
            global shared
            shared = torch.log(1 + x)

        top = torch.log(1 + torch.ones(1))
    """)
    logs = [c for c in ctx.contents(ctx.module).calls if cst.ensure_type(c.func, cst.Attribute).attr.value == "log"]
    assert [never_read(ctx, c) for c in logs] == [True, True, False, False, False, False]


# -- which calls run a model: evidence, not the callee's name ---------------------------------------
def test_a_method_named_like_a_model_on_an_object_that_is_none_is_no_model_call():
    ctx = _walked("""
        import torch.nn as nn
        from accelerate import Accelerator

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Linear(4, 4)

            def forward(self, x):
                return self.backbone(x)

        class Registry:
            def get_model(self):
                return Net()

        class Runner:
            def __init__(self, accelerator, model):
                self.accelerator = accelerator
                self.model = model

            def run(self, x):
                a = self.accelerator.unwrap_model(self.model)
                b = self.model.encoder(x)
                return a, b

        def evaluate(model, accelerator, x):
            u = accelerator.unwrap_model(model)
            acc = Accelerator()
            w = acc.unwrap_model(model)
            g = Registry().get_model()
            reg = Registry()
            h = reg.get_model()
            e = model.encoder(x)
            net = Net()
            f = net.backbone(x)
            return u, w, g, h, e, f
    """)
    found = {ctx.code(c): ctx.code(m) for c, m in evaluation_facts(ctx).model_calls}
    # `model` and `self.model` are parameters nothing says hold a module: `.encoder` named like a model
    # is no evidence either
    for call in ("accelerator.unwrap_model(model)", "acc.unwrap_model(model)", "reg.get_model()",
                 "self.accelerator.unwrap_model(self.model)", "Registry().get_model()", "model.encoder(x)",
                 "self.model.encoder(x)"):
        assert call not in found, call
    assert found["net.backbone(x)"] == "net.backbone"


KEEPER = """
    import torch.nn as nn

    class Agent:
        def __init__(self):
            self.policy = nn.Linear(4, 2)
            self.kept = []

        def act(self, state):
            out = self.policy(state)
            self.{method}(out)

        def remember(self, value):
            self.kept.append(value)

        def show(self, value):
            print(value.argmax().item())
"""


@pytest.mark.parametrize("method, away", [("remember", True), ("show", False)])
def test_a_value_a_method_keeps_on_the_object_is_handed_away(method, away):
    # `self.remember(out)` appends the output, graph and all, to `self.kept`: another method may
    # differentiate it later; `self.show(out)` only prints a pick
    ctx = _walked(KEEPER.format(method=method))
    act = _function(ctx, "act")
    calls = {c for c, _m in evaluation_facts(ctx).model_calls if ctx.is_inside(c, act)}
    assert calls
    assert hands_graph_away(ctx, act, decoding_flow(ctx, act, calls), calls) is away


def test_model_calls_are_judged_after_the_walk_from_the_whole_file():
    """The binder records the calls the walk meets; which run a model is decided once every binding is
    known, so a model built below the function that runs it counts, and no reader sees a half answer."""
    from torchlint.families.training.evaluation import EvaluationBinder

    code = textwrap.dedent("""
        import torch
        from torch import nn

        def evaluate(loader):
            hits = 0
            for x, y in loader:
                hits += (net(x).argmax(1) == y).sum().item()
            return hits

        def score(batch):
            cnn = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
            return cnn(batch).argmax(1)

        net = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.5))
        print(evaluate([]), score(torch.ones(1, 4)))
    """)
    ctx = FileContext("case.py", code, cst.parse_module(code))
    binder = EvaluationBinder(ctx)
    during = []

    def hook(node):
        if isinstance(node, cst.Call):
            binder.visit_Call(node)
            during.append(list(evaluation_facts(ctx).model_calls))

    analyze(ctx, hook)
    assert during and all(found == [] for found in during)  # nothing is decided at the walk's position
    assert [ctx.code(call) for call, _ in evaluation_facts(ctx).model_calls] == ["net(x)", "cnn(batch)"]


RECURSIVE_REFINE = """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Linear(4, 4))


def refine(x, k):
    net.eval()
    y = net(x)
    if k > 0:
        return refine(y, k - 1)
    return y.argmax(-1).tolist()


{caller}
"""


@pytest.mark.parametrize("caller, expected", [
    ("with torch.no_grad():\n    print(refine(torch.randn(2, 4), 3))", True),
    ("print(refine(torch.randn(2, 4), 3))", False),
])
def test_a_recursive_function_runs_as_its_callers_do(caller, expected):
    # its call of itself is no other caller: the answer is its callers', and asking it ends
    ctx = _walked(RECURSIVE_REFINE.format(caller=caller))
    call = next(c for c in ctx.calls_in(ctx.module) if ctx.code(c) == "net(x)")
    assert runs_without_grad(ctx, call) is expected
