"""The fix toolkit every rule builds its fixes with (torchlint.fixes), and the text edits of a fix."""
import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.analysis.walk import iter_nodes
from torchlint.engine import analyze
from torchlint.fixes import (
    EditMaker,
    add_argument,
    add_decorator,
    apply_fixes,
    import_module,
    import_name,
    insert_statement,
    remove_argument,
    wrap_statements,
)
from torchlint.rule import Fix


def _ctx(src):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    return module, ctx


def _find(module, kind, pred=lambda n: True):
    return next(n for n in iter_nodes(module) if isinstance(n, kind) and pred(n))


def _call(module, name):
    return _find(module, cst.Call, lambda c: isinstance(c.func, (cst.Name, cst.Attribute)) and module.code_for_node(c.func).endswith(name))


def _apply(module, ctx, fix):
    code, applied = apply_fixes(module, ctx, [fix])
    assert applied == 1
    return code


# -- arguments --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src, fixed",
    [
        ("y = f(x)\n", "y = f(x, training=self.training)\n"),
        ("y = f()\n", "y = f(training=self.training)\n"),
        ("y = f(x,  p)\n", "y = f(x,  p,  training=self.training)\n"),
        (
            "y = f(\n    x,\n    p=0.5,\n)\n",
            "y = f(\n    x,\n    p=0.5,\n    training=self.training,\n)\n",
        ),
        ("y = f(\n    x,\n    p=0.5\n)\n", "y = f(\n    x,\n    p=0.5,\n    training=self.training\n)\n"),
        ("y = f(x, p)  # keep\n", "y = f(x, p, training=self.training)  # keep\n"),
    ],
)
def test_add_argument_keeps_the_layout(src, fixed):
    module, ctx = _ctx(src)
    call = _call(module, "f")
    fix = Fix("t").replace(call, add_argument(ctx, call, "self.training", keyword="training"))
    assert _apply(module, ctx, fix) == fixed


@pytest.mark.parametrize(
    "src, which, fixed",
    [
        ("y = f(x, dim=1)\n", 1, "y = f(x)\n"),
        ("y = f(x, dim=1)\n", 0, "y = f(dim=1)\n"),
        ("y = f(\n    x,\n    dim=1,\n)\n", 1, "y = f(\n    x,\n)\n"),
        ("y = f(a, b, c)\n", 1, "y = f(a, c)\n"),
    ],
)
def test_remove_argument_keeps_the_layout(src, which, fixed):
    module, ctx = _ctx(src)
    call = _call(module, "f")
    fix = Fix("t").replace(call, remove_argument(call, call.args[which]))
    assert _apply(module, ctx, fix) == fixed


def test_remove_argument_refuses_a_foreign_argument():
    module, _ = _ctx("y = f(x)\nz = g(w)\n")
    with pytest.raises(ValueError):
        remove_argument(_call(module, "f"), _call(module, "g").args[0])


# -- statements -------------------------------------------------------------------------------------------------------
def test_insert_statement_keeps_comments_above_the_new_line():
    src = "def f(opt):\n    x = 1\n\n    # step\n    opt.step()\n"
    module, ctx = _ctx(src)
    anchor = _find(module, cst.SimpleStatementLine, lambda s: "step()" in module.code_for_node(s))
    fix = insert_statement(ctx, Fix("t"), anchor, "opt.zero_grad()")
    assert _apply(module, ctx, fix) == "def f(opt):\n    x = 1\n\n    # step\n    opt.zero_grad()\n    opt.step()\n"
    fix = insert_statement(ctx, Fix("t"), anchor, "opt.zero_grad()", after=True)
    assert _apply(module, ctx, fix) == src + "    opt.zero_grad()\n"


@pytest.mark.parametrize(
    "src, fixed",
    [
        (
            "# evaluates\ndef f(m, x):\n    return m(x)\n",
            "# evaluates\n@torch.no_grad()\ndef f(m, x):\n    return m(x)\n",
        ),
        (
            "class A:\n    # helper\n    @staticmethod\n    def f(m, x):\n        return m(x)\n",
            "class A:\n    # helper\n    @staticmethod\n    @torch.no_grad()\n    def f(m, x):\n        return m(x)\n",
        ),
    ],
)
def test_add_decorator_goes_directly_above_the_def(src, fixed):
    module, ctx = _ctx(src)
    func = _find(module, cst.FunctionDef)
    fix = add_decorator(ctx, Fix("t"), func, "torch.no_grad()")
    assert _apply(module, ctx, fix) == fixed


def test_wrap_statements_keeps_comments():
    src = "def f(m, xs):\n    # score\n    y = m(xs)  # forward\n    # keep\n    z = y.sum()\n    return z\n"
    module, ctx = _ctx(src)
    func = _find(module, cst.FunctionDef)
    stmts = list(func.body.body[:2])
    fix = wrap_statements(ctx, Fix("t"), stmts, "with torch.no_grad()")
    assert _apply(module, ctx, fix) == (
        "def f(m, xs):\n    # score\n    with torch.no_grad():\n        y = m(xs)  # forward\n"
        "        # keep\n        z = y.sum()\n    return z\n"
    )


# -- imports ----------------------------------------------------------------------------------------------------------
def _import_fix(src, module_name, name=None):
    module, ctx = _ctx(src)
    fix = Fix("t")
    if name is None:
        spelled = import_module(ctx, fix, module_name)
    else:
        spelled = import_name(ctx, fix, module_name, name)
    code = apply_fixes(module, ctx, [fix])[0] if fix.edits else src
    return spelled, code


@pytest.mark.parametrize(
    "src, spelled, fixed",
    [
        # reuses the name, an alias of it, or the module
        ("from torchlint.runtime import batch_gather\nx = 1\n", "batch_gather", None),
        ("from torchlint.runtime import batch_gather as bg\nx = 1\n", "bg", None),
        ("import torchlint.runtime as rt\nx = 1\n", "rt.batch_gather", None),
        ("from torchlint import runtime\nx = 1\n", "runtime.batch_gather", None),
        # adds one import after the import block (docstring and __future__ first)
        (
            '"""Doc."""\nfrom __future__ import annotations\nimport torch\n\nx = 1\n',
            "batch_gather",
            '"""Doc."""\nfrom __future__ import annotations\nimport torch\nfrom torchlint.runtime import batch_gather\n\nx = 1\n',
        ),
        # merged into an import from the same module
        (
            "import torch\nfrom torchlint.runtime import softmax_cross_entropy\n\nx = 1\n",
            "batch_gather",
            "import torch\nfrom torchlint.runtime import softmax_cross_entropy, batch_gather\n\nx = 1\n",
        ),
        # the name is used for something else: the module is imported instead
        (
            "import torch\n\ndef f(batch_gather=None):\n    return batch_gather\n",
            "torchlint.runtime.batch_gather",
            "import torch\nimport torchlint.runtime\n\ndef f(batch_gather=None):\n    return batch_gather\n",
        ),
        # no imports: before the first statement, below its comments
        ("# header\nx = 1\n", "batch_gather", "# header\nfrom torchlint.runtime import batch_gather\nx = 1\n"),
    ],
)
def test_import_name(src, spelled, fixed):
    got, code = _import_fix(src, "torchlint.runtime", "batch_gather")
    assert got == spelled
    assert code == (src if fixed is None else fixed)


def test_import_name_refuses_a_taken_package_name():
    src = "torchlint = 3\nbatch_gather = 2\n"
    assert _import_fix(src, "torchlint.runtime", "batch_gather") == (None, src)


def test_import_module_reuses_or_adds():
    assert _import_fix("import torch.nn.functional as F\n", "torch.nn.functional")[0] == "F"
    assert _import_fix("import torch\n", "torch.nn.functional")[0] == "torch.nn.functional"
    assert _import_fix("x = 1\n", "torch") == ("torch", "import torch\nx = 1\n")


def test_one_fix_adds_an_import_once():
    module, ctx = _ctx("import os\n\nx = 1\n")
    fix = Fix("t")
    assert import_name(ctx, fix, "torchlint.runtime", "batch_gather") == "batch_gather"
    assert import_name(ctx, fix, "torchlint.runtime", "batch_gather") == "batch_gather"
    assert import_module(ctx, fix, "torch") == "torch"
    assert import_module(ctx, fix, "torch") == "torch"
    code = _apply(module, ctx, fix)
    assert code == "import os\nfrom torchlint.runtime import batch_gather\nimport torch\n\nx = 1\n"


# -- text edits -------------------------------------------------------------------------------------------------------
def _apply_edits(text, edits):
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a = starts[e.line - 1] + e.col - 1
        b = starts[e.end_line - 1] + e.end_col - 1
        text = text[:a] + e.content + text[b:]
    return text


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_edits_of_a_fix_reproduce_the_fixed_text(trailing_newline):
    src = '"""Doc."""\nimport torch\n\n\ndef f(x):\n    return g(x)\n\n\ndef h(y):\n    return g(y, 2)'
    src += "\n" if trailing_newline else ""
    module, ctx = _ctx(src)
    maker = EditMaker(module, ctx)
    for call in [c for c in iter_nodes(module) if isinstance(c, cst.Call)]:
        fix = Fix("t").replace(call, add_argument(ctx, call, "1", keyword="k"))
        import_module(ctx, fix, "numpy")
        edits = maker.edits(fix)
        assert len(edits) == 2  # the import and the call: two separate spans
        assert _apply_edits(src, edits) == _apply(module, ctx, fix)
    # no context: one edit over the whole changed span
    fix = Fix("t").replace(call, add_argument(ctx, call, "1"))
    whole = EditMaker(module).edits(fix)
    assert len(whole) == 1 and _apply_edits(src, whole) == _apply(module, ctx, fix)


def test_edits_placed_from_positions_match_the_full_layout():
    from libcst.metadata import MetadataWrapper, PositionProvider

    src = (
        "import torch\n\n\n# helper\n@decorate(\n    1,\n)\n@other\n\ndef f(x):\n    return g(x)\n\n\n"
        "class A:\n    def h(self, y):\n        return g(y)\n\nz = g(3)"
    )
    module, ctx = _ctx(src)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    fast, slow = EditMaker(module, ctx, src, positions), EditMaker(module, ctx)
    calls = [c for c in iter_nodes(module) if isinstance(c, cst.Call) and module.code_for_node(c.func) == "g"]
    assert len(calls) == 3
    for call in calls:
        fix = Fix("t").replace(call, add_argument(ctx, call, "1"))
        import_module(ctx, fix, "numpy")
        assert fast.edits(fix) == slow.edits(fix)
        assert _apply_edits(src, fast.edits(fix)) == _apply(module, ctx, fix)
    assert not fast._layout_done  # every statement was placed from its position


NESTED_SOURCES = [
    # four-space blocks, a comment and blank lines above nested statements, a decorated method
    "import torch\n\n\nclass Trainer:\n    # runs the loop\n    @staticmethod\n    def run(model, xs):\n"
    "        for x in xs:\n            if x is not None:\n\n                # forward\n                y = model(x)\n"
    "                out = g(y,\n                      2)\n        return g(model)\n",
    # two-space class body, eight-space method body, a one-line compound statement
    "class A:\n  def f(self, x):\n          if x: return g(x)\n          while x:\n            x = g(x - 1)\n"
    "          return x\n",
    # tab-indented blocks
    "def f(x):\n\tif x:\n\t\tx = g(x)\n\treturn g(x)\n",
    # no final newline, a statement after a nested block
    "def f(x):\n    with ctx():\n        for i in range(3):\n            x = g(x)\n    return g(x)",
]


@pytest.mark.parametrize("src", NESTED_SOURCES)
def test_edits_inside_nested_blocks_regenerate_only_the_innermost_statement(src):
    from libcst.metadata import MetadataWrapper, PositionProvider

    module, ctx = _ctx(src)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    calls = [c for c in iter_nodes(module) if isinstance(c, cst.Call) and module.code_for_node(c.func) == "g"]
    assert len(calls) >= 2
    for call in calls:
        stmt = ctx.statement_of(call)
        function = ctx.enclosing(call, cst.FunctionDef)
        fixes = [
            Fix("t").replace(call, add_argument(ctx, call, "1", keyword="k")),
            insert_statement(ctx, Fix("t"), stmt, "torch.manual_seed(0)"),
            add_decorator(ctx, Fix("t"), function, "torch.no_grad()"),
        ]
        for fix in fixes:
            fast, slow = EditMaker(module, ctx, src, positions), EditMaker(module, ctx)
            edits = fast.edits(fix)
            assert edits == slow.edits(fix)  # the same edits as regenerating the top-level statement
            assert _apply_edits(src, edits) == _apply(module, ctx, fix)
            assert fast._inner_edits(fix) is not None  # placed from the innermost statement
