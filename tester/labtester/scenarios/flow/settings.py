"""The flow's knobs (TESTER_FLOW__<KEY>): what the flow's run, its mix and its analysis all read,
so it stands below them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from labtester.info import EndpointInfo

FAN_OUT = "fan-out"


class FlowSettings(BaseModel):
    """The seed study's flow (3 parallel 0.25 s waits, then one downstream call), driven by users
    ramped Locust-style; scaled to a small machine: 50 users at 10/s for 30 s per target."""

    model_config = {"extra": "forbid"}
    users: int = Field(50, ge=1, le=10_000)
    spawn_rate: float = Field(10.0, gt=0, description="Users started per second (the study's 10).")
    duration_s: float = Field(30.0, gt=0, le=3600, description="Seconds of load per target.")
    think_s: float = Field(0.0, ge=0, le=60, description="Pause between a user's requests.")
    k: int = Field(3, ge=1, le=32, description="Parallel waits per request (the study's 3 steps).")
    wait_ms: int = Field(250, ge=0, le=60_000, description="Each wait (the study's 0.25 s LLM call).")
    call_ms: int = Field(50, ge=0, le=60_000, description="The downstream mock's delay.")
    baseline: int = Field(5, ge=1, le=100, description="Requests alone before the ramp: R, one's time.")

    def query(self) -> str:
        return f"k={self.k}&wait_ms={self.wait_ms}&call_ms={self.call_ms}"

    def path(self, endpoint: EndpointInfo) -> str:
        """The request's path: the fan-out with the study's arguments; an app's path as given."""
        return f"{endpoint.path}?{self.query()}" if endpoint.name == FAN_OUT else endpoint.path
