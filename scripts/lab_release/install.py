"""Step 2: `helm upgrade --install` with each image's content tag, and a fresh tester Job."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from .cluster import Cluster, run, say


def image_tag_args(path: Path | None) -> list[str]:
    """--set-string per image from `make images`' REPOSITORY=TAG lines: strings, never numbers."""
    if path is None:
        return []
    if not path.exists():
        raise SystemExit(f"run-lab: {path} is missing: no images were built yet (make kind-up builds them)")
    args = []
    for line in path.read_text().splitlines():
        repository, _, tag = line.strip().partition("=")
        if repository:
            args += ["--set-string", f"image.tags.{repository}={tag}"]
    return args


def install(cluster: Cluster, helm_args: Sequence[str]) -> None:
    s = cluster.s
    # A Job's pod template is immutable and a finished Job never runs again: replace it.
    run(cluster.kubectl("delete", "job", "--selector", s.selector("tester"), "--ignore-not-found",
                        "--cascade=foreground", "--wait"))  # fmt: skip
    command = [s.helm, "upgrade", "--install", s.release, str(s.chart), "--kube-context", s.kube_context,
               "--namespace", s.namespace, "--create-namespace", *helm_args]  # fmt: skip
    say(f"Installing: {shlex.join(command[1:])}")
    run(command)
