"""The rule documentation under ``docs/rules/``, generated from the rules themselves.

One page per rule (``docs/rules/TL101.md``: its code, name, message, fix and default, the rule's own page
— What it does / Why is this bad? / Example / Use instead / Fix safety / Options / References — and a few
of its embedded ``INVALID``/``VALID`` cases) and ``docs/rules/index.md`` (the rule table, the TorchFix
map and the fix table, from :mod:`torchlint.rule_table` and :mod:`torchlint.fixes.table`).

``python -m torchlint.docs`` (from the repository root, or ``python -m torchlint.docs ROOT``) writes them;
``--check`` writes nothing, lists the stale or extra pages and exits 1 if there are any.  The test suite
checks that ``docs/rules`` holds exactly what this module generates.
"""
from __future__ import annotations

import difflib
import functools
import json
import os
import sys
import textwrap
from typing import Dict, List, Sequence, Tuple, Type, Union

from torchlint.engine import Settings, lint_source
from torchlint.fixes.table import END as FIX_END
from torchlint.fixes.table import START as FIX_START
from torchlint.fixes.table import fix_table
from torchlint.rule import Invalid, LintRule, Valid
from torchlint.rule_table import RULES_END, RULES_START, TORCHFIX_END, TORCHFIX_START, rules_table, torchfix_table

FOLDER = os.path.join("docs", "rules")
COMMAND = "python -m torchlint.docs"
EXAMPLE = "example.py"
#: how many cases of each kind a page shows (the shortest ones; the module holds them all)
CASES = 3
_FAMILIES = [
    ("TL1", "training and evaluation loops, losses"),
    ("TL2", "numerics: softmax, log, exp and losses written by hand"),
    ("TL3", "Python loops over tensor rows, devices"),
    ("TL4", "shapes: squeeze, broadcasting"),
    ("TL5", "API hygiene: loading, deprecated and misused APIs"),
    ("TL6", "gradient flow: what a loss reaches"),
]


def _source(rule: Type[LintRule]) -> str:
    """The rule's module as a path of the repository (``rules/tl101_missing_zero_grad.py``)."""
    return "rules/" + rule.__module__.rsplit(".", 1)[-1] + ".py"


def _code(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def _shortest(cases: Sequence[object], code_of) -> List[object]:
    ranked = sorted(range(len(cases)), key=lambda i: (len(code_of(cases[i])), i))[:CASES]
    return [cases[i] for i in sorted(ranked)]


def _options_note(options) -> str:
    if not options:
        return ""
    settings = ", ".join(f"`{key} = {_toml(value)}`" for key, value in sorted(options.items()))
    return f"With {settings}: "


def _toml(value: object) -> str:
    """A configuration value as the configuration file spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def _fence(text: str, language: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _invalid(rule: Type[LintRule], case: Invalid, root: str) -> str:
    code = _code(case.code)
    times = f" {case.count} times" if case.count > 1 else ""
    if case.fixed is None:
        lead, block = f"Reported{times}; no fix is offered here:", _fence(code, "python")
    else:
        fixed = _code(case.fixed)
        diff = difflib.unified_diff(code.splitlines(), fixed.splitlines(), lineterm="", n=max(len(code), len(fixed)))
        body = [line for line in diff if not line.startswith(("---", "+++", "@@"))]
        flag = "--fix --unsafe-fixes" if case.unsafe else "--fix"  # the case says which (tests/test_rule_cases.py)
        lead, block = f"Reported{times}; `{flag}` edits it (`-` removed, `+` added):", _fence("\n".join(body), "diff")
    options = _options_note(case.options)
    if options:
        lead = options + lead[0].lower() + lead[1:]
    printed = _fence("\n".join(_findings(rule, code, case.options, root)), "text")
    return lead + "\n\n" + block + "\n\n" + printed


def _findings(rule: Type[LintRule], code: str, options, root: str) -> List[str]:
    """What ``torchlint`` prints for the rule on ``code`` as ``example.py`` at the repository root (so that
    what a rule reads from the project, such as the torch version it declares, is torchlint's own, wherever
    the generator runs from), one line per finding."""
    path = os.path.join(os.path.abspath(root), EXAMPLE)
    result = lint_source(path, code + "\n", Settings(rules=[rule], options=dict(options)))
    return [f"{EXAMPLE}:{d.line}:{d.col}: {d.code} {d.message}" for d in result.diagnostics if d.code == rule.CODE]


def _valid(case: Union[Valid, str]) -> str:
    if isinstance(case, str):
        return _fence(_code(case), "python")
    note = _options_note(case.options)
    return (note + "not reported:\n\n" if note else "") + _fence(_code(case.code), "python")


@functools.lru_cache(maxsize=None)
def rule_page(rule: Type[LintRule], root: str = ".") -> str:
    """The Markdown page of one rule (kept per rule class: generating it lints the cases it shows)."""
    fix = f"{rule.fix_availability()}: {rule.FIX_TITLE}" if rule.FIX_TITLE else "none"
    default = "on" if rule.DEFAULT_ENABLED else "off (select it by its full code: `--extend-select " + rule.CODE + "`)"
    lines = [
        f"<!-- generated by `{COMMAND}` from {_source(rule)}: edit the rule, then run the command -->",
        f"# {rule.CODE} {rule.NAME}",
        "",
        "| | |",
        "|---|---|",
        f"| message{' (a template: the code found fills in `{...}`)' if '{' in rule.MESSAGE else ''} | "
        f"{rule.MESSAGE.replace('|', chr(92) + '|')} |",
        f"| fix | {fix} |",
        f"| default | {default} |",
        f"| source | [`{_source(rule)}`](../../{_source(rule)}) |",
        "",
        rule.documentation(),
        "",
        "## Tested cases",
        "",
        f"From the rule's own cases (`INVALID` and `VALID` in `{_source(rule)}`, run by "
        f"`tests/test_rule_cases.py`): the {CASES} shortest of each kind; the module holds "
        f"{len(rule.INVALID)} reported and {len(rule.VALID)} not reported. Under each reported case, what "
        f"`torchlint` prints for the code before the fix.",
        "",
        "### Reported",
    ]
    for case in _shortest(rule.INVALID, lambda c: c.code):
        lines += ["", _invalid(rule, case, root)]
    lines += ["", "### Not reported"]
    valid = _shortest(rule.VALID, lambda c: c if isinstance(c, str) else c.code)
    if not valid:
        lines += ["", "None listed."]
    for case in valid:
        lines += ["", _valid(case)]
    return "\n".join(lines) + "\n"


def index_page(rules: Sequence[Type[LintRule]]) -> str:
    """``docs/rules/index.md``: the rule table, the TorchFix map and the fix table."""
    families = "\n".join(f"- `{prefix}`: {what}" for prefix, what in _FAMILIES)
    return f"""<!-- generated by `{COMMAND}` from the rules in rules/: edit the rules, then run the command -->
# Rules

`torchlint rules` lists them and `torchlint rule TL101` prints a rule's page offline; each page here
is generated from the rule's module in `rules/`.
The codes are grouped by family:

{families}

"safe" fixes are applied by `--fix`; "unsafe" ones (which may change behaviour beyond the bug) only with
`--fix --unsafe-fixes`. Some rules offer a fix only in some cases; the rule page says when. Rules marked
"off" are not run unless selected by their full code (`--extend-select TL503`, or `extend-select` in the
configuration; a prefix such as `TL5`, or `ALL`, leaves them off): on the library corpus their findings
were not right often enough to be on by default. The TL5 rules that read the torch version the project
supports (TL501, TL505, TL509) take it from the `target-torch` option.

{RULES_START}
{rules_table(rules)}
{RULES_END}

## Coming from TorchFix

Every TorchFix code, and the torchlint rule that reports the same problem (the flake8 prefix stays `TL`):

{TORCHFIX_START}
{torchfix_table(rules)}
{TORCHFIX_END}

No TorchFix code, no ruff rule and no published ML code-smell detector checks the gradient-flow mistakes
TL601 (a loss term cut off the graph), TL602 (a submodule no code uses) and TL603 (an optimizer stepped
after a loss that does not reach its parameters, or a model the loss runs through that no optimizer
holds): training runs and the loss is printed, but part of the model learns nothing.

## Fixes

What each rule's fix does and why it is as safe as it says (the contract every fix keeps is in
[../fixes.md](../fixes.md)):

{FIX_START}
{fix_table(rules)}
{FIX_END}
"""


def render(rules: Sequence[Type[LintRule]], root: str = ".") -> Dict[str, str]:
    """Every generated file: its path relative to the repository root -> its text."""
    out = {os.path.join(FOLDER, "index.md"): index_page(rules)}
    for rule in rules:
        out[os.path.join(FOLDER, f"{rule.CODE}.md")] = rule_page(rule, root)
    return out


def stale(root: str, rules: Sequence[Type[LintRule]]) -> Tuple[List[str], List[str]]:
    """(the generated files whose text on disk differs or is missing, the pages no rule generates)."""
    pages = render(rules, root)
    changed = []
    for path, text in pages.items():
        full = os.path.join(root, path)
        try:
            with open(full, encoding="utf-8", newline="") as fh:
                if fh.read() == text:
                    continue
        except OSError:
            pass
        changed.append(path)
    folder = os.path.join(root, FOLDER)
    extra = sorted(
        os.path.join(FOLDER, name) for name in (os.listdir(folder) if os.path.isdir(folder) else [])
        if name.endswith(".md") and os.path.join(FOLDER, name) not in pages
    )
    return changed, extra


def main(argv: Sequence[str] = ()) -> int:
    from torchlint.rules import all_rules

    args = list(argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(f"usage: {COMMAND} [--check] [REPOSITORY_ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else "."
    if not os.path.isdir(os.path.join(root, "rules")):
        print(f"{root}: not torchlint's repository root (no rules/ folder)", file=sys.stderr)
        return 2
    rules = all_rules()
    changed, extra = stale(root, rules)
    if check:
        for path in changed:
            print(f"{path}: stale (run `{COMMAND}`)")
        for path in extra:
            print(f"{path}: no rule has this code (remove it)")
        return 1 if changed or extra else 0
    pages = render(rules, root)
    os.makedirs(os.path.join(root, FOLDER), exist_ok=True)
    for path in changed:
        with open(os.path.join(root, path), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(pages[path])
    for path in extra:
        os.remove(os.path.join(root, path))
    print(f"{len(changed)} written, {len(extra)} removed, {len(pages) - len(changed)} unchanged")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
