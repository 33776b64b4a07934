"""With a target rate (RATE=): the smallest configuration within the pod that serves it, or
where none does, the pod it would need. A target rate is traffic that stays at it: the proposal
must keep the objective over minutes of it too, not only in a proof's 20 s (near the knee a
queue builds over minutes that 20 s never show)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

from labtester.sizing.candidates import MOST_OUTSTANDING, Candidate, candidates, holds_the_clients
from labtester.sizing.caveat import NOT_HELD, NOT_SERVED, Caveat
from labtester.sizing.families import Family, never_yielding
from labtester.sizing.held import held, size
from labtester.sizing.kinds import RequestKind
from labtester.sizing.minutes import over_minutes
from labtester.sizing.model import Runs
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.search import HEADROOM, Search, search, size_fixed
from labtester.sizing.sized import Found, Sized
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
    runs: Runs | None = None,
    floors: Mapping[str, tuple[float, ...]] | None = None,
) -> Found:
    """The search for the pod and objective; with a target rate, per family the smallest
    configuration whose p99 at it meets the objective in a proof's run, the proposal the smallest
    of those that also keeps it over minutes of the rate (held.py), else the smallest, said so;
    where none serves it, the pod it would need. `fixed`: the team's configuration, sized the same way.
    `runs`: where the proof runs simulated are kept (the plan's levels draw on them); `floors`:
    each family's (Search.floors)."""
    runs = runs if runs is not None else Runs()
    started = time.thread_time()
    state = Search(kinds, pod, objective_s, duration_s, runs=runs, floors=floors or {})
    if target_rate is None:  # the most throughput, at a rate minutes of it keep too (minutes.py)
        searched = search(families, kinds, memory, pod, objective_s, duration_s, fixed, runs, floors)
        answer, cpu_s = over_minutes(state, searched), time.thread_time() - started
        return dataclasses.replace(answer, cpu_s=cpu_s, minutes_cpu_s=cpu_s - searched.cpu_s)
    team = size_fixed(state, fixed)  # for the most it sustains, as without a target rate
    found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
    missed = _missed_alone(state, found)  # served by no pod: not judged, nor doubled for
    best = _smallest_for_a_proof(state, {n: c for n, c in found.items() if n not in missed}, target_rate)
    if not best and len(missed) == len(families):  # each family's best chance, sized at no rate
        return Found(None, missed, time.thread_time() - started, state.simulations, False, fixed=team)
    if not best:
        rest = [f for f in families if f.name not in missed]
        return dataclasses.replace(_needed(rest, memory, state, target_rate, started), fixed=team)
    walked = held(state, found, best, target_rate)
    proposed = walked.sized or min(best.values(), key=size)
    best[proposed.candidate.family.name] = proposed
    cpu_s = time.thread_time() - started
    return Found(proposed, best, cpu_s, state.simulations, True, held=walked.kept, tried=walked.tried,
                 tried_all=walked.tried_all, fixed=team)  # fmt: skip


MANY_THREADS = 16  # beyond this many threads per process, CPU-bound threads convoy on the GIL


def rate_caveats(found: Found, rate: float, objective_s: float) -> list[Caveat]:
    """What the answer to a target rate must say beside its proposal."""
    aim = f"{rate:g}/s at {goal(objective_s)}"
    at_rate = f"{aim} in a proof's run"
    if not found.serves_rate:
        return [Caveat(kind="not-served", text=f"{NOT_SERVED} {aim}")]
    if found.held is not False:
        return []
    if found.tried_all:
        return [
            Caveat(
                kind="not-held",
                text=f"none of the configurations that serve {at_rate} (each family walked up its process "
                "counts to its largest within the pod, at the threads per process of its smallest that "
                f"serves it) {NOT_HELD}: the proposal is the smallest for a proof's run, and traffic that "
                "stays at the rate likely needs a bigger pod or a lower rate",
            )
        ]
    tried = f"{found.tried} configurations screened" if found.tried != 1 else "configurations screened (one)"
    return [
        Caveat(
            kind="not-held",
            text=f"none of the {tried} that serve {at_rate} {NOT_HELD}: the proposal is the smallest for "
            "a proof's run; a configuration the walk did not reach, a bigger pod or a lower rate may keep it",
        )
    ]


def model_caveats(sized: Sized, kinds: list[RequestKind], objective_s: float) -> list[Caveat]:
    """Where the model cannot hold for this configuration: said of it."""
    c, family = sized.candidate, sized.candidate.family
    found: list[str] = []
    # On an event loop, what a request ran in threads runs beside the loop (the model says so): only
    # its CPU on the loop holds the others.
    beside = family.rule.threads_beside
    cpu_heavy = [k.name for k in kinds if k.cpu_s * (1 - k.elsewhere_share * beside) > 0.1 * objective_s]
    if not family.holds(kinds, objective_s):
        found.append(
            f"greenlets never preempt, so {', '.join(never_yielding(kinds, objective_s))} "
            "(CPU, next to no wait) holds every other request of its worker, their answers after a wait "
            "included, for its whole CPU: its p99 cannot be predicted (the Flask shop's gevent, predicted "
            "0.59 s, measured 6.10 s), so it is proposed only where no other family is; its proof decides."
        )
    elif not family.rule.preemptive and cpu_heavy and len(kinds) > 1:
        runner = "greenlets never preempt" if family.rule.greenlets else "an event loop never preempts"
        held = "its CPU on the loop (what it ran in threads runs beside it)" if beside else "its whole CPU"
        found.append(
            f"{runner}, so {', '.join(cpu_heavy)} holds every other request of its worker for "
            f"{held}; the model runs each worker's CPU first come, first served, which holds only if those "
            "paths yield nowhere else."
        )
    if family.rule.greenlets and c.per_process is not None:
        accepted = c.processes * c.per_process
        past = (
            "a client or front end that holds more leaves the rest"
            if holds_the_clients(family, c.processes, c.per_process)
            else "so its proof may stall, and the search does not propose it (only its own proof, as the "
            "configuration given, can name it): a client holding more leaves the rest"
        )
        found.append(
            f"each worker accepts {c.per_process} connections at most, idle or not, {accepted} in all, "
            f"against the {MOST_OUTSTANDING} a proof's client may hold (one per request in flight); {past} "
            "unaccepted for as long as every held one stays in use (one idles out after 2 s unused, "
            "gunicorn's keepalive), a stall the model does not have: set LAB_WORKER_CONNECTIONS so that "
            "workers x connections covers what your front end holds."
            + (
                " With more than one worker each accepts one new connection a turn of its loop (gunicorn "
                "sets max_accept = 1), so a burst of new ones waits its turn too (388 at once waited "
                "1.7 s here on 2 x 250)."
                if c.processes > 1
                else ""
            )
        )
    if family.rule.accept == "per_worker" and c.processes > 1 and family.rule.preemptive:
        found.append(
            "each worker accepts connections into its own queue (the model deals each request "
            "to a worker at random); kept-alive connections stay with one worker, so one may queue while "
            "another idles."
        )
    if family.rule.preemptive and (c.per_process or 1) > MANY_THREADS and any(k.cpu_s > 0 for k in kinds):
        found.append(
            f"{c.per_process} threads per process contend for the GIL (its convoy, bpo-7946: "
            "2 x 32 threads served 9 % less than 2 x 8 on a mixed app here); the model does not count it."
        )
    return [Caveat(kind="model", about=c.label, text=text) for text in found]


def _smallest_for_a_proof(state: Search, found: dict[str, list[Candidate]], rate: float) -> dict[str, Sized]:
    """Per family, the smallest configuration whose p99 at `rate` meets the objective in a proof's run."""
    return {
        name: first
        for name, family_candidates in found.items()
        if (first := _first_serving(state, family_candidates, rate)) is not None
    }


def _first_serving(state: Search, family_candidates: list[Candidate], rate: float) -> Sized | None:
    """The first of these (smallest first) whose p99 at `rate` meets the objective in a proof's run
    (`proof_p99`, as the plan predicts it), among those the search would size to the rate (within
    HEADROOM of their ceiling) and that meet it on the search's short run first. That run alone read
    a queue short: 1,200 requests, 1 s at 1,200/s, where httpbin's granian-wsgi 1 x 48 read p99
    0.09 s, its plan 0.22 s, and its proof measured 0.15 s against an objective of 0.11."""
    for candidate in family_candidates:
        if HEADROOM * candidate.ceiling_per_s < rate or state.p99(candidate, rate) > state.objective_s:
            continue
        p99 = state.proof_p99(candidate, rate)
        if p99 <= state.objective_s:
            return Sized(candidate, rate, p99, proved=True)
    return None


def _missed_alone(state: Search, found: dict[str, list[Candidate]]) -> dict[str, Sized]:
    """Each family whose requests alone miss the objective at the p99 (`Search.quiet_p99`, on its
    configuration with the highest ceiling in the pod), sized there at no rate: no rate on any pod
    keeps it for that family (more cores make no request alone faster). sqladmin's list page (a
    64-ms collection every 42 of them) alone took 93-94 ms at the p99 against a default objective of
    87 ms, and `RATE=40` doubled its pod five times, to 64 cores, in 7.8 s of CPU to find nothing. A
    family with no configuration in the pod is not judged (a bigger pod may hold one)."""
    missed = {}
    for name, each in found.items():
        highest = max(each, key=lambda c: c.ceiling_per_s, default=None)
        if highest is not None and highest.ceiling_per_s > 0:
            p99 = state.quiet_p99(highest)
            if p99 > state.objective_s:
                missed[name] = Sized(highest, 0.0, p99)
    return missed


def _needed(
    families: list[Family], memory: dict[str, Memory], state: Search, rate: float, started: float
) -> Found:
    """Nothing in the pod serves `rate`: the pod it would need, its cores doubled (its memory in
    proportion) until a configuration serves it in a proof's run, and the smallest there that keeps
    it over minutes of it too (walked as in the pod, held.py). Where the walk keeps it on none
    there (or runs out of screens first: the pod named can then be larger than needed), the pod
    doubled once more, at most WALKED_PODS walks (each costs what the pod's own does); where no
    pod walked keeps it, the first one's smallest, whose plan then says its p99 over minutes (the
    answer: that it misses). Not proved: this machine is not that pod, so its proof runs are predicted
    on one seed's sends, not the typical of several (sizing/proof.py): at 500/s of the test mix on 2
    cores, the typical took the search from 5.7 s of CPU to 16.4 s, and the walk over minutes decides."""
    pod, serving, walks = state.pod, None, 0
    for _ in range(MOST_DOUBLINGS):
        pod = Pod(2 * pod.cores, 2 * pod.memory_bytes)
        bigger = Search(
            state.kinds, pod, state.objective_s, state.duration_s, state.simulations, state.runs,
            state.floors, proved_here=False,
        )  # fmt: skip
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
    return Found(None, {}, time.thread_time() - started, state.simulations, False)


def _found_needed(state: Search, started: float, needed: Sized, pod: Pod, kept: bool | None) -> Found:
    cpu_s = time.thread_time() - started
    return Found(None, {}, cpu_s, state.simulations, False, needed, pod, held=kept)
