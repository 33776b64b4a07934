"""What a configuration sustains and its p99, simulated from each request kind's measured costs.

A discrete-event simulation, not a queueing formula: open-loop Poisson arrivals of the mix's
request kinds (each with its measured CPU, the server's own CPU per request, and its wait), into
a configuration's processes and their slots (threads, connections, or no limit for an event
loop). Arrivals queue where the server queues them: one shared accept queue where an idle worker
takes the next connection (gunicorn sync), else one queue per worker, chosen at arrival (gthread,
gevent and event loops accept whatever reaches them). A request computes first, then waits (as
labtester.model assumes), holding its slot throughout.

CPU work shares the pod's cores. Python runs on one thread per process (the GIL), so a process
uses at most `cores_per_process` cores (1, or more where its work releases the GIL, as measured).
Threads share their process's core in turn (processor sharing: the GIL's switch interval is short
against a request); greenlets and event loops never preempt, so a process runs one request's CPU
to its end before the next (first come, first served).

The arrival sequence comes from a seed, so two configurations (and two rates) are compared on the
same requests: the search's steps are smooth, not noise.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Protocol

Accept = Literal["shared", "per_worker"]
SEED = 27


class MixItem(Protocol):
    """One kind of request in the mix (a path today; a traffic file's request later)."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...


@dataclass(frozen=True)
class RequestKind:
    """One kind of request and what it costs where it runs, all measured alone."""

    name: str
    weight: float  # its share of the mix (any positive scale)
    cpu_s: float  # the app's CPU per request
    wait_s: float  # what it waits (needs no core)
    overhead_s: float = 0.0  # the server's and framework's own CPU per request
    cores_per_process: float = 1.0  # cores one process's CPU can use (> 1: work that releases the GIL)

    @property
    def demand_s(self) -> float:
        """The CPU a request costs its process."""
        return self.cpu_s + self.overhead_s

    @property
    def alone_s(self) -> float:
        return self.demand_s + self.wait_s


@dataclass(frozen=True)
class Configuration:
    """A server configuration as the model sees it."""

    family: str  # gthread, gevent, sync, uvicorn, granian-wsgi...
    processes: int
    per_process: int | None  # requests one process runs at once; None: no limit (an event loop)
    accept: Accept
    preemptive: bool  # threads share a process's core; greenlets and event loops run CPU to its end

    @property
    def slots(self) -> float:
        return math.inf if self.per_process is None else float(self.processes * self.per_process)


@dataclass(frozen=True)
class Simulated:
    """One simulated run: each request's latency from its arrival, and when the last finished."""

    rate_per_s: float  # offered
    latencies_s: tuple[float, ...]  # sorted
    last_arrival_s: float
    finished_s: float

    @property
    def p99_s(self) -> float:
        return percentile(self.latencies_s, 99)

    @property
    def served_per_s(self) -> float:
        """Requests over the time until the last one finished: the arrival rate where it kept up."""
        return len(self.latencies_s) / self.finished_s if self.finished_s > 0 else 0.0


def percentile(ordered: Sequence[float], point: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), of sorted values."""
    if not ordered:
        return math.nan
    rank = (len(ordered) - 1) * point / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def mean_of(kinds: Sequence[RequestKind], value: str) -> float:
    total = sum(k.weight for k in kinds)
    return sum(k.weight * float(getattr(k, value)) for k in kinds) / total


def ceiling_per_s(kinds: Sequence[RequestKind], config: Configuration, cores: float) -> float:
    """Little's law for the configuration alone: the fewer of its slots over the time a request
    holds one and the cores its processes can use over the CPU a request costs."""
    demand = mean_of(kinds, "demand_s")
    usable = min(cores, config.processes * mean_of(kinds, "cores_per_process"))
    limits = [config.slots / mean_of(kinds, "alone_s")]
    if demand > 0:
        limits.append(usable / demand)
    return min(limits)


@lru_cache(maxsize=16)
def _draws(requests: int, seed: int) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """The run's randomness, by seed: unit exponential gaps, a kind draw and a worker draw each."""
    rng = random.Random(seed)
    gaps = tuple(rng.expovariate(1.0) for _ in range(requests))
    kinds = tuple(rng.random() for _ in range(requests))
    workers = tuple(rng.random() for _ in range(requests))
    return gaps, kinds, workers


def poisson_arrivals(rate_per_s: float, requests: int, seed: int = SEED) -> list[float]:
    gaps = _draws(requests, seed)[0]
    times, now = [], 0.0
    for gap in gaps:
        now += gap / rate_per_s
        times.append(now)
    return times


class _Process:
    """One server process: its requests computing (with their CPU left) and its own queue."""

    __slots__ = ("busy", "computing", "queue", "virtual")

    def __init__(self) -> None:
        self.busy = 0  # requests holding a slot
        self.computing: list[tuple[float, int]] = []  # preemptive: a heap by virtual finish
        self.virtual = 0.0  # preemptive: CPU each computing request received so far (all alike)
        self.queue: deque[int] = deque()  # requests that reached this process and wait for a slot


def simulate(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    rate_per_s: float,
    requests: int,
    seed: int = SEED,
    arrivals: Sequence[float] | None = None,
) -> Simulated:
    """Serve `requests` Poisson arrivals at `rate_per_s` (or the given arrival times) and return
    each one's latency. `cores`: the pod's cores left to the server."""
    _, kind_draws, worker_draws = _draws(requests, seed)
    times = list(arrivals) if arrivals is not None else poisson_arrivals(rate_per_s, requests, seed)
    total = sum(k.weight for k in kinds)
    bounds = list(_cumulative([k.weight / total for k in kinds]))
    kind_of = [_pick(bounds, draw) for draw in kind_draws[: len(times)]]
    cpu = [kinds[k].demand_s for k in kind_of]
    wait = [kinds[k].wait_s for k in kind_of]
    parallel = mean_of(kinds, "cores_per_process")
    processes = [_Process() for _ in range(config.processes)]
    per_process = math.inf if config.per_process is None else config.per_process
    shared: deque[int] = deque()
    waits: list[tuple[float, int, int]] = []  # (ends at, request, process)
    remaining = [0.0] * len(times)  # non-preemptive: CPU left of the request at a process's head
    latencies: list[float] = []
    now, arrived = 0.0, 0

    def start(request: int, p: int) -> None:
        process = processes[p]
        process.busy += 1
        if cpu[request] > 0:
            if config.preemptive:
                heapq.heappush(process.computing, (process.virtual + cpu[request], request))
            else:
                remaining[request] = cpu[request]
                process.computing.append((0.0, request))
        else:
            heapq.heappush(waits, (now + wait[request], request, p))

    def finish(request: int, p: int) -> None:
        process = processes[p]
        process.busy -= 1
        latencies.append(now - times[request])
        source = shared if config.accept == "shared" else process.queue
        if source:
            start(source.popleft(), p)

    while len(latencies) < len(times):
        speeds = _speeds(processes, cores, parallel, config.preemptive)
        next_at, event = math.inf, -1
        if arrived < len(times):
            next_at, event = times[arrived], -1
        if waits and waits[0][0] < next_at:
            next_at, event = waits[0][0], -2
        for p, speed in speeds.items():
            process = processes[p]
            if config.preemptive:
                left = process.computing[0][0] - process.virtual
                per_request = speed / len(process.computing)
            else:
                left, per_request = remaining[process.computing[0][1]], speed
            at = now + max(0.0, left) / per_request
            if at < next_at:
                next_at, event = at, p
        elapsed = next_at - now
        for p, speed in speeds.items():
            process = processes[p]
            if config.preemptive:
                process.virtual += elapsed * speed / len(process.computing)
            else:
                remaining[process.computing[0][1]] -= elapsed * speed
        now = next_at
        if event == -1:
            request = arrived
            arrived += 1
            chosen = _choose(processes, per_process, config.accept, worker_draws[request])
            if chosen is None:
                shared.append(request)
            elif processes[chosen].busy < per_process:
                start(request, chosen)
            else:
                processes[chosen].queue.append(request)
        elif event == -2:
            _, request, p = heapq.heappop(waits)
            finish(request, p)
        else:
            process = processes[event]
            if config.preemptive:
                _, request = heapq.heappop(process.computing)
            else:
                _, request = process.computing.pop(0)
            if wait[request] > 0:
                heapq.heappush(waits, (now + wait[request], request, event))
            else:
                finish(request, event)
    return Simulated(rate_per_s, tuple(sorted(latencies)), times[-1] if times else 0.0, now)


def _speeds(processes: list[_Process], cores: float, parallel: float, preemptive: bool) -> dict[int, float]:
    """The cores each computing process gets: as many as it can use (one request uses at most one,
    a process at most `parallel`), all scaled down alike when they ask for more than `cores`."""
    demand = {
        p: min(float(len(process.computing)) if preemptive else 1.0, parallel)
        for p, process in enumerate(processes)
        if process.computing
    }
    asked = sum(demand.values())
    scale = min(1.0, cores / asked) if asked else 1.0
    return {p: d * scale for p, d in demand.items()}


def _choose(processes: list[_Process], per_process: float, accept: Accept, draw: float) -> int | None:
    """Which process takes an arrival: an idle worker of a shared queue (None: none is idle, it
    waits in the queue), or the worker its connection reached, chosen at random."""
    if accept == "shared":
        return next((p for p, process in enumerate(processes) if process.busy < per_process), None)
    return min(int(draw * len(processes)), len(processes) - 1)


def _cumulative(shares: list[float]) -> list[float]:
    total, bounds = 0.0, []
    for share in shares:
        total += share
        bounds.append(total)
    bounds[-1] = 1.0
    return bounds


def _pick(bounds: list[float], draw: float) -> int:
    return next(i for i, bound in enumerate(bounds) if draw < bound or i == len(bounds) - 1)
