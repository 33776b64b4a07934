"""Each burst explained by the work its own requests measured, and by the CPU they really got.

For every burst: the makespan (last response received - release, each client on its own clock),
the model's makespan from the requests' measured demand (processor sharing with the target's slots
and cores, admitted in the order the server took them), their ratio, and the CPU accounting of the
burst's interval: what the target used, what the tester used, what the hypervisor stole, what
other processes took, what the cgroup throttled. A burst slower than its model is interference
when the machine's accounting explains the CPU it lost; otherwise it departs from the model.
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
from labtester.scenarios.bursts.served import Served, Source, accounts, jobs, path_wait, served
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
    single_s: float | None  # T: the median makespan of one request alone (the bursts of one)
    baseline: list[BurstRun]  # requests alone before the bursts: only in runs from before n = 1 served
    points: list[Point]
    metrics: MetricsCheck | None
    failures: dict[str, int]
    sent: int = 0  # requests sent, baseline included
    account: Source | None = None  # where the server's figures came from
    cpu_s: float | None = None  # CPU of one request alone (median of the bursts of one)
    wait_s: float | None = None  # the wait the path showed alone (Server-Timing's app - cpu)


class BurstsSummary(BaseModel):
    shape: Literal["bursts"] = "bursts"
    endpoints: list[EndpointBursts]


def burst_run(
    record: Record,
    endpoint: EndpointInfo,
    limits: Capacity,
    fallback_s: float | None,
    wait_s: float | None = None,
) -> BurstRun:
    """One burst judged by its model; `wait_s`: the wait its path showed alone (the header's)."""
    requests = record["requests"]
    failures = dict(Counter(r["error"] for r in requests if r["error"]))
    taken = accounts(requests)
    base: dict[str, Any] = {
        "n": record["n"],
        "repeat": record["repeat"],
        "phase": record["phase"],
        "released_at": record["released_at"],
        "failures": failures,
    }
    demands = jobs(requests, endpoint, wait_s, fallback_s)
    if failures or not taken or demands is None:
        unmeasured = {name: None for name in BurstRun.model_fields if name not in base and name != "verdict"}
        return BurstRun(**base, **unmeasured, verdict="failed")
    makespan, model, ratio = judged(record, demands, limits)
    accounting = account(record, model, makespan, demands, limits)
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
        **_server_side(requests, taken, record["released_at"]),
    )


def judged(record: Record, demands: list[Job], limits: Capacity) -> tuple[float, float, float | None]:
    """A burst's makespan, the model's from its measured demand, and their ratio: what it is judged by."""
    makespan = own_clock_makespan(record)
    model = predicted_makespan(demands, limits)
    return makespan, model, makespan / model if model > 0 else None


def burst_ratio(
    record: Record, alone: list[Record], endpoint: EndpointInfo, info: TargetInfo
) -> float | None:
    """One burst's measured/model ratio while measuring, before the endpoint's analysis: the path's
    wait and fallback time from the bursts of one so far (`alone`). None where a request failed."""
    fallback_s, wait_s = path_alone(alone)
    demands = jobs(requests := record["requests"], endpoint, wait_s, fallback_s)
    if any(r["error"] for r in requests) or not accounts(requests) or demands is None:
        return None
    return judged(record, demands, capacity(endpoint, info))[2]


def path_alone(alone_records: list[Record]) -> tuple[float | None, float | None]:
    """From the requests sent alone: the median time the app reported (the fallback demand where
    no CPU was measured) and the path's wait (the header's app - cpu)."""
    singles = [r["requests"][0] for r in alone_records if r["requests"] and not r["requests"][0]["error"]]
    return _median([a.app_s for a in map(served, singles) if a is not None]), path_wait(singles)


def own_clock_makespan(record: Record) -> float:
    """The burst's makespan, each client's on its own clock (its own release to its own last
    response), the longest of them: never one client's release against another's replies, which
    would add the skew between their clocks (other nodes, on Kubernetes)."""
    releases: dict[str, float] = record.get("releases") or {}
    last: dict[int, float] = {}
    for request in record["requests"]:
        client = int(request.get("client", 0))
        last[client] = max(last.get(client, request["received_at"]), request["received_at"])
    released: float = record["released_at"]  # one client's record: its own release
    return max(received - releases.get(str(client), released) for client, received in last.items())


def _server_side(requests: list[dict[str, Any]], taken: list[Served], released: float) -> dict[str, Any]:
    """What the server's own timestamps, pids and CPU times say about one burst."""
    first_finish = min(a.finished_at for a in taken)
    starts = [a.started_at for a in taken if a.started_at < first_finish]  # taken at once
    cpu = [a.cpu_s for a in taken if a.cpu_s is not None]
    lags = [r["received_at"] - a.finished_at for r in requests if (a := served(r)) is not None]
    return {
        "cpu_s": sum(cpu) if len(cpu) == len(taken) else None,
        "release_offset_s": min(a.started_at for a in taken) - released,
        "start_spread_s": max(starts) - min(starts),
        "delivery_lag_s": max(lags),
        "max_overlap": max_overlap([(a.started_at, a.finished_at) for a in taken]),
        "distinct_pids": len({a.pid for a in taken}),
        "most_on_one_process": max(Counter(a.pid for a in taken).values()),
        "clients": len({r.get("client", 0) for r in requests}),
        **_client_spreads(requests, set(starts)),
    }


def _client_spreads(requests: list[dict[str, Any]], taken_at_once: set[float]) -> dict[str, float | None]:
    """How far apart the clients' releases reached the server (the spread of each client's first
    start among the requests the server took at once; None with fewer than two clients there),
    beside the widest spread of one client's own starts."""
    starts: dict[int, list[float]] = {}
    for request in requests:
        account = served(request)
        if account is not None and account.started_at in taken_at_once:
            starts.setdefault(request.get("client", 0), []).append(account.started_at)
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
    # The requests alone: the bursts of one (a run before these kept a baseline of its own: that).
    alone_records = [r for r in fired if r["phase"] == "baseline"] or [r for r in fired if r["n"] == 1]
    singles = [r["requests"][0] for r in alone_records if r["requests"] and not r["requests"][0]["error"]]
    single_s = statistics.median(r["received_at"] - r["sent_at"] for r in singles) if singles else None
    alone = [a for a in map(served, singles) if a is not None]
    fallback = _median([a.app_s for a in alone])
    # Every request sent alone tells the path's wait: the baseline's and the bursts of one.
    wait_s = path_wait([r["requests"][0] for r in fired if r["n"] == 1 and not r["requests"][0]["error"]])
    runs = [burst_run(r, endpoint, limits, fallback, wait_s) for r in fired]
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
        sent=sum(len(record["requests"]) for record in fired),
        account=alone[0].source if alone else None,
        cpu_s=_median([a.cpu_s for a in alone if a.cpu_s is not None]),
        wait_s=wait_s,
    )
