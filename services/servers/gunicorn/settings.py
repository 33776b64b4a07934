"""gunicorn's settings: every target's (workload.settings) and gunicorn's own knobs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workload.served_by import Execution, ServedBy
from workload.settings import TargetSettings

# gunicorn's own default for worker_connections (the gevent study finds it far too high).
GUNICORN_WORKER_CONNECTIONS = 1000
# How each gunicorn worker class runs requests: what /info calls it.
GUNICORN_EXECUTION: dict[str, Execution] = {"sync": "workers", "gevent": "greenlets", "gthread": "threads"}


class GunicornSettings(TargetSettings):
    worker_class: Literal["sync", "gevent", "gthread"] = Field(
        "sync", description="gunicorn's worker class: sync, gevent (greenlets) or gthread (threads)."
    )
    threads: int = Field(
        8, ge=1, le=1024, description="gthread workers: request threads per worker (gunicorn's threads)."
    )
    worker_connections: int = Field(
        GUNICORN_WORKER_CONNECTIONS,
        ge=1,
        le=100_000,
        description="gevent workers: requests one worker takes at once (gunicorn's worker_connections).",
    )

    def served_by(self) -> ServedBy:
        """What /info says of gunicorn: one request per sync worker, its threads (gthread) or its
        greenlets (gevent) at once."""
        return ServedBy(
            server="gunicorn",
            worker_class=self.worker_class,
            execution=GUNICORN_EXECUTION[self.worker_class],
            per_worker={"gevent": self.worker_connections, "gthread": self.threads}.get(self.worker_class, 1),
        )
