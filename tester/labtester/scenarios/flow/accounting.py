"""The cost accounting of a team's app, per configuration: what its serving processes spend per
request besides the app, measured on empty requests before its flows, and per path where the
processes' CPU over the flow went (conservation).

Empty requests go to the lab's /healthz: the control layer answers it behind the server and the CPU
middleware, so the serving processes' CPU per request there, less what the requests measured
themselves, is the server's and the middleware's own cost (parsing, WSGI or ASGI, the headers),
which no request's Server-Timing holds. A 404 of the app is not used: what an app does for a path
it does not know is its own (Django logs it, a catch-all route may work). The processes' idle rate
is read just before, once what ran before has settled, over a window with nothing of the lab's in
it but the census's own two reads (README: scrapes polled inside it made it 20 to 35 ms/s where
the processes spent 3), and is what the lab counts as belonging to no request. The empty requests'
rate also fits a sync worker's delay before its close (whole.py, sync_cycle.py).

The lab's own reads around a flow (its /metrics scrapes, the census) are requests the processes
serve too: their CPU is charged to a total of its own (`lab_control_cpu_seconds_total`, not the
requests'), and conservation names it as a fourth term, with the server's own cost of each.

Where a request has its thread (sync, gthread, granian's blocking threads) or greenlet (gevent) to
itself, the server's own work there between requests is measured over each flow, on an event
loop (uvicorn, granian's ASGI) the loop thread's CPU between any two request steps, and on a
pool's threads the CPU between the calls they ran for requests
(`lab_between_requests_cpu_seconds_total`): a path's server cost is that plus what empty requests
cost the server elsewhere (gthread's poller, gevent's hub, granian's own threads). Empty requests
alone fell short: httpbin's gthread threads spent 0.27 to 0.34 ms a request of their own on /json
and /html, 0.21 to 0.26 on /healthz; empty requests held as long (a sleep) cost no more, spinning
ones little more: the app's own code having run costs it, which only its requests carry.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from ipaddress import ip_address
from urllib.parse import urlsplit

import httpx

from labtester import census, machine, scrape
from labtester.control import async_control_client
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import decode, encode
from labtester.scenarios.flow.cost import PathAccount, ServingCost
from labtester.scenarios.flow.whole import cores_free, empty_rate, slot_delay

IDLE_S = 3.0  # the idle rate's window: CPU times tick in 10 ms per process, and idle is a few ms/s
SETTLE_S = 1.0  # before it: the last request's work (a stability probe's, a start-up's) ends first
EMPTY_S = 2.0  # how long the empty requests run: enough CPU that a census read's own cost is small
COST_STEP = "flow serving cost"


def local(url: str) -> bool:
    """A target on this machine's loopback: its load client shares its cores."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


async def measure(url: str, info: TargetInfo, users: int, timeout_s: float) -> Record:
    """The raw figures of ServingCost: the processes' CPU at idle, then under `users` clients sending
    empty requests in a closed loop; the tester's own CPU beside (machine snapshots)."""
    census_url, metrics_url = url + info.control.census, url + info.control.metrics
    async with async_control_client(60) as control, LoadClient(url, timeout_s) as client:
        await asyncio.sleep(SETTLE_S)
        idle_before, idle_at = await census.cpu_seconds(control, census_url), time.time()
        await asyncio.sleep(IDLE_S)
        idle_after, idle_s = await census.cpu_seconds(control, census_url), time.time() - idle_at
        routes = info.control.paths()
        charged_before = await scrape.charged_settled(control, metrics_url, routes)
        cpu_before, machine_before = await census.cpu_seconds(control, census_url), machine.snapshot()
        samples: list[Sample] = []

        async def user() -> None:
            while client.now() < EMPTY_S:
                samples.append(await client.get(info.control.health))

        client.restart_clock()
        await asyncio.gather(*(user() for _ in range(users)))
        machine_after = machine.snapshot()
        charged_after = await scrape.charged_settled(control, metrics_url, routes)
        cpu_after = await census.cpu_seconds(control, census_url)
    return {
        "idle": {"cpu_before_s": idle_before, "cpu_after_s": idle_after, "wall_s": idle_s},
        "cpu_before_s": cpu_before,
        "cpu_after_s": cpu_after,
        # The empty requests are the lab's /healthz: charged to its reads, not to requests.
        **charged_between(charged_before, charged_after),
        "machine": machine.recorded(machine_before, machine_after),
        "local": local(url),
        "empty_users": users,  # not "users": a flow record's spawns go by that name
        # Not `samples`: these are the lab's own requests, kept out of the run's request tables.
        "empty": encode(samples),
    }


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
            "server_cpu_s": _delta(self.cpu, cpu),
        }


def charged_between(before: scrape.Charged | None, after: scrape.Charged | None) -> Record:
    """What the processes charged between two reads: to requests (`charged_cpu_s`), to the lab's
    own control requests (`lab_reads_cpu_s`), and how many of those they answered (`lab_reads`);
    None where unread, or where the server has no total of the lab's reads (its requests' holds them).
    `server_thread_cpu_s`: the server's own CPU on the threads that ran requests, between them (its
    series appears at its first second: from 0 then); None where the server measures none there."""
    if before is None or after is None:
        return dict.fromkeys(("charged_cpu_s", "lab_reads_cpu_s", "lab_reads", "server_thread_cpu_s"))
    apart = before.control_s is not None and after.control_s is not None
    return {
        "charged_cpu_s": max(0.0, after.requests_s - before.requests_s),
        "lab_reads_cpu_s": _delta(before.control_s, after.control_s) if apart else None,
        "lab_reads": max(0.0, after.control_requests - before.control_requests) if apart else None,
        "server_thread_cpu_s": _delta(before.between_requests_s or 0.0, after.between_requests_s),
    }


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else max(0.0, after - before)


def serving_cost(record: Record, info: TargetInfo, flows_users: int = 0) -> ServingCost:
    """ServingCost from the raw record `measure` made, with a sync worker's delay fitted to it.
    `flows_users`: the flows' own, for records from before the empty requests' users were kept."""
    idle = record["idle"]
    idle_cpu = _delta(idle["cpu_before_s"], idle["cpu_after_s"])
    idle_rate = idle_cpu / idle["wall_s"] if idle_cpu is not None and idle["wall_s"] > 0 else None
    samples, use = decode(record["empty"]), machine.use_recorded(record["machine"])
    busy = _delta(record["cpu_before_s"], record["cpu_after_s"])
    server, thread, on_core = None, record.get("server_thread_cpu_s"), None
    if busy is not None and samples:
        on_core = max(0.0, busy - (idle_rate or 0.0) * use.wall_s) / len(samples)
        # What the processes charged to the requests, their work after the header included (else
        # the server's cost would hold it, and a flow's requests, charged the same, count it twice):
        # the lab's reads' total, which holds these /healthz requests, and the requests' beside.
        charged = record.get("charged_cpu_s")
        own = sum(s.cpu_s or 0.0 for s in samples) if charged is None else charged
        own += record.get("lab_reads_cpu_s") or 0.0
        server = max(0.0, on_core - own / len(samples))
    cost = ServingCost(
        requests=len(samples),
        server_cpu_per_request_s=server,
        server_thread_cpu_per_request_s=thread / len(samples) if thread is not None and samples else None,
        client_cpu_per_request_s=use.tester_s / len(samples) if record["local"] and samples else None,
        idle_cpu_per_s=idle_rate,
        processes=info.workers,
        users=record.get("empty_users"),
        empty_per_s=empty_rate(samples),
        process_cpu_per_request_s=on_core,
        cores_free_of_others=cores_free(record, busy, tester=False),
    )
    # A sync worker's endpoints all run on its workers, with the same slots: one delay per target.
    workers = next((e for e in info.endpoints.values() if e.execution == "workers"), None)
    users = cost.users or flows_users
    delay = slot_delay(cost, workers, users, info.effective_cores) if workers else None
    return cost.model_copy(update={"slot_delay_s": delay})


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
    server_each = cost.server_cpu_per_request_s if measured is None else measured[0]
    accounted = request_each + server_each + no_request_each + reads_each
    return PathAccount(
        requests=requests,
        process_cpu_per_request_s=process_each,
        request_cpu_per_request_s=request_each,
        header_cpu_per_request_s=headers / requests,
        charged_by="server-timing" if charged is None else "counter",
        server_cpu_per_request_s=server_each,
        server_measured_cpu_per_request_s=None if measured is None else measured[1],
        no_request_cpu_per_request_s=no_request_each,
        lab_reads_cpu_per_request_s=reads_each,
        share=accounted / process_each if process_each > 0 else 1.0,
        cores_per_process=process / wall / max(1, cost.processes) if wall > 0 else 0.0,
    )


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
    """What one request of the path used alone: its CPU (its header's, and what the flow's requests
    were charged after theirs, `late_s`), the median (what a typical request used, as shown) and the
    mean (what a rate depends on: a skewed spread's median is below it), and the wait beside it (the
    header's, net of its time on a run queue: a busy machine's delay for a core is not the path's)."""
    measured = [(s.cpu_s, s.own_s) for s in baseline if s.ok and s.cpu_s is not None and s.own_s is not None]
    if not measured:
        return {"cpu_s": None, "cpu_mean_s": None, "wait_s": None}
    return {
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
