"""On greenlets a request that waited needs its worker back to answer, and a request computing
holds it: a real gevent worker, a 30 ms wait, and 100 ms of CPU that never yields sent 5 ms after
it. The wait's answer comes only once the CPU ends, and the sizing's simulation, fed the two
requests' measured work, must say so (the Flask shop's /checkout, a 150 ms wait, answered in up to
6.1 s beside /report on gevent, where the model said 0.59 s)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from labtester.launcher import RunningTarget
from labtester.load import LoadClient, Sample
from labtester.sizing.configuration import Configuration
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import simulate
from tests.services.apps import CONFIGURATIONS, serve_app

GEVENT = next(c for c in CONFIGURATIONS if c["name"] == "gevent")
WAIT, CPU = "/wait?ms=30", "/cpu?ms=100"
WAIT_S = 0.030


@pytest.fixture(scope="module")
def one_gevent_worker() -> Iterator[RunningTarget]:
    target = serve_app("tests.services.bare_app:wsgi", GEVENT, [WAIT, CPU], LAB_WORKERS="1")
    yield target
    target.stop()


async def wait_then_cpu(url: str) -> tuple[Sample, Sample]:
    async with LoadClient(url, 30) as client:
        for path in (WAIT, CPU):  # each path's one-time costs paid first, one at a time
            await client.get(path)
        waiting = asyncio.create_task(client.get(WAIT))
        await asyncio.sleep(0.005)
        computing = asyncio.create_task(client.get(CPU))
        return await waiting, await computing


def test_a_wait_on_greenlets_is_answered_after_the_cpu_that_holds_its_worker(
    one_gevent_worker: RunningTarget,
) -> None:
    waited, computed = asyncio.run(wait_then_cpu(one_gevent_worker.url))
    assert waited.ok and computed.ok, (waited, computed)
    assert waited.app_s is not None and computed.app_s is not None and computed.cpu_s is not None
    assert waited.started_at is not None and computed.started_at is not None
    began = computed.started_at - waited.started_at
    assert 0 < began < WAIT_S, (waited, computed)  # the CPU began while the wait waited
    # The worker's measurement: the wait was answered once the CPU ended, not when it ended itself.
    assert waited.app_s > began + 0.8 * computed.cpu_s, (waited, computed)
    # The simulation, each request's work as the server measured it (the CPU's time computing, run
    # queue included), on the same arrivals: every time from its arrival within a fifth of the
    # server's (sorted: two requests, and no model names which ended first).
    kinds = [
        RequestKind(WAIT, 1, cpu_s=waited.cpu_s or 0.0, wait_s=WAIT_S),
        RequestKind(CPU, 1, cpu_s=computed.app_s, wait_s=0.0),
    ]
    worker = Configuration("gevent", 1, 100, "per_worker", preemptive=False)
    run = simulate(kinds, worker, 1, 1, 2, arrivals=[0.0, began], picked=[0, 1])
    measured = sorted((waited.app_s, computed.app_s))
    for simulated, served in zip(run.latencies_s, measured, strict=True):
        assert simulated == pytest.approx(served, rel=0.2), (run.latencies_s, measured)
