"""A path whose CPU spread is skewed (one request in five burns five times the others'), on real
servers: a rate follows the mean demand, so the sizing takes a path's mean CPU alone, and the
answers show the median as such with the mean beside it. The median would have predicted the
workers' rate twice too high. Every assertion is a ratio of CPU seconds and requests the
processes measured, never a bound on wall time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from labtester.proposal.costs import kinds_of
from labtester.results import Results
from labtester.scenarios.flow.advice import cost
from labtester.scenarios.flow.analyse import FlowSummary
from labtester.scenarios.flow.conclude import app_conclusion
from labtester.sizing.families import families
from tests.tester.app_lab import QUICK_FLOW, app_lab, results_of, values_with
from tests.tester.test_app_lab import APP

SKEWED = "/skewed?ms=4&every=5&times=10"  # 4 ms, and 40 ms on every fifth: mean 11.2 ms, median 4
# Twenty requests alone (each worker counts its own, so three or four of them heavy) before a flow
# bound by the CPU.
FLOW = {**QUICK_FLOW, "TESTER_FLOW__BASELINE": "20", "TESTER_SCENARIOS": "flow"}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, Path]:
    directory = tmp_path_factory.mktemp("skewed")
    (directory / "teamapp.py").write_text(APP)
    values = values_with(directory, ["sync-1x"])
    completed, run_dir = app_lab(
        directory, directory / "results", "teamapp:wsgi", [SKEWED], values, "--scenarios", "flow", env=FLOW
    )
    assert run_dir is not None, completed.stdout + completed.stderr
    return Results.model_validate(results_of(run_dir)), values


def test_the_sizing_takes_a_skewed_paths_mean_and_predicts_the_rate_served(
    results: tuple[Results, Path],
) -> None:
    found, values = results
    conclusion = app_conclusion(found)
    assert conclusion is not None
    searched, _ = families("wsgi", values)
    family = next(f for f in searched if "sync-1x" in f.fixed_targets)
    # No raw records: no spread to draw from, so the model's demand is the path's figure alone.
    (kind,), _ = kinds_of(found, conclusion, family)
    ((_, summary),) = found.summaries(FlowSummary)
    (flow,), cost = summary.flows, summary.serving_cost
    assert flow.account is not None and flow.cpu_s is not None and cost is not None
    assert kind.cpu_s > 1.4 * flow.cpu_s  # the mean alone, well above the median of a skewed spread
    # Sync workers, one slot each, their CPU the binding: they served the cores their processes
    # measured using over the flow (on a shared machine, what the others left), over each
    # request's CPU (the app's and the server's own).
    cores_used = flow.account.cores_per_process * cost.processes
    predicted = cores_used / kind.demand_s
    assert flow.requests_per_s / predicted == pytest.approx(1, rel=0.2)


def test_the_answer_shows_the_median_as_such_with_the_mean_beside_it(results: tuple[Results, Path]) -> None:
    conclusion = app_conclusion(results[0])
    assert conclusion is not None
    (path,) = conclusion.paths
    said = cost(path)
    assert "(median; mean " in said and "which the rates follow" in said, said
