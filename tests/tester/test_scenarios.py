"""Load shapes against real local targets: the shapes each study describes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from pydantic import BaseModel

from labtester.info import TargetInfo
from labtester.launcher import RunningTarget
from labtester.load import Sample
from labtester.results import Results, RunInfo, TargetResult
from labtester.scenarios import SHAPES
from labtester.scenarios.closed import ClosedSettings
from labtester.scenarios.common import SampleShape, encode
from labtester.scenarios.rate import RateSettings
from labtester.scenarios.sweep.analyse import SweepSettings, SweepVariant, degrades_at
from tests.conftest import Configured, StartTarget

KNOWN_FAILURES = {"timeout", "connection refused", "connection reset", "remote disconnected"}
SCHEMA = json.loads((Path(__file__).parents[2] / "tester/labtester/results.schema.json").read_text())


def run_shape(name: str, url: str, settings: BaseModel, timeout_s: float = 60) -> dict[str, Any]:
    """One load shape on a running target, summarised as results.json holds it."""
    shape = SHAPES[name]
    assert isinstance(shape, SampleShape)
    info = TargetInfo.model_validate(httpx.get(f"{url}/info").json())
    records = asyncio.run(shape.measure(url, settings, timeout_s, info))
    return shape.summarize(records, info).model_dump()


def run_closed(url: str, timeout_s: float = 60, **settings: Any) -> dict[str, Any]:
    return run_shape("closed", url, ClosedSettings(**settings), timeout_s)


@pytest.fixture(scope="module")
def fastapi(configured: Configured) -> RunningTarget:
    return configured("fastapi")


def run_sweep(target: RunningTarget, settings: SweepSettings) -> dict[str, Any]:
    return run_shape("sweep", target.url, settings)


def assert_under_the_bound(variant: dict[str, Any]) -> None:
    # Never above the bound, nor above the concurrency, beyond a clock's tick: judged on each
    # level's own rate against what its requests' time allows (CPU burnt by thread time, waits that
    # cannot end early), which a shared machine can only lower. A speedup, a ratio to level 1's
    # rate, would grow past it where noise slowed level 1 alone.
    seconds = (variant["params"]["cpu_ms"] + variant["params"]["io_ms"]) / 1000
    for level in variant["levels"]:
        most = min(variant["bound"], level["concurrency"]) / seconds
        assert level["throughput_per_s"] <= most * 1.05, (level, most)
        assert level["failures"] == {}


def test_sweep_speedup_on_fastapi_rises_towards_the_bound(fastapi: RunningTarget) -> None:
    settings = SweepSettings(levels=[1, 2, 4, 8], duration_s=2.0, variants=[SweepVariant(cpu_ms=2, io_ms=50)])
    (variant,) = run_sweep(fastapi, settings)["variants"]
    assert variant["bound"] == pytest.approx(52 / 2)  # one event loop: 1 / (1 - p)
    speedups = [level["speedup"] for level in variant["levels"]]
    assert speedups[-1] > 4 and speedups[-1] > speedups[1] > speedups[0] == 1
    assert_under_the_bound(variant)


def test_sweep_on_one_gevent_worker_approaches_the_bound_and_finds_the_knee(configured: Configured) -> None:
    gevent = configured("flask-gevent")
    settings = SweepSettings(
        levels=[1, 4, 32],
        duration_s=2.0,
        variants=[SweepVariant(cpu_ms=5, io_ms=55), SweepVariant(cpu_ms=50, io_ms=150)],
    )
    io_heavy, cpu_heavy = run_sweep(gevent, settings)["variants"]
    # One worker, one core for the CPU parts: 1 / (1 - p) = 12 and 4.
    assert (io_heavy["bound"], cpu_heavy["bound"]) == (pytest.approx(12), pytest.approx(4))
    assert (io_heavy["recommended_worker_connections"], cpu_heavy["recommended_worker_connections"]) == (
        11,
        3,
    )
    for variant in (io_heavy, cpu_heavy):
        assert_under_the_bound(variant)
    # Orderings, not a share of the bound: a neighbour taking the core slows the CPU parts, and the
    # speedup that one core allows shrinks with it (the bound assumes the CPU parts take cpu_ms).
    io_speedups = [level["speedup"] for level in io_heavy["levels"]]
    assert io_speedups[0] == 1 < io_speedups[1] < io_speedups[2]
    assert cpu_heavy["levels"][1]["speedup"] > 1.2
    # 32 at once is far beyond both bounds: the CPU parts queue, and p99 has risen for good.
    assert io_heavy["degrades_at"] is not None and cpu_heavy["degrades_at"] is not None


def test_the_limiter_answers_429_and_the_closed_loop_counts_them(start: StartTarget) -> None:
    limited = start("fastapi", LAB_MAX_IN_FLIGHT="5")
    summary = run_closed(limited.url, requests=100, concurrency=20, paths=["/test/io-bound/200"])
    assert summary["status_counts"]["429"] > 0 and summary["status_counts"]["200"] >= 5
    assert sum(summary["status_counts"].values()) == summary["requests"] == 100
    assert summary["failures"]["HTTP 429"] == summary["status_counts"]["429"]
    assert summary["success_ratio"] == summary["status_counts"]["200"] / 100


def test_open_loop_shows_the_stall_a_closed_loop_hides(fastapi: RunningTarget) -> None:
    # Blocking 100 ms waits on the event loop: the server completes at most 10 requests a second.
    path = "/test/badasync-io-bound/100"
    closed_loop = run_closed(fastapi.url, requests=20, concurrency=1, paths=[path])
    open_loop = run_shape("rate", fastapi.url, RateSettings(per_s=15, duration_s=4, path=path))
    # A closed loop waits for each answer, so it only ever sees one request's time (its median: one
    # of 20 slowed by a shared machine is not the loop's doing)...
    one = closed_loop["latency_s"]["median"]
    assert 0.1 <= one < 0.2
    # ...while arrivals on schedule queue up behind the stall, and the latency from the schedule shows it.
    assert open_loop["latency_from_schedule_s"]["p99"] > 5 * one
    assert open_loop["scheduled"] == 60 and open_loop["dropped"] == 0


def test_a_thousand_concurrent_io_requests_on_fastapi_all_succeed(fastapi: RunningTarget) -> None:
    summary = run_closed(fastapi.url, requests=1000, concurrency=1000, paths=["/test/io-bound/500"])
    assert summary["failures"] == {} and summary["status_counts"] == {"200": 1000}


def test_a_thousand_concurrent_on_flask_reports_failures_by_type(configured: Configured) -> None:
    flask = configured("flask-1x")
    # 1000 x 10 ms on 2 sync workers needs at least 5 s of worker time: with a 2 s client timeout,
    # many must fail, and each failure must be counted under its type.
    summary = run_closed(flask.url, timeout_s=2, requests=1000, concurrency=1000, paths=["/test/io-bound/10"])
    failed = sum(summary["failures"].values())
    assert failed > 0 and set(summary["failures"]) <= KNOWN_FAILURES
    assert summary["status_counts"].get("200", 0) + failed == 1000


def test_every_shape_through_the_command_line(fastapi: RunningTarget, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TESTER_TARGETS": f"fastapi={fastapi.url}",
        "TESTER_SCENARIOS": "closed,ramp,sweep,rate",
        "TESTER_OUTPUT_DIR": str(tmp_path),
        "TESTER_CLOSED__REQUESTS": "50",
        "TESTER_CLOSED__CONCURRENCY": "10",
        "TESTER_RAMP__USERS": "4",
        "TESTER_RAMP__SPAWN_RATE": "4",
        "TESTER_RAMP__DURATION_S": "2",
        "TESTER_SWEEP__LEVELS": "[1,4]",
        "TESTER_SWEEP__DURATION_S": "1",
        "TESTER_SWEEP__VARIANTS": '[{"cpu_ms": 2, "io_ms": 50}, {"cpu_ms": 2, "io_ms": 50, "splits": 5}]',
        "TESTER_RATE__PER_S": "20",
        "TESTER_RATE__DURATION_S": "2",
    }
    completed = subprocess.run(
        [sys.executable, "-m", "labtester", "run"], env=env, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    for heading in ("Closed loop", "Ramp (Locust", "Sweep:", "Constant arrival rate"):
        assert heading in completed.stdout
    (run_dir,) = tmp_path.iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    scenarios = results["targets"][0]["scenarios"]
    assert set(scenarios) == {"closed", "ramp", "sweep", "rate"}
    assert [v["params"]["splits"] for v in scenarios["sweep"]["variants"]] == [1, 5]
    assert set(scenarios["ramp"]["stats"]) >= {"requests_per_s", "failures_per_s", "latency_s"}
    assert set(scenarios["ramp"]["stats"]["latency_s"]) >= {"p50", "p66", "p99.99", "p100"}
    assert [users for _, users in scenarios["ramp"]["users"]] == [1, 2, 3, 4]
    assert sorted(p.name for p in (run_dir / "plots").iterdir()) == [
        "answer-mixed.png",  # the sweep answers how many at once
        "ramp-over-time.png",
        "rate-over-time.png",
        "sweep.png",
    ]
    rows = (run_dir / "scenario-requests.csv").read_text().splitlines()
    sweep_levels = [level for v in scenarios["sweep"]["variants"] for level in v["levels"]]
    assert (
        len(rows) - 1
        == sum(s.get("requests", 0) for s in (scenarios["closed"], *sweep_levels))
        + scenarios["ramp"]["stats"]["requests"]
        + scenarios["rate"]["scheduled"]
    )
    assert sum(",cpu_ms=2&io_ms=50&splits=5," in row for row in rows) == sum(
        level["requests"] for level in scenarios["sweep"]["variants"][1]["levels"]
    )


def test_degradation_needs_to_persist() -> None:
    assert degrades_at([0.1, 0.2, 0.1, 0.3, 0.4], [1, 2, 4, 8, 16]) == 8
    assert degrades_at([0.1, 0.11, 0.12], [1, 2, 4]) is None


def sweep_record(cpu_ms: int, io_ms: int, splits: int, concurrency: int, latency_s: float) -> dict[str, Any]:
    """A level of a sweep: 10 requests per concurrency slot over one second, all `latency_s`."""
    path = f"/test/mixed?{SweepVariant(cpu_ms=cpu_ms, io_ms=io_ms, splits=splits).query()}"
    samples = [Sample(path, 0.0, 0.0, latency_s, 200, None)] * (10 * concurrency)
    return {
        "params": {"cpu_ms": cpu_ms, "io_ms": io_ms, "splits": splits, "duration_s": 1.0},
        "concurrency": concurrency,
        "wall_s": 1.0,
        "server_cpu_s": None,
        "samples": encode(samples),
    }


GEVENT_INFO = TargetInfo.model_validate(
    {
        "name": "g",
        "framework": "flask",
        "server": "gunicorn",
        "workers": 1,
        "effective_cores": 2,
        "cores_source": "setting",
        "kernel": {"name": "k", "loops_per_iteration": 1, "max_iterations": 10, "work_cap_seconds": 1},
        "endpoints": {
            "mixed": {
                "name": "mixed",
                "path": "/test/mixed",
                "work": "mixed",
                "execution": "greenlets",
                "slots": 100,
            }
        },
    }
)


def test_summary_and_findings_per_variant_and_per_split() -> None:
    records = [
        *(sweep_record(5, 55, 1, c, latency) for c, latency in ((1, 0.06), (8, 0.07), (32, 0.2))),
        *(sweep_record(5, 55, 5, c, latency) for c, latency in ((1, 0.06), (8, 0.12), (32, 0.3))),
    ]
    shape = SHAPES["sweep"]
    summary = shape.analyse(records, GEVENT_INFO, None)  # type: ignore[arg-type]
    whole, split = summary.model_dump()["variants"]
    assert [v["params"]["splits"] for v in summary.model_dump()["variants"]] == [1, 5]
    assert (whole["bound"], whole["recommended_worker_connections"]) == (pytest.approx(12), 11)
    assert (whole["degrades_at"], split["degrades_at"]) == (32, 8)
    assert [level["speedup"] for level in whole["levels"]] == [1, 8, 32]
    target = TargetResult(
        name="g", url="http://x", measure=True, ready=True, info=GEVENT_INFO, scenarios={"sweep": summary}
    )
    findings = shape.findings(summary, target)
    texts = [f.text for f in findings]
    assert any("io 55 ms in 1 part" in t and "worker_connections = 11" in t for t in texts)
    assert any(
        "in 5 parts instead of 1: p99 at concurrency 32 300 ms instead of 200 ms" in t
        and "ends behind the CPU parts" in t
        for t in texts
    )
    # 32 x the throughput of one request where the bound is 12: the model departs, and says so.
    departures = [f for f in findings if f.kind == "departure"]
    assert len(departures) == 2 and all(
        "32.00 at concurrency 32 exceeds the bound 12.00" in d.text for d in departures
    )
    # The typed document holds the summary under its shape and round-trips through JSON.
    results = Results(
        run=RunInfo(id="r", started_at=0, finished_at=1, status="complete", settings={}),
        stability=None,
        targets=[target],
    )
    again = Results.model_validate_json(results.model_dump_json())
    assert again.summaries(type(summary)) == [(again.targets[0], summary)]
    # The answer reads the variant with the wait whole: its speedup, bound, knee and the rule.
    (answer,) = shape.answers(again)
    assert answer.key == "mixed"
    assert (
        "io 55 ms in 1 part: g 32.0x at 32 (bound 12.0), p99 rising from 32; io/cpu = 11" in answer.evidence
    )
    assert [row.cells["g"].value for row in shape.comparison(again)] == [32, 32]
