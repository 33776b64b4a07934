"""A request's time on a run queue (`lab-queue` in its Server-Timing): on a machine whose core the
server shares with another busy process, a CPU path's app time is its CPU plus its wait for the
core, and `lab-queue` names that wait, so the tester's "wait" (app less CPU less queue) stays the
path's own (near zero for a CPU path), as the sizing model needs it. Real servers on 127.0.0.1,
pinned with a busy loop to one core."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from labtester.launcher import RunningTarget
from labtester.servertiming import ServerTiming, parse
from tests.services.apps import BARE_MODULE, bare_app_dir, configurations, serve_app

CPU_MS = 60
PATHS = [f"/cpu?ms={CPU_MS}", "/wait?ms=100"]
CASES = [
    pytest.param((interface, name), id=name)
    for interface, name in (("wsgi", "sync-1x"), ("wsgi", "gthread"), ("asgi", "uvicorn"))
]
CORE = 0  # the one core the server and the busy loop share


def pin(pid: int) -> None:
    """Every thread of the process onto CORE (a thread's affinity is its own)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.sched_setaffinity(int(task.name), {CORE})


@pytest.fixture(scope="module", params=CASES)
def crowded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningTarget]:
    """The server on one core beside a busy loop that wants all of it."""
    if CORE not in os.sched_getaffinity(0):
        pytest.skip(f"core {CORE} is not this process's")
    interface, name = request.param
    configuration: dict[str, Any] = next(c for c in configurations(interface) if c["name"] == name)
    app_dir = bare_app_dir(tmp_path_factory.mktemp("bare-app"))
    target = serve_app(f"{BARE_MODULE}:{interface}", configuration, PATHS, pythonpath=app_dir)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for process in target.tree():
            pin(process.pid)
        pin(busy.pid)
        for path in PATHS:  # each process's first requests pay its one-time costs
            httpx.get(f"{target.url}{path}", timeout=60)
        yield target
    finally:
        busy.kill()
        busy.wait()
        target.stop()


def timing(url: str) -> ServerTiming:
    response = httpx.get(url, timeout=60)
    assert response.status_code == 200
    return parse(response.headers.get_list("server-timing"))


def test_a_cpu_paths_wait_for_the_core_is_its_queue_not_its_wait(crowded: RunningTarget) -> None:
    replies = [timing(f"{crowded.url}{PATHS[0]}") for _ in range(3)]
    for reply in replies:
        assert reply.cpu_s is not None and reply.app_s is not None and reply.queued_s is not None, reply
        delayed = reply.app_s - reply.cpu_s
        # Sharing its core with a busy loop, the request waited for it a good part of its CPU time...
        assert delayed > 0.3 * reply.cpu_s, reply
        # ...and the queue holds most of that, so what is left as its "wait" is small beside its CPU.
        assert reply.queued_s > 0.7 * delayed, reply
        assert delayed - reply.queued_s < 0.25 * reply.cpu_s, reply


def test_a_waiting_paths_wait_stays_its_own(crowded: RunningTarget) -> None:
    reply = timing(f"{crowded.url}{PATHS[1]}")
    assert reply.cpu_s is not None and reply.app_s is not None and reply.queued_s is not None, reply
    assert reply.app_s - reply.cpu_s - reply.queued_s > 0.9 * 0.1, reply  # its 100 ms sleep
