"""Each burst explained by the work its own requests measured, and by the CPU they really got.

For every burst: the makespan (last response received - release), the model's makespan from the
requests' measured demand (processor sharing with the target's slots and cores, admitted in the
order the server took them), their ratio, and the CPU accounting of the burst's interval: what the
target used, what the tester used, what the hypervisor stole, what other processes took, what the
cgroup throttled. A burst slower than its model is interference when the machine's accounting
explains the CPU it lost; otherwise it departs from the model.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel

from labtester.info import EndpointInfo, TargetInfo
from labtester.model import Capacity, Job, capacity, predicted_makespan
from labtester.rawlog import Record
from labtester.scenarios.bursts.accounting import Accounting, account, taker
from labtester.stats import Spread, max_overlap, spread

# Measured within this share of the model counts as agreeing with it (15 %: what one noisy repeat
# can do on an idle shared machine; `make bench` prints the real spread, median and worst).
MODEL_AGREEMENT = 0.15
# A burst at least this much slower than its model is looked at for interference.
INTERFERENCE_FLOOR = 0.05

Verdict = Literal["agrees", "interference", "departs", "failed"]


class BurstRun(BaseModel):
    """One release of n requests (one repeat), measured and modelled."""

    n: int
    repeat: int
    phase: Literal["baseline", "burst"]
    released_at: float
    failures: dict[str, int]
    makespan_s: float | None
    model_s: float | None  # processor sharing over the requests' measured work
    ratio: float | None  # makespan / model
    cpu_s: float | None  # sum of the requests' measured CPU seconds
    share: float | None  # model / makespan: the share of the allowed CPU the requests got
    release_offset_s: float | None  # release -> first server start
    start_spread_s: float | None  # spread of the starts of the requests taken at once
    delivery_lag_s: float | None  # most any finished response waited to reach the client
    clients: int | None = None  # how many clients sent a part of it
    client_spread_s: float | None = None  # spread of each client's first start among those taken at once
    own_spread_s: float | None = None  # the widest spread of one client's own starts taken at once
    max_overlap: int | None
    distinct_pids: int | None
    most_on_one_process: int | None  # requests the busiest server process took
    accounting: Accounting | None
    cause: str | None  # interference: the largest taker of the lost CPU
    verdict: Verdict


class Point(BaseModel):
    """Every repeat of one burst size n."""

    n: int
    runs: list[BurstRun]
    makespan: Spread | None
    model_s: float | None
    ratio: float | None  # makespan / model, median over the repeats
    ratio_unhindered: float | None  # the same over the repeats no interference hit: the model's test
    overlap: int | None  # requests whose server work overlapped, median over the repeats


class CapacityView(BaseModel):
    slots: float | None
    cores: float | None
    description: str


class MetricsCheck(BaseModel):
    route: str
    sent: int
    counted: float
    by_status: dict[str, float]
    kernel_iterations: float
    matches: bool


class EndpointBursts(BaseModel):
    name: str
    path: str
    work: str
    execution: str
    slots: int | None
    capacity: CapacityView
    argument: int | None
    single_s: float | None  # T: the median makespan of one request alone (the scale of reports)
    baseline: list[BurstRun]
    points: list[Point]
    metrics: MetricsCheck | None
    failures: dict[str, int]


class BurstsSummary(BaseModel):
    shape: Literal["bursts"] = "bursts"
    endpoints: list[EndpointBursts]


def _bodies(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["body"] for r in requests if r["body"] and "started_at" in r["body"]]


def _jobs(
    requests: list[dict[str, Any]], endpoint: EndpointInfo, fallback_s: float | None
) -> list[Job] | None:
    """Demands in the order the server took the requests: CPU seconds, or the wait's duration."""
    bodies = sorted(_bodies(requests), key=lambda b: b["started_at"])
    if len(bodies) != len(requests):
        return None
    if endpoint.work == "io":
        return [Job(float(b["duration_s"]), needs_core=False) for b in bodies]
    # The server's processes, numbered in the order they first took a request.
    process = {pid: index for index, pid in enumerate(dict.fromkeys(b.get("pid") for b in bodies))}
    jobs = []
    for body in bodies:
        demand = body.get("cpu_s", fallback_s)
        if demand is None:
            return None
        ran_on = process[body["pid"]] if body.get("pid") is not None else None
        jobs.append(Job(float(demand), needs_core=True, process=ran_on))
    return jobs


def _concurrent_starts(bodies: list[dict[str, Any]]) -> list[float]:
    """Start times of the requests the server took before it finished the first one."""
    first_finish = min(b["finished_at"] for b in bodies)
    return [b["started_at"] for b in bodies if b["started_at"] < first_finish]


def burst_run(record: Record, endpoint: EndpointInfo, limits: Capacity, fallback_s: float | None) -> BurstRun:
    requests = record["requests"]
    failures = dict(Counter(r["error"] for r in requests if r["error"]))
    bodies = _bodies(requests)
    base: dict[str, Any] = {
        "n": record["n"],
        "repeat": record["repeat"],
        "phase": record["phase"],
        "released_at": record["released_at"],
        "failures": failures,
    }
    jobs = _jobs(requests, endpoint, fallback_s)
    if failures or not bodies or jobs is None:
        unmeasured = {name: None for name in BurstRun.model_fields if name not in base and name != "verdict"}
        return BurstRun(**base, **unmeasured, verdict="failed")
    makespan = max(r["received_at"] for r in requests) - record["released_at"]
    model = predicted_makespan(jobs, limits)
    ratio = makespan / model if model > 0 else None
    accounting = account(record, model, makespan, jobs, limits)
    cause = taker(accounting) if ratio and ratio - 1 > INTERFERENCE_FLOOR else None
    verdict: Verdict = "agrees"
    if cause:
        verdict = "interference"
    elif ratio is not None and abs(ratio - 1) > MODEL_AGREEMENT:
        verdict = "departs"
    return BurstRun(
        **base,
        makespan_s=makespan,
        model_s=model,
        ratio=ratio,
        share=model / makespan if makespan > 0 else None,
        accounting=accounting,
        cause=cause,
        verdict=verdict,
        **_server_side(requests, bodies, record["released_at"]),
    )


def _server_side(
    requests: list[dict[str, Any]], bodies: list[dict[str, Any]], released: float
) -> dict[str, Any]:
    """What the server's own timestamps, pids and CPU times say about one burst."""
    starts = _concurrent_starts(bodies)
    cpu = [b["cpu_s"] for b in bodies if b.get("cpu_s") is not None]
    return {
        "cpu_s": sum(cpu) if len(cpu) == len(bodies) else None,
        "release_offset_s": min(b["started_at"] for b in bodies) - released,
        "start_spread_s": max(starts) - min(starts),
        "delivery_lag_s": max(r["received_at"] - r["body"]["finished_at"] for r in requests),
        "max_overlap": max_overlap([(b["started_at"], b["finished_at"]) for b in bodies]),
        "distinct_pids": len({b["pid"] for b in bodies}),
        "most_on_one_process": max(Counter(b["pid"] for b in bodies).values()),
        "clients": len({r.get("client", 0) for r in requests}),
        **_client_spreads(requests, set(starts)),
    }


def _client_spreads(requests: list[dict[str, Any]], taken_at_once: set[float]) -> dict[str, float | None]:
    """How far apart the clients' releases reached the server (the spread of each client's first
    start among the requests the server took at once; None with fewer than two clients there),
    beside the widest spread of one client's own starts."""
    starts: dict[int, list[float]] = {}
    for request in requests:
        started = (request["body"] or {}).get("started_at")
        if started in taken_at_once:
            starts.setdefault(request.get("client", 0), []).append(started)
    firsts = [min(own) for own in starts.values()]
    own = [max(s) - min(s) for s in starts.values() if len(s) > 1]
    return {
        "client_spread_s": max(firsts) - min(firsts) if len(firsts) > 1 else None,
        "own_spread_s": max(own) if own else None,
    }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _point(n: int, runs: list[BurstRun]) -> Point:
    measured = [r for r in runs if r.makespan_s is not None and r.model_s is not None and r.ratio is not None]
    overlap = _median([float(r.max_overlap) for r in measured if r.max_overlap is not None])
    return Point(
        n=n,
        runs=runs,
        makespan=spread([r.makespan_s for r in measured if r.makespan_s is not None]) if measured else None,
        model_s=_median([r.model_s for r in measured if r.model_s is not None]),
        ratio=_median([r.ratio for r in measured if r.ratio is not None]),
        ratio_unhindered=_median(
            [r.ratio for r in measured if r.ratio is not None and r.verdict != "interference"]
        ),
        overlap=round(overlap) if overlap is not None else None,
    )


def _metrics_check(metrics: Record | None, fired: list[Record]) -> MetricsCheck | None:
    """The server's count of the endpoint's requests against every client's: the merged rows."""
    if metrics is None:
        return None
    sent = sum(len(record["requests"]) for record in fired)
    fields = {k: v for k, v in metrics.items() if k in MetricsCheck.model_fields}
    return MetricsCheck.model_validate({**fields, "sent": sent, "matches": metrics["counted"] == sent})


def endpoint_bursts(name: str, records: list[Record], info: TargetInfo) -> EndpointBursts:
    """One endpoint's baseline, bursts and request count check, from its raw records."""
    endpoint = info.endpoints[name]
    limits = capacity(endpoint, info)
    fired = [r for r in records if r["kind"] == "burst"]
    baseline_records = [r for r in fired if r["phase"] == "baseline"]
    singles = [r["requests"][0] for r in baseline_records if not r["requests"][0]["error"]]
    single_s = statistics.median(r["received_at"] - r["sent_at"] for r in singles) if singles else None
    server_single = [r["body"]["duration_s"] for r in singles if r["body"]]
    fallback = statistics.median(server_single) if server_single else None
    runs = [burst_run(r, endpoint, limits, fallback) for r in fired]
    by_n: dict[int, list[BurstRun]] = {}
    for run in (r for r in runs if r.phase == "burst"):
        by_n.setdefault(run.n, []).append(run)
    metrics = next((r for r in records if r["kind"] == "metrics"), None)
    failures = Counter(r["error"] for record in fired for r in record["requests"] if r["error"])
    return EndpointBursts(
        name=name,
        path=endpoint.path,
        work=endpoint.work,
        execution=endpoint.execution,
        slots=endpoint.slots,
        capacity=CapacityView(
            slots=None if limits.slots == float("inf") else limits.slots,
            cores=None if limits.cores == float("inf") else limits.cores,
            description=limits.describe(),
        ),
        argument=fired[0]["argument"] if fired else None,
        single_s=single_s,
        baseline=[r for r in runs if r.phase == "baseline"],
        points=[_point(n, by_n[n]) for n in sorted(by_n)],
        metrics=_metrics_check(metrics, fired),
        failures=dict(failures),
    )
