"""``torchlint server``: a language server (LSP 3.17 over stdio, built on pygls).

Diagnostics are published on open, on change (debounced, :func:`debounce_delay`) and on save.  Analysis
runs in a worker thread, one document at a time, off the thread that answers requests; a result is
published only if the document is still at the version that was analysed (stale results are dropped).
An analysis asked for a text already being analysed (a save right after the change it saves) waits
for that analysis instead of starting another one.  Code actions: each finding's fix
(unsafe ones labelled as such), ``source.fixAll.torchlint`` (every applicable fix) and "Suppress TLnnn on
this line".  Hovering a finding shows its rule's page.  Configuration comes from ``pyproject.toml`` /
``torchlint.toml`` as for the CLI and is read again when such a file changes.

Every document is analysed on its own: a change re-analyses that document only.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from urllib.parse import unquote
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from torchlint import __version__
from torchlint.analysis.project import among_sources
from torchlint.engine import PARSE_ERROR, Diagnostic
from torchlint.lsp.documents import (
    CONFIG_NAMES,
    NOTEBOOK_SUFFIX,
    Analysis,
    Cell,
    ConfigStore,
    TextEdit,
    UserSettings,
    analyse,
    diagnostic_range,
    fix_all,
    fix_edit,
    is_applicable,
    minimal_edit,
    noqa_edit,
    notebook_cells,
    notebook_text,
    rule_page,
    split_lines,
)
from torchlint.lsp.worker import BACKGROUND, INTERACTIVE, PriorityWorker
from torchlint.report import rule_url
from torchlint.selection import NotLinted

log = logging.getLogger("torchlint.lsp")

FIX_ALL_KIND = "source.fixAll.torchlint"
DEBOUNCE_S = 0.15  # the longest wait after a change before its analysis starts
PAUSE_S = 0.5  # a change this long after the one before starts a burst of typing: analysed at once
MIN_DEBOUNCE_S = 0.02  # within a burst: changes arriving together (a client's batch) are analysed once


def debounce_delay(gap: Optional[float], cost: Optional[float], longest: float = DEBOUNCE_S) -> float:
    """How long to wait after a change before analysing it, given ``gap``, the seconds since the
    document's change before it (None: none yet), and ``cost``, the seconds its last analysis took
    (None: not analysed yet).

    The wait exists to skip analyses that the next keystroke makes useless (an analysis that started
    cannot be stopped: the next one waits for it).  The first change after a pause is analysed at
    once.  Within a burst of typing, waiting longer than the next keystroke is expected (1.5 times the
    gap just seen) skips nothing more, and waiting longer than an analysis takes delays the result by
    more than the analysis it may save; so the wait is the smaller of the two, at least
    :data:`MIN_DEBOUNCE_S` and at most ``longest``."""
    if gap is None or gap >= PAUSE_S:
        return 0.0
    expected = 1.5 * gap
    worth = cost if cost is not None else longest
    return min(longest, max(MIN_DEBOUNCE_S, min(expected, worth)))


PY_SUFFIXES = (".py", ".pyi")


@dataclass
class _DocState:
    generation: int = 0
    pending: Optional["asyncio.Task[Any]"] = None
    result: Optional[Analysis] = None
    result_generation: int = -1
    result_epoch: int = -1  # the configuration epoch the result was computed under
    with_edits: Optional[Tuple[Analysis, Analysis]] = None  # (result, result with each fix's edits)
    stale: bool = False  # a project file the last result read has changed since
    last_change: Optional[float] = None  # time.monotonic() of the last change
    cost: Optional[float] = None  # seconds the last analysis took in the worker
    #: the analysis being computed: (text, configuration epoch, priority, its future); a request for
    #: the same text under the same configuration, no more urgent, waits for it instead of starting another
    inflight: Optional[Tuple[str, int, int, "asyncio.Future[Any]"]] = None


class TorchlintServer(LanguageServer):
    def __init__(self, supervisor: Any = None) -> None:
        super().__init__(
            "torchlint",
            __version__,
            text_document_sync_kind=T.TextDocumentSyncKind.Full,
            protocol_cls=_Protocol,
            notebook_document_sync=T.NotebookDocumentSyncOptions(
                notebook_selector=[
                    T.NotebookDocumentFilterWithNotebook(
                        notebook=T.NotebookDocumentFilterNotebookType(notebook_type="jupyter-notebook"),
                        cells=[T.NotebookCellLanguage(language="python")],
                    ),
                    T.NotebookDocumentFilterWithNotebook(
                        notebook=T.NotebookDocumentFilterPattern(pattern="**/*.ipynb"),
                        cells=[T.NotebookCellLanguage(language="python")],
                    ),
                ],
                save=True,
            ),
        )
        from torchlint.rules import all_rules

        self.rules = {r.CODE: r for r in all_rules()}
        self.configs = ConfigStore(list(self.rules.values()))
        self.configs.project.parse_edits()  # (where documents are analysed in this process)
        self.user = UserSettings()
        self.supervisor = supervisor  # the watchdog's worker process (None: analyse in this process)
        self.worker = PriorityWorker()
        self.states: Dict[str, _DocState] = {}
        self.shown_errors: set = set()
        self.debounce = DEBOUNCE_S  # the longest debounce (see debounce_delay)
        self.epoch = 0  # bumped when any configuration (files or editor settings) changes

    # -- documents --------------------------------------------------------------------------------
    def wants(self, uri: str, language_id: Optional[str]) -> bool:
        path = to_fs_path(uri) or uri
        if _is_notebook_file(uri):  # a notebook opened as a plain text (JSON) document
            return True
        if language_id is not None:
            return language_id == "python"
        return path.endswith(PY_SUFFIXES)

    def workspace_folders(self) -> List[str]:
        folders = []
        for folder in self.workspace.folders.values():
            fs = to_fs_path(folder.uri)
            if fs:
                folders.append(os.path.abspath(fs))
        return folders

    def fallback_root(self, path: Optional[str]) -> str:
        folders = self.workspace_folders()
        if path:
            inside = [f for f in folders if os.path.abspath(path).startswith(f.rstrip(os.sep) + os.sep)]
            if inside:
                return max(inside, key=len)
            return os.path.dirname(os.path.abspath(path))
        if folders:
            return folders[0]
        root = self.workspace.root_path
        return root or os.getcwd()

    def is_open(self, uri: str) -> bool:
        key = unquote(uri)
        return key in self.workspace.text_documents or key in self.workspace.notebook_documents

    def notebook(self, uri: str) -> Optional[T.NotebookDocument]:
        return self.workspace.notebook_documents.get(unquote(uri))

    def snapshot(self, uri: str) -> Optional[Tuple[Optional[str], str, str, Optional[int], Optional[List[Cell]]]]:
        """(path on disk, display name, text, version, cells) of an open document or notebook; None if it
        is not open.  A notebook's text is a notebook file made of its cells (``cells`` says which cell
        document each one is)."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        nb = self.notebook(uri)
        if nb is not None:
            cells: List[Cell] = []
            for c in nb.cells:
                doc = self.workspace.text_documents.get(unquote(c.document))
                text = doc.source if doc is not None else ""
                code = c.kind == T.NotebookCellKind.Code and (doc is None or doc.language_id in (None, "python"))
                cells.append(Cell(c.document, code, text))
            name = path if path and path.endswith(NOTEBOOK_SUFFIX) else (path or uri) + NOTEBOOK_SUFFIX
            return path, name, notebook_text(cells), nb.version, cells
        if unquote(uri) not in self.workspace.text_documents:
            return None
        doc = self.workspace.get_text_document(uri)
        return path, path or uri, doc.source, doc.version, None

    def compute(self, path: Optional[str], name: str, text: str, version: Optional[int], root: str,
                overlay: Optional[Dict[str, str]] = None) -> Analysis:
        """Analyse one snapshot of a document (runs in the worker)."""
        t0 = time.perf_counter()
        # a workspace folder is the project of the files under it that no project marker claims
        self.configs.project.use_fallback_roots(self.workspace_folders())
        result = analyse(name, text, version, self.configs.resolve(path, root), supervisor=self.supervisor,
                         overlay=overlay)
        result.seconds = time.perf_counter() - t0
        return result

    def change_delay(self, uri: str) -> float:
        """The debounce of a change of ``uri`` happening now (:func:`debounce_delay`)."""
        state = self.states.get(uri)
        if state is None:
            return self.debounce
        now = time.monotonic()
        gap = None if state.last_change is None else now - state.last_change
        state.last_change = now
        return debounce_delay(gap, state.cost, self.debounce)

    def overlay(self, path: Optional[str]) -> Dict[str, str]:
        """The editor's texts of the open Python files other than ``path`` (absolute path -> text): the
        program model reads them instead of the files on disk, saved or not."""
        own = os.path.abspath(path) if path else None
        out: Dict[str, str] = {}
        for key, doc in self.workspace.text_documents.items():
            if not key.startswith("file:"):
                continue
            fs = to_fs_path(key)
            if not fs or not fs.endswith(PY_SUFFIXES):
                continue
            full = os.path.abspath(fs)
            if full != own:
                out[full] = doc.source
        return out

    def dependents_changed(self, uri: str, delay: float) -> None:
        """``uri`` changed (in the editor or on disk): re-analyse the open documents whose last analysis
        read it -- the files importing a model whose ``forward`` was edited, a model file whose layers
        another file of the project may read -- and nothing else."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if not path:
            return
        full = os.path.abspath(path)
        for other, state in list(self.states.items()):
            if other == uri or state.result is None:
                continue
            deps = state.result.dependencies
            # a file of a project whose whole file list an answer read (TL602: reads of a layer elsewhere)
            if full not in deps and not any(among_sources(d, full) for d in deps if os.path.isdir(d)):
                continue
            if self.is_open(other):
                state.stale = True
                self.schedule(other, delay, BACKGROUND)

    async def edits_for(self, uri: str, result: Analysis) -> Optional[Analysis]:
        """``result`` computed again with the edits of its fixes (cached for that result)."""
        state = self.states.get(uri)
        if state is None or state.result is not result:
            return None
        if state.with_edits is not None and state.with_edits[0] is result:
            return state.with_edits[1]
        snap = self.snapshot(uri)
        if snap is None:
            return None
        try:
            full = await asyncio.wrap_future(
                self.worker.submit(
                    INTERACTIVE, analyse, snap[1], result.text, result.version, result.config, True, self.supervisor,
                    self.overlay(snap[0]),
                )
            )
        except Exception as exc:  # never lose the server to one document
            self.log(f"analysis of {uri} failed: {type(exc).__name__}: {exc}", T.MessageType.Error)
            return None
        full.cells = result.cells
        if state.result is result:
            state.with_edits = (result, full)
        return full

    def schedule(self, uri: str, delay: float, priority: int = INTERACTIVE) -> None:
        state = self.states.setdefault(uri, _DocState())
        state.generation += 1
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
        state.pending = asyncio.ensure_future(self._run(uri, state.generation, delay, priority))

    async def _run(self, uri: str, generation: int, delay: float, priority: int) -> None:
        if delay:
            await asyncio.sleep(delay)
        result = await self.analysis_for(uri, generation, priority)
        if result is not None:
            self.publish(uri, result)

    async def analysis_for(
        self, uri: str, generation: Optional[int] = None, priority: int = INTERACTIVE
    ) -> Optional[Analysis]:
        """The analysis of the document's current text: cached when still current, else computed now.
        None when the document changed (or closed) while it was being analysed."""
        state = self.states.get(uri)
        if state is None:
            if not self.is_open(uri):  # closed: nothing is kept for it
                return None
            state = self.states.setdefault(uri, _DocState())
        if generation is None:
            generation = state.generation
        doc_version = self.current_version(uri)
        cached = state.result
        if cached is not None and state.result_generation == generation and cached.version == doc_version:
            return cached
        snap = self.snapshot(uri)
        if snap is None:
            return None
        path, name, text, version, cells = snap
        epoch = self.epoch
        if cached is not None and state.result_epoch == epoch and cached.text == text and not state.stale:
            # same text under the same configuration (a save after the edit was analysed): reuse
            result = replace(cached, version=version)
            state.result, state.result_generation = result, generation
            return result
        stale, state.stale = state.stale, False
        running = state.inflight
        if running is not None and running[3].done():
            running = state.inflight = None
        if running is not None and running[:2] == (text, epoch) and running[2] <= priority and not stale:
            job = running[3]  # the same text is being analysed (a save after its change): wait for it
        else:
            if running is not None and running[0] != text:
                running[3].cancel()  # another text: skipped if the worker has not started it
            job = asyncio.wrap_future(
                self.worker.submit(
                    priority, self.compute, path, name, text, version, self.fallback_root(path), self.overlay(path)
                )
            )
            state.inflight = (text, epoch, priority, job)
        try:
            # shielded: a newer request cancelling this one leaves the job to whoever waits for it
            result = await asyncio.shield(job)
        except asyncio.CancelledError:
            if job.cancelled():  # the job was dropped for a newer text: nothing to answer with
                return None
            raise
        except Exception as exc:  # never lose the server to one document
            log.exception("analysis of %s failed", uri)
            self.log(f"analysis of {uri} failed: {type(exc).__name__}: {exc}", T.MessageType.Error)
            return None
        if result is not None:
            state.cost = result.seconds
            if result.version != version:  # the same text at another version (joined, or undone and redone)
                result = replace(result, version=version)
        if result is None or state.generation != generation or self.current_version(uri) != result.version:
            return None  # stale: a newer analysis is on its way
        if self.states.get(uri) is not state:
            return None  # closed meanwhile: forgotten
        for err in result.errors:
            self.log(err, T.MessageType.Error)
        if result.config.error and result.config.error not in self.shown_errors:
            self.shown_errors.add(result.config.error)
            self.window_show_message(
                T.ShowMessageParams(type=T.MessageType.Error, message=f"torchlint: {result.config.error}")
            )
        result.cells = cells
        state.result = result
        state.result_generation = generation
        state.result_epoch = epoch if self.epoch == epoch else -1
        return result

    def current_version(self, uri: str) -> Optional[int]:
        nb = self.notebook(uri)
        if nb is not None:
            return nb.version
        if unquote(uri) not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri).version

    def forget(self, uri: str, cell_uris: Sequence[str] = ()) -> None:
        state = self.states.pop(uri, None)
        if state is not None and state.pending is not None and not state.pending.done():
            state.pending.cancel()
        if state is not None and state.inflight is not None:
            state.inflight[3].cancel()  # skipped if the worker has not started it
        targets = list(cell_uris) or [uri]
        if state is not None and state.result is not None and state.result.cells:
            targets = list(dict.fromkeys(targets + [c.uri for c in state.result.cells]))
        for target in targets:
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=target, diagnostics=[]))

    def reanalyse_all(self) -> None:
        for uri in list(self.states):
            if self.is_open(uri):
                self.schedule(uri, 0, BACKGROUND)

    def config_changed(self) -> None:
        self.epoch += 1
        self.configs.clear()
        self.shown_errors.clear()
        self.reanalyse_all()

    def log(self, message: str, kind: T.MessageType = T.MessageType.Info) -> None:
        try:
            self.window_log_message(T.LogMessageParams(type=kind, message=message))
        except Exception:  # pragma: no cover - no client to talk to
            log.warning("%s", message)

    # -- conversions ------------------------------------------------------------------------------
    def position(self, lines: Sequence[str], pos: Tuple[int, int]) -> T.Position:
        line, col = pos
        if line >= len(lines):
            return T.Position(line=len(lines) - 1 if lines else 0, character=self._units(lines[-1] if lines else ""))
        text = lines[line]
        return T.Position(line=line, character=self._units(text[: max(0, col)]))

    def _units(self, s: str) -> int:
        return self.workspace.position_codec.client_num_units(s)

    def to_range(self, lines: Sequence[str], start: Tuple[int, int], end: Tuple[int, int]) -> T.Range:
        return T.Range(start=self.position(lines, start), end=self.position(lines, end))

    def from_position(self, lines: Sequence[str], pos: T.Position) -> Tuple[int, int]:
        if pos.line >= len(lines):
            return (pos.line, 0)
        text = lines[pos.line]
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return (pos.line, i)
            units += self._units(ch)
        return (pos.line, len(text))

    def lsp_diagnostic(self, d: Diagnostic, lines: Sequence[str], docs_url: Optional[str] = None) -> T.Diagnostic:
        start, end = diagnostic_range(d, lines)
        rule = self.rules.get(d.code)
        applicable = is_applicable(d, self.user.unsafe_fixes)
        data: Dict[str, Any] = {"fix": None}
        if d.fix is not None:
            data["fix"] = {"title": d.fix.title, "applicability": d.fix.applicability}
        return T.Diagnostic(
            range=self.to_range(lines, start, end),
            message=("[*] " if applicable else "") + d.message,
            severity=T.DiagnosticSeverity.Error if d.code == PARSE_ERROR else T.DiagnosticSeverity.Warning,
            code=d.code,
            code_description=T.CodeDescription(href=url) if (url := rule_url(rule or NotLinted, docs_url)) else None,
            source="torchlint",
            data=data,
        )

    def publish(self, uri: str, result: Analysis) -> None:
        config_error = []
        if result.notice:
            config_error.append(
                T.Diagnostic(
                    range=T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0)),
                    message=result.notice,
                    severity=T.DiagnosticSeverity.Information,
                    source="torchlint",
                )
            )
        if result.config.error:
            config_error.append(
                T.Diagnostic(
                    range=T.Range(start=T.Position(line=0, character=0), end=T.Position(line=0, character=0)),
                    message=f"torchlint configuration error: {result.config.error}",
                    severity=T.DiagnosticSeverity.Error,
                    source="torchlint",
                )
            )
        if result.cells is None:
            lines = split_lines(result.text)
            found = _in_file_lines(result.diagnostics) if _is_notebook_file(uri) else result.diagnostics
            diags = config_error + [self.lsp_diagnostic(d, lines, result.config.docs_url) for d in found]
            self.text_document_publish_diagnostics(
                T.PublishDiagnosticsParams(uri=uri, version=result.version, diagnostics=diags)
            )
            return
        # a notebook: each cell document gets its own findings (positions within the cell)
        code_cells = [i for i, c in enumerate(result.cells) if c.code]
        for i in code_cells:
            cell = result.cells[i]
            lines = split_lines(cell.text)
            mine = [d for d in result.diagnostics if _cell_of(d) == i + 1 or (_cell_of(d) == 0 and i == code_cells[0])]
            diags = (config_error if i == code_cells[0] else []) + [self.lsp_diagnostic(d, lines, result.config.docs_url) for d in mine]
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=cell.uri, diagnostics=diags))

    async def view(self, uri: str) -> Optional[Tuple[Analysis, str, List[Diagnostic], str]]:
        """What a document shows: (analysis, its text, its findings, the uri analysed).  For a notebook
        cell: the notebook's analysis, the cell's text and the cell's findings."""
        nb = self.workspace.get_notebook_document(cell_uri=uri)
        if nb is not None:
            result = await self.analysis_for(nb.uri)
            if result is None or result.cells is None:
                return None
            for i, cell in enumerate(result.cells):
                if unquote(cell.uri) == unquote(uri):
                    return result, cell.text, [d for d in result.diagnostics if _cell_of(d) == i + 1], nb.uri
            return None
        if uri not in self.states or not self.is_open(uri):  # not open, or not a Python document
            return None
        result = await self.analysis_for(uri)
        if result is None:
            return None
        if _is_notebook_file(uri):  # its JSON text: findings on the file's lines, fixes not offered
            return result, result.text, _in_file_lines(result.diagnostics), uri
        return result, result.text, list(result.diagnostics), uri

    def workspace_edit(self, uri: str, lines: Sequence[str], edits: Sequence[TextEdit]) -> T.WorkspaceEdit:
        return T.WorkspaceEdit(
            changes={uri: [T.TextEdit(range=self.to_range(lines, e.start, e.end), new_text=e.new_text) for e in edits]}
        )

    # -- code actions ---------------------------------------------------------------------------------
    async def code_actions(self, params: T.CodeActionParams) -> Optional[List[T.CodeAction]]:
        uri = params.text_document.uri
        seen = await self.view(uri)
        if seen is None:
            return None
        result, text, findings, analysed = seen
        only = params.context.only
        want_quick = only is None or any(_kind_matches(T.CodeActionKind.QuickFix, k) for k in only)
        want_fix_all = only is None or any(_kind_matches(FIX_ALL_KIND, k) for k in only)
        lines = split_lines(text)
        first, last = self.from_position(lines, params.range.start), self.from_position(lines, params.range.end)
        actions: List[T.CodeAction] = []
        in_range = []
        for d in findings:
            start, end = diagnostic_range(d, lines)
            if d.code != PARSE_ERROR and not (end < first or start > last):
                in_range.append(d)
        if want_quick and any(d.fix is not None for d in in_range):
            full = await self.edits_for(analysed, result)
            if full is not None:
                by_key = {_key(d): d for d in full.diagnostics}
                in_range = [by_key.get(_key(d), d) for d in in_range]
        if want_quick:
            for d in in_range:
                start, end = diagnostic_range(d, lines)
                diag = self.lsp_diagnostic(d, lines, result.config.docs_url)
                edit = fix_edit(text, d)
                if edit is not None and d.fix is not None:
                    unsafe = d.fix.applicability != "safe"
                    title = f"{d.fix.title} ({d.code})"
                    if unsafe:
                        title = f"Unsafe fix: {title} - may change behaviour beyond the bug, review it"
                    actions.append(
                        T.CodeAction(
                            title=title,
                            kind=T.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            is_preferred=not unsafe,
                            edit=self.workspace_edit(uri, lines, [edit]),
                        )
                    )
                noqa = noqa_edit(text, start[0], d.code)
                if noqa is not None:
                    actions.append(
                        T.CodeAction(
                            title=f"Suppress {d.code} on this line",
                            kind=T.CodeActionKind.QuickFix,
                            diagnostics=[diag],
                            edit=self.workspace_edit(uri, lines, [noqa]),
                        )
                    )
        if want_fix_all and any(is_applicable(d, self.user.unsafe_fixes) for d in result.diagnostics):
            edit_all = await self.fix_all_edit(analysed, result)
            if edit_all is not None:
                actions.append(
                    T.CodeAction(
                        title="Fix all safe torchlint problems"
                        if not self.user.unsafe_fixes
                        else "Fix all torchlint problems (unsafe fixes included)",
                        kind=FIX_ALL_KIND,
                        edit=edit_all,
                    )
                )
        return actions

    async def fix_all_edit(self, uri: str, result: Analysis) -> Optional[T.WorkspaceEdit]:
        snap = self.snapshot(uri)
        if snap is None:
            return None
        name = snap[1]
        fixed = await asyncio.wrap_future(
            self.worker.submit(
                INTERACTIVE, fix_all, name, result.text, result.config, self.user.unsafe_fixes, self.supervisor,
                self.overlay(snap[0]),
            )
        )
        if fixed is None or self.current_version(uri) != result.version:
            return None
        if result.cells is None:
            edit = minimal_edit(result.text, fixed)
            return None if edit is None else self.workspace_edit(uri, split_lines(result.text), [edit])
        changes: Dict[str, List[T.TextEdit]] = {}
        for cell, new_text in zip(result.cells, notebook_cells(fixed, len(result.cells))):
            if not cell.code or new_text is None:
                continue
            edit = minimal_edit(cell.text, _like(cell.text, new_text))
            if edit is not None:
                lines = split_lines(cell.text)
                changes[cell.uri] = [T.TextEdit(range=self.to_range(lines, edit.start, edit.end), new_text=edit.new_text)]
        return T.WorkspaceEdit(changes=changes) if changes else None

    async def hover(self, params: T.HoverParams) -> Optional[T.Hover]:
        seen = await self.view(params.text_document.uri)
        if seen is None:
            return None
        result, text, findings, _uri = seen
        docs_url = result.config.docs_url if result.config is not None else None
        lines = split_lines(text)
        pos = self.from_position(lines, params.position)
        pages = []
        for d in findings:
            start, end = diagnostic_range(d, lines)
            rule = self.rules.get(d.code)
            if rule is not None and start <= pos <= end:
                url = rule_url(rule, docs_url)
                page = rule_page(rule) + (f"\n\n[Rule page]({url})" if url else "")
                if page not in pages:
                    pages.append(page)
        if not pages:
            return None
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value="\n\n---\n\n".join(pages)))


def _key(d: Diagnostic) -> Tuple[Any, ...]:
    return (_cell_of(d), d.line, d.col, d.end_line, d.end_col, d.code, d.message)


def _cell_of(d: Diagnostic) -> int:
    return getattr(d, "cell", 0)


def _like(old: str, new: str) -> str:
    """``new`` with the line breaks of ``old`` (notebook cells are read with their breaks normalised)."""
    if "\r\n" in old:
        return new.replace("\r\n", "\n").replace("\n", "\r\n")
    return new


def _kind_matches(kind: str, wanted: str) -> bool:
    return kind == wanted or kind.startswith(wanted + ".")


def _is_config_uri(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_NAMES


def start_supervisor() -> Any:
    """The watchdog's worker, forked now, before the server starts any thread; None where workers
    cannot be isolated (no ``fork``) or the watchdog is not available."""
    try:
        from torchlint import workers
    except ImportError:  # pragma: no cover
        return None
    if not workers.CAN_ISOLATE:
        return None
    from torchlint.engine import FileTask, Settings
    from torchlint.rules import all_rules

    all_rules()  # imported before the fork: the worker inherits them warm
    supervisor = workers.text_supervisor(edits=True)
    workers.lint_text(FileTask("warm-up.py"), "", Settings(rules=[]), None, supervisor)
    return supervisor


def build_server(supervisor: Any = None) -> TorchlintServer:
    server = TorchlintServer(supervisor)

    @server.feature(T.INITIALIZE)
    def on_initialize(ls: TorchlintServer, params: T.InitializeParams) -> None:
        ls.user = UserSettings.from_client(params.initialization_options, ls.user)

    @server.feature(T.INITIALIZED)
    def on_initialized(ls: TorchlintServer, params: T.InitializedParams) -> None:
        caps = ls.client_capabilities
        watched = caps.workspace.did_change_watched_files if caps.workspace else None
        if watched is not None and watched.dynamic_registration:
            watchers = [T.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]
            ls.client_register_capability(
                T.RegistrationParams(
                    registrations=[
                        T.Registration(
                            id="torchlint-config-watch",
                            method=T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=T.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                        )
                    ]
                )
            )

    @server.feature(T.SHUTDOWN)
    def on_shutdown(ls: TorchlintServer, params: Any) -> None:
        ls.worker.shutdown()
        if ls.supervisor is not None:
            ls.supervisor.close()

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: T.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        if ls.wants(doc.uri, doc.language_id):
            ls.schedule(doc.uri, 0, BACKGROUND)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintServer, params: T.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.states:
            ls.schedule(uri, ls.change_delay(uri))
        ls.dependents_changed(uri, ls.debounce)

    @server.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchlintServer, params: T.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _is_config_uri(uri):
            ls.config_changed()
        elif uri in ls.states:
            ls.schedule(uri, 0)
        ls.dependents_changed(uri, 0)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: T.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in ls.states:
            ls.forget(params.text_document.uri)
        ls.dependents_changed(params.text_document.uri, 0)  # the file on disk counts again

    @server.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: TorchlintServer, params: T.DidChangeWatchedFilesParams) -> None:
        if any(_is_config_uri(change.uri) for change in params.changes):
            ls.config_changed()
            return
        for change in params.changes:  # a project file changed on disk (a checkout, another tool)
            if not ls.is_open(change.uri):
                ls.dependents_changed(change.uri, 0)

    @server.feature(T.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TorchlintServer, params: T.DidChangeConfigurationParams) -> None:
        ls.user = UserSettings.from_client(params.settings, ls.user)
        ls.config_changed()

    @server.feature(T.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: TorchlintServer, params: T.DidChangeWorkspaceFoldersParams) -> None:
        ls.config_changed()

    @server.feature(
        T.TEXT_DOCUMENT_CODE_ACTION,
        T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=False),
    )
    async def code_action(ls: TorchlintServer, params: T.CodeActionParams) -> Optional[List[T.CodeAction]]:
        return await ls.code_actions(params)

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TorchlintServer, params: T.HoverParams) -> Optional[T.Hover]:
        return await ls.hover(params)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: TorchlintServer, params: T.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0, BACKGROUND)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: TorchlintServer, params: T.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        ls.schedule(uri, ls.change_delay(uri))

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: TorchlintServer, params: T.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(T.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TorchlintServer, params: T.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])

    return server


def _is_notebook_file(uri: str) -> bool:
    return (to_fs_path(uri) or uri).lower().endswith(NOTEBOOK_SUFFIX)


def _in_file_lines(diagnostics: Sequence[Diagnostic]) -> List[Diagnostic]:
    """A notebook's findings placed on the lines of its JSON file that hold their code (for a notebook
    opened as a text document), their cell position kept in the message; their fixes are not offered
    (their edits are in cell lines)."""
    out = []
    for d in diagnostics:
        if d.cell and d.file_line:
            d = replace(d, line=d.file_line, col=1, end_line=0, end_col=0,
                        message=f"cell {d.cell}:{d.line}:{d.col}: {d.message}")
        out.append(replace(d, fix=None))
    return out


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, answering every request: one whose parameters do not fit its method gets an
    error response (Invalid Params, -32602) instead of silence.  It also forgets what a notification
    leaves behind: pygls keeps the future of each generator handler run for a notification (its
    ``didOpen``/``didClose`` bookkeeping) in ``_request_futures`` for good, two per document opened."""

    def _handle_notification(self, method_name: str, params: Any) -> None:
        super()._handle_notification(method_name, params)
        done = [key for key, future in self._request_futures.items() if future.done()]
        for key in done:  # a finished future needs no cancelling; a response still goes out
            del self._request_futures[key]

    def structure_message(self, data: Dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data and "error" not in data:
                self._send_response(data["id"], error=exc.to_response_error())
                return _ANSWERED
            raise


class _Answered:
    """What a request answered with an error becomes: pygls drops a message of another protocol version."""

    jsonrpc = "answered"


_ANSWERED = _Answered()

_HEADER_END = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length[ \t]*:[ \t]*([0-9]{1,12})[ \t]*\r?$")
_NEXT_HEADER = re.compile(rb"(?i)content-length[ \t]*:")


class FramedInput:
    """The client's byte stream as pygls reads it (``readline``, ``read``), one well-formed message at a
    time.  A message whose ``Content-Length`` is wrong does not lose the stream: when the declared body
    is not JSON, or the next message's header arrives before the declared length, the JSON value
    before that header is taken as the message (or dropped, when it is not JSON) and reading goes on
    from the header."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.buf = bytearray()
        self.lines: List[bytes] = []
        self.body = b""

    def _fill(self) -> bool:
        data = self.raw.read1(1 << 16) if hasattr(self.raw, "read1") else self.raw.read(1 << 16)
        if not data:
            return False
        self.buf += data
        return True

    @staticmethod
    def _json(chunk: bytes) -> bool:
        import json

        try:
            json.loads(chunk)
        except (ValueError, RecursionError):
            return False
        return True

    def _message(self) -> Optional[bytes]:
        while True:
            end = self.buf.find(_HEADER_END)
            while end < 0:
                if not self._fill():
                    return None
                end = self.buf.find(_HEADER_END)
            m = _CONTENT_LENGTH.search(self.buf, 0, end)
            if m is None:  # not a header: skip to the next one
                nxt = _NEXT_HEADER.search(self.buf, 1)
                del self.buf[: nxt.start() if nxt else end + len(_HEADER_END)]
                continue
            start, n = end + len(_HEADER_END), int(m.group(1))
            pos = start  # where to look for the next header: bytes before it were searched already
            first: Optional[int] = None  # the first header after this one's body began
            while True:
                if len(self.buf) - start >= n and self._json(bytes(self.buf[start:start + n])):
                    body = bytes(self.buf[start:start + n])
                    del self.buf[: start + n]
                    return body
                hdr = _NEXT_HEADER.search(self.buf, pos)
                while hdr is not None:
                    first = hdr.start() if first is None else first
                    if self._json(bytes(self.buf[start:hdr.start()])):  # the length was wrong
                        body = bytes(self.buf[start:hdr.start()]).strip()
                        log.warning("Content-Length %d does not frame the message (%d bytes); read on", n, len(body))
                        del self.buf[: hdr.start()]
                        return body
                    pos = hdr.end()
                    hdr = _NEXT_HEADER.search(self.buf, pos)
                pos = max(pos, len(self.buf) - 32)
                if len(self.buf) - start >= n and first is not None:
                    # neither the declared body nor the text before a header is JSON: drop it
                    log.warning("unreadable message of %d bytes dropped", first - start)
                    del self.buf[:first]
                    break
                if not self._fill():
                    return None

    def readline(self) -> bytes:
        if not self.lines:
            body = self._message()
            if body is None:
                return b""
            self.body = body
            self.lines = [b"Content-Length: %d\r\n" % len(body), b"\r\n"]
        return self.lines.pop(0)

    def read(self, n: int) -> bytes:
        body, self.body = self.body, b""
        return body


def main() -> None:
    # The protocol gets its own descriptor for stdout; descriptor 1 becomes stderr, so that nothing
    # printed by accident (here, or in the watchdog's worker processes, which inherit it) can corrupt
    # the message stream.
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    supervisor = start_supervisor()
    server = build_server(supervisor)
    server.start_io(FramedInput(sys.stdin.buffer), protocol_out)
    # the protocol: exit 0 after a `shutdown` request, 1 when the client exits (or goes) without one
    sys.exit(0 if getattr(server.protocol, "_shutdown", False) else 1)


__all__ = ["TorchlintServer", "build_server", "main"]
