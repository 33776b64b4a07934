"""The shipped example, run the way examples/README.md says (`make lab APP=... PATHS=...`), from
the repository root: both versions pass, answer about each path with a recommendation, and keep
every request's path and measured CPU. A few of the chart's configurations keep it short."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from labtester.targets import REPO_ROOT
from tests.tester.app_lab import QUICK, QUICK_FLOW, app_lab, csv_rows, results_of, values_with

NAMED = re.findall(r"^make lab APP=(\S+) PATHS=(\S+)$", (REPO_ROOT / "examples/README.md").read_text(), re.M)
# The shop's two versions are run here; the Django shop's own tests are tests/examples/test_django_shop.py.
COMMANDS = [(app, paths) for app, paths in NAMED if app.startswith("examples.shop.")]
# One configuration that holds a worker through a wait, one that does not; for ASGI, one loop.
CONFIGURATIONS = {"wsgi": ["sync-1x", "gthread"], "asgi": ["uvicorn"]}


def test_the_readme_names_both_versions() -> None:
    assert [app for app, _ in NAMED] == [
        "examples.shop.flask_app:app",
        "examples.shop.fastapi_app:app",
        "examples.django_shop.wsgi:application",
        "examples.django_shop.asgi:application",
    ]


@pytest.fixture(scope="module", params=COMMANDS, ids=[app for app, _ in COMMANDS])
def example_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, list[str], subprocess.CompletedProcess[str], Path]:
    app, paths = request.param
    interface = "asgi" if "fastapi" in app else "wsgi"
    directory = tmp_path_factory.mktemp(interface)
    values = values_with(directory, CONFIGURATIONS[interface])
    completed, run_dir = app_lab(
        REPO_ROOT, directory / "results", app, paths.split(","), values, *QUICK, env=QUICK_FLOW
    )
    assert run_dir is not None, completed.stdout + completed.stderr
    return app, paths.split(","), completed, run_dir


def test_the_example_passes_with_answers_and_a_recommendation(
    example_run: tuple[str, list[str], subprocess.CompletedProcess[str], Path],
) -> None:
    app, paths, completed, run_dir = example_run
    assert completed.returncode == 0, completed.stdout + completed.stderr
    results = results_of(run_dir)
    conclusion = results["conclusions"]["flow"]
    assert conclusion["app"] == app and [p["path"] for p in conclusion["paths"]] == paths
    assert conclusion["recommendation"] is not None
    assert f"How should {app} be served? {conclusion['recommendation']['label']}" in completed.stdout
    # Each path's cost alone, as the server measured it: the report computes, the checkout waits.
    cost = {p["path"]: p for p in conclusion["paths"]}
    assert cost["/report"]["cpu_s"] > cost["/checkout?product=7"]["cpu_s"]
    assert cost["/checkout?product=7"]["wait_s"] > cost["/checkout?product=7"]["cpu_s"]
    rows = csv_rows(run_dir / "requests.csv") + csv_rows(run_dir / "scenario-requests.csv")
    assert {r["path"] for r in rows} == set(paths) and all(r["cpu_s"] for r in rows if r["status"] == "200")


def test_a_waiting_path_holds_sync_workers_not_threads_nor_an_event_loop(
    example_run: tuple[str, list[str], subprocess.CompletedProcess[str], Path],
) -> None:
    _, _, _, run_dir = example_run
    (checkout,) = [
        p for p in results_of(run_dir)["conclusions"]["flow"]["paths"] if p["path"].startswith("/checkout")
    ]
    served = {c["target"]: c for c in checkout["configurations"]}
    if "sync-1x" in served:  # Flask: the wait holds a sync worker, not one of gthread's threads
        assert served["gthread"]["requests_per_s"] > served["sync-1x"]["requests_per_s"]
        assert served["sync-1x"]["binding"] == "slots"
    else:  # FastAPI: an event loop has no slots to run out of
        assert served["uvicorn"]["binding"] != "slots"
