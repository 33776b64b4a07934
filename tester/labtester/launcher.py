"""Start targets as local processes on 127.0.0.1, wait until they answer, stop them cleanly.

Readiness polls with a deadline (no fixed sleeps; see readiness.py) and refuses a port something already
answers on, so an orphaned server can never pass for the new one. Stopping sends SIGTERM to the
server's root, then SIGKILL to every process of its tree after a grace period.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psutil

from labtester.loadclient import raise_open_file_limit
from labtester.readiness import NotReady, wait_ready
from labtester.targets import TargetDefinition

LOCALHOST = "127.0.0.1"
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0


class LaunchError(RuntimeError):
    pass


def free_port(avoid: int | None = None) -> int:
    """A port nothing listens on now (never `avoid`, the one already picked for the same server)."""
    while True:
        with socket.socket() as sock:
            sock.bind((LOCALHOST, 0))
            port = int(sock.getsockname()[1])
        if port != avoid:
            return port


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex((LOCALHOST, port)) == 0


@dataclass
class RunningTarget:
    definition: TargetDefinition
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int | None = None  # /metrics served by the server's metrics process

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def url(self) -> str:
        return f"http://{LOCALHOST}:{self.port}"

    @property
    def metrics_url(self) -> str | None:
        return f"http://{LOCALHOST}:{self.metrics_port}/metrics" if self.metrics_port else None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM the root; after `grace_s`, SIGKILL whatever of its tree is left."""
        tree = self.tree()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, alive = psutil.wait_procs(tree, timeout=grace_s)
        for process in alive:
            with suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(alive, timeout=5)
        self.process.wait(timeout=5)


def wait_healthy(target: RunningTarget, timeout_s: float = READY_TIMEOUT_S) -> None:
    try:
        wait_ready(target.url, timeout_s, still_running=lambda: target.process.poll() is None)
    except NotReady as error:
        raise LaunchError(f"{target.name} {error}:\n{target.log_tail()}") from None


def start_target(
    definition: TargetDefinition,
    port: int | None = None,
    extra_env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> RunningTarget:
    """Start one target on 127.0.0.1 and return once its /healthz answers.

    It gets a free port for /metrics of its own (LAB_METRICS_PORT), unless `extra_env` sets one.
    """
    raise_open_file_limit()  # inherited by the server: thousands of connections need descriptors
    port = port or free_port()
    if port_in_use(port):
        raise LaunchError(f"port {port} for {definition.name} is already in use (a stale server?)")
    env = {
        **os.environ,
        **definition.env,
        "LAB_METRICS_PORT": str(free_port(avoid=port)),
        **(extra_env or {}),
        "LAB_NAME": definition.name,
        "LAB_HOST": LOCALHOST,
        "LAB_PORT": str(port),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # each server makes its own
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="lab-logs-"))
    log_path = log_dir / f"{definition.name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            definition.command(), env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    target = RunningTarget(definition, port, process, log_path, int(env["LAB_METRICS_PORT"]) or None)
    try:
        wait_healthy(target, ready_timeout_s)
    except BaseException:
        target.stop(grace_s=2)
        raise
    return target


@contextmanager
def running_targets(
    definitions: list[TargetDefinition],
    ports: dict[str, int] | None = None,
    extra_env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    downstream: TargetDefinition | None = None,
) -> Iterator[list[RunningTarget]]:
    """Start every definition (on its given port, or a free one) and stop them all on exit.

    With `downstream`, that mock service starts first and every target gets its URL.
    """
    with ExitStack() as stack:
        started = []
        if downstream is not None:
            mock = start_target(downstream, (ports or {}).get(downstream.name), None, log_dir)
            stack.callback(mock.stop)
            extra_env = {**(extra_env or {}), "LAB_DOWNSTREAM_URL": mock.url}
        for definition in definitions:
            target = start_target(definition, (ports or {}).get(definition.name), extra_env, log_dir)
            stack.callback(target.stop)
            started.append(target)
        yield started
