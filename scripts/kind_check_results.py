#!/usr/bin/env python3
"""The assertions `make kind-check` makes about the tester's run in the cluster.

Usage: kind_check_results.py RESULTS_JSON VALUES_YAML PROMETHEUS_URL
VALUES_YAML: the release's values as installed (`helm get values --all`), whichever profile
run-lab picked: its targets are those the profile deploys (all but its `omitTargets`).

Reads results.json of schema version SCHEMA_VERSION (tester/labtester/results.schema.json):
- The run completed, nothing it planned is missing, and every target the release deployed and
  measures (`measure`, default true, all but the profile's `omitTargets`; with `app.enabled`, the
  app's configurations of its interface) is in it: ready, without errors, calibrated where its
  bursts ran CPU endpoints (a team's paths need no calibration), with every load shape the run
  planned, and every burst endpoint answered at least one run without a failure.
- The tester's own cross-check of Prometheus (where the chart runs one): for every measured target
  it ran without error, Prometheus's count of each route equals the server's, and the server's
  count of each load window equals the sum of every client's sends.
- With P clients (the tester Job's parallelism), every burst of n >= 2 was sent by min(n, P) of them.
- An app lab sized (`conclusions.sizing` proposes a configuration with its predicted rate and p99;
  the run wrote it as proposal-values.yaml, which kind-check checks beside results.json); a
  deployed proposal (`app.predicted` in the values) was proved: each predicted level measured.
- Seen from outside the tester too: Prometheus scraped every target (up == 1), and for each
  measured target it counted at least as many answered requests on the work routes (every route
  but the control paths) as the tester's bursts recorded: Prometheus counts every request a
  target answered, the bursts are a subset of them, so a lower count means Prometheus missed the
  target's work. Scrapes come every few seconds, so this is retried for a while before it fails.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from labtester.results import SCHEMA_VERSION  # the version this check was written for
from labtester.targets import deployed_entries

PROMETHEUS_WAIT_S = 60
# Answered work requests per target, as Prometheus counts them (summed over workers and routes):
# every route but the control paths, so a team's routes (named by its framework) count too.
WORK_ROUTES = 'route!~"/healthz|/info|/metrics|/test/(calibrate|resmon)"'
ANSWERED_QUERY = f'sum by (target) (lab_http_requests_total{{status="200", {WORK_ROUTES}}})'
UP_QUERY = "up"

Query = Callable[[str], dict[str, float]]

# Shapes that start and load configurations of their own after the others, never a deployed
# target's: on a cluster the tester creates no pods, so the sizing there records nothing per target
# (its proposal is deployed by a second run-lab, PROPOSAL=..., and measured as a target).
OWN_CONFIGURATIONS = {"sizing"}


def app_configurations(values: dict[str, Any]) -> list[str] | None:
    """With `app.enabled`, the configurations the tester measures (those of the app's interface),
    by the names the chart gives their Services (`app-<name>`, concurrency-lab.appServers)."""
    app = values.get("app") or {}
    if not app.get("enabled"):
        return None
    configurations = app.get("configurations") or []
    return [f"app-{c['name']}" for c in configurations if c.get("interface") == app.get("interface")]


def measured_targets(values: dict[str, Any]) -> list[str]:
    """The targets the release deployed and measures."""
    configurations = app_configurations(values)
    if configurations is not None:
        return configurations
    return [target["name"] for target in deployed_entries(values) if target.get("measure", True)]


def scraped_targets(values: dict[str, Any]) -> list[str]:
    """What Prometheus must see up: the app's configurations, or every target of the values."""
    configurations = app_configurations(values)
    return configurations if configurations is not None else [t["name"] for t in deployed_entries(values)]


def needs_calibration(target: dict[str, Any]) -> bool:
    """Calibrated N sizes the lab's CPU endpoints; a team's paths (work "app") do what they do."""
    bursts = target["scenarios"].get("bursts") or {"endpoints": []}
    return any(endpoint.get("work", "cpu") == "cpu" for endpoint in bursts["endpoints"])


def burst_runs(target: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(endpoint path, run) of every baseline and burst run of the target."""
    bursts = target["scenarios"].get("bursts") or {"endpoints": []}
    return [
        (endpoint["path"], run)
        for endpoint in bursts["endpoints"]
        for run in [*endpoint["baseline"], *(run for point in endpoint["points"] for run in point["runs"])]
    ]


def answered(target: dict[str, Any]) -> int:
    """Requests of the target's bursts the tester recorded as answered (not failed)."""
    return sum(run["n"] - sum(run["failures"].values()) for _, run in burst_runs(target))


def result_problems(results: dict[str, Any], measured: list[str]) -> list[str]:
    if results.get("schema_version") != SCHEMA_VERSION:
        return [f"results.json has schema {results.get('schema_version')}; this check reads {SCHEMA_VERSION}"]
    problems = []
    if results["run"]["status"] != "complete":
        problems.append(f"the run is {results['run']['status']}, not complete")
    if results["missing"]:
        problems.append(f"the run did not measure: {', '.join(results['missing'])}")
    planned = results["run"]["settings"]["scenarios"]
    by_name = {target["name"]: target for target in results["targets"]}
    for name in measured:
        target = by_name.get(name)
        if target is None:
            problems.append(f"{name}: not in results.json")
            continue
        if not target["ready"]:
            problems.append(f"{name}: never became ready")
        problems += [f"{name}: {error['stage']}: {error['error']}" for error in target["errors"]]
        if target["calibration"] is None and needs_calibration(target):
            problems.append(f"{name}: not calibrated")
        problems += [
            f"{name}: no {shape} results"
            for shape in planned
            if shape not in target["scenarios"] and shape not in OWN_CONFIGURATIONS
        ]
        runs = burst_runs(target)
        for path in dict.fromkeys(path for path, _ in runs):
            if not any(not run["failures"] for endpoint, run in runs if endpoint == path):
                problems.append(f"{name} {path}: no burst run without failures")
    return problems


def tester_cross_check(results: dict[str, Any], measured: list[str]) -> list[str]:
    """Problems in the tester's own cross-check of Prometheus's counts."""
    problems = []
    for target in results["targets"]:
        if target["name"] not in measured:
            continue
        check = target.get("prometheus")
        if check is None:
            problems.append(f"{target['name']}: the tester did not cross-check Prometheus")
        elif check.get("error"):
            problems.append(f"{target['name']}: the tester's Prometheus check failed: {check['error']}")
        else:
            problems += [
                f"{target['name']} {route['route']}: Prometheus counted {route['prometheus']}, "
                f"the server {route['server']:g}"
                for route in check["routes"]
                if route["prometheus"] != route["server"]
            ]
            problems += [
                f"{target['name']} {sent['window']}: the clients sent {sent['sent']}, the server "
                f"counted {sent['server']:g}"
                for sent in check.get("sent", [])
                if sent["sent"] != sent["server"]
            ]
    return problems


def sizing_problems(results: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """An app lab's sizing: a proposal, predicted; with a deployed proposal, each level measured."""
    app = values.get("app") or {}
    if not app.get("enabled") or "sizing" not in results["run"]["settings"]["scenarios"]:
        return []
    proposed = (results["conclusions"].get("sizing") or {}).get("proposed")
    if proposed is None:
        return ["the app lab proposed no configuration (conclusions.sizing.proposed)"]
    problems = [] if proposed["levels"] else [f"{proposed['label']}: no predicted level"]
    for level in proposed["levels"]:
        at = f"{proposed['label']} at {level['offered_per_s']:.1f}/s"
        if not level["predicted_per_s"] > 0:
            problems.append(f"{at}: predicted {level['predicted_per_s']}/s")
        if app.get("predicted") and (level["measured_per_s"] is None or not level["requests"]):
            problems.append(f"{at}: the deployed proposal was not measured")
    return problems


def client_problems(results: dict[str, Any]) -> list[str]:
    """With P clients, each burst of n is split across min(n, P) of them, every one measured."""
    clients = results["run"]["settings"].get("clients", 1)
    if clients == 1:
        return []
    problems = []
    for target in results["targets"]:
        for path, run in burst_runs(target):
            if run.get("verdict") != "failed" and run.get("clients") != min(run["n"], clients):
                problems.append(f"{target['name']} {path} n={run['n']}: sent by {run.get('clients')} clients")
    return problems


def prometheus_problems(
    results: dict[str, Any], values: dict[str, Any], measured: list[str], query: Query
) -> list[str]:
    problems = []
    up = query(UP_QUERY)
    for name in scraped_targets(values):
        if up.get(name) != 1:
            problems.append(f"Prometheus: {name} is not up (up = {up.get(name)})")
    counted = query(ANSWERED_QUERY)
    by_name = {target["name"]: target for target in results["targets"]}
    for name in measured:
        if name in by_name:
            recorded, seen = answered(by_name[name]), counted.get(name, 0)
            if seen < recorded:
                problems.append(
                    f"Prometheus: {name} answered {seen:g} work requests, the tester recorded {recorded}"
                )
    return problems


def prometheus_query(url: str) -> Query:
    """Instant queries against Prometheus's HTTP API: the value of each series, by its target label."""

    def query(expression: str) -> dict[str, float]:
        address = f"{url}/api/v1/query?{urllib.parse.urlencode({'query': expression})}"
        with urllib.request.urlopen(address, timeout=10) as response:
            data = json.load(response)["data"]["result"]
        return {series["metric"].get("target", ""): float(series["value"][1]) for series in data}

    return query


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit("usage: kind_check_results.py RESULTS_JSON VALUES_YAML PROMETHEUS_URL")
    results_path, values_path, url = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    results = json.loads(results_path.read_text())
    values = yaml.safe_load(values_path.read_text())
    measured = measured_targets(values)
    problems = (
        result_problems(results, measured) + client_problems(results) + sizing_problems(results, values)
    )
    if values.get("prometheus", {}).get("enabled"):
        problems += tester_cross_check(results, measured)
        query, deadline = prometheus_query(url), time.monotonic() + PROMETHEUS_WAIT_S
        while found := prometheus_problems(results, values, measured, query):
            if time.monotonic() > deadline:
                break
            time.sleep(5)
        problems += found
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    counts = ", ".join(
        f"{target['name']} {answered(target)}" for target in results["targets"] if target["name"] in measured
    )
    clients = results["run"]["settings"].get("clients", 1)
    print(
        f"{results_path}: every measured target measured by {clients} client(s); answered requests "
        f"the tester recorded: {counts}"
    )
    sizing = results["conclusions"].get("sizing")
    if sizing:
        print(f"sizing: {sizing['headline']}")


if __name__ == "__main__":
    main()
