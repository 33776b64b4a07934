"""run-lab's preflight on the check's nodes: values too big are refused by `make run-lab` itself
(naming the file that fits, installing nothing); without -f the profile that fits is picked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lab_release.cluster import Cluster
from lab_release.preflight import preflight
from lab_release.quantities import Resources

from .checking import check, run_lab_step, step
from .config import CHART, CONTEXT, RELEASE, REPO_ROOT
from .kube import Kube
from .nodes import node_name, only_schedulable


def too_big_is_refused(kube: Kube, size: Resources, env: dict[str, str]) -> None:
    """`make run-lab` itself, with values too big for the node: the preflight stops it."""
    node = node_name(size)
    step(f"make run-lab with the defaults on {node}: refused by the preflight")
    only_schedulable(kube, node)
    namespace = "check-too-big"
    run_env = {
        **env, "KUBECONFIG": str(kube.config), "HELM": kube.binaries.helm, "KUBECTL": kube.binaries.kubectl,
        "KUBE_CONTEXT": CONTEXT, "RELEASE": RELEASE, "NAMESPACE": namespace, "CHART": str(CHART),
        "HELM_ARGS": f"-f {CHART / 'values.yaml'}", "IMAGE_TAGS": "",
    }  # fmt: skip
    result = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "run_lab.py")], env=run_env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    print(result.stdout + result.stderr)
    small = CHART / "ci" / "small-values.yaml"
    check(result.returncode == 1, f"run-lab exited {result.returncode}, not 1")
    check(f"The values file that fits: {small}" in result.stderr, "the refusal does not name small-values")
    listing = [kube.binaries.helm, "list", "--all-namespaces", "--kube-context", CONTEXT, "--short"]
    releases = subprocess.run(listing, capture_output=True, text=True, env=run_env, timeout=60).stdout.split()
    check(releases == [], f"something was installed: {releases}")


def auto_pick(kube: Kube, size: Resources, expected: Path) -> None:
    node = node_name(size)
    step(f"make run-lab without -f on {node}: picks the profile that fits")
    only_schedulable(kube, node)
    cluster = Cluster(kube.settings("check-auto"))
    picked = run_lab_step(f"run-lab on {node}", preflight, cluster, [])
    check(picked == ["--values", str(expected)], f"picked {picked}, not {expected}")
