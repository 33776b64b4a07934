"""The report's order: the console's summary is printed before the plots and report.html are drawn,
so the answers wait for no chart."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from rich.console import Console

from labtester.rawlog import RAW_LOG
from labtester.report import write_reports


class Watching:
    """A console's file that notes, at each line printed, whether the plots exist yet."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.lines: list[tuple[str, bool, bool]] = []

    def write(self, text: str) -> int:
        plots, html = (self.run_dir / "plots").exists(), (self.run_dir / "report.html").exists()
        self.lines += [(line, plots, html) for line in text.splitlines() if line.strip()]
        return len(text)

    def flush(self) -> None:
        pass


def test_the_summary_is_printed_before_the_plots_are_drawn(
    lab_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    shutil.copy(lab_run[1] / RAW_LOG, tmp_path / RAW_LOG)
    watching = Watching(tmp_path)
    write_reports(tmp_path, Console(file=watching, width=1000))  # type: ignore[arg-type]
    answers = [seen for seen in watching.lines if seen[0].startswith("Answers")]
    assert answers and answers[0][1:] == (False, False), "the answers waited for the plots"
    assert watching.lines[-1][0].startswith("Results:") and watching.lines[-1][1:] == (True, True)
    assert list((tmp_path / "plots").glob("*.png")) and (tmp_path / "report.html").exists()
