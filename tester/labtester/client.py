"""HTTP calls to targets (httpx) and failures classified by type, as Locust reports them."""

from __future__ import annotations

import errno
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx


def classify_error(error: BaseException) -> str:
    """A short, stable name for why a request failed."""
    if isinstance(error, httpx.TimeoutException):
        return "timeout"
    if isinstance(error, httpx.RemoteProtocolError):
        return "remote disconnected"
    cause: BaseException | None = error
    while cause is not None:  # httpx wraps the OSError that says what really happened
        if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(cause, ConnectionResetError) or getattr(cause, "errno", None) == errno.ECONNRESET:
            return "connection reset"
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, httpx.ConnectError):
        return "connection refused"
    if isinstance(error, httpx.ReadError | httpx.WriteError):
        return "connection reset"
    return type(error).__name__


@dataclass
class Observation:
    """One request as the tester saw it, with the server's own account when it answered."""

    url: str
    status: int | None  # None: no HTTP response at all
    error: str | None  # failure type; None on a 2xx answer
    sent_at: float  # client epoch seconds
    latency_s: float  # client-side, from `sent_at` to the last byte (or the failure)
    body: dict[str, Any] | None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def observe(client: httpx.AsyncClient, url: str) -> Observation:
    sent_at, start = time.time(), time.perf_counter()
    try:
        response = await client.get(url)
    except httpx.HTTPError as error:
        return Observation(url, None, classify_error(error), sent_at, time.perf_counter() - start, None)
    latency = time.perf_counter() - start
    try:
        body = response.json()
    except ValueError:
        body = None
    error = None if response.is_success else f"HTTP {response.status_code}"
    return Observation(
        url, response.status_code, error, sent_at, latency, body if isinstance(body, dict) else None
    )


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
