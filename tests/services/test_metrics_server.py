"""/metrics on its own port, from a process of its own: it answers while the request path is held (a
blocked loop, busy workers), and it lives exactly as long as the server's root."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import LaunchError, RunningTarget, port_in_use, start_target
from tests.conftest import Configured, StartTarget, definition, selected
from tests.services.work import iterations_for
from workload.metrics_process import METRICS_SERVER_MODULE
from workload.metrics_server import MAX_CONNECTIONS, REQUEST_DEADLINE_S

SCRAPE_INTERVAL_S = 0.2
WORK_SECONDS = 1.0  # per request: a burst of them holds the target's request path for seconds
# The longest a scrape may take while the request path is held: a share of the shortest work
# request, as its server measured it. A scrape served on that path waits for a request to end,
# most of a request each time it is sent during one; the metrics process answers in milliseconds.
SCRAPE_SHARE = 0.5
# The metrics port's deadline for the slow client's targets (LAB_METRICS_DEADLINE_S): a trickling
# client is cut as surely after 2 s as after the default's 10, and the scrape sent 0.5 s after it
# still has 1.5 s to be answered before the cut (the metrics process answers in milliseconds).
SLOW_CLIENT_DEADLINE_S = 2.0


@dataclass(frozen=True)
class Scrape:
    at: float  # seconds since the burst was sent
    latency_s: float
    in_flight: float


@dataclass(frozen=True)
class Burst:
    scrapes: list[Scrape]  # every scrape of the metrics port until the work was answered
    health_s: float  # the main port's /healthz, sent once the work was in: how long its path was held
    shortest_work_s: float  # the shortest work request's duration, as the server measured it

    def slow_scrapes(self) -> list[Scrape]:
        return [s for s in self.scrapes if s.latency_s >= SCRAPE_SHARE * self.shortest_work_s]


def scrape(url: str, since: float, client: httpx.Client | None = None) -> Scrape:
    start = time.perf_counter()
    response = (client or httpx).get(url, timeout=10)
    latency = time.perf_counter() - start
    assert response.status_code == 200
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    in_flight = sum(s.value for s in families["lab_http_requests_in_flight"].samples)
    return Scrape(start - since, latency, in_flight)


def scrape_during(target: RunningTarget, work_path: str, count: int) -> Burst:
    """Send `count` work requests at once and scrape the metrics port until all are answered;
    also the main port's /healthz latency meanwhile, which shows the request path was held."""
    assert target.metrics_url is not None
    scrapes: list[Scrape] = []
    # One client made beforehand, as a scraper's is: its set-up is not the server's latency.
    with ThreadPoolExecutor(count + 1) as pool, httpx.Client() as scraper:
        sent = time.perf_counter()
        work = [pool.submit(httpx.get, f"{target.url}{work_path}", timeout=120) for _ in range(count)]
        time.sleep(0.3)  # the work reaches the server first
        health = pool.submit(timed, lambda: httpx.get(f"{target.url}/healthz", timeout=120))
        while not all(future.done() for future in work):
            scrapes.append(scrape(target.metrics_url, sent, scraper))
            time.sleep(SCRAPE_INTERVAL_S)
        assert [future.result().status_code for future in work] == [200] * count
        shortest = min(future.result().json()["duration_s"] for future in work)
        return Burst(scrapes, health.result(), shortest)


def timed(call: Callable[[], httpx.Response]) -> float:
    start = time.perf_counter()
    assert call().status_code == 200
    return time.perf_counter() - start


def test_metrics_port_answers_while_the_fastapi_loop_is_blocked(configured: Configured) -> None:
    target = configured("fastapi")
    iterations = iterations_for(target, WORK_SECONDS)
    burst = scrape_during(target, f"/test/badasync-cpubound/{iterations}", 3)

    # /healthz waited behind the blocked loop for longer than a whole request took.
    assert burst.health_s > burst.shortest_work_s, "the loop was not blocked: this test would prove nothing"
    assert len(burst.scrapes) >= 3
    assert not burst.slow_scrapes(), (burst.shortest_work_s, burst.slow_scrapes())
    # The one event loop runs one blocked handler at a time: in flight is 1 all through the burst
    # (the others wait in the kernel, unread), and 0 once it is over.
    assert max(s.in_flight for s in burst.scrapes) == 1
    assert sum(s.in_flight == 1 for s in burst.scrapes) >= len(burst.scrapes) // 2
    assert scrape(target.metrics_url or "", 0).in_flight == 0


def test_metrics_port_answers_while_every_gunicorn_worker_is_busy(configured: Configured) -> None:
    target = configured("flask-1x")
    workers = httpx.get(f"{target.url}/info").json()["workers"]
    iterations = iterations_for(target, WORK_SECONDS)
    # Two rounds of work and one more: /healthz waits behind both rounds.
    burst = scrape_during(target, f"/test/sync-cpubound/{iterations}", 2 * workers + 1)

    # /healthz waited for a worker for longer than a whole request took.
    assert burst.health_s > burst.shortest_work_s, "the workers were not all busy: it would prove nothing"
    assert not burst.slow_scrapes(), (burst.shortest_work_s, burst.slow_scrapes())
    # Every worker busy: the gauge shows them all, then drops back to 0.
    assert max(s.in_flight for s in burst.scrapes) == workers
    assert scrape(target.metrics_url or "", 0).in_flight == 0


def listeners(target: RunningTarget) -> list[int]:
    """Pids of the server's tree listening on its metrics port."""
    return [
        process.pid
        for process in target.tree()
        for connection in process.net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN and connection.laddr.port == target.metrics_port
    ]


def metrics_process(target: RunningTarget) -> psutil.Process:
    """The census's one process with role "metrics"."""
    census = httpx.get(f"{target.url}/test/resmon", timeout=30).json()
    (pid,) = [p["pid"] for p in census["processes"] if p["role"] == "metrics"]
    return psutil.Process(pid)


@pytest.mark.parametrize("name", ["fastapi", "flask-2x", "fastapi-2workers", "fastapi-reload"])
def test_only_the_metrics_process_listens_on_the_metrics_port(configured: Configured, name: str) -> None:
    target = configured(name)
    info = httpx.get(f"{target.url}/info").json()
    assert info["control"]["metrics_port"] == target.metrics_port
    metrics = metrics_process(target)
    # One listener, the root's child of its own: not the root, not a worker, nothing the root
    # forked or spawned later (it closed its copy of the socket before starting the server).
    assert listeners(target) == [metrics.pid]
    assert metrics.ppid() == target.process.pid
    assert metrics.cmdline()[1:3] == ["-m", METRICS_SERVER_MODULE]
    # The same exposition as the main port's: the census of the whole tree, by role.
    families = {f.name: f for f in text_string_to_metric_families(httpx.get(target.metrics_url or "").text)}
    roles = {s.labels["role"]: s.value for s in families["lab_server_processes"].samples}
    assert roles["metrics"] == 1
    assert ("worker" in roles) == (info["workers"] > 1 or info["reload"])
    assert httpx.get(f"http://127.0.0.1:{target.metrics_port}/other").status_code == 404


# The tests that end their target's root, each run with a target of its own.
ENDING_ROOTS = [
    "test_the_metrics_process_goes_with_a_killed_root",
    "test_a_clean_stop_stops_the_metrics_process",
]


@pytest.fixture(scope="module")
def own(request: pytest.FixtureRequest, start: StartTarget) -> dict[tuple[str, str], RunningTarget]:
    """A target of its own for each run of the tests that end its root, all started together."""
    runs = [(test, name) for test in ENDING_ROOTS for name in selected(request, "name", test)]
    return dict(zip(runs, start.together([name for _, name in runs]), strict=True))


@pytest.mark.parametrize("name", ["fastapi", "flask-1x"])
def test_the_metrics_process_goes_with_a_killed_root(
    own: dict[tuple[str, str], RunningTarget], name: str
) -> None:
    target = own["test_the_metrics_process_goes_with_a_killed_root", name]
    try:
        metrics = metrics_process(target)
        target.process.kill()  # SIGKILL: no shutdown code runs in the root
        target.process.wait(timeout=10)
        _, alive = psutil.wait_procs([metrics], timeout=10)
        assert alive == [], "the metrics process outlived its root: an orphan holding the port"
        assert target.metrics_port is not None and not port_in_use(target.metrics_port)
    finally:
        target.stop(grace_s=1)


@pytest.mark.parametrize("name", ["fastapi", "flask-1x"])
def test_a_clean_stop_stops_the_metrics_process(own: dict[tuple[str, str], RunningTarget], name: str) -> None:
    target = own["test_a_clean_stop_stops_the_metrics_process", name]
    try:
        metrics = metrics_process(target)
        metrics_dir = Path(metrics.environ()["PROMETHEUS_MULTIPROC_DIR"])
        target.process.send_signal(signal.SIGTERM)
        # The root exited by itself, not by the signal's default action, through its shutdown
        # code: that stops the metrics process first, then removes the metrics directory.
        assert target.process.wait(timeout=30) >= 0
        assert not metrics_dir.exists()
        _, alive = psutil.wait_procs([metrics], timeout=10)
        assert alive == []
        assert target.metrics_port is not None and not port_in_use(target.metrics_port)
    finally:
        target.stop(grace_s=1)


@pytest.mark.parametrize("name", ["fastapi", "flask-1x"])
def test_a_taken_metrics_port_ends_the_start_with_a_message(name: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(LaunchError, match=f"LAB_METRICS_PORT={port}: cannot listen"):
            start_target(definition(name), extra_env={"LAB_METRICS_PORT": str(port)}, ready_timeout_s=30)


class Trickler:
    """A client that sends a request's head a byte at a time and never ends it: it records
    whether, and when, the server shut its connection."""

    def __init__(self, port: int, give_up_s: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        self.connected_at = time.monotonic()
        self.give_up_s = give_up_s
        self.cut_at: float | None = None
        self.ended_at: float | None = None

    def run(self) -> None:
        deadline = time.monotonic() + self.give_up_s
        try:
            while time.monotonic() < deadline:
                self.sock.sendall(b"X")
                time.sleep(0.1)
                self.sock.setblocking(False)
                try:
                    if self.sock.recv(1024) == b"":
                        self.cut_at = time.monotonic()
                        return
                except BlockingIOError:
                    pass
                finally:
                    self.sock.setblocking(True)
        except OSError:
            self.cut_at = time.monotonic()
        finally:
            self.ended_at = time.monotonic()
            self.sock.close()


@pytest.fixture(scope="module")
def short_deadline(start: StartTarget) -> dict[str, RunningTarget]:
    """fastapi and flask-1x with the slow client's deadline (their own: the session's have the
    default), started together."""
    names = ["fastapi", "flask-1x"]
    targets = start.together(names, LAB_METRICS_DEADLINE_S=str(SLOW_CLIENT_DEADLINE_S))
    return dict(zip(names, targets, strict=True))


@pytest.mark.parametrize("name", ["fastapi", "flask-1x"])
def test_a_slow_client_neither_holds_a_scrape_nor_its_connection(
    short_deadline: dict[str, RunningTarget], name: str
) -> None:
    assert SLOW_CLIENT_DEADLINE_S < REQUEST_DEADLINE_S, "the default's deadline would cut it all the same"
    target = short_deadline[name]
    assert target.metrics_url is not None and target.metrics_port is not None
    slow = Trickler(target.metrics_port, give_up_s=3 * SLOW_CLIENT_DEADLINE_S)
    with ThreadPoolExecutor(1) as pool:
        trickling = pool.submit(slow.run)
        time.sleep(0.5)  # the slow client is taken first and keeps sending
        response = httpx.get(target.metrics_url, timeout=60)
        answered_at = time.monotonic()
        trickling.result()
    assert response.status_code == 200 and "lab_http_requests_in_flight" in response.text
    # Answered beside the slow client, while it still sent; and the slow client was cut off by
    # the server's deadline, the one its settings gave, before it gave up by itself.
    assert slow.cut_at is not None, "the server let a trickling client hold its connection"
    assert answered_at < slow.cut_at
    assert slow.cut_at - slow.connected_at >= SLOW_CLIENT_DEADLINE_S


def test_connections_beyond_the_bound_get_503_at_once_and_scrapes_resume(configured: Configured) -> None:
    target = configured("fastapi")
    assert target.metrics_url is not None
    held = [socket.create_connection(("127.0.0.1", target.metrics_port or 0)) for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in held:
            sock.sendall(b"GET /metrics HTTP/1.1\r\n")  # a head never finished
        time.sleep(0.5)
        assert httpx.get(target.metrics_url, timeout=30).status_code == 503
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 30
    while (status := httpx.get(target.metrics_url, timeout=30).status_code) == 503:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert status == 200
