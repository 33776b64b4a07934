"""Before its proof, a configuration's requests alone measure its floor (what each took beyond the
model of the same sends: the client's timers, the loopback, the server's accept and wake-ups),
and its warm-up measures the load client's CPU per request as the open loop spends it; the
window's prediction takes both, the client as a thread on the cores. A real gunicorn sync server,
two workers, a light path at hundreds a second: where the model alone put the p99 several times
under what the proof measured (the Flask shop's light path, 1.2 ms predicted where 10 ms was
measured), the prediction with both is nearer the measured."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from labtester.launcher import RunningTarget
from labtester.proposal.alone import ALONE
from labtester.proposal.prove import offer_levels
from labtester.proposal.warming import WARMING
from labtester.scenarios.sizing import SHAPE, window_of
from labtester.settings import LabSettings
from labtester.sizing import window
from labtester.sizing.document import KindCost, Level, Objective, PodSize, SizedSummary, warmup_of
from labtester.sizing.floor import ALONE_SHARE, POINTS
from tests.services.apps import CONFIGURATIONS, serve_app
from tests.tester.test_proof_warmup import Kept, server_cpu

SYNC = next(c for c in CONFIGURATIONS if c["name"] == "sync-1x")
LIGHT = "/cpu?ms=0.3"
RATE, DURATION_S = 600.0, 5.0


@pytest.fixture(scope="module")
def two_sync_workers() -> Iterator[RunningTarget]:
    target = serve_app("tests.services.bare_app:wsgi", SYNC, [LIGHT], LAB_WORKERS="2")
    yield target
    target.stop()


def planned() -> SizedSummary:
    """gunicorn sync x 2 as a plan would have it, its light path at what it costs, at RATE."""
    kind = KindCost(
        name=LIGHT,
        weight=1,
        cpu_s=0.0003,
        wait_s=0.0,
        overhead_s=0.0003,
        cores_per_process=1,
        client_s=0.0001,
    )
    pod = PodSize(cores=2, memory_bytes=1 << 30, source="test")
    summary = SizedSummary(
        role="proposed", family="sync", server="gunicorn", label="gunicorn sync, 2 workers", processes=2,
        threads=1, env={}, memory_bytes=0, accept="shared", preemptive=True, sustainable_per_s=RATE,
        predicted_p99_s=0.0, pod=pod, objective=Objective(p99_s=1.0, why="test"), kinds=[kind],
    )  # fmt: skip
    level = Level(offered_per_s=RATE, predicted_per_s=RATE, predicted_p99_s=0.001)
    return summary.model_copy(update={"levels": [level]})


@pytest.fixture(scope="module")
def proved(two_sync_workers: RunningTarget) -> Kept:
    kept = Kept()
    offer_levels(
        "proved", two_sync_workers.url, planned(), kept, (DURATION_S, 10.0), {},
        lambda: server_cpu(two_sync_workers),
    )  # fmt: skip
    return kept


def records(kept: Kept, kind: str) -> list[dict[str, Any]]:
    return [r for r in kept.records if r.get("kind") == kind]


def test_the_requests_alone_measure_a_floor_before_the_proof(proved: Kept) -> None:
    kinds = [r.get("kind") for r in proved.records]
    assert kinds == ["plan", WARMING, ALONE, "run"]  # each process warmed, then alone, then the run
    (alone,) = records(proved, ALONE)
    assert alone["offered_per_s"] == pytest.approx(ALONE_SHARE * RATE)
    sent = round(alone["offered_per_s"] * alone["duration_s"])
    assert len(alone["samples"]["rows"]) == sent and alone["floor"]["requests"] == sent
    summary = SHAPE.analyse(proved.records, None, LabSettings())
    floor = summary.floor
    assert floor is not None and len(floor.quantiles_s) == POINTS
    # Alone, a request took longer than the model's CPU for it and its client's: the loopback,
    # the wake-ups; and its slowest longer than its typical.
    p50, p99 = floor.at(50), floor.at(99)
    assert p50 is not None and p99 is not None and 0 < p50 < p99, floor
    assert 0 < floor.client_cpu_s < 1 / alone["offered_per_s"]


def test_the_warm_up_takes_the_clients_cpu_as_the_open_loop_spends_it(proved: Kept) -> None:
    (run,) = records(proved, "run")
    warm = run["warmup"]
    # One thread sends and reads: under the time between two sends, more than nothing.
    assert 0 < warm["client_cpu_s"] < 1 / RATE, warm
    (level,) = SHAPE.analyse(proved.records, None, LabSettings()).levels
    assert level.warmup_client_cpu_s == warm["client_cpu_s"]


def test_the_window_predicted_with_the_floor_and_the_client_is_nearer_the_measured(proved: Kept) -> None:
    (run,) = records(proved, "run")
    summary = SHAPE.analyse(proved.records, None, LabSettings())
    (level,) = summary.levels
    warm = run["warmup"]
    assert level.measured_p99_s is not None and level.warmup_predicted_p99_s is not None
    # The same prediction as before the floor: the client's CPU a share of the cores taken off the
    # server's, nothing added to a request.
    everything, _ = window_of(run)
    used = window.cpu_used(summary.kinds, [s for s in everything if s.ok and s.scheduled_s < run["warmup_s"]])
    share = min(2.0, warm["cores_free"]) - RATE * warm["client_cpu_s"]
    before = window.predicted_window(
        summary, RATE, share, DURATION_S, warmup_of(DURATION_S), used, warm["overhead_s"], client_s=0.0
    )
    assert before.p99_s < level.warmup_predicted_p99_s  # what the client and the floor add
    now_off = abs(math.log(level.measured_p99_s / level.warmup_predicted_p99_s))
    before_off = abs(math.log(level.measured_p99_s / before.p99_s))
    assert now_off < before_off, (level.measured_p99_s, level.warmup_predicted_p99_s, before.p99_s)


def test_after_the_plan_a_configuration_takes_its_own_floor_else_its_familys(proved: Kept) -> None:
    summary = SHAPE.analyse(proved.records, None, LabSettings())
    assert summary.floor is not None
    family = [2 * q for q in summary.floor.quantiles_s]
    assert window.floor_for(summary.floor, family) == tuple(summary.floor.quantiles_s)  # its own, measured
    assert window.floor_for(None, family) == tuple(family)
    # The sustained figure takes it as the plan's did: minutes of the rate, each request later.
    args = (summary, RATE, 2, 60.0, {})
    assert window.sustained_on(*args, floor_s=tuple(family)) > window.sustained_on(*args)
