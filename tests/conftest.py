"""Fixtures that start real servers on 127.0.0.1 (never mocks): once per session where tests only
read them, once per module where a module configures its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from labtester.launcher import RunningTarget, start_target
from labtester.target_group import stop_all
from labtester.targets import TargetDefinition, load_definitions, load_downstream

DEFINITIONS = {definition.name: definition for definition in load_definitions()}
MEASURED = [name for name, definition in DEFINITIONS.items() if definition.measure]

StartTarget = Callable[..., RunningTarget]
Configured = Callable[[str], RunningTarget]


def definition(name: str) -> TargetDefinition:
    return DEFINITIONS[name]


def configured_tmp_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The LAB_TMP_DIR `configured` gives a target: a folder of its own, where every file its
    tree makes goes (tests/services/test_server.py holds the tree to it)."""
    return tmp_path_factory.getbasetemp() / "configured" / name


@pytest.fixture(scope="module")
def start() -> Iterator[StartTarget]:
    """Start targets by name (free port, optional env overrides); all stopped after the module."""
    started: list[RunningTarget] = []

    def _start(name: str, **env: str) -> RunningTarget:
        target = start_target(DEFINITIONS[name], extra_env=env)
        started.append(target)
        return target

    yield _start
    stop_all(started)  # together: their graceful shutdowns overlap


@pytest.fixture(scope="session")
def downstream() -> Iterator[RunningTarget]:
    """The chart's downstream mock, for the targets' downstream and fan-out calls: it only answers,
    so one serves the whole session."""
    mock = load_downstream()
    assert mock is not None, "the chart's values enable no downstream mock"
    running = start_target(mock)
    yield running
    running.stop()


@pytest.fixture(scope="session")
def configured(downstream: RunningTarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Configured]:
    """Targets by name as the chart's values configure them, pointed at the downstream mock, as
    the lab runs them (each with a temporary folder of its own: configured_tmp_dir): each started
    at its first use and shared, for the whole session, by every test that only sends it requests
    and reads what it answers (a start costs 3-6 s of CPU). A test that reconfigures a target,
    kills its processes or counts what it did since it started starts its own (`start`)."""
    running: dict[str, RunningTarget] = {}

    def _configured(name: str) -> RunningTarget:
        if name not in running:
            env = {
                "LAB_DOWNSTREAM_URL": downstream.url,
                "LAB_TMP_DIR": str(configured_tmp_dir(tmp_path_factory, name)),
            }
            running[name] = start_target(DEFINITIONS[name], extra_env=env)
        return running[name]

    yield _configured
    stop_all(list(running.values()))


@pytest.fixture(scope="session", params=MEASURED)
def target(request: pytest.FixtureRequest, configured: Configured) -> RunningTarget:
    """Each measured target of the chart's values in turn, as configured (`configured`)."""
    return configured(request.param)


@pytest.fixture
def client(target: RunningTarget) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=30) as http:
        yield http
