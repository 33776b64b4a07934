"""Open loop at a constant arrival rate (wrk2, k6 constant-arrival-rate).

Requests are sent on schedule whether or not earlier ones were answered, and latency is measured
from each request's scheduled send time, so a stalled server cannot hide its stall by slowing
the client down (coordinated omission). Sends that start late, and sends dropped because too
many requests are unanswered, are counted.
"""

from __future__ import annotations

import asyncio
from typing import Any

from labtester.loadclient import LoadClient, Sample
from labtester.scenarios.common import decode, encode, failures_by_type, latency_table, per_second
from labtester.settings import RateSettings

LATE_S = 0.010  # a send more than this behind its schedule counts as late
DROPPED = "dropped by client (too many unanswered)"


async def run(url: str, settings: RateSettings, timeout_s: float) -> list[dict[str, Any]]:
    samples: list[Sample] = []
    late = 0
    outstanding = 0
    async with LoadClient(url, timeout_s) as client:

        async def send(scheduled_s: float) -> None:
            nonlocal outstanding
            samples.append(await client.get(settings.path, scheduled_s))
            outstanding -= 1

        tasks = []
        for index in range(round(settings.per_s * settings.duration_s)):
            scheduled_s = index / settings.per_s
            delay = scheduled_s - client.now()
            if delay > 0:
                await asyncio.sleep(delay)
            elif -delay > LATE_S:
                late += 1
            if outstanding >= settings.max_outstanding:
                samples.append(Sample(settings.path, scheduled_s, client.now(), 0.0, None, DROPPED))
                continue
            outstanding += 1
            tasks.append(asyncio.create_task(send(scheduled_s)))
        await asyncio.gather(*tasks)
        wall_s = client.now()
    return [
        {"params": settings.model_dump(), "wall_s": wall_s, "late_sends": late, "samples": encode(samples)}
    ]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = records
    samples = decode(record["samples"])
    answered = [s for s in samples if s.error != DROPPED]
    points = (50, 90, 99, 99.9, 100)
    return {
        "params": record["params"],
        "wall_s": record["wall_s"],
        "scheduled": len(samples),
        "late_sends": record["late_sends"],
        "dropped": len(samples) - len(answered),
        "achieved_per_s": sum(1 for s in answered if s.ok) / record["wall_s"] if record["wall_s"] else 0.0,
        "latency_from_schedule_s": latency_table([s.from_schedule_s for s in answered], points),
        "service_latency_s": latency_table([s.latency_s for s in answered], points),
        "failures": failures_by_type(samples),
        "over_time": per_second(answered, record["wall_s"], latency="from_schedule_s"),
    }
