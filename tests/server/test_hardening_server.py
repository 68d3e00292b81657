"""The language server under hostile input: huge documents, a slow document, `exit` without `shutdown`,
a notebook opened as a plain text document."""
import asyncio
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")

from lsprotocol import types as T  # noqa: E402

from conftest import TRAIN_BUG  # noqa: E402
from test_server import Session, run  # noqa: E402


def _open(s, name, text, language_id="python"):
    path = s.root / name
    path.write_text(text)
    uri = path.as_uri()
    s.versions[uri] = 1
    s.client.text_document_did_open(
        T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text))
    )
    return uri


def _padded(size):
    line = "x = 1  # padding " + "." * 60 + "\n"
    return TRAIN_BUG + line * (size // len(line))


def test_document_over_the_size_limit_gets_a_notice(tmp_path):
    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri = _open(s, "big.py", _padded(9 * 1024 * 1024))
        diags = await s.diagnostics(uri, 1)
        assert len(diags) == 1
        assert diags[0].severity == T.DiagnosticSeverity.Information
        assert "file too large" in diags[0].message and "not checked" in diags[0].message
        assert await s.stop() == 0

    run(scenario())


def test_large_slow_document_gets_a_timeout_notice_soon(tmp_path):
    # a 2 MB document of real code: the command line would give it 64 times `file-timeout`; an editor
    # gives it at most twice `file-timeout` and then shows the TL000 notice
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nfile-timeout = 1\n")
    body = TRAIN_BUG.replace("def train", "def train_{}").replace("import torch\n", "")
    text = "import torch\n" + "".join(body.format(i) for i in range(2_000_000 // len(body)))

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri = _open(s, "slow.py", text)
        diags = await asyncio.wait_for(s.diagnostics(uri, 1), 45)
        assert [d.code for d in diags] == ["TL000"]
        # whichever guard stops the analysis first: the time limit (twice `file-timeout`), or, on a fast
        # machine that gets further in that time, the analysis process's memory limit
        assert "longer than 2 s" in diags[0].message or "MiB of memory" in diags[0].message, diags[0].message
        assert await s.stop() == 0

    run(scenario())


def test_notebook_opened_as_a_text_document_is_linted(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# training\n"]},
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": TRAIN_BUG.splitlines(True)},
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(nb, indent=1) + "\n"

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri = _open(s, "train.ipynb", text, language_id="json")
        diags = await s.diagnostics(uri, 1)
        assert [d.code for d in diags] == ["TL101"]
        line = text.split("\n")[diags[0].range.start.line]
        assert "loss.backward()" in line  # the line of the JSON file that holds the code
        assert diags[0].message.startswith("cell 2:8:9: ")
        actions = await s.actions(uri, text)
        assert not [a for a in actions or [] if a.kind == T.CodeActionKind.QuickFix and a.edit is not None
                    and "zero_grad" in json.dumps([e.new_text for e in a.edit.changes[uri]])]
        assert await s.stop() == 0

    run(scenario())


def _frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_exit_without_shutdown_exits_1(tmp_path):
    # the protocol: exit 1 when `exit` comes without a `shutdown` first (0 after one: test_server.py)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    proc = subprocess.Popen([sys.executable, "-m", "torchlint", "server"], cwd=str(tmp_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b"".join(_frame(m) for m in messages))
        proc.stdin.flush()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
