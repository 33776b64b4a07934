"""The app-target image runs the example it holds (examples/ in its working directory), in a
configuration of each interface, locked down as the chart runs it: every path answers, measured."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.images.containers import (
    TAG,
    VALUES,
    Containers,
    RunningTarget,
    TargetSpec,
    downstream_spec,
    start_targets,
)
from tests.services.servertiming import parse

EXAMPLES = {"wsgi": "examples.shop.flask_app:app", "asgi": "examples.shop.fastapi_app:app"}
PATHS = ["/report", "/checkout?product=7", "/products/7/page"]


def app_specs() -> list[TargetSpec]:
    """The first configuration of each interface, serving that interface's example."""
    specs = []
    for interface, module in EXAMPLES.items():
        configuration = next(c for c in VALUES["app"]["configurations"] if c["interface"] == interface)
        env = {**configuration["env"], "LAB_APP": module, "LAB_APP_PATHS": ",".join(PATHS)}
        image = f"{VALUES['app']['image']}:{TAG}"
        specs.append(TargetSpec(f"app-{configuration['name']}", "team", image, env, 1.0, True))
    return specs


@pytest.fixture(scope="module")
def apps(containers: Containers) -> Iterator[list[RunningTarget]]:
    mock = downstream_spec()
    assert mock is not None
    (downstream,) = start_targets(containers, [mock])
    yield start_targets(containers, app_specs(), extra_env={"LAB_DOWNSTREAM_URL": downstream.url})


def test_the_image_serves_the_example_in_both_interfaces(apps: list[RunningTarget]) -> None:
    for app in apps:
        info = httpx.get(f"{app.url}/info", timeout=10).json()
        assert info["app"]["module"] == app.spec.env["LAB_APP"] and list(info["endpoints"]) == PATHS
        for path in PATHS:
            response = httpx.get(f"{app.url}{path}", timeout=30)
            assert response.status_code == 200, (app.spec.name, path, response.text)
            timing = parse(response.headers.get("server-timing"))
            assert timing is not None and timing.cpu_s > 0, (app.spec.name, path, response.headers)
