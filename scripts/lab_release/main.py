"""The whole run, step by step, and how Ctrl-C or SIGTERM ends it."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from . import timing
from .cluster import Cluster, Settings, run, say
from .demand import Manifest
from .install import image_tag_args, install
from .preflight import preflight
from .reports import copy_reports, proposal_written
from .tester_job import follow_log, wait_job
from .waiting import wait_ready

DASHBOARD_JSON = "charts/concurrency-lab/dashboards/lab.json"
PROMETHEUS_URL = "http://127.0.0.1:9090"


def rendered(manifests: Sequence[Manifest], kind: str, component: str) -> list[Manifest]:
    return [
        m for m in manifests
        if m["kind"] == kind and m["metadata"]["labels"].get("app.kubernetes.io/component") == component
    ]  # fmt: skip


def main(env: dict[str, str]) -> int:
    settings = Settings.from_env(env)
    started = time.time()
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

    clients = jobs[0]["spec"].get("parallelism", 1) if jobs else 0
    state = wait_ready(cluster, job, without_grafana, timing.READY_TIMEOUT_S, clients)
    if job is None:
        say("These values have no tester Job: the targets run until `make kind-down`; nothing is measured.")
        return 0
    assert state.tester_pod is not None
    outcome = run_tester(cluster, job, state.tester_pod)
    copy_reports(cluster)
    say(f"\nReports:    {settings.results_dir}/ (also http://127.0.0.1:8090/)")
    proposal = proposal_written(settings.results_dir, started)
    if proposal is not None:  # an app lab's sizing: the next step deploys and proves it
        say(f"Proposal:   {proposal}; deploy and prove it: make run-lab PROPOSAL={proposal}")
    if grafana:
        say(
            f"Grafana:    {settings.grafana_url} (anonymous read-only; `make grafana` for the admin password)"
        )
    say(f"Log again:  {shlex.join(cluster.kubectl('logs', f'job/{job}'))}")
    if outcome != "Complete":
        print(f"The tester Job did not complete: {outcome}", file=sys.stderr)
        return 1
    return 0


def run_tester(cluster: Cluster, job: str, pod: str) -> str:
    """The tester's log as it runs (or, where it cannot be followed, once it ends); the Job's outcome."""
    say(f"The tester runs in pod/{pod}; its log follows (the summary is at the end).\n")
    if not follow_log(cluster, pod):
        say("(the log could not be followed; it is printed once the Job has ended)")
        outcome = wait_job(cluster, job)
        subprocess.run(cluster.kubectl("logs", f"pod/{pod}"), check=False)
        return outcome
    return wait_job(cluster, job)


def entry() -> None:
    """`make run-lab`: main with the environment; Ctrl-C and SIGTERM stop every child process."""
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
