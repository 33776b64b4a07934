"""With a target rate (RATE=): the smallest configuration within the pod that serves it, or
where none does, the pod it would need. A target rate is traffic that stays at it: the proposal
must keep the objective over minutes of it too, not only in a proof's 20 s (near the knee a
queue builds over minutes that 20 s never show)."""

from __future__ import annotations

import dataclasses
import time

from labtester.sizing.candidates import Candidate, candidates
from labtester.sizing.families import Family
from labtester.sizing.held import held, size
from labtester.sizing.model import RequestKind
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.search import Found, Search, Sized, search, size_fixed
from labtester.sizing.words import goal

MOST_DOUBLINGS = 5  # a target rate beyond 32 x the pod's cores is not sized
WALKED_PODS = 2  # bigger pods walked for one that keeps a target rate over minutes


def sized_for(
    families: list[Family],
    kinds: dict[str, list[RequestKind]],
    memory: dict[str, Memory],
    pod: Pod,
    objective_s: float,
    duration_s: float,
    target_rate: float | None = None,
    fixed: Candidate | None = None,
) -> Found:
    """The search for the pod and objective; with a target rate, per family the smallest
    configuration whose p99 at it meets the objective in a proof's run, the proposal the smallest
    of those that also keeps it over minutes of the rate (held.py), else the smallest, said so;
    where none serves it, the pod it would need. `fixed`: the team's configuration, sized the same way."""
    if target_rate is None:
        return search(families, kinds, memory, pod, objective_s, duration_s, fixed)
    started = time.process_time()
    state = Search(kinds, pod, objective_s, duration_s)
    team = size_fixed(state, fixed)  # for the most it sustains, as without a target rate
    found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
    best = _smallest_for_a_proof(state, found, target_rate)
    if not best:
        return dataclasses.replace(_needed(families, memory, state, target_rate, started), fixed=team)
    walked = held(state, found, best, target_rate)
    proposed = walked.sized or min(best.values(), key=size)
    best[proposed.candidate.family.name] = proposed
    cpu_s = time.process_time() - started
    return Found(proposed, best, cpu_s, state.simulations, True, held=walked.kept, tried=walked.tried,
                 tried_all=walked.tried_all, fixed=team)  # fmt: skip


NOT_SERVED = "no configuration within the pod serves"
NOT_HELD = "keeps it over minutes of that rate in the model"


def rate_caveats(found: Found, rate: float, objective_s: float) -> list[str]:
    """What the answer to a target rate must say beside its proposal."""
    aim = f"{rate:g}/s at {goal(objective_s)}"
    at_rate = f"{aim} in a proof's run"
    if not found.serves_rate:
        return [f"{NOT_SERVED} {aim}"]
    if found.held is not False:
        return []
    if found.tried_all:
        return [
            f"none of the configurations that serve {at_rate} (each family walked up its process counts to "
            "its largest within the pod, at the threads per process of its smallest that serves it) "
            f"{NOT_HELD}: the proposal is the smallest for a proof's run, and traffic that stays at the "
            "rate likely needs a bigger pod or a lower rate"
        ]
    tried = f"{found.tried} configuration{'s' if found.tried != 1 else ''} screened"
    return [
        f"none of the {tried} that serve {at_rate} {NOT_HELD}: the proposal is the smallest for a proof's "
        "run; a configuration the walk did not reach, a bigger pod or a lower rate may keep it"
    ]


def is_rate_caveat(caveat: str) -> bool:
    """Whether `rate_caveats` said it (a search's own: another search says its own)."""
    return caveat.startswith(NOT_SERVED) or NOT_HELD in caveat


def _smallest_for_a_proof(state: Search, found: dict[str, list[Candidate]], rate: float) -> dict[str, Sized]:
    """Per family, the smallest configuration whose p99 at `rate` meets the objective in a proof's run."""
    return {
        name: first
        for name, family_candidates in found.items()
        if (first := _first_serving(state, family_candidates, rate)) is not None
    }


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
    proportion) until a configuration serves it in a proof's run, and the smallest there that keeps
    it over minutes of it too (walked as in the pod, held.py). Where the walk keeps it on none
    there (or runs out of screens first: the pod named can then be larger than needed), the pod
    doubled once more, at most WALKED_PODS walks (each costs what the pod's own does); where no
    pod walked keeps it, the first one's smallest, whose plan then says its p99 over minutes (the
    answer: that it misses). Not proved: this machine is not that pod."""
    pod, serving, walks = state.pod, None, 0
    for _ in range(MOST_DOUBLINGS):
        pod = Pod(2 * pod.cores, 2 * pod.memory_bytes, pod.client_cpu_s)
        bigger = Search(state.kinds, pod, state.objective_s, state.duration_s, state.simulations)
        found = {f.name: candidates(f, state.kinds[f.name], pod, memory[f.name]) for f in families}
        best = _smallest_for_a_proof(bigger, found, rate)
        walked = held(bigger, found, best, rate) if best else None
        state.simulations = bigger.simulations
        if walked is None:
            continue
        smallest, walks = min(best.values(), key=size), walks + 1
        if walked.kept is not False:  # kept, or minutes of the rate are not simulated
            return _found_needed(state, started, walked.sized or smallest, pod, walked.kept)
        serving = serving or (smallest, pod)
        if walks == WALKED_PODS:
            break
    if serving is not None:
        return _found_needed(state, started, *serving, kept=False)
    return Found(None, {}, time.process_time() - started, state.simulations, False)


def _found_needed(state: Search, started: float, needed: Sized, pod: Pod, kept: bool | None) -> Found:
    cpu_s = time.process_time() - started
    return Found(None, {}, cpu_s, state.simulations, False, needed, pod, held=kept)
