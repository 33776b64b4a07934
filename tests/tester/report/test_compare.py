"""Two runs compared: every figure beside its earlier value, and a change counted only beyond the
noise the two runs measured (their repeats; the stability band for figures that follow the CPU)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labtester.report.compare import judge, load_results, significant
from labtester.report.contents import gather
from labtester.views import Cell, ComparisonRow
from tests.conftest import StartTarget


def test_the_same_spread_is_chance_and_a_clear_shift_is_not() -> None:
    assert not significant([1.0, 1.1, 0.9], [1.05, 0.95, 1.0])
    assert significant([1.0, 1.01, 0.99], [2.0, 2.01, 1.99])
    assert significant([1.0, 1.0], [2.0, 2.0])  # no spread at all: any difference is real
    assert not significant([1.0, 1.0], [1.0, 1.0])


def row(cpu_bound: bool) -> ComparisonRow:
    fields = {"key": "k", "shape": "s", "label": "l", "unit": "x", "reference": "model", "tolerance": 0.1}
    return ComparisonRow(**fields, cpu_bound=cpu_bound, cells={})


@pytest.mark.parametrize(
    ("cpu_bound", "band_pct", "verdict"),
    [(False, 20.0, "beyond noise"), (True, 20.0, "within noise"), (True, 5.0, "beyond noise")],
)
def test_a_figure_that_follows_the_cpu_must_also_leave_the_machines_band(
    cpu_bound: bool, band_pct: float, verdict: str
) -> None:
    before = Cell(value=1.0, samples=[1.0, 1.001, 0.999])
    now = Cell(value=1.1, samples=[1.1, 1.101, 1.099])  # +10 %, far beyond the repeats' spread
    assert judge(row(cpu_bound), now, before, band_pct)[0] == verdict


def test_one_repeat_measures_no_noise_so_it_is_not_judged() -> None:
    judged = judge(row(False), Cell(value=2.0, samples=[2.0]), Cell(value=1.0, samples=[1.0, 1.0]), None)
    assert judged[0] == "not judged"


@pytest.fixture(scope="module")
def two_runs(start: StartTarget, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same target name on two servers: 2 sync workers first, then FastAPI's event loop."""
    out = tmp_path_factory.mktemp("compare")

    def run(url: str, name: str) -> Path:
        env = {
            **os.environ,
            "TESTER_TARGETS": f"server={url}",
            "TESTER_ENDPOINTS": "io-bound,sync-cpubound",
            "TESTER_OUTPUT_DIR": str(out / name),
            "TESTER_WORK_SECONDS": "0.2",
            "TESTER_BURST_MAX": "3",
            "TESTER_REPEATS": "3",
            "TESTER_PLOTS": "false",  # `report --compare` below draws the plots it shows
        }
        command = [sys.executable, "-m", "labtester", "run"]
        completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        runs = list((out / name).iterdir())
        assert len(runs) == 1 and (runs[0] / "results.json").exists(), completed.stdout + completed.stderr
        return runs[0]

    return run(start("flask-1x").url, "before"), run(start("fastapi").url, "after")


def test_compare_two_real_runs(two_runs: tuple[Path, Path]) -> None:
    before, after = two_runs
    command = [sys.executable, "-m", "labtester", "report", str(after), "--compare", str(before)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert "Compared with run" in completed.stdout, completed.stdout + completed.stderr
    with (after / "compare.csv").open() as file:
        changes = {(c["key"], c["target"]): c for c in csv.DictReader(file)}
    keys = {row.key for row in gather(load_results(after)).rows}
    assert {key for key, _ in changes} == keys  # every figure of both runs, once
    for change in changes.values():
        assert change["earlier"] and change["now"] and change["change_pct"]
    # 3 waits: 2.0x one on 2 sync workers, 1.0x on the event loop, far beyond either run's repeats.
    waits = changes[("bursts/io-bound/3", "server")]
    assert float(waits["earlier"]) > 1.6 and float(waits["now"]) < 1.3
    assert waits["verdict"] == "beyond noise"
    page = (after / "report.html").read_text()
    assert 'id="changes"' in page and "was " in page


def test_questions_without_data_are_left_out(two_runs: tuple[Path, Path]) -> None:
    # One FastAPI target, no process pool and no sync workers: no offloading or workers question.
    keys = [answer.key for answer in gather(load_results(two_runs[1])).answers]
    assert keys == ["async-cpu", "io-bound"]
    # Sync workers only: the workers question, and no event loop to ask the async one of.
    keys = [answer.key for answer in gather(load_results(two_runs[0])).answers]
    assert keys == ["workers", "io-bound"]


def test_compare_refuses_a_folder_that_holds_no_run(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    command = [sys.executable, "-m", "labtester", "report", str(two_runs[1]), "--compare", str(tmp_path)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2 and "not a results folder" in completed.stderr
