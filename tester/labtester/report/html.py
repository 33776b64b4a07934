"""One self-contained HTML page that answers first: the answers with their numbers and plots, the
side-by-side comparison, then the details, each linked from a short table of contents.

One file: the styles inline and every plot embedded, so it opens offline, from a results volume or
an e-mail. Readable on a phone (the grid folds to one column, wide tables scroll in their own box)
and printable (no navigation, no split figures); every plot has alt text in words.
"""

from __future__ import annotations

import base64
import struct
from html import escape
from pathlib import Path

from labtester.atomic import write_text
from labtester.findings.wording import plural
from labtester.report.contents import Contents
from labtester.report.style import STYLE
from labtester.report.tables import changes_table, comparison_table, rich_table
from labtester.views import Answer, Section


def _image(path: Path, alt: str, css: str = "") -> str:
    data = path.read_bytes()
    width, height = struct.unpack(">II", data[16:24])  # the PNG's IHDR: the page keeps its space
    return (
        f'<img class="{css}" src="data:image/png;base64,{base64.b64encode(data).decode()}" '
        f'width="{width}" height="{height}" alt="{escape(alt)}">'
    )


def _answer(answer: Answer, plot: Path | None) -> str:
    caveats = "<br>".join(map(escape, (answer.caveat or "").splitlines()))
    caveat = f'<p class="caveat" role="note">{caveats}</p>' if caveats else ""
    evidence = "<br>".join(map(escape, answer.evidence.splitlines()))  # its lines kept apart
    figure = ""
    if plot is not None and answer.chart is not None:
        caption = f"<figcaption>Solid: measured; dashed: {escape(answer.chart.reference)}.</figcaption>"
        figure = f"<figure>{_image(plot, answer.chart.alt())}{caption}</figure>"
    return (
        f'<article class="answer" id="answer-{escape(answer.key)}"><h3>{escape(answer.question)}</h3>'
        f'<p class="short">{escape(answer.answer)}</p><p class="evidence">{evidence}</p>'
        f"{caveat}{figure}</article>"
    )


def _plot_alt(path: Path, section: Section) -> str:
    """What a detail plot shows: its section and the name its load shape gave it."""
    return f"{section.title}: {path.stem.replace('-', ' ')} (the numbers are in the tables of this section)"


def _findings(contents: Contents, kinds: tuple[str, ...]) -> str:
    items = [
        f'<li class="{f.kind}"><strong>{escape(f.kind)}</strong> {escape(f.text)}</li>'
        for f in contents.results.findings
        if f.kind in kinds
    ]
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _section(contents: Contents, section: Section) -> str:
    parts = [f'<section id="{section.id}"><h2>{escape(section.title)}</h2>']
    if section.text:
        parts.append(f"<p>{escape(section.text)}</p>")
    parts += [rich_table(table) for table in section.tables]
    figures = [
        f"<figure>{_image(p, _plot_alt(p, section), 'wide')}<figcaption>{p.name}</figcaption></figure>"
        for p in section.plots
    ]
    if figures:
        parts.append(f'<div class="plots">{"".join(figures)}</div>')
    if section.id == "findings":
        parts.append(
            _findings(contents, ("answer", "shape", "interference", "departure", "noise")) or "<p>None.</p>"
        )
    if section.id == "failures":
        failures = _findings(contents, ("failure",))
        missing = "".join(f"<li>{escape(m)}</li>" for m in contents.results.missing)
        parts.append(failures or "<p>No failure: every check passed.</p>")
        parts.append(
            f"<h3>Not measured</h3><ul>{missing}</ul>"
            if missing
            else "<p>Everything planned was measured.</p>"
        )
    return "".join(parts) + "</section>"


def _run_line(contents: Contents) -> str:
    run, stability = contents.results.run, contents.results.stability
    settings = run.settings
    machine = ""
    if stability:
        state = "unstable" if stability.unstable else "stable"
        machine = (
            f" The machine was {state} (CV {stability.cv_pct:.0f} %, band +-{stability.band_pct:.0f} %)."
        )
    return (
        f"Run {escape(run.id)}, {escape(run.status)}: {escape(contents.results.measured())}, "
        f"bursts of n = 1..{settings['burst_max']}, {plural(settings['repeats'], 'repeat')}, load shapes "
        f"{escape(', '.join(settings['scenarios']))}; {len(contents.targets)} targets side by side.{machine}"
    )


def _changes(contents: Contents) -> str:
    compared = contents.compared
    if compared is None:
        return ""
    beyond = compared.beyond_noise
    listed = "".join(
        f"<li>{escape(c.label)}, {escape(c.target)}: {c.change_pct or 0:+.0f} % "
        f"(was {c.earlier:.3g}, now {c.now:.3g})</li>"
        for c in beyond
        if c.earlier is not None and c.now is not None
    )
    summary = (
        f"<p>Against run {escape(compared.earlier_id)} ({escape(compared.earlier_dir)}): {len(beyond)} of "
        f"{len(compared.changes)} figures changed beyond the noise the two runs measured (each run's "
        "repeats, Student's t-test at 95 %; and the machine's stability band for figures that move with "
        "the CPU's speed).</p>"
    )
    return (
        f'<section id="changes"><h2>Changes since run {escape(compared.earlier_id)}</h2>{summary}'
        f"{f'<ul>{listed}</ul>' if listed else ''}{changes_table(compared)}</section>"
    )


def write_html(contents: Contents, path: Path) -> None:
    sections = contents.sections()
    links = [("answers", "Answers"), ("comparison", "Side by side")]
    links += [("changes", "Changes")] if contents.compared else []
    links += [(s.id, s.title) for s in sections]
    nav = "".join(f'<li><a href="#{i}">{escape(t)}</a></li>' for i, t in links)
    answers = "".join(_answer(a, contents.answer_plots.get(a.key)) for a in contents.answers)
    if not answers:
        answers = "<p>This run measured none of the questions (no load shape with answers ran).</p>"
    run_id = escape(contents.results.run.id)
    write_text(
        path,
        f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>concurrency-lab run {run_id}</title><link rel="icon" href="data:,"><style>{STYLE}</style></head>
<body><header><h1>concurrency-lab: what this run answers</h1><p class="run">{_run_line(contents)}</p>
<nav aria-label="Contents"><ol>{nav}</ol></nav></header>
<main><section id="answers" aria-label="Answers"><h2 class="visually-hidden">Answers</h2>
<div class="answers">{answers}</div></section>
<section id="comparison"><h2>Side by side</h2>{comparison_table(contents)}</section>
{_changes(contents)}
{"".join(_section(contents, s) for s in sections)}
</main></body></html>
""",
    )
