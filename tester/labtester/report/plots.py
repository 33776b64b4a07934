"""PNG plots: each load shape draws its own; each answer's chart is drawn here from its data."""

from __future__ import annotations

from pathlib import Path

from labtester.plotting import gaps, plt, save_png
from labtester.rawlog import Record
from labtester.report.contents import Contents
from labtester.scenarios import SHAPES
from labtester.views import Chart

# An answer's chart sits beside its paragraph: small, and sharp on a phone's screen.
ANSWER_SIZE_IN = (5.0, 3.0)
ANSWER_DPI = 110


def chart_plot(chart: Chart, path: Path) -> Path:
    figure, axis = plt.subplots(figsize=ANSWER_SIZE_IN)
    for index, line in enumerate(chart.lines):
        colour = plt.cm.tab10(index % 10)
        axis.plot(line.x, gaps(line.y), marker="o", markersize=3, color=colour, label=line.label)
        if line.reference:
            axis.plot(line.x, gaps(line.reference), linestyle="--", color=colour, alpha=0.6)
    axis.set_title(f"{chart.title} (dashed: {chart.reference})", fontsize=8)
    axis.set_xlabel(chart.x_label, fontsize=8)
    axis.set_ylabel(chart.y_label, fontsize=8)
    if chart.integer_x:
        axis.set_xticks(sorted({x for line in chart.lines for x in line.x}))
    axis.tick_params(labelsize=7)
    axis.set_ylim(bottom=0)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=6)
    figure.tight_layout()
    return save_png(figure, path, ANSWER_DPI)


def write_plots(contents: Contents, records: list[Record], directory: Path) -> None:
    """Every shape's plots and every answer's chart, recorded in `contents`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, shape in SHAPES.items():
        contents.shape_plots[name] = shape.plots(contents.results, records, directory)
    for answer in contents.answers:
        if answer.chart and any(line.x for line in answer.chart.lines):
            contents.answer_plots[answer.key] = chart_plot(
                answer.chart, directory / f"{answer.chart.name}.png"
            )
