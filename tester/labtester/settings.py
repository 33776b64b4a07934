"""One typed settings object for the tester: flags, TESTER_* env vars (how the Job is configured)
or a JSON/YAML file, in that order of precedence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

SCENARIOS = ("bursts", "closed", "ramp", "sweep", "rate")
DEFAULT_SCENARIOS = ("bursts",)  # the quick default matrix; the others on request
DEFAULT_ENDPOINTS = ("sync-cpubound", "badasync-cpubound", "offload-cpubound", "io-bound")


class TargetRef(BaseModel):
    """All the tester knows of a target: its name, its URL, and whether it is load-tested."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    url: str = Field(pattern=r"^https?://")
    measure: bool = True


class ClosedSettings(BaseModel):
    """R requests, C at a time, cycling over a list of paths (the async benchmarking script)."""

    model_config = {"extra": "forbid"}
    requests: int = Field(500, ge=1, le=1_000_000)
    concurrency: int = Field(50, ge=1, le=10_000)
    paths: list[str] = Field(default_factory=lambda: ["/test/io-bound/100"])


class RampSettings(BaseModel):
    """Users added at a spawn rate up to a maximum, each with a think time (Locust)."""

    model_config = {"extra": "forbid"}
    users: int = Field(20, ge=1, le=10_000)
    spawn_rate: float = Field(5.0, gt=0, description="Users started per second.")
    duration_s: float = Field(15.0, gt=0, le=3600)
    think_s: float = Field(0.5, ge=0, le=60)
    path: str = "/test/io-bound/100"


class SweepVariant(BaseModel):
    """One workload of the sweep: /test/mixed's CPU time, total wait and parts of the wait."""

    model_config = {"extra": "forbid", "frozen": True}
    cpu_ms: int = Field(ge=0, le=10_000)
    io_ms: int = Field(ge=0, le=60_000)
    splits: int = Field(1, ge=1, le=100)


# The gevent study's two ratios (io/cpu = 11 and 3), each with the wait whole and in five parts.
DEFAULT_SWEEP_VARIANTS = tuple(
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
        default_factory=lambda: list(DEFAULT_SWEEP_VARIANTS),
        min_length=1,
        description="Workloads to sweep: [{cpu_ms, io_ms, splits}, ...] (JSON in an env var).",
    )


class RateSettings(BaseModel):
    """A constant arrival rate, latency measured from each request's scheduled send time."""

    model_config = {"extra": "forbid"}
    per_s: float = Field(20.0, gt=0, le=100_000)
    duration_s: float = Field(10.0, gt=0, le=3600)
    path: str = "/test/io-bound/100"
    max_outstanding: int = Field(2000, ge=1, description="Sends beyond this many unanswered are dropped.")


def parse_target_list(text: str, measure: bool) -> list[TargetRef]:
    """`name=url,name=url` (the form env vars carry) into target references."""
    targets = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, separator, url = item.partition("=")
        if not separator:
            raise ValueError(f"target {item!r} is not NAME=URL")
        targets.append(TargetRef(name=name.strip(), url=url.strip().rstrip("/"), measure=measure))
    return targets


class TesterSettings(BaseSettings):
    __test__ = False  # not a pytest test class, despite the name
    model_config = SettingsConfigDict(env_prefix="TESTER_", extra="forbid", env_nested_delimiter="__")

    targets: Annotated[list[TargetRef], NoDecode] = Field(
        default_factory=list, description="Targets to measure: NAME=URL,NAME=URL (env) or a list."
    )
    census_only: Annotated[list[TargetRef], NoDecode] = Field(
        default_factory=list, description="Targets only counted in the census (dev variants)."
    )
    work_seconds: float = Field(2.0, gt=0, le=60, description="N: server time of one CPU request.")
    burst_max: int = Field(5, ge=1, le=64, description="K: bursts of n = 1..K simultaneous requests.")
    repeats: int = Field(3, ge=1, le=20, description="r: repetitions of each burst point.")
    calibration_tolerance: float = Field(0.03, gt=0, lt=1, description="Largest calibration error.")
    calibration_rounds: int = Field(6, ge=1, le=20, description="Most verify-and-refine rounds.")
    ready_timeout_s: float = Field(300, gt=0, description="How long to wait for each target.")
    request_timeout_s: float = Field(600, gt=0, description="Longest one request may take.")
    output_dir: Path = Field(Path("results"), description="Results folder (a run's subfolder is made).")
    # Bursts alone by default: `make lab` stays a few minutes; the other shapes are asked for.
    scenarios: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_SCENARIOS))
    endpoints: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_ENDPOINTS),
        description="Endpoints to load, each where a target's /info lists it.",
    )

    closed: ClosedSettings = Field(default_factory=ClosedSettings)
    ramp: RampSettings = Field(default_factory=RampSettings)
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    rate: RateSettings = Field(default_factory=RateSettings)

    @field_validator("targets", "census_only", mode="before")
    @classmethod
    def _targets_from_text(cls, value: Any, info: Any) -> Any:
        if isinstance(value, str):
            return parse_target_list(value, measure=info.field_name == "targets")
        return value

    @field_validator("scenarios", "endpoints", mode="before")
    @classmethod
    def _scenarios_from_text(cls, value: Any) -> Any:
        return [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else value

    @field_validator("scenarios")
    @classmethod
    def _known_scenarios(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(SCENARIOS))
        if unknown:
            raise ValueError(f"unknown scenario(s) {unknown}; known: {list(SCENARIOS)}")
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> TesterSettings:
        names = [t.name for t in [*self.targets, *self.census_only]]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"target names must be unique: {duplicated}")
        return self

    @classmethod
    def load(cls, file: Path | None = None, **overrides: Any) -> TesterSettings:
        """File values, then TESTER_* env vars, then `overrides` (from flags): later ones win."""
        from_file = yaml.safe_load(file.read_text()) if file else {}
        env_only = cls()  # env vars over defaults
        merged = {**(from_file or {}), **env_only.model_dump(exclude_unset=True)}
        return cls(**{**merged, **{k: v for k, v in overrides.items() if v is not None}})
