"""Open loop at a constant arrival rate (wrk2, k6 constant-arrival-rate).

Requests are sent on schedule whether or not earlier ones were answered, and latency is measured
from each request's scheduled send time, so a stalled server cannot hide its stall by slowing
the client down (coordinated omission). Sends that start late, and sends dropped because too
many requests are unanswered, are counted. `open_loop` is the schedule itself, for any requests
(a team's mix: scenarios/flow/mix.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
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
    join_samples,
    latency_table,
    ms,
    over_time_plot,
    per_second,
    steady,
)
from labtester.scenarios.step import OneStepShape
from labtester.scenarios.together import DROPPED, Together
from labtester.traffic import Outgoing
from labtester.views import Cell, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult

LATE_S = 0.010  # a send more than this behind its schedule counts as late
POINTS = (50, 90, 99, 99.9, 100)
KEPT_UP = 0.1  # answered within this share of the offered rate: the target kept up


class RateSettings(BaseModel):
    """A constant arrival rate, latency measured from each request's scheduled send time."""

    model_config = {"extra": "forbid"}
    per_s: float = Field(20.0, gt=0, le=100_000)
    duration_s: float = Field(10.0, gt=0, le=3600)
    path: str = "/test/io-bound/100"
    max_outstanding: int = Field(2000, ge=1, description="Sends beyond this many unanswered are dropped.")


class RateSummary(BaseModel):
    shape: Literal["rate"] = "rate"
    params: RateSettings
    wall_s: float
    scheduled: int
    late_sends: int
    dropped: int
    achieved_per_s: float
    latency_from_schedule_s: dict[str, float]
    service_latency_s: dict[str, float]
    failures: dict[str, int]
    over_time: list[SecondPoint]


async def open_loop(
    client: LoadClient,
    next_request: Callable[[int], Outgoing],
    per_s: float,
    duration_s: float,
    max_outstanding: int,
    together: Together | None = None,
) -> tuple[list[Sample], int]:
    """Send number i at i / per_s seconds from the client's clock start, whatever is unanswered
    (`next_request(i)`: what it is); with a crew, sends are dealt round-robin across the clients.
    A send beyond `max_outstanding` (this client's part of it) unanswered is dropped, and counted.
    Returns every send's sample, its latency counted from its schedule, and how many left late."""
    together = together or Together()
    samples: list[Sample] = []
    late = outstanding = 0
    most = max(1, together.part(max_outstanding))

    async def send(request: Outgoing, scheduled_s: float) -> None:
        nonlocal outstanding
        samples.append(await client.send(request, scheduled_s))
        outstanding -= 1

    tasks = []
    for index in range(round(per_s * duration_s)):
        if not together.mine(index):
            continue
        scheduled_s = index / per_s
        delay = scheduled_s - client.now()
        if delay > 0:
            await asyncio.sleep(delay)
        elif -delay > LATE_S:
            late += 1
        request = next_request(index)
        if outstanding >= most:
            samples.append(
                Sample(request.label, scheduled_s, client.now(), 0.0, None, DROPPED, client=client.client)
            )
            continue
        outstanding += 1
        tasks.append(asyncio.create_task(send(request, scheduled_s)))
    await asyncio.gather(*tasks)
    return samples, late


class Rate(OneStepShape[RateSettings, RateSummary]):
    name = "rate"
    settings_model = RateSettings
    summary_model = RateSummary

    async def send(
        self, client: LoadClient, settings: RateSettings, together: Together
    ) -> tuple[list[Sample], Record]:
        """Sends dealt round-robin across the clients, each at its planned time."""
        samples, late = await open_loop(
            client,
            always(settings.path),
            settings.per_s,
            settings.duration_s,
            settings.max_outstanding,
            together,
        )
        return samples, {"late_sends": late}

    def join(self, records: list[Record]) -> Record:
        return {**join_samples(records), "late_sends": sum(r.get("late_sends", 0) for r in records)}

    def summarize(self, records: list[Record], info: TargetInfo | None) -> RateSummary:
        (record,) = records
        samples = decode(record["samples"])
        answered = [s for s in samples if s.error != DROPPED]
        wall = record["wall_s"]
        return RateSummary(
            params=RateSettings(**record["params"]),
            wall_s=wall,
            scheduled=len(samples),
            late_sends=record["late_sends"],
            dropped=len(samples) - len(answered),
            achieved_per_s=sum(1 for s in answered if s.ok) / wall if wall else 0.0,
            latency_from_schedule_s=latency_table([s.from_schedule_s for s in answered], POINTS),
            service_latency_s=latency_table([s.latency_s for s in answered], POINTS),
            failures=failures_by_type(samples),
            over_time=per_second(answered, wall, from_schedule=True),
        )

    def findings(self, summary: RateSummary, target: TargetResult) -> list[Finding]:
        scheduled, service = summary.latency_from_schedule_s, summary.service_latency_s
        if not scheduled or not service:
            return []
        queued = scheduled["p99"] > 1.5 * service["p99"]
        text = (
            f"{label(target.name, target.info)}: {summary.params.per_s:g} req/s for "
            f"{summary.params.duration_s:g} s: p99 from the schedule {scheduled['p99'] * 1000:.0f} ms vs "
            f"{service['p99'] * 1000:.0f} ms from the send"
            + (
                "; requests waited before the server took them, which a closed loop would hide"
                if queued
                else ""
            )
            + f"; {summary.late_sends} late and {summary.dropped} dropped sends"
            + f"; failures: {failures_text(summary.failures)}."
        )
        return [Finding(kind="shape", target=target.name, subject=self.name, text=text)]

    def tables(self, results: Results) -> list[Table]:
        table = Table(
            title="Constant arrival rate: latency from the scheduled send (and from the actual send)",
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        for column in (
            "target",
            "rate/s",
            "sent",
            "late",
            "dropped",
            "done/s",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "send p99 ms",
            "fails",
        ):
            table.add_column(column, justify="left" if column == "target" else "right")
        for target, r in results.summaries(RateSummary):
            scheduled = r.latency_from_schedule_s
            table.add_row(
                target.name,
                f"{r.params.per_s:g}",
                str(r.scheduled),
                str(r.late_sends),
                str(r.dropped),
                f"{r.achieved_per_s:.1f}",
                *(ms(scheduled.get(k)) for k in ("p50", "p99", "p99.9", "max")),
                ms(r.service_latency_s.get("p99")),
                str(sum(r.failures.values())),
            )
        return [table]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        rows = [(t.name, r.over_time) for t, r in results.summaries(RateSummary)]
        plot = over_time_plot(
            rows,
            "rate: throughput and latency over time",
            "from the scheduled send",
            directory / "rate-over-time.png",
        )
        return [plot] if plot else []

    def comparison(self, results: Results) -> list[ComparisonRow]:
        rows: dict[float, ComparisonRow] = {}
        for target, r in results.summaries(RateSummary):
            per_s = r.params.per_s
            row = rows.setdefault(
                per_s,
                ComparisonRow(
                    key=f"rate/{per_s:g}",
                    shape=self.name,
                    label=f"rate {per_s:g}/s answered/s",
                    unit="req/s",
                    reference="offered rate",
                    tolerance=KEPT_UP,
                    cpu_bound=False,
                    cells={},
                ),
            )
            row.cells[target.name] = Cell(
                value=r.achieved_per_s,
                reference=per_s,
                ratio=r.achieved_per_s / per_s,
                samples=steady(r.over_time, 0.0, r.wall_s),
            )
        return list(rows.values())


SHAPE = Rate()
