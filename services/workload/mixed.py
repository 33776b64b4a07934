"""Mixed work, as in the gevent study: half the CPU work, the wait split into `splits` parts,
then the rest of the CPU work. The fraction of time spent waiting, p = io / (cpu + io), bounds
the speedup concurrency can give: 1 / (1 - p)."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import asdict, dataclass

from workload.kernel import burn_cpu

MAX_CPU_MILLISECONDS = 10_000
MAX_SPLITS = 100


@dataclass(frozen=True)
class MixedResult:
    cpu_ms: int
    io_ms: int
    splits: int
    cpu_s: float  # CPU time this request's thread used
    duration_s: float
    started_at: float
    finished_at: float
    pid: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def _result(
    cpu_ms: int, io_ms: int, splits: int, cpu_s: float, started_at: float, start: float
) -> MixedResult:
    duration = time.perf_counter() - start
    return MixedResult(cpu_ms, io_ms, splits, cpu_s, duration, started_at, started_at + duration, os.getpid())


def mixed_blocking(cpu_ms: int, io_ms: int, splits: int) -> MixedResult:
    """Sync workers: the waits hold the worker."""
    started_at, start = time.time(), time.perf_counter()
    cpu_s = burn_cpu(cpu_ms / 2)
    for _ in range(splits):
        time.sleep(io_ms / splits / 1000)
    cpu_s += burn_cpu(cpu_ms / 2)
    return _result(cpu_ms, io_ms, splits, cpu_s, started_at, start)


async def mixed_async(cpu_ms: int, io_ms: int, splits: int) -> MixedResult:
    """Event loops: the waits yield; the CPU parts still hold the loop."""
    started_at, start = time.time(), time.perf_counter()
    cpu_s = burn_cpu(cpu_ms / 2)
    for _ in range(splits):
        await asyncio.sleep(io_ms / splits / 1000)
    cpu_s += burn_cpu(cpu_ms / 2)
    return _result(cpu_ms, io_ms, splits, cpu_s, started_at, start)
