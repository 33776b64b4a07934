"""The flow's summary, and the lab's own prediction of it (Little's law).

A flow runs against the seed study's fan-out, or against each path of a team's app (endpoints of
work "app" in /info). A server holding at most `slots` requests at once, each for H seconds,
completes at most slots / H requests a second; U users who send again as soon as they are answered
(R seconds alone, as they saw it) ask for U / R. H is the request's CPU, the server's own and its
wait, not R: a worker takes the next queued connection as it ends one (a sync worker's 0.7 ms of
CPU was 3.7 ms alone as the client saw it; held for R, it served 10 to 27 % more than the slot term
allowed); a sync worker's slot, held until the client closed, is simulated beside the client
(sync_cycle.py). The prediction is the smaller of the two, and of what the CPU allows, named by
which one binds. The CPU a request costs is the whole of it: its own (each request's Server-Timing
header and what the processes charged to it after, else the server's whole CPU over the run), the
server's own cost per request (measured on empty requests in the same configuration, servingcost.py)
and, where the load client runs on the same machine, the client's (its own CPU over the flow, per
request). The target's processes use one core each where Python runs on one thread per process, or
more where they measured more over the flow (work that releases the GIL: SQLite, compression,
hashing), never more than its effective cores; the machine's CPUs, less what others took during the
run (the downstream mock and any neighbour; the tester too where its cost is not counted per
request: /proc/stat says), are shared by the target and its local client. On a saturated machine
that share is what the target got: an explanation, not a check. The study's 40.6 req/s is 64
threads held ~1.5 s each: thread-pool exhaustion, not Python speed.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from labtester.cold import warm
from labtester.info import EndpointInfo, TargetInfo
from labtester.load import Sample, elsewhere_share
from labtester.model import capacity
from labtester.rawlog import Record
from labtester.scenarios.common import decode, failures_by_type, latency_table
from labtester.scenarios.flow.accounting import alone_figures, late_cpu, path_account
from labtester.scenarios.flow.cost import PathAccount, ServingCost
from labtester.scenarios.flow.mix import MixFlow, mix_flow
from labtester.scenarios.flow.prediction import Binding, CpuSource, Prediction, cycle_is_cpu
from labtester.scenarios.flow.series import FlowSecond, flow_seconds
from labtester.scenarios.flow.servingcost import serving_cost
from labtester.scenarios.flow.settings import FAN_OUT, FlowSettings
from labtester.scenarios.flow.whole import (
    WholeCost,
    client_cpu,
    cores_free,
    sync_hold,
    target_cores,
    usable_cores,
)

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


def flow_endpoints(info: TargetInfo, planned: list[str]) -> list[EndpointInfo]:
    """What a flow runs against: the app's paths among those planned, else the study's fan-out."""
    app = [info.endpoints[name] for name in planned if info.endpoints[name].work == "app"]
    return app or ([info.endpoints[FAN_OUT]] if FAN_OUT in info.endpoints else [])


class PathFlow(BaseModel):
    """One flow: users ramped against one path."""

    endpoint: str = FAN_OUT
    path: str = ""
    params: FlowSettings
    wall_s: float
    requests: int
    failures: dict[str, int]
    requests_per_s: float  # over the steady part: every user running
    steady_from_s: float
    latency_s: dict[str, float]
    prediction: Prediction
    over_time: list[FlowSecond]
    loaded: bool = True  # False: every request alone erred, so no users were ramped against it
    cpu_s: float | None = None  # CPU of one request alone (its header; median of the baseline): as shown
    cpu_mean_s: float | None = None  # the same, the baseline's mean: the demand a rate depends on
    cold_cpu_s: float | None = None  # the mean CPU of a process's first request of it (cold.py): paid once
    wait_s: float | None = None  # what it waited alone: the app's time less its CPU (median)
    elsewhere_share: float | None = None  # of its requests' CPU, the share run off their own thread
    account: PathAccount | None = None  # where the serving processes' CPU went (conservation)
    server_cpu_s: float | None = None  # the server's processes' CPU over the run (census), for sizing


class FlowSummary(BaseModel):
    shape: Literal["flow"] = "flow"
    flows: list[PathFlow]
    mix: MixFlow | None = None  # a team's traffic, every request at once in its weights (mix.py)
    serving_cost: ServingCost | None = None  # a team's app: the configuration's own cost per request


def predict(
    settings: FlowSettings,
    per_request_s: float,
    info: TargetInfo,
    cpu: tuple[float, CpuSource] | None,
    cores_free: float | None = None,
    endpoint_name: str = FAN_OUT,
    whole: WholeCost | None = None,
    wait_s: float | None = None,
) -> Prediction:
    """Little's law for one path: `cpu`, the CPU per request measured and where it came from;
    `whole`, what else a request costs (else the request's own CPU alone, one core per process);
    `wait_s`, what a request holds its slot beyond its CPU where the server measured it (its hold
    is then its CPU, the server's own and that; else R)."""
    endpoint = info.endpoints[endpoint_name]
    cpu_per_request_s = cpu[0] if cpu else None
    limits = capacity(endpoint, info)
    slots = None if math.isinf(limits.slots) else limits.slots
    whole = whole or WholeCost()
    measured = cpu[0] if cpu and cpu[1] == "server-timing" else None
    server_cpu_s = whole.server_cpu_s if measured is not None else None
    own_s = None if measured is None or wait_s is None else measured + (server_cpu_s or 0.0) + wait_s
    hold_s, round_trip_s = own_s, None
    if own_s is not None and wait_s is not None:  # a sync worker's slot: its cycle beside the client
        cores = usable_cores(float(info.effective_cores), whole.cores_free_of_others)
        cycle_s = sync_hold(whole, slots, own_s - wait_s, wait_s, cores)
        if cycle_s is not None:
            hold_s, round_trip_s = cycle_s, cycle_s - own_s
    candidates: dict[Binding, float] = {"users": settings.users / (per_request_s + settings.think_s)}
    if slots is not None:
        candidates["slots"] = slots / (hold_s or per_request_s)
    app_only = dict(candidates)
    if slots is not None and own_s and round_trip_s is not None:  # the law before it held the round trip
        app_only["slots"] = slots / own_s
    prediction = Prediction(
        per_request_s=per_request_s,
        hold_s=hold_s,
        round_trip_s=round_trip_s,
        slots=slots,
        cpu_per_request_s=cpu_per_request_s,
        cpu_source=cpu[1] if cpu else None,
        cores=target_cores(endpoint, info, whole.cores_per_process),
        cores_free=cores_free if whole.client_cpu_s is None else whole.cores_free_of_others,
        per_s=0.0,
        binding="users",
        server_cpu_per_request_s=server_cpu_s,  # None on the census's CPU: it holds the server's own
        client_cpu_per_request_s=whole.client_cpu_s,
        cores_per_process=whole.cores_per_process,
    )
    cpu_limit = prediction.cpu_limit(prediction.cores_free)
    if cpu_limit is not None:
        candidates["cpu"] = cpu_limit
    if cpu_per_request_s:
        app_only["cpu"] = usable_cores(target_cores(endpoint, info), cores_free) / cpu_per_request_s
    binding = min(candidates, key=lambda name: candidates[name])
    if binding == "slots" and round_trip_s is not None and cycle_is_cpu(candidates["slots"], cpu_limit):
        binding = "cpu" if candidates["cpu"] <= candidates["users"] else "users"
    return prediction.model_copy(
        update={"per_s": candidates[binding], "binding": binding, "app_only_per_s": min(app_only.values())}
    )


def flows(results: Results) -> list[tuple[TargetResult, PathFlow]]:
    """Every flow of the run, by target in run order, then by path."""
    return [(target, flow) for target, summary in results.summaries(FlowSummary) for flow in summary.flows]


def summarize(records: list[Record], info: TargetInfo | None) -> FlowSummary:
    """The flows (`run` records), a team's mix, and its configuration's serving cost (`cost`)."""
    if info is None:
        raise ValueError("the flow needs the target's /info")
    found = next((r for r in records if r.get("kind") == "cost"), None)
    runs = [r for r in records if r.get("kind", "run") == "run"]
    users = max((FlowSettings(**r["params"]).users for r in runs), default=0)
    cost = serving_cost(found, info, users) if found else None
    flows = [path_flow(record, info, cost) for record in runs if not record.get("mix")]
    mix = next((mix_flow(record) for record in runs if record.get("mix")), None)
    return FlowSummary(flows=flows, mix=mix, serving_cost=cost)


def path_flow(record: Record, info: TargetInfo, cost: ServingCost | None = None) -> PathFlow:
    settings = FlowSettings(**record["params"])
    samples, alone = decode(record["samples"]), decode(record["baseline"])
    name = record.get("endpoint", FAN_OUT)
    wall = record["wall_s"]
    answered = [s.latency_s for s in warm(alone) or alone if s.ok]  # one-time costs left out (cold.py)
    per_request = statistics.median(answered) if answered else math.nan
    # Steady once the last user has had its first answer: every user running from then on.
    steady_from = min(wall, (settings.users - 1) / settings.spawn_rate + (per_request if answered else 1.0))
    steady = [s for s in samples if s.ok and s.sent_s + s.latency_s >= steady_from]
    server_cpu = record.get("server_cpu_s")
    cpu = _cpu_per_request([s for s in samples if s.ok], server_cpu, late := late_cpu(record, samples))
    account = path_account(record, cost, samples) if not record.get("unloaded") else None
    alone_costs = alone_figures(alone, late)
    whole = None
    if cost is not None:
        whole = WholeCost(
            # The path's own server cost where its flow measured it, else the empty requests'.
            server_cpu_s=account.server_cpu_per_request_s if account else cost.server_cpu_per_request_s,
            client_cpu_s=client_cpu(record, cost, len(samples)),
            cores_per_process=account.cores_per_process if account else None,
            cores_free_of_others=cores_free(record, server_cpu, tester=False),
            slot_delay_s=cost.slot_delay_s,
        )
    free, wait = cores_free(record, server_cpu), alone_costs["wait_s"]
    prediction = predict(settings, per_request, info, cpu, free, name, whole, wait)
    return PathFlow(
        endpoint=name,
        path=info.endpoints[name].path,
        params=settings,
        wall_s=wall,
        requests=len(samples),
        failures=failures_by_type(samples),
        requests_per_s=len(steady) / (wall - steady_from) if wall > steady_from else 0.0,
        steady_from_s=steady_from,
        latency_s=latency_table([s.latency_s for s in samples if s.ok], (50, 95, 99)),
        prediction=prediction,
        over_time=flow_seconds(samples, wall, record["users"]),
        loaded=not record.get("unloaded", False),
        account=account,
        server_cpu_s=server_cpu,
        elsewhere_share=elsewhere_share([s for s in (*alone, *samples) if s.ok], late),
        **alone_costs,
    )


def _cpu_per_request(
    done: list[Sample], server_cpu_s: float | None, late_s: float
) -> tuple[float, CpuSource] | None:
    """Each answered request's own CPU (its header, and `late_s`, what was charged after it) where
    every one carried it; else the server's whole CPU over the run per answered request."""
    measured = [s.cpu_s for s in done if s.cpu_s is not None]
    if done and len(measured) == len(done):
        return statistics.fmean(measured) + late_s, "server-timing"
    return (server_cpu_s / len(done), "census") if server_cpu_s and done else None
