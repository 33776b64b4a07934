"""Bursts: n requests released at the same instant, n = 1..K, R times each, per endpoint.

How does a server handle n simultaneous slow requests? Each request reports the CPU seconds its
work used; the model predicts each burst from them (analyse.py), so a machine that runs slower or
a neighbour that takes a core shows as what it is (interference), not as the server's shape.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel
from rich.table import Table

from labtester.clients.merge import client_of, joined, leader_record, loads, with_clients_cpu
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.rawlog import Record
from labtester.scenarios.base import LoadShape, ShapeContext
from labtester.scenarios.bursts import answers, curves, report
from labtester.scenarios.bursts.analyse import BurstsSummary, endpoint_bursts
from labtester.scenarios.bursts.findings import answers_across, endpoint_findings, points_missing
from labtester.scenarios.bursts.measure import measure_bursts
from labtester.views import Answer, ComparisonRow, Section

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult
    from labtester.settings import LabSettings


class Bursts(LoadShape[BaseModel, BurstsSummary]):
    name = "bursts"
    summary_model = BurstsSummary

    def needs_calibration(self, info: TargetInfo, settings: LabSettings) -> bool:
        """CPU endpoints are sized in calibrated N seconds; a team's paths do what they do."""
        return any(info.endpoints[name].work == "cpu" for name in settings.planned_endpoints(info))

    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        per_endpoint = settings.burst_max * settings.repeats  # each burst, n = 1 the requests alone
        return [f"{name} bursts" for name in settings.planned_endpoints(info) for _ in range(per_endpoint)]

    def run(self, ctx: ShapeContext) -> None:
        measure_bursts(ctx)

    def join(self, records: list[Record]) -> Record:
        lead = leader_record(records)
        if lead["kind"] != "burst":
            return lead
        return {
            **lead,
            **joined({client_of(r): (r["released_at"], r["requests"]) for r in records}),
            "loads": loads(records),
            "machine": with_clients_cpu(lead.get("machine"), records, lead),
        }

    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> BurstsSummary:
        by_endpoint: dict[str, list[Record]] = defaultdict(list)
        for record in records:
            by_endpoint[record["endpoint"]].append(record)
        if info is None:
            return BurstsSummary(endpoints=[])
        return BurstsSummary(endpoints=[endpoint_bursts(name, rs, info) for name, rs in by_endpoint.items()])

    def findings(self, summary: BurstsSummary, target: TargetResult) -> list[Finding]:
        if target.info is None:
            return []
        return [f for e in summary.endpoints for f in endpoint_findings(target.name, target.info, e)]

    def across(self, results: Results) -> list[Finding]:
        return answers_across(
            [(target.name, summary) for target, summary in results.summaries(BurstsSummary)]
        )

    def missing(self, summary: BurstsSummary | None, info: TargetInfo, settings: LabSettings) -> list[str]:
        measured = {e.name: e for e in summary.endpoints} if summary else {}
        missing = []
        for name in settings.planned_endpoints(info):
            gaps = points_missing(measured.get(name), settings.burst_max, settings.repeats)
            missing += [f"{name} {gap}" for gap in gaps]
        return missing

    def tables(self, results: Results) -> list[Table]:
        return [report.bursts_table(results), report.metrics_table(results)]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        plots = [report.makespan_plot(results, directory / "makespan.png")]
        for target, _ in results.summaries(BurstsSummary):
            plots.append(report.timeline_plot(target, records, directory / f"timeline-{target.name}.png"))
        return [p for p in plots if p is not None]

    def files(self, records: list[Record], directory: Path) -> list[Path]:
        return [report.write_requests_csv(records, directory / report.REQUESTS_CSV)]

    def answers(self, results: Results) -> list[Answer]:
        return answers.answers(curves.curves(results))

    def settled_answers(
        self, results: Results, remaining: list[TargetInfo], settings: LabSettings
    ) -> list[Answer]:
        still = [
            (info, info.endpoints[name]) for info in remaining for name in settings.planned_endpoints(info)
        ]
        return [a for a in self.answers(results) if not any(answers.concerns(a.key, *e) for e in still)]

    def comparison(self, results: Results) -> list[ComparisonRow]:
        return curves.comparison(results)

    def sections(self, results: Results, plots: list[Path]) -> list[Section]:
        timelines = [p for p in plots if p.name.startswith("timeline-")]
        found = [
            Section(
                id="bursts",
                title="Bursts in detail",
                tables=[report.bursts_table(results)],
                plots=[p for p in plots if p not in timelines],
            ),
            Section(
                id="timelines",
                title="Per-burst timelines",
                plots=timelines,
                text="The largest burst of each endpoint: a bar per request from its server start to finish "
                "(colour: the process that ran it), a tick when the client had the answer.",
            ),
            Section(id="metrics", title="Scraped metrics", tables=[report.metrics_table(results)]),
        ]
        return [s for s in found if s.plots or any(t.row_count for t in s.tables)]


SHAPE = Bursts()
