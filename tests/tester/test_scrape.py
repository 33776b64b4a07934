"""The tester's reading of /metrics: requests counted by route and status, and the CPU the
processes charged to requests and, apart, to the lab's own control reads."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from labtester.info import TargetInfo
from labtester.launcher import RunningTarget
from labtester.scrape import SETTLE_POLL_S, SETTLE_S, Charged, charged_settled, delta, parse

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


LAB_READS_TEXT = """# TYPE lab_request_cpu_seconds_total counter
lab_request_cpu_seconds_total{pid="101"} 1.5
# TYPE lab_control_cpu_seconds_total counter
lab_control_cpu_seconds_total{pid="101"} 0.5
lab_control_cpu_seconds_total{pid="102"} 0.125
# TYPE lab_http_requests_total counter
lab_http_requests_total{method="GET",route="/metrics",status="200"} 40.0
lab_http_requests_total{method="GET",route="/test/resmon",status="200"} 2.0
lab_http_requests_total{method="GET",route="/items/{id}",status="200"} 900.0
"""


def test_the_labs_own_reads_are_summed_apart_from_the_requests() -> None:
    found = parse(LAB_READS_TEXT)
    assert found.charged_cpu_s == 1.5
    assert found.control_cpu_s == 0.625
    assert found.requests_to(frozenset({"/metrics", "/test/resmon", "/healthz"})) == 42.0
    # A server from before the lab's reads had a total of their own: its requests' holds them.
    assert parse(CHARGED_TEXT).control_cpu_s is None


COLLECTIONS_TEXT = """# TYPE lab_full_collections_total counter
lab_full_collections_total{pid="101"} 3.0
lab_full_collections_total{pid="102"} 0.0
# TYPE lab_full_collections_cpu_seconds_total counter
lab_full_collections_cpu_seconds_total{pid="101"} 0.09
lab_full_collections_cpu_seconds_total{pid="102"} 0.0
"""


def test_full_collections_are_summed_over_the_processes_and_none_read_apart_from_no_counter() -> None:
    found = parse(COLLECTIONS_TEXT)
    assert (found.full_collections, found.full_collections_cpu_s) == (3.0, pytest.approx(0.09))
    assert (parse(CHARGED_TEXT).full_collections, parse(CHARGED_TEXT).full_collections_cpu_s) == (None, None)


def test_the_charged_total_of_a_server_at_rest_settles_within_a_few_reads(target: RunningTarget) -> None:
    """Every read of /metrics is a request its processes charge: counted as the requests', the
    total never held still and each settle polled for SETTLE_S (SETTLE_S / SETTLE_POLL_S reads).
    Counted apart as the lab's own, at rest nothing moves it: it settles at the second read."""
    httpx.get(f"{target.url}/test/io-bound/1", timeout=30)  # a request before: charged when it closed
    reads = 0

    async def counted(_: httpx.Request) -> None:
        nonlocal reads
        reads += 1

    routes = TargetInfo.model_validate(httpx.get(f"{target.url}/info", timeout=30).json()).control.paths()

    async def settle() -> Charged | None:
        async with httpx.AsyncClient(timeout=30, event_hooks={"request": [counted]}) as client:
            return await charged_settled(client, f"{target.url}/metrics", routes)

    assert asyncio.run(settle()) is not None
    assert reads <= 3 < SETTLE_S / SETTLE_POLL_S, reads
