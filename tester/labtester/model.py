"""What a burst should take, predicted from the work its own requests measured.

A target runs at most `slots` requests of an endpoint at once (1 for code that blocks an event
loop, w for gunicorn's sync workers, w x threads for gthread, w x worker_connections for gevent,
the pool size for a process pool, unbounded for async waits). Requests are admitted in the order
the server took them (its own start times) as slots free. Running CPU work shares the cores it can
use equally (processor sharing, with unequal jobs): 4 gunicorn workers on 2 cores finish 3 equal
requests in 1.5 x one, not 1 x. Threads under the GIL, greenlets and event loops run Python on one
thread per process, so on one core per process. A wait needs no core: it takes its own duration.

Each job's demand is what the server measured for it: CPU seconds for CPU work (so a CPU that runs
slower makes the jobs bigger, not the model wrong), the wait's duration for I/O work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from labtester.info import EndpointInfo, TargetInfo

# Executions whose Python runs on one thread per server process, so on at most one core each.
ONE_CORE_PER_PROCESS = frozenset({"thread_pool", "greenlets", "async", "threads"})


@dataclass(frozen=True)
class Capacity:
    slots: float  # requests running at once; math.inf: no limit
    cores: float  # cores those requests' CPU work shares; math.inf for waits, which use none

    def describe(self) -> str:
        slots = "no limit on requests at once" if math.isinf(self.slots) else f"{self.slots:g} at once"
        cores = "" if math.isinf(self.cores) else f" on {self.cores:g} core{'s' * (self.cores != 1)}"
        return slots + cores


def capacity(endpoint: EndpointInfo, info: TargetInfo) -> Capacity:
    """From the endpoint's execution and slots and the target's workers and effective cores."""
    slots = math.inf if endpoint.slots is None or endpoint.execution == "async" else float(endpoint.slots)
    if endpoint.work == "io":
        return Capacity(slots, math.inf)
    if endpoint.execution in ONE_CORE_PER_PROCESS:
        return Capacity(slots, float(min(info.workers, info.effective_cores)))
    return Capacity(slots, float(info.effective_cores))


@dataclass(frozen=True)
class Job:
    """One request's demand: `seconds` of CPU (needs a core) or of waiting (needs none)."""

    seconds: float
    needs_core: bool


def completion_times(jobs: Sequence[Job], limits: Capacity) -> list[float]:
    """When each job finishes, from a common release at 0, admitted in the given order."""
    remaining = [max(0.0, job.seconds) for job in jobs]
    finished = [math.nan] * len(jobs)
    waiting = list(range(len(jobs)))
    running: list[int] = []
    now = 0.0
    while waiting or running:
        while waiting and len(running) < limits.slots:
            running.append(waiting.pop(0))
        on_cores = sum(1 for j in running if jobs[j].needs_core)
        core_rate = min(1.0, limits.cores / on_cores) if on_cores else 1.0
        rates = {j: core_rate if jobs[j].needs_core else 1.0 for j in running}
        step = min(remaining[j] / rates[j] for j in running)
        now += step
        for j in list(running):
            remaining[j] -= step * rates[j]
            if remaining[j] <= 1e-12:
                finished[j] = now
                running.remove(j)
    return finished


def predicted_makespan(jobs: Sequence[Job], limits: Capacity) -> float:
    if not jobs:
        raise ValueError("a burst has at least one request")
    return max(completion_times(jobs, limits))


def cores_in_use(jobs: Sequence[Job], limits: Capacity) -> float:
    """Average cores the model gives the burst's CPU work: CPU seconds over the makespan."""
    cpu = sum(job.seconds for job in jobs if job.needs_core)
    return cpu / predicted_makespan(jobs, limits) if cpu else 0.0


def speedup_bound(io_share: float, endpoint: EndpointInfo, info: TargetInfo) -> float:
    """The most throughput concurrency can add over one request at a time (the gevent study).

    Each core that runs the CPU parts can overlap the waits of other requests but not their CPU
    work: 1 / (1 - p) per core, p = io / (cpu + io), with the cores the endpoint's CPU parts can
    use; never more than the slots allow.
    """
    limits = capacity(endpoint.model_copy(update={"work": "cpu"}), info)
    cores = min(limits.cores, limits.slots)
    per_cores = math.inf if io_share >= 1 else cores / (1 - io_share)
    return float(min(limits.slots, per_cores))
