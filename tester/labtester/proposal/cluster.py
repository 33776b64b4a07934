"""The sizing on a cluster, where the tester starts no server (it has no right to create pods).

The chart mounts its values as installed (`sizing.values`: the app, its configurations, the pod
each ran in): the one place the cluster's tester reads the families' knobs from, as the local lab
reads the chart's values file. An app lab there sizes from what it measured of the deployed
configurations and writes the proposal beside its results, exactly as the local lab does; each
configuration planned is predicted, not proved. A run whose values carry `app.predicted` (the
proposal, deployed by `make run-lab PROPOSAL=...`) offers the predicted levels to the one
configuration deployed, recorded as the local proof records them: `conclusions.sizing` sets the
measured beside the predicted with the same code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from labtester.appinputs import parse_cpu, parse_memory
from labtester.proposal.lab import proof_timeout_s, sized, team_requests
from labtester.proposal.prove import offer_levels, target_name, unproved
from labtester.proposal.values import PROPOSAL_FILE
from labtester.rawlog import RecordSink
from labtester.scenarios.sizing import SHAPE
from labtester.sizing.document import PodSize, SizedSummary
from labtester.yamlfile import read_mapping

if TYPE_CHECKING:
    from labtester.progress import LabProgress
    from labtester.settings import LabSettings

NOT_PROVED = (
    "not proved in this run: the tester starts no pods; `make run-lab PROPOSAL=<this run>/"
    f"{PROPOSAL_FILE}` deploys the proposal and proves it"
)


def cluster_sizing(settings: LabSettings, run_dir: Path, log: RecordSink, progress: LabProgress) -> None:
    """After every deployed configuration was measured (client 0): the proposal written, or the
    deployed proposal proved. Nothing without the chart's values (`run` against other targets)."""
    values = SHAPE.settings(settings).values
    if "sizing" not in settings.scenarios or not settings.app or values is None:
        return
    installed = read_mapping(values)
    predicted = (installed.get("app") or {}).get("predicted")
    if predicted:
        prove_deployed(settings, log, progress, SizedSummary.model_validate(predicted))
        return
    pod, resources = deployed_pod(installed)
    for item in sized(settings, run_dir, progress, values, pod, resources):
        why = NOT_PROVED if item.summary.levels else item.summary.error  # no rate to offer it anywhere
        unproved(target_name(item.summary), item.summary.model_copy(update={"error": why}), log)


def prove_deployed(
    settings: LabSettings, log: RecordSink, progress: LabProgress, summary: SizedSummary
) -> None:
    """The proposal's predicted levels offered to the one configuration it deploys."""
    if settings.clients > 1:
        progress.note("sizing: the proof is not run with more than one client (it loads from client 0 alone)")
        return
    if len(settings.targets) != 1:
        progress.note(
            f"sizing: app.predicted is proved on the one configuration a proposal deploys; these values "
            f"deploy {len(settings.targets)}"
        )
        return
    (target,) = settings.targets
    progress.note(
        f"sizing: proving {summary.label}, deployed as {target.name}, at {summary.sustainable_per_s:.1f}/s"
    )
    times = (SHAPE.settings(settings).proof_s, proof_timeout_s(settings, summary.objective.p99_s))
    # Its processes are in another pod: their CPU is not read from here.
    offer_levels(target.name, target.url, summary, log, times, team_requests(settings), lambda: None)


def deployed_pod(installed: dict[str, Any]) -> tuple[PodSize, dict[str, str]]:
    """The pod the app's configurations ran in, and its resources as the chart's values write them
    (the first configuration's own, else targetDefaults'): the pod the proposal is sized for and
    keeps (its CPU limit and request, its memory)."""
    app = installed.get("app") or {}
    first: dict[str, Any] = next(
        (c for c in app.get("configurations") or [] if c.get("interface") == app.get("interface")), {}
    )
    resources = first.get("resources") or (installed.get("targetDefaults") or {}).get("resources") or {}
    kept = {key: str(value) for key, value in resources.items() if key in ("cpu", "cpuRequest", "memory")}
    cores = parse_cpu(kept["cpu"])
    where = "its configurations' pod (the chart's resources)"
    return PodSize(cores=cores, memory_bytes=parse_memory(kept["memory"]), source=where), kept
