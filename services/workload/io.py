"""I/O waits: the non-blocking kind for event loops, the blocking kind for sync workers."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class WaitResult:
    milliseconds: int
    duration_s: float
    started_at: float
    finished_at: float
    pid: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _result(milliseconds: int, started_at: float, start: float) -> WaitResult:
    duration = time.perf_counter() - start
    return WaitResult(milliseconds, duration, started_at, started_at + duration, os.getpid())


def blocking_wait(milliseconds: int) -> WaitResult:
    """Occupies the calling thread (a sync worker, or an event loop if called from async code)."""
    started_at, start = time.time(), time.perf_counter()
    time.sleep(milliseconds / 1000)
    return _result(milliseconds, started_at, start)


async def async_wait(milliseconds: int) -> WaitResult:
    """Yields to the event loop while waiting, so other requests proceed."""
    started_at, start = time.time(), time.perf_counter()
    await asyncio.sleep(milliseconds / 1000)
    return _result(milliseconds, started_at, start)
