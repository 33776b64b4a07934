"""An upgrade in place on a full node: a rebuilt image rolls its own pods and no others."""

from __future__ import annotations

from lab_release.cluster import Cluster
from lab_release.preflight import preflight

from .checking import check, run_lab_step, settle
from .kube import Kube, helm_upgrade

REBUILT = "concurrency-lab/fastapi-target"


def rebuilt_image_rolls(kube: Kube, cluster: Cluster, namespace: str, node: str) -> None:
    """A new content tag for one image on a full node: its pods are replaced (Recreate: a surged
    extra pod would not fit), every other pod stays, and run-lab's preflight accepts the upgrade
    (the release's own pods are not counted against it)."""
    before = {
        p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
        for p in kube.items("pods", "-n", namespace)
    }
    tag_args = ["--set-string", f"image.tags.{REBUILT}=src-rebuilt"]
    run_lab_step("preflight of an upgrade in place", preflight, cluster, tag_args)
    helm_upgrade(kube, namespace, [*cluster.s.helm_args, *tag_args])
    jobs = [j["metadata"]["name"] for j in kube.items("jobs", "-n", namespace)]
    settle(cluster, jobs[0] if jobs else None)
    pods = kube.items("pods", "-n", namespace)
    after = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods}
    rolled = {name for name, image in before.items() if image.startswith(f"{REBUILT}:")}
    kept = set(before) - rolled
    check(
        bool(rolled) and not rolled & set(after),
        f"pods of the rebuilt image not replaced: {rolled & set(after)}",
    )
    check(kept <= set(after), f"pods of unchanged images were replaced: {kept - set(after)}")
    new = {name: image for name, image in after.items() if name not in before}
    check(len(new) == len(rolled) and all(image == f"{REBUILT}:src-rebuilt" for image in new.values()),
          f"the new pods do not run the new tag: {new}")  # fmt: skip
    check(all(p["spec"].get("nodeName") == node and p["status"].get("phase") != "Pending" for p in pods),
          "a pod is Pending after the upgrade")  # fmt: skip
    print(f"a rebuilt {REBUILT} rolls its {len(rolled)} pods on the full node; the other {len(kept)} stay")
