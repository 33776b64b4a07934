"""A team's traffic file on real servers: each request sent as written (a POST with a JSON body and
a bearer token from the environment, a GET whose path holds commas, a form POST), measured alone
and as a mix in its weights; the token written nowhere; the mix open-loop at a rate, latencies
from the schedule; and every bad traffic file one line and exit 2 before anything starts.

The app (traffic_app.py) answers 200 only to the requests as the file describes them, so a
wrong method, header or body is a counted failure. Counts are held against the weights within a
binomial band; time is only ever a floor the app's own sleep sets.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from labtester.launcher import RunningTarget
from labtester.scenarios.flow.openloop import run_mix_open_loop
from labtester.traffic import Traffic
from labtester.views import number
from tests.forked_cli import ForkedCommands
from tests.services.apps import CONFIGURATIONS, serve_app
from tests.tester.app_lab import QUICK, QUICK_FLOW, app_lab, csv_rows, results_of, values_with
from tests.tester.traffic_app import WAIT_S

APP_FILE = Path(__file__).with_name("traffic_app.py")
APP_MODULE = "trafficapp"  # copied under this name into the team's folder
TOKEN = "tok-7f3a9c1e5b-never-written"
ORDER, ITEMS, LOGIN = "place an order", "GET /items/a,b?tags=x,y", "POST /login"
TRAFFIC: dict[str, Any] = {
    "requests": [
        {
            "name": ORDER,
            "method": "POST",
            "path": "/orders",
            "headers": {"Authorization": {"env": "API_TOKEN", "prefix": "Bearer "}},
            "json": {"product": 7, "quantity": 2},
            "weight": 3,
        },
        {"path": "/items/a,b?tags=x,y"},
        {"method": "POST", "path": "/login", "form": {"user": "ann", "code": 7}},
    ]
}
WEIGHTS = {ORDER: 3, ITEMS: 1, LOGIN: 1}
ROUTES = ["/orders", "/items/a,b", "/login"]
Run = tuple[subprocess.CompletedProcess[str], Path]


def within_binomial(count: int, total: int, share: float) -> bool:
    """`count` of `total` draws is what a weight's `share` gives, within 4 standard deviations."""
    spread = math.sqrt(total * share * (1 - share))
    return abs(count - total * share) <= 4 * spread + 1


def team_folder(directory: Path) -> Path:
    shutil.copy(APP_FILE, directory / f"{APP_MODULE}.py")
    (directory / "traffic.yaml").write_text(yaml.safe_dump(TRAFFIC))
    return directory


@pytest.fixture(scope="module")
def traffic_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = team_folder(tmp_path_factory.mktemp("traffic"))
    values = values_with(directory, ["gthread"])
    completed, run_dir = app_lab(
        directory,
        directory / "results",
        f"{APP_MODULE}:wsgi",
        [],
        values,
        "--traffic",
        "traffic.yaml",
        *QUICK,
        env={**QUICK_FLOW, "API_TOKEN": TOKEN},
    )
    assert run_dir is not None, completed.stdout + completed.stderr
    return completed, run_dir


def test_every_request_is_sent_as_written_in_bursts_and_flows(traffic_run: Run) -> None:
    completed, run_dir = traffic_run
    assert completed.returncode == 0, completed.stdout + completed.stderr
    results = results_of(run_dir)
    assert results["failed_checks"] == [] and results["missing"] == []
    bursts = csv_rows(run_dir / "requests.csv")
    assert {row["endpoint"] for row in bursts} == set(WEIGHTS)
    assert all(row["status"] == "200" for row in bursts), {r["endpoint"]: r["status"] for r in bursts}
    (target,) = results["targets"]
    flows = target["scenarios"]["flow"]["flows"]
    assert {flow["endpoint"] for flow in flows} == set(WEIGHTS)
    assert all(flow["failures"] == {} and flow["requests"] > 0 for flow in flows)
    # Each request alone still feeds the model: its CPU and wait, from its Server-Timing.
    assert all(flow["cpu_s"] is not None and flow["wait_s"] is not None for flow in flows)


def test_the_mix_follows_the_weights_and_is_answered_per_configuration(traffic_run: Run) -> None:
    completed, run_dir = traffic_run
    (target,) = results_of(run_dir)["targets"]
    mix = target["scenarios"]["flow"]["mix"]
    sent = {served["name"]: served["requests"] for served in mix["requests"]}
    total = mix["overall"]["requests"]
    assert set(sent) == set(WEIGHTS) and sum(sent.values()) == total and total > 100, sent
    for name, weight in WEIGHTS.items():
        assert within_binomial(sent[name], total, weight / sum(WEIGHTS.values())), (name, sent)
    assert mix["overall"]["failures"] == {} and mix["overall"]["requests_per_s"] > 0
    # Every request is answered no sooner than the app's own wait.
    assert all(served["latency_s"]["p50"] >= WAIT_S for served in mix["requests"])
    said = " ".join(completed.stdout.split())
    assert "What does each configuration serve of the whole mix" in said
    assert f"gthread: {number(mix['overall']['requests_per_s'])}/s, p50 " in said


def test_the_token_is_written_nowhere(traffic_run: Run) -> None:
    completed, run_dir = traffic_run
    assert TOKEN not in completed.stdout + completed.stderr
    files = [path for path in run_dir.parent.parent.rglob("*") if path.is_file()]
    assert any(path.name == "raw.jsonl" for path in files)
    for path in files:
        if path.name != "traffic.yaml":
            assert TOKEN.encode() not in path.read_bytes(), path
    # What is kept is where the value comes from.
    settings = results_of(run_dir)["run"]["settings"]["traffic"]["requests"][0]["headers"]
    assert settings == {"Authorization": {"env": "API_TOKEN", "prefix": "Bearer "}}


@pytest.fixture
def served_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configuration: str
) -> Iterator[RunningTarget]:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    (chosen,) = [c for c in CONFIGURATIONS if c["name"] == configuration]
    folder = team_folder(tmp_path)
    target = serve_app(f"{APP_MODULE}:wsgi", chosen, [], folder, LAB_APP_PATHS=json.dumps(ROUTES))
    yield target
    target.stop()


@pytest.mark.parametrize("configuration", ["gthread"])
def test_the_mix_open_loop_sends_on_schedule_in_its_weights(served_app: RunningTarget) -> None:
    traffic = Traffic.model_validate(TRAFFIC)
    measured = run_mix_open_loop(served_app.url, traffic, per_s=60, duration_s=3)
    assert measured.scheduled == 180 and measured.dropped == 0
    assert measured.overall.failures == {}, measured.overall.failures
    sent = {served.name: served.requests for served in measured.requests}
    for name, weight in WEIGHTS.items():
        assert within_binomial(sent[name], 180, weight / sum(WEIGHTS.values())), (name, sent)
    assert all(served.latency_s["p50"] >= WAIT_S for served in measured.requests)


@pytest.mark.parametrize("configuration", ["sync-1x"])
def test_the_mix_open_loop_counts_latency_from_the_schedule(served_app: RunningTarget) -> None:
    """Sent faster than sync workers can answer: each holds a worker at least the app's wait, so
    the last answer comes no sooner than (answers x wait / workers) after the first send; counted
    from its schedule, its latency is at least that less the time the sends took. A client that
    held each send until the last answer and timed from its send (coordinated omission) shows
    about one wait: 0.05 s where this asks 1.5 s, tried."""
    slots = httpx.get(served_app.url + "/info").json()["endpoints"]["/orders"]["slots"]
    traffic = Traffic.model_validate(TRAFFIC)
    per_s, duration_s = 400, 1.5
    measured = run_mix_open_loop(served_app.url, traffic, per_s=per_s, duration_s=duration_s)
    answered = measured.overall.requests - sum(measured.overall.failures.values())
    floor = answered * WAIT_S / slots - duration_s
    assert answered > 300 and floor > 10 * WAIT_S, (answered, slots)
    assert measured.overall.latency_s["max"] >= floor, (floor, measured.overall)


BAD = [
    ({"requests": [{"path": "/a", "colour": "red"}]}, {}, "requests[0] (GET /a).colour: Extra inputs"),
    ({"requests": []}, {}, "requests: List should have at least 1 item"),
    ({"request": [{"path": "/a"}]}, {}, "request: Extra inputs"),
    ({"requests": [{"path": "/a", "weight": 0}]}, {}, "requests[0] (GET /a).weight: Input should be greater"),
    ({"requests": [{"path": "/a", "weight": "x"}]}, {}, "weight: Input should be a valid number"),
    ({"requests": [{"path": "/a", "json": {"x": 1}}]}, {}, "a GET request carries no body"),
    (
        {"requests": [{"method": "HEAD", "path": "/a", "form": {"x": 1}}]},
        {},
        "a HEAD request carries no body",
    ),
    ({"requests": [{"method": "FETCH", "path": "/a"}]}, {}, "requests[0] (FETCH /a).method"),
    ({"requests": [{"path": "a"}]}, {}, "path 'a' does not start with /"),
    ({"requests": [{"path": "/healthz"}]}, {}, "one of the lab's control paths"),
    (
        {"requests": [{"path": "/a", "headers": {"Authorization": {"env": "LAB_NO_SUCH_TOKEN"}}}]},
        {},
        "requests[0] (GET /a).headers.Authorization: the environment variable LAB_NO_SUCH_TOKEN is not set",
    ),
    ({"requests": [{"path": "/a"}, {"path": "/b", "name": "GET /a"}]}, {}, "two requests share a name"),
    ({"requests": [{"path": "/a"}]}, {"paths": "/b"}, "paths and traffic both given"),
]


@pytest.fixture(scope="module")
def commands() -> Iterator[ForkedCommands]:
    """The lab's command line imported once (tests/forked_cli.py): each bad file below is refused in
    milliseconds, where a new interpreter's start and imports cost about 2 s of CPU each."""
    with ForkedCommands(["labtester.__main__"], dict(os.environ)) as forked:
        yield forked


@pytest.mark.parametrize(("traffic", "flags", "said"), BAD, ids=[case[2] for case in BAD])
def test_a_bad_traffic_file_is_one_line_and_exit_2_with_nothing_started(
    tmp_path: Path, commands: ForkedCommands, traffic: dict[str, Any], flags: dict[str, str], said: str
) -> None:
    team_folder(tmp_path)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(traffic))
    argv = ["lab", "--app", f"{APP_MODULE}:wsgi", "--traffic", "bad.yaml"]
    argv += [arg for flag, value in flags.items() for arg in (f"--{flag}", value)]
    argv += ["--output", str(tmp_path / "results")]
    completed = commands.run("labtester", argv, dict(os.environ), tmp_path, timeout_s=120)
    assert completed.returncode == 2 and completed.stdout == "", completed.stdout
    (line,) = completed.stderr.splitlines()
    assert line.startswith("labtester lab: ") and said in line, line
    assert not (tmp_path / "results").exists()
