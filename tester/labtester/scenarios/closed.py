"""Closed loop: R requests, C in flight at any time, over a list of paths (the async benchmark)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field
from rich import box
from rich.table import Table

from labtester.clients.crew import Crew, part
from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import (
    decode,
    failures_by_type,
    failures_text,
    latency_table,
    status_counts,
    throughput_row,
)
from labtester.scenarios.step import OneStepShape
from labtester.scenarios.together import Together
from labtester.views import Cell, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


class ClosedSettings(BaseModel):
    """R requests, C at a time, cycling over a list of paths."""

    model_config = {"extra": "forbid"}
    requests: int = Field(500, ge=1, le=1_000_000)
    concurrency: int = Field(50, ge=1, le=10_000)
    paths: list[str] = Field(default_factory=lambda: ["/test/io-bound/100"])


class ClosedSummary(BaseModel):
    shape: Literal["closed"] = "closed"
    params: ClosedSettings
    requests: int
    wall_s: float
    throughput_per_s: float
    status_counts: dict[str, int]
    success_ratio: float
    failures: dict[str, int]
    latency_s: dict[str, float]


async def closed_loop(
    client: LoadClient, paths: list[str], requests: int, concurrency: int, crew: Crew | None = None
) -> list[Sample]:
    """Each of `concurrency` workers sends its next request as soon as its last one is answered.
    With a crew, the workers and the requests are dealt across the clients: each client runs its
    part of the workers over its own requests (every index by exactly one client)."""
    crew = crew or Crew()
    dealt = min(crew.count, concurrency)  # clients that get workers
    if crew.index >= dealt:
        return []
    concurrency = part(concurrency, crew.index, dealt)
    indices = iter(range(crew.index, requests, dealt))  # shared: every index taken by exactly one worker
    samples: list[Sample] = []

    async def worker() -> None:
        for index in indices:
            samples.append(await client.get(paths[index % len(paths)]))

    await asyncio.gather(
        *(worker() for _ in range(min(concurrency, len(range(crew.index, requests, dealt)))))
    )
    return samples


class Closed(OneStepShape[ClosedSettings, ClosedSummary]):
    name = "closed"
    settings_model = ClosedSettings
    summary_model = ClosedSummary

    async def send(
        self, client: LoadClient, settings: ClosedSettings, together: Together
    ) -> tuple[list[Sample], Record]:
        samples = await closed_loop(
            client, settings.paths, settings.requests, settings.concurrency, together.crew
        )
        return samples, {}

    def summarize(self, records: list[Record], info: TargetInfo | None) -> ClosedSummary:
        (record,) = records
        samples = decode(record["samples"])
        ok = [s for s in samples if s.ok]
        return ClosedSummary(
            params=ClosedSettings(**record["params"]),
            requests=len(samples),
            wall_s=record["wall_s"],
            throughput_per_s=len(ok) / record["wall_s"] if record["wall_s"] else 0.0,
            status_counts=status_counts(samples),
            success_ratio=len(ok) / len(samples) if samples else 0.0,
            failures=failures_by_type(samples),
            latency_s=latency_table([s.latency_s for s in samples], ()),
        )

    def findings(self, summary: ClosedSummary, target: TargetResult) -> list[Finding]:
        c = summary
        text = (
            f"{label(target.name, target.info)}: closed loop of {c.requests} requests at concurrency "
            f"{c.params.concurrency}: {c.success_ratio * 100:.1f} % succeeded, "
            f"{c.throughput_per_s:.0f} req/s, "
            f"median {c.latency_s.get('median', 0) * 1000:.0f} ms; failures: {failures_text(c.failures)}."
        )
        return [Finding(kind="shape", target=target.name, subject=self.name, text=text)]

    def tables(self, results: Results) -> list[Table]:
        rows = results.summaries(ClosedSummary)
        table = Table(title="Closed loop: R requests, C at a time", box=box.SIMPLE_HEAD, title_justify="left")
        for column in (
            "target",
            "R",
            "C",
            "total s",
            "req/s",
            "success %",
            "statuses",
            "min ms",
            "median ms",
            "mean ms",
            "max ms",
        ):
            table.add_column(column, justify="left" if column in ("target", "statuses") else "right")
        for target, c in rows:
            table.add_row(
                target.name,
                str(c.requests),
                str(c.params.concurrency),
                f"{c.wall_s:.1f}",
                f"{c.throughput_per_s:.0f}",
                f"{c.success_ratio * 100:.1f}",
                ", ".join(f"{k}: {v}" for k, v in c.status_counts.items()),
                *(
                    f"{c.latency_s[k] * 1000:.0f}" if k in c.latency_s else "-"
                    for k in ("min", "median", "mean", "max")
                ),
            )
        return [table]

    def comparison(self, results: Results) -> list[ComparisonRow]:
        rows = results.summaries(ClosedSummary)
        cells = {t.name: Cell(value=c.throughput_per_s) for t, c in rows}
        sizes = "/".join(sorted({str(c.params.concurrency) for _, c in rows}))
        return [throughput_row(self.name, f"closed C={sizes} req/s", cells)] if rows else []


SHAPE = Closed()
