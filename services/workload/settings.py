"""The settings every target shares, read from LAB_* environment variables: where it listens, how
many workers, the work's limits. Each server adds its own knobs (servers/<name>/settings.py).

The Dockerfile, the local launcher and the Helm chart all run the same entrypoint (`python -m
serve`) and differ only in the environment they pass.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from workload.cores import EffectiveCores, effective_cores
from workload.kernel import kernel_iteration


class TargetSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAB_", extra="ignore")

    name: str = Field("", description="Target name shown in /info (the lab's label for it).")
    host: str = Field("127.0.0.1", description="Address to listen on (0.0.0.0 in a container).")
    port: int = Field(8000, ge=1, le=65535)
    metrics_port: int = Field(
        0, ge=0, le=65535, description="Port of /metrics served by a process of its own; 0: none."
    )
    metrics_deadline_s: float = Field(
        10.0,
        gt=0,
        le=300,
        description="A connection's whole time on the metrics port to send its request and read the "
        "answer (a scrape takes milliseconds); past it, its socket is shut.",
    )
    workers: int | None = Field(None, ge=1, le=256, description="Explicit worker count; wins.")
    worker_multiplier: int | None = Field(
        None, ge=1, le=16, description="Workers = multiplier x effective cores, unless workers set."
    )
    cpu_cores: int | None = Field(None, ge=1, le=1024, description="Explicit effective cores.")
    reload: bool = Field(False, description="Development mode: restart on code change.")
    work_cap_seconds: float = Field(120.0, gt=0, le=3600, description="Most work one request may ask.")
    max_iterations: int | None = Field(None, ge=1, description="Iteration cap; derived if unset.")
    max_in_flight: int | None = Field(
        None, ge=1, le=100_000, description="Work requests in flight beyond which the server answers 429."
    )
    downstream_url: str | None = Field(
        None, pattern=r"^https?://", description="The mock downstream service /test/downstream calls."
    )
    tmp_dir: Path = Field(
        Path("/tmp"),
        description="Writable directory for every file the server makes: gunicorn's worker heartbeats, "
        "Python's temporary files, the metrics folder unless PROMETHEUS_MULTIPROC_DIR names one.",
    )
    log_level: str = Field("warning")

    def cores(self) -> EffectiveCores:
        return effective_cores(self.cpu_cores)

    def resolved_workers(self, default_multiplier: int | None) -> int:
        """Explicit workers, else multiplier x cores; `default_multiplier` None means one worker."""
        if self.workers is not None:
            return self.workers
        multiplier = self.worker_multiplier or default_multiplier
        return 1 if multiplier is None else multiplier * self.cores().cores

    def resolved_max_iterations(self) -> int:
        """The iteration cap: explicit, else as many iterations as fit in work_cap_seconds here."""
        if self.max_iterations is not None:
            return self.max_iterations
        # Time a small batch, not single iterations: a batch mean is robust to one slow outlier.
        batch = 5
        start = time.perf_counter()
        for _ in range(batch):
            kernel_iteration()
        per_iteration = (time.perf_counter() - start) / batch
        return max(1, math.floor(self.work_cap_seconds / per_iteration))
