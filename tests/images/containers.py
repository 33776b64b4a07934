"""Containers of the lab's real images, run the way the chart runs them.

`make test-images` builds the images, then runs these tests with TEST_IMAGES_TAG (the tag it
built) set; without it (`make test`) they are skipped. Every container uses the host's network on
a 127.0.0.1 port (never a bridge address), a read-only root filesystem with a tmpfs /tmp, no
capabilities, the image's own non-root user and a CPU quota, and carries TEST_IMAGES_LABEL, so
cleanup finds it whatever happens.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from labtester.readiness import NotReady, wait_ready
from labtester.targets import DEFAULT_VALUES

TAG = os.environ.get("TEST_IMAGES_TAG", "")
LABEL = os.environ.get("TEST_IMAGES_LABEL", "concurrency-lab.test-images")
VALUES = yaml.safe_load(DEFAULT_VALUES.read_text())
LAB_USER = int(VALUES["labUser"])
READY_TIMEOUT_S = 90
DOCKER_TIMEOUT_S = 120


def docker(
    *args: str, check: bool = True, timeout: float = DOCKER_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
    return result


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_quantity(quantity: str) -> float:
    """A Kubernetes CPU quantity ("2", "500m") in CPUs."""
    return int(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


@dataclass(frozen=True)
class Container:
    name: str

    def running(self) -> bool:
        state = docker("inspect", "--format", "{{.State.Running}}", self.name, check=False)
        return state.stdout.strip() == "true"

    def logs(self) -> str:
        result = docker("logs", "--tail", "40", self.name, check=False)
        return result.stdout + result.stderr

    def exec(self, *command: str) -> subprocess.CompletedProcess[str]:
        return docker("exec", self.name, *command, check=False)


def locked_down(name: str, cpus: float, env: dict[str, str]) -> list[str]:
    """`docker run` options shared by every container here: the chart's pod security, as flags."""
    options = ["--name", name, "--label", LABEL, "--network", "host", "--cpus", f"{cpus:g}"]
    options += ["--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    for key, value in env.items():
        options += ["--env", f"{key}={value}"]
    return options


class Containers:
    """Starts containers and removes every one of them at teardown."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def name(self, stem: str) -> str:
        name = f"lab-test-{stem}-{uuid.uuid4().hex[:6]}"
        self.names.append(name)
        return name

    def start(self, image: str, stem: str, cpus: float, env: dict[str, str], args: list[str]) -> Container:
        """`args`: after the image's entrypoint (`python -m serve`), the app to serve."""
        name = self.name(stem)
        docker("run", "--detach", *locked_down(name, cpus, env), image, *args)
        return Container(name)

    def run(
        self,
        image: str,
        stem: str,
        cpus: float,
        env: dict[str, str],
        volumes: dict[Path, str],
        timeout: float,
    ) -> subprocess.CompletedProcess[str]:
        """Run a container to its end (it stays until teardown, so a timeout leaves nothing behind)."""
        options = locked_down(self.name(stem), cpus, env)
        options += [f"--volume={host}:{inside}" for host, inside in volumes.items()]
        return docker("run", *options, image, check=False, timeout=timeout)

    def remove(self, container: Container) -> None:
        docker("rm", "--force", container.name, check=False)
        self.names.remove(container.name)

    def remove_all(self) -> None:
        if self.names:
            docker("rm", "--force", *self.names, check=False)


@dataclass(frozen=True)
class TargetSpec:
    """One entry of the chart's `targets` list: the image and LAB_* env it deploys, and its quota."""

    name: str
    app: str  # `python -m serve <app>`; the env's LAB_SERVER names the server
    image: str
    env: dict[str, str]
    cpus: float  # the chart's CPU request = limit for it
    measure: bool

    def expected_workers(self, cores: int) -> int:
        """What the chart's settings promise: an explicit count, else multiplier x cores."""
        if "LAB_WORKERS" in self.env:
            return int(self.env["LAB_WORKERS"])
        return int(self.env.get("LAB_WORKER_MULTIPLIER", "1")) * cores


def _spec(entry: dict[str, Any]) -> TargetSpec:
    resources = entry.get("resources") or VALUES["targetDefaults"]["resources"]
    return TargetSpec(
        name=entry["name"],
        app=entry["app"],
        image=f"{entry['image']}:{TAG}",
        env={"LAB_SERVER": entry["server"]}
        | {key: str(value) for key, value in (entry.get("env") or {}).items()},
        cpus=cpu_quantity(str(resources["cpu"])),
        measure=bool(entry.get("measure", True)),
    )


def chart_specs() -> list[TargetSpec]:
    """The chart's `targets` list."""
    return [_spec(entry) for entry in VALUES["targets"]]


def downstream_spec() -> TargetSpec | None:
    """The mock downstream service the chart deploys beside the targets, if it is enabled."""
    entry = VALUES.get("downstream") or {}
    return _spec({**entry, "measure": False}) if entry.get("enabled") else None


@dataclass(frozen=True)
class RunningTarget:
    spec: TargetSpec
    container: Container
    url: str
    cpus: float


def start_targets(
    containers: Containers,
    specs: list[TargetSpec],
    cpus: float | None = None,
    extra_env: dict[str, str] | None = None,
) -> list[RunningTarget]:
    """Start every spec with a `--cpus` quota (default: the chart's for it), then wait until each
    has all its workers serving."""
    started = []
    for spec in specs:
        quota = spec.cpus if cpus is None else cpus
        port = free_port()
        env = {**spec.env, **(extra_env or {})}
        env |= {"LAB_NAME": spec.name, "LAB_HOST": "127.0.0.1", "LAB_PORT": str(port)}
        container = containers.start(spec.image, f"{spec.name}-cpus{quota:g}", quota, env, [spec.app])
        started.append(RunningTarget(spec, container, f"http://127.0.0.1:{port}", quota))
    for target in started:
        try:
            wait_ready(target.url, READY_TIMEOUT_S, still_running=target.container.running)
        except NotReady as error:
            pytest.fail(
                f"{target.spec.name} (--cpus {target.cpus:g}) {error}; its log:\n{target.container.logs()}"
            )
    return started


def whole_cores(cpus: float) -> int:
    """The cores a target should report for a quota: a fraction counts as a whole core."""
    return max(1, math.ceil(cpus))
