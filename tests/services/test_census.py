"""Process census: how many processes each server configuration really runs."""

from __future__ import annotations

import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Configured, StartTarget
from tests.services.conftest import QuotaCgroup
from tests.services.work import in_flight
from workload.census import descendants
from workload.cores import cgroup_cpu_stat


def roles(url: str) -> Counter[str]:
    """Processes by role, less the metrics process every launched target has (LAB_METRICS_PORT):
    exactly one, never a worker (tests/services/test_metrics_server.py looks at it)."""
    census = httpx.get(f"{url}/test/resmon", timeout=30).json()
    assert census["process_count"] == len(census["processes"])
    counts = Counter(p["role"] for p in census["processes"])
    assert counts.pop("metrics") == 1
    return counts


def test_the_tree_walk_finds_children_and_grandchildren() -> None:
    # sh -> (sleep, sh -> sleep): three processes below the first, on two levels.
    shell = subprocess.Popen(["sh", "-c", "sleep 60 & sh -c 'sleep 60 & wait' & wait"])
    try:
        deadline = time.monotonic() + 10
        while len(expected := psutil.Process(shell.pid).children(recursive=True)) < 3:
            assert time.monotonic() < deadline, expected
            time.sleep(0.05)
        found = descendants(shell.pid)
        assert sorted(found) == sorted(p.pid for p in expected)
        children = {p.pid for p in psutil.Process(shell.pid).children()}
        assert len(children) == 2 and set(found[:2]) == children  # children first, then theirs
    finally:
        for process in psutil.Process(shell.pid).children(recursive=True):
            process.kill()
        shell.kill()
        shell.wait()


def test_uvicorn_one_worker_is_one_process(start: StartTarget) -> None:
    # Its own: a shared one's offload work would have added its pool.
    assert roles(start("fastapi").url) == {"master": 1}


def test_gunicorn_is_workers_plus_arbiter(configured: Configured) -> None:
    for name in ("flask-1x", "flask-2x"):
        target = configured(name)
        workers = httpx.get(f"{target.url}/info").json()["workers"]
        assert roles(target.url) == {"master": 1, "worker": workers}


def test_flask_workers_follow_the_multiplier_and_explicit_cores(start: StartTarget) -> None:
    target = start("flask-2x", LAB_CPU_CORES="3")
    info = httpx.get(f"{target.url}/info").json()
    assert (info["effective_cores"], info["cores_source"], info["workers"]) == (3, "setting", 6)
    assert roles(target.url)["worker"] == 6


class _HeldAnswer(BaseHTTPRequestHandler):
    server: HeldDownstream

    def do_GET(self) -> None:
        self.server.released.wait(60)
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class HeldDownstream(ThreadingHTTPServer):
    """A downstream whose every answer waits until `released` is set: the calls made to it, and
    the requests that made them, are held for exactly as long as a test needs them in flight."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HeldAnswer)
        self.released = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def held_downstream() -> Iterator[HeldDownstream]:
    with HeldDownstream() as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield server
        finally:
            server.released.set()
            server.shutdown()


def test_gevent_workers_are_one_process_each_whatever_their_concurrency(
    start: StartTarget, held_downstream: HeldDownstream
) -> None:
    target = start(
        "flask-gevent", LAB_WORKERS="2", LAB_WORKER_CONNECTIONS="50", LAB_DOWNSTREAM_URL=held_downstream.url
    )
    assert roles(target.url) == {"master": 1, "worker": 2}
    with ThreadPoolExecutor(40) as pool:
        # Each request waits on its call downstream until all 40 are in flight together (on a
        # loaded machine 40 client threads take seconds to connect), then they are released.
        waits = [pool.submit(httpx.get, f"{target.url}/test/downstream/1", timeout=60) for _ in range(40)]
        deadline = time.monotonic() + 30
        while in_flight(f"{target.url}/metrics") < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
        # 40 requests at once on two processes, and the census answered beside them.
        assert in_flight(f"{target.url}/metrics") >= 40
        assert roles(target.url) == {"master": 1, "worker": 2}
        held_downstream.released.set()
        assert all(w.result().status_code == 200 for w in waits)


# uvicorn starts its reload and multi-worker children with multiprocessing's spawn, which also
# starts multiprocessing's resource tracker: a real process of the tree, counted as a helper.


def test_reload_shows_the_reloader(configured: Configured) -> None:
    assert roles(configured("fastapi-reload").url) == {"reloader": 1, "worker": 1, "helper": 1}


def test_uvicorn_two_workers_is_a_supervisor_and_two_workers(configured: Configured) -> None:
    assert roles(configured("fastapi-2workers").url) == {"master": 1, "worker": 2, "helper": 1}


def test_offload_pool_appears_under_load(configured: Configured) -> None:
    target = configured("fastapi")
    assert httpx.get(f"{target.url}/test/offload-cpubound/2", timeout=30).status_code == 200
    seen = roles(target.url)
    assert seen["master"] == 1 and seen["pool"] >= 1


def census_and_metrics(url: str) -> tuple[dict[str, Any] | None, dict[str, float]]:
    throttling = httpx.get(f"{url}/test/resmon", timeout=30).json()["cgroup_cpu"]
    counters = {
        sample.name: sample.value
        for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=30).text)
        if family.name.startswith("lab_cgroup_cpu_")
        for sample in family.samples
    }
    return throttling, counters


def test_census_reads_the_servers_own_cgroup(configured: Configured) -> None:
    target = configured("fastapi")
    before = cgroup_cpu_stat()  # the server is this process's child: the same cgroup
    throttling, counters = census_and_metrics(target.url)
    after = cgroup_cpu_stat()
    if before is None:
        assert throttling is None and counters == {}
        return
    assert after is not None and throttling is not None
    assert throttling["source"] == before.source
    for field in ("periods", "throttled_periods", "throttled_s"):
        assert getattr(before, field) <= throttling[field] <= getattr(after, field), field
    assert counters.keys() == {
        "lab_cgroup_cpu_periods_total",
        "lab_cgroup_cpu_throttled_periods_total",
        "lab_cgroup_cpu_throttled_seconds_total",
    }


def test_a_cpu_quota_shows_as_throttling(start: StartTarget, quota_cgroup: QuotaCgroup) -> None:
    target = start("flask-1x", LAB_WORKERS="1")
    quota_cgroup.move(target.tree())
    before, _ = census_and_metrics(target.url)
    assert before is not None and before["source"] == quota_cgroup.source
    work = httpx.get(f"{target.url}/test/mixed?cpu_ms=300&io_ms=0", timeout=60).json()
    after, counters = census_and_metrics(target.url)
    assert after is not None

    # 300 ms of CPU at 0.2 CPU: stopped in most of the periods it ran in, for most of the time.
    assert after["throttled_periods"] - before["throttled_periods"] >= 5
    assert after["throttled_s"] - before["throttled_s"] > 0.5 * work["cpu_s"]
    # Read just after the census: the same counter, which only the throttling since can have raised.
    assert counters["lab_cgroup_cpu_throttled_periods_total"] >= after["throttled_periods"]
    # The request's own CPU clock does not count the time its cgroup was stopped.
    assert work["duration_s"] > 2 * work["cpu_s"]
