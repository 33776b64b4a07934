"""Reports built from the raw log: the results document, the console summary, files, plots, HTML."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from labtester.assembly import build_results, merged
from labtester.atomic import replacing
from labtester.rawlog import RAW_LOG, read_raw
from labtester.report.compare import COMPARE_CSV, EarlierRun, write_csv
from labtester.report.console import PLAIN_WIDTH, print_summary
from labtester.report.contents import gather
from labtester.report.files import write_files
from labtester.report.html import write_html
from labtester.report.plots import write_plots
from labtester.results import Results


def write_reports(
    run_dir: Path, console: Console, compare: EarlierRun | None = None, plots: bool = True
) -> Results:
    """Build results.json and the CSVs from the raw log, print the summary, then draw the plots
    and report.html (the summary waits for no plot: they took 6 of the report's 11 CPU seconds).
    With `compare` (an earlier run), every figure beside its earlier value; without `plots`,
    report.html holds the answers and tables with no plot (`labtester report` draws them later)."""
    logged = read_raw(run_dir)
    for number, reason in logged.skipped:
        console.print(f"{run_dir / RAW_LOG}: line {number} skipped, {reason}", highlight=False, markup=False)
    raw = merged(logged)  # every client's rows of a step joined, before any statistic
    results = build_results(raw)
    write_files(results, raw, run_dir)
    contents = gather(results, compare)
    if contents.compared:
        write_csv(contents.compared, run_dir / COMPARE_CSV)
    print_summary(contents, console)
    with replacing(run_dir / "summary.txt") as file:
        print_summary(contents, Console(file=file, width=PLAIN_WIDTH, no_color=True, force_terminal=False))
    if plots:
        write_plots(contents, raw, run_dir / "plots")
    write_html(contents, run_dir / "report.html")
    drawn = "plots/, " if plots else ""
    console.print(f"Results: {run_dir}/ (results.json, requests.csv, {drawn}report.html)", highlight=False)
    if not plots:
        said = f"No plots (plots: false): `python -m labtester report {run_dir}` draws them."
        console.print(said, highlight=False, markup=False)
    return results
