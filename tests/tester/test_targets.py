"""The images the chart deploys derive from its values: one per image named there, each built
from the shared Python Dockerfile for its module unless its family carries a Dockerfile of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
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
    servers = [(s.image, s.module) for s in [*load_definitions(), *filter(None, [load_downstream()])]]
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    servers.append((values["app"]["image"], "app_target"))  # the app's configurations, when enabled
    assert len({build.repository for build in builds}) == len(builds)
    by_repository = {build.repository: build for build in builds}
    for image, module in servers:
        assert by_repository[image] == ImageBuild(image, PYTHON_TARGET_DOCKERFILE, module)
    tester = values["tester"]["image"]
    assert builds[-1] == ImageBuild(tester, TESTER_DOCKERFILE, None)
    assert {build.repository for build in builds} == {image for image, _ in servers} | {tester}
    for build in builds:
        assert (REPO_ROOT / build.dockerfile).is_file()


def test_a_family_with_its_own_dockerfile_is_built_from_it(tmp_path: Path) -> None:
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"].append(
        {"name": "other", "module": "other_target", "image": "lab/other", "localPort": 8099}
    )
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    (tmp_path / "services" / "other_target").mkdir(parents=True)
    (tmp_path / "services" / "other_target" / "Dockerfile").write_text("FROM scratch\n")
    builds = image_builds(tmp_path / "values.yaml", root=tmp_path)
    assert ImageBuild("lab/other", "services/other_target/Dockerfile", None) in builds


def test_one_image_cannot_run_two_modules(tmp_path: Path) -> None:
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    first = values["targets"][0]
    values["targets"].append({**first, "name": "clash", "module": "other_target", "localPort": 8099})
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    with pytest.raises(ValueError, match="named for both"):
        image_builds(tmp_path / "values.yaml")


def test_the_makefiles_list_is_the_same_derivation() -> None:
    listed = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "image-list")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert listed == [build.line() for build in image_builds()]
