"""What a simple model predicts for a burst of n equal requests released together.

A target runs at most `slots` requests of an endpoint at once (1 for a blocked event loop, w for
gunicorn's sync workers, the pool size for a process pool, unbounded for async waits). Running
CPU requests share the cores equally (processor sharing): 4 gunicorn workers on 2 cores finish 3
simultaneous requests in 1.5 T, not T. Threads under the GIL share one core per process. Waits
use no core at all. Requests beyond the slots queue and start when a slot frees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Parallelism:
    slots: float  # requests running at once; math.inf: no limit
    cores: float  # cores those requests share; math.inf for waits, which use none

    def describe(self) -> str:
        slots = "unbounded" if math.isinf(self.slots) else f"{self.slots:g} at once"
        cores = "" if math.isinf(self.cores) else f" on {self.cores:g} core{'s' * (self.cores != 1)}"
        return slots + cores


def parallelism(endpoint: dict[str, Any], workers: int, effective_cores: int) -> Parallelism:
    """From an endpoint's entry in /info (execution, slots, work) and the target's workers/cores."""
    slots = math.inf if endpoint.get("slots") is None else float(endpoint["slots"])
    if endpoint["execution"] == "async":
        slots = math.inf
    if endpoint["work"] == "io":
        return Parallelism(slots, math.inf)
    if endpoint["execution"] == "thread_pool":
        # The GIL lets one thread per process run Python at a time.
        return Parallelism(slots, float(min(workers, effective_cores)))
    return Parallelism(slots, float(effective_cores))


def batch_time(running: float, cores: float) -> float:
    """How long `running` equal requests take, in units of one request alone, sharing `cores`."""
    return max(1.0, running / cores)


def predicted_makespan(n: int, single_s: float, capacity: Parallelism) -> float:
    """Seconds from release to the last completion for a burst of n requests of `single_s` each."""
    if n < 1:
        raise ValueError("a burst has at least one request")
    slots = min(float(n), capacity.slots)
    full_rounds, remainder = divmod(n, int(slots))
    rounds_time = full_rounds * batch_time(slots, capacity.cores)
    if remainder:
        rounds_time += batch_time(remainder, capacity.cores)
    return rounds_time * single_s


def speedup_bound(io_share: float, endpoint: dict[str, Any], workers: int, effective_cores: int) -> float:
    """The most throughput concurrency can add over one request at a time (the gevent study).

    Each process that runs the CPU parts can overlap the waits of others but not their CPU
    work: 1 / (1 - p) per process, p = io / (cpu + io); never more than the slots allow.
    """
    slots = (
        math.inf if endpoint.get("slots") is None or endpoint["execution"] == "async" else endpoint["slots"]
    )
    processes = min(workers, effective_cores)
    per_processes = math.inf if io_share >= 1 else processes / (1 - io_share)
    return float(min(slots, per_processes))
