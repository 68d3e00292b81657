"""The language server's protocol under hostile input (issue 39, item 7), in process: every request is
answered (an error for invalid params), a wrong Content-Length does not lose the stream, and closed
documents are forgotten."""
import asyncio
import io
import json

import pytest

pytest.importorskip("pygls")

from torchlint.lsp.server import FramedInput, build_server  # noqa: E402


def _frame(message, extra=0):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body) + extra, body)


def _bodies(data):
    reader = FramedInput(io.BufferedReader(io.BytesIO(data)))
    out = []
    while True:
        header = reader.readline()
        if not header:
            return out
        assert reader.readline() == b"\r\n"
        out.append(json.loads(reader.read(int(header.split(b":")[1]))))


A = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
B = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}


@pytest.mark.parametrize("extra", [40, -5, 1, -1])
def test_a_wrong_content_length_does_not_lose_the_next_message(extra):
    got = _bodies(_frame(A, extra) + _frame(B))
    assert got[-1] == B
    if extra > 0:  # too long: the message itself is read up to the next header
        assert got == [A, B]


def test_junk_between_messages_is_skipped():
    assert _bodies(_frame(A) + b"garbage\r\n\r\n" + _frame(B)) == [A, B]
    assert _bodies(b"Content-Length: 7\r\n\r\n{nope:}" + _frame(B)) == [B]


def test_a_body_mentioning_content_length_is_read_whole():
    note = {"jsonrpc": "2.0", "method": "x", "params": {"text": "Content-Length: 5\r\n\r\n{}"}}
    assert _bodies(_frame(note) + _frame(B)) == [note, B]


class _Writer:
    def __init__(self):
        self.sent = []

    def write(self, data):
        text = data.decode() if isinstance(data, bytes) else data
        self.sent.append(json.loads(text[text.index("{"):]))

    def close(self):
        pass


def _server():
    server = build_server(None)
    writer = _Writer()
    server.protocol.set_writer(writer)

    def send(message):
        server.protocol.handle_message(json.loads(json.dumps(message), object_hook=server.protocol.structure_message))

    return server, writer, send


def test_invalid_params_get_an_error_response():
    async def scenario():
        server, writer, send = _server()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        send({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"textDocument": 5}})
        await asyncio.sleep(0.1)
        errors = [m for m in writer.sent if m.get("id") == 7]
        assert errors and errors[0]["error"]["code"] == -32602

    asyncio.run(scenario())


def test_closed_documents_are_forgotten(tmp_path):
    async def scenario():
        server, writer, send = _server()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for i in range(30):
            uri = (tmp_path / f"doc{i}.py").as_uri()
            send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": "import torch\nx = torch.softmax(y, dim=0)\n"}}})
            await asyncio.sleep(0.01)
            send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        await asyncio.sleep(0.5)
        assert server.states == {}
        assert len(server.workspace.text_documents) == 0
        assert len(server.protocol._request_futures) <= 2  # not one or two per document ever opened
        server.worker.shutdown()

    asyncio.run(scenario())


def test_headers_with_a_content_type_and_large_messages():
    big = {"jsonrpc": "2.0", "method": "x", "params": {"text": "x = 1  # padding\n" * 200000}}
    body = json.dumps(big).encode()
    framed = b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s" % (len(body), body)
    assert _bodies(framed + _frame(B)) == [big, B]
