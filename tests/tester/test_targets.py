"""The images the chart deploys derive from its values: one per image named there, each built
from the one Python Dockerfile, which holds every server and app."""

from __future__ import annotations

import subprocess
import sys

import yaml

from labtester.targets import (
    DEFAULT_VALUES,
    PYTHON_TARGET_DOCKERFILE,
    REPO_ROOT,
    TESTER_DOCKERFILE,
    ImageBuild,
    image_builds,
    load_definitions,
    load_downstream,
)


def test_every_image_the_chart_deploys_is_built_once() -> None:
    builds = image_builds()
    servers = [s.image for s in [*load_definitions(), *filter(None, [load_downstream()])]]
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    servers.append(values["app"]["image"])  # the app's configurations, when enabled
    assert len({build.repository for build in builds}) == len(builds)
    by_repository = {build.repository: build for build in builds}
    for image in servers:
        assert by_repository[image] == ImageBuild(image, PYTHON_TARGET_DOCKERFILE)
    tester = values["tester"]["image"]
    assert builds[-1] == ImageBuild(tester, TESTER_DOCKERFILE)
    assert {build.repository for build in builds} == set(servers) | {tester}
    for build in builds:
        assert (REPO_ROOT / build.dockerfile).is_file()


def test_the_makefiles_list_is_the_same_derivation() -> None:
    listed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "image-list")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert listed == [build.line() for build in image_builds()]
