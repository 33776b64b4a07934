"""What a simple model predicts for a burst of n equal requests released together.

A target runs at most `slots` requests of an endpoint at once (1 for a blocked event loop, w for
gunicorn's sync workers, the pool size for a process pool, w x worker_connections for gevent
workers, unbounded for async waits). Running CPU requests share the cores equally (processor
sharing): 4 gunicorn workers on 2 cores finish 3 simultaneous requests in 1.5 T, not T. Threads
under the GIL, like a gevent worker's greenlets, share one core per process. Waits use no core at
all. Requests beyond the slots queue and start when a slot frees.
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


# Executions whose CPU work runs on one thread per server process, so on at most one core each:
# a thread pool (the GIL lets one thread run Python at a time), gevent greenlets (one thread, one
# greenlet running at a time), and event loops (async handlers' CPU parts hold the loop).
ONE_THREAD_PER_PROCESS = ("thread_pool", "greenlets", "async")


def parallelism(endpoint: dict[str, Any], workers: int, effective_cores: int) -> Parallelism:
    """From an endpoint's entry in /info (execution, slots, work) and the target's workers/cores."""
    slots = math.inf if endpoint.get("slots") is None else float(endpoint["slots"])
    if endpoint["execution"] == "async":
        slots = math.inf
    if endpoint["work"] == "io":
        return Parallelism(slots, math.inf)
    if endpoint["execution"] in ONE_THREAD_PER_PROCESS:
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

    Each core that runs the CPU parts can overlap the waits of other requests but not their CPU
    work: 1 / (1 - p) per core, p = io / (cpu + io), with the cores the endpoint's CPU parts can
    use (one per process for greenlets, threads and event loops); never more than the slots allow.
    """
    capacity = parallelism({**endpoint, "work": "cpu"}, workers, effective_cores)
    cores = min(capacity.cores, capacity.slots)
    per_cores = math.inf if io_share >= 1 else cores / (1 - io_share)
    return float(min(capacity.slots, per_cores))
