#!/usr/bin/env python3
"""What a team's request really costs, measured apart from the lab's middleware figures: the
yardstick that README's "Measure your own app" holds the lab's per-request CPU against.

`scripts/app_truth.py --app module:attr --paths /a,/b [--configurations uvicorn,gevent]`, run where
the app imports (as `make lab`), starts each configuration of the app's interface from the chart's
values, and per path sends N requests one after another: the serving processes' CPU over them (their
process tree, /test/resmon before and after), less the idle rate over the same time, less the same
figure per request on the lab's empty /healthz, is what one request used (`truth`). Beside it, the
median of the requests' own `lab-cpu` (Server-Timing), which is the lab's figure (`measured`). One
request at a time: nothing else runs in the processes, so their CPU is the request's and the
server's, and the empty request takes the server's part away. It prints one TSV line per
configuration and path: app, path, configuration, measured ms, truth ms, measured / truth.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import httpx

from labtester import applab, launcher, servertiming, targets
from labtester.info import TargetInfo

IDLE_S = 2.0  # the idle rate's window: CPU times tick in 10 ms per process
MIN_REQUESTS, MAX_REQUESTS = 20, 400
TARGET_S = 4.0  # how long each path's sequential requests run, within the counts above
WARM_UP = 5  # requests of each path first: imports, caches and pools made once are no request's


def _cpu(client: httpx.Client, url: str) -> float:
    return float(client.get(url).json()["cpu_seconds"])


def _sequential(client: httpx.Client, url: str, census: str, count: int) -> tuple[float, float, list[float]]:
    """The processes' CPU and the wall time over `count` requests in turn, and their `lab-cpu`."""
    before, started = _cpu(client, census), time.monotonic()
    measured = []
    for _ in range(count):
        response = client.get(url)
        cpu = servertiming.parse(response.headers.get_list(servertiming.HEADER)).cpu_s
        if cpu is not None:
            measured.append(cpu)
    wall = time.monotonic() - started
    return _cpu(client, census) - before, wall, measured


def _count(client: httpx.Client, url: str) -> int:
    """As many requests as fit in TARGET_S, from the warm-up's time each."""
    started = time.monotonic()
    for _ in range(WARM_UP):
        client.get(url)
    each = (time.monotonic() - started) / WARM_UP
    return max(MIN_REQUESTS, min(MAX_REQUESTS, int(TARGET_S / max(each, 1e-4))))


def truth_of(base: str, info: TargetInfo, paths: list[str]) -> list[tuple[str, float, float]]:
    """Per path: (path, the median `lab-cpu`, what a request used less an empty one's), seconds."""
    census = base + info.control.census
    found = []
    with httpx.Client(timeout=120) as client:
        for path in paths:
            _count(client, base + path)  # warm every path before any is measured
        idle_before = _cpu(client, census)
        time.sleep(IDLE_S)
        idle_rate = (_cpu(client, census) - idle_before) / IDLE_S
        health = base + info.control.health
        empty_count = _count(client, health) * 2
        empty_cpu, empty_wall, _ = _sequential(client, health, census, empty_count)
        empty_each = (empty_cpu - idle_rate * empty_wall) / empty_count
        for path in paths:
            count = _count(client, base + path)
            cpu, wall, measured = _sequential(client, base + path, census, count)
            truth = (cpu - idle_rate * wall) / count - empty_each
            found.append((path, statistics.median(measured) if measured else float("nan"), truth))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", required=True)
    parser.add_argument("--paths", required=True, help="comma-separated GET paths, each starting with /")
    parser.add_argument("--configurations", default="", help="comma-separated names (default: all)")
    args = parser.parse_args()
    paths = args.paths.split(",")
    if any(not path.startswith("/") for path in paths):
        sys.exit(f"error: every path starts with /: {args.paths}")
    try:
        interface = applab.check_app(args.app, paths)
    except applab.AppError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    wanted = set(filter(None, args.configurations.split(",")))
    for definition in targets.load_app_configurations(targets.DEFAULT_VALUES, interface):
        if wanted and definition.name not in wanted:
            continue
        target = launcher.start_target(definition, extra_env=applab.app_env(args.app, paths))
        try:
            info = TargetInfo.model_validate(httpx.get(target.url + "/info", timeout=60).json())
            for path, measured, truth in truth_of(target.url, info, paths):
                ratio = measured / truth if truth > 0 else float("nan")
                print(
                    f"{args.app}\t{path}\t{definition.name}\t{measured * 1000:.2f}\t{truth * 1000:.2f}\t{ratio:.2f}",
                    flush=True,
                )
        finally:
            target.stop()


if __name__ == "__main__":
    main()
