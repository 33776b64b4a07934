"""A client other than 0: it waits for client 0's plan (the settings and the targets it found
ready), then runs its part of every step of it, its records shipped to client 0's raw log at
each meeting. It takes no census, probe, calibration or scrape: those are client 0's."""

from __future__ import annotations

from typing import Any

from labtester.clients.barrier import RUN_SCOPE
from labtester.clients.crew import Crew, CrewBroken, CrewInterrupted, meeting_deadline_s
from labtester.clients.link import SILENT_S
from labtester.info import TargetInfo
from labtester.lab import Terminated
from labtester.progress import LabProgress
from labtester.scenarios import TesterSettings
from labtester.settings import LabSettings
from labtester.target_run import TargetRun
from labtester.targetref import TargetRef


class Shipped:
    """This client's raw log: its records go to client 0's at the next meeting."""

    def __init__(self, crew: Crew) -> None:
        self.crew = crew

    def write(self, record_type: str, **fields: Any) -> None:
        self.crew.record({"type": record_type, **fields})


def run_follower(settings: LabSettings, progress: LabProgress) -> int:
    """Exit code: 0 when the run ended together, 1 when the crew broke up. A follower that stops for
    any other reason (an exception, SIGTERM) says so to the barrier first, so every client stops
    at once instead of waiting for it, and then stops as it would alone."""
    assert settings.barrier is not None and settings.barrier_token is not None
    crew = Crew(
        settings.client_index, settings.clients, meet_timeout_s=meeting_deadline_s(settings) + SILENT_S
    )
    try:
        crew.connect(settings.barrier, settings.barrier_token.get_secret_value(), settings.ready_timeout_s)
        crew.interrupt_when_broken()
        progress.step(f"client {crew.index} of {crew.count}: joined the barrier at {settings.barrier}")
        plan = crew.meet(RUN_SCOPE, "targets")[0]
        ours = TesterSettings.model_validate(
            {
                **plan["settings"],
                "client_index": crew.index,
                "clients": crew.count,
                "barrier": settings.barrier,
                "barrier_token": settings.barrier_token,  # never in the plan: this client's own
            }
        )
        log = Shipped(crew)
        for entry in plan["targets"]:
            info = TargetInfo.model_validate(entry.pop("info"))
            TargetRun(ours, log, progress, TargetRef.model_validate(entry), info, crew).measure()
        crew.measure_clock("end")
        crew.meet(RUN_SCOPE, "end")
    except (CrewBroken, CrewInterrupted) as error:
        progress.note(f"client {crew.index}: the crew broke up: {error}")
        crew.fail(str(error))
        return 1
    except (Terminated, KeyboardInterrupt):  # a stop, not a crash: no traceback
        crew.fail("it was stopped (SIGTERM)")
        progress.note(f"client {crew.index}: stopped; the others are told")
        return 1
    except BaseException as error:
        crew.fail(f"{type(error).__name__}: {error}")
        raise  # a crash: its traceback in this client's log
    crew.close()
    progress.note(f"client {crew.index}: done")
    return 0
