"""Start and stop the metrics process (workload.metrics_server) from the server's root process.

The root binds the metrics port itself: a taken port ends the server's start with a clear message,
and the port listens (early scrapes wait in its backlog) before the server starts. Only the
metrics process gets the socket (pass_fds); the root closes its own copy at once, so no gunicorn
worker or uvicorn child, forked or spawned later, ever holds the port.

Imports nothing of prometheus_client: the gunicorn arbiter forks its workers without it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from workload.server import remove_metrics_dir

METRICS_SERVER_MODULE = "workload.metrics_server"  # also how the census recognises the process
STOP_TIMEOUT_S = 5.0


class MetricsProcess:
    """A started metrics process; `close()` stops it."""

    def __init__(self, listener: socket.socket, reload: bool, deadline_s: float) -> None:
        self.port = int(listener.getsockname()[1])
        fd = listener.fileno()
        argv = [sys.executable, "-m", METRICS_SERVER_MODULE, str(fd), f"--deadline-s={deadline_s}"]
        argv += ["--reload"] if reload else []
        # From the root's main thread: the child's PR_SET_PDEATHSIG follows the thread that forked.
        self.process = subprocess.Popen(argv, pass_fds=[fd])

    def close(self) -> None:
        """Terminate it and wait. gunicorn's arbiter reaps every child it sees exit (waitpid(-1))
        and ignores the ones that are not its workers; if it reaped this one first, Popen finds no
        such child, takes it as exited and signals nothing."""
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_metrics_process(host: str, port: int, reload: bool, deadline_s: float) -> MetricsProcess | None:
    """Serve /metrics on `port` from a process of its own (0: no metrics port, None back), each
    connection within `deadline_s` (LAB_METRICS_DEADLINE_S). A taken port ends the server's start
    with a message, rather than a server that cannot be scraped."""
    if not port:
        return None
    try:
        listener = socket.create_server((host, port))
    except OSError as error:
        raise SystemExit(f"LAB_METRICS_PORT={port}: cannot listen on {host}:{port}: {error}") from None
    with listener:  # the root's copy: closed once the metrics process has its own
        return MetricsProcess(listener, reload, deadline_s)


@contextmanager
def metrics_served(host: str, port: int, reload: bool, deadline_s: float) -> Iterator[MetricsProcess | None]:
    """The metrics process for as long as the server runs (entrypoints that run their server in
    their own call); after it, the process stopped and the metrics directory removed."""
    metrics_process = start_metrics_process(host, port, reload, deadline_s)
    try:
        yield metrics_process
    finally:
        if metrics_process is not None:
            metrics_process.close()
        remove_metrics_dir()
