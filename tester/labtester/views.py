"""What a load shape offers the report besides its tables: answers to the questions people run the
lab for, rows of the side-by-side comparison, and sections of the details.

Every number in them comes from the typed results; the report only lays them out, so a new load
shape adds its answers and rows in its own module and nothing here changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel
from rich.table import Table


class Line(BaseModel):
    """One series of an answer's chart: measured values, and the reference's beside them."""

    label: str
    x: list[float]
    y: list[float | None]
    reference: list[float | None] = []  # drawn dashed; empty: none


class Chart(BaseModel):
    """The one plot that shows an answer, small enough to sit beside its paragraph."""

    name: str  # file stem under plots/
    title: str
    x_label: str
    y_label: str
    reference: str = "model"  # what the dashed lines are
    lines: list[Line]
    integer_x: bool = True

    def alt(self) -> str:
        """The chart in words: what each line reaches at its last point, beside its reference."""
        ends = []
        for line in self.lines:
            points = [(x, y, r) for x, y, r in _padded(line) if y is not None]
            if not points:
                continue
            x, y, reference = points[-1]
            beside = f" ({self.reference} {number(reference)})" if reference is not None else ""
            ends.append(f"{line.label} {number(y)}{beside} at {x:g}")
        return (
            f"Line chart: {self.title}. {self.y_label} against {self.x_label}, solid measured, dashed "
            f"{self.reference}. Last points: " + "; ".join(ends) + "."
        )


def _padded(line: Line) -> list[tuple[float, float | None, float | None]]:
    references = line.reference or [None] * len(line.x)
    return list(zip(line.x, line.y, references, strict=True))


class Answer(BaseModel):
    """One question the run measured, answered in plain words with the number behind it."""

    order: int  # where it stands among the answers (shapes choose: 10, 20, ...)
    key: str  # a stable name: the answer's anchor and its chart's file
    question: str
    answer: str  # the answer in plain words, one sentence
    evidence: str  # the measured number(s) and the model's prediction beside them; a line each part
    caveat: str | None = None  # where the machine interfered with these numbers; a line each
    chart: Chart | None = None


class Cell(BaseModel):
    """One target's figure in one row: the measured value, the reference and their ratio."""

    value: float
    reference: float | None = None
    ratio: float | None = None  # measured / reference
    samples: list[float] = []  # the figure in each repeat (or steady second) the machine left alone
    interference: bool = False  # the machine took CPU from the target while this was measured


class ComparisonRow(BaseModel):
    """One load shape and size, a cell per target."""

    key: str  # the same row in another run has the same key
    shape: str
    label: str  # "sync-cpubound n=3"
    unit: str  # "x T", "req/s"
    reference: str  # what the ratio is against: "model", "Little's law", ...
    tolerance: float  # |ratio - 1| within this agrees with the reference
    cpu_bound: bool  # the figure moves with the CPU's speed (judged against the stability band)
    bound: bool = False  # the reference is a limit: only beyond it is a departure
    cells: dict[str, Cell]

    def departure(self, cell: Cell) -> float | None:
        """How far the cell departs from its reference, in units of the row's tolerance."""
        if cell.ratio is None or not self.tolerance:
            return None
        beyond = cell.ratio - 1 if self.bound else abs(cell.ratio - 1)
        return max(0.0, beyond) / self.tolerance


@dataclass
class Section:
    """A part of the details: tables and plots under one heading, linked from the contents."""

    id: str
    title: str
    tables: list[Table] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    text: str = ""


def number(value: float | None) -> str:
    """A figure with as many digits as its size deserves."""
    if value is None or math.isnan(value):
        return "-"
    size = abs(value)
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
