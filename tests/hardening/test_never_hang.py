"""Programs that stress the walks over names, assignments, calls and scopes finish quickly.

The hand-written cases are the module-level ``global`` that once made name lookup loop forever, and its
relatives; the generated ones combine statements that make such walks cycle (``global``/``nonlocal`` at
any level, names rebound in loops or assigned from themselves, mutually recursive functions, deep
attribute chains, star imports, ``del``).  Every program is linted by a watchdog worker with every rule
enabled and fixes on, under a short time budget: a hang is a TL000 timeout, and fails the test.

Set TORCHLINT_PROPERTY_EXAMPLES to run more generated programs, TORCHLINT_PROPERTY_EXPLORE=1 to draw other
ones than the fixed draw of every run.
"""
import os
import textwrap

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlint import workers
from torchlint.engine import FileTask, Settings
from torchlint.rules import all_rules

RULES = all_rules()
EXAMPLES = int(os.environ.get("TORCHLINT_PROPERTY_EXAMPLES", "40"))
EXPLORE = bool(os.environ.get("TORCHLINT_PROPERTY_EXPLORE"))
TRIGGERS = "# " + " ".join(sorted({t for r in RULES for t in r.TRIGGERS})) + "\n"
# far above what any of these programs needs (milliseconds), far below "never returns"
BUDGET = 2.0

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not workers.CAN_ISOLATE, reason="the watchdog needs os.fork")]


@pytest.fixture(scope="module")
def supervisor():
    sup = workers.text_supervisor()
    yield sup
    sup.close()


def _lint(sup, source, fix=True):
    result = workers.lint_text(FileTask("gen.py"), source, Settings(RULES, fix=fix, unsafe_fixes=fix), BUDGET, sup)
    stopped = [d.message for d in result.diagnostics if d.code == "TL000" and d.message.startswith("analysis of")]
    assert not stopped, f"{stopped[0]}\n--- program ---\n{source}"
    assert not result.errors, result.errors
    if result.fixed_source is not None:
        cst.parse_module(result.fixed_source)
    return result


REPRODUCER = """\
import torch

global logger


def get(x):
    info = {}
    if info["backend"] == "nccl":
        version = torch.cuda.nccl.version()
        logger.debug(info)
"""

VARIANTS = {
    "module-global-then-assigned": """\
        import torch
        global x
        x = torch.zeros(3)
        x = x + 1
        x.y = x
        def f(t):
            return torch.log(x).cuda()
    """,
    "module-global-twice": """\
        import torch
        global logger, logger
        global logger
        logger = logger.child(logger)
        def f(t):
            y = torch.ones(3).cuda()
            logger.info(y)
    """,
    "global-in-class-body": """\
        import torch
        class A(torch.nn.Module):
            global logger
            logger = logger.child
            def forward(self, x):
                global logger
                return logger(torch.zeros(1).cuda() + x).squeeze()
    """,
    "global-in-nested-function": """\
        import torch
        def outer(x):
            global state
            def inner(y):
                global state
                state = state(y)
                return torch.softmax(state, 1).log()
            return inner(x)
    """,
    "module-level-nonlocal": """\
        import torch
        nonlocal logger
        def f(x):
            nonlocal x
            logger.debug(torch.zeros(2).cuda())
    """,
    "global-torch": """\
        import torch
        global torch
        def f(x):
            global torch
            torch = torch.nn
            return torch.cuda.FloatTensor(3) + x
    """,
    "self-referencing": """\
        import torch
        x = x
        model = model(model)
        loss = loss + loss.item()
        def train(model, loader, opt):
            for x in x:
                x = torch.softmax(x, 1)
                loss = model(loss)
                loss.backward()
                opt.step()
                x = x.cuda()
    """,
    "assignment-cycle": """\
        import torch
        def f(p):
            x = y
            y = x
            x = y
            y = x
            return torch.log(x + y)
        x = y
        y = x
        z = torch.log(x)
    """,
    "mutual-recursion": """\
        import torch
        def f(x):
            return g(torch.exp(x)).sum()
        def g(x):
            return f(x.cuda())
        def train(model, opt):
            for b in f(model):
                g(b).backward()
                opt.step()
    """,
}


def test_reproducer_every_rule_and_tl304_alone(supervisor):
    _lint(supervisor, REPRODUCER)
    tl304 = Settings([r for r in RULES if r.CODE == "TL304"])
    result = workers.lint_text(FileTask("r.py"), REPRODUCER, tl304, BUDGET, supervisor)
    assert result.diagnostics == [] and not result.errors


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variants(supervisor, name):
    _lint(supervisor, textwrap.dedent(VARIANTS[name]) + TRIGGERS)


def _names_of_f_attributes(source):
    from torchlint.analysis.context import FileContext
    from torchlint.engine import analyze

    ctx = FileContext("m.py", source, cst.parse_module(source))
    seen = []

    def hook(node):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "F":
            seen.append(ctx.names.qualified_names(node))

    analyze(ctx, hook)
    return seen


def test_module_level_global_reads_the_module_binding():
    """``global`` at module level is a no-op: the lookup still finds the module's own binding (and ends:
    it runs in a watched worker, so a lookup that loops fails the test instead of hanging it)."""
    sup = workers.Supervisor(_names_of_f_attributes)
    try:
        out = sup.call("import torch.nn.functional as F\nglobal F\ny = F.softmax\n", BUDGET)
    finally:
        sup.close()
    assert out.kind == "ok", out
    assert out.value == [frozenset({"torch.nn.functional.softmax"})]


# -- generated programs --------------------------------------------------------------------------
NAMES = ["x", "y", "model", "loss", "logger", "opt", "self", "torch", "F", "data", "f", "g"]
ATTRS = ["a", "weight", "grad", "data", "cuda", "device", "step", "x", "self", "forward"]
FUNCS = ["f", "g", "h", "train", "forward", "__init__", "evaluate"]

SIMPLE = [
    "global {n}", "global {n}, {m}", "nonlocal {n}", "{n} = {n}", "{n} = {m}", "{n} = {n}.{a}",
    "{n} = {chain}", "{n}.{a} = {n}", "self.{a} = self.{a}", "{n} = {n}({m})", "{n} += {n}",
    "{n}, {m} = {m}, {n}", "del {n}", "del {n}.{a}", "from torch import *", "from {n} import *",
    "from . import *", "import torch.nn.functional as {n}", "from torch import nn as {n}",
    "{n} = torch.softmax({n}, dim=1)", "{n} = torch.log({n})", "{n}.backward()", "{n}.step()",
    "{n}.zero_grad()", "{n} = {n}.cuda()", "{n} = {m}.squeeze()", "{n} = F.cross_entropy({n}, {m})",
    "{n} = ({n} := {m})", "{n} = lambda {m}: {n}({m})", "{n} = [{n} for {n} in {n}]",
    "{n} = {fn}({n})", "{n} = self.{fn}({n})", "{n} = torch.exp({n}) / torch.exp({n}).sum()",
    "{n} = {n}[{m}]", "{n} += {m}[{n}]", "{n} = torch.zeros({n}.size(0), device='cuda')",
    "{n}.eval()", "{n}.train()", "{n} = super().{fn}({n})", "{n}: torch.Tensor = {n}",
]
IN_FUNCTION = ["return {n}", "return {fn}({n})", "yield {n}", "return self.{fn}(self)"]


@st.composite
def _block(draw, depth, in_function, in_loop):
    lines = []
    for _ in range(draw(st.integers(1, 6 if depth else 10))):
        kind = draw(st.integers(0, 9)) if depth < 4 else 0
        n, m = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
        fn = draw(st.sampled_from(FUNCS))
        if kind <= 4:
            pool = SIMPLE + (IN_FUNCTION if in_function else []) + (["break", "continue"] if in_loop else [])
            template = draw(st.sampled_from(pool))
            parts = draw(st.lists(st.sampled_from(NAMES + ATTRS), min_size=1, max_size=60))
            chain = ".".join([n] + parts)
            lines.append(template.format(n=n, m=m, a=draw(st.sampled_from(ATTRS)), fn=fn, chain=chain))
            continue
        if kind == 5:
            head, inner = f"def {fn}({n}, {m}=None):", _block(depth + 1, True, False)
        elif kind == 6:
            cls = n.capitalize()
            head, inner = f"class {cls}({cls}, torch.nn.Module):", _block(depth + 1, False, False)
        elif kind == 7:
            head = draw(st.sampled_from([f"for {n} in {n}:", f"while {n}:", f"for {n}, {m} in zip({m}, {n}):"]))
            inner = _block(depth + 1, in_function, True)
        elif kind == 8:
            head = draw(st.sampled_from([f"with {n} as {n}:", "with torch.no_grad():", f"if {n}:"]))
            inner = _block(depth + 1, in_function, in_loop)
        else:
            head, inner = "try:", _block(depth + 1, in_function, in_loop)
        lines.append(head)
        lines.extend("    " + line for line in draw(inner))
        if kind == 9:
            lines.append(f"except Exception as {n}:")
            lines.extend("    " + line for line in draw(_block(depth + 1, in_function, in_loop)))
    return lines


def _program(lines):
    return "import torch\nimport torch.nn.functional as F\n" + "\n".join(lines) + "\n" + TRIGGERS


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not EXPLORE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(_block(0, False, False))
def test_generated_name_walks_finish(supervisor, lines):
    source = _program(lines)
    cst.parse_module(source)  # the generator only builds programs libcst accepts
    _lint(supervisor, source)
