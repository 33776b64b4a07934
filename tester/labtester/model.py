"""What a burst should take, predicted from the work its own requests measured.

A target runs at most `slots` requests of an endpoint at once (1 per event loop for code that
blocks it, w for gunicorn's sync workers, w x threads for threaded workers, w x worker_connections
for gevent, the pool size of each worker's process pool, unbounded for async waits unless the server admits
only so many connections per worker). Requests are admitted in the order
the server took them (its own start times) as slots free. Running CPU work shares the cores it can
use equally (processor sharing, with unequal jobs): 4 gunicorn workers on 2 cores finish 3 equal
requests in 1.5 x one, not 1 x. Threads under the GIL, greenlets and event loops run Python on one
thread per process, so on one core per process. A wait needs no core: it takes its own duration.

Each job is what the server measured for it: its CPU seconds (so a CPU that runs slower makes the
jobs bigger, not the model wrong) and the wait its path showed alone (the app's time less its CPU,
median over requests sent one at a time), so mixed work is modelled, not only pure CPU or pure
waits; and, where the server said so, which of its processes ran it (an uneven spread is
measured, not assumed). An endpoint that declares its work (the lab's own) waits what it declares:
a CPU endpoint nothing, a wait endpoint each request's own wait. A path's time alone also holds
any time its CPU waited for a core some other process held: on a busy machine a team's CPU path
seems to wait, and the stability probes say when the machine was busy.

The assumption about order: a request computes first and waits after (all its CPU, then all its
waits), and holds its slot throughout. For requests alike the order moves no makespan (they keep
in step whichever comes first); where a path interleaves CPU and waits across unequal requests, or
its waits are themselves queues the burst fills (a pool of database connections, a lock), the
model is wrong, and the bursts' departures show by how much.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from labtester.info import EndpointInfo, TargetInfo

# Executions whose Python runs on one thread per server process, so on at most one core each, and
# whose requests stay with the process that took them: an event loop (one per worker) takes every
# connection that reaches it while it is free, and queues them when its code blocks.
ONE_CORE_PER_PROCESS = frozenset({"event_loop", "thread_pool", "greenlets", "async", "threads"})


@dataclass(frozen=True)
class Capacity:
    slots: float  # requests running at once; math.inf: no limit
    cores: float  # cores those requests' CPU work shares; math.inf for waits, which use none
    # > 0: each request stays with the server process that took it (spread as measured, else
    # evenly), which runs `slots / processes` of them at once; with `one_core_each`, Python runs on
    # one thread per process, so each process runs its requests' CPU work on one core at most;
    # without (a worker's own process pool), their CPU shares `cores` freely. 0: any free slot
    # takes the next request, and the CPU shares `cores` freely.
    processes: int = 0
    one_core_each: bool = True

    @property
    def core_per_process(self) -> bool:
        """Each server process runs its requests' CPU work on one core at most."""
        return self.processes > 0 and self.one_core_each

    def describe(self) -> str:
        slots = "no limit on requests at once" if math.isinf(self.slots) else f"{self.slots:g} at once"
        cores = "" if math.isinf(self.cores) else f" on {self.cores:g} core{'s' * (self.cores != 1)}"
        per_process = ""
        if self.processes > 1:
            each = "one core" if self.one_core_each else f"{self.slots / self.processes:g} of them"
            per_process = f", {each} per process ({self.processes})"
        return slots + cores + per_process


def capacity(endpoint: EndpointInfo, info: TargetInfo) -> Capacity:
    """From the endpoint's execution and slots and the target's workers and effective cores."""
    slots = math.inf if endpoint.slots is None else float(endpoint.slots)
    if endpoint.work == "io":
        return Capacity(slots, math.inf)
    if endpoint.execution in ONE_CORE_PER_PROCESS:
        return Capacity(slots, float(min(info.workers, info.effective_cores)), processes=info.workers)
    if endpoint.execution == "process_pool":
        # Each worker's own pool: a request waits for a process of the pool of the worker whose
        # event loop took it (granian-asgi's two workers, 4 requests taken 3 and 1: the third of
        # the three waited, 1.17-1.34x the model that pooled the slots); the pools' processes
        # share the cores.
        return Capacity(slots, float(info.effective_cores), processes=info.workers, one_core_each=False)
    return Capacity(slots, float(info.effective_cores))


@dataclass(frozen=True)
class Job:
    """One request's demand: `cpu_s` of CPU (needs a core), then `wait_s` of waiting (needs none)."""

    cpu_s: float
    wait_s: float = 0.0
    process: int | None = None  # which server process ran it (0, 1, ...), where it was measured


def _rates(running: list[int], computing: set[int], process: list[int], limits: Capacity) -> dict[int, float]:
    """How fast each running job progresses: waits at full speed; CPU work shares the cores (or,
    one core per process, each process's core among its requests, the processes the cores)."""
    on_cores = [j for j in running if j in computing]
    if not limits.core_per_process:
        rate = min(1.0, limits.cores / len(on_cores)) if on_cores else 1.0
        return {j: rate if j in computing else 1.0 for j in running}
    per_process = {p: sum(1 for j in on_cores if process[j] == p) for p in {process[j] for j in on_cores}}
    share = min(1.0, limits.cores / len(per_process)) if per_process else 1.0
    return {j: share / per_process[process[j]] if j in computing else 1.0 for j in running}


def completion_times(jobs: Sequence[Job], limits: Capacity) -> list[float]:
    """When each job finishes, from a common release at 0, admitted in the given order."""
    processes = max(1, limits.processes)
    process = [i % processes for i in range(len(jobs))]  # an even spread over the processes...
    measured = [job.process for job in jobs]
    if limits.processes and all(p is not None for p in measured):
        process = [p for p in measured if p is not None]  # ...unless the server said where each ran
    slots_each = limits.slots / processes  # each process's own slots, fixed
    computing = {j for j, job in enumerate(jobs) if job.cpu_s > 0}  # in their CPU phase, then waits
    remaining = [job.cpu_s if j in computing else max(0.0, job.wait_s) for j, job in enumerate(jobs)]
    finished = [math.nan] * len(jobs)
    waiting = list(range(len(jobs)))
    running: list[int] = []
    now = 0.0
    while waiting or running:
        for j in list(waiting):  # admit in order, where the job's process has a free slot
            if sum(1 for r in running if process[r] == process[j]) < slots_each:
                running.append(j)
                waiting.remove(j)
        rates = _rates(running, computing, process, limits)
        step = min(remaining[j] / rates[j] for j in running)
        now += step
        for j in list(running):
            remaining[j] -= step * rates[j]
            if remaining[j] > 1e-12:
                continue
            if j in computing:  # its CPU is done: its wait begins
                computing.discard(j)
                remaining[j] = max(0.0, jobs[j].wait_s)
                if remaining[j] > 1e-12:
                    continue
            finished[j] = now
            running.remove(j)
    return finished


def predicted_makespan(jobs: Sequence[Job], limits: Capacity) -> float:
    if not jobs:
        raise ValueError("a burst has at least one request")
    return max(completion_times(jobs, limits))


def cores_in_use(jobs: Sequence[Job], limits: Capacity) -> float:
    """Average cores the model gives the burst's CPU work: CPU seconds over the makespan."""
    cpu = sum(job.cpu_s for job in jobs)
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
