"""etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok on 127.0.0.1: started
from the binaries platform/build-kubernetes cached, with throwaway credentials, stopped at the end."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from .checking import poll
from .config import CONTEXT, LOCALHOST, START_TIMEOUT_S, versions
from .processes import Processes, free_port


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
        api_port = start_etcd_and_apiserver(processes, binaries, state)
        config = kubeconfig(state, api_port, token)
        wait_for_apiserver(processes, binaries, config, api_port)
        start_controllers_and_kwok(processes, binaries, state, config)
        yield config
    finally:
        processes.stop_all()


def start_etcd_and_apiserver(processes: Processes, binaries: Binaries, state: Path) -> int:
    """Both started; the API server's port."""
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
    return api_port


def wait_for_apiserver(processes: Processes, binaries: Binaries, config: Path, api_port: int) -> None:
    kubectl = [binaries.kubectl, "--kubeconfig", str(config)]

    def ready() -> bool:
        processes.alive()
        probe = subprocess.run([*kubectl, "get", "--raw", "/readyz"], capture_output=True, text=True)
        return probe.returncode == 0 and probe.stdout.strip() == "ok"

    started = time.monotonic()
    poll("kube-apiserver /readyz", ready, START_TIMEOUT_S)
    print(f"kube-apiserver ready on {LOCALHOST}:{api_port} in {time.monotonic() - started:.1f} s")


def start_controllers_and_kwok(processes: Processes, binaries: Binaries, state: Path, config: Path) -> None:
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
    (state / "kwok.yaml").write_text("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\n")
    processes.start("kwok", [
        binaries.kwok, f"--kubeconfig={config}", f"--config={state / 'kwok.yaml'}",
        "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
        "--node-lease-duration-seconds=40",  # heartbeats as Lease renewals, as a kubelet's
        f"--server-address={LOCALHOST}:{free_port()}", f"--node-ip={LOCALHOST}",
    ])  # fmt: skip
