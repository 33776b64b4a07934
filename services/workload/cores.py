"""Effective CPU cores: what the container may really use, not what the host has; and how often
its cgroup's CPU quota stopped it (throttling).

Order: an explicit setting wins; then the cgroup CPU quota (v2 `cpu.max`, v1
`cpu.cfs_quota_us` / `cpu.cfs_period_us`); then the CPU affinity mask. A quota of 1.5 CPUs
counts as 2 cores (rounded up), and the quota never exceeds the CPUs the process may run on.
Throttling comes from `cpu.stat` of the same cgroup directories (own group first, then the root).
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


def _cpu_dirs(cgroup_root: Path, proc_self_cgroup: Path) -> list[Path]:
    """Where the CPU controller's files may be: own groups, the (namespace's) root, v1 mounts."""
    own = _own_cgroup_dirs(cgroup_root, proc_self_cgroup)
    return [*own, cgroup_root, cgroup_root / "cpu", cgroup_root / "cpu,cpuacct"]


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
    for directory in _cpu_dirs(cgroup_root, proc_self_cgroup):
        quota_text = _read(directory / "cpu.cfs_quota_us")
        period_text = _read(directory / "cpu.cfs_period_us")
        if quota_text is not None and period_text is not None:
            quota_us = int(quota_text)
            if quota_us <= 0:  # -1 means no limit
                return None, None
            return quota_us / int(period_text), "cgroup v1"
    return None, None


@dataclass(frozen=True)
class CgroupCpu:
    """Throttling counters of the cgroup's CPU quota, since the cgroup was made."""

    source: str  # "cgroup v2" or "cgroup v1"
    periods: int  # enforcement periods (cpu.cfs_period_us each) in which the group ran
    throttled_periods: int  # periods in which it used up its quota and was stopped
    throttled_s: float  # total time it was stopped


# Each version's cpu.stat names its throttled time differently, in a different unit.
_THROTTLED_TIME = {"throttled_usec": ("cgroup v2", 1e-6), "throttled_time": ("cgroup v1", 1e-9)}


def cgroup_cpu_stat(
    cgroup_root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP
) -> CgroupCpu | None:
    """This process's cgroup CPU throttling (v2 or v1 `cpu.stat`); None where there is none (no
    cgroup CPU controller: a v2 cpu.stat without it has only usage counters)."""
    for directory in _cpu_dirs(cgroup_root, proc_self_cgroup):
        fields = {}
        for line in (_read(directory / "cpu.stat") or "").splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                fields[key] = int(value)
        for key, (source, unit) in _THROTTLED_TIME.items():
            if key in fields and "nr_periods" in fields:
                return CgroupCpu(
                    source=source,
                    periods=fields["nr_periods"],
                    throttled_periods=fields.get("nr_throttled", 0),
                    throttled_s=fields[key] * unit,
                )
    return None


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
