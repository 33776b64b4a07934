"""A stopped server leaves nothing behind: no process of its tree, no open port. Every target of
the chart's values, whatever its family: its own shutdown must take its whole tree with it."""

from __future__ import annotations

import signal

import httpx
import psutil
import pytest

from labtester.launcher import RunningTarget, port_in_use
from tests.conftest import MEASURED, StartTarget, selected

# The endpoints that start more processes than the idle tree has (a pool, its resource tracker).
POOLED = ("offload-cpubound", "thread-cpubound")


def assert_sigterm_leaves_nothing(target: RunningTarget) -> None:
    """SIGTERM only, no SIGKILL: the server's own shutdown must take its whole tree with it."""
    tree = target.tree()
    target.process.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=15)
    assert alive == []
    assert not port_in_use(target.port)
    assert target.metrics_port is not None and not port_in_use(target.metrics_port)


@pytest.fixture(scope="module")
def stopped(request: pytest.FixtureRequest, start: StartTarget) -> dict[str, RunningTarget]:
    """A target of its own for each run of the test below (each is stopped), started together."""
    names = selected(request, "name")
    return dict(zip(names, start.together(names), strict=True))


@pytest.mark.parametrize("name", MEASURED)
def test_sigterm_stops_the_whole_tree(stopped: dict[str, RunningTarget], name: str) -> None:
    target = stopped[name]
    try:
        info = httpx.get(f"{target.url}/info").json()
        for endpoint in [e for e in info["endpoints"].values() if e["name"] in POOLED]:
            assert httpx.get(f"{target.url}{endpoint['path'].split('{')[0]}2", timeout=30).status_code == 200
        census = httpx.get(f"{target.url}/test/resmon").json()
        # Every serving process, and the pool where the work above started one, is in the tree.
        assert census["serving_processes"] == info["workers"]
        assert any(p["role"] == "pool" for p in census["processes"]) == (
            "offload-cpubound" in info["endpoints"]
        )
        assert len(target.tree()) == census["process_count"]
        assert_sigterm_leaves_nothing(target)
    finally:
        target.stop(grace_s=1)
