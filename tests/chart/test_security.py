"""Every pod of every scenario is locked down and has limits; memory requests equal limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chart.conftest import CI_VALUES, Manifest, Render, pod_specs
from tests.chart.test_targets import cpus

SCENARIOS = [None, *CI_VALUES]


def containers(pod: Manifest) -> list[Manifest]:
    return [*pod.get("initContainers", []), *pod["containers"]]


@pytest.fixture(params=SCENARIOS, ids=lambda values: "default" if values is None else values.name)
def pods(request: pytest.FixtureRequest, render: Render) -> dict[str, Manifest]:
    values: Path | None = request.param
    found = pod_specs(render() if values is None else render(values))
    assert found
    return found


def test_pods_run_as_non_root_with_the_runtime_seccomp_profile(pods: dict[str, Manifest]) -> None:
    for name, pod in pods.items():
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True, name
        assert context["runAsUser"] > 0, name
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
        # Nothing in the lab talks to the Kubernetes API.
        assert pod["automountServiceAccountToken"] is False, name


def test_containers_are_read_only_unprivileged_and_capability_free(pods: dict[str, Manifest]) -> None:
    for name, pod in pods.items():
        for container in containers(pod):
            context = container["securityContext"]
            where = f"{name}/{container['name']}"
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["capabilities"] == {"drop": ["ALL"]}, where
            assert context["runAsNonRoot"] is True, where
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}, where


def test_writable_paths_are_volumes(pods: dict[str, Manifest]) -> None:
    for name, pod in pods.items():
        volumes = {volume["name"] for volume in pod.get("volumes", [])}
        for container in containers(pod):
            mounts = {mount["name"] for mount in container.get("volumeMounts", [])}
            assert mounts <= volumes, f"{name}/{container['name']} mounts a volume the pod lacks"
            assert mounts, f"{name}/{container['name']} has no writable place at all"


def test_every_container_has_limits_and_memory_is_never_overcommitted(pods: dict[str, Manifest]) -> None:
    """Memory: request = limit. CPU: the limit is the quota, the request at most that (profiles
    reserve less where the tester loads one target at a time)."""
    for name, pod in pods.items():
        for container in containers(pod):
            where = f"{name}/{container['name']}"
            requests, limits = container["resources"]["requests"], container["resources"]["limits"]
            assert set(limits) == set(requests) == {"cpu", "memory"}, where
            assert requests["memory"] == limits["memory"], where
            assert cpus(requests["cpu"]) <= cpus(limits["cpu"]), where


def test_every_empty_dir_has_a_size_limit(pods: dict[str, Manifest]) -> None:
    """A client that makes a server write (metric series, temporary files) fills at most its
    emptyDir: the kubelet evicts the pod rather than let the node's disk fill."""
    for name, pod in pods.items():
        for volume in pod.get("volumes", []):
            if "emptyDir" in volume:
                assert volume["emptyDir"].get("sizeLimit"), f"{name}: emptyDir {volume['name']}"
