"""Every dashboard query returns data from a real Prometheus scraping the real targets.

The targets run locally from the chart's own list (the launcher), each with /metrics on a port of
its own as the chart gives it (LAB_METRICS_PORT; /info says where); Debian's Prometheus runs on
127.0.0.1 with the scrape config the chart renders, only the addresses rewritten to those local
ports. Each expression of the committed dashboard is queried (at a shortened interval), and a
burst that blocks FastAPI's event loop is seen by every scrape, each within the chart's timeout.
"""

from __future__ import annotations

import math
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import yaml

from labtester.launcher import LOCALHOST, RunningTarget, free_port
from labtester.target_group import running_targets
from labtester.targets import TargetDefinition
from tests.chart.conftest import PREFIX, Manifest, deployed_definitions, find, tool
from tests.chart.dashboard import committed, expressions, panels
from tests.conftest import Configured

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
    # Targets whose census reports a cgroup cpu.stat: only they export lab_cgroup_cpu_* (CONTRACT.md).
    with_cgroup: set[str]

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


def with_metrics_port(definition: TargetDefinition) -> TargetDefinition:
    """As the chart starts it: /metrics also on a port of its own, served by its own metrics process."""
    return replace(definition, env={**definition.env, "LAB_METRICS_PORT": str(free_port())})


def metrics_ports(targets: list[RunningTarget]) -> dict[str, int]:
    """Where each target serves /metrics on its own port, as its /info says (CONTRACT.md)."""
    ports = {}
    for target in targets:
        control = httpx.get(f"{target.url}/info", timeout=10).json().get("control", {})
        assert control.get("metrics_port"), f"{target.name}'s /info names no metrics_port: {control}"
        ports[target.name] = int(control["metrics_port"])
    return ports


def local_scrape_config(
    config: dict[str, Any], ports: dict[str, int], interval_s: float = SCRAPE_INTERVAL_S
) -> dict[str, Any]:
    """The chart's config with each target's address on 127.0.0.1, scraped every `interval_s`
    within as long; labels and jobs untouched."""
    interval = f"{interval_s:g}s"  # whole seconds: Prometheus reads no "1.0s"
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


def samples_per_scrape(
    prometheus: httpx.Client, selector: str, start: float, end: float
) -> dict[float, float]:
    """Raw samples of a selector between start and end, summed per scrape (one timestamp each):
    what a `sum by (target) (...)` panel shows at each scrape."""
    span = max(1, round(end - start) + 1)
    summed: dict[float, float] = {}
    for series in query(prometheus, f"{selector}[{span}s]", at=end):
        for timestamp, value in series["values"]:
            if start <= timestamp <= end:
                summed[timestamp] = summed.get(timestamp, 0.0) + float(value)
    return summed


def query(prometheus: httpx.Client, expr: str, at: float | None = None) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"query": expr} if at is None else {"query": expr, "time": at}
    body = prometheus.get("/api/v1/query", params=params).json()
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


def scraping(stack: ExitStack, config: dict[str, Any], workdir: Path, expected_up: int) -> httpx.Client:
    """Prometheus with this config, ready and with every target scraped once; stopped by the stack."""
    path = workdir / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    process, url, log = start_prometheus(path, workdir)
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
        lambda: len(up_targets(client)) == expected_up,
        START_TIMEOUT_S + 2 * scrape_interval_s(config),
        lambda: f"targets not all scraped: {client.get('/api/v1/targets').json()['data']}",
    )
    return client


def scrape_interval_s(config: dict[str, Any]) -> float:
    return float(config["global"]["scrape_interval"].removesuffix("s"))


def has_cgroup(target: RunningTarget) -> bool:
    census = httpx.get(f"{target.url}/test/resmon", timeout=30).json()
    return census.get("cgroup_cpu") is not None


@pytest.fixture(scope="module")
def lab(
    default_manifests: list[Manifest], tmp_path_factory: pytest.TempPathFactory, configured: Configured
) -> Iterator[Lab]:
    """The deployed targets as configured (each with /metrics on a port of its own, as every
    launched target has), shared with the session: the light traffic below stops with the module."""
    workdir = tmp_path_factory.mktemp("prometheus")
    targets = configured.together([definition.name for definition in deployed_definitions()])
    with ExitStack() as stack:
        config = local_scrape_config(chart_scrape_config(default_manifests), metrics_ports(targets))
        client = scraping(stack, config, workdir, expected_up=len(targets))

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
        yield Lab(client, targets, {target.name for target in targets if has_cgroup(target)})


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

    # The cgroup counters exist only where the target has a cgroup cpu.stat (absent elsewhere).
    expected = lab.measured & lab.with_cgroup if "lab_cgroup_cpu_" in expr else lab.measured

    def targets_with_data() -> set[str] | None:
        found = {
            series["metric"].get("target", "")
            for series in query(lab.prometheus, expr)
            if math.isfinite(float(series["value"][1]))
        }
        return found if found >= expected else None

    if not expected:
        time.sleep(4 * SCRAPE_INTERVAL_S)
        assert query(lab.prometheus, expr) == [], "cgroup counters from a target whose census has no cgroup"
        return

    poll(
        targets_with_data,
        DATA_TIMEOUT_S,
        lambda: f"no finite data for every measured target from {expr}: {query(lab.prometheus, expr)}",
    )


# The burst: FastAPI's event loop blocked by `async def` CPU work (badasync), each request for
# longer than a scrape interval plus the scrape timeout. Served by the loop, /metrics would then
# miss a scrape for certain. Prometheus scrapes with the chart's config at an interval and timeout
# of BURST_SCRAPE_S, never longer than the chart's: a scrape that answers within it answers within
# the chart's timeout, and scrapes this close together see any instant of the burst the chart's
# would (the test took 64 s at the chart's 5 s, 22 s at 1 s, side by side at a load average of 10).
BURST_REQUESTS = 2
BLOCK_INTERVALS = 2.5  # scrape intervals each request holds the loop
BURST_SCRAPE_S = 1
IN_FLIGHT = 'lab_http_requests_in_flight{target="fastapi"}'


def test_a_blocked_event_loop_is_seen_by_every_scrape_within_the_charts_timeout(
    default_manifests: list[Manifest], tmp_path: Path
) -> None:
    """Every scrape during the burst answers and the in-flight panel shows the requests (issue 13.6).

    The dashboard's in-flight expression, per scrape: at least one request in flight at every
    scrape during the burst, none after it (the scrape on its own port does not count itself).
    """
    (fastapi,) = [with_metrics_port(d) for d in deployed_definitions() if d.name == "fastapi"]
    chart_config = chart_scrape_config(default_manifests)
    chart_timeout_s = float(chart_config["global"]["scrape_timeout"].removesuffix("s"))
    interval_s = min(BURST_SCRAPE_S, scrape_interval_s(chart_config))
    assert interval_s <= chart_timeout_s, "the chart's timeout is shorter than the test's: use the chart's"
    (in_flight,) = [e for e in expressions(committed()) if "lab_http_requests_in_flight" in e]
    assert in_flight == "sum by (target) (lab_http_requests_in_flight)", "the panel changed: update IN_FLIGHT"
    with ExitStack() as stack:
        (target,) = stack.enter_context(running_targets([fastapi], log_dir=tmp_path))
        (job,) = chart_config["scrape_configs"]
        job["static_configs"] = [
            group for group in job["static_configs"] if group["labels"]["target"] == "fastapi"
        ]
        config = local_scrape_config(chart_config, metrics_ports([target]), interval_s=interval_s)
        prometheus = scraping(stack, config, tmp_path, expected_up=1)
        started, finished = burst(target, interval_s)
        poll(  # two scrapes after the burst land
            lambda: (
                len(samples_per_scrape(prometheus, 'up{target="fastapi"}', finished + 0.5, time.time())) >= 2
            ),
            DATA_TIMEOUT_S + 3 * interval_s,
            lambda: f"no two scrapes after the burst: {prometheus.get('/api/v1/targets').json()['data']}",
        )
        after = time.time()

        up = samples_per_scrape(prometheus, 'up{target="fastapi"}', started, after)
        during = samples_per_scrape(prometheus, IN_FLIGHT, started + 0.5, finished - 0.5)
        later = samples_per_scrape(prometheus, IN_FLIGHT, finished + 0.5, after)

    blocked_s = finished - started
    assert len(during) >= BURST_REQUESTS, f"{len(during)} scrapes answered during a {blocked_s:.1f} s burst"
    assert min(up.values()) == 1, f"a scrape failed while the loop was blocked: up per scrape {up}"
    assert min(during.values()) >= 1, f"a scrape during the burst shows nothing in flight: {during}"
    assert later and max(later.values()) == 0, f"in flight after the burst: {later}"


def burst(target: RunningTarget, interval_s: float) -> tuple[float, float]:
    """BURST_REQUESTS badasync requests at once; each holds the loop BLOCK_INTERVALS intervals."""
    with httpx.Client(base_url=target.url, timeout=120) as client:
        per_iteration_s = client.get("/test/calibrate", params={"samples": 5}).json()["seconds_per_iteration"]
        iterations = max(1, round(BLOCK_INTERVALS * interval_s / per_iteration_s))
        started = time.time()
        requests = [
            threading.Thread(target=client.get, args=(f"/test/badasync-cpubound/{iterations}",))
            for _ in range(BURST_REQUESTS)
        ]
        for request in requests:
            request.start()
        for request in requests:
            request.join()
        return started, time.time()
