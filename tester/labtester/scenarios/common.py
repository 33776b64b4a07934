"""What the load shapes driven by the aiohttp client share: the shape skeleton, sample records,
latency tables, failures by type, time series and their plot."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from labtester.info import TargetInfo
from labtester.loadclient import SAMPLE_FIELDS, LoadClient, Sample
from labtester.plotting import gaps, plt, save_png
from labtester.rawlog import Record
from labtester.scenarios.base import LoadShape, ShapeContext
from labtester.stats import percentiles
from labtester.views import Cell, ComparisonRow

if TYPE_CHECKING:
    from labtester.settings import LabSettings

# Locust's percentile columns, computed from the raw times.
LOCUST_PERCENTILES = (50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100)

SettingsT = TypeVar("SettingsT", bound=BaseModel)
SummaryT = TypeVar("SummaryT", bound=BaseModel)


class SampleShape(LoadShape[SettingsT, SummaryT], Generic[SettingsT, SummaryT]):
    """A load shape run by the aiohttp client on one target, in one step, its records the
    `measure` result; failed requests under load are results, reported by type."""

    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        return [f"{self.name} scenario"]

    @abstractmethod
    async def measure(
        self, url: str, settings: SettingsT, timeout_s: float, info: TargetInfo
    ) -> list[Record]:
        """The raw records of one run on the target at `url`."""

    @abstractmethod
    def summarize(self, records: list[Record], info: TargetInfo | None) -> SummaryT: ...

    def run(self, ctx: ShapeContext) -> None:
        ctx.progress.step(f"{ctx.target.name}: {self.name} scenario")
        settings = self.settings(ctx.settings)
        records = asyncio.run(
            self.measure(ctx.target.url, settings, ctx.settings.request_timeout_s, ctx.info)
        )
        for record in records:
            ctx.record("run", **record)
        ctx.check_alive([error for record in records for error in errors(record)])

    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> SummaryT:
        return self.summarize(records, info)


async def ramp_users(
    client: LoadClient, path: str, users: int, spawn_rate: float, duration_s: float, think_s: float
) -> tuple[list[Sample], list[tuple[float, int]]]:
    """Locust's user model: a user starts every 1/spawn_rate s up to `users`; each sends, waits for
    the answer, thinks `think_s`, and again, until `duration_s`. Returns every request and
    (seconds since start, users running) at each spawn."""
    samples: list[Sample] = []
    running: list[tuple[float, int]] = []

    async def user() -> None:
        while client.now() < duration_s:
            samples.append(await client.get(path))
            remaining = duration_s - client.now()
            if remaining > 0 and think_s > 0:
                await asyncio.sleep(min(think_s, remaining))

    tasks = []
    for index in range(users):
        start_at = index / spawn_rate
        if start_at >= duration_s:
            break
        await asyncio.sleep(max(0.0, start_at - client.now()))
        tasks.append(asyncio.create_task(user()))
        running.append((client.now(), len(tasks)))
    await asyncio.gather(*tasks)
    return samples, running


def encode(samples: list[Sample]) -> dict[str, Any]:
    """Samples as a compact table for the raw log: field names once, then rows."""
    return {"fields": list(SAMPLE_FIELDS), "rows": [s.as_row() for s in samples]}


def decode(table: dict[str, Any]) -> list[Sample]:
    return [Sample(*row) for row in table["rows"]]


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
