"""The driver above the engine: files read (:mod:`torchlint.files`), notebooks linted as notebooks
(:mod:`torchlint.notebook`), and worker processes with a watchdog: no file can hang, crash or stall a run.

Each file is analysed in a worker process under a time budget: time on a CPU where the system tells it
(Linux), so that a worker kept waiting for a CPU on a busy machine is not stopped for it (it gets up to
:data:`WALL_FACTOR` times its budget in wall-clock time), while one that is blocked is stopped when its
budget has passed. A worker that runs past its file's budget is killed and replaced; one that dies (a
native parser that overflows its stack, the kernel's out-of-memory killer) is replaced too. Either way
the file is reported as ``TL000`` with no partial findings and no fixes, and the run goes on with the
next file. This holds with one worker (``--jobs 1``) as with several, in the flake8 plugin, and for any
host that keeps a :class:`Supervisor`.

Workers are forked from the process that starts them (the function they apply is inherited, not
pickled) and talk to it over two pipes: one file's work goes out, its result comes back.  A worker exits
when the process that started it dies, even from SIGKILL: on Linux the kernel signals it
(``PR_SET_PDEATHSIG``), elsewhere a thread watches the parent, and an idle worker also stops at the end
of its task pipe.  Where ``fork`` does not exist, work runs in the calling process without a watchdog.

Memory is watched like time: while a worker analyses a file its resident memory is read every
:data:`MEMORY_POLL` seconds (Linux), and a worker that goes over :data:`FILE_MEMORY` (1 GiB) is killed
and replaced; the file is reported as ``TL000`` "too large to analyse" and the run goes on, so no single
file takes more than that, whatever its shape (libcst alone would take about 8 GB for an 8 MB generated
data table).

Results stream back one file at a time and the worker keeps nothing between files but the
warm-up state of its modules; a worker whose resident memory went over :data:`RECYCLE_BYTES` after a
file (a huge file's parse, fragmentation) is replaced, so a run's peak depends on its largest file and
the number of workers, not on how many files it lints.
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from torchlint.analysis.project import Project
from torchlint.engine import PARSE_ERROR, Diagnostic, FileResult, FileTask, Settings, lint_source
from torchlint.files import SourceError, read_source
from torchlint.notebook import is_notebook, lint_notebook
from torchlint.selection import keep

# seconds of analysis a file may take, for a file up to SCALE_BYTES; larger files get proportionally more
DEFAULT_FILE_TIMEOUT = 10.0
SCALE_BYTES = 32 * 1024
# the budget is time on a CPU: a worker that waits for one on a busy machine gets more wall-clock time,
# up to this many times its budget
WALL_FACTOR = 10
# a worker whose resident memory is above this (plus what it inherited past FORK_ALLOWANCE) after a file is
# replaced by a fresh one
RECYCLE_BYTES = 512 * 1024 * 1024
# a worker collects garbage at once when its memory grew this much since it last collected (or
# started); measured from the last collection, not from the start: memory a collection could not give
# back (fragmentation, the program model's bounded tables) would otherwise make every later file pay a
# full collection over everything alive
COLLECT_BYTES = 64 * 1024 * 1024
#: the collector's thresholds in a worker: a parse makes hundreds of thousands of objects that live as long
#: as the file's analysis, and every automatic collection of the older generations scans them again (with
#: the interpreter's defaults, the project's parsed modules too); a young collection still runs after a
#: million new objects, the rest is left to the collection at ``COLLECT_BYTES``, which bounds the memory
#: (10% of a cold single-process run on the large corpus went to the automatic collections at (50_000, 20, 100))
GC_THRESHOLDS = (1_000_000, 1000, 1000)

#: the most resident memory a worker may hold while it analyses one file (checked on Linux)
FILE_MEMORY = 1 << 30
#: how often, in seconds, the memory of busy workers is read
MEMORY_POLL = 0.05
#: a worker starts with the memory of the process it was forked from (counted in its resident set);
#: what the parent holds above this much (the findings of a long run) is added to the worker's limit
FORK_ALLOWANCE = 256 * 1024 * 1024

CAN_ISOLATE = hasattr(os, "fork")


def budget(timeout: float, size: int) -> float:
    """The time a file of ``size`` bytes may take: ``timeout`` up to 32 KiB, proportionally more above."""
    return timeout * max(1.0, size / SCALE_BYTES)


def timeout_message(seconds: float) -> str:
    return f"analysis of this file took longer than {_seconds(seconds)} s; please report it"


def crash_message(status: str) -> str:
    return f"analysis of this file stopped the worker process ({status}); please report it"


def memory_message(limit: int) -> str:
    return f"too large to analyse: the analysis of this file went over {limit >> 20} MiB of memory"


def _seconds(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


@dataclass(frozen=True)
class Outcome:
    """What became of one item: ``kind`` is "ok" (``value`` holds the result), "error" (the function
    raised: ``detail``), "timeout" (``seconds``: the budget it ran past), "memory" (``detail``: the limit
    in bytes it went over) or "crash" (``detail``)."""

    kind: str
    value: Any = None
    detail: str = ""
    seconds: float = 0.0


# -- the child side -------------------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Make this process exit when ``parent`` does, whatever kills it."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="torchlint-parent-watch", daemon=True).start()


def _close_other_fds(keep: Sequence[int]) -> None:
    """Close every inherited descriptor but stdio and ``keep``: a worker must not hold the pipes of its
    siblings (their death would go unnoticed) or of the host process."""
    low = 3
    for fd in sorted(keep):
        if fd > low:
            os.closerange(low, fd)
        low = max(low, fd + 1)
    try:
        top = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        top = 4096
    os.closerange(low, max(low, top))


def _serve(fn: Callable[[Any], Any], tasks: Connection, results: Connection) -> None:
    # what the worker inherited lives as long as it does: keep it out of the collector's scans, so a
    # collection costs what the last file left behind
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    floor = current_rss()
    while True:
        try:
            item = tasks.recv()
        except (EOFError, OSError):
            return
        try:
            out = Outcome("ok", fn(item))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, the worker goes on
            out = Outcome("error", detail=f"{type(exc).__name__}: {exc}")
        try:
            results.send(out)
        except (BrokenPipeError, EOFError):
            return
        except Exception as exc:  # an unpicklable result
            results.send(Outcome("error", detail=f"result could not be sent: {type(exc).__name__}: {exc}"))
        out = None
        rss = current_rss()
        if rss > floor + COLLECT_BYTES:  # files' facts are reference cycles: free them now
            gc.collect()
            rss = floor = current_rss()
        results.send_bytes(str(rss).encode())


def current_rss() -> int:
    """This process's resident memory in bytes (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
    except (ImportError, OSError):
        return 0


# -- the parent side ------------------------------------------------------------------------------
def _rss_of(pid: int) -> Optional[int]:
    """The resident memory of process ``pid`` in bytes (None where /proc is absent)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (ValueError, OSError, AttributeError):  # pragma: no cover
    _PAGE = 4096


def _cpu_seconds(pid: int) -> Tuple[Optional[float], bool]:
    """CPU seconds used by process ``pid`` and whether it is runnable (None where /proc is absent)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS, fields[0] == b"R"
    except (OSError, ValueError, IndexError):
        return None, False


try:
    _TICKS = float(os.sysconf("SC_CLK_TCK"))
except (ValueError, OSError, AttributeError):  # pragma: no cover
    _TICKS = 100.0


class Worker:
    """One forked process that applies ``fn`` to each item it is sent."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _die_with_parent(parent)
                os.close(task_w)
                os.close(result_r)
                _close_other_fds((task_r, result_w))
                _serve(fn, Connection(task_r, writable=False), Connection(result_w, readable=False))
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        #: the limit's allowance for what the worker inherited (see FORK_ALLOWANCE)
        self.inherited = max(0, current_rss() - FORK_ALLOWANCE)
        self.pid = pid
        self.owner = parent
        self.tasks = Connection(task_w, readable=False)
        self.results = Connection(result_r, writable=False)
        self.item: Any = None
        self.deadline = 0.0
        self.budget = 0.0
        self.started = 0.0
        self.cpu_start: Optional[float] = None
        self.rss = 0

    def send(self, item: Any, seconds: float) -> None:
        self.item = item
        self.budget = seconds
        self.started = time.monotonic()
        self.deadline = self.started + seconds
        self.cpu_start = _cpu_seconds(self.pid)[0]
        self.tasks.send(item)

    def starved(self) -> float:
        """At the deadline: the part of the budget a runnable worker did not get to use because the
        machine was busy (the deadline moves by that much), or 0 when the worker used its budget, is
        blocked rather than waiting for a CPU, or has had :data:`WALL_FACTOR` times its budget already."""
        cpu, runnable = _cpu_seconds(self.pid)
        if cpu is None or self.cpu_start is None or not runnable:
            return 0.0
        if time.monotonic() - self.started >= WALL_FACTOR * self.budget:
            return 0.0
        return max(0.0, self.budget - (cpu - self.cpu_start))

    def receive(self) -> Outcome:
        """The outcome of the item sent; a crash when the worker died before answering."""
        try:
            out = self.results.recv()
            self.rss = int(self.results.recv_bytes())
            return out
        except (EOFError, OSError, ValueError):
            return Outcome("crash", detail=self._exit_status())

    def _exit_status(self) -> str:
        try:
            _pid, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "exited"
        self.pid = 0
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return f"killed by {name}"
        return f"exit status {os.WEXITSTATUS(status)}"

    def stop(self) -> None:
        """Kill the worker (it may be busy) and reap it."""
        if os.getpid() != self.owner:  # a copy inherited through a fork: not ours to kill
            self._forget()
            return
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        self._forget()

    def _forget(self) -> None:
        for conn in (self.tasks, self.results):
            try:
                conn.close()
            except OSError:
                pass


class Pool:
    """``size`` workers applying ``fn``; :meth:`run` streams the outcomes of a sequence of items.
    ``memory``: the most resident memory (bytes) a busy worker may hold (None: no limit)."""

    def __init__(self, fn: Callable[[Any], Any], size: int, memory: Optional[int] = FILE_MEMORY) -> None:
        self.fn = fn
        self.size = max(1, size)
        self.memory = memory
        self.workers: List[Worker] = []
        self.replaced = 0

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        workers, self.workers = self.workers, []
        for w in workers:
            w.stop()

    def _dispatch(self, w: Optional[Worker], item: Any, seconds: float) -> Worker:
        """Send ``item`` to ``w`` (a fresh worker when None, or when ``w`` died while idle)."""
        if w is not None:
            try:
                w.send(item, seconds)
                return w
            except OSError:
                self._replace(w)
        w = Worker(self.fn)
        self.workers.append(w)
        w.send(item, seconds)
        return w

    def run(self, items: Iterable[Any], seconds: Callable[[Any], float]) -> Iterator[Tuple[Any, Outcome]]:
        """Yield ``(item, outcome)`` as items finish (not in input order)."""
        pending = iter(items)
        idle: List[Worker] = list(self.workers)
        busy: Dict[Connection, Worker] = {}
        exhausted = False
        try:
            while True:
                while idle and not exhausted:
                    item = next(pending, _END)
                    if item is _END:
                        exhausted = True
                        break
                    w = self._dispatch(idle.pop(), item, seconds(item))
                    busy[w.results] = w
                while not exhausted and len(busy) < self.size:
                    item = next(pending, _END)
                    if item is _END:
                        exhausted = True
                        break
                    w = self._dispatch(None, item, seconds(item))
                    busy[w.results] = w
                if not busy:
                    return
                now = time.monotonic()
                pause = min(w.deadline for w in busy.values()) - now
                if self.memory:
                    pause = min(pause, MEMORY_POLL)
                ready = wait(list(busy), timeout=max(0.0, pause))
                for conn in ready:
                    w = busy.pop(conn)  # type: ignore[call-overload]
                    out = w.receive()
                    item = w.item
                    if out.kind == "crash" or w.rss > RECYCLE_BYTES + w.inherited:
                        self._replace(w)
                    else:
                        idle.append(w)
                    yield item, out
                if self.memory:
                    for conn, w in list(busy.items()):
                        rss = _rss_of(w.pid) if w.pid else None
                        if rss is None or rss <= self.memory + w.inherited or w.results.poll():
                            continue  # within the limit, or done: its result is read next round
                        del busy[conn]
                        item = w.item
                        self._replace(w)
                        yield item, Outcome("memory", detail=str(self.memory))
                now = time.monotonic()
                for conn, w in list(busy.items()):
                    if w.deadline <= now:
                        extra = w.starved()
                        if extra > 0.01:
                            w.deadline = now + extra
                            continue
                        del busy[conn]
                        item, spent = w.item, w.budget
                        self._replace(w)
                        yield item, Outcome("timeout", seconds=spent)
        finally:
            # an abandoned run (an exception, Ctrl-C, the consumer stopped): busy workers hold stale work
            for w in busy.values():
                self._replace(w)

    def _replace(self, w: Worker) -> None:
        w.stop()
        if w in self.workers:
            self.workers.remove(w)
        self.replaced += 1


_END = object()


class Supervisor:
    """One long-lived worker for hosts that lint one file at a time (the flake8 plugin, a language
    server): :meth:`call` returns the outcome of ``fn(item)`` within ``seconds``, replacing the worker
    after a timeout or a crash.  Create it before the host starts threads (workers are forked)."""

    def __init__(self, fn: Callable[[Any], Any], memory: Optional[int] = FILE_MEMORY) -> None:
        self.fn = fn
        self.memory = memory
        self._pool: Optional[Pool] = None
        self._pid = os.getpid()

    def call(self, item: Any, seconds: float) -> Outcome:
        if not CAN_ISOLATE:
            return _inline(self.fn, item)
        if self._pool is None or self._pid != os.getpid():
            if self._pool is not None:  # inherited through a fork: leave the parent's worker alone
                for w in self._pool.workers:
                    w.stop()
            self._pool = Pool(self.fn, 1, self.memory)
            self._pid = os.getpid()
        for _item, out in self._pool.run([item], lambda _i: seconds):
            return out
        return Outcome("crash", detail="no result")  # pragma: no cover - run() yields once per item

    def close(self) -> None:
        if self._pool is not None and self._pid == os.getpid():
            self._pool.close()
        self._pool = None


def _inline(fn: Callable[[Any], Any], item: Any) -> Outcome:
    try:
        return Outcome("ok", fn(item))
    except Exception as exc:
        return Outcome("error", detail=f"{type(exc).__name__}: {exc}")


def run_all(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int,
            seconds: Callable[[Any], float], memory: Optional[int] = FILE_MEMORY) -> Iterator[Tuple[Any, Outcome]]:
    """Outcomes of ``fn`` over ``items`` with ``jobs`` workers, as they finish; a worker may hold
    ``memory`` bytes while it works on one item (None: no limit)."""
    if not CAN_ISOLATE:
        for item in items:
            yield item, _inline(fn, item)
        return
    with Pool(fn, min(max(1, jobs), max(1, len(items))), memory) as pool:
        yield from pool.run(items, seconds)


def file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# -- linting files: the driver above the engine -------------------------------------------------
def lint_file(task: FileTask, settings: Settings, max_bytes: int, source_text: Optional[str] = None) -> FileResult:
    """Read, lint (and fix, in memory) one file, a notebook as a notebook; I/O problems become a TL000
    diagnostic or a warning (dropped when the selection or the file's per-file-ignores turn TL000 off)."""
    return selected_only(_lint_file(task, settings, max_bytes, source_text), settings, task)


def selected_only(result: FileResult, settings: Settings, task: FileTask) -> FileResult:
    """``result`` without its TL000 diagnostics when ``settings`` or ``task``'s ignores turn TL000 off."""
    if result.diagnostics:
        result.diagnostics = keep(result.diagnostics, settings.parse_errors, task.ignore)
    return result


def _lint_file(task: FileTask, settings: Settings, max_bytes: int, source_text: Optional[str] = None) -> FileResult:
    result = FileResult(task.path)
    if source_text is None:
        try:
            src = read_source(task.path, max_bytes)
        except SourceError as exc:
            if exc.warning:
                result.warnings.append(f"{task.path}: {exc}")
            else:
                result.diagnostics.append(Diagnostic(task.path, 1, 1, PARSE_ERROR, str(exc)))
            return result
        text = src.text
        result.source_meta = (src.encoding, src.mtime_ns, src.size)
    else:
        text = source_text
    sub = settings
    if task.ignore:
        rules = [r for r in settings.rules if not any(r.CODE.startswith(c) for c in task.ignore)]
        sub = replace(settings, rules=rules)
    try:
        if is_notebook(task.path):
            inner = lint_notebook(task.path, text, sub, max_code_bytes=max_bytes or None)
        else:
            inner = lint_source(task.path, text, sub)
    except Exception as exc:  # never lose the run to one file
        result.errors.append(f"{task.path}: internal error: {type(exc).__name__}: {exc}")
        return result
    inner.source_meta = result.source_meta
    inner.original_source = text if inner.fixed_source is not None else None
    return inner


def _watchdog_result(path: str, out: Outcome) -> FileResult:
    """The result of a file the watchdog stopped (or whose analysis raised): one TL000, nothing else."""
    res = FileResult(path, cacheable=False)
    if out.kind == "timeout":
        res.diagnostics.append(Diagnostic(path, 1, 1, PARSE_ERROR, timeout_message(out.seconds)))
    elif out.kind == "memory":
        res.diagnostics.append(Diagnostic(path, 1, 1, PARSE_ERROR, memory_message(int(out.detail))))
    elif out.kind == "crash":
        res.diagnostics.append(Diagnostic(path, 1, 1, PARSE_ERROR, crash_message(out.detail)))
    else:
        res.errors.append(f"{path}: internal error: {out.detail}")
    return res


def lint_files(tasks: Sequence[FileTask], settings: Settings, jobs: int, max_bytes: int,
               timeout: Optional[float] = None, memory: Optional[int] = FILE_MEMORY) -> Iterator[FileResult]:
    """:func:`lint_file` over ``tasks`` in ``jobs`` workers; each file gets :func:`budget` seconds and
    ``memory`` bytes of resident memory (None: no limit).
    Results stream out as files finish, not in input order.  Each worker process works on its own copy
    of ``settings.project``."""
    limit = DEFAULT_FILE_TIMEOUT if timeout is None else timeout

    def one(task: FileTask) -> FileResult:
        return lint_file(task, settings, max_bytes)

    def seconds(task: FileTask) -> float:
        return budget(limit, file_size(task.path))

    for task, out in run_all(one, tasks, jobs, seconds, memory):
        yield out.value if out.kind == "ok" else selected_only(_watchdog_result(task.path, out), settings, task)


def lint_text(task: FileTask, text: str, settings: Settings, timeout: Optional[float] = None,
              supervisor: Optional[Supervisor] = None, overlay: Optional[Dict[str, str]] = None) -> FileResult:
    """:func:`lint_file` on text already in memory (stdin, an editor buffer, flake8's lines), under
    the watchdog; ``supervisor`` keeps one worker across calls (else one is started for this call).
    ``overlay``: texts of other files (absolute path -> text) that the program model reads instead of
    the files on disk (an editor's unsaved buffers).  The worker lints with the project it keeps, not
    with ``settings.project`` (a project stays in its process)."""
    limit = DEFAULT_FILE_TIMEOUT if timeout is None else timeout
    seconds = budget(limit, len(text.encode("utf-8", "surrogatepass")))
    job = (task, text, settings, overlay)
    own = supervisor is None
    sup = supervisor if supervisor is not None else text_supervisor()
    try:
        out = sup.call(job, seconds)
    finally:
        if own:
            sup.close()
    return out.value if out.kind == "ok" else selected_only(_watchdog_result(task.path, out), settings, task)


class TextLinter:
    """What a text worker runs for :func:`lint_text`: the worker process keeps one project across the
    texts it lints (the modules they import are parsed once), seen through each call's overlay, and
    refreshed when the host's project was.  ``edits``: the texts are an editor's documents, each one
    parsed again only where it changed since its last text (:meth:`Project.parse_edits`)."""

    def __init__(self, edits: bool = False) -> None:
        self.project = Project()
        if edits:
            self.project.parse_edits()

    def __call__(self, job: Tuple[FileTask, str, Settings, Optional[Dict[str, str]]]) -> FileResult:
        task, text, settings, overlay = job
        self.project.follow(settings.project)  # the host refreshed its project: configuration files changed
        self.project.use_fallback_roots(settings.project.fallback_roots)  # the host's workspace folders
        settings = replace(settings, project=self.project.with_overlay(overlay))
        return lint_file(task, settings, 0, source_text=text)


def text_supervisor(edits: bool = False) -> Supervisor:
    """A :class:`Supervisor` for :func:`lint_text` (keep one per host process); ``edits``: for an
    editor's documents (see :class:`TextLinter`)."""
    return Supervisor(TextLinter(edits))
