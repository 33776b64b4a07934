"""A group of targets started together and stopped together (launcher.py starts each one).

Every process starts at once and only then is each waited for, so their imports overlap; the
downstream mock, if any, is spawned first, every target gets its URL, and it is the first waited
for (a target only calls it when a request asks). They stop together too: SIGTERM to all, then
each awaited. The group logs into one folder, removed when every target stopped cleanly and the
caller kept nothing; otherwise one line says where it is and why, in words a newcomer can act on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil

from labtester.launcher import (
    STOP_GRACE_S,
    LaunchError,
    RunningTarget,
    free_ports,
    ready_target,
    spawn_target,
)
from labtester.targets import TargetDefinition


def stop_all(servers: list[RunningTarget], grace_s: float = STOP_GRACE_S) -> list[RunningTarget]:
    """Stop them together: SIGTERM to each, then each awaited against one deadline, so their
    graceful shutdowns overlap (one by one, a group of nine took 12 to 16 s on 2 cores; together,
    the slowest one's). Returns those that did not stop cleanly; a stop that fails is one of
    them, and no reason to leave the others running."""
    for server in servers:
        with suppress(psutil.Error, OSError):
            server.signal_stop()  # nothing sent to one signalled already (StartedTargets.signal_stop)
    deadline = time.monotonic() + grace_s
    unclean = []
    for server in servers:
        try:
            clean = server.await_stop(deadline)
        except (subprocess.TimeoutExpired, psutil.Error, OSError):
            clean = False
        if not clean:
            unclean.append(server)
    return unclean


class StartedTargets(list[RunningTarget]):
    """The targets a group started, in order; their logs are kept if `keep_logs` is set. `failed`:
    those that did not start (with `keep_going`), each with why, on one line."""

    def __init__(self, log_dir: Path) -> None:
        super().__init__()
        self.log_dir = log_dir
        self.keep_logs = False
        self.failed: dict[str, str] = {}
        self.extra_env: dict[str, str] = {}  # what every target was told besides its own env
        self.processes: list[RunningTarget] = []  # every process started (the mock too), to stop

    def signal_stop(self) -> None:
        """Begin stopping every process once nothing more is measured: the report is written
        while they shut down, and the group's stop at the end awaits them."""
        for server in self.processes:
            with suppress(psutil.Error, OSError):
                server.signal_stop()


def one_line(error: LaunchError, tail: int = 3) -> str:
    """A launch error on one line: what happened, then the last lines its server logged."""
    first, *log = str(error).splitlines() or [""]
    logged = [line.strip() for line in log if line.strip()][-tail:]
    return f"{first} {' | '.join(logged)}".strip()


@contextmanager
def running_targets(
    definitions: list[TargetDefinition],
    ports: dict[str, int] | None = None,
    extra_env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    downstream: TargetDefinition | None = None,
    keep_going: bool = False,
) -> Iterator[StartedTargets]:
    """Start every definition (on its given port, or a free one) and stop them all on exit.

    With `downstream`, that mock service starts first and every target gets its URL. Their logs
    go to `log_dir`, else to a folder of their own that is removed once every target stopped
    cleanly, unless the block raised or set `keep_logs` (a failed run): then it says where it is.
    With `keep_going`, a target that does not start is recorded in `failed` and the others start.
    """
    started = StartedTargets(log_dir or Path(tempfile.mkdtemp(prefix="lab-logs-")))
    servers = started.processes
    failed = True
    try:
        _start_all(started, servers, definitions, ports or {}, extra_env, downstream, keep_going)
        yield started
        failed = False
    finally:
        unclean = [
            f"{server.name}: {server.unclean or 'its stop failed'}" for server in stop_all(servers[::-1])
        ]
        if log_dir is None:
            why = kept_logs_reason(failed, started.keep_logs, unclean)
            if why:
                print(f"{why}; their logs are kept in {started.log_dir}", file=sys.stderr)
            else:
                shutil.rmtree(started.log_dir, ignore_errors=True)


def _start_all(
    started: StartedTargets,
    servers: list[RunningTarget],
    definitions: list[TargetDefinition],
    ports: dict[str, int],
    extra_env: dict[str, str] | None,
    downstream: TargetDefinition | None,
    keep_going: bool,
) -> None:
    """Every process starts at once and only then is each waited for: their imports overlap. The
    ports (the server's and its metrics') are picked together, so two servers not listening yet
    never get the same one. `servers`: every process started, to stop; `started`: those ready."""
    picked = iter(free_ports(2 * (len(definitions) + 1)))

    def spawn(definition: TargetDefinition, env: dict[str, str] | None) -> RunningTarget:
        port, metrics = ports.get(definition.name) or next(picked), next(picked)
        env = {"LAB_METRICS_PORT": str(metrics), **(env or {})}
        servers.append(spawn_target(definition, port, env, started.log_dir))
        return servers[-1]

    spawned: list[RunningTarget] = []
    mock = None if downstream is None else spawn(downstream, None)
    if mock is not None:  # waited for with the others: its wait alone took 6 s of a loaded machine
        extra_env = {**(extra_env or {}), "LAB_DOWNSTREAM_URL": mock.url}
    started.extra_env = dict(extra_env or {})
    for definition in definitions:
        try:
            spawned.append(spawn(definition, extra_env))
        except LaunchError as error:
            if not keep_going:
                raise
            started.failed[definition.name] = one_line(error)
    if mock is not None:
        ready_target(mock)  # the targets' requests may call it: no target is ready without it
    for target in spawned:
        try:
            started.append(ready_target(target))
        except LaunchError as error:
            servers.remove(target)  # stopped already; its failure is said here, not at the end
            if not keep_going:
                raise
            started.failed[target.name] = one_line(error)


def kept_logs_reason(failed: bool, failed_checks: bool, unclean: list[str]) -> str:
    """Why the targets' logs are kept, in words a newcomer can act on; "" when they are not."""
    reasons = []
    if failed:
        reasons.append("the run ended early (see above)")
    elif failed_checks:
        reasons.append("the run failed checks (above)")
    if unclean:
        reasons.append(
            "a target did not stop cleanly on SIGTERM, as a server must to be replaced safely: "
            + "; ".join(unclean)
        )
    return "; ".join(reasons)
