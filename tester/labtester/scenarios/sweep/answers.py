"""What the sweep answers (how many requests at once when each mixes CPU and waits) and its rows of
the side-by-side comparison: each target's best speedup against its bound 1/(1 - p)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labtester.scenarios.sweep.analyse import VariantSummary
from labtester.scenarios.sweep.report import BEYOND_BOUND, best, sections
from labtester.views import Answer, Cell, Chart, ComparisonRow, Line

if TYPE_CHECKING:
    from labtester.results import Results


def _measured(name: str, variant: VariantSummary) -> str:
    top = best(variant)
    bound = f" (bound {variant.bound:.1f})" if variant.bound else ""
    knee = f", p99 rising from {variant.degrades_at}" if variant.degrades_at else ", p99 never rising"
    return f"{name} {top.speedup or 0:.1f}x at {top.concurrency}{bound}{knee}"


def answer(results: Results) -> Answer | None:
    """From the variants with the wait in one part: the speedup each target reached against its
    bound, where p99 started to rise, and the study's rule io/cpu beside them."""
    whole = [(label, rows) for label, rows in sections(results) if rows[0][1].params.splits == 1]
    if not whole:
        return None
    parts = []
    for label, rows in whole:
        rule = rows[0][1].recommended_worker_connections
        advice = f"; io/cpu = {rule:.0f}" if rule else ""
        parts.append(f"{label}: " + ", ".join(_measured(name, v) for name, v in rows) + advice)
    label, rows = whole[0]
    return Answer(
        order=50,
        key="mixed",
        question="How many requests at once when each mixes CPU and waits?",
        answer=(
            "About io/cpu per core that runs the CPU parts: up to there the waits overlap, beyond it "
            "the CPU parts queue and p99 rises (the speedup's bound is 1/(1 - p), p = io/(cpu + io))."
        ),
        evidence="Best speedup over one at a time: " + "; ".join(parts) + ".",
        chart=Chart(
            name="answer-mixed",
            title=f"{label}: speedup against concurrency",
            x_label="requests at once",
            y_label="throughput / throughput at 1",
            reference="bound 1/(1 - p)",
            lines=[
                Line(
                    label=name,
                    x=[float(level.concurrency) for level in v.levels],
                    y=[level.speedup for level in v.levels],
                    reference=[v.bound] * len(v.levels),
                )
                for name, v in rows
            ],
        ),
    )


def comparison(results: Results) -> list[ComparisonRow]:
    """A row per variant: each target's best speedup against its bound 1/(1 - p)."""
    rows = []
    for _, found in sections(results):
        params = found[0][1].params
        cells = {}
        for name, variant in found:
            top, bound = best(variant), variant.bound
            if top.speedup:
                ratio = top.speedup / bound if bound else None
                cells[name] = Cell(value=top.speedup, reference=bound, ratio=ratio)
        rows.append(
            ComparisonRow(
                key=f"sweep/{params.query()}",
                shape="sweep",
                label=f"sweep {params.short_label()} best speedup",
                unit="x",
                reference="bound",
                tolerance=BEYOND_BOUND,
                cpu_bound=True,  # throughputs measured at different times: the CPU's speed moves them
                bound=True,
                cells=cells,
            )
        )
    return rows
