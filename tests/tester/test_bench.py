"""make bench's figures of the release: I/O and CPU bursts apart, and per target."""

from __future__ import annotations

import re
import subprocess
import sys

from labtester.bench import release_lines
from labtester.scenarios.bursts.analyse import BurstRun


def run(spread_ms: float, offset_ms: float = 1.0) -> BurstRun:
    unmeasured = dict.fromkeys(BurstRun.model_fields)
    return BurstRun(
        **{
            **unmeasured,
            "n": 3,
            "repeat": 0,
            "phase": "burst",
            "released_at": 0.0,
            "failures": {},
            "verdict": "agrees",
            "start_spread_s": spread_ms / 1000,
            "release_offset_s": offset_ms / 1000,
            "delivery_lag_s": 0.002,
        }
    )


def test_the_spread_of_io_bursts_is_the_releases_and_cpu_bursts_are_shown_per_target() -> None:
    runs = [("a", "io", run(1.0)), ("a", "cpu", run(0.0)), ("b", "io", run(1.5)), ("b", "cpu", run(50.0))]
    release, per_target, lag = release_lines(runs)
    assert "1.25/1.48 ms in I/O bursts" in release and "25.00/47.50 ms in CPU bursts" in release
    assert per_target.endswith("a 0.00 ms, b 50.00 ms")
    assert lag.startswith("delivery lag p50/p95/max 2.0/2.0/2.0 ms")


def test_a_clients_cost_is_its_own_cpu_over_the_requests_it_had_answered(start) -> None:
    from labtester.clients.benchmark import measure

    target = start("fastapi")
    cost = measure("lab", f"{target.url}/healthz", 10, 1.0)
    assert cost.requests > 0 and 0 < cost.cpu_s <= cost.wall_s * 1.5  # one thread, at most a core
    assert cost.cpu_per_request_s == cost.cpu_s / cost.requests


def test_make_bench_reports_the_sizing_searchs_own_cpu() -> None:
    # In a process of its own, as `make bench` runs it: a long test session's heap slows the same
    # search by half again (0.7 s of CPU alone here, 1.2 s late in a full run).
    printed = subprocess.run(
        [sys.executable, "-c", SIZING_COST], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    found = re.search(r"BENCH sizing search: ([\d.]+) s of CPU .* (\d+) simulations over 6 families", printed)
    assert found is not None, printed
    assert 0 < float(found.group(1)) < 1.0 and int(found.group(2)) > 0


SIZING_COST = (
    "from rich.console import Console; from labtester.bench import print_sizing_cost; "
    "print_sizing_cost(Console(width=200))"
)
