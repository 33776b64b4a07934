"""How a check says what it checks, fails, waits for a condition, and runs a step of run-lab's."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from lab_release.cluster import Cluster
from lab_release.waiting import wait_ready

from .config import POLL_S, SETTLE_TIMEOUT_S


def step(message: str) -> None:
    print(f"\n== {message}", flush=True)


class Fail(Exception):
    """A check that did not hold."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Fail(message)


def poll(what: str, probe: Callable[[], Any], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise Fail(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(POLL_S)


def run_lab_step(what: str, step_function: Callable[..., Any], *args: Any) -> Any:
    """A step of run-lab's own code: its refusal (SystemExit) is this check's failure."""
    try:
        return step_function(*args)
    except SystemExit as refusal:
        raise Fail(f"{what}: {refusal}") from None


def settle(cluster: Cluster, job: str | None) -> None:
    """run-lab's own wait: every Deployment rolled out, the tester's pod running or done."""
    run_lab_step("waiting for the release", wait_ready, cluster, job, lambda _: False, SETTLE_TIMEOUT_S)
