"""The local launcher: readiness with a deadline, clean stops, no stale servers."""

from __future__ import annotations

import os
import shutil
import signal
import socket
from pathlib import Path

import psutil
import pytest
import yaml

from labtester.launcher import LaunchError, port_in_use, start_target
from labtester.targets import DEFAULT_VALUES, TargetDefinition, load_definitions


def test_definitions_come_from_the_chart_values() -> None:
    entries = yaml.safe_load(DEFAULT_VALUES.read_text())["targets"]
    definitions = load_definitions()
    assert [d.name for d in definitions] == [entry["name"] for entry in entries]
    for definition, entry in zip(definitions, entries, strict=True):
        assert definition.app == entry["app"] and definition.local_port == entry["localPort"]
        assert definition.measure == entry.get("measure", True)
        assert definition.env == {"LAB_SERVER": entry["server"]} | {
            k: str(v) for k, v in (entry.get("env") or {}).items()
        }
        assert definition.command()[1:] == ["-m", "serve", entry["app"]]
    assert len({d.local_port for d in definitions}) == len(definitions), "two targets share a local port"


def test_stop_leaves_no_process_and_frees_the_port() -> None:
    target = start_target(next(d for d in load_definitions() if d.name == "flask-2x"))
    tree = target.tree()
    assert len(tree) >= 3
    target.stop()
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in tree)
    assert not port_in_use(target.port)


def test_a_target_shares_the_testers_scheduling_group_but_not_its_process_group() -> None:
    """The tester's session (so the kernel's autogroup: in one of its own, a threaded target left a
    tenth of the cores idle beside the local client), and a process group of its own (Ctrl-C in a
    terminal reaches the tester's group, and the tester stops the targets in order)."""
    target = start_target(next(d for d in load_definitions() if d.name == "flask-2x"))
    try:
        for process in target.tree():
            assert os.getsid(process.pid) == os.getsid(0)
            assert os.getpgid(process.pid) != os.getpgid(0)
            group = Path(f"/proc/{process.pid}/autogroup")
            if group.exists():
                assert group.read_text() == Path("/proc/self/autogroup").read_text()
    finally:
        target.stop()


def test_refuses_a_port_something_already_listens_on() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LaunchError, match="already in use"):
            start_target(load_definitions()[0], port=port)


def test_a_server_that_dies_at_start_is_reported_with_its_log() -> None:
    broken = TargetDefinition(name="broken", app="no_such_app", local_port=0)
    with pytest.raises(LaunchError, match="broken exited"):
        start_target(broken, ready_timeout_s=20)


def test_the_downstream_mock_starts_first_and_targets_get_its_url() -> None:
    import httpx

    from labtester.target_group import running_targets
    from labtester.targets import load_downstream

    downstream = load_downstream()
    assert downstream is not None and downstream.app == "lab_fastapi"
    fastapi = [d for d in load_definitions() if d.name == "fastapi"]
    with running_targets(fastapi, downstream=downstream) as (target,):
        assert "downstream" in httpx.get(f"{target.url}/info").json()["endpoints"]
        body = httpx.get(f"{target.url}/test/downstream/20", timeout=30).json()
        assert body["downstream"]["milliseconds"] == 20


def test_a_target_stopped_early_is_not_reported_again_when_its_group_stops(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The census-only variants stop right after the census, and their group stops them again at
    the end: the second stop repeats the first's verdict, so a clean run keeps no logs."""
    from labtester.target_group import running_targets

    fastapi = [d for d in load_definitions() if d.name == "fastapi"]
    with running_targets(fastapi) as started:
        (target,) = started
        assert target.stop()
    assert target.stop() and target.unclean == ""
    assert "kept" not in capfd.readouterr().err
    assert not started.log_dir.exists()


def test_a_servers_log_tells_its_lifecycle(tmp_path: Path) -> None:
    """The launcher's own lines (started, ready, stopping, stopped with the code) and the server's
    info-level ones: a kept log never comes back empty."""
    target = start_target(next(d for d in load_definitions() if d.name == "fastapi"), log_dir=tmp_path)
    target.stop()
    lines = target.log_path.read_text().splitlines()
    ours = [line.split("labtester: fastapi ", 1)[1] for line in lines if "INFO labtester: fastapi " in line]
    assert [line.split(":")[0] for line in ours] == ["started", "ready", "stopping", "stopped"]
    assert ours[-1].startswith("stopped: exit code ")
    assert any("labtester:" not in line for line in lines), "the server logged nothing at info level"


def test_a_target_that_died_during_the_run_is_named_with_why(capfd: pytest.CaptureFixture[str]) -> None:
    from labtester.target_group import running_targets

    fastapi = [d for d in load_definitions() if d.name == "fastapi"]
    with running_targets(fastapi) as started:
        started[0].process.send_signal(signal.SIGKILL)
        started[0].process.wait(timeout=10)
    err = capfd.readouterr().err
    assert "fastapi: it exited by itself (exit code -9) before the lab stopped it" in err
    assert f"their logs are kept in {started.log_dir}" in err
    shutil.rmtree(started.log_dir)


def _lifecycle(log_dir: Path, names: list[str]) -> dict[str, list[str]]:
    """When each of the launcher's lifecycle lines was written, over every named server's log."""
    stamps: dict[str, list[str]] = {"started": [], "ready": [], "stopping": [], "stopped": []}
    for name in names:
        for line in (log_dir / f"{name}.log").read_text().splitlines():
            stamp, _, event = line.partition(f" INFO labtester: {name} ")
            if event.split(":")[0] in stamps:
                stamps[event.split(":")[0]].append(stamp)
    return stamps


def test_a_group_starts_every_process_before_it_waits_for_any(tmp_path: Path) -> None:
    """Their imports overlap, the downstream mock's too: each server's "started" line (the
    launcher's, in its log) comes before any server's "ready" line."""
    from labtester.target_group import running_targets
    from labtester.targets import load_downstream

    downstream = load_downstream()
    assert downstream is not None
    chosen = [d for d in load_definitions() if d.name in ("fastapi", "flask-1x", "granian-wsgi")]
    with running_targets(chosen, log_dir=tmp_path, downstream=downstream) as started:
        assert [t.name for t in started] == [d.name for d in chosen]
    stamps = _lifecycle(tmp_path, [downstream.name, *(d.name for d in chosen)])
    assert len(stamps["started"]) == len(stamps["ready"]) == len(chosen) + 1
    assert max(stamps["started"]) <= min(stamps["ready"])


def test_a_group_stops_every_process_before_it_waits_for_any(tmp_path: Path) -> None:
    """Their graceful shutdowns overlap: every "stopping" line (SIGTERM sent) comes before any
    "stopped" line, and each stop is clean."""
    from labtester.target_group import running_targets, stop_all

    chosen = [d for d in load_definitions() if d.name in ("fastapi", "flask-2x", "granian-wsgi")]
    with running_targets(chosen, log_dir=tmp_path) as started:
        assert stop_all(list(started)) == []
    assert all(target.stopped_cleanly for target in started)
    stamps = _lifecycle(tmp_path, [d.name for d in chosen])
    assert len(stamps["stopping"]) == len(stamps["stopped"]) == len(chosen)
    assert max(stamps["stopping"]) <= min(stamps["stopped"])


def test_a_group_signalled_once_measuring_ends_stops_clean(capfd: pytest.CaptureFixture[str]) -> None:
    """The lab signals its targets before writing the report (they shut down meanwhile); the
    group's stop at the end awaits them and judges each stop by the signal, so a target that
    ended on it is clean, not one that "exited by itself", and no logs are kept."""
    from labtester.target_group import running_targets

    fastapi = [d for d in load_definitions() if d.name == "fastapi"]
    with running_targets(fastapi) as started:
        (target,) = started
        started.signal_stop()
        target.process.wait(timeout=30)  # ended on the signal before the group's stop
    assert target.stopped_cleanly and target.unclean == ""
    assert "kept" not in capfd.readouterr().err
    assert not started.log_dir.exists()
