"""One lab run: readiness, census, calibration, baselines, bursts, metrics; targets one at a time.

Every observation goes to the raw log the moment it is measured. A target that fails is recorded
with the failure's type and the run goes on with the others.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from labtester.calibrate import calibrate
from labtester.census import busiest, idle_census
from labtester.client import TargetError, classify_error, get_json, observe
from labtester.progress import LabProgress
from labtester.readiness import NotReady, wait_ready
from labtester.results import SCHEMA_VERSION, RawLog
from labtester.scenarios import LOAD_SHAPES
from labtester.scenarios.bursts import fire
from labtester.scrape import delta, scrape
from labtester.settings import TargetRef, TesterSettings

WARMUP_ARGUMENT = 1  # one iteration or one millisecond: starts pools and connections, costs nothing


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


def _errors(record: dict[str, Any]) -> list[str | None]:
    fields = record["samples"]["fields"]
    return [row[fields.index("error")] for row in record["samples"]["rows"]]


def endpoint_url(base: str, path: str, argument: int) -> str:
    return base + path.split("{")[0] + str(argument)


class LabRun:
    def __init__(self, settings: TesterSettings, run_dir: Path, progress: LabProgress) -> None:
        self.settings = settings
        self.run_dir = run_dir
        self.progress = progress
        self.log = RawLog(run_dir)
        self.stage = "readiness"  # what is being measured now, for the error record

    # -- steps -------------------------------------------------------------------------------

    def wait_for_targets(self) -> dict[str, dict[str, Any]]:
        """Wait for every target with one shared deadline; returns /info of the ready ones."""
        deadline = time.monotonic() + self.settings.ready_timeout_s
        infos = {}
        with httpx.Client(timeout=30) as client:
            for target in [*self.settings.targets, *self.settings.census_only]:
                self.progress.step(f"waiting for {target.name} at {target.url}")
                error: str | None = None
                try:
                    wait_ready(target.url, max(0.0, deadline - time.monotonic()))
                    infos[target.name] = get_json(client, f"{target.url}/info")
                except (NotReady, TargetError) as failure:
                    error = str(failure)
                    self.progress.note(f"error: {target.name} at {target.url} {error}")
                self.log.write(
                    "target",
                    target=target.name,
                    url=target.url,
                    measure=target.measure,
                    ready=error is None,
                    error=error,
                    info=infos.get(target.name),
                )
        return infos

    def take_idle_census(self, targets: list[TargetRef]) -> None:
        with httpx.Client(timeout=30) as client:
            for target in targets:
                try:
                    census = idle_census(client, target.url)
                except TargetError as error:
                    self.log.write("error", target=target.name, stage="census", error=str(error))
                    continue
                self.log.write("census", target=target.name, phase="idle", endpoint=None, n=0, census=census)

    def measure(self, target: TargetRef, info: dict[str, Any]) -> None:
        """Every configured scenario on one target; a failure ends this target, not the run."""
        try:
            if "bursts" in self.settings.scenarios:
                self.measure_bursts(target, info)
            for name in (s for s in self.settings.scenarios if s in LOAD_SHAPES):
                self.stage = f"{name} scenario"
                self.progress.step(f"{target.name}: {name} scenario")
                shape_settings = getattr(self.settings, name)
                records = asyncio.run(
                    LOAD_SHAPES[name].run(target.url, shape_settings, self.settings.request_timeout_s)
                )
                for record in records:
                    self.log.write("scenario", target=target.name, scenario=name, **record)
                with httpx.Client(timeout=30) as client:
                    self._check_alive(client, target, [r for record in records for r in _errors(record)])
        except TargetError as error:
            self.progress.note(f"error: {target.name} ({target.url}): {self.stage} failed: {error}")
            self.log.write("error", target=target.name, stage=self.stage, error=str(error))

    def measure_bursts(self, target: TargetRef, info: dict[str, Any]) -> None:
        self.stage = "calibration"
        with httpx.Client(timeout=self.settings.request_timeout_s) as client:
            self.progress.step(f"{target.name}: calibrating to N = {self.settings.work_seconds:g} s")
            calibration = calibrate(
                client,
                target.url,
                self.settings.work_seconds,
                self.settings.calibration_tolerance,
                self.settings.calibration_rounds,
                info["kernel"]["max_iterations"],
            )
            self.log.write("calibration", target=target.name, calibration=calibration.as_dict())
            self.progress.note(
                f"{target.name}: {calibration.iterations} iterations -> "
                f"{calibration.measured_seconds:.3f} s ({calibration.error_pct:+.1f} % of N)"
            )
            arguments = {"cpu": calibration.iterations, "io": round(self.settings.work_seconds * 1000)}
            for name in self.planned_endpoints(info):
                self.stage = f"{name} bursts"
                self.measure_endpoint(client, target, name, info["endpoints"][name], arguments)

    def planned_endpoints(self, info: dict[str, Any]) -> list[str]:
        return [name for name in self.settings.endpoints if name in info["endpoints"]]

    def measure_endpoint(
        self,
        client: httpx.Client,
        target: TargetRef,
        name: str,
        endpoint: dict[str, Any],
        arguments: dict[str, int],
    ) -> None:
        argument = arguments[endpoint["work"]]
        url = endpoint_url(target.url, endpoint["path"], argument)
        settings = self.settings
        asyncio.run(fire(endpoint_url(target.url, endpoint["path"], WARMUP_ARGUMENT), settings.burst_max, 60))
        before = scrape(client, target.url)
        sent = 0
        self.progress.step(f"{target.name}: {name} baseline")
        baseline = [asyncio.run(self._single(url)) for _ in range(settings.repeats)]
        sent += len(baseline)
        self.log.write(
            "baseline",
            target=target.name,
            endpoint=name,
            argument=argument,
            observations=[o.as_dict() for o in baseline],
        )
        self._check_alive(client, target, [o.error for o in baseline])
        for n in range(1, settings.burst_max + 1):
            for repeat in range(settings.repeats):
                self.progress.step(f"{target.name}: {name} burst n={n} ({repeat + 1}/{settings.repeats})")
                sample_census = n == settings.burst_max and repeat == 0
                burst = asyncio.run(
                    fire(url, n, settings.request_timeout_s, target.url if sample_census else None)
                )
                sent += n
                self.log.write(
                    "burst",
                    target=target.name,
                    endpoint=name,
                    argument=argument,
                    n=n,
                    repeat=repeat,
                    release_at=burst.release_at,
                    makespan_s=burst.makespan_s,
                    requests=[o.as_dict() for o in burst.requests],
                )
                if busiest(burst.census_samples):
                    self.log.write(
                        "census",
                        target=target.name,
                        phase="load",
                        endpoint=name,
                        n=n,
                        census=busiest(burst.census_samples),
                    )
                self._check_alive(client, target, [o.error for o in burst.requests])
        after = scrape(client, target.url)
        counted = delta(before, after, endpoint["path"], sent)
        self.log.write(
            "metrics",
            target=target.name,
            endpoint=name,
            route=counted.route,
            sent=counted.sent,
            counted=counted.counted,
            by_status=counted.counted_by_status,
            kernel_iterations=counted.kernel_iterations,
            matches=counted.matches,
        )

    async def _single(self, url: str) -> Any:
        async with httpx.AsyncClient(timeout=self.settings.request_timeout_s) as client:
            return await observe(client, url)

    @staticmethod
    def _check_alive(client: httpx.Client, target: TargetRef, errors: list[str | None]) -> None:
        """After failed requests, stop measuring a target that no longer answers at all."""
        if not any(errors):
            return
        try:
            client.get(f"{target.url}/healthz", timeout=10).raise_for_status()
        except httpx.HTTPError as error:
            raise TargetError(f"stopped answering /healthz ({classify_error(error)})") from error


def run_lab(
    settings: TesterSettings,
    progress: LabProgress,
    run_dir: Path,
    after_census: Callable[[], None] | None = None,
) -> None:
    """Measure every target into `run_dir`'s raw log; `after_census` runs once the census is taken
    (the local lab stops its census-only variants there)."""
    lab = LabRun(settings, run_dir, progress)
    lab.log.write(
        "run_start",
        run_id=run_dir.name,
        started_at=time.time(),
        schema_version=SCHEMA_VERSION,
        settings=settings.model_dump(mode="json"),
    )
    status = "crashed"
    try:
        infos = lab.wait_for_targets()
        ready = [t for t in [*settings.targets, *settings.census_only] if t.name in infos]
        progress.step("census at idle")
        lab.take_idle_census(ready)
        if after_census:
            after_census()
        for target in (t for t in settings.targets if t.name in infos):
            lab.measure(target, infos[target.name])
        status = "complete"
    except BaseException as error:
        if not (_termination_requested.is_set() or isinstance(error, KeyboardInterrupt)):
            raise  # a crash: reported as such, with its traceback
        status = "interrupted"
        progress.note("interrupted: reporting what was measured so far")
    finally:
        lab.log.write("run_end", finished_at=time.time(), status=status)
        lab.log.close()
