"""Tables as accessible HTML: a caption, column and row headers with their scope, numbers aligned;
the side-by-side comparison shaded by how far each figure departs from its reference."""

from __future__ import annotations

from html import escape

from rich.table import Table

from labtester.report.compare import RunsCompared
from labtester.report.contents import Contents
from labtester.views import Cell, ComparisonRow, number


def _table(title: str, heads: list[str], rows: list[str], css: str = "") -> str:
    """A table in a box of its own that scrolls sideways, never the page (a phone's screen). The
    caption is the title's name; its longer description stays outside the box, where it wraps."""
    name, _, description = title.partition(": ")
    about = f'<p class="caption">{escape(title)}</p>' if description else ""
    columns = "".join(f'<th scope="col">{head}</th>' for head in heads)
    table = (
        f'<table class="{css}"><caption>{escape(name)}</caption><thead><tr>{columns}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    return f'{about}<div class="scroll" role="region" aria-label="{escape(name)}" tabindex="0">{table}</div>'


def rich_table(table: Table) -> str:
    """A rich table (the console's) as HTML: its title the caption, its first column the row headers.
    A row whose first cell is blank continues the row above (the console's sizing table names a
    configuration on its first rate only): the cells blank throughout such a group span it, so
    no row header is left empty."""
    columns = [[str(cell) for cell in column.cells] for column in table.columns]
    numeric = [column.justify == "right" for column in table.columns]
    groups: list[list[tuple[str, ...]]] = []
    for values in zip(*columns, strict=True):
        if values[0].strip() or not groups:
            groups.append([values])
        else:
            groups[-1].append(values)
    rows = []
    for group in groups:
        # Each column the group's later rows leave blank is said once, spanning the group.
        spanned = [i for i in range(len(columns)) if all(not row[i].strip() for row in group[1:])]
        span = f' rowspan="{len(group)}"' if len(group) > 1 else ""
        for n, values in enumerate(group):
            cells = []
            for i, v in enumerate(values):
                if n > 0 and i in spanned:
                    continue
                at = span if n == 0 and i in spanned else ""
                if i == 0:
                    cells.append(f'<th scope="row"{at}>{escape(v)}</th>')
                else:
                    cells.append(
                        f'<td class="num"{at}>{escape(v)}</td>' if numeric[i] else f"<td{at}>{escape(v)}</td>"
                    )
            rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(str(table.title or "Table"), [escape(str(c.header)) for c in table.columns], rows)


def shade(row: ComparisonRow, cell: Cell) -> str:
    """agrees: within the row's tolerance; near: within twice it; departs: beyond; plain: no reference;
    hindered: beyond it while the machine took CPU (the machine's doing, shaded apart)."""
    departure = row.departure(cell)
    if departure is None:
        return "plain"
    if departure > 1 and cell.interference:
        return "hindered"
    return "agrees" if departure <= 1 else "near" if departure <= 2 else "departs"


def _cell(row: ComparisonRow, target: str, compared: RunsCompared | None) -> str:
    cell = row.cells.get(target)
    if cell is None:
        return '<td class="none">-</td>'
    level = shade(row, cell)
    parts = [f'<span class="v">{number(cell.value)}</span>']
    title = f"{row.label}, {target}: {number(cell.value)} {row.unit}"
    if cell.ratio is not None:
        parts.append(f'<span class="r">= {cell.ratio:.2f} x {escape(row.reference)}</span>')
        title += (
            f"; {row.reference} {number(cell.reference)}: measured/{row.reference} {cell.ratio:.2f} ({level})"
        )
    if cell.interference:
        parts.append('<span class="i">! interference</span>')
        title += "; the machine took CPU meanwhile"
    change = compared.change(row.key, target) if compared else None
    if change and change.earlier is not None and change.change_pct is not None:
        mark = "beyond" if change.verdict == "beyond noise" else "within"
        parts.append(
            f'<span class="was {mark}">was {number(change.earlier)}, {change.change_pct:+.0f} % '
            f"({escape(change.verdict)})</span>"
        )
    classes = f"{level} interference" if cell.interference else level
    return f'<td class="{classes}" title="{escape(title)}">{"".join(parts)}</td>'


COMPARISON = (
    "Side by side: each cell the measured figure and its ratio to the row's reference (the model, "
    "Little's law, a bound), shaded by how far it departs: none within the row's tolerance, light "
    "within twice it, dark beyond; blue and ! where the machine took CPU from the target meanwhile "
    "(the machine's doing, not the server's). x one: the time n requests took over one request's own "
    "work (its measured CPU seconds; for a wait, one wait alone)."
)


def comparison_table(contents: Contents) -> str:
    targets = {t.name: t for t in contents.results.targets}
    heads = ["figure (unit)"]
    for name in contents.targets:
        info = targets[name].info
        label = (
            f"<br><small>{escape(info.label(name).removeprefix(name).strip(' ()'))}</small>" if info else ""
        )
        heads.append(f"{escape(name)}{label}")
    rows = []
    for row in contents.rows:
        label = f"{escape(row.label)} <small>({escape(row.unit)})</small>"
        cells = "".join(_cell(row, name, contents.compared) for name in contents.targets)
        rows.append(f'<tr><th scope="row">{label}</th>{cells}</tr>')
    return _table(COMPARISON, heads, rows, "comparison")


def changes_table(compared: RunsCompared) -> str:
    heads = ["figure", "target", "earlier", "now", "change", "verdict", "judged by"]
    rows = []
    for change in compared.changes:
        pct = "-" if change.change_pct is None else f"{change.change_pct:+.1f} %"
        rows.append(
            f'<tr class="{change.verdict.replace(" ", "-")}"><th scope="row">{escape(change.label)} '
            f"<small>({escape(change.unit)})</small></th><td>{escape(change.target)}</td>"
            f'<td class="num">{number(change.earlier)}</td><td class="num">{number(change.now)}</td>'
            f'<td class="num">{pct}</td><td>{escape(change.verdict)}</td><td>{escape(change.noise)}</td></tr>'
        )
    return _table(f"Changes: every figure against run {compared.earlier_id}", heads, rows)
