"""Prometheus, where the lab runs beside one (the chart sets TESTER_PROMETHEUS_URL).

Before measuring, the tester waits until Prometheus is ready and has scraped every target once, so
Grafana shows the run from its first burst. After each target's matrix, it waits for one more
scrape and holds Prometheus's request counters against the target's own: the server counted what
the tester sent (the scrape check of each endpoint), and Prometheus recorded what the server
counted. The `target` label carries the target's name (the chart's scrape config sets it).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import httpx
from pydantic import BaseModel

from labtester.control import TargetError, classify_error, control_client
from labtester.scrape import REQUESTS, Scrape

POLL_S = 1.0


class RouteCount(BaseModel):
    route: str
    server: float
    prometheus: float | None

    @property
    def matches(self) -> bool:
        return self.prometheus == self.server


class SentCount(BaseModel):
    """Over one load window: what every client sent to a route, and what the server counted."""

    window: str
    route: str
    sent: int
    server: float

    @property
    def matches(self) -> bool:
        return self.sent == self.server


class PrometheusCheck(BaseModel):
    """Prometheus's counts against the server's, and the server's against the sum of every
    client's sends (filled from the merged rows when the results are built)."""

    url: str
    routes: list[RouteCount]
    error: str | None = None
    sent: list[SentCount] = []

    @property
    def matches(self) -> bool:
        return (
            self.error is None and all(r.matches for r in self.routes) and all(c.matches for c in self.sent)
        )


def _get(client: httpx.Client, url: str, **params: str) -> Any:
    """The `data` of a Prometheus API answer (JSON, as the API documents it)."""
    try:
        response = client.get(url, params=params)
        response.raise_for_status()
        body = response.json()
    except (httpx.HTTPError, ValueError) as error:
        raise TargetError(f"{url}: {classify_error(error)}") from error
    return body.get("data", {}) if isinstance(body, dict) else {}


def _last_scrapes(client: httpx.Client, base: str) -> dict[str, float]:
    """Epoch seconds of each target's last successful scrape, by the `target` label."""
    body = _get(client, f"{base}/api/v1/targets", state="active")
    scrapes: dict[str, float] = {}
    for entry in body.get("activeTargets", []):
        name = entry.get("labels", {}).get("target")
        if name and entry.get("health") == "up":
            scrapes[name] = _epoch(entry.get("lastScrape", ""))
    return scrapes


def _epoch(rfc3339: str) -> float:
    try:
        return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def wait_scraped(base: str, names: list[str], after: float, timeout_s: float) -> None:
    """Until Prometheus is ready and has scraped every named target since `after`."""
    deadline = time.monotonic() + timeout_s
    waiting: list[str] = list(names)
    with control_client(10) as client:
        while time.monotonic() < deadline:
            try:
                if client.get(f"{base}/-/ready").status_code == 200:
                    scrapes = _last_scrapes(client, base)
                    waiting = [n for n in names if scrapes.get(n, 0.0) <= after]
                    if not waiting:
                        return
            except (httpx.HTTPError, TargetError):
                pass
            time.sleep(POLL_S)
    raise TargetError(f"Prometheus at {base} had not scraped {', '.join(waiting)} within {timeout_s:.0f} s")


def cross_check(base: str, name: str, server: Scrape, scraped_at: float, timeout_s: float) -> PrometheusCheck:
    """Prometheus's request counters of `name`, after a scrape later than `scraped_at`, against
    the server's own at `scraped_at` (the target idle between the two)."""
    try:
        wait_scraped(base, [name], scraped_at, timeout_s)
        with control_client(10) as client:
            body = _get(
                client, f"{base}/api/v1/query", query=f'sum by (route) ({REQUESTS}{{target="{name}"}})'
            )
    except TargetError as error:
        return PrometheusCheck(url=base, routes=[], error=str(error))
    recorded = {item["metric"].get("route"): float(item["value"][1]) for item in body.get("result", [])}
    work_routes = sorted(
        {route for route, _ in server.requests if route.startswith("/test/")} - {"/test/resmon"}
    )
    counts = [
        RouteCount(
            route=route, server=sum(server.requests_for(route).values()), prometheus=recorded.get(route)
        )
        for route in work_routes
    ]
    return PrometheusCheck(url=base, routes=counts)
