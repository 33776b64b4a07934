"""A team's own app, as a new user brings it: a bare WSGI callable and a bare ASGI callable in a
module of their own, with a CPU path, a waiting path, a path mixing both, a path that is not there
and one that raises. Every assertion holds on a shared machine: counts, orderings, floors the app
itself sets (a sleep is never shorter than asked; CPU burnt on the thread's clock is at least what
was burnt), and ratios between configurations measured side by side.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.forked_cli import ForkedCommands
from tests.services.apps import configurations
from tests.services.servertiming import TIMER_TICK_S
from tests.tester.app_lab import QUICK, QUICK_FLOW, app_lab, csv_rows, raw_records, results_of, values_with

CPU_S, WAIT_S = 0.04, 0.1
# The bare callables the services' own tests serve (tests/services/bare_app.py), as a team's module.
APP = (Path(__file__).parents[1] / "services" / "bare_app.py").read_text()
CPU, WAIT = f"/cpu?ms={CPU_S * 1000:.0f}", f"/wait?ms={WAIT_S * 1000:.0f}"
MIXED = f"/mixed?cpu_ms={CPU_S * 1000:.0f}&wait_ms={WAIT_S * 500:.0f}"
GOOD = [CPU, WAIT, MIXED]
# Every configuration of the chart's values, per interface.
WSGI_CONFIGURATIONS = [c["name"] for c in configurations("wsgi")]
ASGI_CONFIGURATIONS = [c["name"] for c in configurations("asgi")]
Run = tuple[subprocess.CompletedProcess[str], Path]
# A run over every configuration of an interface (five WSGI ones: about 35 s of measuring each,
# then the report) passes the suite's 300 s on a shared machine: as long as app_lab's own limit.
pytestmark = pytest.mark.timeout(900)


def team_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    directory = tmp_path_factory.mktemp(name)
    (directory / "teamapp.py").write_text(APP)
    return directory


@pytest.fixture(scope="module")
def wsgi_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = team_dir(tmp_path_factory, "wsgi")
    values = values_with(directory, WSGI_CONFIGURATIONS)
    paths = [*GOOD, "/missing", "/boom"]
    completed, run_dir = app_lab(
        directory, directory / "results", "teamapp:wsgi", paths, values, *QUICK, env=QUICK_FLOW
    )
    assert run_dir is not None, completed.stdout + completed.stderr
    return completed, run_dir


@pytest.fixture(scope="module")
def asgi_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = team_dir(tmp_path_factory, "asgi")
    values = values_with(directory, ASGI_CONFIGURATIONS)
    completed, run_dir = app_lab(
        directory, directory / "results", "teamapp:asgi", GOOD, values, *QUICK, env=QUICK_FLOW
    )
    assert run_dir is not None, completed.stdout + completed.stderr
    return completed, run_dir


def flows_by(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (configuration, path)'s flow."""
    return {
        (t["name"], f["endpoint"]): f
        for t in results["targets"]
        for f in t["scenarios"].get("flow", {"flows": []})["flows"]
    }


def bursts_by(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (t["name"], e["name"]): e
        for t in results["targets"]
        for e in t["scenarios"].get("bursts", {"endpoints": []})["endpoints"]
    }


@pytest.mark.parametrize(("run", "app"), [("wsgi_run", "teamapp:wsgi"), ("asgi_run", "teamapp:asgi")])
def test_the_run_passes_and_answers_about_the_app_with_a_recommendation(
    run: str, app: str, request: pytest.FixtureRequest
) -> None:
    completed, run_dir = request.getfixturevalue(run)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    said = " ".join(completed.stdout.split())  # the console wraps its answers
    assert f"How should {app} be served?" in said
    for path in GOOD:
        assert f"What does {path} cost, and what does each configuration serve? {path} used " in said
    results = results_of(run_dir)
    conclusion = results["conclusions"]["flow"]
    configurations = {t["name"] for t in results["targets"]}
    assert conclusion["recommendation"]["target"] in configurations
    assert [p["path"] for p in conclusion["paths"]] == GOOD
    html = (run_dir / "report.html").read_text()
    assert f"How should {app} be served?" in html and conclusion["recommendation"]["label"] in html
    # Asked for no plots (app_lab's NO_PLOTS): none drawn, and the console says how to draw them.
    assert not (run_dir / "plots").exists() and "data:image/png" not in html
    assert f"`python -m labtester report {run_dir}` draws them" in said


@pytest.mark.parametrize("run", ["wsgi_run", "asgi_run"])
def test_every_request_row_carries_its_path_and_the_cpu_the_app_burnt(
    run: str, request: pytest.FixtureRequest
) -> None:
    _, run_dir = request.getfixturevalue(run)
    bursts = [r for r in csv_rows(run_dir / "requests.csv") if r["status"] == "200"]
    assert {r["path"] for r in bursts} == set(GOOD)
    assert all(r["account"] == "server-timing" and float(r["cpu_s"]) >= 0 for r in bursts)
    flows = [r for r in csv_rows(run_dir / "scenario-requests.csv") if r["status"] == "200"]
    assert {r["path"] for r in flows} == set(GOOD) and all(float(r["cpu_s"]) >= 0 for r in flows)
    # The header's CPU is what the app burnt on its thread's clock, plus a little framework.
    replies = [
        reply
        for record in raw_records(run_dir)
        if record.get("kind") == "burst"
        for reply in record["requests"]
        if reply["body"] and reply["body"].get("cpu_s")
    ]
    assert len(replies) > 20
    for reply in replies:
        burned = reply["body"]["cpu_s"]
        assert burned <= reply["cpu_s"] <= burned * 1.05 + 0.002, reply


def test_a_waiting_path_is_served_by_threads_and_greenlets_a_cpu_path_by_cores(wsgi_run: Run) -> None:
    flows = flows_by(results_of(wsgi_run[1]))
    rate = {key: flow["requests_per_s"] for key, flow in flows.items()}
    # Waits hold a sync worker, not a thread's or a greenlet's: more slots, more requests served.
    assert rate["gthread", WAIT] > rate["sync-1x", WAIT] and rate["gevent", WAIT] > rate["sync-1x", WAIT]
    # Twice the sync workers: twice the waits served (twice the slots), and more than they add to
    # the CPU work served per CPU second their processes spent. The CPU path's rate alone follows
    # the cores the processes got, which a busy machine's scheduler gives more of to more processes
    # (2.59x the rate for 2.01x the waits, at load 17); per CPU second spent, the ratio of the rates
    # is that of the CPU each request cost the processes, which more workers do not lower.
    waits = rate["sync-2x", WAIT] / rate["sync-1x", WAIT]
    cost = {name: flows[name, CPU]["account"]["process_cpu_per_request_s"] for name in ("sync-1x", "sync-2x")}
    cpu_per_cpu_second = cost["sync-1x"] / cost["sync-2x"]
    assert waits > 1.5 and waits > cpu_per_cpu_second, (waits, cpu_per_cpu_second, cost)
    # Little's law says why: the sync workers ran out of slots on the waits.
    assert flows["sync-1x", WAIT]["prediction"]["binding"] == "slots"


def test_an_event_loop_runs_cpu_one_request_at_a_time_and_overlaps_the_waits(asgi_run: Run) -> None:
    bursts = bursts_by(results_of(asgi_run[1]))
    largest = {key: e["points"][-1] for key, e in bursts.items()}
    assert largest["uvicorn", CPU]["overlap"] == 1 and largest["uvicorn", WAIT]["overlap"] == 3
    conclusion = results_of(asgi_run[1])["conclusions"]["flow"]
    cpu = {c["target"]: c for p in conclusion["paths"] if p["path"] == CPU for c in p["configurations"]}
    # One event loop has one core for the CPU; a worker per core, every core.
    assert cpu["uvicorn-cores"]["ceiling_per_s"] > 1.5 * cpu["uvicorn"]["ceiling_per_s"]


@pytest.mark.parametrize("run", ["wsgi_run", "asgi_run"])
def test_a_mixed_path_is_its_measured_cpu_and_the_wait_it_showed_alone(
    run: str, request: pytest.FixtureRequest
) -> None:
    bursts = bursts_by(results_of(request.getfixturevalue(run)[1]))
    for (_, path), endpoint in bursts.items():
        if path == MIXED:
            # Floors the app sets: it burnt CPU_S on its thread's clock, and slept WAIT_S / 2.
            assert endpoint["cpu_s"] >= CPU_S and endpoint["wait_s"] >= WAIT_S / 2 - TIMER_TICK_S
            assert endpoint["account"] == "server-timing"
            assert all(p["model_s"] for p in endpoint["points"])


def test_a_404_and_a_500_are_findings_and_the_other_paths_are_still_measured(wsgi_run: Run) -> None:
    completed, run_dir = wsgi_run
    results = results_of(run_dir)
    answers = [f["text"] for f in results["findings"] if f["kind"] == "answer"]
    requests = len(WSGI_CONFIGURATIONS) * (1 + 2 + 3)  # each: bursts of 1, 2, 3 (n = 1 the requests alone)
    assert f"/missing answered HTTP 404 on {requests} of {requests} burst requests" in " ".join(answers)
    assert f"/boom answered HTTP 500 on {requests} of {requests} burst requests" in " ".join(answers)
    assert results["failed_checks"] == [] and results["missing"] == []
    bursts = bursts_by(results)
    for name in WSGI_CONFIGURATIONS:
        for path in GOOD:
            assert all(run["verdict"] != "failed" for p in bursts[name, path]["points"] for run in p["runs"])
    assert results["conclusions"]["flow"]["unanswered"] == ["/missing", "/boom"]
    assert "app /missing answered HTTP 404" in completed.stdout


def test_a_configuration_that_does_not_start_is_a_finding_and_the_others_are_measured(
    tmp_path: Path,
) -> None:
    (tmp_path / "teamapp.py").write_text(APP)
    broken = {
        "name": "broken",
        "interface": "wsgi",
        "env": {"LAB_SERVER": "gunicorn", "LAB_WORKER_CLASS": "nonsense"},
    }
    values = values_with(tmp_path, ["sync-1x"], broken)
    completed, run_dir = app_lab(
        tmp_path,
        tmp_path / "results",
        "teamapp:wsgi",
        [WAIT],
        values,
        "--scenarios",
        "bursts",
        "--burst-max",
        "2",
        "--repeats",
        "1",
    )
    assert completed.returncode == 1 and run_dir is not None, completed.stdout + completed.stderr
    results = results_of(run_dir)
    (failure,) = results["failed_checks"]
    assert failure.startswith("broken: start failed: broken exited before it was ready")
    assert results["missing"] == ["broken: not measured (did not start)"]
    (measured,) = [t for t in results["targets"] if t["ready"]]
    assert measured["name"] == "sync-1x" and len(bursts_by(results)["sync-1x", WAIT]["points"]) == 2


@pytest.fixture(scope="module")
def commands() -> Iterator[ForkedCommands]:
    """The lab's command line imported once (tests/forked_cli.py): a bad input is refused in
    milliseconds (or an app's check later), where a new interpreter's start and imports cost about
    2 s of CPU each."""
    with ForkedCommands(["labtester.__main__"], dict(os.environ)) as forked:
        yield forked


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--app", "teamapp:nothing", "--paths", CPU], "nothing"),
        (["--app", "nosuchmodule:app", "--paths", CPU], "nosuchmodule"),
        (["--app", "teamapp:wsgi", "--paths", "/cpu,/healthz"], "/healthz"),
        (["--app", "teamapp:wsgi", "--paths", "cpu"], "'cpu' does not start with /"),
        (["--app", "teamapp:wsgi", "--paths", "/search?q=a b"], "percent-encode it"),
        (["--app", "teamapp:wsgi"], "paths"),
    ],
)
def test_a_bad_app_or_path_is_one_line_and_exit_2_with_nothing_started(
    tmp_path: Path, commands: ForkedCommands, arguments: list[str], said: str
) -> None:
    (tmp_path / "teamapp.py").write_text(APP)
    argv = ["lab", *arguments, "--output", str(tmp_path / "results")]
    completed = commands.run("labtester", argv, dict(os.environ), tmp_path, timeout_s=120)
    assert completed.returncode == 2 and completed.stdout == "", completed.stdout
    (line,) = completed.stderr.splitlines()
    assert line.startswith("labtester lab: ") and said in line
    assert not (tmp_path / "results").exists()
