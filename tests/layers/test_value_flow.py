"""Values followed through calls in the program model: arguments bound to parameters per call,
defaults, annotations, ``self`` attributes (set in ``__init__`` or by a constructor's arguments),
returns of project functions, and methods resolved through the class hierarchy."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.analysis.definitions import bind_arguments
from torchlint.families.numerics.losses import call_findings
from torchlint.families.training.graph_free import element_without_graph, returns_without_graph
from torchlint.analysis.values import Frame, NLL, caller_frames, line_of, loss_fact, model_fact, value_fact
from torchlint.analysis.roles import SIGMOID, SOFTMAX
from torchlint.engine import Settings, analyze, lint_source
from torchlint.rules import all_rules

RULES = all_rules()


def _walked(code, path="case.py"):
    code = textwrap.dedent(code)
    module = cst.parse_module(code)
    ctx = FileContext(path, code, module)
    analyze(ctx)
    return ctx


def _function(ctx, name):
    (found,) = ctx.functions()[name]
    return found


def _calls(ctx, code):
    return [c for c in ctx.calls_in(ctx.module) if ctx.code(c) == code]


def _returned(function):
    (stmt,) = [s for s in function.body.body if isinstance(s, cst.SimpleStatementLine)
               and isinstance(s.body[0], cst.Return)]
    return stmt.body[0].value


MODELS = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Probs(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return F.softmax(self.fc(x), dim=1)

    class Logits(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x)
"""


def test_arguments_bind_by_position_and_keyword_and_self_is_skipped_for_methods():
    ctx = _walked(
        """
        def helper(a, b, c=1, *, d=2):
            return a

        class K:
            def m(self, p, q):
                return p

        helper(1, c=3, b=2, d=4)
        K().m(5, q=6)
        helper(*args)
        """
    )
    helper = _function(ctx, "helper")
    (call,) = _calls(ctx, "helper(1, c=3, b=2, d=4)")
    bound = bind_arguments(call, helper, 0)
    assert {k: ctx.code(v) for k, v in bound.items()} == {"a": "1", "b": "2", "c": "3", "d": "4"}
    (mcall,) = _calls(ctx, "K().m(5, q=6)")
    bound = bind_arguments(mcall, _function(ctx, "m"), 1)
    assert {k: ctx.code(v) for k, v in bound.items()} == {"p": "5", "q": "6"}
    (starred,) = _calls(ctx, "helper(*args)")
    assert bind_arguments(starred, helper, 0) is None  # undecidable: not followed


def test_a_parameter_is_what_each_call_passes():
    ctx = _walked(MODELS + """
    def run(net, x):
        return net(x)

    def main(x):
        run(Probs(), x)
        run(Logits(), x)
    """)
    run = _function(ctx, "run")
    out = _returned(run)
    open_frame = Frame(ctx, run)
    assert value_fact(open_frame, out) is None  # a bare parameter: unknown
    first, second = [c for c in ctx.calls_in(ctx.module) if ctx.code(c.func) == "run"]
    main = Frame(ctx, _function(ctx, "main"))
    probs = Frame(ctx, run, bind_arguments(first, run, 0), main, first, depth=1)
    logits = Frame(ctx, run, bind_arguments(second, run, 0), main, second, depth=1)
    fact = value_fact(probs, out)
    assert fact.kind == SOFTMAX and "`forward` of `Probs`" in "".join(map(str, fact.why))
    assert fact.origin is first.args[0].value  # read from the argument of this call
    assert value_fact(logits, out) is None


def test_defaults_annotations_and_self_attributes_give_values():
    ctx = _walked(MODELS + """
    def by_default(x, y, loss=nn.NLLLoss(), model=Probs()):
        return loss(model(x), y)

    def by_annotation(model: Probs, x):
        return model(x)

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = Probs()
            self.crit = nn.BCELoss()

        def step(self, x, y):
            return self.crit(self.net(x), y)
    """)
    f = _function(ctx, "by_default")
    frame = Frame(ctx, f)
    call = _returned(f)
    assert loss_fact(frame, call)[0] == NLL
    assert value_fact(frame, call.args[0].value).kind == SOFTMAX
    g = _function(ctx, "by_annotation")
    fact = model_fact(Frame(ctx, g), _returned(g).func)
    assert fact.kind == SOFTMAX and "annotated `Probs`" in "".join(map(str, fact.why))
    step = _function(ctx, "step")
    holder = [s for s in ctx.module.body if isinstance(s, cst.ClassDef) and s.name.value == "Holder"][0]
    sframe = Frame(ctx, step, cls=(ctx, holder))
    scall = _returned(step)
    assert loss_fact(sframe, scall)[0] == "bce"
    assert model_fact(sframe, scall.args[0].value.func).kind == SOFTMAX


def test_returns_of_project_functions_carry_the_model_facts():
    ctx = _walked(MODELS + """
    def predict(model, x):
        out = model(x)
        return out.view(-1, 3)

    def main(x):
        m = Probs()
        scores = predict(m, x)
        return scores
    """)
    main = _function(ctx, "main")
    fact = value_fact(Frame(ctx, main), _returned(main))
    assert fact is not None and fact.kind == SOFTMAX


def test_constructor_arguments_reach_self_attributes_of_the_object():
    ctx = _walked(MODELS + """
    class Trainer:
        def __init__(self, model, criterion):
            self.model = model
            self.criterion = criterion

        def step(self, x, y):
            return self.criterion(self.model(x), y)

    def main(x, y):
        good = Trainer(Logits(), nn.CrossEntropyLoss())
        good.step(x, y)
        bad = Trainer(Probs(), nn.CrossEntropyLoss())
        bad.step(x, y)
    """)
    found = call_findings(ctx)
    assert [(ctx.code(f.node), f.loss, f.kind) for f in found] == [("bad.step(x, y)", "ce", SOFTMAX)]
    assert "through `Trainer.step`" in found[0].message


def test_a_base_class_method_is_judged_for_each_subclass_in_the_file():
    ctx = _walked("""
    import torch.nn as nn
    import torch.nn.functional as F

    class Base(nn.Module):
        def loss(self, x, y):
            return F.binary_cross_entropy(self(x), y)

    class Plain(Base):
        def forward(self, x):
            return x

    class Squashed(Base):
        def forward(self, x):
            return x.sigmoid()
    """)
    (found,) = call_findings(ctx)
    assert found.kind == SIGMOID and found.loss == "bce"
    assert "when `self` is a `Squashed`" in found.message


def test_depth_limit_stops_long_chains():
    # four helpers deep: beyond MAX_CALL_DEPTH the loss is not reached and nothing is claimed
    ctx = _walked(MODELS + """
    def h4(m, x, y):
        return F.cross_entropy(m(x), y)

    def h3(m, x, y):
        return h4(m, x, y)

    def h2(m, x, y):
        return h3(m, x, y)

    def h1(m, x, y):
        return h2(m, x, y)

    def near(m, x, y):
        return h4(m, x, y)

    def main(x, y):
        h1(Probs(), x, y)
        near(Probs(), x, y)
    """)
    found = call_findings(ctx)
    assert [ctx.code(f.node) for f in found] == ["Probs()"]
    assert "through `near` then `h4`" in found[0].message


def test_line_of_a_nested_definition():
    ctx = _walked(MODELS)
    cls = [s for s in ctx.module.body if isinstance(s, cst.ClassDef) and s.name.value == "Logits"][0]
    forward = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"][0]
    lines = textwrap.dedent(MODELS).split("\n")
    assert lines[line_of(ctx, forward) - 1].strip() == "def forward(self, x):"
    assert line_of(ctx, forward) > line_of(ctx, cls)


def test_helper_returning_a_number_returns_no_graph_and_a_tensor_one_does():
    ctx = _walked("""
    def as_number(loss, n):
        value = loss.item() * n.size(0)
        return round(value, 4)

    def as_tensor(loss, n):
        return loss * n.size(0)

    as_number(a, b)
    as_tensor(a, b)
    """)
    (number,) = _calls(ctx, "as_number(a, b)")
    (tensor,) = _calls(ctx, "as_tensor(a, b)")
    assert returns_without_graph(ctx, number)
    assert not returns_without_graph(ctx, tensor)


def test_tuple_element_of_a_method_return_is_graph_free_by_construction():
    ctx = _walked("""
    import pytorch_lightning as pl
    import torch.nn as nn
    import torch.nn.functional as F

    class Scorer(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, batch):
            x, y, keep = batch
            out = self.fc(x)
            loss = F.cross_entropy(out[keep], y[keep])
            hits = (out[keep].argmax(-1) == y[keep]).sum().float() / keep.sum()
            return loss, hits, out.softmax(-1)

    fresh = Scorer()
    fresh.forward(b1)
    loaded = Scorer.load_from_checkpoint("best.ckpt")
    loaded.forward(b2)
    """)
    (fresh,) = _calls(ctx, "fresh.forward(b1)")
    (loaded,) = _calls(ctx, "loaded.forward(b2)")
    for call in (fresh, loaded):
        # the accuracy: a comparison's sum over a count of the mask that indexes in the same expression
        assert element_without_graph(ctx, call, 1)
        assert not element_without_graph(ctx, call, 0)  # the loss
        assert not element_without_graph(ctx, call, 2)  # probabilities
        assert not element_without_graph(ctx, call, None)  # the tuple holds the loss


# -- across files: a tmp project ---------------------------------------------------------------------
def _write(root, files):
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))


def _lint(path, codes):
    rules = [r for r in RULES if r.CODE in codes]
    result = lint_source(str(path), path.read_text(), Settings(rules=rules))
    assert not result.errors
    return [(d.code, d.line, d.message) for d in result.diagnostics]


def test_model_helper_and_call_in_three_files(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/nets.py": """
            import torch.nn as nn

            class Judge(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())

                def forward(self, x):
                    return self.body(x)
        """,
        "pkg/objectives.py": """
            import torch

            def judge_loss(judge, real, crit):
                score = judge(real)
                return crit(score, torch.ones_like(score))
        """,
        "pkg/train.py": """
            import torch.nn as nn
            from .nets import Judge
            from .objectives import judge_loss

            def train(batches):
                j = Judge()
                for real in batches:
                    judge_loss(j, real, nn.BCELoss()).backward()
                    judge_loss(nn.Linear(4, 1), real, nn.BCELoss()).backward()
        """,
    })
    found = _lint(tmp_path / "pkg" / "train.py", {"TL207"})
    assert [(c, line) for c, line, _m in found] == [("TL207", 9)]
    assert "`forward` of `Judge` (nets.py:9)" in found[0][2] and "through `judge_loss`" in found[0][2]


def test_softmax_model_from_another_file_through_a_local_helper(tmp_path):
    _write(tmp_path, {
        "nets.py": MODELS,
        "train.py": """
            import torch.nn as nn
            from nets import Probs, Logits

            def fit_step(net, x, y, objective=nn.CrossEntropyLoss()):
                return objective(net(x), y)

            def main(x, y):
                fit_step(Logits(), x, y)
                fit_step(Probs(), x, y)
        """,
    })
    found = _lint(tmp_path / "train.py", {"TL103"})
    assert [(c, line) for c, line, _m in found] == [("TL103", 10)]


def test_a_subclass_of_a_subclass_inherits_the_base_method():
    ctx = _walked("""
    import torch.nn as nn
    import torch.nn.functional as F

    class Base(nn.Module):
        def loss(self, x, y):
            return F.cross_entropy(self(x), y)

    class Middle(Base):
        pass

    class Leaf(Middle):
        def forward(self, x):
            return F.softmax(x, dim=-1)
    """)
    (found,) = call_findings(ctx)
    assert found.loss == "ce" and "when `self` is a `Leaf`" in found.message


def test_an_object_of_a_class_imported_from_another_file(tmp_path):
    _write(tmp_path, {
        "nets.py": MODELS,
        "trainer.py": """
            import torch.nn as nn

            class Trainer:
                def __init__(self, model):
                    self.model = model
                    self.criterion = nn.CrossEntropyLoss()

                def step(self, x, y):
                    return self.criterion(self.model(x), y)
        """,
        "run.py": """
            import torch.nn.functional as F
            from nets import Probs, Logits
            from trainer import Trainer

            def main(x, y):
                Trainer(Logits()).step(x, y)
                t = Trainer(Probs())
                t.step(x, y)
                return F.softmax(x, dim=-1)
        """,
    })
    found = _lint(tmp_path / "run.py", {"TL103"})
    assert [(c, line) for c, line, _m in found] == [("TL103", 9)]
    assert "through `Trainer.step`" in found[0][2]


def test_caller_frames_bind_each_call_of_the_function_in_the_file():
    ctx = _walked(MODELS + """
    def nll(model, x, y):
        return model(x)

    def run(x, y):
        nll(Logits(), x, y)
        nll(model=Probs(), x=x, y=y)
    """)
    helper = _function(ctx, "nll")
    frames = caller_frames(ctx, helper.body)
    assert [ctx.code(f.call) for f in frames] == ["nll(Logits(), x, y)", "nll(model=Probs(), x=x, y=y)"]
    kinds = [value_fact(f, _returned(helper)) for f in frames]
    assert kinds[0] is None and kinds[1].kind == SOFTMAX


def test_hand_written_nll_of_a_softmax_model_from_other_files(tmp_path):
    _write(tmp_path, {
        "nets.py": MODELS,
        "helpers.py": """
            import torch.nn.functional as F

            def probabilities(model, x):
                return F.softmax(model(x), dim=1)
        """,
        "train.py": """
            import torch
            from nets import Probs, Logits
            from helpers import probabilities

            def step(x, y):
                net = Probs()
                log_p = torch.log(net(x))
                return -log_p[torch.arange(len(y)), y].mean()

            def step2(x, y):
                p = probabilities(Logits(), x)
                return -torch.log(p.gather(1, y[:, None])).mean()

            def step3(x, y):
                return -torch.log(Logits()(x))[torch.arange(len(y)), y].mean()
        """,
    })
    found = _lint(tmp_path / "train.py", {"TL206", "TL202"})
    assert [(c, line) for c, line, _m in found] == [("TL206", 9), ("TL206", 13)]
    assert "`forward` of `Probs` (nets.py:11)" in found[0][2]
    assert "`F.softmax(model(x), dim=1)` (helpers.py:5)" in found[1][2]


def test_a_file_that_spells_neither_loss_nor_softmax_is_linted_for_what_it_imports(tmp_path):
    _write(tmp_path, {
        "nets.py": MODELS,
        "losses.py": """
            import torch.nn as nn

            criterion = nn.CrossEntropyLoss()

            def make_criterion():
                return nn.CrossEntropyLoss()
        """,
        "train.py": """
            from nets import Probs, Logits
            from losses import criterion, make_criterion

            def step(x, y):
                return criterion(Probs()(x), y)

            def step2(x, y):
                crit = make_criterion()
                return crit(Probs()(x), y), crit(Logits()(x), y)
        """,
        "other.py": """
            from nets import Probs

            def run(x, fn):
                return fn(Probs()(x))
        """,
    })
    found = _lint(tmp_path / "train.py", {"TL103"})
    assert [(c, line) for c, line, _m in found] == [("TL103", 6), ("TL103", 10)]
    assert "`nn.CrossEntropyLoss()` (losses.py:4)" in found[0][2]
    assert "(losses.py:7)" in found[1][2]
    rules = [r for r in RULES if r.CODE == "TL103"]
    other = tmp_path / "other.py"
    result = lint_source(str(other), other.read_text(), Settings(rules=rules))
    assert result.skipped and result.diagnostics == []  # nothing it imports spells the loss
    assert str(tmp_path / "nets.py") in result.dependencies  # a later edit of nets.py is seen


def test_the_message_at_the_call_names_where_the_helper_computes_the_loss(tmp_path):
    _write(tmp_path, {
        "nets.py": MODELS,
        "steps.py": """
            import torch.nn as nn

            def fit_step(net, x, y, objective=nn.CrossEntropyLoss()):
                out = net(x)
                return objective(out, y)
        """,
        "train.py": """
            from nets import Probs
            from steps import fit_step

            def main(x, y):
                fit_step(Probs(), x, y)
                fit_step(Probs(), x, y)
        """,
    })
    found = _lint(tmp_path / "train.py", {"TL103"})
    assert [(c, line) for c, line, _m in found] == [("TL103", 6), ("TL103", 7)]
    assert all("through `fit_step` (the loss at steps.py:6)" in m for _c, _l, m in found)


def test_a_parameter_every_call_fills_with_a_hand_written_sigmoid():
    from torchlint.analysis.values import caller_value_fact
    from torchlint.analysis.roles import handwritten_sigmoid

    ctx = _walked("""
        import torch

        class A:
            def probs(self, z):
                return self._squash(z)

            def _squash(self, z):
                return 1.0 / (1.0 + torch.exp(-z))

            def cost(self, y, p):
                return torch.log(p)

            def run(self, y, z):
                q = self.probs(z)
                return self.cost(y, q) + self.cost(y, self.probs(2 * z))

        class B:
            def cost(self, y, p):
                return torch.log(p)

            def run(self, y, z):
                return self.cost(y, z)
    """)
    (sig_a,) = ctx.functions()["_squash"]
    assert ctx.code(handwritten_sigmoid(ctx, _returned(sig_a))) == "z"
    cost_a, cost_b = ctx.functions()["cost"]
    p_a = _returned(cost_a).args[0].value
    p_b = _returned(cost_b).args[0].value
    fact = caller_value_fact(ctx, p_a)
    assert fact is not None and fact.kind == SIGMOID and "written by hand" in fact.message
    assert caller_value_fact(ctx, p_b) is None  # B's callers pass a plain tensor


SCHEDULE = """
    import torch
    import torch.nn as nn


    def levels(n):
        return torch.linspace(1e-4, 0.02, n, dtype=torch.float64)


    class Schedule(nn.Module):
        def __init__(self, betas):
            super().__init__()
            self.register_buffer("log_keep", torch.log(1. - betas))
"""


def test_a_buffer_nothing_in_the_project_reads_is_not_reported(tmp_path):
    _write(tmp_path, {"schedule.py": SCHEDULE, "train.py": "from schedule import Schedule\n"})
    assert _lint(tmp_path / "schedule.py", {"TL205"}) == []


def test_a_buffer_read_in_another_file_is_reported(tmp_path):
    _write(tmp_path, {"schedule.py": SCHEDULE, "train.py": """
        from schedule import Schedule

        def weight(s, t):
            return s.log_keep[t]
    """})
    assert [(c, line) for c, line, _m in _lint(tmp_path / "schedule.py", {"TL205"})] == [("TL205", 13)]


def test_float64_through_a_helper_imported_from_another_file(tmp_path):
    _write(tmp_path, {"schedule.py": SCHEDULE, "train.py": """
        import torch
        from schedule import levels

        def keep(n, u):
            return torch.log(1. - levels(n)), torch.log(1. - u)
    """})
    found = _lint(tmp_path / "train.py", {"TL205"})
    assert [(c, line) for c, line, _m in found] == [("TL205", 6)]
    assert "`torch.log(1. - u)`" in found[0][2]


def test_values_a_name_holds_through_a_factory_and_a_tuple_it_returns():
    from torchlint.analysis.definitions import held_values, returned_values
    from torchlint.analysis.roles import is_model

    ctx = _walked("""
        import torch.nn as nn

        def build(n):
            net = nn.Sequential(nn.Linear(n, 2), nn.Dropout(0.1))
            names = ["a", "b"]
            return net, names

        def plain(n):
            net = nn.Linear(n, 2)
            return net

        def unknown(n, given):
            return given, n

        model, labels = build(4)
        other = plain(3)
        mystery, count = unknown(2, object())
        print(model, labels, other, mystery)
    """)
    reads = {n.value: n for n in ctx.nodes(ctx.module) if isinstance(n, cst.Name)
             and isinstance(ctx.parent(n), cst.Arg) and ctx.enclosing(n, cst.FunctionDef) is None}
    held = held_values(ctx, reads["model"])
    assert [ctx.code(v) for _, v in held] == ["nn.Sequential(nn.Linear(n, 2), nn.Dropout(0.1))"]
    assert [ctx.code(v) for _, v in held_values(ctx, reads["labels"])] == ['["a", "b"]']
    assert returned_values(ctx, _function(ctx, "plain")) == [(ctx, _calls(ctx, "nn.Linear(n, 2)")[-1])]
    assert held_values(ctx, reads["mystery"]) is None  # the function returns its parameter: not known
    assert is_model(ctx, reads["model"]) is True
    assert is_model(ctx, reads["other"]) is True
    assert is_model(ctx, reads["labels"]) is None


def test_the_function_a_parameter_belongs_to():
    from torchlint.analysis.definitions import arguments_for_param, parameter_owner

    ctx = _walked("""
        def make_step(model, fn=lambda model, x: model(x), size=model_size):
            return fn(model, size)

        make_step(net)
    """)
    make_step = _function(ctx, "make_step")
    reads = [n for n in ctx.nodes(ctx.module) if isinstance(n, cst.Name) and n.value in ("model", "model_size")
             and not (isinstance(ctx.parent(n), cst.Param) and ctx.parent(n).name is n)]
    in_lambda, in_body = [n for n in reads if n.value == "model"]
    (default,) = [n for n in reads if n.value == "model_size"]
    assert parameter_owner(ctx, in_body) is make_step
    assert parameter_owner(ctx, in_lambda) is None  # the lambda's own parameter
    assert parameter_owner(ctx, default) is None  # read where the function is defined
    assert [ctx.code(a) for a in arguments_for_param(ctx, in_body)] == ["net"]
    assert arguments_for_param(ctx, in_lambda) is None


SETTER_MODEL = """
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self, width, classes):
            super().__init__()
            self.fc = nn.Linear(width, classes)
            self.softmax = nn.Softmax(dim=1)

        def forward(self, x):
            return self.softmax(self.fc(x))

        def add_optimizer(self, optimizer):
            self.optimizer = optimizer

        def add_loss_op(self, loss_op):
            self.loss_op = loss_op

        def run_epoch(self, batches):
            for x, y in batches:
                self.optimizer.zero_grad()
                y_pred = self.__call__(x)
                loss = self.loss_op(y_pred, y)
                loss.backward()
                self.optimizer.step()
"""


def _setter_script(loss_lines):
    return """
        import torch
        from torch import nn
        from tagger import *

        if __name__ == "__main__":
            model = Tagger(8, 3)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""" + textwrap.indent(textwrap.dedent(loss_lines), " " * 12) + """
            model.add_optimizer(optimizer)
            model.run_epoch([])
    """


@pytest.mark.parametrize("loss, code", [
    ("nll = nn.NLLLoss()\nmodel.add_loss_op(nll)", "TL110"),
    ("model.add_loss_op(nn.NLLLoss())", "TL110"),
    ("NLLLoss = nn.NLLLoss()\nmodel.add_loss_op(NLLLoss)", "TL110"),
    ("model.add_loss_op(nn.CrossEntropyLoss())", "TL103"),
])
def test_a_loss_handed_to_a_setter_method_from_a_script_reaches_the_call(tmp_path, loss, code):
    # the class's file spells no loss: the script that imports it and calls its setter does
    _write(tmp_path, {"tagger.py": SETTER_MODEL, "train.py": _setter_script(loss)})
    found = _lint(tmp_path / "tagger.py", {"TL103", "TL110"})
    assert [(c, line) for c, line, _m in found] == [(code, 24)]
    assert "`forward` of `Tagger` (tagger.py:11)" in found[0][2] and "(train.py:" in found[0][2]


@pytest.mark.parametrize("loss", [
    # two scripts (or two calls) hand over different losses: the attribute holds either
    "model.add_loss_op(nn.NLLLoss())\nmodel.add_loss_op(nn.MSELoss())",
    # the loss expects probabilities' logs but the model is handed a log-softmax one elsewhere: unknown loss
    "model.add_loss_op(make_loss())",
    # a receiver whose class is not known may be a Tagger: what it is handed is not in view
    "model.add_loss_op(nn.NLLLoss())\nother = build()\nother.add_loss_op(nn.MSELoss())",
])
def test_a_setter_whose_callers_disagree_or_are_unknown_decides_nothing(tmp_path, loss):
    _write(tmp_path, {"tagger.py": SETTER_MODEL, "train.py": _setter_script(loss)})
    assert _lint(tmp_path / "tagger.py", {"TL103", "TL110"}) == []


def test_the_class_file_depends_on_the_script_that_hands_it_the_loss(tmp_path):
    _write(tmp_path, {"tagger.py": SETTER_MODEL, "train.py": _setter_script("model.add_loss_op(nn.NLLLoss())")})
    rules = [r for r in RULES if r.CODE == "TL110"]
    path = tmp_path / "tagger.py"
    result = lint_source(str(path), path.read_text(), Settings(rules=rules))
    assert str(tmp_path / "train.py") in result.dependencies


@pytest.mark.parametrize("call", ["self.__call__(x)", "self(x)", "self.forward(x)"])
def test_a_model_running_itself_by_any_spelling_gives_its_forward_output(call):
    ctx = _walked("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return F.softmax(self.fc(x), dim=1)

            def fit(self, x, y):
                out = %s
                return F.cross_entropy(out, y)
    """ % call)
    (finding,) = call_findings(ctx)
    assert finding.loss == "ce"



def test_written_target_covers_unpacked_loop_and_comprehension_targets():
    from torchlint.analysis.context import written_target

    ctx = _walked(
        """
        pred, _ = model(x)
        pred = (pred > 0.5).squeeze()
        total += pred.sum()
        for i, (a, b) in enumerate(pairs):
            print(a)
        squares = [n * n for n in range(3)]
        """
    )
    names = [n for n in ctx.nodes(ctx.module) if isinstance(n, cst.Name)]
    assert sorted(n.value for n in names if written_target(ctx, n)) == [
        "_", "a", "b", "i", "n", "pred", "pred", "squares", "total"]
    # the reads: `(pred > 0.5)` and `pred.sum()`
    assert len([n for n in names if n.value == "pred" and not written_target(ctx, n)]) == 2


_SUMMED_AFTER = """
def update(batches):
    losses = []
    for x in batches:
        loss = net(x).mean()
        loss.backward()
        losses.append(loss)
    loss = sum(losses) / len(losses)
    return loss
"""

_SUMMED_IN_THE_LOOP = """
def update(batches):
    losses = []
    for x in batches:
        losses.append(net(x).mean())
        loss = sum(losses) / len(losses)
        loss.backward()
    return losses
"""


@pytest.mark.parametrize("code, flows", [(_SUMMED_AFTER, False), (_SUMMED_IN_THE_LOOP, True)])
def test_a_backward_reads_a_derived_name_only_where_its_computation_may_run_before(code, flows):
    from torchlint.analysis.training import flows_into_backward

    ctx = _walked(code)
    assert flows_into_backward(ctx, _function(ctx, "update"), "losses") is flows
