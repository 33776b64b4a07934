"""Requests the service tests send: work sized in seconds, and bursts sent all at once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget


def iterations_for(target: RunningTarget, seconds: float) -> int:
    per_iteration = httpx.get(f"{target.url}/test/calibrate?samples=5", timeout=30).json()
    return max(1, round(seconds / per_iteration["seconds_per_iteration"]))


def iterations_for_cpu(target: RunningTarget, kind: str, seconds: float, probes: int = 4) -> int:
    """Iterations of `kind` that take `seconds` of CPU, read from the requests' own cpu_s.

    The calibration endpoint times iterations on the wall clock, so a core shared at that moment
    (a neighbour, a worker's first request) sizes the work short: a test asking 300 ms got 65 ms
    requests beside a noisy neighbour. CPU time is what the work is, whatever shares the core.
    `probes` requests, one at a time, the least CPU of them taken: a worker's first request pays
    its own warm-up (give at least one more probe than the server has workers)."""
    probe = iterations_for(target, seconds)
    used = [httpx.get(f"{target.url}/test/{kind}/{probe}", timeout=60).json()["cpu_s"] for _ in range(probes)]
    assert min(used) > 0.001, used  # a clock that read nothing: no size to scale from
    return max(1, round(probe * seconds / min(used)))


def simultaneous(url: str, count: int) -> list[dict[str, Any]]:
    """`count` requests on their own connections, sent together; the server's bodies back."""
    return sent_together(url, count)[1]


def sent_together(url: str, count: int) -> tuple[float, list[dict[str, Any]]]:
    """`count` requests on their own connections, sent together: the client's seconds until the
    last answer, and the server's bodies.

    Each client is made before the sends and its connection opened (a request to /healthz), and
    the threads are let go together: a client made in its thread (an SSL context, tens of ms of
    CPU under the GIL) staggered the sends by up to 100 ms on a busy machine, so requests meant to
    overlap barely did (CI once read 1.92x where three sharing a core give about 3x)."""
    health = httpx.URL(url).copy_with(path="/healthz", query=None)
    clients = [httpx.Client(timeout=60) for _ in range(count)]
    release = threading.Barrier(count)

    def send(client: httpx.Client) -> httpx.Response:
        try:
            client.get(health).raise_for_status()
        except httpx.HTTPError:
            release.abort()  # the others stop waiting for this one
            raise
        release.wait(timeout=60)
        return client.get(url)

    try:
        start = time.perf_counter()
        with ThreadPoolExecutor(count) as pool:
            responses = list(pool.map(send, clients))
        elapsed = time.perf_counter() - start
    finally:
        for client in clients:
            client.close()
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    return elapsed, [r.json() for r in responses]


def in_flight(metrics_url: str | None, client: httpx.Client | None = None) -> float:
    """The requests inside the app now, every worker's, read at `metrics_url` (a target's metrics
    port, which does not count its own scrape); `client`: one made before, for reads in a loop."""
    text = (client or httpx).get(metrics_url or "", timeout=30).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    return sum(s.value for s in families["lab_http_requests_in_flight"].samples)


def intervals(bodies: list[dict[str, Any]]) -> list[tuple[float, float]]:
    return [(body["started_at"], body["finished_at"]) for body in bodies]
