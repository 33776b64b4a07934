"""A team's app on 127.0.0.1: checked before anything starts, then served in every configuration of
its interface (the chart's `app.configurations`), each told the app, its paths and the downstream.

The app is imported from the working directory or PYTHONPATH, so the working directory goes on
the servers' PYTHONPATH. A configuration that does not start is recorded with its log's tail and
the others are measured: one server that cannot run the app is a finding, not the end of the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from labtester.launcher import LaunchError, RunningTarget, start_target
from labtester.targets import APP_TARGET_MODULE, TargetDefinition

CHECK_TIMEOUT_S = 120  # importing an app can take a while (its framework, its data)


class AppError(RuntimeError):
    """The app cannot be served: one line that names the problem."""


def app_env(app: str, paths: list[str]) -> dict[str, str]:
    """What every configuration of the app is told, beside its own server settings."""
    python_path = [os.getcwd(), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {"LAB_APP": app, "LAB_APP_PATHS": ",".join(paths), "PYTHONPATH": os.pathsep.join(python_path)}


def check_app(app: str, paths: list[str]) -> str:
    """`python -m app_target check`: the app's interface (asgi, wsgi), or AppError with its line."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", APP_TARGET_MODULE, "check"],
            env={**os.environ, **app_env(app, paths)},
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise AppError(f"importing {app} took more than {CHECK_TIMEOUT_S} s") from None
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    if done.returncode != 0:
        said = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "")
        raise AppError(said.removeprefix("error:").strip() or f"the app check of {app} failed")
    try:
        interface = json.loads(done.stdout.strip().splitlines()[-1])["interface"]
    except (ValueError, IndexError, KeyError, TypeError):
        raise AppError(f"the app check of {app} said {done.stdout.strip()!r}, not its interface") from None
    return str(interface)


@dataclass
class Launched:
    started: list[RunningTarget] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # name: why it did not start


@contextmanager
def running_configurations(
    definitions: list[TargetDefinition],
    app: str,
    paths: list[str],
    downstream: TargetDefinition | None,
    log_dir: Path | None = None,
) -> Iterator[Launched]:
    """The downstream mock, then each configuration; all stopped on exit. The mock must start (the
    app's paths may call it); a configuration that does not is recorded and skipped."""
    with ExitStack() as stack:
        launched, env = Launched(), app_env(app, paths)
        if downstream is not None:
            mock = start_target(downstream, log_dir=log_dir)
            stack.callback(mock.stop)
            env["LAB_DOWNSTREAM_URL"] = mock.url
        for definition in definitions:
            try:
                target = start_target(definition, extra_env=env, log_dir=log_dir)
            except LaunchError as error:
                launched.failed[definition.name] = _one_line(str(error))
                continue
            stack.callback(target.stop)
            launched.started.append(target)
        yield launched


def _one_line(error: str, tail: int = 3) -> str:
    """A launch error on one line: what happened, then the last lines its server logged."""
    first, *log = error.splitlines()
    logged = [line.strip() for line in log if line.strip()][-tail:]
    return f"{first} {' | '.join(logged)}".strip()
