"""A sync worker's cycle beside the local load client: a closed loop of a few threads on shared
cores, simulated a few thousand requests long.

A gunicorn sync worker answers, then holds its connection until the client has closed it
(gunicorn's lingering close, `util.close_graceful`: RFC 9112 9.6), and only then takes the next
queued one. The client is one thread, on the same cores: the close waits for it to read the
answer, behind what it does for the other workers' connections and on a core the workers'
computing leaves it. So a slot's wait past its CPU grows with the CPU beside it. Held as the fixed
time the empty requests' cycle took beyond their CPU, the slot term missed heavier paths: the
Flask shop's /products/7 on sync-1x served 0.83-0.92 of it, here 0.89-0.97 (the same flows read
by both; sync-2x 0.87-0.95, here 0.97-1.04), and a bare WSGI app from 0.24 to 1.76 ms of a
worker's CPU 0.93-1.01, with the one delay its empty requests fitted.

The loop: each worker computes its request's CPU (the app's and the server's) on its share of the
cores, then waits `delay_s` off every core (the request's own wait, the loopback, the wake-ups),
then for the client to read its answer and close (BEFORE_CLOSE of the client's CPU per request);
the client's rest (the next connection's connect and send) follows once that worker has taken its
next. The cores are shared equally among the threads that run, each at most one. Each phase
varies around its mean (SPREAD). What no core measured is fitted to the configuration's empty
requests (`fit_delay`), then held for every path.
Several local clients (`--clients`) are taken as one thread at their CPU per request together.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

# Of the client's CPU per request, what it spends before the close (reading the answer, closing);
# the rest opens the next connection. Not measured apart: from none to all of it, the measured
# runs' ratios moved by 3 % at most (none fitted them best, by under 2 %); a half splits it evenly.
BEFORE_CLOSE = 0.5
WARMUP = 100  # requests before the measured ones, at least: every worker past its first
REQUESTS = 2000  # measured, at least: 4,000 moved the measured runs' ratios by 0.3 % at most
# Each phase (a worker's CPU, the delay, the client's two parts) is its mean times a factor of
# mean 1, spread evenly over 1 +- SPREAD (a coefficient of variation of 0.35; the shop's light
# path's CPU per request varied 0.14 over its middle 99 %, 0.85 over all). Equal phases lock the
# workers into step, which real ones never hold: two workers' rate moved 12 % between 2 cores and
# 1.999, and rose with the delay. A phase's factor is fixed by its kind, its worker and that
# worker's request count (from `random.random`, whose sequence a seed fixes in every Python), so a
# small change of a figure moves the rate a little, never by reshuffling the draws.
SPREAD = 0.6
SEED = 1
_PHASES = 4  # a worker's CPU, the delay, the client's part before the close and after
_TOLERANCE = 1e-9  # of a worker's CPU per request: what is left of a phase this small has ended


@dataclass
class _ClientJob:
    cpu_s: float  # left to run
    worker: int | None  # the worker whose close it is; None: the next connection's opening


def rate(slots: int, cores: float, worker_cpu_s: float, client_cpu_s: float, delay_s: float) -> float:
    """Requests a second that `slots` sync workers, each spending `worker_cpu_s` of CPU a request,
    answer to one local client spending `client_cpu_s` (0: the client runs elsewhere), on `cores`,
    with more connections queued than workers (a closed loop that never runs dry)."""
    if slots < 1 or cores <= 0 or worker_cpu_s <= 0 or client_cpu_s < 0 or delay_s < 0:
        raise ValueError("slots, cores and a worker's CPU must be positive; the rest not negative")
    warmup, requests = max(WARMUP, 2 * slots), max(REQUESTS, 10 * slots)
    tolerance = _TOLERANCE * worker_cpu_s
    streams = _factors(_PHASES * slots, 2 * (warmup + requests) // slots + 10)
    count = [0] * slots  # each worker's requests so far: which factor its phases take

    def draw(mean: float, phase: int, worker: int) -> float:
        factors = streams[phase * slots + worker]
        return mean * factors[count[worker] % len(factors)]

    # CPU left of each computing worker; None while it waits
    left: list[float | None] = [draw(worker_cpu_s, 0, i) for i in range(slots)]
    waking: list[tuple[float, int]] = []  # (time, worker): off every core until the client sees it
    client: deque[_ClientJob] = deque()  # in turn
    now, done, started = 0.0, 0, 0.0
    while done < warmup + requests:
        computing = [(i, cpu) for i, cpu in enumerate(left) if cpu is not None]
        running = len(computing) + (1 if client else 0)
        speed = min(1.0, cores / running) if running else 0.0
        step = min(cpu for _, cpu in computing) / speed if computing else float("inf")
        if client:
            step = min(step, client[0].cpu_s / speed)
        if waking:
            step = min(step, waking[0][0] - now)
        now += step
        for i, cpu in computing:
            if cpu - step * speed > tolerance:
                left[i] = cpu - step * speed
            else:  # answered: off every core, then in the client's turn
                left[i] = None
                heapq.heappush(waking, (now + draw(delay_s, 1, i), i))
        if client:
            client[0].cpu_s -= step * speed
        while waking and waking[0][0] <= now + tolerance:
            worker = heapq.heappop(waking)[1]
            client.append(_ClientJob(draw(client_cpu_s * BEFORE_CLOSE, 2, worker), worker))
        if client and client[0].cpu_s <= tolerance:
            closed = client.popleft().worker
            if closed is not None:  # closed: the worker takes its next, the client opens one
                client.append(_ClientJob(draw(client_cpu_s * (1 - BEFORE_CLOSE), 3, closed), None))
                count[closed] += 1
                left[closed] = draw(worker_cpu_s, 0, closed)
                done += 1
                if done == warmup:
                    started = now
    return requests / (now - started)


@lru_cache(maxsize=8)
def _factors(streams: int, length: int) -> tuple[tuple[float, ...], ...]:
    """`streams` sequences of `length` factors spread evenly over 1 +- SPREAD, from SEED."""
    generator = random.Random(SEED)
    return tuple(
        tuple(1 + SPREAD * (2 * generator.random() - 1) for _ in range(length)) for _ in range(streams)
    )


@lru_cache(maxsize=256)
def fit_delay(slots: int, cores: float, worker_cpu_s: float, client_cpu_s: float, per_s: float) -> float:
    """The delay at which `rate` gives the `per_s` measured (the empty requests'); 0 where even
    none gives less (the loop and the client's share of the cores stay, so the slot term never
    holds less than they do)."""
    if rate(slots, cores, worker_cpu_s, client_cpu_s, 0.0) <= per_s:
        return 0.0
    low, high = 0.0, slots / per_s  # a whole cycle's delay leaves about its rate: doubled until less
    for _ in range(10):  # a delay holds a slot, so each doubling slows the loop: a few are plenty
        if rate(slots, cores, worker_cpu_s, client_cpu_s, high) <= per_s:
            break
        low, high = high, 2 * high
    for _ in range(16):  # to 1/65,536 of a cycle
        middle = (low + high) / 2
        if rate(slots, cores, worker_cpu_s, client_cpu_s, middle) > per_s:
            low = middle
        else:
            high = middle
    return (low + high) / 2
