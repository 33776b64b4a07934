"""A cgroup with a small CPU quota, to see throttling on real servers (root, v1 or v2 cgroups)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

QUOTA_PERIOD_US = 100_000
QUOTA_CPUS = 0.2


@dataclass(frozen=True)
class QuotaCgroup:
    directory: Path
    parent: Path
    source: str  # "cgroup v1" or "cgroup v2", as workload.cores names them

    def move(self, processes: list[psutil.Process]) -> None:
        for process in processes:
            (self.directory / "cgroup.procs").write_text(str(process.pid))


def _own_cpu_group() -> tuple[Path, str] | None:
    """The directory of this process's own cgroup that has the CPU controller, and its version."""
    mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        own["v2" if hierarchy == "0" else controllers] = path.lstrip("/")
    for _, mountpoint, fstype, options, *_ in mounts:
        if fstype == "cgroup" and "cpu" in options.split(","):
            controllers = next((c for c in own if "cpu" in c.split(",")), None)
            if controllers is not None:
                return Path(mountpoint) / own[controllers], "cgroup v1"
        if fstype == "cgroup2" and "v2" in own:
            directory = Path(mountpoint) / own["v2"]
            if "cpu" in (directory / "cgroup.controllers").read_text().split():
                return directory, "cgroup v2"
    return None


@pytest.fixture
def quota_cgroup() -> Iterator[QuotaCgroup]:
    """A new cgroup limited to QUOTA_CPUS; what is still in it at the end goes back to the parent."""
    found = _own_cpu_group()
    if os.geteuid() != 0 or found is None:
        pytest.skip("needs root and a cgroup CPU controller this process may create groups under")
    parent, source = found
    directory = parent / f"lab-test-{uuid.uuid4().hex[:8]}"
    quota = int(QUOTA_CPUS * QUOTA_PERIOD_US)
    try:
        directory.mkdir()
        if source == "cgroup v2":
            (parent / "cgroup.subtree_control").write_text("+cpu")
            (directory / "cpu.max").write_text(f"{quota} {QUOTA_PERIOD_US}")
        else:
            (directory / "cpu.cfs_period_us").write_text(str(QUOTA_PERIOD_US))
            (directory / "cpu.cfs_quota_us").write_text(str(quota))
    except OSError as error:
        if directory.exists():
            directory.rmdir()
        pytest.skip(f"cannot make a cgroup with a CPU quota under {parent}: {error}")
    try:
        yield QuotaCgroup(directory, parent, source)
    finally:
        for pid in (directory / "cgroup.procs").read_text().split():
            with suppress(OSError):  # exited meanwhile
                (parent / "cgroup.procs").write_text(pid)
        directory.rmdir()
