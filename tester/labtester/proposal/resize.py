"""Size again on the CPU the proofs' requests used, where that departs from what the plan drew for
them, and prove the new proposal.

The plan draws each request's CPU from the flows, at the company it meets in its process
(sizing/overlap.py): the flows ran 50 users at once, a proposal's rates mostly one to four a
process. Before the company was drawn, the requests used 1.16x to 1.54x the flows' CPU on
datasette at the rates a proposal served (2026-11-27 to 29), and the Django shop's /report 0.4x to
0.8x of what its one-worker flow gave uvicorn. What the company does not explain (a machine that
runs faster or slower minutes later, work that moves with the rate itself) is measured by each
configuration's proof at the rates the proposal serves: every family's knobs searched again on it
give a proposal made on measured work, which its own proof, after, checks (the answer names it
where it kept the objective: `SizingConclusion.proved_best`). The search draws that CPU as the
proofs measured it, at the company they met (not moved with company: a configuration with other
processes meets other company, which the re-sizing does not model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labtester.load import Sample
from labtester.proposal.plan import Planned, needed, summary_of
from labtester.proposal.prove import target_name
from labtester.rawlog import Record
from labtester.scenarios.sizing import window_of
from labtester.sizing import window
from labtester.sizing.document import DEPARTS
from labtester.sizing.model import FEWEST, RequestKind
from labtester.sizing.pod import Pod
from labtester.sizing.search import Search, Sized
from labtester.sizing.serving import is_rate_caveat, rate_caveats, sized_for


def resized(
    planned: Sequence[Planned], runs: Mapping[str, Sequence[Record]], duration_s: float, kept_per_s: float
) -> Planned | None:
    """The proposal searched again, every family on what its proofs' `runs` (by target; its
    configurations' and levels' together, but for runs that failed requests) measured its requests
    using where that departs from its plan's by more than DEPARTS, the others on their plan's.
    With a target rate that nothing in the pod serves on that CPU, the pod it would need (role
    `needed`, not proved). None where no family's departed, the search finds what was proved
    already (a label proved at a rate within DEPARTS of it), or, without a target rate, nothing
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
    for name, item in by_family.items():
        proofs = [r for p in planned if p.family.name == name for r in runs.get(target_name(p.summary), ())]
        answered = _answered(proofs)
        used = window.cpu_used(item.summary.kinds, answered)
        ratio = window.used_ratio(item.summary.kinds, answered)
        measured = any(len(cpu) >= FEWEST for cpu in used.values())  # else the plan's spreads stand
        if ratio is not None and measured and abs(ratio - 1) > DEPARTS:
            ratios[name] = ratio
        kinds[name] = window.measured_kinds(item.summary.kinds, used if name in ratios else {})
    if not ratios:
        return None
    pod = Pod.of(first.pod)
    goal = first.objective
    families = [item.family for item in by_family.values()]
    memory = {name: item.memory for name, item in by_family.items()}
    found = sized_for(families, kinds, memory, pod, goal.p99_s, duration_s, goal.rate_per_s)
    state = Search(kinds, pod, goal.p99_s, duration_s)
    # What the first plan assumed, not what it said of its own configuration (`label: ...`) nor what
    # its search said of the target rate: this search says its own.
    assumed = [c for c in first.caveats if not c.startswith(f"{first.label}: ") and not is_rate_caveat(c)]
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


def _answered(runs: Sequence[Record]) -> list[Sample]:
    """The answered requests of the runs' windows, where nothing failed in them: a run that failed
    requests was overloaded, and a request's CPU there is the overload's."""
    windows = [window_of(run)[1] for run in runs]
    return [s for samples in windows if all(s.ok for s in samples) for s in samples]


def _proved_already(new: Sized, planned: Sequence[Planned]) -> bool:
    return any(
        p.summary.label == new.candidate.label
        and p.summary.sustainable_per_s > 0
        and abs(new.rate_per_s / p.summary.sustainable_per_s - 1) <= DEPARTS
        for p in planned
    )
