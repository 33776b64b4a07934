"""A killed tester leaves nothing behind: SIGKILL `labtester lab` and `labtester targets` (real
processes) and count what is left of the trees they started: processes and listening ports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest
import yaml

from labtester.launcher import RunningTarget
from labtester.targets import DEFAULT_VALUES
from tests.conftest import DEFINITIONS, StartTarget, selected

# The kernel's signal and the roots' own shutdown (uvicorn 5 s, gunicorn 10 s at most) end them.
DEADLINE_S = 60.0


def values_file(directory: Path, names: list[str]) -> Path:
    """The chart's values with only `names`, each on a free port (the launcher picks one)."""
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"] = [t | {"localPort": 0} for t in values["targets"] if t["name"] in names]
    values["downstream"] = values["downstream"] | {"localPort": 0}
    path = directory / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def launch(argv: list[str], directory: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TESTER_", "LAB_"))}
    env["TMPDIR"] = str(directory)  # where its targets' log folder goes
    command = [sys.executable, "-m", "labtester", *argv]
    return subprocess.Popen(command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_for(condition: object, what: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.1)


def listening_ports(processes: list[psutil.Process]) -> set[int]:
    pids = {p.pid for p in processes}
    return {
        c.laddr.port
        for c in psutil.net_connections("tcp")
        if c.pid in pids and c.status == psutil.CONN_LISTEN
    }


def left_after(victim: psutil.Process, tree: list[psutil.Process]) -> tuple[list[str], set[int]]:
    """SIGKILL `victim`, then what of `tree` still runs (or listens) once the deadline passed."""
    ports = listening_ports(tree)
    assert ports, "the tree listened on nothing: nothing would be proved"
    victim.kill()
    deadline = time.monotonic() + DEADLINE_S
    alive = tree
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    still = {port for port in ports if _answers(port)}
    return [" ".join(p.cmdline()[1:4]) for p in alive if p.is_running()], still


def _answers(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
    except httpx.TransportError:
        return False
    return True


def test_sigkill_of_targets_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    values = values_file(tmp_path, ["fastapi", "flask-1x", "flask-gthread"])
    started = launch(["targets", "--values", str(values)], tmp_path)
    assert started.stdout is not None
    for line in started.stdout:
        if "Targets are up" in line:
            break
    root = psutil.Process(started.pid)
    tree = root.children(recursive=True)
    # the downstream mock and three targets, each a root, a metrics process and workers
    assert len([p for p in tree if "metrics_server" in " ".join(p.cmdline())]) == 4
    left, ports = left_after(root, tree)
    started.wait()
    assert left == [] and ports == set()
    assert list(tmp_path.glob("lab-logs-*")), "a killed run is a failed run: its logs stay"


def test_a_clean_stop_removes_the_targets_logs(tmp_path: Path) -> None:
    values = values_file(tmp_path, ["fastapi"])
    started = launch(["targets", "--values", str(values)], tmp_path)
    assert started.stdout is not None
    for line in started.stdout:
        if "Targets are up" in line:
            break
    assert list(tmp_path.glob("lab-logs-*/fastapi.log"))
    started.send_signal(signal.SIGTERM)
    assert started.wait(timeout=60) == 0
    assert not list(tmp_path.glob("lab-logs-*"))


def test_sigkill_of_lab_mid_run_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    values = values_file(tmp_path, ["fastapi", "flask-1x"])
    argv = ["lab", "--values", str(values), "--work-seconds", "0.2", "--burst-max", "2", "--repeats", "1"]
    started = launch([*argv, "--output", str(tmp_path / "results")], tmp_path)
    wait_for(
        lambda: any('"phase": "burst"' in r.read_text() for r in tmp_path.glob("results/*/raw.jsonl")),
        "burst",
    )
    root = psutil.Process(started.pid)
    tree = root.children(recursive=True)
    assert len([p for p in tree if "gunicorn" in " ".join(p.cmdline())]) >= 2  # an arbiter and workers
    left, ports = left_after(root, tree)
    started.wait()
    assert left == [] and ports == set()


@pytest.fixture(scope="module")
def roots(request: pytest.FixtureRequest, start: StartTarget) -> dict[str, RunningTarget]:
    """A target of its own for each run of the test below (each is killed), started together."""
    names = selected(request, "name", "test_a_sigkilled_root_takes_its_whole_tree")
    return dict(zip(names, start.together(names), strict=True))


@pytest.mark.parametrize("name", list(DEFINITIONS))
def test_a_sigkilled_root_takes_its_whole_tree(roots: dict[str, RunningTarget], name: str) -> None:
    """The parent-death signal is not inherited: gunicorn's workers, uvicorn's --workers and
    --reload children, granian's workers and the offload pool each set their own, so even a root
    killed outright leaves none of them. Every target of the chart's values, whatever its server."""
    target = roots[name]
    try:
        if "offload-cpubound" in httpx.get(f"{target.url}/info", timeout=30).json()["endpoints"]:
            httpx.get(
                f"{target.url}/test/offload-cpubound/1", timeout=60
            ).raise_for_status()  # starts the pool
        tree = target.tree()
        # Beside the root and its metrics process, the processes that would be orphaned: its
        # workers, reload child or pool.
        assert len(tree) > 2, [" ".join(p.cmdline()) for p in tree]
        left, ports = left_after(psutil.Process(target.process.pid), tree)
        target.process.wait(timeout=10)
    finally:
        target.stop(grace_s=1)
    assert left == [] and ports == set()
