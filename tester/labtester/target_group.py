"""A group of targets started together and stopped together (launcher.py starts each one).

Every process starts at once and only then is each waited for, so their imports overlap; the
downstream mock, if any, starts first and every target gets its URL. The group logs into one
folder, removed when every target stopped cleanly and the caller kept nothing; otherwise one line
says where it is and why, in words a newcomer can act on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

from labtester.launcher import LaunchError, RunningTarget, free_ports, ready_target, spawn_target
from labtester.targets import TargetDefinition


def _stopped(server: RunningTarget) -> bool:
    """Stop it; a stop that fails is no reason to leave the others running."""
    try:
        return server.stop()
    except (subprocess.TimeoutExpired, psutil.Error, OSError):
        return False


class StartedTargets(list[RunningTarget]):
    """The targets a group started, in order; their logs are kept if `keep_logs` is set. `failed`:
    those that did not start (with `keep_going`), each with why, on one line."""

    def __init__(self, log_dir: Path) -> None:
        super().__init__()
        self.log_dir = log_dir
        self.keep_logs = False
        self.failed: dict[str, str] = {}
        self.extra_env: dict[str, str] = {}  # what every target was told besides its own env


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
    servers: list[RunningTarget] = []
    failed = True
    try:
        _start_all(started, servers, definitions, ports or {}, extra_env, downstream, keep_going)
        yield started
        failed = False
    finally:
        unclean = [
            f"{server.name}: {server.unclean or 'its stop failed'}"
            for server in reversed(servers)
            if not _stopped(server)
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

    if downstream is not None:
        mock = spawn(downstream, None)
        extra_env = {**(extra_env or {}), "LAB_DOWNSTREAM_URL": mock.url}
        ready_target(mock)
    started.extra_env = dict(extra_env or {})
    spawned: list[RunningTarget] = []
    for definition in definitions:
        try:
            spawned.append(spawn(definition, extra_env))
        except LaunchError as error:
            if not keep_going:
                raise
            started.failed[definition.name] = one_line(error)
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
