"""The makespan model: slots, processor sharing over each request's own measured work, the GIL,
and waits that use no core."""

from __future__ import annotations

import math
from typing import Any

import pytest

from labtester.info import EndpointInfo, TargetInfo
from labtester.model import (
    Capacity,
    Job,
    capacity,
    completion_times,
    cores_in_use,
    predicted_makespan,
    speedup_bound,
)

W = 0.5  # seconds of work per request


def cpu(*seconds: float) -> list[Job]:
    return [Job(cpu_s=s) for s in seconds]


def waits(*seconds: float) -> list[Job]:
    return [Job(cpu_s=0.0, wait_s=s) for s in seconds]


@pytest.mark.parametrize("n", [1, 2, 5])
def test_one_slot_serves_one_at_a_time(n: int) -> None:
    assert predicted_makespan(cpu(*[W] * n), Capacity(1, 2)) == pytest.approx(n * W)


def test_four_workers_on_two_cores_share_the_cores() -> None:
    # Measured here: gunicorn with 4 workers on 2 cores finished 3 simultaneous requests in 1.5 T.
    limits = Capacity(4, 2)
    assert predicted_makespan(cpu(W, W, W), limits) == pytest.approx(1.5 * W)
    assert predicted_makespan(cpu(*[W] * 4), limits) == pytest.approx(2 * W)
    assert predicted_makespan(cpu(*[W] * 5), limits) == pytest.approx(
        3 * W
    )  # 4 sharing 2 cores, then 1 alone


@pytest.mark.parametrize(("n", "rounds"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3)])
def test_slots_equal_to_cores_run_in_rounds(n: int, rounds: int) -> None:
    assert predicted_makespan(cpu(*[W] * n), Capacity(2, 2)) == pytest.approx(rounds * W)


def test_unequal_jobs_are_shared_then_the_rest_runs_alone() -> None:
    # Two jobs of 1 s and 3 s on one core: both at half speed until the first ends at 2 s, then
    # the second alone needs 2 s more. Sum of work over one core: 4 s either way.
    assert completion_times(cpu(1.0, 3.0), Capacity(math.inf, 1)) == pytest.approx([2.0, 4.0])
    # On two cores each has its own: the longest decides.
    assert predicted_makespan(cpu(1.0, 3.0), Capacity(math.inf, 2)) == pytest.approx(3.0)


def test_admission_follows_the_given_order() -> None:
    # One slot: whatever the order, the work adds up; two slots on two cores: it matters.
    assert predicted_makespan(cpu(3.0, 1.0, 1.0), Capacity(1, 2)) == pytest.approx(5.0)
    assert completion_times(cpu(3.0, 1.0, 1.0), Capacity(2, 2)) == pytest.approx([3.0, 1.0, 2.0])


def test_a_slower_cpu_is_bigger_work_not_a_wrong_model() -> None:
    # The same requests measured at 25 % more CPU seconds: the prediction grows by exactly that.
    fast, slow = cpu(0.4, 0.4, 0.4), cpu(0.5, 0.5, 0.5)
    limits = Capacity(4, 2)
    assert predicted_makespan(slow, limits) / predicted_makespan(fast, limits) == pytest.approx(1.25)


def test_unbounded_waits_all_finish_together() -> None:
    assert predicted_makespan(waits(*[W] * 50), Capacity(math.inf, math.inf)) == pytest.approx(W)


def test_waits_beyond_the_slots_queue() -> None:
    assert predicted_makespan(waits(*[W] * 25), Capacity(10, math.inf)) == pytest.approx(3 * W)


def test_cores_in_use_is_work_over_makespan() -> None:
    assert cores_in_use(cpu(W, W, W), Capacity(4, 2)) == pytest.approx(2.0)
    assert cores_in_use(cpu(W, W, W), Capacity(1, 2)) == pytest.approx(1.0)
    assert cores_in_use(waits(W), Capacity(math.inf, math.inf)) == 0.0


def test_no_burst_without_a_request() -> None:
    with pytest.raises(ValueError):
        predicted_makespan([], Capacity(1, 1))


def endpoint(execution: str, work: str, slots: int | None) -> EndpointInfo:
    return EndpointInfo(name="e", path="/e", work=work, execution=execution, slots=slots)  # type: ignore[arg-type]


def target(workers: int, cores: int, threads: int = 1) -> TargetInfo:
    fields: dict[str, Any] = {
        "name": "t",
        "framework": "f",
        "server": "s",
        "workers": workers,
        "threads": threads,
        "effective_cores": cores,
        "cores_source": "setting",
        "kernel": {"name": "k", "loops_per_iteration": 1, "max_iterations": 1, "work_cap_seconds": 1},
        "endpoints": {},
    }
    return TargetInfo.model_validate(fields)


def test_capacity_from_info() -> None:
    assert capacity(endpoint("event_loop", "cpu", 1), target(1, 2)) == Capacity(1, 1, processes=1)
    assert capacity(endpoint("workers", "cpu", 4), target(4, 2)) == Capacity(4, 2)
    assert capacity(endpoint("workers", "io", 4), target(4, 2)) == Capacity(4, math.inf)
    assert capacity(endpoint("async", "io", None), target(1, 2)) == Capacity(math.inf, math.inf)
    assert capacity(endpoint("process_pool", "cpu", 2), target(1, 2)) == Capacity(
        2, 2, processes=1, one_core_each=False
    )


def test_each_worker_runs_its_own_requests_on_its_own_process_pool() -> None:
    # Two workers, each with a pool of 2 processes, on 2 cores: 4 requests taken 2 and 2 run at
    # once (2 x one); taken 3 and 1, the third of the three waits for its worker's pool, whose
    # processes share the cores with the other worker's: granian-asgi's offloaded CPU at n = 4 took
    # 1.17 to 1.34x a model that pooled the four slots.
    pools = capacity(endpoint("process_pool", "cpu", 4), target(2, 2))
    assert pools == Capacity(4, 2, processes=2, one_core_each=False)
    even = [Job(W, process=p) for p in (0, 1, 0, 1)]
    assert predicted_makespan(even, pools) == pytest.approx(2 * W)
    uneven = [Job(W, process=p) for p in (0, 0, 1, 0)]
    # 3 at once on 2 cores until the first three end at 1.5 x, then the fourth alone: 2.5 x.
    assert predicted_makespan(uneven, pools) == pytest.approx(2.5 * W)


def test_event_loops_keep_the_requests_they_took() -> None:
    # 2 workers, one event loop each: a request runs on the loop of the worker that accepted it.
    loops = capacity(endpoint("event_loop", "cpu", 2), target(2, 2))
    assert loops == Capacity(2, 2, processes=2)
    # 3 and 2 on the two loops: the busier one ends at 3 x, where any free loop taking the next
    # request would end at 3 x as well; 4 and 1 end at 4 x.
    spread = [Job(W, process=p) for p in (0, 1, 0, 1, 0)]
    assert predicted_makespan(spread, loops) == pytest.approx(3 * W)
    uneven = [Job(W, process=p) for p in (0, 0, 1, 0, 0)]
    assert predicted_makespan(uneven, loops) == pytest.approx(4 * W)


def test_async_waits_are_bounded_only_where_the_server_admits_so_many() -> None:
    assert capacity(endpoint("async", "io", None), target(2, 2)) == Capacity(math.inf, math.inf)
    assert capacity(endpoint("async", "io", 1024), target(2, 2)) == Capacity(1024, math.inf)
    assert predicted_makespan(waits(W, W, W), Capacity(2, math.inf)) == pytest.approx(2 * W)


def test_threads_under_the_gil_share_one_core_per_process() -> None:
    assert capacity(endpoint("thread_pool", "cpu", 40), target(1, 2)) == Capacity(40, 1, processes=1)
    # gthread: 2 workers x 8 threads on 2 cores: 16 at once, one core per worker process.
    gthread = capacity(endpoint("threads", "cpu", 16), target(2, 2, threads=8))
    assert gthread == Capacity(16, 2, processes=2)
    assert capacity(endpoint("threads", "cpu", 8), target(1, 2, threads=8)) == Capacity(8, 1, processes=1)
    # 3 requests over 2 worker processes: two share one core, the third has the other: 2 x one,
    # where sharing 2 cores freely would take 1.5 x.
    assert predicted_makespan(cpu(W, W, W), gthread) == pytest.approx(2 * W)
    assert predicted_makespan(cpu(W, W, W, W), gthread) == pytest.approx(2 * W)
    # 4 processes on 2 cores: each process at most one core, the processes share the two.
    four = Capacity(32, 2, processes=4)
    assert predicted_makespan(cpu(W, W, W, W), four) == pytest.approx(2 * W)
    assert predicted_makespan(cpu(W, W, W), four) == pytest.approx(1.5 * W)


def test_the_measured_spread_over_processes_replaces_the_even_one() -> None:
    gthread = Capacity(16, 2, processes=2)
    # The OS handed all 4 to one worker: one core for all four, 4 x one, not 2 x.
    on_one = [Job(W, process=0) for _ in range(4)]
    assert predicted_makespan(on_one, gthread) == pytest.approx(4 * W)
    # 3 on one worker, 1 on the other: the lone one ends at 1 x, the three share a core: 3 x.
    three_one = [Job(W, process=p) for p in (0, 0, 1, 0)]
    assert predicted_makespan(three_one, gthread) == pytest.approx(3 * W)
    # Where the server did not say, the spread stays even; and free sharing ignores processes.
    assert predicted_makespan([Job(W, process=0), *cpu(W)], gthread) == pytest.approx(W)
    assert predicted_makespan(on_one, Capacity(4, 2)) == pytest.approx(2 * W)


def test_greenlets_overlap_waits_but_share_one_core_per_worker() -> None:
    assert capacity(endpoint("greenlets", "io", 100), target(1, 2)) == Capacity(100, math.inf)
    assert capacity(endpoint("greenlets", "cpu", 100), target(1, 2)) == Capacity(100, 1, processes=1)
    # Three gevent workers on 2 cores: the CPU parts use both cores, not three.
    assert capacity(endpoint("greenlets", "cpu", 300), target(3, 2)) == Capacity(300, 2, processes=3)


@pytest.mark.parametrize(("cpu_ms", "io_ms", "bound"), [(5, 55, 12), (50, 150, 4), (10, 0, 1), (1, 99, 100)])
def test_one_gevent_worker_is_bounded_by_one_over_one_minus_p(cpu_ms: int, io_ms: int, bound: float) -> None:
    p = io_ms / (cpu_ms + io_ms)
    assert speedup_bound(p, endpoint("greenlets", "mixed", 1000), target(1, 2)) == pytest.approx(bound)


def test_the_connections_cap_the_bound() -> None:
    # p = 0.99 would allow 100 x, but 8 connections hold at most 8 requests at once.
    assert speedup_bound(0.99, endpoint("greenlets", "mixed", 8), target(1, 2)) == pytest.approx(8)
    assert speedup_bound(1.0, endpoint("greenlets", "mixed", 8), target(1, 2)) == pytest.approx(8)


def test_bounds_of_the_other_executions() -> None:
    p = 50 / 55
    # One event loop: 1 / (1 - p), however many cores; async waits have no slot limit.
    assert speedup_bound(p, endpoint("async", "mixed", None), target(1, 2)) == pytest.approx(11)
    # Sync workers: one request each, so never more than the workers.
    assert speedup_bound(p, endpoint("workers", "mixed", 2), target(2, 2)) == pytest.approx(2)
    assert speedup_bound(p, endpoint("workers", "mixed", 4), target(4, 2)) == pytest.approx(4)
    # Two gevent workers on two cores: 1 / (1 - p) per core.
    assert speedup_bound(p, endpoint("greenlets", "mixed", 200), target(2, 2)) == pytest.approx(22)
    assert speedup_bound(1.0, endpoint("async", "mixed", None), target(1, 2)) == math.inf


def mixed(n: int, cpu_s: float, wait_s: float) -> list[Job]:
    return [Job(cpu_s=cpu_s, wait_s=wait_s) for _ in range(n)]


def test_a_mixed_request_alone_takes_its_cpu_plus_its_wait() -> None:
    assert predicted_makespan(mixed(1, 0.04, 0.12), Capacity(1, 2)) == pytest.approx(0.16)


def test_mixed_work_on_one_event_loop_overlaps_the_waits_not_the_cpu() -> None:
    # One loop (one core, no slot limit): 5 requests' CPU takes turns, their waits overlap.
    loop = Capacity(math.inf, 1, processes=1)
    assert predicted_makespan(mixed(5, 0.04, 0.12), loop) == pytest.approx(5 * 0.04 + 0.12)


def test_mixed_work_on_sync_workers_holds_a_worker_through_its_wait() -> None:
    # 2 sync workers on 2 cores: the waits hold the worker, so 4 requests take two full rounds.
    workers = Capacity(2, 2)
    assert predicted_makespan(mixed(4, 0.04, 0.12), workers) == pytest.approx(2 * 0.16)
    # 8 gthread threads on the same 2 cores (one process, one core): one round, the CPU shared.
    threads = Capacity(8, 1, processes=1)
    assert predicted_makespan(mixed(4, 0.04, 0.12), threads) == pytest.approx(4 * 0.04 + 0.12)


def test_a_job_in_its_wait_leaves_the_core_to_the_others() -> None:
    # One core: A computes 1 s then waits 2 s; B computes 2 s. Sharing until A's CPU is done at
    # 2 s, B alone from then: done at 3 s; A's wait ends at 4 s.
    jobs = [Job(cpu_s=1.0, wait_s=2.0), Job(cpu_s=2.0)]
    assert completion_times(jobs, Capacity(math.inf, 1)) == pytest.approx([4.0, 3.0])
    assert cores_in_use(jobs, Capacity(math.inf, 1)) == pytest.approx(3.0 / 4.0)
