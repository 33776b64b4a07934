"""Metrics add up across gunicorn's worker processes."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Configured

ROUTE = "/test/io-bound/{milliseconds}"


def requests_counted(url: str, route: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "lab_http_requests"
        for sample in family.samples
        if sample.name == "lab_http_requests_total" and sample.labels["route"] == route
    )


def test_request_counter_is_exact_across_workers(configured: Configured) -> None:
    target = configured("flask-2x")
    before = requests_counted(target.url, ROUTE)
    sent = 24
    with ThreadPoolExecutor(8) as pool:
        bodies = list(
            pool.map(lambda _: httpx.get(f"{target.url}/test/io-bound/100", timeout=30).json(), range(sent))
        )
    assert len({body["pid"] for body in bodies}) > 1, "requests should spread over several workers"
    assert requests_counted(target.url, ROUTE) - before == sent
