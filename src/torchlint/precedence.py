"""Which rule reports a mistake that two rules recognise.

Some mistakes match two rules: the log of a softmax that is part of a hand-written cross-entropy is
both TL202's ``log(softmax(x))`` and TL206's loss.  Each rule reports what it recognises, on its own;
this table says which one owns the mistake when both run, and the engine drops the other finding.

*Same mistake*, precisely: a finding of the lower-ranked rule is dropped when the owner, in the same
lint of the same file, made a finding whose reported node is the very node (by identity) the
lower-ranked finding is on, or one of the nodes it names as covered (``LintRule.report(...,
covers=...)``: TL206 reports the whole loss expression and covers the log call in it).  When the
owner is not enabled, or did not report that node, the lower-ranked finding stays: with either rule
alone enabled the mistake is still reported.  The table applies before ``noqa``: a finding that a
``# noqa: <owner>`` comment hides still owns the mistake, so the lower-ranked rule does not step in.
"""

from dataclasses import replace
from types import MappingProxyType
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from torchlint.rule import Report

__all__ = ["PRECEDENCE", "owners_of", "apply_precedence"]

#: (owner, lower-ranked rule, the shared mistake): where both report it, the owner's finding stays.
PRECEDENCE: Tuple[Tuple[str, str, str], ...] = (
    ("TL206", "TL202", "the log of a softmax inside a hand-written softmax cross-entropy"),
    ("TL207", "TL202", "the log of a softmax inside a hand-written binary cross-entropy"),
    ("TL206", "TL204", "the log of a sigmoid or exp inside a hand-written softmax cross-entropy"),
    ("TL207", "TL204", "the log of a sigmoid inside a hand-written binary cross-entropy"),
    ("TL206", "TL208", "a log that may see zero inside a hand-written softmax cross-entropy"),
    ("TL207", "TL208", "a log that may see zero inside a hand-written binary cross-entropy"),
    ("TL202", "TL208", "the log of a softmax (or of elements of one), which can underflow to zero"),
    ("TL204", "TL208", "the log of a sigmoid, or of `1 - sigmoid`, which can reach zero"),
    ("TL204", "TL205", "`log(1 + exp(x))` and `log(1 - sigmoid(x))`: log1p keeps the overflow"),
    ("TL208", "TL205", "`log(1 - p)` with `p` a probability: `1 - p` can be exactly zero"),
    ("TL301", "TL303", "a loop that adds rows one at a time, which also indexes them one at a time"),
    ("TL302", "TL303", "a loop that gathers one row per index, which also indexes them one at a time"),
)

_OWNERS: Mapping[str, FrozenSet[str]] = MappingProxyType({
    lower: frozenset(owner for owner, other, _ in PRECEDENCE if other == lower) for _, lower, _ in PRECEDENCE
})


def owners_of(code: str) -> FrozenSet[str]:
    """The rules whose finding on the same mistake takes the place of a finding of ``code``."""
    return _OWNERS.get(code, frozenset())


def apply_precedence(reports: Sequence[Report],
                     failed: Optional[Callable[[Report, Exception], None]] = None) -> List[Report]:
    """``reports`` (of one lint of one file) without the findings an owning rule made on the same
    node; the order of the rest is kept.  Decided on the findings as reported, so a chain (TL206 over
    TL202 over TL208) needs no order.  A kept finding whose fix was reported as a function to build it
    gets the built fix; a dropped finding's fix is never built.  When building a fix raises, the
    finding stays without a fix and ``failed`` hears of it (the engine reports it as the rule's
    failure): one rule's broken fix never takes the other findings down."""
    claimed: Dict[str, Set[int]] = {}
    for rep in reports:
        nodes = claimed.setdefault(rep.code, set())
        nodes.add(id(rep.node))
        nodes.update(id(n) for n in rep.covers)
    kept = []
    for rep in reports:
        owners = _OWNERS.get(rep.code)
        if owners and any(id(rep.node) in claimed.get(owner, ()) for owner in owners):
            continue
        if callable(rep.fix):
            try:
                built = rep.fix()
            except Exception as exc:
                built = None
                if failed is not None:
                    failed(rep, exc)
            rep = replace(rep, fix=built)
        kept.append(rep)
    return kept
