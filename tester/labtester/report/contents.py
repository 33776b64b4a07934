"""What every form of the report shows, gathered once from the typed results: the answers, the
side-by-side comparison, the plots, the detail sections, and the changes since an earlier run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.table import Table

from labtester.report.clients import clients_section
from labtester.report.compare import EarlierRun, RunsCompared, compare
from labtester.results import Results
from labtester.scenarios import SHAPES
from labtester.views import Answer, ComparisonRow, Section


@dataclass
class Contents:
    results: Results
    answers: list[Answer]
    rows: list[ComparisonRow]
    answer_plots: dict[str, Path] = field(default_factory=dict)  # by answer key
    shape_plots: dict[str, list[Path]] = field(default_factory=dict)  # by load shape
    compared: RunsCompared | None = None

    @property
    def targets(self) -> list[str]:
        """The comparison's columns: every target with a figure, in the run's order."""
        named = {name for row in self.rows for name in row.cells}
        return [t.name for t in self.results.targets if t.name in named]

    def sections(self) -> list[Section]:
        """The details, in reading order: the machine, each load shape, census, metrics, findings,
        failures. Sections of the same id (the scraped metrics) are merged."""
        found = [machine_section(self.results)]
        for name, shape in SHAPES.items():
            found += shape.sections(self.results, self.shape_plots.get(name, []))
        found += [clients_section(self.results)]
        found += [Section(id="census", title="Process census", tables=[census_table(self.results)])]
        found += [Section(id="metrics", title="Scraped metrics", tables=[prometheus_table(self.results)])]
        found += [Section(id="findings", title="Findings"), Section(id="failures", title="Failures and gaps")]
        merged: dict[str, Section] = {}
        for section in found:
            tables = [t for t in section.tables if t.row_count]
            if section.id in merged:
                merged[section.id].tables += tables
                merged[section.id].plots += section.plots
            else:
                merged[section.id] = Section(section.id, section.title, tables, section.plots, section.text)
        # the metrics section sits with the census, after every load shape
        last = ("clients", "census", "metrics", "findings", "failures")
        order = [s for s in merged if s not in last] + list(last)
        return [merged[i] for i in order if i in merged]


def gather(results: Results, earlier: EarlierRun | None = None) -> Contents:
    answers = sorted((a for shape in SHAPES.values() for a in shape.answers(results)), key=lambda a: a.order)
    rows = [row for shape in SHAPES.values() for row in shape.comparison(results)]
    contents = Contents(results=results, answers=answers, rows=rows)
    if earlier is not None:
        before_rows = [row for shape in SHAPES.values() for row in shape.comparison(earlier.results)]
        contents.compared = compare(results, rows, earlier.results, before_rows, earlier.directory)
    return contents


def machine_section(results: Results) -> Section:
    stability = results.stability
    if stability is None:
        text = "No stability probe ran."
    else:
        state = "unstable" if stability.unstable else "stable"
        band = f"its noise band is +-{stability.band_pct:.0f} %"
        text = f"The machine was {state}: {stability.describe()}; {band}."
    return Section("machine", "Machine and calibration", [calibration_table(results)], text=text)


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("target", "server", "roles (idle)") else "right"
        )
    return table


def calibration_table(results: Results) -> Table:
    table = _table(
        "Calibration (sync-cpubound, server time): N sets the scale; bursts are judged by their own "
        "measured work",
        ("target", "iterations", "N s", "measured s", "error %", "rounds", "verdict"),
    )
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


def _roles(census: dict[str, object]) -> str:
    counts: dict[str, int] = {}
    for process in census["processes"]:  # type: ignore[attr-defined]
        counts[process["role"]] = counts.get(process["role"], 0) + 1
    return ", ".join(f"{count} {role}" for role, count in sorted(counts.items()))


def census_table(results: Results) -> Table:
    columns = ("target", "server", "workers", "processes (idle)", "roles (idle)", "threads", "RSS MB")
    table = _table("Process census", (*columns, "processes under load"))
    for target in results.targets:
        info, idle = target.info, target.census.idle
        loaded = max(target.census.under_load, key=lambda c: c.census["process_count"], default=None)
        threads = f" x {info.threads}" if info and info.threads > 1 else ""
        table.add_row(
            target.name,
            f"{info.framework}/{info.server}" if info else "?",
            f"{info.workers}{threads}" if info else "-",
            str(idle["process_count"]) if idle else "-",
            _roles(idle) if idle else "-",
            str(idle["thread_count"]) if idle else "-",
            f"{idle['rss_bytes'] / 2**20:.0f}" if idle else "-",
            f"{loaded.census['process_count']} ({loaded.endpoint or loaded.scenario})" if loaded else "-",
        )
    return table


def prometheus_table(results: Results) -> Table:
    table = _table(
        "Prometheus's counts against the servers' own", ("target", "route", "server", "Prometheus")
    )
    for target in results.targets:
        if check := target.prometheus:
            for route in check.routes:
                table.add_row(target.name, route.route, f"{route.server:g}", str(route.prometheus))
    return table
