"""The one way torchlint reads a file it did not write: sources, notebooks, configuration files, ignore
files (``.gitignore``, ``.git/info/exclude``, ``core.excludesFile``, a ``.git`` file), git's
configuration and the project's dependency files.

A repository can commit a symlink to ``/dev/zero``, a FIFO named ``.gitignore`` or a file of gigabytes;
none of them may stall a run or exhaust its memory.  So every read resolves symlinks and checks the
target is a regular file before opening it, opens without blocking (a FIFO that appears in between is
refused without waiting for a writer), checks again on the open descriptor, and reads at most
``max_bytes``; what is refused raises :class:`ReadRefused` with a message that says why.

This module imports nothing from torchlint, so every layer may use it.
"""
from __future__ import annotations

import os
import stat
from typing import Tuple

#: limits for the files torchlint reads besides the code it lints
CONFIG_MAX_BYTES = 1 << 20  # pyproject.toml, torchlint.toml, setup.cfg, requirements files
IGNORE_MAX_BYTES = 1 << 20  # .gitignore, .git/info/exclude, core.excludesFile, git config, a .git file

_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
)


class ReadRefused(OSError):
    """A file that was not read: not a regular file, over the size limit, or unreadable.
    ``str()`` is the reason (``not a regular file``, ``file too large (…)``, ``cannot read file: …``);
    ``too_large`` tells a size refusal apart."""

    def __init__(self, reason: str, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large

    def __str__(self) -> str:
        return self.reason


def size_text(n: float) -> str:
    """``8 MiB``, ``50.0 MiB``, ``1.5 KiB``, ``300 bytes``."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n)} bytes"


def too_large(size: int, limit: int) -> str:
    """The reason for refusing a file of ``size`` bytes over ``limit``."""
    shown = size_text(size)
    if shown.replace(".0 ", " ") == size_text(limit):  # "8.0 MiB > 8 MiB" would read as no difference
        return f"file too large ({size:,} bytes > {limit:,} bytes)"
    return f"file too large ({shown} > {size_text(limit)})"


def _refuse_special(st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused("not a regular file")


def read_limited(path: str, max_bytes: int) -> Tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` (symlinks followed) and its status; raises
    :class:`ReadRefused` for a FIFO, socket, device or folder (never opened for reading when seen
    first), for a file over ``max_bytes`` (also one that grows past it while being read), and for
    any error of the system."""
    try:
        _refuse_special(os.stat(path))  # symlinks resolved, then checked: /dev/zero is never opened
        fd = os.open(path, _OPEN_FLAGS)
    except ReadRefused:
        raise
    except (OSError, ValueError) as exc:
        raise ReadRefused(f"cannot read file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        try:
            st = os.fstat(fd)
            _refuse_special(st)  # it changed into something else between the two looks
            if st.st_size > max_bytes:
                raise ReadRefused(too_large(st.st_size, max_bytes), too_large=True)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            chunks = []
            total = 0
            while total <= max_bytes:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        except ReadRefused:
            raise
        except OSError as exc:
            raise ReadRefused(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if total > max_bytes:
        raise ReadRefused(too_large(total, max_bytes), too_large=True)
    return b"".join(chunks), st


def read_text(path: str, max_bytes: int, errors: str = "replace") -> str:
    """The file as UTF-8 text (undecodable bytes handled by ``errors``); refusals as in
    :func:`read_limited`."""
    data, _ = read_limited(path, max_bytes)
    return data.decode("utf-8", errors)


__all__ = ["CONFIG_MAX_BYTES", "IGNORE_MAX_BYTES", "ReadRefused", "read_limited", "read_text", "size_text", "too_large"]
