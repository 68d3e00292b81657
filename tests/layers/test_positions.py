"""Positions computed one top-level statement at a time equal libcst's whole-module positions."""
import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.analysis.context import FileContext
from torchlint.analysis.walk import iter_nodes
from torchlint.engine import StatementPositions, analyze

SOURCES = [
    "#!/usr/bin/env python\n# header comment\n\nimport torch\n\n\n@decorate(\n    1,\n)\n\n@other\ndef f(x):\n"
    "    '''doc\n    string'''\n    return g(x,\n             2)\n\n\nclass A:\n    # comment\n    def h(self):\n"
    "        return 1\n\n\nx = 1; y = 2\nif x:\n    pass\nelse:\n    y = (\n        3\n    )\n",
    "import torch\r\n\r\ndef f(x):\r\n    return x.squeeze()\r\n\r\nz = f(torch.ones(1))\r\n",
    "def f(x):\n    return x\nz = f(1)",  # no final newline
    "",
    "# only a comment\n",
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
