"""The server's analysis worker: one thread, jobs taken by priority (what the user waits for first:
the document being edited, code actions), first come first served within a priority.  A job whose
future was cancelled while it waited (its document changed again) is skipped."""
from __future__ import annotations

import heapq
import itertools
import threading
from concurrent.futures import Future
from typing import Any, Callable, List, Tuple

INTERACTIVE = 0  # the document being edited, code actions
BACKGROUND = 1  # documents opened in bulk, re-analysis after a configuration change


class PriorityWorker:
    def __init__(self, name: str = "torchlint-analysis") -> None:
        self._heap: List[Tuple[int, int, Future, Callable[..., Any], Tuple[Any, ...]]] = []
        self._cv = threading.Condition()
        self._seq = itertools.count()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def submit(self, priority: int, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
        fut: "Future[Any]" = Future()
        with self._cv:
            if self._closed:
                fut.cancel()
                return fut
            heapq.heappush(self._heap, (priority, next(self._seq), fut, fn, args))
            self._cv.notify()
        return fut

    def pending(self) -> int:
        with self._cv:
            return len(self._heap)

    def shutdown(self) -> None:
        with self._cv:
            self._closed = True
            for _, _, fut, _, _ in self._heap:
                fut.cancel()
            self._heap.clear()
            self._cv.notify()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._cv.wait()
                if self._closed and not self._heap:
                    return
                _, _, fut, fn, args = heapq.heappop(self._heap)
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:  # handed to whoever awaits the job
                fut.set_exception(exc)
