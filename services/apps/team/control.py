"""The lab's control paths, served ahead of the app with the contract every target honours:
/healthz, /info, /test/calibrate (the kernel), /test/resmon (census), /metrics. Every other path
goes to the app. One answer for both interfaces; the ASGI and WSGI adapters only carry it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from measure.servertiming import ROUTE_KEY
from measure.wsgi_cpu import StartResponse, WSGIApp
from workload import paths
from workload.census import take_census
from workload.errors import InvalidInput, bounded_int
from workload.exposition import exposition
from workload.kernel import MAX_CALIBRATE_SAMPLES
from workload.metrics import counted_calibration

JSON = "application/json"
_READ_METHODS = ("GET", "HEAD")


MAX_CHUNKS = 1000  # /healthz?chunks=N: an empty streamed body, the server's cost per part measured on it


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    content_type: str
    body: bytes
    chunks: int = 1  # the body sent as this many parts, each `body` (a stream: no length)


def _json(body: object, status: int = 200, reason: str = "OK") -> Answer:
    return Answer(status, reason, JSON, json.dumps(body).encode())


class ControlPaths:
    """Answers the control paths; None for every other path (the app's)."""

    def __init__(self, info: dict[str, object], reload: bool) -> None:
        self.info = info
        self.reload = reload
        self.handlers = {
            paths.HEALTH: self._health,
            paths.INFO: lambda query: _json(self.info),
            paths.CALIBRATE: self._calibrate,
            paths.CENSUS: lambda query: _json(take_census(self.reload).as_dict()),
            paths.METRICS: self._metrics,
        }

    def answer(self, method: str, path: str, query: str) -> Answer | None:
        handler = self.handlers.get(path)
        if handler is None:
            return None
        if method not in _READ_METHODS:
            return _json({"detail": "Method Not Allowed"}, 405, "Method Not Allowed")
        return handler(query)

    def _health(self, query: str) -> Answer:
        """`ok`; with `chunks=N`, N parts of `ok` streamed (the server's cost of each part)."""
        chunks = parse_qs(query).get("chunks")
        if chunks is None:
            return _json({"status": "ok"})
        try:
            count = bounded_int(chunks[-1], ["query", "chunks"], 1, MAX_CHUNKS)
        except InvalidInput as error:
            return _json(error.body, 422, "Unprocessable Entity")
        return Answer(200, "OK", "text/plain", b"ok\n", count)

    def _metrics(self, query: str) -> Answer:
        body, content_type = exposition(self.reload)
        return Answer(200, "OK", content_type, body)

    def _calibrate(self, query: str) -> Answer:
        samples = parse_qs(query).get("samples", ["1"])[-1]
        try:
            count = bounded_int(samples, ["query", "samples"], 1, MAX_CALIBRATE_SAMPLES)
        except InvalidInput as error:
            return _json(error.body, 422, "Unprocessable Entity")
        return _json(counted_calibration(count))


class AsgiControl:
    """The control paths ahead of an ASGI app."""

    def __init__(self, app: Any, control: ControlPaths) -> None:
        self.app = app
        self.control = control

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        answer = None
        if scope["type"] == "http":
            query = scope["query_string"].decode("latin-1")
            answer = self.control.answer(scope["method"], scope["path"], query)
        if answer is None:
            await self.app(scope, receive, send)
            return
        scope[ROUTE_KEY] = scope["path"]
        headers = [(b"content-type", answer.content_type.encode())]
        if answer.chunks == 1:
            headers.append((b"content-length", b"%d" % len(answer.body)))
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        for part in range(answer.chunks, 0, -1):
            await send({"type": "http.response.body", "body": answer.body, "more_body": part > 1})


class WsgiControl:
    """The control paths ahead of a WSGI app."""

    def __init__(self, app: WSGIApp, control: ControlPaths) -> None:
        self.app = app
        self.control = control

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        answer = self.control.answer(environ["REQUEST_METHOD"], path, environ.get("QUERY_STRING", ""))
        if answer is None:
            return self.app(environ, start_response)
        environ[ROUTE_KEY] = path
        headers = [("Content-Type", answer.content_type)]
        if answer.chunks == 1:
            headers.append(("Content-Length", str(len(answer.body))))
        start_response(f"{answer.status} {answer.reason}", headers)
        return [answer.body] if answer.chunks == 1 else _streamed(answer)


def _streamed(answer: Answer) -> Iterator[bytes]:
    """A streamed body's parts, one at a time as an app's generator gives them (a list, a server
    may join)."""
    for _ in range(answer.chunks):
        yield answer.body
