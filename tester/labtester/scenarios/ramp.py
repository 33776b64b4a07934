"""Ramp: users added at a spawn rate up to U, each sending, then thinking, until the end (Locust)."""

from __future__ import annotations

import asyncio
from typing import Any

from labtester.loadclient import LoadClient, Sample
from labtester.scenarios.common import decode, encode, failures_by_type, latency_table, per_second
from labtester.settings import RampSettings


async def run(url: str, settings: RampSettings, timeout_s: float) -> list[dict[str, Any]]:
    samples: list[Sample] = []
    users_over_time: list[tuple[float, int]] = []
    async with LoadClient(url, timeout_s) as client:

        async def user() -> None:
            while client.now() < settings.duration_s:
                samples.append(await client.get(settings.path))
                remaining = settings.duration_s - client.now()
                if remaining > 0:
                    await asyncio.sleep(min(settings.think_s, remaining))

        users = []
        for index in range(settings.users):
            start_at = index / settings.spawn_rate
            if start_at >= settings.duration_s:
                break
            await asyncio.sleep(max(0.0, start_at - client.now()))
            users.append(asyncio.create_task(user()))
            users_over_time.append((client.now(), len(users)))
        await asyncio.gather(*users)
        wall_s = client.now()
    return [
        {
            "params": settings.model_dump(),
            "wall_s": wall_s,
            "users": users_over_time,
            "samples": encode(samples),
        }
    ]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = records
    samples = decode(record["samples"])
    wall = record["wall_s"]
    failures = sum(1 for s in samples if s.error)
    return {
        "params": record["params"],
        "wall_s": wall,
        "stats": {  # Locust's statistics table, one row: the scenario's path
            "name": record["params"]["path"],
            "requests": len(samples),
            "failures": failures,
            "requests_per_s": len(samples) / wall if wall else 0.0,
            "failures_per_s": failures / wall if wall else 0.0,
            **latency_table([s.latency_s for s in samples]),
        },
        "failures": failures_by_type(samples),
        "users": record["users"],
        "over_time": per_second(samples, wall),
    }
