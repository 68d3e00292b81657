"""The language server's latency path, in process: the adaptive debounce (a change after a pause is
analysed at once, a burst of typing waits at most for its next keystroke or one analysis), and a save
right after a change waiting for that change's analysis instead of analysing the text twice."""
import asyncio
import json
import time

import pytest

pytest.importorskip("pygls")

from torchlint.lsp.server import DEBOUNCE_S, PAUSE_S, build_server, debounce_delay  # noqa: E402

SOFTMAX = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x, y):\n    return F.cross_entropy(torch.softmax(x, dim=-1), y)\n"


def test_the_first_change_after_a_pause_waits_for_nothing():
    assert debounce_delay(None, None) == 0.0
    assert debounce_delay(None, 2.0) == 0.0
    assert debounce_delay(PAUSE_S, 0.3) == 0.0
    assert debounce_delay(10.0, 0.3) == 0.0


@pytest.mark.parametrize(
    "gap, cost, expected",
    [
        (0.06, 0.30, 0.09),  # slow analysis: wait for the next keystroke (1.5 x the gap) only
        (0.06, 0.02, 0.02),  # fast analysis: waiting longer than it takes saves less than it costs
        (0.06, 0.001, 0.02),  # never below the floor within a burst
        (0.001, 0.3, 0.02),  # changes arriving together wait for each other
        (0.2, 0.5, DEBOUNCE_S),  # never above the longest debounce
        (0.06, None, 0.09),  # not analysed yet: as if slow
    ],
)
def test_a_burst_waits_for_the_next_keystroke_or_one_analysis(gap, cost, expected):
    assert debounce_delay(gap, cost) == pytest.approx(expected)


def test_the_longest_debounce_bounds_every_wait():
    for gap in (0.0, 0.01, 0.1, 0.3, 0.49):
        for cost in (None, 0.0, 0.05, 1.0):
            assert 0.0 <= debounce_delay(gap, cost, 0.05) <= 0.05


class _Writer:
    def __init__(self):
        self.sent = []

    def write(self, data):
        text = data.decode() if isinstance(data, bytes) else data
        self.sent.append(json.loads(text[text.index("{"):]))

    def close(self):
        pass


def _session(tmp_path):
    server = build_server(None)
    writer = _Writer()
    server.protocol.set_writer(writer)
    analysed = []
    compute = server.compute

    def counting(path, name, text, version, root, overlay=None):
        analysed.append((text, version))
        return compute(path, name, text, version, root, overlay)

    server.compute = counting

    def send(message):
        server.protocol.handle_message(json.loads(json.dumps(message), object_hook=server.protocol.structure_message))

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return server, writer, send, analysed


def _published(writer, version):
    return [m["params"] for m in writer.sent
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == version]


async def _wait_for(writer, version, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = _published(writer, version)
        if found:
            return found[-1]
        await asyncio.sleep(0.01)
    return None


def _open(send, uri, text):
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})


def _change(send, uri, version, text):
    send({"jsonrpc": "2.0", "method": "textDocument/didChange",
          "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})


def test_a_change_after_a_pause_is_analysed_without_the_debounce(tmp_path):
    async def scenario():
        server, writer, send, analysed = _session(tmp_path)
        server.debounce = 30.0  # a fixed debounce of this length would hold the diagnostics back
        uri = (tmp_path / "doc.py").as_uri()
        _open(send, uri, SOFTMAX)
        assert await _wait_for(writer, 1, 60) is not None
        _change(send, uri, 2, SOFTMAX + "\nvalue = 1\n")
        got = await _wait_for(writer, 2, 20)
        assert got is not None
        assert [d["code"] for d in got["diagnostics"]] == ["TL103"]
        server.worker.shutdown()

    asyncio.run(scenario())


def test_a_save_right_after_a_change_waits_for_its_analysis(tmp_path):
    async def scenario():
        server, writer, send, analysed = _session(tmp_path)
        uri = (tmp_path / "doc.py").as_uri()
        _open(send, uri, SOFTMAX)
        assert await _wait_for(writer, 1, 60) is not None
        edited = SOFTMAX + "\nvalue = 1\n"
        _change(send, uri, 2, edited)  # after a pause: analysed at once
        send({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
        got = await _wait_for(writer, 2, 60)
        assert got is not None and [d["code"] for d in got["diagnostics"]] == ["TL103"]
        await asyncio.sleep(0.3)
        assert [t for t, _v in analysed].count(edited) == 1  # not once for the change and once for the save
        assert len(_published(writer, 2)) == 1
        server.worker.shutdown()

    asyncio.run(scenario())


def test_a_burst_of_typing_publishes_its_last_version(tmp_path):
    async def scenario():
        server, writer, send, analysed = _session(tmp_path)
        uri = (tmp_path / "doc.py").as_uri()
        _open(send, uri, SOFTMAX)
        assert await _wait_for(writer, 1, 60) is not None
        text = SOFTMAX
        for version in range(2, 8):
            text = text.replace("dim=-1", "dim=-1 ") if version % 2 else text + "#"
            _change(send, uri, version, text)
            await asyncio.sleep(0.02)
        got = await _wait_for(writer, 7, 60)
        assert got is not None and [d["code"] for d in got["diagnostics"]] == ["TL103"]
        await asyncio.sleep(0.3)
        published = [m["params"]["version"] for m in writer.sent if m.get("method") == "textDocument/publishDiagnostics"]
        assert published == sorted(published) and published[-1] == 7
        assert len(analysed) < 1 + 6  # the burst's middle keystrokes were not all analysed
        server.worker.shutdown()

    asyncio.run(scenario())
