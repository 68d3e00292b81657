"""The rule table and the TorchFix map of ``docs/rules/index.md``, generated from the rules.

``python -m torchlint.docs`` writes them (with the rule pages); a test keeps ``docs/rules`` in sync.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, Sequence, Tuple, Type

from torchlint.rule import LintRule

RULES_START = "<!-- rules-table:start -->"
RULES_END = "<!-- rules-table:end -->"
TORCHFIX_START = "<!-- torchfix-map:start -->"
TORCHFIX_END = "<!-- torchfix-map:end -->"

#: Every code of TorchFix 0.7.0 and where its check lives in torchlint (or why it has no equivalent).
TORCHFIX: Dict[str, Tuple[str, str]] = {
    "TOR001": ("TL509", "use of a removed function (`torch.solve`, `torch.symeig`, ...)"),
    "TOR002": ("TL515", "`require_grad` typo"),
    "TOR003": ("TL514", "`checkpoint` without `use_reentrant`"),
    "TOR004": ("TL509", "import of a removed function (reported where it is used)"),
    "TOR101": ("TL509", "use of a deprecated function"),
    "TOR102": ("TL501", "`torch.load` without `weights_only`"),
    "TOR103": ("TL509", "import of a deprecated function (reported where it is used)"),
    "TOR104": ("TL509", "use of a non-public function that has a public name"),
    "TOR105": ("TL509", "import of a non-public function (reported where it is used)"),
    "TOR106": ("TL205", "`log(1 + x)` → `log1p`"),
    "TOR107": ("TL205", "`exp(x) - 1` → `expm1`"),
    "TOR201": ("TL509", "torchvision `pretrained=` → `weights=`"),
    "TOR202": ("TL509", "torchvision `v2.ToTensor` is deprecated"),
    "TOR203": ("—", "import style only (`from torchvision import models`); not a bug, no equivalent"),
    "TOR401": ("—", "`DataLoader` without `num_workers`: a tuning choice, not a bug; no equivalent"),
    "TOR901": ("—", "PyTorch-internal (`torch.library.Library` in PyTorch's own code); no equivalent"),
}


def summary(rule: Type[LintRule]) -> str:
    """The first sentence of the page's "What it does", whole, on one line ("Finds " dropped)."""
    doc = rule.documentation()
    body = doc.split("## What it does", 1)[-1].split("\n## ", 1)[0]
    text = " ".join(body.split())
    # the first sentence ends at ". " (or ":") that is not inside backticks
    out, ticks = [], 0
    for i, ch in enumerate(text):
        if ch == "`":
            ticks ^= 1
        if not ticks and ch in ".:" and (i + 1 == len(text) or text[i + 1] == " "):
            break
        out.append(ch)
    sentence = "".join(out).strip()
    sentence = re.sub(r"^Finds,?\s+", "", sentence)
    return sentence.replace("|", "\\|")


def rules_table(rules: Sequence[Type[LintRule]]) -> str:
    lines = ["| code | name | fix | default | what it finds |", "|------|------|-----|---------|---------------|"]
    for r in rules:
        default = "on" if r.DEFAULT_ENABLED else "off"
        lines.append(f"| [{r.CODE}]({r.CODE}.md) | {r.NAME} | {r.fix_availability()} | {default} | {summary(r)} |")
    return "\n".join(lines)


def torchfix_table(rules: Iterable[Type[LintRule]]) -> str:
    names = {r.CODE: r.NAME for r in rules}
    lines = ["| TorchFix | torchlint | what |", "|----------|-----------|------|"]
    for tor, (tl, what) in TORCHFIX.items():
        target = f"{tl} {names[tl]}" if tl in names else tl
        lines.append(f"| {tor} | {target} | {what} |")
    return "\n".join(lines)


def _replace(text: str, start: str, end: str, table: str) -> str:
    i, j = text.index(start), text.index(end)
    return text[: i + len(start)] + "\n" + table + "\n" + text[j:]


def render_tables(text: str, rules: Sequence[Type[LintRule]]) -> str:
    """``text`` with the rule table and the TorchFix map replaced between their markers."""
    text = _replace(text, RULES_START, RULES_END, rules_table(rules))
    return _replace(text, TORCHFIX_START, TORCHFIX_END, torchfix_table(rules))
