"""The endpoints that call the mock downstream service: one call, and the fan-out (k waits, then
the call). Included only when LAB_DOWNSTREAM_URL is set; a failed call is a 502."""

# No `from __future__ import annotations`: FastAPI reads the Annotated aliases at runtime.

from typing import Annotated

import httpx
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from apps.lab_fastapi.state import State
from apps.lab_fastapi.work import Milliseconds
from workload.downstream import call_async
from workload.errors import DIGITS, downstream_failure
from workload.fanout import MAX_FAN_OUT, fan_out_async
from workload.io import MAX_IO_MILLISECONDS
from workload.paths import FAN_OUT, io_path

router = APIRouter()


def downstream_client(state: State) -> httpx.AsyncClient:
    assert state.downstream is not None, "the lifespan makes the client wherever this router is included"
    return state.downstream


Client = Annotated[httpx.AsyncClient, Depends(downstream_client)]


@router.get(io_path("downstream"))
async def call_downstream(milliseconds: Milliseconds, client: Client) -> dict[str, object]:
    return (await call_async(client, milliseconds)).as_dict()


@router.get(FAN_OUT)
async def fan_out(
    client: Client,
    k: Annotated[int, DIGITS, Query(ge=1, le=MAX_FAN_OUT, description="Parallel waits.")],
    wait_ms: Annotated[int, DIGITS, Query(ge=0, le=MAX_IO_MILLISECONDS, description="Each wait.")],
    call_ms: Annotated[int, DIGITS, Query(ge=0, le=MAX_IO_MILLISECONDS, description="Downstream's wait.")],
) -> dict[str, object]:
    return (await fan_out_async(k, wait_ms, call_ms, client)).as_dict()


async def downstream_failed(request: Request, error: Exception) -> JSONResponse:
    """httpx.HTTPError's handler: the downstream call failed (refused, timed out, not 2xx)."""
    return JSONResponse(downstream_failure(error), status_code=502)
