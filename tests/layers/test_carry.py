"""An editor's findings carried over from the document's previous text (``torchlint.carry``): only for
edits that cannot change them, and then equal to a full analysis of the new text."""
from __future__ import annotations

import os
import random

import pytest

from case_lints import case_folder
from torchlint import carry
from torchlint.analysis.project import Project
from torchlint.engine import Settings, lint_source
from torchlint.rule import Valid
from torchlint.rules import all_rules

RULES = all_rules()

TRAIN = '''import torch
import torch.nn as nn
import torch.nn.functional as F

LR = 0.1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


def train(model, loader, optimizer):
    criterion = nn.CrossEntropyLoss()
    total = 0
    for x, y in loader:
        probs = F.softmax(model(x), dim=1)
        loss = criterion(probs, y)
        loss.backward()
        optimizer.step()
        total += loss
    return total


def evaluate(model, loader):
    for x, y in loader:
        print(model(x).argmax(dim=1).eq(y).sum())
'''


def _key(result):
    return [(d.line, d.col, d.end_line, d.end_col, d.code, d.message, d.fix.title if d.fix else None,
             d.fix.applicability if d.fix else None) for d in result.diagnostics]


class _Spy:
    """Counts the lints :func:`carry.carried` answered."""

    def __init__(self, monkeypatch):
        self.answered = 0
        real = carry.carried

        def spy(*args, **kwargs):
            found = real(*args, **kwargs)
            self.answered += found is not None
            return found

        monkeypatch.setattr(carry, "carried", spy)


def _editor(path, before, options=None):
    project = Project()
    project.parse_edits()
    settings = Settings(rules=RULES, options=options or {}, project=project)
    lint_source(path, before, settings)
    return settings


def _both(path, before, after, options=None):
    """(the lint of ``after`` following ``before`` in an editor's project, a full lint of ``after``)."""
    settings = _editor(path, before, options)
    edited = lint_source(path, after, settings)
    full = lint_source(path, after, Settings(rules=RULES, options=options or {}))
    return edited, full


def _path(name="train.py"):
    return os.path.join(case_folder(), name)


def _insert(text, before_line, new):
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(before_line))
    return "\n".join(lines[:at] + new.split("\n") + lines[at:])


CARRIED = {
    "a constant added at the end": TRAIN + "\nBATCH = 32\n",
    "a constant added between functions": _insert(TRAIN, "def evaluate", "NOTE = 'try 1e-3'  # a lower rate\n\n"),
    "a constant changed": TRAIN.replace("LR = 0.1", "LR = 0.1\nSEED, STEPS = 0, (1, 2)").replace("LR = 0.1\n", ""),
    "a blank line in a function": _insert(TRAIN, "        loss.backward()", ""),
    "a blank line removed": TRAIN.replace("\n\n\ndef evaluate", "\n\ndef evaluate"),
    "pass and a constant expression": TRAIN + "\npass\n...\n",
    "a module docstring added": '"""Training."""\n' + TRAIN,
    "a comment in a function": _insert(TRAIN, "        loss.backward()", "        # backward"),
    "a comment between functions": _insert(TRAIN, "def evaluate", "# evaluation\n"),
    "a trailing comment": TRAIN.replace("total = 0", "total = 0  # what the loop adds up"),
    "a comment changed": _insert(TRAIN, "        loss.backward()", "        # backward").replace("# backward", "# backward pass"),
    "a comment saying what the code does": TRAIN.replace("        print(model(x)", "        # model.eval(); .grad; requires_grad\n        print(model(x)"),
}

ANALYSED = {
    "a trailing comment on a line with a finding": TRAIN.replace("loss.backward()", "loss.backward()  # grads"),
    "a comment inside brackets": TRAIN.replace("F.softmax(model(x), dim=1)", "F.softmax(model(x),  # logits\n                          dim=1)"),
    "a directive typed as a comment": _insert(TRAIN, "        loss.backward()", "        # noqa: TL101"),
    "a comment in a function holding a directive": _insert(
        TRAIN.replace("total = 0", "total = 0  # noqa: TL104"), "        loss.backward()", "        # backward"),
    "spacing within a line": TRAIN.replace("dim=1)\n        loss", "dim = 1)\n        loss"),
    "a statement added in a function": _insert(TRAIN, "        loss.backward()", "        n = 1"),
    "a constant whose name is read elsewhere": TRAIN.replace("LR = 0.1", "LR = 0.2") + "\nprint(LR)\n",
    "a name read elsewhere, bound again": TRAIN + "\ntotal = 0\n",
    "a call": TRAIN + "\nmodel = Net()\n",
    "an attribute set": TRAIN + "\ntorch.backends.cudnn.benchmark = True\n",
    "a directive on a constant": TRAIN + "\nBATCH = 32  # noqa: TL101\n",
    "a file-level directive": TRAIN + "\n# torchlint: noqa\n",
    "a docstring in a function": _insert(TRAIN, "    criterion = nn", '    """One epoch."""'),
    "a dunder name": TRAIN + "\n__all__ = ['train']\n",
    "the module's header": "# header\n" + TRAIN,
    "an f-string": TRAIN + "\nNAME = f'{LR}'\n",
}


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_an_edit_that_changes_nothing_is_carried_and_equals_a_full_analysis(name, monkeypatch):
    spy = _Spy(monkeypatch)
    edited, full = _both(_path(), TRAIN, CARRIED[name])
    assert spy.answered == 1
    assert full.diagnostics and _key(edited) == _key(full)


@pytest.mark.parametrize("name", sorted(ANALYSED))
def test_an_edit_that_may_change_findings_is_analysed(name, monkeypatch):
    spy = _Spy(monkeypatch)
    edited, full = _both(_path(), TRAIN, ANALYSED[name])
    assert spy.answered == 0
    assert _key(edited) == _key(full)


def test_findings_move_with_the_lines_added_before_them():
    settings = _editor(_path(), TRAIN)
    before = lint_source(_path(), TRAIN, settings)
    after = lint_source(_path(), "\n\n".join(["import torch", "A = 1", "B = 2", TRAIN[len("import torch\n"):]]), settings)
    assert [(d.code, d.line + 5) for d in before.diagnostics] == [(d.code, d.line) for d in after.diagnostics]


def test_a_chain_of_edits_stays_equal_to_full_analyses(monkeypatch):
    spy = _Spy(monkeypatch)
    settings = _editor(_path(), TRAIN)
    text = TRAIN
    for i in range(6):
        text = text + f"\nSTEP_{i} = {i}\n" if i % 2 == 0 else _insert(text, "def evaluate", "")
        edited = lint_source(_path(), text, settings)
        assert _key(edited) == _key(lint_source(_path(), text, Settings(rules=RULES)))
    assert spy.answered == 6


def test_a_line_a_message_cites_moves_with_the_edit(monkeypatch):
    # TL202 cites where the softmax is (`(case.py:N)`): a line added above it moves the citation too
    code = ("import torch\nimport torch.nn.functional as F\n\n\ndef probs(net, x):\n    return F.softmax(net(x), dim=-1)\n"
            "\n\ndef f(net, x):\n    return torch.log(probs(net, x))\n")
    spy = _Spy(monkeypatch)
    edited, full = _both(_path("case.py"), code, _insert(code, "def probs", "A = 1\n\n"))
    cited = [d.message for d in full.diagnostics if "(case.py:" in d.message]
    assert cited and not any("(case.py:6)" in m for m in cited)  # the softmax is no longer on line 6
    assert spy.answered == 1 and _key(edited) == _key(full)
    # below it, nothing it cites moves
    spy.answered = 0
    edited, full = _both(_path("case.py"), code, code + "\nA = 1\n")
    assert any("(case.py:6)" in d.message for d in full.diagnostics)
    assert spy.answered == 1 and _key(edited) == _key(full)


def test_another_text_of_a_project_file_is_analysed(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\ndependencies = ['torch']\n")
    (tmp_path / "nets.py").write_text("import torch.nn as nn\n\n\nclass Net(nn.Module):\n    pass\n")
    main = "import torch\nfrom nets import Net\n\n\ndef run(x):\n    model = Net()\n    print(model(x))\n"
    path = str(tmp_path / "main.py")
    settings = _editor(path, main)
    spy = _Spy(monkeypatch)
    # the editor changed the imported module: the same edit as before is analysed in full
    overlay = {str(tmp_path / "nets.py"): "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
               "        super().__init__()\n        self.d = nn.Dropout(0.5)\n"}
    other = Settings(rules=RULES, project=settings.project.with_overlay(overlay))
    lint_source(path, main + "\nA = 1\n", other)
    assert spy.answered == 0
    lint_source(path, main + "\nA = 2\n", other)
    assert spy.answered == 1


def test_other_settings_are_analysed(monkeypatch):
    settings = _editor(_path(), TRAIN)
    spy = _Spy(monkeypatch)
    fewer = Settings(rules=[r for r in RULES if r.CODE != "TL103"], project=settings.project)
    assert all(d.code != "TL103" for d in lint_source(_path(), TRAIN + "\nA = 1\n", fewer).diagnostics)
    assert spy.answered == 0


def test_not_for_the_command_line(monkeypatch):
    spy = _Spy(monkeypatch)
    settings = Settings(rules=RULES)
    lint_source(_path(), TRAIN, settings)
    lint_source(_path(), TRAIN + "\nA = 1\n", settings)
    assert spy.answered == 0


def _probes(text):
    """Edits of ``text`` a full analysis must agree with: an inert statement at each top-level gap, a
    blank line before each line, each blank line removed."""
    lines = text.split("\n")
    kinds = ["_carry_probe = 1", "# a constant\nNOTE = 'softmax then CrossEntropyLoss'", "pass", "_a, _b = (1, -2.5)"]
    said = ["# .grad requires_grad eval() train() no_grad", "# TODO", "# model.eval(); loss.backward()"]
    for i, line in enumerate(lines):
        # a comment on a line of its own above the line, at its indentation, and after its code
        indent = line[:len(line) - len(line.lstrip())]
        yield "\n".join(lines[:i] + [indent + said[i % len(said)]] + lines[i:])
        if line.strip() and "#" not in line and not line.rstrip().endswith("\\"):
            yield "\n".join(lines[:i] + [line + "  " + said[(i + 1) % len(said)]] + lines[i + 1:])
        opens = i and lines[i - 1].rstrip().endswith(("\\", ",", "(", "[", "{"))
        if line and not line[0].isspace() and not line.startswith(("#", ")", "]", "}")) and not opens:
            yield "\n".join(lines[:i] + kinds[i % len(kinds)].split("\n") + lines[i:])
        yield "\n".join(lines[:i] + [""] + lines[i:])
        if not line.strip() and 0 < i < len(lines) - 1:
            yield "\n".join(lines[:i] + lines[i + 1:])


def _cases():
    rng = random.Random(7)
    for rule in RULES:
        cases = [c if isinstance(c, Valid) else Valid(c) for c in rule.VALID] + list(rule.INVALID)
        for i in sorted(rng.sample(range(len(cases)), min(3, len(cases)))):
            yield pytest.param(cases[i], id=f"{rule.CODE}-{i}")


@pytest.mark.slow
@pytest.mark.parametrize("case", list(_cases()))
def test_carried_findings_equal_a_full_analysis_on_the_rule_cases(case, monkeypatch):
    spy = _Spy(monkeypatch)
    options = getattr(case, "options", None) or {}
    tried = 0
    for edited in _probes(case.code):
        try:
            compile(edited, "case.py", "exec")
        except SyntaxError:
            continue
        before = spy.answered
        carried, full = _both(_path("case.py"), case.code, edited, options)
        tried += spy.answered > before
        assert _key(carried) == _key(full), edited
    assert tried  # some edit of every case is carried


SHARDED = '''import torch
from torch.utils.data import DataLoader, IterableDataset


def rows(path):
    return open(path)


class Rows(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        yield from rows(self.path)


loader = DataLoader(Rows("rows.txt"), num_workers=2)
'''


@pytest.mark.parametrize("comment", ["# split with get_worker_info() later", "# worker_info: shard here"])
def test_a_comment_that_names_what_code_could_do_changes_no_finding(comment, monkeypatch):
    # a word in a comment is no call: the comment typed is carried, and a full analysis agrees (a comment
    # that spells another rule's trigger word selects that rule: such an edit is analysed in full)
    spy = _Spy(monkeypatch)
    edited, full = _both(_path("rows.py"), SHARDED, SHARDED.replace("    return open(path)", "    return open(path)  " + comment))
    assert spy.answered == 1
    assert [d.code for d in full.diagnostics] == ["TL506"] and _key(edited) == _key(full)
