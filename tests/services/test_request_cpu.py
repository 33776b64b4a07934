"""The CPU middleware on the lab's own targets: each response's Server-Timing cpu agrees with the
CPU its endpoint measured for itself (cpu_s) within 5 %, also when requests interleave on one
event loop, one gevent worker or one gthread worker."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
from tests.conftest import Configured
from tests.services.servertiming import TIMER_TICK_S, Reply, agrees, burst, fetch
from tests.services.work import iterations_for_cpu

CPU_S = 0.15
MIXED = "/test/mixed?cpu_ms=150&io_ms=200&splits=4"
WAIT_MS = 200


def warm(target: RunningTarget, *paths: str) -> None:
    """First requests pay a process's one-time costs (imports, pools): not what is compared."""
    for path in paths:
        assert httpx.get(f"{target.url}{path}", timeout=60).status_code == 200


def assert_each_agrees(replies: list[Reply]) -> None:
    for reply in replies:
        assert agrees(reply.timing.cpu_s, reply.body["cpu_s"]), (reply.timing, reply.body)
        assert reply.timing.app_s >= reply.body["duration_s"], (reply.timing, reply.body)
        assert reply.timing.started_at <= reply.body["started_at"]


def assert_waits_use_little(replies: list[Reply]) -> None:
    for reply in replies:
        assert reply.timing.app_s >= WAIT_MS / 1000 - TIMER_TICK_S, reply.timing
        assert reply.timing.cpu_s < 0.05 * WAIT_MS / 1000, reply.timing


@pytest.fixture(scope="module")
def fastapi(configured: Configured) -> RunningTarget:
    target = configured("fastapi")
    warm(target, MIXED, "/test/io-bound/1", "/test/thread-cpubound/1", "/test/offload-cpubound/1")
    return target


def test_interleaved_requests_on_one_event_loop(fastapi: RunningTarget) -> None:
    iterations = iterations_for_cpu(fastapi, "sync-cpubound", CPU_S)
    work = [MIXED] * 4 + [f"/test/sync-cpubound/{iterations}"] * 2 + [f"/test/badasync-cpubound/{iterations}"]
    replies = burst([f"{fastapi.url}{path}" for path in [*work, *[f"/test/io-bound/{WAIT_MS}"] * 3]])
    assert len({reply.timing.pid for reply in replies}) == 1  # one loop served them all
    assert_each_agrees(replies[: len(work)])
    assert_waits_use_little(replies[len(work) :])
    # Interleaved: the loop ran other requests' steps while each mixed request waited.
    span = max(r.body["finished_at"] for r in replies) - min(r.body["started_at"] for r in replies)
    assert span < sum(reply.body["duration_s"] for reply in replies[:4])


def test_thread_pool_and_offloaded_work(fastapi: RunningTarget) -> None:
    iterations = iterations_for_cpu(fastapi, "sync-cpubound", CPU_S)
    threads = [f"{fastapi.url}/test/thread-cpubound/{iterations}"] * 3
    offloaded = [f"{fastapi.url}/test/offload-cpubound/{iterations}"] * 2
    replies = burst(threads + offloaded)
    assert_each_agrees(replies)
    for reply in replies[len(threads) :]:
        assert reply.body["pid"] != reply.timing.pid  # the pool process's CPU, counted to the request


@pytest.mark.parametrize("name", ["flask-gevent", "flask-gthread", "flask-1x"])
def test_mixed_requests_on_each_gunicorn_worker_class(configured: Configured, name: str) -> None:
    target = configured(name)
    warm(target, MIXED, "/test/io-bound/1")
    iterations = iterations_for_cpu(target, "sync-cpubound", CPU_S)
    work = [MIXED] * 4 + [f"/test/sync-cpubound/{iterations}"] * 2
    replies = burst([f"{target.url}{path}" for path in [*work, *[f"/test/io-bound/{WAIT_MS}"] * 2]])
    assert_each_agrees(replies[: len(work)])
    assert_waits_use_little(replies[len(work) :])
    for reply in replies:
        assert reply.timing.pid == reply.body["pid"]


def route_cpu(url: str, route: str) -> dict[str, float]:
    """The route's CPU histogram's count and sum, as /metrics says now (0 before its first request)."""
    families = text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=30).text)
    samples = {
        sample.name: sample.value
        for family in families
        if family.name == "lab_http_request_cpu_seconds"
        for sample in family.samples
        if sample.labels.get("route") == route and "le" not in sample.labels
    }
    return {name: samples.get(f"lab_http_request_cpu_seconds_{name}", 0.0) for name in ("count", "sum")}


def test_metrics_hold_the_same_cpu(configured: Configured) -> None:
    # The shared target: what the other tests sent before is read first and taken away.
    target = configured("flask-gthread")
    iterations = iterations_for_cpu(target, "sync-cpubound", CPU_S)
    route = "/test/sync-cpubound/{iterations}"
    before = route_cpu(target.url, route)
    replies = [fetch(f"{target.url}/test/sync-cpubound/{iterations}") for _ in range(3)]
    after = route_cpu(target.url, route)
    assert after["count"] - before["count"] == len(replies)
    # The same figures as the headers, which round them to the microsecond.
    headers = sum(reply.timing.cpu_s for reply in replies)
    assert abs(after["sum"] - before["sum"] - headers) <= 1e-6 * len(replies)
