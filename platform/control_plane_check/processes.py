"""The components this check starts: each in its own log, stopped in reverse order, and killed by
the kernel should this process die."""

from __future__ import annotations

import ctypes
import signal
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .checking import Fail
from .config import LOCALHOST

PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCALHOST, 0))
        return int(sock.getsockname()[1])


def die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM when this check's process dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Processes:
    """Components started in order, stopped in reverse; each one's output in its own log."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, command: Sequence[str | Path]) -> subprocess.Popen[bytes]:
        with (self.log_dir / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                [str(arg) for arg in command],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C reaches this check, which stops them in order
                preexec_fn=die_with_parent,
            )
        self.running.append((name, process))
        return process

    def alive(self) -> None:
        for name, process in self.running:
            if process.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_text(errors="replace")[-2000:]
                raise Fail(f"{name} exited ({process.returncode}):\n{tail}")

    def stop_all(self) -> None:
        for name, process in reversed(self.running):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    print(f"{name} ignored SIGTERM: killed", flush=True)
                    process.kill()
                    process.wait()
        self.running.clear()
