"""The summary people read in a terminal or in `kubectl logs`: the answers first (about 30 lines),
the side-by-side comparison narrowed to 100 columns, what changed since an earlier run, then every
table and the findings."""

from __future__ import annotations

import textwrap

from rich import box
from rich.console import Console
from rich.table import Table

from labtester.report.clients import clients_table, release_text
from labtester.report.contents import Contents, calibration_table, census_table
from labtester.scenarios import SHAPES
from labtester.views import Answer, ComparisonRow, number

PLAIN_WIDTH = 140  # kubectl logs and files: wide enough that no column of the detail tables is cut
NARROW = 100  # the answers and the comparison fit a narrow terminal
MARKERS = {
    "failure": "FAILED",
    "departure": "model departs",
    "interference": "interference",
    "noise": "noise",
    "answer": "app",
}


def answer_lines(answers: list[Answer], width: int = NARROW) -> list[str]:
    """Each answer as a short paragraph: the question and its answer, the numbers, the caveat."""
    lines = ["Answers (model's prediction in brackets; plots and details in report.html)"]
    for answer in answers:
        lines += textwrap.wrap(
            f"{answer.question} {answer.answer}", width, initial_indent="* ", subsequent_indent="  "
        )
        for paragraph in answer.evidence.splitlines():  # a line each (the mix: per configuration)
            lines += textwrap.wrap(paragraph, width, initial_indent="  ", subsequent_indent="  ")
        for caveat in (answer.caveat or "").splitlines():
            lines += textwrap.wrap(caveat, width, initial_indent="  ! ", subsequent_indent="    ")
    return lines


def cell_text(row: ComparisonRow, target: str) -> str:
    cell = row.cells.get(target)
    if cell is None:
        return ""
    text = number(cell.value)
    if cell.ratio is not None:
        text += f" ({cell.ratio:.2f})"
    departure = row.departure(cell)
    return (
        text + ("*" if departure is not None and departure > 1 else "") + ("!" if cell.interference else "")
    )


def _label(row: ComparisonRow) -> str:
    return f"{row.label} ({row.unit})"


def comparison_tables(contents: Contents, width: int = NARROW) -> list[Table]:
    """The comparison, its target columns split over as many tables as keep each within `width`."""
    rows, targets = contents.rows, contents.targets
    if not rows:
        return []
    # A column's text, its padding (1 each side, none at the table's edges) and the divider before
    # it; the label column also carries the table's two edges: width = sum + 3 x columns - 1.
    label_width = max(len(_label(row)) for row in rows) + 2
    chunks: list[list[str]] = [[]]
    used = label_width
    for target in targets:
        cell_width = max(len(target), *(len(cell_text(row, target)) for row in rows)) + 3
        if chunks[-1] and used + cell_width > width:
            chunks.append([])
            used = label_width
        chunks[-1].append(target)
        used += cell_width
    tables = []
    for chunk in chunks:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
        table.title = (
            "Side by side: measured (measured / reference); * beyond the row's tolerance; ! interference"
        )
        table.add_column("figure (unit)", no_wrap=True)
        for target in chunk:
            table.add_column(target, justify="right", no_wrap=True)
        for row in rows:
            table.add_row(_label(row), *(cell_text(row, target) for target in chunk))
        tables.append(table)
    return tables


def print_changes(contents: Contents, console: Console) -> None:
    compared = contents.compared
    if compared is None:
        return
    counts = {v: sum(1 for c in compared.changes if c.verdict == v) for v in ("within noise", "not judged")}
    beyond = compared.beyond_noise
    console.print(
        f"Compared with run {compared.earlier_id}: {len(beyond)} of {len(compared.changes)} figures changed "
        f"beyond the noise both runs measured, {counts['within noise']} within it, {counts['not judged']} "
        "not judged (fewer than 2 repeats the machine left alone); every figure in compare.csv.",
        highlight=False,
        markup=False,
    )
    if beyond:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for column in ("figure (unit)", "target", "earlier", "now", "change %"):
            table.add_column(column, justify="left" if column in ("figure (unit)", "target") else "right")
        for change in beyond:
            pct = "-" if change.change_pct is None else f"{change.change_pct:+.0f}"
            table.add_row(
                f"{change.label} ({change.unit})",
                change.target,
                number(change.earlier),
                number(change.now),
                pct,
            )
        console.print(table)


def make_console() -> Console:
    """A terminal gets colour and its own width; anything else plain text at a fixed width."""
    console = Console()
    return console if console.is_terminal else Console(width=PLAIN_WIDTH)


def print_summary(contents: Contents, console: Console) -> None:
    results = contents.results
    run = results.run
    state = ""
    if stability := results.stability:
        state = f"; machine {'UNSTABLE' if stability.unstable else 'stable'} (CV {stability.cv_pct:.0f} %)"
    console.print(
        f"\nconcurrency-lab run {run.id} ({run.status}), {results.measured()}{state}",
        highlight=False,
    )
    for line in answer_lines(contents.answers):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for table in comparison_tables(contents):
        console.print(table)
    print_changes(contents, console)
    if stability:
        state = "UNSTABLE" if stability.unstable else "stable"
        console.print(f"Machine {state}: {stability.describe()}", highlight=False, markup=False)
    tables = [census_table(results), calibration_table(results)]
    tables += [table for shape in SHAPES.values() for table in shape.tables(results)]
    if run.clients > 1:  # what each client spent, and how tight the release was across them
        tables.append(clients_table(results))
    for table in tables:
        if table.row_count:
            console.print(table)
    if run.clients > 1 and (release := release_text(results)):
        console.print(release, highlight=False, markup=False)
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
