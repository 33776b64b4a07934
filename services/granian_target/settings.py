"""granian's settings: the lab's TargetSettings (LAB_*) and the two granian has of its own."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workload.settings import TargetSettings

# What granian serves for each interface: the lab's own apps, unchanged (their factories).
APPS = {"asgi": "fastapi_target.app:create_app", "wsgi": "flask_target.app:create_app"}
# granian's own default for the listening socket's backlog (and so for backpressure).
GRANIAN_BACKLOG = 1024


class GranianSettings(TargetSettings):
    interface: Literal["asgi", "wsgi"] = Field(
        "asgi", description="What granian serves: the FastAPI app (asgi) or the Flask app (wsgi)."
    )
    backpressure: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="Connections one worker admits at once (granian's backpressure); unset: granian's "
        "default, backlog / workers.",
    )

    def resolved_backpressure(self, workers: int) -> int:
        """The explicit setting, else granian's own default."""
        return self.backpressure or max(1, GRANIAN_BACKLOG // workers)
