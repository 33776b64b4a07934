"""PNG plots: each load shape draws its own."""

from __future__ import annotations

from pathlib import Path

from labtester.rawlog import Record
from labtester.results import Results
from labtester.scenarios import SHAPES


def write_plots(results: Results, records: list[Record], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [plot for shape in SHAPES.values() for plot in shape.plots(results, records, directory)]
