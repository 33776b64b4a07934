"""Benchmark figures: how stable the kernel is, how close calibration gets, how well the model fits."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

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
