"""The results document: one typed model, built from the raw log alone (labtester.assembly builds
it; this module imports none of the code that fills it, nor any load shape: the shapes' registry
completes it with their summaries, admit_shapes).

results.json is this model; its JSON schema (results.schema.json) is generated from it
(`python -m labtester schema`), versioned by SCHEMA_VERSION. The report, the plots and any later
tool read only it (and the raw log, for per-request pictures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, Field

from labtester.calibrate import Calibration
from labtester.clients.clock import ClientClock
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.prometheus import PrometheusCheck
from labtester.settings import LabSettings
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
# 7: sizing's caveats are objects (text, kind, about), not sentences led by a label.
# 8: a sized configuration's floor (requests alone, beyond the model) and each proof's load client
#    as a thread on the cores (`warmup_client_cpu_s`; `warmup_cores_free` no longer takes its CPU off).
# 9: each family's floor before any proof (flow `serving_cost.floor_s`: empty requests alone), which
#    the plan draws (`planned_floor_s`) and the default objective stands above.
# 10: full garbage collections over each flow (account `full_collections_per_request`,
#    `full_collection_cpu_s`), which the sizing's kinds take as stops of their process.
# 11: each proof level's own count of them (`full_collections_per_request`, and its warm-up's,
#    with the plan's beside it, `warmup_full_collections_per_request`), from its answers' `lab-gc`.
SCHEMA_VERSION = 11

M = TypeVar("M", bound=BaseModel)

if TYPE_CHECKING:
    ScenarioSummary = BaseModel
    Conclusion = BaseModel


def admit_shapes(summaries: list[type[BaseModel]], conclusions: list[type[BaseModel]]) -> None:
    """Completes the document with every load shape's summary and conclusion models, each told
    apart by its `shape` field. The shapes' registry (labtester.scenarios) calls it once it found
    them: the document names no shape, and is complete wherever the shapes are imported."""
    namespace = {
        "ScenarioSummary": Annotated[Union[tuple(summaries)], Field(discriminator="shape")],  # noqa: UP007
        "Conclusion": Annotated[Union[tuple(conclusions)], Field(discriminator="shape")],  # noqa: UP007
    }
    TargetResult.model_rebuild(force=True, _types_namespace=namespace)
    Results.model_rebuild(force=True, _types_namespace=namespace)


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


class ClientUse(BaseModel):
    """One client over one load shape on one target."""

    shape: str
    client: int
    requests: int
    cpu_s: float
    cpu_per_request_s: float | None
    core_share: float | None  # the most of its core its sending thread used over any step (bursts too)
    run_queue_s: float | None = None  # what its sending thread waited on a run queue for a core
    waiting_share: float | None = None  # the most of a step it waited so (a client starved of CPU)
    core_limit: float
    saturated: bool  # ran or waited to run near all of a step: the shape's figures measure the client too


class CountCheck(BaseModel):
    """What the server counted over one run of a load shape, against what every client sent."""

    shape: str
    sent: int
    counted: float
    by_route: dict[str, float]

    @property
    def matches(self) -> bool:
        return self.counted == self.sent


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
        """The lab's own settings of the run (the load shapes' sections are the shapes' business:
        their registry's TesterSettings reads them whole)."""
        return LabSettings.model_validate(
            {k: v for k, v in self.run.settings.items() if k in LabSettings.model_fields}
        )

    def measured(self) -> str:
        """What the run measured, for its headline: a team's app on its paths, or N's CPU work."""
        settings = self.run.settings
        if settings.get("app"):
            traffic = self.lab_settings().app_traffic()
            requests = [request.label for request in traffic.requests] if traffic else []
            return f"the app {settings['app']} on {', '.join(requests)}"
        return f"N = {settings['work_seconds']:g} s of CPU per request"
