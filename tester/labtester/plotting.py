"""matplotlib, set up once for files only: no display in a Job or on CI, a writable cache dir.

pyplot is imported on first use, not with the modules that draw: a command that refuses a bad
setting answers within a second (importing pyplot alone takes about 0.3 s here).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labtester.atomic import replacing

# matplotlib caches fonts in its config dir: keep it writable under a read-only root filesystem.
os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")

__all__ = ["gaps", "plt", "save_png"]


class _Pyplot:
    """matplotlib.pyplot on the Agg backend, imported when first used."""

    def __getattr__(self, name: str) -> Any:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot

        return getattr(pyplot, name)


if TYPE_CHECKING:
    import matplotlib.pyplot as plt
else:
    plt = _Pyplot()


def save_png(figure: Any, path: Path, dpi: int = 90) -> Path:
    """The figure as a PNG, whole or not at all (labtester.atomic), then closed."""
    with replacing(path, binary=True) as file:
        figure.savefig(file, format="png", dpi=dpi)
    plt.close(figure)
    return path


def gaps(values: Iterable[float | None]) -> list[float]:
    """Values to plot, a missing one as NaN: matplotlib leaves a gap there."""
    return [math.nan if value is None else value for value in values]
