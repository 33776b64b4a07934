"""Reports built from the raw log: the results document, the console summary, files, plots, HTML."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from labtester.rawlog import read_raw
from labtester.report.console import PLAIN_WIDTH, print_summary
from labtester.report.files import write_files
from labtester.report.html import write_html
from labtester.report.plots import write_plots
from labtester.results import Results, build_results


def write_reports(run_dir: Path, console: Console) -> Results:
    """Build results.json, the CSVs, the plots and report.html from the raw log; print the summary."""
    raw = read_raw(run_dir)
    results = build_results(raw)
    write_files(results, raw, run_dir)
    plots = write_plots(results, raw, run_dir / "plots")
    write_html(results, plots, run_dir / "report.html")
    print_summary(results, console)
    with (run_dir / "summary.txt").open("w", encoding="utf-8") as file:
        print_summary(results, Console(file=file, width=PLAIN_WIDTH, no_color=True, force_terminal=False))
    console.print(f"Results: {run_dir}/ (results.json, requests.csv, plots/, report.html)", highlight=False)
    return results
