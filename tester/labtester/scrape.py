"""Prometheus /metrics scraped with prometheus_client's parser, and deltas between scrapes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

from labtester.client import TargetError, classify_error

REQUESTS = "lab_http_requests_total"
KERNEL_ITERATIONS = "lab_kernel_iterations_total"


@dataclass(frozen=True)
class Scrape:
    requests: dict[tuple[str, str], float] = field(default_factory=dict)  # (route, status) -> count
    kernel_iterations: float = 0.0

    def requests_for(self, route: str) -> dict[str, float]:
        return {status: count for (r, status), count in self.requests.items() if r == route}


def parse(text: str) -> Scrape:
    requests: dict[tuple[str, str], float] = defaultdict(float)
    iterations = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == REQUESTS:
                requests[(sample.labels["route"], sample.labels["status"])] += sample.value
            elif sample.name == KERNEL_ITERATIONS:
                iterations += sample.value
    return Scrape(dict(requests), iterations)


def scrape(client: httpx.Client, metrics_url: str) -> Scrape:
    try:
        response = client.get(metrics_url)
        response.raise_for_status()
    except httpx.HTTPError as error:
        raise TargetError(f"{metrics_url}: {classify_error(error)}") from error
    return parse(response.text)


@dataclass(frozen=True)
class Delta:
    """What the server counted for one route between two scrapes, against what was sent."""

    route: str
    sent: int
    counted_by_status: dict[str, float]
    kernel_iterations: float

    @property
    def counted(self) -> float:
        return sum(self.counted_by_status.values())

    @property
    def matches(self) -> bool:
        return self.counted == self.sent

    def as_dict(self) -> dict[str, object]:
        return {
            "route": self.route,
            "sent": self.sent,
            "counted": self.counted,
            "by_status": self.counted_by_status,
            "kernel_iterations": self.kernel_iterations,
            "matches": self.matches,
        }


def delta(before: Scrape, after: Scrape, route: str, sent: int) -> Delta:
    old = before.requests_for(route)
    new = after.requests_for(route)
    by_status = {s: new[s] - old.get(s, 0.0) for s in new if new[s] - old.get(s, 0.0)}
    return Delta(route, sent, by_status, after.kernel_iterations - before.kernel_iterations)


def work_counts(before: Scrape, after: Scrape, control_paths: Iterable[object]) -> dict[str, float]:
    """Requests the server counted between two scrapes on every route but its control paths
    (the census client 0 reads meanwhile), by route."""
    control = {str(path) for path in control_paths}
    counts: dict[str, float] = defaultdict(float)
    for (route, status), count in after.requests.items():
        if route not in control:
            counts[route] += count - before.requests.get((route, status), 0.0)
    return {route: count for route, count in counts.items() if count}
