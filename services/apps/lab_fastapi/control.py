"""The control endpoints /info lists under "control": health, /info, calibration, census, metrics."""

# No `from __future__ import annotations`: FastAPI reads the Annotated aliases at runtime.

from typing import Annotated

from fastapi import APIRouter, Query, Response

from apps.lab_fastapi.state import State
from workload import paths
from workload.census import take_census
from workload.errors import DIGITS
from workload.exposition import exposition
from workload.kernel import MAX_CALIBRATE_SAMPLES
from workload.metrics import counted_calibration

router = APIRouter()


@router.get(paths.HEALTH)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(paths.INFO)
async def get_info(state: State) -> dict[str, object]:
    return state.info


@router.get(paths.CALIBRATE)
async def calibrate(
    samples: Annotated[int, DIGITS, Query(ge=1, le=MAX_CALIBRATE_SAMPLES)] = 1,
) -> dict[str, object]:
    return counted_calibration(samples)


@router.get(paths.CENSUS)
async def resmon(state: State) -> dict[str, object]:
    return take_census(state.settings.reload).as_dict()


@router.get(paths.METRICS)
async def metrics(state: State) -> Response:
    body, content_type = exposition(state.settings.reload)
    return Response(body, media_type=content_type)
