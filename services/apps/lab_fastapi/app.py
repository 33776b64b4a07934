"""The FastAPI target: blocking, hidden-blocking, offloaded and async variants of the workload.

`create_app` (uvicorn's factory) resolves the settings once per worker and assembles the routers:
control, work, and downstream where a downstream URL is set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI

from apps.lab_fastapi import control, downstream, work
from apps.lab_fastapi.middleware import InFlightLimitMiddleware
from apps.lab_fastapi.state import TargetState
from measure.asgi_cpu import AsgiCpuMiddleware
from workload.contract import admitted, asgi_server, build_info, downstream_endpoints
from workload.downstream import async_client
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
    settings = TargetSettings()
    server = asgi_server(settings, "fastapi")
    offload = work.OffloadPool(server.cores.cores)
    endpoints = work.endpoints(server.workers, offload.size)
    if settings.downstream_url:
        endpoints += downstream_endpoints("async", None)
    endpoints = admitted(endpoints, server)

    app = FastAPI(title="concurrency-lab FastAPI target", lifespan=lifespan)
    app.state.lab = TargetState(settings, build_info(settings, server, endpoints), offload)
    if settings.max_in_flight:
        app.add_middleware(InFlightLimitMiddleware, limit=settings.max_in_flight)
    # Added last, so outermost: each request's CPU, Server-Timing and metrics, the 429s' too.
    app.add_middleware(AsgiCpuMiddleware)
    app.include_router(control.router)
    app.include_router(work.cpu_router(server.max_iterations, offload))
    app.include_router(work.waits)
    if settings.downstream_url:
        app.include_router(downstream.router)
        app.add_exception_handler(httpx.HTTPError, downstream.downstream_failed)
    return app
