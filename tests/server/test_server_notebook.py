"""Notebook document sync: the cells of a notebook are analysed as one program; findings, quick fixes,
noqa and fix-all are per cell, with positions inside the cell."""
import asyncio

import pytest

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")
pytest.importorskip("torchlint.notebook")

from lsprotocol import types as T  # noqa: E402

from test_server import TIMEOUT, Session, apply  # noqa: E402

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

SETUP = (
    "import torch\n"
    "criterion = torch.nn.CrossEntropyLoss()\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
)
NOTE = "# Training\nThe loop below trains the model."
LOOP = (
    "for x, y in loader:\n"
    "    loss = criterion(torch.softmax(model(x), dim=-1), y)\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)


class NotebookSession(Session):
    async def open_notebook(self, name, cells):
        """cells: (kind, text); returns (notebook uri, cell uris)."""
        nb_uri = (self.root / name).as_uri()
        cell_uris = [f"vscode-notebook-cell:{self.root / name}#cell{i}" for i in range(len(cells))]
        self.nb_version = 1
        self.cell_versions = {u: 1 for u in cell_uris}
        self.client.notebook_document_did_open(
            T.DidOpenNotebookDocumentParams(
                notebook_document=T.NotebookDocument(
                    uri=nb_uri, notebook_type="jupyter-notebook", version=1,
                    cells=[T.NotebookCell(kind=kind, document=u) for (kind, _), u in zip(cells, cell_uris)],
                ),
                cell_text_documents=[
                    T.TextDocumentItem(uri=u, language_id="python" if kind == T.NotebookCellKind.Code else "markdown",
                                       version=1, text=text)
                    for (kind, text), u in zip(cells, cell_uris)
                ],
            )
        )
        return nb_uri, cell_uris

    async def change_cell(self, nb_uri, cell_uri, text):
        self.nb_version += 1
        self.cell_versions[cell_uri] += 1
        self.client.notebook_document_did_change(
            T.DidChangeNotebookDocumentParams(
                notebook_document=T.VersionedNotebookDocumentIdentifier(version=self.nb_version, uri=nb_uri),
                change=T.NotebookDocumentChangeEvent(
                    cells=T.NotebookDocumentCellChanges(
                        text_content=[
                            T.NotebookDocumentCellContentChanges(
                                document=T.VersionedTextDocumentIdentifier(uri=cell_uri, version=self.cell_versions[cell_uri]),
                                changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
                            )
                        ]
                    )
                ),
            )
        )


def test_notebook_cells_are_one_program(tmp_path):
    async def scenario():
        s = NotebookSession(tmp_path)
        init = await s.start()
        assert init.capabilities.notebook_document_sync is not None
        cells = [(T.NotebookCellKind.Code, SETUP), (T.NotebookCellKind.Markup, NOTE), (T.NotebookCellKind.Code, LOOP)]
        nb_uri, uris = await s.open_notebook("train.ipynb", cells)
        loop_diags = await s.next_diagnostics(uris[2], 0)
        assert await s.next_diagnostics(uris[0], 0) == []
        assert uris[1] not in s.published  # markdown: nothing published
        by_code = {d.code: d for d in loop_diags}
        # TL103 needs to know, from the first cell, that `criterion` is a cross-entropy loss
        assert sorted(by_code) == ["TL101", "TL103"]
        ce = by_code["TL103"].range.start
        assert (ce.line, LOOP.split("\n")[ce.line][ce.character:].startswith("torch.softmax(")) == (1, True)

        # the quick fix edits the cell, at positions inside it
        actions = await s.actions(uris[2], LOOP)
        fix = [a for a in actions if a.is_preferred and a.diagnostics[0].code == "TL103"]
        assert list(fix[0].edit.changes) == [uris[2]]
        text = apply(LOOP, fix[0].edit, uris[2])
        assert "criterion(model(x), y)" in text
        before = s.count(uris[2])
        await s.change_cell(nb_uri, uris[2], text)
        assert [d.code for d in await s.next_diagnostics(uris[2], before)] == ["TL101"]

        # noqa in a cell
        actions = await s.actions(uris[2], text)
        noqa = [a for a in actions if a.title == "Suppress TL101 on this line"]
        noqa_text = apply(text, noqa[0].edit, uris[2])
        assert "# noqa: TL101" in noqa_text

        # fix-all edits the cells that change
        actions = await s.actions(uris[0], SETUP, only=["source.fixAll.torchlint"])
        assert len(actions) == 1 and list(actions[0].edit.changes) == [uris[2]]
        fixed = apply(text, actions[0].edit, uris[2])
        assert "optimizer.zero_grad()" in fixed
        before = s.count(uris[2])
        await s.change_cell(nb_uri, uris[2], fixed)
        assert await s.next_diagnostics(uris[2], before) == []

        # closing clears every cell
        before = s.count(uris[2])
        s.client.notebook_document_did_close(
            T.DidCloseNotebookDocumentParams(
                notebook_document=T.NotebookDocumentIdentifier(uri=nb_uri),
                cell_text_documents=[T.TextDocumentIdentifier(uri=u) for u in uris],
            )
        )
        assert await s.next_diagnostics(uris[2], before) == []
        await s.stop()

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT * 2))
