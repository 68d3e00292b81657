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
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable, List, Optional, Sequence, Tuple

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytest_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".torchlint_cache",
    ".venv",
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


# -- excludes ------------------------------------------------------------------------------------
def matches_any(rel_path: str, patterns: Sequence[str]) -> bool:
    """ruff-style: a pattern matches the path relative to the project root or any single component."""
    rel = rel_path.replace(os.sep, "/")
    parts = rel.split("/")
    for pat in patterns:
        pat = pat.rstrip("/")
        if "/" in pat:
            p = pat[2:] if pat.startswith("./") else pat
            if fnmatchcase(rel, p) or fnmatchcase(rel, p + "/*") or rel.startswith(p + "/"):
                return True
        elif any(fnmatchcase(part, pat) for part in parts):
            return True
    return False


class _GitIgnore:
    """The patterns of one .gitignore, relative to its folder."""

    def __init__(self, base: str, lines: Iterable[str]) -> None:
        self.base = base
        self.rules: List[Tuple[re.Pattern, bool, bool]] = []  # (regex, negated, dir_only)
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            line = line.rstrip(" ") if not line.endswith("\\ ") else line
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            if not line:
                continue
            self.rules.append((re.compile(_glob_to_regex(line, anchored)), negated, dir_only))

    def verdict(self, rel: str, is_dir: bool) -> Optional[bool]:
        """True ignored, False explicitly re-included, None no opinion."""
        result = None
        for regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.fullmatch(rel):
                result = not negated
        return result


def _glob_to_regex(pattern: str, anchored: bool) -> str:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    return body if anchored else f"(?:.*/)?{body}"


def _load_gitignore(folder: str) -> Optional[_GitIgnore]:
    path = os.path.join(folder, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _GitIgnore(folder, fh.readlines())
    except OSError:
        return None


def _git_ignored(ignores: Sequence[_GitIgnore], path: str, is_dir: bool) -> bool:
    ignored = False
    for gi in ignores:
        rel = os.path.relpath(path, gi.base).replace(os.sep, "/")
        v = gi.verdict(rel, is_dir)
        if v is not None:
            ignored = v
    return ignored


def _enclosing_gitignores(folder: str) -> List[_GitIgnore]:
    """The .gitignore files of the folders above ``folder``, up to the repository root."""
    found: List[_GitIgnore] = []
    cur = os.path.abspath(folder)
    while True:
        parent = os.path.dirname(cur)
        if os.path.exists(os.path.join(cur, ".git")) or parent == cur:
            break
        cur = parent
        gi = _load_gitignore(cur)
        if gi is not None:
            found.append(gi)
    found.reverse()
    return found


@dataclass
class Discovery:
    files: List[str]
    missing: List[str]


def discover(
    paths: Sequence[str],
    root: str,
    exclude: Sequence[str],
    force_exclude: bool = False,
    respect_gitignore: bool = True,
) -> Discovery:
    """Expand ``paths`` into the Python files to lint, sorted and without duplicates."""
    files: List[str] = []
    missing: List[str] = []
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
                _enclosing_gitignores(os.path.dirname(os.path.abspath(path))) + _own(os.path.dirname(path) or "."),
                os.path.abspath(path),
                False,
            ):
                continue
            add(path)
            continue
        if force_exclude and matches_any(rel_to_root(path), exclude):
            continue
        base_ignores = _enclosing_gitignores(path) if respect_gitignore else []
        stack: List[Tuple[str, List[_GitIgnore]]] = [(path, base_ignores)]
        while stack:
            folder, ignores = stack.pop()
            if respect_gitignore:
                gi = _load_gitignore(folder)
                if gi is not None:
                    ignores = ignores + [gi]
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            subdirs = []
            for entry in entries:
                try:
                    if entry.is_symlink():
                        continue
                    is_dir = entry.is_dir()
                except OSError:
                    continue
                full = os.path.join(folder, entry.name) if folder != "." else entry.name
                if matches_any(rel_to_root(full), exclude):
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
    return Discovery(files, missing)


def _own(folder: str) -> List[_GitIgnore]:
    gi = _load_gitignore(folder)
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


def read_source(path: str, max_bytes: int = MAX_BYTES) -> Source:
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            raise SourceError("not a regular file")
        if st.st_size > max_bytes:
            raise SourceError(f"file too large ({st.st_size / 1048576:.1f} MiB > {max_bytes / 1048576:.0f} MiB); skipped", warning=True)
        with open(path, "rb") as fh:
            data = fh.read()
    except SourceError:
        raise
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise SourceError(f"cannot read file: {reason}") from None
    text, encoding = decode(data)
    return Source(text, encoding, st.st_mtime_ns, st.st_size)
