"""Everything measured on one target, by one client of the crew; a failure ends this target (for
every client: the crew abandons it together), not the run.

Client 0 probes the machine, calibrates (from the count an earlier target found for the same
kernel, if any; it publishes the result, so every client sends the same work), scrapes and
cross-checks with Prometheus; every client runs its part of each load shape.
"""

from __future__ import annotations

import time

import httpx

from labtester import prometheus, stability
from labtester.calibrate import Calibration, calibrate
from labtester.clients.crew import Abandoned, Crew
from labtester.control import TargetError, classify_error, control_client
from labtester.info import TargetInfo
from labtester.progress import LabProgress
from labtester.rawlog import RecordSink
from labtester.scenarios import SHAPES
from labtester.scenarios.base import ShapeContext
from labtester.scrape import scrape
from labtester.settings import LabSettings
from labtester.targetref import TargetRef

# The latest calibration of each kernel (name, loops per iteration), and the target it was made on.
SharedCalibrations = dict[tuple[str, int], tuple[str, Calibration]]


class TargetRun:
    """Everything measured on one target; a failure ends this target, not the run."""

    def __init__(
        self,
        settings: LabSettings,
        log: RecordSink,
        progress: LabProgress,
        target: TargetRef,
        info: TargetInfo,
        crew: Crew | None = None,
        calibrations: SharedCalibrations | None = None,
    ) -> None:
        self.settings, self.log, self.progress, self.target, self.info = settings, log, progress, target, info
        self.crew = crew or Crew()
        self.calibrations = {} if calibrations is None else calibrations
        self.stage = "stability probe"
        self.control = control_client(settings.request_timeout_s)

    def measure(self) -> None:
        shapes = [SHAPES[name] for name in self.settings.scenarios if SHAPES[name].applies(self.info)]
        self.progress.add_steps(2 + sum(len(s.plan(self.info, self.settings)) for s in shapes))
        leader = self.crew.leader
        try:
            if leader:
                self.probe("start")
            calibrate = any(s.needs_calibration(self.info, self.settings) for s in shapes)
            calibration = self.calibrate() if calibrate else None
            for shape in shapes:
                self.stage = f"{shape.name} scenario"
                shape.run(self.context(shape.name, calibration))
            if leader:
                self.probe("end")
            if leader and self.settings.prometheus_url:
                self.cross_check_prometheus(self.settings.prometheus_url)
        except TargetError as error:
            if not isinstance(error, Abandoned):  # the others stop this target too, and say why
                self.crew.abandon(self.target.name, f"{self.stage} failed: {error}")
            if leader:
                self.progress.note(
                    f"error: {self.target.name} ({self.target.url}): {self.stage} failed: {error}"
                )
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
            crew=self.crew,
        )

    def probe(self, where: str) -> None:
        """A stability probe of the machine, run on this target's kernel."""
        fields = stability.probe(self.control, self.target.url, self.info, self.settings.stability_samples)
        self.log.write("probe", target=self.target.name, label=where, **fields)

    def calibrate(self) -> Calibration:
        """Client 0 calibrates; every client gets its result at the same meeting."""
        self.stage = "calibration"
        self.progress.step(f"{self.target.name}: calibrating to N = {self.settings.work_seconds:g} s")
        if not self.crew.leader:
            published = self.crew.meet(self.target.name, "calibration")[0]
            return Calibration.model_validate(published)
        settings = self.settings
        kernel = (self.info.kernel.name, self.info.kernel.loops_per_iteration)
        calibration = calibrate(
            self.control,
            self.target.url,
            self.info,
            settings.work_seconds,
            settings.calibration_tolerance,
            settings.calibration_rounds,
            self.calibrations.get(kernel),
        )
        self.calibrations[kernel] = (self.target.name, calibration)
        self.log.write("calibration", target=self.target.name, calibration=calibration.model_dump())
        self.progress.note(
            f"{self.target.name}: {calibration.iterations} iterations -> "
            f"{calibration.measured_seconds:.3f} s ({calibration.error_pct:+.1f} % of N)"
        )
        self.crew.meet(self.target.name, "calibration", calibration.model_dump(mode="json"))
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
