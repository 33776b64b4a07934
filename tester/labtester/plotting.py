"""matplotlib, set up once for files only: no display in a Job or on CI, a writable cache dir."""

from __future__ import annotations

import os

# matplotlib caches fonts in its config dir: keep it writable under a read-only root filesystem.
os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

__all__ = ["plt"]
