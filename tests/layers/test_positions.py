"""Positions computed one top-level statement at a time equal libcst's whole-module positions."""
import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.analysis.context import FileContext
from torchlint.analysis.walk import iter_nodes
from torchlint.analysis.positions import StatementPositions
from torchlint.engine import analyze

SOURCES = [
    "#!/usr/bin/env python\n# header comment\n\nimport torch\n\n\n@decorate(\n    1,\n)\n\n@other\ndef f(x):\n"
    "    '''doc\n    string'''\n    return g(x,\n             2)\n\n\nclass A:\n    # comment\n    def h(self):\n"
    "        return 1\n\n\nx = 1; y = 2\nif x:\n    pass\nelse:\n    y = (\n        3\n    )\n",
    "import torch\r\n\r\ndef f(x):\r\n    return x.squeeze()\r\n\r\nz = f(torch.ones(1))\r\n",
    "def f(x):\n    return x\nz = f(1)",  # no final newline
    "",
    "# only a comment\n",
    # blocks inside blocks, comments owned by a block's footer, a statement after a dedent to column 0
    "if True:\n    def f(x):\n        class C:\n            a = 1\n            # inside\n\n        # footer\n"
    "        return C\n    # end of f\n\n# top\nz = [\n    1,\n]  # trailing\nwhile z:\n    break\n# last\n",
]


@pytest.mark.parametrize("src", SOURCES)
def test_statement_positions_equal_whole_module_positions(src):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lazy = StatementPositions(module, ctx)
    nodes = [n for n in iter_nodes(module) if n is not module]
    for node in reversed(nodes):  # asked in any order
        assert lazy.get(node) == whole.get(node), (type(node).__name__, lazy.get(node), whole.get(node))
    assert lazy._whole is None  # never fell back to the whole-module pass
    assert lazy.get(cst.Name("elsewhere")) is None


def test_only_the_statements_asked_about_are_resolved():
    src = "import torch\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n    return y.squeeze()\n"
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    lazy = StatementPositions(module, ctx)
    target = next(n for n in iter_nodes(module) if isinstance(n, cst.Call))
    pos = lazy.get(target)
    assert (pos.start.line, pos.start.column) == (9, 11)
    # only the statement holding the call was generated with positions: `return y.squeeze()`
    function = module.body[2]
    assert list(lazy._resolved) == [id(function.body.body[0])]


def test_the_lines_of_every_statement_come_from_one_generation_of_the_module(monkeypatch):
    from torchlint.analysis import positions

    src = "".join(f"def f{i}(x):\n    if x:\n        return x.squeeze()\n    return x\n\n\n" for i in range(6))
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    finders, plain = [], []
    real_finder, real_code = positions._StatementStarts, cst.Module.code_for_node

    def finder(*args, **kwargs):
        finders.append(1)
        return real_finder(*args, **kwargs)

    def code_for_node(self, node):
        plain.append(node)
        return real_code(self, node)

    monkeypatch.setattr(positions, "_StatementStarts", finder)
    monkeypatch.setattr(cst.Module, "code_for_node", code_for_node)
    lazy = StatementPositions(module, ctx)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    calls = [n for n in iter_nodes(module) if isinstance(n, cst.Call)]
    assert len(calls) == 6
    for call in calls:  # one finding in each top-level statement
        assert lazy.get(call) == whole.get(call)
    assert len(finders) == 1 and plain == []


def test_positions_kept_with_the_statements_of_an_edited_document_stay_right():
    from torchlint.analysis.project import Project

    project = Project()
    reparser = project.parse_edits()
    text = SOURCES[0] + "".join(f"\n\ndef f{i}(x):\n    if x:\n        return x.squeeze()\n    return x\n" for i in range(8))
    edits = [
        lambda t: t + "\nextra = f1(2)\n",  # lines added at the end: the rest as it was
        lambda t: t.replace("def f3(x):\n", "def f3(x):\n    '''Two\n    lines.'''\n"),  # lines added in the middle
        lambda t: t.replace("def f6(x):\n    if x:\n", "def f6(x):\n    if x:  # a comment\n"),  # same lines
        lambda t: t.replace("\n\ndef f2(x):", "\n\n\n\n# moved down\ndef f2(x):"),
        lambda t: t.replace("    '''Two\n    lines.'''\n", ""),  # lines removed
    ]
    for edit in [lambda t: t] + edits:
        text = edit(text)
        module = project.parse("m.py", text)
        ctx = FileContext("m.py", text, module, project)
        analyze(ctx)
        whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        lazy = StatementPositions(module, ctx)
        for node in [n for n in iter_nodes(module) if n is not module]:
            assert lazy.get(node) == whole.get(node), (type(node).__name__, lazy.get(node), whole.get(node))
    assert reparser.reused >= 4


def test_the_line_a_message_cites_is_the_nodes_position():
    """``line_of`` (the "defined at line N" of messages) is the start line the findings use: the
    ``def`` line of a decorated function, the first line of a call that spans lines, the later of two
    spellings of the same text."""
    from torchlint.analysis.positions import line_of, positions_of

    src = (
        "import torch\n\n\n"
        "@torch.no_grad()\n"
        "# a comment\n"
        "def score(model, x):\n"
        "    y = model(x)\n"
        "    z = (1 +\n"
        "         model(x))\n"
        "    return y, z\n"
    )
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    function = module.body[1]
    calls = [n for n in iter_nodes(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "model"]
    assert line_of(ctx, function) == 6
    assert [line_of(ctx, c) for c in calls] == [7, 9]
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert all(line_of(ctx, c) == whole[c].start.line for c in calls)
    assert positions_of(ctx) is positions_of(ctx)  # one per file
    assert line_of(ctx, cst.Name("elsewhere")) is None
