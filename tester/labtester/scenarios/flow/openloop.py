"""The mix open-loop at a given rate: what sizing's proof runs against a proposed configuration.

Sends leave on schedule (send i at i / rate), whatever is unanswered, each request picked by weight
from one seeded stream, and every latency counts from its scheduled send, so a stalled server
cannot hide its stall by slowing the client down (no coordinated omission). The schedule is the
rate shape's own (scenarios/rate.py `open_loop`); this module adds the mix and its figures.

    measured = run_mix_open_loop("http://127.0.0.1:8000", traffic, per_s=40, duration_s=20)
    measured.overall.requests_per_s, measured.overall.latency_s["p99"]
    {r.name: r.latency_s["p99"] for r in measured.requests}
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from labtester.load import LoadClient
from labtester.scenarios.flow.mix import MixServed, served, weights_of
from labtester.scenarios.rate import open_loop
from labtester.scenarios.together import DROPPED
from labtester.traffic import Traffic

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_OUTSTANDING = 2000  # the rate shape's: sends beyond this many unanswered are dropped


class MixRate(BaseModel):
    """The mix sent open-loop at `offered_per_s` for `duration_s`; latencies from the schedule."""

    offered_per_s: float
    duration_s: float
    wall_s: float  # from the first scheduled send to the last answer
    scheduled: int
    late_sends: int  # left more than rate.LATE_S behind their schedule (the client fell behind)
    dropped: int  # never sent: too many unanswered
    overall: MixServed  # requests_per_s: successes over the wall time
    requests: list[MixServed]  # per request name, in the traffic's order


async def mix_open_loop(
    url: str,
    traffic: Traffic,
    per_s: float,
    duration_s: float,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_outstanding: int = DEFAULT_MAX_OUTSTANDING,
) -> MixRate:
    """The mix at `per_s` against the server at `url` (scheme, host and port) for `duration_s`."""
    if per_s <= 0 or duration_s <= 0:
        raise ValueError(f"a rate and a duration above zero (got {per_s} /s for {duration_s} s)")
    chooser = traffic.chooser(0)
    async with LoadClient(url, timeout_s) as client:
        client.restart_clock()
        samples, late = await open_loop(client, lambda _: chooser(), per_s, duration_s, max_outstanding)
        wall_s = client.now()
    overall, per_name = served(samples, weights_of(traffic), 0.0, wall_s, from_schedule=True)
    return MixRate(
        offered_per_s=per_s,
        duration_s=duration_s,
        wall_s=wall_s,
        scheduled=len(samples),
        late_sends=late,
        dropped=sum(1 for s in samples if s.error == DROPPED),
        overall=overall,
        requests=per_name,
    )


def run_mix_open_loop(
    url: str,
    traffic: Traffic,
    per_s: float,
    duration_s: float,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_outstanding: int = DEFAULT_MAX_OUTSTANDING,
) -> MixRate:
    """mix_open_loop from synchronous code (its own event loop)."""
    return asyncio.run(mix_open_loop(url, traffic, per_s, duration_s, timeout_s, max_outstanding))
