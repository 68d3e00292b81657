"""Output formats: text (``path:line:col: CODE [*] message``), json, sarif (2.1.0), github, statistics."""
from __future__ import annotations

import json
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Type

from torchlint import __version__
from torchlint.engine import PARSE_ERROR, Diagnostic
from torchlint.rule import SAFE, LintRule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_url(rule: type) -> str:
    """A link to what ships: the installed module whose docstring is the rule's page (the same text
    as ``torchlint rule CODE``, offline); no project web site is promised."""
    import inspect
    from pathlib import Path

    return Path(inspect.getfile(rule)).resolve().as_uri()


def is_applicable(d: Diagnostic, unsafe_fixes: bool) -> bool:
    return d.fix is not None and (d.fix.applicability == SAFE or unsafe_fixes)


def position(d: Diagnostic) -> str:
    """``path:line:col``, or ``nb.ipynb:cell 3:4:5`` in a notebook."""
    cell = f"cell {d.cell}:" if d.cell else ""
    return f"{escape(d.path)}:{cell}{d.line}:{d.col}"


_CONTROL = {c: f"\\x{c:02x}" for c in list(range(0x20)) + list(range(0x7F, 0xA0))}
_CONTROL.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def escape(text: str) -> str:
    """Control characters (a terminal's escape sequences, line breaks) shown as ``\\xNN``."""
    return text.translate(_CONTROL)


def text_line(d: Diagnostic, unsafe_fixes: bool) -> str:
    mark = "[*] " if is_applicable(d, unsafe_fixes) else ""
    return f"{position(d)}: {d.code} {mark}{escape(d.message)}"


def format_text(diags: Sequence[Diagnostic], unsafe_fixes: bool) -> str:
    return "".join(text_line(d, unsafe_fixes) + "\n" for d in diags)


def summary(diags: Sequence[Diagnostic], fixed: int, unsafe_fixes: bool, fix_mode: bool) -> str:
    """ruff-like closing lines for the text format."""
    n = len(diags)
    lines: List[str] = []
    if fixed:
        if n:
            lines.append(f"Found {n + fixed} error{'s' if n + fixed != 1 else ''} ({fixed} fixed, {n} remaining).")
        else:
            lines.append(f"Found {fixed} error{'s' if fixed != 1 else ''} ({fixed} fixed, 0 remaining).")
    elif n:
        lines.append(f"Found {n} error{'s' if n != 1 else ''}.")
    else:
        lines.append("All checks passed!")
    if not fix_mode:
        safe = sum(1 for d in diags if is_applicable(d, unsafe_fixes))
        hidden = sum(1 for d in diags if d.fix is not None and not is_applicable(d, unsafe_fixes))
        if safe:
            lines.append(f"[*] {safe} fixable with the `--fix` option.")
        if hidden:
            lines.append(
                f"({hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option.)"
            )
    return "\n".join(lines) + "\n"


def _fix_json(d: Diagnostic) -> Optional[dict]:
    if d.fix is None:
        return None
    return {
        "applicability": d.fix.applicability,
        "message": d.fix.title,
        "edits": [
            {
                "content": e.content,
                "location": {"row": e.line, "column": e.col},
                "end_location": {"row": e.end_line, "column": e.end_col},
            }
            for e in d.fix.edits
        ],
    }


def format_json(diags: Sequence[Diagnostic], rules: Dict[str, Type[LintRule]]) -> str:
    out = []
    for d in diags:
        rule = rules.get(d.code)
        out.append(
            {
                "code": d.code,
                "name": rule.NAME if rule else ("syntax-error" if d.code == PARSE_ERROR else None),
                "message": d.message,
                "filename": d.path,
                "cell": d.cell or None,
                "location": {"row": d.line, "column": d.col},
                "end_location": {"row": d.end_line or d.line, "column": d.end_col or d.col},
                "fix": _fix_json(d),
                "url": rule_url(rule) if rule else None,
            }
        )
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def format_sarif(diags: Sequence[Diagnostic], rules: Dict[str, Type[LintRule]]) -> str:
    used = sorted({d.code for d in diags})
    descriptors = []
    for code in sorted(rules):
        rule = rules[code]
        descriptors.append(
            {
                "id": code,
                "name": rule.NAME,
                "shortDescription": {"text": rule.MESSAGE},
                "fullDescription": {"text": rule.documentation()},
                "help": {"text": rule.documentation(), "markdown": rule.documentation()},
                "helpUri": rule_url(rule),
                "properties": {"fix": rule.fix_availability()},
            }
        )
    if PARSE_ERROR in used:
        from torchlint.selection import NotLinted

        descriptors.append(
            {
                "id": PARSE_ERROR,
                "name": NotLinted.NAME,
                "shortDescription": {"text": "The file could not be read or parsed"},
                "help": {"text": NotLinted.documentation(), "markdown": NotLinted.documentation()},
                "helpUri": rule_url(NotLinted),
            }
        )
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = []
    for d in diags:
        region: Dict[str, object] = {
            "startLine": d.line,
            "startColumn": d.col,
            "endLine": d.end_line or d.line,
            "endColumn": d.end_col or d.col,
        }
        if d.cell:  # a notebook: the region is the file's lines; the cell position is a property
            region = {
                "startLine": d.file_line or 1,
                "endLine": max(d.file_end_line, d.file_line) or 1,
                "properties": {
                    "cell": d.cell,
                    "cellLine": d.line,
                    "cellColumn": d.col,
                    "cellEndLine": d.end_line or d.line,
                    "cellEndColumn": d.end_col or d.col,
                },
            }
        result = {
            "ruleId": d.code,
            "level": "error",
            "message": {"text": d.message if not d.cell else f"{position(d)}: {d.message}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.path.replace("\\", "/")},
                        "region": region,
                    }
                }
            ],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "torchlint",
                        "version": __version__,
                        "rules": descriptors,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def format_github(diags: Sequence[Diagnostic]) -> str:
    lines = []
    for d in diags:
        if d.cell:  # a notebook: the line of the .ipynb file, which the web view shows
            where = f"line={d.file_line or 1},endLine={max(d.file_end_line, d.file_line) or 1}"
        else:
            where = f"line={d.line},col={d.col},endLine={d.end_line or d.line},endColumn={d.end_col or d.col}"
        props = f"file={_gh_escape(d.path, True)},{where},title={_gh_escape('torchlint (' + d.code + ')', True)}"
        lines.append(f"::error {props}::{_gh_escape(f'{position(d)}: {d.code} {d.message}')}\n")
    return "".join(lines)


def format_statistics(diags: Iterable[Diagnostic], rules: Dict[str, Type[LintRule]], unsafe_fixes: bool,
                      as_json: bool = False) -> str:
    diags = list(diags)
    counts = Counter(d.code for d in diags)
    fixable = {d.code for d in diags if is_applicable(d, unsafe_fixes)}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if as_json:
        doc = [
            {
                "code": code,
                "name": rules[code].NAME if code in rules else "syntax-error",
                "count": n,
                "fixable": code in fixable,
            }
            for code, n in rows
        ]
        return json.dumps(doc, indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    out = []
    for code, n in rows:
        rule = rules.get(code)
        name = rule.NAME if rule else "syntax-error"
        mark = "[*]" if code in fixable else "[ ]"
        out.append(f"{n:>{width}}\t{code}\t{mark} {name}\n")
    return "".join(out)
