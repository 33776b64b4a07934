"""What a target says about itself in /info: all the tester knows of it besides its name and URL.

Typed, so the model, the findings and every client read the same fields: workers, threads, cores,
each endpoint's execution and slots, and the paths of the control endpoints. Fields a target adds
later are kept (extra="allow") and shown, never required.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Work = Literal["cpu", "io", "mixed", "app"]  # app: a team's code, its CPU and waits measured per request
# How a target executes an endpoint's work (services/workload/contract.py documents each).
Execution = Literal["event_loop", "workers", "process_pool", "thread_pool", "async", "greenlets", "threads"]


class EndpointInfo(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    path: str  # a template: /test/sync-cpubound/{iterations}, or a bare path taking a query
    work: Work
    execution: Execution
    slots: int | None = Field(description="Requests the target runs at once; null: no limit.")

    def url(self, base: str, argument: int | None = None) -> str:
        """The request URL; `argument` fills the path's one parameter."""
        if "{" not in self.path:
            return base + self.path
        return base + self.path.split("{")[0] + str(argument)


class ControlPaths(BaseModel):
    """Where the target answers control calls; the defaults are the contract's own paths."""

    model_config = ConfigDict(extra="allow", frozen=True)

    health: str = "/healthz"
    info: str = "/info"
    calibrate: str = "/test/calibrate"
    census: str = "/test/resmon"
    metrics: str = "/metrics"
    metrics_port: int | None = None

    def paths(self) -> frozenset[str]:
        """Every control path: the lab's own, never one of an app's."""
        return frozenset(value for value in self.model_dump().values() if isinstance(value, str))


class KernelInfo(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    loops_per_iteration: int
    max_iterations: int
    work_cap_seconds: float


class TargetInfo(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    framework: str
    server: str
    worker_class: str | None = None
    workers: int
    threads: int = 1  # request threads per worker (gunicorn gthread); 1 otherwise
    reload: bool = False
    effective_cores: int
    cores_source: str
    cpu_quota: float | None = None
    kernel: KernelInfo
    control: ControlPaths = ControlPaths()
    endpoints: dict[str, EndpointInfo]

    def label(self, name: str) -> str:
        """`flask-2x (gunicorn, 4 workers)`: how reports name a target."""
        workers = f"{self.workers} worker{'s' * (self.workers != 1)}"
        threads = f" x {self.threads} threads" if self.threads > 1 else ""
        return f"{name} ({self.server}, {workers}{threads})"
