"""The summary people read in a terminal or in `kubectl logs`: the machine, tables, then findings."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from labtester.results import Results, TargetResult
from labtester.scenarios import SHAPES

PLAIN_WIDTH = 140  # kubectl logs and files: wide enough that no column is cut
MARKERS = {
    "failure": "FAILED",
    "departure": "model departs",
    "interference": "interference",
    "noise": "noise",
}


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**20:.0f}"


def _roles(census: dict[str, object]) -> str:
    counts: dict[str, int] = {}
    for process in census["processes"]:  # type: ignore[attr-defined]
        counts[process["role"]] = counts.get(process["role"], 0) + 1
    return ", ".join(f"{count} {role}" for role, count in sorted(counts.items()))


def _census_row(target: TargetResult) -> list[str]:
    info, idle = target.info, target.census.idle
    loaded = max(target.census.under_load, key=lambda c: c.census["process_count"], default=None)
    threads = f" x {info.threads}" if info and info.threads > 1 else ""
    return [
        target.name,
        f"{info.framework}/{info.server}" if info else "?",
        f"{info.workers}{threads}" if info else "-",
        str(idle["process_count"]) if idle else "-",
        _roles(idle) if idle else "-",
        str(idle["thread_count"]) if idle else "-",
        _mb(idle["rss_bytes"] if idle else None),
        f"{loaded.census['process_count']} ({loaded.endpoint or loaded.scenario})" if loaded else "-",
    ]


def census_table(results: Results) -> Table:
    table = Table(title="Process census", box=box.SIMPLE_HEAD, title_justify="left")
    for column in (
        "target",
        "server",
        "workers",
        "processes (idle)",
        "roles (idle)",
        "threads",
        "RSS MB",
        "processes under load",
    ):
        table.add_column(column)
    for target in results.targets:
        table.add_row(*_census_row(target))
    return table


def calibration_table(results: Results) -> Table:
    table = Table(
        title="Calibration (sync-cpubound, server time): N sets the scale; bursts are judged by "
        "their own measured work",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in ("target", "iterations", "N s", "measured s", "error %", "rounds", "verdict"):
        table.add_column(column, justify="right" if column != "target" else "left")
    for target in results.targets:
        c, check = target.calibration, target.calibration_check
        if c and check:
            table.add_row(
                target.name,
                str(c.iterations),
                f"{c.target_seconds:g}",
                f"{c.measured_seconds:.3f}",
                f"{c.error_pct:+.1f}",
                str(len(c.rounds)),
                check.verdict,
            )
    return table


def make_console() -> Console:
    """A terminal gets colour and its own width; anything else plain text at a fixed width."""
    console = Console()
    return console if console.is_terminal else Console(width=PLAIN_WIDTH)


def print_summary(results: Results, console: Console) -> None:
    run = results.run
    console.print(
        f"\nconcurrency-lab run {run.id} ({run.status}), N = {run.settings['work_seconds']:g} s",
        highlight=False,
    )
    if stability := results.stability:
        state = "UNSTABLE" if stability.unstable else "stable"
        console.print(f"Machine {state}: {stability.describe()}", highlight=False, markup=False)
    tables = [census_table(results), calibration_table(results)]
    tables += [table for shape in SHAPES.values() for table in shape.tables(results)]
    for table in tables:
        if table.row_count:
            console.print(table)
    console.print("Findings:", highlight=False)
    for finding in results.findings:
        marker = MARKERS.get(finding.kind, "-")
        console.print(f"  {marker} {finding.text}", highlight=False, markup=False)
    if results.missing:
        console.print("Not measured:", highlight=False)
        for item in results.missing:
            console.print(f"  - {item}", highlight=False, markup=False)
    failed = len(results.failed_checks)
    console.print(f"FAILED checks: {failed}" if failed else "all checks passed", highlight=False)
