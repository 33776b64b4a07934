"""Full garbage collections in this process: how many, and the CPU each took on the thread that ran it.

A full collection (generation 2) holds the GIL from its start to its end, so every thread of its
process stops, not only the request whose allocation set it off: on httpbin under gunicorn gthread
(2 x 32 threads, 1,690 requests a second of /json and /delay/0.05) each worker ran one about every
2,350 requests, 20 to 43 ms of CPU each (26 to 68 ms of wall time), and the requests that arrived
meanwhile made the slowest 1 % (tester labtester.sizing: the model stops a process as long).
A younger generation's took 0.6 ms there, and is left inside the requests that ran it. Python
3.14's collector does its old generation in steps, not as generation-2 collections: there these
count none.

The callback only adds to two numbers (Python runs it inside the collection, wherever one starts:
at an allocation in 3.11, at the eval breaker from 3.12, maybe while this thread holds a lock the
metrics take); the totals reach the metrics at a request's end (workload.metrics), where taking
locks is safe.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any

FULL = 2  # the oldest generation: a collection of it walks every tracked object


class _FullCollections:
    """This process's full collections so far: their count and CPU (totals; a forked child's from 0)."""

    def __init__(self) -> None:
        self.count = 0
        self.cpu_s = 0.0
        self._started_at: float | None = None
        # Inherited across a fork with the callback in gc.callbacks; _forget restarts the counts
        # there, so a child's headers carry its own from 0.
        self.installed = False
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self.count, self.cpu_s, self._started_at = 0, 0.0, None

    def callback(self, phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != FULL:
            return
        if phase == "start":
            self._started_at = time.thread_time()
        elif self._started_at is not None:
            self.cpu_s += time.thread_time() - self._started_at  # before the count: totals() holds it
            self.count += 1
            self._started_at = None


FULL_COLLECTIONS = _FullCollections()


def install() -> None:
    """Counts this process's full collections from now on (once, whoever calls)."""
    if FULL_COLLECTIONS.callback not in gc.callbacks:
        gc.callbacks.append(FULL_COLLECTIONS.callback)
    FULL_COLLECTIONS.installed = True


def counted() -> tuple[int, float] | None:
    """`totals()` where they are counted (`install`), else None: a process without the callback
    has no figure, not zero."""
    return totals() if FULL_COLLECTIONS.installed else None


def totals() -> tuple[int, float]:
    """This process's full collections so far: (count, CPU seconds)."""
    return FULL_COLLECTIONS.count, FULL_COLLECTIONS.cpu_s


class Published:
    """This process's full collections into two sinks (their count, their CPU seconds) at each call,
    what ran since the last: from its first call on, 0 until one ran, so a server with the counters
    never reads as one without them. Called at each request's end (workload.metrics)."""

    def __init__(
        self,
        count: Callable[[float], None],
        cpu_s: Callable[[float], None],
        read: Callable[[], tuple[int, float]] = totals,
    ) -> None:
        self._count, self._cpu_s, self._read = count, cpu_s, read
        self._published: tuple[int, float] | None = None
        self._lock = threading.Lock()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._published, self._lock = None, threading.Lock()

    def __call__(self) -> None:
        # Not waited for: another thread is at it, or this one (a collection's finalizer ending a
        # request inside this call); the next request's end publishes what this one would have.
        if not self._lock.acquire(blocking=False):
            return
        try:
            (count, cpu_s), published = self._read(), self._published
            if published is not None and count <= published[0]:
                return
            self._published = (count, cpu_s)
        finally:
            self._lock.release()
        since, since_s = published or (0, 0.0)
        self._count(count - since)
        self._cpu_s(max(0.0, cpu_s - since_s))
