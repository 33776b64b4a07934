"""Many clients against real servers on 127.0.0.1: the same short lab by one client and by two
client processes released together. What holds on a shared machine is asserted: every row names
its client, the server counted exactly what all clients sent, the rows of each burst are merged,
the answers (who ran how many at once, what binds the flow) are the same, bursts agree with the
work they measured, and no client process outlives the tester."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml

from labtester.scenarios.bursts.analyse import MODEL_AGREEMENT
from labtester.targets import DEFAULT_VALUES

TARGETS = ("fastapi", "flask-1x")
ENV = {
    "TESTER_ENDPOINTS": "io-bound,sync-cpubound",
    "TESTER_FLOW__DURATION_S": "2",
    "TESTER_FLOW__USERS": "10",
    "TESTER_FLOW__BASELINE": "3",
    "TESTER_PLOTS": "false",  # no test here reads a plot
}


def lab_command(directory: Path, clients: int) -> list[str]:
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"] = [t for t in values["targets"] if t["name"] in TARGETS]
    for entry in [*values["targets"], values["downstream"]]:
        entry["localPort"] = 0  # the lab picks free ports
    (directory / "values.yaml").write_text(yaml.safe_dump(values))
    return [
        *(sys.executable, "-m", "labtester", "lab", "--values", str(directory / "values.yaml")),
        # n = 4: client 1 holds 2 connections, every sync worker of flask-1x (2 here), at the release.
        *("--work-seconds", "0.3", "--burst-max", "4", "--repeats", "2", "--scenarios", "bursts,flow"),
        *("--clients", str(clients), "--output", str(directory / "results")),
    ]


def run_lab(directory: Path, clients: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    env = {**os.environ, **ENV}
    completed = subprocess.run(
        lab_command(directory, clients), capture_output=True, text=True, timeout=600, env=env
    )
    (run,) = (directory / "results").iterdir()
    return completed, run


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[int, tuple[subprocess.CompletedProcess[str], Path]]:
    return {p: run_lab(tmp_path_factory.mktemp(f"clients-{p}"), p) for p in (1, 2)}


def results(run: Path) -> dict[str, Any]:
    return json.loads((run / "results.json").read_text())


def bursts(document: dict[str, Any], target: str) -> dict[str, dict[str, Any]]:
    entry = next(t for t in document["targets"] if t["name"] == target)
    return {e["name"]: e for e in entry["scenarios"]["bursts"]["endpoints"]}


def test_two_clients_pass_and_every_row_names_its_client(runs: dict[int, Any]) -> None:
    completed, run = runs[2]
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    with (run / "requests.csv").open() as file:
        burst_rows = list(csv.DictReader(file))
    with (run / "scenario-requests.csv").open() as file:
        flow_rows = list(csv.DictReader(file))
    assert {row["client"] for row in burst_rows} == {"0", "1"}
    for target in TARGETS:
        assert {r["client"] for r in flow_rows if r["target"] == target} == {"0", "1"}
    # A burst of n is split: client 0 sends ceil(n/2), client 1 the rest, every one in the merged rows.
    for n in (1, 2, 3):
        rows = [r for r in burst_rows if r["phase"] == "burst" and r["n"] == str(n)]
        per_burst = len(TARGETS) * 2 * 2  # targets x endpoints x repeats
        assert len(rows) == n * per_burst
        assert sum(r["client"] == "1" for r in rows) == (n // 2) * per_burst


def test_the_server_counted_exactly_what_every_client_sent(runs: dict[int, Any]) -> None:
    for clients in (1, 2):
        document = results(runs[clients][1])
        for target in document["targets"]:
            for endpoint in bursts(document, target["name"]).values():
                assert endpoint["metrics"]["matches"] and endpoint["metrics"]["sent"] > 0
            (flow,) = [c for c in target["counts"] if c["shape"] == "flow fan-out"]
            assert flow["counted"] == flow["sent"] > 0
            uses = [u for u in target["clients"] if u["shape"] == "flow"]
            assert sorted(u["client"] for u in uses) == list(range(clients))
            # Client 0 times requests alone first: as many as asked past each process's first (cold.py).
            alone = baseline_rows(runs[clients][1], target["name"])
            assert alone >= int(ENV["TESTER_FLOW__BASELINE"])
            assert sum(u["requests"] for u in uses) + alone == flow["sent"]


def baseline_rows(run: Path, target: str) -> int:
    """The requests a target's flows sent alone, from the run's raw records."""
    records = [json.loads(line) for line in (run / "raw.jsonl").read_text().splitlines()]
    return sum(
        len(r["baseline"]["rows"])
        for r in records
        if r.get("scenario") == "flow" and r.get("target") == target and r.get("baseline")
    )


def test_one_and_two_clients_give_the_same_answers(runs: dict[int, Any]) -> None:
    one, two = results(runs[1][1]), results(runs[2][1])
    for target in TARGETS:
        for name in ("io-bound", "sync-cpubound"):
            alone, shared = bursts(one, target)[name], bursts(two, target)[name]
            # Who ran how many at once, by the servers' own clocks: the same with one client or two.
            assert [p["overlap"] for p in alone["points"]] == [p["overlap"] for p in shared["points"]]
            for point in shared["points"]:
                for run in point["runs"]:
                    assert run["n"] == point["n"] and run["clients"] == min(point["n"], 2)
                    # Client 0 read the target's CPU before any client held a connection open.
                    assert run["accounting"]["target_s"] is not None, (target, name, run)
                    if run["verdict"] != "interference":  # the machine may take CPU; then it says so
                        assert abs(run["ratio"] - 1) <= MODEL_AGREEMENT, (target, name, run)
        flows = [
            flow
            for d in (one, two)
            for flow in next(t for t in d["targets"] if t["name"] == target)["scenarios"]["flow"]["flows"]
        ]
        assert len(flows) == 2  # fan-out, once with one client and once with two
        # What binds the flow is the same, unless the machine left a run short of CPU (then the
        # CPU term binds: the share it got, a condition of the machine, not the server's answer).
        bindings = {flow["prediction"]["binding"] for flow in flows}
        assert len(bindings) == 1 or "cpu" in bindings, bindings


def test_the_release_across_clients_is_measured_by_the_servers(runs: dict[int, Any]) -> None:
    # Where the server took requests of both clients at once (2 sync workers may take 2 of one).
    spreads = [
        run["client_spread_s"]
        for target in TARGETS
        for point in bursts(results(runs[2][1]), target)["io-bound"]["points"]
        for run in point["runs"]
        if point["n"] >= 2 and run["client_spread_s"] is not None
    ]
    assert len(spreads) >= len(TARGETS) and all(s >= 0 for s in spreads)
    # Both clients' requests were taken before the first one finished: released together.
    assert max(spreads) < 0.3
    assert "Across the 2 clients" in runs[2][0].stdout


def children_running(parent: psutil.Process) -> list[psutil.Process]:
    return [p for p in parent.children(recursive=True) if "TESTER_CLIENT_INDEX" in p.environ()]


def test_no_client_outlives_a_killed_tester(tmp_path: Path) -> None:
    env = {**os.environ, **ENV, "TESTER_FLOW__DURATION_S": "60"}
    tester = subprocess.Popen(
        lab_command(tmp_path, 2), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        clients: list[psutil.Process] = []
        while not clients and time.monotonic() < deadline:
            tree = psutil.Process(tester.pid).children(recursive=True)
            clients = [p for p in tree if "TESTER_CLIENT_INDEX" in p.environ()]
            time.sleep(0.2)
        assert clients, "the second client never started"
        tester.send_signal(signal.SIGKILL)
        tester.wait()
        _, alive = psutil.wait_procs(clients, timeout=10)
        assert not alive, f"client processes left behind: {alive}"
    finally:
        if tester.poll() is None:
            tester.kill()
        for process in tree:  # the targets it started (their own fate is another check's)
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()


def test_a_client_that_dies_ends_the_run_with_what_was_measured(tmp_path: Path) -> None:
    tester = subprocess.Popen(
        lab_command(tmp_path, 2),
        env={**os.environ, **ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        clients = children_running(psutil.Process(tester.pid))
        if clients and list((tmp_path / "results").glob("*/raw.jsonl")):
            raw = next((tmp_path / "results").glob("*/raw.jsonl")).read_text()
            if '"kind": "burst"' in raw:
                clients[0].kill()
                break
        time.sleep(0.2)
    output, _ = tester.communicate(timeout=300)
    assert tester.returncode == 1, output[-3000:]
    (run,) = (tmp_path / "results").iterdir()
    document = results(run)
    assert document["run"]["status"] == "interrupted"
    assert any("client 1 stopped" in f["text"] for f in document["findings"]), document["findings"]
    assert (run / "requests.csv").read_text().count("\n") > 1  # what was measured stands


# Client 1 (and no other process: the variable is its alone) raises once it has sent part of a
# burst, between its requests and its meeting: a failure of the client's own mid-step.
RAISING_CLIENT = """
import os
if os.environ.get("TESTER_CLIENT_INDEX") == "1":
    from labtester.clients import spent
    read = spent.Meter.read
    def read_then_fail(self, requests):
        if requests:
            raise RuntimeError("injected: client 1 fails mid-step")
        return read(self, requests)
    spent.Meter.read = read_then_fail
"""

# How long a run may take to end once a client stopped: the stop is told at once, and the rest is
# the report's writing and the targets' stop.
ENDS_WITHIN_S = 30


def gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def stopped_client(tester: subprocess.Popen[str], directory: Path, stop: str) -> bool:
    """Stop client 1 with SIGTERM once a burst is measured, or wait for it to raise; whether it
    stopped."""
    deadline, seen = time.monotonic() + 240, []
    while time.monotonic() < deadline and tester.poll() is None:
        seen = seen or children_running(psutil.Process(tester.pid))
        raws = list((directory / "results").glob("*/raw.jsonl"))
        if stop == "sigterm" and seen and raws and '"kind": "burst"' in raws[0].read_text():
            seen[0].send_signal(signal.SIGTERM)  # as Kubernetes stops a deleted pod
            return True
        if stop == "raise" and seen and gone(seen[0]):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("stop", ["sigterm", "raise"])
def test_a_client_that_stops_ends_the_run_at_once_with_what_was_measured(tmp_path: Path, stop: str) -> None:
    env = {**os.environ, **ENV, "TESTER_FLOW__DURATION_S": "600"}  # only a stop that is told ends it
    if stop == "raise":
        (tmp_path / "inject").mkdir()
        (tmp_path / "inject" / "sitecustomize.py").write_text(RAISING_CLIENT)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path / "inject"), env.get("PYTHONPATH")]))
    tester = subprocess.Popen(
        lab_command(tmp_path, 2), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        stopped = stopped_client(tester, tmp_path, stop)
        assert stopped, "client 1 never stopped"
        output, _ = tester.communicate(timeout=ENDS_WITHIN_S)  # from client 1's stop: no hang
    finally:
        if tester.poll() is None:
            tester.kill()
            tester.wait()
    assert tester.returncode == 1, output[-3000:]
    (run,) = (tmp_path / "results").iterdir()
    assert (run / "results.json").exists(), output[-3000:]
    document = results(run)
    assert document["run"]["status"] == "interrupted"
    told = "it was stopped (SIGTERM)" if stop == "sigterm" else "RuntimeError: injected: client 1 fails"
    assert any(f"client 1 stopped: {told}" in f["text"] for f in document["findings"]), document["findings"]
    # What client 0 measured before the stop stands: its bursts' rows, in the raw log and the CSV.
    assert (run / "requests.csv").read_text().count("\n") > 1
