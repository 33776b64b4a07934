"""Process census of a target (its /info names the path): at idle, while a burst is in flight,
and the CPU account read around each burst (CPU time of its process tree, cgroup throttling)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx

from labtester.control import TargetError, async_control_client, get_json

SAMPLE_INTERVAL_S = 0.1


def take(client: httpx.Client, census_url: str) -> dict[str, Any]:
    return get_json(client, census_url)


def cpu_account(client: httpx.Client, census_url: str) -> dict[str, Any] | None:
    """The target tree's CPU seconds and its cgroup's throttling counters; None if unreadable."""
    try:
        census = get_json(client, census_url)
    except TargetError:
        return None  # the burst's own records say what went wrong with the target
    return {"cpu_s": float(census["cpu_seconds"]), "cgroup_cpu": census.get("cgroup_cpu")}


async def cpu_seconds(client: httpx.AsyncClient, census_url: str) -> float | None:
    """The target tree's CPU seconds so far (read around a run); None if it did not answer."""
    try:
        return float((await client.get(census_url)).json()["cpu_seconds"])
    except (httpx.HTTPError, ValueError, KeyError):
        return None


async def sample_during(census_url: str, stop: asyncio.Event) -> list[dict[str, Any]]:
    """Census samples until `stop` is set. A blocked event loop answers late, and that shows too."""
    samples: list[dict[str, Any]] = []
    async with async_control_client(60) as client:
        while not stop.is_set():
            try:
                response = await client.get(census_url)
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
