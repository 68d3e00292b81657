"""Writing a fixed file back: atomically (temporary file in the same folder, then rename), keeping what
the file was (mode, owner and group, extended attributes, hard links), and refusing when the file changed
since it was read.  Temporary files carry the writer's process id, so a later run can remove those of a
writer that was killed."""
from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from typing import Iterable, List


def write_error(exc: BaseException) -> str:
    """Why a write failed, once: an OSError's reason without its errno and path (the caller names the
    file), anything else as it prints."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


class FileChangedError(OSError):
    pass


TEMP_PREFIX = ".torchlint-"
TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"^\.torchlint-(?:(?P<pid>[0-9]+)-)?[A-Za-z0-9_]+\.tmp$")
_STALE_AFTER_S = 3600.0  # a temporary file without a live writer's id is left alone for an hour


def temp_prefix() -> str:
    return f"{TEMP_PREFIX}{os.getpid()}-"


def is_temp_name(name: str) -> bool:
    return _TEMP_NAME.match(name) is not None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def is_stale_temp(path: str) -> bool:
    """A temporary file of ours whose writer is gone (its process is dead, or it is over an hour old)."""
    m = _TEMP_NAME.match(os.path.basename(path))
    if m is None:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    pid = m.group("pid")
    if pid is not None and not _alive(int(pid)):
        return True
    return time.time() - st.st_mtime > _STALE_AFTER_S


def remove_stale_temps(paths: Iterable[str]) -> List[str]:
    """Remove the stale temporary files among ``paths``; returns those removed."""
    removed = []
    for path in paths:
        if is_stale_temp(path):
            try:
                os.unlink(path)
                removed.append(path)
            except OSError:
                pass
    return removed


def _copy_metadata(src_st: os.stat_result, real: str, tmp_fd: int) -> None:
    """Owner and group first, then the mode: changing the owner clears the setuid and setgid bits, so a
    mode set before it would lose them."""
    if hasattr(os, "fchown"):
        try:
            os.fchown(tmp_fd, src_st.st_uid, src_st.st_gid)
        except PermissionError:
            # not root: the file stays ours; keep the group when we may
            try:
                os.fchown(tmp_fd, -1, src_st.st_gid)
            except OSError:
                pass
    os.fchmod(tmp_fd, stat.S_IMODE(src_st.st_mode))
    if hasattr(os, "listxattr"):
        try:
            names = os.listxattr(real)
        except OSError:
            names = []
        for name in names:
            try:
                os.setxattr(tmp_fd, name, os.getxattr(real, name))
            except OSError:
                pass  # not every attribute can be copied (security.* needs privileges)


def _unchanged(path: str, real: str, st: os.stat_result, expect_mtime: int, expect_size: int) -> os.stat_result:
    now = os.stat(real)
    if now.st_mtime_ns != expect_mtime or now.st_size != expect_size or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        raise FileChangedError(errno.EAGAIN, "file changed while it was being linted", path)
    return now


def write_atomic(path: str, text: str, encoding: str, expect_mtime: int, expect_size: int) -> None:
    """Replace the file's content, keeping its mode, owner, group, extended attributes and encoding;
    refuses when the file changed since it was read (checked again just before the rename) or is not
    writable.  A file with several hard links is rewritten in place, so every link sees the fix."""
    real = os.path.realpath(path)
    st = os.stat(real)
    if st.st_mtime_ns != expect_mtime or st.st_size != expect_size:
        raise FileChangedError(errno.EAGAIN, "file changed while it was being linted", path)
    if not os.access(real, os.W_OK) or not st.st_mode & stat.S_IWUSR:
        raise PermissionError(errno.EACCES, "file is not writable", path)
    data = text.encode(encoding)
    if st.st_nlink > 1:
        _write_in_place(path, real, st, data, expect_mtime, expect_size)
        return
    folder = os.path.dirname(real) or "."
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            _copy_metadata(st, real, fh.fileno())
            os.fsync(fh.fileno())
        _unchanged(path, real, st, expect_mtime, expect_size)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_in_place(path: str, real: str, st: os.stat_result, data: bytes, expect_mtime: int, expect_size: int) -> None:
    """Hard links share one inode: a rename would split them, so the content is rewritten in place
    (not atomic against a crash mid-write, which a rename cannot give here anyway)."""
    fd = os.open(real, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or now.st_mtime_ns != expect_mtime or now.st_size != expect_size:
            raise FileChangedError(errno.EAGAIN, "file changed while it was being linted", path)
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.pwrite(fd, view[written:], written)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)
