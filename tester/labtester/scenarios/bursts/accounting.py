"""Who used the CPU during one burst: the target, the tester, the hypervisor (steal), other
processes, the cgroup's throttling; and whether the machine's share explains what the burst lost.

A burst that took longer than sharing the target's cores over its requests' measured work allows
lost CPU: (makespan - model) x the cores the model gave it. When other processes, steal or
throttling took at least EXPLAINED_SHARE of that, the machine slowed the burst (interference),
and the largest of them is named.
"""

from __future__ import annotations

from pydantic import BaseModel

from labtester import machine
from labtester.model import Capacity, Job, cores_in_use
from labtester.rawlog import Record

EXPLAINED_SHARE = 0.5


class Accounting(BaseModel):
    """CPU seconds used during one burst's interval, by whom (None: not readable here)."""

    wall_s: float
    cpus: int
    target_s: float | None
    tester_s: float
    others_s: float | None
    steal_s: float | None
    throttled_s: float | None
    lost_core_s: float  # CPU the model allowed the target and it did not get


def account(record: Record, model_s: float, makespan: float, jobs: list[Job], limits: Capacity) -> Accounting:
    use = machine.use_recorded(record["machine"])
    before, after = record["target_cpu"]["before"], record["target_cpu"]["after"]
    target_s = after["cpu_s"] - before["cpu_s"] if before and after else None
    throttled_s = None
    if before and after and before.get("cgroup_cpu") and after.get("cgroup_cpu"):
        throttled_s = max(0.0, after["cgroup_cpu"]["throttled_s"] - before["cgroup_cpu"]["throttled_s"])
    return Accounting(
        wall_s=use.wall_s,
        cpus=use.cpus,
        target_s=target_s,
        tester_s=use.tester_s,
        others_s=use.others_s(target_s),
        steal_s=use.steal_s,
        throttled_s=throttled_s,
        lost_core_s=max(0.0, makespan - model_s) * cores_in_use(jobs, limits),
    )


def taker(accounting: Accounting) -> str | None:
    """The machine's share in the CPU the burst lost, if it explains it: its largest taker."""
    takers = {
        "other processes": accounting.others_s or 0.0,
        "steal by the hypervisor": accounting.steal_s or 0.0,
        "cgroup CPU throttling": accounting.throttled_s or 0.0,
    }
    if accounting.lost_core_s <= 0 or sum(takers.values()) < EXPLAINED_SHARE * accounting.lost_core_s:
        return None
    return max(takers, key=lambda taker: takers[taker])
