"""Each values file on the node size it claims: preflight, install, every pod scheduled there, the
requests on the node the rendered sum, the tester Job completed, admission still restricted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab_release.cluster import Cluster
from lab_release.demand import pod_demands, pod_resources
from lab_release.preflight import preflight
from lab_release.profiles import KIND_SHARE_CPU
from lab_release.quantities import Resources, gib, total
from lab_release.tester_job import wait_job

from .checking import check, run_lab_step, settle, step
from .config import REPO_ROOT
from .kube import Kube, helm_upgrade
from .nodes import admission_refuses_privilege_escalation, node_name, only_schedulable, restricted_namespace
from .upgrade import rebuilt_image_rolls


def results_volume(kube: Kube, namespace: str, manifests: list[dict[str, Any]]) -> None:
    """What kind's local-path provisioner would do: a PersistentVolume for each claim, bound to it."""
    for claim in (m for m in manifests if m["kind"] == "PersistentVolumeClaim"):
        name = claim["metadata"]["name"]
        kube.apply({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{namespace}-{name}"},
            "spec": {
                "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
                "accessModes": claim["spec"]["accessModes"],
                "hostPath": {"path": f"/tmp/cluster-check/{namespace}/{name}"},
                "claimRef": {"namespace": namespace, "name": name},
                "persistentVolumeReclaimPolicy": "Retain",
            },
        })  # fmt: skip


def install_profile(kube: Kube, values: Path, size: Resources, roll: bool) -> None:
    namespace = f"check-{values.name.removesuffix('.yaml').removesuffix('-values')}"
    node = node_name(size)
    step(f"{values.relative_to(REPO_ROOT)} on {node} ({size.cpu:g} CPUs, {gib(size.memory)})")
    only_schedulable(kube, node)
    restricted_namespace(kube, namespace)
    args = "" if values.name == "values.yaml" else f"--values {values}"
    settings = kube.settings(namespace, args)
    cluster = Cluster(settings)
    picked = run_lab_step(f"preflight of {values.name} on {node}", preflight, cluster, [])
    check(picked == [], f"preflight wanted {picked} for {values.name} on the node it claims")
    manifests = cluster.render(settings.helm_args)
    results_volume(kube, namespace, manifests)
    helm_upgrade(kube, namespace, settings.helm_args)
    for manifest in manifests:
        kind, name = manifest["kind"], manifest["metadata"]["name"]
        kube.kubectl("-n", namespace, "get", f"{kind.lower()}/{name}")
    print(f"every object accepted: {len(manifests)} ({', '.join(sorted({m['kind'] for m in manifests}))})")

    jobs = [m["metadata"]["name"] for m in manifests if m["kind"] == "Job"]
    settle(cluster, jobs[0] if jobs else None)
    all_on_the_node(kube, values, namespace, node, manifests, jobs)
    if jobs:
        outcome = run_lab_step("the tester Job", wait_job, cluster, jobs[0])
        check(outcome == "Complete", f"the tester Job (its pod completed by kwok) ended {outcome}")
        print("the tester Job completes (kwok completes its pod; run-lab's Job polling reads the outcome)")
    admission_refuses_privilege_escalation(kube, namespace)
    if roll:
        rebuilt_image_rolls(kube, cluster, namespace, node)
    kube.kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=120s")


def all_on_the_node(
    kube: Kube, values: Path, namespace: str, node: str, manifests: list[dict[str, Any]], jobs: list[str]
) -> None:
    """Every pod the chart renders scheduled on `node`, 0 Pending, requesting the rendered sum."""
    pods = kube.items("pods", "-n", namespace)
    pending = [p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Pending"]
    check(not pending, f"{values.name}: Pending on the node it claims: {pending}")
    elsewhere = {
        p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName") != node
    }
    check(not elsewhere, f"{values.name}: pods not on {node}: {elsewhere}")
    expected = pod_demands(manifests)
    check(len(pods) == len(expected), f"{values.name}: {len(pods)} pods, the chart renders {len(expected)}")
    if jobs:
        tester = [p for p in pods if p["metadata"].get("labels", {}).get("job-name") == jobs[0]]
        check(
            len(tester) == 1 and tester[0]["spec"].get("nodeName") == node,
            "the tester's pod is not scheduled",
        )
    on_node = total(pod_resources(p["spec"], "requests") for p in pods)
    rendered = total(d.requests for d in expected)
    check(on_node == rendered, f"requests on the node {on_node} differ from the rendered sum {rendered}")
    claims = kube.items("pvc", "-n", namespace)
    check(all(c["status"].get("phase") == "Bound" for c in claims), "a claim is not bound")
    room = Resources.of(
        kube.items("nodes", "--field-selector", f"metadata.name={node}")[0]["status"]["allocatable"]
    )
    print(f"{len(pods)} pods scheduled on {node}, 0 Pending; they request {on_node} of its {room}")
    tester_said = "the tester's pod scheduled" if jobs else "no Job in these values"
    print(f"beside kind's share ({KIND_SHARE_CPU:.2f} CPU); {tester_said}")
