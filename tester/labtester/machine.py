"""The machine's own CPU accounting, read around each burst: who else used the CPU meanwhile.

/proc/stat counts every CPU of the host (also from inside a container or pod: it is not
namespaced), so the tester sees the CPU time all processes used, the time the hypervisor stole,
and how many CPUs there are. Beside the target's own CPU time (its census) and the tester's own,
what is left was used by other processes: a neighbour, a build, another lab.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

PROC_STAT = Path("/proc/stat")
# /proc/stat's unit (USER_HZ): 1/100 s on Linux, so a reading is exact to 10 ms per CPU.
TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


class CpuSnapshot(BaseModel):
    """CPU seconds since boot (all CPUs summed) and this process's own, at one instant."""

    at: float  # epoch seconds
    busy_s: float | None  # user, nice, system, irq, softirq of every CPU; None off Linux
    steal_s: float | None
    cpus: int
    tester_s: float  # this process's own CPU time (every thread)


def _proc_stat(path: Path = PROC_STAT) -> tuple[float, float, int] | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    fields = [int(value) for value in lines[0].split()[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user.
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    return (user + nice + system + irq + softirq) * TICK_S, steal * TICK_S, cpus


def snapshot(path: Path = PROC_STAT) -> CpuSnapshot:
    stat = _proc_stat(path)
    busy, steal, cpus = stat if stat else (None, None, os.cpu_count() or 1)
    return CpuSnapshot(at=time.time(), busy_s=busy, steal_s=steal, cpus=cpus, tester_s=time.process_time())


@dataclass(frozen=True)
class CpuUse:
    """Who used the machine's CPU between two snapshots, in CPU seconds."""

    wall_s: float
    cpus: int
    busy_s: float | None
    steal_s: float | None
    tester_s: float

    def others_s(self, target_s: float | None) -> float | None:
        """CPU that neither the target nor the tester used: other processes."""
        if self.busy_s is None or target_s is None:
            return None
        return max(0.0, self.busy_s - target_s - self.tester_s)


def between(before: CpuSnapshot, after: CpuSnapshot) -> CpuUse:
    def delta(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else max(0.0, b - a)

    return CpuUse(
        wall_s=after.at - before.at,
        cpus=after.cpus,
        busy_s=delta(before.busy_s, after.busy_s),
        steal_s=delta(before.steal_s, after.steal_s),
        tester_s=max(0.0, after.tester_s - before.tester_s),
    )


def recorded(before: CpuSnapshot, after: CpuSnapshot) -> dict[str, Any]:
    """Two snapshots as a raw record holds them."""
    return {"before": before.model_dump(), "after": after.model_dump()}


def use_recorded(pair: dict[str, Any]) -> CpuUse:
    """Who used the CPU between the two snapshots of a raw record (see `recorded`). With several
    clients, `clients_s` is what the others used on this machine meanwhile: the tester's too."""
    use = between(CpuSnapshot.model_validate(pair["before"]), CpuSnapshot.model_validate(pair["after"]))
    if pair.get("clients_s"):
        return dataclasses.replace(use, tester_s=use.tester_s + float(pair["clients_s"]))
    return use
