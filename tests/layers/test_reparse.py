"""Parsing an edited text again only where it changed gives libcst's parse of the whole text, node for
node, over sequences of edits (and the findings of a full lint, see test_server_incremental.py)."""
import random

import libcst as cst
import pytest

from torchlint.analysis.reparse import Reparser

TRAIN = '''"""A module."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        # a comment inside

    # a comment in the class footer


@decorate(
    1,
)
def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
    # end of the loop body


# between
value = [
    1,
    2,
]
if value:
    pass
else:
    value = 2
try:
    import numpy
except ImportError:
    numpy = None
finally:
    pass
x = 1; y = 2
while False: break


def last():
    return 1
# the module's footer
'''

TABS = "import os\nimport sys\n\n\ndef f():\n\tif x:\n\t\treturn 1\n\treturn 2\n\n\ndef g():\n\treturn 3\n\n\nz = f()\n"
CRLF = TRAIN.replace("\n", "\r\n")
NO_FINAL_NEWLINE = TRAIN.rstrip("\n")
TWO_SPACES = "import a\nimport b\nx = 0\nclass A:\n  def f(self):\n    return 1\ny = 2\nclass B:\n    pass\nz = 3\n"

SNIPPETS = [
    "x = 1\n", "    y = 2\n", "# c\n", "\n", "def g():\n    return 1\n", "    # indented\n", "(", ")", '"""',
    "if a:\n", "else:\n    pass\n", "class K:\n  pass\n", "\t", "  ", "@d\n", "z", ":", "\\\n", "return 0\n",
    "        # deep\n", "# -*- coding: latin-1 -*-\n", "\r\n",
]


def _edit(rng, text):
    kind = rng.random()
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.6:  # mostly at the start of a line, where typing keeps the text parsing
        at = text.rfind("\n", 0, at) + 1
    if kind < 0.5:
        return text[:at] + rng.choice(SNIPPETS) + text[at:]
    if kind < 0.65:
        end = min(len(text), at + rng.randrange(1, 12))
        return text[:at] + text[end:]
    if kind < 0.8:  # a whole line removed
        end = text.find("\n", at)
        return text[:at] + (text[end + 1:] if end >= 0 else "")
    # put back a line removed from elsewhere: keeps the text mostly valid
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    i = rng.randrange(len(lines))
    line = lines.pop(i)
    lines.insert(rng.randrange(len(lines) + 1), line)
    return "".join(lines)


def _full(text):
    try:
        return cst.parse_module(text)
    except Exception:
        return None


def _check(reparser, name, text):
    """Whether ``text`` parses; the reparser's tree is libcst's, or it fails where libcst fails."""
    full = _full(text)
    if full is None:
        with pytest.raises(Exception):
            reparser.parse(name, text)
        return False
    got = reparser.parse(name, text)
    assert got.code == full.code  # (libcst does not give back every text it parses: a backslash alone on a line)
    assert got.deep_equals(full), text
    for attr in ("default_indent", "default_newline", "encoding", "has_trailing_newline"):
        assert getattr(got, attr) == getattr(full, attr), attr
    return True


@pytest.mark.parametrize("base", [TRAIN, TABS, CRLF, NO_FINAL_NEWLINE, TWO_SPACES])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_edits_parse_as_the_whole_text(base, seed):
    rng = random.Random(seed)
    reparser = Reparser(most=1.0)  # small texts: parse any region again, however large
    text = base
    _check(reparser, "m.py", text)
    for _ in range(80):
        edited = _edit(rng, text)
        if _check(reparser, "m.py", edited):
            text = edited  # go on from a text that parses (one that does not was checked all the same)
    if len(base) > 500:
        assert reparser.reused > 0  # the incremental path was taken


def test_typing_a_statement_at_the_end_reuses_the_statements_before_it():
    reparser = Reparser()
    first = reparser.parse("m.py", TRAIN)
    text = TRAIN
    for ch in "total = value + 1\n":
        text += ch  # half-typed texts do not parse: the next one that does starts from the last that did
        _check(reparser, "m.py", text)
    module = reparser.parse("m.py", text)
    assert module.body[1] is first.body[1]  # unchanged statements are the same nodes
    assert reparser.reused >= 10


@pytest.mark.parametrize(
    "before, after",
    [
        # an indented line typed after a function joins its body
        ("import a\nimport b\n\n\ndef f():\n    return 1\nx = 2\ny = 3\nz = 4\n",
         "import a\nimport b\n\n\ndef f():\n    return 1\n    y = 0\nx = 2\ny = 3\nz = 4\n"),
        # an indented comment after a block: the block's footer
        ("import a\nimport b\nx = 0\ndef f():\n    return 1\nx = 2\ny = 3\nz = 4\n",
         "import a\nimport b\nx = 0\ndef f():\n    return 1\n    # note\nx = 2\ny = 3\nz = 4\n"),
        # the file's only indented block changes its indentation
        ("import a\nimport b\nx = 0\ndef f():\n    return 1\nx = 2\ny = 3\nz = 4\n",
         "import a\nimport b\nx = 0\ndef f():\n  return 1\nx = 2\ny = 3\nz = 4\n"),
        # the first indented block goes, a later one with another indentation decides
        ("import a\nimport b\nx = 0\ndef f():\n    return 1\nx = 2\ny = 3\nz = 4\ndef g():\n  return 2\n",
         "import a\nimport b\nx = 0\nf = 1\nx = 2\ny = 3\nz = 4\ndef g():\n  return 2\n"),
        # a string opened and not closed, then closed
        ("import a\nimport b\nx = 0\ny = 1\nz = 2\nw = 3\n", "import a\nimport b\nx = 0\ny = '''1\nz = 2\n'''\nw = 3\n"),
        # the end of a block deleted up to the next statement, which joins the block: the indented
        # comment after it now belongs to the block's footer
        ("import a\nimport b\nx = 0\nif x:\n    pass\nz = 1\n    # c\nwhile 0: break\ny = 2\nw = 3\n",
         "import a\nimport b\nx = 0\nif x:\n    pz = 1\n    # c\nwhile 0: break\ny = 2\nw = 3\n"),
        # comments typed at the end of the file: the module's footer
        ("import a\nimport b\nx = 0\ny = 1\nz = 2\n", "import a\nimport b\nx = 0\ny = 1\nz = 2\n# done\n\n"),
    ],
)
def test_edits_at_the_edges_of_statements(before, after):
    reparser = Reparser(most=1.0)
    reparser.parse("m.py", before)
    _check(reparser, "m.py", after)


# -- the findings of a document linted edit after edit equal those of a full lint -------------------------
PROGRAM = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def train(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total = 0
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        optimizer.step()
        total += loss
    return total


def evaluate(model, loader):
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).sum().item()
    return hits


def main(loader):
    model = Net()
    train(model, loader)
    return evaluate(model, loader)
'''

PROGRAM += "".join(f"\n\ndef scale_{i}(t):\n    factor = {i}\n    return t * factor\n" for i in range(10))

#: (old, new) replacements applied one after another; several change a fact another statement reads
EDITS = [
    ("        optimizer.step()\n", "        optimizer.step()\n        optimizer.zero_grad()\n"),  # TL101 goes
    ("        out = model(x)\n", "        out = torch.softmax(model(x), dim=1)\n"),  # TL103 comes
    ("        self.drop = nn.Dropout(0.5)\n", ""),  # the model no longer depends on the mode
    ("        return self.drop(self.fc(x))\n", "        return self.fc(x)\n"),
    ("        self.fc = nn.Linear(4, 2)\n", "        self.fc = nn.Linear(4, 2)\n        self.norm = nn.BatchNorm1d(2)\n"),
    ("        return self.fc(x)\n", "        return self.norm(self.fc(x))\n"),  # and now it does again
    ("    hits = 0\n", "    model.eval()\n    hits = 0\n"),  # TL106 goes
    ("def evaluate(model, loader):\n", "@torch.no_grad()\ndef evaluate(model, loader):\n"),  # TL105 goes
    ("        total += loss\n", "        total += loss  # noqa: TL104\n"),
    ("    return evaluate(model, loader)\n", "    return evaluate(model, loader)\n\n\nx = torch.ones(3).squeeze()\n"),
    ("import torch.nn.functional as F\n", "import torch.nn.functional as F\nimport os\n"),  # in the imports
    ("class Net(nn.Module):\n", "class Net(torch.nn.Module):\n"),
    ("        optimizer.zero_grad()\n", ""),  # TL101 comes back
]


def _findings(result):
    return [(d.code, d.line, d.col, d.end_line, d.end_col, d.message, d.fix.title if d.fix else None)
            for d in result.diagnostics]


def test_findings_edit_after_edit_equal_a_full_lint():
    from torchlint.analysis.project import Project
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    rules = all_rules()
    editor = Project()
    reparser = editor.parse_edits()
    text = PROGRAM
    assert _findings(lint_source("train.py", text, Settings(rules=rules, project=editor))) == _findings(
        lint_source("train.py", text, Settings(rules=rules, project=Project())))
    seen = set()
    for old, new in EDITS:
        assert old in text
        text = text.replace(old, new, 1)
        got = _findings(lint_source("train.py", text, Settings(rules=rules, project=editor)))
        full = _findings(lint_source("train.py", text, Settings(rules=rules, project=Project())))
        assert got == full, (old, new)
        seen.update(code for code, *_ in got)
    assert {"TL101", "TL103", "TL104", "TL105", "TL106"} <= seen  # the edits moved real findings
    assert reparser.reused >= len(EDITS) - 3  # all but the edits near the top were parsed in pieces


def test_few_parses_are_kept(monkeypatch):
    from torchlint.analysis import reparse

    monkeypatch.setattr(reparse, "KEPT_CHARS", 3000)
    reparser = Reparser(kept=3)
    for i in range(5):
        reparser.parse(f"m{i}.py", TRAIN)
    assert reparser.code_facts("m4.py", reparser.parse("m4.py", TRAIN)) is not None
    reparser.parse("m0.py", TRAIN)  # parsed again: m1 and m2 went
    big = "x = 1\n" * 501
    first = reparser.parse("big.py", big)
    assert reparser.code_facts("big.py", first) is not None  # the newest is kept whatever its size
    reparser.parse("m5.py", TRAIN)
    assert reparser.code_facts("big.py", first) is None  # and goes first when a newer one comes


def test_a_document_of_few_large_statements_is_not_kept_after_every_edit():
    from torchlint.analysis import reparse

    body = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(20))
    base = "import a\nimport b\n\n\nclass Big:\n" + body + "\nx = 1\n"
    reparser = Reparser()
    reparser.parse("m.py", base)
    kept = []
    for i in range(reparse.COARSE_AFTER + reparse.COARSE_PAUSE):
        text = base.replace("return 3\n", f"return 3 + {i}\n")
        module = reparser.parse("m.py", text)
        assert module.deep_equals(cst.parse_module(text))
        kept.append(reparser.code_facts("m.py", module) is not None)
    assert reparser.reused == 0
    # kept after the first edits too long for pieces, then nothing kept for a while, then tried again
    assert kept == [True] * (reparse.COARSE_AFTER - 1) + [False] * reparse.COARSE_PAUSE + [True]


def _numbered(ctx, module):
    from torchlint.analysis.walk import iter_nodes

    for node in iter_nodes(module):  # as the engine's walk numbers them
        ctx.order[id(node)] = len(ctx.order)
    return ctx


def test_facts_of_code_alone_are_kept_for_the_statements_an_edit_did_not_touch():
    from torchlint.analysis.context import FileContext
    from torchlint.analysis.project import Project
    from torchlint.analysis.walk import iter_nodes
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    editor = Project()
    editor.parse_edits()
    computed = []

    def probe(node):
        computed.append(node)
        return type(node).__name__

    module = editor.parse("train.py", PROGRAM)
    ctx = _numbered(FileContext("train.py", PROGRAM, module, editor), module)
    for node in iter_nodes(module):
        ctx.of_code("probe", node, probe)
    assert len(computed) == len(list(iter_nodes(module)))

    edited = PROGRAM.replace("    factor = 3\n", "    factor = 3 * 2\n")
    module2 = editor.parse("train.py", edited)
    ctx2 = _numbered(FileContext("train.py", edited, module2, editor), module2)
    touched = next(top for top in module2.body if isinstance(top, cst.FunctionDef) and top.name.value == "scale_3")
    around = {id(n) for i, top in enumerate(module2.body) if top is touched or (
        i + 1 < len(module2.body) and module2.body[i + 1] is touched) or (i and module2.body[i - 1] is touched)
        for n in iter_nodes(top)}  # the region parsed again: the statement and its neighbours
    computed.clear()
    for node in iter_nodes(module2):
        assert ctx2.of_code("probe", node, probe) == type(node).__name__
    again = {id(n) for n in computed}
    assert again and again <= around | {id(module2)}  # only what the edit parsed again
    assert any(isinstance(n, cst.Name) and n.value == "factor" for n in computed)

    # the engine's walk of the new parse drops what was kept of the statements the edit replaced
    lint_source("train.py", edited, Settings(rules=all_rules(), project=editor))
    table = editor.code_facts("train.py", module2)
    live = {id(n) for n in iter_nodes(module2)}
    assert table is not None and table["probe"]
    assert all(key in live for facts in table.values() for key in facts)


def test_a_document_parsed_whole_keeps_no_facts_of_its_last_parse():
    from torchlint.analysis.project import Project
    from torchlint.engine import Settings, lint_source
    from torchlint.rules import all_rules

    editor = Project()
    editor.parse_edits()
    settings = Settings(rules=all_rules(), project=editor)
    lint_source("train.py", PROGRAM, settings)
    first = editor.parse("train.py", PROGRAM)
    old = editor.code_facts("train.py", first)
    assert old
    header_edit = '"""Another docstring."""\n' + PROGRAM.split("\n", 1)[1]  # the header: a whole parse
    lint_source("train.py", header_edit, settings)
    second = editor.parse("train.py", header_edit)
    assert editor.code_facts("train.py", first) is None
    assert editor.code_facts("train.py", second) is not old
