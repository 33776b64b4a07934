"""`make bench`: the figures the lab's accuracy rests on, measured through HTTP like the lab does.

0. What the CPU middleware (Server-Timing, per-request CPU) adds to each request, in-process.
1. The load client against wrk on the same trivial endpoint (its capacity and added latency), and
   what one client costs: its CPU per request beside Locust's FastHttpUser's and wrk's.
2. A local lab on an idle machine: the kernel's drift, calibration errors, |measured/model - 1|
   over every CPU burst (median and worst), departure findings, the release's offset and spread
   (by the servers' own start times) and the delivery lag.
3. The same bursts with a deliberate CPU hog beside the targets: the lab must name interference.
4. The sizing's own cost: the CPU seconds its search takes over every family on a mixed app, and
   on the mix the app of 5 measured.
5. The model's error on a team's app (the Flask shop): every configuration's flows on a light path
   and a heavy one, measured rate over predicted side by side (modelerror.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from rich.console import Console

from labtester.bench.clientcost import ClientCost, measure
from labtester.bench.modelerror import print_model_error
from labtester.inputs import Inputs
from labtester.inputs.bench import app_settings, capacity_target
from labtester.launcher import dying_with_tester
from labtester.load import LoadClient, Sample
from labtester.report.clients import release_text
from labtester.results import Results
from labtester.scenarios.bursts.analyse import BurstRun, BurstsSummary
from labtester.scenarios.sweep import level
from labtester.sizing.compiled import simulation_label
from labtester.sizing.families import RULES, Family, family_name
from labtester.sizing.kinds import RequestKind
from labtester.sizing.pod import MIB, Memory, Pod
from labtester.sizing.serving import sized_for
from labtester.target_group import running_targets
from labtester.targets import TargetDefinition

WRK_DURATION_S = 5
CAPACITY_CONCURRENCY = 50
# The hog set: a short matrix, enough bursts for the interference to show.
HOG_SETTINGS = {"burst_max": 4, "repeats": 1}
HOG = "import time\nwhile True:\n    pass\n"  # one core, fully, until killed

LocalLab = Callable[..., Results]
AppLab = Callable[[Inputs, Console], Results]  # __main__'s app lab: every configuration of the app


@dataclass(frozen=True)
class ClientRun:
    requests_per_s: float
    p50_s: float


_WRK_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_wrk(output: str) -> ClientRun:
    """Requests/sec and the 50 % latency from `wrk --latency` output."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    median = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    if not rate or not median:
        raise ValueError(f"unexpected wrk output:\n{output}")
    return ClientRun(float(rate.group(1)), float(median.group(1)) * _WRK_UNITS[median.group(2)])


def run_wrk(url: str, concurrency: int, duration_s: int = WRK_DURATION_S) -> ClientRun:
    command = ["wrk", f"-t{min(concurrency, 2)}", f"-c{concurrency}", f"-d{duration_s}s", "--latency", url]
    return parse_wrk(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def run_tester_client(
    base_url: str, path: str, concurrency: int, duration_s: float = WRK_DURATION_S
) -> ClientRun:
    async def measure() -> list[Sample]:
        async with LoadClient(base_url, 30) as client:
            return await level(client, path, concurrency, duration_s)

    ok = [s.latency_s for s in asyncio.run(measure()) if s.ok]
    return ClientRun(len(ok) / duration_s, float(np.median(ok)))


def print_capacity(console: Console, targets: list[TargetDefinition]) -> None:
    """The tester's load client against wrk on /healthz, one after the other."""
    with running_targets([capacity_target(targets)]) as (target,):
        url = target.url + "/healthz"
        wrk, tester = (
            run_wrk(url, CAPACITY_CONCURRENCY),
            run_tester_client(target.url, "/healthz", CAPACITY_CONCURRENCY),
        )
        wrk_one, tester_one = run_wrk(url, 1), run_tester_client(target.url, "/healthz", 1)
        print_client_cost(console, url)
    share = tester.requests_per_s / wrk.requests_per_s * 100
    console.print(
        f"BENCH client at concurrency {CAPACITY_CONCURRENCY} on /healthz: "
        f"wrk {wrk.requests_per_s:,.0f} req/s, "
        f"tester {tester.requests_per_s:,.0f} req/s = {share:.0f} % of wrk (goal: at least 50 %)",
        highlight=False,
    )
    console.print(
        f"BENCH client latency at concurrency 1 (p50): wrk {wrk_one.p50_s * 1000:.2f} ms, tester "
        f"{tester_one.p50_s * 1000:.2f} ms: "
        f"the tester adds {(tester_one.p50_s - wrk_one.p50_s) * 1000:+.2f} ms",
        highlight=False,
    )


COST_ROUNDS = 2  # each client twice, interleaved: a neighbour's burst does not hit one alone
COST_CLIENTS = ("lab", "locust", "wrk")
COST_GOAL = 0.5  # the lab's client at most this share of Locust's CPU per request


def print_client_cost(console: Console, url: str) -> None:
    """CPU seconds per request of each client in a closed loop on `url`, the median of its rounds."""
    costs: dict[str, list[ClientCost]] = {kind: [] for kind in COST_CLIENTS}
    for _ in range(COST_ROUNDS):
        for kind in COST_CLIENTS:
            costs[kind].append(measure(kind, url, CAPACITY_CONCURRENCY, WRK_DURATION_S))
    per_request = {
        kind: float(np.median([c.cpu_per_request_s for c in runs])) for kind, runs in costs.items()
    }
    rates = {kind: float(np.median([c.per_s for c in runs])) for kind, runs in costs.items()}
    shown = ", ".join(
        f"{kind} {per_request[kind] * 1000:.3f} ms ({rates[kind]:,.0f} req/s)" for kind in COST_CLIENTS
    )
    console.print(
        f"BENCH client CPU per request at concurrency {CAPACITY_CONCURRENCY} on /healthz: {shown}; "
        f"the lab's = {per_request['lab'] / per_request['locust']:.2f} x Locust's (goal: at most "
        f"{COST_GOAL}), {per_request['lab'] / per_request['wrk']:.1f} x wrk's",
        highlight=False,
    )


def print_middleware_overhead(console: Console) -> None:
    """The CPU middleware's cost per request, wrapped against bare app called in-process many times
    (`python -m workload.overhead`, a process of its own: the tester imports nothing of the targets)."""
    measured = subprocess.run(
        dying_with_tester([sys.executable, "-m", "workload.overhead"]),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    for interface, figure in json.loads(measured.stdout).items():
        console.print(
            f"BENCH CPU middleware on {interface}: +{figure['overhead_us']:.1f} µs of CPU per request, "
            f"{figure['metrics_us']:.1f} µs of it the Prometheus metrics "
            f"(the bare app: {figure['bare_us']:.1f} µs)",
            highlight=False,
        )


def burst_runs(results: Results) -> list[tuple[str, str, BurstRun]]:
    return [
        (target.name, endpoint.work, run)
        for target, summary in results.summaries(BurstsSummary)
        for endpoint in summary.endpoints
        for point in endpoint.points
        for run in point.runs
    ]


def _p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def release_lines(runs: list[tuple[str, str, BurstRun]]) -> list[str]:
    """The release's offset and spread, and the delivery lag, as `make bench` prints them."""
    offsets = [r.release_offset_s * 1000 for _, _, r in runs if r.release_offset_s is not None]
    # The release's own tightness shows in I/O bursts; in CPU bursts the servers' starts also wait
    # for them (a gthread acceptor for the GIL, a fifth worker for one of 2 cores): shown apart.
    spreads = {
        work: [r.start_spread_s * 1000 for _, w, r in runs if w == work and r.start_spread_s is not None]
        for work in ("io", "cpu")
    }
    by_target: dict[str, list[float]] = {}
    for name, work, run in runs:
        if work == "cpu" and run.start_spread_s is not None:
            by_target.setdefault(name, []).append(run.start_spread_s * 1000)
    lags = [r.delivery_lag_s * 1000 for _, _, r in runs if r.delivery_lag_s is not None]
    return [
        f"release to first server start p50/p95 {_p(offsets, 50):.2f}/{_p(offsets, 95):.2f} ms "
        "(goal p95 <= 5); spread of the starts p50/p95 "
        f"{_p(spreads['io'], 50):.2f}/{_p(spreads['io'], 95):.2f} ms in I/O bursts (goal p95 <= 2), "
        f"{_p(spreads['cpu'], 50):.2f}/{_p(spreads['cpu'], 95):.2f} ms in CPU bursts",
        "spread of the starts in CPU bursts, p95 by target: "
        + ", ".join(f"{name} {_p(values, 95):.2f} ms" for name, values in by_target.items()),
        f"delivery lag p50/p95/max {_p(lags, 50):.1f}/{_p(lags, 95):.1f}/"
        f"{max(lags, default=float('nan')):.1f} ms",
    ]


def print_accuracy(console: Console, results: Results, title: str) -> None:
    runs = burst_runs(results)
    cpu = [r for _, work, r in runs if work == "cpu" and r.ratio is not None]
    alone = [abs(r.ratio - 1) * 100 for r in cpu if r.ratio is not None and r.verdict != "interference"]
    kinds = [f.kind for f in results.findings]

    def say(text: str) -> None:
        console.print(f"BENCH {title}: {text}", highlight=False)

    if stability := results.stability:
        say(f"machine {'UNSTABLE' if stability.unstable else 'stable'}: {stability.describe()}")
    for target in results.targets:
        if target.calibration and target.calibration_check:
            say(
                f"calibration {target.name}: {target.calibration.error_pct:+.2f} % "
                f"({target.calibration_check.verdict})"
            )
    hit = len(cpu) - len(alone)
    say(
        f"model fit over the {len(alone)} CPU bursts the machine left alone: |measured/model - 1| median "
        f"{_p(alone, 50):.1f} %, worst {max(alone, default=float('nan')):.1f} % (goal: 3 % and 10 %); "
        f"{hit} more slowed by interference, each named with its taker"
    )
    say(
        f"findings: {kinds.count('departure')} departure, {kinds.count('interference')} interference, "
        f"{kinds.count('noise')} noise, {kinds.count('failure')} failure"
    )
    for line in release_lines(runs):
        say(line)
    if results.run.clients > 1 and (release := release_text(results)):
        say(release)
    for finding in results.findings:
        if finding.kind in ("interference", "departure"):
            console.print(f"  {finding.kind}: {finding.text}", highlight=False, markup=False)


def print_sizing_cost(console: Console) -> None:
    """The search over six families' knobs for the shared note's mixed app (a CPU path, a waiting
    path, one that does both) on 2 cores, its CPU seconds, which must stay under one, then those of
    minutes of the rates it proposes (sizing/minutes.py), which the plan's levels needed before."""
    mix = [
        RequestKind("/cpu", 1, 0.05, 0.0, 0.001),
        RequestKind("/wait", 1, 0.0, 0.1, 0.001),
        RequestKind("/mix", 1, 0.04, 0.05, 0.001),
    ]
    families = [
        Family(family_name(server, kind), server, kind if kind == "asgi" else "wsgi", rule)
        for (server, kind), rule in RULES.items()
    ]
    found = sized_for(
        families,
        {f.name: mix for f in families},
        {f.name: Memory(40 * MIB, 60 * MIB) for f in families},
        Pod(cores=2, memory_bytes=2 << 30),
        objective_s=0.4,
        duration_s=20,
    )
    proposed = found.proposed.candidate.label if found.proposed else "nothing"
    console.print(
        f"BENCH sizing search: {found.cpu_s - found.minutes_cpu_s:.3f} s of CPU (goal: under 1 s; "
        f"{simulation_label()}), then {found.minutes_cpu_s:.3f} s on minutes of the rates it proposes, "
        f"{found.simulations} simulations over {len(families)} families; it proposes {proposed}",
        highlight=False,
    )


def run_bench(inputs: Inputs, console: Console, local_lab: LocalLab, app_lab: AppLab) -> int:
    assert inputs.settings is not None and inputs.values is not None
    print_sizing_cost(console)
    print_middleware_overhead(console)
    print_capacity(console, inputs.targets)
    shop = app_lab(replace(inputs, settings=app_settings(inputs.settings)), console)
    idle = local_lab(inputs, console)
    hog = subprocess.Popen(dying_with_tester([sys.executable, "-c", HOG]))
    try:
        loaded = local_lab(inputs, console, **HOG_SETTINGS)
    finally:
        hog.kill()
        hog.wait()
    console.rule("BENCH figures")
    print_accuracy(console, idle, "idle")
    print_accuracy(console, loaded, "with a CPU hog beside the targets")
    print_model_error(console, shop, inputs.values)
    return 1 if idle.failed_checks or loaded.failed_checks or shop.failed_checks else 0
