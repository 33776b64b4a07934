"""Statistics over raw times (numpy), never over rounded histogram buckets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Spread:
    median: float
    minimum: float
    maximum: float
    count: int

    @property
    def relative_spread(self) -> float:
        """(max - min) / median: how much repeats of one point disagree."""
        return (self.maximum - self.minimum) / self.median if self.median else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no values")
    array = np.asarray(values, dtype=float)
    return Spread(float(np.median(array)), float(array.min()), float(array.max()), int(array.size))


def percentiles(values: Sequence[float], points: Sequence[float]) -> dict[str, float]:
    """Exact percentiles of the raw values, keyed like "p50"."""
    array = np.asarray(values, dtype=float)
    return {f"p{p:g}": float(np.percentile(array, p)) for p in points}


def max_overlap(intervals: Sequence[tuple[float, float]]) -> int:
    """Most intervals open at one instant (a request ending as another starts does not overlap)."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak
