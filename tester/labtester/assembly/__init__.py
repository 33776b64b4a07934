"""The assembly: the raw log into the results document (results.py), which imports none of this.

Every client's records of a step are joined first (each load shape says how: LoadShape.join), then
each shape analyses its records of a target into its summary and concludes across the targets;
the machine's stability, what each client spent, the server's counts against every client's sends
and the run's findings complete it.
"""

from __future__ import annotations

from labtester.assembly.checks import calibration_check, findings_for, missing_for
from labtester.assembly.stability import summarize as stability_of
from labtester.assembly.usage import client_uses, count_checks, sent_counts
from labtester.calibrate import Calibration
from labtester.clients.clock import client_clocks
from labtester.clients.merge import join_steps
from labtester.info import TargetInfo
from labtester.prometheus import PrometheusCheck
from labtester.rawlog import Record
from labtester.results import LoadedCensus, Results, RunInfo, StageError, TargetResult
from labtester.scenarios import SHAPES, TesterSettings


def merged(records: list[Record]) -> list[Record]:
    """The raw log with every step's records joined by its load shape, in the order steps first appear."""
    return join_steps(records, {name: shape.join for name, shape in SHAPES.items()})


def build_results(records: list[Record]) -> Results:
    """Aggregate the raw records into the results document."""
    start = next((r for r in records if r["type"] == "run_start"), None)
    if start is None:
        raise ValueError("the raw log has no run_start record")
    end = next((r for r in records if r["type"] == "run_end"), None)
    settings = TesterSettings.model_validate(start["settings"])
    stability = stability_of(records)
    targets = {r["target"]: _target(r) for r in records if r["type"] == "target"}
    scenario_records: dict[tuple[str, str], list[Record]] = {}
    run_errors = []
    for record in records:
        if record["type"] == "error" and not record.get("target"):
            run_errors.append(StageError(stage=record["stage"], error=record["error"]))
        target = targets.get(record.get("target") or "")
        if target is None:
            continue
        if record["type"] == "scenario":
            scenario_records.setdefault((target.name, record["scenario"]), []).append(record)
        _apply(target, record)
    for (name, shape), shape_records in scenario_records.items():
        target = targets[name]
        target.scenarios[shape] = SHAPES[shape].analyse(shape_records, target.info, settings)
        target.clients += client_uses(shape, shape_records)
        target.counts += count_checks(shape, shape_records)
    for target in targets.values():
        if target.prometheus:
            target.prometheus.sent = sent_counts(target)
        if target.calibration:
            target.calibration_check = calibration_check(target.calibration, stability)
    results = Results(
        run=RunInfo(
            id=start["run_id"],
            started_at=start["started_at"],
            finished_at=end["finished_at"] if end else None,
            status=end["status"] if end else "incomplete",
            cpus=start.get("cpus"),
            clients=settings.clients,
            clocks=client_clocks(records),
            settings=start["settings"],
        ),
        stability=stability,
        targets=list(targets.values()),
        errors=run_errors,
    )
    concluded = {name: load_shape.conclude(results) for name, load_shape in SHAPES.items()}
    results.conclusions = {name: conclusion for name, conclusion in concluded.items() if conclusion}
    results.findings = findings_for(results)
    results.missing = missing_for(results)
    results.failed_checks = [f.text for f in results.findings if f.kind == "failure"]
    return results


def _target(record: Record) -> TargetResult:
    stage = record.get("stage", "readiness")  # start: the local lab could not start it
    errors = [StageError(stage=stage, error=record["error"])] if record.get("error") else []
    info = TargetInfo.model_validate(record["info"]) if record.get("info") else None
    return TargetResult(
        name=record["target"],
        url=record["url"],
        measure=record["measure"],
        ready=record["ready"],
        info=info,
        errors=errors,
    )


def _apply(target: TargetResult, record: Record) -> None:
    """What one raw record adds to its target (scenario records are analysed per shape)."""
    match record["type"]:
        case "error":
            target.errors.append(StageError(stage=record["stage"], error=record["error"]))
        case "census":
            target.census.idle = record["census"]
        case "calibration":
            target.calibration = Calibration.model_validate(record["calibration"])
        case "prometheus":
            target.prometheus = PrometheusCheck.model_validate(record["check"])
        case "scenario" if record.get("census"):
            target.census.under_load.append(
                LoadedCensus(
                    scenario=record["scenario"],
                    endpoint=record.get("endpoint"),
                    n=record.get("n"),
                    census=record["census"],
                )
            )
