"""Sweep: closed loops at rising concurrency on the mixed endpoint, for each workload variant.

Speedup over concurrency 1 is set beside the bound of the gevent study, 1 / (1 - p) with
p = io / (cpu + io) per core that runs the CPU parts (see model.speedup_bound). The report marks
the concurrency where p99 latency starts to degrade: the first level from which p99 stays above
DEGRADED times the p99 at the lowest level (at every higher level too, so one noisy spike does
not count). Beside it stands what the study's rule recommends for gunicorn's worker_connections:
network time / CPU time, io / cpu. Variants with the same cpu and io but more `splits` show what
cutting the wait into parts does: each part's end waits for the CPU parts of other requests.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from labtester.loadclient import LoadClient, Sample
from labtester.model import speedup_bound
from labtester.scenarios.common import decode, encode, failures_by_type, latency_table
from labtester.settings import SweepSettings, SweepVariant

DEGRADED = 1.5
VARIANT_KEYS = ("cpu_ms", "io_ms", "splits")


def mixed_path(variant: SweepVariant) -> str:
    return f"/test/mixed?cpu_ms={variant.cpu_ms}&io_ms={variant.io_ms}&splits={variant.splits}"


def variant_label(params: dict[str, Any]) -> str:
    """`cpu 5 ms, io 55 ms in 1 part`: how reports name a variant."""
    parts = params["splits"]
    return f"cpu {params['cpu_ms']} ms, io {params['io_ms']} ms in {parts} part{'s' * (parts != 1)}"


def short_label(params: dict[str, Any]) -> str:
    """`5/55 ms x1`: cpu/io and the parts of the wait, for table columns."""
    return f"{params['cpu_ms']}/{params['io_ms']} ms x{params['splits']}"


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
    """One record per variant and level: every level of a variant, then the next variant."""
    records = []
    async with LoadClient(url, timeout_s) as client, httpx.AsyncClient(timeout=60) as control:
        for variant in settings.variants:
            path = mixed_path(variant)
            for concurrency in settings.levels:
                cpu_before, started = await _cpu_seconds(control, url), time.perf_counter()
                samples = await level(client, path, concurrency, settings.duration_s)
                wall_s = time.perf_counter() - started
                cpu_after = await _cpu_seconds(control, url)
                cpu_s = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
                records.append(
                    {
                        "params": {**variant.model_dump(), "duration_s": settings.duration_s},
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


def _bound(io_share: float, info: dict[str, Any] | None) -> float | None:
    """The model's bound for the target's mixed endpoint; None when unknown or unbounded."""
    info = info or {}
    mixed = info.get("endpoints", {}).get("mixed")
    if not mixed:
        return None
    bound = speedup_bound(io_share, mixed, info.get("workers", 1), info.get("effective_cores", 1))
    return None if bound == float("inf") else bound


def _summarize_variant(
    params: dict[str, Any], records: list[dict[str, Any]], info: dict[str, Any] | None
) -> dict[str, Any]:
    io, cpu = params["io_ms"], params["cpu_ms"]
    cores = (info or {}).get("effective_cores")
    levels = []
    for record in sorted(records, key=lambda r: r["concurrency"]):
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
    io_share = io / (cpu + io) if cpu + io else 0.0
    return {
        "params": params,
        "io_share": io_share,
        "bound": _bound(io_share, info),
        "levels": levels,
        "degrades_at": degrades_at([e["p99_s"] for e in levels], [e["concurrency"] for e in levels]),
        # The study's rule for gunicorn's worker_connections: network time / CPU time.
        "recommended_worker_connections": io / cpu if cpu else None,
    }


def summarize(records: list[dict[str, Any]], info: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per variant (in the order run): levels, speedup against the bound, the knee and the rule.

    `info`: the target's /info, for the bound (its mixed endpoint, workers and cores) and CPU use.
    """
    by_variant: dict[tuple[int, ...], list[dict[str, Any]]] = {}
    for record in records:
        by_variant.setdefault(tuple(record["params"][k] for k in VARIANT_KEYS), []).append(record)
    variants = [
        _summarize_variant(dict(zip(VARIANT_KEYS, key, strict=True)), runs, info)
        for key, runs in by_variant.items()
    ]
    return {"duration_s": records[0]["params"].get("duration_s"), "variants": variants}


def variant_sections(document: dict[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A results document's sweeps by variant (in the order run): (label, [(target, summary)])."""
    sections: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for target in document["targets"]:
        for variant in target.get("scenarios", {}).get("sweep", {}).get("variants", []):
            sections.setdefault(variant_label(variant["params"]), []).append((target["name"], variant))
    return list(sections.items())
