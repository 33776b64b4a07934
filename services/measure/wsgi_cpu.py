"""WSGI middleware: each request's CPU (its thread's clock under sync and gthread workers, its
greenlets' under gevent, see measure.greencpu; work it hands to pools and threads, see
measure.handover), wall time and pid in its Server-Timing header, and the same figures in
/metrics.

The app's start_response is held until the app has returned (or yielded its first body chunk),
so the header holds everything the request did up to then; /metrics gets the same figures at that
moment, before the client can have the response. The body's sending (the app's steps producing
its later chunks, and the server's writes of every chunk on this thread) and its close are counted
into the process's total of CPU charged to requests (a lab control request's into the lab's own,
measure.requestcpu), and its parts into the process's count of them. A file the app answers with
`wsgi.file_wrapper` stays the server's file wrapper, so gunicorn still sends it with sendfile. An
app that raises before its headers went out gets a 500 here, with the header, counted like any
response; the error is logged, the worker goes on. One that raises a BaseException (GreenletExit,
gevent.Timeout, SystemExit) ends its request here too, and the exception goes on.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from contextvars import Token
from types import TracebackType
from typing import Any, Protocol

from measure.greencpu import GreenletMeter
from measure.handover import meter_handovers
from measure.observers import request_answered, request_ended, request_started
from measure.requestcpu import ACCOUNT, RequestAccount, is_control, queued_since, run_queue_s
from measure.servertiming import HEADER, ROUTE_KEY, RouteLabels, timing_value, with_timing
from measure.waits import waits_yield

ExcInfo = tuple[type[BaseException], BaseException, TracebackType] | tuple[None, None, None]
Headers = list[tuple[str, str]]
StartResponse = Callable[..., Callable[[bytes], object]]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

log = logging.getLogger(__name__)
_ERROR_BODY = b"Internal Server Error"


class Meter(Protocol):
    def begin(self) -> RequestAccount: ...
    def pause(self, account: RequestAccount) -> None: ...
    def resume(self, account: RequestAccount) -> None: ...
    def end(self, account: RequestAccount) -> None: ...


class ThreadMeter:
    """Sync and gthread workers: a request has its thread to itself while it runs, and between two
    of them the thread runs the server's own code only (finishing the last response, reading and
    parsing the next request): its CPU meanwhile is the server's cost of the next request
    (`RequestAccount.server_s`). A request that costs the server more than an empty one (a longer
    body, more headers, caches the app's code evicted) shows it there: httpbin's /json and /html
    under gthread cost it 0.27 to 0.34 ms a request, /healthz 0.21 to 0.26 (psutil, load 4 to 10)."""

    def __init__(self) -> None:
        self._thread = threading.local()  # `ended`: the thread's CPU clock as its last request ended

    def begin(self) -> RequestAccount:
        now = time.thread_time()
        account = RequestAccount(running_since=now)
        ended: float | None = getattr(self._thread, "ended", None)
        if ended is not None:
            account.server_s = max(0.0, now - ended)
        return account

    def pause(self, account: RequestAccount) -> None:
        if account.running_since is not None:
            account.cpu_s += time.thread_time() - account.running_since
            account.running_since = None

    def resume(self, account: RequestAccount) -> None:
        if account.running_since is None:
            account.running_since = time.thread_time()

    def end(self, account: RequestAccount) -> None:
        self.pause(account)
        self._thread.ended = time.thread_time()


def worker_meter() -> Meter:
    """Per greenlet where waits switch greenlets (a gevent worker, patched), else per thread, with
    what requests hand to pools and threads counted to them."""
    if waits_yield():
        return GreenletMeter()
    meter_handovers()
    return ThreadMeter()


class _Response:
    """The app's start_response, held until `send`."""

    __slots__ = (
        *("account", "environ", "headers", "routes", "sent", "server_start"),
        *("queued_at", "server_write", "started", "started_at", "status_line", "threads_apart"),
    )

    def __init__(
        self,
        environ: dict[str, Any],
        start_response: StartResponse,
        account: RequestAccount,
        routes: RouteLabels,
        started: tuple[float, float],
        threads_apart: bool = True,
    ) -> None:
        self.environ, self.server_start, self.account, self.routes = environ, start_response, account, routes
        self.started_at, self.started = started  # the epoch and the clock the app's time runs on
        # Where a request's work in pools runs in threads of their own (not greenlets of the one
        # thread, whose split between the request's and the pool's is no place): said apart.
        self.threads_apart = threads_apart
        self.queued_at = run_queue_s()  # the request's thread (a gevent worker's one thread)
        self.status_line: str | None = None
        self.headers: Headers = []
        self.sent = False
        self.server_write: Callable[[bytes], object] | None = None

    def start_response(
        self, status: str, headers: Headers, exc_info: ExcInfo | None = None
    ) -> Callable[[bytes], object]:
        if self.sent and exc_info and exc_info[1] is not None:
            raise exc_info[1].with_traceback(exc_info[2])  # PEP 3333: too late to change them
        self.status_line, self.headers = status, headers
        return self.write

    def write(self, data: bytes) -> object:
        """The legacy write(): the headers go first."""
        if not self.sent:
            self.send()
        assert self.server_write is not None
        return self.server_write(data)

    def send(self) -> None:
        """Hand the headers to the server with the figures up to now, which /metrics gets too:
        before the client can have the response, so a count read after it holds the request."""
        if self.status_line is None:
            raise RuntimeError("the app returned without calling start_response")
        own_s, elsewhere_s = self.account.split_s()
        cpu_s, app_s = own_s + elsewhere_s, time.perf_counter() - self.started
        environ = self.environ
        path, query = environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", "")
        route = self.routes.label(environ.get(ROUTE_KEY), path, query)
        request_answered(
            environ["REQUEST_METHOD"], route, int(self.status_line.partition(" ")[0]), app_s, cpu_s
        )
        queued = queued_since(self.queued_at)
        queued = None if queued is None else queued + self.account.queued_s
        elsewhere = elsewhere_s if self.threads_apart else None
        timing = timing_value(cpu_s, app_s, os.getpid(), self.started_at, queued, elsewhere)
        self.sent = True
        self.server_write = self.server_start(
            self.status_line, with_timing(self.headers, HEADER, timing, ", ")
        )

    def fail(self) -> list[bytes]:
        """A 500 in place of whatever the app had not sent yet."""
        self.status_line = "500 Internal Server Error"
        self.headers = [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(_ERROR_BODY))),
        ]
        self.send()
        return [_ERROR_BODY]


class _Request:
    """The request's measurement from the headers on: the app's later steps counted, `finish`
    (once) ends it."""

    __slots__ = ("account", "finished", "meter", "token")

    def __init__(self, meter: Meter, account: RequestAccount, token: Token[RequestAccount | None]) -> None:
        self.meter, self.account, self.token = meter, account, token
        self.finished = False

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self.meter.end(self.account)
        with suppress(ValueError):  # closed from another context than the request's: nothing to undo
            ACCOUNT.reset(self.token)
        request_ended()
        self.account.close()


class _Body:
    """The response body as the server iterates it: the server's writes of its chunks and the app's
    steps making the later ones counted; `close` ends the request's measurement."""

    __slots__ = ("first", "request", "rest", "result")

    def __init__(self, first: list[bytes], rest: Iterator[bytes], result: object, request: _Request) -> None:
        self.first, self.rest, self.result, self.request = first, rest, result, request

    def __iter__(self) -> Iterator[bytes]:
        meter, account = self.request.meter, self.request.account
        meter.resume(account)
        try:
            for chunk in itertools.chain(self.first, self.rest):
                account.chunks += 1
                yield chunk
        except GeneratorExit:  # as `yield from` would: the app's iterator is closed with this one
            if (close := getattr(self.rest, "close", None)) is not None:
                close()
            raise
        finally:
            meter.pause(account)

    def close(self) -> None:
        try:
            close = getattr(self.result, "close", None)
            if close is not None:
                self.request.meter.resume(self.request.account)  # the app's close is its own work
                close()
        finally:
            self.request.finish()


class _ClosingFile:
    """The app's file, as the server's file wrapper holds it: everything the file's, and its close
    also ends the request's measurement."""

    def __init__(self, wrapper: Any, request: _Request) -> None:
        self._wrapper, self._request = wrapper, request

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapper.filelike, name)

    def close(self) -> None:
        try:
            close = getattr(self._wrapper, "close", None)
            if close is not None:
                close()
        finally:
            self._request.finish()


class WsgiCpuMiddleware:
    """Wraps a WSGI app. `paths`: the paths the lab was told about (route labels, LAB_APP_PATHS)."""

    def __init__(self, app: WSGIApp, paths: Iterable[str] = ()) -> None:
        self.app = app
        self.routes = RouteLabels(paths)
        self._meter: Meter | None = None  # chosen at the first request: gevent patches the worker first

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        meter = self._meter or self._first_meter()
        # Before the CPU clock starts (the app's time holds its CPU), the epoch read beside it: read
        # after the account was set up, a worker preempted in between stamped its call up to 10 ms
        # late (a client on the same clock had the answer "before" the app's headers).
        started = time.time(), time.perf_counter()
        account = meter.begin()
        account.control = is_control(environ.get("PATH_INFO", ""))
        request = _Request(meter, account, ACCOUNT.set(account))
        threads_apart = not isinstance(meter, GreenletMeter)
        response = _Response(environ, start_response, account, self.routes, started, threads_apart)
        request_started()
        file_wrapper = environ.get("wsgi.file_wrapper")
        result: Iterable[bytes] | None = None
        try:
            result = self.app(environ, response.start_response)
            if isinstance(file_wrapper, type) and isinstance(result, file_wrapper):
                if not response.sent:
                    response.send()
                meter.pause(account)  # the server sends the file (sendfile): its work, not the app's
                blksize = getattr(result, "blksize", 8192)
                return file_wrapper(_ClosingFile(result, request), blksize)  # type: ignore[no-any-return]
            chunks = iter(result)
            first = []
            for chunk in chunks:  # a generator app calls start_response in its first step
                first.append(chunk)
                break
            if not response.sent:
                response.send()
            meter.pause(account)
        except Exception:
            if response.sent:
                _Body([], iter(()), result, request).close()
                raise  # the response is under way: the server ends it and logs the error
            log.exception(
                "%s %s: the app raised; answered 500", environ["REQUEST_METHOD"], environ["PATH_INFO"]
            )
            body = response.fail()
            meter.pause(account)
            return _Body(body, iter(()), result, request)
        except BaseException:  # GreenletExit, gevent.Timeout, SystemExit: the request ends here
            _Body([], iter(()), result, request).close()
            raise
        return _Body(first, chunks, result, request)

    def _first_meter(self) -> Meter:
        self._meter = worker_meter()
        return self._meter
