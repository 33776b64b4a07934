"""What a client itself spent on a step: the CPU time of the thread that sends (one event loop, so
one core is the most it can use, or less where its cgroup's CPU quota says so: a pod's limit), the
time that thread waited on a run queue for a core, the wall time and the requests it sent. A client
whose sending thread was running or waiting to run for nearly all of a step was at its limit: its
figures measure the client too. The thread's own figures, not its process's: the barrier's threads
(keep-alive, the leader's barrier) are not the load, and a client starved of a core (waiting, not
running) would read as idle by its CPU alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
# cgroup v2, then v1: the quota of the cgroup this process runs in (a pod's CPU limit).
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
CFS_QUOTA = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
CFS_PERIOD = Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
# The thread's own scheduler statistics: CPU time, time waiting on a run queue, timeslices (ns).
SCHEDSTAT = Path("/proc/thread-self/schedstat")
# A client whose sending thread ran or waited for a core this share of a step or more was at its
# limit (asyncio's own loop and the kernel's network stack leave it no more).
SATURATED = 0.85


@cache
def host() -> str:
    """Which machine this is (its boot id: the same in every container and kind node of a host),
    so CPU time read from /proc/stat is summed only over clients that share it."""
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return "unknown"


def _quota_cores() -> float | None:
    try:
        if CPU_MAX.exists():
            quota, period = CPU_MAX.read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        quota_us = int(CFS_QUOTA.read_text())
        return None if quota_us <= 0 else quota_us / int(CFS_PERIOD.read_text())
    except (OSError, ValueError):
        return None


@cache
def core_limit() -> float:
    """The most CPU this client can use: one core, or its cgroup quota if that is less."""
    quota = _quota_cores()
    return min(1.0, quota) if quota else 1.0


def run_queue_s() -> float | None:
    """Seconds the calling thread has waited on a run queue for a core (None: no schedstat here)."""
    try:
        return int(SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Meter:
    """Started at a step's release and read after its last reply, on the thread that sends."""

    cpu_at: float = 0.0
    wall_at: float = 0.0
    process_at: float = 0.0
    waited_at: float | None = None

    def start(self) -> Meter:
        self.cpu_at, self.waited_at = time.thread_time(), run_queue_s()
        self.process_at, self.wall_at = time.process_time(), time.perf_counter()
        return self

    def read(self, requests: int) -> dict[str, Any]:
        """The raw record's `load` field."""
        waited = run_queue_s()
        return {
            "cpu_s": time.thread_time() - self.cpu_at,
            "run_queue_s": None if waited is None or self.waited_at is None else waited - self.waited_at,
            "process_cpu_s": time.process_time() - self.process_at,
            "wall_s": time.perf_counter() - self.wall_at,
            "requests": requests,
            "core_limit": core_limit(),
            "host": host(),
        }


def core_share(load: dict[str, Any]) -> float | None:
    """The share of its core a client's sending thread used over a step (None: it sent nothing
    then, and its wall time was spent meeting the others). Bursts are judged as every step is."""
    if not load.get("requests") or float(load.get("wall_s") or 0.0) <= 0.0:
        return None
    return float(load["cpu_s"]) / float(load["wall_s"]) / float(load.get("core_limit") or 1.0)


def waiting_share(load: dict[str, Any]) -> float | None:
    """The share of a step the sending thread waited on a run queue for a core (None: unknown)."""
    if core_share(load) is None or load.get("run_queue_s") is None:
        return None
    return float(load["run_queue_s"]) / float(load["wall_s"])


def busy_share(load: dict[str, Any]) -> float | None:
    """Running or waiting to run: the share of a step the sending thread wanted its core."""
    used = core_share(load)
    return None if used is None else used + (waiting_share(load) or 0.0)
