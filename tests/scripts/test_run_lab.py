"""scripts/run_lab.py (`make run-lab`, the steps in scripts/lab_release) against a stand-in cluster
(tests/scripts/fake_cluster.py).

The stand-in's `helm template` is the real helm, so what the preflight sums is the real chart; its
kubectl answers from what the run installed and a scenario of how each pod stands per poll.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lab_release import main, timing
from lab_release.demand import pod_demands
from tests.chart.conftest import CHART, render_chart, tool
from tests.chart.test_app import proposal_file
from tests.script_module import SCRIPTS

FAKE = Path(__file__).with_name("fake_cluster.py")
SMALL = CHART / "ci" / "small-values.yaml"
TWO_CPU = CHART / "ci" / "two-cpu-values.yaml"
TARGETS_ONLY = CHART / "ci" / "targets-only-values.yaml"
# A kind node of this many CPUs (memory in Ki, as kubelet reports it), with kind's own control plane on it.
NODE_4 = {"name": "kind", "cpu": "4", "memory": "16777216Ki", "used_cpu": "950m", "used_memory": "300Mi"}
NODE_2 = {**NODE_4, "cpu": "2", "used_cpu": "850m"}
NODE_16 = {**NODE_4, "cpu": "16"}
TESTER_PENDING = "pending:0/1 nodes are available: 1 Insufficient cpu."


@dataclass
class Run:
    code: int
    out: str
    err: str
    calls: list[str]
    results: Path

    def position(self, fragment: str) -> int:
        found = [i for i, call in enumerate(self.calls) if fragment in call]
        assert found, f"no call with {fragment!r} in {self.calls}"
        return found[0]

    def count(self, fragment: str) -> int:
        return sum(fragment in call for call in self.calls)


@pytest.fixture
def lab(tmp_path: Path) -> dict[str, str]:
    """Environment for lab_release.main.main: the Makefile's variables, pointed at the stand-in."""
    bin_dir, state, served = tmp_path / "bin", tmp_path / "state", tmp_path / "served"
    for folder in (bin_dir, state, served / "run-1"):
        folder.mkdir(parents=True)
    (served / "run-1" / "report.html").write_text("<html>report</html>")
    for name in ("kubectl", "helm"):
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nFAKE_TOOL={name} exec "{sys.executable}" "{FAKE}" "$@"\n')
        wrapper.chmod(0o755)
    tags = tmp_path / "image-tags"
    tags.write_text("concurrency-lab/fastapi-target=1e10\nconcurrency-lab/tester=src-0123\n")
    return {
        **os.environ,
        "HELM": str(bin_dir / "helm"),
        "KUBECTL": str(bin_dir / "kubectl"),
        "KUBE_CONTEXT": "kind-concurrency-lab",
        "RELEASE": "lab",
        "NAMESPACE": "concurrency-lab",
        "CHART": str(CHART),
        "IMAGE_TAGS": str(tags),
        "HELM_ARGS": "",
        "RESULTS_DIR": str(tmp_path / "results"),
        "GRAFANA_URL": "http://127.0.0.1:3000",
        "FAKE_STATE": str(state),
        "FAKE_RESULTS": str(served),
        "REAL_HELM": tool("helm", "tools"),
    }


def scenario(
    env: dict[str, str], nodes: list[dict[str, str]], steps: list[dict[str, str]], job: list[str]
) -> None:
    (Path(env["FAKE_STATE"]) / "scenario.json").write_text(
        json.dumps({"nodes": nodes, "steps": steps, "job": job})
    )


def run_main(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **overrides: str
) -> Run:
    monkeypatch.setattr(timing, "POLL_S", 0.01)
    for key, value in {**env, **overrides}.items():
        monkeypatch.setenv(key, value)  # the stand-in, a child process, reads its settings too
    code: Any
    try:
        code = main.main(dict(os.environ))
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    if isinstance(code, str):
        code, err = 1, err + code
    calls_log = Path(env["FAKE_STATE"]) / "calls.log"
    calls = calls_log.read_text().splitlines() if calls_log.exists() else []
    return Run(code, out, err, calls, Path(env["RESULTS_DIR"]))


def test_a_run_installs_waits_follows_the_tester_and_copies_the_report(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        {"*": "pending:scheduling", "tester": TESTER_PENDING},
        {"*": "ready", "tester": TESTER_PENDING},  # every Deployment ready, the tester not yet running
        {"*": "ready", "tester": "running"},
    ]
    scenario(lab, [NODE_16], steps, job=["", "", "Complete"])
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 0, run.err
    assert run.position("delete job") < run.position("helm upgrade --install lab")
    upgrade = run.calls[run.position("helm upgrade")]
    assert "--set-string image.tags.concurrency-lab/fastapi-target=1e10" in upgrade
    assert "--wait" not in upgrade
    # The log is followed only once the tester's pod runs: after the third poll.
    assert run.count("get deployments") == 3
    assert (
        run.position("logs --follow pod/lab-concurrency-lab-tester-x1")
        > [i for i, call in enumerate(run.calls) if "get deployments" in call][-1]
    )
    pods = len(pod_demands(render_chart()))  # every Deployment's pod and the tester's
    assert f"Pods ready 0/{pods}..." in run.out, "nothing ready at first"
    assert f"Pods ready {pods - 1}/{pods}..." in run.out, "every Deployment ready, the tester's pod not yet"
    assert f"Pods ready {pods}/{pods}." in run.out
    assert "Profile: " in run.out and "values.yaml, the largest that fits" in run.out
    assert run.count("get job") == 3, "the Job is polled until it ends"
    assert (run.results / "run-1" / "report.html").read_text() == "<html>report</html>"
    assert "Grafana:    http://127.0.0.1:3000" in run.out


def test_a_failed_job_fails_the_run_and_still_copies_the_report(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario(lab, [NODE_16], [{"*": "ready", "tester": "running"}], job=["", "Failed:DeadlineExceeded"])
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 1
    assert "The tester Job did not complete: Failed: DeadlineExceeded" in run.err
    assert (run.results / "run-1" / "report.html").exists(), "a failed run's partial report is still copied"


@pytest.mark.parametrize(("node", "picked"), [(NODE_4, SMALL), (NODE_2, TWO_CPU)], ids=["4 CPUs", "2 CPUs"])
def test_without_values_the_largest_profile_that_fits_is_picked(
    lab: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    node: dict[str, str],
    picked: Path,
) -> None:
    scenario(lab, [node], [{"*": "ready", "tester": "running"}], job=["Complete"])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS="--set tester.repeats=2")
    assert run.code == 0, run.err
    assert f"Profile: {picked}, the largest that fits this cluster." in run.out
    assert run.calls[run.position("helm upgrade")].endswith(
        f"--values {picked} --set tester.repeats=2 "
        "--set-string image.tags.concurrency-lab/fastapi-target=1e10 "
        "--set-string image.tags.concurrency-lab/tester=src-0123"
    )


def test_values_that_do_not_fit_are_refused_naming_the_file_that_does(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario(lab, [NODE_4], [{}], job=[""])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS=f"-f {CHART / 'values.yaml'}")
    assert run.code == 1
    assert "it does not fit" in run.err
    assert f"The values file that fits: {SMALL}" in run.err
    assert not run.count("helm upgrade") and not run.count("delete job"), "nothing is installed"


def test_the_release_s_own_pods_do_not_count_against_its_upgrade(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second run on a full 2-CPU node: the running release's pods are replaced, not added to."""
    scenario(lab, [NODE_2], [{"*": "ready", "tester": "running"}], job=["Complete"])
    assert run_main(lab, monkeypatch, capsys).code == 0
    (Path(lab["FAKE_STATE"]) / "counters.json").unlink()
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 0, run.err
    assert f"Profile: {TWO_CPU}" in run.out


def test_targets_only_waits_for_the_targets_and_runs_no_job(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario(lab, [NODE_16], [{"*": "running"}, {"*": "ready"}], job=[""])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS=f"-f {TARGETS_ONLY}")
    assert run.code == 0, run.err
    assert "no tester Job" in run.out
    assert not run.count("logs") and not run.count("get job") and not run.count("exec")


def test_grafana_whose_image_cannot_be_pulled_is_left_out_in_one_line(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        {"*": "ready", "tester": "running", "grafana": "pull:ErrImagePull"},
        {"*": "ready", "tester": "running"},
    ]
    scenario(lab, [NODE_16], steps, job=["Complete"])
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 0, run.err
    (line,) = [line for line in run.out.splitlines() if line.startswith("Grafana:")]
    assert "grafana/grafana:11.6.0 cannot be pulled here" in line
    assert "charts/concurrency-lab/dashboards/lab.json" in line
    assert run.count("helm upgrade") == 2
    assert (
        run.calls[-1] != "" and "--set grafana.enabled=false" in run.calls[run.position("helm upgrade lab")]
    )
    assert "Grafana:    http" not in run.out


def test_a_timeout_names_each_waiting_pod_and_its_reason(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(timing, "READY_TIMEOUT_S", 0.3)
    scenario(lab, [NODE_16], [{"*": "ready", "flask-2x": TESTER_PENDING, "tester": TESTER_PENDING}], job=[""])
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 1
    assert "not ready after" in run.err
    assert "lab-concurrency-lab-flask-2x-x1: Pending: 0/1 nodes are available: 1 Insufficient cpu." in run.err
    assert "lab-concurrency-lab-tester-x1: Pending" in run.err
    assert not run.count("logs")


def test_an_image_that_cannot_be_pulled_stops_the_wait_early(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(timing, "PULL_GRACE_S", 0.2)
    scenario(lab, [NODE_16], [{"*": "ready", "tester": "pull:ImagePullBackOff"}], job=[""])
    run = run_main(lab, monkeypatch, capsys)
    assert run.code == 1
    assert "no image for lab-concurrency-lab-tester-x1" in run.err and "make kind-up" in run.err
    assert "ImagePullBackOff" in run.err
    assert not run.count("logs")


def test_missing_image_tags_say_to_build_the_images(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario(lab, [NODE_16], [{}], job=[""])
    run = run_main(lab, monkeypatch, capsys, IMAGE_TAGS=str(tmp_path / "absent"))
    assert run.code == 1 and "make kind-up" in run.err


def test_ctrl_c_while_following_the_log_leaves_no_process_behind(lab: dict[str, str]) -> None:
    scenario(lab, [NODE_16], [{"*": "ready", "tester": "running"}], job=[""])
    env = {**lab, "FAKE_LOG_SECONDS": "60"}
    process = subprocess.Popen(
        [sys.executable, str(SCRIPTS / "run_lab.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    calls = Path(lab["FAKE_STATE"]) / "calls.log"
    deadline = time.monotonic() + 60
    while not (calls.exists() and "logs --follow" in calls.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.1)
    follower = find_processes("logs --follow")
    assert follower, "the log follower is running"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted" in err
    time.sleep(0.2)
    assert not find_processes("logs --follow"), "a background process was left behind"


def find_processes(fragment: str) -> list[int]:
    """Processes of the stand-in whose command line holds the fragment."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(FAKE) in command and fragment in command:
                found.append(int(entry.name))
    return found


# The README's command for a team's app on the cluster (its "Measure your own app" section).
APP_ARGS = (
    "--set app.enabled=true --set app.module=examples.shop.flask_app:app --set app.interface=wsgi "
    "--set app.paths={/report,/checkout?product=7}"
)


def test_an_app_lab_fits_a_two_cpu_node_and_deploys_the_app_alone(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The app's configurations replace the lab's own targets: the 2-CPU profile holds them."""
    scenario(lab, [NODE_2], [{"*": "ready", "tester": "running"}], job=["Complete"])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS=APP_ARGS)
    assert run.code == 0, run.err
    assert f"Profile: {TWO_CPU}, the largest that fits this cluster." in run.out
    installed = json.loads((Path(lab["FAKE_STATE"]) / "release.json").read_text())
    components = {
        m["metadata"]["labels"]["app.kubernetes.io/component"] for m in installed if m["kind"] == "Deployment"
    }
    assert "target" not in components and "app" in components, components


def test_when_no_profile_fits_the_message_says_what_the_release_requests(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not only the node's size: what the release asks, with the HELM_ARGS and without them."""
    scenario(lab, [{**NODE_2, "used_cpu": "1600m"}], [{}], job=[""])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS=APP_ARGS)
    assert run.code == 1
    assert "no profile fits: the nodes have 0.40 CPU" in run.err
    # The app's five WSGI configurations at 0.1 CPU each, beside the rest of the lab.
    assert f"the smallest, {TWO_CPU} (made for a 2-CPU node), requests 0.93 CPU" in run.err, run.err
    assert "(with HELM_ARGS; " in run.err
    assert not run.count("helm upgrade")


def test_a_proposal_goes_on_top_of_the_profile_that_fits(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`-f proposal-values.yaml` is an overlay (no `fits`): run-lab picks the profile under it, and
    installs the one proposed configuration."""
    scenario(lab, [NODE_2], [{"*": "ready", "tester": "running"}], job=["Complete"])
    run = run_main(lab, monkeypatch, capsys, HELM_ARGS=f"-f {proposal_file(tmp_path)}")
    assert run.code == 0, run.err
    assert f"Profile: {TWO_CPU}, the largest that fits this cluster." in run.out
    upgrade = run.calls[run.position("helm upgrade")]
    assert upgrade.index(f"--values {TWO_CPU}") < upgrade.index("proposal-values.yaml")
    installed = json.loads((Path(lab["FAKE_STATE"]) / "release.json").read_text())
    assert {m["metadata"]["name"] for m in installed if m["kind"] == "Deployment"} >= {
        "lab-concurrency-lab-app-proposed"
    }


def test_proposal_is_the_same_overlay_and_a_missing_one_is_refused_in_one_line(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario(lab, [NODE_2], [{"*": "ready", "tester": "running"}], job=["Complete"])
    run = run_main(lab, monkeypatch, capsys, PROPOSAL=str(proposal_file(tmp_path)))
    assert run.code == 0, run.err
    upgrade = run.calls[run.position("helm upgrade")]
    assert upgrade.index(f"--values {TWO_CPU}") < upgrade.index("proposal-values.yaml")
    missing = run_main(lab, monkeypatch, capsys, PROPOSAL=str(tmp_path / "absent.yaml"))
    assert missing.code == 2 and missing.calls == run.calls, missing  # nothing more was called
    assert missing.out.strip().startswith(f"run-lab: PROPOSAL={tmp_path / 'absent.yaml'}: no such file")


def test_a_proposal_the_run_wrote_is_named_with_the_command_that_proves_it(
    lab: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario(lab, [NODE_16], [{"*": "ready", "tester": "running"}], job=["Complete"])
    run = run_main(lab, monkeypatch, capsys)
    assert "Proposal:" not in run.out  # no sizing in this run
    written = Path(lab["FAKE_RESULTS"]) / "run-1" / "proposal-values.yaml"
    written.write_text("app: {}\n")
    later = time.time() + 60  # as the tester writes it: during the run
    os.utime(written, (later, later))
    run = run_main(lab, monkeypatch, capsys)
    copied = run.results / "run-1" / "proposal-values.yaml"
    assert f"Proposal:   {copied}; deploy and prove it: make run-lab PROPOSAL={copied}" in run.out
