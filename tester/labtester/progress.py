"""Progress: a rich bar on a terminal, plain timestamped lines otherwise (kubectl logs)."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class LabProgress:
    def __init__(self, console: Console, total_steps: int) -> None:
        self.console = console
        self.started = time.monotonic()
        self.bar: Progress | None = None
        if console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self.task = self.bar.add_task("lab", total=total_steps)

    def __enter__(self) -> LabProgress:
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self.bar:
            self.bar.stop()

    def add_steps(self, steps: int) -> None:
        if self.bar:
            total = self.bar.tasks[0].total or 0
            self.bar.update(self.task, total=total + steps)

    def step(self, description: str, advance: int = 1) -> None:
        """One unit of work done (or started): updates the bar, or prints a line."""
        if self.bar:
            self.bar.update(self.task, description=description, advance=advance)
        else:
            elapsed = time.monotonic() - self.started
            self.console.print(f"[{elapsed:6.1f}s] {description}", highlight=False, markup=False)

    def note(self, message: str) -> None:
        """A line that should stay visible either way (an error, a finding)."""
        self.console.print(message, highlight=False, markup=False)
