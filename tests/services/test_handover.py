"""A request's CPU wherever the app runs it (measure.handover), on real servers: asgiref's thread
(Django's sync views), the app's own pool, anyio's threads and a thread the request starts, each
request's Server-Timing `lab-cpu` within 15 % of what its work measured for itself; a pool thread
one request started is not charged to it for the next one's work; a pipelined request on uvicorn
gets its own figures; a streamed body's later chunks are in the process's total of CPU charged to
requests, and the lab's own control reads are not; the app's own Server-Timing entries stay its
own; gunicorn still sends a `wsgi.file_wrapper` file with sendfile."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
from labtester.servertiming import from_headers
from tests.services.apps import CONFIGURATIONS, serve_app
from tests.services.handover_app import APP_TIMING, FILE_TEXT
from tests.services.servertiming import Reply, burst, fetch, parse

# What the issue asks of a team's app: each request's measured CPU within 15 % of what it used.
AGREEMENT = 0.15
WORK_MS = 50
PATHS = ["/asgiref", "/pool", "/anyio", "/cpu", "/stream", "/own-timing", "/thread", "/file"]
# The lab's own control reads, served by the same processes as the app's requests.
LAB_READS = ["/metrics", "/test/resmon", "/healthz", "/info"]
ASGI_HANDOVERS = [
    *("/asgiref?mode=django", "/asgiref?mode=global", "/asgiref?mode=free"),
    *("/pool?name=shared", "/anyio"),
]


def configuration(name: str) -> dict[str, Any]:
    return next(c for c in CONFIGURATIONS if c["name"] == name)


def agrees(measured_s: float, used_s: float) -> bool:
    return abs(measured_s - used_s) <= AGREEMENT * used_s


def with_query(url: str, **query: object) -> str:
    extra = "&".join(f"{key}={value}" for key, value in query.items())
    return f"{url}{'&' if '?' in url else '?'}{extra}"


def charged_total_s(target: RunningTarget, counter: str = "lab_request_cpu_seconds") -> float:
    """A counter of charged CPU (by default the requests', lab_request_cpu_seconds_total) over the
    target's processes, from its metrics process (which serves no request of its own)."""
    text = httpx.get(target.metrics_url or "", timeout=30).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        if family.name == counter
        for sample in family.samples
        if sample.name == f"{counter}_total"
    )


def streamed_cpu(target: RunningTarget, url: str) -> tuple[float, float, float]:
    """A streamed request's header CPU, the CPU its body's work measured, and what the process's
    total of CPU charged to requests grew by (counted when the request ends: polled)."""
    before = charged_total_s(target)
    response = httpx.get(url, timeout=60)
    timing = parse(response.headers.get("server-timing"))
    assert response.status_code == 200 and timing is not None, response.headers
    used = json.loads(response.text.splitlines()[-1])["cpu_s"]
    deadline = time.monotonic() + 10
    while (grown := charged_total_s(target) - before) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    return timing.cpu_s, used, grown


def not_charged_for_the_next(url: str) -> tuple[Reply, Reply]:
    """The first request hands WORK_MS to the pool, then stays in flight while a second one hands
    the same pool twice that. (At 20 ms, the 15 % left 3 ms for the first's own steps on the
    loop, which read 0.3-1.6 ms a request here and 2.9 ms once in a whole suite's run.)"""
    with ThreadPoolExecutor(1) as clients:
        first_sent = clients.submit(fetch, with_query(url, ms=WORK_MS, hold_ms=1500))
        time.sleep(0.3)
        second = fetch(with_query(url, ms=2 * WORK_MS))
        first = first_sent.result()
    # The second's work ran while the first was in flight: what could be charged to it wrongly.
    assert second.timing.started_at + second.timing.app_s < first.timing.started_at + first.timing.app_s
    return first, second


@pytest.fixture(scope="module")
def asgi_target() -> Iterator[RunningTarget]:
    target = serve_app("tests.services.handover_app:asgi", configuration("uvicorn"), PATHS)
    for path in ASGI_HANDOVERS:  # each mode's first call starts its threads: not compared
        fetch(with_query(f"{target.url}{path}", ms=1))
    yield target
    target.stop()


@pytest.mark.parametrize("path", ASGI_HANDOVERS)
def test_work_handed_to_a_thread_counts_to_its_request(asgi_target: RunningTarget, path: str) -> None:
    replies = burst([with_query(f"{asgi_target.url}{path}", ms=WORK_MS)] * 3)
    for reply in replies:
        assert agrees(reply.timing.cpu_s, reply.body["cpu_s"]), (reply.timing, reply.body)
        # All of its work ran in a thread: said apart, as what ran beside the event loop.
        assert reply.timing.elsewhere_s is not None, reply.timing
        assert agrees(reply.timing.elsewhere_s, reply.body["cpu_s"]), (reply.timing, reply.body)


def test_work_on_the_loop_is_not_said_to_run_elsewhere(asgi_target: RunningTarget) -> None:
    for reply in burst([f"{asgi_target.url}/cpu?ms={WORK_MS}"] * 3):
        assert agrees(reply.timing.cpu_s, reply.body["cpu_s"]), (reply.timing, reply.body)
        assert reply.timing.elsewhere_s == 0.0, reply.timing


@pytest.mark.parametrize("path", ["/pool?name=made-by-the-first", "/asgiref?mode=global", "/anyio"])
def test_a_pool_thread_is_charged_only_the_calls_made_for_each_request(
    asgi_target: RunningTarget, path: str
) -> None:
    first, second = not_charged_for_the_next(f"{asgi_target.url}{path}")
    assert agrees(first.timing.cpu_s, first.body["cpu_s"]), (first.timing, first.body)
    assert agrees(second.timing.cpu_s, second.body["cpu_s"]), (second.timing, second.body)


def read_responses(connection: socket.socket, count: int) -> list[tuple[dict[str, str], bytes]]:
    """`count` HTTP/1.1 responses with a content-length, read off one connection."""
    buffered, responses = b"", []

    def receive() -> bytes:
        received = connection.recv(65536)
        assert received, f"the connection closed after {len(responses)} responses"
        return received

    while len(responses) < count:
        if b"\r\n\r\n" not in buffered:
            buffered += receive()
            continue
        head, _, buffered = buffered.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")[1:]
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        length = int(headers["content-length"])
        while len(buffered) < length:
            buffered += receive()
        responses.append((headers, buffered[:length]))
        buffered = buffered[length:]
    return responses


def test_pipelined_requests_each_get_their_own_figures(asgi_target: RunningTarget) -> None:
    work_ms = (30, 90, 60)
    sent = b"".join(b"GET /cpu?ms=%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % ms for ms in work_ms)
    with socket.create_connection(("127.0.0.1", asgi_target.port), timeout=60) as connection:
        connection.sendall(sent)  # all at once: uvicorn reads the later ones while serving the first
        responses = read_responses(connection, len(work_ms))
    timings = [parse(headers.get("server-timing")) for headers, _ in responses]
    for timing, (headers, body) in zip(timings, responses, strict=True):
        assert timing is not None, headers
        assert agrees(timing.cpu_s, json.loads(body)["cpu_s"]), (timing, body)
    assert len({timing.started_at for timing in timings if timing is not None}) == len(work_ms)


def test_a_streamed_bodys_later_chunks_are_charged_to_requests(asgi_target: RunningTarget) -> None:
    header_cpu, used, charged = streamed_cpu(asgi_target, f"{asgi_target.url}/stream?ms=120&chunks=4")
    assert header_cpu < used / 4  # the header holds what ran before the first chunk only
    assert agrees(charged, used), (charged, used)


def test_the_apps_own_server_timing_entries_stay_its_own(asgi_target: RunningTarget) -> None:
    response = httpx.get(f"{asgi_target.url}/own-timing?ms={WORK_MS}", timeout=60)
    header = response.headers["server-timing"]
    assert header.startswith(APP_TIMING.decode() + ", lab-cpu;dur="), header
    timing = from_headers(response.headers.raw)
    assert timing.cpu_s is not None and agrees(timing.cpu_s, response.json()["cpu_s"]), (timing, header)


@pytest.fixture(scope="module")
def wsgi_target() -> Iterator[RunningTarget]:
    """gthread with one worker: every request, and every pool, in one process."""
    target = serve_app("tests.services.handover_app:wsgi", configuration("gthread"), PATHS, LAB_WORKERS="1")
    fetch(f"{target.url}/thread?ms=1")
    yield target
    target.stop()


def test_a_thread_the_request_starts_counts_to_it(wsgi_target: RunningTarget) -> None:
    for reply in burst([f"{wsgi_target.url}/thread?ms={WORK_MS}"] * 3):
        assert agrees(reply.timing.cpu_s, reply.body["cpu_s"]), (reply.timing, reply.body)
        assert reply.timing.elsewhere_s is not None, reply.timing
        assert agrees(reply.timing.elsewhere_s, reply.body["cpu_s"]), (reply.timing, reply.body)


def test_the_apps_own_pool_under_gthread(wsgi_target: RunningTarget) -> None:
    first, second = not_charged_for_the_next(f"{wsgi_target.url}/pool?name=made-by-the-first")
    assert agrees(first.timing.cpu_s, first.body["cpu_s"]), (first.timing, first.body)
    assert agrees(second.timing.cpu_s, second.body["cpu_s"]), (second.timing, second.body)


@pytest.fixture(scope="module")
def gevent_target() -> Iterator[RunningTarget]:
    """A gevent worker, one: its pools' workers and its threads are greenlets."""
    target = serve_app("tests.services.handover_app:wsgi", configuration("gevent"), PATHS, LAB_WORKERS="1")
    fetch(f"{target.url}/thread?ms=1")
    yield target
    target.stop()


def test_the_apps_own_pool_and_threads_under_gevent(gevent_target: RunningTarget) -> None:
    first, second = not_charged_for_the_next(f"{gevent_target.url}/pool?name=made-by-the-first")
    threads = burst([f"{gevent_target.url}/thread?ms={WORK_MS}"] * 2)
    for reply in (first, second, *threads):
        assert agrees(reply.timing.cpu_s, reply.body["cpu_s"]), (reply.timing, reply.body)
        # Greenlets of the worker's one thread: no CPU ran elsewhere, and none is said to.
        assert reply.timing.elsewhere_s is None, reply.timing


def test_a_generator_bodys_later_chunks_are_charged_to_requests(wsgi_target: RunningTarget) -> None:
    header_cpu, used, charged = streamed_cpu(wsgi_target, f"{wsgi_target.url}/stream?ms=120&chunks=4")
    assert header_cpu < used / 4
    assert agrees(charged, used), (charged, used)


def held_still(target: RunningTarget) -> tuple[float, float]:
    """The CPU charged to requests and to the lab's own reads, once neither moved over a poll (the
    last read's account closes just after its response)."""
    last = (-1.0, -1.0)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        now = (charged_total_s(target), charged_total_s(target, "lab_control_cpu_seconds"))
        if now == last:
            break
        last = now
        time.sleep(0.2)
    return last


@pytest.mark.parametrize("served", ["asgi_target", "wsgi_target"])
def test_the_labs_own_reads_are_not_charged_to_requests(served: str, request: pytest.FixtureRequest) -> None:
    # The lab's scrapes, census and health polls are requests the processes serve, but no app's:
    # counted into the requests' total, a flow's accounting took about 0.1 s of scrapes as its requests'.
    target: RunningTarget = request.getfixturevalue(served)
    requests_before, reads_before = held_still(target)
    with httpx.Client(timeout=30) as client:
        for _ in range(10):
            for path in LAB_READS:
                assert client.get(target.url + path).status_code == 200
    requests_after, reads_after = held_still(target)
    assert requests_after == requests_before
    assert reads_after > reads_before


def test_a_file_wrapper_is_still_sent_with_sendfile(wsgi_target: RunningTarget) -> None:
    response = httpx.get(f"{wsgi_target.url}/file", timeout=30)
    assert response.content == FILE_TEXT  # not what read() gives: the server sent the descriptor
    assert parse(response.headers.get("server-timing")) is not None
