"""What a configuration sustains and its p99, simulated from each request kind's measured costs.

A discrete-event simulation, not a queueing formula: open-loop Poisson arrivals of the mix's request kinds
(each with its measured CPU, the server's own CPU per request, and its wait), into a configuration's
processes and their slots (threads, connections, or no limit for an event loop). Arrivals queue where the
server queues them: one shared accept queue where an idle worker takes the next connection (gunicorn
sync), else one queue per worker, chosen at arrival (gthread, gevent and event loops accept whatever
reaches them). A request computes first, then waits (as labtester.model assumes), holding its slot
throughout, and answers with the server's own CPU after its wait, for which it needs its process again
(events.py); a sync worker then holds its slot, off every core, until the client closed (`close_s`).

CPU work shares the pod's cores. Python runs on one thread per process (the GIL), so a process
uses at most `cores_per_process` cores (1, or more where its work releases the GIL, as measured).
Threads share their process's core in turn (processor sharing: the GIL's switch interval is short
against a request); greenlets and event loops never preempt, so a process runs one request's CPU
to its end before the next (first come, first served). What an event loop's request hands to
threads (its executor calls, asgiref's and anyio's threads: the share of its CPU its Server-Timing
says ran elsewhere) runs in those threads, beside the loop and sharing the core with it, not in
the loop's turn (datasette's SQL, every Django sync view served as ASGI); then the request answers
on the loop, in its turn. Work a request ran in another process (a process pool's) is in that
share too, on its process's cores: pessimistic, as that work has cores of its own.

A request's CPU is drawn from its kind's measured spread, moved to the company it meets in its
process as it starts (overlap.py). The arrivals come from a seed, so two configurations (and two
rates) are compared on the same requests: the search's steps are smooth, not noise.
"""

from __future__ import annotations

import functools
import gc
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy

from labtester.sizing.arrivals import SEED, floor_draws
from labtester.sizing.configuration import Configuration
from labtester.sizing.document import warmup_of
from labtester.sizing.drawn import mean_of, prepared, sends
from labtester.sizing.kinds import RequestKind
from labtester.sizing.quantiles import percentile, quantile

SUSTAINED_SEEDS = 3  # simulated runs behind a sustained p99 (their median)
REPLICATIONS = 5  # simulated runs behind a proof run's prediction
# A simulated run whose latency grew this much a second of its sends or more is past what it serves.
GROWING = 0.01
BAND_DRAWS = 9  # behind a proof level's: the least and the most of 9 cover 8 in 10 runs' p99


@dataclass(frozen=True)
class Simulated:
    """One simulated run: each request's latency from its arrival, and when the last finished.
    Requests that arrived before `from_s` (a proof's warm-up) were served and are not counted."""

    rate_per_s: float  # offered
    latencies_s: tuple[float, ...]  # sorted, of the requests that arrived from `from_s` on
    last_arrival_s: float
    finished_s: float
    from_s: float = 0.0
    # How much longer a request took for each second later it arrived, over the judged ones (a
    # least-squares slope, none below 0): a queue that grows (a run past what it serves), else ~0.
    growth: float = 0.0

    @property
    def p99_s(self) -> float:
        return percentile(self.latencies_s, 99)

    @property
    def served_per_s(self) -> float:
        """Requests over the time until the last one finished: the arrival rate where it kept up."""
        span = self.finished_s - self.from_s
        return len(self.latencies_s) / span if span > 0 else 0.0

    def served_over(self, judged: int, from_s: float, last_s: float) -> float:
        """What a whole run serves of which this simulated its first sends: its `judged` sends (from
        `from_s` on, the last at `last_s`) over the time from `from_s` to its last answer, this
        one's drain grown as its queue grew. Measured so (the judged answered over the time to the
        last answer), the first 8,000 sends' own rate read 2-3 % under every offered rate the
        servers kept up with (httpbin, 2026-12-01): their drain weighs 3x in a third of the span,
        and the same seed's first sends come 2 % sparse. A queue growing GROWING or faster is a run
        past what it serves, read at the rate it served: a queue's first seconds grow slower than
        its whole run's (at the knee of a test mix, 0.019-0.044 where 0.076-0.088: drawn on, its
        rate read 1.03-1.06x the whole run's, as served 0.98-0.99x; kept up, httpbin's proofs grew
        0.0014 at most). Where it simulated them all, its own."""
        if self.growth >= GROWING or last_s <= self.last_arrival_s:
            return self.served_per_s
        drain = self.finished_s - self.last_arrival_s + self.growth * (last_s - self.last_arrival_s)
        return judged / (last_s - from_s + drain)


def ceiling_per_s(kinds: Sequence[RequestKind], config: Configuration, cores: float) -> float:
    """Little's law for the configuration alone: the fewer of its slots over the time a request
    holds one and the cores its processes can use over the CPU a request costs, each at the
    company where a request costs least, and what a local client sends and reads on one core (a
    bound: what it serves is below)."""
    demand, client = mean_of(kinds, "least_demand_s"), mean_of(kinds, "client_s")
    usable = min(cores, config.processes * mean_of(kinds, "cores_per_process"))
    limits = [config.slots / (mean_of(kinds, "least_alone_s") + mean_of(kinds, "close_s"))]
    if demand > 0:
        limits.append(usable / demand)
    if client > 0:
        limits.append(1 / client)
    return min(limits)


def simulate(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    rate_per_s: float,
    requests: int,
    seed: int = SEED,
    arrivals: Sequence[float] | None = None,
    picked: Sequence[int] | None = None,
    judged_from_s: float = 0.0,
    floor_s: tuple[float, ...] = (),
) -> Simulated:
    """Serve `requests` Poisson arrivals at `rate_per_s` (or the given arrival times, and kinds by
    index: `picked`) and return the latency of each that arrived from `judged_from_s` on. `cores`:
    the pod's cores left to the server and the local client (each kind's `client_s` a request:
    events.py, a thread among the server's); `floor_s`: quantiles of what a request alone took
    beyond the model (floor.py), each latency takes a draw of them on top (a stream of its own)."""
    # The collector paused while the run lives (its lists go as simulate returns, before any
    # allocation could start a pass): a pass that finds a run's lists walks each of their requests,
    # and its thousands of tuples would start passes (5-8 % of a light path's search).
    collecting = gc.isenabled()
    gc.disable()
    try:
        times, kind_of = sends(kinds, rate_per_s, requests, seed, arrivals, picked)
        run = prepared(kinds, config, cores, times, kind_of, requests, seed)
        run.serve()
        run.at_company = None  # the run and its hook hold each other: else freed only by a pass
        latencies = run.latencies
        if floor_s:
            floor = floor_draws(len(times), seed)
            latencies = [
                s + quantile(floor_s, floor[r]) for s, r in zip(latencies, run.answered, strict=True)
            ]
        answered = zip(latencies, run.answered, strict=True)
        judged = [(times[r], s) for s, r in answered if times[r] >= judged_from_s]
        last = times[-1] if times else 0.0
        latencies_s = tuple(sorted(s for _, s in judged))
        return Simulated(rate_per_s, latencies_s, last, run.now, judged_from_s, growth_of(judged))
    finally:
        if collecting:
            gc.enable()


def growth_of(judged: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of latency on arrival time over (arrival, latency) pairs, none below 0."""
    if len(judged) < 2:
        return 0.0
    pairs = numpy.array(judged)
    at = pairs[:, 0] - pairs[:, 0].mean()
    spread = float(at @ at)
    return max(0.0, float(at @ pairs[:, 1]) / spread) if spread > 0 else 0.0


@dataclass(frozen=True)
class Predicted:
    """One proof run predicted: its rate, its p99, and the band its draws put the p99 in."""

    per_s: float
    p99_s: float
    p99_band_s: tuple[float, float]  # the least and the most of its draws' p99
    seed: int = SEED  # of its sends (a proof run's: sizing/proof.py)


class Runs:
    """Simulated runs made once, by what they simulate (their p99 and the rate predicted): a refinement's
    draws at the rate it settles on are the first of that rate's proof level's (search.py, plan.py).
    With a refinement deciding on three draws where they agree (the median of five is on their side)
    and company read from running sums (overlap.py), a light path's search took 0.84-0.90x its CPU and
    its whole plan 0.71-0.74x, the same plan (httpbin's /json, the Flask shop's /products/7: 17-19 s
    of CPU from 23-26)."""

    def __init__(self) -> None:
        self.made: dict[tuple[object, ...], tuple[float, float]] = {}

    def run(self, key: tuple[object, ...], make: Callable[[], tuple[float, float]]) -> tuple[float, float]:
        if (known := self.made.get(key)) is None:
            known = self.made[key] = make()
        return known


def replicated(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    rate_per_s: float,
    times: Sequence[float],
    picked: Sequence[int],
    judged_from_s: float = 0.0,
    draws: int = REPLICATIONS,
    floor_s: tuple[float, ...] = (),
    runs: tuple[Runs, tuple[object, ...]] | None = None,
    whole: tuple[int, float, float] | None = None,
) -> Predicted:
    """What one run of these sends (`times`, each request's kind `picked`) is predicted to serve
    (the mean over `draws` runs, each drawing only the requests' CPU, wait and worker with its own
    seed) and its p99 (their median), over the sends from `judged_from_s` on: a run as short as a
    proof holds a few requests beyond its p99, so one simulated run of it is one draw of its p99,
    not the prediction; their least and most are the band one run's p99 falls in, from the very
    spread of the requests' CPU and wait (x1.14 to x1.74 wide on the Flask shop's proofs).
    `runs`: where runs already made are kept, and the key of these sends there. `whole`: where these
    are a run's first sends, all its judged sends, from when, and its last (Simulated.served_over)."""

    def draw(i: int) -> tuple[float, float]:
        sends = (len(times), SEED + i, times, picked, judged_from_s, floor_s)
        run = simulate(kinds, config, cores, rate_per_s, *sends)
        return run.p99_s, run.served_over(*whole) if whole else run.served_per_s

    if runs is None:
        made = [draw(i) for i in range(draws)]
    else:
        kept, key = runs
        made = [kept.run((*key, i), functools.partial(draw, i)) for i in range(draws)]
    p99s = [p99 for p99, _ in made]
    served = sum(per_s for _, per_s in made) / len(made)
    return Predicted(served, statistics.median(p99s), (min(p99s), max(p99s)))


def sustained_p99(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    rate_per_s: float,
    duration_s: float,
    floor_s: tuple[float, ...] = (),
) -> float:
    """The p99 of minutes of traffic at this rate (its first fifth, from an idle server, not judged):
    the median of SUSTAINED_SEEDS runs, one run's p99 at the knee being one draw (0.50-0.77 s, Flask shop)."""
    return statistics.median(sustained_runs(kinds, config, cores, rate_per_s, duration_s, floor_s))


def sustained_runs(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    rate_per_s: float,
    duration_s: float,
    floor_s: tuple[float, ...] = (),
    skip: int = 0,
) -> Iterator[float]:
    """Each of the SUSTAINED_SEEDS runs' p99 behind `sustained_p99`, made only as asked for; `skip`:
    from that run on (the first ones made already)."""
    requests, after_s = max(1, round(rate_per_s * duration_s)), warmup_of(duration_s)
    for i in range(skip, SUSTAINED_SEEDS):
        yield simulate(
            kinds, config, cores, rate_per_s, requests, SEED + i, judged_from_s=after_s, floor_s=floor_s
        ).p99_s
