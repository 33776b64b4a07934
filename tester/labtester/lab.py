"""One lab run, as a table of contents: readiness, Prometheus, census, then per target a stability
probe, calibration, each load shape, and Prometheus's cross-check; targets one at a time, each
followed by the answers it settled (early.py).

Every observation goes to the raw log the moment it is measured. A target that fails is recorded
with the failure's type and the run goes on with the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labtester import census, machine, prometheus
from labtester.clients.barrier import RUN_SCOPE, BarrierServer
from labtester.clients.crew import Crew, CrewBroken, CrewInterrupted, meeting_deadline_s
from labtester.clients.link import SILENT_S
from labtester.control import TargetError, control_client, get_json
from labtester.early import EarlyAnswers
from labtester.info import TargetInfo
from labtester.progress import LabProgress
from labtester.rawlog import RawLog
from labtester.readiness import NotReady, wait_ready
from labtester.results import SCHEMA_VERSION
from labtester.settings import LabSettings
from labtester.target_run import SharedCalibrations, TargetRun
from labtester.targetref import TargetRef
from labtester.traffic import with_requests

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
    after_targets: Callable[[RawLog, LabProgress], None] | None = None,
) -> None:
    """Measure every target into `run_dir`'s raw log; `after_census` runs once the census is taken
    (the local lab stops its census-only variants there); `not_started`: targets the local lab
    could not start, and why (recorded, so the report says so); `after_targets`: what runs once
    every target was measured, before the run ends (the app lab's sizing)."""
    with RawLog(run_dir) as log, leading(settings, log) as crew:
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
            measured = [t for t in settings.targets if t.name in infos]
            crew.meet(RUN_SCOPE, "targets", the_plan(settings, measured, infos))
            early = EarlyAnswers(run_dir, settings, progress)
            calibrations: SharedCalibrations = {}  # one kernel, one machine: each target verifies it
            for index, target in enumerate(measured):
                TargetRun(settings, log, progress, target, infos[target.name], crew, calibrations).measure()
                early.after(target.name, [infos[t.name] for t in measured[index + 1 :]])
            if after_targets:
                after_targets(log, progress)
            crew.measure_clock("end")  # beside the one at joining: how the clocks drifted
            crew.meet(RUN_SCOPE, "end")
            status = "complete"
        except (CrewBroken, CrewInterrupted) as error:  # a client stopped: what was measured stands
            status = "interrupted"
            log.write("error", target=None, stage="clients", error=str(error))
            progress.note(f"error: the clients could not go on together: {error}")
        except BaseException as error:
            if not (_termination_requested.is_set() or isinstance(error, KeyboardInterrupt)):
                crew.fail(f"client 0 crashed: {type(error).__name__}: {error}")
                raise  # a crash: reported as such, with its traceback
            crew.fail("client 0 was stopped (SIGTERM)")  # the other clients stop now too
            status = "interrupted"
            progress.note("interrupted: reporting what was measured so far")
        finally:
            log.write("run_end", finished_at=time.time(), status=status)


def wait_for_targets(settings: LabSettings, log: RawLog, progress: LabProgress) -> dict[str, TargetInfo]:
    """Wait for every target with one shared deadline; returns /info of the ready ones, a team's
    app's with an endpoint per request of its traffic (traffic.with_requests)."""
    deadline = time.monotonic() + settings.ready_timeout_s
    infos = {}
    with control_client(CONTROL_TIMEOUT_S) as client:
        for target in [*settings.targets, *settings.census_only]:
            progress.step(f"waiting for {target.name} at {target.url}")
            error: str | None = None
            try:
                wait_ready(target.url, max(0.0, deadline - time.monotonic()))
                said = TargetInfo.model_validate(get_json(client, f"{target.url}/info"))
                infos[target.name] = with_requests(said, settings.app_traffic())
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
    with control_client(CONTROL_TIMEOUT_S) as client:
        for target in (t for t in [*settings.targets, *settings.census_only] if t.name in infos):
            try:
                taken = census.take(client, target.url + infos[target.name].control.census)
            except TargetError as error:
                log.write("error", target=target.name, stage="census", error=str(error))
                continue
            log.write("census", target=target.name, phase="idle", census=taken)


@contextmanager
def leading(settings: LabSettings, log: RawLog) -> Iterator[Crew]:
    """Client 0: alone, or serving the barrier every client of the crew meets at (itself too)."""
    if settings.clients == 1:
        yield Crew()
        return
    host, _, port = (settings.barrier or "127.0.0.1:0").rpartition(":")
    local = host in ("127.0.0.1", "localhost")  # local clients; else the pods reach it by name
    bind = "127.0.0.1" if local else "0.0.0.0"  # a pod's own address: only the token admits a client
    assert settings.barrier_token is not None  # the settings refuse a barrier without one
    token, deadline = settings.barrier_token.get_secret_value(), meeting_deadline_s(settings)
    server = BarrierServer(
        settings.clients,
        log,
        bind,
        int(port),
        token=token,
        join_timeout_s=settings.ready_timeout_s,
        meet_timeout_s=deadline,
    ).start()
    crew = Crew(0, settings.clients, meet_timeout_s=deadline + SILENT_S)
    try:
        crew.connect(f"127.0.0.1:{server.port}", token, settings.ready_timeout_s).interrupt_when_broken()
        yield crew
    finally:
        crew.close()
        server.stop()


def the_plan(settings: LabSettings, targets: list[TargetRef], infos: dict[str, TargetInfo]) -> dict[str, Any]:
    """What client 0 tells the others at the start: the settings and the targets to measure."""
    return {
        "settings": settings.model_dump(mode="json"),
        "targets": [{**t.model_dump(), "info": infos[t.name].model_dump(mode="json")} for t in targets],
    }
