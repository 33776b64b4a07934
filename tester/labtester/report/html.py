"""One self-contained HTML page: the summary tables, the findings and the plots embedded."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from rich.console import Console

from labtester.report.console import print_summary
from labtester.results import Results

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #222; }
pre { background: #f6f8fa; padding: 1rem; overflow-x: auto; font-size: 0.8rem; }
li.failure { color: #b00020; } li.departure { color: #8a5a00; } li.interference { color: #1f5fa8; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5rem 0; }
"""


def _base64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_html(results: Results, plots: list[Path], path: Path) -> None:
    run = results.run
    console = Console(record=True, width=150, file=io.StringIO())
    print_summary(results, console)
    summary = console.export_text()
    findings = "\n".join(f'<li class="{f.kind}">{html.escape(f.text)}</li>' for f in results.findings)
    images = "\n".join(
        f'<figure><img alt="{p.stem}" src="data:image/png;base64,{_base64(p)}">'
        f"<figcaption>{p.stem}</figcaption></figure>"
        for p in plots
    )
    missing = "".join(f"<li>{html.escape(m)}</li>" for m in results.missing) or "<li>nothing</li>"
    path.write_text(
        f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>concurrency-lab {html.escape(run.id)}</title>
<style>{STYLE}</style></head><body>
<h1>concurrency-lab run {html.escape(run.id)}</h1>
<p>Status: {html.escape(run.status)}. N = {run.settings["work_seconds"]:g} s,
bursts n = 1..{run.settings["burst_max"]}, {run.settings["repeats"]} repeats each.</p>
<h2>Findings</h2><ul>{findings}</ul>
<h2>Not measured</h2><ul>{missing}</ul>
<h2>Plots</h2>{images}
<h2>Tables</h2><pre>{html.escape(summary)}</pre>
</body></html>
""",
        encoding="utf-8",
    )
