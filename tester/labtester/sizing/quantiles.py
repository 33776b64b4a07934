"""Evenly spaced quantiles of measured values, and a draw from them: how the sizing's simulation
takes a measured spread (a tail included) in a few numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence


def quantile(spread: tuple[float, ...], draw: float) -> float:
    return spread[min(int(draw * len(spread)), len(spread) - 1)]


def spread(values: Sequence[float], points: int = 40) -> tuple[float, ...]:
    """`points` evenly spaced quantiles of the values (the midpoints of as many equal shares), so a
    draw from them follows the values' distribution, tail included, in a few numbers."""
    ordered = sorted(values)
    if not ordered:
        return ()
    return tuple(percentile(ordered, 100 * (i + 0.5) / points) for i in range(points))


def percentile(ordered: Sequence[float], point: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), of sorted values."""
    if not ordered:
        return math.nan
    rank = (len(ordered) - 1) * point / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
