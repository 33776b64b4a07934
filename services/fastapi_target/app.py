"""The FastAPI target: blocking, hidden-blocking, offloaded and async variants of the workload.

`create_app` (uvicorn's factory) resolves the settings once per worker and assembles the routers:
control, work, and downstream where a downstream URL is set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI

from fastapi_target import control, downstream, work
from fastapi_target.middleware import InFlightLimitMiddleware, MetricsMiddleware
from fastapi_target.state import TargetState
from workload.contract import Server, build_info, downstream_endpoints
from workload.downstream import async_client
from workload.lifetime import end_with_root
from workload.settings import TargetSettings


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: TargetState = app.state.lab
    if state.settings.downstream_url:
        state.downstream = async_client(state.settings.downstream_url)
    try:
        yield
    finally:
        state.offload.shutdown()
        if state.downstream is not None:
            await state.downstream.aclose()


def create_app() -> FastAPI:
    end_with_root()  # a --workers or --reload child ends with the root, however the root ends
    settings = TargetSettings()
    server = Server(
        framework="fastapi",
        server="uvicorn",
        worker_class="uvicorn",
        workers=settings.resolved_workers(default_multiplier=None),
        threads=1,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
    )
    offload = work.OffloadPool(server.cores.cores)
    endpoints = work.endpoints(server.workers, offload.size)
    if settings.downstream_url:
        endpoints += downstream_endpoints("async", None)

    app = FastAPI(title="concurrency-lab FastAPI target", lifespan=lifespan)
    app.state.lab = TargetState(settings, build_info(settings, server, endpoints), offload)
    if settings.max_in_flight:
        app.add_middleware(InFlightLimitMiddleware, limit=settings.max_in_flight)
    app.add_middleware(MetricsMiddleware)  # added last, so outermost: it counts the 429s too
    app.include_router(control.router)
    app.include_router(work.cpu_router(server.max_iterations, offload))
    app.include_router(work.waits)
    if settings.downstream_url:
        app.include_router(downstream.router)
        app.add_exception_handler(httpx.HTTPError, downstream.downstream_failed)
    return app
