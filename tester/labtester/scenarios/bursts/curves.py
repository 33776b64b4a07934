"""One endpoint's bursts on one target as a curve: n against how long n took next to one alone,
beside the model's prediction; what the answers and the comparison are built from."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labtester.scenarios.bursts.analyse import MODEL_AGREEMENT, BurstRun, BurstsSummary, EndpointBursts, Point
from labtester.views import Cell, ComparisonRow, Line

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


@dataclass(frozen=True)
class Curve:
    target: TargetResult
    endpoint: EndpointBursts

    @property
    def name(self) -> str:
        return f"{self.target.name} {self.endpoint.name}"

    @property
    def points(self) -> list[Point]:
        """The sizes with a measured makespan and a model, smallest first."""
        return [p for p in self.endpoint.points if p.makespan is not None and p.model_s]

    @property
    def largest(self) -> Point | None:
        return self.points[-1] if self.points else None

    def _units(self, point: Point, clear: bool = False) -> list[tuple[BurstRun, float]]:
        """Each repeat with its unit, one request's own demand: the mean CPU seconds its requests
        measured (CPU work: a CPU that runs slower makes the unit bigger too), plus for mixed work
        the wait its path showed alone, or the time of one wait alone. `clear`: only the repeats
        the machine did not interfere with."""
        single = self.endpoint.single_s
        runs = [r for r in point.runs if r.makespan_s is not None]
        runs = [r for r in runs if r.verdict != "interference"] if clear else runs
        if self.endpoint.work == "io":
            return [(r, single) for r in runs if single]
        wait = (self.endpoint.wait_s or 0.0) if self.endpoint.work != "cpu" else 0.0
        return [(r, r.cpu_s / r.n + wait) for r in runs if r.cpu_s]

    def samples(self, point: Point, clear: bool = False) -> list[float]:
        """How long n took in units of one request's own demand, in each repeat."""
        return [(r.makespan_s or 0.0) / unit for r, unit in self._units(point, clear)]

    def times(self, point: Point, clear: bool = False) -> float | None:
        """How long n took next to one request (x one), median of the repeats (`clear`: of those
        the machine left alone; None if it hit them all)."""
        values = self.samples(point, clear)
        return statistics.median(values) if values else None

    def model_times(self, point: Point) -> float | None:
        """What the model predicts in the same unit: sharing the slots and cores over the
        requests' measured work."""
        values = [r.model_s / unit for r, unit in self._units(point) if r.model_s is not None]
        return statistics.median(values) if values else None

    def hindered(self) -> tuple[int, int, set[str]]:
        """Bursts the machine interfered with, bursts in all, and who took the CPU."""
        runs = [r for p in self.points for r in p.runs]
        hit = [r for r in runs if r.verdict == "interference"]
        return len(hit), len(runs), {r.cause for r in hit if r.cause}

    def line(self, label: str | None = None) -> Line:
        points = self.points
        return Line(
            label=label or self.name,
            x=[float(p.n) for p in points],
            y=[self.times(p) for p in points],
            reference=[self.model_times(p) for p in points],
        )


def curves(results: Results) -> list[Curve]:
    """Every target's measured endpoints, in target order, then the order they were run."""
    return [
        Curve(target, endpoint)
        for target, summary in results.summaries(BurstsSummary)
        for endpoint in summary.endpoints
        if endpoint.single_s and any(p.makespan is not None and p.model_s for p in endpoint.points)
    ]


def caveat(used: list[Curve]) -> str | None:
    """Where the machine slowed the bursts behind an answer: said, never blamed on a server."""
    counts = [(c, *c.hindered()) for c in used]
    hit = [(c, n, causes) for c, n, _, causes in counts if n]
    if not hit:
        return None
    takers = sorted({cause for _, _, causes in hit for cause in causes})
    names = sorted({c.target.name for c, _, _ in hit})
    return (
        f"Interference: {' and '.join(takers)} took CPU in {sum(n for _, n, _ in hit)} of these "
        f"{sum(total for _, _, total, _ in counts)} bursts ({', '.join(names)}), slowing them: the "
        "machine, not the servers."
    )


def _cell(curve: Curve, point: Point) -> Cell:
    return Cell(
        value=curve.times(point) or 0.0,
        reference=curve.model_times(point),
        ratio=point.ratio,
        samples=curve.samples(point, clear=True),  # noise is what the repeats vary, not a neighbour
        interference=any(r.verdict == "interference" for r in point.runs),
    )


def comparison(results: Results) -> list[ComparisonRow]:
    """A row per endpoint and burst size, a cell per target: n's time next to one request's own
    (x one), and its ratio to processor sharing over the requests' measured work."""
    rows: dict[tuple[str, int], ComparisonRow] = {}
    for curve in curves(results):
        for point in curve.points:
            row = rows.setdefault(
                (curve.endpoint.name, point.n),
                ComparisonRow(
                    key=f"bursts/{curve.endpoint.name}/{point.n}",
                    shape="bursts",
                    label=f"{curve.endpoint.name} n={point.n}",
                    unit="x one",
                    reference="model",
                    tolerance=MODEL_AGREEMENT,
                    cpu_bound=False,  # in units of the work each request measured
                    cells={},
                ),
            )
            row.cells[curve.target.name] = _cell(curve, point)
    endpoints = list(dict.fromkeys(name for name, _ in rows))  # in the order first measured
    return [rows[key] for key in sorted(rows, key=lambda key: (endpoints.index(key[0]), key[1]))]
