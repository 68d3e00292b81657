"""The project around the files being linted: where its root is, which of its modules an import names,
its modules parsed for the program model, the editor's unsaved texts, the torch version it declares and
whether it depends on ``torchlint[runtime]``.

A :class:`Project` is carried in the engine's ``Settings`` into each file's context (``ctx.project``);
nothing about a project is kept in module-level tables.  A command-line run makes one per group of
files (each worker process works on its own copy), the language server keeps one per workspace, and a
host linting text in a worker process keeps one in that process.  It does not travel between
processes: unpickled, it is a new, empty one that knows only how often the sender was refreshed, so that
the worker's own project can follow the host's (:meth:`Project.follow`).

Every question of the form "the nearest folder above this file that ..." goes through
:func:`torchlint.folders.find_upwards`; the questions differ only in what they look for:

- the **root** (imports of project modules are found under it): the nearest folder holding
  ``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.git``, ``torchlint.toml`` or ``.torchlint.toml``,
  at most :data:`ROOT_SEARCH_DEPTH` folders up;
- the **declared torch version**: the lower bound of the torch requirement in the nearest folder with a
  ``pyproject.toml`` or ``requirements.txt`` (:mod:`torchlint.analysis.torch_version`);
- the **runtime dependency**: whether the nearest folder with dependency files (``pyproject.toml``,
  ``setup.cfg``, ``setup.py``, ``environment.yml``, ``requirements*.txt``/``.in``) lists
  ``torchlint[runtime]``.  Its answer follows edits of those files (a long-running server sees them).

Parsed modules are keyed by content (path, modification time and size, or the editor's text), so an
edit is seen at the next question, and the table is bounded: least recently used out first.
"""
from __future__ import annotations

import ast
import json
import os
import re
from collections import OrderedDict
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext
from torchlint.analysis.names import LIBRARY_STAR_EXPORTS
from torchlint.analysis.parsing import looks_deep, parse_module
from torchlint.analysis.reparse import Reparser, Statements
from torchlint.analysis.torch_version import Version, declared_torch
from torchlint.analysis.traversal import analyze
from torchlint.folders import find_upwards
from torchlint.reading import CONFIG_MAX_BYTES, read_text

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git", "torchlint.toml", ".torchlint.toml")
#: how many folders up from a file the root is looked for
ROOT_SEARCH_DEPTH = 12
#: files that declare a project's dependencies (besides ``requirements*.txt`` / ``requirements*.in``)
DEPENDENCY_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")
#: parsed project modules kept per project: a long run over a large tree keeps the modules many files
#: import (a package's base classes, its utilities) without holding every project file it ever read
PARSED_MAX = 48
#: files the engine linted last, kept apart from those (a file linted now is often imported by the
#: next ones in its folder; kept in the same table, they would push out the modules many files import)
LINTED_MAX = 16
#: texts of project modules searched for words, kept per project
TEXTS_MAX = 256
#: how many folders above an importer may be the package its absolute import names (:meth:`Project.module_file`)
_PACKAGE_DEPTH = 8
#: how many parsed pieces of replacement code a project keeps (:attr:`Project.snippets`)
SNIPPETS_MAX = 4096
#: the largest project module the program model reads
MODULE_MAX_BYTES = 2_000_000
#: the largest notebook file it reads: its outputs (images, tables) may weigh far more than its code, which
#: is what is read (a notebook whose code is over :data:`MODULE_MAX_BYTES` is not)
NOTEBOOK_MAX_BYTES = 50_000_000
#: the most source files a project's file list holds; a larger tree is not searched (its answer is unknown)
SOURCES_MAX = 5000
#: word sets of project files kept per project
WORDS_MAX = 8192
#: folders never searched for a project's sources
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages"})
_SOURCE_SUFFIXES = (".py", ".ipynb")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_RUNTIME_REQUIREMENT = re.compile(r"""(?<![\w.-])torchlint\s*\[[^\]]*\bruntime\b[^\]]*\]""", re.IGNORECASE)

ContentKey = Tuple[str, int, int]

#: an import line: ``from <dots><module> import <names>`` or ``import <modules>`` (the first line of it)
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+([^\n#]*)|import[ \t]+([\w., \t]+))",
                          re.MULTILINE)


def _holds_root_marker(folder: str) -> Optional[str]:
    return folder if any(os.path.exists(os.path.join(folder, m)) for m in ROOT_MARKERS) else None


def _innermost_first(folders: Sequence[str]) -> Tuple[str, ...]:
    """Absolute folders, each once, the longest first: the first that holds a file is its innermost."""
    return tuple(sorted({os.path.abspath(f) for f in folders}, key=len, reverse=True))


def dependency_files(folder: str) -> Optional[Tuple[str, ...]]:
    """The dependency files of ``folder`` (sorted paths), None when it has none."""
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    found = [n for n in names
             if n in DEPENDENCY_FILES or (n.startswith("requirements") and n.endswith((".txt", ".in")))]
    return tuple(sorted(os.path.join(folder, n) for n in found)) or None


def declares_runtime_file(file: str) -> bool:
    """Whether one dependency file lists ``torchlint[runtime]`` (outside comments)."""
    try:
        text = read_text(file, CONFIG_MAX_BYTES)
    except OSError:
        return False
    return any(_RUNTIME_REQUIREMENT.search(line.split("#", 1)[0]) for line in text.splitlines())


def _signature(files: Tuple[str, ...]) -> Tuple[Tuple[str, int, int], ...]:
    out = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            out.append((f, -1, -1))
        else:
            out.append((f, st.st_mtime_ns, st.st_size))
    return tuple(out)


def project_sources(folder: str, recursive: bool = True) -> Optional[Tuple[str, ...]]:
    """The Python files and notebooks in ``folder`` (and, ``recursive``, in the folders under it, not
    through hidden folders, ``__pycache__``, ``node_modules`` or ``site-packages``, nor through symlinked
    folders): sorted absolute paths; None when there are more than :data:`SOURCES_MAX`."""
    found: List[str] = []
    top = os.path.abspath(folder)
    for here, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_FOLDERS) if recursive else []
        found.extend(os.path.join(here, f) for f in files if f.endswith(_SOURCE_SUFFIXES))
        if len(found) > SOURCES_MAX:
            return None
    return tuple(sorted(found))


def _max_bytes(path: str) -> int:
    return NOTEBOOK_MAX_BYTES if path.endswith(".ipynb") else MODULE_MAX_BYTES


def _small_text(path: str) -> str:
    """The text of a project file for a search of its words: a notebook over :data:`MODULE_MAX_BYTES` (its
    outputs) is searched in its code cells only (ValueError when that code is over the limit too)."""
    text = read_text(path, _max_bytes(path))
    if len(text) > MODULE_MAX_BYTES and path.endswith(".ipynb"):
        text = notebook_code(text)
        if len(text) > MODULE_MAX_BYTES:
            raise ValueError("too large")
    return text


def notebook_code(text: str) -> str:
    """The code cells of a notebook's text, one after the other, as the kernel runs them; lines of
    IPython syntax (``%magic``, ``!shell``) become ``pass`` and cells run by a cell magic are left out.  A
    cell that still does not parse becomes a string literal holding its text (its words stay visible to
    a search, its code is not read).  Raises ValueError when the text is not a notebook."""
    data = json.loads(text)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook")
    out: List[str] = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        if not isinstance(src, str) or src.lstrip().startswith("%%"):
            continue
        lines = []
        for line in src.splitlines():
            body = line.lstrip()
            lines.append(line[:len(line) - len(body)] + "pass" if body.startswith(("%", "!")) else line)
        code = "\n".join(lines) + "\n"
        try:
            cst.parse_module(code)
        except Exception:
            code = repr(src) + "\n"
        out.append(code)
    return "".join(out)


def sources_signature(folder: str) -> str:
    """A text naming the source files of the project searched from ``folder`` (see
    :meth:`Project.sources`) and the modification time and size of each: it changes when a source file
    is added, removed or written."""
    recursive = not folder.endswith(os.sep + ".")
    files = project_sources(folder[:-2] if not recursive else folder, recursive)
    if files is None:
        return "\0too many"
    out = []
    for f in files:
        try:
            st = os.stat(f)
            out.append(f"{f}\0{st.st_mtime_ns}\0{st.st_size}")
        except OSError:
            out.append(f)
    return "\n".join(out)


def among_sources(key: str, path: str) -> bool:
    """Whether the file ``path`` (absolute) is one of the sources :meth:`Project.sources` searches under
    ``key``: anywhere under a root, or beside the file for a ``<folder>/.`` key."""
    if key.endswith(os.sep + "."):
        return os.path.dirname(path) == key[:-2] and path.endswith(_SOURCE_SUFFIXES)
    return path.startswith(key.rstrip(os.sep) + os.sep) and path.endswith(_SOURCE_SUFFIXES)


class _Exports(NamedTuple):
    """What one module's own top-level statements give a star import of it: the names its imports bind
    with their origins, the modules it star-imports in turn (``(module, level)``), and its literal
    ``__all__`` (None: none)."""

    names: Dict[str, List[str]]
    stars: List[Tuple[str, int]]
    public: Optional[FrozenSet[str]]


def _import_exports(text: str) -> _Exports:
    """The names a module's top-level imports (also those inside a top-level ``try``/``if``) bind, with
    their origins (absolute imports only), the modules it star-imports, and its literal ``__all__``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _Exports({}, [], None)
    out: Dict[str, List[str]] = {}
    stars: List[Tuple[str, int]] = []
    public: Optional[FrozenSet[str]] = None
    body: List[ast.stmt] = list(tree.body)
    for stmt in list(body):
        if isinstance(stmt, (ast.Try, ast.If)):
            body.extend(stmt.body)
            body.extend(getattr(stmt, "orelse", []))
            for handler in getattr(stmt, "handlers", []):
                body.extend(handler.body)
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".")[0]
                origin = alias.name if alias.asname else alias.name.split(".")[0]
                out.setdefault(local, []).append(origin)
        elif isinstance(stmt, ast.ImportFrom) and any(alias.name == "*" for alias in stmt.names):
            stars.append((stmt.module or "", stmt.level or 0))
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            for alias in stmt.names:
                out.setdefault(alias.asname or alias.name, []).append(f"{stmt.module}.{alias.name}")
        elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in stmt.value.elts):
                public = frozenset(e.value for e in stmt.value.elts)  # type: ignore[union-attr]
    return _Exports(out, stars, public)


#: how many star imports deep a chain of them is followed (``from data import *`` whose module does
#: ``from conf import *``)
_STAR_DEPTH = 4


class _Snippets(OrderedDict):  # type: ignore[type-arg]
    """Parsed replacement code by (kind, code, the module's parser settings), the oldest forgotten past
    :data:`SNIPPETS_MAX`."""

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if len(self) > SNIPPETS_MAX:
            self.popitem(last=False)


class _Tables:
    """What a project has learnt, shared by the project and its editor views (:meth:`Project.with_overlay`)."""

    def __init__(self) -> None:
        self.roots: Dict[str, Optional[str]] = {}  # folder -> its root
        self.parsed: "OrderedDict[ContentKey, Optional[FileContext]]" = OrderedDict()
        self.linted: "OrderedDict[ContentKey, FileContext]" = OrderedDict()  # see :meth:`Project.remember`
        self.texts: "OrderedDict[ContentKey, str]" = OrderedDict()
        self.words: "OrderedDict[ContentKey, frozenset]" = OrderedDict()
        self.sources: Dict[str, Optional[Tuple[str, ...]]] = {}  # searched folder -> its source files
        #: searched folder -> (the file list it was made from, file -> the files it imports or is imported by)
        self.import_graphs: Dict[str, Tuple[Tuple[str, ...], Dict[str, Set[str]]]] = {}
        self.torch: Dict[str, Optional[Version]] = {}  # folder -> declared lower bound
        self.runtime: Dict[str, Tuple[object, bool]] = {}  # folder -> (dependency files' signature, answer)
        self.generation = 0  # how many times the project was refreshed
        self.reparser: Optional[Reparser] = None  # an editor's: each document parsed where it changed
        #: an editor's documents -> the findings of their last text (kept and read by ``torchlint.carry``)
        self.carried: "OrderedDict[str, Any]" = OrderedDict()
        #: module content -> what a star import of it binds (see :meth:`Project.star_exports`)
        self.exports: "OrderedDict[ContentKey, _Exports]" = OrderedDict()
        self.snippets = _Snippets()  # see Project.snippets


class Project:
    """See the module's documentation.  ``overlay``: the editor's texts of project files (absolute path ->
    text), read instead of those files on disk."""

    def __init__(self, overlay: Optional[Dict[str, str]] = None, parsed_max: int = PARSED_MAX,
                 texts_max: int = TEXTS_MAX, generation: int = 0, fallback_roots: Tuple[str, ...] = ()) -> None:
        self.overlay: Dict[str, str] = dict(overlay) if overlay else {}
        self.parsed_max = parsed_max
        self.texts_max = texts_max
        #: folders the host was asked to check (``torchlint src/``): the root of a file under one of them
        #: when no project marker is found above the file (a downloaded copy of a repository, a folder of
        #: notebooks)
        self.fallback_roots = _innermost_first(fallback_roots)
        self._tables = _Tables()
        self._tables.generation = generation

    def __reduce__(self) -> Tuple[type, Tuple[None, int, int, int, Tuple[str, ...]]]:
        # what a project learnt stays in its process; the other side learns how often it was refreshed
        return Project, (None, self.parsed_max, self.texts_max, self.generation, self.fallback_roots)

    @property
    def generation(self) -> int:
        """How many times :meth:`refresh` was called (a project in another process follows it with
        :meth:`follow`)."""
        return self._tables.generation

    def follow(self, other: "Project") -> None:
        """Refresh this project if ``other`` (another process's, as received) was refreshed since."""
        if other.generation != self.generation:
            self.refresh()
            self._tables.generation = other.generation

    def with_overlay(self, overlay: Optional[Dict[str, str]]) -> "Project":
        """This project as an editor sees it: ``overlay`` (absolute path -> text) read instead of those
        files on disk; what it learns is shared with this project (parsed modules are keyed by content)."""
        view = Project(overlay, self.parsed_max, self.texts_max, fallback_roots=self.fallback_roots)
        view._tables = self._tables
        return view

    def use_fallback_roots(self, folders: Sequence[str]) -> None:
        """Make ``folders`` the :attr:`fallback_roots` (an editor's workspace folders); the roots and file
        lists found so far are forgotten when they change."""
        roots = _innermost_first(folders)
        if roots != self.fallback_roots:
            self.fallback_roots = roots
            self._tables.roots.clear()
            self._tables.sources.clear()
            self._tables.import_graphs.clear()

    def refresh(self) -> None:
        """Forget the roots and declared versions found so far (configuration files changed)."""
        self._tables.roots.clear()
        self._tables.sources.clear()
        self._tables.import_graphs.clear()
        self._tables.torch.clear()
        self._tables.runtime.clear()
        self._tables.generation += 1

    # -- where things are ---------------------------------------------------------------------------
    def root(self, path: str) -> Optional[str]:
        """The root of the project holding the file ``path``: the nearest folder above it with a project
        marker, else the innermost of :attr:`fallback_roots` holding it (None: neither)."""
        start = os.path.dirname(os.path.abspath(path))
        roots = self._tables.roots
        if start in roots:
            return roots[start]
        found = find_upwards(start, _holds_root_marker, ROOT_SEARCH_DEPTH)
        if found is None:
            found = next((f for f in self.fallback_roots if start == f or start.startswith(f + os.sep)), None)
        roots[start] = found
        return found

    def module_file(self, importer: str, module: str, level: int) -> Optional[str]:
        """The file of the project module ``module`` imported from the file ``importer`` (``level`` dots of
        a relative import): beside the importer, else under the root or its ``src`` folder, else above the
        outermost package holding the importer or the folder above the importer's own folder that bears
        the module's first name, else in a folder between the importer's and the root, or the root's ``lib``."""
        if not importer or importer in ("-", "<stdin>"):
            return None
        here = os.path.dirname(os.path.abspath(importer))
        parts = [p for p in module.split(".") if p]
        bases: List[str] = []
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases.append(base)
        else:
            bases.append(here)
            root = self.root(importer)
            if root is not None:
                bases.extend([root, os.path.join(root, "src")])
            top = here  # the folder above the outermost package holding the importer: where `pkg.mod` starts
            while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
                top = os.path.dirname(top)
            if top != here and top not in bases:
                bases.append(top)
            # the importer inside the package it names, without `__init__.py` files on the way (a namespace
            # package, a script that puts the folder above on `sys.path`): `TCN/char_cnn/test.py` importing
            # `TCN.char_cnn.utils`
            folder = here
            for _ in range(_PACKAGE_DEPTH):
                if parts and os.path.basename(folder) == parts[0]:
                    if os.path.dirname(folder) not in bases:
                        bases.append(os.path.dirname(folder))
                    break
                if os.path.dirname(folder) == folder:
                    break
                folder = os.path.dirname(folder)
            if root is not None:
                # last, the folders between the importer's and the root, nearest first: a project inside
                # the repository (``gan/scripts/sample.py`` importing ``models.psp`` of ``gan/``), run from
                # its own folder or with ``..`` put on ``sys.path``
                folder = os.path.dirname(here)
                while folder.startswith(root + os.sep):
                    if folder not in bases:
                        bases.append(folder)
                    folder = os.path.dirname(folder)
                bases.append(os.path.join(root, "lib"))  # where `_init_paths.py` scripts point `sys.path`
        for base in bases:
            stem = os.path.join(base, *parts) if parts else base
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(importer):
                    return candidate
        return None

    def star_exports(self, importer: str, module: str, level: int,
                     depth: int = 0) -> Optional[Tuple[Tuple[str, ...], Dict[str, List[str]]]]:
        """For ``from <module> import *`` in the file ``importer``, where ``module`` is a module of the
        project: the files read and the names the module's own top-level imports bind, with their origins
        (``import torch`` -> ``torch``, ``import torch.nn as nn`` -> ``torch.nn``, ``from torch import
        optim`` -> ``torch.optim``), also those it star-imports in turn from the project (``from conf
        import *``) or from a library that re-exports torch's modules, filtered by a literal ``__all__``;
        None when the module is not the project's or cannot be read.  Read with Python's own parser, once
        per content."""
        path = self.module_file(importer, module, level)
        if path is None:
            return None
        found = self._content_key(path)
        if found is None:
            return None
        key = found[0]
        own = self._tables.exports.get(key)
        if own is None:
            text = self.module_text(path)
            if text is None:
                return None
            own = self._tables.exports[key] = _import_exports(text)
            while len(self._tables.exports) > self.texts_max:
                self._tables.exports.popitem(last=False)
        files: List[str] = [os.path.abspath(path)]
        names: Dict[str, List[str]] = {}
        for star, star_level in own.stars:
            inner = self.star_exports(path, star, star_level, depth + 1) if depth < _STAR_DEPTH else None
            if inner is not None:
                files.extend(f for f in inner[0] if f not in files)
                exported = inner[1]
            elif not star_level:
                exported = {k: [v] for k, v in LIBRARY_STAR_EXPORTS.get(star.split(".")[0], {}).items()}
            else:
                continue
            for local, origins in exported.items():
                names.setdefault(local, []).extend(o for o in origins if o not in names.get(local, ()))
        for local, origins in own.names.items():
            names[local] = list(origins)  # bound after (or instead of) what a star import brought
        public = own.public
        return tuple(files), {k: v for k, v in names.items()
                              if (k in public if public is not None else not k.startswith("_"))}

    # -- the project's modules ----------------------------------------------------------------------
    def _content_key(self, path: str) -> Optional[Tuple[ContentKey, Optional[str]]]:
        """``(key, text)``: a key naming this content of the file, and its text when it comes from the
        editor (None: read it from disk); None when the file cannot be read."""
        full = os.path.abspath(path)
        text = self.overlay.get(full)
        if text is not None:
            return (full, -1, hash(text)), text
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size > _max_bytes(path):
            return None
        return (full, st.st_mtime_ns, st.st_size), None

    def load(self, path: str) -> Optional[FileContext]:
        """A project module parsed and walked (names bound), once per content."""
        found = self._content_key(path)
        if found is None:
            return None
        key, source = found
        parsed = self._tables.parsed
        if key in parsed:
            parsed.move_to_end(key)
            return parsed[key]
        while len(parsed) >= self.parsed_max:
            parsed.popitem(last=False)
        linted = self._tables.linted.pop(key, None)
        if linted is not None:
            parsed[key] = linted
            return linted
        parsed[key] = None  # a cycle reaching this file again finds nothing
        try:
            if source is None:
                source = read_text(path, _max_bytes(path))
            if path.endswith(".ipynb"):
                source = notebook_code(source)
            if len(source) > MODULE_MAX_BYTES:
                return None
            if looks_deep(source):
                return None  # a text libcst takes seconds (or forever) to parse: read by no other file
            module = parse_module(source)
        except Exception:
            return None
        fctx = FileContext(path, source, module, self)
        try:
            analyze(fctx)
        except Exception:
            return None
        parsed[key] = fctx
        return fctx

    def remember(self, path: str, ctx: FileContext) -> None:
        """Keep ``ctx``, a file the engine walked in full, among the last :data:`LINTED_MAX` files linted
        when its text is the file's text: a later file that imports it reads it without a parse (it then
        joins the modules the project loaded).  What the rules computed of it is dropped: the program
        model learns of it what it would learn of a module it loaded.  Not for notebooks, nor for an
        editor's documents (parsed where they changed, their trees are shared with the next parse)."""
        if not ctx.walked or path.endswith(".ipynb") or self._tables.reparser is not None:
            return
        found = self._content_key(path)
        if found is None:
            return
        key, text = found
        if key in self._tables.parsed:
            return
        if text is None:
            # read again, not through the table of module texts: every linted file would pass through it
            # and push out the texts the program model searches for words
            text = self._tables.texts.get(key)
            if text is None:
                try:
                    text = read_text(path, MODULE_MAX_BYTES)
                except OSError:
                    return
        if text != ctx.source:
            return
        ctx.facts.clear()
        linted = self._tables.linted
        linted[key] = ctx
        while len(linted) > LINTED_MAX:
            linted.popitem(last=False)

    def parse_edits(self) -> Reparser:
        """Parse each text of a file from the last text of that file parsed, again only where it
        changed (:mod:`torchlint.analysis.reparse`): for an editor, whose document changes by a few
        characters at a time.  Returns the :class:`Reparser` (it counts the parses it reused)."""
        if self._tables.reparser is None:
            self._tables.reparser = Reparser()
        return self._tables.reparser

    @property
    def snippets(self) -> Dict[Any, cst.CSTNode]:
        """The trees of the replacement code the project's files parsed (``FileContext.parse_expression``
        and ``parse_statement``): a tree is immutable, so the same code parsed with the same module
        settings is parsed once (an editor builds the fixes of a document again at every edit)."""
        return self._tables.snippets

    def code_facts(self, path: str, module: cst.Module) -> Optional[Dict[str, Dict[int, Any]]]:
        """Where the facts that a node's code alone decides are kept for ``module``, the last parse of
        the edited document ``path`` (after :meth:`parse_edits`): the next parses of the document
        share them for the statements an edit does not touch; None otherwise."""
        reparser = self._tables.reparser
        return reparser.code_facts(path, module) if reparser is not None else None

    @property
    def parses_edits(self) -> bool:
        """Whether :meth:`parse_edits` was called: the project's files are an editor's documents."""
        return self._tables.reparser is not None

    def statements(self, path: str) -> Optional[Statements]:
        """The top-level statements of the last text of the edited document ``path`` parsed (after
        :meth:`parse_edits`), with their spans of text; None when none is kept."""
        reparser = self._tables.reparser
        return reparser.statements(path) if reparser is not None else None

    @property
    def carried(self) -> "OrderedDict[str, Any]":
        """The findings of each edited document's last text, with what they were found from (after
        :meth:`parse_edits`; ``torchlint.carry`` keeps and reads them)."""
        return self._tables.carried

    def content_keys(self, paths: Sequence[str]) -> Tuple[Any, ...]:
        """What names the present content of each file of ``paths`` (its editor text, else its size and
        modification time; None for a file that cannot be read): equal keys, equal contents."""
        keys = []
        for path in paths:
            found = self._content_key(path)
            keys.append(found[0] if found is not None else None)
        return tuple(keys)

    def parse(self, path: str, source: str) -> cst.Module:
        """The module of ``source``, the text of the file ``path``: the one this project parsed
        already, else parsed now (where it changed only, after :meth:`parse_edits`); raises what
        ``libcst.parse_module`` raises."""
        found = self.parsed_module(path, source)
        if found is not None:
            return found
        reparser = self._tables.reparser
        return reparser.parse(path, source) if reparser is not None else parse_module(source)

    def parsed_module(self, path: str, source: str) -> Optional[cst.Module]:
        """The module this project already parsed for the file ``path`` (a module a file linted before
        imports) when its text is ``source``: the engine walks it without parsing it again; else None."""
        found = self._content_key(path)
        fctx = self._tables.parsed.get(found[0]) if found is not None else None
        if fctx is None and found is not None:
            fctx = self._tables.linted.get(found[0])
        if fctx is not None and fctx.source == source:
            return fctx.module
        return None

    def others_mentioning(self, path: str, *groups: Tuple[str, ...]) -> List[str]:
        """The source files of the project holding ``path``, other than it, whose text holds a word of
        each of ``groups`` (read once per content, no parse); empty when the project cannot be listed."""
        _, files = self.sources(path)
        if not files:
            return []
        here = os.path.abspath(path)
        return [f for f in files if os.path.abspath(f) != here and all(self.mentions(f, g) for g in groups)]

    def mentions(self, path: str, words: Tuple[str, ...]) -> bool:
        """Whether the module's text holds one of ``words`` (read once per content; no parse).  A
        package's ``__init__.py`` always counts: it may re-export the class (``from .net import Net``)."""
        if os.path.basename(path) == "__init__.py":
            return True
        text = self.module_text(path)
        return text is not None and any(w in text for w in words)

    def imported_modules(self, path: str, source: str) -> List[str]:
        """The project modules the text ``source`` of the file ``path`` imports (``import a.b``,
        ``from .m import x``, and ``from pkg import sub`` as the module ``pkg/sub.py`` too), found by a
        scan of its import lines (no parse); empty without a path."""
        if not path or path in ("-", "<stdin>") or "import" not in source:
            return []
        found: List[str] = []
        for match in _IMPORT_LINE.finditer(source):
            dots, module, names, plain = match.group(1), match.group(2), match.group(3), match.group(4)
            candidates: List[Tuple[str, int]] = []
            if plain is not None:
                for part in plain.split(","):
                    name = part.strip().split(" ")[0]
                    if name:
                        candidates.append((name, 0))
            else:
                level = len(dots or "")
                if module:
                    candidates.append((module, level))
                for part in (names or "").replace("(", " ").split(","):
                    name = part.strip().split(" ")[0]
                    if name.isidentifier():
                        candidates.append((f"{module}.{name}" if module else name, level))
            for module_name, level in candidates:
                file = self.module_file(path, module_name, level)
                if file is not None and file not in found:
                    found.append(file)
        return found

    def module_text(self, path: str) -> Optional[str]:
        """The text of a project module, read once per content (None: it cannot be read)."""
        found = self._content_key(path)
        if found is None:
            return None
        key, text = found
        if text is not None:
            return text
        texts = self._tables.texts
        text = texts.get(key)
        if text is None:
            try:
                text = texts[key] = _small_text(path)
            except (OSError, ValueError):
                return None
            while len(texts) > self.texts_max:
                texts.popitem(last=False)
        return text

    def import_connected(self, path: str) -> Optional[frozenset]:
        """The project files linked to the file ``path`` by imports, either way and through other files
        (``train.py`` imports ``models.py``, which imports ``layers.py``: all three; a script of another
        example that imports none of them: not): the only files an object built in ``path`` can reach
        short of pickles and dynamic imports.  Absolute paths, ``path`` included; None when the project
        cannot be listed.  Read from the import lines of each file (no parse), once per file list."""
        key, files = self.sources(path)
        if files is None:
            return None
        graphs = self._tables.import_graphs
        graph = graphs.get(key)
        if graph is None or graph[0] is not files:
            links: Dict[str, Set[str]] = {}
            for f in files:
                me = os.path.abspath(f)
                text = self.module_text(f) if f.endswith(".py") else None
                for m in self.imported_modules(f, text) if text else ():
                    other = os.path.abspath(m)
                    links.setdefault(me, set()).add(other)
                    links.setdefault(other, set()).add(me)
            graph = graphs[key] = (files, links)
        links = graph[1]
        start = os.path.abspath(path)
        seen = {start}
        todo = [start]
        while todo:
            for other in links.get(todo.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        return frozenset(seen)

    def sources(self, path: str) -> Tuple[str, Optional[Tuple[str, ...]]]:
        """``(key, files)``: the source files of the project holding the file ``path`` — every Python file
        and notebook under its root, or, without a root, those beside it — and a key naming that list for
        :func:`sources_signature` (the root folder, or the file's folder followed by ``/.``).  ``files``
        is None when the project holds more than :data:`SOURCES_MAX` of them."""
        root = self.root(path)
        key = root if root is not None else os.path.join(os.path.dirname(os.path.abspath(path)), ".")
        table = self._tables.sources
        if key not in table:
            table[key] = project_sources(root, True) if root is not None else project_sources(key[:-2], False)
        return key, table[key]

    def words(self, path: str) -> Optional[frozenset]:
        """The identifiers a project file's text spells (read once per content; no parse); None when it
        cannot be read."""
        found = self._content_key(path)
        if found is None:
            return None
        key, text = found
        words = self._tables.words
        if key in words:
            words.move_to_end(key)
            return words[key]
        try:
            if text is None:
                text = _small_text(path)
        except (OSError, ValueError):
            return None
        out = words[key] = frozenset(_IDENTIFIER.findall(text))
        while len(words) > WORDS_MAX:
            words.popitem(last=False)
        return out

    # -- what it declares ---------------------------------------------------------------------------
    def declared_torch(self, start: str) -> Optional[Version]:
        """The lower bound of the torch requirement declared in the nearest ``pyproject.toml`` /
        ``requirements.txt`` above ``start`` (a file or a folder); None: none, or no lower bound."""
        key = os.path.abspath(start)
        torch = self._tables.torch
        if key not in torch:
            torch[key] = declared_torch(key)
        return torch[key]

    def declares_runtime(self, path: Optional[str]) -> bool:
        """Whether the project holding the file ``path`` declares ``torchlint[runtime]`` as a dependency
        (read again whenever one of its dependency files changed)."""
        if not path or path.startswith("<"):
            return False
        folder = os.path.dirname(os.path.abspath(path))
        files = find_upwards(folder, dependency_files) or ()
        signature = (files, _signature(files))
        known = self._tables.runtime.get(folder)
        if known is not None and known[0] == signature:
            return known[1]
        answer = any(declares_runtime_file(f) for f in files)
        self._tables.runtime[folder] = (signature, answer)
        return answer


def project_of(ctx: FileContext) -> Project:
    """The project of ``ctx``'s file; a file linted with none gets one of its own."""
    if ctx.project is None:
        ctx.project = Project()
    return ctx.project


# -- what a file's answers depend on ----------------------------------------------------------------
def _no_dependencies(ctx: FileContext) -> Set[str]:
    return set()


#: the project files a file's analysis read (absolute paths, or the keys of file lists): its answers depend on
#: them, and a cached result is served only while they are unchanged
_DEPENDENCIES: "Fact[Set[str]]" = Fact("project.dependencies", _no_dependencies)


def depends_on(ctx: FileContext, path: str) -> None:
    """Record that this file's answers depend on ``path`` (a project file, or the key of a project's file
    list, see :meth:`Project.sources`)."""
    _DEPENDENCIES.of(ctx).add(path)


def inherit_dependencies(ctx: FileContext, other: FileContext) -> None:
    """Record that this file's answers depend on every file ``other``'s answers depend on (a project
    module this file's analysis read)."""
    _DEPENDENCIES.of(ctx).update(_DEPENDENCIES.get(other) or ())


def dependencies(ctx: FileContext) -> List[str]:
    """The project files this file's analysis read (for cache invalidation)."""
    found = set(_DEPENDENCIES.get(ctx) or ()) | set(ctx.names.star_sources)
    return sorted(found)


__all__ = ["Project", "project_of", "among_sources", "project_sources", "sources_signature", "notebook_code", "dependency_files",
           "declares_runtime_file", "ROOT_MARKERS", "ROOT_SEARCH_DEPTH", "depends_on", "inherit_dependencies",
           "dependencies"]
