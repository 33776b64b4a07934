"""Under a read-only root filesystem, every path a server writes is on a writable volume (13.8).

Each target Deployment of the chart is started here as its container would start it: the same
command and environment, only paths moved to a folder of the test (and back again when compared)
and the address on 127.0.0.1. Its /info lists every directory its process tree writes in
(`writes`); each must lie on a volume the chart mounts writable into that container.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import pytest

from labtester.launcher import LOCALHOST, free_port
from tests.chart.conftest import Manifest, render_chart

READY_TIMEOUT_S = 60
MANIFESTS = render_chart()
SERVERS = [
    m
    for m in MANIFESTS
    if m["kind"] == "Deployment"
    and m["metadata"]["labels"]["app.kubernetes.io/component"] in ("target", "downstream")
]


def writable_mounts(deployment: Manifest) -> list[PurePosixPath]:
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    volumes = {volume["name"] for volume in pod["volumes"]}
    return [
        PurePosixPath(mount["mountPath"])
        for mount in container.get("volumeMounts", [])
        if mount["name"] in volumes and not mount.get("readOnly")
    ]


def local_environment(container: Manifest, root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The container's environment with absolute paths moved under root; and local -> container."""
    env, moved = {}, {}
    for item in container["env"]:
        value = item["value"]
        if value.startswith("/"):
            local = str(root / value.lstrip("/"))
            moved[local] = value
            value = local
        env[item["name"]] = value
    return env, moved


@dataclass
class Server:
    deployment: Manifest
    info: dict[str, Any]
    moved: dict[str, str]  # local path -> the container's

    def in_container(self, path: str) -> str:
        for local, original in self.moved.items():
            if path == local or path.startswith(local + "/"):
                return original + path.removeprefix(local)
        return path


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """The Deployment's container running locally."""
    deployment: Manifest = request.param
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env, moved = local_environment(container, tmp_path / "root")
    port = free_port()
    env.update(LAB_HOST=LOCALHOST, LAB_PORT=str(port), LAB_METRICS_PORT=str(free_port()))
    log = tmp_path / "server.log"
    command = [sys.executable if arg == "python" else arg for arg in container["command"]]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            assert process.poll() is None, f"{command} exited:\n{log.read_text()[-3000:]}"
            try:
                info = httpx.get(f"http://{LOCALHOST}:{port}/info", timeout=5).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"not serving after {READY_TIMEOUT_S} s"
                time.sleep(0.2)
        yield Server(deployment, info, moved)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.parametrize(
    "server", SERVERS, ids=[m["metadata"]["labels"]["concurrency-lab/target"] for m in SERVERS], indirect=True
)
def test_every_path_a_server_writes_is_on_a_writable_volume(server: Server) -> None:
    writes = server.info.get("writes")
    assert isinstance(writes, list) and writes, f"/info lists no `writes`: {sorted(server.info)}"
    mounts = writable_mounts(server.deployment)
    for written in writes:
        path = server.in_container(str(written))
        where = [str(mount) for mount in mounts]
        assert any(PurePosixPath(path).is_relative_to(mount) for mount in mounts), (
            f"{server.deployment['metadata']['name']} writes {path}, on none of its writable volumes {where}"
        )
