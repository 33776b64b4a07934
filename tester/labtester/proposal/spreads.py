"""Each request kind's measured spread, for the simulation to draw from: a tail comes from what
requests really cost, not from one typical figure.

Read back from the raw log's flow records (the results document keeps medians only):
- its CPU from every answered request of the path under load in the family's own configurations
  (its Server-Timing `lab-cpu`, plus what the processes charged to the flow's requests after their
  headers, per request, as the flow's model adds it): what a request costs where requests share
  the process, the GIL's switches and the caches included, as the proof will load it;
- its wait from the requests alone (the flows' baselines) in every configuration: the app's time
  less its CPU and less its threads' time on a run queue (`lab-queue`), so a busy machine's delay
  for a core is not read as a wait. Under load a thread's time off its core also holds its wait
  for the GIL, which the simulation makes itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from labtester.rawlog import Record
from labtester.scenarios.common import decode
from labtester.scenarios.flow.accounting import late_cpu
from labtester.sizing.model import spread

FEWEST = 5  # fewer measured requests than this are no spread: the typical figure stands alone


@dataclass(frozen=True)
class Spread:
    cpu_s: tuple[float, ...] = ()
    wait_s: tuple[float, ...] = ()


def _flow_runs(records: Iterable[Record], path: str) -> list[Record]:
    return [
        r
        for r in records
        if r.get("type") == "scenario"
        and r.get("scenario") == "flow"
        and r.get("kind", "run") == "run"
        and not r.get("mix")
        and r.get("endpoint") == path
    ]


def spread_of(records: Iterable[Record], path: str, family_targets: Iterable[str]) -> Spread:
    """The path's CPU under load in the family's configurations, and its wait alone in all."""
    runs = _flow_runs(records, path)
    own = set(family_targets)
    cpu: list[float] = []
    for r in runs:
        if r.get("target") in own and not r.get("unloaded"):
            samples = decode(r["samples"])
            # What the processes charged to the flow's requests after their headers (a streamed
            # body's later chunks), per request, as the flow's model adds it to the path's CPU.
            late = late_cpu(r, samples)
            cpu += [s.cpu_s + late for s in samples if s.ok and s.cpu_s is not None]
    waits = [
        s.own_s - s.cpu_s
        for r in runs
        if "baseline" in r
        for s in decode(r["baseline"])[1:]  # the first may pay the path's one-time costs
        if s.ok and s.cpu_s is not None and s.own_s is not None
    ]
    return Spread(
        spread(cpu) if len(cpu) >= FEWEST else (),
        spread([max(0.0, w) for w in waits]) if len(waits) >= FEWEST else (),
    )
