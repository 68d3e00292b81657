"""The fix mechanism shared by every rule."""
import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.engine import analyze
from torchlint.fixes import apply_fixes
from torchlint.rule import Fix


def _ctx(src):
    module = cst.parse_module(src)
    ctx = FileContext("m.py", src, module)
    analyze(ctx)
    return module, ctx


def _find(module, kind, pred=lambda n: True):
    from torchlint.analysis.walk import iter_nodes

    return next(n for n in iter_nodes(module) if isinstance(n, kind) and pred(n))


def test_multiline_snippet_parses_in_parentheses():
    module, ctx = _ctx("y = (x\n     .mean())\n")
    call = _find(module, cst.Call)
    new = ctx.parse_expression(ctx.code(call).replace("mean()", "mean(0)"))
    assert new.lpar and isinstance(new, cst.Call)


def test_multiline_replacement_keeps_the_parentheses_of_the_replaced_expression():
    src = "y = (x\n     .mean())\n"
    module, ctx = _ctx(src)
    call = _find(module, cst.Call)
    new = call.with_changes(args=[cst.Arg(cst.Integer("0"))], lpar=[], rpar=[])
    code, applied = apply_fixes(module, ctx, [Fix("t").replace(call, new)])
    assert applied == 1
    assert code == "y = (x\n     .mean(0))\n"
    # a one-line replacement may drop parentheses the rule no longer needs
    code, _ = apply_fixes(module, ctx, [Fix("t").replace(call, cst.parse_expression("x.mean(0)"))])
    assert code == "y = x.mean(0)\n"


def test_overlapping_fixes_wait_for_the_next_round():
    src = "a = f(g(x))\n"
    module, ctx = _ctx(src)
    outer = _find(module, cst.Call, lambda n: isinstance(n.func, cst.Name) and n.func.value == "f")
    inner = _find(module, cst.Call, lambda n: isinstance(n.func, cst.Name) and n.func.value == "g")
    fixes = [Fix("outer").replace(outer, cst.parse_expression("F(g(x))")), Fix("inner").replace(inner, cst.parse_expression("x"))]
    code, applied = apply_fixes(module, ctx, fixes)
    assert (code, applied) == ("a = F(g(x))\n", 1)


def test_insert_before_and_replace_compose():
    src = "def f():\n    a = 1\n    b = 2\n"
    module, ctx = _ctx(src)
    stmt = _find(module, cst.SimpleStatementLine, lambda n: "b" in module.code_for_node(n))
    fix = Fix("t").insert_before(stmt, ctx.parse_statement("z = 0\n")).replace(stmt, ctx.parse_statement("b = 3\n"))
    code, _ = apply_fixes(module, ctx, [fix])
    assert code == "def f():\n    a = 1\n    z = 0\n    b = 3\n"
