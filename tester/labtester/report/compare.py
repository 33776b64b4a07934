"""Two runs compared (`--compare EARLIER`): for every figure of the comparison, the earlier value
and the change, and whether the change exceeds the noise the two runs measured.

As pyperf's compare_to: a change counts only when the runs' own repeats say it is not chance
(Student's two-sample t-test at 95 % over each run's samples of that figure, pooled variance),
and, for a figure that moves with the CPU's speed, when it is also larger than either run's
stability band. A figure with fewer than two samples in either run has no measured noise: it is
shown, not judged. Repeats the machine interfered with (another process took the CPU) are no
sample of the figure's noise: they are left out of it.
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from labtester.assembly import build_results
from labtester.atomic import replacing
from labtester.rawlog import RAW_LOG, read_raw
from labtester.report.files import RESULTS_JSON
from labtester.results import Results
from labtester.views import Cell, ComparisonRow

# Two-tailed 95 % points of Student's t for 1..30 degrees of freedom; beyond, the normal's 1.96
# is within 4 % of them.
T95: tuple[float, ...] = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
    *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
    *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)
COMPARE_CSV = "compare.csv"

Verdict = Literal["beyond noise", "within noise", "not judged", "new", "gone"]


class Change(BaseModel):
    key: str
    label: str
    target: str
    unit: str
    earlier: float | None
    now: float | None
    change_pct: float | None
    verdict: Verdict
    noise: str  # how the verdict was reached, in words


class RunsCompared(BaseModel):
    earlier_id: str
    earlier_dir: str
    changes: list[Change]

    def change(self, key: str, target: str) -> Change | None:
        return next((c for c in self.changes if c.key == key and c.target == target), None)

    @property
    def beyond_noise(self) -> list[Change]:
        return [c for c in self.changes if c.verdict == "beyond noise"]


def load_results(directory: Path) -> Results:
    """A results folder's typed results: its results.json, else rebuilt from its raw log. A
    folder that gives neither raises ValueError, in one line saying why."""
    problems = []
    path = directory / RESULTS_JSON
    if path.exists():
        try:
            return Results.model_validate_json(path.read_bytes())
        except (OSError, ValidationError) as error:  # another schema, or cut short: the raw log decides
            problems.append(f"its {RESULTS_JSON} is no results document of this version ({_first(error)})")
    if (directory / RAW_LOG).exists():
        try:
            return build_results(read_raw(directory))
        except Exception as error:  # another version's raw log, however it fails to analyse
            problems.append(f"its {RAW_LOG} cannot be analysed ({error.__class__.__name__}: {error})")
    if not problems:
        raise ValueError(f"{directory} is not a results folder (no {RESULTS_JSON} or {RAW_LOG})")
    raise ValueError(f"{directory}: {'; '.join(problems)}")


def _first(error: Exception) -> str:
    if isinstance(error, ValidationError):
        problem = error.errors()[0]
        return f"{'.'.join(str(p) for p in problem['loc'])}: {problem['msg']}".lstrip(": ")
    return str(error)


@dataclass(frozen=True)
class EarlierRun:
    """--compare's run, read before the new one starts: where it is, and what it measured."""

    directory: Path
    results: Results


def load_earlier(directory: Path) -> EarlierRun:
    return EarlierRun(directory, load_results(directory))


def t_critical(degrees: int) -> float:
    return T95[degrees - 1] if degrees <= len(T95) else 1.96


def significant(a: list[float], b: list[float]) -> bool:
    """Student's t-test at 95 % (pyperf's is_significant): do the means differ beyond chance?"""
    degrees = len(a) + len(b) - 2
    pooled = ((len(a) - 1) * statistics.variance(a) + (len(b) - 1) * statistics.variance(b)) / degrees
    difference = abs(statistics.fmean(a) - statistics.fmean(b))
    if pooled == 0:
        return difference > 0
    return difference / math.sqrt(pooled * (1 / len(a) + 1 / len(b))) > t_critical(degrees)


def judge(row: ComparisonRow, now: Cell, before: Cell, band_pct: float | None) -> tuple[Verdict, str]:
    if len(now.samples) < 2 or len(before.samples) < 2:
        return "not judged", "fewer than 2 repeats the machine left alone in a run: no noise measured"
    repeats = f"t-test over {len(before.samples)} + {len(now.samples)} samples"
    if not significant(before.samples, now.samples):
        return "within noise", f"{repeats}: chance"
    change = abs(now.value / before.value - 1) * 100 if before.value else math.inf
    if row.cpu_bound and band_pct is not None:
        if change <= band_pct:
            return (
                "within noise",
                f"{repeats}: beyond chance, but inside the machine's band +-{band_pct:.0f} %",
            )
        return "beyond noise", f"{repeats}, and beyond the machine's band +-{band_pct:.0f} %"
    return "beyond noise", f"{repeats}: beyond chance"


def _band(*runs: Results) -> float | None:
    bands = [r.stability.band_pct for r in runs if r.stability]
    return max(bands) if bands else None


def compare(
    now: Results,
    now_rows: list[ComparisonRow],
    earlier: Results,
    earlier_rows: list[ComparisonRow],
    where: Path,
) -> RunsCompared:
    before = {row.key: row for row in earlier_rows}
    band = _band(now, earlier)
    changes = []
    for row in now_rows:
        old = before.get(row.key)
        for target in sorted(set(row.cells) | set(old.cells if old else {})):
            cell, previous = row.cells.get(target), old.cells.get(target) if old else None
            changes.append(_change(row, target, cell, previous, band))
    for row in earlier_rows:
        if row.key not in {r.key for r in now_rows}:
            changes += [_change(row, target, None, cell, band) for target, cell in sorted(row.cells.items())]
    return RunsCompared(earlier_id=earlier.run.id, earlier_dir=str(where), changes=changes)


def _change(
    row: ComparisonRow, target: str, now: Cell | None, before: Cell | None, band: float | None
) -> Change:
    verdict: Verdict
    if now is None or before is None:
        verdict, noise = ("gone", "not measured now") if now is None else ("new", "not measured before")
    else:
        verdict, noise = judge(row, now, before, band)
    pct = (now.value / before.value - 1) * 100 if now and before and before.value else None
    return Change(
        key=row.key,
        label=row.label,
        target=target,
        unit=row.unit,
        earlier=before.value if before else None,
        now=now.value if now else None,
        change_pct=pct,
        verdict=verdict,
        noise=noise,
    )


def write_csv(compared: RunsCompared, path: Path) -> Path:
    with replacing(path, newline="") as file:
        writer = csv.DictWriter(file, list(Change.model_fields))
        writer.writeheader()
        writer.writerows(change.model_dump() for change in compared.changes)
    return path
