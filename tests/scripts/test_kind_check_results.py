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
        {"name": "granian", "measure": True},  # left out of this profile: neither measured nor scraped
    ],
    "omitTargets": ["granian"],
    "prometheus": {"enabled": True},
}


def run(n: int, failures: dict[str, int] | None = None) -> dict:
    return {"n": n, "repeat": 0, "failures": failures or {}, "makespan_s": 1.0}


def target(name: str, points: list[list[dict]]) -> dict:
    endpoint = {
        "name": "cpu",
        "path": "/test/cpu/{iterations}",
        "baseline": [run(1)],
        "points": [{"n": runs[0]["n"], "runs": runs} for runs in points],
    }
    routes = [{"route": "/test/cpu/{iterations}", "server": 4.0, "prometheus": 4.0}]
    return {
        "name": name,
        "ready": True,
        "errors": [],
        "calibration": {"iterations": 10},
        "scenarios": {"bursts": {"shape": "bursts", "endpoints": [endpoint]}},
        "prometheus": {"url": "http://p:9090", "routes": routes, "error": None},
    }


RESULTS = {
    "schema_version": check_results.SCHEMA_VERSION,
    "run": {"status": "complete", "settings": {"scenarios": ["bursts"]}},
    "missing": [],
    "targets": [
        target("fastapi", [[run(1)], [run(2)]]),
        target("flask-1x", [[run(1)], [run(2, {"timeout": 1})]]),
        {
            "name": "reload",
            "ready": True,
            "errors": [],
            "calibration": None,
            "scenarios": {},
            "prometheus": None,
        },
    ],
}
MEASURED = ["fastapi", "flask-1x"]


def test_measured_targets_are_those_the_profile_deployed_and_measures():
    assert check_results.measured_targets(VALUES) == MEASURED


def test_a_complete_run_passes_and_counts_its_answers():
    assert check_results.result_problems(RESULTS, MEASURED) == []
    assert check_results.tester_cross_check(RESULTS, MEASURED) == []
    assert check_results.answered(RESULTS["targets"][1]) == 1 + 1 + 1  # baseline, n=1, n=2 less a failure


def test_each_gap_is_named():
    results = copy.deepcopy(RESULTS)
    results["run"]["status"] = "interrupted"
    results["missing"] = ["flask-1x bursts"]
    results["run"]["settings"]["scenarios"] = ["bursts", "sweep"]
    flask = results["targets"][1]
    flask["calibration"] = None
    flask["errors"] = [{"stage": "census", "error": "timeout"}]
    endpoint = flask["scenarios"]["bursts"]["endpoints"][0]
    endpoint["baseline"] = [run(1, {"timeout": 1})]
    endpoint["points"][0]["runs"] = [run(1, {"connection refused": 1})]
    del results["targets"][0]
    assert check_results.result_problems(results, MEASURED) == [
        "the run is interrupted, not complete",
        "the run did not measure: flask-1x bursts",
        "fastapi: not in results.json",
        "flask-1x: census: timeout",
        "flask-1x: not calibrated",
        "flask-1x: no sweep results",
        "flask-1x /test/cpu/{iterations}: no burst run without failures",
    ]


def test_another_schema_is_refused_not_misread():
    assert check_results.result_problems({**RESULTS, "schema_version": 2}, MEASURED) == [
        f"results.json has schema 2; this check reads {check_results.SCHEMA_VERSION}"
    ]


def test_the_testers_own_cross_check_must_have_passed():
    results = copy.deepcopy(RESULTS)
    results["targets"][0]["prometheus"]["routes"][0]["prometheus"] = None
    results["targets"][1]["prometheus"] = {"url": "http://p:9090", "routes": [], "error": "timed out"}
    assert check_results.tester_cross_check(results, MEASURED) == [
        "fastapi /test/cpu/{iterations}: Prometheus counted None, the server 4",
        "flask-1x: the tester's Prometheus check failed: timed out",
    ]
    results["targets"][1]["prometheus"] = None
    assert "flask-1x: the tester did not cross-check Prometheus" in check_results.tester_cross_check(
        results, MEASURED
    )


def test_every_clients_sends_must_be_what_the_server_counted():
    results = copy.deepcopy(RESULTS)
    results["targets"][0]["prometheus"]["sent"] = [
        {"window": "bursts cpu", "route": "/test/cpu/{iterations}", "sent": 6, "server": 6.0},
        {"window": "flow", "route": "/test/fan-out", "sent": 120, "server": 118.0},
    ]
    assert check_results.tester_cross_check(results, MEASURED) == [
        "fastapi flow: the clients sent 120, the server counted 118"
    ]


def test_with_two_clients_every_burst_is_split_between_them():
    results = copy.deepcopy(RESULTS)
    assert check_results.client_problems(results) == []  # one client: nothing to split
    results["run"]["settings"]["clients"] = 2
    for entry in results["targets"][:2]:
        for r in [*entry["scenarios"]["bursts"]["endpoints"][0]["baseline"]] + [
            r for p in entry["scenarios"]["bursts"]["endpoints"][0]["points"] for r in p["runs"]
        ]:
            r["clients"] = min(r["n"], 2)
    assert check_results.client_problems(results) == []
    results["targets"][0]["scenarios"]["bursts"]["endpoints"][0]["points"][1]["runs"][0]["clients"] = 1
    assert check_results.client_problems(results) == ["fastapi /test/cpu/{iterations} n=2: sent by 1 clients"]


def test_prometheus_must_see_every_target_and_at_least_the_recorded_answers():
    def query(up: dict[str, float], counted: dict[str, float]):
        return lambda expression: up if expression == check_results.UP_QUERY else counted

    up = {"fastapi": 1.0, "flask-1x": 1.0, "reload": 1.0}
    good = query(up, {"fastapi": 7.0, "flask-1x": 3.0})
    assert check_results.prometheus_problems(RESULTS, VALUES, MEASURED, good) == []
    bad = query({**up, "reload": 0.0}, {"fastapi": 1.0})
    assert check_results.prometheus_problems(RESULTS, VALUES, MEASURED, bad) == [
        "Prometheus: reload is not up (up = 0.0)",
        "Prometheus: fastapi answered 1 work requests, the tester recorded 4",
        "Prometheus: flask-1x answered 0 work requests, the tester recorded 3",
    ]


APP_VALUES = {
    **VALUES,
    "app": {
        "enabled": True,
        "interface": "wsgi",
        "configurations": [
            {"name": "uvicorn", "interface": "asgi"},
            {"name": "sync-1x", "interface": "wsgi"},
            {"name": "gthread", "interface": "wsgi"},
        ],
    },
}


def test_with_an_app_the_measured_targets_are_its_configurations():
    assert check_results.measured_targets(APP_VALUES) == ["app-sync-1x", "app-gthread"]
    assert check_results.scraped_targets(APP_VALUES) == ["app-sync-1x", "app-gthread"]
    assert check_results.scraped_targets(VALUES) == ["fastapi", "flask-1x", "reload"]


def test_a_teams_paths_need_no_calibration_the_labs_cpu_endpoints_do():
    app = copy.deepcopy(RESULTS["targets"][0])
    app["calibration"] = None
    app["scenarios"]["bursts"]["endpoints"][0]["work"] = "app"
    results = {**RESULTS, "targets": [app]}
    assert check_results.result_problems(results, ["fastapi"]) == []
    app["scenarios"]["bursts"]["endpoints"][0]["work"] = "cpu"
    assert check_results.result_problems(results, ["fastapi"]) == ["fastapi: not calibrated"]


def test_an_app_labs_sizing_records_nothing_per_target_on_a_cluster_its_other_shapes_do():
    # The tester creates no pods: the sizing's own configurations are not run there, while every
    # shape run on the deployed targets must still have its results.
    results = copy.deepcopy(RESULTS)
    results["run"]["settings"]["scenarios"] = ["bursts", "sizing"]
    assert check_results.result_problems(results, MEASURED) == []
    results["run"]["settings"]["scenarios"] = ["bursts", "flow", "sizing"]
    assert check_results.result_problems(results, MEASURED) == [
        "fastapi: no flow results",
        "flask-1x: no flow results",
    ]


def sized(measured: float | None) -> dict:
    """A run's results with an app lab's proposal, its one level predicted (and measured)."""
    level = {"offered_per_s": 40.0, "predicted_per_s": 41.0, "measured_per_s": measured, "requests": 0}
    level["requests"] = 800 if measured is not None else 0
    results = copy.deepcopy(RESULTS)
    results["run"]["settings"]["scenarios"] = ["bursts", "flow", "sizing"]
    proposed = {"label": "gunicorn gthread, 1 worker x 8 threads", "levels": [level]}
    results["conclusions"] = {"sizing": {"proposed": proposed, "headline": "Serve the app with ..."}}
    return results


def test_an_app_lab_on_a_cluster_proposes_and_a_deployed_proposal_is_measured():
    assert check_results.sizing_problems(sized(None), APP_VALUES) == []  # predicted, written, not proved
    nothing = sized(None)
    nothing["conclusions"] = {}
    assert check_results.sizing_problems(nothing, APP_VALUES) == [
        "the app lab proposed no configuration (conclusions.sizing.proposed)"
    ]
    deployed = copy.deepcopy(APP_VALUES)
    deployed["app"]["predicted"] = {"role": "proposed"}
    assert check_results.sizing_problems(sized(38.5), deployed) == []
    assert check_results.sizing_problems(sized(None), deployed) == [
        "gunicorn gthread, 1 worker x 8 threads at 40.0/s: the deployed proposal was not measured"
    ]
    assert check_results.sizing_problems(sized(None), VALUES) == []  # the lab's own targets: no sizing
