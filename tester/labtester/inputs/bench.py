"""What `make bench` needs beyond the lab's inputs: a measured lab_fastapi app on uvicorn in the values
to measure the load client on, and wrk beside it; checked with the other inputs, before anything starts."""

from __future__ import annotations

import shutil

from labtester.targets import TargetDefinition


def capacity_target(targets: list[TargetDefinition]) -> TargetDefinition:
    """The target the client is measured on: FastAPI on uvicorn, whose /healthz costs the least."""
    found = next((d for d in targets if (d.app, d.server) == ("lab_fastapi", "uvicorn") and d.measure), None)
    if found is None:
        raise ValueError(
            "bench: --values holds no measured lab_fastapi app on uvicorn to measure the client on"
        )
    return found


def check_bench(targets: list[TargetDefinition]) -> None:
    """What bench needs beyond the lab's inputs, checked before anything starts."""
    capacity_target(targets)
    if shutil.which("wrk") is None:
        raise ValueError("bench: wrk is not installed (`make bench` installs it)")
