"""scripts/kind_host_ports.py: `make kind-up` names a host port kind-config.yaml maps that is taken."""

from __future__ import annotations

import socket
import subprocess
import sys

import yaml

from tests.script_module import REPO_ROOT, load_script

SCRIPT = REPO_ROOT / "scripts/kind_host_ports.py"
host_ports = load_script("scripts/kind_host_ports.py")


def test_the_projects_config_maps_its_ui_ports_on_loopback():
    mappings = host_ports.mappings(yaml.safe_load((REPO_ROOT / "kind-config.yaml").read_text()))
    assert {(m.address, m.protocol) for m in mappings} == {("127.0.0.1", "TCP")}
    assert len(mappings) >= 3


def config_with(tmp_path, *ports: int):
    mappings = [
        {"containerPort": 30000 + i, "hostPort": port, "listenAddress": "127.0.0.1"}
        for i, port in enumerate(ports)
    ]
    path = tmp_path / "kind-config.yaml"
    path.write_text(
        yaml.safe_dump(
            {"kind": "Cluster", "nodes": [{"role": "control-plane", "extraPortMappings": mappings}]}
        )
    )
    return path


def test_a_taken_port_is_named_and_a_free_one_passes(tmp_path):
    with socket.socket() as held, socket.socket() as spare:
        held.bind(("127.0.0.1", 0))
        held.listen()
        spare.bind(("127.0.0.1", 0))
        free_port = spare.getsockname()[1]
        spare.close()  # free again: nobody listens there
        taken_port = held.getsockname()[1]
        result = subprocess.run(
            [sys.executable, SCRIPT, config_with(tmp_path, free_port, taken_port)],
            capture_output=True,
            text=True,
        )
    assert result.returncode == 1
    assert f"127.0.0.1:{taken_port}/TCP is taken" in result.stderr
    assert str(free_port) not in result.stderr


def test_all_free_passes(tmp_path):
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    result = subprocess.run(
        [sys.executable, SCRIPT, config_with(tmp_path, port)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
