"""The FastAPI target: blocking, hidden-blocking, offloaded and async variants of the workload."""

# No `from __future__ import annotations`: FastAPI reads the local Annotated aliases at runtime.

import asyncio
import concurrent.futures
import multiprocessing
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import httpx
from fastapi import FastAPI, Path, Query, Response
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workload import io as lab_io
from workload import kernel
from workload.census import take_census
from workload.contract import MIXED_PATH, Endpoint, build_info, cpu_path, io_path
from workload.errors import downstream_failure, too_many
from workload.exposition import exposition
from workload.fanout import FAN_OUT_PATH, MAX_FAN_OUT, fan_out_async
from workload.limits import InFlightLimiter, is_limited
from workload.metrics import IN_FLIGHT, KERNEL_ITERATIONS, UNMATCHED_ROUTE, observe_request
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS, mixed_async
from workload.settings import MAX_CALIBRATE_SAMPLES, MAX_IO_MILLISECONDS, TargetSettings
from workload.timing import Stopwatch

# anyio's default thread limiter: how many plain `def` endpoints run at once.
THREADPOOL_TOKENS = 40


class MetricsMiddleware:
    """Counts and times every request by route template (read from the matched route)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_and_record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, send_and_record_status)
        finally:
            IN_FLIGHT.dec()
            route = scope.get("route")
            template = getattr(route, "path", UNMATCHED_ROUTE)
            observe_request(scope["method"], template, status, time.perf_counter() - start)


class OffloadPool:
    """The process pool for offloaded CPU work, owned by the app's lifespan.

    Spawn, not fork: forked children inherit the listening socket and can keep the port open
    after the server exits. Built on first use, so an idle server is one process (building it
    also starts multiprocessing's resource tracker); shut down by the lifespan on exit.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def get(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.size, mp_context=multiprocessing.get_context("spawn")
            )
        return self._executor

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


class InFlightLimitMiddleware:
    """Answers 429 to work requests beyond the configured number in flight."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limiter = InFlightLimiter(limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_limited(scope["path"]):
            await self.app(scope, receive, send)
            return
        if not self.limiter.try_acquire():
            await JSONResponse(too_many(self.limiter.limit), status_code=429)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release()


def _cpu_heavy_inner(iterations: int) -> kernel.WorkResult:
    return kernel.run_iterations(iterations)


async def _hidden_blocking(iterations: int) -> kernel.WorkResult:
    # Looks asynchronous, but nothing here awaits anything: the loop is blocked all the same.
    return _cpu_heavy_inner(iterations)


def create_app() -> FastAPI:
    settings = TargetSettings()
    cores = settings.cores()
    workers = settings.resolved_workers(default_multiplier=None)
    max_iterations = settings.resolved_max_iterations()
    pool_size = cores.cores

    offload_pool = OffloadPool(pool_size)
    downstream: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.downstream_url:
            # One pooled client for the process; no connection cap, the lab measures the server.
            downstream["client"] = httpx.AsyncClient(
                base_url=settings.downstream_url,
                timeout=MAX_IO_MILLISECONDS / 1000 + 30,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
            )
        try:
            yield
        finally:
            offload_pool.shutdown()
            if "client" in downstream:
                await downstream["client"].aclose()

    app = FastAPI(title="concurrency-lab FastAPI target", lifespan=lifespan)
    if settings.max_in_flight:
        app.add_middleware(InFlightLimitMiddleware, limit=settings.max_in_flight)
    app.add_middleware(MetricsMiddleware)  # added last, so outermost: it counts the 429s too

    Iterations = Annotated[int, Path(ge=1, le=max_iterations, description="Kernel iterations.")]
    Milliseconds = Annotated[int, Path(ge=0, le=MAX_IO_MILLISECONDS, description="Wait time.")]

    endpoints = [
        Endpoint("sync-cpubound", cpu_path("sync-cpubound"), "cpu", "event_loop", workers),
        Endpoint("badasync-cpubound", cpu_path("badasync-cpubound"), "cpu", "event_loop", workers),
        Endpoint(
            "offload-cpubound", cpu_path("offload-cpubound"), "cpu", "process_pool", workers * pool_size
        ),
        Endpoint(
            "thread-cpubound", cpu_path("thread-cpubound"), "cpu", "thread_pool", workers * THREADPOOL_TOKENS
        ),
        Endpoint("io-bound", io_path("io-bound"), "io", "async", None),
        Endpoint("badasync-io-bound", io_path("badasync-io-bound"), "io", "event_loop", workers),
        Endpoint("mixed", MIXED_PATH, "mixed", "async", None),
    ]
    if settings.downstream_url:
        endpoints.append(Endpoint("downstream", io_path("downstream"), "io", "async", None))
        endpoints.append(Endpoint("fan-out", FAN_OUT_PATH, "io", "async", None))
    info = build_info(
        settings,
        framework="fastapi",
        server="uvicorn",
        worker_class="uvicorn",
        workers=workers,
        threads=1,
        cores=cores,
        max_iterations=max_iterations,
        endpoints=endpoints,
    )

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/info")
    async def get_info() -> dict[str, object]:
        return info

    @app.get("/test/calibrate")
    async def calibrate(
        samples: Annotated[int, Query(ge=1, le=MAX_CALIBRATE_SAMPLES)] = 1,
    ) -> dict[str, object]:
        body = kernel.calibration(samples)
        KERNEL_ITERATIONS.inc(samples)
        return body

    @app.get("/test/sync-cpubound/{iterations}")
    async def sync_cpubound(iterations: Iterations) -> dict[str, object]:
        # Blocking work directly in an async handler: the event loop serves nobody meanwhile.
        result = kernel.run_iterations(iterations)
        KERNEL_ITERATIONS.inc(iterations)
        return result.as_dict()

    @app.get("/test/badasync-cpubound/{iterations}")
    async def badasync_cpubound(iterations: Iterations) -> dict[str, object]:
        result = await _hidden_blocking(iterations)
        KERNEL_ITERATIONS.inc(iterations)
        return result.as_dict()

    @app.get("/test/offload-cpubound/{iterations}")
    async def offload_cpubound(iterations: Iterations) -> dict[str, object]:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(offload_pool.get(), kernel.run_iterations, iterations)
        KERNEL_ITERATIONS.inc(iterations)
        return result.as_dict()

    @app.get("/test/thread-cpubound/{iterations}")
    def thread_cpubound(iterations: Iterations) -> dict[str, object]:
        # A plain `def` runs in the thread pool: the loop stays free, but the GIL lets one
        # thread run Python at a time, so CPU work still shares one core.
        result = kernel.run_iterations(iterations)
        KERNEL_ITERATIONS.inc(iterations)
        return result.as_dict()

    @app.get("/test/io-bound/{milliseconds}")
    async def io_bound(milliseconds: Milliseconds) -> dict[str, object]:
        return (await lab_io.async_wait(milliseconds)).as_dict()

    @app.get("/test/badasync-io-bound/{milliseconds}")
    async def badasync_io_bound(milliseconds: Milliseconds) -> dict[str, object]:
        # time.sleep inside async def: the wait holds the event loop.
        return lab_io.blocking_wait(milliseconds).as_dict()

    @app.get("/test/mixed")
    async def mixed(
        cpu_ms: Annotated[int, Query(ge=0, le=MAX_CPU_MILLISECONDS, description="CPU work.")],
        io_ms: Annotated[int, Query(ge=0, le=MAX_IO_MILLISECONDS, description="Total wait.")],
        splits: Annotated[int, Query(ge=1, le=MAX_SPLITS, description="Parts of the wait.")] = 1,
    ) -> dict[str, object]:
        return (await mixed_async(cpu_ms, io_ms, splits)).as_dict()

    if settings.downstream_url:

        async def call(milliseconds: int) -> int:
            answer = await downstream["client"].get(f"/test/io-bound/{milliseconds}")
            answer.raise_for_status()
            return answer.status_code

        @app.get("/test/downstream/{milliseconds}")
        async def call_downstream(milliseconds: Milliseconds) -> Response:
            watch = Stopwatch(measure_cpu=False)  # the call awaits: other requests run meanwhile
            try:
                answer = await downstream["client"].get(f"/test/io-bound/{milliseconds}")
                answer.raise_for_status()
            except httpx.HTTPError as error:
                return JSONResponse(downstream_failure(error), status_code=502)
            return JSONResponse({"milliseconds": milliseconds, **watch.timing(), "downstream": answer.json()})

        @app.get(FAN_OUT_PATH)
        async def fan_out(
            k: Annotated[int, Query(ge=1, le=MAX_FAN_OUT, description="Parallel waits.")],
            wait_ms: Annotated[int, Query(ge=0, le=MAX_IO_MILLISECONDS, description="Each wait.")],
            call_ms: Annotated[int, Query(ge=0, le=MAX_IO_MILLISECONDS, description="Downstream's wait.")],
        ) -> Response:
            try:
                result = await fan_out_async(k, wait_ms, call_ms, call)
            except httpx.HTTPError as error:
                return JSONResponse(downstream_failure(error), status_code=502)
            return JSONResponse(result.as_dict())

    @app.get("/test/resmon")
    async def resmon() -> dict[str, object]:
        return take_census(settings.reload).as_dict()

    @app.get("/metrics")
    async def metrics() -> Response:
        body, content_type = exposition(settings.reload)
        return Response(body, media_type=content_type)

    return app
