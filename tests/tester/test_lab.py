"""A short lab, end to end through the command line, against real local targets.

Every assertion holds on a shared machine: orderings, counts, who overlapped whom by the servers'
own clocks, and ratios to the work each request measured. None compares a time with a multiple
of the calibrated T.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from labtester.results import SCHEMA_VERSION
from tests.conftest import MEASURED

SCHEMA = json.loads((Path(__file__).parents[2] / "tester/labtester/results.schema.json").read_text())
# Clocks tick and the server does a little work around the measured part: never below this share.
SLACK = 0.97


@pytest.fixture(scope="module")
def results(lab_run: tuple[subprocess.CompletedProcess[str], Path]) -> dict[str, Any]:
    return json.loads((lab_run[1] / "results.json").read_text())


def target(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in results["targets"] if t["name"] == name)


def point(results: dict[str, Any], name: str, endpoint: str, n: int) -> dict[str, Any]:
    endpoints = {e["name"]: e for e in target(results, name)["scenarios"]["bursts"]["endpoints"]}
    return next(p for p in endpoints[endpoint]["points"] if p["n"] == n)


def runs(results: dict[str, Any], name: str, endpoint: str, n: int) -> list[dict[str, Any]]:
    return point(results, name, endpoint, n)["runs"]


def all_runs(results: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [
        (t["name"], e, r)
        for t in results["targets"]
        if "bursts" in t["scenarios"]
        for e in t["scenarios"]["bursts"]["endpoints"]
        for p in e["points"]
        for r in p["runs"]
    ]


def test_the_lab_passes_and_prints_a_summary(lab_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    completed, _ = lab_run
    assert completed.returncode == 0, completed.stdout + completed.stderr
    for heading in (
        "Answers (",
        "Side by side",
        "Machine ",
        "Process census",
        "Calibration",
        "Bursts",
        "Findings",
        "all checks passed",
    ):
        assert heading in completed.stdout


def test_calibration_is_never_a_miss_beyond_the_machines_noise(results: dict[str, Any]) -> None:
    for name in MEASURED:
        check = target(results, name)["calibration_check"]
        assert check["verdict"] in ("ok", "noise"), check
        if check["verdict"] == "noise":
            assert abs(check["error_pct"]) <= check["band_pct"]


def test_each_target_after_the_first_verifies_the_count_an_earlier_one_found(results: dict[str, Any]) -> None:
    """One kernel, one machine: the first target calibrates afresh, the others start from the
    latest count and verify it on themselves (a round of real requests each)."""
    calibrated = [t for t in results["targets"] if t.get("calibration")]  # in the order measured
    first, *others = calibrated
    assert first["calibration"]["started_from"] is None
    for earlier, later in zip(calibrated, others, strict=False):
        assert later["calibration"]["started_from"] == earlier["name"]
        assert later["calibration"]["rounds"][0]["iterations"] == min(
            earlier["calibration"]["iterations"], later["info"]["kernel"]["max_iterations"]
        )


def test_an_answer_is_printed_once_its_figures_are_in(
    lab_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """Offloading is answered by fastapi alone (its pool beside its blocked loop): printed before
    the next target is measured, and again in the summary."""
    lines = lab_run[0].stdout.splitlines()
    settled = lines.index("Answer settled once fastapi was measured:")
    assert lines[settled + 1].startswith("* When does offloading pay?")
    second = next(i for i, line in enumerate(lines) if "flask-1x: " in line and "burst n=1" in line)
    assert settled < second < lines.index(next(line for line in lines if line.startswith("Answers (")))


def test_every_request_reports_the_cpu_its_work_used(results: dict[str, Any]) -> None:
    for name, endpoint, run in all_runs(results):
        assert run["verdict"] != "failed", (name, endpoint["name"], run)
        if endpoint["work"] == "cpu":
            assert run["cpu_s"] > 0 and run["model_s"] > 0
            # No burst beats physics: its CPU seconds cannot run on more cores (or slots) at once
            # than the target's configuration gives them.
            capacity = endpoint["capacity"]
            parallel = min(run["n"], capacity["cores"], capacity["slots"] or run["n"])
            assert run["makespan_s"] >= SLACK * run["cpu_s"] / parallel, (name, endpoint["name"], run)
        else:
            assert run["cpu_s"] < 0.1 * run["makespan_s"]  # a wait uses (almost) no CPU


def test_a_blocked_event_loop_serves_one_at_a_time(results: dict[str, Any]) -> None:
    for endpoint in ("sync-cpubound", "badasync-cpubound"):
        for run in runs(results, "fastapi", endpoint, 3):
            assert run["max_overlap"] == 1
            # One at a time: the burst takes at least the sum of its requests' CPU seconds.
            assert run["makespan_s"] >= SLACK * run["cpu_s"]


def test_gunicorn_runs_two_at_once(results: dict[str, Any]) -> None:
    for run in runs(results, "flask-1x", "sync-cpubound", 2):
        # Server-side start/finish times and pids prove it; a makespan bound would only add noise.
        assert run["max_overlap"] == 2 and run["distinct_pids"] == 2


def test_gevent_overlaps_waits_and_serialises_cpu(results: dict[str, Any]) -> None:
    for run in runs(results, "flask-gevent", "io-bound", 3):
        assert run["max_overlap"] == 3 and run["distinct_pids"] == 1
    for run in runs(results, "flask-gevent", "sync-cpubound", 3):
        assert run["max_overlap"] == 1  # a greenlet computing never yields: one request at a time


def test_offload_runs_in_parallel_and_keeps_the_loop_free(results: dict[str, Any]) -> None:
    for run in runs(results, "fastapi", "offload-cpubound", 2):
        assert run["max_overlap"] == 2
    # The census answered while offloaded work ran, and shows the pool it ran in.
    loaded = [
        c for c in target(results, "fastapi")["census"]["under_load"] if c["endpoint"] == "offload-cpubound"
    ]
    assert loaded and any(p["role"] == "pool" for p in loaded[0]["census"]["processes"])


def test_the_release_leaves_together_and_the_servers_saw_it(results: dict[str, Any]) -> None:
    for name, endpoint, run in all_runs(results):
        # Every request was on the wire before any finished: the first server start follows the
        # release, and whatever the server took at once started before its first finish.
        assert run["release_offset_s"] > 0, (name, endpoint["name"], run)
        assert run["start_spread_s"] >= 0 and run["delivery_lag_s"] > 0


def test_interference_is_only_ever_named_with_its_cause(results: dict[str, Any]) -> None:
    for _, _, run in all_runs(results):
        if run["verdict"] == "interference":
            assert run["cause"] and run["accounting"]["lost_core_s"] > 0
    for finding in results["findings"]:
        if finding["kind"] == "interference":
            assert "The machine, not the server." in finding["text"]


def roles(census: dict[str, Any]) -> list[str]:
    return [p["role"] for p in census["processes"]]


def test_census_counts(results: dict[str, Any]) -> None:
    # Every tree has one metrics process beside what serves (the /metrics port's own).
    fastapi = roles(target(results, "fastapi")["census"]["idle"])
    assert sorted(fastapi) == ["master", "metrics"]
    for name in ("flask-1x", "flask-2x", "flask-gevent"):  # a gevent worker is one process too
        entry = target(results, name)
        idle = roles(entry["census"]["idle"])
        assert idle.count("worker") == entry["info"]["workers"] and idle.count("metrics") == 1
        assert entry["census"]["idle"]["process_count"] == entry["info"]["workers"] + 2
    assert "reloader" in roles(target(results, "fastapi-reload")["census"]["idle"])


def planned(results: dict[str, Any]) -> list[tuple[str, str]]:
    """(target, endpoint) for every endpoint the settings asked for that a target offers."""
    endpoints = results["run"]["settings"]["endpoints"]
    return [
        (t["name"], e)
        for t in results["targets"]
        if t["measure"]
        for e in endpoints
        if e in t["info"]["endpoints"]
    ]


def test_request_counts_cross_check(results: dict[str, Any]) -> None:
    checks = {(n, e["name"]): e["metrics"] for n, e, _ in all_runs(results)}
    assert sorted(checks) == sorted(planned(results))  # 4 endpoints on FastAPI, 2 on each Flask target
    assert all(m["matches"] for m in checks.values())


def test_every_output_parses(
    lab_run: tuple[subprocess.CompletedProcess[str], Path], results: dict[str, Any]
) -> None:
    _, run_dir = lab_run
    jsonschema.validate(results, SCHEMA)
    assert results["schema_version"] == SCHEMA_VERSION and results["stability"]["samples"] > 0
    with (run_dir / "requests.csv").open() as file:
        rows = list(csv.DictReader(file))
    sent = sum(e["metrics"]["sent"] for _, e in {(n, e["name"]): e for n, e, _ in all_runs(results)}.items())
    assert len(rows) == sent
    assert all(float(row["cpu_s"]) >= 0 and float(row["released_at"]) > 0 for row in rows)
    # Every row: the path it asked for, the server's figures from its Server-Timing header.
    assert all(row["path"].startswith("/test/") and row["account"] == "server-timing" for row in rows)
    plots = sorted(p.name for p in (run_dir / "plots").iterdir())
    answers = [f"answer-{key}.png" for key in ("async-cpu", "io-bound", "offload", "workers")]
    assert plots == [*answers, "makespan.png", *(f"timeline-{name}.png" for name in sorted(MEASURED))]
    for plot in plots:
        assert (run_dir / "plots" / plot).read_bytes().startswith(b"\x89PNG")
    html = (run_dir / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(plots) and "Findings" in html
    raw = (run_dir / "raw.jsonl").read_text()
    # 3 burst sizes, the bursts of one the requests alone: no baseline measures them again
    assert raw.count('"kind": "burst"') == len(planned(results)) * 3 and '"phase": "baseline"' not in raw
