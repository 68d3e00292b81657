"""Measure torchlint's findings against hand-labelled ground truth, per rule.

    python benchmarks/measure_truth.py REALCODE TRUTH_DIR [BEFORE.json [AFTER.json]] [--run]

REALCODE is the folder that holds one checkout per repository (``owner+name``); TRUTH_DIR holds one
TOML file per repository, ``<owner+name>.toml``, made of ``[[case]]`` tables:

    [[case]]
    path = "src/train.py"   # relative to the repository's folder
    cell = 3                # notebooks only: the cell index of torchlint's JSON output
    line = 88               # 1-based line (in the cell for notebooks)
    rule = "TL105"
    verdict = "true"        # "true" (the mistake is there), "near" (looks like it, is correct), "unsure"
    note = "why, in a few words"

The findings come from torchlint JSON outputs (``--output-format json``), one or two of them (before /
after a change), and with ``--run`` from running this checkout's torchlint (``--select ALL
--no-cache``) on the repositories that have a truth file.  Only findings in those repositories count.

A finding matches a case when rule, path and cell are the same and its line is within ``--slack``
(default 2) lines of the case's.  Per rule and output it prints: the true instances, how many of them
a finding matches (caught) and the recall; the near misses and how many are flagged; the precision,
findings matching a true case over findings matching a true or a near case; and the findings that
match no case (unlabelled), listed so that they can be read and labelled.

One mistake, one finding: where torchlint's precedence table gives a mistake two rules recognise to one of
them (``torchlint.precedence``), a true case of the lower-ranked rule counts as caught when the owner
reports there, directly or through a chain (a ``log(1 - p)`` labelled both TL205 and TL208 is caught
by TL208's finding).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from torchlint.precedence import owners_of

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

VERDICTS = ("true", "near", "unsure")


class TruthError(ValueError):
    """A truth file that cannot be read as the format above."""


@dataclass(frozen=True)
class Case:
    repo: str
    path: str
    cell: Optional[int]
    line: int
    rule: str
    verdict: str
    note: str


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    cell: Optional[int]
    line: int
    rule: str
    message: str


@dataclass
class RuleCount:
    true: int = 0
    caught: int = 0
    near: int = 0
    near_flagged: int = 0
    unsure: int = 0
    findings_true: int = 0
    findings_near: int = 0
    findings_unsure: int = 0
    unlabelled: List[Finding] = field(default_factory=list)
    missed: List[Case] = field(default_factory=list)
    flagged_near: List[Case] = field(default_factory=list)


def load_truth(truth_dir: str, realcode: Optional[str] = None) -> List[Case]:
    """Every case of every ``*.toml`` under ``truth_dir``; checks the fields (and paths, given REALCODE)."""
    cases: List[Case] = []
    names = sorted(n for n in os.listdir(truth_dir) if n.endswith(".toml"))
    if not names:
        raise TruthError(f"{truth_dir}: no .toml truth file")
    for name in names:
        repo = name[: -len(".toml")]
        where = os.path.join(truth_dir, name)
        try:
            with open(where, "rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise TruthError(f"{where}: {exc}") from None
        unknown = set(data) - {"case"}
        if unknown:
            raise TruthError(f"{where}: unknown top-level keys {sorted(unknown)}")
        for number, raw in enumerate(data.get("case", []), 1):
            cases.append(_case(where, number, repo, raw, realcode))
    return cases


def _case(where: str, number: int, repo: str, raw: dict, realcode: Optional[str]) -> Case:
    def fail(text: str) -> TruthError:
        return TruthError(f"{where}: case {number}: {text}")

    extra = set(raw) - {"path", "cell", "line", "rule", "verdict", "note"}
    if extra:
        raise fail(f"unknown keys {sorted(extra)}")
    for key in ("path", "line", "rule", "verdict"):
        if key not in raw:
            raise fail(f"missing `{key}`")
    path, line, rule, verdict = raw["path"], raw["line"], raw["rule"], raw["verdict"]
    cell = raw.get("cell")
    if not isinstance(path, str) or not path or os.path.isabs(path):
        raise fail("`path` must be a path relative to the repository")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise fail("`line` must be a positive integer")
    if cell is not None and (not isinstance(cell, int) or isinstance(cell, bool) or cell < 0):
        raise fail("`cell` must be a non-negative integer")
    if path.endswith(".ipynb") and cell is None:
        raise fail("a notebook case needs `cell`")
    if not path.endswith(".ipynb") and cell is not None:
        raise fail("`cell` is for notebooks only")
    if not isinstance(rule, str) or not (rule.startswith("TL") and rule[2:].isdigit()):
        raise fail(f"`rule` must be a code such as TL101, not {rule!r}")
    if verdict not in VERDICTS:
        raise fail(f"`verdict` must be one of {', '.join(VERDICTS)}, not {verdict!r}")
    if realcode is not None and not os.path.isfile(os.path.join(realcode, repo, path)):
        raise fail(f"{repo}/{path} does not exist under {realcode}")
    return Case(repo, path.replace(os.sep, "/"), cell, line, rule, verdict, str(raw.get("note", "")))


def load_findings(json_path: str, repos: Sequence[str]) -> List[Finding]:
    """The findings of a torchlint JSON output that lie in one of ``repos``."""
    with open(json_path, encoding="utf-8") as handle:
        data = json.load(handle)
    return parse_findings(data, repos)


def parse_findings(data: list, repos: Sequence[str]) -> List[Finding]:
    wanted = set(repos)
    out: List[Finding] = []
    for item in data:
        parts = item["filename"].replace("\\", "/").split("/")
        # The repository is the last component named like one: the JSON may come from another root.
        index = max((i for i, part in enumerate(parts) if part in wanted), default=None)
        if index is None:
            continue
        location = item.get("location") or {}
        out.append(Finding(
            repo=parts[index], path="/".join(parts[index + 1:]), cell=item.get("cell"),
            line=int(location.get("row", 0)), rule=item["code"], message=item.get("message", ""),
        ))
    return out


def run_torchlint(realcode: str, repos: Sequence[str], command: Sequence[str]) -> list:
    """Run torchlint (``--select ALL --no-cache``, JSON) on the repositories; return its findings."""
    targets = [os.path.join(realcode, repo) for repo in repos]
    missing = [t for t in targets if not os.path.isdir(t)]
    if missing:
        raise SystemExit(f"not found: {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "findings.json")
        cmd = [*command, "check", "--select", "ALL", "--no-cache", "--exit-zero",
               "--output-format", "json", "-o", out, *targets]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            raise SystemExit(f"torchlint failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        with open(out, encoding="utf-8") as handle:
            return json.load(handle)


def _key(item) -> Tuple[str, str, Optional[int], str]:
    return (item.repo, item.path, item.cell, item.rule)


def _owners(code: str) -> set:
    """The rules whose finding takes the place of one of ``code``, through chains (TL207 over TL208 over
    TL205: TL207's finding is the one finding of that mistake)."""
    found: set = set()
    todo = [code]
    while todo:
        for owner in owners_of(todo.pop()):
            if owner not in found:
                found.add(owner)
                todo.append(owner)
    return found


def measure(cases: Sequence[Case], findings: Sequence[Finding], slack: int = 2) -> Dict[str, RuleCount]:
    """Per rule counts; each finding is matched to its nearest case (a true case on a tie)."""
    by_key: Dict[tuple, List[Case]] = {}
    for case in cases:
        by_key.setdefault(_key(case), []).append(case)
    counts: Dict[str, RuleCount] = {}
    rank = {"true": 0, "near": 1, "unsure": 2}
    matched: set = set()
    for finding in findings:
        count = counts.setdefault(finding.rule, RuleCount())
        near = [c for c in by_key.get(_key(finding), []) if abs(c.line - finding.line) <= slack]
        if not near:
            count.unlabelled.append(finding)
            continue
        case = min(near, key=lambda c: (abs(c.line - finding.line), rank[c.verdict]))
        matched.add(case)
        if case.verdict == "true":
            count.findings_true += 1
        elif case.verdict == "near":
            count.findings_near += 1
        else:
            count.findings_unsure += 1
    by_place: Dict[tuple, List[Finding]] = {}
    for finding in findings:
        by_place.setdefault((finding.repo, finding.path, finding.cell), []).append(finding)
    for case in cases:
        count = counts.setdefault(case.rule, RuleCount())
        hit = case in matched
        if case.verdict == "true" and not hit:  # the owner of the same mistake reported it
            owners = _owners(case.rule)
            hit = any(f.rule in owners and abs(f.line - case.line) <= slack
                      for f in by_place.get((case.repo, case.path, case.cell), ()))
        if case.verdict == "true":
            count.true += 1
            count.caught += hit
            if not hit:
                count.missed.append(case)
        elif case.verdict == "near":
            count.near += 1
            count.near_flagged += hit
            if hit:
                count.flagged_near.append(case)
        else:
            count.unsure += 1
    return counts


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "–"


def _rule_order(code: str) -> Tuple[int, str]:
    return (int(code[2:]) if code[2:].isdigit() else 10**6, code)


def report(cases: Sequence[Case], runs: Sequence[Tuple[str, List[Finding]]], slack: int = 2,
           details: bool = True) -> str:
    """The per-rule table (one column group per run) and the lists of what needs reading."""
    measured = [(label, measure(cases, found, slack)) for label, found in runs]
    rules = sorted({c.rule for c in cases} | {r for _, m in measured for r in m}, key=_rule_order)
    lines: List[str] = []
    head = ["rule", "true", "near"]
    for label, _ in measured:
        head += [f"{name} {label}".strip() for name in
                 ("caught", "recall", "near flagged", "precision", "unlabelled")]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    total = {label: RuleCount() for label, _ in measured}
    for rule in rules:
        any_count = next((m[rule] for _, m in measured if rule in m), RuleCount())
        row = [rule, str(any_count.true), str(any_count.near)]
        for label, m in measured:
            c = m.get(rule, RuleCount())
            t = total[label]
            t.true += c.true
            t.near += c.near
            t.caught += c.caught
            t.near_flagged += c.near_flagged
            t.findings_true += c.findings_true
            t.findings_near += c.findings_near
            t.unlabelled += c.unlabelled
            row += [str(c.caught), _ratio(c.caught, c.true), str(c.near_flagged),
                    _ratio(c.findings_true, c.findings_true + c.findings_near), str(len(c.unlabelled))]
        lines.append("| " + " | ".join(row) + " |")
    first = next(iter(total.values()), RuleCount())
    if not measured:
        first.true = sum(c.verdict == "true" for c in cases)
        first.near = sum(c.verdict == "near" for c in cases)
    row = ["all", str(first.true), str(first.near)]
    for label, _ in measured:
        t = total[label]
        row += [str(t.caught), _ratio(t.caught, t.true), str(t.near_flagged),
                _ratio(t.findings_true, t.findings_true + t.findings_near), str(len(t.unlabelled))]
    lines.append("| " + " | ".join(f"**{x}**" for x in row) + " |")
    unsure = sum(c.verdict == "unsure" for c in cases)
    lines.append("")
    lines.append(f"{len(cases)} cases ({unsure} unsure, not counted), "
                 f"{len({c.repo for c in cases})} repositories; a finding matches within ±{slack} lines.")
    if details:
        for label, m in measured:
            for title, pick in (
                ("unlabelled findings (read and label them)", lambda c: c.unlabelled),
                ("near misses flagged", lambda c: c.flagged_near),
                ("true instances missed", lambda c: c.missed),
            ):
                items = [x for rule in rules for x in pick(m.get(rule, RuleCount()))]
                if not items:
                    continue
                lines.append("")
                lines.append(f"{label or 'findings'}: {title}")
                for x in items:
                    where = f"{x.repo}/{x.path}" + (f" cell {x.cell}" if x.cell is not None else "")
                    text = x.message if isinstance(x, Finding) else x.note
                    lines.append(f"  {x.rule} {where}:{x.line}  {text[:140]}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("realcode", help="folder with one checkout per repository (owner+name)")
    parser.add_argument("truth", help="folder of <owner+name>.toml truth files")
    parser.add_argument("outputs", nargs="*", help="torchlint JSON outputs: BEFORE [AFTER]")
    parser.add_argument("--run", action="store_true",
                        help="also run this torchlint (--select ALL --no-cache) on the repositories")
    parser.add_argument("--torchlint", default=None,
                        help="torchlint command for --run (default: this Python's `-m torchlint`)")
    parser.add_argument("--slack", type=int, default=2, help="line distance that still matches (2)")
    parser.add_argument("--no-details", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    if len(args.outputs) + args.run > 2:
        parser.error("at most two sets of findings (before and after)")
    if not args.outputs and not args.run:
        parser.error("give a torchlint JSON output, or --run")
    try:
        cases = load_truth(args.truth, args.realcode)
    except TruthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    repos = sorted({os.path.splitext(n)[0] for n in os.listdir(args.truth) if n.endswith(".toml")})
    labels = ["before", "after"] if len(args.outputs) + args.run == 2 else [""]
    runs = [(labels[i], load_findings(path, repos)) for i, path in enumerate(args.outputs)]
    if args.run:
        command = args.torchlint.split() if args.torchlint else [sys.executable, "-m", "torchlint"]
        runs.append((labels[-1], parse_findings(run_torchlint(args.realcode, repos, command), repos)))
    print(report(cases, runs, args.slack, details=not args.no_details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
