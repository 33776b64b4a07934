"""With a target rate (RATE=): the smallest configuration within the pod that serves it, or
where none does, the pod it would need. A target rate is traffic that stays at it: the proposal
must keep the objective over minutes of it too, not only in a proof's 20 s (near the knee a
queue builds over minutes that 20 s never show)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

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
    """The search for the pod and objective; with a target rate, per family the smallest
    configuration whose p99 at it meets the objective in a proof's run, the proposal the smallest
    of those that also keeps it over minutes of the rate (`_held`), else the smallest, said so;
    where none serves it, the pod it would need."""
    if target_rate is None:
        return search(families, kinds, memory, pod, objective_s, duration_s)
    started = time.process_time()
    state = Search(kinds, pod, objective_s, duration_s)
    found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
    best = _smallest_for_a_proof(state, found, target_rate)
    if not best:
        return _needed(families, memory, state, target_rate, started)
    held = _held(state, found, dict(best), target_rate)
    proposed = held.sized or min(best.values(), key=_size)
    best[proposed.candidate.family.name] = proposed
    cpu_s = time.process_time() - started
    return Found(proposed, best, cpu_s, state.simulations, True, held=held.kept, tried=held.tried,
                 tried_all=held.tried_all)  # fmt: skip


NOT_SERVED = "no configuration within the pod serves"
NOT_HELD = "keeps it over minutes of that rate in the model"


def rate_caveats(found: Found, rate: float, objective_s: float) -> list[str]:
    """What the answer to a target rate must say beside its proposal."""
    goal = f"{rate:g}/s at p99 {objective_s:g} s in a proof's run"
    if not found.serves_rate:
        return [f"{NOT_SERVED} {rate:g}/s at p99 {objective_s:g} s"]
    if found.held is not False:
        return []
    if found.tried_all:
        return [
            f"none of the configurations that serve {goal} (each family a process more at a time, to its "
            f"largest within the pod) {NOT_HELD}: the proposal is the smallest for a proof's run, and "
            "traffic that stays at the rate needs a bigger pod or a lower rate"
        ]
    tried = f"{found.tried} smallest configuration{'s' if found.tried != 1 else ''}"
    return [
        f"none of the {tried} that serve {goal} (a process more at a time) {NOT_HELD}: the proposal is the "
        "smallest for a proof's run; a bigger configuration than those, a bigger pod or a lower rate may "
        "keep it"
    ]


def is_rate_caveat(caveat: str) -> bool:
    """Whether `rate_caveats` said it (a search's own: another search says its own)."""
    return caveat.startswith(NOT_SERVED) or NOT_HELD in caveat


@dataclass(frozen=True)
class _Held:
    kept: bool | None  # None: minutes of the rate are not simulated (so many requests take under one)
    sized: Sized | None  # the smallest that keeps the objective sustained, where one did
    tried: int = 0
    tried_all: bool = False  # every family walked to its end, none kept it


def _smallest_for_a_proof(state: Search, found: dict[str, list[Candidate]], rate: float) -> dict[str, Sized]:
    """Per family, the smallest configuration whose p99 at `rate` meets the objective in a proof's run."""
    return {
        name: first
        for name, family_candidates in found.items()
        if (first := _first_serving(state, family_candidates, rate)) is not None
    }


def _held(state: Search, found: dict[str, list[Candidate]], walked: dict[str, Sized], rate: float) -> _Held:
    """The smallest of `walked` (each family's smallest serving `rate` in a proof's run) that keeps
    the objective over minutes of it, walking the families up together, smallest first, a process
    more at a time: each screened on one short sustained run (SCREEN_S, one seed), one that passes
    then confirmed on the plan's own figure (SUSTAINED_SEEDS runs of up to SUSTAINED_S), at most
    SCREENS and CONFIRMS of them."""
    screens = confirms = 0
    while walked and screens < SCREENS and confirms < CONFIRMS:
        proposed = min(walked.values(), key=_size)
        candidate = proposed.candidate
        screened = _sustained_p99(state, candidate, rate, screen=True)
        if screened is None:
            return _Held(None, None)
        screens += 1
        if screened <= state.objective_s:
            confirms += 1
            if (full := _sustained_p99(state, candidate, rate) or 0.0) <= state.objective_s:
                return _Held(True, dataclasses.replace(proposed, sustained_p99_s=full), screens)
        if screens == SCREENS or confirms == CONFIRMS:
            break
        # The lightest that serves the rate with more processes: past the slots the rate needs,
        # more threads share their process's one core (the GIL) and keep no queue shorter.
        more = [c for c in found[candidate.family.name] if c.processes > candidate.processes]
        if (next_up := _first_serving(state, more, rate)) is None:
            del walked[candidate.family.name]
        else:
            walked[candidate.family.name] = next_up
    return _Held(False, None, screens, not walked)


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
    families: list[Family], memory: dict[str, Memory], state: Search, rate: float, started: float
) -> Found:
    """Nothing in the pod serves `rate`: the pod it would need, its cores doubled (its memory in
    proportion) until one configuration serves it in a proof's run, and that configuration: not
    proved, nor walked for minutes of the rate (the walk on each bigger pod cost 3-9 s of CPU on
    the test mix; the first pod that serves the rate for 20 s can be at its knee, and queue past
    the objective over minutes: 19 s over 4.8 minutes at 140/s there, against 0.4)."""
    pod = state.pod
    for _ in range(MOST_DOUBLINGS):
        pod = Pod(2 * pod.cores, 2 * pod.memory_bytes, pod.client_cpu_s)
        bigger = Search(state.kinds, pod, state.objective_s, state.duration_s, state.simulations)
        found = {f.name: candidates(f, state.kinds[f.name], pod, memory[f.name]) for f in families}
        best = _smallest_for_a_proof(bigger, found, rate)
        state.simulations = bigger.simulations
        if best:
            needed = min(best.values(), key=_size)
            return Found(None, {}, time.process_time() - started, state.simulations, False, needed, pod)
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
