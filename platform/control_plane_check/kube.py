"""kubectl and helm against the check's control plane, and run-lab's settings for one namespace."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from lab_release.cluster import Settings

from .checking import Fail, check
from .config import CHART, CONTEXT, RELEASE
from .control_plane import Binaries


class Kube:
    def __init__(self, binaries: Binaries, config: Path) -> None:
        self.binaries, self.config = binaries, config

    def kubectl(self, *args: str, stdin: str | None = None, check_ok: bool = True) -> str:
        command = [self.binaries.kubectl, "--kubeconfig", str(self.config), *args]
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)
        if check_ok and result.returncode != 0:
            raise Fail(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout + result.stderr

    def apply(self, *objects: dict[str, Any]) -> None:
        self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))

    def items(self, *args: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = json.loads(self.kubectl("get", *args, "--output", "json"))["items"]
        return items

    def settings(self, namespace: str, helm_args: str = "") -> Settings:
        return Settings(
            helm=self.binaries.helm, kubectl=self.binaries.kubectl, kube_context=CONTEXT, release=RELEASE,
            namespace=namespace, chart=CHART, helm_args=helm_args.split(),
        )  # fmt: skip


def helm_upgrade(kube: Kube, namespace: str, args: Sequence[str]) -> None:
    command = [kube.binaries.helm, "upgrade", "--install", RELEASE, str(CHART), "--kube-context", CONTEXT,
               "--namespace", namespace, *args]  # fmt: skip
    helm = subprocess.run(command, capture_output=True, text=True, timeout=300)
    check(helm.returncode == 0, f"helm refused `{' '.join(command[1:])}`: {helm.stderr}")
