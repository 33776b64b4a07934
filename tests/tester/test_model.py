"""The makespan model: slots, processor sharing, the GIL, and waits that use no core."""

from __future__ import annotations

import math

import pytest

from labtester.model import Parallelism, parallelism, predicted_makespan, speedup_bound

T = 2.0


@pytest.mark.parametrize("n", [1, 2, 5])
def test_one_slot_serves_one_at_a_time(n: int) -> None:
    assert predicted_makespan(n, T, Parallelism(1, 2)) == pytest.approx(n * T)


def test_four_workers_on_two_cores_share_the_cores() -> None:
    # Measured here: gunicorn with 4 workers on 2 cores finished 3 simultaneous requests in 1.5 T.
    capacity = Parallelism(4, 2)
    assert predicted_makespan(3, T, capacity) == pytest.approx(1.5 * T)
    assert predicted_makespan(4, T, capacity) == pytest.approx(2 * T)
    assert predicted_makespan(5, T, capacity) == pytest.approx(3 * T)  # 4 sharing 2 cores, then 1 alone


@pytest.mark.parametrize(("n", "rounds"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_slots_equal_to_cores_run_in_rounds(n: int, rounds: int) -> None:
    assert predicted_makespan(n, T, Parallelism(2, 2)) == pytest.approx(rounds * T)


def test_unbounded_waits_all_finish_together() -> None:
    assert predicted_makespan(50, T, Parallelism(math.inf, math.inf)) == pytest.approx(T)


def test_unbounded_cpu_work_is_limited_by_cores() -> None:
    assert predicted_makespan(6, T, Parallelism(math.inf, 2)) == pytest.approx(3 * T)


def test_no_burst_without_a_request() -> None:
    with pytest.raises(ValueError):
        predicted_makespan(0, T, Parallelism(1, 1))


def endpoint(execution: str, work: str, slots: int | None) -> dict[str, object]:
    return {"execution": execution, "work": work, "slots": slots}


def test_parallelism_from_info() -> None:
    assert parallelism(endpoint("event_loop", "cpu", 1), 1, 2) == Parallelism(1, 2)
    assert parallelism(endpoint("workers", "cpu", 4), 4, 2) == Parallelism(4, 2)
    assert parallelism(endpoint("workers", "io", 4), 4, 2) == Parallelism(4, math.inf)
    assert parallelism(endpoint("async", "io", None), 1, 2) == Parallelism(math.inf, math.inf)
    assert parallelism(endpoint("process_pool", "cpu", 2), 1, 2) == Parallelism(2, 2)


def test_threads_under_the_gil_share_one_core_per_process() -> None:
    capacity = parallelism(endpoint("thread_pool", "cpu", 40), 1, 2)
    assert capacity == Parallelism(40, 1)
    assert predicted_makespan(3, T, capacity) == pytest.approx(3 * T)


def test_greenlets_overlap_waits_but_share_one_core_per_worker() -> None:
    # One gevent worker with 100 connections on 2 cores: waits all at once, CPU one at a time.
    assert parallelism(endpoint("greenlets", "io", 100), 1, 2) == Parallelism(100, math.inf)
    cpu = parallelism(endpoint("greenlets", "cpu", 100), 1, 2)
    assert cpu == Parallelism(100, 1)
    assert predicted_makespan(3, T, cpu) == pytest.approx(3 * T)
    assert predicted_makespan(3, T, parallelism(endpoint("greenlets", "io", 100), 1, 2)) == pytest.approx(T)
    # Three gevent workers on 2 cores: the CPU parts use both cores, not three.
    assert parallelism(endpoint("greenlets", "cpu", 300), 3, 2) == Parallelism(300, 2)


def test_waits_beyond_the_connections_queue() -> None:
    # 10 connections on one worker: 25 simultaneous waits take three rounds.
    capacity = parallelism(endpoint("greenlets", "io", 10), 1, 2)
    assert predicted_makespan(25, T, capacity) == pytest.approx(3 * T)


@pytest.mark.parametrize(
    ("cpu_ms", "io_ms", "bound"),
    [(5, 55, 12), (50, 150, 4), (10, 0, 1), (1, 99, 100)],
)
def test_one_gevent_worker_is_bounded_by_one_over_one_minus_p(cpu_ms: int, io_ms: int, bound: float) -> None:
    p = io_ms / (cpu_ms + io_ms)
    assert speedup_bound(p, endpoint("greenlets", "mixed", 1000), 1, 2) == pytest.approx(bound)


def test_the_connections_cap_the_bound() -> None:
    # p = 0.99 would allow 100 x, but 8 connections hold at most 8 requests at once.
    assert speedup_bound(0.99, endpoint("greenlets", "mixed", 8), 1, 2) == pytest.approx(8)
    assert speedup_bound(1.0, endpoint("greenlets", "mixed", 8), 1, 2) == pytest.approx(8)


def test_bounds_of_the_other_executions() -> None:
    p = 50 / 55
    # One event loop: 1 / (1 - p), however many cores; async waits have no slot limit.
    assert speedup_bound(p, endpoint("async", "mixed", None), 1, 2) == pytest.approx(11)
    # Sync workers: one request each, so never more than the workers.
    assert speedup_bound(p, endpoint("workers", "mixed", 2), 2, 2) == pytest.approx(2)
    assert speedup_bound(p, endpoint("workers", "mixed", 4), 4, 2) == pytest.approx(4)
    # Two gevent workers on two cores: 1 / (1 - p) per core.
    assert speedup_bound(p, endpoint("greenlets", "mixed", 200), 2, 2) == pytest.approx(22)
    assert speedup_bound(1.0, endpoint("async", "mixed", None), 1, 2) == math.inf
