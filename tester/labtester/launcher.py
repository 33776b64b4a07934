"""Start targets as local processes on 127.0.0.1, wait until they answer, stop them cleanly.

Readiness polls with a deadline (no fixed sleeps; see readiness.py) and refuses a port something already
answers on, so an orphaned server can never pass for the new one. Stopping sends SIGTERM to the
server's root, then SIGKILL to every process of its tree after a grace period.

A target dies with the tester, however the tester dies (even SIGKILL): its root is started with
the parent-death signal set to SIGTERM (prctl PR_SET_PDEATHSIG, kept across exec), so the root
stops its own tree as on any SIGTERM. The kernel sends it when the *thread* that started the
target ends, so targets are started from the main thread only. Groups of targets, started and
stopped together: target_group.py.

Each server's log also holds the launcher's own lines on its lifecycle (started, ready, stopping,
stopped with its exit code), and servers log at info level, so a kept log always says what
happened. Stopping is idempotent: a target stopped early (the census-only variants, right after
the census) keeps that stop's verdict when its group stops at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import psutil

from labtester.load import raise_open_file_limit
from labtester.readiness import NotReady, wait_ready
from labtester.targets import TargetDefinition

LOCALHOST = "127.0.0.1"
# Run before the command's own program, in the started process: it sets the parent-death signal,
# gives up if the tester is already gone (nothing would send it), then execs the command.
_DIE_WITH_TESTER = """
import ctypes, os, signal, sys
if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
    raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
if os.getppid() != int(sys.argv[1]):
    sys.exit("the tester that started this is gone")
os.execv(sys.argv[2], sys.argv[2:])
"""
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
# How a server's root ends on SIGTERM: 0 (gunicorn), 128 + 15 (uvicorn), or by it.
CLEAN_EXIT_CODES = (0, 128 + signal.SIGTERM, -signal.SIGTERM)


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


def dying_with_tester(command: list[str]) -> list[str]:
    """`command`, started so that it gets SIGTERM when this process (its main thread) ends."""
    if threading.current_thread() is not threading.main_thread():
        raise LaunchError("start processes from the main thread: they would die with this one")
    return [sys.executable, "-I", "-S", "-c", _DIE_WITH_TESTER, str(os.getpid()), *command]


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex((LOCALHOST, port)) == 0


class _Stopping(NamedTuple):
    """A stop signalled and not yet awaited: the tree to wait for, as it was when signalled."""

    tree: list[psutil.Process]
    running: bool  # whether it still ran when signalled (else it had exited by itself)
    signalled_at: float  # time.monotonic()


@dataclass
class RunningTarget:
    definition: TargetDefinition
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int | None = None  # /metrics served by the server's metrics process
    own_log_dir: Path | None = None  # made for this target alone: removed when it stops cleanly
    unclean: str = ""  # why its stop was not clean, in words
    stopped_cleanly: bool | None = None  # None until its first stop; later stops repeat the verdict
    _stopping: _Stopping | None = field(default=None, repr=False)  # signalled, not yet awaited

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

    def note(self, event: str) -> None:
        """One line of the launcher's own in the server's log (opened for appending by both)."""
        with suppress(OSError), self.log_path.open("a") as log:
            now = datetime.now().isoformat(sep=" ", timespec="milliseconds")
            log.write(f"{now} INFO labtester: {self.name} {event}\n")

    def stop(self, grace_s: float = STOP_GRACE_S) -> bool:
        """SIGTERM the root; after `grace_s`, SIGKILL whatever of its tree is left. True when
        it was still running and its whole tree ended on the SIGTERM, as a server should.
        Stopped already: that stop's verdict, nothing sent."""
        self.signal_stop()
        return self.await_stop(time.monotonic() + grace_s)

    def signal_stop(self) -> None:
        """The stop's first half: SIGTERM to the root of a running target, nothing to a stopped
        one; await_stop waits for it. A group signals every target before awaiting any, so
        their graceful shutdowns overlap (target_group.stop_all)."""
        if self.stopped_cleanly is not None or self._stopping is not None:
            return
        tree = self.tree()
        running = self.process.poll() is None
        if running:
            self.note(f"stopping: SIGTERM to pid {self.process.pid}")
            self.process.send_signal(signal.SIGTERM)
        self._stopping = _Stopping(tree, running, time.monotonic())

    def await_stop(self, deadline: float) -> bool:
        """The stop's second half: wait until `deadline` (time.monotonic()) for the tree signalled
        by signal_stop, SIGKILL what is left, and judge the stop (its verdict, kept)."""
        if self.stopped_cleanly is not None:
            return self.stopped_cleanly
        if self._stopping is None:
            self.signal_stop()
        assert self._stopping is not None
        tree, running, signalled_at = self._stopping
        _, alive = psutil.wait_procs(tree, timeout=max(0.0, deadline - time.monotonic()))
        outlived = []
        for process in alive:
            with suppress(psutil.Error):
                outlived.append(f"{process.pid} {' '.join(process.cmdline()[1:3])}")
                process.kill()
        psutil.wait_procs(alive, timeout=5)
        code = self.process.wait(timeout=5)
        clean = running and not alive and code in CLEAN_EXIT_CODES
        if not running:
            self.unclean = f"it exited by itself (exit code {code}) before the lab stopped it"
        elif alive:
            waited_s = deadline - signalled_at
            self.unclean = f"{'; '.join(outlived)} still ran {waited_s:.3g} s after SIGTERM and was killed"
        elif not clean:
            self.unclean = f"it ended with exit code {code} on SIGTERM, not a clean stop"
        self.note(f"stopped: exit code {code}" + ("" if clean else f" ({self.unclean})"))
        self.stopped_cleanly = clean
        if clean and self.own_log_dir is not None:
            shutil.rmtree(self.own_log_dir, ignore_errors=True)
        return clean


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
    """Start one target on 127.0.0.1 and return once its /healthz answers."""
    return ready_target(spawn_target(definition, port, extra_env, log_dir), ready_timeout_s)


def spawn_target(
    definition: TargetDefinition,
    port: int | None = None,
    extra_env: dict[str, str] | None = None,
    log_dir: Path | None = None,
) -> RunningTarget:
    """Start one target's process on 127.0.0.1 without waiting for it (ready_target waits).

    It gets a free port for /metrics of its own (LAB_METRICS_PORT), unless `extra_env` sets one.
    """
    raise_open_file_limit()  # inherited by the server: thousands of connections need descriptors
    port = port or free_port()
    if port_in_use(port):
        raise LaunchError(f"port {port} for {definition.name} is already in use (a stale server?)")
    env = {
        "LAB_LOG_LEVEL": "info",  # the server's own start and stop lines (no access log)
        **os.environ,
        **definition.env,
        "LAB_METRICS_PORT": str(free_port(avoid=port)),
        **(extra_env or {}),
        "LAB_NAME": definition.name,
        "LAB_HOST": LOCALHOST,
        "LAB_PORT": str(port),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # each server makes its own
    own_log_dir = None if log_dir else Path(tempfile.mkdtemp(prefix="lab-logs-"))
    log_path = (log_dir or own_log_dir or Path()) / f"{definition.name}.log"
    with log_path.open("ab") as log:  # appending, as the launcher's own lines are
        process = subprocess.Popen(
            dying_with_tester(definition.command()),
            env=env,
            stdin=subprocess.DEVNULL,  # a background group reading the terminal would be stopped
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group, so Ctrl-C in a terminal reaches the tester, which stops them in
            # order; the tester's session, so the scheduler's autogroup is the tester's: a target in
            # a session of its own, a group of its own, left 10 % of the cores idle beside the local
            # client (granian WSGI's threads, 6,500/s where one group served 8,000/s).
            process_group=0,
        )
    metrics_port = int(env["LAB_METRICS_PORT"]) or None
    target = RunningTarget(definition, port, process, log_path, metrics_port, own_log_dir)
    target.note(f"started: pid {process.pid}, port {port} ({definition.shown()})")
    return target


def ready_target(target: RunningTarget, timeout_s: float = READY_TIMEOUT_S) -> RunningTarget:
    """Wait until a spawned target answers; one that does not is stopped, and LaunchError says why."""
    waited = time.monotonic()
    try:
        wait_healthy(target, timeout_s)
    except BaseException:
        target.stop(grace_s=2)
        raise
    target.note(f"ready: {target.url}/healthz answered after {time.monotonic() - waited:.1f} s of waiting")
    return target


def free_ports(count: int) -> list[int]:
    """`count` ports nothing listens on now, all different: held open together while picked."""
    with ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind((LOCALHOST, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
