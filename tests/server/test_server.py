"""End to end: the real ``torchlint server`` process, driven over stdio by a real LSP client (pytest-lsp)."""
import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as T  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, LanguageClient, register_lsp_features  # noqa: E402

from conftest import CE_BUG, TRAIN_BUG  # noqa: E402

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each


BOTH = "import torch.nn.functional as F\n" + TRAIN_BUG + "\n\n" + CE_BUG.split("\n\n\n", 1)[1]
TIMEOUT = 120


class Session:
    """A client with a record of every publishDiagnostics, keyed by uri, in arrival order."""

    def __init__(self, root):
        self.root = root
        self.published = {}
        self.versions = {}
        self.registrations = []
        self.client = LanguageClient(converter_factory=default_converter)
        features = dict(DEFAULT_CLIENT_FEATURES)

        def on_publish(params):
            self._on_publish(params)

        features[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish

        def on_register(params):
            self.registrations.extend(params.registrations)

        features[T.CLIENT_REGISTER_CAPABILITY] = on_register
        register_lsp_features(self.client, features)
        self.arrived = asyncio.Event()

    def _on_publish(self, params):
        self.published.setdefault(params.uri, []).append(params)
        self.arrived.set()

    async def start(self, init_options=None, watch=True, command=None):
        command = command or [sys.executable, "-m", "torchlint", "server"]
        await self.client.start_io(*command, cwd=str(self.root))
        caps = T.ClientCapabilities(
            workspace=T.WorkspaceClientCapabilities(
                did_change_watched_files=T.DidChangeWatchedFilesClientCapabilities(dynamic_registration=watch),
                workspace_folders=True,
            ),
            text_document=T.TextDocumentClientCapabilities(
                code_action=T.CodeActionClientCapabilities(
                    code_action_literal_support=T.ClientCodeActionLiteralOptions(
                        code_action_kind=T.ClientCodeActionKindOptions(value_set=["quickfix", "source"])
                    )
                ),
                publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True),
            ),
            notebook_document=T.NotebookDocumentClientCapabilities(
                synchronization=T.NotebookDocumentSyncClientCapabilities()
            ),
        )
        return await self.client.initialize_session(
            T.InitializeParams(
                capabilities=caps,
                root_uri=self.root.as_uri(),
                workspace_folders=[T.WorkspaceFolder(uri=self.root.as_uri(), name="ws")],
                initialization_options=init_options,
            )
        )

    async def diagnostics(self, uri, version):
        """The diagnostics published for ``version`` of the document (waits for them)."""

        async def wait():
            while True:
                for p in self.published.get(uri, []):
                    if p.version == version:
                        return list(p.diagnostics)
                self.arrived.clear()
                await self.arrived.wait()

        return await asyncio.wait_for(wait(), TIMEOUT)

    async def next_diagnostics(self, uri, after):
        """The first diagnostics published for ``uri`` after the ``after``-th publication."""

        async def wait():
            while len(self.published.get(uri, [])) <= after:
                self.arrived.clear()
                await self.arrived.wait()
            return list(self.published[uri][after].diagnostics)

        return await asyncio.wait_for(wait(), TIMEOUT)

    def count(self, uri):
        return len(self.published.get(uri, []))

    async def open(self, name, text, version=1):
        path = self.root / name
        path.write_text(text)
        uri = path.as_uri()
        self.versions[uri] = version
        self.client.text_document_did_open(
            T.DidOpenTextDocumentParams(
                text_document=T.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )
        return uri, await self.diagnostics(uri, version)

    async def change(self, uri, text):
        self.versions[uri] += 1
        version = self.versions[uri]
        self.client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.diagnostics(uri, version)

    async def actions(self, uri, text, only=None):
        lines = text.split("\n")
        got = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                T.CodeActionParams(
                    text_document=T.TextDocumentIdentifier(uri=uri),
                    range=T.Range(start=T.Position(line=0, character=0), end=T.Position(line=len(lines), character=0)),
                    context=T.CodeActionContext(diagnostics=[], only=only),
                )
            ),
            TIMEOUT,
        )
        return None if got is None else list(got)

    async def raw(self, message):
        """Write one message on the server's stdin, bypassing the client's checks."""
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.client._server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await self.client._server.stdin.drain()

    async def stop(self):
        await asyncio.wait_for(self.client.shutdown_session(), TIMEOUT)
        code = self.client._server.returncode if self.client._server else None
        await self.client.stop()
        return code


def apply(text, edit, uri):
    """Apply a WorkspaceEdit's text edits for ``uri`` (UTF-16 positions) to ``text``."""
    edits = edit.changes[uri]
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos):
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = 0
        for i, ch in enumerate(line):
            if units >= pos.character:
                return starts[min(pos.line, len(starts) - 1)] + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return (starts[pos.line] + len(line)) if pos.line < len(starts) else len(text)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


def run(coro):
    return asyncio.run(coro)


def _cli_fix(tmp_path, text, name="doc.py"):
    res = subprocess.run(
        [sys.executable, "-m", "torchlint", "--fix", "--stdin-filename", name, "-"],
        input=text, capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    return res.stdout


def test_diagnostics_quick_fixes_hover_and_shutdown(tmp_path):
    async def scenario():
        s = Session(tmp_path)
        init = await s.start()
        assert init.server_info.name == "torchlint"
        assert FIX_ALL in init.capabilities.code_action_provider.code_action_kinds
        uri, diags = await s.open("train.py", BOTH)
        by_code = {d.code: d for d in diags}
        assert sorted(by_code) == ["TL101", "TL103"]
        for d in diags:
            assert d.source == "torchlint"
            assert d.severity == T.DiagnosticSeverity.Warning
            assert d.code_description is None  # no docs-url configured: no link, the page is in the hover
            assert d.message.startswith("[*] ")
            assert d.data["fix"]["applicability"] == "safe"
        ce = by_code["TL103"]
        line = BOTH.split("\n")[ce.range.start.line]
        assert line[ce.range.start.character:].startswith("torch.softmax(")

        hover = await s.client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=uri), position=ce.range.start)
        )
        assert "(TL103)" in hover.contents.value and "Fix is available" in hover.contents.value
        assert "## What it does" in hover.contents.value and "file://" not in hover.contents.value

        # apply each finding's quick fix in turn: the document ends clean, and equals the CLI's --fix
        text = BOTH
        for _ in range(5):
            actions = await s.actions(uri, text)
            fixes = [a for a in actions if a.kind == T.CodeActionKind.QuickFix and a.is_preferred]
            if not fixes:
                break
            text = apply(text, fixes[0].edit, uri)
            diags = await s.change(uri, text)
        assert diags == []
        assert text == _cli_fix(tmp_path, BOTH)

        code = await s.stop()
        assert code == 0

    run(scenario())


def test_docs_url_links_diagnostics_and_hover(tmp_path):
    """With `docs-url`, the code link of each diagnostic and the hover's link are the project's pages."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ndocs-url = "https://docs.example.org/{code}.html"\n')

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("train.py", BOTH)
        assert {d.code_description.href for d in diags} == {
            "https://docs.example.org/TL101.html", "https://docs.example.org/TL103.html"}
        ce = [d for d in diags if d.code == "TL103"][0]
        hover = await s.client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=uri), position=ce.range.start)
        )
        assert "[Rule page](https://docs.example.org/TL103.html)" in hover.contents.value
        assert await s.stop() == 0

    run(scenario())


FIX_ALL = "source.fixAll.torchlint"


def test_fix_all_and_noqa_actions(tmp_path):
    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("my train #1.py", BOTH)  # a uri with escapes
        assert "%20" in uri and len(diags) == 2
        actions = await s.actions(uri, BOTH, only=[FIX_ALL])
        assert [a.kind for a in actions] == [FIX_ALL]
        fixed = apply(BOTH, actions[0].edit, uri)
        assert fixed == _cli_fix(tmp_path, BOTH)
        assert await s.change(uri, fixed) == []
        assert await s.actions(uri, fixed, only=[FIX_ALL]) == []

        # "Suppress TL103 on this line" adds a noqa comment, then extends it for a second code
        text = BOTH
        assert await s.change(uri, text) != []
        actions = await s.actions(uri, text)
        noqa = [a for a in actions if a.title == "Suppress TL103 on this line"]
        assert len(noqa) == 1
        text = apply(text, noqa[0].edit, uri)
        assert "target)  # noqa: TL103\n" in text
        diags = await s.change(uri, text)
        assert [d.code for d in diags] == ["TL101"]
        text = text.replace("  # noqa: TL103", "  # noqa: E501")
        assert sorted(d.code for d in await s.change(uri, text)) == ["TL101", "TL103"]
        actions = await s.actions(uri, text)
        noqa = [a for a in actions if a.title == "Suppress TL103 on this line"]
        text = apply(text, noqa[0].edit, uri)
        assert "# noqa: E501, TL103\n" in text
        assert [d.code for d in await s.change(uri, text)] == ["TL101"]
        await s.stop()

    run(scenario())


def test_configuration_is_read_and_reloaded(tmp_path):
    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("train.py", BOTH)
        assert sorted(d.code for d in diags) == ["TL101", "TL103"]
        # the server asked to be told about configuration files
        for _ in range(200):
            if s.registrations:
                break
            await asyncio.sleep(0.05)
        globs = [w["globPattern"] for r in s.registrations for w in r.register_options["watchers"]]
        assert sorted(globs) == ["**/.torchlint.toml", "**/environment.yml", "**/pyproject.toml", "**/requirements.txt",
                                 "**/setup.cfg", "**/setup.py", "**/torchlint.toml"]
        before = s.count(uri)
        (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL103"]\nextend-exclude = ["gen_*.py"]\n')
        s.client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=T.FileChangeType.Created)]
            )
        )
        diags = await s.next_diagnostics(uri, before)
        assert [d.code for d in diags] == ["TL101"]
        # excluded by the configuration: nothing reported
        _, diags = await s.open("gen_model.py", BOTH)
        assert diags == []
        # a broken configuration is reported, and the server keeps running
        before = s.count(uri)
        (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nselect = [\n")
        s.client.workspace_did_change_watched_files(
            T.DidChangeWatchedFilesParams(
                changes=[T.FileEvent(uri=(tmp_path / "pyproject.toml").as_uri(), type=T.FileChangeType.Changed)]
            )
        )
        diags = await s.next_diagnostics(uri, before)
        assert len(diags) == 1 and "configuration error" in diags[0].message
        # editor settings: unsafe fixes marked applicable
        (tmp_path / "pyproject.toml").unlink()
        before = s.count(uri)
        s.client.workspace_did_change_configuration(
            T.DidChangeConfigurationParams(settings={"torchlint": {"unsafeFixes": True}})
        )
        diags = await s.next_diagnostics(uri, before)
        assert sorted(d.code for d in diags) == ["TL101", "TL103"]
        assert await s.stop() == 0

    run(scenario())


def test_the_declared_torch_version_follows_edits_of_the_requirements(tmp_path):
    # target-torch = "auto" reads the project's requirements, as the command line does; the server keeps
    # one project for the workspace and reads them again when they change
    (tmp_path / "requirements.txt").write_text("torch>=2.0\n")
    loads = "import torch\nstate = torch.load('w.pt')\n"

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("load.py", loads)
        assert [d.code for d in diags] == ["TL501"]
        for requirement, expected in (("torch>=2.6\n", []), ("torch>=1.13\n", ["TL501"])):
            before = s.count(uri)
            (tmp_path / "requirements.txt").write_text(requirement)
            s.client.workspace_did_change_watched_files(
                T.DidChangeWatchedFilesParams(
                    changes=[T.FileEvent(uri=(tmp_path / "requirements.txt").as_uri(), type=T.FileChangeType.Changed)]
                )
            )
            assert [d.code for d in await s.next_diagnostics(uri, before)] == expected
        assert await s.stop() == 0

    run(scenario())


def test_malformed_requests_and_unparsable_documents_do_not_kill_the_server(tmp_path):
    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("broken.py", "import torch\ndef f(:\n    return\n")
        assert [d.code for d in diags] == ["TL000"]
        assert diags[0].severity == T.DiagnosticSeverity.Error
        assert await s.actions(uri, "import torch\ndef f(:\n") == []
        # a document that parses in neither direction, deep nesting, a lone surrogate-free mess of bytes
        for text in ["torch" + "(" * 5000, "torch = [" * 300 + "]" * 300, "torch\x00\x01 if", "class torch", "😋 = torch.softmax(\n"]:
            assert [d.code for d in await s.change(uri, text)] == ["TL000"]
        # requests with the wrong parameters, unknown methods, notifications with nonsense in them
        await s.raw({"jsonrpc": "2.0", "id": "bad-1", "method": "textDocument/codeAction", "params": {"bogus": 1}})
        await s.raw({"jsonrpc": "2.0", "id": "bad-2", "method": "torchlint/nothing", "params": [1, 2]})
        await s.raw({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": 3}})
        await s.raw({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}})
        await s.raw({"jsonrpc": "2.0", "id": "bad-3", "method": "textDocument/hover", "params": None})
        # a document that is not Python is not analysed, even when asked for code actions
        other = (tmp_path / "notes.md").as_uri()
        s.client.text_document_did_open(
            T.DidOpenTextDocumentParams(
                text_document=T.TextDocumentItem(uri=other, language_id="markdown", version=1, text=BOTH)
            )
        )
        assert await s.actions(other, BOTH) is None
        assert other not in s.published
        never = (tmp_path / "never.py").as_uri()
        assert await s.actions(never, "") is None
        hover = await s.client.text_document_hover_async(
            T.HoverParams(text_document=T.TextDocumentIdentifier(uri=never), position=T.Position(line=99, character=99))
        )
        assert hover is None
        # bytes that are not JSON at all
        await s.raw(b"{this is not json")
        # still alive and still right
        diags = await s.change(uri, BOTH)
        assert sorted(d.code for d in diags) == ["TL101", "TL103"]
        assert await s.stop() == 0

    run(scenario())


def test_stale_results_are_dropped(tmp_path):
    """Many changes in a row: only the last version's diagnostics are published for it, and nothing
    is published for a version after a newer one was sent."""

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, _ = await s.open("train.py", BOTH)
        text = BOTH
        for i in range(8):
            text = text + f"\nvalue_{i} = {i}\n"
            s.versions[uri] += 1
            s.client.text_document_did_change(
                T.DidChangeTextDocumentParams(
                    text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=s.versions[uri]),
                    content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        last = s.versions[uri]
        diags = await s.diagnostics(uri, last)
        assert sorted(d.code for d in diags) == ["TL101", "TL103"]
        versions = [p.version for p in s.published[uri]]
        assert versions == sorted(versions)
        assert len(versions) < 1 + 8  # the debounce merged the burst
        await s.stop()

    run(scenario())


def test_server_without_pygls_reports_the_extra(tmp_path):
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pygls"] = None
        sys.modules["pygls.lsp.server"] = None
        sys.argv = ["torchlint", "server"]
        from torchlint.cli import main
        main()
        """
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2
    # the extra and its packages, never a package-index release that does not exist
    assert "`lsp` extra" in res.stderr and "pygls" in res.stderr and "pip install 'torchlint" not in res.stderr


def test_positions_are_utf16_and_quick_fix_edits_land_right(tmp_path):
    text = (
        "import torch\nimport torch.nn.functional as F\n\n\n"
        "def loss_fn(logits, target):\n"
        '    label = "😋é"; return F.cross_entropy(torch.softmax(logits, dim=-1), target)\n'
    )

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("emoji.py", text)
        assert [d.code for d in diags] == ["TL103"]
        line = text.split("\n")[5]
        start = line.index("torch.softmax")
        assert diags[0].range.start.character == start + 1  # the emoji is two UTF-16 units
        actions = await s.actions(uri, text)
        fix = [a for a in actions if a.is_preferred]
        fixed = apply(text, fix[0].edit, uri)
        assert 'label = "😋é"; return F.cross_entropy(logits, target)\n' in fixed
        assert await s.change(uri, fixed) == []
        await s.stop()

    run(scenario())


def test_requests_are_answered_while_a_workspace_is_being_analysed(tmp_path):
    """Opening many files queues their analysis in the background; a code action on one of them is
    answered before that queue has drained (it is analysed first), with the right fixes."""
    count = 60

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uris = []
        for i in range(count):
            path = tmp_path / f"m{i}.py"
            path.write_text(BOTH)
            uri = path.as_uri()
            uris.append(uri)
            s.versions[uri] = 1
            s.client.text_document_did_open(
                T.DidOpenTextDocumentParams(
                    text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=BOTH)
                )
            )
        actions = await s.actions(uris[-1], BOTH)
        done_before = sum(1 for u in uris if s.count(u))
        assert sorted(a.diagnostics[0].code for a in actions if a.is_preferred) == ["TL101", "TL103"]
        assert done_before < count - 1
        for uri in uris:
            assert sorted(d.code for d in await s.diagnostics(uri, 1)) == ["TL101", "TL103"]
        await s.stop()

    run(scenario())


def test_unsafe_fixes_are_labelled_and_follow_the_setting(tmp_path):
    from torchlint.rules import all_rules

    rule = next(r for r in all_rules() if r.CODE == "TL104")
    case = next(c for c in rule.INVALID if c.unsafe and c.fixed and not c.options)

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        uri, diags = await s.open("fit.py", case.code)
        tl104 = [d for d in diags if d.code == "TL104"]
        assert tl104 and tl104[0].data["fix"]["applicability"] == "unsafe"
        assert not tl104[0].message.startswith("[*]")  # not applicable without unsafe fixes
        actions = await s.actions(uri, case.code)
        unsafe = [a for a in actions if a.diagnostics[0].code == "TL104" and a.title.startswith("Unsafe fix: ")]
        assert len(unsafe) == 1 and not unsafe[0].is_preferred
        assert apply(case.code, unsafe[0].edit, uri) == case.fixed
        assert await s.actions(uri, case.code, only=[FIX_ALL]) == []  # fix-all: safe fixes only
        before = s.count(uri)
        s.client.workspace_did_change_configuration(
            T.DidChangeConfigurationParams(settings={"torchlint": {"unsafeFixes": True}})
        )
        diags = await s.next_diagnostics(uri, before)
        assert [d for d in diags if d.code == "TL104"][0].message.startswith("[*] ")
        actions = await s.actions(uri, case.code, only=[FIX_ALL])
        assert [a.title for a in actions] == ["Fix all torchlint problems (unsafe fixes included)"]
        assert apply(case.code, actions[0].edit, uri) == case.fixed
        await s.stop()

    run(scenario())


def test_a_file_that_hangs_or_kills_its_worker_is_reported_and_the_server_lives_on(tmp_path):
    """The analysis runs under the watchdog: a file past its time budget, or one whose analysis kills the
    process analysing it, is one TL000 finding; the next files are analysed as usual."""
    from pathlib import Path

    tests = str(Path(__file__).resolve().parents[1])
    launcher = (
        f"import sys; sys.path.insert(0, {tests!r}); import watchdog_rules; watchdog_rules.install(); "
        "from torchlint.lsp.server import main; main()"
    )
    (tmp_path / "torchlint.toml").write_text("file-timeout = 2\n")

    async def scenario():
        s = Session(tmp_path)
        await s.start(command=[sys.executable, "-c", launcher])
        _, diags = await s.open("sleepy.py", "import torch\nSLEEP_FOREVER = 1\n")
        assert [d.code for d in diags] == ["TL000"] and "longer than" in diags[0].message
        _, diags = await s.open("killer.py", "import torch\nKILL_WORKER = 1\n")
        assert [d.code for d in diags] == ["TL000"] and "stopped the worker" in diags[0].message
        _, diags = await s.open("train.py", BOTH)
        assert sorted(d.code for d in diags) == ["TL101", "TL103"]
        assert await s.stop() == 0

    run(scenario())


MODELS = textwrap.dedent(
    """\
    import torch.nn as nn
    import torch.nn.functional as F


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return F.softmax(self.fc(x), dim=1)
    """
)
TRAINS = textwrap.dedent(
    """\
    import torch.nn as nn

    from models import Net

    net = Net()
    criterion = nn.CrossEntropyLoss()


    def step(x, y):
        return criterion(net(x), y)
    """
)


def test_editing_an_imported_model_reanalyses_the_files_that_import_it(tmp_path):
    # train.py imports models.Net, whose forward ends in softmax: TL103 on the loss in train.py. Editing
    # models.py in the editor (unsaved) re-analyses train.py with the buffer's text, not the file on
    # disk; closing models.py unsaved brings the file on disk back.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        models_uri, _ = await s.open("models.py", MODELS)
        train_uri, diags = await s.open("train.py", TRAINS)
        assert [d.code for d in diags] == ["TL103"]
        seen = s.count(train_uri)
        await s.change(models_uri, MODELS.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)"))
        assert await s.next_diagnostics(train_uri, seen) == []  # train.py, not edited, is clean now
        seen = s.count(train_uri)
        await s.change(models_uri, MODELS)
        assert [d.code for d in await s.next_diagnostics(train_uri, seen)] == ["TL103"]
        seen = s.count(train_uri)
        await s.change(models_uri, MODELS.replace("F.softmax(self.fc(x), dim=1)", "self.fc(x)"))
        assert await s.next_diagnostics(train_uri, seen) == []
        seen = s.count(train_uri)
        s.client.text_document_did_close(
            T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=models_uri))
        )
        # the unsaved edit is gone with the buffer: models.py on disk still ends in softmax
        assert [d.code for d in await s.next_diagnostics(train_uri, seen)] == ["TL103"]
        assert await s.stop() == 0

    run(scenario())


AUX_MODEL = textwrap.dedent(
    """\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.aux_head = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
    """
)
AUX_TRAIN = "from model import Net\n\nmodel = Net()\nout = model(1)\n"


def test_a_layer_read_in_another_buffer_clears_the_unused_submodule_finding(tmp_path):
    # TL602 on model.py depends on what every file of the project reads: editing train.py (unsaved) to
    # read the layer re-analyses model.py, and the finding goes; taking the read out brings it back
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "train.py").write_text(AUX_TRAIN)

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        model_uri, diags = await s.open("model.py", AUX_MODEL)
        assert [d.code for d in diags] == ["TL602"]
        train_uri, _ = await s.open("train.py", AUX_TRAIN)
        seen = s.count(model_uri)
        await s.change(train_uri, AUX_TRAIN + "aux = model.aux_head(out)\n")
        assert await s.next_diagnostics(model_uri, seen) == []
        seen = s.count(model_uri)
        await s.change(train_uri, AUX_TRAIN)
        assert [d.code for d in await s.next_diagnostics(model_uri, seen)] == ["TL602"]
        assert await s.stop() == 0

    run(scenario())


def test_an_unrelated_edit_does_not_reanalyse_other_documents(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        await s.open("models.py", MODELS)
        train_uri, _ = await s.open("train.py", TRAINS)
        other_uri, _ = await s.open("other.py", "import torch\n")
        seen = s.count(train_uri)
        await s.change(other_uri, "import torch\nx = 1\n")
        await s.change(other_uri, "import torch\nx = 2\n")
        assert s.count(train_uri) == seen  # train.py never read other.py
        assert await s.stop() == 0

    run(scenario())
