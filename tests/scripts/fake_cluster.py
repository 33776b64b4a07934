"""A stand-in for kubectl and helm, for scripts/run_lab.py's tests: no cluster runs here.

Installed as both `kubectl` and `helm` (FAKE_TOOL says which). `helm template` is the real helm, so
the preflight sums the real chart; `helm upgrade` renders the same way and keeps what it rendered as
the "installed" release. kubectl answers from that release and a scenario (scenario.json in the
state folder): the nodes, and per poll of the release's Deployments a step saying how each
component stands, e.g. {"*": "ready", "tester": "pending:0/1 nodes are available"}. States:
ready, running (not ready), pending:<message>, pull:<reason> (a waiting container), succeeded,
failed. `job` lists the Job's condition per poll ("" while it runs). Every call is logged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

STATE = Path(os.environ["FAKE_STATE"])
REAL_HELM = os.environ["REAL_HELM"]


def load(name: str, default: Any) -> Any:
    path = STATE / name
    return json.loads(path.read_text()) if path.exists() else default


def save(name: str, value: Any) -> None:
    (STATE / name).write_text(json.dumps(value))


def tick(counter: str) -> int:
    """How many times this counter was read before (then one more)."""
    counts = load("counters.json", {})
    value = counts.get(counter, 0)
    counts[counter] = value + 1
    save("counters.json", counts)
    return value


def helm(args: list[str]) -> int:
    if args[0] == "template":
        return subprocess.run([REAL_HELM, *args], check=False).returncode
    assert args[0] == "upgrade", args
    # Render what the upgrade would install: the same chart and values, as `helm template` does.
    rest, template = args[1:], []
    while rest:
        arg = rest.pop(0)
        if arg in ("--install", "--create-namespace"):
            continue
        if arg == "--kube-context":
            rest.pop(0)
            continue
        template.append(arg)
    result = subprocess.run([REAL_HELM, "template", *template], capture_output=True, text=True, check=False)
    if result.returncode:
        sys.stderr.write(result.stderr)
        return result.returncode
    import yaml  # the venv's, as run_lab.py's

    save("release.json", [doc for doc in yaml.safe_load_all(result.stdout) if doc])
    return 0


def component(manifest: dict[str, Any]) -> str:
    labels = manifest["metadata"]["labels"]
    return labels.get("concurrency-lab/target") or labels["app.kubernetes.io/component"]


def state_of(step: dict[str, str], name: str) -> str:
    return step.get(name, step.get("*", "ready"))


def pod(manifest: dict[str, Any], state: str, extra_labels: dict[str, str]) -> dict[str, Any]:
    kind, _, detail = state.partition(":")
    phase = {"pending": "Pending", "pull": "Pending", "succeeded": "Succeeded", "failed": "Failed"}.get(
        kind, "Running"
    )
    conditions = [
        {"type": "PodScheduled", "status": "False" if kind == "pending" else "True", "message": detail}
    ]
    conditions.append({"type": "Ready", "status": "True" if kind == "ready" else "False"})
    container: dict[str, Any] = {"name": "c", "state": {"running": {}}}
    if kind == "pull":
        container["state"] = {"waiting": {"reason": detail, "message": "no registry here"}}
    template = manifest["spec"]["template"]
    return {
        "metadata": {
            "name": f"{manifest['metadata']['name']}-x1",
            "namespace": os.environ.get("FAKE_NAMESPACE", "concurrency-lab"),
            "labels": {**template["metadata"]["labels"], **extra_labels},
        },
        "spec": template["spec"],
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": [container]},
    }


def deployment(manifest: dict[str, Any], state: str) -> dict[str, Any]:
    ready = 1 if state == "ready" else 0
    status = {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1}
    return {**manifest, "metadata": {**manifest["metadata"], "generation": 1},
            "status": {**status, "readyReplicas": ready, "availableReplicas": ready}}  # fmt: skip


def node(spec: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": spec["name"]},
        "spec": {},
        "status": {
            "allocatable": {"cpu": spec["cpu"], "memory": spec["memory"]},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def kube_share(spec: dict[str, str]) -> dict[str, Any]:
    """A pod that stands for kind's own control plane on the node."""
    requests = {"cpu": spec["used_cpu"], "memory": spec["used_memory"]}
    return {
        "metadata": {"name": f"control-plane-{spec['name']}", "namespace": "kube-system", "labels": {}},
        "spec": {
            "nodeName": spec["name"],
            "containers": [{"name": "c", "resources": {"requests": requests}}],
        },
        "status": {"phase": "Running"},
    }


def release_objects() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """The installed Deployments and pods in this poll's step, and the Job's name."""
    scenario = load("scenario.json", {})
    steps = scenario.get("steps", [{}])
    step = steps[min(load("counters.json", {}).get("deployments", 1) - 1, len(steps) - 1)]
    release = load("release.json", [])
    deployments, pods, job = [], [], None
    for manifest in release:
        if manifest["kind"] == "Deployment":
            state = state_of(step, component(manifest))
            deployments.append(deployment(manifest, state))
            pods.append(pod(manifest, state, {}))
        elif manifest["kind"] == "Job":
            job = manifest["metadata"]["name"]
            pods.append(pod(manifest, state_of(step, "tester"), {"job-name": job}))
    return deployments, pods, job


def job_object(name: str) -> dict[str, Any]:
    outcomes = load("scenario.json", {}).get("job", [""])
    outcome = outcomes[min(tick("job"), len(outcomes) - 1)]
    reason, _, message = outcome.partition(":")
    conditions = [{"type": reason, "status": "True", "reason": message}] if reason else []
    status = {"startTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "conditions": conditions}
    return {"metadata": {"name": name}, "spec": {"activeDeadlineSeconds": 1200}, "status": status}


def kubectl(args: list[str]) -> int:
    assert args[0] == "--context" and args[2] == "--namespace", args
    verb, rest = args[4], args[5:]
    items: list[dict[str, Any]]
    if verb == "delete":
        return 0
    if verb == "logs":
        if "--follow" in rest:
            time.sleep(float(os.environ.get("FAKE_LOG_SECONDS", "0")))
        print("tester summary: 4 targets measured")
        return 0
    if verb == "exec":
        code = rest[rest.index("--") + 3].replace("/results", os.environ["FAKE_RESULTS"])
        return subprocess.run([sys.executable, "-c", code], check=False).returncode
    assert verb == "get", args
    what = rest[0]
    if what == "nodes":
        items = [node(spec) for spec in load("scenario.json", {})["nodes"]]
    elif what == "pods" and "--all-namespaces" in rest:
        items = [kube_share(spec) for spec in load("scenario.json", {})["nodes"]] + release_objects()[1]
    elif what == "deployments":
        tick("deployments")
        items = release_objects()[0]
    elif what == "pods":
        items = release_objects()[1]
    elif what == "deployment":  # --output name
        names = [d["metadata"]["name"] for d in release_objects()[0] if component(d) == "results"]
        print("\n".join(f"deployment.apps/{name}" for name in names))
        return 0
    elif what == "job":
        job = release_objects()[2]
        items = [job_object(job)] if job else []
    else:
        raise AssertionError(f"unexpected kubectl get {rest}")
    print(json.dumps({"items": items}))
    return 0


def main() -> int:
    name = os.environ["FAKE_TOOL"]
    with (STATE / "calls.log").open("a") as log:
        log.write(f"{name} {' '.join(sys.argv[1:])}\n")
    return helm(sys.argv[1:]) if name == "helm" else kubectl(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
