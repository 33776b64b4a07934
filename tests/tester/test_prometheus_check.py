"""The tester beside a real Prometheus (Debian's, on 127.0.0.1): it waits until every target was
scraped before it measures, and holds Prometheus's request counts against the server's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from labtester.launcher import LOCALHOST, RunningTarget, free_port
from tests.conftest import StartTarget


@pytest.fixture
def prometheus(tmp_path: Path, start: StartTarget) -> Iterator[tuple[str, RunningTarget]]:
    binary = shutil.which("prometheus") or "/usr/bin/prometheus"
    if not Path(binary).exists():
        pytest.fail("prometheus is not installed: run `make prometheus` (make test does)", pytrace=False)
    target = start("fastapi")
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {
                "job_name": "targets",
                "static_configs": [
                    {"targets": [target.url.removeprefix("http://")], "labels": {"target": "fastapi"}}
                ],
            }
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address={LOCALHOST}:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://{LOCALHOST}:{port}", target
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_tester_waits_for_prometheus_and_cross_checks_its_counts(
    prometheus: tuple[str, RunningTarget], tmp_path: Path
) -> None:
    url, target = prometheus
    env = {
        **os.environ,
        "TESTER_TARGETS": f"fastapi={target.url}",
        "TESTER_PROMETHEUS_URL": url,
        "TESTER_READY_TIMEOUT_S": "60",
        "TESTER_WORK_SECONDS": "0.2",
        "TESTER_BURST_MAX": "2",
        "TESTER_REPEATS": "1",
        "TESTER_ENDPOINTS": "sync-cpubound,io-bound",
        "TESTER_OUTPUT_DIR": str(tmp_path / "results"),
    }
    completed = subprocess.run(
        [sys.executable, "-m", "labtester", "run"], env=env, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "waiting for Prometheus" in completed.stdout
    (run_dir,) = (tmp_path / "results").iterdir()
    check = json.loads((run_dir / "results.json").read_text())["targets"][0]["prometheus"]
    routes = {r["route"]: r for r in check["routes"]}
    assert check["error"] is None
    assert {"/test/sync-cpubound/{iterations}", "/test/io-bound/{milliseconds}"} <= set(routes)
    assert all(r["prometheus"] == r["server"] > 0 for r in routes.values()), routes
