"""Every path a target serves, in one place: the control paths /info lists under "control", and
the work endpoints' path templates (`{parameter}`, as FastAPI writes them and /info lists them)."""

from __future__ import annotations

HEALTH = "/healthz"
INFO = "/info"
CALIBRATE = "/test/calibrate"  # query: samples
CENSUS = "/test/resmon"
METRICS = "/metrics"
CONTROL = {"health": HEALTH, "info": INFO, "calibrate": CALIBRATE, "census": CENSUS, "metrics": METRICS}

WORK_PREFIX = "/test/"
MIXED = "/test/mixed"  # query: cpu_ms, io_ms, splits
FAN_OUT = "/test/fan-out"  # query: k, wait_ms, call_ms


def cpu_path(name: str) -> str:
    return f"{WORK_PREFIX}{name}/{{iterations}}"


def io_path(name: str) -> str:
    return f"{WORK_PREFIX}{name}/{{milliseconds}}"
