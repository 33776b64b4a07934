"""An optional server-wide limit on requests in flight: beyond it, work requests get 429.

The counter lives in shared memory created by the server's root before it forks its workers
(gunicorn), so every worker counts against one limit. Processes that are spawned rather than
forked (uvicorn --workers) each get their own counter, so there the limit is per worker.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.sharedctypes import Synchronized

from workload.paths import CENSUS, WORK_PREFIX

_in_flight: Synchronized[int] | None = None


def shared_counter() -> Synchronized[int]:
    global _in_flight
    if _in_flight is None:
        _in_flight = multiprocessing.get_context("fork").Value("i", 0)
    return _in_flight


def is_limited(path: str) -> bool:
    """Work paths only: the census must answer under load (health, info and metrics are not work)."""
    return path.startswith(WORK_PREFIX) and path != CENSUS


class InFlightLimiter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.counter = shared_counter()

    def try_acquire(self) -> bool:
        with self.counter.get_lock():
            if self.counter.value >= self.limit:
                return False
            self.counter.value += 1
            return True

    def release(self) -> None:
        with self.counter.get_lock():
            self.counter.value -= 1
