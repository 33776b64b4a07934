"""A team's configuration's own cost per request, measured before its flows: what its serving
processes spend per request besides the app (ServingCost).

Empty requests go to the lab's /healthz: the control layer answers it behind the server and the CPU
middleware, so the serving processes' CPU per request there, less what the requests measured
themselves, is the server's and the middleware's own cost (parsing, WSGI or ASGI, the headers),
which no request's Server-Timing holds. A 404 of the app is not used: what an app does for a path
it does not know is its own (Django logs it, a catch-all route may work). The processes' idle rate
is read just before, once what ran before has settled, over a window with nothing of the lab's in
it but the census's own two reads (README: scrapes polled inside it made it 20 to 35 ms/s where
the processes spent 3), and is what the lab counts as belonging to no request. The empty requests'
rate also fits a sync worker's delay before its close (whole.py, sync_cycle.py). Then empty
streamed bodies (/healthz?chunks=): the server's cost per body part, where it writes parts from
threads of its own (granian-wsgi's Rust threads: 2.5 to 2.8 us a part here).
"""

from __future__ import annotations

import asyncio
import time
from ipaddress import ip_address
from urllib.parse import urlsplit

from labtester import census, machine, scrape
from labtester.control import async_control_client
from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import decode, encode
from labtester.scenarios.flow.cost import ServingCost
from labtester.scenarios.flow.whole import cores_free, empty_rate, slot_delay
from labtester.scenarios.rate import open_loop
from labtester.sizing.floor import ALONE_MOST_S, ALONE_REQUESTS, ALONE_SHARE, floor_of
from labtester.traffic import Outgoing

IDLE_S = 3.0  # the idle rate's window: CPU times tick in 10 ms per process, and idle is a few ms/s
SETTLE_S = 1.0  # before it: the last request's work (a stability probe's, a start-up's) ends first
EMPTY_S = 2.0  # how long the empty requests run: enough CPU that a census read's own cost is small
# The parts of an empty streamed body (/healthz?chunks=): the server's cost per part is its slope
# from the empty requests' one (granian-wsgi writes each from a Rust thread no Python clock sees).
STREAM_CHUNKS = 50
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
    empty requests in a closed loop, then empty streamed ones (STREAM_CHUNKS parts each); the
    tester's own CPU beside (machine snapshots); last, empty requests alone (`_alone`)."""
    census_url, metrics_url = url + info.control.census, url + info.control.metrics
    async with async_control_client(60) as control, LoadClient(url, timeout_s) as client:
        await asyncio.sleep(SETTLE_S)
        idle_before, idle_at = await census.cpu_seconds(control, census_url), time.time()
        await asyncio.sleep(IDLE_S)
        idle_after, idle_s = await census.cpu_seconds(control, census_url), time.time() - idle_at
        routes = info.control.paths()

        async def closed_loop(path: str) -> tuple[Record, list[Sample]]:
            """`users` clients sending `path` again once answered, for EMPTY_S: the processes'
            CPU and what they charged around it, the machine's beside."""
            charged_before = await scrape.charged_settled(control, metrics_url, routes)
            cpu_before, machine_before = await census.cpu_seconds(control, census_url), machine.snapshot()
            samples: list[Sample] = []

            async def user() -> None:
                while client.now() < EMPTY_S:
                    samples.append(await client.get(path))

            client.restart_clock()
            await asyncio.gather(*(user() for _ in range(users)))
            machine_after = machine.snapshot()
            charged_after = await scrape.charged_settled(control, metrics_url, routes)
            cpu_after = await census.cpu_seconds(control, census_url)
            return {
                "cpu_before_s": cpu_before,
                "cpu_after_s": cpu_after,
                # The empty requests are the lab's /healthz: charged to its reads, not to requests.
                **charged_between(charged_before, charged_after),
                "machine": machine.recorded(machine_before, machine_after),
            }, samples

        empty, samples = await closed_loop(info.control.health)
        stream: Record | None = None  # a server without the parts' counter: nothing to read it on
        if empty.get("chunks") is not None:
            stream, streamed = await closed_loop(f"{info.control.health}?chunks={STREAM_CHUNKS}")
            stream["requests"] = sum(1 for s in streamed if s.ok)
        alone = await _alone(client, info.control.health, empty_rate(samples))
    return {
        "idle": {"cpu_before_s": idle_before, "cpu_after_s": idle_after, "wall_s": idle_s},
        **empty,
        "local": local(url),
        "empty_users": users,  # not "users": a flow record's spawns go by that name
        # Not `samples`: these are the lab's own requests, kept out of the run's request tables.
        "empty": encode(samples),
        "stream": stream,
        "alone": alone,
    }


async def _alone(client: LoadClient, path: str, closed_per_s: float | None) -> Record | None:
    """Empty requests alone: ALONE_REQUESTS (at most ALONE_MOST_S) evenly spaced at ALONE_SHARE of
    the closed loop's rate, so they seldom meet; each timed from its schedule (`from_schedule_s`)."""
    if not closed_per_s:
        return None
    rate, request = ALONE_SHARE * closed_per_s, Outgoing.get(path)
    client.restart_clock()
    duration_s = min(ALONE_MOST_S, ALONE_REQUESTS / rate)
    samples, _ = await open_loop(client, lambda _: request, rate, duration_s, ALONE_REQUESTS)
    return {"offered_per_s": rate, "samples": encode(samples)}


def charged_between(before: scrape.Charged | None, after: scrape.Charged | None) -> Record:
    """What the processes charged between two reads: to requests (`charged_cpu_s`), to the lab's
    own control requests (`lab_reads_cpu_s`), and how many of those they answered (`lab_reads`);
    None where unread, or where the server has no total of the lab's reads (its requests' holds them).
    `server_thread_cpu_s`: the server's own CPU on the threads that ran requests, between them (its
    series appears at its first second: from 0 then); None where the server measures none there.
    `chunks`: the response body parts the requests (the lab's reads among them) handed the server.
    `full_collections`, `full_collections_cpu_s`: the full garbage collections the processes ran
    (None where the server has no such counters)."""
    if before is None or after is None:
        named = ("charged_cpu_s", "lab_reads_cpu_s", "lab_reads", "server_thread_cpu_s", "chunks")
        return dict.fromkeys((*named, "full_collections", "full_collections_cpu_s"))
    apart = before.control_s is not None and after.control_s is not None
    return {
        "charged_cpu_s": max(0.0, after.requests_s - before.requests_s),
        "lab_reads_cpu_s": cpu_delta(before.control_s, after.control_s) if apart else None,
        "lab_reads": max(0.0, after.control_requests - before.control_requests) if apart else None,
        "server_thread_cpu_s": cpu_delta(before.between_requests_s or 0.0, after.between_requests_s),
        "chunks": cpu_delta(before.chunks or 0.0, after.chunks),
        # A process's series comes with its first request's end: from 0 then; None without the counters.
        "full_collections": cpu_delta(before.full_collections or 0.0, after.full_collections),
        "full_collections_cpu_s": cpu_delta(
            before.full_collections_cpu_s or 0.0, after.full_collections_cpu_s
        ),
    }


def cpu_delta(before: float | None, after: float | None) -> float | None:
    """after - before, at least 0; None where either was unread."""
    return None if before is None or after is None else max(0.0, after - before)


def serving_cost(record: Record, info: TargetInfo, flows_users: int = 0) -> ServingCost:
    """ServingCost from the raw record `measure` made, with a sync worker's delay fitted to it.
    `flows_users`: the flows' own, for records from before the empty requests' users were kept."""
    idle = record["idle"]
    idle_cpu = cpu_delta(idle["cpu_before_s"], idle["cpu_after_s"])
    idle_rate = idle_cpu / idle["wall_s"] if idle_cpu is not None and idle["wall_s"] > 0 else None
    samples, use = decode(record["empty"]), machine.use_recorded(record["machine"])
    thread, busy = record.get("server_thread_cpu_s"), cpu_delta(record["cpu_before_s"], record["cpu_after_s"])
    # What the processes charged to the requests, their work after the header included (else the
    # server's cost would hold it, and a flow's requests, charged the same, count it twice): the
    # lab's reads' total, which holds these /healthz requests, and the requests' beside.
    spent = _not_charged(record, len(samples), idle_rate, sum(s.cpu_s or 0.0 for s in samples))
    on_core, server = spent if spent is not None else (None, None)
    chunks = record.get("chunks")
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
        chunks_per_request=chunks / len(samples) if chunks is not None and samples else None,
    )
    # A sync worker's endpoints all run on its workers, with the same slots: one delay per target.
    workers = next((e for e in info.endpoints.values() if e.execution == "workers"), None)
    users = cost.users or flows_users
    delay = slot_delay(cost, workers, users, info.effective_cores) if workers else None
    per_chunk = _per_chunk(record.get("stream"), cost, idle_rate)
    floor = _floor(record.get("alone"), cost)
    return cost.model_copy(
        update={"slot_delay_s": delay, "server_cpu_per_chunk_s": per_chunk, "floor_s": floor}
    )


def _floor(alone: Record | None, cost: ServingCost) -> list[float]:
    """The floor (sizing/floor.py) of the empty requests alone: what each took from its schedule
    beyond its CPU on the cores (the processes' per request, the local client's), quantile by
    quantile. Empty where they were not sent, too few were answered, or the CPU was unread."""
    if not alone or cost.process_cpu_per_request_s is None:
        return []
    answered = [s.from_schedule_s for s in decode(alone["samples"]) if s.ok]
    return list(floor_of(answered, [cost.process_cpu_per_request_s + (cost.client_cpu_per_request_s or 0.0)]))


def _not_charged(
    phase: Record, requests: int, idle_rate: float | None, headers_s: float
) -> tuple[float, float] | None:
    """Over one closed loop of the lab's requests: the processes' CPU per request less the idle
    rate, and of it what no request was charged (the server's own); None where unread."""
    busy = cpu_delta(phase["cpu_before_s"], phase["cpu_after_s"])
    if busy is None or not requests:
        return None
    on_core = max(0.0, busy - (idle_rate or 0.0) * machine.use_recorded(phase["machine"]).wall_s) / requests
    charged = phase.get("charged_cpu_s")
    own = (headers_s if charged is None else charged) + (phase.get("lab_reads_cpu_s") or 0.0)
    return on_core, max(0.0, on_core - own / requests)


def _per_chunk(stream: Record | None, cost: ServingCost, idle_rate: float | None) -> float | None:
    """The server's CPU per body part beyond an empty request's, off the requests' threads: the
    empty stream's cost there over the empty request's, per part more. None where either was not
    read, or the stream's requests handed the server no more parts (a /healthz that does not stream)."""
    empty_chunks, empty_server = cost.chunks_per_request, cost.server_cpu_per_request_s
    if not stream or not stream.get("requests") or empty_chunks is None or empty_server is None:
        return None
    requests = int(stream["requests"])
    spent, chunks = _not_charged(stream, requests, idle_rate, 0.0), stream.get("chunks")
    if spent is None or chunks is None:
        return None
    elsewhere, empty_elsewhere = spent[1], empty_server
    thread, empty_thread = stream.get("server_thread_cpu_s"), cost.server_thread_cpu_per_request_s
    if thread is not None and empty_thread is not None:  # the flows measure the threads' part again
        elsewhere, empty_elsewhere = elsewhere - float(thread) / requests, empty_server - empty_thread
    return per_part(empty_elsewhere, empty_chunks, elsewhere, float(chunks) / requests)


def per_part(empty_s: float, empty_parts: float, stream_s: float, stream_parts: float) -> float | None:
    """The server's CPU per body part beyond an empty request's: a streamed request's (`stream_s`,
    of `stream_parts` each) over an empty one's, per part more; None where it had no more parts."""
    more = stream_parts - empty_parts
    return max(0.0, stream_s - empty_s) / more if more >= 1 else None


def parts_cost(parts: float, empty_parts: float, per_part_s: float) -> float:
    """What a request's body parts beyond an empty request's cost the server, at `per_part_s` each."""
    return max(0.0, parts - empty_parts) * per_part_s
