"""Sizing as a load shape: what it loads runs after the other shapes (labtester/proposal/prove.py,
on configurations it starts itself), so here it only reads its records back, concludes across
them (`conclusions.sizing`) and reports; on the fixed configurations it runs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from rich.table import Table

from labtester import machine
from labtester.info import TargetInfo
from labtester.load import Sample
from labtester.rawlog import Record
from labtester.scenarios.base import LoadShape, ShapeContext
from labtester.scenarios.common import decode
from labtester.scenarios.flow.whole import cores_free  # the flow's reading of the same fields
from labtester.sizing import answers, window
from labtester.sizing.collected import counted_in, measured_collections
from labtester.sizing.document import PROOF_S, Level, SizedSummary, SizingConclusion
from labtester.sizing.floor import Floor
from labtester.sizing.tail import tail_split
from labtester.stats import percentiles
from labtester.views import Answer

if TYPE_CHECKING:
    from labtester.results import Results
    from labtester.settings import LabSettings


class SizingSettings(BaseModel):
    """How long the proof offers the mix at each rate, and (on a cluster) the values it sizes from."""

    model_config = {"extra": "forbid"}
    proof_s: float = Field(PROOF_S, gt=0, le=3600, description="Seconds of each proof run.")
    values: Path | None = Field(
        None,
        description="`run` against deployed configurations (the cluster's tester): the chart's values "
        "as installed (the app, its configurations and their pod), which the chart mounts; the sizing "
        "writes its proposal from them, or proves the one `app.predicted` carries. `lab` reads --values. "
        "Checked where the run starts (a report rebuilt elsewhere does not read it).",
    )


class Sizing(LoadShape[SizingSettings, SizedSummary]):
    name = "sizing"
    settings_model = SizingSettings
    summary_model = SizedSummary
    conclusion_model = SizingConclusion

    def applies(self, info: TargetInfo) -> bool:
        return False  # it starts and loads its own configurations, after the others

    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        return []

    def run(self, ctx: ShapeContext) -> None:
        return None

    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> SizedSummary:
        plan = next(r["plan"] for r in records if r.get("kind") == "plan")
        summary = SizedSummary.model_validate(plan)
        floor = next((r["floor"] for r in records if r.get("kind") == "alone"), None)
        summary.floor = Floor.model_validate(floor) if floor else None
        runs = {round(r["offered_per_s"], 3): r for r in records if r.get("kind") == "run"}
        levels = []
        for level in summary.levels:
            run = runs.get(round(level.offered_per_s, 3))
            levels.append(_measured(level, run, summary) if run else level)
        summary.levels = levels
        return summary

    def conclude(self, results: Results) -> SizingConclusion | None:
        return conclusion_of([s for _, s in results.summaries(SizedSummary)])

    def answers(self, results: Results) -> list[Answer]:
        conclusion = results.conclusions.get(self.name)
        return [answers.answer(conclusion)] if isinstance(conclusion, SizingConclusion) else []

    def tables(self, results: Results) -> list[Table]:
        conclusion = results.conclusions.get(self.name)
        return [answers.table(conclusion)] if isinstance(conclusion, SizingConclusion) else []


def proved_of(records: list[Record], settings: LabSettings) -> list[SizedSummary]:
    """Each configuration sizing planned, with its proof runs, from its records alone (what the
    proof's outcome needs, without building the whole results document)."""
    by_target: dict[str, list[Record]] = {}
    for record in records:
        if record.get("type") == "scenario" and record.get("scenario") == SHAPE.name:
            by_target.setdefault(record["target"], []).append(record)
    return [
        SHAPE.analyse(own, None, settings)
        for own in by_target.values()
        if any(r.get("kind") == "plan" for r in own)
    ]


def conclusion_of(proved: list[SizedSummary]) -> SizingConclusion | None:
    """The proposal, each family's best, the fixed pick and the pod RATE= needs, set together; the
    answer (`headline`) and the configuration it names (`chosen`) decided once."""
    if not proved:
        return None
    proposed = next((s for s in proved if s.role == "proposed"), None)
    first = proposed or proved[0]
    conclusion = SizingConclusion(
        pod=first.pod,
        objective=first.objective,
        proposed=proposed,
        families=[s for s in proved if s.role == "family"],
        fixed=next((s for s in proved if s.role == "fixed"), None)
        or next((s for s in proved if s.label == first.fixed_label), None),
        needed=next((s for s in proved if s.role == "needed"), None),
        resized=next((s for s in proved if s.role == "resized"), None),
        caveats=list(dict.fromkeys(c for s in proved for c in s.caveats)),  # each once, in order
        search_cpu_s=first.search_cpu_s,
        simulations=first.simulations,
        headline="",
    )
    return _superseded(answers.decided(conclusion))


def _superseded(conclusion: SizingConclusion) -> SizingConclusion:
    """Without what the plan's search said of a target rate sustained (on the flows' CPU), where the
    configuration the answer names keeps it sustained on the CPU its own proof's requests used: the
    answer's last sentence says so, the evidence gives both (the Django shop's proofs used
    0.56-0.59x the flows' CPU, so the plan's 0.45 s at 12/s was 0.15 s on what they used)."""
    named = next((s for s in conclusion.each() if s.label == conclusion.chosen), None)
    top = named.at_sustainable() if named else None
    rate, goal = conclusion.objective.rate_per_s, conclusion.objective.p99_s
    if rate is None or top is None or top.offered_per_s < 0.999 * rate or top.sustained_used_p99_s is None:
        return conclusion
    if top.sustained_used_p99_s > goal:
        return conclusion
    return conclusion.model_copy(update={"caveats": [c for c in conclusion.caveats if c.kind != "not-held"]})


def window_of(run: Record) -> tuple[list[Sample], list[Sample]]:
    """A proof run's requests: all of them, and its window's (sent after its warm-up; a run
    recorded without one: all)."""
    everything = decode(run["samples"])
    warmup_s = float(run.get("warmup_s", 0.0))
    return everything, [s for s in everything if s.scheduled_s >= warmup_s]


def _measured(level: Level, run: Record, summary: SizedSummary) -> Level:
    """The run's window measured (its sends after the warm-up; a run recorded without one: all),
    beside the prediction the run made from its warm-up and the model on what the window used (its
    requests' CPU, the run's server CPU per request beyond them, its client's and its collections)."""
    warmup_s = float(run.get("warmup_s", 0.0))
    everything, samples = window_of(run)
    done = [s for s in samples if s.ok]
    wall = run["wall_s"] - warmup_s
    p99 = (
        percentiles([s.from_schedule_s for s in samples if s.status is not None], (99,)).get("p99")
        if done
        else None
    )
    free = cores_free(run, run.get("server_cpu_s"))
    duration_s = run.get("duration_s", PROOF_S)
    used = window.cpu_used(summary.kinds, done)
    collections = measured_collections(counted_in(samples), summary.kinds, worth=0.0)  # the window's own
    explained = None
    if free:  # the cores the others left the server and its client, the client's CPU a request there
        cores = min(summary.pod.cores, cores_free(run, run.get("server_cpu_s"), tester=False) or free)
        client = machine.use_recorded(run["machine"]).tester_s / len(everything) if everything else 0.0
        floor = window.floor_for(summary.floor, summary.planned_floor_s)
        overhead = window.overhead_of([(run.get("server_cpu_s"), everything)])  # the run's own
        args = (summary, level.offered_per_s, cores, duration_s, warmup_s, used, overhead, client)
        explained = window.predicted_window(*args, floor_s=floor, collections=collections, seed=level.seed)
    warm, held = run.get("warmup") or {}, run.get("sustained") or {}
    return level.model_copy(
        update={
            "cores_free": free,
            "full_collections_per_request": collections[0] if collections else None,
            "cpu_used_ratio": window.used_ratio(summary.kinds, done, everything),
            "shared_cpu_ratio": window.shared_cpu_ratio(summary.kinds, done, everything),
            "explained_per_s": explained.per_s if explained else None,
            "explained_p99_s": explained.p99_s if explained else None,
            "measured_per_s": len(done) / wall if wall > 0 else 0.0,
            "measured_p99_s": p99,
            "requests": len(samples),
            "failed": len(samples) - len(done),
            "load_average": run.get("load_average"),
            "warmup_s": warmup_s,
            "warmup_cpu_ratio": warm.get("cpu_ratio"),
            "warmup_full_collections_per_request": warm.get("full_collections_per_request"),
            "warmup_cores_free": warm.get("cores_free"),
            "warmup_client_cpu_s": warm.get("client_cpu_s"),
            "warmup_predicted_per_s": warm.get("predicted_per_s"),
            "warmup_predicted_p99_s": warm.get("predicted_p99_s"),
            "warmup_p99_band_s": warm.get("p99_band_s") or [],
            "sustained_used_p99_s": held.get("p99_s"),
            "sustained_cpu_ratio": held.get("cpu_ratio"),
            "slowest": tail_split(samples, run.get("origin_at")),
        }
    )


SHAPE = Sizing()
