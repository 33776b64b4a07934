"""A tight release: n requests leave within microseconds of each other, on connections opened first.

Every connection is open (TCP handshake done, the server's accept queue or worker holding it)
before the release; then the n requests are written in one loop with nothing awaited in between,
so the server sees them together and the burst measures the server, not the client's connection
setup (with a client per request and lazy connects, I/O bursts took ~50 ms to leave). Responses
are parsed with h11. Measured here: the release is judged by the servers' own start times (see
analyse.py: release offset and start spread).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import h11

from labtester.control import classify_error
from labtester.servertiming import ServerTiming, from_headers
from labtester.traffic import Outgoing

READ_CHUNK = 65536


@dataclass(frozen=True)
class Reply:
    """One request of a burst, with the server's own account when it answered: its Server-Timing
    header (None where the response had none) and its JSON body (the lab's endpoints)."""

    sent_at: float  # client epoch seconds: its bytes were written
    received_at: float  # client epoch seconds: the whole response (or the failure) arrived
    status: int | None  # None: no HTTP response at all
    error: str | None  # failure type; None on a 2xx answer
    body: dict[str, Any] | None
    cpu_s: float | None = None
    app_s: float | None = None
    pid: int | None = None
    started_at: float | None = None  # server epoch seconds
    client: int = 0  # the client (of P) that sent it
    queued_s: float | None = None  # of app_s, the server's threads' time on a run queue for a core
    elsewhere_s: float | None = None  # of cpu_s, what ran off the request's own thread
    collections: int | None = None  # the full collections its process had run so far, as it answered
    collections_cpu_s: float | None = None  # their CPU

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _request_bytes(connection: h11.Connection, host: str, request: Outgoing) -> bytes:
    headers = [("Host", host), ("Connection", "close"), *request.headers]
    if request.body or request.method not in ("GET", "HEAD"):
        headers.append(("Content-Length", str(len(request.body))))
    wire = connection.send(h11.Request(method=request.method, target=request.target, headers=headers)) or b""
    if request.body:
        wire += connection.send(h11.Data(data=request.body)) or b""
    return wire + (connection.send(h11.EndOfMessage()) or b"")


async def _read_response(
    reader: asyncio.StreamReader, connection: h11.Connection
) -> tuple[int, dict[str, Any] | None, ServerTiming]:
    status, body, timing = 0, bytearray(), ServerTiming()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(await reader.read(READ_CHUNK))
        elif isinstance(event, h11.Response):
            status, timing = event.status_code, from_headers(event.headers)
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    return status, parsed if isinstance(parsed, dict) else None, timing


class _Open:
    """One connection of the burst: opened before the release, closed after its reply."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client: int) -> None:
        self.reader, self.writer, self.client = reader, writer, client
        self.http = h11.Connection(our_role=h11.CLIENT)
        self.sent_at = 0.0

    async def reply(self, deadline: float) -> Reply:
        """Read the response, then close at once: a server that lingers for the client's close
        before taking its next connection (gunicorn's sync worker, up to 2 s) must not wait."""
        try:
            status, body, timing = await asyncio.wait_for(
                _read_response(self.reader, self.http), max(0.0, deadline - time.monotonic())
            )
        except (OSError, TimeoutError, h11.ProtocolError, asyncio.IncompleteReadError) as error:
            return Reply(self.sent_at, time.time(), None, classify_error(error), None, self.client)
        finally:
            await self.close()
        received_at = time.time()
        failure = None if 200 <= status < 300 else f"HTTP {status}"
        return Reply(self.sent_at, received_at, status, failure, body, **asdict(timing), client=self.client)

    async def close(self) -> None:
        if self.writer.is_closing():
            return
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def release(
    url: str,
    n: int,
    timeout_s: float,
    client: int = 0,
    ready: Callable[[], object] | None = None,
    request: Outgoing | None = None,
) -> tuple[float, list[Reply]]:
    """Open n connections to `url`'s server, then send one request on each at once: `request`
    (a team's, its method, headers and body), else a GET of `url`.

    `ready` runs once every connection is open, just before the release: with several clients, the
    barrier every client meets there (its answer is the release). Returns the release instant
    (client epoch seconds, just before the first byte is written) and the n replies in the order
    sent. A connection that cannot be opened is a failed request.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    request = request or Outgoing.get(parts.path + (f"?{parts.query}" if parts.query else ""))
    opened = await asyncio.gather(
        *(asyncio.open_connection(host, port) for _ in range(n)), return_exceptions=True
    )
    connections = [_Open(*pair, client) if not isinstance(pair, BaseException) else pair for pair in opened]
    try:
        if ready is not None:
            ready()
        deadline = time.monotonic() + timeout_s
        release_at = time.time()
        for connection in connections:  # nothing awaited in this loop: all leave together
            if isinstance(connection, _Open):
                connection.writer.write(_request_bytes(connection.http, parts.netloc, request))
                connection.sent_at = time.time()
        replies = await asyncio.gather(
            *(
                c.reply(deadline) if isinstance(c, _Open) else _failed(c, release_at, client)
                for c in connections
            )
        )
    finally:
        await asyncio.gather(*(c.close() for c in connections if isinstance(c, _Open)))
    return release_at, list(replies)


async def _failed(error: BaseException, at: float, client: int) -> Reply:
    return Reply(at, time.time(), None, classify_error(error), None, client)
