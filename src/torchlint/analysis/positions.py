"""Where a node of a file is: source positions computed one statement at a time, for the findings'
locations and for the lines messages cite.

One answer for the whole analysis: :func:`positions_of` gives a file's :class:`StatementPositions`,
kept with its context, which the engine reads for every finding and the program model for "defined
at line N" in a message.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from torchlint.analysis.context import Fact, FileContext


class StatementPositions:
    """Source positions of nodes, computed one statement at a time and only for the statements asked
    about: libcst's position pass over a whole module costs about ten code generations of it, and a
    finding in a 2,000-line class needs the positions of one line.  ``get(node)`` is the ``CodeRange``
    libcst's ``PositionProvider`` gives (None for a node that is not in the module).

    The innermost statement of a block holding the node is generated once with position recording,
    starting at its line and at its block's indentation; the line of every statement comes from one
    plain code generation of the module, done at the first question."""

    def __init__(self, module: cst.Module, ctx: FileContext) -> None:
        self.module = module
        self.ctx = ctx
        self._resolved: Dict[int, Any] = {}  # id(statement) -> positions (a mapping with ``get``)
        self._top_lines: Optional[Dict[int, int]] = None  # id(top statement) -> lines before it
        self._lines: Dict[int, int] = {}  # id(statement) -> lines before it
        self._whole: Optional[Mapping[cst.CSTNode, Any]] = None
        # an editor's project keeps what a statement's code alone decides (the lines its statements
        # start on within it, the positions of its nodes relative to its first line) for as long as its
        # document's parses share the statement (``FileContext.of_code``)
        self._kept = ctx.keeps_code_facts

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        if self._whole is not None:
            return self._whole.get(node, default)
        stmt = self.ctx.statement_of(node)
        indents = self.ctx.block_indents(stmt) if stmt is not None else None
        if stmt is None or indents is None:
            return self._whole_module().get(node, default)
        found = self._resolved.get(id(stmt))
        if found is None:
            found = self._resolved[id(stmt)] = self._resolve(stmt, indents)
        return found.get(node, default)

    def _whole_module(self) -> Mapping[cst.CSTNode, Any]:
        if self._whole is None:
            self._whole = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole

    def _line_before(self, stmt: cst.CSTNode) -> Optional[int]:
        """How many lines of the file come before ``stmt``'s code (its leading blank and comment lines
        included); None for a statement that is not in the module."""
        if self._top_lines is None:
            m = self.module
            if not self._kept:
                # one plain generation of the module, noting where each statement (at any depth) starts
                for ident, rel in _layout(m, m)[1]:
                    self._lines[ident] = rel
            else:  # the same, one top-level statement at a time, kept with the statement
                line = sum(m.code_for_node(h).count("\n") for h in m.header)
                for top in m.body:
                    layout = self.ctx.of_code("layout", top, lambda t: _layout(t, m))
                    for ident, rel in layout[1]:
                        self._lines[ident] = line + rel
                    line += layout[0]
            self._top_lines = {id(top): self._lines[id(top)] for top in m.body if id(top) in self._lines}
        return self._lines.get(id(stmt))

    def _resolve(self, stmt: cst.CSTNode, indents: List[str]) -> Any:
        m = self.module
        if m.default_newline not in ("\n", "\r\n"):
            return self._whole_module()
        before = self._line_before(stmt)
        if before is None:
            return self._whole_module()
        if not self._kept:
            return self._generate(stmt, indents, before + 1)
        # (the blocks around a statement are those of its top-level statement, which the edit kept)
        relative = self.ctx.of_code("positions", stmt, lambda s: {
            id(node): pos for node, pos in self._generate(s, indents, 1).items()})
        return _Shifted(relative, before)

    def _generate(self, stmt: cst.CSTNode, indents: List[str], line: int) -> Mapping[cst.CSTNode, Any]:
        """The positions of ``stmt``'s nodes, its code generated from ``line`` on, inside ``indents``."""
        m = self.module
        provider = PositionProvider()
        state = PositionProvidingCodegenState(default_indent=m.default_indent, default_newline=m.default_newline,
                                              provider=provider, line=line)
        for indent in indents:
            state.increase_indent(indent)
        stmt._codegen(state)
        return provider._computed


class _Shifted:
    """Positions computed from line 1, read ``lines`` further down (``relative``: id(node) -> range)."""

    def __init__(self, relative: Mapping[int, Any], lines: int) -> None:
        self.relative = relative
        self.lines = lines

    def get(self, node: cst.CSTNode, default: Any = None) -> Any:
        pos = self.relative.get(id(node))
        if pos is None:
            return default
        return CodeRange(CodePosition(pos.start.line + self.lines, pos.start.column),
                         CodePosition(pos.end.line + self.lines, pos.end.column))


def _layout(node: cst.CSTNode, module: cst.Module) -> Tuple[int, List[Tuple[int, int]]]:
    """(the line breaks in ``node``'s code, [(id(statement), line breaks before its code)] for every
    statement of it at any depth) from one plain code generation of it."""
    finder = _StatementStarts(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(finder)
    tokens = finder.tokens
    starts: List[Tuple[int, int]] = []
    at, newlines = 0, 0
    for index, stmt in finder.starts:
        newlines += sum(t.count("\n") for t in tokens[at:index])
        at = index
        starts.append((id(stmt), newlines))
    return newlines + sum(t.count("\n") for t in tokens[at:]), starts


class _StatementStarts(CodegenState):
    """A plain code generation that notes, for each statement of a block, how many tokens came before it."""

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.starts: List[Tuple[int, cst.CSTNode]] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.starts.append((len(self.tokens), node))


def positions_of(ctx: FileContext) -> StatementPositions:
    """The positions of ``ctx``'s nodes (one :class:`StatementPositions` per file, made on first use)."""
    return _POSITIONS.of(ctx)


_POSITIONS: "Fact[StatementPositions]" = Fact("positions", lambda ctx: StatementPositions(ctx.module, ctx))


def line_of(ctx: FileContext, node: cst.CSTNode) -> Optional[int]:
    """The 1-based line ``node`` starts on (a function or class: its ``def``/``class`` line); None for a
    node that is not in ``ctx``'s module."""
    pos = positions_of(ctx).get(node)
    return pos.start.line if pos is not None else None


__all__ = ["StatementPositions", "line_of", "positions_of"]
