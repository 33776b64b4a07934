"""Each request kind's measured spread, for the simulation to draw from: a tail comes from what
requests really cost, not from one typical figure.

Read back from the raw log's flow records (the results document keeps medians only):
- its CPU from every answered request of the kind in the family's own configurations as they
  served the whole mix at once (the flow's `mix`), as the proof sends it: beside the mix's other
  requests a request costs more than among its own kind (the Flask shop's /report 170-190 ms in
  every configuration's mix, 132-146 ms under its own flow on sync and gevent workers, and 142-176
  ms in their proofs: the caches its neighbours' work evicts). Where no mix ran (one kind, a
  document from before it), the kind's own flow under load: its Server-Timing `lab-cpu`, plus
  what the processes charged to the flow's requests after their headers, per request, as the
  flow's model adds it (also added to the mix's, which reads no such counter);
- that CPU by the company each request kept in its process (overlap.py), with the requests alone
  before each flow's ramp (its baseline) as company 0: the simulation draws each request's CPU at
  the company it meets;
- the share of that CPU its requests ran off their own thread (`lab-elsewhere`: handed to threads
  or other processes), over the same requests: on an event loop, what runs beside the loop;
- its wait from the requests alone (the flows' baselines) in every configuration: the app's time
  less its CPU and less its threads' time on a run queue (`lab-queue`), so a busy machine's delay
  for a core is not read as a wait. Under load a thread's time off its core also holds its wait
  for the GIL, which the simulation makes itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from labtester.cold import warm
from labtester.load import Sample, elsewhere_parts, share_of
from labtester.rawlog import Record
from labtester.scenarios.common import decode
from labtester.scenarios.flow.accounting import late_cpu
from labtester.sizing.kinds import FEWEST
from labtester.sizing.overlap import Company, Curve, curve_of
from labtester.sizing.quantiles import spread


@dataclass(frozen=True)
class Spread:
    cpu_s: tuple[float, ...] = ()
    wait_s: tuple[float, ...] = ()
    elsewhere_share: float = 0.0
    cpu_by_company: Curve = ()


def _flows(records: Iterable[Record], mix: bool) -> list[Record]:
    """The flow's runs: each path's own (`mix` False) or the whole mix's."""
    return [
        r
        for r in records
        if r.get("type") == "scenario"
        and r.get("scenario") == "flow"
        and r.get("kind", "run") == "run"
        and bool(r.get("mix")) == mix
    ]


def spread_of(records: Iterable[Record], path: str, family_targets: Iterable[str]) -> Spread:
    """The path's CPU in the family's configurations (in their mix, else under its own flow), and
    its wait alone in all."""
    records = list(records)
    runs = [r for r in _flows(records, mix=False) if r.get("endpoint") == path]
    mixes = _flows(records, mix=True)
    own = set(family_targets)
    cpu: list[tuple[float | None, float]] = []  # (company, CPU) of each answered request
    mixed: list[tuple[float | None, float]] = []
    alone: list[tuple[float, float]] = []  # the requests alone before each flow's ramp
    elsewhere = said_cpu = 0.0  # where requests said where their CPU ran: off their thread, of all
    for r in runs:
        if r.get("target") in own and not r.get("unloaded"):
            samples = decode(r["samples"])
            # What the processes charged to the flow's requests after their headers (a streamed
            # body's later chunks), per request, as the flow's model adds it to the path's CPU.
            late = late_cpu(r, samples)
            cpu += _by_company(samples, path, late)
            in_mix = [s for m in mixes if m.get("target") == r["target"] for s in decode(m["samples"])]
            mixed += _by_company(in_mix, path, late)
            alone += [(0.0, s.cpu_s + late) for s in _alone(r) if s.cpu_s is not None]
            run_elsewhere, run_cpu = elsewhere_parts(
                [s for s in (*samples, *in_mix) if s.path == path and s.ok], late
            )
            elsewhere, said_cpu = elsewhere + run_elsewhere, said_cpu + run_cpu
    if len(mixed) >= FEWEST:
        cpu = mixed
    waits = [
        s.own_s - s.cpu_s for r in runs for s in _alone(r) if s.own_s is not None and s.cpu_s is not None
    ]
    return Spread(
        spread([c for _, c in cpu]) if len(cpu) >= FEWEST else (),
        spread([max(0.0, w) for w in waits]) if len(waits) >= FEWEST else (),
        share_of(elsewhere, said_cpu) or 0.0,
        # The curve from requests whose company is known, and only where they cost any CPU.
        curve_of([*alone, *((c, cpu_s) for c, cpu_s in cpu if c is not None)]) if _costs(cpu) else (),
    )


def _costs(cpu: list[tuple[float | None, float]]) -> bool:
    return len(cpu) >= FEWEST and sum(c for _, c in cpu) > 0


def _alone(run: Record) -> list[Sample]:
    """The flow's answered requests alone before its ramp (its baseline), but each process's first,
    which pays the path's one-time costs (cold.py)."""
    return [s for s in warm(decode(run["baseline"])) if s.ok] if "baseline" in run else []


def _by_company(samples: list[Sample], path: str, late: float) -> list[tuple[float | None, float]]:
    """(company, CPU) of the path's answered requests among these (one target's run or runs):
    how many others of their process were in the app beside them, on average (overlap.py; None
    where a response did not say its process, start or time)."""
    company = Company(samples)
    return [
        (company.others(s), s.cpu_s + late)
        for s in samples
        if s.path == path and s.ok and s.cpu_s is not None
    ]
