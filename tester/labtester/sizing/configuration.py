"""A server configuration as the sizing model sees it: its processes, what one runs at once, how
its workers take connections and whether its requests' CPU is preempted. Its own module, so the
simulation (events.py) and the model that drives it (model.py) both import it, one way."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

Accept = Literal["shared", "per_worker"]


@dataclass(frozen=True)
class Configuration:
    """A server configuration as the model sees it."""

    family: str  # gthread, gevent, sync, uvicorn, granian-wsgi...
    processes: int
    per_process: int | None  # requests one process runs at once; None: no limit (an event loop)
    accept: Accept
    preemptive: bool  # threads share a process's core; greenlets and event loops run CPU to its end
    # An event loop whose requests hand work to real threads (executors, asgiref's, anyio's): that
    # part of their CPU runs beside the loop, sharing the process's core with it and each other.
    threads_beside: bool = False

    @property
    def slots(self) -> float:
        return math.inf if self.per_process is None else float(self.processes * self.per_process)

    @property
    def simulated(self) -> Configuration:
        """What the simulation reads of it: all but its family's name, so configurations alike (gthread's
        and granian-wsgi's 6 x 4 threads on the same requests) share one run."""
        return replace(self, family="")
