"""Programs that stress the parser and every recursive pass: long operator, boolean, comparison,
attribute, call and subscript chains, long ``elif`` chains, deep nesting of brackets, blocks and
lambdas, long runs of adjacent string literals and of unary operators, mixed with training-loop code so
the rules run.  Lengths are drawn log-uniformly (from a handful to well past every screening limit), so
both sides of each limit are hit.  ``program(rng)`` is deterministic for a seeded ``random.Random``."""
from __future__ import annotations

import math
import random

TRAIN = (
    "import torch\n\n\n"
    "def train(model, loader, criterion):\n"
    "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    for x, y in loader:\n"
    "        loss = criterion(model(x), y)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)

ATOMS = ["a", "x", "torch.zeros(1)", "t.sum()", "1", "2.0", "f(x)", "(a)", "loss", "y.item()"]
BINOPS = ["+", "-", "*", "/", "//", "%", "@", "**", "|", "&", "^", "<<", ">>"]


def _length(rng: random.Random, top: int = 5000) -> int:
    return int(math.exp(rng.uniform(0, math.log(top))))


def _chain(rng: random.Random) -> str:
    n = _length(rng)
    kind = rng.choice(["bin", "same", "bool", "cmp", "attr", "call", "sub", "mixed", "str", "unary", "ml"])
    atom = rng.choice(ATOMS)
    if kind == "bin":
        return "y = " + atom + "".join(f" {rng.choice(BINOPS)} {rng.choice(ATOMS)}" for _ in range(n))
    if kind == "same":
        return "y = " + f" {rng.choice(BINOPS)} ".join([atom] * (n + 1))
    if kind == "bool":
        return "y = " + " ".join(f"{rng.choice(ATOMS)} {rng.choice(['and', 'or'])}" for _ in range(n)) + " a"
    if kind == "cmp":
        return "y = " + " < ".join([atom] * (n + 1))
    if kind == "attr":
        return "y = a" + "".join(f".m{rng.randrange(10)}" for _ in range(n))
    if kind == "call":
        return "y = f" + "()" * n
    if kind == "sub":
        return "y = a" + "[0]" * n
    if kind == "mixed":
        parts = [".b", "()", "[1]", " + c", ".sum()", "(x)"]
        return "y = a" + "".join(rng.choice(parts) for _ in range(n))
    if kind == "str":
        sep = rng.choice([" ", "\n    "])
        return "y = (" + sep.join(rng.choice(['"a"', "'b'", '"d"', 'f"{x}"', 'r"\\s"']) for _ in range(n)) + ")"
    if kind == "unary":
        return "y = " + "".join(rng.choice(["-", "+", "~", "not "]) for _ in range(n)) + "a"
    return "y = (\n" + "".join(f"    {rng.choice(ATOMS)} {rng.choice(BINOPS)}\n" for _ in range(n)) + "    a)"


def _nesting(rng: random.Random) -> str:
    n = min(_length(rng, 400), 400)
    kind = rng.choice(["paren", "list", "dict", "lambda", "if", "elif", "def", "with"])
    if kind == "paren":
        return "y = " + "(" * n + "a" + ")" * n
    if kind == "list":
        return "y = " + "[" * n + "]" * n
    if kind == "dict":
        return "y = " + "{1: " * n + "2" + "}" * n
    if kind == "lambda":
        return "y = " + "lambda: " * n + "a"
    if kind == "elif":
        m = _length(rng, 4000)
        return "if a:\n    pass\n" + "".join(f"elif a == {i}:\n    loss = loss + {i}\n" for i in range(m))
    lines = []
    depth = min(n, 99)
    for i in range(depth):
        pad = "    " * i
        head = {"if": f"if x{i}:", "def": f"def f{i}():", "with": f"with c{i}:"}[kind]
        lines.append(pad + head)
    lines.append("    " * depth + "loss.backward()")
    return "\n".join(lines)


def program(rng: random.Random) -> str:
    parts = [TRAIN]
    for _ in range(rng.randint(1, 3)):
        parts.append(_chain(rng) if rng.random() < 0.7 else _nesting(rng))
    if rng.random() < 0.3:
        parts.append("def g():\n    global z\n    z = " + _chain(rng)[4:])
    return "\n".join(parts) + "\n"
