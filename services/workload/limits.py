"""An optional server-wide limit on requests in flight: beyond it, work requests get 429.

The count lives in shared memory created by the server's root before it forks its workers
(gunicorn), so every worker counts against one limit. Processes that are spawned rather than
forked (uvicorn --workers) each get their own count, so there the limit is per worker.

Each process's holdings are kept beside the total, so a worker that dies holding slots (SIGKILL
in the middle of a request) does not keep them: gunicorn's arbiter hands them back when it reaps
the worker (servers.gunicorn.conf's child_exit). Without that, every slot a killed worker held was lost
for good, and once all were, every work request got 429 while /healthz said ok.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.sharedctypes import Synchronized, SynchronizedArray

from workload.paths import CENSUS, WORK_PREFIX

# Processes that can hold slots at once, over a server's life (a dead one's entry is reused):
# more than the most workers a target runs (256).
HOLDERS = 1024


class SharedSlots:
    """The slots in use: a total, and per process (pid, held) entries that add up to it. One lock
    guards both; the entries are only for handing back a dead process's holdings."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self.total: Synchronized[int] = context.Value("i", 0)
        self.pids: SynchronizedArray[int] = context.Array("i", HOLDERS, lock=False)
        self.held: SynchronizedArray[int] = context.Array("i", HOLDERS, lock=False)
        self._entry: tuple[int, int] | None = None  # (pid, index) of this process's entry

    def _own_entry(self) -> int:
        """This process's entry (found or claimed under the lock on first use)."""
        pid = os.getpid()
        if self._entry is None or self._entry[0] != pid:  # first use, or a forked copy
            pids = self.pids
            index = next((i for i in range(HOLDERS) if pids[i] == pid), None)
            if index is None:
                index = next(i for i in range(HOLDERS) if pids[i] == 0)
                pids[index], self.held[index] = pid, 0
            self._entry = (pid, index)
        return self._entry[1]

    def try_acquire(self, limit: int) -> bool:
        with self.total.get_lock():
            if self.total.value >= limit:
                return False
            entry = self._own_entry()  # first: with every entry taken it raises, nothing counted
            self.total.value += 1
            self.held[entry] += 1
            return True

    def release(self) -> None:
        with self.total.get_lock():
            self.total.value -= 1
            self.held[self._own_entry()] -= 1

    def release_all(self, pid: int) -> int:
        """Hand back what a dead process held; how many slots that was."""
        with self.total.get_lock():
            index = next((i for i in range(HOLDERS) if self.pids[i] == pid), None)
            if index is None:
                return 0
            held, self.held[index], self.pids[index] = self.held[index], 0, 0
            self.total.value -= held
            return held


_slots: SharedSlots | None = None


def shared_slots() -> SharedSlots:
    global _slots
    if _slots is None:
        _slots = SharedSlots()
    return _slots


def is_limited(path: str) -> bool:
    """Work paths only: the census must answer under load (health, info and metrics are not work)."""
    return path.startswith(WORK_PREFIX) and path != CENSUS


class InFlightLimiter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.slots = shared_slots()

    def try_acquire(self) -> bool:
        return self.slots.try_acquire(self.limit)

    def release(self) -> None:
        self.slots.release()
