"""A configuration's requests alone, before its proof: its floor (sizing/floor.py), what each
took beyond the model of the same sends, which the proof's predictions add to each request."""

from __future__ import annotations

import asyncio

from labtester import machine
from labtester.proposal.openloop import Kind, offer
from labtester.scenarios.common import encode
from labtester.scenarios.flow.servingcost import local
from labtester.sizing import window
from labtester.sizing.arrivals import proof_arrivals, proof_kinds
from labtester.sizing.document import SizedSummary
from labtester.sizing.floor import ALONE_MOST_S, ALONE_REQUESTS, ALONE_SHARE, FEWEST, Floor
from labtester.traffic import Outgoing

ALONE = "alone"  # the raw record of a configuration's requests alone, before its proof


def alone(
    url: str, summary: SizedSummary, timeout_s: float, requests: dict[str, Outgoing]
) -> tuple[dict[str, object], Floor] | None:
    """The configuration's requests alone, before its proof: the mix at ALONE_SHARE of its first
    level's rate, ALONE_REQUESTS of them (at most ALONE_MOST_S); their raw record's fields and their
    floor, what each took beyond the model of the same sends (sizing/floor.py). None where that is
    fewer than `floor.FEWEST` requests (a heavy path: its floor, a millisecond or two, is next to
    nothing against its time)."""
    rate = ALONE_SHARE * min((level.offered_per_s for level in summary.levels), default=0.0)
    duration_s = min(ALONE_MOST_S, ALONE_REQUESTS / rate) if rate > 0 else 0.0
    if rate * duration_s < FEWEST:
        return None
    mix = [Kind(k.name, k.weight) for k in summary.kinds]
    before = machine.snapshot()
    samples, wall_s, _ = asyncio.run(offer(url, mix, rate, duration_s, timeout_s, requests=requests))
    # Its client's CPU per request where it shares the cores (the server's processes are read here).
    client_s = machine.between(before, machine.snapshot()).tester_s / len(samples) if local(url) else 0.0
    times = proof_arrivals(rate, duration_s)
    picked = proof_kinds([k.weight for k in summary.kinds], len(times))
    error = None
    try:  # a model's failure costs the proof its floor, never the proof
        quantiles = list(window.floor_from(summary, times, picked, samples, client_s))
    except (ArithmeticError, ValueError) as failed:
        quantiles, error = [], f"{type(failed).__name__}: {failed}"
    floor = Floor(
        offered_per_s=rate,
        duration_s=duration_s,
        requests=len(samples),
        client_cpu_s=client_s,
        quantiles_s=quantiles,
    )
    record = {
        "step": f"alone {rate:.3f}",
        "offered_per_s": rate,
        "duration_s": duration_s,
        "wall_s": wall_s,
        "samples": encode(samples),
        "floor": floor.model_dump(mode="json"),
        "error": error,
    }
    return record, floor
