"""Bursts against real servers on 127.0.0.1: a tight release, failures by type, and a neighbour
that takes a core named as interference, never blamed on the server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from labtester.info import TargetInfo
from labtester.launcher import RunningTarget
from labtester.model import capacity
from labtester.scenarios.bursts.analyse import burst_run
from labtester.scenarios.bursts.measure import fire
from labtester.scenarios.bursts.release import release
from tests.conftest import Configured

HOG = "while True:\n    pass\n"
WAIT_MS = 300


def info_of(target: RunningTarget) -> TargetInfo:
    return TargetInfo.model_validate(httpx.get(f"{target.url}/info").json())


@pytest.fixture(scope="module")
def flask_1x(configured: Configured) -> RunningTarget:
    return configured("flask-1x")


def test_a_queued_request_starts_as_soon_as_a_sync_worker_frees(flask_1x: RunningTarget) -> None:
    # 3 waits on 2 sync workers. gunicorn's worker lingers up to 2 s for the client to close
    # before it takes its next connection: the client closes each connection when its reply is in.
    asyncio.run(release(f"{flask_1x.url}/test/io-bound/1", 3, 30))  # warm up the workers
    _, replies = asyncio.run(release(f"{flask_1x.url}/test/io-bound/{WAIT_MS}", 3, 30))
    bodies = sorted((r.body for r in replies if r.body), key=lambda b: b["started_at"])
    assert len(bodies) == 3 and len({b["pid"] for b in bodies}) == 2
    first_finish = min(b["finished_at"] for b in bodies[:2])
    assert bodies[2]["started_at"] - first_finish < WAIT_MS / 1000  # not a 2 s linger later


def test_failures_come_back_by_type(flask_1x: RunningTarget) -> None:
    _, replies = asyncio.run(release(f"{flask_1x.url}/test/io-bound/nonsense", 2, 30))
    assert [r.error for r in replies] == ["HTTP 422", "HTTP 422"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]  # bound, never listening: nothing answers there
        _, refused = asyncio.run(release(f"http://127.0.0.1:{closed_port}/x", 2, 5))
    assert [r.error for r in refused] == ["connection refused"] * 2


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """Another process burning a whole core, as a build or a second lab would."""
    hog = subprocess.Popen([sys.executable, "-c", HOG])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def test_a_neighbour_taking_a_core_is_named_as_interference(configured: Configured, cpu_hog: None) -> None:
    # 4 workers on 2 cores, 4 requests: they want both cores, and the hog takes a share of them.
    target = configured("flask-2x")
    info = info_of(target)
    endpoint = info.endpoints["sync-cpubound"]
    iterations = max(
        1, round(0.4 / httpx.get(f"{target.url}/test/calibrate?samples=5").json()["seconds_per_iteration"])
    )
    url = endpoint.url(target.url, iterations)
    with httpx.Client(timeout=60) as control:
        fire(control, endpoint.url(target.url, 1), 4, target.url + info.control.census, 60, False)  # warm up
        records = [fire(control, url, 4, target.url + info.control.census, 60, False) for _ in range(3)]
    runs = [
        burst_run({**r, "repeat": 0, "phase": "burst"}, endpoint, capacity(endpoint, info), None)
        for r in records
    ]
    assert all(r.verdict != "failed" for r in runs)
    # The requests got less CPU than sharing two cores allows, and the machine says who took it.
    hit = [r for r in runs if r.verdict == "interference"]
    assert hit, [(r.ratio, r.accounting) for r in runs]
    assert all(
        r.cause == "other processes" for r in hit if r.accounting and (r.accounting.steal_s or 0) < 0.1
    )
    assert not any(r.verdict == "departs" for r in runs)
