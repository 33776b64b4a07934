"""How each server runs simultaneous requests: the shapes the lab exists to show."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from labtester.launcher import RunningTarget
from labtester.stats import max_overlap
from tests.conftest import Configured
from tests.services.work import in_flight, intervals, iterations_for, simultaneous

WORK_SECONDS = 0.4


@pytest.fixture(scope="module")
def fastapi(configured: Configured) -> RunningTarget:
    return configured("fastapi")


@pytest.fixture(scope="module")
def flask_1x(configured: Configured) -> RunningTarget:
    return configured("flask-1x")


def test_uvicorn_runs_blocking_cpu_requests_one_at_a_time(fastapi: RunningTarget) -> None:
    iterations = iterations_for(fastapi, WORK_SECONDS)
    bodies = simultaneous(f"{fastapi.url}/test/sync-cpubound/{iterations}", 3)
    assert max_overlap(intervals(bodies)) == 1


def test_gunicorn_with_two_workers_runs_two_at_once(flask_1x: RunningTarget) -> None:
    workers = httpx.get(f"{flask_1x.url}/info").json()["workers"]
    assert workers >= 2, "this test needs a machine with at least 2 effective cores"
    iterations = iterations_for(flask_1x, WORK_SECONDS)
    bodies = simultaneous(f"{flask_1x.url}/test/sync-cpubound/{iterations}", 3)
    assert max_overlap(intervals(bodies)) >= 2
    assert len({b["pid"] for b in bodies}) >= 2


def healthz_latency_during(target: RunningTarget, work_url: str) -> float:
    """Seconds /healthz takes while `work_url` is being served: sent once the work is in the app
    (read on the metrics port, not guessed with a sleep a busy machine can outlast), on a
    connection opened before, so its time is the server's."""
    with ThreadPoolExecutor(1) as pool, httpx.Client(timeout=60) as client, httpx.Client() as metrics:
        assert client.get(f"{target.url}/healthz").status_code == 200
        deadline = time.monotonic() + 30
        while in_flight(target.metrics_url, metrics) > 0:  # that /healthz counted until after its answer
            assert time.monotonic() < deadline, "a request stayed in the app"
            time.sleep(0.01)
        work = pool.submit(httpx.get, work_url, timeout=60)
        while in_flight(target.metrics_url, metrics) < 1 and not work.done():
            assert time.monotonic() < deadline, "the work request never reached the app"
            time.sleep(0.01)
        start = time.perf_counter()
        assert client.get(f"{target.url}/healthz").status_code == 200
        latency = time.perf_counter() - start
        assert work.result().status_code == 200
    return latency


def test_offload_keeps_the_event_loop_free(fastapi: RunningTarget) -> None:
    iterations = iterations_for(fastapi, 1.5)
    latency = healthz_latency_during(fastapi, f"{fastapi.url}/test/offload-cpubound/{iterations}")
    assert latency < 0.5


def test_blocking_io_on_fastapi_delays_healthz(fastapi: RunningTarget) -> None:
    latency = healthz_latency_during(fastapi, f"{fastapi.url}/test/badasync-io-bound/1500")
    assert latency > 1.0  # waited for the rest of the blocking sleep


def test_async_io_on_fastapi_does_not_delay_healthz(fastapi: RunningTarget) -> None:
    latency = healthz_latency_during(fastapi, f"{fastapi.url}/test/io-bound/1500")
    assert latency < 0.5
