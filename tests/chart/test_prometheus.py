"""Every dashboard query returns data from a real Prometheus scraping the real targets.

The targets run locally from the chart's own list (the launcher); Debian's Prometheus runs on
127.0.0.1 with the scrape config the chart renders, only the addresses rewritten to the local
ports and the interval shortened. Then each expression of the committed dashboard is queried.
"""

from __future__ import annotations

import math
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import yaml

from labtester.launcher import LOCALHOST, RunningTarget, free_port, running_targets
from labtester.targets import load_definitions
from tests.chart.conftest import PREFIX, Manifest, find, tool
from tests.chart.dashboard import committed, panels

SCRAPE_INTERVAL_S = 1
# Grafana expands $__rate_interval to at least four scrape intervals; so do these queries.
GRAFANA_MACROS = {"$__rate_interval": f"{4 * SCRAPE_INTERVAL_S}s"}
START_TIMEOUT_S = 30
DATA_TIMEOUT_S = 30
POLL_S = 0.2

T = TypeVar("T")


@dataclass
class Lab:
    prometheus: httpx.Client
    targets: list[RunningTarget]

    @property
    def measured(self) -> set[str]:
        return {t.name for t in self.targets if t.definition.measure}


def poll(check: Callable[[], T | None], timeout_s: float, failure: Callable[[], str]) -> T:
    """check() until it returns something, or fail with failure() after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(POLL_S)
    pytest.fail(failure(), pytrace=False)


def chart_scrape_config(manifests: list[Manifest]) -> dict[str, Any]:
    return yaml.safe_load(find(manifests, "ConfigMap", f"{PREFIX}-prometheus")["data"]["prometheus.yml"])


def local_scrape_config(config: dict[str, Any], ports: dict[str, int]) -> dict[str, Any]:
    """The chart's config with each target's address on 127.0.0.1; labels and jobs untouched."""
    interval = f"{SCRAPE_INTERVAL_S}s"
    config["global"].update(scrape_interval=interval, scrape_timeout=interval)
    for job in config["scrape_configs"]:
        for group in job["static_configs"]:
            group["targets"] = [f"{LOCALHOST}:{ports[group['labels']['target']]}"]
    return config


def drive(target: RunningTarget, stop: threading.Event) -> None:
    """Light, steady traffic: slow requests (in flight, latency), 422s (errors), CPU work."""
    with httpx.Client(base_url=target.url, timeout=30) as client:
        while not stop.is_set():
            client.get("/test/io-bound/300")
            client.get("/test/io-bound/not-a-number")
            client.get("/test/sync-cpubound/1")
            stop.wait(POLL_S)  # pacing: keep the CPU for the servers under measurement elsewhere


def query(prometheus: httpx.Client, expr: str) -> list[dict[str, Any]]:
    body = prometheus.get("/api/v1/query", params={"query": expr}).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


def up_targets(prometheus: httpx.Client) -> list[dict[str, Any]]:
    return [
        t for t in prometheus.get("/api/v1/targets").json()["data"]["activeTargets"] if t["health"] == "up"
    ]


def start_prometheus(config: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                tool("prometheus", "prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address={LOCALHOST}:{port}",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return process, f"http://{LOCALHOST}:{port}", log


def stop_process(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def test_promtool_accepts_the_charts_scrape_config(default_manifests: list[Manifest], tmp_path: Path) -> None:
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump(chart_scrape_config(default_manifests)))
    result = subprocess.run(
        [tool("promtool", "prometheus"), "check", "config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def lab(default_manifests: list[Manifest], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    workdir = tmp_path_factory.mktemp("prometheus")
    definitions = load_definitions()
    with ExitStack() as stack:
        targets = stack.enter_context(running_targets(definitions, log_dir=workdir))
        config = workdir / "prometheus.yml"
        ports = {target.name: target.port for target in targets}
        config.write_text(yaml.safe_dump(local_scrape_config(chart_scrape_config(default_manifests), ports)))

        process, url, log = start_prometheus(config, workdir)
        stack.callback(stop_process, process)
        client = stack.enter_context(httpx.Client(base_url=url, timeout=10))

        def ready() -> bool:
            assert process.poll() is None, f"prometheus exited:\n{log.read_text()[-3000:]}"
            try:
                return client.get("/-/ready").status_code == 200
            except httpx.TransportError:
                return False

        poll(ready, START_TIMEOUT_S, lambda: f"prometheus not ready:\n{log.read_text()[-3000:]}")
        poll(
            lambda: len(up_targets(client)) == len(targets),
            START_TIMEOUT_S,
            lambda: f"targets not all scraped: {client.get('/api/v1/targets').json()['data']}",
        )

        stop = threading.Event()
        drivers = [
            threading.Thread(target=drive, args=(target, stop), daemon=True)
            for target in targets
            if target.definition.measure
        ]
        for driver in drivers:
            driver.start()
        stack.callback(lambda: [driver.join(timeout=30) for driver in drivers])
        stack.callback(stop.set)
        yield Lab(client, targets)


def dashboard_queries() -> list[Any]:
    return [
        pytest.param(target["expr"], id=f"{panel['title']} {target['refId']}")
        for panel in panels(committed())
        for target in panel["targets"]
    ]


@pytest.mark.parametrize("expr", dashboard_queries())
def test_dashboard_query_returns_data_for_every_measured_target(lab: Lab, expr: str) -> None:
    for macro, value in GRAFANA_MACROS.items():
        expr = expr.replace(macro, value)
    assert "$" not in expr, f"a Grafana variable this test does not expand: {expr}"

    def targets_with_data() -> set[str] | None:
        found = {
            series["metric"].get("target", "")
            for series in query(lab.prometheus, expr)
            if math.isfinite(float(series["value"][1]))
        }
        return found if found >= lab.measured else None

    poll(
        targets_with_data,
        DATA_TIMEOUT_S,
        lambda: f"no finite data for every measured target from {expr}: {query(lab.prometheus, expr)}",
    )
