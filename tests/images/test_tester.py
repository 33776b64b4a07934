"""The tester image runs a short lab against the target images and passes every check.

Everything the chart deploys runs from its image with the chart's CPU quota: the downstream mock,
whose URL every target gets, and all targets, the census-only variants too. The tester runs as
the chart's Job does, with a read-only root filesystem and a writable results volume, but a lab
short enough for CI.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.images.containers import (
    LAB_USER,
    TAG,
    VALUES,
    Containers,
    RunningTarget,
    chart_specs,
    cpu_quantity,
    downstream_spec,
    start_targets,
)

# Bursts only, small and short: this proves the image; `make lab` measures.
SHORT_LAB = {
    "TESTER_SCENARIOS": "bursts",
    "TESTER_WORK_SECONDS": "0.3",
    "TESTER_BURST_MAX": "2",
    "TESTER_REPEATS": "1",
}
TESTER_TIMEOUT_S = 240
REPORT_FILES = ("raw.jsonl", "results.json", "requests.csv", "report.html", "summary.txt")


@pytest.fixture(scope="module")
def lab(containers: Containers) -> list[RunningTarget]:
    """The chart's servers, each in its container: the downstream mock first, then every target."""
    mock = downstream_spec()
    extra_env = {}
    if mock is not None:
        (downstream,) = start_targets(containers, [mock])
        extra_env["LAB_DOWNSTREAM_URL"] = downstream.url
    return start_targets(containers, chart_specs(), extra_env=extra_env)


def test_targets_reach_the_downstream_mock(lab: list[RunningTarget]) -> None:
    if downstream_spec() is None:
        pytest.skip("the chart's downstream mock is disabled")
    for target in (t for t in lab if t.spec.measure):
        response = httpx.get(f"{target.url}/test/downstream/10", timeout=10)
        assert response.status_code == 200, f"{target.spec.name}: {response.status_code} {response.text}"


def test_tester_image_runs_a_short_lab_that_passes(
    lab: list[RunningTarget], containers: Containers, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # the image's user writes here, whoever runs the tests
    env = {
        "TESTER_TARGETS": ",".join(f"{t.spec.name}={t.url}" for t in lab if t.spec.measure),
        "TESTER_CENSUS_ONLY": ",".join(f"{t.spec.name}={t.url}" for t in lab if not t.spec.measure),
        **SHORT_LAB,
    }
    tester = VALUES["tester"]
    cpus = cpu_quantity(str(tester["resources"]["cpu"]))
    run = containers.run(
        f"{tester['image']}:{TAG}", "tester", cpus, env, {results: "/results"}, timeout=TESTER_TIMEOUT_S
    )

    output = f"{run.stdout}\n{run.stderr}"
    assert run.returncode == 0, f"the tester exited {run.returncode}:\n{output[-6000:]}"
    assert "all checks passed" in run.stdout, output[-6000:]
    (run_dir,) = results.iterdir()
    missing = [name for name in REPORT_FILES if not (run_dir / name).is_file()]
    assert not missing, f"{run_dir} lacks {missing}"
    owner = (run_dir / "results.json").stat().st_uid
    assert owner == LAB_USER, f"the reports belong to uid {owner}, not the image's user"
    assert json.loads((run_dir / "results.json").read_text())["failed_checks"] == []
