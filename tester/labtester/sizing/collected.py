"""Full garbage collections a proof's own answers counted (each carries its process's count so far,
Server-Timing `lab-gc`), and the figure its predictions draw from them (sizing/events.py stops a
process for each). The flows' count (proposal/fullgc.py) is the plan's; a proof's open loop at
thousands a second counted about twice as many per request on httpbin under gthread (1 in 2,350
where the flows' 50 users counted 1 in 4,650), so each proof run predicts its window on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from labtester.load import Sample
from labtester.sizing.document import KindCost

# What the plan's figure weighs beside a proof's count (measured_collections), in collections: the
# flows' closed loops of 50 users counted about half as many per request as the proofs' open loop
# (above), so a proof's own count decides once it holds a few.
PLANNED_WORTH = 2.0


@dataclasses.dataclass(frozen=True)
class Counted:
    """Full collections counted over some answers of a server's processes (their Server-Timing's
    `lab-gc`): how many ran, their CPU, and how many answers they ran among."""

    collections: int
    cpu_s: float
    answers: int


def counted_in(*runs: Sequence[Sample]) -> Counted | None:
    """What each process's counter moved between its first answer in a run and its last, over the
    answers after its first, summed over `runs` (each apart: the gap between two would count too);
    None where no answer carried it (a server without the counter) or no process answered twice."""
    collections, cpu_s, answers = 0, 0.0, 0
    for samples in runs:
        by_pid: dict[int, list[tuple[int, float]]] = {}
        for s in samples:
            if s.pid is not None and s.collections is not None:  # a 500 answered too
                by_pid.setdefault(s.pid, []).append((s.collections, s.collections_cpu_s or 0.0))
        for read in (read for read in by_pid.values() if len(read) >= 2):
            (first, first_cpu_s), (last, last_cpu_s) = min(read), max(read)
            collections += last - first
            cpu_s += last_cpu_s - first_cpu_s
            answers += len(read) - 1
    return Counted(collections, max(0.0, cpu_s), answers) if answers else None


def measured_collections(
    counted: Counted | None, planned: Sequence[KindCost], worth: float = PLANNED_WORTH
) -> tuple[float, float] | None:
    """Full collections per request and the CPU of one, as `counted` in a proof (None: not
    counted), with the plan's figure beside it worth `worth` collections (a warm-up of a few
    thousand answers counts a handful: alone, none counted would be taken for none running)."""
    if counted is None or counted.answers <= 0:
        return None
    weight = sum(k.weight for k in planned) or 1.0
    planned_collections = sum(k.weight * k.full_collections_per_request for k in planned)
    planned_cpu_s = sum(k.weight * k.full_collections_per_request * k.full_collection_cpu_s for k in planned)
    beside = worth if planned_collections > 0 else 0.0
    answers = counted.answers + beside * weight / planned_collections if beside else counted.answers
    collections = counted.collections + beside
    cpu_s = counted.cpu_s + (beside * planned_cpu_s / planned_collections if beside else 0.0)
    return collections / answers, cpu_s / collections if collections > 0 else 0.0
