"""Finding the files to lint and reading them safely.

Directories are walked without following symlinks; default and configured excludes prune whole
folders; ``.gitignore`` files are honoured (their common subset: globs, ``/`` anchoring, trailing ``/``
for folders, ``!`` negation, ``**``).  Files named explicitly are linted even when excluded, unless
``--force-exclude`` is given (what pre-commit needs, since it passes file names).
"""
from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Iterable, List, Optional, Sequence, Tuple

from torchlint.folders import find_upwards
from torchlint.reading import IGNORE_MAX_BYTES, ReadRefused, read_limited, read_text, too_large

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".torchlint_cache",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "*.egg-info",
)

PY_SUFFIXES = (".py", ".pyi")
LINT_SUFFIXES = PY_SUFFIXES + (".ipynb",)  # what a folder walk picks up
MAX_BYTES = 8 * 1024 * 1024
#: the most seconds the discovery walk of one run may take (then it stops with an error)
WALK_BUDGET_S = 120.0
#: a notebook file may be larger than ``max-file-size`` (outputs: images, tables); its code cells may not
NOTEBOOK_MAX_BYTES = 100 * 1024 * 1024


def file_limit(path: str, max_bytes: int) -> int:
    """The most bytes read of the file at ``path``: ``max_bytes``, or for a notebook the larger
    notebook limit (its code is measured against ``max_bytes`` once the JSON is read)."""
    return max(max_bytes, NOTEBOOK_MAX_BYTES) if path.lower().endswith(".ipynb") else max_bytes


# -- excludes ------------------------------------------------------------------------------------
def matches_any(rel_path: str, patterns: Sequence[str]) -> bool:
    """ruff-style: a pattern matches the path relative to the project root or any single component."""
    rel = rel_path.replace(os.sep, "/")
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if "/" in pat:
            if _rooted_match(rel, pat):
                return True
        elif any(fnmatchcase(part, pat) for part in parts):
            return True
    return False


def _rooted_match(rel: str, pat: str) -> bool:
    """A pattern with a ``/`` against a path relative to the project root (the path and what is under it)."""
    p = pat[2:] if pat.startswith("./") else pat
    return fnmatchcase(rel, p) or fnmatchcase(rel, p + "/*") or rel.startswith(p + "/")


def _excluded_entry(rel_path: str, name: str, patterns: Sequence[str]) -> bool:
    """An entry met while walking a folder: a pattern with a ``/`` matches its path relative to the
    project root; a single-component pattern matches its own name (the folders above it were checked
    as the walk entered them, and the folders above a path given on the command line are not looked
    at: ``torchlint venv/lib/site-packages/pkg`` lints ``pkg``)."""
    rel = rel_path.replace(os.sep, "/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if "/" in pat:
            if _rooted_match(rel, pat):
                return True
        elif fnmatchcase(name, pat):
            return True
    return False


class _GitIgnore:
    """The patterns of one ignore file (a .gitignore, .git/info/exclude or core.excludesFile), relative
    to ``base``, with git's semantics: last matching line wins, ``!`` re-includes, a trailing ``/`` means
    folders only, a ``/`` elsewhere anchors the pattern to ``base``, wildmatch globs (``*``, ``?``,
    ``[...]``, ``**``, backslash escapes).  A line git cannot read as a glob matches nothing."""

    def __init__(self, base: str, lines: Iterable[str]) -> None:
        self.base = base
        self.rules: List[Tuple[Any, bool, bool]] = []  # (matcher with .fullmatch, negated, dir_only)
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#"):
                continue
            line = _strip_trailing_spaces(line)
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            dir_only = line.endswith("/") and not line.endswith("\\/")
            if dir_only:
                line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            if line.startswith("/"):
                line = line[1:]
            parts = _wildmatch_parts(line)
            if parts is None:
                continue
            if not anchored:
                parts = [_DIRS] + parts
            self.rules.append((_matcher(parts), negated, dir_only))

    def verdict(self, rel: str, is_dir: bool) -> Optional[bool]:
        """True ignored, False explicitly re-included, None no opinion."""
        result = None
        for regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.fullmatch(rel):
                result = not negated
        return result


def _strip_trailing_spaces(line: str) -> str:
    """Trailing blanks are dropped unless escaped with a backslash."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = 0
        i = end - 2
        while i >= 0 and line[i] == "\\":
            backslashes += 1
            i -= 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9a-fA-F",
}


def _bracket(pattern: str, i: int) -> Optional[Tuple[str, int]]:
    """The regex of the ``[...]`` starting at ``pattern[i]`` and the index after it; None when it does
    not close (git's wildmatch then fails the whole pattern)."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    parts: List[str] = []
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            body = "".join(parts)
            if negate:
                return ("[^/" + body + "]"), j + 1
            return ("[" + body + "]" if body else "(?!)"), j + 1
        first = False
        if c == "[" and pattern.startswith("[:", j):
            k = pattern.find(":]", j + 2)
            if k == -1:
                return None
            name = pattern[j + 2 : k]
            if name not in _CLASSES:
                return None
            parts.append(_CLASSES[name])
            j = k + 2
            continue
        if c == "\\":
            j += 1
            if j >= len(pattern):
                return None
            c = pattern[j]
        if j + 2 < len(pattern) and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            hi = pattern[j + 2]
            k = j + 3
            if hi == "\\":
                if k >= len(pattern):
                    return None
                hi = pattern[k]
                k += 1
            if c <= hi:
                parts.append(re.escape(c) + "-" + re.escape(hi))
            j = k
            continue
        if c != "/":
            parts.append(re.escape(c))
        j += 1
    return None


#: the pieces of a wildmatch pattern that repeat: ``*`` (within a name), ``x/**`` (everything inside),
#: ``**/`` and the implicit start of an unanchored pattern (zero or more folders)
_STAR, _ANY, _DIRS = "[^/]*", ".*", "(?:.*/)?"
_REPEATS = (_STAR, _ANY, _DIRS)


def _wildmatch_parts(pattern: str) -> Optional[List[str]]:
    """git's wildmatch (with slashes significant) as regex pieces: each one character's regex, or one
    of :data:`_REPEATS`; None for a pattern that matches nothing."""
    out: List[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            stars = j - i
            at_start = i == 0 or pattern[i - 1] == "/"
            at_end = j == n or pattern[j] == "/"
            if stars >= 2 and at_start and at_end:
                if j == n:  # `x/**`: everything inside (`**` alone: everything)
                    out.append(_ANY)
                else:  # `**/`: zero or more folders
                    out.append(_DIRS)
                    j += 1
            else:
                out.append(_STAR)
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            got = _bracket(pattern, i)
            if got is None:
                return None
            out.append(got[0])
            i = got[1]
            continue
        elif c == "\\":
            i += 1
            if i >= n:
                return None  # a trailing backslash matches nothing
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return out


def _wildmatch_regex(pattern: str) -> Optional[str]:
    """git's wildmatch (with slashes significant) as a regex; None for a pattern that matches nothing."""
    parts = _wildmatch_parts(pattern)
    return None if parts is None else "".join(parts)


class _Glob:
    """A wildmatch pattern matched without backtracking: the set of pattern positions reachable after
    each character (a Thompson simulation, its steps memoised into a small DFA), so a match costs
    time linear in the path whatever the pattern (``*a*a*a*a*a*a*b`` against a long name, twelve
    ``**/`` against a deep path), where a backtracking regex takes exponential time."""

    _MAX_STEPS = 4096  # memoised transitions kept (then forgotten and rebuilt)

    def __init__(self, parts: Sequence[str]) -> None:
        self.parts = list(parts)
        self.one = [None if p in _REPEATS else re.compile(p, re.DOTALL) for p in self.parts]
        self.steps: dict = {}
        self.start = self._closure({0})

    def _closure(self, states: Iterable[int]) -> frozenset:
        out = set()
        todo = list(states)
        while todo:
            i = todo.pop()
            if i in out:
                continue
            out.add(i)
            if i < len(self.parts) and self.parts[i] in _REPEATS:
                todo.append(i + 1)  # each repeat may match nothing
        return frozenset(out)

    def _step(self, states: frozenset, ch: str) -> frozenset:
        nxt = set()
        for i in states:
            if i >= len(self.parts):
                continue
            part = self.parts[i]
            if part == _STAR:
                if ch != "/":
                    nxt.add(i)
            elif part == _ANY:
                nxt.add(i)
            elif part == _DIRS:
                nxt.add(i)
                if ch == "/":
                    nxt.add(i + 1)
            elif self.one[i].fullmatch(ch):  # type: ignore[union-attr]
                nxt.add(i + 1)
        return self._closure(nxt)

    def fullmatch(self, text: str) -> bool:
        states = self.start
        steps = self.steps
        for ch in text:
            key = (states, ch)
            got = steps.get(key)
            if got is None:
                if len(steps) >= self._MAX_STEPS:
                    steps.clear()
                got = steps[key] = self._step(states, ch)
            states = got
            if not states:
                return False
        return len(self.parts) in states


def _matcher(parts: Sequence[str]):
    """A compiled regex when the pattern has at most two repeats (its backtracking stays within a
    small power of a path's length), else a :class:`_Glob`."""
    if sum(p in _REPEATS for p in parts) <= 2:
        return re.compile("".join(parts), re.DOTALL)
    return _Glob(parts)


Notes = Optional[List[str]]  # where a refused ignore or git file is reported ("path: reason; ignored")


def _refused(notes: Notes, path: str, exc: ReadRefused) -> None:
    if notes is not None:
        notes.append(f"{path}: {exc}; not used")


def _load_gitignore(folder: str, notes: Notes = None) -> Optional[_GitIgnore]:
    path = os.path.join(folder, ".gitignore")
    if not os.path.lexists(path):
        return None
    return _load_ignore_file(path, folder, notes)


def _load_ignore_file(path: str, base: str, notes: Notes = None) -> Optional[_GitIgnore]:
    try:
        text = read_text(path, IGNORE_MAX_BYTES, errors="surrogateescape")
    except ReadRefused as exc:
        if os.path.lexists(path):
            _refused(notes, path, exc)
        return None
    try:
        return _GitIgnore(base, text.split("\n"))
    except (ValueError, RecursionError):
        return None


def _git_ignored(ignores: Sequence[_GitIgnore], path: str, is_dir: bool) -> bool:
    ignored = False
    for gi in ignores:
        rel = os.path.relpath(path, gi.base).replace(os.sep, "/")
        if rel.startswith("../") or rel == "..":
            continue
        v = gi.verdict(rel, is_dir)
        if v is not None:
            ignored = v
    return ignored


def _repo_root(folder: str) -> Optional[str]:
    """The git repository's root folder around ``folder`` (the nearest one holding ``.git``)."""
    return find_upwards(folder, lambda cur: cur if os.path.exists(os.path.join(cur, ".git")) else None)


def _git_dirs(root: str, notes: Notes = None) -> Tuple[Optional[str], Optional[str]]:
    """(the repository's git folder, its common folder) for ``root/.git`` (a folder or a `gitdir:` file)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git, dot_git
    try:
        first = read_text(dot_git, IGNORE_MAX_BYTES).split("\n", 1)[0].strip()
    except ReadRefused as exc:
        _refused(notes, dot_git, exc)
        return None, None
    if not first.startswith("gitdir:"):
        return None, None
    gitdir = os.path.join(root, first[len("gitdir:"):].strip())
    common = gitdir
    commondir = os.path.join(gitdir, "commondir")
    if os.path.lexists(commondir):
        try:
            common = os.path.normpath(os.path.join(gitdir, read_text(commondir, IGNORE_MAX_BYTES).split("\n", 1)[0].strip()))
        except ReadRefused as exc:
            _refused(notes, commondir, exc)
    return gitdir, common


def _config_excludes_file(config_files: Sequence[str], notes: Notes = None) -> Optional[str]:
    """``core.excludesFile`` from git configuration files (later files win)."""
    value: Optional[str] = None
    for path in config_files:
        if not os.path.lexists(path):
            continue
        try:
            text = read_text(path, IGNORE_MAX_BYTES)
        except ReadRefused as exc:
            _refused(notes, path, exc)
            continue
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line[1 : line.find("]")].strip().lower() if "]" in line else ""
                continue
            key, sep, val = line.partition("=")
            if section == "core" and sep and key.strip().lower() == "excludesfile":
                val = val.split(" #")[0].split(" ;")[0].strip()
                if len(val) >= 2 and val[0] == val[-1] == '"':
                    val = val[1:-1]
                value = val
    if value is not None:
        value = os.path.expanduser(value)
    return value


def _repository_excludes(root: str, notes: Notes = None) -> List[_GitIgnore]:
    """core.excludesFile, then .git/info/exclude: the lowest-precedence ignore files of the repository."""
    gitdir, common = _git_dirs(root, notes)
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    if common:
        configs.append(os.path.join(common, "config"))
    excludes_file = _config_excludes_file(configs, notes) or os.path.join(xdg, "git", "ignore")
    found: List[_GitIgnore] = []
    for path in (excludes_file, os.path.join(common, "info", "exclude") if common else None):
        if path:
            full = path if os.path.isabs(path) else os.path.join(root, path)
            gi = _load_ignore_file(full, root, notes) if os.path.lexists(full) else None
            if gi is not None:
                found.append(gi)
    return found


def _enclosing_gitignores(folder: str, notes: Notes = None) -> List[_GitIgnore]:
    """The ignore files that apply above ``folder``: the repository's excludes, then the .gitignore
    files of the folders from the repository root down to ``folder``'s parent."""
    cur = os.path.abspath(folder)
    root = _repo_root(cur)
    chain: List[str] = []
    while cur != root:
        parent = os.path.dirname(cur)
        if parent == cur:
            break  # not in a repository: every .gitignore above counts
        cur = parent
        chain.append(cur)
    found = _repository_excludes(root, notes) if root is not None else []
    for d in reversed(chain):
        gi = _load_gitignore(d, notes)
        if gi is not None:
            found.append(gi)
    return found


@dataclass
class Discovery:
    files: List[str]
    missing: List[str]
    unreadable: List[str] = field(default_factory=list)  # "folder: reason" for folders not walked
    temps: List[str] = field(default_factory=list)  # write folders of ours seen in the walk (atomic.py)
    warnings: List[str] = field(default_factory=list)  # ignore files not read ("path: reason; not used")


def discover(
    paths: Sequence[str],
    root: str,
    exclude: Sequence[str],
    force_exclude: bool = False,
    respect_gitignore: bool = True,
    budget_s: Optional[float] = None,
) -> Discovery:
    """Expand ``paths`` into the Python files to lint, sorted and without duplicates.  The walk stops
    after ``budget_s`` seconds (default :data:`WALK_BUDGET_S`) with a problem in ``unreadable`` that
    says so: discovery is under a watchdog too."""
    import time

    deadline = time.monotonic() + (WALK_BUDGET_S if budget_s is None else budget_s)
    files: List[str] = []
    missing: List[str] = []
    unreadable: List[str] = []
    temps: List[str] = []
    notes: List[str] = []
    seen = set()

    def rel_to_root(p: str) -> str:
        try:
            return os.path.relpath(os.path.abspath(p), root)
        except ValueError:  # another drive on Windows
            return p

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            files.append(p)

    for path in paths:
        if not os.path.lexists(path):
            missing.append(path)
            continue
        if not os.path.isdir(path):
            if force_exclude and matches_any(rel_to_root(path), exclude):
                continue
            if force_exclude and respect_gitignore and _git_ignored(
                _enclosing_gitignores(os.path.dirname(os.path.abspath(path)), notes) + _own(os.path.dirname(path) or ".", notes),
                os.path.abspath(path),
                False,
            ):
                continue
            add(path)
            continue
        if force_exclude and matches_any(rel_to_root(path), exclude):
            continue
        base_ignores = _enclosing_gitignores(path, notes) if respect_gitignore else []
        stack: List[Tuple[str, List[_GitIgnore]]] = [(path, base_ignores)]
        while stack:
            if time.monotonic() > deadline:
                unreadable.append(
                    f"{path}: finding the files took over {WALK_BUDGET_S if budget_s is None else budget_s:g} s "
                    f"(a very large tree, or slow ignore patterns); stopped at {stack[-1][0]}: narrow the paths "
                    "or exclude folders"
                )
                break
            folder, ignores = stack.pop()
            if respect_gitignore:
                gi = _load_gitignore(folder, notes)
                if gi is not None:
                    ignores = ignores + [gi]
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                unreadable.append(f"{folder}: cannot read folder: {exc.strerror or exc}")
                continue
            subdirs = []
            for entry in entries:
                full = os.path.join(folder, entry.name) if folder != "." else entry.name
                try:
                    if entry.is_symlink():
                        continue
                    is_dir = entry.is_dir()
                except OSError as exc:
                    unreadable.append(f"{full}: cannot read: {exc.strerror or exc}")
                    continue
                if is_dir and entry.name.startswith(".torchlint-") and entry.name.endswith(".tmpdir"):
                    temps.append(full)  # a write folder of ours: never walked into
                    continue
                if _excluded_entry(rel_to_root(full), entry.name, exclude):
                    continue
                if ignores and _git_ignored(ignores, os.path.abspath(full), is_dir):
                    continue
                if is_dir:
                    subdirs.append(full)
                elif entry.name.endswith(LINT_SUFFIXES):
                    add(full)
            for d in reversed(subdirs):
                stack.append((d, ignores))
    files.sort()
    return Discovery(files, missing, unreadable, temps, list(dict.fromkeys(notes)))


def _own(folder: str, notes: Notes = None) -> List[_GitIgnore]:
    gi = _load_gitignore(folder, notes)
    return [gi] if gi is not None else []


# -- reading -------------------------------------------------------------------------------------
class SourceError(Exception):
    """A file that cannot be linted: unreadable, binary, undecodable (reported as TL000), or too large
    (``warning``: skipped with a message on stderr)."""

    def __init__(self, message: str, warning: bool = False) -> None:
        super().__init__(message)
        self.warning = warning


@dataclass
class Source:
    text: str
    encoding: str  # the codec that writes the file back byte-for-byte (utf-8-sig keeps a BOM)
    mtime_ns: int
    size: int


def decode(data: bytes) -> Tuple[str, str]:
    if b"\x00" in data:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot decode file: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode file as {encoding}: {exc}") from None
    return text, encoding


def read_regular(path: str, max_bytes: int) -> Optional[Tuple[bytes, Tuple[int, int, int, int]]]:
    """(the bytes, (device, inode, mtime, size)) of a regular file of at most ``max_bytes``; None
    otherwise (a FIFO or device is never opened for reading, a larger file is not read)."""
    try:
        data, st = read_limited(path, max_bytes)
    except ReadRefused:
        return None
    return data, (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def read_source(path: str, max_bytes: int = MAX_BYTES) -> Source:
    """The text of a file to lint.  A notebook may be as large as the notebook limit: its code cells
    are measured against ``max_bytes`` once its JSON is read."""
    limit = file_limit(path, max_bytes)
    try:
        data, st = read_limited(path, limit)
    except ReadRefused as exc:
        if exc.too_large:
            raise SourceError(f"{exc}; skipped", warning=True) from None
        raise SourceError(str(exc)) from None
    text, encoding = decode(data)
    return Source(text, encoding, st.st_mtime_ns, st.st_size)


def code_too_large(code_bytes: int, max_bytes: int) -> SourceError:
    """The warning for a notebook whose code cells hold more than ``max_bytes``."""
    return SourceError(too_large(code_bytes, max_bytes).replace("file too large", "notebook code too large", 1)
                       + "; skipped", warning=True)
