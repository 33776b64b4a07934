"""The sizing as the cluster's tester runs it: `labtester run` with the Job's environment and the
values the chart mounts (both rendered by helm from the chart), against a configuration already
deployed (a real gunicorn started here, named as the chart names it, app-<name>). It starts
nothing, writes the proposal beside its results (the pod's requests and limits, the prediction);
then that proposal, rendered the same way, is proved: predicted beside measured in results.json
and in the console's summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from labtester.launcher import RunningTarget, start_target
from labtester.targets import TEAM_APP, TargetDefinition
from tests.chart.conftest import CHART, PREFIX, find, render_chart
from tests.tester.app_lab import LIGHT_PROBES, NO_PLOTS, QUICK_FLOW, results_of

HERE = Path(__file__).parent
pytestmark = pytest.mark.timeout(600)
APP, PATHS = "sizing_app:app", ["/cpu", "/wait"]
# The measured configuration's pod, as the two-CPU profile gives an app's: a CPU limit of one, a
# tenth of it reserved.
RESOURCES = {"cpu": "1", "cpuRequest": "100m", "memory": "384Mi"}
GTHREAD = {"LAB_SERVER": "gunicorn", "LAB_WORKER_CLASS": "gthread", "LAB_WORKERS": "1", "LAB_THREADS": "4"}
OVERLAY = {
    "app": {
        "enabled": True,
        "module": APP,
        "interface": "wsgi",
        "paths": PATHS,
        "configurations": [{"name": "gthread", "interface": "wsgi", "env": GTHREAD, "resources": RESOURCES}],
    },
    "tester": {"proofSeconds": 5},
}


def deploy(workdir: Path, name: str, env: dict[str, str]) -> RunningTarget:
    """A configuration as the chart deploys it (`python -m serve team`), here on 127.0.0.1."""
    app = {"LAB_APP": APP, "LAB_APP_PATHS": json.dumps(PATHS), "PYTHONPATH": str(workdir)}
    (workdir / "logs").mkdir(exist_ok=True)
    return start_target(TargetDefinition(name, TEAM_APP, 0, env=env), extra_env=app, log_dir=workdir / "logs")


def job(
    workdir: Path, values: Path, url: str, *settings: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The tester Job the chart renders for these values (and `--set` settings), run here: its
    environment, its mounted values, against `url` (the one configuration deployed); the run's
    folder. Its clients beyond the first run here as processes, released at a barrier here."""
    manifests = render_chart(CHART / "ci" / "two-cpu-values.yaml", values, set_values=settings)
    mounted = find(manifests, "ConfigMap", f"{PREFIX}-tester-values")["data"]["values.yaml"]
    (workdir / "mounted.yaml").write_text(mounted)
    container = find(manifests, "Job", f"{PREFIX}-tester")["spec"]["template"]["spec"]["containers"][0]
    env = {
        e["name"]: e["value"] for e in container["env"] if "value" in e and e["name"].startswith("TESTER_")
    }
    name = env["TESTER_TARGETS"].partition("=")[0]
    output = workdir / f"out-{name}"
    env |= {
        "TESTER_TARGETS": f"{name}={url}",
        "TESTER_SIZING__VALUES": str(workdir / "mounted.yaml"),
        "TESTER_OUTPUT_DIR": str(output),
        "TESTER_BURST_MAX": "2",
    }
    for elsewhere in ("TESTER_RESULTS_URL", "TESTER_PROMETHEUS_URL", "TESTER_BARRIER"):
        env.pop(elsewhere, None)
    flows = {k: v for k, v in QUICK_FLOW.items() if k != "TESTER_SCENARIOS"}
    scenarios = {"TESTER_SCENARIOS": "flow,sizing"}  # as an app's default, without the bursts
    completed = subprocess.run(
        [sys.executable, "-m", "labtester", "run"],
        cwd=workdir,
        env={**os.environ, **LIGHT_PROBES, **NO_PLOTS, **flows, **scenarios, **env},
        capture_output=True,
        text=True,
        timeout=500,
    )
    (run_dir,) = output.iterdir()
    return completed, run_dir


@pytest.fixture(scope="module")
def sized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The app lab on the cluster: one deployed configuration measured, the proposal written."""
    workdir = tmp_path_factory.mktemp("cluster")
    shutil.copy(HERE / "sizing_app.py", workdir / "sizing_app.py")
    (workdir / "overlay.yaml").write_text(yaml.safe_dump(OVERLAY))
    target = deploy(workdir, "app-gthread", GTHREAD)
    try:
        # Two clients, as kind-check runs it: the sizing reads every client's rows joined.
        completed, run_dir = job(workdir, workdir / "overlay.yaml", target.url, "tester.parallelism=2")
    finally:
        target.stop()
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    yield workdir, run_dir


def proposal(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "proposal-values.yaml"
    assert path.exists(), sorted(p.name for p in run_dir.iterdir())
    return dict(yaml.safe_load(path.read_text()))


def test_the_cluster_app_lab_writes_the_proposal_with_its_pod_and_prediction(
    sized: tuple[Path, Path],
) -> None:
    _, run_dir = sized
    app = proposal(run_dir)["app"]
    (configuration,) = app["configurations"]
    assert configuration["name"] == "proposed" and configuration["resources"] == RESOURCES
    assert (
        configuration["env"]["LAB_WORKER_CLASS"] == "gthread"
        and int(configuration["env"]["LAB_WORKERS"]) >= 1
    )
    predicted = app["predicted"]
    assert predicted["role"] == "proposed" and predicted["pod"]["cores"] == 1.0
    assert predicted["pod"]["memory_bytes"] == 384 << 20
    assert len(predicted["levels"]) == 2 and all(lv["predicted_per_s"] > 0 for lv in predicted["levels"])
    # Predicted in this run's results, not proved here: the tester started no server.
    sizing = results_of(run_dir)["conclusions"]["sizing"]
    assert sizing["proposed"]["label"] == predicted["label"]
    assert all(lv["measured_per_s"] is None for lv in sizing["proposed"]["levels"])
    assert "PROPOSAL=" in (sizing["proposed"]["error"] or "")


def test_the_deployed_proposal_is_proved_predicted_beside_measured(sized: tuple[Path, Path]) -> None:
    workdir, run_dir = sized
    app = proposal(run_dir)["app"]
    (configuration,) = app["configurations"]
    target = deploy(workdir, "app-proposed", configuration["env"])
    try:
        completed, proved_dir = job(workdir, run_dir / "proposal-values.yaml", target.url)
    finally:
        target.stop()
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_of(proved_dir)
    assert results["run"]["settings"]["scenarios"] == ["sizing"]  # the proof alone (the chart's)
    proposed = results["conclusions"]["sizing"]["proposed"]
    assert [lv["predicted_per_s"] for lv in proposed["levels"]] == [
        lv["predicted_per_s"] for lv in app["predicted"]["levels"]
    ]
    for level in proposed["levels"]:
        assert level["measured_per_s"] is not None and level["requests"] > 0
        assert level["measured_p99_s"] is not None
    assert not (proved_dir / "proposal-values.yaml").exists()  # a proof proposes nothing new
    said = " ".join(completed.stdout.split())
    assert "predicted beside measured" in said and "measured" in results["conclusions"]["sizing"]["headline"]
