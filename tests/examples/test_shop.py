"""The example shop: its Flask and FastAPI versions, each served as the team app (in the first
configuration of its interface, and on granian), give the same answers on every path, and each
path does what examples/README.md says it does (measured)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from labtester.launcher import RunningTarget
from labtester.target_group import stop_all
from tests.conftest import started_together
from tests.services.apps import app_start, configurations, serve_app
from tests.services.servertiming import TIMER_TICK_S, Timing, parse

VERSIONS = {"flask": "examples.shop.flask_app:app", "fastapi": "examples.shop.fastapi_app:app"}
INTERFACES = {"flask": "wsgi", "fastapi": "asgi"}
PATHS = ["/report", "/checkout?product=7", "/products/7/page", "/products?category=lamps", "/products/7"]
PAYMENT_S, STOCK_S = 0.150, 0.040  # examples/shop/downstream.py
REPEATS = 6


# The configuration each version is served in: the first of its interface, and granian's.
SERVED_BY: dict[str, Callable[[str], dict[str, Any]]] = {
    "first": lambda interface: configurations(interface)[0],
    "granian": lambda interface: next(
        c for c in configurations(interface) if c["env"].get("LAB_SERVER") == "granian"
    ),
}


@pytest.fixture(scope="module", params=list(SERVED_BY))
def shops(request: pytest.FixtureRequest, downstream: RunningTarget) -> Iterator[dict[str, RunningTarget]]:
    """Both versions in the configuration, started together."""
    starts = [
        app_start(
            app, SERVED_BY[request.param](INTERFACES[version]), PATHS, LAB_DOWNSTREAM_URL=downstream.url
        )
        for version, app in VERSIONS.items()
    ]
    targets = started_together(starts)
    yield dict(zip(VERSIONS, targets, strict=True))
    stop_all(targets)


def answers(target: RunningTarget, path: str) -> tuple[int, str, Timing]:
    response = httpx.get(f"{target.url}{path}", timeout=30)
    timing = parse(response.headers.get("server-timing"))
    assert timing is not None
    return response.status_code, response.text, timing


@pytest.mark.parametrize("path", [*PATHS, "/products/999", "/products/999/page"])
def test_both_versions_answer_alike(shops: dict[str, RunningTarget], path: str) -> None:
    flask, fastapi = (answers(shops[version], path) for version in VERSIONS)
    assert flask[0] == fastapi[0]
    if flask[0] != 200:
        return  # each framework's own error page
    if flask[1].startswith("<!doctype"):
        assert flask[1].strip() == fastapi[1].strip()
    else:
        assert httpx.Response(200, text=flask[1]).json() == httpx.Response(200, text=fastapi[1]).json()


@pytest.mark.parametrize("version", list(VERSIONS))
def test_the_paths_are_cpu_waiting_and_both(shops: dict[str, RunningTarget], version: str) -> None:
    target = shops[version]
    # A worker's first requests pay one-time costs (templates compiled, connections made): the
    # least of several requests of each path is the path's own.
    report, checkout, page = (
        min((answers(target, path)[2] for _ in range(REPEATS)), key=lambda timing: timing.cpu_s)
        for path in PATHS[:3]
    )
    # CPU seconds do not depend on how busy the machine is; wall times only grow with it.
    # The report is the CPU path; the page computes several times what checkout does (FastAPI's
    # checkout, an async HTTP call, used 3.1 ms against the page's 15.3 ms in one run here).
    assert report.cpu_s > 2 * page.cpu_s > 6 * checkout.cpu_s
    assert checkout.app_s >= PAYMENT_S - TIMER_TICK_S > 20 * checkout.cpu_s  # checkout mostly waits
    assert page.app_s >= STOCK_S - TIMER_TICK_S + page.cpu_s and page.cpu_s > 0.2 * STOCK_S  # the page: both


def test_without_the_downstream_mock_the_waiting_paths_say_so() -> None:
    (first, *_) = configurations("wsgi")
    target = serve_app(VERSIONS["flask"], first, PATHS)
    try:
        for path in ("/checkout?product=7", "/products/7/page"):
            response = httpx.get(f"{target.url}{path}", timeout=30)
            assert response.status_code == 503 and "LAB_DOWNSTREAM_URL" in response.json()["detail"]
        assert httpx.get(f"{target.url}/report", timeout=30).status_code == 200
    finally:
        target.stop()
