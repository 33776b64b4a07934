"""The work endpoints: CPU work done badly (on the event loop) and well (offloaded), and waits.

Only the CPU routes depend on the server's settings (the iteration cap they validate against),
so they are made by `cpu_router`; the waits are one fixed router.
"""

# No `from __future__ import annotations`: FastAPI reads the Annotated aliases at runtime.

import asyncio
import concurrent.futures
import multiprocessing
import os
import signal
from typing import Annotated

from fastapi import APIRouter, Path, Query

from measure.requestcpu import add_cpu_elsewhere
from workload import io as lab_io
from workload import kernel
from workload.contract import Endpoint, cpu_endpoint, io_endpoint, mixed_endpoint
from workload.errors import DIGITS
from workload.lifetime import die_with_parent
from workload.metrics import counted
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS, mixed_async
from workload.paths import MIXED, cpu_path, io_path

# anyio's default thread limiter: how many plain `def` endpoints run at once.
THREADPOOL_TOKENS = 40

Milliseconds = Annotated[int, DIGITS, Path(ge=0, le=lab_io.MAX_IO_MILLISECONDS, description="Wait time.")]


def endpoints(workers: int, pool_size: int) -> list[Endpoint]:
    """/info's description of these routes: how each runs, and how many requests at once."""
    return [
        cpu_endpoint("sync-cpubound", "event_loop", workers),
        cpu_endpoint("badasync-cpubound", "event_loop", workers),
        cpu_endpoint("offload-cpubound", "process_pool", workers * pool_size),
        cpu_endpoint("thread-cpubound", "thread_pool", workers * THREADPOOL_TOKENS),
        io_endpoint("io-bound", "async", None),
        io_endpoint("badasync-io-bound", "event_loop", workers),
        mixed_endpoint("async", None),
    ]


class OffloadPool:
    """The process pool for offloaded CPU work, shut down by the app's lifespan.

    Spawn, not fork: forked children inherit the listening socket and can keep the port open
    after the server exits. Built on first use, so an idle server is one process (building it
    also starts multiprocessing's resource tracker).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def get(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.size,
                mp_context=multiprocessing.get_context("spawn"),
                # Killed with the process that made the pool, even a SIGKILLed one.
                initializer=die_with_parent,
                initargs=(os.getpid(), signal.SIGKILL),
            )
        return self._executor

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


def _cpu_heavy_inner(iterations: int) -> kernel.WorkResult:
    return kernel.run_iterations(iterations)


async def _hidden_blocking(iterations: int) -> kernel.WorkResult:
    # Looks asynchronous, but nothing here awaits anything: the loop is blocked all the same.
    return _cpu_heavy_inner(iterations)


def cpu_router(max_iterations: int, offload: OffloadPool) -> APIRouter:
    router = APIRouter()
    Iterations = Annotated[int, DIGITS, Path(ge=1, le=max_iterations, description="Kernel iterations.")]

    @router.get(cpu_path("sync-cpubound"))
    async def sync_cpubound(iterations: Iterations) -> dict[str, object]:
        # Blocking work directly in an async handler: the event loop serves nobody meanwhile.
        return counted(kernel.run_iterations(iterations))

    @router.get(cpu_path("badasync-cpubound"))
    async def badasync_cpubound(iterations: Iterations) -> dict[str, object]:
        return counted(await _hidden_blocking(iterations))

    @router.get(cpu_path("offload-cpubound"))
    async def offload_cpubound(iterations: Iterations) -> dict[str, object]:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(offload.get(), kernel.run_iterations, iterations)
        add_cpu_elsewhere(result.cpu_s)  # the pool process's CPU: this request's, measured there
        return counted(result)

    @router.get(cpu_path("thread-cpubound"))
    def thread_cpubound(iterations: Iterations) -> dict[str, object]:
        # A plain `def` runs in the thread pool: the loop stays free, but the GIL lets one
        # thread run Python at a time, so CPU work still shares one core.
        return counted(kernel.run_iterations(iterations))

    return router


waits = APIRouter()


@waits.get(io_path("io-bound"))
async def io_bound(milliseconds: Milliseconds) -> dict[str, object]:
    return (await lab_io.async_wait(milliseconds)).as_dict()


@waits.get(io_path("badasync-io-bound"))
async def badasync_io_bound(milliseconds: Milliseconds) -> dict[str, object]:
    # time.sleep inside async def: the wait holds the event loop.
    return lab_io.blocking_wait(milliseconds).as_dict()


@waits.get(MIXED)
async def mixed(
    cpu_ms: Annotated[int, DIGITS, Query(ge=0, le=MAX_CPU_MILLISECONDS, description="CPU work.")],
    io_ms: Annotated[int, DIGITS, Query(ge=0, le=lab_io.MAX_IO_MILLISECONDS, description="Total wait.")],
    splits: Annotated[int, DIGITS, Query(ge=1, le=MAX_SPLITS, description="Parts of the wait.")] = 1,
) -> dict[str, object]:
    return (await mixed_async(cpu_ms, io_ms, splits)).as_dict()
