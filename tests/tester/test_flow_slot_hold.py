"""A slot is held for what the server spends on a request, not for the client's round trip: under
load a gunicorn sync worker takes the next queued connection as it ends one, so the flow's slot
term holds a slot for the request's CPU, the server's own and its wait (analyse.py), on a real
server. Held for the time alone as the client saw it (its connection's set-up and the round trip
included), the Flask shop's sync workers served 1.10 to 1.27 times what the slot term allowed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from labtester.launcher import RunningTarget
from labtester.scenarios.flow import SHAPE
from labtester.scenarios.flow.analyse import FlowSettings, path_flow
from tests.services.apps import CONFIGURATIONS, serve_app
from tests.tester.test_conservation import cost_of, endpoint_of, info_of

SYNC = next(c for c in CONFIGURATIONS if c["name"] == "sync-1x")
LIGHT = "/cpu?ms=0.3"  # the app's CPU is a fraction of a request's whole cost
USERS = 12  # a queue at the workers' accept, the whole flow long
FLOW = FlowSettings(users=USERS, spawn_rate=2 * USERS, duration_s=5, baseline=5)


@pytest.fixture(scope="module")
def sync_workers() -> Iterator[RunningTarget]:
    target = serve_app("tests.services.bare_app:wsgi", SYNC, [LIGHT], LAB_WORKERS="2")
    yield target
    target.stop()


def test_a_sync_workers_holds_its_slot_for_the_servers_time_not_the_round_trip(
    sync_workers: RunningTarget,
) -> None:
    info = info_of(sync_workers)
    cost = cost_of(sync_workers, info)  # the server's own CPU per request, on empty requests
    endpoint = endpoint_of(info, LIGHT)
    record = asyncio.run(SHAPE.measure_path(sync_workers.url, endpoint, FLOW, 60, info))
    assert record is not None
    flow = path_flow({**record, "endpoint": endpoint.name}, info, cost)
    p = flow.prediction
    # The slots, held for what the server spends on a request, are a ceiling the workers never beat
    # (held for R, the time alone as the client saw it, they were not: the Flask shop's sync workers
    # served 1.10 to 1.27 times 2 / R on a busy machine, where R holds the run queue's wait).
    assert p.slots is not None and p.hold_s is not None
    assert flow.requests_per_s <= p.slots / p.hold_s, (flow.requests_per_s, p)
    # Not asserted, as it does not hold: issue 27's 15 % on this light path. On a quiet machine the
    # cores bound the prediction (2 cores over the app's, the server's and the client's CPU) and the
    # two workers served 0.76 to 0.86 of it, each using 0.54 of a core: the CPU term takes the
    # cores as fully usable by two single-threaded workers and a client, and they were not.
    # What the slot is held for is what the server measured, less than the time alone the client
    # saw (which adds the round trip and a connection's set-up: sync workers close each).
    assert p.hold_s is not None and flow.wait_s is not None and p.cpu_per_request_s is not None
    assert p.hold_s == pytest.approx(p.cpu_per_request_s + (p.server_cpu_per_request_s or 0) + flow.wait_s)
    assert p.hold_s < p.per_request_s, p
