"""I/O waits: the non-blocking kind for event loops, the blocking kind for sync workers."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from measure.waits import waits_yield
from workload.timing import Stopwatch, Timed

MAX_IO_MILLISECONDS = 60_000  # every wait a request may ask for, part of the HTTP contract


@dataclass(frozen=True)
class WaitResult(Timed):
    milliseconds: int


def blocking_wait(milliseconds: int) -> WaitResult:
    """Occupies the calling thread (a sync worker, or an event loop if called from async code).

    Its CPU is the thread's own, unless the sleep yields to other greenlets (gevent): then 0.0.
    """
    watch = Stopwatch(measure_cpu=not waits_yield())
    time.sleep(milliseconds / 1000)
    return WaitResult(milliseconds=milliseconds, **watch.timing())


async def async_wait(milliseconds: int) -> WaitResult:
    """Yields to the event loop while waiting, so other requests proceed (and its CPU is 0.0)."""
    watch = Stopwatch(measure_cpu=False)
    await asyncio.sleep(milliseconds / 1000)
    return WaitResult(milliseconds=milliseconds, **watch.timing())
