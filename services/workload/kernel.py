"""The CPU kernel: pure Python, so it holds the GIL like most real request handlers.

Every iteration does the same fixed amount of work (a linear congruential generator stepped
LOOPS_PER_ITERATION times), so time per iteration is stable on an idle core.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

from workload.timing import Stopwatch, Timed

KERNEL_NAME = "lcg-100k"
# About 6 ms here: fine enough steps to calibrate a 0.5 s request within 1.5 %.
LOOPS_PER_ITERATION = 100_000
MAX_CALIBRATE_SAMPLES = 50  # single iterations one /test/calibrate may time


def kernel_iteration() -> int:
    """One unit of CPU work; returns the generator state so the loop cannot be optimised away."""
    state = 1
    for _ in range(LOOPS_PER_ITERATION):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
    return state


@dataclass(frozen=True)
class WorkResult(Timed):
    iterations: int


def run_iterations(iterations: int) -> WorkResult:
    """Run the kernel `iterations` times on this thread, timed on its clocks (wall and CPU).

    Module-level so a spawn-context process pool can import and call it: then the CPU time and
    the pid are the pool process's own.
    """
    watch = Stopwatch()
    for _ in range(iterations):
        kernel_iteration()
    return WorkResult(iterations=iterations, **watch.timing())


# A small slice of the kernel between CPU-clock checks (~60 us here).
_BURN_SLICE = 1_000


def burn_cpu(milliseconds: float) -> float:
    """Run the kernel until this thread has used `milliseconds` of CPU time; returns seconds used.

    Counted in thread CPU time, not wall time, so it is the same amount of work however many
    other requests share the core.
    """
    start = time.thread_time()
    goal = start + milliseconds / 1000
    state = 1
    while time.thread_time() < goal:
        for _ in range(_BURN_SLICE):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
    return time.thread_time() - start


def calibration(samples: int) -> dict[str, object]:
    """The /test/calibrate body: the median single-iteration time and every sample behind it, the
    wall seconds of each iteration in order (the CPU's drift shows there)."""
    timings = []
    for _ in range(samples):
        start = time.perf_counter()
        kernel_iteration()
        timings.append(time.perf_counter() - start)
    return {
        "seconds_per_iteration": statistics.median(timings),
        "samples_s": timings,
        "samples": samples,
        "kernel": KERNEL_NAME,
        "pid": os.getpid(),
    }
