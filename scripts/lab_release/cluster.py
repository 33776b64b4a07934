"""The Makefile's settings, and kubectl and helm for one context and namespace."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .demand import Manifest


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
        proposal = env.get("PROPOSAL", "")
        if proposal and not Path(proposal).is_file():
            print(f"run-lab: PROPOSAL={proposal}: no such file (a sizing writes it beside its results)")
            raise SystemExit(2)
        return cls(
            helm=env["HELM"],
            kubectl=env["KUBECTL"],
            kube_context=env["KUBE_CONTEXT"],
            release=env["RELEASE"],
            namespace=env["NAMESPACE"],
            chart=Path(env["CHART"]),
            # A sizing's proposal is an overlay, last, as `-f` in HELM_ARGS would be.
            helm_args=shlex.split(env.get("HELM_ARGS", "")) + (["-f", proposal] if proposal else []),
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
        items: list[Manifest] = json.loads(run(self.kubectl("get", *args, "--output", "json")))["items"]
        return items

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
        return bool(
            pod["metadata"].get("namespace") == self.s.namespace
            and labels.get("app.kubernetes.io/instance") == self.s.release
        )
