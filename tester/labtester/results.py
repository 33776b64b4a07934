"""The results document: one typed model, built from the raw log alone.

results.json is this model; its JSON schema (results.schema.json) is generated from it
(`python -m labtester schema`), versioned by SCHEMA_VERSION. The report, the plots and any later
tool read only it (and the raw log, for per-request pictures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, Field

from labtester.calibrate import Calibration
from labtester.clients.clock import ClientClock, client_clocks
from labtester.clients.usage import ClientUse, CountCheck, client_uses, count_checks, sent_counts
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.prometheus import PrometheusCheck
from labtester.rawlog import Record
from labtester.scenarios import SHAPES
from labtester.settings import LabSettings, TesterSettings
from labtester.stability import Stability

# 3: measured work per request (cpu_s), released_at, interference findings, stability, typed
#    sections per load shape; per-request observations stay in raw.jsonl and requests.csv.
# 4: a team's app: each request's Server-Timing (bursts: where its figures came from, a path's
#    CPU and wait alone), a flow per path, conclusions across targets (the app's recommendation),
#    `answer` findings, targets that did not start.
# 5: a team's app's whole cost: per configuration the serving cost (flow `serving_cost`), per path
#    the conservation account (flow `account`) and the prediction's server and client terms; the
#    app conclusion's `failed` paths with their counts.
# 6: sizing: `conclusions.sizing` (the pod, the objective, the proposal and each family's best,
#    predicted beside measured), the configurations it proved as targets of their own.
SCHEMA_VERSION = 6

M = TypeVar("M", bound=BaseModel)

if TYPE_CHECKING:
    ScenarioSummary = BaseModel
    Conclusion = BaseModel
else:  # every load shape's summary model, told apart by its `shape` field
    ScenarioSummary = Annotated[
        Union[tuple(shape.summary_model for shape in SHAPES.values())],  # noqa: UP007
        Field(discriminator="shape"),
    ]
    Conclusion = Annotated[
        Union[tuple(s.conclusion_model for s in SHAPES.values() if s.conclusion_model)],  # noqa: UP007
        Field(discriminator="shape"),
    ]


class StageError(BaseModel):
    stage: str
    error: str


class LoadedCensus(BaseModel):
    scenario: str
    endpoint: str | None = None
    n: int | None = None
    census: dict[str, Any]


class CensusSection(BaseModel):
    idle: dict[str, Any] | None = None
    under_load: list[LoadedCensus] = []


class CalibrationCheck(BaseModel):
    """ok: within tolerance; noise: outside it but inside the machine's measured noise band;
    missed: beyond both (a failed check)."""

    verdict: Literal["ok", "noise", "missed"]
    error_pct: float
    tolerance_pct: float
    band_pct: float | None


class TargetResult(BaseModel):
    name: str
    url: str
    measure: bool
    ready: bool
    info: TargetInfo | None
    errors: list[StageError] = []
    census: CensusSection = CensusSection()
    calibration: Calibration | None = None
    calibration_check: CalibrationCheck | None = None
    scenarios: dict[str, ScenarioSummary] = {}
    prometheus: PrometheusCheck | None = None
    clients: list[ClientUse] = []  # what each client spent, per load shape
    counts: list[CountCheck] = []  # the server's counts against every client's sends, per run


class RunInfo(BaseModel):
    id: str
    started_at: float
    finished_at: float | None
    status: str  # complete, interrupted, crashed, or incomplete (no end record)
    cpus: int | None = None  # CPUs of the tester's machine
    clients: int = 1  # P: the clients that shared the load
    clocks: list[ClientClock] = []  # each client's clock against client 0's, at joining and the end
    settings: dict[str, Any]


class Results(BaseModel):
    schema_version: int = SCHEMA_VERSION
    run: RunInfo
    stability: Stability | None
    targets: list[TargetResult]
    errors: list[StageError] = []  # the run's own, not a target's (the clients broke up)
    conclusions: dict[str, Conclusion] = {}  # by load shape: what its targets say together
    findings: list[Finding] = []
    missing: list[str] = []
    failed_checks: list[str] = []

    def summaries(self, model: type[M]) -> list[tuple[TargetResult, M]]:
        """Every target's summary of one load shape (by its model), in target order."""
        return [(t, s) for t in self.targets for s in t.scenarios.values() if isinstance(s, model)]

    def lab_settings(self) -> LabSettings:
        return TesterSettings.model_validate(self.run.settings)

    def measured(self) -> str:
        """What the run measured, for its headline: a team's app on its paths, or N's CPU work."""
        settings = self.run.settings
        if settings.get("app"):
            traffic = self.lab_settings().app_traffic()
            requests = [request.label for request in traffic.requests] if traffic else []
            return f"the app {settings['app']} on {', '.join(requests)}"
        return f"N = {settings['work_seconds']:g} s of CPU per request"


def build_results(records: list[Record]) -> Results:
    """Aggregate the raw records into the results document."""
    from labtester.findings.checks import calibration_check, findings_for, missing_for
    from labtester.stability import summarize as stability_of

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
