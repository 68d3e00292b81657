"""A results cache keyed by torchlint's own code, the settings and each file (ruff-style).

A cache inside a repository is input from whoever wrote the repository, so an entry is used only when
this machine wrote it for this very file: each entry carries the file's identity (device, inode, mtime,
size) and content digest, and an HMAC under a per-user secret kept outside the repository
(``~/.cache/torchlint/secret``).  Entries whose findings do not validate (known codes, positions inside
the file, plain message text) are dropped.  The cache file as a whole carries an HMAC too, on its first
line, checked by reading the file in chunks before its JSON is parsed: a file this machine did not write
(a committed one, however large or however well it compresses) costs constant memory and is ignored.
Entries of files that no longer exist are pruned whenever the file is written, and it holds at most
:data:`MAX_ENTRIES` entries.  The folder is ``<cache-dir>/<code fingerprint>/``, where the
fingerprint hashes the source of torchlint and its rules, so an edited rule never serves stale results.

The cache folder is marked with a ``CACHEDIR.TAG`` that says torchlint created it; torchlint writes only
into a folder that carries torchlint's own tag (creating one, with a ``.gitignore``, when the folder does
not exist or is empty), never through a symlink, and ``torchlint clean`` removes only such a folder.  The
standard tag alone (another tool's cache: a cargo ``target/``) is not enough.  When the cache cannot be
used, :attr:`Cache.problem` says why.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import shutil
import stat
import tempfile
from typing import Any, Collection, Dict, List, Optional, Sequence, Tuple

from torchlint.analysis.project import sources_signature
from torchlint.atomic import TEMP_SUFFIX, is_temp_name, remove_stale_temps, temp_prefix
from torchlint.engine import Diagnostic, Edit, FixInfo
from torchlint.reading import ReadRefused, read_limited

DEFAULT_DIR = ".torchlint_cache"
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by torchlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def settings_key(parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.blake2b(blob, digest_size=12).hexdigest()


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the source of torchlint and its rules (editable installs change without a new version)."""
    import torchlint
    import torchlint.rules

    h = hashlib.blake2b(digest_size=12)
    for package in (torchlint, torchlint.rules):
        top = os.path.dirname(os.path.abspath(package.__file__))
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    h.update(os.path.relpath(path, top).encode() + b"\0")
                    try:
                        with open(path, "rb") as fh:
                            h.update(fh.read())
                    except OSError:
                        h.update(b"?")
                    h.update(b"\0")
    return h.hexdigest()


def _secret_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torchlint", "secret")


def machine_secret() -> Optional[bytes]:
    """This user's secret (created on first use, mode 0600); None when it cannot be had."""
    path = _secret_path()
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
                    return None
                data = os.read(fd, 64)
            finally:
                os.close(fd)
            return data if len(data) >= 32 else None
        except FileNotFoundError:
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(os.urandom(32))
            except FileExistsError:
                continue
            except OSError:
                return None
        except OSError:
            return None
    return None


FileIdentity = Tuple[int, int, int, int]  # device, inode, mtime (ns), size


def identity(st: os.stat_result) -> FileIdentity:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _encode(d: Diagnostic) -> list:
    fix = None
    if d.fix is not None:
        fix = [d.fix.title, d.fix.applicability, [[e.content, e.line, e.col, e.end_line, e.end_col] for e in d.fix.edits]]
    row = [d.line, d.col, d.code, d.message, d.end_line, d.end_col, fix]
    if d.cell:
        row.append([d.cell, d.file_line, d.file_end_line])
    return row


def _plain(text: Any) -> bool:
    return isinstance(text, str) and len(text) < 10000 and not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text)


def _pos(value: Any, limit: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit


def _decode(path: str, row: Any, codes: Collection[str], n_lines: int) -> Diagnostic:
    """The diagnostic of a cache row; ValueError when anything about it is not what a rule reports."""
    if not isinstance(row, list) or len(row) not in (7, 8):
        raise ValueError("malformed row")
    line, col, code, message, end_line, end_col, fix = row[:7]
    cell = file_line = file_end_line = 0
    if len(row) == 8:  # a notebook finding: its cell and its lines in the notebook's module text
        if not (isinstance(row[7], list) and len(row[7]) == 3 and all(_pos(v, 1 << 24) for v in row[7])):
            raise ValueError("malformed cell position")
        cell, file_line, file_end_line = row[7]
    if code not in codes or not _plain(message):
        raise ValueError("unknown code or bad message")
    if not (_pos(line, n_lines) and line >= 1 and _pos(end_line, n_lines) and _pos(col, 1 << 24) and col >= 1
            and _pos(end_col, 1 << 24)):
        raise ValueError("position outside the file")
    info = None
    if fix is not None:
        if not (isinstance(fix, list) and len(fix) == 3 and _plain(fix[0]) and fix[1] in ("safe", "unsafe")
                and isinstance(fix[2], list)):
            raise ValueError("malformed fix")
        edits = []
        for e in fix[2]:
            if not (isinstance(e, list) and len(e) == 5 and isinstance(e[0], str)
                    and all(_pos(v, max(n_lines, 1 << 24)) for v in e[1:])):
                raise ValueError("malformed edit")
            edits.append(Edit(*e))
        info = FixInfo(fix[0], fix[1], tuple(edits))
    return Diagnostic(path, line, col, code, message, end_line, end_col, info, cell, file_line, file_end_line)


#: the largest cache file read back, and the largest project module whose digest a cache entry keeps
CACHE_MAX_BYTES = 512 << 20
DEPENDENCY_MAX_BYTES = 16 << 20
#: the most entries (files) one cache file keeps; those of the files linted last are kept first
MAX_ENTRIES = 100_000
#: the first line of a cache file: this, then the HMAC of the rest of the file
HEADER = b"torchlint-cache 1 "
_CHUNK = 1 << 20


def file_digest(path: str) -> Optional[str]:
    """The digest of a file's content; of a folder, the digest of the project file list searched from
    it (a file added or removed there changes it)."""
    if os.path.isdir(path):
        return digest(sources_signature(path).encode("utf-8", "surrogateescape"))
    try:
        return digest(read_limited(path, DEPENDENCY_MAX_BYTES)[0])
    except OSError:
        return None


def _unchanged(deps: Dict[str, Optional[str]]) -> bool:
    return all(file_digest(p) == d for p, d in deps.items())


def _owned_folder(folder: str) -> Optional[str]:
    """Make sure ``folder`` is a cache folder torchlint may write into: not a symlink, and either
    created now, or an existing empty folder (``--cache-dir "$(mktemp -d)"``) — both get the marker and a
    .gitignore — or a folder already carrying torchlint's marker.  None when it is; else why not."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        try:
            os.makedirs(folder)
        except FileExistsError:
            return _owned_folder(folder) if not os.path.islink(folder) else "it is a symlink"
        except OSError as exc:
            return f"it cannot be created: {exc.strerror or exc}"
        return None if _mark(folder) else "it cannot be marked as torchlint's cache"
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if has_marker(folder):
        return None
    try:
        empty = not os.listdir(folder)
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    if not empty:
        if os.path.lexists(os.path.join(folder, MARKER)):
            return "it holds another tool's cache (its CACHEDIR.TAG was not written by torchlint)"
        return "it holds other files and is not torchlint's cache"
    return None if _mark(folder) else "it cannot be marked as torchlint's cache"


def _mark(folder: str) -> bool:
    try:
        for name, text in ((MARKER, MARKER_TEXT), (".gitignore", "# created by torchlint\n*\n")):
            with open(os.path.join(folder, name), "x", encoding="utf-8") as fh:
                fh.write(text)
    except OSError:
        return has_marker(folder)  # another process marked it first
    return True


def has_marker(folder: str) -> bool:
    """Whether ``folder`` carries the tag torchlint writes (not only the standard signature: another
    tool's cache tag does not make a folder torchlint's)."""
    path = os.path.join(folder, MARKER)
    if os.path.islink(path):
        return False
    try:
        data, _ = read_limited(path, 4096)
    except ReadRefused:
        return False
    return data.startswith(MARKER_TEXT.encode())


class Cache:
    def __init__(self, folder: str, key: str, codes: Collection[str] = ()) -> None:
        self.root = folder
        self.folder = os.path.join(folder, code_fingerprint())
        self.file = os.path.join(self.folder, f"{key}.json")
        self.key = key
        self.codes = frozenset(codes) | {"TL000"}
        self.entries: Dict[str, list] = {}
        self.touched: set = set()  # the entries read or written by this run
        self.dirty = False
        self.secret = machine_secret()
        #: why the cache is off (None: it is on, or off for want of a per-user secret)
        self.problem = None if self.secret is None else _owned_folder(folder)
        self.usable = self.secret is not None and self.problem is None
        if not self.usable:
            return
        try:
            body = self._verified_body()
            data = json.loads(body.decode("utf-8")) if body is not None else None
            if isinstance(data, dict) and len(data) <= MAX_ENTRIES:
                self.entries = data
        except (OSError, ValueError, RecursionError):
            self.entries = {}

    def _file_mac(self) -> "hmac.HMAC":
        return hmac.new(self.secret or b"", b"torchlint-cache\0" + self.key.encode() + b"\0", hashlib.sha256)

    def _verified_body(self) -> Optional[bytes]:
        """The JSON text of the cache file when its HMAC says this machine wrote it, else None.  The
        HMAC is checked in chunks before the body is kept in memory, and again on the bytes kept (the
        file may have changed in between)."""
        try:
            st = os.lstat(self.file)
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > CACHE_MAX_BYTES:
            return None  # a symlink, a FIFO, ... or too large
        fd = os.open(self.file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            head = fh.readline(len(HEADER) + 80)
            if not head.startswith(HEADER) or not head.endswith(b"\n"):
                return None
            mac = head[len(HEADER):-1]
            check = self._file_mac()
            total = 0
            while total <= CACHE_MAX_BYTES:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                check.update(chunk)
                total += len(chunk)
            if total > CACHE_MAX_BYTES or not hmac.compare_digest(check.hexdigest().encode(), mac):
                return None
            fh.seek(len(head))
            body = fh.read(total + 1)
        again = self._file_mac()
        again.update(body)
        return body if hmac.compare_digest(again.hexdigest().encode(), mac) else None

    def _mac(self, path: str, content_digest: str, ident: FileIdentity, rows: list) -> str:
        blob = json.dumps([self.key, path, content_digest, list(ident), rows], separators=(",", ":")).encode()
        return hmac.new(self.secret or b"", blob, hashlib.sha256).hexdigest()

    def get(self, path: str, content_digest: str, ident: FileIdentity, n_lines: int) -> Optional[List[Diagnostic]]:
        if not self.usable:
            return None
        full = os.path.abspath(path)
        entry = self.entries.get(full)
        self.touched.add(full)
        if not isinstance(entry, list) or len(entry) not in (4, 5) or entry[0] != content_digest or entry[1] != list(ident):
            return None
        rows, mac = entry[2], entry[3]
        deps = entry[4] if len(entry) == 5 else {}  # the project modules the program model read
        if not isinstance(rows, list) or not isinstance(mac, str) or not isinstance(deps, dict):
            return None
        if not hmac.compare_digest(mac, self._mac(full, content_digest, ident, [rows, deps] if deps else rows)):
            return None
        if deps and not _unchanged(deps):
            return None  # a project module this file's results depend on changed
        try:
            return [_decode(path, row, self.codes, n_lines) for row in rows]
        except (TypeError, ValueError):
            return None

    def put(self, path: str, content_digest: str, ident: FileIdentity, diags: List[Diagnostic],
            dependencies: Sequence[str] = ()) -> None:
        if not self.usable:
            return
        full = os.path.abspath(path)
        rows = [_encode(d) for d in diags]
        deps = {p: file_digest(p) for p in dependencies}
        entry = [content_digest, list(ident), rows, self._mac(full, content_digest, ident, [rows, deps] if deps else rows)]
        self.entries[full] = entry + [deps] if deps else entry
        self.touched.add(full)
        self.dirty = True

    def _pruned(self) -> Dict[str, list]:
        """The entries to write: none of a file that no longer exists, at most :data:`MAX_ENTRIES`
        (this run's first)."""
        kept = {p: e for p, e in self.entries.items() if p in self.touched or os.path.lexists(p)}
        if len(kept) > MAX_ENTRIES:
            order = sorted(kept, key=lambda p: p not in self.touched)  # stable: this run's entries first
            kept = {p: kept[p] for p in order[:MAX_ENTRIES]}
        return kept

    def save(self) -> None:
        if not self.dirty or not self.usable:
            return
        try:
            if os.path.islink(self.folder):
                return
            os.makedirs(self.folder, exist_ok=True)
            remove_stale_temps(
                os.path.join(self.folder, n) for n in os.listdir(self.folder) if is_temp_name(n)
            )
            self.entries = self._pruned()
            body = json.dumps(self.entries, separators=(",", ":")).encode("utf-8")
            mac = self._file_mac()
            mac.update(body)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=temp_prefix(), suffix=TEMP_SUFFIX)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(HEADER + mac.hexdigest().encode() + b"\n")
                    fh.write(body)
                os.replace(tmp, self.file)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a cache that cannot be written is only a slower next run


class CleanError(Exception):
    pass


def clean(folder: Optional[str]) -> Optional[str]:
    """Remove the cache folder: only a real folder carrying torchlint's marker."""
    folder = folder or DEFAULT_DIR
    if os.path.islink(folder):
        raise CleanError(f"{folder} is a symlink, not a torchlint cache; not removed")
    if not os.path.lexists(folder):
        return None
    if not os.path.isdir(folder) or not has_marker(folder):
        raise CleanError(f"{folder} is not a torchlint cache (no {MARKER} written by torchlint); not removed")
    shutil.rmtree(folder)
    return folder
