"""The flow's prediction with a request's whole cost: the server's own CPU and the local client's
beside the request's, and the cores a process measured using instead of one assumed (analyse.py)."""

from __future__ import annotations

import pytest

from labtester.info import EndpointInfo, KernelInfo, TargetInfo
from labtester.load import Sample
from labtester.scenarios.flow.analyse import predict
from labtester.scenarios.flow.cost import ServingCost
from labtester.scenarios.flow.settings import FlowSettings
from labtester.scenarios.flow.whole import WholeCost, empty_rate, slot_round_trip, target_cores

PATH = "/a"


def info(workers: int, execution: str = "async", cores: int = 2) -> TargetInfo:
    endpoint = EndpointInfo.model_validate(
        {"name": PATH, "path": PATH, "work": "app", "execution": execution, "slots": None}
    )
    return TargetInfo(
        name="app",
        framework="x",
        server="uvicorn",
        workers=workers,
        effective_cores=cores,
        cores_source="test",
        kernel=KernelInfo(name="k", loops_per_iteration=1, max_iterations=1, work_cap_seconds=1),
        endpoints={PATH: endpoint},
    )


def test_a_process_that_used_more_than_a_core_lifts_its_cap_never_past_the_effective_cores() -> None:
    endpoint = info(1).endpoints[PATH]
    assert target_cores(endpoint, info(1)) == 1  # one event loop: one core, unless measured more
    assert target_cores(endpoint, info(1), 1.5) == pytest.approx(1.5)  # SQLite off the GIL
    assert target_cores(endpoint, info(1), 0.4) == 1  # a process not kept busy says nothing of its cap
    assert target_cores(endpoint, info(2), 1.5) == 2  # never past the effective cores


def test_the_cpu_term_counts_the_servers_and_the_local_clients_cost() -> None:
    settings = FlowSettings(users=1000)
    # 0.2 ms of the request's own CPU on 2 cores: 10,000/s counting it alone; with 0.3 ms of the
    # server's own, 2 / 0.5 ms = 4,000/s; the machine's 2 CPUs shared with a client of 0.2 ms a
    # request: 2 / 0.7 ms = 2,857/s, the least.
    whole = WholeCost(server_cpu_s=0.0003, client_cpu_s=0.0002, cores_free_of_others=2.0)
    prediction = predict(settings, 0.001, info(2), (0.0002, "server-timing"), 1.8, PATH, whole)
    assert prediction.binding == "cpu" and prediction.per_s == pytest.approx(2 / 0.0007)
    assert prediction.app_only_per_s == pytest.approx(1.8 / 0.0002)  # the tester's use off the cores
    assert prediction.ceiling() == (pytest.approx(4000), "cpu")  # the configuration alone: no client
    # The census's CPU per request already holds the server's own: it is not added again.
    census = predict(settings, 0.001, info(2), (0.0005, "census"), 1.8, PATH, whole)
    assert census.server_cpu_per_request_s is None and census.per_s == pytest.approx(2 / 0.0007)


def test_a_slot_is_held_for_the_servers_time_where_it_was_measured() -> None:
    settings = FlowSettings(users=50)
    whole = WholeCost(server_cpu_s=0.0002, client_cpu_s=0.0003, cores_free_of_others=2.0)
    one_worker = info(1, execution="workers")
    one_worker.endpoints[PATH] = one_worker.endpoints[PATH].model_copy(update={"slots": 1})
    # 0.5 ms of the request's CPU, 0.2 ms of the server's and 1.3 ms of wait: a slot held 2 ms,
    # 500/s, though the client saw 3.7 ms alone (its round trip, a new connection each time).
    measured = predict(settings, 0.0037, one_worker, (0.0005, "server-timing"), 2.0, PATH, whole, 0.0013)
    assert measured.hold_s == pytest.approx(0.002)
    assert measured.binding == "slots" and measured.per_s == pytest.approx(500)
    assert measured.ceiling() == (pytest.approx(500), "slots")
    # The census's CPU says nothing of a request's time on the server: the time alone stands for it.
    census = predict(settings, 0.0037, one_worker, (0.0007, "census"), 2.0, PATH, whole, 0.0013)
    assert census.hold_s is None and census.per_s == pytest.approx(1 / 0.0037)


def empty(**update: object) -> ServingCost:
    """4,000 empty requests a second from 50 users on 2 workers: a slot's cycle 0.5 ms, 0.2 ms of
    it on a core."""
    cost = ServingCost(
        requests=8000,
        server_cpu_per_request_s=0.0001,
        client_cpu_per_request_s=0.0002,
        idle_cpu_per_s=0.0,
        processes=2,
        users=50,
        empty_per_s=4000.0,
        process_cpu_per_request_s=0.0002,
    )
    return cost.model_copy(update=update)


def test_a_sync_worker_holds_its_slot_for_the_round_trip_its_empty_requests_measured() -> None:
    sync = info(2, execution="workers")
    endpoint = sync.endpoints[PATH].model_copy(update={"slots": 2})
    round_trip = slot_round_trip(empty(), endpoint, 50)
    assert round_trip == pytest.approx(0.0003)
    # Any number of slots (more workers than cores too): 4 slots over 4,000/s less 0.2 ms.
    assert slot_round_trip(empty(), endpoint.model_copy(update={"slots": 4}), 50) == pytest.approx(0.0008)
    # Only where the empty requests kept every slot busy with more queued, and only a sync worker's.
    assert slot_round_trip(empty(), endpoint, 2) is None
    assert slot_round_trip(empty(), endpoint.model_copy(update={"execution": "threads"}), 50) is None
    assert slot_round_trip(empty(empty_per_s=None), endpoint, 50) is None
    assert slot_round_trip(empty(empty_per_s=20_000.0), endpoint, 50) is None  # nothing beyond the CPU
    sync.endpoints[PATH] = endpoint
    whole = WholeCost(
        server_cpu_s=0.0001, client_cpu_s=0.0002, cores_free_of_others=2.0, round_trip_s=round_trip
    )
    # 0.3 ms of the request's CPU: 2 / 0.6 ms = 3,333/s by the CPU; each slot held 0.3 + 0.1 + 0.3
    # ms = 0.7 ms: 2,857/s, the least.
    prediction = predict(
        FlowSettings(users=50), 0.002, sync, (0.0003, "server-timing"), 2.0, PATH, whole, 0.0
    )
    assert prediction.hold_s == pytest.approx(0.0007) and prediction.round_trip_s == round_trip
    assert prediction.binding == "slots" and prediction.per_s == pytest.approx(2 / 0.0007)
    unmeasured = WholeCost(server_cpu_s=0.0001, client_cpu_s=0.0002, cores_free_of_others=2.0)
    without = predict(
        FlowSettings(users=50), 0.002, sync, (0.0003, "server-timing"), 2.0, PATH, unmeasured, 0.0
    )
    assert without.binding == "cpu" and without.per_s == pytest.approx(2 / 0.0006)
    # The law as it was before it counted the whole cost keeps no round trip either.
    assert prediction.app_only_per_s == pytest.approx(without.app_only_per_s)
    # The census's CPU holds no request's time on the server: no hold, so no round trip in it.
    census = predict(FlowSettings(users=50), 0.002, sync, (0.0006, "census"), 2.0, PATH, whole, 0.0)
    assert census.hold_s is None and census.round_trip_s is None


def test_the_empty_requests_rate_is_over_their_answers() -> None:
    def sample(sent_s: float, latency_s: float, error: str | None = None) -> Sample:
        return Sample("/healthz", sent_s, sent_s, latency_s, 200 if error is None else None, error)

    # Four answers from the first send (0) to the last answer (2.0 s): 2 a second; a failure is
    # neither counted nor lets its own time stretch the span.
    answered = [sample(0.0, 0.5), sample(0.5, 0.5), sample(1.0, 0.5), sample(1.5, 0.5)]
    assert empty_rate(answered) == pytest.approx(2.0)
    assert empty_rate([*answered, sample(1.9, 5.0, "timeout")]) == pytest.approx(2.0)
    assert empty_rate([sample(0.0, 1.0, "timeout")]) is None and empty_rate([]) is None
