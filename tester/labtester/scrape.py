"""Prometheus /metrics scraped with prometheus_client's parser, and deltas between scrapes: the
requests a server counted, the CPU it charged to requests (`charged_cpu_s`), to the lab's own
control requests (`control_cpu_s`: the scrapes themselves, the census, health polls), and its own
CPU on the threads that run requests, between them (`between_requests_cpu_s`), and the response
body parts its requests handed it (`response_chunks`), and the full garbage collections its
processes ran, each of which stopped its process (`full_collections`, their CPU)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

from labtester.control import TargetError, classify_error

# A server may count a request once its response is closed, just after the client has it: a count
# is read again until it holds still (or matches what was sent), for at most this long.
SETTLE_S = 2.0
SETTLE_POLL_S = 0.1
REQUESTS = "lab_http_requests_total"
KERNEL_ITERATIONS = "lab_kernel_iterations_total"
# Each serving process's total of CPU charged to requests (measure.requestcpu), by pid: what the
# headers hold, and also a streamed body's later chunks and handed-over work that ended late.
CHARGED = "lab_request_cpu_seconds_total"
# The same for the lab's own control requests, which CHARGED leaves out (measure.requestcpu).
CONTROL_CHARGED = "lab_control_cpu_seconds_total"
# The server's own CPU on the threads (greenlets) that run requests, between them (measure.wsgi_cpu).
BETWEEN_REQUESTS = "lab_between_requests_cpu_seconds_total"
# The response body parts the requests handed the server (a streamed body's chunks), by pid.
RESPONSE_CHUNKS = "lab_response_chunks_total"
# The full garbage collections each process ran (measure.full_collections), and their CPU, by pid.
FULL_COLLECTIONS = "lab_full_collections_total"
FULL_COLLECTIONS_CPU = "lab_full_collections_cpu_seconds_total"


@dataclass(frozen=True)
class Scrape:
    requests: dict[tuple[str, str], float] = field(default_factory=dict)  # (route, status) -> count
    kernel_iterations: float = 0.0
    charged_cpu_s: float | None = None  # CHARGED over every process; None: the server has none
    control_cpu_s: float | None = None  # CONTROL_CHARGED likewise
    between_requests_cpu_s: float | None = None  # BETWEEN_REQUESTS likewise
    response_chunks: float | None = None  # RESPONSE_CHUNKS likewise
    full_collections: float | None = None  # FULL_COLLECTIONS likewise
    full_collections_cpu_s: float | None = None  # FULL_COLLECTIONS_CPU likewise

    def requests_for(self, route: str, others_than: frozenset[str] | None = None) -> dict[str, float]:
        """Counts by status of `route`; with `others_than`, of every route but those (a team's
        path is labelled by its framework's template, which the tester cannot know)."""
        counts: dict[str, float] = defaultdict(float)
        for (r, status), count in self.requests.items():
            if r == route if others_than is None else r not in others_than:
                counts[status] += count
        return dict(counts)

    def requests_to(self, routes: frozenset[str]) -> float:
        """Requests counted on any of `routes`, every status."""
        return sum(count for (route, _), count in self.requests.items() if route in routes)


def parse(text: str) -> Scrape:
    requests: dict[tuple[str, str], float] = defaultdict(float)
    iterations = 0.0
    charged: float | None = None
    control: float | None = None
    server: float | None = None
    chunks: float | None = None
    collections: dict[str, float] = {}  # by name: a server without the counters has neither
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == REQUESTS:
                requests[(sample.labels["route"], sample.labels["status"])] += sample.value
            elif sample.name == KERNEL_ITERATIONS:
                iterations += sample.value
            elif sample.name == CHARGED:
                charged = (charged or 0.0) + sample.value
            elif sample.name == CONTROL_CHARGED:
                control = (control or 0.0) + sample.value
            elif sample.name == BETWEEN_REQUESTS:
                server = (server or 0.0) + sample.value
            elif sample.name == RESPONSE_CHUNKS:
                chunks = (chunks or 0.0) + sample.value
            elif sample.name in (FULL_COLLECTIONS, FULL_COLLECTIONS_CPU):
                collections[sample.name] = collections.get(sample.name, 0.0) + sample.value
    return Scrape(
        dict(requests), iterations, charged, control, server, chunks,
        collections.get(FULL_COLLECTIONS), collections.get(FULL_COLLECTIONS_CPU),
    )  # fmt: skip


def scrape(client: httpx.Client, metrics_url: str) -> Scrape:
    try:
        response = client.get(metrics_url)
        response.raise_for_status()
    except httpx.HTTPError as error:
        raise TargetError(f"{metrics_url}: {classify_error(error)}") from error
    return parse(response.text)


@dataclass(frozen=True)
class Charged:
    """What a server's processes charged so far: to requests (0 before the app's first request), to
    the lab's own control requests (None: a server without that counter, whose requests' total holds
    them), how many of those it answered, and its own CPU on the threads that run requests, between
    them (None: a server that measures none there, as an event loop), the response body parts
    its requests handed it (None: a server without that counter), and the full garbage collections
    its processes ran and their CPU (None: a server without those counters)."""

    requests_s: float
    control_s: float | None
    control_requests: float
    between_requests_s: float | None = None
    chunks: float | None = None
    full_collections: float | None = None
    full_collections_cpu_s: float | None = None


async def charged_settled(
    client: httpx.AsyncClient, metrics_url: str, control_routes: frozenset[str]
) -> Charged | None:
    """The CPU the server charged so far, read again until the requests' total holds still for a
    poll (a streamed body or a handed-over call is charged when it ends, just after its last byte)
    or SETTLE_S is up; None where the server does not say (or did not answer). `control_routes`:
    the lab's control paths, whose requests (each scrape here among them) are counted apart."""
    deadline, last = time.monotonic() + SETTLE_S, await _charged(client, metrics_url, control_routes)
    while last is not None and time.monotonic() < deadline:
        await asyncio.sleep(SETTLE_POLL_S)
        now = await _charged(client, metrics_url, control_routes)
        if now is not None and now.requests_s == last.requests_s:
            return now
        last = now
    return last


async def _charged(
    client: httpx.AsyncClient, metrics_url: str, control_routes: frozenset[str]
) -> Charged | None:
    try:
        response = await client.get(metrics_url)
        response.raise_for_status()
        found = parse(response.text)
    except (httpx.HTTPError, ValueError):
        return None
    if found.charged_cpu_s is None and found.control_cpu_s is None:
        return None  # a server without the lab's counters
    # A process's series of a counter appears at its first charge: before the app's first request
    # the requests' total is absent, and 0. Read as "no counter", it left a fresh server's serving
    # cost holding its empty requests' CPU after their headers (httpbin under sync: 0.43 ms, not 0.3).
    requests = found.charged_cpu_s or 0.0
    between = found.between_requests_cpu_s
    control = found.requests_to(control_routes)
    collected = (found.full_collections, found.full_collections_cpu_s)
    return Charged(requests, found.control_cpu_s, control, between, found.response_chunks, *collected)


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


def delta(
    before: Scrape, after: Scrape, route: str, sent: int, others_than: frozenset[str] | None = None
) -> Delta:
    """What the server counted for `route` between two scrapes (or, with `others_than`, for every
    route but those), against what was sent."""
    old = before.requests_for(route, others_than)
    new = after.requests_for(route, others_than)
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


class Counted:
    """One route's count on a target (or every route but `others_than`), read once it settles."""

    def __init__(
        self, client: httpx.Client, metrics_url: str, route: str, others_than: frozenset[str] | None
    ) -> None:
        self.client, self.url, self.route, self.others_than = client, metrics_url, route, others_than

    def _read(self) -> Scrape:
        return scrape(self.client, self.url)

    def settled(self) -> Scrape:
        """A scrape after which the route's count held still for one poll."""
        deadline, last = time.monotonic() + SETTLE_S, self._read()
        while time.monotonic() < deadline:
            time.sleep(SETTLE_POLL_S)
            now = self._read()
            if now.requests_for(self.route, self.others_than) == last.requests_for(
                self.route, self.others_than
            ):
                return now
            last = now
        return last

    def since(self, before: Scrape, sent: int) -> Delta:
        """What was counted since `before`, read again until it matches `sent` or time is up."""
        deadline = time.monotonic() + SETTLE_S
        counted = delta(before, self._read(), self.route, sent, self.others_than)
        while not counted.matches and time.monotonic() < deadline:
            time.sleep(SETTLE_POLL_S)
            counted = delta(before, self._read(), self.route, sent, self.others_than)
        return counted
