#!/usr/bin/env python3
"""`make cluster-check`: the chart on a real Kubernetes control plane with simulated nodes.

Usage: LAB_CACHE=... HELM=... python platform/cluster_check.py   (make cluster-check builds first)

Starts etcd, kube-apiserver, kube-scheduler and kube-controller-manager (built by
platform/build-kubernetes) and kwok, all on 127.0.0.1 only; no container runs. Then:
- one kwok node per node size the values files claim (`fits`), each carrying a pod that stands
  for kind's own control plane, and a namespace per values file enforcing the restricted Pod
  Security standard (admission is shown to refuse a privilege-escalating pod);
- every values file the chart offers: preflight (run-lab's own) accepts it on the node size it
  claims with every other node cordoned, `helm upgrade --install` is accepted, every object is in
  the API, every Deployment rolls out and every pod (the tester Job's too) is scheduled on that
  node; 0 Pending, and the requests on the node are the rendered sum. The results claim is bound
  to a PersistentVolume made here, as kind's provisioner would;
- `make run-lab` (scripts/run_lab.py) with the defaults on the 4-CPU node: refused by the
  preflight, which names ci/small-values.yaml, and nothing installed; without -f on the 2-CPU
  node it picks ci/two-cpu-values.yaml.
Everything it started is stopped on success, failure, Ctrl-C or SIGTERM (and, should this process
die, by the kernel: each child has a parent-death signal). Logs: build/cluster-check/.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
CHART = REPO_ROOT / "charts" / "concurrency-lab"
LOG_DIR = REPO_ROOT / "build" / "cluster-check"
# Certificates, token and etcd's data: removed at the end, and at the next start should a SIGKILL
# have left them (the components themselves die with this process: see die_with_parent).
STATE_DIR = LOG_DIR / "state"
LOCALHOST = "127.0.0.1"
RELEASE = "lab"
CONTEXT = "cluster-check"
START_TIMEOUT_S = 120
SETTLE_TIMEOUT_S = 180
POLL_S = 0.5
PR_SET_PDEATHSIG = 1


def load_run_lab() -> Any:
    """scripts/run_lab.py, whose preflight and waiting this check runs against a real API server."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_lab", REPO_ROOT / "scripts" / "run_lab.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_lab"] = module
    spec.loader.exec_module(module)
    return module


run_lab = load_run_lab()


def versions() -> dict[str, str]:
    lines = (REPO_ROOT / "platform" / "versions.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def step(message: str) -> None:
    print(f"\n== {message}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCALHOST, 0))
        return int(sock.getsockname()[1])


def die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM when this check's process dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Fail(Exception):
    """A check that did not hold."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Fail(message)


def poll(what: str, probe: Callable[[], Any], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise Fail(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(POLL_S)


# -- The control plane -----------------------------------------------------------------------


@dataclass
class Binaries:
    k8s: Path
    etcd: Path
    kwok: Path
    helm: str

    @classmethod
    def from_cache(cls, cache: Path, helm: str) -> Binaries:
        pins = versions()
        found = cls(
            cache / "k8s" / pins["KUBERNETES_VERSION"],
            cache / "etcd" / pins["ETCD_VERSION"] / "etcd",
            cache / "bin" / "kwok",
            helm,
        )
        for path in (found.k8s / "kube-apiserver", found.etcd, found.kwok):
            if not path.exists():
                raise SystemExit(f"{path} is missing: run `make kubernetes-binaries`")
        return found

    @property
    def kubectl(self) -> str:
        return str(self.k8s / "kubectl")


class Processes:
    """Components started in order, stopped in reverse; each one's output in its own log."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, command: Sequence[str | Path]) -> subprocess.Popen[bytes]:
        with (self.log_dir / f"{name}.log").open("wb") as log:
            process = subprocess.Popen(
                [str(arg) for arg in command],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C reaches this check, which stops them in order
                preexec_fn=die_with_parent,
            )
        self.running.append((name, process))
        return process

    def alive(self) -> None:
        for name, process in self.running:
            if process.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_text(errors="replace")[-2000:]
                raise Fail(f"{name} exited ({process.returncode}):\n{tail}")

    def stop_all(self) -> None:
        for name, process in reversed(self.running):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    print(f"{name} ignored SIGTERM: killed", flush=True)
                    process.kill()
                    process.wait()
        self.running.clear()


def certificates(state: Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1, the service-account key pair."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=state, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-days", "1", "-subj", "/CN=cluster-check-ca")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "apiserver.key", "-out", "apiserver.csr",
            "-subj", "/CN=kube-apiserver")  # fmt: skip
    (state / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "apiserver.crt", "-days", "1", "-extfile", "san.ext")  # fmt: skip
    openssl("genrsa", "-out", "sa.key", "2048")
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")


def kubeconfig(state: Path, port: int, token: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": f"https://{LOCALHOST}:{port}", "certificate-authority": str(state / "ca.crt")}}],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "admin"}}],
        "current-context": CONTEXT,
    }  # fmt: skip
    path = state / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


@contextlib.contextmanager
def control_plane(binaries: Binaries, state: Path, log_dir: Path) -> Iterator[Path]:
    """etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok on 127.0.0.1."""
    processes = Processes(log_dir)
    try:
        certificates(state)
        token = os.urandom(16).hex()
        (state / "tokens.csv").write_text(f"{token},admin,admin,system:masters\n")
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        processes.start("etcd", [
            binaries.etcd, "--name", "check", "--data-dir", state / "etcd",
            "--listen-client-urls", f"http://{LOCALHOST}:{etcd_port}",
            "--advertise-client-urls", f"http://{LOCALHOST}:{etcd_port}",
            "--listen-peer-urls", f"http://{LOCALHOST}:{peer_port}",
            "--initial-advertise-peer-urls", f"http://{LOCALHOST}:{peer_port}",
            "--initial-cluster", f"check=http://{LOCALHOST}:{peer_port}",
            "--unsafe-no-fsync",  # throwaway data: no need to wait for the disk
        ])  # fmt: skip
        processes.start("kube-apiserver", [
            binaries.k8s / "kube-apiserver",
            f"--etcd-servers=http://{LOCALHOST}:{etcd_port}",
            f"--bind-address={LOCALHOST}", f"--advertise-address={LOCALHOST}", f"--secure-port={api_port}",
            f"--tls-cert-file={state / 'apiserver.crt'}", f"--tls-private-key-file={state / 'apiserver.key'}",
            f"--client-ca-file={state / 'ca.crt'}",
            f"--token-auth-file={state / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={state / 'sa.pub'}",
            f"--service-account-signing-key-file={state / 'sa.key'}",
            # A config value only: nothing is ever routed there.
            "--service-cluster-ip-range=10.96.0.0/16",
            # Never publish 127.0.0.1 as the `kubernetes` Service's endpoint.
            "--endpoint-reconciler-type=none",
            "--profiling=false",
        ])  # fmt: skip
        config = kubeconfig(state, api_port, token)
        kubectl = [binaries.kubectl, "--kubeconfig", str(config)]

        def ready() -> bool:
            processes.alive()
            probe = subprocess.run([*kubectl, "get", "--raw", "/readyz"], capture_output=True, text=True)
            return probe.returncode == 0 and probe.stdout.strip() == "ok"

        started = time.monotonic()
        poll("kube-apiserver /readyz", ready, START_TIMEOUT_S)
        print(f"kube-apiserver ready on {LOCALHOST}:{api_port} in {time.monotonic() - started:.1f} s")
        for component in ("kube-scheduler", "kube-controller-manager"):
            extra = ["--leader-elect=false", "--secure-port=0", f"--kubeconfig={config}"]
            if component == "kube-controller-manager":
                extra += [
                    f"--service-account-private-key-file={state / 'sa.key'}",
                    f"--root-ca-file={state / 'ca.crt'}",
                    # Simulated nodes never fail: a heartbeat late on a loaded machine must not mark
                    # them NotReady (which marks their pods not ready for good).
                    "--node-monitor-grace-period=5m",
                ]
            processes.start(component, [binaries.k8s / component, *extra])
        (state / "kwok.yaml").write_text(
            "apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\n"
        )
        processes.start("kwok", [
            binaries.kwok, f"--kubeconfig={config}", f"--config={state / 'kwok.yaml'}",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",  # heartbeats as Lease renewals, as a kubelet's
            f"--server-address={LOCALHOST}:{free_port()}", f"--node-ip={LOCALHOST}",
        ])  # fmt: skip
        yield config
    finally:
        processes.stop_all()


# -- The checks ------------------------------------------------------------------------------


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
        return json.loads(self.kubectl("get", *args, "--output", "json"))["items"]

    def settings(self, namespace: str, helm_args: str = "") -> Any:
        return run_lab.Settings(
            helm=self.binaries.helm, kubectl=self.binaries.kubectl, kube_context=CONTEXT, release=RELEASE,
            namespace=namespace, chart=CHART, helm_args=helm_args.split(),
        )  # fmt: skip


def settle(cluster: Any, job: str | None) -> None:
    """run-lab's own wait: every Deployment rolled out, the tester's pod running or done."""
    run_lab_step(
        "waiting for the release", run_lab.wait_ready, cluster, job, lambda _: False, SETTLE_TIMEOUT_S
    )


def run_lab_step(what: str, step_function: Callable[..., Any], *args: Any) -> Any:
    """A step of run-lab's own code: its refusal (SystemExit) is this check's failure."""
    try:
        return step_function(*args)
    except SystemExit as refusal:
        raise Fail(f"{what}: {refusal}") from None


def node_name(node: Any) -> str:
    return f"kind-{node.cpu:g}cpu"


def make_nodes(kube: Kube, sizes: list[Any]) -> None:
    """A simulated node per size, and on each a pod standing for kind's own control plane."""
    share = {
        "cpu": f"{round(run_lab.KIND_SHARE_CPU * 1000)}m",
        "memory": f"{run_lab.KIND_SHARE_MEMORY // 2**20}Mi",
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
        lambda: len([n for n in kube.items("nodes") if run_lab.schedulable(n)]) == len(sizes),
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


def helm_upgrade(kube: Kube, namespace: str, args: Sequence[str]) -> None:
    command = [kube.binaries.helm, "upgrade", "--install", RELEASE, str(CHART), "--kube-context", CONTEXT,
               "--namespace", namespace, *args]  # fmt: skip
    helm = subprocess.run(command, capture_output=True, text=True, timeout=300)
    check(helm.returncode == 0, f"helm refused `{' '.join(command[1:])}`: {helm.stderr}")


def install_profile(kube: Kube, values: Path, size: Any, roll: bool) -> None:
    namespace = f"check-{values.name.removesuffix('.yaml').removesuffix('-values')}"
    node = node_name(size)
    step(f"{values.relative_to(REPO_ROOT)} on {node} ({size.cpu:g} CPUs, {run_lab.gib(size.memory)})")
    only_schedulable(kube, node)
    restricted_namespace(kube, namespace)
    args = "" if values.name == "values.yaml" else f"--values {values}"
    settings = kube.settings(namespace, args)
    cluster = run_lab.Cluster(settings)
    picked = run_lab_step(f"preflight of {values.name} on {node}", run_lab.preflight, cluster, [])
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
    pods = kube.items("pods", "-n", namespace)
    pending = [p["metadata"]["name"] for p in pods if p["status"].get("phase") == "Pending"]
    check(not pending, f"{values.name}: Pending on the node it claims: {pending}")
    elsewhere = {
        p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods if p["spec"].get("nodeName") != node
    }
    check(not elsewhere, f"{values.name}: pods not on {node}: {elsewhere}")
    expected = run_lab.pod_demands(manifests)
    check(len(pods) == len(expected), f"{values.name}: {len(pods)} pods, the chart renders {len(expected)}")
    if jobs:
        tester = [p for p in pods if p["metadata"].get("labels", {}).get("job-name") == jobs[0]]
        check(
            len(tester) == 1 and tester[0]["spec"].get("nodeName") == node,
            "the tester's pod is not scheduled",
        )
    on_node = run_lab.total(run_lab._pod_resources(p["spec"], "requests") for p in pods)
    rendered = run_lab.total(d.requests for d in expected)
    check(on_node == rendered, f"requests on the node {on_node} differ from the rendered sum {rendered}")
    claims = kube.items("pvc", "-n", namespace)
    check(all(c["status"].get("phase") == "Bound" for c in claims), "a claim is not bound")
    room = run_lab.Resources.of(
        kube.items("nodes", "--field-selector", f"metadata.name={node}")[0]["status"]["allocatable"]
    )
    print(f"{len(pods)} pods scheduled on {node}, 0 Pending; they request {on_node} of its {room}")
    tester = "the tester's pod scheduled" if jobs else "no Job in these values"
    print(f"beside kind's share ({run_lab.KIND_SHARE_CPU:.2f} CPU); {tester}")
    if jobs:
        outcome = run_lab_step("the tester Job", run_lab.wait_job, cluster, jobs[0])
        check(outcome == "Complete", f"the tester Job (its pod completed by kwok) ended {outcome}")
        print("the tester Job completes (kwok completes its pod; run-lab's Job polling reads the outcome)")
    admission_refuses_privilege_escalation(kube, namespace)
    if roll:
        rebuilt_image_rolls(kube, cluster, namespace, node)
    kube.kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=120s")


REBUILT = "concurrency-lab/fastapi-target"


def rebuilt_image_rolls(kube: Kube, cluster: Any, namespace: str, node: str) -> None:
    """A new content tag for one image on a full node: its pods are replaced (Recreate: a surged
    extra pod would not fit), every other pod stays, and run-lab's preflight accepts the upgrade
    (the release's own pods are not counted against it)."""
    before = {
        p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
        for p in kube.items("pods", "-n", namespace)
    }
    tag_args = ["--set-string", f"image.tags.{REBUILT}=src-rebuilt"]
    run_lab_step("preflight of an upgrade in place", run_lab.preflight, cluster, tag_args)
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


def too_big_is_refused(kube: Kube, size: Any, env: dict[str, str]) -> None:
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


def auto_pick(kube: Kube, size: Any, expected: Path) -> None:
    node = node_name(size)
    step(f"make run-lab without -f on {node}: picks the profile that fits")
    only_schedulable(kube, node)
    cluster = run_lab.Cluster(kube.settings("check-auto"))
    picked = run_lab_step(f"run-lab on {node}", run_lab.preflight, cluster, [])
    check(picked == ["--values", str(expected)], f"picked {picked}, not {expected}")


def main() -> int:
    cache = Path(os.environ.get("LAB_CACHE") or sys.exit("set LAB_CACHE (the Makefile does)"))
    binaries = Binaries.from_cache(cache, os.environ.get("HELM") or sys.exit("set HELM (the Makefile does)"))
    profiles = [run_lab.profile(values, CHART) for values in run_lab.values_files(CHART)]
    sizes = sorted({p.node for p in profiles}, key=lambda size: size.cpu, reverse=True)
    shutil.rmtree(LOG_DIR, ignore_errors=True)
    STATE_DIR.mkdir(parents=True, mode=0o700)
    started = time.monotonic()
    try:
        with control_plane(binaries, STATE_DIR, LOG_DIR) as config:
            os.environ["KUBECONFIG"] = str(config)  # for run-lab's kubectl and helm, as for this check's
            kube = Kube(binaries, config)
            step(
                "nodes: "
                + ", ".join(f"{node_name(s)} ({s.cpu:g} CPUs, {run_lab.gib(s.memory)})" for s in sizes)
            )
            make_nodes(kube, sizes)
            for profile in profiles:
                install_profile(kube, profile.path, profile.node, roll=profile.node.cpu == 2)
            by_cpu = {size.cpu: size for size in sizes}
            too_big_is_refused(kube, by_cpu[4], dict(os.environ))
            auto_pick(kube, by_cpu[2], CHART / "ci" / "two-cpu-values.yaml")
            auto_pick(kube, by_cpu[4], CHART / "ci" / "small-values.yaml")
    finally:
        shutil.rmtree(STATE_DIR, ignore_errors=True)
    step(f"cluster-check passed in {time.monotonic() - started:.0f} s; everything it started has stopped")
    return 0


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM: unwinds like an exception, so everything started is stopped."""

    def __init__(self, signum: int) -> None:
        self.signum = signum


def interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


if __name__ == "__main__":
    # Installed explicitly: a shell that starts this in the background may have SIGINT ignored.
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, interrupt)
    try:
        sys.exit(main())
    except Fail as failure:
        print(f"\ncluster-check FAILED: {failure}\n(logs of every component: {LOG_DIR})", file=sys.stderr)
        sys.exit(1)
    except Interrupted as stop:
        name = signal.Signals(stop.signum).name
        print(f"\ncluster-check stopped by {name}; everything it started has stopped.",
              file=sys.stderr)  # fmt: skip
        sys.exit(128 + stop.signum)
