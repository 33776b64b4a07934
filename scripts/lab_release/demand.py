"""What a release asks for (a pod per replica), what the nodes have room for, and whether it fits."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .quantities import Resources, total

Manifest = dict[str, Any]


@dataclass(frozen=True)
class PodDemand:
    """One pod a release creates: what the scheduler reserves for it and what it may use."""

    name: str
    requests: Resources
    limits: Resources


def pod_resources(pod_spec: Manifest, key: str) -> Resources:
    """A pod's effective requests or limits: its containers' sum, or an init container's if larger."""
    containers = total(Resources.of(c.get("resources", {}).get(key)) for c in pod_spec["containers"])
    init = [Resources.of(c.get("resources", {}).get(key)) for c in pod_spec.get("initContainers", [])]
    return Resources(
        max([containers.cpu, *(i.cpu for i in init)]), max([containers.memory, *(i.memory for i in init)])
    )


def pod_demands(manifests: Iterable[Manifest]) -> list[PodDemand]:
    """Every pod the rendered objects create: Deployments x replicas, Jobs x parallelism."""
    demands = []
    for manifest in manifests:
        kind, spec = manifest["kind"], manifest.get("spec", {})
        if kind in ("StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "CronJob"):
            raise ValueError(f"{kind} is not counted by this preflight: teach pod_demands about it")
        if kind not in ("Deployment", "Job"):
            continue
        count = spec.get("replicas", 1) if kind == "Deployment" else spec.get("parallelism", 1)
        pod = spec["template"]["spec"]
        requests, limits = pod_resources(pod, "requests"), pod_resources(pod, "limits")
        demands += [PodDemand(f"{kind}/{manifest['metadata']['name']}", requests, limits)] * count
    return demands


@dataclass
class Room:
    """One node that takes new pods, and what is left of its allocatable resources."""

    node: str
    free: Resources
    placed: list[str] = field(default_factory=list)


def schedulable(node: Manifest) -> bool:
    if node.get("spec", {}).get("unschedulable"):
        return False
    taints = node.get("spec", {}).get("taints", [])
    if any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints):
        return False
    conditions = {c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])}
    return conditions.get("Ready") == "True"


def rooms(
    nodes: Sequence[Manifest], pods: Sequence[Manifest], ours: Callable[[Manifest], bool]
) -> list[Room]:
    """Allocatable minus what the pods on each node request, not counting `ours` (to be replaced)."""
    used: dict[str, Resources] = {}
    for pod in pods:
        node = pod.get("spec", {}).get("nodeName")
        if node and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed") and not ours(pod):
            used[node] = used.get(node, Resources()) + pod_resources(pod["spec"], "requests")
    return [
        Room(
            node["metadata"]["name"],
            Resources.of(node["status"]["allocatable"]) - used.get(name, Resources()),
        )
        for node in nodes
        if schedulable(node) and (name := node["metadata"]["name"])
    ]


def place(demands: Sequence[PodDemand], free: Sequence[Room]) -> list[PodDemand]:
    """First-fit decreasing onto copies of the rooms; returns the pods that find no node."""
    left = [Room(r.node, r.free) for r in free]
    unplaced = []
    for demand in sorted(demands, key=lambda d: (d.requests.cpu, d.requests.memory), reverse=True):
        room = next((r for r in left if demand.requests.fits_in(r.free)), None)
        if room is None:
            unplaced.append(demand)
        else:
            room.free -= demand.requests
            room.placed.append(demand.name)
    return unplaced
