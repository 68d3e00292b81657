"""One value API: "what value does this name hold" is answered by the names layer
(``NameResolver.value_of``, ``sole_value``, ``values_before``, ``bound_values``, ``reaching_assignment``),
never again by a family module that picks one value out of the layer's lists."""
from __future__ import annotations

import ast
import pathlib
import textwrap
from typing import Dict, List, Set

import libcst as cst

from source_trees import tree_of
from torchlint.analysis.context import FileContext
from torchlint.engine import analyze

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAMILIES = ROOT / "src" / "torchlint" / "families"

#: the names layer's (and the program layer's) accessors that answer with every value or binding of a name
_LISTS = frozenset({"values_before", "bound_values", "values_at", "binding_at", "lookup", "built_values"})

#: family resolvers still allowed (none: every family asks the names layer)
KNOWN: frozenset = frozenset()


def _is_list_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in _LISTS and isinstance(func.value, ast.Attribute) and func.value.attr == "names"
    return isinstance(func, ast.Name) and func.id in _LISTS


def _tainted(node: ast.AST, lists: Set[str]) -> bool:
    """Whether ``node`` is (a copy or a filter of) a list of a name's values or bindings."""
    if _is_list_call(node):
        return True
    if isinstance(node, ast.Name):
        return node.id in lists
    if isinstance(node, ast.Attribute) and node.attr == "values":  # a binding's values
        return _tainted(node.value, lists)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):  # a filtered copy (not values made from them)
        return len(node.generators) == 1 and isinstance(node.elt, ast.Name) and isinstance(
            node.generators[0].target, ast.Name) and node.elt.id == node.generators[0].target.id and _tainted(
            node.generators[0].iter, lists)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "list", "tuple", "reversed", "sorted", "filter") and node.args:
        return _tainted(node.args[-1], lists)
    return False


def _picked(node: ast.AST, lists: Set[str], picks: Set[str]) -> bool:
    """Whether ``node`` is one value picked by position out of such a list (or a name bound to one)."""
    if isinstance(node, ast.IfExp):
        return _picked(node.body, lists, picks) or _picked(node.orelse, lists, picks)
    if isinstance(node, ast.Name):
        return node.id in picks
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            index = index.operand
        return isinstance(index, ast.Constant) and isinstance(index.value, int) and _tainted(node.value, lists)
    return False


def _resolvers(tree: ast.Module) -> List[str]:
    """The functions that return one value picked out of a name's values or bindings."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assigns = [(t.id, a.value) for a in ast.walk(function) if isinstance(a, ast.Assign)
                   for t in a.targets if isinstance(t, ast.Name)]
        lists: Set[str] = set()
        picks: Set[str] = set()
        grew = True
        while grew:
            grew = False
            for name, value in assigns:
                if name not in lists and _tainted(value, lists):
                    lists.add(name)
                    grew = True
                if name not in picks and _picked(value, lists, picks):
                    picks.add(name)
                    grew = True
        if any(isinstance(r, ast.Return) and r.value is not None and _picked(r.value, lists, picks)
               for r in ast.walk(function)):
            found.append(function.name)
    return found


def _scan(trees: Dict[str, ast.Module]) -> Set[str]:
    return {f"{path}: {name}" for path, tree in trees.items() for name in _resolvers(tree)}


def test_no_family_module_answers_what_a_name_holds_again():
    trees = {str(p.relative_to(FAMILIES)): tree_of(p) for p in sorted(FAMILIES.rglob("*.py"))}
    found = _scan(trees)
    assert found <= KNOWN, sorted(found - KNOWN)


def test_the_scan_finds_each_way_of_picking_one_value():
    """The resolvers the families kept before the names layer answered (each spelling), and near misses
    that read the values without picking one to hand on."""
    code = textwrap.dedent("""
        def last_before(ctx, name):                      # the last value before, by a filtered copy
            value = ctx.names.value_of(name)
            if value is not None:
                return value
            before = [v for v in ctx.names.values_before(name) if not ctx.is_inside(name, v)]
            return before[-1] if before else None

        def once(ctx, expr):                             # the only binding
            values = ctx.names.bound_values(expr)
            if len(values) == 1 and isinstance(values[0], Call):
                return values[0]
            return None

        def module_once(ctx, name):                      # through a binding's values
            b = ctx.names.binding_at(name, name.value)
            values = b.values
            return values[0]

        def attribute_once(self, it):                    # bound to a name first
            values = self.ctx.names.values_before(it)
            built = values[0]
            return built

        def every(ctx, name):                            # near miss: a verdict over every value
            values = ctx.names.values_before(name)
            return bool(values) and all(isinstance(v, Call) for v in values)

        def first_shape(ctx, name):                      # near miss: one value read, a fact returned
            bound = ctx.names.bound_values(name)
            value = bound[0]
            return shape(value)

        def through_api(ctx, name):                      # near miss: the names layer's own answer
            return ctx.names.sole_value(name)

        def picked_elsewhere(items):                     # near miss: a list that is no name's values
            return items[0]

        def one_shape(self, node):                       # near miss: a list made from the values
            vals = self.ctx.names.bound_values(node)
            shapes = [self.expr(v) for v in vals]
            return shapes[0]
    """)
    assert sorted(_resolvers(ast.parse(code))) == ["attribute_once", "last_before", "module_once", "once"]


# -- the API itself ------------------------------------------------------------------------------------
def _walked(code: str) -> FileContext:
    code = textwrap.dedent(code)
    ctx = FileContext("case.py", code, cst.parse_module(code))
    analyze(ctx)
    return ctx


def _reads(ctx: FileContext, name: str) -> List[cst.Name]:
    out: List[cst.Name] = []
    stack: List[cst.CSTNode] = [ctx.module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == name and not isinstance(ctx.parent(node), cst.AssignTarget) \
                and not isinstance(ctx.parent(node), cst.Param) and not isinstance(ctx.parent(node), cst.AugAssign):
            out.append(node)
        stack.extend(reversed(node.children))
    return out


def _code(ctx: FileContext, value) -> object:
    return None if value is None else ctx.code(value)


def test_value_of_through_updates_reads_past_an_augmented_assignment():
    ctx = _walked("""
        def f(x, reg):
            loss = model(x).sum()
            loss += reg
            return loss

        def g(x):
            loss = model(x).sum()
            return loss
    """)
    in_f, in_g = _reads(ctx, "loss")
    assert _code(ctx, ctx.names.value_of(in_f)) is None  # changed in place since
    assert _code(ctx, ctx.names.value_of(in_f, through_updates=True)) == "model(x).sum()"
    assert _code(ctx, ctx.names.value_of(in_g)) == _code(ctx, ctx.names.value_of(in_g, through_updates=True)) \
        == "model(x).sum()"


def test_value_of_through_updates_skips_every_value_the_read_is_part_of():
    ctx = _walked("""
        def f(t):
            x = t
            x = g(x := h(x))
    """)
    inner = _reads(ctx, "x")[-1]  # the `x` read by `h(x)`: inside both later values
    assert _code(ctx, ctx.names.value_of(inner)) is None
    assert _code(ctx, ctx.names.value_of(inner, through_updates=True)) == "t"


def test_sole_value_is_the_value_of_the_only_binding_before():
    ctx = _walked("""
        def once(data):
            loader = DataLoader(data)
            for x in loader:
                pass

        def twice(data, other):
            loader = DataLoader(data)
            loader = DataLoader(other)
            for x in loader:
                pass

        def param(loader):
            for x in loader:
                pass

        def reassigned_param(loader, data):
            loader = DataLoader(data)
            for x in loader:
                pass

        def later(data):
            for x in loader:
                pass
            loader = DataLoader(data)

        class M:
            def __init__(self, data):
                self.loader = DataLoader(data)

            def run(self):
                for x in self.loader:
                    pass
    """)
    reads = [n for n in _reads(ctx, "loader") if isinstance(ctx.parent(n), cst.For)]
    assert [_code(ctx, ctx.names.sole_value(n)) for n in reads] == [
        "DataLoader(data)",  # bound once
        None,                # bound twice
        None,                # a parameter: its value is unknown
        None,                # a parameter bound again
        None,                # bound only after the read
    ]
    attribute = [n for n in _preorder(ctx.module) if isinstance(n, cst.Attribute) and n.attr.value == "loader"][-1]
    assert _code(ctx, ctx.names.sole_value(attribute)) == "DataLoader(data)"
    assert ctx.names.sole_value(cst.Name("loader")) is None  # a node of no tree


def test_reaching_value_is_the_one_value_on_every_path():
    ctx = _walked("""
        import torch
        LR = 0.1
        SEEN = 0
        SEEN = 1

        def f(model, flag, x):
            opt = torch.optim.SGD(model.parameters(), lr=LR)
            opt.step()
            if flag:
                sched = make(opt)
            sched.step()
            a, b = x
            use(a, SEEN, torch, model)
            c = x
            c += 1
            use(c)
            use(lambda: LR)
    """)
    def held(name, k=0):
        return _code(ctx, ctx.names.reaching_value(_reads(ctx, name)[k]))

    assert held("opt") == "torch.optim.SGD(model.parameters(), lr=LR)"  # on every path
    assert held("LR") == "0.1"            # a module-level name read in a function, bound once there
    assert held("LR", 1) == "0.1"         # in a lambda too
    assert held("SEEN") is None           # bound twice in the module
    assert held("sched") is None          # bound on one path only
    assert held("a") is None              # an element of an unpacked tuple
    assert held("model") is None          # a parameter
    assert held("torch") is None          # an import
    assert held("c") is None              # changed in place since


def _preorder(root: cst.CSTNode) -> List[cst.CSTNode]:
    stack, out = [root], []
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def test_a_tuple_assigned_from_a_tuple_literal_binds_each_name_to_its_element():
    ctx = _walked("""
        def pair(opt):
            gen, disc = Gen(opt).eval(), Disc(opt)
            print(gen, disc)

        def swapped(a, b):
            a, b = b, a
            print(a, b)

        def from_call(opt):
            gen, disc = build(opt)
            print(gen, disc)

        def starred(xs):
            first, *rest = Gen(1), Disc(2), Disc(3)
            print(first, rest)

        def uneven(opt):
            gen, disc = [Gen(opt), Disc(opt), Gen(2)]
            print(gen, disc)
    """)
    # (the names of a tuple target are listed too: each function's read is the second of its two)
    gens, discs = _reads(ctx, "gen"), _reads(ctx, "disc")
    assert _code(ctx, ctx.names.sole_value(gens[1])) == "Gen(opt).eval()"
    assert _code(ctx, ctx.names.sole_value(discs[1])) == "Disc(opt)"
    assert ctx.names.is_param_at(gens[1]) is False
    # a swap reads what it rebinds; a call's elements, a starred target and lengths that differ are unknown
    assert ctx.names.values_at(_reads(ctx, "a")[-1]) == []
    assert ctx.names.sole_value(gens[3]) is None
    assert ctx.names.values_at(_reads(ctx, "first")[-1]) == []
    assert ctx.names.values_at(gens[5]) == []
