"""Fixtures that start real servers on 127.0.0.1 (never mocks), once per module."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from labtester.launcher import RunningTarget, start_target
from labtester.targets import TargetDefinition, load_definitions

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


@pytest.fixture(scope="module", params=MEASURED)
def target(request: pytest.FixtureRequest, start: StartTarget) -> RunningTarget:
    """Each measured configuration in turn (uvicorn 1 worker, gunicorn 1x, gunicorn 2x)."""
    return start(request.param)


@pytest.fixture
def client(target: RunningTarget) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=30) as http:
        yield http
