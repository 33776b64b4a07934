"""What a request costs besides its own CPU, for one flow's prediction (analyse.py): the server's
own and the local client's CPU, a sync worker's wait for its close, and the cores its processes can
use.

A sync worker holds its slot past the response until the client closes the connection (gunicorn
27's lingering close, `util.close_graceful`: a half-close, then a wait for the client's own, RFC 9112
9.6). The client's part of that wait grows with the CPU beside it, so the slot's cycle is simulated
(sync_cycle.py) with the one delay no core measured fitted to the empty requests (slot_delay): on
the Flask shop's 0.23 ms path, sync-1x served 0.76x its prediction without any such wait, 0.83-0.92x
with the empty requests' held fixed, 0.89-0.97x simulated.
"""

from __future__ import annotations

from dataclasses import dataclass

from labtester import machine
from labtester.info import EndpointInfo, TargetInfo
from labtester.load import Sample
from labtester.model import capacity
from labtester.rawlog import Record
from labtester.scenarios.flow import sync_cycle
from labtester.scenarios.flow.cost import ServingCost


def target_cores(endpoint: EndpointInfo, info: TargetInfo, cores_per_process: float | None = None) -> float:
    """The cores the target's handling can use: one per process where Python runs on one thread per
    process, unless its processes measured using more (never fewer: a process that was not kept busy
    says nothing of its cap), never more than its effective cores."""
    limits = capacity(endpoint.model_copy(update={"work": "cpu"}), info)
    if not limits.core_per_process or cores_per_process is None or cores_per_process <= 1:
        return limits.cores
    return min(float(info.effective_cores), limits.processes * cores_per_process)


def usable_cores(cores: float, cores_free: float | None) -> float:
    """The cores its handling can use, as far as the rest of the machine left them free."""
    return cores if cores_free is None else min(cores, cores_free)


@dataclass(frozen=True)
class WholeCost:
    """What a request costs besides its own CPU, and the cores measured, for one flow's prediction."""

    server_cpu_s: float | None = None  # the server's own CPU per request (ServingCost)
    client_cpu_s: float | None = None  # the local load client's CPU per request; None: elsewhere
    cores_per_process: float | None = None  # the serving processes' measured parallelism
    cores_free_of_others: float | None = None  # the machine's CPUs less what others (not the tester) took
    slot_delay_s: float | None = None  # a sync worker's wait off every core before its close (slot_delay)


def slot_delay(cost: ServingCost, endpoint: EndpointInfo, users: int, cores: float) -> float | None:
    """What a sync worker waits a request off every core before the client closes (the loopback,
    the wake-ups): fitted so that its cycle beside the local client (sync_cycle) gives the empty
    requests' rate from their CPU per request and the client's, on the cores the others left then.
    A sync worker owns the connection until the client has closed it (gunicorn's lingering close);
    gthread's, gevent's and granian's connections stay open, and their threads take the next
    request at once. Only where the empty requests kept every slot busy with more queued (more
    users than slots). `users`: the empty requests'; `cores`: the machine's effective cores, which
    the client shares. None where it does not apply, was not measured, or no core was left."""
    slots = endpoint.slots
    if endpoint.execution != "workers" or slots is None or slots < 1:
        return None
    if not cost.empty_per_s or not cost.process_cpu_per_request_s or users <= slots:
        return None
    client = cost.client_cpu_per_request_s or 0.0
    fitted_on = usable_cores(cores, cost.cores_free_of_others)
    if fitted_on <= 0:  # the others took every core: nothing to fit on
        return None
    return sync_cycle.fit_delay(
        round(slots), fitted_on, cost.process_cpu_per_request_s, client, cost.empty_per_s
    )


def sync_hold(
    whole: WholeCost, slots: float | None, served_s: float, wait_s: float, cores: float
) -> float | None:
    """What a sync worker's slot is held a request: the slots over its cycle's rate beside the local
    client (sync_cycle), computing the request's CPU and the server's (`served_s`) on `cores` (the
    machine's, as far as the others left them), off every core its wait and the delay its empty
    requests fitted; never less than its CPU and wait. None where no delay was fitted (not a sync
    worker's, or not measured) or nothing computes (no core left, no CPU measured)."""
    if whole.slot_delay_s is None or slots is None or slots < 1 or cores <= 0 or served_s <= 0:
        return None
    delay_s = whole.slot_delay_s + wait_s
    per_s = sync_cycle.rate(round(slots), cores, served_s, whole.client_cpu_s or 0.0, delay_s)
    return max(served_s + wait_s, slots / per_s)  # never less, though the phases vary


def empty_rate(samples: list[Sample]) -> float | None:
    """The empty requests answered a second, from the first send to the last answer."""
    answered = [s for s in samples if s.ok]
    if not answered:
        return None
    span = max(s.sent_s + s.latency_s for s in answered) - min(s.sent_s for s in answered)
    return len(answered) / span if span > 0 else None


def client_cpu(record: Record, cost: ServingCost, requests: int) -> float | None:
    """The local client's CPU per request over this flow (every client on this machine, from its
    own process's clock), else over the empty requests; None where the client runs elsewhere."""
    if cost.client_cpu_per_request_s is None:
        return None
    if not record.get("machine") or not requests:
        return cost.client_cpu_per_request_s
    return machine.use_recorded(record["machine"]).tester_s / requests


def cores_free(record: Record, server_cpu_s: float | None, tester: bool = True) -> float | None:
    """The machine's CPUs less what everything but the target used during the run, on average;
    `tester=False`: the tester's own use left in (its cost is counted per request instead)."""
    if not record.get("machine") or server_cpu_s is None:
        return None
    use = machine.use_recorded(record["machine"])
    others = use.others_s(server_cpu_s)
    if others is None or use.wall_s <= 0:
        return None
    taken = (use.tester_s if tester else 0.0) + others + (use.steal_s or 0.0)
    return max(0.0, use.cpus - taken / use.wall_s)
