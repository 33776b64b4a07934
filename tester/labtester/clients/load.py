"""What a client itself spent on a step: its CPU time, the wall time, the requests it sent, and the
share of its core that was. A client runs its requests on one thread (one event loop), so one core
is the most it can use, or less where its cgroup's CPU quota says so (a pod's limit). A figure
taken while a client used nearly all of that measures the client too.
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
# A client that used this share of its core or more was at its limit (asyncio's own loop and the
# kernel's network stack leave it no more).
SATURATED = 0.85
# A step shorter than this, or with no request of this client's, says nothing of its limit (a client
# whose part of a step is empty spends its short wall time meeting the others).
MIN_WALL_S = 0.5


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


@dataclass
class Meter:
    """Started before a step's requests, read after them."""

    cpu_at: float = 0.0
    wall_at: float = 0.0

    def start(self) -> Meter:
        self.cpu_at, self.wall_at = time.process_time(), time.perf_counter()
        return self

    def read(self, requests: int) -> dict[str, Any]:
        """The raw record's `load` field."""
        return {
            "cpu_s": time.process_time() - self.cpu_at,
            "wall_s": time.perf_counter() - self.wall_at,
            "requests": requests,
            "core_limit": core_limit(),
            "host": host(),
        }


def core_share(load: dict[str, Any]) -> float | None:
    """The share of its core a client used over a step (None: too short a step to tell)."""
    if not load.get("requests") or float(load.get("wall_s") or 0.0) < MIN_WALL_S:
        return None
    return float(load["cpu_s"]) / float(load["wall_s"]) / float(load.get("core_limit") or 1.0)
