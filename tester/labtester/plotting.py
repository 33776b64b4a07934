"""matplotlib, set up once for files only: no display in a Job or on CI, a writable cache dir."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

# matplotlib caches fonts in its config dir: keep it writable under a read-only root filesystem.
os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

__all__ = ["gaps", "plt"]


def gaps(values: Iterable[float | None]) -> list[float]:
    """Values to plot, a missing one as NaN: matplotlib leaves a gap there."""
    return [math.nan if value is None else value for value in values]
