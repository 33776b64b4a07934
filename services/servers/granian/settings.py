"""granian's settings: every target's (workload.settings) and granian's own knobs."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workload.settings import TargetSettings

# granian's own default for the listening socket's backlog (and so for backpressure).
GRANIAN_BACKLOG = 1024


class GranianSettings(TargetSettings):
    interface: Literal["asgi", "wsgi"] = Field(
        "asgi",
        description="How granian calls the app: ASGI or WSGI (`python -m serve` sets it from the app).",
    )
    threads: int = Field(
        8, ge=1, le=1024, description="WSGI apps: blocking threads per worker (granian's blocking_threads)."
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
