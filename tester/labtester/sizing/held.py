"""With a target rate: the smallest configuration that keeps the objective over minutes of it, not
only in a proof's 20 s (near the knee a queue builds over minutes that 20 s never show).

Minutes of a rate cost a simulation each: a plan's own sustained p99 costs 0.5-0.9 s of CPU here
at 10-40/s and up to 3 s at 500/s on 16 cores, so each configuration is screened first on one
short sustained run, and the rung the walk settles on in each family is confirmed on the plan's
own figure. A screen reads a queue near the knee 6-30 % short (the test mix at 120/s on 4 cores:
uvicorn's 7 workers 0.39 s screened, 0.46-0.49 confirmed), so confirmations miss and spend the
budget: a miss is decided on two of its three runs, and a run is made once for configurations the
model sees alike (`model_key`: the same requests and floor, as on the test mixes; in a lab's plan
each family's are its own measured, so seldom).
Each family is walked up its process counts by bisection (more processes keep a queue no longer:
more slots, more cores), at the threads (connections) per process of its smallest configuration
serving the rate in a proof's run, families smallest first and each only below the smallest kept
so far. The pod a target rate would need, walked one process at a time, took 2.8-10.5 s of CPU on
the test mix at 100-140/s; bisected, 3.1-5.0 s (tests/tester/test_sizing_sustained.py).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field

from labtester.sizing.arrivals import SEED
from labtester.sizing.candidates import Candidate
from labtester.sizing.document import sustained_length, warmup_of
from labtester.sizing.model import SUSTAINED_SEEDS, simulate, sustained_runs
from labtester.sizing.search import Search
from labtester.sizing.sized import Sized

SCREEN_S = 150.0  # one seed of at most this long ...
# ... and of at most so many requests: a queue settles in a number of services, not of seconds (the
# sustained figure is itself capped at 40,000 requests; at 500/s, 80 s, and a 150-s screen would
# have been that long: each of the confirmation's three seeds, on 16 cores 3 s of CPU). A 60-s floor
# instead took the test mix's search at 500/s from 11 s of CPU to 32-34 s.
SCREEN_REQUESTS = 10000
SCREENS = 12
# Against the smallest that keeps the rate found by confirming every rung of every ladder walked (the
# test mixes at 80-160/s, a thread's or a greenlet's slot: 24 cases), 2 confirmations found it in 19
# and once named 8 cores for 4 (uvicorn's 7 and gevent's 7 x 100 missed, spending both); 3, a miss
# decided on two runs, named the pod in all 14 SPREAD cases (the smallest in 9: 9-10 MiB more, or
# sync's 15 for 12 where the screens ran out), and with runs shared as the test mixes allow, found
# the smallest in 24. Its CPU at 100-500/s, side by side: 1.1-2.5 s, the old walk's 1.1-2.2. From
# firsts judged on the proof's own run (serving.py), 24 still; off those rates, at 115/s with a
# greenlet's slot and at 125/s it names 8 cores where sync's 11 and 15 keep it on 4 (at 115/s the
# confirmations went to uvicorn's 7 and 8 and gevent's 7 x 100, each 1-2 % past; at 125/s the screen
# read sync's top rung, 32, past it: on 4 cores more than about 16 workers queue longer, not shorter).
CONFIRMS = 3


@dataclass(frozen=True)
class Held:
    kept: bool | None  # None: minutes of the rate are not simulated (so many requests take under one)
    sized: Sized | None  # the smallest that keeps the objective sustained, where one did
    tried: int = 0  # configurations screened
    tried_all: bool = False  # every family walked to its largest within the pod, none kept it


@dataclass
class _Walk:
    state: Search
    rate: float
    # By what the model simulates (`model_key`): a run made for one family serves another it sees alike.
    screened: dict[tuple[object, ...], float | None] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)  # the configurations screened (their labels)
    confirmations: dict[tuple[object, ...], float] = field(default_factory=dict)

    @property
    def screens_left(self) -> bool:
        return len(self.screened) < SCREENS

    @property
    def confirms(self) -> int:
        return len(self.confirmations)

    def can_confirm(self, candidate: Candidate) -> bool:
        return self.confirms < CONFIRMS or model_key(self.state, candidate) in self.confirmations

    @property
    def spent(self) -> bool:
        return not self.screens_left or self.confirms >= CONFIRMS

    def passes(self, candidate: Candidate) -> bool | None:
        """Whether one short sustained run keeps the objective (None: not simulated)."""
        key = model_key(self.state, candidate)
        self.judged.add(candidate.label)
        if key not in self.screened:
            self.screened[key] = minutes_p99(self.state, candidate, self.rate, screen=True)
        p99 = self.screened[key]
        return None if p99 is None else p99 <= self.state.objective_s

    def confirmed(self, candidate: Candidate) -> Sized | None:
        key = model_key(self.state, candidate)
        if key not in self.confirmations:
            self.confirmations[key] = minutes_p99(self.state, candidate, self.rate) or 0.0
        full = self.confirmations[key]
        if full > self.state.objective_s:
            return None
        p99 = self.state.proof_p99(candidate, self.rate)  # the proof's own run, as the plan's level makes it
        return Sized(candidate, self.rate, p99, sustained_p99_s=full, proved=True)


def held(state: Search, found: dict[str, list[Candidate]], firsts: dict[str, Sized], rate: float) -> Held:
    """The smallest configuration that keeps the objective over minutes of `rate`, from each family's
    smallest serving it in a proof's run (`firsts`) up its process counts (threads per process as
    there): at most SCREENS screens and CONFIRMS confirmations."""
    walk = _Walk(state, rate)
    kept: Sized | None = None
    walked_all = True
    for first in sorted(firsts.values(), key=size):
        if kept is not None and size(first) >= size(kept):
            break  # every later family starts bigger than what kept it
        c = first.candidate
        ladder = [c] + [
            up
            for up in found[c.family.name]
            if up.per_process == c.per_process
            and up.processes > c.processes
            and (kept is None or footprint(up) < size(kept))
        ]
        if walk.spent:
            walked_all = False
            break
        lowest = _lowest_kept(walk, ladder)
        if lowest is None:
            return Held(None, None)
        sized, finished = lowest
        walked_all = walked_all and finished
        kept = sized or kept
    tried = len(walk.judged)
    return Held(True, kept, tried) if kept else Held(False, None, tried, walked_all)


def _lowest_kept(walk: _Walk, ladder: list[Candidate]) -> tuple[Sized | None, bool] | None:
    """The lowest rung that keeps the objective over minutes, by bisection on screens and then
    confirmed, and whether the ladder was judged to its top within the walk's budget. None: minutes
    of the rate are not simulated."""
    top = len(ladder) - 1
    first = walk.passes(ladder[0])
    if first is None:
        return None
    low, high = (-1, 0) if first else (0, 0)  # the highest rung known to miss; the lowest to keep
    while True:
        if high <= low:  # no rung above the one that missed is known to keep it: the top?
            if low == top:
                return None, True
            if walk.spent:
                return None, False
            if not walk.passes(ladder[top]):
                return None, True
            high = top
        while high - low > 1 and walk.screens_left:
            middle = (low + high) // 2
            if walk.passes(ladder[middle]):
                high = middle
            else:
                low = middle
        if not walk.can_confirm(ladder[high]):
            return None, False
        # Settled on the lowest that screened keeping it, or, where the screens ran out first, on
        # the lowest known to: confirmed either way.
        if (sized := walk.confirmed(ladder[high])) is not None:
            return sized, True
        if high - low > 1:
            return None, False  # the budget ran out before the walk settled
        low = high  # missed on the plan's own figure: a rung above it may keep it


def model_key(state: Search, candidate: Candidate) -> tuple[object, ...]:
    """What the model simulates for this candidate at the walk's rate and cores: its requests, its
    configuration but its family's name (which the simulation never reads) and its floor. On the same
    requests, gthread's and granian-wsgi's 6 x 4 threads are one run."""
    return (
        tuple(state.kinds[candidate.family.name]),
        candidate.configuration.simulated,
        state.floor(candidate),
    )


def footprint(candidate: Candidate) -> tuple[int, int]:
    """What makes one configuration smaller than another: its memory, then its processes."""
    return candidate.memory_bytes, candidate.processes


def size(sized: Sized) -> tuple[int, int]:
    return footprint(sized.candidate)


def minutes_runs(state: Search, candidate: Candidate, rate: float, skip: int = 0) -> Iterator[float] | None:
    """The p99 of each run behind `minutes_p99`'s figure, from the `skip`-th on, each counted in
    `state.simulations` as it is made; None where so many requests take under a minute."""
    length = sustained_length(rate)
    if length is None:
        return None
    kinds, config = state.kinds[candidate.family.name], candidate.configuration
    return _counted(
        state, sustained_runs(kinds, config, state.pod.cores, rate, length, state.floor(candidate), skip)
    )


def _counted(state: Search, runs: Iterator[float]) -> Iterator[float]:
    for p99 in runs:
        state.simulations += 1
        yield p99


def minutes_p99(
    state: Search, candidate: Candidate, rate: float, screen: bool = False, made: tuple[float, ...] = ()
) -> float | None:
    """The p99 of minutes of traffic at this rate, as the plan gives the proposal's levels
    (`sustained_p99`), or where more than half its runs are past the objective, the least of those
    (their median is past it too: the rest are not made), where more than half keep it, the most of
    those (their median is no more); `made`: its first runs' p99, made already. `screen`: one seed of
    at most SCREEN_S and SCREEN_REQUESTS. None where so many requests take under a minute (none is made)."""
    length = sustained_length(rate)
    if length is None:
        return None
    if not screen:
        runs = list(made)
        for p99 in minutes_runs(state, candidate, rate, skip=len(runs)) or ():
            runs.append(p99)
            if len(past := [p for p in runs if p > state.objective_s]) > SUSTAINED_SEEDS // 2:
                return min(past)
            if len(kept := [p for p in runs if p <= state.objective_s]) > SUSTAINED_SEEDS // 2:
                return max(kept)
        return statistics.median(runs)
    state.simulations += 1
    length = min(SCREEN_S, length, SCREEN_REQUESTS / rate)
    return simulate(
        state.kinds[candidate.family.name],
        candidate.configuration,
        state.pod.cores,
        rate,
        round(rate * length),
        SEED,
        judged_from_s=warmup_of(length),
        floor_s=state.floor(candidate),
    ).p99_s
