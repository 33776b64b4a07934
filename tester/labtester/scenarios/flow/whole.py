"""What a request costs besides its own CPU, for one flow's prediction (analyse.py): the server's
own and the local client's CPU, a sync worker's round trip, and the cores its processes can use.

A sync worker holds its slot past the response until the client closes the connection (gunicorn
27's lingering close, `util.close_graceful`: a half-close, then a wait for the client's own, RFC 9112
9.6) and a core is free to take the next. It is measured on the empty requests, as a slot's cycle
there beyond its CPU, and held in the slot's time: on the Flask shop's 0.23 ms path, 0.34 to 0.39
ms a request; without it sync-1x served 0.76x its prediction, with it 0.88-0.96x. Part of it is
the wait for a core beside the local client, so a configuration's ceiling holds that client too.
"""

from __future__ import annotations

from dataclasses import dataclass

from labtester import machine
from labtester.info import EndpointInfo, TargetInfo
from labtester.load import Sample
from labtester.model import capacity
from labtester.rawlog import Record
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
    round_trip_s: float | None = None  # a sync worker's slot held past its CPU (slot_round_trip)


def slot_round_trip(cost: ServingCost, endpoint: EndpointInfo, users: int) -> float | None:
    """What a sync worker holds its slot a request beyond the CPU its process spends: the empty
    requests' cycle of a slot (the slots over their rate) less their CPU per request. A sync worker
    owns the connection until the client has closed it (gunicorn's lingering close), then waits
    for a core to take the next; gthread's, gevent's and granian's connections stay open, and
    their threads take the next request at once. Only where the empty requests kept every slot
    busy with more queued (more users than slots). With more workers than cores, part of the
    cycle is a wait for a core the CPU term holds too; the prediction is the lower of the two,
    and where the slots bound sync-2x's light path they were the nearer (the Flask shop's and
    httpbin's: 0.90 and 0.89 of them, 0.87 and 0.85 of the CPU term).
    `users`: the empty requests'. None where it does not apply, was not measured, or came to
    nothing."""
    slots = endpoint.slots
    if endpoint.execution != "workers" or slots is None:
        return None
    if not cost.empty_per_s or cost.process_cpu_per_request_s is None or users <= slots:
        return None
    beyond = slots / cost.empty_per_s - cost.process_cpu_per_request_s
    return beyond if beyond > 0 else None


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
