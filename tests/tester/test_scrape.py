"""Scrapes of /metrics: the counts by route and status, their deltas against what was sent, and the
CPU the processes charged to requests, read once it settles (on every measured server)."""

from __future__ import annotations

import asyncio

import httpx

from labtester.launcher import RunningTarget
from labtester.scrape import SETTLE_POLL_S, SETTLE_S, charged_settled, delta, parse

BEFORE = """
# TYPE lab_http_requests_total counter
lab_http_requests_total{method="GET",route="/test/io-bound/{milliseconds}",status="200"} 3.0
lab_http_requests_total{method="GET",route="/healthz",status="200"} 7.0
# TYPE lab_kernel_iterations_total counter
lab_kernel_iterations_total 10.0
"""
AFTER = """
# TYPE lab_http_requests_total counter
lab_http_requests_total{method="GET",route="/test/io-bound/{milliseconds}",status="200"} 8.0
lab_http_requests_total{method="GET",route="/test/io-bound/{milliseconds}",status="422"} 1.0
lab_http_requests_total{method="GET",route="/healthz",status="200"} 9.0
# TYPE lab_kernel_iterations_total counter
lab_kernel_iterations_total 25.0
"""


def test_delta_counts_one_route_by_status() -> None:
    result = delta(parse(BEFORE), parse(AFTER), "/test/io-bound/{milliseconds}", sent=6)
    assert result.counted_by_status == {"200": 5.0, "422": 1.0}
    assert result.counted == 6 and result.matches
    assert result.kernel_iterations == 15.0


def test_a_mismatch_is_flagged() -> None:
    assert not delta(parse(BEFORE), parse(AFTER), "/test/io-bound/{milliseconds}", sent=5).matches


CHARGED_TEXT = """# HELP lab_request_cpu_seconds_total CPU charged to requests.
# TYPE lab_request_cpu_seconds_total counter
lab_request_cpu_seconds_total{pid="101"} 1.5
lab_request_cpu_seconds_total{pid="102"} 0.25
"""


def test_the_cpu_charged_to_requests_is_summed_over_the_processes() -> None:
    assert parse(CHARGED_TEXT).charged_cpu_s == 1.75
    # A server without the counter says nothing: not zero CPU.
    assert parse(BEFORE).charged_cpu_s is None


def test_the_charged_total_of_a_server_at_rest_settles_within_a_few_reads(target: RunningTarget) -> None:
    """Every read of /metrics is a request its processes charge: waiting for the total to hold
    still polled for SETTLE_S each time (SETTLE_S / SETTLE_POLL_S reads). At rest, nothing but
    the reads moves it, so it settles at the second or third."""
    httpx.get(f"{target.url}/healthz", timeout=30)  # a request before: charged when it closed
    reads = 0

    async def counted(_: httpx.Request) -> None:
        nonlocal reads
        reads += 1

    async def settle() -> float | None:
        async with httpx.AsyncClient(timeout=30, event_hooks={"request": [counted]}) as client:
            return await charged_settled(client, f"{target.url}/metrics")

    assert asyncio.run(settle()) is not None
    assert reads <= 3 < SETTLE_S / SETTLE_POLL_S, reads
