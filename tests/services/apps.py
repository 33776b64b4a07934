"""Serving an app with `python -m serve team` in a configuration of the chart's `app` values, in tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from labtester.launcher import RunningTarget, start_target
from labtester.targets import DEFAULT_VALUES, REPO_ROOT, TargetDefinition

BARE_APP = Path(__file__).with_name("bare_app.py")
BARE_MODULE = "lab_bare_app"  # the name it is copied under: imported from PYTHONPATH, not tests/
CONFIGURATIONS: list[dict[str, Any]] = yaml.safe_load(DEFAULT_VALUES.read_text())["app"]["configurations"]


def configurations(interface: str) -> list[dict[str, Any]]:
    return [c for c in CONFIGURATIONS if c["interface"] == interface]


def bare_app_dir(directory: Path) -> Path:
    """A folder holding the bare app as a module of its own."""
    shutil.copy(BARE_APP, directory / f"{BARE_MODULE}.py")
    return directory


def serve_app(
    app: str, configuration: dict[str, Any], paths: list[str], pythonpath: Path = REPO_ROOT, **env: str
) -> RunningTarget:
    """`python -m serve team` serving `app` (module:attribute) in `configuration`."""
    definition, extra = app_start(app, configuration, paths, pythonpath, **env)
    return start_target(definition, extra_env=extra)


def app_start(
    app: str, configuration: dict[str, Any], paths: list[str], pythonpath: Path = REPO_ROOT, **env: str
) -> tuple[TargetDefinition, dict[str, str]]:
    """What serve_app starts (its definition and environment), for tests.conftest.started_together."""
    definition = TargetDefinition(
        name=f"app-{configuration['name']}", app="team", local_port=0, env=dict(configuration["env"])
    )
    extra = {
        "LAB_APP": app,
        "LAB_APP_PATHS": ",".join(paths),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")])),
        **env,
    }
    return definition, extra


def serving_pids(census: dict[str, Any]) -> set[int]:
    """The processes that answer requests: the workers, or the root where it serves alone."""
    workers = {p["pid"] for p in census["processes"] if p["role"] == "worker"}
    return workers or {census["root_pid"]}
