"""Prove the sizing: start each planned configuration the way the launcher starts a values entry
(the app target with the knobs' env), offer the mix open-loop at its predicted sustainable rate
and at 80 % of it, and record each request measured from its scheduled send (no coordinated
omission: a stalled server cannot slow the sends down). They start together (starting.py) and are
proved one at a time, each stopped once proved.

Each proved configuration is a target of the run, measured by sizing alone (`measure: false`, so
no other load shape counts it as missing); its plan and its runs are its raw records.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil

from labtester import machine
from labtester.launcher import RunningTarget
from labtester.proposal.alone import ALONE, alone
from labtester.proposal.openloop import Kind, offer
from labtester.proposal.plan import Planned
from labtester.proposal.starting import memory_for_starting, started_together
from labtester.proposal.sustained import sustained_after
from labtester.proposal.warming import WARMING, warmed
from labtester.proposal.warmup import Warmup
from labtester.rawlog import Record, RecordSink
from labtester.scenarios.common import encode
from labtester.scenarios.flow.servingcost import local
from labtester.sizing import window
from labtester.sizing.document import PROOF_S, Level, SizedSummary
from labtester.sizing.floor import Floor
from labtester.target_group import running_targets
from labtester.traffic import Outgoing

SHAPE = "sizing"


def target_name(summary: SizedSummary) -> str:
    return {
        "proposed": "sized-proposed",
        "resized": "sized-resized",
        "family": f"sized-{summary.family}",
        "needed": "sized-needed",
    }.get(summary.role, f"sized-fixed-{summary.family}")


def prove(
    planned: list[Planned],
    log: RecordSink,
    extra_env: dict[str, str],
    log_dir: Path,
    timeout_s: float,
    duration_s: float = PROOF_S,
    note: object = None,
    requests: dict[str, Outgoing] | None = None,
) -> None:
    """Start the planned configurations together (as many as the memory free holds: starting.py),
    then offer to each in turn and stop it, recording everything. `requests`: the team's requests
    by name, sent as its traffic writes them."""
    for group in started_together(planned, memory_for_starting()):
        here = [item for item in group if item.summary.runs_here]
        definitions = [
            item.family.definition(target_name(item.summary), item.summary.processes, item.summary.threads)
            for item in here
        ]
        with running_targets(definitions, extra_env=extra_env, log_dir=log_dir, keep_going=True) as started:
            running: dict[str, RunningTarget | str] = {**started.failed, **{t.name: t for t in started}}
            for item in group:
                summary = item.summary
                if callable(note) and summary.runs_here:  # the rest start nothing (_prove_one)
                    rate = (
                        f"{summary.sustainable_per_s:.1f}/s"
                        if summary.sustainable_per_s > 0
                        else "the proposal's rate"
                    )
                    note(f"sizing: proving {summary.label} ({summary.role}) at {rate}")
                target = running.get(target_name(summary), "")
                _prove_one(target, summary, log, timeout_s, duration_s, requests or {})


def _prove_one(
    target: RunningTarget | str,
    summary: SizedSummary,
    log: RecordSink,
    timeout_s: float,
    duration_s: float,
    requests: dict[str, Outgoing],
) -> None:
    """Prove one started configuration, then stop it; `target`: why it did not start, if it did not."""
    name = target_name(summary)
    if not summary.runs_here:  # a bigger pod, or no rate to offer it: predicted only
        unproved(name, summary, log)
        return
    if isinstance(target, str):
        log.write("target", target=name, url="", measure=False, ready=False, stage="start", error=target)
        log.write("scenario", **_plan(name, summary))
        return
    try:
        info = httpx.get(f"{target.url}/info", timeout=30).json()
        log.write("target", target=name, url=target.url, measure=False, ready=True, error=None, info=info)
        offer_levels(
            name, target.url, summary, log, (duration_s, timeout_s), requests, lambda: _server_cpu(target)
        )
    finally:
        target.stop()


def _plan(name: str, summary: SizedSummary) -> dict[str, object]:
    return {
        "target": name,
        "scenario": SHAPE,
        "kind": "plan",
        "client": 0,
        "plan": summary.model_dump(mode="json"),
    }


def unproved(name: str, summary: SizedSummary, log: RecordSink) -> None:
    """A configuration predicted and not run here (a bigger pod; a cluster, where the tester
    starts nothing): a target of the run that never started, with its plan."""
    log.write("target", target=name, url="", measure=False, ready=False, error=None)
    log.write("scenario", **_plan(name, summary))


def offer_levels(
    name: str,
    url: str,
    summary: SizedSummary,
    log: RecordSink,
    times: tuple[float, float],
    requests: dict[str, Outgoing],
    server_cpu: Callable[[], float | None],
) -> None:
    """The plan, then each of its levels offered to the running configuration at `url` and
    recorded, after each of its processes served each request once (warming.py): the proof,
    wherever the configuration runs (started here, or deployed).
    `server_cpu`: its processes' CPU seconds where they can be read from here, else None."""
    log.write("scenario", **_plan(name, summary))
    _drained(url, times[1])
    kinds = [k.name for k in summary.kinds]
    warming = warmed(url, kinds, summary.processes, times[1], requests)
    log.write("scenario", target=name, scenario=SHAPE, kind=WARMING, client=0, **warming)
    _drained(url, times[1])
    floor: Floor | None = None
    if (measured := alone(url, summary, times[1], requests)) is not None:
        record, floor = measured
        log.write("scenario", target=name, scenario=SHAPE, kind=ALONE, client=0, **record)
    floor_s = window.floor_for(floor, summary.planned_floor_s)
    runs: list[Record] = []  # each level's record: the next one's warm-up adds what it measured
    for level in summary.levels:
        _drained(url, times[1])
        runs.append(_run(url, server_cpu, summary, level, times, requests, runs, floor_s))
        log.write("scenario", target=name, scenario=SHAPE, kind="run", client=0, **runs[-1])


def _run(
    url: str,
    server_cpu: Callable[[], float | None],
    summary: SizedSummary,
    level: Level,
    times: tuple[float, float],
    requests: dict[str, Outgoing],
    earlier: list[Record],
    floor_s: tuple[float, ...] = (),
) -> dict[str, object]:
    """One proof run, with the machine's and the server's CPU around it: what the rest of the
    machine left the server; then, with the run over and before the next starts, its level's
    sustained p99 on what it measured. `earlier`: the configuration's runs before it, for its
    warm-up; `floor_s`: what its requests alone took beyond the model (alone.py)."""
    duration_s, mix = times[0], [Kind(k.name, k.weight) for k in summary.kinds]
    rate_per_s = level.offered_per_s
    warmup = Warmup(summary, rate_per_s, duration_s, server_cpu, earlier, floor_s, level.seed)
    machine_before, cpu_before = machine.snapshot(), server_cpu()
    samples, wall_s, origin_at = asyncio.run(
        offer(url, mix, rate_per_s, *times, seed=level.seed, requests=requests, warmup=warmup)
    )
    machine_after, cpu_after = machine.snapshot(), server_cpu()
    try:  # measured: now the warm-up's prediction of the window
        warmup.after(samples, origin_at if local(url) else None)  # a server's stamps: this machine's clock
    except (ArithmeticError, ValueError) as error:  # a model's failure never costs the measured run
        warmup.made = {"error": f"{type(error).__name__}: {error}"}
    run: dict[str, object] = {
        **warmup.recorded(),
        "step": f"sizing {rate_per_s:.3f}",
        "offered_per_s": rate_per_s,
        "seed": level.seed,  # its sends (proof_arrivals, proof_kinds)
        "duration_s": duration_s,
        "wall_s": wall_s,
        "samples": encode(samples),
        "machine": machine.recorded(machine_before, machine_after),
        "server_cpu_s": None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
        "load_average": os.getloadavg()[0],  # the machine's, beside the figures: was it busy?
        # The client's clock against the server's stamps: one machine's clock only (tail.py).
        "origin_at": origin_at if local(url) else None,
    }
    judged = [s for s in samples if s.scheduled_s >= warmup.ends_s]  # the requests it judges
    try:
        held = sustained_after(summary, level, judged, run, floor_s)
    except (ArithmeticError, ValueError) as error:  # a model's failure never costs the measured run
        held = {"error": f"{type(error).__name__}: {error}"}
    return {**run, "sustained": held}


def _drained(url: str, timeout_s: float, quick_s: float = 0.5) -> None:
    """Wait until the server answers /healthz within `quick_s`: requests a run left queued (sent,
    given up by the client, still served) would otherwise load the next run."""
    deadline = time.monotonic() + max(60.0, timeout_s)
    while time.monotonic() < deadline:
        began, answered = time.monotonic(), False
        with contextlib.suppress(httpx.HTTPError):
            answered = httpx.get(f"{url}/healthz", timeout=timeout_s).status_code == 200
        if answered and time.monotonic() - began < quick_s:
            return  # a refused connection is a server down, not one drained
        if not answered:
            time.sleep(quick_s)


def _server_cpu(target: RunningTarget) -> float | None:
    """The server's process tree's CPU seconds, read here with psutil: its census endpoint queues
    behind every request a run left (25 s on a proof here), /proc does not."""
    total = 0.0
    for process in target.tree():
        with contextlib.suppress(psutil.Error):
            times = process.cpu_times()
            total += times.user + times.system
    return total or None
