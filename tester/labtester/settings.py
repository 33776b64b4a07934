"""One typed settings object for the tester: flags, TESTER_* env vars (how the Job is configured)
or a JSON/YAML file, in that order of precedence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

SCENARIOS = ("bursts",)
DEFAULT_ENDPOINTS = ("sync-cpubound", "badasync-cpubound", "offload-cpubound", "io-bound")


class TargetRef(BaseModel):
    """All the tester knows of a target: its name, its URL, and whether it is load-tested."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    url: str = Field(pattern=r"^https?://")
    measure: bool = True


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
    model_config = SettingsConfigDict(env_prefix="TESTER_", extra="forbid")

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
    scenarios: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(SCENARIOS))
    endpoints: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_ENDPOINTS),
        description="Endpoints to load, each where a target's /info lists it.",
    )

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
