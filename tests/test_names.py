"""The import-alias resolver answers like libcst's QualifiedNameProvider on the names rules ask about."""
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, QualifiedNameSource

from torchlint.analysis.context import FileContext
from torchlint.engine import analyze

SNIPPETS = [
    """
    import torch
    import torch.nn.functional as F
    from torch.nn.functional import softmax as sm, cross_entropy
    from torch import nn
    from torch.nn import CrossEntropyLoss as CE

    def f(x, y):
        a = F.softmax(x, dim=1)
        b = torch.nn.functional.softmax(x, dim=1)
        c = sm(x, 1)
        d = nn.functional.log_softmax(x, 1)
        e = CE()(a, y)
        return cross_entropy(a, y) + torch.softmax(b, 0).sum() + len(y)
    """,
    """
    import torch.nn.functional as F

    def shadow(F, x):
        return F.softmax(x)

    def local(x):
        F = make()
        return F.softmax(x)

    def outer(x):
        return F.softmax(x)
    """,
    """
    def late(x):
        return F.relu(x)

    import torch.nn.functional as F
    """,
    """
    import numpy as np
    import math
    from scipy.special import softmax

    def g(x):
        return np.exp(x) + math.log(2.0) + softmax(x) + max(x, 1)
    """,
    """
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            import torch.nn.functional as G
            return G.dropout(torch.relu(x), 0.5)
    """,
    """
    try:
        import torch.nn.functional as F
    except ImportError:
        F = None

    def h(x):
        return F.gelu(x)
    """,
]


def _ours(module):
    ctx = FileContext("m.py", module.code, module)
    seen = {}

    def on_visit(node):
        if isinstance(node, cst.Call):
            # `CE()(x, y)`: libcst names the callee's value by its constructor; rules ask instance_of
            if isinstance(node.func, cst.Call):
                seen[node] = ctx.names.instance_of(node.func)
            else:
                seen[node] = ctx.names.qualified_names(node.func)

    analyze(ctx, on_visit)
    return seen


def _theirs(module):
    out = {}

    class V(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (QualifiedNameProvider,)

        def visit_Call(self, node):
            names = self.get_metadata(QualifiedNameProvider, node.func, set())
            out[node] = frozenset(
                q.name for q in names if q.source in (QualifiedNameSource.IMPORT, QualifiedNameSource.BUILTIN)
            )

    MetadataWrapper(module, unsafe_skip_copy=True).visit(V())
    return out


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_same_answers_as_qualified_name_provider(snippet):
    module = cst.parse_module(textwrap.dedent(snippet))
    ours = _ours(module)
    theirs = _theirs(module)
    assert set(ours) == set(theirs)
    for node, expected in theirs.items():
        code = module.code_for_node(node.func)
        base = node.func
        while isinstance(base, cst.Attribute):
            base = base.value
        if isinstance(base, cst.Call) and base is not node.func:
            # libcst composes `torch.softmax(x).sum` into "torch.softmax.sum"; a method of a call's
            # result is a method of the value, so the resolver deliberately gives no name there
            assert ours[node] == frozenset()
            continue
        assert ours[node] == expected, f"{code}: {sorted(ours[node])} != {sorted(expected)}"


def test_resolution_is_deterministic_when_ambiguous():
    src = textwrap.dedent(
        """
        import torch.nn.functional as F
        if cond:
            import mylib.functional as F

        def f(x):
            return F.softmax(x)
        """
    )
    module = cst.parse_module(src)
    ours = [v for v in _ours(module).values() if v]
    assert ours == [frozenset({"torch.nn.functional.softmax", "mylib.functional.softmax"})]
