"""The one interface every load shape implements: plan, run, record, analyse, report.

- plan:    the steps a shape will take on a target (progress, and what counts as missing);
- run:     measure on one target, writing every observation to the raw log through `ctx.record`;
           with P clients each sends its part of every step after a common release (`ctx.meet`);
- join:    every client's records of one step into one, before any statistic (clients/merge.py);
- analyse: the raw records of one target into the shape's typed summary (part of results.json);
- conclude: what it concludes across the targets, once per run (results.json `conclusions`);
- findings, tables, plots, files: what the report shows of it;
- answers, comparison, sections: the questions it answers, its rows of the side-by-side
  comparison, and its part of the report's details (views.py).
The lab, the results document and the report only ever call these; nothing outside a shape's
own module names it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel
from rich.table import Table

from labtester.clients.crew import Crew
from labtester.clients.merge import leader_record
from labtester.findings import Finding
from labtester.info import TargetInfo
from labtester.rawlog import Record, RecordSink
from labtester.views import Answer, ComparisonRow, Section

if TYPE_CHECKING:
    from labtester.calibrate import Calibration
    from labtester.progress import LabProgress
    from labtester.results import Results, TargetResult
    from labtester.settings import LabSettings
    from labtester.targetref import TargetRef

SettingsT = TypeVar("SettingsT", bound=BaseModel)
SummaryT = TypeVar("SummaryT", bound=BaseModel)


@dataclass
class ShapeContext:
    """What the lab hands a load shape for one target."""

    target: TargetRef
    info: TargetInfo
    settings: LabSettings
    log: RecordSink
    progress: LabProgress
    calibration: Calibration | None
    probe: Callable[[str], None]  # a stability probe of the machine, labelled with where it ran
    check_alive: Callable[[list[str | None]], None]  # after failures: stop if the target is gone
    shape: str = ""
    crew: Crew = field(default_factory=Crew)  # this client, its index of P, and the barrier

    def record(self, kind: str, step: str | None = None, **fields: Any) -> None:
        """One raw observation of this shape on this target, by this client. `step` names the
        piece of the plan it belongs to: the merge joins the records of every client's share of
        the same step (clients/merge.py)."""
        where = {"step": step} if step else {}
        self.log.write(
            "scenario",
            target=self.target.name,
            scenario=self.shape,
            kind=kind,
            client=self.crew.index,
            **where,
            **fields,
        )

    def meet(self, step: str, data: Any = None) -> dict[int, Any]:
        """Wait until every client reached this step of this shape on this target (the release)."""
        return self.crew.meet(self.target.name, f"{self.shape} {step}", data)


class LoadShape(ABC, Generic[SettingsT, SummaryT]):
    name: ClassVar[str]
    summary_model: ClassVar[type[BaseModel]]
    settings_model: ClassVar[type[BaseModel] | None] = None  # None: the lab's own knobs suffice
    conclusion_model: ClassVar[type[BaseModel] | None] = None  # None: it concludes nothing across

    def needs_calibration(self, info: TargetInfo, settings: LabSettings) -> bool:
        """Whether it loads this target with CPU work sized in calibrated N seconds."""
        return False

    def settings(self, settings: LabSettings) -> SettingsT:
        """This shape's own settings (TESTER_<SHAPE>__<KEY>, its section of the registry's
        TesterSettings), or the lab's when it has none."""
        return cast(SettingsT, settings if self.settings_model is None else getattr(settings, self.name))

    def applies(self, info: TargetInfo) -> bool:
        """Whether the target offers what this shape loads (its /info lists the endpoint)."""
        return True

    @abstractmethod
    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        """What it will measure on this target, one description per progress step."""

    @abstractmethod
    def run(self, ctx: ShapeContext) -> None:
        """Measure on one target; every observation goes to ctx.record as it is measured."""

    def join(self, records: list[Record]) -> Record:
        """Every client's records of one step, joined into one (clients/merge.py). By default the
        step is client 0's alone (what only it measures)."""
        return leader_record(records)

    @abstractmethod
    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> SummaryT:
        """The shape's summary of one target, from its raw records alone."""

    def conclude(self, results: Results) -> BaseModel | None:
        """What its summaries of every target say together (a conclusion_model), or None."""
        return None

    def findings(self, summary: SummaryT, target: TargetResult) -> list[Finding]:
        return []

    def across(self, results: Results) -> list[Finding]:
        """Findings that compare targets with each other (once per run)."""
        return []

    def missing(self, summary: SummaryT | None, info: TargetInfo, settings: LabSettings) -> list[str]:
        """What the plan held that the records do not."""
        return [] if summary is not None else ["not run"]

    def tables(self, results: Results) -> list[Table]:
        return []

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        """PNGs from the analysed results (and the raw records, for per-request pictures)."""
        return []

    def files(self, records: list[Record], directory: Path) -> list[Path]:
        """Per-request files (CSV) from the raw records of every target."""
        return []

    def answers(self, results: Results) -> list[Answer]:
        """The questions its measurements answer in this run; none where it has no data."""
        return []

    def settled_answers(
        self, results: Results, remaining: list[TargetInfo], settings: LabSettings
    ) -> list[Answer]:
        """Its answers that the targets still to measure (`remaining`, by /info) cannot change:
        printed as soon as their figures are in. None by default: the summary has them all."""
        return []

    def comparison(self, results: Results) -> list[ComparisonRow]:
        """Its rows of the side-by-side comparison: a row per size, a cell per target."""
        return []

    def sections(self, results: Results, plots: list[Path]) -> list[Section]:
        """Its part of the report's details, given the plots it drew: one section by default."""
        tables = [table for table in self.tables(results) if table.row_count]
        if not tables and not plots:
            return []
        return [
            Section(id=self.name, title=f"{self.name.capitalize()} in detail", tables=tables, plots=plots)
        ]
