"""A flow's prediction: the rate its users, its slots or its cores allow, and which binds
(analyse.py makes it; report.py and conclude.py say it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Binding = Literal["users", "slots", "cpu"]
CpuSource = Literal["server-timing", "census"]
# A sync cycle's rate within 1 % of the CPU term's is the CPU's: the simulation's phases vary
# around their means, so at the cores' limit it comes within a few tenths of a percent of it.
SAME = 1.01


class Prediction(BaseModel):
    per_request_s: float  # R: one request alone, as its client saw it (a user waits all of it)
    # H: what a request holds a slot for, measured where it ran: its CPU (under load, as the CPU
    # term takes it), the server's own and its wait alone. None where the server measured none (no
    # Server-Timing; a document from before it): R stands for it.
    hold_s: float | None = None
    # Of hold_s, what a sync worker's cycle beside the local client held beyond the request's CPU,
    # the server's and its wait: its computing slowed on the shared cores, the delay fitted, the
    # client's turn to close.
    round_trip_s: float | None = None
    slots: float | None  # None: no limit
    cpu_per_request_s: float | None  # the request's own CPU, measured over the run
    cpu_source: CpuSource | None = None  # each request's header, or the server's CPU over the run
    cores: float  # the cores the target's processes can use (measured parallelism, see target_cores)
    cores_free: float | None  # of the machine's CPUs, what the others left the target and its local client
    per_s: float
    binding: Binding
    # The server's own CPU per request (ServingCost); None where the CPU above is the census's (it
    # holds it already) or it was not measured.
    server_cpu_per_request_s: float | None = None
    client_cpu_per_request_s: float | None = None  # the load client's, where it shares the cores
    cores_per_process: float | None = None  # what each serving process used over the run, measured
    # The same law as the lab predicted before it counted the whole cost: the request's own CPU on
    # one core per process, the tester's CPU taken off the free cores. Kept to show the difference.
    app_only_per_s: float | None = None

    @property
    def slot_hold_s(self) -> float:
        return self.hold_s if self.hold_s else self.per_request_s

    @property
    def served_cpu_s(self) -> float | None:
        """CPU the serving processes spend per request: the request's own and the server's."""
        if not self.cpu_per_request_s:
            return None
        return self.cpu_per_request_s + (self.server_cpu_per_request_s or 0.0)

    def cpu_limit(self, cores_free: float | None) -> float | None:
        """Requests/s the CPU allows: the target's cores over what its processes spend per request,
        and the cores `cores_free` left to the target and its local client over that plus the
        client's; None where the CPU per request is unknown."""
        served = self.served_cpu_s
        if served is None:
            return None
        limit = self.cores / served
        if cores_free is not None:
            limit = min(limit, cores_free / (served + (self.client_cpu_per_request_s or 0.0)))
        return limit

    def ceiling(self) -> tuple[float, Binding] | None:
        """What the configuration allows whatever the load: the fewer of its slots over the time a
        request holds one and its cores over a request's CPU; None where neither binds. A sync
        cycle that comes to what the cores allow beside the client is the cores' (cycle_is_cpu)."""
        limits: dict[Binding, float] = {}
        if self.slots is not None and self.slot_hold_s > 0:
            limits["slots"] = self.slots / self.slot_hold_s
        cpu = self.cpu_limit(None)
        if cpu is not None:
            limits["cpu"] = cpu
        if not limits:
            return None
        binding = min(limits, key=lambda name: limits[name])
        beside = self.cpu_limit(self.cores_free)  # the cores beside the client, as the cycle had them
        if binding == "slots" and self.round_trip_s is not None and cycle_is_cpu(limits["slots"], beside):
            binding = "cpu"
        return limits[binding], binding


def cycle_is_cpu(slots_per_s: float, cpu_per_s: float | None) -> bool:
    """Whether a sync worker's simulated cycle (beside the client, on the same cores) comes to what
    the cores allow: then they bind, not its slots."""
    return cpu_per_s is not None and cpu_per_s <= slots_per_s * SAME
