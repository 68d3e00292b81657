"""A results cache keyed by tool version, settings and file content (ruff-style).

One JSON file per settings key under ``<cache-dir>/<version>/``; entries map a path to the content
digest it was linted with and the diagnostics found.  A changed file, another tool version or other
settings simply miss.  ``torchlint clean`` removes the folder.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional

from torchlint import __version__
from torchlint.engine import Diagnostic, Edit, FixInfo

DEFAULT_DIR = ".torchlint_cache"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def settings_key(parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.blake2b(blob, digest_size=12).hexdigest()


def _encode(d: Diagnostic) -> list:
    fix = None
    if d.fix is not None:
        fix = [d.fix.title, d.fix.applicability, [[e.content, e.line, e.col, e.end_line, e.end_col] for e in d.fix.edits]]
    row = [d.line, d.col, d.code, d.message, d.end_line, d.end_col, fix]
    if d.cell:
        row.append([d.cell, d.file_line, d.file_end_line])
    return row


def _decode(path: str, row: list) -> Diagnostic:
    line, col, code, message, end_line, end_col, fix = row[:7]
    cell, file_line, file_end_line = row[7] if len(row) > 7 else (0, 0, 0)
    info = None
    if fix is not None:
        info = FixInfo(fix[0], fix[1], tuple(Edit(*e) for e in fix[2]))
    return Diagnostic(path, line, col, code, message, end_line, end_col, info, cell, file_line, file_end_line)


class Cache:
    def __init__(self, folder: str, key: str) -> None:
        self.folder = os.path.join(folder, __version__)
        self.file = os.path.join(self.folder, f"{key}.json")
        self.entries: Dict[str, list] = {}
        self.dirty = False
        try:
            with open(self.file, encoding="utf-8") as fh:
                data = json.load(fh)
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            self.entries = {}

    def get(self, path: str, content_digest: str) -> Optional[List[Diagnostic]]:
        entry = self.entries.get(os.path.abspath(path))
        if not entry or entry[0] != content_digest:
            return None
        try:
            return [_decode(path, row) for row in entry[1]]
        except (TypeError, ValueError):
            return None

    def put(self, path: str, content_digest: str, diags: List[Diagnostic]) -> None:
        self.entries[os.path.abspath(path)] = [content_digest, [_encode(d) for d in diags]]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(self.folder, exist_ok=True)
            gitignore = os.path.join(os.path.dirname(self.folder), ".gitignore")
            if not os.path.exists(gitignore):
                with open(gitignore, "w", encoding="utf-8") as fh:
                    fh.write("# created by torchlint\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.entries, fh, separators=(",", ":"))
            os.replace(tmp, self.file)
        except OSError:
            pass  # a cache that cannot be written is only a slower next run


def clean(folder: Optional[str]) -> Optional[str]:
    folder = folder or DEFAULT_DIR
    if os.path.isdir(folder):
        shutil.rmtree(folder, ignore_errors=True)
        return folder
    return None
