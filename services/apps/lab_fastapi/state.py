"""What the routes share, held on `app.state.lab` by create_app and read through `State`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import httpx
from fastapi import Depends, Request

from apps.lab_fastapi.work import OffloadPool
from workload.settings import TargetSettings


@dataclass
class TargetState:
    settings: TargetSettings
    info: dict[str, object]  # the /info body, built once per worker
    offload: OffloadPool
    downstream: httpx.AsyncClient | None = None  # made by the lifespan when a downstream URL is set


def target_state(request: Request) -> TargetState:
    state = request.app.state.lab
    assert isinstance(state, TargetState)
    return state


State = Annotated[TargetState, Depends(target_state)]
