"""scripts/kind_check_results.py: kind-check's assertions about the tester's run in the cluster."""

from __future__ import annotations

import copy

from tests.script_module import load_script

check_results = load_script("scripts/kind_check_results.py")

VALUES = {
    "targets": [
        {"name": "fastapi"},
        {"name": "flask-1x", "measure": True},
        {"name": "reload", "measure": False},
    ],
    "prometheus": {"enabled": True},
}


def request(status: int | None) -> dict:
    return {"url": "http://t/test/cpu", "status": status, "error": None if status == 200 else "timeout"}


def target(name: str, statuses: list[int | None]) -> dict:
    repeats = [{"n": len(statuses), "repeat": 0, "requests": [request(s) for s in statuses]}]
    endpoint = {"name": "cpu", "path": "/test/cpu", "bursts": [{"n": len(statuses), "repeats": repeats}]}
    return {"name": name, "ready": True, "calibration": {"iterations": 10}, "endpoints": [endpoint]}


RESULTS = {
    "run": {"status": "complete"},
    "missing": [],
    "targets": [target("fastapi", [200, 200]), target("flask-1x", [200, 500, 200]), target("reload", [])],
}


def test_measured_targets_follow_the_values_default():
    assert check_results.measured_targets(VALUES) == ["fastapi", "flask-1x"]


def test_a_complete_run_passes():
    assert check_results.result_problems(RESULTS, ["fastapi", "flask-1x"]) == []


def test_each_gap_is_named():
    results = copy.deepcopy(RESULTS)
    results["run"]["status"] = "interrupted"
    results["missing"] = ["flask-1x bursts"]
    results["targets"][1]["calibration"] = None
    results["targets"][1]["endpoints"][0]["bursts"][0]["repeats"][0]["requests"] = [request(None)]
    del results["targets"][0]
    assert check_results.result_problems(results, ["fastapi", "flask-1x"]) == [
        "the run is interrupted, not complete",
        "the run did not measure: flask-1x bursts",
        "fastapi: not in results.json",
        "flask-1x: not calibrated",
        "flask-1x /test/cpu: no burst request answered",
    ]


def test_prometheus_must_see_every_target_and_at_least_the_recorded_answers():
    def query(up: dict[str, float], counted: dict[str, float]):
        return lambda expression: up if expression == check_results.UP_QUERY else counted

    up = {"fastapi": 1.0, "flask-1x": 1.0, "reload": 1.0}
    measured = ["fastapi", "flask-1x"]
    assert check_results.answered(RESULTS["targets"][1]) == 2
    good = query(up, {"fastapi": 7.0, "flask-1x": 2.0})
    assert check_results.prometheus_problems(RESULTS, VALUES, measured, good) == []
    bad = query({**up, "reload": 0.0}, {"fastapi": 1.0})
    assert check_results.prometheus_problems(RESULTS, VALUES, measured, bad) == [
        "Prometheus: reload is not up (up = 0.0)",
        "Prometheus: fastapi answered 1 work requests, the tester recorded 2",
        "Prometheus: flask-1x answered 0 work requests, the tester recorded 2",
    ]


def test_the_testers_own_cross_check_is_held_to_account():
    assert check_results.tester_cross_check(RESULTS, ["fastapi", "flask-1x"]) is None  # a tester without one
    results = copy.deepcopy(RESULTS)
    routes = [{"route": "/test/cpu", "server": 3.0, "prometheus": 3.0}]
    results["targets"][0]["prometheus"] = {"url": "http://p:9090", "routes": routes, "error": None}
    results["targets"][1]["prometheus"] = None
    assert check_results.tester_cross_check(results, ["fastapi", "flask-1x"]) == [
        "flask-1x: the tester did not cross-check Prometheus"
    ]
    results["targets"][1]["prometheus"] = {"url": "http://p:9090", "routes": [], "error": "timed out"}
    results["targets"][0]["prometheus"]["routes"] = [
        {"route": "/test/cpu", "server": 3.0, "prometheus": None}
    ]
    assert check_results.tester_cross_check(results, ["fastapi", "flask-1x"]) == [
        "fastapi /test/cpu: Prometheus counted None, the server 3",
        "flask-1x: the tester's Prometheus check failed: timed out",
    ]
