"""One typed settings object for the tester: flags, TESTER_* env vars (how the Job is configured)
or a JSON/YAML file, in that order of precedence.

Every knob has its one default here; `--help`, the README and the chart show it from here. Each
load shape with knobs of its own contributes them as a section (TESTER_<SHAPE>__<KEY>): the shapes'
registry (labtester.scenarios) builds TesterSettings, these settings with every section, and
checks the shapes named; this module knows no shape.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from labtester.appinputs import check_app_path, parse_memory
from labtester.info import TargetInfo
from labtester.targetref import TargetRef, parse_target_list
from labtester.traffic import Outgoing, Traffic, read_traffic, traffic_of
from labtester.yamlfile import read_mapping

DEFAULT_SCENARIOS = ("bursts",)  # the quick default matrix; the others on request
# A team's app: bursts and a flow against each path, then the sizing (labtester/proposal/ runs it,
# labtester/sizing/ models it).
DEFAULT_APP_SCENARIOS = ("bursts", "flow", "sizing")
DEFAULT_ENDPOINTS = ("sync-cpubound", "badasync-cpubound", "offload-cpubound", "io-bound")


class LabSettings(BaseSettings):
    __test__ = False  # not a pytest test class
    model_config = SettingsConfigDict(env_prefix="TESTER_", extra="forbid", env_nested_delimiter="__")

    targets: Annotated[list[TargetRef], NoDecode] = Field(
        default_factory=list, description="Targets to measure: NAME=URL,NAME=URL (env) or a list."
    )
    census_only: Annotated[list[TargetRef], NoDecode] = Field(
        default_factory=list, description="Targets only counted in the census (dev variants)."
    )
    work_seconds: float = Field(0.5, gt=0, le=60, description="N: server time of one CPU request, seconds.")
    burst_max: int = Field(5, ge=1, le=64, description="K: bursts of n = 1..K simultaneous requests.")
    repeats: int = Field(
        3, ge=1, le=20, description="R: most repetitions of each burst size (fewer once a majority agree)."
    )
    calibration_tolerance: float = Field(0.03, gt=0, lt=1, description="Calibration error counted as exact.")
    calibration_rounds: int = Field(6, ge=1, le=20, description="Most verify-and-refine rounds.")
    stability_samples: int = Field(
        20, ge=5, le=50, description="Kernel iterations timed by each stability probe."
    )
    ready_timeout_s: float = Field(300, gt=0, description="How long to wait for each target, seconds.")
    request_timeout_s: float = Field(600, gt=0, description="Longest one request may take, seconds.")
    prometheus_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="Prometheus to wait for and cross-check counts with (optional).",
    )
    output_dir: Path = Field(Path("results"), description="Results folder (a subfolder per run).")
    plots: bool = Field(
        True,
        description="Draw plots/ and embed them in report.html; false (TESTER_PLOTS=false, as a CI "
        "run that reads results.json may) leaves them out: `labtester report DIR` draws them later.",
    )
    scenarios: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_SCENARIOS),
        description=f"Load shapes (the shapes' registry checks them); an app's default: "
        f"{','.join(DEFAULT_APP_SCENARIOS)}.",
    )
    clients: int = Field(
        1, ge=1, le=64, description="P: clients sharing the load, released together (processes or pods)."
    )
    client_index: int = Field(
        0, ge=0, description="This client's index i of P (on Kubernetes, the pod's completion index)."
    )
    barrier: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.-]+:[0-9]+$",
        description="host:port of client 0's barrier; unset with P > 1: one on 127.0.0.1, and the "
        "other P - 1 clients started here as processes.",
    )
    barrier_token: SecretStr | None = Field(
        None,
        exclude=True,  # never dumped: not into the raw log, the results, or the plan sent to clients
        min_length=16,
        description="The run's token every client presents to the barrier (on Kubernetes from a "
        "Secret; generated per run for local clients). Never logged or written.",
    )
    results_url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="Where client 0 uploads the finished results folder (the chart's results server).",
    )
    endpoints: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_ENDPOINTS),
        description="Endpoints to burst, each where a target's /info lists it.",
    )
    app: str | None = Field(
        None,
        min_length=1,
        description="A team's app, module:attribute, started under every server configuration.",
    )
    paths: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="The app's paths to measure, /a,/b (each from /; a query string may follow).",
    )
    traffic: Annotated[Traffic | None, NoDecode] = Field(
        None,
        description="The app's traffic instead of its paths: a YAML file of requests, each with its "
        "method, path, headers, body and weight in the mix (README: Measure your own app).",
    )
    acceptable_p99: float = Field(
        2.0,
        ge=1,
        description="Recommendation: a configuration's p99 is acceptable within this many times "
        "the best p99 among the configurations.",
    )

    cores: float | None = Field(
        None, gt=0, le=1024, description="Sizing: the pod's cores (default: this machine's effective cores)."
    )
    memory: Annotated[int | None, NoDecode] = Field(
        None,
        gt=0,
        description="Sizing: the pod's memory, bytes or 512Mi, 1Gi, 2G (default: the machine's or cgroup's).",
    )
    p99: float | None = Field(
        None,
        gt=0,
        le=3600,
        description="Sizing: the p99 objective, seconds (default: 4x the mix's mean time alone, at least "
        "2x its slowest request's, each as the load client saw requests alone).",
    )
    target_rate: float | None = Field(
        None,
        gt=0,
        le=1_000_000,
        description="Sizing: a rate to serve, req/s: the smallest configuration that does.",
    )

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_size(cls, value: Any) -> Any:
        return parse_memory(value) if isinstance(value, str) else value

    @field_validator("targets", "census_only", mode="before")
    @classmethod
    def _targets_from_text(cls, value: Any, info: Any) -> Any:
        if isinstance(value, str):
            return parse_target_list(value, measure=info.field_name == "targets")
        return value

    @field_validator("scenarios", "endpoints", "paths", mode="before")
    @classmethod
    def _list_from_text(cls, value: Any) -> Any:
        return [s.strip() for s in value.split(",") if s.strip()] if isinstance(value, str) else value

    @field_validator("endpoints")
    @classmethod
    def _some_endpoints(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError(f"no endpoint named; the default is {','.join(DEFAULT_ENDPOINTS)}")
        return value

    @field_validator("traffic", mode="before")
    @classmethod
    def _traffic_from_file(cls, value: Any) -> Any:
        """A file's name (--traffic, TESTER_TRAFFIC) is read; a mapping (a config file's, or these
        settings dumped and read again) is checked as it is."""
        if isinstance(value, str | Path):
            return read_traffic(Path(value))
        return traffic_of(value, "") if isinstance(value, dict) else value

    @field_validator("*")
    @classmethod
    def _finite_numbers(cls, value: Any) -> Any:
        """inf and nan pass `gt=0` and would wait forever: refused in every field and section."""
        for where, number in _numbers(value.model_dump() if isinstance(value, BaseModel) else value):
            if not math.isfinite(number):
                raise ValueError(f"{where + ' ' if where else ''}must be a finite number, not {number}")
        return value

    @field_validator("paths")
    @classmethod
    def _app_paths(cls, value: list[str]) -> list[str]:
        duplicated = sorted({path for path in value if value.count(path) > 1})
        if duplicated:
            raise ValueError(f"paths given twice: {duplicated}")
        return [check_app_path(path) for path in value]

    @model_validator(mode="after")
    def _app_defaults(self) -> LabSettings:
        """An app is measured on its paths, by bursts and a flow unless the scenarios are given."""
        if self.paths and self.traffic:
            raise ValueError("paths and traffic both given: the traffic file lists every request")
        if self.app and not self.paths and not self.traffic:
            raise ValueError(
                "an app needs its paths to measure (--paths /a,/b or TESTER_PATHS) or its traffic "
                "(--traffic FILE or TESTER_TRAFFIC)"
            )
        if (self.paths or self.traffic) and "scenarios" not in self.model_fields_set:
            self.scenarios = list(DEFAULT_APP_SCENARIOS)
        return self

    @model_validator(mode="after")
    def _client_of_the_crew(self) -> LabSettings:
        if self.client_index >= self.clients:
            raise ValueError(f"client_index {self.client_index} is not one of the {self.clients} clients")
        if self.client_index > 0 and not self.barrier:
            raise ValueError("a client other than 0 needs the barrier's host:port (TESTER_BARRIER)")
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> LabSettings:
        names = [t.name for t in [*self.targets, *self.census_only]]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"target names must be unique: {duplicated}")
        return self

    def app_traffic(self) -> Traffic | None:
        """What is sent to a team's app: its traffic, or a GET of each of its paths; None: the lab's
        own endpoints are measured."""
        return self.traffic or (Traffic.of_paths(self.paths) if self.paths else None)

    def outgoing(self, name: str) -> Outgoing | None:
        """A team's request named `name`, ready to send; None: one of the lab's own endpoints."""
        traffic = self.app_traffic()
        request = traffic.named(name) if traffic else None
        return request.outgoing() if request else None

    def planned_endpoints(self, info: TargetInfo) -> list[str]:
        """The endpoints to measure that this target offers: an app's requests where they are
        given (each an endpoint named by its label, traffic.with_requests), else the lab's own."""
        traffic = self.app_traffic()
        names = [request.label for request in traffic.requests] if traffic else self.endpoints
        return [name for name in names if name in info.endpoints]

    def with_targets(
        self, targets: list[TargetRef], census_only: list[TargetRef], **knobs: Any
    ) -> LabSettings:
        """These settings for the targets the local lab started (and `knobs` changed), checked again."""
        fields = {**self.model_dump(), "barrier_token": self.barrier_token}  # the token is never dumped
        fields |= {"targets": targets, "census_only": census_only, **knobs}
        return self.model_validate(fields)  # validation alone: the environment was read already

    @classmethod
    def variable_names(cls) -> set[str]:
        """Every TESTER_* variable that names a setting, a shape's knobs as TESTER_<SHAPE>__<KEY>."""
        names = set()
        for name, field in cls.model_fields.items():
            names.add(f"TESTER_{name.upper()}")
            section = field.annotation
            if isinstance(section, type) and issubclass(section, BaseModel):
                names |= {f"TESTER_{name.upper()}__{key.upper()}" for key in section.model_fields}
        return names

    @classmethod
    def from_environment(cls) -> dict[str, Any]:
        """What the TESTER_* variables set, checked (ValidationError, SettingsError)."""
        return cls().model_dump(exclude_unset=True)

    @classmethod
    def merged(
        cls, from_file: dict[str, Any], from_env: dict[str, Any], flags: dict[str, Any]
    ) -> LabSettings:
        """File values, then TESTER_* variables, then flags (None: not given): later ones win."""
        return cls(**{**from_file, **from_env, **{k: v for k, v in flags.items() if v is not None}})

    @classmethod
    def load(cls, file: Path | None = None, **overrides: Any) -> LabSettings:
        """File values, then TESTER_* env vars, then `overrides` (from flags): later ones win."""
        return cls.merged(read_mapping(file) if file else {}, cls.from_environment(), overrides)


def _numbers(value: Any, where: str = "") -> list[tuple[str, float]]:
    """Every float in a dumped settings tree, with its dotted path."""
    if isinstance(value, dict):
        return [n for key, item in value.items() for n in _numbers(item, f"{where}.{key}".lstrip("."))]
    if isinstance(value, list):
        return [n for i, item in enumerate(value) for n in _numbers(item, f"{where}[{i}]")]
    return [(where, value)] if isinstance(value, float) else []
