"""Where the check keeps its files, the names it gives things, how long it waits."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "concurrency-lab"
LOG_DIR = REPO_ROOT / "build" / "cluster-check"
# Certificates, token and etcd's data: removed at the end, and at the next start should a SIGKILL
# have left them (the components themselves die with this process: see die_with_parent).
STATE_DIR = LOG_DIR / "state"
LOCALHOST = "127.0.0.1"
RELEASE = "lab"
CONTEXT = "cluster-check"
START_TIMEOUT_S = 120
SETTLE_TIMEOUT_S = 180
POLL_S = 0.5


def versions() -> dict[str, str]:
    lines = (REPO_ROOT / "platform" / "versions.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
