"""Size again on the CPU the proofs measured, where that departs from what the plan drew, and prove
the new proposal.

The plan draws each request's CPU from the flows, at the company it meets in its process
(sizing/overlap.py): the flows ran 50 users at once, a proposal's rates mostly one to four a
process. Before the company was drawn, the requests used 1.16x to 1.54x the flows' CPU on
datasette at the rates a proposal served (2026-11-27 to 29), and the Django shop's /report 0.4x to
0.8x of what its one-worker flow gave uvicorn. What the company does not explain (a machine that
runs faster or slower minutes later, work that moves with the rate itself) is measured by each
configuration's proof at the rates the proposal serves: every family's knobs searched again on it
give a proposal made on measured work, which its own proof, after, checks (the answer names it
where it kept the objective and, with RATE=, no smaller one proved kept it:
`SizingConclusion.proved_best`). The search draws each kind's CPU as the plan did, times what its
proofs' requests used over what the plan drew for them at the company each met
(`window.measured_ratios`): the level the proofs measured, moving with company as the flows did,
since a configuration with other processes meets other company. On the Django shop's two
runs of 2026-11-29 that proved a re-sized configuration (06:08, 08:23), its p99 measured 1.02x,
0.99x and 0.95x what this predicts at three of its four levels, where the proofs' CPU drawn flat,
at the company they met, gave 1.20x, 1.15x and 1.02x; at the fourth both missed (0.55x, 0.59x: a
measured p99 below the band of its draws).

A request's CPU is not only its own: the serving processes' beyond it (the server's) and the local
load client's share the cores. The flows measure both in closed loops, where the servers' wake-ups
serve several requests; a proof's open loop below the ceiling spends more on each (httpbin's
`/json`, 2026-12-01 02:21, every family's proofs: the server's 1.6-2.4x the plan's, the client's
1.4-2.1x, where the requests' own was 0.7-1.35x). The proofs' figures of both are taken with it
(the warm-up's prediction takes them too), and whether a family's CPU moved is judged on the three
together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from labtester import machine
from labtester.load import Sample
from labtester.proposal.plan import Planned, needed, summary_of
from labtester.proposal.prove import target_name
from labtester.rawlog import Record
from labtester.scenarios.sizing import window_of
from labtester.sizing import window
from labtester.sizing.caveat import RATE_KINDS
from labtester.sizing.collected import counted_in, measured_collections
from labtester.sizing.document import DEPARTS, KindCost, Objective
from labtester.sizing.drawn import mean_of
from labtester.sizing.families import Family
from labtester.sizing.kinds import RequestKind
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.search import Search
from labtester.sizing.serving import rate_caveats, sized_for
from labtester.sizing.sized import Found, Sized

# A configuration a proof overloaded at a rate is held this far below it, as a rate within DEPARTS
# of one proved is that one (httpbin, 2026-12-01 05:26: gthread 2 x 1's proofs failed requests at
# its rate and at 80 % of it; near a ceiling one run's p99 moves 2-3x from the next's here).
OVERLOADED = 0.15


def resized(
    planned: Sequence[Planned], runs: Mapping[str, Sequence[Record]], duration_s: float, kept_per_s: float
) -> Planned | None:
    """The proposal searched again, every family on what its proofs' `runs` (by target; its
    configurations' and levels' together, but for runs that failed requests) measured its requests
    costing (their own CPU, the server's, the local client's) where that departs from its plan's by
    more than DEPARTS, the others on their plan's; a configuration a proof overloaded is not
    proposed again at that rate (`_searched`).
    With a target rate that nothing in the pod serves on that CPU, the pod it would need (role
    `needed`, not proved; none where its requests alone miss the objective). None where no family's
    departed, the search finds what was proved already (a label proved at a rate within DEPARTS of
    it), or, without a target rate, nothing
    above `kept_per_s` (the most the proposal's proof served keeping the objective: what sized on
    more CPU would offer less than; with one, every configuration sized serves it)."""
    if not planned or planned[0].summary.role != "proposed":
        return None
    first = planned[0].summary
    by_family: dict[str, Planned] = {}
    for item in planned:
        by_family.setdefault(item.family.name, item)  # each family's first plan, in the plan's order
    kinds: dict[str, list[RequestKind]] = {}
    ratios: dict[str, float] = {}
    failed_at: dict[str, float] = {}  # by configuration: the least rate a proof failed requests at
    for name, item in by_family.items():
        kinds[name], moved, failed = _measured(item.summary.kinds, _proofs(planned, runs, name))
        if moved is not None:
            ratios[name] = moved
        failed_at.update(failed)
    if not ratios:
        return None
    pod = Pod.of(first.pod)
    goal = first.objective
    families = [item.family for item in by_family.values()]
    memory = {name: item.memory for name, item in by_family.items()}
    # The plan's floors (beyond the closed loop's CPU: where the proofs measured more CPU a request,
    # a part of it is in both, tenths of a millisecond of latency and none of a core's).
    floors = {name: tuple(item.summary.planned_floor_s) for name, item in by_family.items()}
    state = Search(kinds, pod, goal.p99_s, duration_s, floors=floors)
    found = _searched(state, families, memory, goal, failed_at)
    # What the first plan assumed, not what it said of its own configuration (`label: ...`) nor what
    # its search said of the target rate: this search says its own.
    assumed = [c for c in first.caveats if c.about != first.label and c.kind not in RATE_KINDS]
    new = found.proposed
    if new is None and found.needed is not None:  # RATE= beyond the pod on what the proofs measured
        ratio = ratios.get(found.needed.candidate.family.name)
        # Without the search's "no configuration within the pod serves": beside the proposal the
        # answer says that, on the proofs' CPU, with the pod it would need.
        context = first.model_copy(update={"fixed_label": None, "resized_on": ratio, "caveats": assumed})
        return next(iter(needed(found, state, context, memory)), None)
    below = goal.rate_per_s is None and new is not None and new.rate_per_s <= kept_per_s
    if new is None or below or _proved_already(new, planned):
        return None
    if goal.rate_per_s is not None:
        assumed += rate_caveats(found, goal.rate_per_s, goal.p99_s)
    family = new.candidate.family
    update = {"fixed_label": None, "resized_on": ratios.get(family.name), "caveats": assumed}
    context = first.model_copy(update=update)
    return Planned(summary_of("resized", new, state, found, context), family, by_family[family.name].memory)


def _proofs(
    planned: Sequence[Planned], runs: Mapping[str, Sequence[Record]], family: str
) -> list[tuple[str, Record]]:
    """The family's proof runs, each with its configuration's label."""
    return [
        (p.summary.label, r)
        for p in planned
        if p.family.name == family
        for r in runs.get(target_name(p.summary), ())
    ]


def _measured(
    kinds: Sequence[KindCost], proofs: Sequence[tuple[str, Record]]
) -> tuple[list[RequestKind], float | None, dict[str, float]]:
    """A family's kinds on what its `proofs` measured, and how far a request's whole CPU moved from
    the plan's; its plan's kinds and None where it moved no more than DEPARTS. Over the kinds its
    proofs measured enough of (the others stand as planned), what they used against what the plan
    drew, each by how much; and what each request cost the serving processes beyond its own and the
    local client there (the plan's where unread). Judged on the whole, a move of the requests' own
    CPU counts for its share of it, and opposite moves (on a light path the requests' own falls
    where the server's and the client's rise) for what they come to together; the full collections
    per request are the proofs' (sizing/collected.py). A run that failed
    requests was overloaded, and a request's CPU there is the overload's: it is left out; the least
    rate each configuration (by label) had such a run at is the third figure."""
    kept: list[tuple[Record, list[Sample], list[Sample]]] = []
    failed: dict[str, float] = {}
    for label, run in proofs:
        everything, judged = window_of(run)  # each run's requests decoded once (70,000 a run)
        if all(s.ok for s in judged):
            kept.append((run, everything, judged))
        else:
            failed[label] = min(failed.get(label, run["offered_per_s"]), run["offered_per_s"])
    # Each window's answered requests, and every request of those runs (the company the window's
    # met, as the same objects).
    answered = [s for _, _, window in kept for s in window]
    _, by_kind = window.measured_ratios(kinds, answered, [s for _, everything, _ in kept for s in everything])
    local = any(k.client_s > 0 for k in kinds)  # else the client shared no core of the pod's
    client = _client_cpu_per_request([(run, everything) for run, everything, _ in kept]) if local else None
    server = window.overhead_of([(run.get("server_cpu_s"), everything) for run, everything, _ in kept])
    collections = measured_collections(counted_in(*(everything for _, everything, _ in kept)), kinds)
    measured = window.scaled_kinds(kinds, by_kind, server, client, collections)
    plan_kinds = window.scaled_kinds(kinds, {})
    moved = _cpu_per_request(measured) / whole if (whole := _cpu_per_request(plan_kinds)) > 0 else 1.0
    return (measured, moved, failed) if abs(moved - 1) > DEPARTS else (plan_kinds, None, failed)


def _client_cpu_per_request(runs: Sequence[tuple[Record, Sequence[Sample]]]) -> float | None:
    """The load client's CPU per request over the runs (each with its requests), where it shared the
    server's machine (its processes' CPU read here); None where it did not, or none was sent."""
    sent = sum(len(everything) for _, everything in runs)
    if not sent or any(run.get("machine") is None or run.get("server_cpu_s") is None for run, _ in runs):
        return None
    return sum(machine.use_recorded(run["machine"]).tester_s for run, _ in runs) / sent


def _cpu_per_request(kinds: Sequence[RequestKind]) -> float:
    """A request's CPU on the pod's cores, on average over the mix: its own, the server's, the client's."""
    return mean_of(kinds, "demand_s") + mean_of(kinds, "client_s") if kinds else 0.0


def _searched(
    state: Search,
    families: list[Family],
    memory: dict[str, Memory],
    goal: Objective,
    failed_at: dict[str, float],
) -> Found:
    """Every family's knobs searched on `state`'s costs. Where it proposes a configuration at a rate
    a proof of it failed requests at, or up to OVERLOADED below (its CPU there was the overload's,
    left out, so it stands on its plan's), it searches again without its family (a search cannot
    leave out one configuration); with none left, nothing is proposed."""
    goals = (goal.p99_s, state.duration_s, goal.rate_per_s)
    found = sized_for(families, state.kinds, memory, state.pod, *goals, runs=state.runs, floors=state.floors)
    while (new := found.proposed) is not None and _overloaded(new, failed_at):
        families = [f for f in families if f.name != new.candidate.family.name]
        if not families:
            return dataclasses.replace(found, proposed=None, needed=None, needed_pod=None)
        again = sized_for(
            families, state.kinds, memory, state.pod, *goals, runs=state.runs, floors=state.floors
        )
        cpu_s, simulations = found.cpu_s + again.cpu_s, found.simulations + again.simulations
        minutes_cpu_s = found.minutes_cpu_s + again.minutes_cpu_s
        found = dataclasses.replace(again, cpu_s=cpu_s, simulations=simulations, minutes_cpu_s=minutes_cpu_s)
    return found


def _overloaded(new: Sized, failed_at: Mapping[str, float]) -> bool:
    """Whether a proof of `new`'s configuration failed requests at its rate or up to OVERLOADED below."""
    failed = failed_at.get(new.candidate.label)
    return failed is not None and new.rate_per_s >= (1 - OVERLOADED) * failed


def _proved_already(new: Sized, planned: Sequence[Planned]) -> bool:
    return any(
        p.summary.label == new.candidate.label
        and p.summary.sustainable_per_s > 0
        and abs(new.rate_per_s / p.summary.sustainable_per_s - 1) <= DEPARTS
        for p in planned
    )
