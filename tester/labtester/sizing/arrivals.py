"""A simulated run's randomness: its arrival times and each request's kind, from a seed, so two
configurations (and two rates) are compared on the same requests."""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache

import numpy

SEED = 27


@lru_cache(maxsize=16)
def draws_of(requests: int, seed: int) -> tuple[tuple[float, ...], ...]:
    """The run's randomness, by seed: unit exponential gaps, then a kind draw, a worker draw, a
    CPU draw and a wait draw each."""
    rng = random.Random(seed)
    gaps = tuple(rng.expovariate(1.0) for _ in range(requests))
    return (gaps, *(tuple(rng.random() for _ in range(requests)) for _ in range(4)))


def collection_phases(processes: int, seed: int) -> list[float]:
    """Where each process's allocations stand toward its first full collection (sizing/events.py), from
    a stream apart from `draws_of`'s: each draw puts the collections where they fall, not one place."""
    rng = random.Random(seed + 104729)
    return [rng.random() for _ in range(processes)]


@lru_cache(maxsize=16)
def floor_draws(requests: int, seed: int) -> tuple[float, ...]:
    """A draw for each request's floor (sizing/floor.py), from a stream apart from `draws_of`'s:
    measuring a floor moves no other draw."""
    rng = random.Random(seed + 7919)
    return tuple(rng.random() for _ in range(requests))


def poisson_arrivals(rate_per_s: float, requests: int, seed: int = SEED) -> list[float]:
    gaps = draws_of(requests, seed)[0]
    times, now = [], 0.0
    for gap in gaps:
        now += gap / rate_per_s
        times.append(now)
    return times


def proof_arrivals(rate_per_s: float, duration_s: float, seed: int = SEED) -> list[float]:
    """A proof run's send times: exactly rate x duration arrivals, each uniform over the run, sorted
    (a Poisson process's arrivals given their count). Drawn gap by gap, one seed's count strays
    from rate x duration by its own chance, the same way in every run it paces: 440 sends where
    23.6/s for 20 s offers 471, and each proof of one run measured 5 to 13 % under its prediction."""
    times: list[float] = numpy.sort(_unsorted(rate_per_s, duration_s, seed)).tolist()
    return times


def first_proof_arrivals(
    rate_per_s: float, duration_s: float, most: int, seed: int = SEED
) -> tuple[list[float], int]:
    """proof_arrivals' first `most` and how many it has, without sorting the rest (a prediction
    simulates at most `most`): 6 ms at 3,300/s for 20 s where sorting them all took 19."""
    times = _unsorted(rate_per_s, duration_s, seed)
    if most < len(times):
        times = numpy.partition(times, most - 1)[:most] if most > 0 else times[:0]
    return numpy.sort(times).tolist(), round(rate_per_s * duration_s)


def proof_window(
    rate_per_s: float, duration_s: float, from_s: float, seed: int = SEED
) -> tuple[int, float, float]:
    """How many of a proof run's sends (proof_arrivals) come at `from_s` or later, `from_s`, and
    the last one's time: what its measured rate counts, beside a prediction of its first sends
    only (model.proof_run, through its cached `_proof_sends`)."""
    times = _unsorted(rate_per_s, duration_s, seed)
    judged = times[times >= from_s]
    return int(judged.size), from_s, float(judged.max()) if judged.size else from_s


@lru_cache(maxsize=4)
def _unsorted(rate_per_s: float, duration_s: float, seed: int) -> numpy.ndarray:
    """Each uniform over the run: `random.uniform(0, d)` is 0.0 + d * random(), the same times
    without a call into Python's random module for each. Kept (read-only) for the rate's window
    and first sends, each drawn from the same times (4 ms at 2,000/s for 20 s)."""
    draw = random.Random(seed).random
    times = numpy.array([duration_s * draw() for _ in range(round(rate_per_s * duration_s))])
    times.setflags(write=False)
    return times


def proof_kinds(weights: Sequence[float], count: int, seed: int = SEED) -> list[int]:
    """Which kind each of a proof's `count` sends is, in the weights, from a stream apart from the
    send times' (proof_arrivals): the proof sends these, and its prediction serves the same."""
    rng = random.Random(seed + 1)
    bounds = weights_bounds(weights)
    return [pick(bounds, rng.random()) for _ in range(count)]


def weights_bounds(weights: Sequence[float]) -> list[float]:
    """Each kind's upper bound in [0, 1] for `pick`: the running sum of its share of the weights."""
    whole = sum(weights)
    total, bounds = 0.0, []
    for weight in weights:
        total += weight / whole
        bounds.append(total)
    bounds[-1] = 1.0
    return bounds


def pick(bounds: list[float], draw: float) -> int:
    return next(i for i, bound in enumerate(bounds) if draw < bound or i == len(bounds) - 1)
