"""The control calls to targets (httpx: /info, the census, calibration, the scrapes), the clients
that make them, and failures classified by type, as Locust reports them (the load connections,
load.py, classify theirs here too)."""

from __future__ import annotations

import errno
import time
from typing import Any

import aiohttp
import h11
import httpx

from labtester.connections import RemoteDisconnected

# What an errno says, in the words a report uses.
_ERRNO_NAMES = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EPIPE: "connection reset",
    errno.EMFILE: "client out of file descriptors",
}


def classify_error(error: BaseException) -> str:
    """A short, stable name for why a request failed, for httpx and aiohttp alike."""
    if isinstance(error, httpx.TimeoutException | aiohttp.ServerTimeoutError | TimeoutError):
        return "timeout"
    if isinstance(
        error,
        httpx.RemoteProtocolError
        | aiohttp.ServerDisconnectedError
        | h11.RemoteProtocolError
        | RemoteDisconnected,
    ):
        return "remote disconnected"  # the server closed the connection before a whole response
    cause: BaseException | None = error
    while cause is not None:  # the libraries wrap the OSError that says what really happened
        code = getattr(cause, "errno", None) or getattr(getattr(cause, "os_error", None), "errno", None)
        if code in _ERRNO_NAMES:
            return _ERRNO_NAMES[code]
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, httpx.ConnectError | aiohttp.ClientConnectorError):
        return "connection refused"
    if isinstance(error, httpx.ReadError | httpx.WriteError | aiohttp.ClientOSError):
        return "connection reset"
    if isinstance(error, aiohttp.ClientPayloadError):
        return "remote disconnected"
    return type(error).__name__


# Methods sent once more when a kept-alive connection turns out closed: they change nothing.
_RESENT = frozenset({"GET", "HEAD", "OPTIONS"})
# How a connection the server closed as the request went out ends it, before any response: closed
# cleanly, or reset (the request's bytes were in the socket when it closed), on the read or the write.
_CLOSED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
# Such a close ends the request at once; one that ended later had run (a worker killed by its
# timeout mid-request), and is not sent again.
RESEND_WITHIN_S = 1.0


def _resent(request: httpx.Request, sent: float) -> bool:
    """Whether a request that met a closed connection (sent at monotonic `sent`) goes once more."""
    return request.method in _RESENT and time.monotonic() - sent <= RESEND_WITHIN_S


class _ResendOnClosed(httpx.BaseTransport):
    """httpx's transport, sending a GET once more, on a new connection, where the server closed the
    kept-alive one as the request went out, before any response. gunicorn's workers close a
    connection idle for `keepalive` (2 s); the serving cost's scrape, 2 s after the census read on
    its connection, was lost to it 2 to 3 times in 60 on gevent, and with it the serving cost's
    measured parts (a conservation share of 0.51); none in 60 with it. (Given a transport, httpx
    reads no proxy from the environment: the lab's targets are reached directly.)"""

    def __init__(self) -> None:
        self._transport = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        sent = time.monotonic()
        try:
            return self._transport.handle_request(request)
        except _CLOSED:
            if not _resent(request, sent):
                raise
            return self._transport.handle_request(request)

    def close(self) -> None:
        self._transport.close()


class _AsyncResendOnClosed(httpx.AsyncBaseTransport):
    """_ResendOnClosed for an httpx.AsyncClient."""

    def __init__(self) -> None:
        self._transport = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = time.monotonic()
        try:
            return await self._transport.handle_async_request(request)
        except _CLOSED:
            if not _resent(request, sent):
                raise
            return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._transport.aclose()


def control_client(timeout_s: float) -> httpx.Client:
    """A client for control calls: its GETs survive a kept-alive connection the server closed."""
    return httpx.Client(timeout=timeout_s, transport=_ResendOnClosed())


def async_control_client(timeout_s: float) -> httpx.AsyncClient:
    """control_client() for asyncio."""
    return httpx.AsyncClient(timeout=timeout_s, transport=_AsyncResendOnClosed())


class TargetError(RuntimeError):
    """A control call to a target failed: names the target, the URL and the failure type."""


def get_json(client: httpx.Client, url: str) -> dict[str, Any]:
    try:
        response = client.get(url)
        response.raise_for_status()
        body = response.json()
    except httpx.HTTPStatusError as error:
        raise TargetError(f"{url}: HTTP {error.response.status_code}") from error
    except httpx.HTTPError as error:
        raise TargetError(f"{url}: {classify_error(error)}") from error
    if not isinstance(body, dict):
        raise TargetError(f"{url}: expected a JSON object")
    return body
