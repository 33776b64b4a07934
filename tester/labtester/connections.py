"""HTTP/1.1 requests on kept-alive connections: asyncio's own protocol and httptools (llhttp),
nothing per request but one write of bytes prepared once (traffic.Outgoing.wire), the parser's
callbacks and one future.

Chosen by measurement (`make bench`: CPU seconds per request of the client itself, beside Locust's
FastHttpUser and wrk on the same endpoint, closed loop at 50): an aiohttp session cost 0.063-0.076
ms per request here, Locust 0.089-0.099, wrk 0.009-0.012; most of aiohttp's went to its request
and response objects, not to the socket. This module keeps only what the load shapes read: the
status, the headers (a team's app reports its work in Server-Timing), and failures by type.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

import httptools


class RemoteDisconnected(ConnectionError):
    """The server closed the connection before a whole response (classify_error's name for it)."""


class _Connection(asyncio.Protocol):
    """One kept-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[tuple[int, dict[str, str]]] | None = None
        self.headers: dict[str, str] = {}
        self.reusable = True
        self.head_only = False  # a HEAD's response: its Content-Length announces no body

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(RemoteDisconnected(f"malformed response: {error}"))

    def on_header(self, name: bytes, value: bytes) -> None:
        key, text = name.decode("latin-1").lower(), value.decode("latin-1")
        self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text  # lines join

    def on_headers_complete(self) -> None:
        # The parser cannot be told the request was HEAD: the answer ends with its headers, and the
        # connection, whose parser would wait for the announced body, is not reused.
        if self.head_only:
            self.reusable = False
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result((self.parser.get_status_code(), self.headers))
            if self.transport is not None:
                self.transport.close()

    def on_message_complete(self) -> None:
        self.reusable = self.parser.should_keep_alive()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result((self.parser.get_status_code(), self.headers))

    def connection_lost(self, error: Exception | None) -> None:
        self.reusable = False
        self._fail(error or RemoteDisconnected("the server closed the connection"))

    def _fail(self, error: BaseException) -> None:
        self.reusable = False
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(error)
        if self.transport is not None:
            self.transport.close()

    def send(self, request: bytes, head_only: bool) -> asyncio.Future[tuple[int, dict[str, str]]]:
        assert self.transport is not None
        self.headers, self.head_only = {}, head_only
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.waiter


class Connections:
    """Requests to one server over a pool of kept-alive connections (as many as requests in flight)."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.netloc = parts.netloc
        self.idle: list[_Connection] = []
        self.open: set[_Connection] = set()

    def _idle(self) -> _Connection | None:
        """A kept-alive connection the server has not closed, if any (the closed ones dropped)."""
        while self.idle:
            connection = self.idle.pop()
            if connection.reusable:
                return connection
            self.open.discard(connection)
        return None

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(_Connection, self.host, self.port)
        self.open.add(connection)
        return connection

    async def send(
        self, request: bytes, timeout_s: float, head_only: bool = False
    ) -> tuple[int, dict[str, str]]:
        """One whole request's bytes written (traffic.Outgoing.wire); the status and headers (names
        in lower case); raises what the failure was."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        # A new connection counts against the request's timeout (a full accept queue can hold a
        # connect for minutes); taking an idle one costs no task.
        connection = self._idle()
        if connection is None:
            connection = await asyncio.wait_for(self._connect(), timeout_s)
        answer = connection.send(request, head_only)
        timer = loop.call_at(deadline, connection._fail, TimeoutError())
        try:
            return await answer
        finally:
            timer.cancel()
            if connection.reusable:
                self.idle.append(connection)
            else:
                self.open.discard(connection)

    def close(self) -> None:
        for connection in self.open:
            if connection.transport is not None:
                with contextlib.suppress(RuntimeError):
                    connection.transport.close()
        self.open.clear()
        self.idle.clear()
