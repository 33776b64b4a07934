"""A short lab, end to end through the command line, against real local targets."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from labtester.targets import DEFAULT_VALUES

SCHEMA = json.loads((Path(__file__).parents[2] / "tester/labtester/results.schema.json").read_text())


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`python -m labtester lab` on the chart's targets minus one census variant, small N, n <= 3."""
    directory = tmp_path_factory.mktemp("lab")
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"] = [t for t in values["targets"] if t["name"] != "fastapi-2workers"]
    for target in values["targets"]:
        target["localPort"] = 0  # the lab picks free ports
    (directory / "values.yaml").write_text(yaml.safe_dump(values))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "labtester",
            "lab",
            "--values",
            str(directory / "values.yaml"),
            "--work-seconds",
            "0.4",
            "--burst-max",
            "3",
            "--repeats",
            "1",
            "--output",
            str(directory / "results"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    runs = list((directory / "results").iterdir())
    assert len(runs) == 1, completed.stdout + completed.stderr
    return completed, runs[0]


@pytest.fixture(scope="module")
def results(lab_run: tuple[subprocess.CompletedProcess[str], Path]) -> dict[str, Any]:
    return json.loads((lab_run[1] / "results.json").read_text())


def target(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in results["targets"] if t["name"] == name)


def burst(results: dict[str, Any], name: str, endpoint: str, n: int) -> dict[str, Any]:
    endpoints = {e["name"]: e for e in target(results, name)["endpoints"]}
    return next(b for b in endpoints[endpoint]["bursts"] if b["n"] == n)


def test_the_lab_passes_and_prints_a_summary(lab_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    completed, _ = lab_run
    assert completed.returncode == 0, completed.stdout + completed.stderr
    for heading in ("Process census", "Calibration", "Bursts", "Findings", "all checks passed"):
        assert heading in completed.stdout


def test_calibration_is_within_three_percent(results: dict[str, Any]) -> None:
    for name in ("fastapi", "flask-1x", "flask-2x", "flask-gevent"):
        calibration = target(results, name)["calibration"]
        assert abs(calibration["error_pct"]) <= 3.0 and calibration["within_tolerance"]


def test_uvicorn_blocking_makespan_grows_with_n(results: dict[str, Any]) -> None:
    for endpoint in ("sync-cpubound", "badasync-cpubound"):
        three = burst(results, "fastapi", endpoint, 3)
        assert three["max_overlap"] == 1
        assert 2.4 < three["makespan_over_single"] < 3.8


def test_gunicorn_runs_two_at_once(results: dict[str, Any]) -> None:
    two = burst(results, "flask-1x", "sync-cpubound", 2)
    # Server-side start/finish times and pids prove it; a makespan bound would only add noise.
    assert two["max_overlap"] == 2 and two["distinct_pids"] == 2


def test_gevent_overlaps_waits_and_serialises_cpu_as_the_model_says(results: dict[str, Any]) -> None:
    waits = burst(results, "flask-gevent", "io-bound", 3)
    assert waits["max_overlap"] == 3 and waits["distinct_pids"] == 1
    assert waits["makespan_over_single"] < 1.3
    cpu = burst(results, "flask-gevent", "sync-cpubound", 3)
    assert cpu["max_overlap"] == 1  # a greenlet computing never yields: one request at a time
    for measured in (waits, cpu):
        assert abs(measured["ratio"] - 1) <= 0.15, measured


def test_offload_runs_in_parallel_and_keeps_the_loop_free(results: dict[str, Any]) -> None:
    assert burst(results, "fastapi", "offload-cpubound", 2)["max_overlap"] == 2
    # The census answered while offloaded work ran, and shows the pool it ran in.
    loaded = [
        c for c in target(results, "fastapi")["census"]["under_load"] if c["endpoint"] == "offload-cpubound"
    ]
    assert loaded and any(p["role"] == "pool" for p in loaded[0]["census"]["processes"])


def test_census_counts(results: dict[str, Any]) -> None:
    assert target(results, "fastapi")["census"]["idle"]["process_count"] == 1
    for name in ("flask-1x", "flask-2x", "flask-gevent"):  # a gevent worker is one process too
        entry = target(results, name)
        assert entry["census"]["idle"]["process_count"] == entry["info"]["workers"] + 1
    reload_roles = [p["role"] for p in target(results, "fastapi-reload")["census"]["idle"]["processes"]]
    assert "reloader" in reload_roles


def test_request_counts_cross_check(results: dict[str, Any]) -> None:
    checks = [m for t in results["targets"] for e in t["endpoints"] for m in e["metrics"]]
    assert len(checks) == 10  # 4 endpoints on FastAPI, 2 on each Flask target
    assert all(m["matches"] for m in checks)


def test_every_output_parses(
    lab_run: tuple[subprocess.CompletedProcess[str], Path], results: dict[str, Any]
) -> None:
    _, run_dir = lab_run
    jsonschema.validate(results, SCHEMA)
    with (run_dir / "requests.csv").open() as file:
        rows = list(csv.DictReader(file))
    sent = sum(m["sent"] for t in results["targets"] for e in t["endpoints"] for m in e["metrics"])
    assert len(rows) == sent
    plots = sorted(p.name for p in (run_dir / "plots").iterdir())
    assert plots == [
        "makespan.png",
        "timeline-fastapi.png",
        "timeline-flask-1x.png",
        "timeline-flask-2x.png",
        "timeline-flask-gevent.png",
    ]
    for plot in plots:
        assert (run_dir / "plots" / plot).read_bytes().startswith(b"\x89PNG")
    html = (run_dir / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 5 and "Findings" in html
    assert (run_dir / "raw.jsonl").read_text().count('"type": "burst"') == 10 * 3
