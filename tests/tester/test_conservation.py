"""Conservation on real servers where a request's CPU runs away from its own task: the serving
processes' CPU over a flow (their process tree, read from the processes), against what the lab
accounts for (the CPU the processes charged to requests, the configuration's own cost measured on
empty requests, the idle rate, the lab's own reads), at least 90 %: on a Django app served as ASGI
(its views in asgiref's thread), an app's own thread pool, a streamed body whose work runs after
the header (on uvicorn, and a WSGI generator of many chunks under gthread, whose writes are the
request's), requests pipelined on one uvicorn connection, and requests that cost a sync, gthread,
gevent or uvicorn server more than an empty one (a long head to parse); the lab's own reads (its scrapes) are
named apart from the requests'. Every figure is CPU seconds the processes measured, held as a
ratio; none is a wall time.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from labtester import census
from labtester.info import EndpointInfo, TargetInfo
from labtester.launcher import RunningTarget
from labtester.load import Sample
from labtester.scenarios.common import decode
from labtester.scenarios.flow import SHAPE, accounting, servingcost
from labtester.scenarios.flow.analyse import FlowSettings, PathFlow, path_flow
from labtester.scenarios.flow.cost import ACCOUNTED_SHARE, PathAccount, ServingCost
from labtester.scrape import charged_settled
from labtester.sizing.floor import ALONE_SHARE, POINTS
from labtester.sizing.quantiles import percentile
from labtester.traffic import Outgoing
from tests.services.apps import CONFIGURATIONS, serve_app
from tests.services.servertiming import parse
from tests.services.test_handover import read_responses

UVICORN = next(c for c in CONFIGURATIONS if c["name"] == "uvicorn")
GTHREAD = next(c for c in CONFIGURATIONS if c["name"] == "gthread")
SYNC = next(c for c in CONFIGURATIONS if c["name"] == "sync-1x")
GEVENT = next(c for c in CONFIGURATIONS if c["name"] == "gevent")
GRANIAN_WSGI = next(c for c in CONFIGURATIONS if c["name"] == "granian-wsgi")
USERS = 4  # a few at once: the CPU binds, and each request's work is far above the server's own
FLOW = FlowSettings(users=USERS, spawn_rate=2 * USERS, duration_s=4, baseline=2)
POOL = "/pool?ms=20&name=shared"  # run_in_executor on a pool the app made itself
STREAM = "/stream?ms=20&chunks=4"  # a first line at once, then 4 chunks of 5 ms after the header
PIPELINED = "/cpu?ms=20"
# A generator body of many small chunks: the server's writes of them cost more than the app's steps.
MANY_CHUNKS = "/stream?ms=0&chunks=300"
DJANGO_REPORT = "/report"  # an ORM aggregate in a plain `def` view: asgiref's thread
# A millisecond of the app's behind a head of 90 fields of 1,000 bytes, which the server reads and
# parses before the app is called: each request costs it several times an empty one.
HEAVY_HEAD = Outgoing(
    "/stream?ms=1&chunks=1",
    "GET",
    "/stream?ms=1&chunks=1",
    tuple((f"X-Filler-{i}", "x" * 1000) for i in range(90)),
)
# Past this, CPU was counted twice (a request charged to another as well); below it, the idle rate
# (no request's, measured before the flows) over a flow of few requests on a crowded machine.
OVERCOUNTED = 1.5


def info_of(target: RunningTarget) -> TargetInfo:
    return TargetInfo.model_validate(httpx.get(f"{target.url}/info", timeout=60).json())


def endpoint_of(info: TargetInfo, path: str) -> EndpointInfo:
    return next(e for e in info.endpoints.values() if e.path == path)


def cost_of(target: RunningTarget, info: TargetInfo) -> ServingCost:
    """The configuration's own cost per request, as the lab measures it before its flows."""
    return servingcost.serving_cost(asyncio.run(servingcost.measure(target.url, info, USERS, 60)), info)


@dataclass(frozen=True)
class Served:
    """A served app and its configuration's own cost, measured once before its flows, as the lab
    measures it once per target before all of that target's flows."""

    target: RunningTarget
    info: TargetInfo
    cost: ServingCost


def served(target: RunningTarget) -> Served:
    info = info_of(target)
    return Served(target, info, cost_of(target, info))


def flow_of(app: Served, path: str, request: Outgoing | None = None) -> PathFlow:
    """The lab's flow on `path` (`request`: a team's, else a GET), its conservation among its
    figures, as `make lab` makes them."""
    endpoint = endpoint_of(app.info, path)
    record = asyncio.run(SHAPE.measure_path(app.target.url, endpoint, FLOW, 60, app.info, request=request))
    assert record is not None
    flow = path_flow({**record, "endpoint": endpoint.name}, app.info, app.cost)
    assert flow.account is not None, record.keys()
    assert flow.account.charged_by == "counter"
    assert flow.account.lab_reads_cpu_per_request_s > 0  # its scrapes and census, named apart
    return flow


def flow_account(app: Served, path: str) -> PathAccount:
    account = flow_of(app, path).account
    assert account is not None
    return account


@pytest.fixture(scope="module")
def handover_app() -> Iterator[Served]:
    target = serve_app("tests.services.handover_app:asgi", UVICORN, [POOL, STREAM, PIPELINED])
    httpx.get(f"{target.url}{POOL}", timeout=60)  # the pool's thread starts: no request's
    yield served(target)
    target.stop()


def test_an_apps_own_thread_pool_is_accounted_for(handover_app: Served) -> None:
    account = flow_account(handover_app, POOL)
    assert ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account


def test_a_streamed_bodys_work_after_the_header_is_accounted_for(handover_app: Served) -> None:
    flow = flow_of(handover_app, STREAM)
    account = flow.account
    assert account is not None and ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account
    # The headers held what ran before the first chunk only: the counter holds the rest, and the
    # model's CPU per request and the path's CPU alone take it.
    assert account.header_cpu_per_request_s is not None
    assert account.header_cpu_per_request_s < account.request_cpu_per_request_s / 2, account
    assert flow.prediction.cpu_per_request_s is not None and flow.cpu_s is not None
    assert flow.prediction.cpu_per_request_s >= ACCOUNTED_SHARE * account.request_cpu_per_request_s, flow
    assert flow.cpu_s >= account.request_cpu_per_request_s / 2, flow


def pipelined_batch(target: RunningTarget, count: int) -> list[Sample]:
    """`count` requests sent at once on one connection, their answers as samples."""
    sent = f"GET {PIPELINED} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() * count
    with socket.create_connection(("127.0.0.1", target.port), timeout=60) as connection:
        connection.sendall(sent)  # uvicorn reads the later ones while it serves the first
        responses = read_responses(connection, count)
    samples = []
    for headers, _ in responses:
        timing = parse(headers.get("server-timing"))
        samples.append(Sample(PIPELINED, 0.0, 0.0, 0.0, 200, None, timing.cpu_s if timing else None))
    return samples


async def _around(
    target: RunningTarget, info: TargetInfo, batches: int, scrapes: int = 0
) -> dict[str, object]:
    """The processes' CPU and the CPU charged to requests and to the lab's reads around `batches`
    pipelined batches, and `scrapes` of /metrics after them (as the lab's settling reads)."""
    async with httpx.AsyncClient(timeout=60) as control:
        metrics, census_url = target.url + info.control.metrics, target.url + info.control.census
        charged_before = await charged_settled(control, metrics, info.control.paths())
        cpu_before, started = await census.cpu_seconds(control, census_url), time.monotonic()
        samples = [s for _ in range(batches) for s in await asyncio.to_thread(pipelined_batch, target, 3)]
        wall = time.monotonic() - started
        for _ in range(scrapes):
            (await control.get(metrics)).raise_for_status()
        charged_after = await charged_settled(control, metrics, info.control.paths())
        cpu_after = await census.cpu_seconds(control, census_url)
    assert None not in (charged_before, charged_after, cpu_before, cpu_after)
    return {
        "server_cpu_s": cpu_after - cpu_before,  # type: ignore[operator]
        **servingcost.charged_between(charged_before, charged_after),
        "wall_s": wall,
        "samples": samples,
    }


def test_requests_pipelined_on_one_connection_are_accounted_for(handover_app: Served) -> None:
    measured = asyncio.run(_around(handover_app.target, handover_app.info, batches=15))
    samples = measured.pop("samples")
    assert isinstance(samples, list) and len(samples) == 45
    account = accounting.path_account(measured, handover_app.cost, samples)
    assert account is not None
    assert ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account


def test_the_labs_own_reads_are_accounted_apart_from_the_requests(handover_app: Served) -> None:
    # 3 requests of 20 ms, then 60 scrapes of /metrics (a few ms each) in the same window: counted
    # as requests, the scrapes made the requests' own term several times what they measured.
    measured = asyncio.run(_around(handover_app.target, handover_app.info, batches=1, scrapes=60))
    samples = measured.pop("samples")
    assert isinstance(samples, list) and len(samples) == 3
    account = accounting.path_account(measured, handover_app.cost, samples)
    assert account is not None and account.header_cpu_per_request_s is not None
    assert account.request_cpu_per_request_s <= 1.5 * account.header_cpu_per_request_s, account
    assert account.lab_reads_cpu_per_request_s > account.request_cpu_per_request_s, account
    assert ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account


@pytest.fixture(scope="module")
def django_asgi() -> Iterator[Served]:
    target = serve_app("examples.django_shop.asgi:application", UVICORN, [DJANGO_REPORT])
    httpx.get(f"{target.url}{DJANGO_REPORT}", timeout=60)  # asgiref's thread, the connection: made once
    yield served(target)
    target.stop()


def test_a_django_app_served_as_asgi_is_accounted_for(django_asgi: Served) -> None:
    account = flow_account(django_asgi, DJANGO_REPORT)
    assert ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account


@pytest.fixture(scope="module")
def wsgi_app() -> Iterator[Served]:
    target = serve_app("tests.services.handover_app:wsgi", GTHREAD, [MANY_CHUNKS], LAB_WORKERS="1")
    yield served(target)
    target.stop()


def test_a_wsgi_bodys_many_chunks_and_their_writes_are_accounted_for(wsgi_app: Served) -> None:
    account = flow_account(wsgi_app, MANY_CHUNKS)
    assert ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account


def test_empty_requests_alone_measure_the_configurations_floor_before_its_flows(wsgi_app: Served) -> None:
    # What the plan draws for the family before any proof (sizing/floor.py), and the default
    # objective stands above: each empty request alone took more than its CPU on the cores, its
    # slowest more than its typical, and its typical less than the time between two sends (alone).
    floor, cost = wsgi_app.cost.floor_s, wsgi_app.cost
    assert len(floor) == POINTS and floor == sorted(floor), floor
    assert cost.empty_per_s is not None and cost.process_cpu_per_request_s is not None
    median, p99 = percentile(floor, 50), percentile(floor, 99)
    assert 0 < median < p99 and median < 1 / (ALONE_SHARE * cost.empty_per_s), (median, p99, cost)


@pytest.fixture(scope="module")
def granian_wsgi_app() -> Iterator[Served]:
    target = serve_app("tests.services.handover_app:wsgi", GRANIAN_WSGI, [MANY_CHUNKS], LAB_WORKERS="1")
    yield served(target)
    target.stop()


CLOSED_GAP = 0.6  # of what the processes' CPU has beyond the path's, the share the parts' cost accounts for


def test_a_bodys_parts_written_off_the_python_threads_are_accounted_for(granian_wsgi_app: Served) -> None:
    # granian-wsgi iterates the body on a Python thread and writes each part from its Rust threads,
    # which no Python clock sees: their cost per part is measured on an empty stream, and a path's
    # parts beyond an empty request's are charged to the server at it.
    cost = granian_wsgi_app.cost
    assert cost.server_cpu_per_chunk_s is not None and cost.server_cpu_per_chunk_s > 0, cost
    assert cost.chunks_per_request is not None and round(cost.chunks_per_request) == 1, cost
    account = flow_account(granian_wsgi_app, MANY_CHUNKS)
    assert account.chunks_per_request is not None and account.chunks_per_request >= 300, account
    assert account.chunks_cpu_per_request_s is not None and account.chunks_cpu_per_request_s > 0, account
    # Without the parts' cost, the path's CPU would be a lower bound here (0.68 without it).
    without = (account.accounted_s - account.chunks_cpu_per_request_s) / account.process_cpu_per_request_s
    assert without < ACCOUNTED_SHARE, account
    # With it, most of what was missing is accounted for: the cost of a part is measured on an
    # empty stream, apart from the path's flow, so it moves with the machine between the two (0.89
    # to 0.96 of the processes' CPU in full runs of the suite, 2026-11-30). Counted twice, the
    # parts' cost would put it near 1.2 here.
    assert account.share - without >= CLOSED_GAP * (1 - without) and account.share <= 1.15, account


@pytest.fixture(scope="module", params=[SYNC, GTHREAD, GEVENT, UVICORN], ids=lambda c: str(c["name"]))
def heavy_head_app(request: pytest.FixtureRequest) -> Iterator[Served]:
    app = "tests.services.handover_app:" + ("asgi" if request.param is UVICORN else "wsgi")
    target = serve_app(app, request.param, [HEAVY_HEAD.target], LAB_WORKERS="1")
    yield served(target)
    target.stop()


def test_a_request_that_costs_the_server_more_than_an_empty_one_is_accounted_for(
    heavy_head_app: Served,
) -> None:
    # The server's cost measured on empty requests alone left the head's parsing unaccounted for
    # (shares 0.39 to 0.41 here): its own CPU on the requests' threads (greenlets, the event loop's
    # thread between request steps) is measured over the flow.
    flow = flow_of(heavy_head_app, HEAVY_HEAD.target, HEAVY_HEAD)
    account, cost = flow.account, heavy_head_app.cost
    assert account is not None and ACCOUNTED_SHARE <= account.share <= OVERCOUNTED, account
    assert account.server_measured_cpu_per_request_s is not None, account
    assert cost.server_thread_cpu_per_request_s is not None, cost
    assert account.server_measured_cpu_per_request_s > 2 * cost.server_thread_cpu_per_request_s, (
        account,
        cost,
    )
    # The model takes the path's own server cost.
    assert flow.prediction.server_cpu_per_request_s == account.server_cpu_per_request_s, flow.prediction


@pytest.fixture(scope="module")
def fresh_sync() -> Iterator[tuple[RunningTarget, TargetInfo]]:
    """A WSGI app under sync workers that has served none of its own requests yet."""
    target = serve_app("tests.services.handover_app:wsgi", SYNC, [PIPELINED], LAB_WORKERS="1")
    yield target, info_of(target)
    target.stop()


def test_a_fresh_servers_own_cost_leaves_out_its_empty_requests_whole_cpu(
    fresh_sync: tuple[RunningTarget, TargetInfo],
) -> None:
    # The lab measures it before the app's first request, when no process has a series of the
    # requests' total yet. Read as a server without the counters, the empty requests' CPU was taken
    # from their headers, which end before the body's write and the request's close: the cost held
    # the rest, which a flow's requests are charged too (httpbin under sync: 0.39 to 0.43 ms a
    # request where it was 0.25, shares up to 119 %).
    target, info = fresh_sync
    record = asyncio.run(servingcost.measure(target.url, info, USERS, 60))
    headers = sum(s.cpu_s or 0.0 for s in decode(record["empty"]))
    assert record["charged_cpu_s"] == 0.0, record["charged_cpu_s"]  # none of the app's requests
    # Their whole CPU, in the lab's reads' total, is what the cost leaves out: more than the headers'.
    assert record["lab_reads_cpu_s"] is not None and record["lab_reads_cpu_s"] > headers, (
        record["lab_reads_cpu_s"],
        headers,
    )


def idle_rate_at_rest(target: RunningTarget, info: TargetInfo) -> float:
    """The processes' CPU per second over the idle window's length, with nothing in it but the
    census's own two reads."""

    async def read() -> float:
        async with httpx.AsyncClient(timeout=60) as client:
            url = target.url + info.control.census
            before, at = await census.cpu_seconds(client, url), time.monotonic()
            await asyncio.sleep(servingcost.IDLE_S)
            after, end = await census.cpu_seconds(client, url), time.monotonic()
        assert before is not None and after is not None
        return (after - before) / (end - at)

    return asyncio.run(read())


def test_the_idle_rate_is_the_processes_at_rest(handover_app: Served) -> None:
    # Each /metrics scrape is a request the processes charge like any, so the charged total never
    # held still and its settling read (2 s of scrapes) inside the idle window made the idle rate
    # several times what the processes spend at rest, and conservation shares above 100 %.
    idle = handover_app.cost.idle_cpu_per_s
    at_rest = [idle_rate_at_rest(handover_app.target, handover_app.info) for _ in range(2)]
    tick_per_s = 0.01 / servingcost.IDLE_S  # CPU times tick in 10 ms per process
    assert idle is not None and idle <= 2 * max(at_rest) + 2 * tick_per_s, (idle, at_rest)
