"""The HTTP contract, checked the same way on every target configuration."""

from __future__ import annotations

import statistics

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
from labtester.stats import max_overlap

INFO_FIELDS = {
    "name",
    "framework",
    "server",
    "worker_class",
    "workers",
    "threads",
    "reload",
    "effective_cores",
    "cores_source",
    "kernel",
    "limits",
    "versions",
    "endpoints",
    "control",
    "writes",
}
WORK_FIELDS = {"duration_s", "started_at", "finished_at", "pid", "cpu_s"}
# Two readings of clocks that tick in nanoseconds but are read microseconds apart.
CLOCK_GRANULARITY_S = 0.001
PURE_WAITS = ("io-bound", "badasync-io-bound")
TIMER_TICK_S = 0.001  # libuv's loop clock (uvloop, under uvicorn) has millisecond resolution
THROTTLING_FIELDS = {"source", "periods", "throttled_periods", "throttled_s"}
PROCESS_FIELDS = {"pid", "ppid", "name", "role", "threads", "rss_bytes", "cpu_seconds"}


def test_healthz(client: httpx.Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_info_describes_server_and_endpoints(client: httpx.Client, target: RunningTarget) -> None:
    info = client.get("/info").json()
    assert info.keys() >= INFO_FIELDS
    assert info["name"] == target.name
    assert info["workers"] >= 1 and info["effective_cores"] >= 1
    assert info["worker_class"] in ("uvicorn", "sync", "gevent", "gthread")
    assert info["threads"] >= 1 and (info["threads"] > 1) <= (info["worker_class"] == "gthread")
    assert info["kernel"]["max_iterations"] >= 1
    assert {"python", info["framework"], info["server"]} <= info["versions"].keys()
    assert {"sync-cpubound", "io-bound"} <= info["endpoints"].keys()
    control = info["control"]
    assert control["metrics_port"] == target.metrics_port
    for name in ("health", "info", "calibrate", "census", "metrics"):
        assert client.get(control[name]).status_code == 200, name
    for endpoint in info["endpoints"].values():
        assert endpoint["work"] in ("cpu", "io", "mixed")
        assert endpoint["execution"] in (
            "event_loop",
            "workers",
            "process_pool",
            "thread_pool",
            "async",
            "greenlets",
            "threads",
        )
        # A request per sync worker; a request per thread of each gthread worker.
        if endpoint["execution"] == "workers":
            assert endpoint["slots"] == info["workers"], endpoint
        if endpoint["execution"] == "threads":
            assert endpoint["slots"] == info["workers"] * info["threads"], endpoint


def test_calibrate(client: httpx.Client) -> None:
    body = client.get("/test/calibrate", params={"samples": 3}).json()
    assert body["samples"] == 3 and body["pid"] > 0
    # The kernel is designed for 5-50 ms an iteration; allow a slow, busy machine some room.
    assert 0.001 < body["seconds_per_iteration"] < 0.2
    # Every single-iteration time, in order, so the tester can see the CPU's drift itself.
    assert len(body["samples_s"]) == 3
    assert body["seconds_per_iteration"] == statistics.median(body["samples_s"])


# Per kind of work: the URL suffix to call, the field that echoes it, and its value.
ARGUMENTS = {
    "cpu": ("3", "iterations", 3),
    "io": ("20", "milliseconds", 20),
    "mixed": ("?cpu_ms=3&io_ms=20", "io_ms", 20),
}
FAN_OUT_ARGUMENTS = ("?k=3&wait_ms=20&call_ms=10", "k", 3)


def test_every_listed_endpoint_answers_with_its_fields(client: httpx.Client) -> None:
    endpoints = client.get("/info").json()["endpoints"]
    assert {"mixed", "downstream", "fan-out"} <= endpoints.keys()
    for endpoint in endpoints.values():
        suffix, field, value = (
            FAN_OUT_ARGUMENTS if endpoint["name"] == "fan-out" else ARGUMENTS[endpoint["work"]]
        )
        response = client.get(endpoint["path"].split("{")[0] + suffix)
        assert response.status_code == 200, endpoint
        body = response.json()
        assert body.keys() >= WORK_FIELDS, endpoint
        assert body["finished_at"] >= body["started_at"]
        assert body[field] == value
        # CPU measured on the one thread that ran the work: never more than the wall time it took.
        assert 0 <= body["cpu_s"] <= body["duration_s"] + CLOCK_GRANULARITY_S, (endpoint, body)
        if endpoint["work"] != "io":
            assert body["cpu_s"] > 0, (endpoint, body)
        if endpoint["name"] in PURE_WAITS:
            # 0.0 where the wait yields; elsewhere a sleeping thread's few microseconds.
            assert body["cpu_s"] < 0.1 * body["duration_s"], (endpoint, body)


def test_resmon_is_a_census_of_the_server_tree(client: httpx.Client, target: RunningTarget) -> None:
    census = client.get("/test/resmon").json()
    assert census["root_pid"] == target.process.pid
    assert census["process_count"] == len(census["processes"])
    assert census["thread_count"] == sum(p["threads"] for p in census["processes"])
    throttling = census["cgroup_cpu"]  # None where the server has no cgroup CPU controller
    assert throttling is None or throttling.keys() == THROTTLING_FIELDS
    for process in census["processes"]:
        assert process.keys() >= PROCESS_FIELDS
        assert process["role"] in ("master", "reloader", "worker", "pool", "helper", "metrics")


def test_metrics_follow_prometheus_conventions(client: httpx.Client) -> None:
    client.get("/test/sync-cpubound/1")
    families = {f.name: f for f in text_string_to_metric_families(client.get("/metrics").text)}
    assert families["lab_http_requests"].type == "counter"
    assert families["lab_http_request_duration_seconds"].type == "histogram"
    assert families["lab_http_requests_in_flight"].type == "gauge"
    assert families["lab_kernel_iterations"].type == "counter"
    assert {
        "lab_server_processes",
        "lab_server_threads",
        "lab_server_resident_memory_bytes",
    } <= families.keys()
    routes = {s.labels["route"] for s in families["lab_http_requests"].samples}
    assert "/test/sync-cpubound/{iterations}" in routes  # the template, never the raw path
    buckets = {
        s.labels["le"] for s in families["lab_http_request_duration_seconds"].samples if "le" in s.labels
    }
    assert {"0.001", "60.0", "+Inf"} <= buckets


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/test/sync-cpubound/0", "iterations"),
        ("/test/sync-cpubound/-5", "iterations"),
        ("/test/sync-cpubound/abc", "iterations"),
        ("/test/sync-cpubound/1.5", "iterations"),
        ("/test/sync-cpubound/99999999999", "iterations"),
        ("/test/io-bound/-1", "milliseconds"),
        ("/test/io-bound/60001", "milliseconds"),
        ("/test/io-bound/soon", "milliseconds"),
        ("/test/calibrate?samples=0", "samples"),
        ("/test/calibrate?samples=51", "samples"),
        ("/test/calibrate?samples=x", "samples"),
        ("/test/mixed?io_ms=5", "cpu_ms"),
        ("/test/mixed?cpu_ms=5&io_ms=-1", "io_ms"),
        ("/test/mixed?cpu_ms=10001&io_ms=5", "cpu_ms"),
        ("/test/mixed?cpu_ms=5&io_ms=5&splits=0", "splits"),
        ("/test/mixed?cpu_ms=5&io_ms=5&splits=101", "splits"),
        ("/test/fan-out?wait_ms=5&call_ms=5", "k"),
        ("/test/fan-out?k=0&wait_ms=5&call_ms=5", "k"),
        ("/test/fan-out?k=33&wait_ms=5&call_ms=5", "k"),
        ("/test/fan-out?k=two&wait_ms=5&call_ms=5", "k"),
        ("/test/fan-out?k=2&wait_ms=-1&call_ms=5", "wait_ms"),
        ("/test/fan-out?k=2&wait_ms=60001&call_ms=5", "wait_ms"),
        ("/test/fan-out?k=2&wait_ms=5&call_ms=-1", "call_ms"),
        ("/test/fan-out?k=2&wait_ms=5&call_ms=60001", "call_ms"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(client: httpx.Client, path: str, field: str) -> None:
    response = client.get(path)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == field


# Numbers are ASCII digits and nothing else, on every target alike: Python's int() takes the
# rest of this list, pydantic some of it (Flask took Unicode digits and `1_0`, FastAPI `1.0`).
NOT_NUMBERS = ["+1", "-0", "%201", "1%20", "%091", "1%0A", "1_0", "1.0", "%D9%A1", "%EF%BC%91", "1e1", "0x1"]


@pytest.mark.parametrize("number", ["1", "01", "007"])
@pytest.mark.parametrize(
    "route", ["/test/io-bound/{}", "/test/calibrate?samples={}", "/test/mixed?cpu_ms=1&io_ms={}"]
)
def test_every_target_takes_the_same_numbers(client: httpx.Client, route: str, number: str) -> None:
    assert client.get(route.format(number)).status_code == 200


@pytest.mark.parametrize("text", NOT_NUMBERS)
@pytest.mark.parametrize(
    ("route", "field"),
    [
        ("/test/io-bound/{}", "milliseconds"),
        ("/test/calibrate?samples={}", "samples"),
        ("/test/fan-out?k={}&wait_ms=1&call_ms=1", "k"),
    ],
)
def test_every_target_refuses_the_same_non_numbers(
    client: httpx.Client, route: str, field: str, text: str
) -> None:
    response = client.get(route.format(text))
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == field


def test_fan_out_waits_overlap_then_calls_downstream(client: httpx.Client) -> None:
    body = client.get("/test/fan-out", params={"k": 4, "wait_ms": 200, "call_ms": 50}).json()
    assert (body["k"], body["wait_ms"], body["call_ms"]) == (4, 200, 50)
    waits = [step for step in body["steps"] if step["step"] == "wait"]
    (call,) = [step for step in body["steps"] if step["step"] == "call"]
    assert sorted(step["index"] for step in waits) == [0, 1, 2, 3]
    # The four waits run at once (all open at one instant), and the call only after them all.
    assert max_overlap([(step["started_at"], step["finished_at"]) for step in waits]) == 4
    assert call["started_at"] >= max(step["finished_at"] for step in waits)
    assert call["status"] == 200 and call["duration_s"] >= 0.05 - TIMER_TICK_S
    assert body["started_at"] <= min(s["started_at"] for s in body["steps"])
    assert body["finished_at"] >= call["finished_at"]


def test_unknown_path_is_json_404(client: httpx.Client) -> None:
    response = client.get("/no/such/path")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}
