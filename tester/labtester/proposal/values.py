"""The proposal as a chart values overlay: the app with the one configuration the sizing proposed
(or the one its proofs kept the objective with), on the pod's resources, and what was predicted for
it, which the run that deploys it proves. Apart from prove.py, which runs proofs: writing the
proposal needs no server.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from labtester.findings.wording import seconds
from labtester.sizing.document import SizedSummary, SizingConclusion

PROPOSAL_FILE = "proposal-values.yaml"


def pod_resources(summary: SizedSummary) -> dict[str, str]:
    """The chart's resources of the pod sized for: `cpu` its requests and limits alike, `memory` too."""
    return {"cpu": f"{summary.pod.cores:g}", "memory": f"{max(1, summary.pod.memory_bytes >> 20)}Mi"}


def proposal_values(
    summary: SizedSummary, app: str, interface: str, paths: list[str], resources: dict[str, str] | None = None
) -> dict[str, object]:
    """A chart values overlay: the app with one configuration, `proposed`, on the pod's resources
    (`resources`: as the measured configurations' pods had them, else `pod_resources`), and what
    the sizing predicted for it (`predicted`), which the run that deploys it proves."""
    return {
        "app": {
            "enabled": True,
            "module": app,
            "interface": interface,
            "paths": paths,
            "configurations": [
                {
                    "name": "proposed",
                    "interface": interface,
                    "env": dict(summary.env),
                    "resources": resources or pod_resources(summary),
                }
            ],
            "predicted": summary.model_dump(mode="json"),
        }
    }


def proved_proposal(conclusion: SizingConclusion) -> SizedSummary | None:
    """Where the answer names another configuration than the proposal as first sized (its
    re-sizing on the CPU the proofs measured, or the proof run that kept the objective where the
    proposal's missed it): that configuration, at the rate it was proved at (its prediction
    there), to propose instead."""
    best = conclusion.proved_best()
    if best is None:
        return None
    chosen, met = best
    at_met = {"sustainable_per_s": met.offered_per_s, "predicted_p99_s": met.predicted_p99_s}
    return chosen.model_copy(update={"role": "proposed", **at_met})


def write_proposal(
    run_dir: Path,
    summary: SizedSummary,
    app: str,
    interface: str,
    paths: list[str],
    resources: dict[str, str] | None = None,
) -> Path:
    """The overlay beside the results, headed by what was predicted for it."""
    path = run_dir / PROPOSAL_FILE
    predicted = f"{summary.sustainable_per_s:.1f}/s at p99 {seconds(summary.predicted_p99_s)}"
    header = f"# {summary.label}: predicted {predicted}\n"
    values = proposal_values(summary, app, interface, paths, resources)
    path.write_text(header + yaml.safe_dump(values, sort_keys=False))
    return path
