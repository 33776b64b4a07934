"""Fixtures that start real servers on 127.0.0.1 (never mocks), once per module."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from labtester.launcher import RunningTarget, start_target
from labtester.targets import TargetDefinition, load_definitions, load_downstream

DEFINITIONS = {definition.name: definition for definition in load_definitions()}
MEASURED = [name for name, definition in DEFINITIONS.items() if definition.measure]

StartTarget = Callable[..., RunningTarget]


def definition(name: str) -> TargetDefinition:
    return DEFINITIONS[name]


@pytest.fixture(scope="module")
def start() -> Iterator[StartTarget]:
    """Start targets by name (free port, optional env overrides); all stopped after the module."""
    started: list[RunningTarget] = []

    def _start(name: str, **env: str) -> RunningTarget:
        target = start_target(DEFINITIONS[name], extra_env=env)
        started.append(target)
        return target

    yield _start
    for target in started:
        target.stop()


@pytest.fixture(scope="module")
def downstream() -> Iterator[RunningTarget]:
    """The chart's downstream mock, for the targets' downstream and fan-out calls."""
    mock = load_downstream()
    assert mock is not None, "the chart's values enable no downstream mock"
    running = start_target(mock)
    yield running
    running.stop()


@pytest.fixture(scope="module", params=MEASURED)
def target(request: pytest.FixtureRequest, start: StartTarget, downstream: RunningTarget) -> RunningTarget:
    """Each measured target of the chart's values in turn, pointed at the downstream mock."""
    return start(request.param, LAB_DOWNSTREAM_URL=downstream.url)


@pytest.fixture
def client(target: RunningTarget) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=30) as http:
        yield http
