"""With a target rate (RATE=): the smallest configuration within the pod that serves it, or
where none does, the pod it would need. A target rate is traffic that stays at it: the proposal
must keep the objective over minutes of it too, not only in a proof's 20 s (near the knee a
queue builds over minutes that 20 s never show)."""

from __future__ import annotations

import time

from labtester.sizing.document import sustained_length, warmup_of
from labtester.sizing.families import Family
from labtester.sizing.model import SEED, SUSTAINED_SEEDS, RequestKind, simulate, sustained_p99
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.search import Candidate, Found, Search, Sized, candidates, search

MOST_DOUBLINGS = 5  # a target rate beyond 32 x the pod's cores is not sized
# The smallest configuration that keeps the objective over minutes of a target rate: a plan's own
# sustained p99 costs 0.5-0.9 s of CPU here, so each is screened first on one seed of 150 s (0.07 s).
SCREEN_S = 150.0
SCREENS = 12
CONFIRMS = 2


def sized_for(
    families: list[Family],
    kinds: dict[str, list[RequestKind]],
    memory: dict[str, Memory],
    pod: Pod,
    objective_s: float,
    duration_s: float,
    target_rate: float | None = None,
) -> Found:
    """The search for the pod and objective: with a target rate, the smallest configuration that
    serves it; without, the most throughput."""
    if target_rate is None:
        return search(families, kinds, memory, pod, objective_s, duration_s)
    return serving(families, kinds, memory, pod, objective_s, duration_s, target_rate)


def serving(
    families: list[Family],
    kinds: dict[str, list[RequestKind]],
    memory: dict[str, Memory],
    pod: Pod,
    objective_s: float,
    duration_s: float,
    rate: float,
) -> Found:
    """The smallest configuration within the pod that serves `rate`; else the pod it would need."""
    started = time.process_time()
    state = Search(kinds, pod, objective_s, duration_s)
    found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
    smallest = _smallest_serving(state, found, rate, started)
    return smallest if smallest.serves_rate else _needed(families, kinds, memory, state, rate, started)


def rate_caveats(found: Found, rate: float, objective_s: float) -> list[str]:
    """What the answer to a target rate must say beside its proposal."""
    if not found.serves_rate:
        return [f"no configuration within the pod serves {rate:g}/s at p99 {objective_s:g} s"]
    if found.held is False:
        return [
            f"none of the smallest configurations that serve {rate:g}/s at p99 {objective_s:g} s in a "
            "proof's run (a process more at a time, as many as its budget tried) keeps it over minutes of "
            "that rate in the model: the proposal is the smallest for a proof's run, and traffic that stays "
            "at the rate needs a bigger pod or a lower rate"
        ]
    return []


def _smallest_serving(state: Search, found: dict[str, list[Candidate]], rate: float, started: float) -> Found:
    """Per family the smallest configuration whose p99 at `rate` meets the objective in a proof's
    run; the proposal is the smallest of those (its memory) that also keeps it over minutes of the
    rate, its family's next where it does not (`_held`); where none within its budget does, the
    smallest for a proof's run, said so."""
    best: dict[str, Sized] = {}
    for name, family_candidates in found.items():
        if (first := _first_serving(state, family_candidates, rate)) is not None:
            best[name] = first
    if not best:
        return Found(None, {}, time.process_time() - started, state.simulations, False)
    held, proposed = _held(state, found, dict(best), rate)
    if proposed is None:
        proposed = min(best.values(), key=_size)
    best[proposed.candidate.family.name] = proposed
    return Found(proposed, best, time.process_time() - started, state.simulations, True, held=held)


def _held(
    state: Search, found: dict[str, list[Candidate]], walked: dict[str, Sized], rate: float
) -> tuple[bool | None, Sized | None]:
    """The smallest of `walked` (each family's smallest serving `rate` in a proof's run) that keeps
    the objective over minutes of it, walking each family up a process at a time: each screened on
    one short sustained run (SCREEN_S, one seed), one that passes then confirmed on the plan's own
    (SUSTAINED_SEEDS runs of up to SUSTAINED_S), at most SCREENS and CONFIRMS of them. (None, None)
    where minutes of the rate are not simulated; (False, None) where none within the budget holds."""
    confirms = CONFIRMS
    for _ in range(SCREENS):
        proposed = min(walked.values(), key=_size, default=None)
        if proposed is None or confirms == 0:
            break
        candidate = proposed.candidate
        screened = _sustained_p99(state, candidate, rate, screen=True)
        if screened is None:
            return None, None
        if screened <= state.objective_s:
            confirms -= 1
            if (_sustained_p99(state, candidate, rate) or 0.0) <= state.objective_s:
                return True, proposed
        # One more process, not more threads: past the slots the rate needs, threads share the
        # process's one core (the GIL) and buy a sustained queue nothing (the walk's screens said so).
        more = [c for c in found[candidate.family.name] if c.processes > candidate.processes]
        if (next_up := _first_serving(state, more, rate)) is None:
            del walked[candidate.family.name]
        else:
            walked[candidate.family.name] = next_up
    return False, None


def _size(sized: Sized) -> tuple[int, int]:
    return sized.candidate.memory_bytes, sized.candidate.processes


def _first_serving(state: Search, family_candidates: list[Candidate], rate: float) -> Sized | None:
    """The first of these (smallest first) whose p99 at `rate` meets the objective in a proof's run."""
    for candidate in family_candidates:
        if candidate.ceiling_per_s < rate:
            continue
        p99 = state.p99(candidate, rate)
        if p99 <= state.objective_s:
            return Sized(candidate, rate, p99)
    return None


def _needed(
    families: list[Family],
    kinds: dict[str, list[RequestKind]],
    memory: dict[str, Memory],
    state: Search,
    rate: float,
    started: float,
) -> Found:
    """Nothing in the pod serves `rate`: the pod it would need, its cores doubled (its memory in
    proportion) until one configuration serves it, and that configuration."""
    pod = state.pod
    for _ in range(MOST_DOUBLINGS):
        pod = Pod(2 * pod.cores, 2 * pod.memory_bytes, pod.client_cpu_s)
        bigger = Search(kinds, pod, state.objective_s, state.duration_s, state.simulations)
        found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
        serving = _smallest_serving(bigger, found, rate, started)
        state.simulations = bigger.simulations
        if serving.proposed is not None:
            return Found(None, {}, serving.cpu_s, state.simulations, False, serving.proposed, pod)
    return Found(None, {}, time.process_time() - started, state.simulations, False)


def _sustained_p99(state: Search, candidate: Candidate, rate: float, screen: bool = False) -> float | None:
    """The p99 of minutes of traffic at this rate, as the plan gives the proposal's levels
    (`sustained_p99`); `screen`: one seed of at most SCREEN_S. None where so many requests take
    under a minute (none is made)."""
    length = sustained_length(rate)
    if length is None:
        return None
    kinds, config, cores = (
        state.kinds[candidate.family.name],
        candidate.configuration,
        state.pod.cores_left(rate),
    )
    if not screen:
        state.simulations += SUSTAINED_SEEDS
        return sustained_p99(kinds, config, cores, rate, length)
    state.simulations += 1
    length = min(SCREEN_S, length)
    return simulate(
        kinds, config, cores, rate, round(rate * length), SEED, judged_from_s=warmup_of(length)
    ).p99_s
