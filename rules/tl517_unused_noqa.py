from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Set, Tuple

import libcst as cst

from torchlint.noqa_edit import CODE as _CODE, DIRECTIVE as _DIRECTIVE, remove_codes
from torchlint.rule import Invalid, LintRule, Option, Valid

_OWN_PREFIX = "TL"


class UnusedNoqa(LintRule):
    """
    ## What it does
    Finds `# noqa: TLxxx` codes that suppressed nothing in this run: the rule they name ran on the file
    and reported nothing on that line, or no torchlint rule has that code. With the option
    `unused-noqa-bare = true`, a bare `# noqa` on a line where no torchlint finding was suppressed is
    reported too. Off by default (as ruff's `RUF100`): enable it with `--extend-select TL517`.

    ## Why is this bad?
    A suppression outlives the finding it was written for: the code is fixed or rewritten, the rule
    gets smarter, and the comment stays. It then hides the next real finding of that rule on the line
    without anyone deciding so, and readers take it as a sign that something there needs excusing.
    A misspelt code (`# noqa: TL2O1`) never suppressed anything at all.

    ## Example
    ```python
    probs = torch.softmax(logits, dim=-1)  # noqa: TL201
    ```
    (nothing on this line is reported by TL201 any more)

    ## Use instead
    ```python
    probs = torch.softmax(logits, dim=-1)
    ```

    ## Fix safety
    Safe: only the dead codes are removed from the comment (`# noqa: TL201, TL103` keeps `TL103` when
    that one still suppresses a finding), and the whole directive when none remains; any other text of
    the comment stays. Codes of other tools (`E501`, `F401`) are never judged or touched, and neither
    are the codes of torchlint rules that did not run on the file (not selected, or turned off by
    `per-file-ignores`): whether they would suppress something is unknown. A bare `# noqa` also
    silences other linters, hence the opt-in option. Nothing is reported with `--no-noqa`, nor under
    flake8, which applies `# noqa` itself.

    ## Options
    - `unused-noqa-bare` (default `false`): also report a bare `# noqa` that suppressed no torchlint
      finding.

    TorchFix has no equivalent.

    ## References
    - ruff's `unused-noqa` (RUF100): <https://docs.astral.sh/ruff/rules/unused-noqa/>
    - flake8's `# noqa` comments: <https://flake8.pycqa.org/en/latest/user/violations.html>
    """

    CODE = "TL517"
    NAME = "unused-noqa"
    MESSAGE = "Unused `noqa` directive"
    FIX_TITLE = "Remove the unused `noqa` code"
    TRIGGERS = ("noqa", "NOQA", "Noqa", "NoQA")
    DEFAULT_ENABLED = False
    OPTIONS = {
        "unused-noqa-bare": Option(False, "Also report a bare `# noqa` that suppressed no torchlint finding."),
    }

    VALID = [
        # the code suppresses a finding of its rule on that line
        "import torch\n\ndef f(x):\n    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)  # noqa: TL201\n",
        # another tool's code
        "import os  # noqa: F401\n",
        # a bare noqa is left alone unless unused-noqa-bare is on
        "x = 1  # noqa\n",
        # a prefix that suppressed a finding of a rule of its family
        "import torch\n\ndef f(x):\n    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)  # noqa: TL2\n",
        Valid("x = 1  # noqa: E501\n", {"unused-noqa-bare": True}),
        # a "# noqa" inside a string literal is data, not a directive
        's = "# noqa: TL999"  # noqa: F401\n',
        's = """\n# noqa: TL999\n"""\n',
    ]
    INVALID = [
        Invalid("x = 1  # noqa: TL999\n", fixed="x = 1\n", line=1, col=8, message="unknown: `TL999`"),
        Invalid("import os  # noqa: TL999, F401\n", fixed="import os  # noqa: F401\n"),
        # TL101 did not run (only this rule is on here): its code is kept
        Invalid("x = 1  # noqa: TL999,TL101\n", fixed="x = 1  # noqa: TL101\n"),
        Invalid("x = 1  # type: ignore  # noqa: tl9\n", fixed="x = 1  # type: ignore\n"),
        Invalid("x = [  # noqa: TL999\n    1,\n]\n", fixed="x = [\n    1,\n]\n"),
        Invalid("# noqa: TL999\nx = 1\n", fixed="x = 1\n"),
        # the comment is judged and edited, never the string before it
        Invalid('s = "# noqa: F401"  # noqa: TL999\n', fixed='s = "# noqa: F401"\n'),
        Invalid("s = '# noqa: TL999'; t = 1  # noqa: TL998, E501\n", fixed="s = '# noqa: TL999'; t = 1  # noqa: E501\n",
                message="unknown: `TL998`"),
        Invalid("def f():  # noqa\n    return 1\n", fixed="def f():\n    return 1\n",
                message="blanket", options={"unused-noqa-bare": True}),
    ]

    # -- called by the engine once the other rules' reports went through the noqa filter --------
    def judge_noqa(self, lines: Sequence[str], used: Mapping[int, Set[str]], ran: frozenset, positions: Any) -> None:
        """``used``: line -> the codes of its noqa that suppressed a report ("" for a bare noqa);
        ``ran``: the codes of the rules that ran on the file; ``positions.get(node)``: a node's range."""
        from torchlint.rules import all_rules

        if not any(self._may_judge(line) for line in lines if "noqa" in line.lower()):
            return  # no directive that names a code of ours (nor a blanket one to judge): nothing to walk
        known = [r.CODE for r in all_rules()] + ["TL000"]
        # the comments themselves (libcst's Comment nodes, as the token stream has them): a "# noqa"
        # inside a string literal is data, neither judged nor edited
        for comment, parent in self._noqa_comments():
            m = _DIRECTIVE.search(comment.value)
            if m is None:
                continue
            pos = positions.get(comment)
            if pos is None:
                continue
            spent = used.get(pos.start.line, set())
            if m.group("codes") is None:
                if self.options["unused-noqa-bare"] and "" not in spent:
                    self.report(comment, "Unused blanket `noqa` directive", fix=self._fix(comment, parent, set(), True))
                continue
            unused: List[str] = []
            unknown: List[str] = []
            for code in (c.upper() for c in _CODE.findall(m.group("codes"))):
                if not code.startswith(_OWN_PREFIX) or code in spent:
                    continue
                matching = [k for k in known if k.startswith(code)]
                if not matching:
                    unknown.append(code)
                elif self.CODE not in matching and all(k in ran for k in matching):
                    unused.append(code)
            if not (unused or unknown):
                continue
            parts = [f"{label}: {', '.join(f'`{c}`' for c in codes)}"
                     for label, codes in (("unused", unused), ("unknown", unknown)) if codes]
            message = f"{self.MESSAGE} ({'; '.join(parts)})"
            self.report(comment, message, fix=self._fix(comment, parent, set(unused + unknown), False))

    def _may_judge(self, line: str) -> bool:
        """The line (its text, strings included: a superset) holds a directive this rule could judge."""
        for m in _DIRECTIVE.finditer(line):
            codes = m.group("codes")
            if codes is None and self.options["unused-noqa-bare"]:
                return True
            if codes is not None and any(c.upper().startswith(_OWN_PREFIX) for c in _CODE.findall(codes)):
                return True
        return False

    def _noqa_comments(self) -> List[Tuple[cst.Comment, cst.CSTNode]]:
        """The comments holding `noqa`, with their parents, in source order.  The engine's walk skips
        comments and whitespace, so their parents are recorded in the context here (for positions and
        for the fixes' overlap checks)."""
        parents = self.ctx.parents
        local: Dict[int, cst.CSTNode] = {}
        found: List[Tuple[cst.Comment, cst.CSTNode]] = []
        stack: List[cst.CSTNode] = [self.ctx.module]
        while stack:
            node = stack.pop()
            if type(node) is cst.Comment:
                if "noqa" in node.value.lower():
                    found.append((node, local[id(node)]))
                continue
            kids = node.children
            for kid in reversed(kids):
                local[id(kid)] = node
                stack.append(kid)
        for comment, _ in found:
            cur: cst.CSTNode = comment
            while id(cur) not in parents and id(cur) in local:
                parents[id(cur)] = local[id(cur)]
                cur = local[id(cur)]
        return found

    def _fix(self, comment: cst.Comment, parent: cst.CSTNode, dead: Set[str], bare: bool):
        fix = self.make_fix()
        new = remove_codes(comment.value, dead, bare)
        if new is not None:
            return fix.replace(comment, comment.with_changes(value=new))
        if isinstance(parent, cst.TrailingWhitespace):
            return fix.replace(parent, parent.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None))
        if isinstance(parent, cst.EmptyLine):
            return fix.remove(parent)
        return None

