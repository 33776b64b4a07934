"""One lab run, as a table of contents: readiness, Prometheus, census, then per target a stability
probe, calibration, each load shape, and Prometheus's cross-check; targets one at a time.

Every observation goes to the raw log the moment it is measured. A target that fails is recorded
with the failure's type and the run goes on with the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from labtester import census, machine, prometheus, stability
from labtester.calibrate import Calibration, calibrate
from labtester.client import TargetError, classify_error, get_json
from labtester.info import TargetInfo
from labtester.progress import LabProgress
from labtester.rawlog import RawLog
from labtester.readiness import NotReady, wait_ready
from labtester.results import SCHEMA_VERSION
from labtester.scenarios import SHAPES
from labtester.scenarios.base import ShapeContext
from labtester.scrape import scrape
from labtester.settings import LabSettings, TargetRef

CONTROL_TIMEOUT_S = 30


class Terminated(BaseException):
    """SIGTERM arrived: stop measuring, keep and report what was measured."""


# Set by the SIGTERM handler. Whether a run was interrupted is read from here, not from the type
# of the exception that reaches run_lab: raised inside an event loop, Terminated can surface
# wrapped or replaced by what the loop's cleanup raised.
_termination_requested = threading.Event()


def terminate(*_: object) -> None:
    """SIGTERM handler: remember the request, then unwind whatever is being measured."""
    _termination_requested.set()
    raise Terminated


def run_lab(
    settings: LabSettings,
    progress: LabProgress,
    run_dir: Path,
    after_census: Callable[[], None] | None = None,
    not_started: dict[str, str] | None = None,
) -> None:
    """Measure every target into `run_dir`'s raw log; `after_census` runs once the census is taken
    (the local lab stops its census-only variants there); `not_started`: targets the local lab
    could not start, and why (recorded, so the report says so)."""
    with RawLog(run_dir) as log:
        log.write(
            "run_start",
            run_id=run_dir.name,
            started_at=time.time(),
            schema_version=SCHEMA_VERSION,
            cpus=machine.snapshot().cpus,
            settings=settings.model_dump(mode="json"),
        )
        status = "crashed"
        for name, error in (not_started or {}).items():
            progress.note(f"error: {name} did not start: {error}")
            log.write("target", target=name, url="", measure=True, ready=False, stage="start", error=error)
        try:
            infos = wait_for_targets(settings, log, progress)
            if settings.prometheus_url:
                progress.step(f"waiting for Prometheus at {settings.prometheus_url} to scrape every target")
                prometheus.wait_scraped(
                    settings.prometheus_url, list(infos), time.time(), settings.ready_timeout_s
                )
            take_idle_census(settings, infos, log, progress)
            if after_census:
                after_census()
            for target in (t for t in settings.targets if t.name in infos):
                TargetRun(settings, log, progress, target, infos[target.name]).measure()
            status = "complete"
        except BaseException as error:
            if not (_termination_requested.is_set() or isinstance(error, KeyboardInterrupt)):
                raise  # a crash: reported as such, with its traceback
            status = "interrupted"
            progress.note("interrupted: reporting what was measured so far")
        finally:
            log.write("run_end", finished_at=time.time(), status=status)


def wait_for_targets(settings: LabSettings, log: RawLog, progress: LabProgress) -> dict[str, TargetInfo]:
    """Wait for every target with one shared deadline; returns /info of the ready ones."""
    deadline = time.monotonic() + settings.ready_timeout_s
    infos = {}
    with httpx.Client(timeout=CONTROL_TIMEOUT_S) as client:
        for target in [*settings.targets, *settings.census_only]:
            progress.step(f"waiting for {target.name} at {target.url}")
            error: str | None = None
            try:
                wait_ready(target.url, max(0.0, deadline - time.monotonic()))
                infos[target.name] = TargetInfo.model_validate(get_json(client, f"{target.url}/info"))
            except (NotReady, TargetError, ValueError) as failure:
                error = str(failure)
                progress.note(f"error: {target.name} at {target.url} {error}")
            info = infos.get(target.name)
            log.write(
                "target",
                target=target.name,
                url=target.url,
                measure=target.measure,
                ready=error is None,
                error=error,
                info=info.model_dump(mode="json") if info else None,
            )
    return infos


def take_idle_census(
    settings: LabSettings, infos: dict[str, TargetInfo], log: RawLog, progress: LabProgress
) -> None:
    progress.step("census at idle")
    with httpx.Client(timeout=CONTROL_TIMEOUT_S) as client:
        for target in (t for t in [*settings.targets, *settings.census_only] if t.name in infos):
            try:
                taken = census.take(client, target.url + infos[target.name].control.census)
            except TargetError as error:
                log.write("error", target=target.name, stage="census", error=str(error))
                continue
            log.write("census", target=target.name, phase="idle", census=taken)


class TargetRun:
    """Everything measured on one target; a failure ends this target, not the run."""

    def __init__(
        self, settings: LabSettings, log: RawLog, progress: LabProgress, target: TargetRef, info: TargetInfo
    ) -> None:
        self.settings, self.log, self.progress, self.target, self.info = settings, log, progress, target, info
        self.stage = "stability probe"
        self.control = httpx.Client(timeout=settings.request_timeout_s)

    def measure(self) -> None:
        shapes = [SHAPES[name] for name in self.settings.scenarios if SHAPES[name].applies(self.info)]
        self.progress.add_steps(2 + sum(len(s.plan(self.info, self.settings)) for s in shapes))
        try:
            self.probe("start")
            calibrate = any(s.needs_calibration(self.info, self.settings) for s in shapes)
            calibration = self.calibrate() if calibrate else None
            for shape in shapes:
                self.stage = f"{shape.name} scenario"
                shape.run(self.context(shape.name, calibration))
            self.probe("end")
            if self.settings.prometheus_url:
                self.cross_check_prometheus(self.settings.prometheus_url)
        except TargetError as error:
            self.progress.note(f"error: {self.target.name} ({self.target.url}): {self.stage} failed: {error}")
            self.log.write("error", target=self.target.name, stage=self.stage, error=str(error))
        finally:
            self.control.close()

    def context(self, shape: str, calibration: Calibration | None) -> ShapeContext:
        return ShapeContext(
            target=self.target,
            info=self.info,
            settings=self.settings,
            log=self.log,
            progress=self.progress,
            calibration=calibration,
            probe=self.probe,
            check_alive=self.check_alive,
            shape=shape,
        )

    def probe(self, where: str) -> None:
        """A stability probe of the machine, run on this target's kernel."""
        fields = stability.probe(self.control, self.target.url, self.info, self.settings.stability_samples)
        self.log.write("probe", target=self.target.name, label=where, **fields)

    def calibrate(self) -> Calibration:
        self.stage = "calibration"
        self.progress.step(f"{self.target.name}: calibrating to N = {self.settings.work_seconds:g} s")
        settings = self.settings
        calibration = calibrate(
            self.control,
            self.target.url,
            self.info,
            settings.work_seconds,
            settings.calibration_tolerance,
            settings.calibration_rounds,
        )
        self.log.write("calibration", target=self.target.name, calibration=calibration.model_dump())
        self.progress.note(
            f"{self.target.name}: {calibration.iterations} iterations -> "
            f"{calibration.measured_seconds:.3f} s ({calibration.error_pct:+.1f} % of N)"
        )
        return calibration

    def cross_check_prometheus(self, url: str) -> None:
        self.stage = "Prometheus cross-check"
        self.progress.step(f"{self.target.name}: Prometheus cross-check")
        server = scrape(self.control, self.target.url + self.info.control.metrics)
        check = prometheus.cross_check(
            url, self.target.name, server, time.time(), self.settings.ready_timeout_s
        )
        self.log.write("prometheus", target=self.target.name, check=check.model_dump())

    def check_alive(self, errors: list[str | None]) -> None:
        """After failed requests, stop measuring a target that no longer answers at all."""
        if not any(errors):
            return
        try:
            self.control.get(self.target.url + self.info.control.health, timeout=10).raise_for_status()
        except httpx.HTTPError as error:
            raise TargetError(
                f"stopped answering {self.info.control.health} ({classify_error(error)})"
            ) from error
