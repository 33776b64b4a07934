"""Benchmark figures: how stable the kernel is, how close calibration gets, how well the model fits."""

from __future__ import annotations

import asyncio
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from labtester.loadclient import LoadClient, Sample
from labtester.scenarios import sweep
from workload.kernel import KERNEL_NAME, kernel_iteration

KERNEL_SAMPLES = 200


@dataclass(frozen=True)
class KernelStability:
    mean_s: float
    cv_pct: float  # standard deviation / mean


def kernel_stability(samples: int = KERNEL_SAMPLES) -> KernelStability:
    """Time single kernel iterations in this process (run it on an otherwise idle machine)."""
    kernel_iteration()  # warm up
    timings = []
    for _ in range(samples):
        start = time.perf_counter()
        kernel_iteration()
        timings.append(time.perf_counter() - start)
    array = np.asarray(timings)
    return KernelStability(float(array.mean()), float(array.std(ddof=1) / array.mean() * 100))


WRK_DURATION_S = 5
CAPACITY_CONCURRENCY = 50


@dataclass(frozen=True)
class ClientRun:
    requests_per_s: float
    p50_s: float


_WRK_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_wrk(output: str) -> ClientRun:
    """Requests/sec and the 50 % latency from `wrk --latency` output."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    median = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    if not rate or not median:
        raise ValueError(f"unexpected wrk output:\n{output}")
    return ClientRun(float(rate.group(1)), float(median.group(1)) * _WRK_UNITS[median.group(2)])


def run_wrk(url: str, concurrency: int, duration_s: int = WRK_DURATION_S) -> ClientRun:
    threads = min(concurrency, 2)
    command = ["wrk", f"-t{threads}", f"-c{concurrency}", f"-d{duration_s}s", "--latency", url]
    return parse_wrk(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def run_tester_client(
    base_url: str, path: str, concurrency: int, duration_s: float = WRK_DURATION_S
) -> ClientRun:
    async def measure() -> list[Sample]:
        async with LoadClient(base_url, 30) as client:
            return await sweep.level(client, path, concurrency, duration_s)

    samples = asyncio.run(measure())
    ok = [s.latency_s for s in samples if s.ok]
    return ClientRun(len(ok) / duration_s, float(np.median(ok)))


@dataclass(frozen=True)
class ClientCapacity:
    wrk: ClientRun
    tester: ClientRun
    wrk_single: ClientRun
    tester_single: ClientRun


def client_capacity(base_url: str, path: str = "/healthz") -> ClientCapacity:
    """The tester's load client against wrk on the same trivial endpoint, one after the other."""
    return ClientCapacity(
        wrk=run_wrk(base_url + path, CAPACITY_CONCURRENCY),
        tester=run_tester_client(base_url, path, CAPACITY_CONCURRENCY),
        wrk_single=run_wrk(base_url + path, 1),
        tester_single=run_tester_client(base_url, path, 1),
    )


def print_capacity(capacity: ClientCapacity, console: Console) -> None:
    share = capacity.tester.requests_per_s / capacity.wrk.requests_per_s * 100
    added_ms = (capacity.tester_single.p50_s - capacity.wrk_single.p50_s) * 1000
    console.print(
        f"BENCH client capacity at concurrency {CAPACITY_CONCURRENCY} on /healthz: "
        f"wrk {capacity.wrk.requests_per_s:,.0f} req/s, "
        f"tester (aiohttp) {capacity.tester.requests_per_s:,.0f} req/s = {share:.0f} % of wrk "
        "(goal: at least 50 %)",
        highlight=False,
    )
    console.print(
        f"BENCH client latency at concurrency 1 (p50): wrk {capacity.wrk_single.p50_s * 1000:.2f} ms, tester "
        f"{capacity.tester_single.p50_s * 1000:.2f} ms: the tester adds {added_ms:+.2f} ms a request",
        highlight=False,
    )


def print_bench(kernel: KernelStability, document: dict[str, Any], console: Console) -> None:
    console.print(
        f"\nBENCH kernel {KERNEL_NAME}: {kernel.mean_s * 1000:.2f} ms per iteration, "
        f"CV {kernel.cv_pct:.1f} % over {KERNEL_SAMPLES} iterations",
        highlight=False,
    )
    for target in document["targets"]:
        calibration = target["calibration"]
        if calibration:
            console.print(
                f"BENCH calibration {target['name']}: {calibration['error_pct']:+.2f} % "
                f"({calibration['iterations']} iterations, {len(calibration['rounds'])} round(s))",
                highlight=False,
            )
    burst_max = document["run"]["settings"]["burst_max"]
    table = Table(title="BENCH measured / model makespan", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("target")
    table.add_column("endpoint")
    for n in range(1, burst_max + 1):
        table.add_column(f"n={n}", justify="right")
    ratios = []
    for target in document["targets"]:
        for endpoint in target["endpoints"]:
            by_n = {b["n"]: b["ratio"] for b in endpoint["bursts"]}
            ratios += [r for r in by_n.values() if r]
            cells = [f"{by_n[n]:.2f}" if by_n.get(n) else "-" for n in range(1, burst_max + 1)]
            table.add_row(target["name"], endpoint["name"], *cells)
    console.print(table)
    if ratios:
        spread = np.abs(np.asarray(ratios) - 1)
        console.print(
            f"BENCH model fit: median |ratio - 1| = {np.median(spread) * 100:.1f} %, "
            f"worst = {spread.max() * 100:.1f} % over {len(ratios)} points",
            highlight=False,
        )
