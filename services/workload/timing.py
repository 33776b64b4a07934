"""When and where a piece of work ran: the fields every work response shares.

`started_at`/`finished_at` are server epoch seconds so a tester can draw who ran when;
`duration_s` comes from the monotonic clock; `pid` is the process that did the work.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Timed:
    duration_s: float
    started_at: float
    finished_at: float
    pid: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


class Stopwatch:
    """Started on creation; `timing()` gives the Timed fields up to now."""

    def __init__(self) -> None:
        self.started_at = time.time()
        self._start = time.perf_counter()

    def timing(self) -> dict[str, float | int]:
        duration = time.perf_counter() - self._start
        return {
            "duration_s": duration,
            "started_at": self.started_at,
            "finished_at": self.started_at + duration,
            "pid": os.getpid(),
        }
