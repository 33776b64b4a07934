"""The control calls to targets (httpx: /info, the census, calibration, the scrapes), and failures
classified by type, as Locust reports them (the load connections, load.py, classify theirs here too)."""

from __future__ import annotations

import errno
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
