"""Sweep: closed loops at rising concurrency on the mixed endpoint.

Speedup over concurrency 1 is set beside the bound of the gevent study, 1 / (1 - p) with
p = io / (cpu + io) per process that runs the CPU parts (see model.speedup_bound). The report
marks the concurrency where p99 latency starts to degrade: the first level from which p99 stays
above DEGRADED times the p99 at the lowest level (at every higher level too, so one noisy spike
does not count).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from labtester.loadclient import LoadClient, Sample
from labtester.scenarios.common import decode, encode, failures_by_type, latency_table
from labtester.settings import SweepSettings

DEGRADED = 1.5


def mixed_path(settings: SweepSettings) -> str:
    return f"/test/mixed?cpu_ms={settings.cpu_ms}&io_ms={settings.io_ms}&splits={settings.splits}"


async def _cpu_seconds(control: httpx.AsyncClient, url: str) -> float | None:
    try:
        return float((await control.get(f"{url}/test/resmon")).json()["cpu_seconds"])
    except (httpx.HTTPError, ValueError, KeyError):
        return None


async def level(client: LoadClient, path: str, concurrency: int, duration_s: float) -> list[Sample]:
    """`concurrency` workers in a closed loop until `duration_s` has passed."""
    samples: list[Sample] = []
    stop_at = client.now() + duration_s

    async def worker() -> None:
        while client.now() < stop_at:
            samples.append(await client.get(path))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples


async def run(url: str, settings: SweepSettings, timeout_s: float) -> list[dict[str, Any]]:
    path = mixed_path(settings)
    records = []
    async with LoadClient(url, timeout_s) as client, httpx.AsyncClient(timeout=60) as control:
        for concurrency in settings.levels:
            cpu_before, started = await _cpu_seconds(control, url), time.perf_counter()
            samples = await level(client, path, concurrency, settings.duration_s)
            wall_s = time.perf_counter() - started
            cpu_after = await _cpu_seconds(control, url)
            cpu_s = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
            records.append(
                {
                    "params": settings.model_dump(),
                    "concurrency": concurrency,
                    "wall_s": wall_s,
                    "server_cpu_s": cpu_s,
                    "samples": encode(samples),
                }
            )
    return records


def degrades_at(p99s: list[float | None], concurrency: list[int]) -> int | None:
    """The first level from which p99 stays above DEGRADED x the first level's p99."""
    if not p99s or p99s[0] is None:
        return None
    limit = DEGRADED * p99s[0]
    for index in range(1, len(p99s)):
        if all(p is not None and p > limit for p in p99s[index:]):
            return concurrency[index]
    return None


def summarize(
    records: list[dict[str, Any]], bound: float | None = None, cores: int | None = None
) -> dict[str, Any]:
    params = records[0]["params"]
    io, cpu = params["io_ms"], params["cpu_ms"]
    levels = []
    for record in records:
        samples = decode(record["samples"])
        ok = [s for s in samples if s.ok]
        latencies = latency_table([s.latency_s for s in ok], (50, 95, 99))
        cpu_s = record["server_cpu_s"]
        levels.append(
            {
                "concurrency": record["concurrency"],
                "requests": len(samples),
                "throughput_per_s": len(ok) / record["wall_s"],
                "p50_s": latencies.get("p50"),
                "p95_s": latencies.get("p95"),
                "p99_s": latencies.get("p99"),
                "cpu_utilisation": cpu_s / record["wall_s"] / cores if cpu_s is not None and cores else None,
                "failures": failures_by_type(samples),
            }
        )
    base = levels[0]
    for entry in levels:
        entry["speedup"] = (
            entry["throughput_per_s"] / base["throughput_per_s"] if base["throughput_per_s"] else None
        )
    knee = degrades_at([e["p99_s"] for e in levels], [e["concurrency"] for e in levels])
    return {
        "params": params,
        "io_share": io / (cpu + io) if cpu + io else 0.0,
        "bound": bound,
        "levels": levels,
        "degrades_at": knee,
        "recommended_concurrency": io / cpu if cpu else None,  # the study's network_time / cpu_time
    }
