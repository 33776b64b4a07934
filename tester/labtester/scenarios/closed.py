"""Closed loop: R requests, C in flight at any time, over a list of paths."""

from __future__ import annotations

import asyncio
from typing import Any

from labtester.loadclient import LoadClient, Sample
from labtester.scenarios.common import decode, encode, failures_by_type, latency_table, status_counts
from labtester.settings import ClosedSettings


async def closed_loop(client: LoadClient, paths: list[str], requests: int, concurrency: int) -> list[Sample]:
    """Each of `concurrency` workers sends its next request as soon as its last one is answered."""
    indices = iter(range(requests))  # shared: every index is taken by exactly one worker
    samples: list[Sample] = []

    async def worker() -> None:
        for index in indices:
            samples.append(await client.get(paths[index % len(paths)]))

    await asyncio.gather(*(worker() for _ in range(min(concurrency, requests))))
    return samples


async def run(url: str, settings: ClosedSettings, timeout_s: float) -> list[dict[str, Any]]:
    async with LoadClient(url, timeout_s) as client:
        samples = await closed_loop(client, settings.paths, settings.requests, settings.concurrency)
        wall_s = client.now()
    return [{"params": settings.model_dump(), "wall_s": wall_s, "samples": encode(samples)}]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = records
    samples = decode(record["samples"])
    ok = [s for s in samples if s.ok]
    return {
        "params": record["params"],
        "requests": len(samples),
        "wall_s": record["wall_s"],
        "throughput_per_s": len(ok) / record["wall_s"] if record["wall_s"] else 0.0,
        "status_counts": status_counts(samples),
        "success_ratio": len(ok) / len(samples) if samples else 0.0,
        "failures": failures_by_type(samples),
        "latency_s": latency_table([s.latency_s for s in samples], ()),
    }
