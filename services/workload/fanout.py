"""Fan-out, as in the seed study: k parallel waits of wait_ms each (standing in for LLM calls),
then one HTTP call to the downstream mock (its /test/io-bound/{call_ms}).

Each stack does it the way its users would: asyncio.gather on an event loop; a thread pool
(concurrent.futures) of blocking waits in sync and gthread workers, which gevent's monkey patching
turns into greenlets in a gevent worker (the same code, its waits overlapping all the same).
The response gives every step's timing, so a reader sees the waits overlap and the call follow.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx

from measure.waits import waits_yield
from workload.downstream import wait_async, wait_blocking
from workload.io import WaitResult, async_wait, blocking_wait
from workload.timing import Stopwatch, Timed, Timing

MAX_FAN_OUT = 32


@dataclass(frozen=True)
class FanOutResult(Timed):
    k: int
    wait_ms: int
    call_ms: int
    steps: list[dict[str, object]]


def _wait_step(index: int, wait: WaitResult) -> dict[str, object]:
    return {
        "step": "wait",
        "index": index,
        "started_at": wait.started_at,
        "finished_at": wait.finished_at,
        "duration_s": wait.duration_s,
    }


def _call_step(timing: Timing, status: int) -> dict[str, object]:
    return {
        "step": "call",
        "started_at": timing["started_at"],
        "finished_at": timing["finished_at"],
        "duration_s": timing["duration_s"],
        "status": status,
    }


async def fan_out_async(k: int, wait_ms: int, call_ms: int, client: httpx.AsyncClient) -> FanOutResult:
    """The downstream call through `client` (workload.downstream); raises httpx.HTTPError if it failed.

    Everything here awaits, so its CPU is not measured (cpu_s 0.0)."""
    watch = Stopwatch(measure_cpu=False)
    waits = await asyncio.gather(*(async_wait(wait_ms) for _ in range(k)))
    call_watch = Stopwatch(measure_cpu=False)
    status = (await wait_async(client, call_ms)).status_code
    steps = [_wait_step(index, wait) for index, wait in enumerate(waits)]
    steps.append(_call_step(call_watch.timing(), status))
    return FanOutResult(k=k, wait_ms=wait_ms, call_ms=call_ms, steps=steps, **watch.timing())


def fan_out_blocking(k: int, wait_ms: int, call_ms: int, client: httpx.Client) -> FanOutResult:
    """The downstream call through the blocking `client`; raises httpx.HTTPError if it failed.

    cpu_s: this thread's CPU plus each wait thread's own, unless the waits yield (gevent): 0.0."""
    watch = Stopwatch(measure_cpu=not waits_yield())
    with ThreadPoolExecutor(max_workers=k, thread_name_prefix="fan-out") as pool:
        waits = list(pool.map(blocking_wait, [wait_ms] * k))
    call_watch = Stopwatch(measure_cpu=False)
    status = wait_blocking(client, call_ms).status_code
    steps = [_wait_step(index, wait) for index, wait in enumerate(waits)]
    steps.append(_call_step(call_watch.timing(), status))
    cpu_s = watch.cpu_s() + sum(wait.cpu_s for wait in waits)
    return FanOutResult(k=k, wait_ms=wait_ms, call_ms=call_ms, steps=steps, **watch.timing(cpu_s=cpu_s))
