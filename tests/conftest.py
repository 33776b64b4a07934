"""Fixtures that start real servers on 127.0.0.1 (never mocks): once per session where tests only
read them, once per module where a module configures its own; several at once where a test or a
module needs several (`started_together`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from labtester.launcher import RunningTarget, ready_target, spawn_target, start_target
from labtester.target_group import stop_all
from labtester.targets import TargetDefinition, load_definitions, load_downstream

DEFINITIONS = {definition.name: definition for definition in load_definitions()}
MEASURED = [name for name, definition in DEFINITIONS.items() if definition.measure]
# Starts in flight at once: enough to keep two cores busy, few enough that each gets through its
# ready timeout on a loaded machine.
STARTS_AT_ONCE = 3


def definition(name: str) -> TargetDefinition:
    return DEFINITIONS[name]


def started_together(starts: list[tuple[TargetDefinition, dict[str, str]]]) -> list[RunningTarget]:
    """Each (definition, environment) started, STARTS_AT_ONCE spawned before the first is awaited:
    a start is mostly one process importing on one core, so on two cores the starts overlap (four
    targets at load 9: 6.7-12.3 s one after another, 5.3-6.5 s together, the same CPU). If one
    fails, none is left running."""
    spawned: list[RunningTarget] = []
    try:
        for target_definition, env in starts:
            if len(spawned) >= STARTS_AT_ONCE:
                ready_target(spawned[len(spawned) - STARTS_AT_ONCE])
            spawned.append(spawn_target(target_definition, extra_env=env))
        for target in spawned[-STARTS_AT_ONCE:]:
            ready_target(target)
        return spawned
    except BaseException:
        stop_all(spawned)
        raise


def parameters(item: pytest.Item) -> dict[str, Any]:
    """A test's parameters by name (none where it is not parametrized)."""
    callspec = getattr(item, "callspec", None)
    return callspec.params if callspec is not None else {}


def selected(request: pytest.FixtureRequest, argname: str, test: str | None = None) -> list[Any]:
    """The values `argname` takes in the session's selected runs of `test` (of any test where
    None) of the module asking, in their order: what a module fixture starts together for them,
    and no more."""
    return [
        parameters(item)[argname]
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.module is request.module
        and test in (None, item.originalname)
        and argname in parameters(item)
    ]


class StartTarget:
    """`start(name, **env)`: a target of the module's own (free port, env overrides);
    `start.together(names, **env)`: several at once. All stopped after the module."""

    def __init__(self) -> None:
        self.started: list[RunningTarget] = []

    def __call__(self, name: str, **env: str) -> RunningTarget:
        (target,) = self.together([name], **env)
        return target

    def together(self, names: list[str], **env: str) -> list[RunningTarget]:
        targets = started_together([(DEFINITIONS[name], env) for name in names])
        self.started += targets
        return targets


def configured_tmp_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The LAB_TMP_DIR `configured` gives a target: a folder of its own, where every file its
    tree makes goes (tests/services/test_server.py holds the tree to it)."""
    return tmp_path_factory.getbasetemp() / "configured" / name


@pytest.fixture(scope="module")
def start() -> Iterator[StartTarget]:
    """Start targets by name (free port, optional env overrides); all stopped after the module."""
    starter = StartTarget()
    yield starter
    stop_all(starter.started)  # together: their graceful shutdowns overlap


@pytest.fixture(scope="session")
def downstream() -> Iterator[RunningTarget]:
    """The chart's downstream mock, for the targets' downstream and fan-out calls: it only answers,
    so one serves the whole session."""
    mock = load_downstream()
    assert mock is not None, "the chart's values enable no downstream mock"
    running = start_target(mock)
    yield running
    running.stop()


class Configured:
    """`configured(name)`: the target as the chart's values configure it, started at its first
    use; `configured.together(names)`: several, those not running yet started at once."""

    def __init__(self, downstream: RunningTarget, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.downstream = downstream
        self.tmp_path_factory = tmp_path_factory
        self.running: dict[str, RunningTarget] = {}

    def __call__(self, name: str) -> RunningTarget:
        (target,) = self.together([name])
        return target

    def together(self, names: list[str]) -> list[RunningTarget]:
        missing = [name for name in dict.fromkeys(names) if name not in self.running]
        starts = [(DEFINITIONS[name], self.environment(name)) for name in missing]
        self.running.update(zip(missing, started_together(starts), strict=True))
        return [self.running[name] for name in names]

    def environment(self, name: str) -> dict[str, str]:
        return {
            "LAB_DOWNSTREAM_URL": self.downstream.url,
            "LAB_TMP_DIR": str(configured_tmp_dir(self.tmp_path_factory, name)),
        }


@pytest.fixture(scope="session")
def configured(downstream: RunningTarget, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Configured]:
    """Targets by name as the chart's values configure them, pointed at the downstream mock, as
    the lab runs them (each with a temporary folder of its own: configured_tmp_dir): each started
    at its first use and shared, for the whole session, by every test that only sends it requests
    and reads what it answers (a start costs 2-6 s of CPU). A test that reconfigures a target,
    kills its processes or counts what it did since it started starts its own (`start`)."""
    targets = Configured(downstream, tmp_path_factory)
    yield targets
    stop_all(list(targets.running.values()))


@pytest.fixture(scope="session", params=MEASURED)
def target(request: pytest.FixtureRequest, configured: Configured) -> RunningTarget:
    """Each measured target of the chart's values in turn, as configured (`configured`): the
    first asked for starts at once every one the session's selected tests go through."""
    every = [parameters(item)["target"] for item in request.session.items if "target" in parameters(item)]
    return configured.together([request.param, *every])[0]


@pytest.fixture
def client(target: RunningTarget) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=target.url, timeout=30) as http:
        yield http
