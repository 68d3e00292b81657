"""The edits rules build their fixes from.

Every function keeps what the user wrote around the edit: a call's argument layout (one per line,
trailing comma), the comments above a statement, the file's import block.  Functions that take a
:class:`~torchlint.rule.Fix` add their edits to it and return what the caller needs to spell the
result; they return None when the edit cannot be made safely (the caller then offers no fix).

- :func:`add_argument` / :func:`remove_argument` -- a call with one more / one less argument
- :func:`insert_statement` -- a statement before or after another one, at its indentation
- :func:`add_decorator` -- a decorator directly above a ``def`` (below the others)
- :func:`import_name` / :func:`import_module` -- how to spell ``module.name`` here, adding one import
  with the file's imports when nothing in the file reaches it yet (never a second one)
- :func:`wrap_statements` -- statements of one block moved into ``with ...:`` (or any header)
- :func:`as_operand` / :func:`in_place_of` -- an expression in parentheses where, put as a receiver or
  an operand, it would otherwise bind differently (``(a * k).view(-1)``)
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.analysis.context import FileContext, module_ref
from torchlint.rule import Fix

ArgValue = Union[str, cst.BaseExpression]


# -- call arguments -------------------------------------------------------------------------------------------------
def add_argument(ctx: "FileContext", call: cst.Call, value: ArgValue, keyword: Optional[str] = None) -> cst.Call:
    """``call`` with an argument appended (``keyword=value`` when ``keyword`` is given).

    The new argument takes the place of the last one in the layout: a call written one argument per
    line with a trailing comma stays that way; ``f(x)`` becomes ``f(x, value)``.
    """
    expr = ctx.parse_expression(value) if isinstance(value, str) else value
    new = cst.Arg(value=expr)
    if keyword is not None:
        no_space = cst.SimpleWhitespace("")
        new = new.with_changes(
            keyword=cst.Name(keyword), equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
        )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    spacing = _spacing_between(args)
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=spacing), whitespace_after_arg=cst.SimpleWhitespace(""))
    args.append(new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def _spacing_between(args: Sequence[cst.Arg]) -> cst.BaseParenthesizableWhitespace:
    """The whitespace after the commas between arguments (one space, or the line layout in use)."""
    for a in args[:-1]:
        if isinstance(a.comma, cst.Comma):
            return a.comma.whitespace_after
    last = args[-1]
    if isinstance(last.comma, cst.Comma) and isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
        return last.comma.whitespace_after
    return cst.SimpleWhitespace(" ")


def remove_argument(call: cst.Call, target: cst.Arg) -> cst.Call:
    """``call`` without the argument ``target`` (a node of ``call.args``); the layout of the others is
    kept: removing the last argument moves its trailing comma (or its absence) to the one before."""
    args = list(call.args)
    index = next((i for i, a in enumerate(args) if a is target), None)
    if index is None:
        raise ValueError("the argument is not one of the call's arguments")
    removed = args.pop(index)
    if args and index == len(args):
        prev = args[-1]
        args[-1] = prev.with_changes(comma=removed.comma, whitespace_after_arg=removed.whitespace_after_arg)
    return call.with_changes(args=args)


# -- statements -----------------------------------------------------------------------------------------------------
def _statement(ctx: "FileContext", stmt: Union[str, cst.BaseStatement]) -> cst.BaseStatement:
    if isinstance(stmt, str):
        return ctx.parse_statement(stmt if stmt.endswith("\n") else stmt + "\n")
    return stmt


def insert_statement(
    ctx: "FileContext", fix: Fix, anchor: cst.CSTNode, stmt: Union[str, cst.BaseStatement], *, after: bool = False
) -> Fix:
    """Insert ``stmt`` (code or a node) before (or after) the statement ``anchor``, at its indentation.
    Blank lines and comments above ``anchor`` end up above the inserted statement, so a comment keeps
    introducing the code it was written for."""
    new = _statement(ctx, stmt)
    if after:
        return fix.insert_after(anchor, new)
    lines = getattr(anchor, "leading_lines", None)
    if lines:
        # the blank lines and comments above `anchor` now sit above the new statement
        current = fix.edits.get(anchor, anchor)
        if isinstance(current, cst.CSTNode):
            fix.replace(anchor, current.with_changes(leading_lines=[]))
        new = new.with_changes(leading_lines=list(lines) + list(getattr(new, "leading_lines", ())))
    return fix.insert_before(anchor, new)


def add_decorator(ctx: "FileContext", fix: Fix, func: cst.FunctionDef, decorator: str) -> Fix:
    """Add ``@decorator`` to ``func``, directly above the ``def`` (below existing decorators, so it
    wraps the function itself); comments above the function stay where they are."""
    current = fix.edits.get(func, func)
    if not isinstance(current, cst.FunctionDef):
        raise ValueError("the function is already replaced in this fix")
    node = cst.Decorator(decorator=ctx.parse_expression(decorator))
    return fix.replace(func, current.with_changes(decorators=list(current.decorators) + [node]))


def wrap_statements(ctx: "FileContext", fix: Fix, stmts: Sequence[cst.BaseStatement], header: str) -> Fix:
    """Move ``stmts`` (consecutive statements of one block) into a compound statement whose first line
    is ``header`` (``"with torch.no_grad():"``).  Comments and blank lines above the first statement
    stay above the new header; the others move with their statements."""
    if not stmts:
        raise ValueError("nothing to wrap")
    first = stmts[0]
    leading = list(getattr(first, "leading_lines", ()))
    body = [first.with_changes(leading_lines=[])] + list(stmts[1:])
    text = header.rstrip()
    if not text.endswith(":"):
        text += ":"
    shell = ctx.parse_statement(text + "\n    pass\n")
    if not isinstance(shell, cst.BaseCompoundStatement):
        raise ValueError(f"not a compound statement header: {header!r}")
    wrapped = shell.with_changes(body=cst.IndentedBlock(body=body), leading_lines=leading)  # type: ignore[call-arg]
    fix.replace(first, wrapped)
    for s in stmts[1:]:
        fix.remove(s)
    return fix


# -- imports --------------------------------------------------------------------------------------------------------


def _word_used(ctx: "FileContext", word: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(word) + r"\b", ctx.source) is not None


def import_anchor(ctx: "FileContext") -> Tuple[Optional[cst.CSTNode], bool]:
    """Where a new import goes: (statement, after?) -- after the leading docstring / ``__future__`` /
    import block, else before the first statement."""
    body = ctx.module.body
    anchor = None
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            anchor = stmt
            continue
        if (
            i == 0
            and isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            anchor = stmt
            continue
        break
    if anchor is not None:
        return anchor, True
    return (body[0] if body else None), False


def _pending(fix: Fix) -> Dict[Tuple[str, Optional[str]], str]:
    """The imports ``fix`` adds (:attr:`Fix.imports`)."""
    return fix.imports


def _add_import(ctx: "FileContext", fix: Fix, line: str, near: Optional[cst.CSTNode]) -> bool:
    anchor, after = import_anchor(ctx)
    if anchor is None:
        return False
    if near is not None and (near is anchor or ctx.is_inside(near, anchor)):
        return False
    stmt = ctx.parse_statement(line + "\n")
    if after:
        fix.insert_after(anchor, stmt)
    else:
        insert_statement(ctx, fix, anchor, stmt)
    return True


def _module_spelling(ctx: "FileContext", module: str) -> Optional[str]:
    return module_ref(ctx, module)


def import_module(ctx: "FileContext", fix: Fix, module: str, near: Optional[cst.CSTNode] = None) -> Optional[str]:
    """How to spell ``module`` at the current position of the walk (``F`` for ``torch.nn.functional``
    under ``import torch.nn.functional as F``); adds ``import module`` to ``fix`` when nothing reaches it.
    None when the module's top-level name is taken by something else in the file."""
    memo = _pending(fix)
    if (module, None) in memo:
        return memo[(module, None)]
    spelled = _module_spelling(ctx, module)
    if spelled is not None:
        return spelled
    top = module.split(".")[0]
    binding = ctx.names.lookup(top)
    if binding is not None and not binding.imports:
        return None  # `top` names something else here
    if binding is None and _word_used(ctx, top):
        return None
    if not _add_import(ctx, fix, f"import {module}", near):
        return None
    memo[(module, None)] = module
    return module


def import_name(
    ctx: "FileContext", fix: Fix, module: str, name: str, near: Optional[cst.CSTNode] = None
) -> Optional[str]:
    """How to spell ``module.name`` at the current position of the walk.

    Reuses what the file has: ``from module import name [as alias]`` gives the name or alias; an import
    of the module gives ``alias.name``.  Otherwise one import is added with the file's imports:
    ``from module import name`` (merged into an existing ``from module import ...`` line) when ``name``
    is not used for anything else in the file, else ``import module``.  Calling it again for the same
    fix reuses the import it added.  None when no spelling is safe.
    """
    memo = _pending(fix)
    key = (module, name)
    if key in memo:
        return memo[key]
    full = f"{module}.{name}"
    binding = ctx.names.lookup(name)
    if binding is not None and binding.imports == [full] and not binding.assigned:
        return name
    for local, b in _module_bindings(ctx):
        if b.imports == [full] and not b.assigned and ctx.names.lookup(local) is b:
            return local
    spelled = _module_spelling(ctx, module)
    if spelled is not None:
        return f"{spelled}.{name}"
    if binding is None and not _word_used(ctx, name) and name not in ctx.functions():
        merged = _merge_from_import(ctx, fix, module, name)
        if merged or _add_import(ctx, fix, f"from {module} import {name}", near):
            memo[key] = name
            return name
        return None
    spelled = import_module(ctx, fix, module, near)
    if spelled is None:
        return None
    memo[key] = f"{spelled}.{name}"
    return memo[key]


def _module_bindings(ctx: "FileContext") -> List[Tuple[str, object]]:
    scope = ctx.names.module_scope
    return list(scope.bindings.items()) if scope is not None else []


def _merge_from_import(ctx: "FileContext", fix: Fix, module: str, name: str) -> bool:
    """Add ``name`` to a top-level ``from module import a, b`` line (not a star import)."""
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        imp = stmt.body[0]
        if not isinstance(imp, cst.ImportFrom) or imp.relative or imp.module is None:
            continue
        if isinstance(imp.names, cst.ImportStar) or ctx.code(imp.module).strip() != module:
            continue
        if stmt in fix.edits:
            return False
        names = list(imp.names)
        last = names[-1]
        names[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        names.append(cst.ImportAlias(name=cst.Name(name), comma=last.comma))
        fix.replace(stmt, stmt.with_changes(body=[imp.with_changes(names=names)]))
        return True
    return False


#: expressions that stay one operand wherever they are put (a receiver, an operand, an argument); a
#: number is not one as a receiver (``1.real`` does not parse), an implicitly joined string neither
_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.List, cst.Dict, cst.Set)
#: where an expression stands whole in place of another, so it needs no parentheses
_OPEN_PLACES = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr, cst.Element,
                cst.DictElement, cst.Index)


def as_operand(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` as it must be written to become a receiver or an operand: in parentheses unless it is
    atomic or already parenthesized."""
    if isinstance(expr, _ATOMIC) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def in_place_of(ctx: "FileContext", old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """``new`` as it must be written where ``old`` is: whole where ``old`` stands alone (an argument, an
    assigned or returned value, an element), else as an operand (``Variable(a * k).view(-1)`` ->
    ``(a * k).view(-1)``)."""
    return new if isinstance(ctx.parent(old), _OPEN_PLACES) else as_operand(new)
