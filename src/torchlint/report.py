"""Output formats: concise (``path:line:col: CODE [*] message``; ``text`` is its old name), full (the
same line, then the source with a caret under the span), json, sarif (2.1.0), github, junit, gitlab
(GitLab Code Quality), statistics."""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Type
from xml.sax.saxutils import quoteattr

from torchlint import __version__
from torchlint.engine import PARSE_ERROR, Diagnostic
from torchlint.rule import SAFE, LintRule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_url(rule: Optional[type], docs_url: Optional[str] = None) -> Optional[str]:
    """The link to a rule's page where the project publishes one: the ``docs-url`` template with the
    rule's code (and name) filled in; None without one.  No machine-local path is ever given out (a
    ``file://`` link means nothing in code scanning or on another machine): the page itself travels in
    the SARIF rules and the editor's hover, and ``torchlint rule CODE`` prints it offline."""
    if not docs_url or rule is None:
        return None
    return docs_url.replace("{code}", str(getattr(rule, "CODE", "") or "TL000")).replace("{name}", str(rule.NAME))


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


# -- colour on a terminal, as ruff shows it: the path bold, the separators cyan, the code bold red, the
# fix mark cyan --------------------------------------------------------------------------------------
_BOLD, _RED, _CYAN, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[0m"


class Paint:
    """ANSI colours for the text formats; ``Paint(False)`` (the default) leaves the text plain."""

    def __init__(self, on: bool = False) -> None:
        self.on = on

    def _wrap(self, text: str, *styles: str) -> str:
        return "".join(styles) + text + _RESET if self.on and text else text

    def path(self, text: str) -> str:
        return self._wrap(text, _BOLD)

    def sep(self, text: str = ":") -> str:
        return self._wrap(text, _CYAN)

    def code(self, text: str) -> str:
        return self._wrap(text, _BOLD, _RED)

    def fix(self, text: str = "[*]") -> str:
        return self._wrap(text, _CYAN)

    def bold(self, text: str) -> str:
        return self._wrap(text, _BOLD)


PLAIN = Paint(False)


def use_colour(choice: str, stream: object, environ: Optional[Dict[str, str]] = None) -> bool:
    """Whether to colour output written to ``stream``: ``--color always``/``never`` decide; ``auto`` (the
    default) colours a terminal only, unless ``NO_COLOR`` is set (no colour) or ``FORCE_COLOR`` is set
    (colour, terminal or not); an empty variable counts as unset (https://no-color.org)."""
    import os

    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):
        return False


def text_line(d: Diagnostic, unsafe_fixes: bool, paint: Paint = PLAIN) -> str:
    mark = paint.fix() + " " if is_applicable(d, unsafe_fixes) else ""
    cell = f"cell {d.cell}{paint.sep()}" if d.cell else ""
    where = f"{paint.path(escape(d.path))}{paint.sep()}{cell}{d.line}{paint.sep()}{d.col}{paint.sep()}"
    return f"{where} {paint.code(d.code)} {mark}{escape(d.message)}"


def format_text(diags: Sequence[Diagnostic], unsafe_fixes: bool, paint: Paint = PLAIN) -> str:
    return "".join(text_line(d, unsafe_fixes, paint) + "\n" for d in diags)


def summary(diags: Sequence[Diagnostic], fixed: int, unsafe_fixes: bool, fix_mode: bool, paint: Paint = PLAIN) -> str:
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
            lines.append(f"{paint.fix()} {safe} fixable with the `--fix` option.")
        if hidden:
            lines.append(
                f"({hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option.)"
            )
    return "\n".join(lines) + "\n"


def _rule_name(code: str, rules: Dict[str, Type[LintRule]]) -> str:
    rule = rules.get(code)
    name = getattr(rule, "NAME", "") if rule is not None else ""
    return f" ({name})" if name else ""


def format_fixes_applied(fixed: Dict[str, Dict[str, int]], rules: Dict[str, Type[LintRule]],
                         paint: Paint = PLAIN) -> str:
    """``--show-fixes`` after ``--fix``, as ruff lists them: per file, how many findings of each code
    the fixes made go."""
    files = {path: codes for path, codes in fixed.items() if codes}
    total = sum(sum(codes.values()) for codes in files.values())
    if not total:
        return ""
    out = [f"Fixed {total} error{'s' if total != 1 else ''}:\n"]
    for path in sorted(files):
        out.append(f"- {paint.path(escape(path))}{paint.sep()}\n")
        for code, n in sorted(files[path].items()):
            out.append(f"    {n} \u00d7 {paint.code(code)}{_rule_name(code, rules)}\n")
    return "".join(out) + "\n"


def format_fixes_available(diags: Sequence[Diagnostic], rules: Dict[str, Type[LintRule]], unsafe_fixes: bool,
                           paint: Paint = PLAIN) -> str:
    """``--show-fixes`` without ``--fix``: per file, the findings of each code that have a fix, marked
    ``[*]`` when ``--fix`` applies it and ``(unsafe)`` when it needs ``--unsafe-fixes``."""
    files: Dict[str, Counter] = {}
    for d in diags:
        if d.fix is not None:
            files.setdefault(d.path, Counter())[(d.code, is_applicable(d, unsafe_fixes))] += 1
    if not files:
        return ""
    total = sum(sum(c.values()) for c in files.values())
    out = [f"{total} fix{'es' if total != 1 else ''} available:\n"]
    for path in sorted(files):
        out.append(f"- {paint.path(escape(path))}{paint.sep()}\n")
        for (code, applicable), n in sorted(files[path].items()):
            mark = paint.fix() if applicable else "(unsafe: --unsafe-fixes)"
            out.append(f"    {n} \u00d7 {paint.code(code)}{_rule_name(code, rules)} {mark}\n")
    return "".join(out) + "\n"


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


#: files not checked (over a size limit): (path, why), reported by the machine-readable formats too
Skipped = Sequence[Tuple[str, str]]


def _skip_reason(path: str, warning: str) -> str:
    """The reason of a "PATH: reason" warning, without the path."""
    return warning[len(path) + 2:] if warning.startswith(path + ": ") else warning


def format_json(diags: Sequence[Diagnostic], rules: Dict[str, Type[LintRule]], skipped: Skipped = (),
                docs_url: Optional[str] = None) -> str:
    """A list of findings; a file not checked is an entry of its own (code TL000, name `not-checked`,
    at line 1), so a consumer never reads its absence as a clean file."""
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
                "url": rule_url(rule, docs_url),
            }
        )
    for path, why in skipped:
        out.append(
            {
                "code": PARSE_ERROR,
                "name": "not-checked",
                "message": f"not checked: {_skip_reason(path, why)}",
                "filename": path,
                "cell": None,
                "location": {"row": 1, "column": 1},
                "end_location": {"row": 1, "column": 1},
                "fix": None,
                "url": None,
            }
        )
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _help_uri(rule: type, docs_url: Optional[str]) -> Dict[str, str]:
    url = rule_url(rule, docs_url)
    return {"helpUri": url} if url else {}


def format_sarif(diags: Sequence[Diagnostic], rules: Dict[str, Type[LintRule]], skipped: Skipped = (),
                 docs_url: Optional[str] = None) -> str:
    """SARIF 2.1.0; files not checked are ``toolExecutionNotifications`` of the run's invocation."""
    used = sorted({d.code for d in diags})
    descriptors = []
    for code in sorted(rules):
        rule = rules[code]
        descriptors.append(
            {
                "id": code,
                "name": rule.NAME,
                "shortDescription": {"text": rule.MESSAGE},
                "fullDescription": {"text": rule.documentation(), "markdown": rule.documentation()},
                "help": {"text": rule.documentation(), "markdown": rule.documentation()},
                **_help_uri(rule, docs_url),
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
                **_help_uri(NotLinted, docs_url),
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
    if skipped:
        doc["runs"][0]["invocations"] = [  # type: ignore[index]
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {
                        "level": "warning",
                        "message": {"text": f"{path}: not checked: {_skip_reason(path, why)}"},
                        "descriptor": {"id": PARSE_ERROR},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": path.replace("\\", "/")}}}],
                    }
                    for path, why in skipped
                ],
            }
        ]
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


# -- full: the source line with a caret under the span ---------------------------------------------
#: (path, cell) -> the lines the positions count in (a notebook: the cell's), or None when unreadable
LineSource = Callable[[str, int], Optional[List[str]]]


def file_lines(path: str, cell: int) -> Optional[List[str]]:
    """The lines of ``path`` as linted (a notebook: those of cell ``cell``, 1-based among all cells)."""
    from torchlint.files import SourceError, read_source

    try:
        text = read_source(path).text
    except (SourceError, OSError):
        return None
    return lines_of_text(path, text, cell)


def lines_of_text(path: str, text: str, cell: int) -> Optional[List[str]]:
    """The lines of ``text`` (a notebook's: those of cell ``cell``)."""
    if not cell:
        return _lines(text)
    from torchlint.notebook import NotebookError, read_notebook

    try:
        nb = read_notebook(text)
    except NotebookError:
        return None
    for c in nb.cells:
        if c.index == cell - 1:
            return _lines(c.text)
    return None


def _lines(text: str) -> List[str]:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":  # the line break that ends the last line opens no line
        lines.pop()
    return lines


def _shown(line: str) -> str:
    return escape(line.rstrip("\r").expandtabs(4))


def _width(line: str, col: int) -> int:
    """Display columns before 1-based character column ``col`` of ``line`` (tabs expanded as shown)."""
    return len(escape(line[: max(col - 1, 0)].expandtabs(4)))


def format_full(diags: Sequence[Diagnostic], unsafe_fixes: bool, lines_of: LineSource = file_lines,
                paint: Paint = PLAIN) -> str:
    """ruff's ``full`` look: each finding's line, then the code around it with ``^`` under the span
    (the first line of a span over several lines), and the fix's title as ``help``."""
    cache: Dict[tuple, Optional[List[str]]] = {}
    out: List[str] = []
    for d in diags:
        out.append(text_line(d, unsafe_fixes, paint) + "\n")
        key = (d.path, d.cell)
        if key not in cache:
            cache[key] = lines_of(d.path, d.cell)
        lines = cache[key]
        if lines is None or not 0 < d.line <= len(lines):
            out.append("\n")
            continue
        end_line = min(max(d.end_line, d.line), len(lines))
        first, last = max(1, d.line - 1), min(len(lines), end_line + 1)
        gutter = len(str(last))
        pad = " " * gutter
        out.append(f"{pad} |\n")
        for n in range(first, last + 1):
            if d.line < n < end_line and end_line - d.line > 4 and n != d.line + 1 and n != end_line:
                if n == d.line + 2:
                    out.append(f"{'.' * gutter} | ...\n")
                continue
            out.append(f"{n:>{gutter}} | {_shown(lines[n - 1])}".rstrip() + "\n")
            if n == d.line:
                text = lines[n - 1].rstrip("\r")
                start = _width(text, d.col)
                stop = _width(text, d.end_col) if d.end_line == d.line and d.end_col > d.col else len(_shown(text))
                carets = paint.code(f"{'^' * max(1, stop - start)} {d.code}")
                out.append(f"{pad} | {' ' * start}{carets}\n")
        out.append(f"{pad} |\n")
        if d.fix is not None:
            kind = "" if is_applicable(d, unsafe_fixes) else " (unsafe: --unsafe-fixes)"
            out.append(f"{pad} = help: {escape(d.fix.title)}{kind}\n")
        out.append("\n")
    return "".join(out)


# -- junit and gitlab: for CI ----------------------------------------------------------------------
def format_junit(diags: Sequence[Diagnostic], checked: Sequence[str] = (), skipped: Skipped = ()) -> str:
    """JUnit XML: one test suite per file with findings (a test case per finding), for the files
    ``checked`` without findings a passing test case each, and for the files not checked (``skipped``)
    a test case with an error, never a passing one."""
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        by_file.setdefault(d.path, []).append(d)
    not_checked = {path: why for path, why in skipped}
    clean = sorted(set(checked) - set(by_file) - set(not_checked))
    total = len(diags) + len(clean) + len(not_checked)
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n',
           f'<testsuites name="torchlint" tests="{total}" failures="{len(diags)}" errors="{len(not_checked)}">\n']
    for path in sorted(by_file):
        found = by_file[path]
        out.append(f'  <testsuite name={quoteattr(path)} tests="{len(found)}" failures="{len(found)}" errors="0">\n')
        for d in found:
            where = f"cell {d.cell}, line {d.line}, col {d.col}" if d.cell else f"line {d.line}, col {d.col}"
            out.append(
                f'    <testcase name={quoteattr("torchlint." + d.code)} classname={quoteattr(path)} '
                f'line="{d.file_line or d.line if d.cell else d.line}" column="{d.col}">\n'
                f'      <failure message={quoteattr(d.message)}>{_xml_text(f"{where}, {d.message}")}</failure>\n'
                "    </testcase>\n"
            )
        out.append("  </testsuite>\n")
    if clean:
        out.append(f'  <testsuite name="torchlint" tests="{len(clean)}" failures="0" errors="0">\n')
        for path in clean:
            out.append(f'    <testcase name={quoteattr(path)} classname="torchlint"/>\n')
        out.append("  </testsuite>\n")
    if not_checked:
        out.append(f'  <testsuite name="torchlint.not-checked" tests="{len(not_checked)}" failures="0" '
                   f'errors="{len(not_checked)}">\n')
        for path in sorted(not_checked):
            why = f"not checked: {_skip_reason(path, not_checked[path])}"
            out.append(f'    <testcase name={quoteattr(path)} classname="torchlint">\n'
                       f'      <error message={quoteattr(why)}>{_xml_text(why)}</error>\n'
                       "    </testcase>\n")
        out.append("  </testsuite>\n")
    out.append("</testsuites>\n")
    return "".join(out)


def _xml_text(text: str) -> str:
    text = "".join(c if c in "\t\n" or (0x20 <= ord(c) < 0xD800) or 0xE000 <= ord(c) <= 0xFFFD or ord(c) > 0xFFFF
                   else escape(c) for c in text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def format_gitlab(diags: Sequence[Diagnostic], skipped: Skipped = ()) -> str:
    """GitLab Code Quality report (a JSON list).  A notebook's finding points at the line of the .ipynb
    file that holds it, with the cell position in the description.  Fingerprints are stable across runs
    and line moves: the path, code, message and the finding's rank among equal ones."""
    seen: Counter = Counter()
    out = []
    for d in diags:
        key = (d.path.replace("\\", "/"), d.code, d.message)
        seen[key] += 1
        fingerprint = hashlib.sha256(repr((key, seen[key])).encode("utf-8", "surrogateescape")).hexdigest()
        if d.cell:
            lines = {"begin": d.file_line or 1, "end": max(d.file_end_line, d.file_line) or 1}
            description = f"{d.code} {position(d)}: {d.message}"
        else:
            lines = {"begin": d.line, "end": d.end_line or d.line}
            description = f"{d.code} {d.message}"
        out.append(
            {
                "description": description,
                "check_name": d.code,
                "fingerprint": fingerprint,
                "severity": "major",
                "location": {"path": key[0], "lines": lines},
            }
        )
    for path, why in skipped:  # a file not checked: an entry, never silence
        uri = path.replace("\\", "/")
        out.append(
            {
                "description": f"{PARSE_ERROR} not checked: {_skip_reason(path, why)}",
                "check_name": PARSE_ERROR,
                "fingerprint": hashlib.sha256(repr((uri, "not-checked")).encode("utf-8", "surrogateescape")).hexdigest(),
                "severity": "major",
                "location": {"path": uri, "lines": {"begin": 1, "end": 1}},
            }
        )
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
