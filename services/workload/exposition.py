"""The /metrics body: every process's request metrics summed, plus what is read at scrape time.

Imports no metric definitions (workload.metrics), so a root process that serves no requests (the
gunicorn arbiter, uvicorn's supervisor) can expose its tree without creating values of its own.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from workload.census import take_census


class CensusCollector(Collector):
    """Process census as gauges, and its cgroup's CPU throttling as counters, taken at scrape time
    from the live process tree."""

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
        throttling = census.cgroup_cpu
        if throttling is None:
            return  # no cgroup CPU controller: no counters, rather than zeros that look measured
        yield CounterMetricFamily(
            "lab_cgroup_cpu_periods",
            "CPU quota enforcement periods in which the server's cgroup ran.",
            value=throttling.periods,
        )
        yield CounterMetricFamily(
            "lab_cgroup_cpu_throttled_periods",
            "Periods in which the server's cgroup used up its CPU quota and was stopped.",
            value=throttling.throttled_periods,
        )
        yield CounterMetricFamily(
            "lab_cgroup_cpu_throttled_seconds",
            "Time the server's cgroup was stopped by its CPU quota.",
            value=throttling.throttled_s,
        )


def exposition(reload: bool) -> tuple[bytes, str]:
    """The /metrics body and its content type."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # unannotated upstream
    registry.register(CensusCollector(reload))
    return generate_latest(registry), CONTENT_TYPE_LATEST
