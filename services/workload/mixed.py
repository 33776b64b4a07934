"""Mixed work, as in the gevent study: half the CPU work, the wait split into `splits` parts,
then the rest of the CPU work. The fraction of time spent waiting, p = io / (cpu + io), bounds
the speedup concurrency can give: 1 / (1 - p).

`cpu_s` is the sum of the two CPU parts, each measured on the thread's clock while it ran; the
waits in between may yield to other requests, so no clock is read across them.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from workload.kernel import burn_cpu
from workload.timing import Stopwatch, Timed

MAX_CPU_MILLISECONDS = 10_000
MAX_SPLITS = 100


@dataclass(frozen=True)
class MixedResult(Timed):
    cpu_ms: int
    io_ms: int
    splits: int


def mixed_blocking(cpu_ms: int, io_ms: int, splits: int) -> MixedResult:
    """Sync workers: the waits hold the worker (under gevent's patching, they yield)."""
    watch = Stopwatch()
    cpu_s = burn_cpu(cpu_ms / 2)
    for _ in range(splits):
        time.sleep(io_ms / splits / 1000)
    cpu_s += burn_cpu(cpu_ms / 2)
    return MixedResult(cpu_ms=cpu_ms, io_ms=io_ms, splits=splits, **watch.timing(cpu_s=cpu_s))


async def mixed_async(cpu_ms: int, io_ms: int, splits: int) -> MixedResult:
    """Event loops: the waits yield; the CPU parts still hold the loop."""
    watch = Stopwatch()
    cpu_s = burn_cpu(cpu_ms / 2)
    for _ in range(splits):
        await asyncio.sleep(io_ms / splits / 1000)
    cpu_s += burn_cpu(cpu_ms / 2)
    return MixedResult(cpu_ms=cpu_ms, io_ms=io_ms, splits=splits, **watch.timing(cpu_s=cpu_s))
