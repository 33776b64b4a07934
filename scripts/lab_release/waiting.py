"""Step 3: wait for every Deployment to roll out and the tester's pod to run, showing pods ready x/y;
on a timeout or an image that cannot be pulled, each waiting pod's reason."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from . import timing
from .cluster import Cluster, say
from .demand import Manifest

PULL_FAILURES = {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"}


@dataclass
class Progress:
    ready: int
    expected: int
    waiting: dict[str, str]  # pod (or Deployment) -> why it is not ready
    pulling: dict[str, str]  # pod whose image cannot be pulled -> its component
    tester_pod: str | None  # the tester's pod, once it runs or has finished

    @property
    def pull_failed(self) -> set[str]:
        """Components whose image cannot be pulled."""
        return set(self.pulling.values())


def rolled_out(deployment: Manifest) -> bool:
    spec, status = deployment["spec"], deployment.get("status", {})
    replicas = spec.get("replicas", 1)
    return bool(
        status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
        and status.get("replicas", 0) == replicas
        and status.get("updatedReplicas", 0) == replicas
        and status.get("readyReplicas", 0) == replicas
        and status.get("availableReplicas", 0) == replicas
    )


def why_not_ready(pod: Manifest) -> str:
    status = pod.get("status", {})
    for condition in status.get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] != "True":
            return f"Pending: {condition.get('message') or condition.get('reason', 'not scheduled')}"
    for container in [*status.get("initContainerStatuses", []), *status.get("containerStatuses", [])]:
        waiting = container.get("state", {}).get("waiting")
        if waiting:
            return f"{waiting.get('reason', 'waiting')}: {waiting.get('message', '')}".rstrip(": ")
        terminated = container.get("state", {}).get("terminated")
        if terminated and terminated.get("exitCode"):
            return f"exited {terminated['exitCode']} ({terminated.get('reason', '')})"
    return f"{status.get('phase', 'Pending')}, not ready yet"


def pod_ready(pod: Manifest) -> bool:
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


# Which client of the tester's Indexed Job a pod is: client 0 writes the log and the report.
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def progress(cluster: Cluster, job: str | None, clients: int = 1) -> Progress:
    s = cluster.s
    deployments = cluster.get("deployments", "--selector", s.selector())
    pods = [
        p
        for p in cluster.get("pods", "--selector", s.selector())
        if not p["metadata"].get("deletionTimestamp")
    ]
    expected = sum(d["spec"].get("replicas", 1) for d in deployments) + (clients if job else 0)
    ready = sum(d["spec"].get("replicas", 1) for d in deployments if rolled_out(d))
    waiting: dict[str, str] = {}
    pulling: dict[str, str] = {}
    tester_pod = None
    for pod in pods:
        name = pod["metadata"]["name"]
        labels = pod["metadata"].get("labels", {})
        if (
            job
            and labels.get("job-name") == job
            and pod["status"].get("phase") in ("Running", "Succeeded", "Failed")
        ):
            if labels.get(COMPLETION_INDEX, "0") == "0":
                tester_pod = name
            ready += 1
            continue
        if (labels.get("job-name") and labels.get("job-name") != job) or pod_ready(pod):
            continue  # a finished Job's pod of an earlier run, or a ready pod
        waiting[name] = why_not_ready(pod)
        if waiting[name].split(":")[0] in PULL_FAILURES:
            pulling[name] = labels.get("app.kubernetes.io/component", name)
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        if not rolled_out(deployment) and not any(pod.startswith(f"{name}-") for pod in waiting):
            waiting[f"deployment/{name}"] = "rolling out"
    return Progress(ready, expected, waiting, pulling, tester_pod)


def describe_waiting(waiting: dict[str, str]) -> str:
    return "\n".join(f"  {name}: {reason}" for name, reason in sorted(waiting.items()))


def wait_ready(
    cluster: Cluster,
    job: str | None,
    on_pull_failure: Callable[[set[str]], bool],
    timeout_s: float,
    clients: int = 1,
) -> Progress:
    """Until every Deployment is rolled out and every pod of the tester (its clients) runs; progress
    as it goes. The tester's pod to follow is client 0's."""
    deadline = time.monotonic() + timeout_s
    last_shown: tuple[int, int] | None = None
    last_detail = time.monotonic()
    pulling_since: dict[str, float] = {}
    while True:
        state = progress(cluster, job, clients)
        if state.pull_failed and on_pull_failure(state.pull_failed):
            deadline = time.monotonic() + timeout_s
            continue
        pulling_since = {pod: pulling_since.get(pod, time.monotonic()) for pod in state.pulling}
        stuck = [
            pod for pod, since in pulling_since.items() if time.monotonic() - since > timing.PULL_GRACE_S
        ]
        if stuck:
            raise SystemExit(
                f"run-lab: no image for {', '.join(stuck)} after {timing.PULL_GRACE_S:.0f} s:\n"
                f"{describe_waiting({pod: state.waiting[pod] for pod in stuck})}\n"
                "The lab's own images are built and loaded into kind by `make kind-up`."
            )
        if state.ready == state.expected and not state.waiting and (job is None or state.tester_pod):
            say(f"Pods ready {state.ready}/{state.expected}.")
            return state
        if (state.ready, state.expected) != last_shown:
            say(f"Pods ready {state.ready}/{state.expected}...")
            last_shown = (state.ready, state.expected)
        elif time.monotonic() - last_detail > timing.PROGRESS_EVERY_S:
            say(f"Pods ready {state.ready}/{state.expected}; waiting for:\n{describe_waiting(state.waiting)}")
            last_detail = time.monotonic()
        if time.monotonic() > deadline:
            raise SystemExit(
                f"run-lab: not ready after {timeout_s:.0f} s ({state.ready}/{state.expected}); waiting for:\n"
                f"{describe_waiting(state.waiting)}"
            )
        time.sleep(timing.POLL_S)
