"""scripts/run-lab (`make run-lab`) against stand-ins for kubectl and helm: no cluster runs here.

The stand-ins log their arguments and answer like a cluster whose tester Job has finished; the
results server's `kubectl exec` runs the script's own tar snippet on a local folder.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from labtester.targets import REPO_ROOT

RUN_LAB = REPO_ROOT / "scripts" / "run-lab"
JOB = "job.batch/lab-concurrency-lab-tester"

KUBECTL = r"""#!/usr/bin/env bash
echo "kubectl $*" >> "$CALLS"
shift 4  # --context X --namespace Y
case "$1 $2" in
  "get job") echo "job.batch/lab-concurrency-lab-tester" ;;
  "get job.batch/lab-concurrency-lab-tester") echo "$JOB_STATUS" ;;
  "get deployment") echo "deployment.apps/lab-concurrency-lab-results" ;;
  "logs --follow") echo "tester summary" ;;
  "exec deployment.apps/lab-concurrency-lab-results")
    code=${6//\/results/$FAKE_RESULTS}  # exec NAME -- python -c CODE
    exec python3 -c "$code" ;;
esac
"""
HELM = """#!/usr/bin/env bash
echo "helm $*" >> "$CALLS"
"""


def run_lab(tmp_path: Path, job_status: str) -> tuple[subprocess.CompletedProcess[str], list[str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, script in {"kubectl": KUBECTL, "helm": HELM}.items():
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    served = tmp_path / "served"
    (served / "run-1").mkdir(parents=True)
    (served / "run-1" / "report.html").write_text("<html>report</html>")
    calls = tmp_path / "calls.log"
    results = tmp_path / "results"
    env = {
        **os.environ,
        "HELM": str(bin_dir / "helm"),
        "KUBECTL": str(bin_dir / "kubectl"),
        "CLUSTER": "concurrency-lab",
        "RELEASE": "lab",
        "NAMESPACE": "concurrency-lab",
        "CHART": "charts/concurrency-lab",
        "IMAGE_TAG": "dev",
        "HELM_ARGS": "-f small.yaml",
        "RESULTS_DIR": str(results),
        "GRAFANA_URL": "http://127.0.0.1:3000",
        "CALLS": str(calls),
        "JOB_STATUS": job_status,
        "FAKE_RESULTS": str(served),
    }
    result = subprocess.run([str(RUN_LAB)], env=env, capture_output=True, text=True, timeout=60, check=False)
    return result, calls.read_text().splitlines(), results


def position(calls: list[str], fragment: str) -> int:
    matches = [index for index, call in enumerate(calls) if fragment in call]
    assert matches, f"no call with {fragment!r} in {calls}"
    return matches[0]


def test_run_lab_replaces_the_job_streams_its_log_and_copies_the_report(tmp_path: Path) -> None:
    result, calls, results = run_lab(tmp_path, job_status="1/")
    assert result.returncode == 0, result.stderr
    assert position(calls, "delete job") < position(
        calls, "helm upgrade --install lab charts/concurrency-lab"
    )
    assert position(calls, "helm upgrade") < position(calls, f"logs --follow --pod-running-timeout=10m {JOB}")
    helm = calls[position(calls, "helm upgrade")]
    assert "--wait" in helm and "--set image.tag=dev" in helm and helm.endswith("-f small.yaml")
    assert all(
        "--context kind-concurrency-lab --namespace concurrency-lab" in c for c in calls if "kubectl" in c
    )
    assert "tester summary" in result.stdout
    assert (results / "run-1" / "report.html").read_text() == "<html>report</html>"
    assert "http://127.0.0.1:3000" in result.stdout


def test_run_lab_fails_when_the_job_failed_but_still_copies_the_report(tmp_path: Path) -> None:
    result, _, results = run_lab(tmp_path, job_status="/1")
    assert result.returncode == 1
    assert "The tester Job failed" in result.stderr
    assert (results / "run-1" / "report.html").exists(), "a failed run's partial report is still copied"
