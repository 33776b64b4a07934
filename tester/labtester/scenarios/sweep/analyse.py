"""The sweep's settings and summary: speedup per level against the bound, the knee, the rule."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from labtester.info import TargetInfo
from labtester.model import speedup_bound
from labtester.rawlog import Record
from labtester.scenarios.common import decode, failures_by_type, latency_table

DEGRADED = 1.5  # p99 above this multiple of the first level's p99 counts as degraded
VARIANT_KEYS = ("cpu_ms", "io_ms", "splits")


class SweepVariant(BaseModel):
    """One workload of the sweep: /test/mixed's CPU time, total wait and parts of the wait."""

    model_config = {"extra": "forbid", "frozen": True}
    cpu_ms: int = Field(ge=0, le=10_000)
    io_ms: int = Field(ge=0, le=60_000)
    splits: int = Field(1, ge=1, le=100)

    def query(self) -> str:
        return f"cpu_ms={self.cpu_ms}&io_ms={self.io_ms}&splits={self.splits}"

    def label(self) -> str:
        """`cpu 5 ms, io 55 ms in 1 part`: how reports name a variant."""
        parts = f"{self.splits} part{'s' * (self.splits != 1)}"
        return f"cpu {self.cpu_ms} ms, io {self.io_ms} ms in {parts}"

    def short_label(self) -> str:
        """`5/55 ms x1`: cpu/io and the parts of the wait, for table columns."""
        return f"{self.cpu_ms}/{self.io_ms} ms x{self.splits}"


# The gevent study's two ratios (io/cpu = 11 and 3), each with the wait whole and in five parts.
DEFAULT_VARIANTS = tuple(
    SweepVariant(cpu_ms=cpu, io_ms=io, splits=splits) for cpu, io in ((5, 55), (50, 150)) for splits in (1, 5)
)


class SweepSettings(BaseModel):
    """Closed loops at rising concurrency on the mixed endpoint, against the bound 1/(1 - p), for
    each variant in turn (all levels of one, then the next)."""

    model_config = {"extra": "forbid"}
    levels: list[Annotated[int, Field(ge=1, le=10_000)]] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32], min_length=1
    )
    duration_s: float = Field(3.0, gt=0, le=600, description="Seconds at each concurrency level.")
    variants: list[SweepVariant] = Field(
        default_factory=lambda: list(DEFAULT_VARIANTS),
        min_length=1,
        description="Workloads to sweep: [{cpu_ms, io_ms, splits}, ...] (JSON in an env var).",
    )


class SweepLevel(BaseModel):
    concurrency: int
    requests: int
    throughput_per_s: float
    p50_s: float | None
    p95_s: float | None
    p99_s: float | None
    cpu_utilisation: float | None  # server CPU seconds / (wall x effective cores)
    failures: dict[str, int]
    speedup: float | None = None


class VariantSummary(BaseModel):
    params: SweepVariant
    io_share: float
    bound: float | None
    levels: list[SweepLevel]
    degrades_at: int | None
    recommended_worker_connections: float | None  # the study's rule: io / cpu


class SweepSummary(BaseModel):
    shape: Literal["sweep"] = "sweep"
    duration_s: float | None
    variants: list[VariantSummary]


def degrades_at(p99s: list[float | None], concurrency: list[int]) -> int | None:
    """The first level from which p99 stays above DEGRADED x the first level's p99."""
    if not p99s or p99s[0] is None:
        return None
    limit = DEGRADED * p99s[0]
    for index in range(1, len(p99s)):
        if all(p is not None and p > limit for p in p99s[index:]):
            return concurrency[index]
    return None


def _bound(io_share: float, info: TargetInfo | None) -> float | None:
    """The model's bound for the target's mixed endpoint; None when unknown or unbounded."""
    mixed = info.endpoints.get("mixed") if info else None
    if info is None or mixed is None:
        return None
    bound = speedup_bound(io_share, mixed, info)
    return None if bound == float("inf") else bound


def _level(record: Record, cores: int | None) -> SweepLevel:
    samples = decode(record["samples"])
    ok = [s for s in samples if s.ok]
    latencies = latency_table([s.latency_s for s in ok], (50, 95, 99))
    cpu_s = record["server_cpu_s"]
    return SweepLevel(
        concurrency=record["concurrency"],
        requests=len(samples),
        throughput_per_s=len(ok) / record["wall_s"],
        p50_s=latencies.get("p50"),
        p95_s=latencies.get("p95"),
        p99_s=latencies.get("p99"),
        cpu_utilisation=cpu_s / record["wall_s"] / cores if cpu_s is not None and cores else None,
        failures=failures_by_type(samples),
    )


def _variant(params: SweepVariant, records: list[Record], info: TargetInfo | None) -> VariantSummary:
    cores = info.effective_cores if info else None
    levels = [_level(r, cores) for r in sorted(records, key=lambda r: r["concurrency"])]
    base = levels[0].throughput_per_s
    for entry in levels:
        entry.speedup = entry.throughput_per_s / base if base else None
    io, cpu = params.io_ms, params.cpu_ms
    io_share = io / (cpu + io) if cpu + io else 0.0
    return VariantSummary(
        params=params,
        io_share=io_share,
        bound=_bound(io_share, info),
        levels=levels,
        degrades_at=degrades_at([e.p99_s for e in levels], [e.concurrency for e in levels]),
        recommended_worker_connections=io / cpu if cpu else None,
    )


def summarize(records: list[Record], info: TargetInfo | None) -> SweepSummary:
    """Per variant (in the order run): levels, speedup against the bound, the knee and the rule."""
    by_variant: dict[SweepVariant, list[Record]] = {}
    for record in records:
        params: dict[str, Any] = record["params"]
        variant = SweepVariant(**{k: params[k] for k in VARIANT_KEYS})
        by_variant.setdefault(variant, []).append(record)
    variants = [_variant(params, runs, info) for params, runs in by_variant.items()]
    return SweepSummary(duration_s=records[0]["params"].get("duration_s"), variants=variants)
