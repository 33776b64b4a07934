#!/usr/bin/env python3
"""The assertions `make kind-check` makes about the tester's run in the cluster.

Usage: kind_check_results.py RESULTS_JSON VALUES_YAML PROMETHEUS_URL

- The run completed, nothing it planned is missing, and every target the chart's values measure
  (`measure`, default true) is in results.json: ready, calibrated, every endpoint with bursts whose
  requests were answered.
- Where the tester cross-checks Prometheus itself (its results carry a `prometheus` record per
  target), every measured target's check ran without error and Prometheus's count of each route
  equals the server's.
- Seen from outside the tester too: Prometheus scraped every target (up == 1), and for each
  measured target it counted at least as
  many answered requests on the work routes (/test/..., less calibrate and resmon) as the tester
  recorded answers for it: Prometheus counts every request a target answered, the tester's record
  is a subset of them, so a lower count means Prometheus missed the target's work. Scrapes come
  every few seconds, so the comparison is retried for a while before it fails.
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

PROMETHEUS_WAIT_S = 60
# Answered work requests per target, as Prometheus counts them (summed over workers and routes).
WORK_ROUTES = 'route=~"/test/.*", route!~"/test/(calibrate|resmon)"'
ANSWERED_QUERY = f'sum by (target) (lab_http_requests_total{{status="200", {WORK_ROUTES}}})'
UP_QUERY = "up"

Query = Callable[[str], dict[str, float]]


def measured_targets(values: dict[str, Any]) -> list[str]:
    return [target["name"] for target in values["targets"] if target.get("measure", True)]


def answered(target: dict[str, Any]) -> int:
    """Requests of this target's bursts that the tester recorded as answered (HTTP 200)."""
    return sum(
        1
        for endpoint in target["endpoints"]
        for burst in endpoint["bursts"]
        for repeat in burst["repeats"]
        for request in repeat["requests"]
        if request["status"] == 200
    )


def result_problems(results: dict[str, Any], measured: list[str]) -> list[str]:
    problems = []
    if results["run"]["status"] != "complete":
        problems.append(f"the run is {results['run']['status']}, not complete")
    if results["missing"]:
        problems.append(f"the run did not measure: {', '.join(results['missing'])}")
    by_name = {target["name"]: target for target in results["targets"]}
    for name in measured:
        target = by_name.get(name)
        if target is None:
            problems.append(f"{name}: not in results.json")
            continue
        if not target["ready"]:
            problems.append(f"{name}: never became ready")
        if target["calibration"] is None:
            problems.append(f"{name}: not calibrated")
        if not target["endpoints"]:
            problems.append(f"{name}: no endpoint measured")
        for endpoint in target["endpoints"]:
            if not any(
                request["status"] == 200
                for burst in endpoint["bursts"]
                for repeat in burst["repeats"]
                for request in repeat["requests"]
            ):
                problems.append(f"{name} {endpoint['path']}: no burst request answered")
    return problems


def prometheus_problems(
    results: dict[str, Any], values: dict[str, Any], measured: list[str], query: Query
) -> list[str]:
    problems = []
    up = query(UP_QUERY)
    for target in values["targets"]:
        if up.get(target["name"]) != 1:
            problems.append(f"Prometheus: {target['name']} is not up (up = {up.get(target['name'])})")
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


def tester_cross_check(results: dict[str, Any], measured: list[str]) -> list[str] | None:
    """Problems in the tester's own Prometheus cross-check; None where results.json has none."""
    targets = [target for target in results["targets"] if target["name"] in measured]
    if not any("prometheus" in target for target in targets):
        return None
    problems = []
    for target in targets:
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
    problems = result_problems(results, measured)
    if values.get("prometheus", {}).get("enabled"):
        tester = tester_cross_check(results, measured)
        print(
            "the tester's Prometheus cross-check: " + ("none in results.json" if tester is None else "read")
        )
        problems += tester or []
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
    print(f"{results_path}: every measured target measured; answered requests the tester recorded: {counts}")


if __name__ == "__main__":
    main()
