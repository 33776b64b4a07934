"""What granian does that the shared suites do not see: its settings, what its backpressure
counts, its blocking threads. Collected with the rest of `make test` (a family's tests live in
its folder); every server is real, on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from labtester.launcher import RunningTarget, start_target
from labtester.stats import max_overlap
from labtester.targets import TargetDefinition, load_definitions

GRANIAN = {d.name: d for d in load_definitions() if d.server == "granian"}


def wsgi() -> TargetDefinition:
    (definition,) = [d for d in GRANIAN.values() if d.app == "lab_flask"]
    return definition


@pytest.fixture
def started() -> Iterator[list[RunningTarget]]:
    targets: list[RunningTarget] = []
    yield targets
    for target in targets:
        target.stop(grace_s=1)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"LAB_WORKER_CLASS": "gthread"}, "LAB_WORKER_CLASS=gthread"),
        ({"LAB_RELOAD": "true"}, "LAB_RELOAD"),
        ({"LAB_THREADS": "4"}, "LAB_THREADS=4"),
    ],
)
def test_settings_of_the_other_servers_are_refused_with_a_message(env: dict[str, str], named: str) -> None:
    environment = {**os.environ, "LAB_PORT": "1", "LAB_SERVER": "granian", **env}
    run = subprocess.run(
        [sys.executable, "-m", "serve", "lab_fastapi"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0 and named in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_backpressure_counts_connections_not_requests(started: list[RunningTarget]) -> None:
    """granian takes a permit when it accepts a connection and gives it back when the connection
    closes (src/workers.rs): an idle keep-alive connection holds a slot as a running request
    does. /info states it as connections a worker admits (admits_per_worker)."""
    target = start_target(wsgi(), extra_env={"LAB_WORKERS": "1", "LAB_THREADS": "2", "LAB_BACKPRESSURE": "2"})
    started.append(target)
    info = httpx.get(f"{target.url}/info").json()
    assert (info["admits_per_worker"], info["endpoints"]["io-bound"]["slots"]) == (2, 2)
    idle = [socket.create_connection(("127.0.0.1", target.port)) for _ in range(2)]
    try:
        time.sleep(0.3)  # both accepted: the worker's two permits are taken, by no request
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(f"{target.url}/healthz", timeout=1.5)
        idle.pop().close()  # one permit back: the next connection is accepted and answered
        assert httpx.get(f"{target.url}/healthz", timeout=10).status_code == 200
    finally:
        for connection in idle:
            connection.close()


def test_a_wsgi_worker_runs_as_many_requests_as_it_has_blocking_threads(started: list[RunningTarget]) -> None:
    target = start_target(wsgi(), extra_env={"LAB_WORKERS": "1", "LAB_THREADS": "3"})
    started.append(target)
    assert httpx.get(f"{target.url}/info").json()["endpoints"]["io-bound"]["slots"] == 3
    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(lambda _: httpx.get(f"{target.url}/test/io-bound/400", timeout=30), range(4)))
    bodies = [reply.json() for reply in replies]
    assert max_overlap([(b["started_at"], b["finished_at"]) for b in bodies]) == 3
