"""A team's own app at its barest: a WSGI callable and an ASGI callable, no framework and nothing
of the lab. The tests copy this file into a temporary folder on PYTHONPATH and serve it with
`python -m serve team`. Each path answers the CPU it burned, measured by the app itself on its
thread's clock around each of its CPU parts (never across a wait), and its pid.

    /cpu?ms=N                burn N ms of CPU (a fraction allowed)
    /wait?ms=N               wait N ms (time.sleep; asyncio.sleep in the ASGI app)
    /mixed?cpu_ms=C&wait_ms=W  burn C/2, wait W, burn C/2
    /skewed?ms=N&every=E&times=X  burn N ms, but X times N on every E-th request the process gets: a
                             skewed spread, whose mean is above its median
    /offload?ms=N            answer at once; a thread the app started at import burns N ms for it
                             later (at most OFFLOADED requests queued, the rest dropped): CPU spent
                             for a request that no middleware can give it
    /cold?ms=N&first=F       burn F ms on the process's first /cold request (a path's one-time
                             costs: imports, templates, caches), N ms on each later one
    /collect                 a full garbage collection (gc.collect()): the CPU it took
    /boom                    raise
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs


def burn(milliseconds: float) -> float:
    """CPU work until this thread's clock has advanced `milliseconds`; the seconds it used."""
    start = time.thread_time()
    goal = start + milliseconds / 1000
    state = 1
    while time.thread_time() < goal:
        for _ in range(1000):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
    return time.thread_time() - start


_requests_seen = itertools.count(1)  # this process's /skewed requests


def _skewed(query: dict[str, float]) -> float:
    heavy = next(_requests_seen) % int(query["every"]) == 0
    return burn(query["ms"] * (query["times"] if heavy else 1))


_cold_paid = False  # this process's first /cold request is behind it


def _cold(query: dict[str, float]) -> float:
    global _cold_paid
    first, _cold_paid = not _cold_paid, True
    return burn(query["first"] if first else query["ms"])


OFFLOADED = 50
_offloaded: queue.Queue[float] = queue.Queue(OFFLOADED)


def _consume() -> None:
    while True:
        burn(_offloaded.get())


threading.Thread(target=_consume, name="bare-app-consumer", daemon=True).start()


def _offload(milliseconds: float) -> bytes:
    with contextlib.suppress(queue.Full):  # the consumer is behind: this request's work is dropped
        _offloaded.put_nowait(milliseconds)
    return _answer(0.0)


def _collect() -> float:
    start = time.thread_time()
    gc.collect()
    return time.thread_time() - start


def _query(query: str) -> dict[str, float]:
    return {key: float(values[-1]) for key, values in parse_qs(query).items()}


def _answer(cpu_s: float) -> bytes:
    return json.dumps({"cpu_s": cpu_s, "pid": os.getpid()}).encode()


def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path, query = environ["PATH_INFO"], _query(environ.get("QUERY_STRING", ""))
    if path == "/cpu":
        cpu_s = burn(query["ms"])
    elif path == "/wait":
        time.sleep(query["ms"] / 1000)
        cpu_s = 0.0
    elif path == "/mixed":
        cpu_s = burn(query["cpu_ms"] / 2)
        time.sleep(query["wait_ms"] / 1000)
        cpu_s += burn(query["cpu_ms"] / 2)
    elif path == "/skewed":
        cpu_s = _skewed(query)
    elif path == "/cold":
        cpu_s = _cold(query)
    elif path == "/collect":
        cpu_s = _collect()
    elif path == "/offload":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [_offload(query["ms"])]
    elif path == "/boom":
        raise RuntimeError("the app failed")
    else:
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [b"{}"]
    start_response("200 OK", [("Content-Type", "application/json")])
    return [_answer(cpu_s)]


async def asgi(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    path, query = scope["path"], _query(scope["query_string"].decode())
    status, body = 200, b""
    if path == "/cpu":
        body = _answer(burn(query["ms"]))
    elif path == "/wait":
        await asyncio.sleep(query["ms"] / 1000)
        body = _answer(0.0)
    elif path == "/mixed":
        cpu_s = burn(query["cpu_ms"] / 2)
        await asyncio.sleep(query["wait_ms"] / 1000)
        body = _answer(cpu_s + burn(query["cpu_ms"] / 2))
    elif path == "/skewed":
        body = _answer(_skewed(query))
    elif path == "/cold":
        body = _answer(_cold(query))
    elif path == "/collect":
        body = _answer(_collect())
    elif path == "/offload":
        body = _offload(query["ms"])
    elif path == "/boom":
        raise RuntimeError("the app failed")
    else:
        status, body = 404, b"{}"
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": body})
