"""The sizing's inputs, from what the lab measured of the fixed configurations: each request's CPU
and wait alone and its weight in the team's traffic, each family's own CPU per request and memory,
the pod and the objective.

A family's own CPU per request (`overhead_s`) is the flow's conservation account (flow/cost.py):
the serving processes' CPU per request less the request's own and what belongs to no request. That
is the server's own cost measured on empty requests, or more where the flow showed more (work done
for the request that the middleware does not see: capacity is spent on it all the same). Cores per
process are the most any configuration's processes measured using on the path, where that is more
than one (work that releases the GIL), else 1: what a process can use is the work's, and a family
whose measured configuration has as many processes as cores can never show more than one (granian's
ASGI 2 workers read 1.0 on datasette's SQL, where one uvicorn worker used 1.8-1.9; taken from its
own flows, its four-worker proofs ran at p99 0.55-0.66 of the model's, from the path's, 0.67-0.89).
A flow without an account (no Server-Timing) falls back to the processes' CPU less the requests'
measured CPU.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from labtester.findings.wording import milliseconds
from labtester.proposal.fullgc import collections_of, with_collections
from labtester.proposal.spreads import spread_of
from labtester.rawlog import Record
from labtester.scenarios.flow.analyse import FlowSummary, PathFlow, flows
from labtester.scenarios.flow.conclude import AppConclusion
from labtester.scenarios.flow.settings import FAN_OUT
from labtester.scenarios.flow.sync_cycle import BEFORE_CLOSE
from labtester.sizing.document import FixedBest, KindCost, Objective, PodSize
from labtester.sizing.families import Family
from labtester.sizing.kinds import RequestKind
from labtester.sizing.pod import MIB, Memory
from labtester.sizing.quantiles import percentile

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult
    from labtester.settings import LabSettings

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory.max")
OBJECTIVE_OF_MEAN = 4  # a p99 within 4x the mix's mean time alone: queues that come and go
OBJECTIVE_OF_SLOWEST = 2  # and never below 2x its slowest request alone, which the p99 holds
DEFAULT_PROCESS_BYTES = 64 * MIB  # a worker where no census measured one


def machine_memory() -> tuple[int, str]:
    try:
        limit = CGROUP_MEMORY.read_text().strip()
        if limit.isdigit():
            return int(limit), "this machine's cgroup"
    except OSError:
        pass
    return int(psutil.virtual_memory().total), "this machine"


def pod_size(settings: LabSettings, conclusion: AppConclusion) -> PodSize:
    cores = settings.cores or conclusion.cores or len(os.sched_getaffinity(0))
    memory, source = (settings.memory, "") if settings.memory else machine_memory()
    given = [name for name, value in (("CORES=", settings.cores), ("MEMORY=", settings.memory)) if value]
    where = " and ".join(given + ([source] if source else []))
    return PodSize(cores=cores, memory_bytes=memory, source=where)


def objective(settings: LabSettings, kinds: list[RequestKind], floor_s: Sequence[float] = ()) -> Objective:
    """P99=, else a queue that comes and goes on the time a request alone takes as the load client
    sees it: its CPU, its wait, the client's CPU and the floor (`floor_s`: the least of the
    families', a time no configuration serves below). On the work alone, httpbin's /json had 2.1 ms,
    which no proof kept (its requests alone took 1.7-3.1 ms beyond their CPU at the p99); on this,
    6.5 ms (2026-12-01)."""
    if settings.p99:
        return Objective(p99_s=settings.p99, why="P99=", rate_per_s=settings.target_rate)
    total = sum(k.weight for k in kinds)
    floor_mean = statistics.fmean(floor_s) if floor_s else 0.0
    floor_p99 = percentile(sorted(floor_s), 99) if floor_s else 0.0
    mean = sum(k.weight * (k.alone_s + k.client_s) for k in kinds) / total + floor_mean
    slowest = max(k.alone_s + k.client_s for k in kinds) + floor_p99
    p99 = max(OBJECTIVE_OF_MEAN * mean, OBJECTIVE_OF_SLOWEST * slowest)
    by_mean = p99 == OBJECTIVE_OF_MEAN * mean
    why = (
        f"{OBJECTIVE_OF_MEAN}x the mix's mean time alone ({milliseconds(mean)}"
        if by_mean
        else f"{OBJECTIVE_OF_SLOWEST}x its slowest request alone ({milliseconds(slowest)}"
    )
    if floor_s:  # what the client saw beyond the work: its mean, or its p99 on the slowest
        why += f", {milliseconds(floor_mean if by_mean else floor_p99)} of it beyond the work, as seen here"
    why = f"default: {why}), a queue that comes and goes"
    return Objective(p99_s=p99, why=why, rate_per_s=settings.target_rate)


def family_floor(results: Results, family: Family) -> tuple[float, ...]:
    """The family's floor before any proof (sizing/floor.py): its fixed configurations' empty
    requests alone (servingcost.py), quantile by quantile their mean; empty where none measured one."""
    measured = [
        summary.serving_cost.floor_s
        for target, summary in results.summaries(FlowSummary)
        if target.name in family.fixed_targets and summary.serving_cost and summary.serving_cost.floor_s
    ]
    return tuple(statistics.fmean(q) for q in zip(*measured, strict=True)) if measured else ()


def _flows_of(results: Results, targets: set[str]) -> list[tuple[TargetResult, PathFlow]]:
    return [(t, f) for t, f in flows(results) if t.name in targets and f.endpoint != FAN_OUT and f.loaded]


def _overhead(flow: PathFlow) -> float | None:
    """The serving processes' CPU per request beyond the requests' own measured CPU."""
    if (a := flow.account) is not None:
        unseen = (
            a.process_cpu_per_request_s
            - a.request_cpu_per_request_s
            - a.no_request_cpu_per_request_s
            - a.lab_reads_cpu_per_request_s  # the lab's own scrapes and census: not the server's
        )
        return max(a.server_cpu_per_request_s, unseen)
    answered = flow.requests - sum(flow.failures.values())
    cpu = flow.prediction.cpu_per_request_s
    if (
        flow.server_cpu_s is None
        or answered <= 0
        or cpu is None
        or flow.prediction.cpu_source != "server-timing"
    ):
        return None
    return max(0.0, flow.server_cpu_s / answered - cpu)


def _cores_per_process(target: TargetResult, flow: PathFlow) -> float | None:
    """The cores each process ran on average over the flow: above 1 only where work released the GIL."""
    if flow.account is not None:
        return flow.account.cores_per_process
    if flow.server_cpu_s is None or flow.wall_s <= 0 or target.info is None:
        return None
    return flow.server_cpu_s / flow.wall_s / max(1, target.info.workers)


def kinds_of(
    results: Results, conclusion: AppConclusion, family: Family, records: Sequence[Record] = ()
) -> tuple[list[RequestKind], list[str]]:
    """The mix in the traffic's weights (PATHS: equal), each request with this family's own
    overhead and local client's CPU and, from the raw `records`, its measured spread; and what was
    assumed."""
    family_flows = _flows_of(results, set(family.fixed_targets))
    traffic = results.lab_settings().app_traffic()
    assumed = []
    close_s = close_of(results, family)
    if close_s is None:
        assumed.append(
            f"{family.name}: its workers hold a connection until the client closes it, and no delay was "
            "fitted to its empty requests (they never kept every worker busy): taken as none"
        )
    local_client = client_cpu(results)
    kinds = []
    for path in conclusion.paths:
        # The mean alone: a rate follows the mean demand (a skewed path's median is below it);
        # an older results document without it falls back to the median.
        cpu_s = path.cpu_mean_s if path.cpu_mean_s is not None else path.cpu_s
        if cpu_s is None or path.wait_s is None:
            assumed.append(f"{path.path}: no CPU or wait measured alone, left out of the mix")
            continue
        on_path = [(t, f) for t, f in family_flows if f.endpoint == path.path]
        overheads = [o for _, f in on_path if (o := _overhead(f)) is not None]
        clients = [c for _, f in on_path if (c := f.prediction.client_cpu_per_request_s) is not None]
        served = _flows_of(results, {c.target for c in path.configurations})
        parallel = [
            c for t, f in served if f.endpoint == path.path and (c := _cores_per_process(t, f)) is not None
        ]
        measured = spread_of(records, path.path, family.fixed_targets)
        kind = RequestKind(
            name=path.path,
            weight=request.weight if traffic and (request := traffic.named(path.path)) else 1.0,
            cpu_s=cpu_s,
            wait_s=path.wait_s,
            overhead_s=statistics.median(overheads) if overheads else 0.0,
            cores_per_process=max(1.0, max(parallel, default=1.0)),
            cpu_spread_s=measured.cpu_s,
            wait_spread_s=measured.wait_s,
            elsewhere_share=measured.elsewhere_share,
            cpu_by_company=measured.cpu_by_company,
            close_s=close_s or 0.0,
            client_s=statistics.median(clients) if clients else local_client,
        )
        kinds.append(with_collections(kind, *collections_of(family_flows, path.path)))
        if not overheads:
            assumed.append(f"{family.name} on {path.path}: its own CPU per request not measured, taken as 0")
    return kinds, assumed


def close_of(results: Results, family: Family) -> float | None:
    """What the family's workers hold a slot after the answer until the local client closed: on a
    sync worker, the delay its empty requests fitted off every core and the client's CPU per request
    before its close (sync_cycle), the median over the family's configurations measured; 0 where its
    workers keep their connections (threads, loops); None where they own them and none was fitted."""
    found, owned = [], False
    for target, summary in results.summaries(FlowSummary):
        cost, info = summary.serving_cost, target.info
        if target.name not in family.fixed_targets or cost is None or info is None:
            continue
        endpoint = next((e for e in info.endpoints.values() if e.work == "app"), None)
        owned = owned or (endpoint is not None and endpoint.execution == "workers")
        if cost.slot_delay_s is not None:
            found.append(cost.slot_delay_s + (cost.client_cpu_per_request_s or 0.0) * BEFORE_CLOSE)
    return statistics.median(found) if found else None if owned else 0.0


def kind_costs(kinds: list[RequestKind]) -> list[KindCost]:
    return [
        KindCost(
            name=k.name,
            weight=k.weight,
            cpu_s=k.cpu_s,
            wait_s=k.wait_s,
            overhead_s=k.overhead_s,
            cores_per_process=k.cores_per_process,
            cpu_spread_s=list(k.cpu_spread_s),
            wait_spread_s=list(k.wait_spread_s),
            elsewhere_share=k.elsewhere_share,
            cpu_by_company=[list(point) for point in k.cpu_by_company],
            close_s=k.close_s,
            client_s=k.client_s,
            full_collections_per_request=k.full_collections_per_request,
            full_collection_cpu_s=k.full_collection_cpu_s,
        )
        for k in kinds
    ]


def memory_of(results: Results, family: Family, slot_bytes: int) -> Memory:
    """A process's and the master's resident memory, the most any census of the family saw."""
    censuses: list[dict[str, Any]] = []
    for target in results.targets:
        if target.name in family.fixed_targets:
            censuses += [target.census.idle] if target.census.idle else []
            censuses += [loaded.census for loaded in target.census.under_load]
    workers, masters = [], []
    for census in censuses:
        processes = census.get("processes") or []
        serving = [p for p in processes if p.get("role") == "worker"]
        workers += [
            int(p["rss_bytes"]) for p in serving or [p for p in processes if p.get("role") == "master"]
        ]
        masters += [int(p["rss_bytes"]) for p in processes if serving and p.get("role") == "master"]
    return Memory(max(masters, default=0), max(workers, default=DEFAULT_PROCESS_BYTES), slot_bytes)


def client_cpu(results: Results) -> float:
    """The local load client's CPU per request over every flow that measured one (it shares the
    cores): a family's requests where none of its own flows did; 0 where the client runs elsewhere
    (a cluster's tester pod: its CPU is no server pod's)."""
    used = [c for _, f in flows(results) if (c := f.prediction.client_cpu_per_request_s) is not None]
    return statistics.median(used) if used else 0.0


def fixed_best(results: Results, conclusion: AppConclusion) -> FixedBest | None:
    """The flows' recommendation, its rate on the mix: what it served of the whole mix at once
    where it ran it, else each request's rate alone in the traffic's weights (a request of weight w
    takes w / rate of a second per unit of the mix)."""
    chosen = conclusion.recommendation
    if chosen is None:
        return None
    traffic = results.lab_settings().app_traffic()
    rates = [
        (request.weight if traffic and (request := traffic.named(p.path)) else 1.0, c.requests_per_s)
        for p in conclusion.paths
        for c in p.configurations
        if c.target == chosen.target
    ]
    if not rates or min(rate for _, rate in rates) <= 0:
        return None
    per_s = sum(w for w, _ in rates) / sum(w / rate for w, rate in rates)
    # Where the configuration ran the whole mix at once, what it served of it is the figure.
    measured = next((s.mix for t, s in results.summaries(FlowSummary) if t.name == chosen.target), None)
    if measured is not None and measured.overall.requests_per_s > 0:
        per_s = measured.overall.requests_per_s
    return FixedBest(target=chosen.target, label=chosen.label, flows_per_s=per_s)
