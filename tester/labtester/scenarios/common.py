"""What the load shapes driven by the aiohttp client share: the shape skeleton, sample records,
latency tables, failures by type, time series and their plot."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from labtester.clients.crew import Crew
from labtester.clients.merge import client_of, leader_record, loads, with_clients_cpu
from labtester.info import TargetInfo
from labtester.load import SAMPLE_FIELDS, LoadClient, Sample
from labtester.plotting import gaps, plt, save_png
from labtester.rawlog import Record
from labtester.scenarios.base import LoadShape, ShapeContext
from labtester.scenarios.together import RequestCounter, Together
from labtester.stats import percentiles
from labtester.traffic import Outgoing
from labtester.views import Cell, ComparisonRow

if TYPE_CHECKING:
    from labtester.settings import LabSettings

# Locust's percentile columns, computed from the raw times.
LOCUST_PERCENTILES = (50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100)

SettingsT = TypeVar("SettingsT", bound=BaseModel)
SummaryT = TypeVar("SummaryT", bound=BaseModel)


class SampleShape(LoadShape[SettingsT, SummaryT], Generic[SettingsT, SummaryT]):
    """A load shape run by the aiohttp client on one target, in one step, its records the
    `measure` result; failed requests under load are results, reported by type. With P clients,
    each sends its part after a common release; client 0 scrapes the server's request counters
    around the run, held against what every client sent."""

    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        return [f"{self.name} scenario"]

    @abstractmethod
    async def measure(
        self,
        url: str,
        settings: SettingsT,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
    ) -> list[Record]:
        """The raw records of one run (this client's part of it) on the target at `url`."""

    @abstractmethod
    def summarize(self, records: list[Record], info: TargetInfo | None) -> SummaryT: ...

    def run(self, ctx: ShapeContext) -> None:
        ctx.progress.step(f"{ctx.target.name}: {self.name} scenario")
        settings = self.settings(ctx.settings)
        together = Together(ctx)
        counter = RequestCounter(ctx) if ctx.crew.leader else None
        records = asyncio.run(
            self.measure(ctx.target.url, settings, ctx.settings.request_timeout_s, ctx.info, together)
        )
        for index, record in enumerate(records):
            ctx.record("run", step=record.pop("step", f"run {index}"), **record)
        if counter:
            counter.record()
            ctx.check_alive(together.errors)

    def join(self, records: list[Record]) -> Record:
        return join_samples(records)

    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> SummaryT:
        return self.summarize([r for r in records if r.get("kind", "run") == "run"], info)


def join_samples(records: list[Record]) -> Record:
    """Every client's samples of one step on one clock: each shifted by how much later than the
    first its clock started (the release), tagged with its client."""
    lead = leader_record(records)
    if "samples" not in lead:
        return lead
    origin = min(float(r.get("origin_at", 0.0)) for r in records)
    samples: list[Sample] = []
    wall = 0.0
    for record in sorted(records, key=client_of):
        shift = float(record.get("origin_at", 0.0)) - origin
        samples += [
            replace(s, scheduled_s=s.scheduled_s + shift, sent_s=s.sent_s + shift)
            for s in decode(record["samples"])
        ]
        wall = max(wall, float(record.get("wall_s", 0.0)) + shift)
    return {
        **lead,
        "origin_at": origin,
        "wall_s": wall,
        "samples": encode(samples),
        "loads": loads(records),
        "machine": with_clients_cpu(lead.get("machine"), records, lead),
    }


def always(request: Outgoing | str) -> Callable[[int], Outgoing]:
    """Every user's every request the same (a lab's path: a GET of it)."""
    fixed = request if isinstance(request, Outgoing) else Outgoing.get(request)
    return lambda user: fixed


async def ramp_users(
    client: LoadClient,
    next_request: Callable[[int], Outgoing],
    users: int,
    spawn_rate: float,
    duration_s: float,
    think_s: float,
    crew: Crew | None = None,
) -> tuple[list[Sample], list[tuple[float, int]]]:
    """Locust's user model: a user starts every 1/spawn_rate s up to `users`; each sends, waits for
    the answer, thinks `think_s`, and again, until `duration_s`. `next_request(user)`: what user
    number `user` (of all clients') sends next. With a crew, users are dealt round-robin: this
    client starts its own at their planned times. Returns every request and (seconds since start,
    this client's users running) at each spawn."""
    crew = crew or Crew()
    samples: list[Sample] = []
    running: list[tuple[float, int]] = []

    async def user(index: int) -> None:
        while client.now() < duration_s:
            samples.append(await client.send(next_request(index)))
            remaining = duration_s - client.now()
            if remaining > 0 and think_s > 0:
                await asyncio.sleep(min(think_s, remaining))

    tasks = []
    for index in range(users):
        start_at = index / spawn_rate
        if start_at >= duration_s:
            break
        if not crew.mine(index):
            continue
        await asyncio.sleep(max(0.0, start_at - client.now()))
        tasks.append(asyncio.create_task(user(index)))
        running.append((client.now(), len(tasks)))
    await asyncio.gather(*tasks)
    return samples, running


def join_users(records: list[Record]) -> Record:
    """Samples joined, and the users running recounted over every client's spawns on one clock."""
    joined = join_samples(records)
    spawns = sorted(
        at + float(r.get("origin_at", 0.0)) - joined.get("origin_at", 0.0)
        for r in records
        for at, _ in r.get("users", [])
    )
    return {**joined, "users": [(at, count) for count, at in enumerate(spawns, start=1)]}


def encode(samples: list[Sample]) -> dict[str, Any]:
    """Samples as a compact table for the raw log: field names once, then rows."""
    return {"fields": list(SAMPLE_FIELDS), "rows": [s.as_row() for s in samples]}


def decode(table: dict[str, Any]) -> list[Sample]:
    """By field name: rows written before a field existed take its default."""
    fields = table["fields"]
    return [Sample(**dict(zip(fields, row, strict=True))) for row in table["rows"]]


def errors(record: Record) -> list[str | None]:
    fields = record["samples"]["fields"]
    return [row[fields.index("error")] for row in record["samples"]["rows"]]


def failures_by_type(samples: list[Sample]) -> dict[str, int]:
    return dict(Counter(s.error for s in samples if s.error).most_common())


def failures_text(failures: dict[str, int]) -> str:
    return "; ".join(f"{error}: {count}" for error, count in failures.items()) or "none"


def ms(seconds: float | None) -> str:
    """Seconds as whole milliseconds for a table cell; '-' when there is no value."""
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def status_counts(samples: list[Sample]) -> dict[str, int]:
    return dict(Counter(str(s.status) if s.status else s.error or "?" for s in samples).most_common())


def latency_table(latencies: list[float], points: tuple[float, ...] = LOCUST_PERCENTILES) -> dict[str, float]:
    if not latencies:
        return {}
    array = np.asarray(latencies)
    return {
        "min": float(array.min()),
        "median": float(np.median(array)),
        "mean": float(array.mean()),
        "max": float(array.max()),
        **percentiles(latencies, points),
    }


class SecondPoint(BaseModel):
    """One second of a run: responses finished in it, failures, and their latency percentiles."""

    t: float
    requests: int
    failures: int
    p50: float | None
    p95: float | None


def per_second(samples: list[Sample], duration_s: float, from_schedule: bool = False) -> list[SecondPoint]:
    """Throughput and latency over time, bucketed by the second each request finished in."""
    buckets: dict[int, list[Sample]] = {}
    for sample in samples:
        buckets.setdefault(int(sample.sent_s + sample.latency_s), []).append(sample)
    series = []
    for second in range(int(np.ceil(duration_s)) + 1):
        done = buckets.get(second, [])
        values = [s.from_schedule_s if from_schedule else s.latency_s for s in done]
        points = percentiles(values, (50, 95)) if values else {}
        series.append(
            SecondPoint(
                t=float(second),
                requests=len(done),
                failures=sum(1 for s in done if s.error),
                p50=points.get("p50"),
                p95=points.get("p95"),
            )
        )
    return series


def over_time_plot(
    rows: list[tuple[str, list[SecondPoint]]], title: str, latency: str, path: Path
) -> Path | None:
    """Responses per second and p95 latency per second, one line per target."""
    if not rows:
        return None
    figure, (throughput, latencies) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for name, series in rows:
        seconds = [point.t for point in series]
        throughput.plot(seconds, [point.requests for point in series], label=name)
        latencies.plot(seconds, gaps(point.p95 for point in series), label=f"{name} p95")
    throughput.set_ylabel("responses / s")
    latencies.set_ylabel(f"latency s ({latency})")
    latencies.set_xlabel("seconds since start")
    for axis in (throughput, latencies):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    return save_png(figure, path)


def steady(series: list[SecondPoint], from_s: float, wall_s: float) -> list[float]:
    """Responses in each whole second from `from_s` to the last full second: a throughput's noise."""
    return [float(point.requests) for point in series if from_s <= point.t < wall_s - 1]


def throughput_row(shape: str, label: str, cells: dict[str, Cell]) -> ComparisonRow:
    """A row of requests/s with no model to hold them against (the paths are the user's choice)."""
    return ComparisonRow(
        key=f"{shape}/{label}",
        shape=shape,
        label=label,
        unit="req/s",
        reference="none",
        tolerance=0.0,
        cpu_bound=False,
        cells=cells,
    )
