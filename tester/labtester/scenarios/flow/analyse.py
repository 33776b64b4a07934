"""The flow's settings and summary, and the lab's own prediction of it (Little's law).

A server holding at most `slots` requests at once, each for R seconds, completes at most slots / R
requests a second; U users who send again as soon as they are answered ask for U / R. The
prediction is the smaller of the two, and of what the server's own CPU allows (cores / CPU
seconds per request, measured), named by which one binds. The cores are those its handling can
use, as far as the rest of the machine left them free during the run (the tester, the downstream
mock and any neighbour share the same CPUs; /proc/stat says how much they took). Where that
binds on a saturated machine, it is the share the target got: an explanation, not a check. The study's
40.6 req/s is 64 threads held ~1.5 s each: thread-pool exhaustion, not Python speed.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from pydantic import BaseModel, Field

from labtester import machine
from labtester.info import TargetInfo
from labtester.model import capacity
from labtester.rawlog import Record
from labtester.scenarios.common import decode, failures_by_type, latency_table
from labtester.scenarios.flow.series import FlowSecond, flow_seconds

FAN_OUT = "fan-out"
Binding = Literal["users", "slots", "cpu"]


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
    baseline: int = Field(
        5, ge=1, le=100, description="Requests alone before the ramp: R, the time one takes."
    )

    def query(self) -> str:
        return f"k={self.k}&wait_ms={self.wait_ms}&call_ms={self.call_ms}"


def usable_cores(cores: float, cores_free: float | None) -> float:
    """The cores its handling can use, as far as the rest of the machine left them free."""
    return cores if cores_free is None else min(cores, cores_free)


class Prediction(BaseModel):
    per_request_s: float  # R: one request alone
    slots: float | None  # None: no limit
    cpu_per_request_s: float | None  # the server's CPU per request, measured over the run
    cores: float  # the cores the handling can use
    cores_free: float | None  # of the machine's CPUs, what the tester, downstream and others left
    per_s: float
    binding: Binding

    @property
    def usable_cores(self) -> float:
        return usable_cores(self.cores, self.cores_free)


class FlowSummary(BaseModel):
    shape: Literal["flow"] = "flow"
    params: FlowSettings
    wall_s: float
    requests: int
    failures: dict[str, int]
    requests_per_s: float  # over the steady part: every user running
    steady_from_s: float
    latency_s: dict[str, float]
    prediction: Prediction
    over_time: list[FlowSecond]


def predict(
    settings: FlowSettings,
    per_request_s: float,
    info: TargetInfo,
    cpu_per_request_s: float | None,
    cores_free: float | None = None,
) -> Prediction:
    endpoint = info.endpoints[FAN_OUT]
    limits = capacity(endpoint, info)
    slots = None if math.isinf(limits.slots) else limits.slots
    # The cores its handling can use: one per process where Python runs on one thread per process.
    cores = capacity(endpoint.model_copy(update={"work": "cpu"}), info).cores
    candidates: dict[Binding, float] = {"users": settings.users / (per_request_s + settings.think_s)}
    if slots is not None:
        candidates["slots"] = slots / per_request_s
    if cpu_per_request_s:
        candidates["cpu"] = usable_cores(cores, cores_free) / cpu_per_request_s
    binding = min(candidates, key=lambda name: candidates[name])
    return Prediction(
        per_request_s=per_request_s,
        slots=slots,
        cpu_per_request_s=cpu_per_request_s,
        cores=cores,
        cores_free=cores_free,
        per_s=candidates[binding],
        binding=binding,
    )


def summarize(records: list[Record], info: TargetInfo | None) -> FlowSummary:
    (record,) = records
    settings = FlowSettings(**record["params"])
    samples, alone = decode(record["samples"]), decode(record["baseline"])
    if info is None:
        raise ValueError("the flow needs the target's /info")
    wall = record["wall_s"]
    answered = [s.latency_s for s in alone if s.ok]
    per_request = statistics.median(answered) if answered else math.nan
    # Steady once the last user has had its first answer: every user running from then on.
    steady_from = min(wall, (settings.users - 1) / settings.spawn_rate + (per_request if answered else 1.0))
    steady = [s for s in samples if s.ok and s.sent_s + s.latency_s >= steady_from]
    done = sum(1 for s in samples if s.ok)
    cpu = record.get("server_cpu_s")
    return FlowSummary(
        params=settings,
        wall_s=wall,
        requests=len(samples),
        failures=failures_by_type(samples),
        requests_per_s=len(steady) / (wall - steady_from) if wall > steady_from else 0.0,
        steady_from_s=steady_from,
        latency_s=latency_table([s.latency_s for s in samples if s.ok], (50, 95, 99)),
        prediction=predict(
            settings, per_request, info, cpu / done if cpu and done else None, _cores_free(record, cpu)
        ),
        over_time=flow_seconds(samples, wall, record["users"]),
    )


def _cores_free(record: Record, server_cpu_s: float | None) -> float | None:
    """The machine's CPUs less what everything but the target used during the run, on average."""
    if "machine" not in record or server_cpu_s is None:
        return None
    use = machine.use_recorded(record["machine"])
    others = use.others_s(server_cpu_s)
    if others is None or use.wall_s <= 0:
        return None
    taken = use.tester_s + others + (use.steal_s or 0.0)
    return max(0.0, use.cpus - taken / use.wall_s)
