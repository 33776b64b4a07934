"""How steady the machine's CPU was during the run, measured like pyperf measures its own.

Before each target's matrix and between its tests, a probe times single kernel iterations on the
target (its calibrate endpoint returns each one). Across the run, the spread of those times is the
machine's noise: a CPU whose speed drifts by 25 % within seconds makes any figure judged against
one calibrated T move by as much. The report states the drift, and the calibration check is
judged against this band rather than against a fixed tolerance.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import BaseModel

from labtester.control import get_json
from labtester.info import TargetInfo

# pyperf warns when the standard deviation is over 10 % of the mean; so do we, and for drift.
UNSTABLE_CV_PCT = 10.0
UNSTABLE_DRIFT_PCT = 10.0


def probe(client: httpx.Client, base_url: str, info: TargetInfo, samples: int) -> dict[str, Any]:
    """Time `samples` single kernel iterations on the target; the raw record's fields."""
    body = get_json(client, f"{base_url}{info.control.calibrate}?samples={samples}")
    timings = body.get("samples_s") or [body["seconds_per_iteration"]]
    return {"at": time.time(), "samples_s": [float(t) for t in timings]}


class ProbeSummary(BaseModel):
    target: str
    label: str
    at: float
    p50_s: float
    samples: int


class Stability(BaseModel):
    """The kernel's time per iteration over the run, relative to each target's own median."""

    probes: list[ProbeSummary]
    samples: int
    p5_pct: float  # percentiles of every sample, as % of its target's median
    p95_pct: float
    cv_pct: float
    drift_pct: float  # slowest probe's median / fastest probe's median - 1 (per target, the worst)
    unstable: bool

    @property
    def band_pct(self) -> float:
        """The noise band: the farther of p5 and p95 from the median, in %."""
        return max(abs(self.p5_pct - 100), abs(self.p95_pct - 100))

    @property
    def seconds_band_pct(self) -> float:
        """The band a measurement lasting seconds falls in: it averages out the per-iteration
        noise but not the drift, so the wider of the band and the drift between probes."""
        return max(self.band_pct, self.drift_pct)

    def describe(self) -> str:
        return (
            "kernel time per iteration p5/p50/p95 = "
            f"{self.p5_pct:.0f}/100/{self.p95_pct:.0f} % "
            f"of its median, CV {self.cv_pct:.1f} %, drift between probes {self.drift_pct:.1f} % "
            f"({self.samples} iterations in {len(self.probes)} probes)"
        )
