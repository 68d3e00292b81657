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


# -- the binding API after the walk: which assignment reaches a node ---------------------------------
def _walked(code):
    code = textwrap.dedent(code)
    module = cst.parse_module(code)
    ctx = FileContext("case.py", code, module)
    analyze(ctx)
    return ctx


def _reads(ctx, name):
    """The Name nodes reading ``name`` (not the assignment targets), in source order."""
    out = []
    for node in _preorder(ctx.module):
        if isinstance(node, cst.Name) and node.value == name:
            parent = ctx.parent(node)
            if not (isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Element)):
                out.append(node)
    return out


def _preorder(root):
    stack, out = [root], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _reaching(ctx, read, scope=None):
    found = ctx.names.reaching_assignment(read.value, read, scope)
    return None if found is None else (ctx.code(found[0].value), found[1])


def test_the_assignment_that_reaches_a_read_depends_on_where_the_read_is():
    ctx = _walked("""
        x = first()
        use(x)
        x = second()
        use(x)
        x = third(x)
        use(x)
    """)
    reads = _reads(ctx, "x")
    assert [_reaching(ctx, r) for r in reads] == [
        ("first()", None), ("second()", None), ("second()", None), ("third(x)", None)
    ]


def test_an_assignment_on_some_paths_only_reaches_nothing():
    ctx = _walked("""
        def f(c):
            y = base()
            if c:
                y = other()
            return y

        def g(c):
            if c:
                z = other()
                return z
            a, b = pair()
            return b
    """)
    f, g = ctx.module.body
    (read_y,) = _reads(ctx, "y")
    assert _reaching(ctx, read_y, f) is None  # `other()` runs on some paths only
    (read_z,) = _reads(ctx, "z")
    assert _reaching(ctx, read_z, g) == ("other()", None)  # read inside the same branch
    (read_b,) = _reads(ctx, "b")
    assert _reaching(ctx, read_b, g) == ("pair()", 1)


def test_an_assignment_in_the_other_arm_of_an_if_never_reaches_a_read():
    ctx = _walked("""
        def f(c):
            h = state()
            if c:
                h = h.view(-1)
            else:
                h = h.squeeze(0)
            return h

        def g(c, d):
            h = state()
            if c:
                h = first()
            elif d:
                h = second()
            else:
                use(h)
    """)
    f, g = ctx.module.body
    in_if, in_else, returned = _reads(ctx, "h")[:3]
    assert _reaching(ctx, in_if, f) == ("state()", None)
    assert _reaching(ctx, in_else, f) == ("state()", None)  # not `h.view(-1)`, which the `if` arm binds
    assert _reaching(ctx, returned, f) is None  # after the `if`: either arm's
    (used,) = [r for r in _reads(ctx, "h") if ctx.is_inside(r, g)]
    assert _reaching(ctx, used, g) == ("state()", None)  # neither the `if` nor the `elif` arm runs before it


def test_a_function_reads_its_own_assignments_not_a_nested_one():
    ctx = _walked("""
        def f():
            w = outer()
            def inner():
                w = nested()
                return w
            return w
    """)
    f = ctx.module.body[0]
    reads = _reads(ctx, "w")
    assert _reaching(ctx, reads[-1], f) == ("outer()", None)


# -- the value a name holds at a node: one answer, during the walk and after it -------------------
VALUES = """
import torch

def early(x):
    return helper(x)

def scaled(g, s):
    g = torch.exp(-g / s)
    g = g + (h := g * 2)
    return g, h

class M:
    def __init__(self):
        self.fc = make()

    def forward(self, x):
        y = self.fc(x)
        y += 1
        return y

def helper(t):
    e = torch.exp(t)
    e = e / e.sum()
    return e

total = 0

def bump():
    global total
    total = total + 1
    return total
"""


def _value_answers(ctx, nodes):
    out = []
    for n in nodes:
        held = ctx.names.value_of(n)
        bound = ctx.names.bound_values(n) if isinstance(n, cst.Name) else []
        out.append(([ctx.code(v) for v in ctx.names.values_before(n)], None if held is None else ctx.code(held),
                    [None if v is None else ctx.code(v) for v in bound]))
    return out


def _asked_about(module):
    return [n for n in _preorder(module) if isinstance(n, cst.Name) or (
        isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == "self")]


def test_the_value_of_a_name_does_not_depend_on_where_the_walk_is():
    """Rules ask during the walk, about the node they visit, its parts, and nodes further on (a function
    defined below its caller); the program model asks after it.  Each gets the same answer."""
    from torchlint.analysis.traversal import analyze as walk

    code = textwrap.dedent(VALUES)
    module = cst.parse_module(code)
    ctx = FileContext("case.py", code, module)
    nodes = _asked_about(module)
    during = []
    walk(ctx, lambda node: during.append(_value_answers(ctx, nodes)))
    after = _value_answers(ctx, nodes)
    assert len(during) > 100
    assert all(answers == after for answers in during)


def _value(ctx, name, index):
    node = [n for n in _preorder(ctx.module) if isinstance(n, cst.Name) and n.value == name][index]
    held = ctx.names.value_of(node)
    return [ctx.code(v) for v in ctx.names.values_before(node)], None if held is None else ctx.code(held)


def test_the_value_a_name_holds_is_the_one_assigned_before_it():
    ctx = _walked(VALUES)
    # g: the parameter, the target and the read of `g = torch.exp(-g / s)`, then of the next statement
    assert _value(ctx, "g", 0) == ([], None)  # the parameter: unknown
    assert _value(ctx, "g", 2) == ([], None)  # read by that value, before it is bound: the parameter
    assert _value(ctx, "g", 4) == (["torch.exp(-g / s)"], "torch.exp(-g / s)")  # (read by `g + ...`)
    assert _value(ctx, "g", 5) == (["torch.exp(-g / s)"], "torch.exp(-g / s)")
    assert _value(ctx, "g", 6) == (["torch.exp(-g / s)", "g + (h := g * 2)"], "g + (h := g * 2)")
    assert _value(ctx, "h", 1) == (["g * 2"], "g * 2")
    # changed in place since: its value is no longer the one assigned
    assert _value(ctx, "y", 2) == (["self.fc(x)"], None)
    # a name of a function defined after its caller; a global assigned in a function
    assert _value(ctx, "e", 4) == (["torch.exp(t)", "e / e.sum()"], "e / e.sum()")
    assert _value(ctx, "total", 3) == (["0"], "0")  # read by `total + 1`, before it is bound
    assert _value(ctx, "total", 4) == (["0", "total + 1"], "total + 1")


def test_a_value_bound_in_another_branch_of_an_if_is_not_the_one_held():
    """``if log: q = log_softmax(q)`` / ``else: q = exp(q) / ...``: the ``else`` branch reads the value
    bound before the ``if``; after the ``if`` the last one bound (either branch may have run)."""
    ctx = _walked("""
        def head(v, a, log):
            q = v + a
            if log:
                q = q.log_softmax(-1)
            elif v is None:
                q = q * 2
            else:
                q = q.exp() / q.exp().sum(-1, keepdim=True)
            return q
    """)
    assert _value(ctx, "q", 2)[1] == "v + a"  # read in the `if` branch
    assert _value(ctx, "q", 4)[1] == "v + a"  # in the `elif` branch: not the `if` branch's value
    assert _value(ctx, "q", 6)[1] == "v + a"  # in the `else` branch: neither other branch's
    assert _value(ctx, "q", 7)[1] == "v + a"
    assert _value(ctx, "q", 8)[1] == "q.exp() / q.exp().sum(-1, keepdim=True)"  # after the `if`


def test_values_before_another_node_and_of_an_attribute_of_self():
    ctx = _walked("""
        class M:
            def __init__(self):
                self.fc = first()

            def forward(self, x):
                use(self.fc)
                self.fc = second()
                return self.fc(x)
    """)
    reads = [n for n in _preorder(ctx.module) if isinstance(n, cst.Attribute) and n.attr.value == "fc"]
    assert [[ctx.code(v) for v in ctx.names.values_before(r)] for r in reads] == [
        ["first()"], ["first()"], ["first()", "second()"], ["first()", "second()"]
    ]
    x_param = ctx.module.body[0].body.body[1].params.params[1].name
    last = ctx.module.body[0].body.body[1].body.body[-1]
    assert ctx.names.values_before(cst.Name("fc"), at=last) == []  # no local of that name
    assert [ctx.code(v) for v in ctx.names.values_before(reads[0], at=last)] == ["first()", "second()"]
    assert ctx.names.values_before(x_param) == []
    assert ctx.names.bound_values(x_param) == [None]  # bound, value unknown
    assert ctx.names.bound_values(cst.Name("x"), at=ctx.module.body[0].body.body[0]) == []  # not in __init__


def test_after_the_walk_a_qualified_name_is_read_from_the_nodes_own_scope():
    ctx = _walked("""
        import model

        def evaluate(path):
            model = load(path)
            return model(1)

        def act(x):
            import torch.nn.functional as F
            return F.relu(x)

        def shadow(len):
            return len(3)

        n = len([1])
    """)
    calls = {ctx.code(c.func): c.func for c in ctx.calls_in(ctx.module)}
    names = ctx.names
    assert names.entered_all
    assert names.qualified_names(calls["model"]) == frozenset()  # the function's local, not the import
    assert names.qualified_names(calls["F.relu"]) == {"torch.nn.functional.relu"}  # imported in the function
    assert names.qualified_names(calls["len"]) == {"builtins.len"}  # the last call of `len` is the module's
    shadowed = next(c.func for c in ctx.calls_in(ctx.module) if ctx.code(c).strip() == "len(3)")
    assert names.qualified_names(shadowed) == frozenset()  # a parameter named like a builtin
    for func in calls.values():  # the answer is the same whichever question asks
        assert names.qualified_names(func) >= names.qualified_names_at(func)


def test_an_import_hidden_by_an_assignment_that_reaches_the_read():
    # `import model` then `model = model.mnist()`: later reads hold the model, not the module; an
    # assignment on some paths only (the fallback of a failed import) leaves the import where it was
    ctx = _walked("""
        import model
        import apex
        try:
            import amp_c
        except ImportError:
            amp_c = None

        model = model.mnist()
        if model.training:
            apex = None
        out = model(1)
        apex.amp.init()
        amp_c.scale(out)
    """)
    calls = {ctx.code(c).strip(): c for c in ctx.calls_in(ctx.module)}
    names = ctx.names
    hidden = calls["model(1)"].func
    assert names.qualified_names(hidden) == frozenset()
    assert names.holds_import(hidden) is False
    assert [ctx.code(v) for v in names.values_before(hidden)] == ["model.mnist()"]
    assert ctx.code(names.value_of(hidden)) == "model.mnist()"
    inner = calls["model.mnist()"].func
    assert names.qualified_names(inner) == {"model.mnist"}  # read before the assignment binds the name
    apex = calls["apex.amp.init()"].func
    assert names.qualified_names(apex) == {"apex.amp.init"} and names.holds_import(apex.value.value)
    amp_c = calls["amp_c.scale(out)"].func
    assert names.qualified_names(amp_c) == {"amp_c.scale"}


def test_an_import_hidden_by_an_assignment_before_a_conditional_one():
    # `import lm`, `lm = lm.Net()`, `if gpu: lm = lm.cuda()`, then a function reads `lm`: the last assignment
    # runs on some paths only, but the one before it ran on every path after the import: the module is gone
    ctx = _walked("""
        import sys
        import lm
        import tools

        gpu = len(sys.argv) > 1
        lm = lm.Net(8)
        if gpu:
            lm = lm.cuda()
        if gpu:
            tools = None

        def score(x):
            tools.log(x)
            return lm(x)
    """)
    calls = {ctx.code(c).strip(): c for c in ctx.calls_in(ctx.module)}
    names = ctx.names
    assert names.holds_import(calls["lm(x)"].func) is False
    assert names.holds_import(calls["tools.log(x)"].func.value) is True  # hidden on some paths only


def test_an_import_hidden_in_both_arms_of_an_if():
    ctx = _walked("""
        import sys
        import torch
        import lm
        import aux

        with open("lm.pt", "rb") as f:
            if len(sys.argv) > 1:
                lm = torch.load(f, map_location="cpu")
            else:
                lm = torch.load(f)
        if len(sys.argv) > 2:
            aux = None
        elif len(sys.argv) > 3:
            aux = 1

        def score(x):
            aux.log(x)
            return lm(x)
    """)
    calls = {ctx.code(c).strip(): c for c in ctx.calls_in(ctx.module)}
    names = ctx.names
    assert names.holds_import(calls["lm(x)"].func) is False
    assert names.holds_import(calls["aux.log(x)"].func.value) is True  # an `elif` leaves a path with the module


def test_a_module_level_alias_of_an_imported_name_holds_what_it_names():
    # `Norm = nn.BatchNorm2d`: `Norm(8)` builds a batch-norm layer, during the walk and after it; an alias
    # bound in both arms of an `if` holds either class; a name bound any other way too (a loop, a call, a
    # `def`) is left to its values
    ctx = _walked("""
        import torch
        import torch.nn as nn

        Norm = nn.BatchNorm2d
        if torch.cuda.is_available():
            Norm = nn.SyncBatchNorm
        Layer = nn.Linear
        for Layer in (nn.Linear, nn.Conv1d):
            pass
        Act = nn.ReLU
        Act = make_act()
        Deep = Norm
        functional = torch.nn.functional

        def build():
            return Norm(8), Layer(3, 3), Act(), Deep(4), functional.relu

        def shadow(Norm):
            return Norm(8)
    """)
    names = ctx.names
    build = ctx.module.body[-2]
    calls = {ctx.code(c.func): c.func for c in ctx.calls_in(build)}
    assert names.qualified_names(calls["Norm"]) == {"torch.nn.BatchNorm2d", "torch.nn.SyncBatchNorm"}
    assert names.qualified_names(calls["Deep"]) == {"torch.nn.BatchNorm2d", "torch.nn.SyncBatchNorm"}
    assert names.qualified_names(calls["Layer"]) == frozenset()
    assert names.qualified_names(calls["Act"]) == frozenset()
    ret = build.body.body[0].body[0].value
    assert names.qualified_names(ret.elements[-1].value) == {"torch.nn.functional.relu"}
    inner = next(c.func for c in ctx.calls_in(ctx.module.body[-1]))
    assert names.qualified_names(inner) == frozenset()  # the parameter, not the alias


def test_an_alias_rebound_by_an_assignment_expression_is_no_alias():
    # `Norm = nn.BatchNorm2d`, then `(Norm := make_norm())` in a module-level expression: the name holds
    # either, so it is no alias of the class; without any `:=` in the file the alias stands
    rebound = _walked("""
        import torch.nn as nn

        Norm = nn.BatchNorm2d
        print(len([Norm := make_norm()]))

        def build():
            return Norm(8)
    """)
    kept = _walked("""
        import torch.nn as nn

        Norm = nn.BatchNorm2d
        print(len([make_norm()]))

        def build():
            return Norm(8)
    """)
    for ctx, expected in ((rebound, frozenset()), (kept, {"torch.nn.BatchNorm2d"})):
        call = next(c for c in ctx.calls_in(ctx.module.body[-1]))
        assert ctx.names.qualified_names(call.func) == expected


def test_a_read_sees_the_parameter_until_another_binding_runs_before_it():
    # `y = y.squeeze()` reads the parameter (its assignment binds after the value is computed); a read
    # after it, or after a loop that binds the name, does not; a local that is no parameter never does
    ctx = _walked("""
        def f(y, z):
            y = y.squeeze()
            w = y + 1
            for z in range(3):
                pass
            return z, w
    """)
    function = ctx.module.body[0]
    reads = [n for n in _preorder(function.body) if isinstance(n, cst.Name) and n.value in ("y", "z", "w")]
    by_line = [(ctx.code(ctx.statement_of(n)).strip().split("\\n")[0], n.value, ctx.names.reads_parameter(n))
               for n in reads if ctx.names.binding_at(n, n.value) is not None]
    assert ("y = y.squeeze()", "y", True) in by_line  # the read on the right-hand side
    rhs = function.body.body[0].body[0].value.func.value
    assert isinstance(rhs, cst.Name) and ctx.names.reads_parameter(rhs)
    assert ("w = y + 1", "y", False) in by_line
    assert ("return z, w", "z", False) in by_line
    assert ("return z, w", "w", False) in by_line


def test_the_construction_a_name_holds_is_the_one_that_may_still_reach_the_read():
    ctx = _walked("""
        import torch.nn as nn
        flag = 1
        if flag:
            loss_f = nn.CrossEntropyLoss()
            print(loss_f(a, b))
        if flag:
            loss_f = nn.BCELoss()
            print(loss_f(p, q))
        print(loss_f(p, q))
        net = nn.Linear(2, 2)
        net = net.to("cuda")
        print(net(x))
    """)
    first, second, after = [r for r in _reads(ctx, "loss_f") if isinstance(ctx.parent(r), cst.Call)]
    assert ctx.names.instance_of(first) == {"torch.nn.CrossEntropyLoss"}
    # bound again at the top of the block that reads it: the earlier construction cannot reach the read
    assert ctx.names.instance_of(second) == {"torch.nn.BCELoss"}
    # after both `if`s either may be held
    assert ctx.names.instance_of(after) == {"torch.nn.CrossEntropyLoss", "torch.nn.BCELoss"}
    # a rebinding that reads the name (a move) keeps what it held
    called = [r for r in _reads(ctx, "net") if isinstance(ctx.parent(r), cst.Call) and ctx.parent(r).func is r]
    assert "torch.nn.Linear" in ctx.names.instance_of(called[0])


def test_a_library_star_import_that_re_exports_torch_binds_its_modules():
    ctx = _walked("""
        from torch_snippets import *
        with torch.no_grad():
            y = nn.functional.relu(x)
        z = F.softmax(y, dim=1)
    """)
    torch_read = _reads(ctx, "torch")[0]
    assert ctx.names.qualified_names(torch_read) == {"torch"}
    assert ctx.names.qualified_names(_reads(ctx, "F")[0]) == {"torch.nn.functional"}
    other = _walked("""
        from somewhere_else import *
        print(torch)
    """)
    assert ctx.names.imports_torch and not other.names.qualified_names(_reads(other, "torch")[0])


def test_what_an_assignment_target_binds():
    from torchlint.analysis.walk import target_names
    targets = {
        "a = 1": ["a"],
        "a, (b, *c) = v": ["a", "b", "c"],
        "p.requires_grad = True": [],
        "x[i] = 0": [],
        "[d, e.f] = v": ["d"],
    }
    for code, names in targets.items():
        stmt = cst.parse_statement(code + "\n")
        target = stmt.body[0].targets[0].target
        assert [n.value for n in target_names(target)] == names, code
