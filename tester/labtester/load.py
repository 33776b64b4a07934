"""The load connections (LoadClient): the lab's requests at a high rate on kept-alive connections
of our own (connections.py), a Sample each.

Chosen by measurement: an httpx AsyncClient loop was the bottleneck (hundreds of requests a
second); an aiohttp session kept pace with wrk but cost about 0.7x Locust's CPU per request, most
of it in its request and response objects (connections.py has the figures). httpx stays where rate
does not matter (control calls); bursts use their own raw release. `make bench` sets this client's
CPU per request beside Locust's and wrk's on the same endpoint in the same run.
"""

from __future__ import annotations

import gc
import resource
import time
from collections.abc import Sequence
from dataclasses import asdict, astuple, dataclass
from types import TracebackType

from labtester.connections import Connections
from labtester.control import classify_error
from labtester.servertiming import from_headers
from labtester.traffic import Outgoing

# The server's account (Server-Timing) comes last: rows recorded before it had none.
SAMPLE_FIELDS = (
    "path",
    "scheduled_s",
    "sent_s",
    "latency_s",
    "status",
    "error",
    "cpu_s",
    "app_s",
    "pid",
    "started_at",
    "client",
    "queued_s",
    "elsewhere_s",
    "collections",
    "collections_cpu_s",
)


@dataclass(frozen=True)
class Sample:
    """One request of a load shape; times in seconds since the scenario started, but the server's
    start (its epoch seconds); the server's figures None where the response carried none."""

    path: str  # what was sent: the lab's path, or a team's request's label (its name)
    scheduled_s: float  # when the load shape meant to send it (= sent_s for closed loops)
    sent_s: float
    latency_s: float  # from sending to the full response (or the failure)
    status: int | None
    error: str | None  # failure type, None on a 2xx answer
    cpu_s: float | None = None  # the CPU the request used, as the server measured it
    app_s: float | None = None  # the app's time from its call to its response headers
    pid: int | None = None
    started_at: float | None = None
    client: int = 0  # the client (of P) that sent it
    queued_s: float | None = None  # of app_s, the server's threads' time on a run queue for a core
    elsewhere_s: float | None = None  # of cpu_s, what ran off the request's own thread (its handed-over work)
    collections: int | None = None  # the full collections its process had run so far, as it answered
    collections_cpu_s: float | None = None  # their CPU

    @property
    def from_schedule_s(self) -> float:
        """Latency as a user who arrived on schedule sees it: queueing in the client counts."""
        return self.sent_s - self.scheduled_s + self.latency_s

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def own_s(self) -> float | None:
        """The app's time less its threads' time on a run queue for a core (a busy machine's, not
        the request's): its CPU and its own waits."""
        return None if self.app_s is None else self.app_s - (self.queued_s or 0.0)

    def as_row(self) -> tuple[object, ...]:
        return astuple(self)


def elsewhere_parts(samples: Sequence[Sample], late_s: float = 0.0) -> tuple[float, float]:
    """Of the requests that said where their CPU ran (`lab-elsewhere`: not a gevent worker's
    greenlets, nor a server from before it): the CPU they ran off their own threads (handed to
    threads or other processes), and all their CPU, each with `late_s`, what was charged after its
    headers."""
    said = [(s.cpu_s, s.elsewhere_s) for s in samples if s.cpu_s is not None and s.elsewhere_s is not None]
    return sum(e for _, e in said), sum(c + late_s for c, _ in said)


def elsewhere_share(samples: Sequence[Sample], late_s: float = 0.0) -> float | None:
    """Of these requests' CPU, the share that ran off their own threads (`elsewhere_parts`); None
    where none said it."""
    return share_of(*elsewhere_parts(samples, late_s))


def share_of(elsewhere_s: float, cpu_s: float) -> float | None:
    """`elsewhere_s` of `cpu_s` (`elsewhere_parts`, summed over runs as they may be), at most all."""
    return min(1.0, elsewhere_s / cpu_s) if cpu_s > 0 else None


def raise_open_file_limit() -> None:
    """Thousands of concurrent connections need thousands of descriptors: take the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class _Collector:
    """The cyclic collector's full collections held off while any load client sends: each one walks
    every object the client holds (its samples among them, tens of thousands by a run's end) with
    the sends stopped. Against granian on httpbin at 2,100/s for 20 s (2026-11-30), 3 runs beside
    10 held off: it ran 4 times a run, 57-185 ms each, a send's lateness p99 15-70 ms and the run's
    p99 183-288 ms; held off, none ran, 1.8-17 ms (median 4) and 133-428 ms (median 160), the
    client's memory the same (134 MiB: next to no cyclic garbage, and a run is seconds long).
    The young generations still run; the full ones again once the last client closed, as their own
    counts say (forcing one there cost about 0.2 s a run). CPython's generational collector (3.11
    to 3.13); 3.14's incremental one collects its old generation in steps."""

    FULL = 1 << 30  # middle generation's collections before a full one: never, within a run

    def __init__(self) -> None:
        self.holders = 0
        self.threshold = gc.get_threshold()

    def hold(self) -> None:
        if self.holders == 0:
            self.threshold = gc.get_threshold()
            young, middle, _ = self.threshold
            gc.set_threshold(young, middle, self.FULL)
        self.holders += 1

    def release(self) -> None:
        self.holders -= 1
        if self.holders == 0:
            gc.set_threshold(*self.threshold)


COLLECTOR = _Collector()


class LoadClient:
    """One pool of connections for a scenario; `send` and `get` never raise, they return what happened."""

    def __init__(self, base_url: str, timeout_s: float, client: int = 0) -> None:
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.client = client
        self.started = time.perf_counter()
        self.origin_at = time.time()  # the epoch of `started`: the merge aligns clients by it
        self._connections: Connections | None = None
        # Each request's bytes, prepared once: by path (a lab's GET), by the request itself.
        self._paths: dict[str, bytes] = {}
        self._requests: dict[Outgoing, bytes] = {}

    async def __aenter__(self) -> LoadClient:
        raise_open_file_limit()
        self._connections = Connections(self.base_url)  # no client-side cap: the load shape decides
        COLLECTOR.hold()
        self.restart_clock()
        return self

    async def __aexit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._connections:
            try:
                self._connections.close()
            finally:
                self._connections = None
                COLLECTOR.release()

    def restart_clock(self) -> None:
        """Times from here on count from zero (after a warm-up or a baseline, at a release)."""
        self.started, self.origin_at = time.perf_counter(), time.time()

    def now(self) -> float:
        return time.perf_counter() - self.started

    async def get(self, path: str, scheduled_s: float | None = None) -> Sample:
        """A GET of one of the lab's paths."""
        assert self._connections is not None, "use LoadClient as an async context manager"
        wire = self._paths.get(path)
        if wire is None:
            wire = self._paths[path] = Outgoing.get(path).wire(self._connections.netloc)
        return await self._send(path, wire, False, scheduled_s)

    async def send(self, request: Outgoing, scheduled_s: float | None = None) -> Sample:
        """One request (its sample labelled by request.label), as `scheduled_s` meant it or now."""
        assert self._connections is not None, "use LoadClient as an async context manager"
        wire = self._requests.get(request)
        if wire is None:
            wire = self._requests[request] = request.wire(self._connections.netloc)
        return await self._send(request.label, wire, request.method == "HEAD", scheduled_s)

    async def _send(self, path: str, wire: bytes, head_only: bool, scheduled_s: float | None) -> Sample:
        assert self._connections is not None
        sent = self.now()
        try:
            status, headers = await self._connections.send(wire, self.timeout_s, head_only)
            timing = from_headers(headers.items())
        except (TimeoutError, OSError) as error:
            return Sample(
                path,
                sent if scheduled_s is None else scheduled_s,
                sent,
                self.now() - sent,
                None,
                classify_error(error),
                client=self.client,
            )
        failure = None if 200 <= status < 300 else f"HTTP {status}"
        scheduled = sent if scheduled_s is None else scheduled_s
        return Sample(
            path, scheduled, sent, self.now() - sent, status, failure, **asdict(timing), client=self.client
        )
