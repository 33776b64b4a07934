"""Reports built from the results document: console summary, files, plots, HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from labtester.report.console import PLAIN_WIDTH, print_summary
from labtester.report.files import write_csv, write_json, write_scenario_csv
from labtester.report.html import write_html
from labtester.report.plots import write_plots
from labtester.results import build_results, read_raw


def write_reports(run_dir: Path, console: Console) -> dict[str, Any]:
    """Build results.json, requests.csv, plots and report.html from the raw log; print the summary."""
    raw = read_raw(run_dir)
    document = build_results(raw)
    write_json(document, run_dir / "results.json")
    write_csv(document, run_dir / "requests.csv")
    write_scenario_csv(raw, run_dir / "scenario-requests.csv")
    plots = write_plots(document, run_dir / "plots")
    write_html(document, plots, run_dir / "report.html")
    print_summary(document, console)
    with (run_dir / "summary.txt").open("w", encoding="utf-8") as file:
        print_summary(document, Console(file=file, width=PLAIN_WIDTH, no_color=True, force_terminal=False))
    console.print(f"Results: {run_dir}/ (results.json, requests.csv, plots/, report.html)", highlight=False)
    return document
