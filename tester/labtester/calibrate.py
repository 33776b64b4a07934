"""Find the iteration count that makes one CPU request take N seconds of server time.

A median of single-iteration timings overshoots for a skewed kernel, so the first estimate times a
batch of iterations in one real request; then real requests at the estimate verify it, and the
count is corrected by the measured ratio until the server time is within tolerance of N.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field

import httpx

from labtester.client import get_json

CALIBRATION_ENDPOINT = "sync-cpubound"
ROUGH_SAMPLES = 5
BATCH_FRACTION = 0.2  # the batch request takes about this share of N
VERIFY_REQUESTS = 3


@dataclass
class CalibrationRound:
    iterations: int
    server_seconds: list[float]

    @property
    def median_s(self) -> float:
        return statistics.median(self.server_seconds)


@dataclass
class Calibration:
    target_seconds: float
    tolerance: float
    rough_seconds_per_iteration: float
    batch_seconds_per_iteration: float
    iterations: int = 0
    measured_seconds: float = math.nan
    rounds: list[CalibrationRound] = field(default_factory=list)

    @property
    def error_pct(self) -> float:
        return (self.measured_seconds / self.target_seconds - 1) * 100

    @property
    def within_tolerance(self) -> bool:
        return abs(self.error_pct) <= self.tolerance * 100

    def as_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "error_pct": self.error_pct,
            "within_tolerance": self.within_tolerance,
        }


def _server_seconds(client: httpx.Client, url: str, iterations: int) -> float:
    body = get_json(client, f"{url}/test/{CALIBRATION_ENDPOINT}/{iterations}")
    return float(body["duration_s"])


def calibrate(
    client: httpx.Client,
    url: str,
    target_seconds: float,
    tolerance: float,
    max_rounds: int,
    max_iterations: int,
) -> Calibration:
    rough = float(get_json(client, f"{url}/test/calibrate?samples={ROUGH_SAMPLES}")["seconds_per_iteration"])
    batch = max(1, min(max_iterations, round(BATCH_FRACTION * target_seconds / rough)))
    per_iteration = _server_seconds(client, url, batch) / batch
    calibration = Calibration(target_seconds, tolerance, rough, per_iteration)
    iterations = max(1, round(target_seconds / per_iteration))
    for _ in range(max_rounds):
        iterations = min(iterations, max_iterations)
        measured = CalibrationRound(
            iterations, [_server_seconds(client, url, iterations) for _ in range(VERIFY_REQUESTS)]
        )
        calibration.rounds.append(measured)
        calibration.iterations, calibration.measured_seconds = iterations, measured.median_s
        if calibration.within_tolerance:
            break
        iterations = max(1, round(iterations * target_seconds / measured.median_s))
    return calibration
