"""Bursts on one target: per endpoint, n = 1..K simultaneous requests, up to R times (fewer once a
majority of the repeats agree on what the burst is judged by, its makespan against the model of its
own measured work: repeats.py). The bursts of one are the requests alone: T, the scale
of every report, is theirs (a baseline of single requests before them measured the same again).

Around each burst the machine's CPU accounting (/proc/stat, the tester's own CPU) and the target's
(its census: CPU time of its process tree, its cgroup's throttling) are read, so the analysis can
tell the CPU the requests got from the CPU something else took. The server's request counters are
scraped before and after each endpoint and held against what was sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from labtester import census, machine
from labtester.clients.merge import joined
from labtester.clients.spent import Meter
from labtester.control import control_client
from labtester.info import EndpointInfo
from labtester.rawlog import Record
from labtester.scenarios.base import ShapeContext
from labtester.scenarios.bursts.analyse import burst_ratio
from labtester.scenarios.bursts.release import Reply, release
from labtester.scenarios.bursts.repeats import enough
from labtester.scrape import Counted
from labtester.traffic import Outgoing

WARMUP_ARGUMENT = 1  # one iteration or one millisecond: starts pools and connections, costs nothing
CONTROL_TIMEOUT_S = 30


def argument_of(ctx: ShapeContext, endpoint: EndpointInfo) -> int | None:
    """The path's argument: calibrated iterations for CPU, N in ms for waits; none for the other
    paths (a team's app, mixed work), which do what they do."""
    if endpoint.work == "cpu":
        return ctx.calibration.iterations if ctx.calibration else 1
    return round(ctx.settings.work_seconds * 1000) if endpoint.work == "io" else None


def measure_bursts(ctx: ShapeContext) -> None:
    with control_client(CONTROL_TIMEOUT_S) as control:
        for name in ctx.settings.planned_endpoints(ctx.info):
            if ctx.crew.leader:
                ctx.probe(f"before {name}")
            endpoint = ctx.info.endpoints[name]
            _measure_endpoint(ctx, control, endpoint, argument_of(ctx, endpoint), ctx.settings.outgoing(name))


def _measure_endpoint(
    ctx: ShapeContext,
    control: httpx.Client,
    endpoint: EndpointInfo,
    argument: int | None,
    request: Outgoing | None,
) -> None:
    """Client 0 warms the server up and scrapes its counters around the endpoint's bursts; every
    client fires its part of each burst. `request`: a team's request (its method, headers and
    body); None: a GET of the lab's endpoint."""
    base, settings = ctx.target.url, ctx.settings
    metrics_url = base + ctx.info.control.metrics
    url = endpoint.url(base, argument)
    if ctx.crew.leader:
        warm_up = endpoint.url(base, WARMUP_ARGUMENT)
        asyncio.run(release(warm_up, settings.burst_max, CONTROL_TIMEOUT_S, request=request))
        # A team's path is counted under its framework's route template: every route but the lab's.
        counts = Counted(
            control, metrics_url, endpoint.path, ctx.info.control.paths() if endpoint.work == "app" else None
        )
        before = counts.settled()
    sent, fired = 0, list[Record]()
    for n in range(1, settings.burst_max + 1):

        def burst(repeat: int, n: int = n) -> tuple[int, float | None]:
            ctx.progress.step(
                f"{ctx.target.name}: {endpoint.name} burst n={n} ({repeat + 1}/{settings.repeats})"
            )
            largest_first = n == settings.burst_max and repeat == 0
            count, whole = _fire(
                ctx,
                control,
                endpoint,
                url,
                request,
                argument,
                "burst",
                n,
                repeat,
                sample_census=largest_first,
            )
            fired.append(whole)
            return count, judged_ratio(fired, ctx, endpoint)

        sent += _until_settled(settings.repeats, burst, ctx.progress.add_steps)
    if ctx.crew.leader:
        counted = counts.since(before, sent).as_dict()
        ctx.record("metrics", step=f"{endpoint.name} metrics", endpoint=endpoint.name, **counted)


def _until_settled(
    repeats: int,
    fire_one: Callable[[int], tuple[int, float | None]],
    spared: Callable[[int], object] | None = None,
) -> int:
    """Repeats of one burst until they settle it (repeats.enough, on each repeat's measured/model
    ratio); how many requests they sent. `spared`: told how many planned repeats were not needed
    (as a negative count of steps)."""
    sent, ratios = 0, list[float | None]()
    while not enough(ratios, repeats):
        count, ratio = fire_one(len(ratios))
        sent += count
        ratios.append(ratio)
    if spared is not None:
        spared(len(ratios) - repeats)
    return sent


def judged_ratio(fired: list[Record], ctx: ShapeContext, endpoint: EndpointInfo) -> float | None:
    """The last burst's makespan over the model of its own measured work, as the analysis judges
    it (the path's wait from its bursts of one so far); None where a request failed. Every client
    holds every client's requests, so all decide alike."""
    alone = [record for record in fired if record["n"] == 1]
    return burst_ratio(fired[-1], alone, endpoint, ctx.info)


def fire(
    control: httpx.Client,
    url: str,
    n: int,
    census_url: str,
    timeout_s: float,
    sample: bool,
    *,
    client: int = 0,
    armed: Callable[[], object] | None = None,
    ready: Callable[[], object] | None = None,
    finished: Callable[[float, list[Reply]], object] | None = None,
    request: Outgoing | None = None,
) -> dict[str, Any]:
    """One client's n requests to `url` (the raw record's fields), with its own load. Client 0 also
    reads the machine's and the target's CPU before any client opens a connection (`armed`: the
    barrier; a sync worker holding an idle connection would not answer the census) and after every
    client's last reply (`finished`, given the release time and the replies: the barrier again),
    and, with `sample`, the target's busiest census while it ran. `ready`: the release, once every
    client's connections are open. `request`: what each of the n sends (a team's request); None: a
    GET of `url`."""
    leader = client == 0
    target_before = census.cpu_account(control, census_url) if leader else None
    machine_before = machine.snapshot()
    if armed is not None:
        armed()
    meter = Meter()

    def released() -> None:  # this client's load is measured from its own release
        if ready is not None:
            ready()
        meter.start()

    released_at, replies, busiest = asyncio.run(
        _release_sampling(
            url, n, timeout_s, census_url if sample and leader else None, client, released, request
        )
    )
    load = meter.read(len(replies))
    if finished is not None:
        finished(released_at, replies)
    fields: dict[str, Any] = {
        "n": n,
        "released_at": released_at,
        "requests": [reply.as_dict() for reply in replies],
        "census": busiest,
        "load": load,
    }
    if leader:
        target_after = census.cpu_account(control, census_url)
        fields["machine"] = machine.recorded(machine_before, machine.snapshot())
        fields["target_cpu"] = {"before": target_before, "after": target_after}
    return fields


def _fire(
    ctx: ShapeContext,
    control: httpx.Client,
    endpoint: EndpointInfo,
    url: str,
    request: Outgoing | None,
    argument: int | None,
    phase: str,
    n: int,
    repeat: int,
    *,
    sample_census: bool,
) -> tuple[int, Record]:
    """One burst: every client sends its part of the n at the common release; client 0 records
    what only it measures. Returns how many requests every client together sent, and the whole
    burst as the analysis joins it (every client's requests, each client's release): every client
    gets the same from the meeting, so all decide alike whether to repeat it."""
    step = f"{endpoint.name} {phase} n={n} r={repeat}"
    done: dict[int, Any] = {}

    def finished(released_at: float, replies: list[Reply]) -> None:
        mine = {"released_at": released_at, "requests": [reply.as_dict() for reply in replies]}
        done.update(ctx.meet(f"{step} done", mine))

    census_url = ctx.target.url + ctx.info.control.census
    burst = fire(
        control,
        url,
        ctx.crew.part(n),
        census_url,
        ctx.settings.request_timeout_s,
        sample_census,
        client=ctx.crew.index,
        armed=lambda: ctx.meet(f"{step} armed"),
        ready=lambda: ctx.meet(f"{step} go"),
        finished=finished,
        request=request,
    )
    fields = {
        "endpoint": endpoint.name,
        "path": url.removeprefix(ctx.target.url),
        "phase": phase,
        "argument": argument,
        "repeat": repeat,
    }
    if burst["requests"] or ctx.crew.leader:
        ctx.record("burst", step=step, **fields, **burst)
    parts = {client: (part["released_at"], part["requests"]) for client, part in done.items()}
    whole = {"kind": "burst", **fields, **joined(parts)}
    if ctx.crew.leader:
        ctx.check_alive([request["error"] for request in whole["requests"]])
    return whole["n"], whole


async def _release_sampling(
    url: str,
    n: int,
    timeout_s: float,
    census_url: str | None,
    index: int,
    ready: Callable[[], object] | None,
    request: Outgoing | None,
) -> tuple[float, list[Reply], dict[str, Any] | None]:
    """This client's part of the burst, released when every client is ready; with `census_url`,
    the target's census sampled while it runs."""
    if census_url is None:
        released_at, replies = await release(url, n, timeout_s, index, ready, request)
        return released_at, replies, None
    stop = asyncio.Event()
    sampler = asyncio.create_task(census.sample_during(census_url, stop))
    try:
        released_at, replies = await release(url, n, timeout_s, index, ready, request)
    finally:
        stop.set()
        samples = await sampler
    return released_at, replies, census.busiest(samples)
