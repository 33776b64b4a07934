#!/usr/bin/env python3
"""`make run-lab`: check the release fits, install it, wait for it, run the tester Job, copy reports.

Settings come from the Makefile as environment variables (see `Settings`). The steps:
1. Preflight: the release's summed requests against the nodes' allocatable CPU and memory minus
   what other pods already request there. Without -f/--values in HELM_ARGS, the largest profile
   that fits is picked (values files whose `fits.autoPick` is true) and named; with them, a release
   that does not fit is refused with the values file that would.
2. `helm upgrade --install` with each image's content tag (--set-string), a fresh tester Job.
3. Wait, showing pods ready x/y, for every Deployment to be rolled out and the tester's pod to
   run; on a timeout, each waiting pod's reason. Where Grafana's image cannot be pulled, the lab
   is installed without it, and that is said in one line.
4. Follow the tester's log (its summary ends it), poll the Job until it ends or its
   activeDeadlineSeconds passes, copy the reports out, exit 0 only if the Job completed.
Ctrl-C at any step stops every process this started.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

Manifest = dict[str, Any]

CHART_DIR = Path(__file__).resolve().parents[1] / "charts" / "concurrency-lab"
# What kind's own control plane requests on its node (apiserver, controller-manager, scheduler,
# etcd, two CoreDNS, kindnet): measured 950m and about 290Mi. Profiles must fit beside it.
KIND_SHARE_CPU = 0.95
KIND_SHARE_MEMORY = 300 * 2**20
READY_TIMEOUT_S = 600
POLL_S = 2.0
PROGRESS_EVERY_S = 30.0
# After activeDeadlineSeconds the Job controller fails the Job; allow it this long to say so.
DEADLINE_GRACE_S = 60
PULL_FAILURES = {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"}
# An image that cannot be pulled does not come by waiting 10 minutes: say so after this long.
PULL_GRACE_S = 60.0
DASHBOARD_JSON = "charts/concurrency-lab/dashboards/lab.json"
PROMETHEUS_URL = "http://127.0.0.1:9090"


# -- Quantities ------------------------------------------------------------------------------

_SUFFIXES = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
# A node's allocatable memory comes in Ki ("24684084Ki"); decimal kilo is a lower-case k.
_QUANTITY = re.compile(r"^([0-9.]+(?:[eE][0-9]+)?)(m|k|[KMGTPE]i|[MGTPE])?$")


def cpu_cores(quantity: str | int | float) -> float:
    """A Kubernetes CPU quantity in cores: "250m" -> 0.25, "2" -> 2.0."""
    text = str(quantity)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def memory_bytes(quantity: str | int | float) -> int:
    """A Kubernetes memory quantity in bytes: "512Mi", "1G", "1048576"."""
    match = _QUANTITY.match(str(quantity))
    if not match:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    number, suffix = match.groups()
    if suffix == "m":
        return int(float(number) / 1000)
    return int(float(number) * _SUFFIXES[suffix or ""])


def gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


@dataclass(frozen=True)
class Resources:
    """CPU (cores) and memory (bytes)."""

    cpu: float = 0.0
    memory: int = 0

    def __post_init__(self) -> None:
        # Millicores are what Kubernetes counts: sums compare exactly, without float residue.
        object.__setattr__(self, "cpu", round(self.cpu, 3))

    @classmethod
    def of(cls, quantities: dict[str, Any] | None) -> Resources:
        quantities = quantities or {}
        return cls(cpu_cores(quantities.get("cpu", 0)), memory_bytes(quantities.get("memory", 0)))

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory)

    def fits_in(self, room: Resources) -> bool:
        return self.cpu <= room.cpu and self.memory <= room.memory

    def __str__(self) -> str:
        return f"{self.cpu:.2f} CPU and {gib(self.memory)}"


def total(items: Iterable[Resources]) -> Resources:
    result = Resources()
    for item in items:
        result += item
    return result


# -- What a release asks for -----------------------------------------------------------------


@dataclass(frozen=True)
class PodDemand:
    """One pod a release creates: what the scheduler reserves for it and what it may use."""

    name: str
    requests: Resources
    limits: Resources


def _pod_resources(pod_spec: Manifest, key: str) -> Resources:
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
        requests, limits = _pod_resources(pod, "requests"), _pod_resources(pod, "limits")
        demands += [PodDemand(f"{kind}/{manifest['metadata']['name']}", requests, limits)] * count
    return demands


# -- What the cluster has room for -----------------------------------------------------------


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
            used[node] = used.get(node, Resources()) + _pod_resources(pod["spec"], "requests")
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


# -- Profiles: values files and the node each fits -------------------------------------------


@dataclass(frozen=True)
class Profile:
    path: Path
    node: Resources
    auto_pick: bool

    @property
    def room(self) -> Resources:
        """What a kind node of this size leaves for the lab."""
        return self.node - Resources(KIND_SHARE_CPU, KIND_SHARE_MEMORY)

    def helm_args(self) -> list[str]:
        return [] if self.path.name == "values.yaml" else ["--values", str(self.path)]


def values_files(chart: Path = CHART_DIR) -> list[Path]:
    """The values the chart offers: its defaults and every ci/*-values.yaml."""
    return [chart / "values.yaml", *sorted((chart / "ci").glob("*-values.yaml"))]


def profile(path: Path, chart: Path = CHART_DIR) -> Profile:
    """The `fits` of a values file, over the defaults' (as Helm merges them)."""
    fits = dict(yaml.safe_load((chart / "values.yaml").read_text())["fits"])
    fits.update((yaml.safe_load(path.read_text()) or {}).get("fits") or {})
    return Profile(path, Resources(float(fits["cpu"]), memory_bytes(fits["memory"])), bool(fits["autoPick"]))


def auto_profiles(chart: Path = CHART_DIR) -> list[Profile]:
    """The whole-lab profiles, largest node first: the order run-lab tries them in."""
    found = [p for p in map(profile, values_files(chart)) if p.auto_pick]
    return sorted(found, key=lambda p: (p.node.cpu, p.node.memory), reverse=True)


def names_values(helm_args: Sequence[str]) -> bool:
    """Whether HELM_ARGS choose values files themselves (-f, --values)."""
    return any(a in ("-f", "--values") or a.startswith(("-f=", "--values=")) for a in helm_args)


# -- Kubernetes and Helm ---------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """What the Makefile passes (environment variables of the same names)."""

    helm: str
    kubectl: str
    kube_context: str
    release: str
    namespace: str
    chart: Path
    helm_args: list[str]
    image_tags: Path | None = None
    results_dir: Path = Path("results/kind")
    grafana_url: str = "http://127.0.0.1:3000"

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Settings:
        missing = [
            k for k in ("HELM", "KUBECTL", "KUBE_CONTEXT", "RELEASE", "NAMESPACE", "CHART") if not env.get(k)
        ]
        if missing:
            raise SystemExit(f"run-lab: set {', '.join(missing)} (the Makefile does)")
        return cls(
            helm=env["HELM"],
            kubectl=env["KUBECTL"],
            kube_context=env["KUBE_CONTEXT"],
            release=env["RELEASE"],
            namespace=env["NAMESPACE"],
            chart=Path(env["CHART"]),
            helm_args=shlex.split(env.get("HELM_ARGS", "")),
            image_tags=Path(env["IMAGE_TAGS"]) if env.get("IMAGE_TAGS") else None,
            results_dir=Path(env.get("RESULTS_DIR", "results/kind")),
            grafana_url=env.get("GRAFANA_URL", "http://127.0.0.1:3000"),
        )

    def selector(self, component: str | None = None) -> str:
        labels = f"app.kubernetes.io/instance={self.release}"
        return labels + (f",app.kubernetes.io/component={component}" if component else "")


def say(message: str) -> None:
    print(message, flush=True)


def run(command: Sequence[str], *, capture: bool = True) -> str:
    """Run a command to its end (killed on Ctrl-C); its stdout, or a SystemExit with its stderr."""
    result = subprocess.run(command, capture_output=capture, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or "").strip() if capture else ""
        raise SystemExit(
            f"run-lab: `{shlex.join(command)}` failed ({result.returncode}){': ' + detail if detail else ''}"
        )
    return result.stdout if capture else ""


class Cluster:
    """kubectl and helm for one context and namespace."""

    def __init__(self, settings: Settings) -> None:
        self.s = settings

    def kubectl(self, *args: str) -> list[str]:
        return [self.s.kubectl, "--context", self.s.kube_context, "--namespace", self.s.namespace, *args]

    def get(self, *args: str) -> list[Manifest]:
        return json.loads(run(self.kubectl("get", *args, "--output", "json")))["items"]

    def nodes(self) -> list[Manifest]:
        return self.get("nodes")

    def all_pods(self) -> list[Manifest]:
        return self.get("pods", "--all-namespaces")

    def render(self, helm_args: Sequence[str]) -> list[Manifest]:
        command = [
            self.s.helm,
            "template",
            self.s.release,
            str(self.s.chart),
            "--namespace",
            self.s.namespace,
        ]
        return [doc for doc in yaml.safe_load_all(run([*command, *helm_args])) if doc]

    def ours(self, pod: Manifest) -> bool:
        """A pod of this release: upgrading replaces it, so its requests are not in the way."""
        labels = pod["metadata"].get("labels", {})
        return (
            pod["metadata"].get("namespace") == self.s.namespace
            and labels.get("app.kubernetes.io/instance") == self.s.release
        )


# -- 1. Preflight ----------------------------------------------------------------------------


def fits(cluster: Cluster, helm_args: Sequence[str], free: Sequence[Room]) -> tuple[bool, Resources]:
    demands = pod_demands(cluster.render(helm_args))
    return not place(demands, free), total(d.requests for d in demands)


def preflight(cluster: Cluster, extra_args: Sequence[str]) -> list[str]:
    """The values arguments to install with, after checking they fit; SystemExit when none do."""
    free = rooms(cluster.nodes(), cluster.all_pods(), cluster.ours)
    room = total(r.free for r in free)
    where = f"the nodes have {room} free (allocatable minus what other pods request)"
    user_args = cluster.s.helm_args
    if names_values(user_args):
        ok, requested = fits(cluster, [*user_args, *extra_args], free)
        if ok:
            say(f"Preflight: the release requests {requested}; {where}: it fits.")
            return []
        message = f"Preflight: the release requests {requested}, but {where}: it does not fit."
        for candidate in auto_profiles(cluster.s.chart):
            if fits(cluster, [*candidate.helm_args(), *extra_args], free)[0]:
                hint = shlex.join(candidate.helm_args()) or "(no -f: the defaults)"
                raise SystemExit(
                    f'{message}\nThe values file that fits: {candidate.path} (HELM_ARGS="{hint}")'
                )
        raise SystemExit(f"{message}\nNo profile of the chart fits this cluster either.")
    for candidate in auto_profiles(cluster.s.chart):
        ok, requested = fits(cluster, [*candidate.helm_args(), *user_args, *extra_args], free)
        if ok:
            say(f"Profile: {candidate.path}, the largest that fits this cluster.")
            say(f"Preflight: the release requests {requested}; {where}.")
            return candidate.helm_args()
    smallest = auto_profiles(cluster.s.chart)[-1]
    raise SystemExit(
        f"Preflight: no profile fits: {where}; even {smallest.path} needs a {smallest.node.cpu:g}-CPU node."
    )


# -- 2. Install ------------------------------------------------------------------------------


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


# -- 3. Wait ---------------------------------------------------------------------------------


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
    return (
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


def progress(cluster: Cluster, job: str | None) -> Progress:
    s = cluster.s
    deployments = cluster.get("deployments", "--selector", s.selector())
    pods = [
        p
        for p in cluster.get("pods", "--selector", s.selector())
        if not p["metadata"].get("deletionTimestamp")
    ]
    expected = sum(d["spec"].get("replicas", 1) for d in deployments) + (1 if job else 0)
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
    cluster: Cluster, job: str | None, on_pull_failure: Callable[[set[str]], bool], timeout_s: float
) -> Progress:
    """Until every Deployment is rolled out and the tester's pod runs; progress as it goes."""
    deadline = time.monotonic() + timeout_s
    last_shown: tuple[int, int] | None = None
    last_detail = time.monotonic()
    pulling_since: dict[str, float] = {}
    while True:
        state = progress(cluster, job)
        if state.pull_failed and on_pull_failure(state.pull_failed):
            deadline = time.monotonic() + timeout_s
            continue
        pulling_since = {pod: pulling_since.get(pod, time.monotonic()) for pod in state.pulling}
        stuck = [pod for pod, since in pulling_since.items() if time.monotonic() - since > PULL_GRACE_S]
        if stuck:
            raise SystemExit(
                f"run-lab: no image for {', '.join(stuck)} after {PULL_GRACE_S:.0f} s:\n"
                f"{describe_waiting({pod: state.waiting[pod] for pod in stuck})}\n"
                "The lab's own images are built and loaded into kind by `make kind-up`."
            )
        if state.ready == state.expected and not state.waiting:
            say(f"Pods ready {state.ready}/{state.expected}.")
            return state
        if (state.ready, state.expected) != last_shown:
            say(f"Pods ready {state.ready}/{state.expected}...")
            last_shown = (state.ready, state.expected)
        elif time.monotonic() - last_detail > PROGRESS_EVERY_S:
            say(f"Pods ready {state.ready}/{state.expected}; waiting for:\n{describe_waiting(state.waiting)}")
            last_detail = time.monotonic()
        if time.monotonic() > deadline:
            raise SystemExit(
                f"run-lab: not ready after {timeout_s:.0f} s ({state.ready}/{state.expected}); waiting for:\n"
                f"{describe_waiting(state.waiting)}"
            )
        time.sleep(POLL_S)


# -- 4. The tester Job -----------------------------------------------------------------------


def job_outcome(job: Manifest) -> str | None:
    """'Complete' or 'Failed: <reason>' once the Job has ended, else None."""
    for condition in job.get("status", {}).get("conditions", []):
        if condition["status"] == "True" and condition["type"] in ("Complete", "SuccessCriteriaMet"):
            return "Complete"
        if condition["status"] == "True" and condition["type"] in ("Failed", "FailureTarget"):
            return f"Failed: {condition.get('reason', '')} {condition.get('message', '')}".strip()
    return None


def follow_log(cluster: Cluster, pod: str) -> bool:
    """Stream the tester's log to the terminal until its container exits; whether that worked."""
    process = subprocess.Popen(cluster.kubectl("logs", "--follow", f"pod/{pod}"))
    try:
        return process.wait() == 0
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait()


def wait_job(cluster: Cluster, name: str) -> str:
    """Poll the Job until it ends, or its deadline has passed with the controller silent."""
    while True:
        job = cluster.get("job", "--field-selector", f"metadata.name={name}")
        if not job:
            return "Failed: the Job is gone (deleted before it ended)"
        outcome = job_outcome(job[0])
        if outcome:
            return outcome
        started = job[0].get("status", {}).get("startTime")
        deadline = job[0]["spec"].get("activeDeadlineSeconds")
        ends = datetime.fromisoformat(started).timestamp() + deadline if started and deadline else None
        if ends is not None and time.time() > ends + DEADLINE_GRACE_S:
            return f"Failed: still running {deadline + DEADLINE_GRACE_S} s after it started"
        time.sleep(POLL_S)


def copy_reports(cluster: Cluster) -> None:
    """The results volume, out of the results server: a tar stream from Python (its image may lack tar)."""
    s = cluster.s
    deployment = run(
        cluster.kubectl("get", "deployment", "--selector", s.selector("results"), "--output", "name")
    )
    code = (
        'import sys, tarfile; t = tarfile.open(fileobj=sys.stdout.buffer, mode="w|"); '
        't.add("/results", "."); t.close()'
    )
    s.results_dir.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        cluster.kubectl("exec", deployment.strip(), "--", "python", "-c", code), stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
            archive.extractall(s.results_dir, filter="data")
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait()


# -- The whole run ---------------------------------------------------------------------------


def rendered(manifests: Sequence[Manifest], kind: str, component: str) -> list[Manifest]:
    return [
        m for m in manifests
        if m["kind"] == kind and m["metadata"]["labels"].get("app.kubernetes.io/component") == component
    ]  # fmt: skip


def main(env: dict[str, str]) -> int:
    settings = Settings.from_env(env)
    cluster = Cluster(settings)
    extra_args = image_tag_args(settings.image_tags)
    helm_args = [*preflight(cluster, extra_args), *settings.helm_args, *extra_args]
    manifests = cluster.render(helm_args)
    jobs = rendered(manifests, "Job", "tester")
    job = jobs[0]["metadata"]["name"] if jobs else None
    install(cluster, helm_args)

    grafana = rendered(manifests, "Deployment", "grafana")

    def without_grafana(components: set[str]) -> bool:
        nonlocal helm_args, grafana
        if components != {"grafana"} or not grafana:
            return False  # any other image that cannot be pulled is an error the timeout reports
        image = grafana[0]["spec"]["template"]["spec"]["containers"][0]["image"]
        say(
            f"Grafana: its image {image} cannot be pulled here, so the lab runs without it; import "
            f"{DASHBOARD_JSON} into a Grafana elsewhere (datasource: Prometheus at {PROMETHEUS_URL})."
        )
        helm_args = [*helm_args, "--set", "grafana.enabled=false"]
        grafana = []
        run([settings.helm, "upgrade", settings.release, str(settings.chart), "--kube-context",
             settings.kube_context, "--namespace", settings.namespace, *helm_args])  # fmt: skip
        return True

    state = wait_ready(cluster, job, without_grafana, READY_TIMEOUT_S)
    if job is None:
        say("These values have no tester Job: the targets run until `make kind-down`; nothing is measured.")
        return 0
    assert state.tester_pod is not None
    say(f"The tester runs in pod/{state.tester_pod}; its log follows (the summary is at the end).\n")
    if not follow_log(cluster, state.tester_pod):
        say("(the log could not be followed; it is printed once the Job has ended)")
        outcome = wait_job(cluster, job)
        subprocess.run(cluster.kubectl("logs", f"pod/{state.tester_pod}"), check=False)
    else:
        outcome = wait_job(cluster, job)
    copy_reports(cluster)
    say(f"\nReports:    {settings.results_dir}/ (also http://127.0.0.1:8090/)")
    if grafana:
        say(
            f"Grafana:    {settings.grafana_url} (anonymous read-only; `make grafana` for the admin password)"
        )
    say(f"Log again:  {shlex.join(cluster.kubectl('logs', f'job/{job}'))}")
    if outcome != "Complete":
        print(f"The tester Job did not complete: {outcome}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Ctrl-C (even where a shell started this with SIGINT ignored) and a CI timeout's SIGTERM
    # unwind the same way, so every child process is stopped.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        sys.exit(main(dict(os.environ)))
    except KeyboardInterrupt:
        print("\nrun-lab: interrupted; every process it started has stopped (the release stays installed).",
              file=sys.stderr)  # fmt: skip
        sys.exit(130)
