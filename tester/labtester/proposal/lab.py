"""The app lab's sizing step: once every fixed configuration was measured, read what the flows
measured back from the raw log, search, write the proposal as a values overlay, then prove it
and the best of each other family on this machine. Client 0 alone, with one client: the proof
loads from here. On a cluster, where the tester starts nothing, the same search and proposal
(`sized`), and the proof of a deployed proposal, are proposal/cluster.py's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from labtester.assembly import build_results, merged
from labtester.proposal.plan import Planned, plan
from labtester.proposal.prove import prove, target_name
from labtester.proposal.resize import resized
from labtester.proposal.values import proved_proposal, write_proposal
from labtester.rawlog import Record, RecordSink, read_raw
from labtester.scenarios.sizing import SHAPE, conclusion_of, proved_of
from labtester.sizing.document import PodSize, SizedSummary
from labtester.sizing.words import kept_goal
from labtester.traffic import Outgoing

if TYPE_CHECKING:
    from labtester.progress import LabProgress
    from labtester.results import Results
    from labtester.settings import LabSettings


def size_and_prove(
    settings: LabSettings,
    run_dir: Path,
    log: RecordSink,
    progress: LabProgress,
    values: Path,
    extra_env: dict[str, str],
) -> None:
    if "sizing" not in settings.scenarios or not settings.app:
        return
    if settings.clients > 1:
        progress.note("sizing: not run with more than one client (the proof loads from client 0 alone)")
        return
    planned = sized(settings, run_dir, progress, values)
    if not planned:
        return
    logs = run_dir / "sizing-logs"  # the proved servers' logs, kept beside the results
    logs.mkdir(exist_ok=True)
    duration_s = SHAPE.settings(settings).proof_s
    timeout_s = proof_timeout_s(settings, planned[0].summary.objective.p99_s)
    requests = team_requests(settings)
    prove(planned, log, extra_env, logs, timeout_s, duration_s, progress.note, requests)
    again = sized_again(settings, run_dir, planned, duration_s)
    if again is not None:
        progress.note(resized_note(again.summary))
        prove([again], log, extra_env, logs, timeout_s, duration_s, progress.note, requests)
    decided_by_proof(settings, run_dir, progress, planned[0].family.interface)


def resized_note(summary: SizedSummary) -> str:
    moved = summary.resized_on  # None: its family's CPU as planned, another's moved
    by = f" ({moved:.2f}x the plan's for its family)" if moved is not None else ""
    if summary.needs_pod is not None:
        return (
            f"sizing: on the CPU the proofs measured{by}, nothing in the pod serves "
            f"{summary.objective.rate_per_s or 0:g}/s: the pod it would need has {summary.needs_pod.cores:g} "
            f"cores ({summary.label}, not proved)"
        )
    return (
        f"sizing: sized again on the CPU the proofs measured{by}: {summary.label}, "
        f"predicted {summary.sustainable_per_s:.1f}/s"
    )


def sized_again(
    settings: LabSettings, run_dir: Path, planned: list[Planned], duration_s: float
) -> Planned | None:
    """The proposal sized again on the proofs' CPU (resize.py), from their records as proved."""
    runs: dict[str, list[Record]] = {}
    for record in read_raw(run_dir):
        if record.get("type") == "scenario" and record.get("scenario") == SHAPE.name:
            runs.setdefault(record["target"], []).append(record)
    proposal = runs.get(target_name(planned[0].summary), [])
    proved = proved_of(proposal, settings)
    goal = planned[0].summary.objective
    at_rate = proved[0].at_sustainable() if proved else None
    if goal.rate_per_s is not None and at_rate is not None and at_rate.holds(goal):
        # The smallest configuration that serves RATE= was proved to, and keeps it over minutes of
        # it on the CPU its proof used: it stands.
        return None
    kept = [lv.measured_per_s or 0.0 for s in proved for lv in s.levels if lv.met(goal)]
    measured = {name: [r for r in own if r.get("kind") == "run"] for name, own in runs.items()}
    return resized(planned, measured, duration_s, max(kept, default=0.0))


def decided_by_proof(settings: LabSettings, run_dir: Path, progress: LabProgress, interface: str) -> None:
    """Where the proof decided against the model's pick, the proposal file becomes what the answer
    names: the file `make run-lab PROPOSAL=` deploys says what the answer says. From the sizing's
    own records: the whole results document is the report's to build (1.3 s of CPU here)."""
    conclusion = conclusion_of(proved_of(merged(read_raw(run_dir)), settings))
    best = conclusion.proved_best() if conclusion is not None else None
    if conclusion is None or best is None or settings.app is None:
        return
    kept = proved_proposal(conclusion)
    assert kept is not None  # proved_best said which
    written = write_proposal(run_dir, kept, settings.app, interface, _paths(settings))
    why = (
        "sized again on the CPU the proofs measured"
        if best[0].role == "resized"
        else "the proposal's proof missed"
    )
    progress.note(
        f"sizing: {why}; {kept.label} kept {kept_goal(kept.objective.p99_s, best[1])} at "
        f"{kept.sustainable_per_s:.1f}/s: values in {written}"
    )


def sized(
    settings: LabSettings,
    run_dir: Path,
    progress: LabProgress,
    values: Path,
    deployed: PodSize | None = None,
    resources: dict[str, str] | None = None,
) -> list[Planned]:
    """Search from what the run measured and write the proposal beside its results; the planned
    configurations, the proposal first. `deployed` and `resources`: the pod the configurations
    ran in, and its resources as the chart wrote them (a cluster's: the proposal keeps them)."""
    records = merged(read_raw(run_dir))  # every client's rows of a step joined, as the report does
    results = build_results(records)
    interface = app_interface(results)
    if interface is None or settings.app is None:
        progress.note("sizing: no configuration of the app answered, nothing to size")
        return []
    progress.step("sizing: searching each family's knobs")
    planned = plan(results, interface, values, SHAPE.settings(settings).proof_s, records, deployed)
    if not planned:
        progress.note("sizing: nothing to size (no path's costs measured, or no configuration fits the pod)")
        return []
    first = planned[0].summary
    if first.role == "proposed":
        written = write_proposal(run_dir, first, settings.app, interface, _paths(settings), resources)
        progress.note(
            f"sizing: {first.label}, predicted {first.sustainable_per_s:.1f}/s; values in {written}"
        )
    return planned


def proof_timeout_s(settings: LabSettings, objective_p99_s: float) -> float:
    """A request 10 x the objective late has failed it: no proof waits the lab's 600 s on one."""
    return min(settings.request_timeout_s, max(10.0, 10 * objective_p99_s))


def team_requests(settings: LabSettings) -> dict[str, Outgoing]:
    traffic = settings.app_traffic()
    return {r.label: r.outgoing() for r in traffic.requests} if traffic else {}


def app_interface(results: Results) -> str | None:
    """The app's interface (asgi, wsgi), as its configurations' /info said; None: none answered."""
    return next(
        (
            str(t.info.model_extra["app"]["interface"])
            for t in results.targets
            if t.info and t.info.model_extra and "app" in t.info.model_extra
        ),
        None,
    )


def _paths(settings: LabSettings) -> list[str]:
    """The paths the chart's app entry takes: PATHS as given, or the traffic's GETs. The cluster's
    tester sends GETs of them, and the chart joins them with commas (a path holding one, or a
    request with a method or a body, is measured by the local lab only)."""
    traffic = settings.app_traffic()
    if traffic is None:
        return settings.paths
    gets = (r.path for r in traffic.requests if r.method == "GET" and not r.headers and "," not in r.path)
    return list(dict.fromkeys(gets))
