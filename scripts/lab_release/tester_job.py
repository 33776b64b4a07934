"""Step 4: follow the tester's log and poll its Job until it ends (or its deadline passes)."""

from __future__ import annotations

import subprocess
import time
from datetime import datetime

from . import timing
from .cluster import Cluster
from .demand import Manifest


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
        if ends is not None and time.time() > ends + timing.DEADLINE_GRACE_S:
            return f"Failed: still running {deadline + timing.DEADLINE_GRACE_S} s after it started"
        time.sleep(timing.POLL_S)
