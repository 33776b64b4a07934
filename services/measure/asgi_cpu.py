"""ASGI middleware: each request's CPU (its own task steps, tasks and thread hand-offs; see
measure.asynccpu and measure.handover), wall time and pid in its Server-Timing header, and the
same figures in /metrics.

The response's `http.response.start` is held until the first body message, so the header holds
everything the request did up to then; /metrics gets the same figures at that moment, before the
client can have the response. What the request uses after (a streamed body's later chunks) is in
the process's total of CPU charged to requests, when the app returns (the lab's own control
requests' into a total of their own, measure.requestcpu). An app that raises before
its headers went out gets a 500 here, with the header, counted like any response; the error is
logged, the server goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

from measure.asynccpu import Metered, meter_loop
from measure.observers import request_answered, request_ended, request_started
from measure.requestcpu import ACCOUNT, RequestAccount, is_control, queued_since, run_queue_s
from measure.servertiming import HEADER, RouteLabels, asgi_template, timing_value, with_timing

Scope = dict[str, Any]
Message = dict[str, Any]
ASGIApp = Any  # async (scope, receive, send) -> None; typed loosely, as any framework's app
Send = Any

log = logging.getLogger(__name__)
_HEADER = HEADER.lower().encode()  # ASGI header names are lower case
_ERROR_BODY = b"Internal Server Error"
# The scope of a request already measured by an outer middleware (a scope is one request's).
_MEASURED = "lab.measured"


class _Exchange:
    """The request's `send`, holding the response start until the first body message."""

    __slots__ = (
        *("account", "held", "recorded", "routes", "scope"),
        *("queued_at", "send_server", "sent", "started", "started_at", "status"),
    )

    def __init__(self, scope: Scope, send: Send, account: RequestAccount, routes: RouteLabels) -> None:
        self.scope, self.send_server, self.account, self.routes = scope, send, account, routes
        self.started_at = time.time()
        self.started = time.perf_counter()
        self.queued_at = run_queue_s()  # the event loop's thread
        self.held: Message | None = None
        self.sent = False  # the response start reached the server
        self.recorded = False  # the request is in /metrics
        self.status = 500  # what the server answers when the app sends nothing

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start" and not self.sent:
            self.held, self.status = message, message["status"]
            return
        if message["type"] == "http.response.body":
            self.account.chunks += 1
        if not self.sent and self.held is not None:
            await self.flush()
        await self.send_server(message)

    def record(self) -> tuple[float, float, float]:
        """The request's CPU, app seconds and CPU off the loop's thread up to now, into /metrics:
        before the client can have the response, so a count read after it holds the request."""
        own_s, elsewhere_s = self.account.split_s()
        cpu_s, app_s = own_s + elsewhere_s, time.perf_counter() - self.started
        scope = self.scope
        route = self.routes.label(
            asgi_template(scope), scope["path"], scope["query_string"].decode("latin-1")
        )
        request_answered(scope["method"], route, self.status, app_s, cpu_s)
        self.recorded = True
        return cpu_s, app_s, elsewhere_s

    async def flush(self) -> None:
        """Send the held response start with the figures up to now, the same as /metrics gets."""
        assert self.held is not None
        queued = queued_since(self.queued_at)
        queued = None if queued is None else queued + self.account.queued_s
        cpu_s, app_s, elsewhere_s = self.record()
        timing = timing_value(cpu_s, app_s, os.getpid(), self.started_at, queued, elsewhere_s).encode()
        headers = with_timing(self.held.get("headers", ()), _HEADER, timing, b", ")
        self.sent = True
        await self.send_server({**self.held, "headers": headers})

    async def fail(self) -> None:
        """A 500 in place of whatever the app had not sent yet."""
        self.held, self.status = {"type": "http.response.start", "status": 500}, 500
        self.held["headers"] = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(_ERROR_BODY)).encode()),
        ]
        await self.send({"type": "http.response.body", "body": _ERROR_BODY})


class AsgiCpuMiddleware:
    """Wraps an ASGI app. `paths`: the paths the lab was told about (route labels, LAB_APP_PATHS)."""

    def __init__(self, app: ASGIApp, paths: Iterable[str] = ()) -> None:
        self.app = app
        self.routes = RouteLabels(paths)
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Send) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # the first call (the lifespan's, under uvicorn) of each loop
            meter_loop(loop)
            self._loop = loop
        if scope["type"] != "http" or _MEASURED in scope:  # not a request, or measured outside
            await self.app(scope, receive, send)
            return
        scope[_MEASURED] = True
        account = RequestAccount()
        account.control = is_control(scope["path"])
        token = ACCOUNT.set(account)
        exchange = _Exchange(scope, send, account, self.routes)
        request_started()
        try:
            await self._serve(scope, receive, exchange)
        finally:
            ACCOUNT.reset(token)
            request_ended()
            if not exchange.recorded:  # no response, or cancelled: the server answers it
                exchange.record()
            account.close()

    async def _serve(self, scope: Scope, receive: Any, exchange: _Exchange) -> None:
        try:
            await Metered(self.app(scope, receive, exchange.send), exchange.account)
        except Exception:
            if exchange.sent:
                raise  # the response is under way: the server ends it and logs the error
            log.exception("%s %s: the app raised; answered 500", scope["method"], scope["path"])
            await exchange.fail()
            return
        if not exchange.sent and exchange.held is not None:
            await exchange.flush()  # a start without a body: the server's to judge
