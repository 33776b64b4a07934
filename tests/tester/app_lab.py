"""Run `python -m labtester lab --app ... --paths ...` (or --traffic) on real servers, from a
working directory that holds the app, with the chart's own app configurations (a subset, to keep
tests short)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from labtester.targets import DEFAULT_VALUES

# Short runs: bursts of 1..3 once each, flows of 2 s with a few users; no sizing (its proof starts
# servers of its own: test_sizing_app.py runs it, with --scenarios flow,sizing). A flow's rate is
# taken once every user runs (from about 0.5 s here), and the rates the tests compare differ by
# their slots or their cores (2x and more), which a second and a half of load shows as well as 3.5.
QUICK = ["--burst-max", "3", "--repeats", "1"]
QUICK_FLOW = {
    "TESTER_FLOW__DURATION_S": "2",
    "TESTER_FLOW__USERS": "12",
    "TESTER_FLOW__SPAWN_RATE": "24",
    "TESTER_FLOW__BASELINE": "3",
    "TESTER_SCENARIOS": "bursts,flow",
}
# The machine's stability probe with the fewest kernel iterations the settings take (5, not 20):
# an app's configurations are not calibrated, so the probe's only reader is the "machine was
# unstable" note, which no test of an app's lab asserts on. The lab's uncalibrated kernel takes
# about 50 ms an iteration, and a probe runs before every path of every configuration: 20 cost
# 35 s of CPU in a run of five configurations and five paths.
LIGHT_PROBES = {"TESTER_STABILITY_SAMPLES": "5"}
# No plots (the product's setting for a run whose readers read results.json, as CI's): no test of an
# app's lab reads one but test_sizing_app's, which asks for them; report.html is written either way.
NO_PLOTS = {"TESTER_PLOTS": "false"}


def values_with(directory: Path, configurations: list[str], broken: dict[str, Any] | None = None) -> Path:
    """The chart's values with only these of its app configurations (and a broken one, if given)."""
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    kept = [c for c in values["app"]["configurations"] if c["name"] in configurations]
    assert [c["name"] for c in kept] == configurations, "the chart's values lack a configuration"
    values["app"]["configurations"] = kept + ([broken] if broken else [])
    path = directory / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def app_lab(
    workdir: Path,
    output: Path,
    app: str,
    paths: list[str],
    values: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    plots: bool = False,
) -> tuple[subprocess.CompletedProcess[str], Path | None]:
    """The command a team types, run where its app lives (`workdir`); the run's folder under
    `output`, if it made one. No `paths`: the traffic is in `extra` (--traffic FILE). `plots`: draw
    them (NO_PLOTS otherwise)."""
    command = [sys.executable, "-m", "labtester", "lab", "--app", app]
    command += ["--paths", ",".join(paths)] if paths else []
    command += ["--values", str(values), "--output", str(output), *extra]
    completed = subprocess.run(
        command,
        cwd=workdir,
        env={**os.environ, **LIGHT_PROBES, **({} if plots else NO_PLOTS), **(env or {})},
        capture_output=True,
        text=True,
        timeout=900,
    )
    runs = list(output.iterdir()) if output.exists() else []
    assert len(runs) <= 1
    return completed, runs[0] if runs else None


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as file:
        return list(csv.DictReader(file))


def raw_records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "raw.jsonl").read_text().splitlines()]


def results_of(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "results.json").read_text()))
