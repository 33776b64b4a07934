"""Mixed work, the downstream call and the in-flight limit, on real servers."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
import pytest

from labtester.launcher import RunningTarget
from tests.conftest import Configured, StartTarget
from tests.services.work import in_flight

TIMER_TICK_S = 0.001  # libuv's loop clock (uvloop, under uvicorn) has millisecond resolution


@pytest.mark.parametrize("name", ["fastapi", "flask-1x", "flask-gevent"])
def test_mixed_uses_the_cpu_it_was_asked_for_and_waits(configured: Configured, name: str) -> None:
    target = configured(name)
    body = httpx.get(f"{target.url}/test/mixed?cpu_ms=40&io_ms=100&splits=4", timeout=30).json()
    assert body["cpu_s"] == pytest.approx(0.040, abs=0.01)
    # CPU plus the four waits; uvloop's timers tick in whole milliseconds, so each wait may end
    # up to 1 ms early (seen here: 0.1397 s).
    assert body["duration_s"] >= 0.14 - 4 * TIMER_TICK_S
    assert (body["cpu_ms"], body["io_ms"], body["splits"]) == (40, 100, 4)


@pytest.mark.parametrize("name", ["fastapi", "flask-gevent"])
def test_mixed_waits_overlap_on_one_process(configured: Configured, name: str) -> None:
    target = configured(name)
    assert httpx.get(f"{target.url}/info").json()["workers"] == 1
    with ThreadPoolExecutor(8) as pool:
        bodies = list(
            pool.map(
                lambda _: httpx.get(f"{target.url}/test/mixed?cpu_ms=5&io_ms=300", timeout=30).json(),
                range(8),
            )
        )
    # Eight 305 ms requests, waits overlapping on one event loop (asyncio's or gevent's): far
    # less than 8 x 305 ms.
    assert max(b["finished_at"] for b in bodies) - min(b["started_at"] for b in bodies) < 1.2


@pytest.mark.parametrize("name", ["fastapi", "flask-2x"])
def test_limit_answers_429_beyond_it(start: StartTarget, name: str) -> None:
    target = start(name, LAB_MAX_IN_FLIGHT="2")
    assert httpx.get(f"{target.url}/info").json()["limits"]["max_in_flight"] == 2
    with ThreadPoolExecutor(6) as pool:
        statuses = Counter(
            pool.map(lambda _: httpx.get(f"{target.url}/test/io-bound/500", timeout=30).status_code, range(6))
        )
    assert statuses[200] >= 2 and statuses[429] >= 1 and set(statuses) <= {200, 429}
    # Control paths are never limited, and the slots come back once the work is done.
    assert httpx.get(f"{target.url}/test/resmon").status_code == 200
    assert httpx.get(f"{target.url}/test/io-bound/1").status_code == 200


@pytest.mark.parametrize("name", ["fastapi", "flask-1x"])
def test_downstream_call(configured: Configured, name: str) -> None:
    target = configured(name)  # pointed at the session's downstream mock
    assert "downstream" in httpx.get(f"{target.url}/info").json()["endpoints"]
    body = httpx.get(f"{target.url}/test/downstream/150", timeout=30).json()
    assert body["downstream"]["milliseconds"] == 150 and body["downstream"]["pid"] != body["pid"]
    assert body["duration_s"] >= 0.15 - TIMER_TICK_S  # the mock waits on uvloop too
    assert httpx.get(f"{target.url}/test/downstream/x").status_code == 422


@pytest.mark.parametrize("name", ["fastapi", "flask-gthread"])
def test_unreachable_downstream_is_a_502_not_a_crash(start: StartTarget, name: str) -> None:
    target = start(name, LAB_DOWNSTREAM_URL="http://127.0.0.1:9")
    for path in ("/test/downstream/10", "/test/fan-out?k=2&wait_ms=10&call_ms=10"):
        response = httpx.get(f"{target.url}{path}", timeout=30)
        assert response.status_code == 502, path
        assert response.json()["detail"].startswith("downstream:"), path
    assert httpx.get(f"{target.url}/healthz").status_code == 200


def busy_workers(target: RunningTarget, count: int) -> list[psutil.Process]:
    """The workers that hold requests now: those with an established connection on the port."""
    busy = [
        process
        for process in target.tree()[1:]
        if any(
            c.status == psutil.CONN_ESTABLISHED and c.laddr.port == target.port
            for c in process.net_connections("tcp")
        )
    ]
    return busy if len(busy) >= count else []


# A sync worker takes one request: with as many workers as slots, the one over the limit would
# wait for a worker, not get its 429. A gevent worker takes them all.
@pytest.mark.parametrize(
    ("name", "workers", "limit", "holders"), [("flask-1x", 3, 2, 2), ("flask-gevent", 1, 3, 1)]
)
def test_a_killed_workers_slots_come_back(
    start: StartTarget, name: str, workers: int, limit: int, holders: int
) -> None:
    """SIGKILL a worker in the middle of its requests: its slots are handed back when gunicorn
    reaps it, while the other requests still run (before, they were lost for good: 429 forever)."""
    target = start(name, LAB_WORKERS=str(workers), LAB_MAX_IN_FLIGHT=str(limit))
    with ThreadPoolExecutor(limit) as pool:
        long = [pool.submit(httpx.get, f"{target.url}/test/io-bound/20000", timeout=60) for _ in range(limit)]
        deadline = time.monotonic() + 10
        # Every long request inside the app (each took its slot on the way in), and held by the
        # workers: a worker with one accepted connection may not have read the others yet (a
        # gevent worker under load answered the probe below with a 200 then).
        while in_flight(target.metrics_url) < limit or not (held := busy_workers(target, holders)):
            assert time.monotonic() < deadline, "the long requests never reached the workers"
            time.sleep(0.05)
        assert httpx.get(f"{target.url}/test/io-bound/1", timeout=30).status_code == 429  # all taken
        held[0].kill()
        while (status := httpx.get(f"{target.url}/test/io-bound/1", timeout=30).status_code) == 429:
            assert time.monotonic() < deadline + 10, "the dead worker's slots never came back"
            time.sleep(0.1)
        assert status == 200
        # Its slots came back while the other worker's request still ran.
        assert holders == 1 or not all(future.done() for future in long)
        # Proved: the other long requests end now, not after their 20 s (the pool waits for them).
        for process in busy_workers(target, 1):
            process.kill()
