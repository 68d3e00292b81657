"""The engine's parse: the tree and the errors of ``libcst.parse_module``, without libcst's per-node checks
while it runs, and with them again for every node built outside a parse."""
from __future__ import annotations

import threading

import libcst as cst
import pytest

from torchlint.analysis.parsing import parse_module

VALID = [
    "import torch\n\nx = torch.zeros(3)\n",
    "def f(a, /, b=1, *args, c, **kw):\n    return (a, b)\n",
    "class A(B, metaclass=M):\n    @property\n    def x(self) -> int: ...\n",
    "async def f():\n    async with a as (b, c):\n        await g(*x, **y)\n",
    "with (a as b, c as d):\n    pass\n",
    "match x:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v}:\n        pass\n",
    "x = f'{a!r:>{w}}' + rb'\\x00'\n",
    "lambda *a, k=1, **kw: (yield)\n",
    "try:\n    pass\nexcept* ValueError as e:\n    raise\nfinally:\n    pass\n",
    "# -*- coding: utf-8 -*-\n\n\n# trailing comment\n",
    "a[1:2, ::3, ...] = b @ c if d else not e\n",
]

INVALID = [
    "f(**a, *b)\n",
    "f(a=1, b)\n",
    "def f(*): pass\n",
    "def f(a=1, b): pass\n",
    "x: int, y = 1\n",
    "f() = 1\n",
    "print 'x'\n",
    "lambda a=1, b: 0\n",
    "def f(:\n",
    "x = (1,\n",
]


@pytest.mark.parametrize("text", VALID)
def test_same_tree_as_libcst(text):
    ours = parse_module(text)
    theirs = cst.parse_module(text)
    assert ours.deep_equals(theirs)
    assert ours.code == text


@pytest.mark.parametrize("text", INVALID)
def test_same_errors_as_libcst(text):
    with pytest.raises(Exception) as theirs:
        cst.parse_module(text)
    with pytest.raises(Exception) as ours:
        parse_module(text)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def _checks_nodes() -> bool:
    """Whether a node built now is checked (an identifier that is not one is refused)."""
    try:
        cst.Name("1 x")
    except cst.CSTValidationError:
        return True
    return False


def test_nodes_built_outside_a_parse_are_checked():
    assert _checks_nodes()
    parse_module("x = 1\n")
    assert _checks_nodes()
    with pytest.raises(Exception):
        parse_module("def f(:\n")
    assert _checks_nodes()  # a parse that failed puts the checks back too


def test_checks_are_off_only_while_a_parse_runs():
    seen = []
    # a node class whose check records that it ran: made by the parser, it must not run
    original = cst.Name._validate

    def recording(self):
        seen.append(self.value)
        return original(self)

    cst.Name._validate = recording  # type: ignore[method-assign]
    try:
        parse_module("alpha = beta\n")
        assert seen == []
        cst.Name("gamma")
        assert seen == ["gamma"]
    finally:
        cst.Name._validate = original  # type: ignore[method-assign]


def test_overlapping_parses_in_threads_restore_the_checks():
    text = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40))
    errors = []
    start = threading.Barrier(4)

    def work():
        try:
            start.wait()
            for _ in range(3):
                assert parse_module(text).deep_equals(cst.parse_module(text))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _checks_nodes()
