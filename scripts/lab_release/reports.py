"""The reports, copied out of the results server into RESULTS_DIR."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from .cluster import Cluster, run


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


# What an app lab's sizing writes beside its results (the tester's proposal/prove.py names it).
PROPOSAL_FILE = "proposal-values.yaml"


def proposal_written(results_dir: Path, since: float) -> Path | None:
    """The proposal a run copied out now wrote (modified after `since`), if it wrote one."""
    written = [p for p in results_dir.glob(f"*/{PROPOSAL_FILE}") if p.stat().st_mtime >= since]
    return max(written, key=lambda p: p.stat().st_mtime, default=None)
