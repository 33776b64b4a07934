"""From the lab's measurements of the fixed configurations to the configurations to prove: the
search's proposal, the best of each other family, and the flows' own recommendation, each with
its predicted rate and p99 at the rates the proof will offer, and the caveats that apply."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from labtester.findings.wording import seconds
from labtester.proposal import costs
from labtester.rawlog import Record
from labtester.scenarios.flow.conclude import AppConclusion, app_conclusion
from labtester.sizing.candidates import Candidate, candidate_of
from labtester.sizing.caveat import NO_RATE, Caveat
from labtester.sizing.document import (
    MOST_PREDICTED,
    PROOF_S,
    Level,
    Objective,
    PodSize,
    Role,
    SizedSummary,
    sustained_length,
    warmup_of,
)
from labtester.sizing.families import Family, families
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import BAND_DRAWS, sustained_p99
from labtester.sizing.pod import CONNECTION_BYTES, THREAD_BYTES, Memory, Pod
from labtester.sizing.proof import proof_run
from labtester.sizing.quantiles import percentile
from labtester.sizing.search import Search
from labtester.sizing.serving import model_caveats, rate_caveats, sized_for
from labtester.sizing.sized import Found, Sized
from labtester.targets import DEPLOYED_APP_PREFIX

if TYPE_CHECKING:
    from labtester.results import Results

LEVELS = (0.8, 1.0)  # the proof offers 80 % of the predicted sustainable rate, then all of it


@dataclass(frozen=True)
class Planned:
    summary: SizedSummary
    family: Family
    memory: Memory  # what the family's configurations hold: to size it again (resize.py)


def _levels(search_state: Search, sized: Sized, sustainable: float, with_sustained: bool) -> list[Level]:
    """Each proof run's prediction, on the very requests it will send (`proof_run`, the typical of
    several seeds' sends: sizing/proof.py), over the window it judges, and over minutes of traffic
    at its rate where the search worked that out (sized.sustained_p99_s: the same runs, not made
    twice); `with_sustained` (the proposal's): at each level, worked out here where not."""
    candidate = sized.candidate
    levels = []
    kinds, pod, floor_s = (
        search_state.kinds[candidate.family.name],
        search_state.pod,
        search_state.floor(candidate),
    )
    config, duration_s = candidate.configuration, search_state.duration_s
    held_s = sustained_length(sustainable)  # as long at each level
    for share in LEVELS:
        rate = sustainable * share
        if rate <= 0:
            continue
        warmup_s = warmup_of(duration_s)  # the window the proof judges: after its warm-up
        sends = (pod.cores, rate, duration_s, MOST_PREDICTED, warmup_s, BAND_DRAWS)
        run = proof_run(kinds, config, *sends, floor_s, search_state.runs, seed=None)  # the typical sends
        known = sized.sustained_p99_s if rate == sized.rate_per_s else None  # shown wherever worked out
        held = known
        if held is None and held_s and with_sustained:
            held = sustained_p99(kinds, config, pod.cores, rate, held_s, floor_s)
        levels.append(
            Level(
                offered_per_s=rate,
                seed=run.seed,
                predicted_per_s=run.per_s,
                predicted_p99_s=run.p99_s,
                p99_band_s=list(run.p99_band_s),
                sustained_p99_s=held,
                sustained_s=held_s if held is not None else None,
            )
        )
    return levels


def summary_of(role: Role, sized: Sized, state: Search, found: Found, context: SizedSummary) -> SizedSummary:
    """A configuration's plan: its proof's levels at its sustainable rate; where no rate keeps the
    objective in the model, at the proposal's (the same load, side by side: the proof decides), or
    none, and not proved, where there is no proposal either."""
    c = sized.candidate
    proposal = found.proposed.rate_per_s if found.proposed is not None else 0.0
    rate = sized.rate_per_s if sized.rate_per_s > 0 else proposal
    # Over minutes of their rate: the proposal's levels; with a target rate, every one's (any may be named).
    rated = role in ("family", "fixed", "needed") and context.objective.rate_per_s is not None
    levels = [] if rate <= 0 else _levels(state, sized, rate, role in ("proposed", "resized") or rated)
    # The proof run's prediction at the sustainable rate; with no rate, the least p99 (next to no load).
    predicted = levels[-1].predicted_p99_s if levels else state.quiet_p99(c)
    unproved = None if levels else f"{NO_RATE}, and there is no proposal's rate to prove it at"
    return context.model_copy(
        update={
            "role": role,
            "family": c.family.name,
            "server": c.family.server,
            "label": c.label,
            "processes": c.processes,
            "threads": c.per_process,
            "per_process_unit": c.family.rule.unit,
            "env": c.family.definition("", c.processes, c.per_process).env,
            "memory_bytes": c.memory_bytes,
            "accept": c.family.rule.accept,
            "preemptive": c.family.rule.preemptive,
            "threads_beside": c.family.rule.threads_beside,
            "sustainable_per_s": sized.rate_per_s,
            "predicted_p99_s": predicted,
            "levels": levels,
            "kinds": costs.kind_costs(state.kinds[c.family.name]),
            "planned_floor_s": list(state.floor(c)),
            "caveats": context.caveats + model_caveats(sized, state.kinds[c.family.name], state.objective_s),
            "search_cpu_s": found.cpu_s,
            "simulations": found.simulations,
            "error": context.error or unproved,
        }
    )


def plan(
    results: Results,
    interface: str,
    values: Path,
    duration_s: float = PROOF_S,
    records: Sequence[Record] = (),
    deployed: PodSize | None = None,
) -> list[Planned]:
    """The configurations to prove, the proposal first; none where the flows measured no costs.
    `records`: the raw log, whose flows give each request's measured spread. `deployed`: the pod
    the values' configurations were deployed in and measured as, app-<name> (a cluster's); None:
    started here by their names, on the pod CORES= and MEMORY= or this machine give."""
    conclusion = app_conclusion(results)
    settings = results.lab_settings()
    if conclusion is None or not conclusion.paths:
        return []
    prefix = DEPLOYED_APP_PREFIX if deployed else ""
    searched, kinds, memory, assumed = _inputs(results, conclusion, interface, values, records, prefix)
    if not searched:
        return []
    pod_size = deployed or costs.pod_size(settings, conclusion)
    floors = _floors(results, searched)
    # The least of the families' (each on its own costs and floor): one at least can keep it.
    goal = min((costs.objective(settings, kinds[f.name], floors[f.name]) for f in searched), key=_p99_of)
    pod = Pod.of(pod_size)
    state = Search(kinds, pod, goal.p99_s, duration_s, floors=floors)
    picked = conclusion.recommendation.target if conclusion.recommendation else None
    fixed = _fixed(results, picked, searched, memory, state)
    goals = (goal.p99_s, duration_s, goal.rate_per_s)
    found = sized_for(searched, kinds, memory, pod, *goals, fixed, state.runs, floors)
    if conclusion.cores is not None and pod.cores != conclusion.cores:
        assumed.append(
            Caveat(
                text=f"the pod has {pod.cores:g} cores and this machine {conclusion.cores}: the proof runs "
                f"here, on {conclusion.cores}"
            )
        )
    if found.proposed is None and found.best_by_family:  # each family sized at no rate (with RATE=: alone)
        assumed.append(_least_p99(found, state))
    if goal.rate_per_s is not None:
        assumed += rate_caveats(found, goal.rate_per_s, goal.p99_s)
    context = SizedSummary(
        role="proposed", family="", server="", label="", processes=0, threads=None, env={}, memory_bytes=0,
        sustainable_per_s=0.0, predicted_p99_s=0.0, pod=pod_size, objective=goal, caveats=assumed,
    )  # fmt: skip
    return needed(found, state, context, memory) + _planned(found, found.fixed, state, context, memory)


def _floors(results: Results, searched: list[Family]) -> dict[str, tuple[float, ...]]:
    """Each family's floor (costs.family_floor); where its empty requests measured none (too slow a
    closed loop, the CPU unread), the least measured one: the loopback's and the client's are every
    family's, and a family with none would be drawn faster than it is."""
    floors = {f.name: costs.family_floor(results, f) for f in searched}
    least = min((f for f in floors.values() if f), key=lambda f: percentile(list(f), 99), default=())
    return {name: floor or least for name, floor in floors.items()}


def _p99_of(goal: Objective) -> float:
    return goal.p99_s


def _least_p99(found: Found, state: Search) -> Caveat:
    """Where no rate keeps the objective: the least p99 the model gives any family's best (with a
    target rate, its configuration with the highest ceiling), one request at a time (a hundredth of
    its ceiling): the objective a proposal needs at the least."""
    best = [s.candidate for s in found.best_by_family.values() if s.candidate.ceiling_per_s > 0]
    alone = state.least_alone(best)
    if alone is None:
        return Caveat(kind="no-rate", text=NO_RATE)
    p99, least = alone
    return Caveat(
        kind="no-rate",
        text=f"{NO_RATE} (the requests' CPU as the flows measured it, at the company each meets, with what "
        f"a request alone took beyond it here, makes p99 about {seconds(p99)} even with next to no load, "
        f"on {least.label}: an objective above it may get a proposal)",
    )


def needed(found: Found, state: Search, context: SizedSummary, memory: dict[str, Memory]) -> list[Planned]:
    """Where nothing in the pod serves the target rate: the smallest configuration on the pod it
    would need, predicted on that pod and not proved here (this machine is not that pod)."""
    if found.needed is None or found.needed_pod is None:
        return []
    pod = found.needed_pod
    bigger = Search(
        state.kinds, pod, state.objective_s, state.duration_s, runs=state.runs, floors=state.floors
    )
    summary = summary_of("needed", found.needed, bigger, found, context)
    needs = context.pod.model_copy(update={"cores": pod.cores, "memory_bytes": pod.memory_bytes})
    why = f"sized for a pod of {pod.cores:g} cores, not proved on this one"
    family = found.needed.candidate.family
    unproved = summary.model_copy(update={"needs_pod": needs, "error": why})
    return [Planned(unproved, family, memory[family.name])]


def _planned(
    found: Found, fixed: Sized | None, state: Search, context: SizedSummary, memory: dict[str, Memory]
) -> list[Planned]:
    """The proposal, the other families' best, then the flows' pick unless it is one of those;
    where there is neither a proposal nor a pick, each family's best, not proved (no rate keeps the
    objective), so the answer still says why and how far (`_least_p99`)."""

    def planned_as(role: Role, sized: Sized) -> Planned:
        family = sized.candidate.family
        return Planned(summary_of(role, sized, state, found, context), family, memory[family.name])

    planned = []
    if found.proposed is not None:
        planned.append(planned_as("proposed", found.proposed))
        family = found.proposed.candidate.family.name
        others = [sized for name, sized in found.best_by_family.items() if name != family]
        if context.objective.rate_per_s is None:  # at the rate its proof meets, as the proposal's
            # (a climb's rate is biased up; minutes.py refined the contenders' already)
            others = [s if s is found.fixed or s.proved else state.refined(s) for s in others]
        planned += [planned_as("family", sized) for sized in others]
    if fixed is None:  # and where nothing was proposed either: each family's best, with no rate
        return planned or [planned_as("family", sized) for sized in found.best_by_family.values()]
    if any(p.summary.label == fixed.candidate.label for p in planned):  # said in each plan, not proved twice
        label = fixed.candidate.label
        named = [p.summary.model_copy(update={"fixed_label": label}) for p in planned]
        return [dataclasses.replace(p, summary=summary) for p, summary in zip(planned, named, strict=True)]
    return [*planned, planned_as("fixed", fixed)]


def _inputs(
    results: Results,
    conclusion: AppConclusion,
    interface: str,
    values: Path,
    records: Sequence[Record],
    prefix: str,
) -> tuple[list[Family], dict[str, list[RequestKind]], dict[str, Memory], list[Caveat]]:
    """The families of the values with measured costs, each one's mix and memory, what was assumed."""
    searched, unknown = families(interface, values, prefix)
    kinds: dict[str, list[RequestKind]] = {}
    memory: dict[str, Memory] = {}
    assumed = [Caveat(text=said) for said in unknown]
    for family in searched:
        kinds[family.name], said = costs.kinds_of(results, conclusion, family, records)
        assumed += [Caveat(text=text) for text in said]
        slot = CONNECTION_BYTES if family.rule.unit == "connections" else THREAD_BYTES
        memory[family.name] = costs.memory_of(results, family, slot)
    searched = [f for f in searched if kinds[f.name]]
    return searched, kinds, memory, assumed


def _fixed(
    results: Results, target: str | None, searched: list[Family], memory: dict[str, Memory], state: Search
) -> Candidate | None:
    """The flows' recommended fixed configuration as a candidate of its family."""
    info = next((t.info for t in results.targets if t.name == target and t.info), None)
    family = next((f for f in searched if target in f.fixed_targets), None)
    if info is None or family is None:
        return None
    slots = next((e.slots for e in info.endpoints.values() if e.work == "app"), None)
    per_process = family.rule.fixed  # no knob: what its rule fixes (granian's ASGI says 1,024 slots)
    if family.rule.knob and slots is not None:
        per_process = max(1, slots // max(1, info.workers))
    kinds, pod = state.kinds[family.name], state.pod
    return candidate_of(family, kinds, pod, memory[family.name], info.workers, per_process)
