"""Bursts: n requests released at the same instant, each on its own connection.

Every request records the client's latency and the server's own account (started_at, finished_at,
pid), so a report can draw who ran when; the makespan is the last completion minus the release.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx

from labtester.census import sample_during
from labtester.client import Observation, observe


@dataclass
class Burst:
    n: int
    release_at: float  # client epoch seconds
    requests: list[Observation]
    census_samples: list[dict[str, Any]]

    @property
    def makespan_s(self) -> float:
        return max(o.sent_at + o.latency_s for o in self.requests) - self.release_at

    @property
    def failures(self) -> int:
        return sum(1 for o in self.requests if not o.ok)


async def fire(url: str, n: int, timeout_s: float, census_url: str | None = None) -> Burst:
    """Send n GETs to `url` together; sample `census_url`'s /test/resmon meanwhile if given."""
    # One client per request: separate connection pools, so no request waits for another's socket.
    clients = [httpx.AsyncClient(timeout=timeout_s) for _ in range(n)]
    release = asyncio.Event()
    stop_sampling = asyncio.Event()

    async def one(client: httpx.AsyncClient) -> Observation:
        await release.wait()
        return await observe(client, url)

    try:
        tasks = [asyncio.create_task(one(client)) for client in clients]
        await asyncio.sleep(0)  # every task is now waiting at the release
        sampler = asyncio.create_task(sample_during(census_url, stop_sampling)) if census_url else None
        release_at = time.time()
        release.set()
        observations = await asyncio.gather(*tasks)
        stop_sampling.set()
        samples = await sampler if sampler else []
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))
    return Burst(n, release_at, list(observations), samples)
