"""The flow's prediction with a request's whole cost: the server's own CPU and the local client's
beside the request's, and the cores a process measured using instead of one assumed (analyse.py)."""

from __future__ import annotations

import pytest

from labtester.info import EndpointInfo, KernelInfo, TargetInfo
from labtester.load import Sample
from labtester.scenarios.flow import sync_cycle
from labtester.scenarios.flow.analyse import predict
from labtester.scenarios.flow.cost import ServingCost
from labtester.scenarios.flow.prediction import Prediction
from labtester.scenarios.flow.settings import FlowSettings
from labtester.scenarios.flow.whole import WholeCost, empty_rate, slot_delay, target_cores

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


def test_a_sync_workers_delay_is_fitted_to_its_empty_requests() -> None:
    endpoint = info(2, execution="workers").endpoints[PATH].model_copy(update={"slots": 2})
    delay = slot_delay(empty(), endpoint, 50, 2.0)
    assert delay is not None and delay > 0
    # Its cycle beside the client, with that delay, gives the rate the empty requests were served.
    assert sync_cycle.rate(2, 2.0, 0.0002, 0.0002, delay) == pytest.approx(4000, rel=1e-3)
    # The client elsewhere: a slot's cycle is its CPU and the delay, 0.5 ms, where a core is free
    # (within the draws' spread: each phase varies around its mean).
    assert slot_delay(empty(client_cpu_per_request_s=None), endpoint, 50, 2.0) == pytest.approx(
        0.0003, rel=0.03
    )
    # Any number of slots (more workers than cores too).
    four = endpoint.model_copy(update={"slots": 4})
    four_delay = slot_delay(empty(), four, 50, 2.0)
    assert four_delay is not None
    assert sync_cycle.rate(4, 2.0, 0.0002, 0.0002, four_delay) == pytest.approx(4000, rel=1e-3)
    # Fitted on the cores the others left the empty requests: fewer cores, less delay to fit.
    shared = slot_delay(empty(cores_free_of_others=1.5), endpoint, 50, 2.0)
    assert shared is not None and shared < delay
    # No core left by the others then: nothing to fit on.
    assert slot_delay(empty(cores_free_of_others=0.0), endpoint, 50, 2.0) is None
    # Faster than the loop allows with no delay: none, and the loop (the client's turn) still holds.
    assert slot_delay(empty(empty_per_s=20_000.0), endpoint, 50, 2.0) == 0.0
    # Only where the empty requests kept every slot busy with more queued, and only a sync worker's.
    assert slot_delay(empty(), endpoint, 2, 2.0) is None
    assert slot_delay(empty(), endpoint.model_copy(update={"execution": "threads"}), 50, 2.0) is None
    assert slot_delay(empty(empty_per_s=None), endpoint, 50, 2.0) is None


def test_a_sync_workers_round_trip_grows_with_the_cpu_beside_the_local_client() -> None:
    sync = info(2, execution="workers")
    sync.endpoints[PATH] = sync.endpoints[PATH].model_copy(update={"slots": 2})
    delay = slot_delay(empty(), sync.endpoints[PATH], 50, 2.0)

    def predicted(
        cpu_s: float, client_cpu_s: float | None, wait_s: float = 0.0, cores: float = 2.0
    ) -> Prediction:
        whole = WholeCost(
            server_cpu_s=0.0001, client_cpu_s=client_cpu_s, cores_free_of_others=cores, slot_delay_s=delay
        )
        return predict(
            FlowSettings(users=50), 0.002, sync, (cpu_s, "server-timing"), 2.0, PATH, whole, wait_s
        )

    assert delay is not None
    light, heavy = predicted(0.0001, 0.0002), predicted(0.001, 0.0002)
    for prediction, cpu_s in ((light, 0.0001), (heavy, 0.001)):
        # The slots' rate is the cycle's with the request's CPU and the server's, beside the client.
        assert prediction.per_s == pytest.approx(sync_cycle.rate(2, 2.0, cpu_s + 0.0001, 0.0002, delay))
        assert prediction.binding == "slots" and prediction.round_trip_s is not None
        assert prediction.ceiling() == (pytest.approx(prediction.per_s), "slots")
    # On the cores the others left the flow.
    shared = predicted(0.0001, 0.0002, cores=1.5)
    assert shared.per_s == pytest.approx(sync_cycle.rate(2, 1.5, 0.0002, 0.0002, delay))
    assert shared.per_s < light.per_s
    # The workers computing more leave the client fewer cores: the wait for its close grows.
    assert heavy.round_trip_s > light.round_trip_s  # type: ignore[operator]
    # The client elsewhere takes no core: the delay alone, whatever the CPU.
    for cpu_s in (0.0001, 0.001):
        assert predicted(cpu_s, None).per_s == pytest.approx(2 / (cpu_s + 0.0001 + delay), rel=0.01)
    # A wait (the app's I/O) holds the slot off every core too, before the client's close.
    waiting = predicted(0.0001, 0.0002, wait_s=0.001)
    assert waiting.per_s == pytest.approx(sync_cycle.rate(2, 2.0, 0.0002, 0.0002, delay + 0.001))
    # The law as it was before it counted the whole cost keeps no round trip.
    assert heavy.app_only_per_s == pytest.approx(2 / 0.0011)
    unmeasured = WholeCost(server_cpu_s=0.0001, client_cpu_s=0.0002, cores_free_of_others=2.0)
    without = predict(
        FlowSettings(users=50), 0.002, sync, (0.0003, "server-timing"), 2.0, PATH, unmeasured, 0.0
    )
    assert without.round_trip_s is None and without.binding == "cpu"
    # More workers than cores on a heavy path: the cycle comes within 1 % of what the cores allow
    # (0.998 of it with 1 ms off every core), and the cores bind.
    four = info(4, execution="workers")
    four.endpoints[PATH] = four.endpoints[PATH].model_copy(update={"slots": 4})
    whole = WholeCost(server_cpu_s=0.0001, client_cpu_s=0.0002, cores_free_of_others=2.0, slot_delay_s=0.001)
    loaded = predict(FlowSettings(users=50), 0.01, four, (0.005, "server-timing"), 2.0, PATH, whole, 0.0)
    assert loaded.binding == "cpu" and loaded.per_s == pytest.approx(2 / 0.0053)
    assert loaded.ceiling() == (pytest.approx(2 / 0.0051), "cpu")  # the configuration alone
    # Fewer users than that ask for: they bind, not the cores the cycle came to.
    asked = 0.998 * 2 / 0.0053  # between the cycle's rate and the cores'
    few = predict(FlowSettings(users=50), 50 / asked, four, (0.005, "server-timing"), 2.0, PATH, whole, 0.0)
    assert few.binding == "users" and few.per_s == pytest.approx(asked)
    # No core left by the others, or no CPU measured: nothing to simulate, and nothing raised.
    for cpu_s, cores in ((0.0001, 0.0), (0.0, 2.0)):
        bare = WholeCost(
            server_cpu_s=0.0, client_cpu_s=0.0002, cores_free_of_others=cores, slot_delay_s=delay
        )
        nothing = predict(FlowSettings(users=50), 0.002, sync, (cpu_s, "server-timing"), 2.0, PATH, bare, 0.0)
        assert nothing.round_trip_s is None
    # The census's CPU holds no request's time on the server: no hold, so no round trip in it.
    whole = WholeCost(server_cpu_s=0.0001, client_cpu_s=0.0002, cores_free_of_others=2.0, slot_delay_s=delay)
    census = predict(FlowSettings(users=50), 0.002, sync, (0.0006, "census"), 2.0, PATH, whole, 0.0)
    assert census.hold_s is None and census.round_trip_s is None


def test_the_sync_cycle_is_the_cpu_and_the_delay_where_nothing_else_binds() -> None:
    # Within the draws' own spread (each phase varies around its mean): 3 %.
    def near(rate: float) -> object:
        return pytest.approx(rate, rel=0.03)

    # Workers no more than cores, the client elsewhere: each cycle is its CPU and the delay.
    assert sync_cycle.rate(2, 2.0, 0.001, 0.0, 0.0) == near(2000)
    assert sync_cycle.rate(2, 2.0, 0.001, 0.0, 0.001) == near(1000)
    # More workers than cores: the cores bind.
    assert sync_cycle.rate(4, 2.0, 0.001, 0.0, 0.0) == near(2000)
    # A client on one thread: it answers at most one close at a time, whatever the workers.
    assert sync_cycle.rate(8, 8.0, 0.0001, 0.001, 0.0) == near(1000)
    # A client on the same cores: less than the CPU alone allows, and less as either costs more.
    alone = sync_cycle.rate(2, 2.0, 0.0003, 0.0, 0.0002)
    beside = sync_cycle.rate(2, 2.0, 0.0003, 0.0002, 0.0002)
    assert alone == near(2 / 0.0005) and beside < 0.9 * alone
    assert sync_cycle.rate(2, 2.0, 0.0006, 0.0002, 0.0002) < beside
    assert sync_cycle.rate(2, 2.0, 0.0003, 0.0004, 0.0002) < beside
    # Smooth in the cores and the delay: with equal phases the workers locked into step, and two
    # workers' rate here was 4,367/s on 2 cores, 4,888/s on 1.999, and rose with the delay.
    assert sync_cycle.rate(2, 1.999, 0.000206, 0.000196, 0.0001) == pytest.approx(
        sync_cycle.rate(2, 2.0, 0.000206, 0.000196, 0.0001), rel=0.005
    )
    delays = [sync_cycle.rate(2, 1.999, 0.000206, 0.000196, d) for d in (0.0, 0.0001, 0.0002, 0.0003)]
    assert delays == sorted(delays, reverse=True)
    with pytest.raises(ValueError):
        sync_cycle.rate(0, 2.0, 0.001, 0.0, 0.0)


def test_the_empty_requests_rate_is_over_their_answers() -> None:
    def sample(sent_s: float, latency_s: float, error: str | None = None) -> Sample:
        return Sample("/healthz", sent_s, sent_s, latency_s, 200 if error is None else None, error)

    # Four answers from the first send (0) to the last answer (2.0 s): 2 a second; a failure is
    # neither counted nor lets its own time stretch the span.
    answered = [sample(0.0, 0.5), sample(0.5, 0.5), sample(1.0, 0.5), sample(1.5, 0.5)]
    assert empty_rate(answered) == pytest.approx(2.0)
    assert empty_rate([*answered, sample(1.9, 5.0, "timeout")]) == pytest.approx(2.0)
    assert empty_rate([sample(0.0, 1.0, "timeout")]) is None and empty_rate([]) is None
