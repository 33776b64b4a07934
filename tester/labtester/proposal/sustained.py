"""After a proof run: its level's sustained p99 again, on what the run measured.

The plan's sustained figure (minutes of traffic at a level's rate) is drawn on the CPU the flows
measured minutes before. A proof measures the CPU its requests use in the very configuration, at
that rate, and the serving processes' CPU beyond them; where those depart, the plan's figure is
optimistic beside the proof: on datasette (from PyPI; README, "Measure your own app") the proofs'
requests used 1.46-1.49x the plan's CPU, the plan's figure at 4.5/s was 0.73 s, and 5 minutes of
4.5/s on a real server measured 1.39 s; on what the requests used, the figure was 2.11 s. So each
run of a level that carries one works it out again on its own requests, on the pod's cores as
planned (what a team's pod gives it, not what this machine's neighbours left).
"""

from __future__ import annotations

from collections.abc import Sequence

from labtester.load import Sample
from labtester.proposal.warmup import overhead_per_request
from labtester.rawlog import Record
from labtester.sizing import window
from labtester.sizing.document import Level, SizedSummary
from labtester.sizing.kinds import FEWEST


def sustained_after(
    summary: SizedSummary,
    level: Level,
    samples: Sequence[Sample],
    run: Record,
    floor_s: tuple[float, ...] = (),
) -> dict[str, float | str | None] | None:
    """The level's sustained p99 on the CPU its run's window's `samples` (the answered ones) used
    (each kind with FEWEST of them, the others on the plan's) and the server's own CPU per request
    the `run` measured where its processes' CPU was read here (else the plan's: a cluster's pod),
    each request with a draw of the floor `floor_s`; None where the level has no sustained figure
    or no kind had so many answered."""
    if level.sustained_p99_s is None or not level.sustained_s:
        return None
    # Only kinds with a spread of their own: the others would draw the plan's CPU under this name.
    used = {name: cpu for name, cpu in window.cpu_used(summary.kinds, samples).items() if len(cpu) >= FEWEST}
    if not used:
        return None
    overhead = overhead_per_request([run])
    p99 = window.sustained_on(
        summary, level.offered_per_s, summary.pod.cores, level.sustained_s, used, overhead, floor_s
    )
    ratio = window.used_ratio(summary.kinds, [s for s in samples if s.path in used], samples)
    return {"p99_s": p99, "cpu_ratio": ratio, "overhead_s": overhead}
