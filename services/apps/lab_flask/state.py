"""What the blueprints share, kept in `app.extensions` by create_app and read through `state()`."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from flask import current_app

from workload.limits import InFlightLimiter
from workload.settings import TargetSettings

KEY = "lab"


@dataclass(frozen=True)
class TargetState:
    settings: TargetSettings
    info: dict[str, object]  # the /info body, built once per worker
    max_iterations: int
    limiter: InFlightLimiter | None  # None: no limit on requests in flight
    downstream: httpx.Client | None  # None: no downstream URL, so no downstream blueprint


def state() -> TargetState:
    """The state of the app handling the current request."""
    found = current_app.extensions[KEY]
    assert isinstance(found, TargetState)
    return found
