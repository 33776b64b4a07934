"""Answers printed as soon as their figures are in, not only in the summary at the end.

After each target, the lab builds the results from the raw log so far and prints every answer the
targets still to measure cannot change (each load shape knows which of its answers those are:
LoadShape.settled_answers). The summary at the end prints them all again, with the rest.
"""

from __future__ import annotations

from pathlib import Path

from labtester.assembly import build_results, merged
from labtester.info import TargetInfo
from labtester.progress import LabProgress
from labtester.rawlog import read_raw
from labtester.report.console import answer_lines
from labtester.scenarios import SHAPES
from labtester.settings import LabSettings


class EarlyAnswers:
    def __init__(self, run_dir: Path, settings: LabSettings, progress: LabProgress) -> None:
        self.run_dir, self.settings, self.progress = run_dir, settings, progress
        self.printed: set[str] = set()

    def after(self, measured: str, remaining: list[TargetInfo]) -> None:
        """Once `measured` is done: the answers no target of `remaining` can change, each once.
        None when nothing remains: the summary comes at once."""
        if not remaining:
            return
        results = build_results(merged(read_raw(self.run_dir)))
        for shape in (SHAPES[name] for name in self.settings.scenarios):
            for answer in shape.settled_answers(results, remaining, self.settings):
                if answer.key in self.printed:
                    continue
                self.printed.add(answer.key)
                self.progress.note(f"Answer settled once {measured} was measured:")
                for line in answer_lines([answer])[1:]:
                    self.progress.note(line)
