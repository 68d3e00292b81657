"""Applying fixes: node-identity edits on one tree, and writing files back atomically.

The engine re-lints after each round of fixes until nothing applicable is left; this module applies
one round (fixes whose edits overlap an earlier fix wait for the next round) and writes the result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.rule import Fix


@dataclass(frozen=True)
class Edit:
    """One text edit: replace the span [line:col, end_line:end_col) (1-based) by ``content``."""

    content: str
    line: int
    col: int
    end_line: int
    end_col: int


# -- applying fixes to a tree ---------------------------------------------------------------------------------------
_EMPTY = cst.Module(body=[])


class _Applier(cst.CSTTransformer):
    def __init__(self, edits: Mapping[cst.CSTNode, Any]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        new = self.edits.get(original_node)
        if new is None:
            return updated_node
        # An expression's parentheses belong to its node.  A rule may drop them on purpose, but a
        # replacement that spans lines keeps the original's: they are what made the breaks legal.
        lpar = getattr(original_node, "lpar", None)
        if lpar and isinstance(new, cst.CSTNode) and hasattr(new, "lpar") and not new.lpar:
            if "\n" in _EMPTY.code_for_node(new):
                new = new.with_changes(lpar=lpar, rpar=original_node.rpar)
        return new


def apply_fixes(module: cst.Module, ctx: FileContext, fixes: Sequence[Fix]) -> Tuple[str, int]:
    """Apply every fix whose edits do not overlap an earlier one; returns (new source, count)."""
    claimed: set = set()
    claimed_ancestors: set = set()
    edits: Dict[cst.CSTNode, Any] = {}
    applied = 0
    for fix in fixes:
        nodes = list(fix.edits)
        conflict = False
        for n in nodes:
            if n in claimed or n in claimed_ancestors or any(a in claimed for a in ctx.ancestors(n)):
                conflict = True
                break
        if conflict:
            continue
        for n in nodes:
            claimed.add(n)
            claimed_ancestors.update(ctx.ancestors(n))
        edits.update(fix.edits)
        applied += 1
    if not edits:
        return module.code, 0
    new_module = module.visit(_Applier(edits))
    return new_module.code, applied


def fix_edits(module: cst.Module, fix: Fix) -> Tuple[Edit, ...]:
    """The fix as one text edit (the smallest span that changes), for machine-readable output."""
    before = module.code
    after = module.visit(_Applier(fix.edits)).code
    if before == after:
        return ()
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_b, end_a = len(before), len(after)
    while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
        end_b -= 1
        end_a -= 1
    sl, sc = _line_col(before, start)
    el, ec = _line_col(before, end_b)
    return (Edit(after[start:end_a], sl, sc, el, ec),)


def _line_col(text: str, offset: int) -> Tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    last = text.rfind("\n", 0, offset)
    return line, offset - last


from torchlint.atomic import FileChangedError, write_atomic  # noqa: E402,F401  (the write path lives there)
