"""When, where and at what CPU cost a piece of work ran: the fields every work response shares.

`started_at`/`finished_at` are server epoch seconds so a tester can draw who ran when;
`duration_s` comes from the monotonic clock; `pid` is the process that did the work; `cpu_s` is
the CPU time the work itself used, read from the clock of the thread that ran it
(`time.thread_time`), so other requests sharing the core or the GIL never count in it.

A thread's CPU clock cannot tell whose work it ran: across an `await` or a gevent greenlet switch
it counts the other requests' CPU too. Work that yields therefore reports 0.0 for its waits (or
the CPU parts it measured between yields), never a clock read across the yield.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from typing import TypedDict


class Timing(TypedDict):
    """The fields every work response shares, as a Stopwatch reads them."""

    duration_s: float
    started_at: float
    finished_at: float
    pid: int
    cpu_s: float


@dataclass(frozen=True)
class Timed:
    """A work result: its own fields after the Timing ones (built as `Result(**timing, ...)`)."""

    duration_s: float
    started_at: float
    finished_at: float
    pid: int
    cpu_s: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Stopwatch:
    """Started on creation; `timing()` gives the Timed fields up to now.

    `measure_cpu`: read this thread's CPU clock (False for work that yields: it reports 0.0 unless
    `timing` is given the CPU it measured itself).
    """

    def __init__(self, measure_cpu: bool = True) -> None:
        self.measure_cpu = measure_cpu
        self.started_at = time.time()
        self._start = time.perf_counter()
        self._cpu_start = time.thread_time()

    def cpu_s(self) -> float:
        return time.thread_time() - self._cpu_start if self.measure_cpu else 0.0

    def timing(self, cpu_s: float | None = None) -> Timing:
        """`cpu_s`: CPU seconds measured by the caller (mixed work's CPU parts); else this thread's."""
        duration = time.perf_counter() - self._start
        return Timing(
            duration_s=duration,
            started_at=self.started_at,
            finished_at=self.started_at + duration,
            pid=os.getpid(),
            cpu_s=self.cpu_s() if cpu_s is None else cpu_s,
        )
