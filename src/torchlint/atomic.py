"""Writing a fixed file back: atomically (temporary file in the same folder, then rename), keeping what
the file was (mode, owner and group, extended attributes, hard links), and refusing when the file changed
since it was read.

The temporary file lives in a folder torchlint creates for that one write, beside the file
(``.torchlint-PID-XXXX.tmpdir/content``, mode 0700), never as a loose file in the user's folder: a later
run removes such a folder of a writer that is gone only when it holds nothing but that file, and never
deletes a user's file that merely looks like a temporary one.  A run stopped by SIGTERM removes its
own (:func:`terminate_cleanly`).  Loose ``.torchlint-*.tmp`` files are used only inside the cache folder,
which torchlint owns."""
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
TEMP_DIR_SUFFIX = ".tmpdir"
_TEMP_DIR_NAME = re.compile(r"^\.torchlint-(?P<pid>[0-9]+)-[A-Za-z0-9_]+\.tmpdir$")
_TEMP_CONTENT = "content"  # the one file a write folder holds


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


def is_temp_dir_name(name: str) -> bool:
    return _TEMP_DIR_NAME.match(name) is not None


def is_stale_temp_dir(path: str) -> bool:
    """A write folder of ours whose writer is gone (dead process, or over an hour old): a real folder
    (not a symlink) owned by this user, holding nothing but the temporary file."""
    m = _TEMP_DIR_NAME.match(os.path.basename(path))
    if m is None:
        return False
    try:
        st = os.lstat(path)
        names = os.listdir(path) if stat.S_ISDIR(st.st_mode) else None
    except OSError:
        return False
    if names is None or st.st_uid != os.geteuid() or set(names) - {_TEMP_CONTENT}:
        return False
    if names:
        try:
            inner = os.lstat(os.path.join(path, _TEMP_CONTENT))
        except OSError:
            return False
        if not stat.S_ISREG(inner.st_mode):
            return False
    if not _alive(int(m.group("pid"))):
        return True
    return time.time() - st.st_mtime > _STALE_AFTER_S


def remove_stale_temp_dirs(paths: Iterable[str]) -> List[str]:
    """Remove the stale write folders among ``paths`` (see :func:`is_stale_temp_dir`); returns those
    removed.  Only the folder and its one temporary file are deleted."""
    removed = []
    for path in paths:
        if is_stale_temp_dir(path):
            try:
                try:
                    os.unlink(os.path.join(path, _TEMP_CONTENT))
                except FileNotFoundError:
                    pass
                os.rmdir(path)
                removed.append(path)
            except OSError:
                pass
    return removed


class _WriteFolder:
    """A folder of our own beside ``target`` holding one temporary file; removed on exit (the file
    too, unless it was renamed into place)."""

    def __init__(self, folder: str) -> None:
        self.dir = tempfile.mkdtemp(prefix=temp_prefix(), suffix=TEMP_DIR_SUFFIX, dir=folder)
        self.path = os.path.join(self.dir, _TEMP_CONTENT)

    def open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM (see :func:`terminate_cleanly`), so that a write under way
    removes its temporary file on the way out."""


def terminate_cleanly() -> object:
    """Turn SIGTERM into :class:`Terminated` in this (main) thread (worker processes reset it); returns
    the handler it replaced, for :func:`restore_sigterm` (None when none was installed)."""
    import signal

    def _raise(signum, frame):  # noqa: ARG001
        raise Terminated()

    try:
        return signal.signal(signal.SIGTERM, _raise)
    except (ValueError, OSError, AttributeError):  # not the main thread, or no SIGTERM here
        return None


def restore_sigterm(previous: object) -> None:
    """Put back the SIGTERM handler :func:`terminate_cleanly` replaced."""
    import signal

    if previous is None:
        return
    try:
        signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]
    except (ValueError, OSError, AttributeError, TypeError):
        pass


def write_new_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (a new or a regular file) through a temporary file beside it and a
    rename: a reader never sees half of it, and a failure leaves what was there.  Creates no folder.
    A path that exists and is not a regular file (a device, a FIFO) is written directly, never
    replaced.  Errors are raised as OSError."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", path)
        fd = os.open(real, os.O_WRONLY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return
    folder = os.path.dirname(real) or "."
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "no such folder", folder)
    work = _WriteFolder(folder)
    try:
        fd = work.open()
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if st is not None:
                os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(fh.fileno(), 0o666 & ~umask)
            os.fsync(fh.fileno())
        os.replace(work.path, real)
    finally:
        work.remove()


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
    work = _WriteFolder(folder)
    try:
        fd = work.open()
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            _copy_metadata(st, real, fh.fileno())
            os.fsync(fh.fileno())
        _unchanged(path, real, st, expect_mtime, expect_size)
        os.replace(work.path, real)
    finally:
        work.remove()


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
