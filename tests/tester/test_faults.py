"""A dead target, and a SIGTERM to the tester: failures recorded by type, nothing measured lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from labtester.launcher import RunningTarget, start_target
from tests.conftest import Configured, definition


def start_tester(targets: list[RunningTarget], output: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TESTER_TARGETS": ",".join(f"{t.name}={t.url}" for t in targets),
        "TESTER_WORK_SECONDS": "0.5",
        "TESTER_BURST_MAX": "3",
        "TESTER_REPEATS": "1",
        "TESTER_OUTPUT_DIR": str(output),
        "TESTER_ENDPOINTS": "sync-cpubound,io-bound",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "labtester", "run"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def wait_for_record(output: Path, needle: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for raw in output.glob("*/raw.jsonl"):
            if needle in raw.read_text():
                return
        time.sleep(0.05)
    raise AssertionError(f"no raw record with {needle!r} within {timeout_s} s")


def bursts(target: dict) -> list[dict]:
    return target["scenarios"]["bursts"]["endpoints"]


def ended(tester: subprocess.Popen[str]) -> None:
    """A tester a failed test left running stops, as it measures a target other tests share."""
    if tester.poll() is None:
        tester.kill()
        tester.wait()


def results_of(output: Path) -> dict:
    (run_dir,) = output.iterdir()
    return json.loads((run_dir / "results.json").read_text())


def test_a_target_killed_mid_burst(tmp_path: Path, configured: Configured) -> None:
    victim = start_target(definition("flask-1x"))  # its own: it is killed
    survivor = configured("fastapi")  # only measured: the session's
    tester = start_tester([victim, survivor], tmp_path)
    try:
        # The first n=2 burst is in flight once n=1 is recorded: kill the whole server then.
        wait_for_record(tmp_path, '"phase": "burst"')
        time.sleep(0.2)
        for process in victim.tree():
            process.kill()
        output, _ = tester.communicate(timeout=300)
    finally:
        ended(tester)
        victim.stop(grace_s=1)
    assert tester.returncode == 1, output
    results = results_of(tmp_path)
    dead, alive = results["targets"]
    # What was measured before the kill is kept...
    sync = next(e for e in bursts(dead) if e["name"] == "sync-cpubound")
    assert sync["single_s"] and sync["points"][0]["n"] == 1 and sync["points"][0]["makespan"]
    # ...the failures are recorded by type, and the target is marked as stopped...
    assert set(sync["failures"]) <= {"connection refused", "connection reset", "remote disconnected"}
    assert sync["failures"]
    assert any("stopped answering" in e["error"] for e in dead["errors"])
    # ...and the other target is measured in full.
    assert [e["name"] for e in bursts(alive)] == ["sync-cpubound", "io-bound"]
    assert all(len(e["points"]) == 3 and e["metrics"]["matches"] for e in bursts(alive))
    assert any("FAILED" in line for line in output.splitlines())


def test_sigterm_keeps_what_was_measured(tmp_path: Path, configured: Configured) -> None:
    target = configured("fastapi")  # only measured: the session's
    tester = start_tester([target], tmp_path)
    try:
        wait_for_record(tmp_path, '"phase": "burst"')
        tester.send_signal(signal.SIGTERM)
        output, _ = tester.communicate(timeout=120)
    finally:
        ended(tester)
    assert tester.returncode == 1, output
    results = results_of(tmp_path)
    assert results["run"]["status"] == "interrupted"
    assert bursts(results["targets"][0])[0]["points"], "the burst measured before SIGTERM is kept"
    assert results["missing"], "the report says what was not measured"
