"""Ramp: users added at a spawn rate up to U, each sending, then thinking, until the end (Locust)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field
from rich import box
from rich.table import Table

from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import (
    SecondPoint,
    always,
    decode,
    failures_by_type,
    failures_text,
    join_users,
    latency_table,
    ms,
    over_time_plot,
    per_second,
    ramp_users,
    steady,
    throughput_row,
)
from labtester.scenarios.step import OneStepShape
from labtester.scenarios.together import Together
from labtester.views import Cell, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult

PERCENTILES = ("p50", "p66", "p75", "p80", "p90", "p95", "p98", "p99", "p99.9", "p99.99", "p100")


class RampSettings(BaseModel):
    """Users added at a spawn rate up to a maximum, each with a think time (Locust)."""

    model_config = {"extra": "forbid"}
    users: int = Field(20, ge=1, le=10_000)
    spawn_rate: float = Field(5.0, gt=0, description="Users started per second.")
    duration_s: float = Field(15.0, gt=0, le=3600)
    think_s: float = Field(0.5, ge=0, le=60)
    path: str = "/test/io-bound/100"


class LocustStats(BaseModel):
    """Locust's statistics table, one row: the scenario's path."""

    name: str
    requests: int
    failures: int
    requests_per_s: float
    failures_per_s: float
    latency_s: dict[str, float]  # min, median, mean, max and Locust's percentiles


class RampSummary(BaseModel):
    shape: Literal["ramp"] = "ramp"
    params: RampSettings
    wall_s: float
    stats: LocustStats
    failures: dict[str, int]
    users: list[tuple[float, int]]  # (seconds since start, users running)
    over_time: list[SecondPoint]


class Ramp(OneStepShape[RampSettings, RampSummary]):
    name = "ramp"
    settings_model = RampSettings
    summary_model = RampSummary

    async def send(
        self, client: LoadClient, settings: RampSettings, together: Together
    ) -> tuple[list[Sample], Record]:
        samples, users_over_time = await ramp_users(
            client,
            always(settings.path),
            settings.users,
            settings.spawn_rate,
            settings.duration_s,
            settings.think_s,
            together.crew,
        )
        return samples, {"users": users_over_time}

    def join(self, records: list[Record]) -> Record:
        return join_users(records)

    def summarize(self, records: list[Record], info: TargetInfo | None) -> RampSummary:
        (record,) = records
        samples = decode(record["samples"])
        wall = record["wall_s"]
        failures = sum(1 for s in samples if s.error)
        params = RampSettings(**record["params"])
        return RampSummary(
            params=params,
            wall_s=wall,
            stats=LocustStats(
                name=params.path,
                requests=len(samples),
                failures=failures,
                requests_per_s=len(samples) / wall if wall else 0.0,
                failures_per_s=failures / wall if wall else 0.0,
                latency_s=latency_table([s.latency_s for s in samples]),
            ),
            failures=failures_by_type(samples),
            users=[tuple(pair) for pair in record["users"]],
            over_time=per_second(samples, wall),
        )

    def findings(self, summary: RampSummary, target: TargetResult) -> list[Finding]:
        stats = summary.stats
        text = (
            f"{label(target.name, target.info)}: ramp to {summary.params.users} users: {stats.requests} "
            f"requests, {stats.requests_per_s:.1f} req/s, "
            f"median {stats.latency_s.get('median', 0) * 1000:.0f} ms, "
            f"p99 {stats.latency_s.get('p99', 0) * 1000:.0f} ms; failures: {failures_text(summary.failures)}."
        )
        return [Finding(kind="shape", target=target.name, subject=self.name, text=text)]

    def tables(self, results: Results) -> list[Table]:
        table = Table(
            title="Ramp (Locust's statistics; times in ms)", box=box.SIMPLE_HEAD, title_justify="left"
        )
        columns = (
            "target",
            "# reqs",
            "# fails",
            "med",
            "avg",
            "min",
            "max",
            "req/s",
            "fail/s",
            *(p[1:] + "%" for p in PERCENTILES),
        )
        for column in columns:
            table.add_column(column, justify="left" if column == "target" else "right")
        for target, r in results.summaries(RampSummary):
            latency = r.stats.latency_s
            table.add_row(
                target.name,
                str(r.stats.requests),
                str(r.stats.failures),
                *(ms(latency.get(k)) for k in ("median", "mean", "min", "max")),
                f"{r.stats.requests_per_s:.1f}",
                f"{r.stats.failures_per_s:.2f}",
                *(ms(latency.get(p)) for p in PERCENTILES),
            )
        return [table]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        rows = [(t.name, r.over_time) for t, r in results.summaries(RampSummary)]
        plot = over_time_plot(
            rows, "ramp: throughput and latency over time", "per request", directory / "ramp-over-time.png"
        )
        return [plot] if plot else []

    def comparison(self, results: Results) -> list[ComparisonRow]:
        rows = results.summaries(RampSummary)
        cells = {
            t.name: Cell(
                value=r.stats.requests_per_s,
                samples=steady(r.over_time, r.params.users / r.params.spawn_rate, r.wall_s),
            )
            for t, r in rows
        }
        sizes = "/".join(sorted({str(r.params.users) for _, r in rows}))
        return [throughput_row(self.name, f"ramp {sizes} users req/s", cells)] if rows else []


SHAPE = Ramp()
