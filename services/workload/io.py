"""I/O waits: the non-blocking kind for event loops, the blocking kind for sync workers."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from workload.timing import Stopwatch, Timed


@dataclass(frozen=True)
class WaitResult(Timed):
    milliseconds: int


def blocking_wait(milliseconds: int) -> WaitResult:
    """Occupies the calling thread (a sync worker, or an event loop if called from async code)."""
    watch = Stopwatch()
    time.sleep(milliseconds / 1000)
    return WaitResult(milliseconds=milliseconds, **watch.timing())


async def async_wait(milliseconds: int) -> WaitResult:
    """Yields to the event loop while waiting, so other requests proceed."""
    watch = Stopwatch()
    await asyncio.sleep(milliseconds / 1000)
    return WaitResult(milliseconds=milliseconds, **watch.timing())
