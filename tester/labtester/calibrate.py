"""Find the iteration count that makes one CPU request take N seconds of server time.

A median of single-iteration timings overshoots for a skewed kernel, so the first estimate times a
batch of iterations in one real request; then real requests at the estimate verify it, and the
count is corrected by the measured ratio until the server time is within tolerance of N, or
within the spread of the round's own requests (a correction then would chase the machine's noise).

Every target runs the same kernel on the same machine: a target after the first starts from the
count an earlier one found for that kernel (`shared`) and only verifies it, refining as above.

N sets the scale of the work; a burst is judged by the CPU its own requests measured, not by N.
Every URL comes from the target's /info.
"""

from __future__ import annotations

import itertools
import math
import statistics

import httpx
from pydantic import BaseModel, computed_field

from labtester.control import get_json
from labtester.info import TargetInfo

CALIBRATION_ENDPOINT = "sync-cpubound"
ROUGH_SAMPLES = 5
BATCH_FRACTION = 0.2  # the batch request takes about this share of N
VERIFY_REQUESTS = 3


class CalibrationRound(BaseModel):
    iterations: int
    server_seconds: list[float]

    @property
    def median_s(self) -> float:
        return statistics.median(self.server_seconds)

    @property
    def spread(self) -> float:
        """(max - min) / median of its requests: how far apart the same count measured."""
        return (max(self.server_seconds) - min(self.server_seconds)) / self.median_s


class Calibration(BaseModel):
    target_seconds: float
    tolerance: float
    rough_seconds_per_iteration: float
    batch_seconds_per_iteration: float
    iterations: int = 0
    measured_seconds: float = math.nan
    rounds: list[CalibrationRound] = []
    started_from: str | None = None  # the target whose count this one verified (the same kernel)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error_pct(self) -> float:
        return (self.measured_seconds / self.target_seconds - 1) * 100

    @computed_field  # type: ignore[prop-decorator]
    @property
    def within_tolerance(self) -> bool:
        return abs(self.error_pct) <= self.tolerance * 100

    @property
    def earlier_step_pct(self) -> float | None:
        """The most the kernel's speed moved from one round to the next before the last, in %: the
        noise this calibration itself met. The last round is left out, as each round aims at N on
        the round before's speed: its miss is that one step."""
        speeds = [r.median_s / r.iterations for r in self.rounds[:-1]]
        steps = [abs(now / before - 1) * 100 for before, now in itertools.pairwise(speeds)]
        return max(steps) if steps else None

    @property
    def last_spread_pct(self) -> float | None:
        """How far apart the last round's own requests measured, in %: calibrating stops at a miss
        this small, as a correction would chase the noise."""
        return self.rounds[-1].spread * 100 if self.rounds else None


def calibrate(
    client: httpx.Client,
    base_url: str,
    info: TargetInfo,
    target_seconds: float,
    tolerance: float,
    max_rounds: int,
    shared: tuple[str, Calibration] | None = None,
) -> Calibration:
    """The count for N on this target; `shared`: (target, its calibration) of the same kernel, the
    count to verify instead of estimating one afresh."""
    endpoint = info.endpoints[CALIBRATION_ENDPOINT]
    max_iterations = info.kernel.max_iterations

    def server_seconds(iterations: int) -> float:
        return float(get_json(client, endpoint.url(base_url, iterations))["duration_s"])

    if shared is not None:
        source, earlier = shared
        calibration = Calibration(
            target_seconds=target_seconds,
            tolerance=tolerance,
            rough_seconds_per_iteration=earlier.rough_seconds_per_iteration,
            batch_seconds_per_iteration=earlier.batch_seconds_per_iteration,
            started_from=source,
        )
        iterations = earlier.iterations
    else:
        probe = get_json(client, f"{base_url}{info.control.calibrate}?samples={ROUGH_SAMPLES}")
        rough = float(probe["seconds_per_iteration"])
        batch = max(1, min(max_iterations, round(BATCH_FRACTION * target_seconds / rough)))
        per_iteration = server_seconds(batch) / batch
        calibration = Calibration(
            target_seconds=target_seconds,
            tolerance=tolerance,
            rough_seconds_per_iteration=rough,
            batch_seconds_per_iteration=per_iteration,
        )
        iterations = max(1, round(target_seconds / per_iteration))
    for _ in range(max_rounds):
        iterations = min(iterations, max_iterations)
        measured = CalibrationRound(
            iterations=iterations, server_seconds=[server_seconds(iterations) for _ in range(VERIFY_REQUESTS)]
        )
        calibration.rounds.append(measured)
        calibration.iterations, calibration.measured_seconds = iterations, measured.median_s
        if calibration.within_tolerance or abs(calibration.error_pct) <= measured.spread * 100:
            break
        iterations = max(1, round(iterations * target_seconds / measured.median_s))
    return calibration
