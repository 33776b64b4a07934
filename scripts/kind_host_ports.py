#!/usr/bin/env python3
"""Check that every host port kind-config.yaml maps is free, before `make kind-up` creates the cluster.

kind would otherwise fail half-way through with Docker's "port is already allocated" or "address
already in use". Names each port that is taken, and the process listening on it where `ss` can say.
Usage: kind_host_ports.py KIND_CONFIG        (exit 1 when a port is taken)
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Mapping:
    address: str
    port: int
    protocol: str


def mappings(config: dict[str, Any]) -> list[Mapping]:
    """Every extraPortMappings entry of every node (kind's default address is 0.0.0.0)."""
    found = []
    for node in config.get("nodes") or []:
        for entry in node.get("extraPortMappings") or []:
            if entry.get("hostPort"):
                address = entry.get("listenAddress") or "0.0.0.0"
                found.append(Mapping(address, int(entry["hostPort"]), entry.get("protocol", "TCP").upper()))
    return found


def is_free(mapping: Mapping) -> bool:
    """Whether this address and port can be bound right now (what docker-proxy will do)."""
    kind = socket.SOCK_DGRAM if mapping.protocol == "UDP" else socket.SOCK_STREAM
    family = socket.AF_INET6 if ":" in mapping.address else socket.AF_INET
    with socket.socket(family, kind) as probe:
        if kind == socket.SOCK_STREAM:  # as docker-proxy (Go) does: a TIME_WAIT leftover is no owner
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((mapping.address, mapping.port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return False
            raise
    return True


def holder(mapping: Mapping) -> str:
    """Who listens on the port, as `ss` reports it (empty when it cannot say)."""
    flag = "-lunp" if mapping.protocol == "UDP" else "-ltnp"
    try:
        result = subprocess.run(
            ["ss", "-H", flag, f"sport = :{mapping.port}"], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        return ""
    return " ".join(result.stdout.split()[-1:]) if result.stdout.strip() else ""


def main() -> None:
    config_path = Path(sys.argv[1])
    taken = [mapping for mapping in mappings(yaml.safe_load(config_path.read_text())) if not is_free(mapping)]
    for mapping in taken:
        by = holder(mapping)
        print(
            f"{mapping.address}:{mapping.port}/{mapping.protocol} is taken{f' ({by})' if by else ''}: "
            f"free it, or change that hostPort in {config_path}",
            file=sys.stderr,
        )
    sys.exit(1 if taken else 0)


if __name__ == "__main__":
    main()
