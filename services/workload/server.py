"""What every target's entrypoint does before it hands over to its server.

The root process computes the derived settings once and exports them, so every process of the
server's tree (workers, reloader children, pool processes) agrees on them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from workload.lifetime import ROOT_PID_ENV
from workload.limits import shared_slots
from workload.settings import TargetSettings

ROOT_SERVES_ENV = "LAB_ROOT_SERVES"  # "1" when the root process itself handles requests
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


# POSIX semaphores (glibc's sem_open) and multiprocessing's shared-memory arenas live here, and
# nowhere else: the in-flight counter's lock, the offload pool's queues, uvicorn's children. The
# container runtime mounts it writable (a tmpfs) even over a read-only root filesystem.
SHARED_MEMORY_DIR = "/dev/shm"


def prepare_environment(settings: TargetSettings, *, root_serves: bool) -> None:
    """Export the iteration cap, the tree's root, its temporary directory and a fresh metrics
    directory.

    Must run before prometheus_client is imported anywhere in the tree: it picks its
    multiprocess value class from the environment at import time.
    """
    os.environ["LAB_MAX_ITERATIONS"] = str(settings.resolved_max_iterations())
    os.environ[ROOT_PID_ENV] = str(os.getpid())
    os.environ[ROOT_SERVES_ENV] = "1" if root_serves else "0"
    # Every temporary file of the tree (tempfile's, multiprocessing's) goes to tmp_dir, explicitly.
    settings.tmp_dir.mkdir(parents=True, exist_ok=True)
    os.environ["TMPDIR"] = tempfile.tempdir = str(settings.tmp_dir)
    _reset_metrics_dir(settings.tmp_dir)
    shared_slots()  # before any fork, so forked workers share one in-flight count


def _reset_metrics_dir(tmp_dir: Path) -> None:
    """Use the configured directory (wiped: stale files would add old counts) or make one in
    `tmp_dir`."""
    configured = os.environ.get(MULTIPROC_ENV)
    if configured:
        shutil.rmtree(configured, ignore_errors=True)
        Path(configured).mkdir(parents=True, exist_ok=True)
    else:
        os.environ[MULTIPROC_ENV] = tempfile.mkdtemp(prefix="lab-metrics-", dir=tmp_dir)


def written_paths(settings: TargetSettings) -> list[str]:
    """Every directory the server's tree writes in (/info `writes`): each must be writable where
    it runs, whatever else is read-only."""
    return [str(settings.tmp_dir), os.environ[MULTIPROC_ENV], SHARED_MEMORY_DIR]


def remove_metrics_dir() -> None:
    configured = os.environ.get(MULTIPROC_ENV)
    if configured:
        shutil.rmtree(configured, ignore_errors=True)
