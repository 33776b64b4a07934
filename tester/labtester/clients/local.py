"""`--clients P` on one machine: P - 1 more client processes beside this one (client 0), each
`python -m labtester run` as a pod of the Indexed Job runs it, with its index, the barrier's
address and the run's token in its environment (a child's environment, readable by this user alone).

They die with this process as the targets do (launcher.dying_with_tester: Linux's parent-death
signal), so a tester killed with SIGKILL leaves no client behind; and a client that loses the
barrier stops by itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from labtester.launcher import dying_with_tester
from labtester.settings import LabSettings

STOP_GRACE_S = 10.0


def client_environment(settings: LabSettings, index: int) -> dict[str, str]:
    """The environment of client `index`: what a pod of the Indexed Job gets."""
    assert settings.barrier is not None and settings.barrier_token is not None
    return {
        **os.environ,
        "TESTER_CLIENTS": str(settings.clients),
        "TESTER_CLIENT_INDEX": str(index),
        "TESTER_BARRIER": settings.barrier,
        "TESTER_BARRIER_TOKEN": settings.barrier_token.get_secret_value(),
        "TESTER_OUTPUT_DIR": str(settings.output_dir),
    }


@contextmanager
def local_clients(settings: LabSettings, log_dir: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Clients 1..P-1 as processes until the block ends; then each has ended or is stopped."""
    log_dir.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []
    try:
        for index in range(1, settings.clients):
            with (log_dir / f"client-{index}.log").open("wb") as log:
                started.append(
                    subprocess.Popen(
                        dying_with_tester([sys.executable, "-m", "labtester", "run"]),
                        env=client_environment(settings, index),
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                    )
                )
        yield started
    finally:
        for process in started:
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_GRACE_S)
            if process.poll() is None:
                process.kill()
                process.wait()
