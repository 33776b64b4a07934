"""Conservation of a team's app, per configuration and path: where the serving processes' CPU
over a flow went, against what the lab accounts for (the requests' own, the server's own cost
measured on empty requests before the flows (servingcost.py), no request's, the lab's own reads).

The lab's own reads around a flow (its /metrics scrapes, the census) are requests the processes
serve too: their CPU is charged to a total of its own (`lab_control_cpu_seconds_total`, not the
requests'), and conservation names it as a fourth term, with the server's own cost of each.

Where a request has its thread (sync, gthread, granian's blocking threads) or greenlet (gevent) to
itself, the server's own work there between requests is measured over each flow, on an event
loop (uvicorn, granian's ASGI) the loop thread's CPU between any two request steps, and on a
pool's threads the CPU between the calls they ran for requests
(`lab_between_requests_cpu_seconds_total`): a path's server cost is that plus what empty requests
cost the server elsewhere (gthread's poller, gevent's hub, granian's own threads), and its body's
parts beyond an empty request's at what a part of an empty stream cost the server there. Empty
requests alone fell short: httpbin's gthread threads spent 0.27 to 0.34 ms a request of their own
on /json and /html, 0.21 to 0.26 on /healthz; empty requests held as long (a sleep) cost no more,
spinning ones little more: the app's own code having run costs it, which only its requests carry.
"""

from __future__ import annotations

import statistics

import httpx

from labtester import census, machine, scrape
from labtester.cold import cold_cpu_s, warm
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.load import Sample
from labtester.rawlog import Record
from labtester.scenarios.flow.cost import PathAccount, ServingCost
from labtester.scenarios.flow.servingcost import charged_between, cpu_delta, parts_cost


class Around:
    """The serving processes, read by client 0 around a flow: the CPU they charged to requests and
    to the lab's own reads, their own CPU (census) and the machine's."""

    def __init__(self, control: httpx.AsyncClient, url: str, info: TargetInfo) -> None:
        self.control, self.census_url, self.metrics_url = (
            control,
            url + info.control.census,
            url + info.control.metrics,
        )
        self.routes = info.control.paths()
        self.charged: scrape.Charged | None = None
        self.cpu: float | None = None
        self.machine = machine.snapshot()

    async def start(self) -> None:
        self.charged = await scrape.charged_settled(self.control, self.metrics_url, self.routes)
        self.cpu = await census.cpu_seconds(self.control, self.census_url)
        self.machine = machine.snapshot()

    async def end(self) -> Record:
        """`machine`, `server_cpu_s` and `charged_between`'s figures over the flow (None where unread)."""
        recorded = machine.recorded(self.machine, machine.snapshot())
        # What was charged after the responses (a streamed body's end, calls that end after their
        # request) is in before the processes' CPU is read.
        charged = await scrape.charged_settled(self.control, self.metrics_url, self.routes)
        cpu = await census.cpu_seconds(self.control, self.census_url)
        return {
            "machine": recorded,
            **charged_between(self.charged, charged),
            "server_cpu_s": cpu_delta(self.cpu, cpu),
        }


def path_account(record: Record, cost: ServingCost | None, samples: list[Sample]) -> PathAccount | None:
    """Conservation over one flow: None where the processes' CPU or the serving cost is unknown."""
    process = record.get("server_cpu_s")
    if process is None or cost is None or cost.server_cpu_per_request_s is None or not samples:
        return None
    wall = machine.use_recorded(record["machine"]).wall_s if record.get("machine") else record["wall_s"]
    requests = len(samples)
    process_each = process / requests
    charged = record.get("charged_cpu_s")
    # The processes' own total of CPU charged to requests holds what the headers could not (a
    # streamed body's later chunks, a handed-over call that ended after its request); a server
    # without the counter (a record made before it) is held to the headers' sum.
    headers = sum(s.cpu_s or 0.0 for s in samples)
    request_each = (headers if charged is None else charged) / requests
    no_request_each = (cost.idle_cpu_per_s or 0.0) * wall / requests
    reads = record.get("lab_reads") or 0.0
    # The lab's own reads in the window: what they were charged, and the server's own cost of each.
    reads_each = ((record.get("lab_reads_cpu_s") or 0.0) + reads * cost.server_cpu_per_request_s) / requests
    measured = server_measured(record, cost, reads, requests)
    chunks = record.get("chunks")
    chunks_each = None if chunks is None else max(0.0, chunks - reads) / requests
    chunks_cpu = _chunks_cpu(cost, chunks_each)
    server_each = (cost.server_cpu_per_request_s if measured is None else measured[0]) + (chunks_cpu or 0.0)
    accounted = request_each + server_each + no_request_each + reads_each
    return PathAccount(
        requests=requests,
        process_cpu_per_request_s=process_each,
        request_cpu_per_request_s=request_each,
        header_cpu_per_request_s=headers / requests,
        charged_by="server-timing" if charged is None else "counter",
        server_cpu_per_request_s=server_each,
        server_measured_cpu_per_request_s=None if measured is None else measured[1],
        chunks_per_request=chunks_each,
        chunks_cpu_per_request_s=chunks_cpu,
        no_request_cpu_per_request_s=no_request_each,
        lab_reads_cpu_per_request_s=reads_each,
        **_collections(record, requests),
        share=accounted / process_each if process_each > 0 else 1.0,
        cores_per_process=process / wall / max(1, cost.processes) if wall > 0 else 0.0,
    )


def _collections(record: Record, requests: int) -> dict[str, float | None]:
    """The full collections over the flow per request, and the CPU of one; None where unread."""
    count, cpu_s = record.get("full_collections"), record.get("full_collections_cpu_s")
    return {
        "full_collections_per_request": None if count is None else count / requests,
        "full_collection_cpu_s": cpu_s / count if count and cpu_s is not None else None,
    }


def _chunks_cpu(cost: ServingCost, chunks_each: float | None) -> float | None:
    """The server's CPU per request for its body parts beyond an empty request's; None unmeasured."""
    if chunks_each is None or cost.server_cpu_per_chunk_s is None or cost.chunks_per_request is None:
        return None
    return parts_cost(chunks_each, cost.chunks_per_request, cost.server_cpu_per_chunk_s)


def server_measured(
    record: Record, cost: ServingCost, reads: float, requests: int
) -> tuple[float, float] | None:
    """The path's server cost per request where the server measured its own CPU on the requests'
    threads over the flow (less its reads' there, as on empty requests), plus what empty requests
    cost it elsewhere; and the measured part. None where it measured none (a server without the counter)."""
    thread = record.get("server_thread_cpu_s")
    empty_thread = cost.server_thread_cpu_per_request_s
    if thread is None or empty_thread is None or cost.server_cpu_per_request_s is None:
        return None
    on_threads = max(0.0, thread - reads * empty_thread) / requests
    return on_threads + max(0.0, cost.server_cpu_per_request_s - empty_thread), on_threads


def late_cpu(record: Record, samples: list[Sample]) -> float:
    """CPU the processes charged to a flow's requests beyond their headers, per request: a streamed
    body's later chunks, the body's sending, calls that ended after their request (the counter's
    delta less the headers' sum); 0 where the counter is unknown. Added to each request's figure
    in the model, as the headers cannot hold what ran after them."""
    charged = record.get("charged_cpu_s")
    if charged is None or not samples:
        return 0.0
    return max(0.0, float(charged) - sum(s.cpu_s or 0.0 for s in samples)) / len(samples)


def alone_figures(baseline: list[Sample], late_s: float) -> dict[str, float | None]:
    """What one request of the path used alone, but each process's first (cold.py: those pay the
    path's one-time costs; their mean CPU apart, `cold_cpu_s`): its CPU (its header's, and what the
    flow's requests were charged after theirs, `late_s`), the median (what a typical request used,
    as shown) and the mean (what a rate depends on: a skewed spread's median is below it), and the
    wait beside it (the header's, net of its time on a run queue: a busy machine's delay for a core
    is not the path's)."""
    steady = warm(baseline)
    measured = [
        (s.cpu_s, s.own_s) for s in steady or baseline if s.ok and s.cpu_s is not None and s.own_s is not None
    ]
    if not measured:
        return {"cpu_s": None, "cpu_mean_s": None, "wait_s": None, "cold_cpu_s": None}
    return {
        "cold_cpu_s": cold_cpu_s(baseline) if steady else None,
        "cpu_s": statistics.median(cpu for cpu, _ in measured) + late_s,
        "cpu_mean_s": statistics.fmean(cpu for cpu, _ in measured) + late_s,
        "wait_s": max(0.0, statistics.median(app - cpu for cpu, app in measured)),
    }


def lower_bound_finding(path: str, where: list[tuple[str, PathAccount]]) -> Finding:
    """`/x: under 90 % of the serving processes' CPU accounted for: sync-1x 41 % (...)`: a departure."""
    shares = ", ".join(
        f"{name} {a.share * 100:.0f} % ({a.process_cpu_per_request_s * 1000:.2f} ms a request used, "
        f"{a.accounted_s * 1000:.2f} ms accounted for)"
        for name, a in where
    )
    return Finding(
        kind="departure",
        subject=path,
        text=f"{path}: under 90 % of the serving processes' CPU was accounted for (the requests' own, the "
        f"server's own cost, no request's, the lab's own reads): {shares}. Its CPU per request is a lower "
        "bound there, and the predictions upper bounds. The app spends CPU for its requests where the "
        "middleware does not see it (a thread or a pool of its own, work after the response), or the "
        "server spends more on each than on an empty request where the flow does not measure it (an "
        "event loop's own work, threads of the server's own that no Python clock sees).",
    )
