"""After a proof run: its level's sustained p99 again, on what the run measured.

The plan's sustained figure (minutes of traffic at a level's rate) is drawn on the CPU the flows
measured minutes before. A proof measures the CPU its requests use in the very configuration, at
that rate, and the serving processes' CPU beyond them; where those depart, the plan's figure is
optimistic beside the proof: on datasette (from PyPI) the proofs' requests used 1.33-1.58x the
plan's CPU, and at a rate where 20 s had just measured p99 1.18 s the plan's sustained figure said
0.74 s. So each run of a level that carries one works it out again on its own requests, on the
pod's cores as planned (what a team's pod gives it, not what this machine's neighbours left).
"""

from __future__ import annotations

from collections.abc import Sequence

from labtester.load import Sample
from labtester.proposal.warmup import overhead_per_request
from labtester.rawlog import Record
from labtester.sizing import window
from labtester.sizing.document import Level, SizedSummary
from labtester.sizing.model import FEWEST
from labtester.sizing.pod import Pod


def sustained_after(
    summary: SizedSummary, level: Level, samples: Sequence[Sample], run: Record
) -> dict[str, float | None] | None:
    """The level's sustained p99 on the CPU its run's answered `samples` used (warm-up included:
    the same configuration at the same rate) and the server's own CPU per request the `run`
    measured; None where the level has no sustained figure or too few requests were answered."""
    if level.sustained_p99_s is None or not level.sustained_s:
        return None
    used = window.cpu_used(summary.kinds, samples)
    if sum(len(cpu) for cpu in used.values()) < FEWEST:
        return None
    pod = summary.pod
    cores = Pod(pod.cores, pod.memory_bytes, pod.client_cpu_s).cores_left(level.offered_per_s)
    overhead = overhead_per_request([run])
    p99 = window.sustained_on(summary, level.offered_per_s, cores, level.sustained_s, used, overhead)
    return {"p99_s": p99, "cpu_ratio": window.used_ratio(summary.kinds, used), "overhead_s": overhead}
