"""Every configuration of a team's app takes its server's knobs from the environment alone, over
what its values entry sets, so a sizing search can start any size of any server: /info states the
size, and the census counts the worker processes really running.

The knobs, per server (workload.settings and services/servers/<server>/settings.py):
    uvicorn   LAB_WORKERS
    gunicorn  LAB_WORKER_CLASS (sync, gthread, gevent), LAB_WORKERS, LAB_THREADS (gthread),
              LAB_WORKER_CONNECTIONS (gevent)
    granian   LAB_WORKERS, LAB_THREADS (WSGI's blocking threads), LAB_BACKPRESSURE
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from labtester.launcher import RunningTarget
from labtester.target_group import stop_all
from labtester.targets import TargetDefinition
from tests.conftest import selected, started_together
from tests.services.apps import BARE_MODULE, app_start, bare_app_dir, configurations, serving_pids

PATHS = ["/wait?ms=10"]
# configuration: (knobs by env, /info's (worker_class, workers, threads, execution, slots, admits)).
SIZES: dict[str, tuple[dict[str, str], tuple[Any, ...]]] = {
    "uvicorn": ({"LAB_WORKERS": "3"}, ("uvicorn", 3, 1, "async", None, None)),
    "sync-1x": ({"LAB_WORKERS": "3"}, ("sync", 3, 1, "workers", 3, None)),
    "gthread": ({"LAB_WORKERS": "3", "LAB_THREADS": "12"}, ("gthread", 3, 12, "threads", 36, None)),
    "gevent": ({"LAB_WORKERS": "2", "LAB_WORKER_CONNECTIONS": "7"}, ("gevent", 2, 1, "greenlets", 14, None)),
    # Another worker class on a configuration that sets one: the environment wins.
    "sync-2x": (
        {"LAB_WORKER_CLASS": "gthread", "LAB_WORKERS": "2", "LAB_THREADS": "5"},
        ("gthread", 2, 5, "threads", 10, None),
    ),
    "granian-wsgi": ({"LAB_WORKERS": "2", "LAB_THREADS": "6"}, ("wsgi", 2, 6, "threads", 12, 512)),
    "granian-asgi": ({"LAB_WORKERS": "2", "LAB_BACKPRESSURE": "5"}, ("asgi", 2, 1, "async", 10, 5)),
}
BY_NAME = {c["name"]: c for c in configurations("asgi") + configurations("wsgi")}


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bare_app_dir(tmp_path_factory.mktemp("bare-app"))


def test_every_configuration_has_its_knobs_here() -> None:
    assert set(SIZES) == set(BY_NAME) - {"uvicorn-cores"}  # uvicorn's one knob is uvicorn's


def sized_start(name: str, app_dir: Path) -> tuple[TargetDefinition, dict[str, str]]:
    configuration: dict[str, Any] = BY_NAME[name]
    interface = configuration["interface"]
    return app_start(f"{BARE_MODULE}:{interface}", configuration, PATHS, app_dir, **SIZES[name][0])


@pytest.fixture(scope="module")
def every_size(request: pytest.FixtureRequest, app_dir: Path) -> Iterator[dict[str, RunningTarget]]:
    """Each selected configuration sized by its knobs, all started together."""
    names = selected(request, "sized")
    targets = started_together([sized_start(name, app_dir) for name in names])
    yield dict(zip(names, targets, strict=True))
    stop_all(targets)


@pytest.fixture(params=list(SIZES))
def sized(request: pytest.FixtureRequest, every_size: dict[str, RunningTarget]) -> tuple[str, RunningTarget]:
    return request.param, every_size[request.param]


def test_the_environment_alone_sizes_the_server(sized: tuple[str, RunningTarget]) -> None:
    name, target = sized
    info = httpx.get(f"{target.url}/info", timeout=30).json()
    (endpoint,) = info["endpoints"].values()
    stated = (
        info["worker_class"],
        info["workers"],
        info["threads"],
        endpoint["execution"],
        endpoint["slots"],
    )
    assert (*stated, info["admits_per_worker"]) == SIZES[name][1]
    census = httpx.get(f"{target.url}/test/resmon", timeout=30).json()
    assert len(serving_pids(census)) == info["workers"]
