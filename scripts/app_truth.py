#!/usr/bin/env python3
"""What a team's request really costs, measured apart from the lab's middleware figures: the
yardstick that README's "Measure your own app" holds the lab's per-request CPU against.

`scripts/app_truth.py --app module:attr --paths /a,/b [--configurations uvicorn,gevent]`, run where
the app imports (as `make lab`), starts each configuration of the app's interface from the chart's
values, and per path sends N requests one after another (N sized to about 2 s of the processes'
CPU). What one request used (`truth`) is the serving processes' CPU over them (every process of
the tree but the metrics process, read with psutil before and after, so that no read of this
script's is in it), less the idle rate over the same time, less the server's
own part: the same figure on the lab's empty /healthz less what those requests were charged
themselves (`lab_control_cpu_seconds_total`: /healthz is one of the lab's control paths), and for
each body part of the path's beyond an empty request's one, what a part of an empty stream
(/healthz?chunks=50) cost the server more (granian-wsgi writes each from its Rust threads). Beside
it, the lab's figure (`measured`): the mean of the requests' `lab-cpu` (Server-Timing) and what
the processes charged to them beyond their headers, per request (their
`lab_request_cpu_seconds_total`, which holds none of the lab's own reads), as the flow's model
takes it (analyse._cpu_per_request, accounting.late_cpu): a rate follows the mean, and the truth
is one. The headers' median is shown apart, as what a typical request used. One request at a time:
nothing else runs in the processes, so their CPU is the requests' and the server's. It prints one
TSV line per configuration and path: app, path, configuration, the header's median ms, measured ms,
the mean charged to a request ms (the conservation's figure), truth ms, measured / truth.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass

import httpx
import psutil

from labtester import applab, launcher, scrape, servertiming, targets
from labtester.info import TargetInfo
from labtester.scenarios.flow.servingcost import STREAM_CHUNKS, parts_cost, per_part

IDLE_S = 2.0  # the idle rate's window: CPU times tick in 10 ms per process
MIN_REQUESTS, MAX_REQUESTS = 30, 5000
TARGET_CPU_S = 2.0  # the processes' CPU a path's runs aim at: a 10 ms tick per process, under 1 % of it
BLOCKS = 5  # the empty requests and a path's, in turn
WARM_UP = 20  # requests of each path first: imports, caches and pools made once are no request's


@dataclass(frozen=True)
class Run:
    """N requests of one path in turn: the processes' CPU, what they charged to requests, the time,
    and each response's `lab-cpu`."""

    count: int
    cpu_s: float
    charged_s: float
    wall_s: float
    headers: list[float]
    chunks: float = 0.0  # the body parts its requests handed the server

    def __add__(self, other: Run) -> Run:
        return Run(
            self.count + other.count,
            self.cpu_s + other.cpu_s,
            self.charged_s + other.charged_s,
            self.wall_s + other.wall_s,
            self.headers + other.headers,
            self.chunks + other.chunks,
        )

    def server_s(self, idle_rate: float) -> float:
        """Of the lab's own requests (charged to its reads), the processes' CPU per request that
        none was charged: the server's own."""
        return (self.cpu_s - idle_rate * self.wall_s - self.charged_s) / self.count

    def chunks_each(self) -> float:
        return self.chunks / self.count

    def late_s(self) -> float:
        """What the processes charged to the requests beyond their headers, per request (the lab's
        flow adds it to each request's figure: accounting.late_cpu)."""
        return max(0.0, self.charged_s - sum(self.headers)) / self.count


class Serving:
    """The serving processes, read with nothing of this script's in their CPU: their CPU from the
    kernel (psutil, every process of the tree but the metrics process), their charged totals from
    the metrics process (which answers /metrics and serves no request). Read through the serving
    port, each block's scrape and two census reads were requests of theirs, in the truth's window
    and (before the lab's reads had a total of their own) in the lab's figure: on httpbin under
    sync-2x they put the lab's figure 0.15 to 0.54 ms a request above its own, and lab / truth
    read 0.67 to 1.04 where read so it was 0.85 to 0.98."""

    def __init__(self, client: httpx.Client, base: str, info: TargetInfo, metrics_url: str) -> None:
        census = client.get(base + info.control.census).json()
        self.processes = [psutil.Process(p["pid"]) for p in census["processes"] if p["role"] != "metrics"]
        self.client, self.metrics_url = client, metrics_url

    def cpu_s(self) -> float:
        return sum(times.user + times.system for times in (p.cpu_times() for p in self.processes))

    def charged(self, control: bool) -> tuple[float, float]:
        """What the processes charged so far to the lab's control requests (`control`), or to
        requests; and the body parts their requests handed the server so far."""
        found = scrape.parse(self.client.get(self.metrics_url).text)
        return (found.control_cpu_s if control else found.charged_cpu_s) or 0.0, found.response_chunks or 0.0


def _sequential(client: httpx.Client, url: str, serving: Serving, control: bool, count: int) -> Run:
    """`count` requests of `url` in turn; `control`: the lab's empty ones, charged to its reads."""
    (charged, chunks), before, started = serving.charged(control), serving.cpu_s(), time.monotonic()
    headers = []
    for _ in range(count):
        response = client.get(url)
        cpu = servertiming.parse(response.headers.get_list(servertiming.HEADER)).cpu_s
        if cpu is not None:
            headers.append(cpu)
    wall = time.monotonic() - started
    time.sleep(scrape.SETTLE_POLL_S)  # a streamed body's end is charged just after its last byte
    cpu = serving.cpu_s() - before
    charged_after, chunks_after = serving.charged(control)
    return Run(count, cpu, charged_after - charged, wall, headers, chunks_after - chunks)


def _count(client: httpx.Client, url: str, serving: Serving) -> int:
    """As many requests as use about TARGET_CPU_S, from the warm-up's CPU each."""
    before = serving.cpu_s()
    for _ in range(WARM_UP):
        client.get(url)
    each = (serving.cpu_s() - before) / WARM_UP
    return max(MIN_REQUESTS, min(MAX_REQUESTS, int(TARGET_CPU_S / max(each, 1e-5))))


def truth_of(
    base: str, info: TargetInfo, paths: list[str], metrics_url: str
) -> list[tuple[str, float, float, float, float]]:
    """Per path: (path, the median `lab-cpu`, the mean `lab-cpu` and what was charged after it (the
    model's), the mean charged,
    what a request used: the processes' CPU per request less the idle rate and the server's own
    part), in seconds."""
    health, stream = base + info.control.health, f"{base}{info.control.health}?chunks={STREAM_CHUNKS}"
    found = []
    with httpx.Client(timeout=120) as client:
        serving = Serving(client, base, info, metrics_url)
        counts = {url: _count(client, url, serving) for url in [*(base + p for p in paths), health, stream]}
        idle_before = serving.cpu_s()
        time.sleep(IDLE_S)
        idle_rate = (serving.cpu_s() - idle_before) / IDLE_S
        for path in paths:
            # Blocks of empty requests and of the path's in turn: the machine's drift (a busy
            # neighbour makes the same work cost more CPU) weighs on both alike.
            empty, streamed, run = (Run(0, 0.0, 0.0, 0.0, []) for _ in range(3))
            for _ in range(BLOCKS):
                empty += _sequential(client, health, serving, True, counts[health] // BLOCKS)
                streamed += _sequential(client, stream, serving, True, counts[stream] // BLOCKS)
                run += _sequential(client, base + path, serving, False, max(1, counts[base + path] // BLOCKS))
            # The server's own part of a request: an empty one's CPU less what it was charged itself,
            # and for each body part beyond its one what a part of an empty stream cost it more.
            server_each = empty.server_s(idle_rate)
            stream_each = streamed.server_s(idle_rate)
            each = per_part(server_each, empty.chunks_each(), stream_each, streamed.chunks_each())
            if each is not None:
                server_each += parts_cost(run.chunks_each(), empty.chunks_each(), each)
            truth = (run.cpu_s - idle_rate * run.wall_s) / run.count - server_each
            median = statistics.median(run.headers) if run.headers else math.nan
            mean = statistics.fmean(run.headers) if run.headers else math.nan
            found.append((path, median, mean + run.late_s(), run.charged_s / run.count, truth))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", required=True)
    parser.add_argument("--paths", required=True, help="comma-separated GET paths, each starting with /")
    parser.add_argument("--configurations", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    paths = args.paths.split(",")
    if any(not path.startswith("/") for path in paths):
        print(f"error: every path starts with /: {args.paths}", file=sys.stderr)
        sys.exit(2)
    try:
        interface = applab.check_app(args.app, paths)
    except applab.AppError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    wanted = set(filter(None, args.configurations.split(",")))
    definitions = targets.load_app_configurations(targets.DEFAULT_VALUES, interface)
    if unknown := wanted - {definition.name for definition in definitions}:
        print(f"error: no {interface} configuration named {', '.join(sorted(unknown))}", file=sys.stderr)
        sys.exit(2)
    for definition in definitions:
        if wanted and definition.name not in wanted:
            continue
        target = launcher.start_target(definition, extra_env=applab.app_env(args.app, paths))
        try:
            info = TargetInfo.model_validate(httpx.get(target.url + "/info", timeout=60).json())
            metrics_url = target.metrics_url or target.url + info.control.metrics
            for path, header, measured, mean, truth in truth_of(target.url, info, paths, metrics_url):
                ratio = measured / truth if truth > 0 else math.nan
                figures = "\t".join(f"{seconds * 1000:.3f}" for seconds in (header, measured, mean, truth))
                print(f"{args.app}\t{path}\t{definition.name}\t{figures}\t{ratio:.2f}", flush=True)
        finally:
            target.stop()


if __name__ == "__main__":
    main()
