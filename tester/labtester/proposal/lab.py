"""The app lab's sizing step: once every fixed configuration was measured, read what the flows
measured back from the raw log, search, write the proposal as a values overlay, then prove it
and the best of each other family on this machine. Client 0 alone, with one client: the proof
loads from here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from labtester.assembly import build_results
from labtester.proposal.plan import plan
from labtester.proposal.prove import prove, write_proposal
from labtester.rawlog import RecordSink, read_raw
from labtester.scenarios.sizing import SHAPE

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
    duration_s = SHAPE.settings(settings).proof_s
    if "sizing" not in settings.scenarios or not settings.app:
        return
    if settings.clients > 1:
        progress.note("sizing: not run with more than one client (the proof loads from client 0 alone)")
        return
    records = read_raw(run_dir)
    results = build_results(records)
    interface = app_interface(results)
    if interface is None:
        progress.note("sizing: no configuration of the app answered, nothing to size")
        return
    progress.step("sizing: searching each family's knobs")
    planned = plan(results, interface, values, duration_s, records)
    if not planned:
        progress.note("sizing: the flows measured no path's costs, nothing to size")
        return
    first = planned[0].summary
    if first.role == "proposed":
        written = write_proposal(run_dir, first, settings.app, interface, _paths(settings))
        progress.note(
            f"sizing: {first.label}, predicted {first.sustainable_per_s:.1f}/s; values in {written}"
        )
    logs = run_dir / "sizing-logs"  # the proved servers' logs, kept beside the results
    logs.mkdir(exist_ok=True)
    # A request 10 x the objective late has failed it: no proof waits the lab's 600 s on one.
    timeout_s = min(settings.request_timeout_s, max(10.0, 10 * first.objective.p99_s))
    traffic = settings.app_traffic()
    requests = {r.label: r.outgoing() for r in traffic.requests} if traffic else {}
    prove(planned, log, extra_env, logs, timeout_s, duration_s, progress.note, requests)


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
