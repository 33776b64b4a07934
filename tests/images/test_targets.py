"""The target images under a CPU quota: cores from the cgroup, worker counts, census, lockdown.

Each measured target of the chart runs from its image with `--cpus 1`, then with `--cpus 2`
(both with a set of three containers at once). The quota is the only thing that tells a target how
many cores it has: on a 2-core host, 1 core can only come from the cgroup, and `cores_source`
says where 2 came from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from labtester.targets import PYTHON_TARGET_DOCKERFILE, ImageBuild, image_builds
from tests.images.containers import (
    LAB_USER,
    TAG,
    Containers,
    RunningTarget,
    chart_specs,
    docker,
    start_targets,
    whole_cores,
)

SPECS = [spec for spec in chart_specs() if spec.measure]
QUOTAS = [1, 2]


@pytest.fixture(scope="module", params=QUOTAS, ids=lambda cpus: f"cpus{cpus}")
def targets(request: pytest.FixtureRequest, containers: Containers) -> Iterator[dict[str, RunningTarget]]:
    """The chart's measured targets, one container each, all with this `--cpus` quota."""
    started = start_targets(containers, SPECS, cpus=request.param)
    yield {target.spec.name: target for target in started}
    for target in started:  # the next quota's set starts on a quiet machine
        containers.remove(target.container)


@pytest.mark.parametrize("name", [spec.name for spec in SPECS])
def test_info_reports_quota_cores_and_chart_workers(targets: dict[str, RunningTarget], name: str) -> None:
    target = targets[name]
    cores = whole_cores(target.cpus)
    info = httpx.get(f"{target.url}/info", timeout=10).json()
    assert (info["effective_cores"], info["cores_source"]) in [(cores, "cgroup v1"), (cores, "cgroup v2")], (
        f"--cpus {target.cpus:g}: /info says {info['effective_cores']} cores from {info['cores_source']}"
    )
    expected = target.spec.expected_workers(cores)
    assert info["workers"] == expected, f"{name} with {target.cpus} cores: {info['workers']} workers"


@pytest.mark.parametrize("name", [spec.name for spec in SPECS])
def test_census_root_is_the_server_with_its_workers(targets: dict[str, RunningTarget], name: str) -> None:
    target = targets[name]
    census = httpx.get(f"{target.url}/test/resmon", timeout=10).json()
    roles = {process["pid"]: process["role"] for process in census["processes"]}
    # pid 1: the CMD itself is the server (no shell in between), so it gets the container's signals.
    assert census["root_pid"] == 1, f"the census root is pid {census['root_pid']}, not the container's"
    assert roles.get(1) == "master", f"pid 1 has role {roles.get(1)}: {census['processes']}"
    expected = target.spec.expected_workers(whole_cores(target.cpus))
    assert census["serving_processes"] == expected, census
    # Where the root does not serve (gunicorn's arbiter, granian's root), the workers are its children.
    workers = [p for p in census["processes"] if p["role"] == "worker"]
    if workers:
        assert [p["ppid"] for p in workers] == [1] * expected, (
            f"expected {expected} workers of pid 1: {census}"
        )


@pytest.mark.parametrize("name", [spec.name for spec in SPECS])
def test_runs_as_the_image_user_on_a_read_only_root(targets: dict[str, RunningTarget], name: str) -> None:
    container = targets[name].container
    status = container.exec("cat", "/proc/1/status").stdout
    ids = {
        key: [int(n) for n in value.split()]
        for key, value in re.findall(r"^(Uid|Gid):\s*(.*)$", status, re.M)
    }
    assert ids == {"Uid": [LAB_USER] * 4, "Gid": [LAB_USER] * 4}, f"the server runs as {ids}"
    write = container.exec("touch", "/written-by-the-test")
    assert write.returncode != 0 and "Read-only file system" in write.stderr, write
    tmp = container.exec("touch", "/tmp/written-by-the-test")
    assert tmp.returncode == 0, f"/tmp is not writable: {tmp.stderr}"


@pytest.mark.parametrize("build", image_builds(), ids=lambda build: build.repository)
def test_every_image_of_the_list_was_built_from_its_dockerfile(build: ImageBuild) -> None:
    """The images `make images` built are the ones the values name (labtester.targets.image_builds),
    each Python target's from the one shared Dockerfile, whose entrypoint is `python -m serve`."""
    inspected = docker(
        "image", "inspect", "--format", "{{json .Config.Entrypoint}}", f"{build.repository}:{TAG}"
    )
    entrypoint = json.loads(inspected.stdout)
    python_target = build.dockerfile == PYTHON_TARGET_DOCKERFILE
    assert (entrypoint == ["python", "-m", "serve"]) == python_target, entrypoint
