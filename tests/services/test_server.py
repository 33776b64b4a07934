"""Every path a server's tree writes is one /info lists, held against the real processes: the
session's targets (`configured`), each told a temporary folder of its own, once other tests ran
their work."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import psutil
import pytest

from labtester.launcher import RunningTarget
from tests.conftest import MEASURED, Configured, configured_tmp_dir

# Read-write open flags (O_WRONLY | O_RDWR); fdinfo shows the flags in octal.
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR
STDIO = {0, 1, 2}  # the caller's (the launcher's log file, a container's pipes), not the server's


def written_files(process: psutil.Process) -> set[str]:
    """Regular files the process has open for writing, and files it maps shared and writable."""
    proc = Path(f"/proc/{process.pid}")
    found = set()
    for fd in proc.joinpath("fd").iterdir():
        if int(fd.name) in STDIO:
            continue
        try:
            target = os.readlink(fd)
            flags = int(proc.joinpath("fdinfo", fd.name).read_text().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError):
            continue  # closed meanwhile
        if target.startswith("/") and flags & WRITE_FLAGS:
            found.add(target.removesuffix(" (deleted)"))
    for line in proc.joinpath("maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[1][1] == "w" and fields[1][3] == "s" and fields[5].startswith("/"):
            found.add(fields[5].removesuffix(" (deleted)"))
    return found


def exercise(target: RunningTarget) -> None:
    """Whatever makes a server write: work, its pools, both /metrics."""
    endpoints = httpx.get(f"{target.url}/info").json()["endpoints"]
    for name in ("sync-cpubound", "offload-cpubound", "thread-cpubound"):
        if name in endpoints:
            assert httpx.get(f"{target.url}/test/{name}/2", timeout=30).status_code == 200
    assert httpx.get(f"{target.url}/metrics").status_code == 200
    assert httpx.get(target.metrics_url or "").status_code == 200


# Every measured target, and uvicorn's spawned workers (census only).
@pytest.mark.parametrize("name", [*MEASURED, "fastapi-2workers"])
def test_every_file_the_tree_writes_is_in_a_listed_path(
    configured: Configured, tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    tmp_dir = configured_tmp_dir(tmp_path_factory, name)
    target = configured(name)
    info = httpx.get(f"{target.url}/info").json()
    writes = info["writes"]
    assert writes[0] == str(tmp_dir) and writes[1].startswith(f"{tmp_dir}/")
    exercise(target)

    written = {path for process in target.tree() for path in written_files(process)}
    outside = {path for path in written if not any(path.startswith(f"{w}/") for w in writes)}
    assert not outside, (outside, writes)
    # What each listed path is there for, seen in the live tree.
    metrics = [path for path in written if path.startswith(f"{writes[1]}/")]
    assert metrics, written  # prometheus_client's multiprocess files
    if info["server"] == "gunicorn":  # each worker's heartbeat file, unlinked and kept open
        heartbeats = [path for path in written if path.startswith(f"{tmp_dir}/wgunicorn-")]
        assert len(heartbeats) == info["workers"], written
