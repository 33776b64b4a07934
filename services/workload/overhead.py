"""`python -m workload.overhead`: what the CPU middleware adds to each request, measured in-process.
(Here, beside the metrics it records, so the measure package imports nothing of workload.)

The same small app is called directly, bare and wrapped (measure.asgi_cpu, measure.wsgi_cpu),
many times in alternating rounds, so both meet the same machine. Each round is timed on this
thread's CPU clock, so a neighbour that takes the core between calls does not count. The figure is
the median wrapped call minus the median bare call, in microseconds of CPU, with the metrics
written as the servers write them (prometheus_client's multiprocess files); `metrics_us` is what
recording them costs alone (the lab's targets recorded all but the CPU histogram before too).

Each app gives up its thread once per request, as one that waits for its body or a database does:
an `await asyncio.sleep(0)` on the event loop, a greenlet switch under gevent (the switch tracer is
removed for the bare rounds, which would otherwise pay for it too); a sync worker's request has
its thread to itself. gevent runs in a child process that patches first. Prints one JSON line:
{"asgi": {"bare_us", "wrapped_us", "overhead_us", "metrics_us"}, "wsgi": {...}, "gevent": {...}}.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import greenlet

from measure import requestcpu
from measure.asgi_cpu import AsgiCpuMiddleware
from measure.wsgi_cpu import WsgiCpuMiddleware

# The metrics as the servers record them: imported in a process whose PROMETHEUS_MULTIPROC_DIR
# was set before it started (main runs the measurements so), as a server's workers are.
from workload.metrics import IN_FLIGHT, observe_request

ROUNDS = 15
CALLS = 1000
# The gevent measurement's process: patched before anything else is imported, as a gevent worker.
PATCHED_FIRST = (
    "from gevent import monkey; monkey.patch_all(); import runpy, sys; sys.argv = ['overhead', 'gevent']; "
    "runpy.run_module('workload.overhead', run_name='__main__')"
)

Call = Callable[[], object]


def _record_metrics() -> None:
    IN_FLIGHT.inc()
    IN_FLIGHT.dec()
    observe_request("GET", "/", 200, 0.001, 0.001)
    requestcpu.charged_sink(0.001)  # the process's total of CPU charged to requests


def compare(bare: Call, wrapped: Call, before: Callable[[bool], None] | None = None) -> dict[str, float]:
    """Alternating rounds of CALLS calls each; `before(wrapped)` runs before each bare and wrapped round."""
    times: dict[str, list[float]] = {"bare_us": [], "wrapped_us": [], "metrics_us": []}
    for _ in range(ROUNDS):
        for name, call in (("bare_us", bare), ("wrapped_us", wrapped), ("metrics_us", _record_metrics)):
            if before is not None and name != "metrics_us":
                before(name == "wrapped_us")
            start = time.thread_time()
            for _ in range(CALLS):
                call()
            times[name].append((time.thread_time() - start) / CALLS * 1e6)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {**medians, "overhead_us": medians["wrapped_us"] - medians["bare_us"]}


def _start_response(status: str, headers: list[tuple[str, str]], exc_info: object = None) -> Call:
    return lambda: None


def _wsgi_call(app: Any) -> Call:
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": ""}

    def call() -> None:
        body = app(dict(environ), _start_response)
        for _ in body:
            pass
        close = getattr(body, "close", None)
        if close is not None:
            close()

    return call


def _wsgi_app(give_up_thread: Callable[[], object]) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        give_up_thread()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app


def measure_wsgi() -> dict[str, float]:
    app = _wsgi_app(lambda: None)
    return compare(_wsgi_call(app), _wsgi_call(WsgiCpuMiddleware(app)))


def measure_asgi() -> dict[str, float]:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await asyncio.sleep(0)
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
        )
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        pass

    scope = {"type": "http", "method": "GET", "path": "/", "query_string": b""}
    wrapped = AsgiCpuMiddleware(app)
    # A loop each: the wrapped app's loop gets the middleware's task factory, the bare one none.
    bare_loop, wrapped_loop = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        return compare(
            lambda: bare_loop.run_until_complete(app(dict(scope), receive, send)),
            lambda: wrapped_loop.run_until_complete(wrapped(dict(scope), receive, send)),
        )
    finally:
        bare_loop.close()
        wrapped_loop.close()


def measure_gevent() -> dict[str, float]:
    """In a gevent-patched process (this one, started with `gevent`)."""
    import gevent  # here: only the process that patched first has a use for it

    app = _wsgi_app(lambda: gevent.sleep(0))  # a switch to the hub and back
    wrapped = _wsgi_call(WsgiCpuMiddleware(app))
    wrapped()  # installs the switch tracer
    tracer = greenlet.gettrace()

    def trace(is_wrapped: bool) -> None:
        greenlet.settrace(tracer if is_wrapped else None)

    return compare(_wsgi_call(app), wrapped, trace)


def main(argv: list[str]) -> None:
    if argv == ["gevent"]:
        print(json.dumps(measure_gevent()))
        return
    if argv == ["unpatched"]:
        print(json.dumps({"asgi": measure_asgi(), "wsgi": measure_wsgi()}))
        return
    with tempfile.TemporaryDirectory(prefix="lab-overhead-") as metrics:
        # As the servers run prometheus_client: set before the measuring processes import it.
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": metrics}
        unpatched = [sys.executable, "-m", "workload.overhead", "unpatched"]
        figures = json.loads(
            subprocess.run(unpatched, capture_output=True, text=True, check=True, env=env).stdout
        )
        green = [sys.executable, "-c", PATCHED_FIRST]
        figures["gevent"] = json.loads(
            subprocess.run(green, capture_output=True, text=True, check=True, env=env).stdout
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1:])
