"""A stopped server leaves nothing behind: no process of its tree, no open port."""

from __future__ import annotations

import signal

import httpx
import psutil

from labtester.launcher import RunningTarget, port_in_use, start_target
from tests.conftest import definition


def assert_sigterm_leaves_nothing(target: RunningTarget) -> None:
    """SIGTERM only, no SIGKILL: the server's own shutdown must take its whole tree with it."""
    tree = target.tree()
    target.process.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=15)
    assert alive == []
    assert not port_in_use(target.port)
    assert target.metrics_port is not None and not port_in_use(target.metrics_port)


def test_sigterm_stops_the_whole_fastapi_tree_including_the_pool() -> None:
    target = start_target(definition("fastapi"))
    try:
        assert httpx.get(f"{target.url}/test/offload-cpubound/2", timeout=30).status_code == 200
        assert any(p["role"] == "pool" for p in httpx.get(f"{target.url}/test/resmon").json()["processes"])
        assert_sigterm_leaves_nothing(target)
    finally:
        target.stop(grace_s=1)


def test_sigterm_stops_every_gunicorn_worker() -> None:
    target = start_target(definition("flask-2x"))
    try:
        assert len(target.tree()) >= 3
        assert_sigterm_leaves_nothing(target)
    finally:
        target.stop(grace_s=1)
