"""Flask on gunicorn's gevent worker: patched before the app loads, waits that overlap, one process."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
from typing import Any

import httpx
import psutil
import pytest

from labtester.launcher import RunningTarget
from labtester.stats import max_overlap
from tests.conftest import Configured, StartTarget
from tests.services.work import intervals, sent_together

WAIT_MS = 300
CONCURRENCY = 10
# What a process gets when it patches first thing, before importing anything else it runs.
PATCHED_FIRST = """
from gevent import monkey
monkey.patch_all()
import json
import gunicorn.arbiter, gunicorn.workers.ggevent, apps.lab_flask.app, workload.server
import workload.metrics_process
from workload.green import monkey_patch_report
print(json.dumps(monkey_patch_report()))
"""


@pytest.fixture(scope="module")
def gevent(configured: Configured) -> RunningTarget:
    return configured("flask-gevent")


def span(bodies: list[dict[str, Any]]) -> float:
    return max(b["finished_at"] for b in bodies) - min(b["started_at"] for b in bodies)


def overlapped(bodies: list[dict[str, Any]]) -> None:
    """Every one of them waited at once (served in turn, each would start as another ended), so
    together they spanned a fraction of their summed time: bounds a shared machine's stagger of the
    sends does not reach, where served in turn the span is the sum."""
    assert max_overlap(intervals(bodies)) == len(bodies)
    assert span(bodies) < 0.5 * sum(b["duration_s"] for b in bodies)


def test_ten_waits_on_one_gevent_worker_take_one_wait(gevent: RunningTarget) -> None:
    assert httpx.get(f"{gevent.url}/info").json()["workers"] == 1
    elapsed, bodies = sent_together(f"{gevent.url}/test/io-bound/{WAIT_MS}", CONCURRENCY)
    assert len({b["pid"] for b in bodies}) == 1
    overlapped(bodies)
    assert elapsed < CONCURRENCY * WAIT_MS / 1000  # served in turn: ten waits at least


def test_the_same_worker_sync_takes_ten_waits(start: StartTarget) -> None:
    sync = start("flask-gevent", LAB_WORKER_CLASS="sync")
    info = httpx.get(f"{sync.url}/info").json()
    assert info["workers"] == 1 and info["endpoints"]["io-bound"]["execution"] == "workers"
    elapsed, bodies = sent_together(f"{sync.url}/test/io-bound/{WAIT_MS}", CONCURRENCY)
    wait = WAIT_MS / 1000
    assert max_overlap(intervals(bodies)) == 1  # one at a time
    assert span(bodies) >= CONCURRENCY * wait and elapsed >= CONCURRENCY * wait


def test_info_describes_greenlets(gevent: RunningTarget) -> None:
    info = httpx.get(f"{gevent.url}/info").json()
    connections = 100  # LAB_WORKER_CONNECTIONS of the values entry
    for endpoint in info["endpoints"].values():
        assert (endpoint["execution"], endpoint["slots"]) == ("greenlets", info["workers"] * connections)


def test_gunicorn_patches_the_worker_before_the_app_loads(gevent: RunningTarget) -> None:
    report = httpx.get(f"{gevent.url}/info").json()["monkey_patch"]
    assert all(report["patched"][m] for m in ("socket", "time", "select", "ssl", "threading")), report
    # Patching in the worker, after the arbiter imported gunicorn and servers.gunicorn.conf, leaves no
    # copy of an original behind that patching first thing would not leave too.
    first = subprocess.run(
        [sys.executable, "-c", PATCHED_FIRST], capture_output=True, text=True, check=True, timeout=60
    )
    patched_first = json.loads(first.stdout)
    assert set(report["unpatched_references"]) <= set(patched_first["unpatched_references"]), (
        report["unpatched_references"],
        patched_first["unpatched_references"],
    )
    assert "MonkeyPatchWarning" not in gevent.log_path.read_text(errors="replace")


def test_a_worker_forked_after_another_died_is_patched_as_cleanly(start: StartTarget) -> None:
    # child_exit (a worker died) is where the arbiter imports prometheus_client; the worker that
    # replaces the dead one is forked from that arbiter.
    target = start("flask-gevent")
    before = httpx.get(f"{target.url}/info").json()["monkey_patch"]["unpatched_references"]
    pid = worker_pid(target.url)
    psutil.Process(pid).kill()
    # The one worker's replacement answers the next request (the kernel holds it until then).
    assert worker_pid(target.url) != pid
    after = httpx.get(f"{target.url}/info").json()["monkey_patch"]["unpatched_references"]
    assert after == before


def worker_pid(url: str) -> int:
    return int(httpx.get(f"{url}/test/io-bound/0", timeout=60).json()["pid"])


def test_downstream_calls_overlap_through_patched_sockets(gevent: RunningTarget) -> None:
    # httpx's sync client on patched sockets: ten calls of one wait each overlap on one worker.
    _, bodies = sent_together(f"{gevent.url}/test/downstream/{WAIT_MS}", CONCURRENCY)
    assert len({b["pid"] for b in bodies}) == 1
    overlapped(bodies)
    # ... and so did their calls: the downstream's own bodies (queued behind one connection, the
    # requests would still overlap while their calls went one at a time).
    assert max_overlap(intervals([b["downstream"] for b in bodies])) == CONCURRENCY


def test_fan_out_waits_overlap_as_greenlets(gevent: RunningTarget) -> None:
    # The blocking fan-out code (a thread pool of time.sleep waits), patched: greenlets that overlap.
    k = 8
    body = httpx.get(f"{gevent.url}/test/fan-out?k={k}&wait_ms={WAIT_MS}&call_ms=10", timeout=30).json()
    waits = [(step["started_at"], step["finished_at"]) for step in body["steps"] if step["step"] == "wait"]
    assert max_overlap(waits) == k
    # In the worker's one thread: switching greenlets, so no CPU clock was read across them.
    assert body["cpu_s"] == 0.0
    assert httpx.get(f"{gevent.url}/info").json()["endpoints"]["fan-out"]["execution"] == "greenlets"


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def answer_on(connection: socket.socket) -> bytes:
    """One whole response: its head, then as many bytes of body as it announced."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, "the server closed the connection before answering"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(v)
        for k, v in (line.split(b":", 1) for line in head.split(b"\r\n")[1:])
        if k.strip().lower() == b"content-length"
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        assert chunk, "the server closed the connection in its answer"
        body += chunk
    return head


def asked(url: str) -> socket.socket:
    connection = socket.create_connection(address(url), timeout=30)
    connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: lab\r\n\r\n")
    return connection


def answered_after_a_close(url: str, held: int) -> bool:
    """`held` connections kept alive and idle after one answered request each, then one more with a
    request: whether the server closed one of the idle ones before that request was answered."""
    opened: list[socket.socket] = []
    try:
        for _ in range(held):
            opened.append(asked(url))
            assert answer_on(opened[-1]).startswith(b"HTTP/1.1 200")
        idle = list(opened)
        opened.append(late := asked(url))
        closed = False
        while True:
            readable, _, _ = select.select([late, *idle], [], [], 30)
            assert readable, "nothing answered nor closed in 30 s"
            # The idle ones first: a close and the answer it let in may wake one select together.
            for connection in [c for c in readable if c is not late]:
                assert connection.recv(65536) == b"", "an idle connection got bytes"
                closed = True
                idle.remove(connection)
            if late in readable:
                assert answer_on(late).startswith(b"HTTP/1.1 200")
                return closed
    finally:
        for connection in opened:
            connection.close()


def test_a_connection_past_the_workers_count_waits_for_a_kept_alive_one_to_idle_out(
    start: StartTarget,
) -> None:
    # Why sizing searches only gevent configurations that accept every connection a proof's client
    # may hold (labtester.sizing.candidates.holds_the_clients): past worker_connections a new
    # connection is not accepted until a kept-alive one is closed, idle (gunicorn's keepalive), where
    # threads would queue its request behind the others.
    two = start("flask-gevent", LAB_WORKER_CONNECTIONS="2")
    assert httpx.get(f"{two.url}/info").json()["workers"] == 1
    assert answered_after_a_close(two.url, held=2)
    three = start("flask-gevent", LAB_WORKER_CONNECTIONS="3")
    assert not answered_after_a_close(three.url, held=2)
