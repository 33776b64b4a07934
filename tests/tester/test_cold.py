"""A process's first request of a path pays its one-time costs (cold.py): on real servers of three
processes, a path whose first request in each process burns 15 times what every later one does.
The flow's figures of the path alone leave those out and name their cost apart; a proof's warming
has each process serve each request once, after which none pays it. Every figure is CPU the
server's processes measured on their threads' clocks, held as a ratio; none is a wall time."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from labtester.cold import cold, warm
from labtester.launcher import RunningTarget
from labtester.load import LoadClient, Sample
from labtester.proposal.warming import warmed
from labtester.scenarios.common import decode
from labtester.scenarios.flow import SHAPE
from labtester.scenarios.flow.analyse import path_flow
from tests.services.apps import BARE_MODULE, bare_app_dir, serve_app, serving_pids
from tests.tester.test_conservation import FLOW, endpoint_of, info_of, served

STEADY_MS, FIRST_MS = 8, 120
COLD = f"/cold?ms={STEADY_MS}&first={FIRST_MS}"
PROCESSES = 3
# Three processes: gunicorn's sync workers each take their own connections, uvicorn's share a socket.
WORKERS = {"LAB_WORKERS": str(PROCESSES)}
SYNC_3 = {"name": "sync-3", "env": {"LAB_SERVER": "gunicorn", "LAB_WORKER_CLASS": "sync", **WORKERS}}
UVICORN_3 = {"name": "uvicorn-3", "env": {"LAB_SERVER": "uvicorn", **WORKERS}}


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bare_app_dir(tmp_path_factory.mktemp("cold"))


def _served(app_dir: Path, configuration: dict[str, object], interface: str) -> Iterator[RunningTarget]:
    target = serve_app(f"{BARE_MODULE}:{interface}", configuration, [COLD], pythonpath=app_dir)
    try:
        yield target
    finally:
        target.stop()


@pytest.fixture
def sync_3(app_dir: Path) -> Iterator[RunningTarget]:
    yield from _served(app_dir, SYNC_3, "wsgi")


@pytest.fixture
def uvicorn_3(app_dir: Path) -> Iterator[RunningTarget]:
    yield from _served(app_dir, UVICORN_3, "asgi")


def test_a_processs_first_request_is_told_by_the_process_its_answer_names() -> None:
    samples = [Sample("/a", 0, 0, 0, 200, None, pid=pid) for pid in (7, 7, 8, 7, 8, 9)]
    assert cold(samples) == [True, False, True, False, False, True]
    assert [s.pid for s in warm(samples)] == [7, 7, 8]
    # Where no answer names its process, only the first is taken for one.
    assert cold([Sample("/a", 0, 0, 0, 200, None)] * 3) == [True, False, False]


def test_a_paths_cost_alone_leaves_each_processs_first_out_and_names_it(sync_3: RunningTarget) -> None:
    app = served(sync_3)
    endpoint = endpoint_of(app.info, COLD)
    record = asyncio.run(SHAPE.measure_path(sync_3.url, endpoint, FLOW, 60, app.info))
    assert record is not None
    # Requests alone are sent until as many as asked are past their process's first.
    alone = decode(record["baseline"])
    assert len(warm(alone)) == FLOW.baseline and 1 <= sum(cold(alone)) <= PROCESSES, alone
    flow = path_flow({**record, "endpoint": endpoint.name}, app.info, app.cost)
    # Its figures alone are what a request costs from then on: one cold request in five would put
    # the mean at (120 + 4 x 8) / 5 = 30 ms, 3.8 times.
    assert flow.cpu_s is not None and flow.cpu_mean_s is not None and flow.cold_cpu_s is not None
    assert flow.cpu_s >= STEADY_MS / 1000 and flow.cpu_mean_s < 1.5 * STEADY_MS / 1000, flow
    # What a process's first used is named apart, the one-time cost itself.
    assert flow.cold_cpu_s >= 0.9 * FIRST_MS / 1000 > 10 * flow.cpu_mean_s, flow


def test_a_proofs_warming_has_every_process_serve_each_request_and_none_pays_it_after(
    uvicorn_3: RunningTarget,
) -> None:
    record = warmed(uvicorn_3.url, [COLD], PROCESSES, 60, {})
    census = httpx.get(uvicorn_3.url + info_of(uvicorn_3).control.census, timeout=60).json()
    samples = decode(record["samples"])  # type: ignore[arg-type]
    assert record["unwarmed"] == [] and {s.pid for s in samples} == serving_pids(census)
    # Every process paid its first while warming; what follows, sent as a proof sends (many at
    # once, dealt as the server deals them), pays none.
    after = asyncio.run(_at_once(uvicorn_3.url, batches=5, each=2 * PROCESSES))
    assert {s.pid for s in after} <= serving_pids(census)
    assert all(s.ok and s.cpu_s is not None and s.cpu_s < 0.5 * FIRST_MS / 1000 for s in after), after


async def _at_once(url: str, batches: int, each: int) -> list[Sample]:
    samples: list[Sample] = []
    async with LoadClient(url, 60) as client:
        for _ in range(batches):
            samples += await asyncio.gather(*(client.get(COLD) for _ in range(each)))
    return samples
