"""A burst's repeats stop once a majority of them agree (repeats.py), on a real lab run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from labtester.scenarios.bursts.repeats import REPEAT_AGREEMENT, enough, majority
from labtester.targets import DEFAULT_VALUES

REPEATS = 3


def test_a_majority_that_agrees_bounds_the_median() -> None:
    assert [majority(r) for r in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]
    assert not enough([1.0], REPEATS)
    assert enough([1.0, 1.0 + REPEAT_AGREEMENT / 2], REPEATS)
    assert not enough([1.0, 1.0 + 2 * REPEAT_AGREEMENT], REPEATS)
    assert not enough([1.0, None], REPEATS)  # a repeat with a failed request settles nothing
    assert enough([1.0, 2.0, 3.0], REPEATS)  # R is the most


def test_repeats_stop_where_the_first_ones_agree_and_go_on_where_they_do_not(tmp_path: Path) -> None:
    """Waits and CPU work on gunicorn's workers: each repeat is judged by its makespan over the
    model of its own measured work, so most points settle after 2 of 3 even where the makespans
    themselves differ (the work's CPU drifts, the OS spreads connections over the workers
    differently); the lab's own checks (no point short of its repeats) pass."""
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"] = [t for t in values["targets"] if t["name"] == "flask-1x"]
    for entry in [*values["targets"], values["downstream"]]:
        entry["localPort"] = 0
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    command = [sys.executable, "-m", "labtester", "lab", "--values", str(tmp_path / "values.yaml")]
    command += ["--work-seconds", "0.2", "--burst-max", "3", "--repeats", str(REPEATS)]
    command += ["--output", str(tmp_path / "results")]
    env = {**os.environ, "TESTER_ENDPOINTS": "sync-cpubound,io-bound"}
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    (run,) = (tmp_path / "results").iterdir()
    (flask,) = json.loads((run / "results.json").read_text())["targets"]
    endpoints = flask["scenarios"]["bursts"]["endpoints"]
    assert [e["name"] for e in endpoints] == ["sync-cpubound", "io-bound"]
    counts = []
    for endpoint in endpoints:
        for point in endpoint["points"]:
            ratios = [r["ratio"] for r in point["runs"]]
            first_two_agree = enough(ratios[:2], REPEATS)
            assert len(ratios) == (2 if first_two_agree else 3), (endpoint["name"], point["n"], ratios)
            counts.append(len(ratios))
        assert [p["n"] for p in endpoint["points"]] == [1, 2, 3]
    assert 2 in counts, f"no point settled early: {counts}"
