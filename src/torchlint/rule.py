"""The base class every rule in ``torchlint.rules`` derives from.

A rule is a small visitor: it defines ``visit_<Node>`` / ``leave_<Node>`` methods for the libcst node
types it cares about, and calls :meth:`LintRule.report` when it finds the pattern.  The engine runs all
enabled rules in one traversal of the file, so a rule never walks the tree on its own; what rules share
(name resolution, scopes, loops, parents) lives in :mod:`torchlint.analysis` and is reached through
``self.ctx``.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.options import Option  # rules declare their options with it

SAFE = "safe"
UNSAFE = "unsafe"

Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


@dataclass(frozen=True)
class Valid:
    """Code the rule must stay silent on."""

    code: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must report.

    ``fixed`` is the whole file after the rule's fix (unsafe fixes included), or None when the rule
    offers no fix for this case.  ``line``/``col`` (1-based) pin the first report when given.
    """

    code: str
    fixed: Optional[str] = None
    line: Optional[int] = None
    col: Optional[int] = None
    message: Optional[str] = None
    count: int = 1
    unsafe: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)


class Fix:
    """A set of edits keyed by node identity, applied together or not at all."""

    def __init__(self, title: str, applicability: str = SAFE) -> None:
        self.title = title
        self.applicability = applicability
        self.edits: Dict[cst.CSTNode, Replacement] = {}
        #: the imports this fix adds, keyed by (module, name): the name each is spelled with in the file
        self.imports: Dict[Tuple[str, Optional[str]], str] = {}

    def replace(self, old: cst.CSTNode, new: Replacement) -> "Fix":
        prior = self.edits.get(old)
        if isinstance(prior, cst.FlattenSentinel) and isinstance(new, cst.CSTNode):
            # keep statements inserted before `old` earlier in this fix
            nodes = list(prior.nodes)
            nodes[-1] = new
            new = cst.FlattenSentinel(nodes)
        self.edits[old] = new
        return self

    def insert_before(self, stmt: cst.CSTNode, *new: cst.CSTNode) -> "Fix":
        current = self.edits.get(stmt, stmt)
        if isinstance(current, cst.FlattenSentinel):
            nodes = list(new) + list(current.nodes)
        elif isinstance(current, cst.RemovalSentinel):
            nodes = list(new)
        else:
            nodes = list(new) + [current]
        self.edits[stmt] = cst.FlattenSentinel(nodes)
        return self

    def insert_after(self, stmt: cst.CSTNode, *new: cst.CSTNode) -> "Fix":
        current = self.edits.get(stmt, stmt)
        if isinstance(current, cst.FlattenSentinel):
            nodes = list(current.nodes) + list(new)
        elif isinstance(current, cst.RemovalSentinel):
            nodes = list(new)
        else:
            nodes = [current] + list(new)
        self.edits[stmt] = cst.FlattenSentinel(nodes)
        return self

    def remove(self, stmt: cst.CSTNode) -> "Fix":
        self.edits[stmt] = cst.RemovalSentinel.REMOVE
        return self

    @property
    def is_unsafe(self) -> bool:
        return self.applicability == UNSAFE


@dataclass
class Report:
    """What a rule reported: resolved to positions by the engine after the traversal."""

    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[Fix]  # before the engine's precedence step: possibly a function that builds it
    #: other nodes that are part of the same mistake (the log call inside a hand-written loss): a
    #: finding of a lower-ranked rule on one of them is left to this one (see ``torchlint.precedence``)
    covers: Tuple[cst.CSTNode, ...] = ()


class LintRule:
    """Base class of a rule.  Subclasses set the class attributes below and define visitors."""

    CODE: ClassVar[str] = ""
    NAME: ClassVar[str] = ""
    MESSAGE: ClassVar[str] = ""
    #: Short imperative description of the fix ("Insert `optimizer.zero_grad()`"); None: no fix.
    FIX_TITLE: ClassVar[Optional[str]] = None
    #: "safe" or "unsafe": the default applicability of this rule's fixes.
    FIX_SAFETY: ClassVar[str] = SAFE
    #: The file is skipped without parsing when it contains none of these words (for every enabled rule).
    TRIGGERS: ClassVar[Tuple[str, ...]] = ()
    #: For a rule that follows values across files: it also runs on a file that spells none of its
    #: TRIGGERS but imports a project module that spells one of these (the loss built there, used here).
    IMPORT_TRIGGERS: ClassVar[Tuple[str, ...]] = ()
    DEFAULT_ENABLED: ClassVar[bool] = True
    #: The walkers of the family facts this rule reads (classes taking the file's context, with
    #: ``visit_<Type>`` methods): the engine runs each once per file, in the walk and before the rules'
    #: visitors, whichever rules need it.  A rule only reads facts; it never records them.
    BINDERS: ClassVar[Tuple[type, ...]] = ()
    OPTIONS: ClassVar[Dict[str, Option]] = {}
    VALID: ClassVar[Sequence[Union[Valid, str]]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()

    def __init__(self, ctx: FileContext, options: Optional[Mapping[str, Any]] = None) -> None:
        self.ctx = ctx
        self.options: Dict[str, Any] = {k: o.default for k, o in self.OPTIONS.items()}
        if options:
            self.options.update({k: v for k, v in options.items() if k in self.OPTIONS})
        self.reports: List[Report] = []

    # -- reporting -----------------------------------------------------------------------------
    def report(self, node: cst.CSTNode, message: Optional[str] = None, *,
               fix: Union[Fix, Callable[[], Optional[Fix]], None] = None, covers: Sequence[cst.CSTNode] = ()) -> None:
        """Report ``node``; ``covers``: other nodes of the same mistake (the log call of a hand-written
        loss reported at the loss), so that a finding another rule makes on them is left to this one
        where the precedence table ranks this rule first.  ``fix`` may be a function that builds the fix:
        it is called after the walk, only when the finding is kept (not left to a higher-ranked rule)."""
        self.reports.append(Report(self.CODE, node, message or self.MESSAGE, fix, tuple(covers)))

    def spelling(self, node: cst.CSTNode, limit: int = 50) -> str:
        """How the source spells ``node``, on one line, for a message to quote: a call longer than
        ``limit`` as ``func(...)``, anything else longer cut with ``...`` (whitespace is folded, so the
        quote is found in the source by its characters); comments are left out: they are not what it spells."""
        text = self.ctx.bare_code(node)
        above = getattr(node, "leading_lines", ()) if isinstance(node, cst.BaseStatement) else ()
        if above:  # a statement's code starts with the comment and blank lines above it: not what it spells
            text = text.split("\n", len(above))[-1]
        code = " ".join(text.replace("`", "'").split())
        if len(code) > limit and isinstance(node, cst.Call):
            func = " ".join(self.ctx.bare_code(node.func).split())
            inner = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star else None
            room = limit - len(func) - 2
            if inner is not None and room >= 12:
                first = self.spelling(inner, room - (5 if len(node.args) > 1 else 0))
                code = f"{func}({first}{', ...' if len(node.args) > 1 else ''})"
            else:
                code = func + "(...)"
        return code if len(code) <= limit else code[: limit - 3].rstrip(". ") + "..."

    def quoting(self, node: cst.CSTNode, message: str) -> str:
        """``message`` made to quote how the source spells ``node``: its leading quoted pattern
        (`` `log(softmax(x))` gives ...``) replaced by the spelling, or the spelling and a colon put before
        it."""
        found = self.spelling(node)
        if message.startswith("`") and message.count("`") >= 2:
            return f"`{found}`" + message[message.index("`", 1) + 1:]
        return f"`{found}`: {message}"

    def make_fix(self, title: Optional[str] = None, *, unsafe: Optional[bool] = None) -> Fix:
        if unsafe is None:
            applicability = self.FIX_SAFETY
        else:
            applicability = UNSAFE if unsafe else SAFE
        return Fix(title or self.FIX_TITLE or "Apply fix", applicability)

    # -- documentation -------------------------------------------------------------------------
    @classmethod
    def documentation(cls) -> str:
        doc = textwrap.dedent(cls.__doc__ or "").strip("\n")
        if doc and not doc.startswith(" "):
            # a docstring whose first line sits right after the quotes is not indented like the rest
            first, _, rest = (cls.__doc__ or "").partition("\n")
            doc = (first.strip() + "\n" + textwrap.dedent(rest)).strip("\n")
        return doc

    @classmethod
    def fix_availability(cls) -> str:
        return cls.FIX_SAFETY if cls.FIX_TITLE else "none"
