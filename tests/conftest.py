import os
import subprocess
import sys
import textwrap

import pytest

TRAIN_BUG = textwrap.dedent(
    """\
    import torch


    def train(model, loader, criterion):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
)

CE_BUG = textwrap.dedent(
    """\
    import torch
    import torch.nn.functional as F


    def loss_fn(logits, target):
        return F.cross_entropy(torch.softmax(logits, dim=-1), target)
    """
)

CLEAN = textwrap.dedent(
    """\
    import torch


    def train(model, loader, criterion, optimizer):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
)


class Runner:
    def __init__(self, cwd):
        self.cwd = cwd

    def __call__(self, *args, stdin=None, env=None, cwd=None):
        full_env = dict(os.environ)
        full_env.pop("PYTHONHASHSEED", None)
        if env:
            full_env.update(env)
        return subprocess.run(
            [sys.executable, "-m", "torchlint", *args],
            cwd=str(cwd or self.cwd),
            input=stdin,
            capture_output=True,
            text=isinstance(stdin, str) or stdin is None,
            env=full_env,
            timeout=300,
        )


@pytest.fixture
def run(tmp_path):
    return Runner(tmp_path)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TRAIN_BUG)
    (tmp_path / "pkg" / "losses.py").write_text(CE_BUG)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


# -- the `slow` marker ------------------------------------------------------------------------------
# `pytest` runs the fast subset (pyproject.toml deselects `slow`); `pytest -m ""` runs everything (CI).
# A test is slow when it carries the marker itself (`@pytest.mark.slow`, or `pytestmark` for a whole
# file: programs, editors, server sessions, a second or more each) or uses the `run` fixture (one
# torchlint subprocess or more).


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)
