"""Process census of a target, at idle and sampled while a burst is in flight."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

import httpx

from labtester.client import get_json

SAMPLE_INTERVAL_S = 0.1


def summarize(census: dict[str, Any]) -> dict[str, Any]:
    """The numbers a report shows: processes by role, threads, memory."""
    roles = Counter(p["role"] for p in census["processes"])
    return {
        "process_count": census["process_count"],
        "thread_count": census["thread_count"],
        "rss_bytes": census["rss_bytes"],
        "roles": dict(sorted(roles.items())),
    }


def idle_census(client: httpx.Client, url: str) -> dict[str, Any]:
    return get_json(client, f"{url}/test/resmon")


async def sample_during(url: str, stop: asyncio.Event) -> list[dict[str, Any]]:
    """Census samples until `stop` is set. A blocked event loop answers late, and that shows too."""
    samples: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=60) as client:
        while not stop.is_set():
            try:
                response = await client.get(f"{url}/test/resmon")
                if response.is_success:
                    samples.append(response.json())
            except httpx.HTTPError:
                pass  # the burst's own records say what went wrong with the target
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SAMPLE_INTERVAL_S)
    return samples


def busiest(samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The sample with the most processes (the pool or reloader children that appeared)."""
    return max(samples, key=lambda c: (c["process_count"], c["thread_count"]), default=None)
