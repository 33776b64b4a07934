"""Simulated nodes (kwok), one per node size the profiles claim, and restricted namespaces."""

from __future__ import annotations

import json

from lab_release.demand import schedulable
from lab_release.profiles import KIND_SHARE_CPU, KIND_SHARE_MEMORY
from lab_release.quantities import Resources

from .checking import check, poll
from .config import SETTLE_TIMEOUT_S
from .kube import Kube


def node_name(node: Resources) -> str:
    return f"kind-{node.cpu:g}cpu"


def make_nodes(kube: Kube, sizes: list[Resources]) -> None:
    """A simulated node per size, and on each a pod standing for kind's own control plane."""
    share = {
        "cpu": f"{round(KIND_SHARE_CPU * 1000)}m",
        "memory": f"{KIND_SHARE_MEMORY // 2**20}Mi",
    }
    default_service_account(kube, "kube-system")
    for size in sizes:
        name = node_name(size)
        capacity = {"cpu": f"{size.cpu:g}", "memory": f"{size.memory // 2**20}Mi", "pods": "110"}
        kube.apply({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
            "status": {"capacity": capacity, "allocatable": capacity},
        })  # fmt: skip
        kube.apply({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"kind-control-plane-{name}", "namespace": "kube-system"},
            "spec": {"nodeName": name, "containers": [{
                "name": "control-plane", "image": "kind-control-plane-share",
                "resources": {"requests": share, "limits": share}}]},
        })  # fmt: skip
    poll(
        "every node Ready",
        lambda: len([n for n in kube.items("nodes") if schedulable(n)]) == len(sizes),
        SETTLE_TIMEOUT_S,
    )


def only_schedulable(kube: Kube, node: str) -> None:
    for item in kube.items("nodes"):
        name = item["metadata"]["name"]
        kube.kubectl("uncordon" if name == node else "cordon", name)


def default_service_account(kube: Kube, namespace: str) -> None:
    """Pods are admitted only once the controller-manager has made the namespace's ServiceAccount."""
    poll(
        f"namespace {namespace}'s default ServiceAccount",
        lambda: bool(
            kube.items("serviceaccounts", "-n", namespace, "--field-selector", "metadata.name=default")
        ),
        SETTLE_TIMEOUT_S,
    )


def restricted_namespace(kube: Kube, namespace: str) -> None:
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}})
    default_service_account(kube, namespace)


def admission_refuses_privilege_escalation(kube: Kube, namespace: str) -> None:
    container = {"name": "c", "image": "x", "securityContext": {"allowPrivilegeEscalation": True}}
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "escalates", "namespace": namespace},
        "spec": {"containers": [container]},
    }  # fmt: skip
    answer = kube.kubectl("create", "--dry-run=server", "-f", "-", stdin=json.dumps(pod), check_ok=False)
    check("violates PodSecurity" in answer and "allowPrivilegeEscalation" in answer,
          f"admission let a privilege-escalating pod into a restricted namespace: {answer}")  # fmt: skip
    print("admission refuses a pod with allowPrivilegeEscalation: true (PodSecurity restricted)")
