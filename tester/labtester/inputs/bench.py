"""What `make bench` needs beyond the lab's inputs: a measured lab_fastapi app on uvicorn in the values
to measure the load client on, wrk beside it, and the app whose light and heavy paths hold the model
to what was served; checked with the other inputs, before anything starts."""

from __future__ import annotations

import shutil

from labtester.settings import LabSettings
from labtester.targets import TargetDefinition

# The app bench holds the model to: the Flask shop, a team's app the lab did not write for itself.
# Its light path uses about 0.3 ms of the app's CPU, where the server's own cost and the local
# client's are most of a request's; its heavy path about 100 ms, nearly all the app's.
BENCH_APP = "examples.shop.flask_app:app"
LIGHT_PATH, HEAVY_PATH = "/products/7", "/report"
# Flows only (the model's rate against the served one), long enough for a steady part on the heavy
# path's one slot, with enough users that the light path is bound by the CPU, not by the users.
BENCH_FLOW = {"users": 50, "spawn_rate": 50.0, "duration_s": 10.0, "baseline": 5}


def capacity_target(targets: list[TargetDefinition]) -> TargetDefinition:
    """The target the client is measured on: FastAPI on uvicorn, whose /healthz costs the least."""
    found = next((d for d in targets if (d.app, d.server) == ("lab_fastapi", "uvicorn") and d.measure), None)
    if found is None:
        raise ValueError(
            "bench: --values holds no measured lab_fastapi app on uvicorn to measure the client on"
        )
    return found


def app_settings(settings: LabSettings) -> LabSettings:
    """The lab's settings for bench's app lab: the shop on its light and heavy paths, flows only."""
    return settings.with_targets(
        [], [], app=BENCH_APP, paths=[LIGHT_PATH, HEAVY_PATH], scenarios=["flow"], flow=BENCH_FLOW
    )


def check_bench(targets: list[TargetDefinition]) -> None:
    """What bench needs beyond the lab's inputs, checked before anything starts."""
    capacity_target(targets)
    if shutil.which("wrk") is None:
        raise ValueError("bench: wrk is not installed (`make bench` installs it)")
