"""Effective CPU cores: what the container may really use, not what the host has.

Order: an explicit setting wins; then the cgroup CPU quota (v2 `cpu.max`, v1
`cpu.cfs_quota_us` / `cpu.cfs_period_us`); then the CPU affinity mask. A quota of 1.5 CPUs
counts as 2 cores (rounded up), and the quota never exceeds the CPUs the process may run on.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class EffectiveCores:
    cores: int
    source: str  # "setting", "cgroup v2", "cgroup v1" or "affinity"
    quota_cpus: float | None  # the raw quota in CPUs, None when unlimited or unknown


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _own_cgroup_dirs(cgroup_root: Path, proc_self_cgroup: Path) -> list[Path]:
    """This process's own cgroup directories (nested on a host, the mount root in a container)."""
    dirs = []
    for line in (_read(proc_self_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[2] not in ("", "/"):
            relative = parts[2].lstrip("/")
            controllers = parts[1].split(",")
            if parts[0] == "0":
                dirs.append(cgroup_root / relative)
            elif "cpu" in controllers:
                dirs.extend(cgroup_root / name / relative for name in ("cpu", "cpu,cpuacct"))
    return dirs


def cgroup_quota_cpus(
    cgroup_root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP
) -> tuple[float | None, str | None]:
    """The CPU quota in CPUs and which cgroup version gave it; (None, None) when unlimited."""
    candidates = [*_own_cgroup_dirs(cgroup_root, proc_self_cgroup), cgroup_root]
    for directory in candidates:
        cpu_max = _read(directory / "cpu.max")
        if cpu_max is not None:
            quota, _, period = cpu_max.partition(" ")
            if quota == "max":
                return None, None
            return int(quota) / int(period or 100_000), "cgroup v2"
    v1_dirs = [*candidates, cgroup_root / "cpu", cgroup_root / "cpu,cpuacct"]
    for directory in v1_dirs:
        quota_text = _read(directory / "cpu.cfs_quota_us")
        period_text = _read(directory / "cpu.cfs_period_us")
        if quota_text is not None and period_text is not None:
            quota = int(quota_text)
            if quota <= 0:  # -1 means no limit
                return None, None
            return quota / int(period_text), "cgroup v1"
    return None, None


def affinity_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def effective_cores(
    setting: int | None = None,
    cgroup_root: Path = CGROUP_ROOT,
    proc_self_cgroup: Path = PROC_SELF_CGROUP,
) -> EffectiveCores:
    if setting is not None:
        return EffectiveCores(setting, "setting", None)
    available = affinity_cpus()
    quota, source = cgroup_quota_cpus(cgroup_root, proc_self_cgroup)
    if quota is None or source is None:
        return EffectiveCores(available, "affinity", None)
    return EffectiveCores(max(1, min(available, math.ceil(quota))), source, quota)
