"""Prometheus metrics shared by every target, aggregated across processes.

Every target runs prometheus_client in multiprocess mode (the entrypoint sets
PROMETHEUS_MULTIPROC_DIR before anything imports prometheus_client), so gunicorn's and uvicorn's
workers all count into one exposition. Metric names and labels are a contract: the Grafana
dashboard and the tester's scrape read them.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from workload.census import take_census

UNMATCHED_ROUTE = "<unmatched>"  # raw paths would make label cardinality unbounded
# From milliseconds to a minute: request times here range from a health check to long CPU work.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

REQUESTS = Counter("lab_http_requests_total", "HTTP requests answered.", ["method", "route", "status"])
REQUEST_DURATION = Histogram(
    "lab_http_request_duration_seconds",
    "Time from request received to response ready.",
    ["method", "route"],
    buckets=DURATION_BUCKETS,
)
IN_FLIGHT = Gauge(
    "lab_http_requests_in_flight", "Requests being handled right now.", multiprocess_mode="livesum"
)
KERNEL_ITERATIONS = Counter("lab_kernel_iterations_total", "CPU kernel iterations completed.")


def observe_request(method: str, route: str, status: int, duration_s: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    REQUEST_DURATION.labels(method, route).observe(duration_s)


class CensusCollector(Collector):
    """Process census as gauges, taken at scrape time from the live process tree."""

    def __init__(self, reload: bool) -> None:
        self.reload = reload

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        census = take_census(self.reload)
        processes = GaugeMetricFamily(
            "lab_server_processes", "Processes in the server's tree by role.", labels=["role"]
        )
        for role in sorted({p.role for p in census.processes}):
            processes.add_metric([role], sum(1 for p in census.processes if p.role == role))
        yield processes
        yield GaugeMetricFamily(
            "lab_server_threads", "Threads in the server's tree.", value=census.thread_count
        )
        yield GaugeMetricFamily(
            "lab_server_resident_memory_bytes",
            "Resident memory of the server's tree.",
            value=census.rss_bytes,
        )
        # A counter: rate() copes with the drop when a worker exits and takes its CPU time along.
        yield CounterMetricFamily(
            "lab_server_cpu_seconds",
            "CPU time (user + system) of the server's live processes.",
            value=census.cpu_seconds,
        )


def exposition(reload: bool) -> tuple[bytes, str]:
    """The /metrics body: every process's samples summed, plus the live census."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(CensusCollector(reload))
    return generate_latest(registry), CONTENT_TYPE_LATEST
