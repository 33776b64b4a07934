"""uvicorn's settings: every target's (workload.settings: workers, reload...); it has no knob of its
own. What /info says of it, and the knob of another server it refuses rather than ignores."""

from __future__ import annotations

import os

from workload.served_by import ServedBy
from workload.settings import TargetSettings

# One event loop per worker process; no limit of its own on the connections a worker admits.
UVICORN = ServedBy(server="uvicorn", worker_class="uvicorn")


class UvicornSettings(TargetSettings):
    pass


def other_servers_setting() -> str | None:
    """gevent and gthread are gunicorn's worker classes: refused, not ignored."""
    worker_class = os.environ.get("LAB_WORKER_CLASS", "sync")
    if worker_class != "sync":
        return f"LAB_WORKER_CLASS={worker_class} is a gunicorn worker class, not uvicorn's"
    return None
