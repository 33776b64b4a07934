"""Size the proposal again on the CPU its proof's requests used, where that departs from what the
plan drew for them, and prove that.

The plan draws each request's CPU from the flows, where 50 users ran at once; a request's CPU moves
with what runs beside it. At the rates a proposal serves, the requests used 1.27x to 1.42x the
flows' CPU on datasette (its wall-clock time limits cut its work when it is slow) and the Django
shop's /report 0.4x to 0.8x of its one-worker flow's (what 50 requests in one process cost each
other). The proposal's proof measures the CPU at the rate it serves, in the configuration proposed;
its family's knobs searched again on that CPU give a prediction made on measured work, which its own
proof, after, checks: the answer names it where it kept the objective (`SizingConclusion.proved_best`).
"""

from __future__ import annotations

from collections.abc import Sequence

from labtester.proposal.plan import Planned, summary_of
from labtester.rawlog import Record
from labtester.scenarios.sizing import window_of
from labtester.sizing import window
from labtester.sizing.document import DEPARTS
from labtester.sizing.search import Pod, Search, search


def resized(planned: Planned, runs: Sequence[Record], duration_s: float, kept: bool) -> Planned | None:
    """The proposal's family sized again on what the windows of its proof `runs` measured each
    kind's requests using; None where that is within DEPARTS of what the plan drew (the plan
    stands), nothing was measured, or no configuration of the family keeps the objective on it;
    and where the proposal's proof `kept` the objective on more CPU than drawn: sized on more, it
    would be offered less than it was proved to serve (a datasette proposal kept p99 1.08 s at
    5.0/s on 1.22x its plan's CPU; sized again, 4.2/s)."""
    summary = planned.summary
    answered = [s for run in runs for s in window_of(run)[1] if s.ok]
    used = window.cpu_used(summary.kinds, answered)
    ratio = window.used_ratio(summary.kinds, used)
    if summary.role != "proposed" or ratio is None or abs(ratio - 1) <= DEPARTS or (kept and ratio > 1):
        return None
    family = planned.family
    kinds = {family.name: window.measured_kinds(summary.kinds, used)}
    pod = Pod(summary.pod.cores, summary.pod.memory_bytes, summary.pod.client_cpu_s)
    goal = summary.objective
    memory = {family.name: planned.memory}
    found = search([family], kinds, memory, pod, goal.p99_s, duration_s, goal.rate_per_s)
    if found.proposed is None or found.proposed.rate_per_s <= 0:
        return None
    state = Search(kinds, pod, goal.p99_s, duration_s)
    context = summary.model_copy(update={"fixed_label": None, "resized_on": ratio})
    again = summary_of("resized", found.proposed, state, found, context)
    return Planned(again, family, planned.memory)
