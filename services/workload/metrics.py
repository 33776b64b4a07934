"""Prometheus metrics the request path records, shared by every target.

Every target runs prometheus_client in multiprocess mode (the entrypoint sets
PROMETHEUS_MULTIPROC_DIR before anything imports prometheus_client), so gunicorn's and uvicorn's
workers all count into one exposition (workload.exposition). Metric names and labels are a
contract: the Grafana dashboard and the tester's scrape read them.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from prometheus_client import Counter, Gauge, Histogram

from measure import full_collections
from measure.observers import install_request_sink
from measure.requestcpu import set_charged_sinks
from workload import paths
from workload.kernel import WorkResult, calibration

# The methods a label names (RFC 9110's and PATCH); any other is "other": a client's made-up
# methods would otherwise add a series each (300 of them grew /metrics from 2 series to 304).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
OTHER_METHOD = "other"
# From milliseconds to a minute: request times here range from a health check to long CPU work.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# A request's CPU starts lower: a health check or a wait uses tenths of a millisecond.
CPU_BUCKETS = (0.0001, 0.00025, 0.0005, *DURATION_BUCKETS)

REQUESTS = Counter("lab_http_requests_total", "HTTP requests answered.", ["method", "route", "status"])
REQUEST_DURATION = Histogram(
    "lab_http_request_duration_seconds",
    "Time from request received to response ready.",
    ["method", "route"],
    buckets=DURATION_BUCKETS,
)
REQUEST_CPU = Histogram(
    "lab_http_request_cpu_seconds",
    "CPU the request used where it ran (measure.requestcpu), as its Server-Timing header says.",
    ["method", "route"],
    buckets=CPU_BUCKETS,
)
IN_FLIGHT = Gauge(
    "lab_http_requests_in_flight", "Requests being handled right now.", multiprocess_mode="livesum"
)
# Per process: its own CPU (lab_server_*, the census) less these two is the CPU that was no request's.
REQUEST_CPU_TOTAL = Counter(
    "lab_request_cpu_seconds",
    "CPU charged to requests in this process so far (measure.requestcpu): each request's whole "
    "account when it ends, a streamed body's later chunks included, and calls it handed over that "
    "ended after it. The lab's own control requests are not in it (lab_control_cpu_seconds_total).",
    ["pid"],
)
CONTROL_CPU_TOTAL = Counter(
    "lab_control_cpu_seconds",
    "CPU charged to the lab's own control requests in this process so far (its /metrics scrapes, "
    "census, health, /info and calibration reads), counted as lab_request_cpu_seconds_total counts "
    "a request's.",
    ["pid"],
)
BETWEEN_REQUESTS_CPU_TOTAL = Counter(
    "lab_between_requests_cpu_seconds",
    "The server's own CPU in this process so far on the threads (a gevent worker's greenlets, an event "
    "loop's thread) that run requests, between them (the last response finished, the next request read "
    "and parsed; on an event loop, between any two request steps: measure.wsgi_cpu.ThreadMeter, "
    "measure.greencpu, measure.asynccpu), and on a pool's threads between the calls they ran for "
    "requests, any call they ran for no request among it (measure.requestcpu.metered_call): no "
    "request's own, each request's cost to the server.",
    ["pid"],
)
RESPONSE_CHUNKS_TOTAL = Counter(
    "lab_response_chunks",
    "Response body parts this process's requests handed the server so far (a streamed body's chunks; "
    "the lab's own reads among them): the server's cost of writing each, where no Python clock sees "
    "it (granian's Rust threads), is per part.",
    ["pid"],
)
FULL_COLLECTIONS_TOTAL = Counter(
    "lab_full_collections",
    "Full garbage collections (generation 2) this process ran so far (measure.full_collections): each "
    "stops all of its threads, as counted at its requests' ends.",
    ["pid"],
)
FULL_COLLECTIONS_CPU_TOTAL = Counter(
    "lab_full_collections_cpu_seconds",
    "The CPU those collections took, on the threads that ran them (in the requests' or the server's "
    "own figures too: a collection runs where an allocation set it off).",
    ["pid"],
)
KERNEL_ITERATIONS = Counter("lab_kernel_iterations_total", "CPU kernel iterations completed.")


def observe_request(method: str, route: str, status: int, duration_s: float, cpu_s: float) -> None:
    """One answered request, labelled from fixed sets: its method (or "other"), its route
    template (or servertiming's UNMATCHED_ROUTE) and its status."""
    method = method if method in METHODS else OTHER_METHOD
    REQUESTS.labels(method, route, str(status)).inc()
    REQUEST_DURATION.labels(method, route).observe(duration_s)
    REQUEST_CPU.labels(method, route).observe(cpu_s)


class _RequestSeries:
    """What the middleware measured of each request (measure.observers), into the series above;
    at each request's end, the process's full collections since the last (`collections`)."""

    def __init__(self, collections: Callable[[], None]) -> None:
        self.collections = collections

    def started(self) -> None:
        IN_FLIGHT.inc()

    def ended(self) -> None:
        IN_FLIGHT.dec()
        self.collections()

    def answered(self, method: str, route: str, status: int, duration_s: float, cpu_s: float) -> None:
        observe_request(method, route, status, duration_s, cpu_s)


class _ChargedInProcess:
    """This process's series of a counter of charged CPU (by pid), looked up once per process (a
    lookup by label costs as much as the increment)."""

    def __init__(self, counter: Counter) -> None:
        self._counter = counter
        self._series: Counter | None = None
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._series = None

    def __call__(self, seconds: float) -> None:
        if self._series is None:
            self._series = self._counter.labels(str(os.getpid()))
        self._series.inc(seconds)


# Installed where the metrics are first imported: every app's control paths import them.
set_charged_sinks(
    _ChargedInProcess(REQUEST_CPU_TOTAL),
    _ChargedInProcess(CONTROL_CPU_TOTAL),
    _ChargedInProcess(BETWEEN_REQUESTS_CPU_TOTAL),
    paths.CONTROL.values(),
    _ChargedInProcess(RESPONSE_CHUNKS_TOTAL),
)
install_request_sink(
    _RequestSeries(
        full_collections.Published(
            _ChargedInProcess(FULL_COLLECTIONS_TOTAL), _ChargedInProcess(FULL_COLLECTIONS_CPU_TOTAL)
        )
    )
)
full_collections.install()


def counted(result: WorkResult) -> dict[str, object]:
    """The CPU work's response, its iterations counted here (in the request's process, also when
    a pool process ran them)."""
    KERNEL_ITERATIONS.inc(result.iterations)
    return result.as_dict()


def counted_calibration(samples: int) -> dict[str, object]:
    """The /test/calibrate body (workload.kernel.calibration), its iterations counted."""
    body = calibration(samples)
    KERNEL_ITERATIONS.inc(samples)
    return body
