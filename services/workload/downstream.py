"""The downstream call: a target asks the lab's mock downstream service (a target itself) to wait
on its /test/io-bound, over real HTTP, with the client its users would use: an async one on an
event loop, a blocking one in sync, gevent and gthread workers.

A failed call (refused, timed out, not 2xx) raises httpx.HTTPError; each target answers it 502
with `workload.errors.downstream_failure`.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from measure.waits import waits_yield
from workload.io import MAX_IO_MILLISECONDS
from workload.paths import io_path
from workload.timing import Stopwatch, Timed

# The longest wait the mock may be asked for, and room for it to answer under load.
TIMEOUT_S = MAX_IO_MILLISECONDS / 1000 + 30
_MOCK_WAIT = io_path("io-bound")


def async_client(base_url: str) -> httpx.AsyncClient:
    """One pooled client for the process; no connection cap, the lab measures the server."""
    return httpx.AsyncClient(
        base_url=base_url,
        timeout=TIMEOUT_S,
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
    )


def blocking_client(base_url: str, connections: int) -> httpx.Client:
    """One pooled client per worker process, with a connection for each request the worker holds
    at once (a sync worker makes one call at a time; greenlets and gthread's threads, several)."""
    return httpx.Client(
        base_url=base_url,
        timeout=TIMEOUT_S,
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=min(connections, 100)),
    )


@dataclass(frozen=True)
class DownstreamResult(Timed):
    milliseconds: int
    downstream: dict[str, object]  # the mock's own work response


async def wait_async(client: httpx.AsyncClient, milliseconds: int) -> httpx.Response:
    """The mock's answer after it waited `milliseconds`; raises httpx.HTTPError if the call failed."""
    answer = await client.get(_MOCK_WAIT.format(milliseconds=milliseconds))
    return answer.raise_for_status()


def wait_blocking(client: httpx.Client, milliseconds: int) -> httpx.Response:
    """The mock's answer after it waited `milliseconds`; raises httpx.HTTPError if the call failed."""
    return client.get(_MOCK_WAIT.format(milliseconds=milliseconds)).raise_for_status()


async def call_async(client: httpx.AsyncClient, milliseconds: int) -> DownstreamResult:
    watch = Stopwatch(measure_cpu=False)  # the call awaits: other requests run meanwhile
    answer = await wait_async(client, milliseconds)
    return DownstreamResult(**watch.timing(), milliseconds=milliseconds, downstream=answer.json())


def call_blocking(client: httpx.Client, milliseconds: int) -> DownstreamResult:
    # The blocking client's CPU is this thread's, unless its socket waits yield (gevent).
    watch = Stopwatch(measure_cpu=not waits_yield())
    answer = wait_blocking(client, milliseconds)
    return DownstreamResult(**watch.timing(), milliseconds=milliseconds, downstream=answer.json())
