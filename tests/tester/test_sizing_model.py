"""The sizing's simulation against what is known: Little's law on pure CPU and pure waits, the
burst model (labtester.model) on a common release, and the orderings its knobs must show."""

from __future__ import annotations

import dataclasses

import pytest

from labtester.model import Capacity, Job, predicted_makespan
from labtester.sizing import events
from labtester.sizing.arrivals import poisson_arrivals, proof_window
from labtester.sizing.configuration import Configuration
from labtester.sizing.drawn import prepared, sends
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import GROWING, Simulated, ceiling_per_s, simulate
from labtester.sizing.processes import share_cores
from labtester.sizing.proof import proof_run

CPU = RequestKind("/cpu", 1, cpu_s=0.02, wait_s=0.0)
WAIT = RequestKind("/wait", 1, cpu_s=0.0, wait_s=0.05)


def sync(workers: int) -> Configuration:
    return Configuration("sync", workers, 1, "shared", True)


def test_pure_cpu_on_two_processes_serves_two_over_its_cpu() -> None:
    overloaded = simulate([CPU], sync(2), cores=2, rate_per_s=400, requests=3000)
    assert overloaded.served_per_s == pytest.approx(2 / CPU.cpu_s, rel=0.03)
    assert ceiling_per_s([CPU], sync(2), cores=2) == pytest.approx(100)


def test_four_processes_on_two_cores_serve_no_more_than_two() -> None:
    overloaded = simulate([CPU], sync(4), cores=2, rate_per_s=400, requests=3000)
    assert overloaded.served_per_s == pytest.approx(2 / CPU.cpu_s, rel=0.03)


def test_pure_waits_with_s_slots_serve_s_over_the_wait() -> None:
    for config in (sync(6), Configuration("gthread", 2, 3, "per_worker", True)):
        overloaded = simulate([WAIT], config, cores=2, rate_per_s=1000, requests=4000)
        assert overloaded.served_per_s == pytest.approx(6 / WAIT.wait_s, rel=0.03)


@pytest.mark.parametrize(
    ("config", "limits"),
    [
        (sync(4), Capacity(slots=4, cores=2)),  # 4 workers share 2 cores: 3 requests in 1.5 x one
        (Configuration("gthread", 1, 4, "per_worker", True), Capacity(slots=4, cores=1, processes=1)),
        (Configuration("gthread", 2, 2, "shared", True), Capacity(slots=4, cores=2, processes=2)),
    ],
)
def test_a_burst_takes_what_the_burst_model_predicts(config: Configuration, limits: Capacity) -> None:
    for n in (1, 3, 5):
        jobs = [Job(0.02, 0.03)] * n
        kind = RequestKind("/mixed", 1, cpu_s=0.02, wait_s=0.03)
        burst = simulate([kind], config, cores=2, rate_per_s=1, requests=n, arrivals=[0.0] * n)
        assert burst.latencies_s[-1] == pytest.approx(predicted_makespan(jobs, limits), rel=1e-6)


def test_greenlets_run_one_request_to_its_end_threads_share_the_core() -> None:
    heavy = RequestKind("/heavy", 1, 0.1, 0.0)
    first_done = {}
    for preemptive in (False, True):
        config = Configuration("x", 1, 10, "per_worker", preemptive)
        both = simulate([heavy], config, 1, 1, 2, arrivals=[0.0, 0.001])
        first_done[preemptive] = both.latencies_s[0]
    assert first_done[False] == pytest.approx(0.1)  # first come, first served: one after the other
    assert first_done[True] == pytest.approx(0.199, rel=0.01)  # shared: both end near the end


def test_one_queue_per_worker_has_a_longer_tail_than_one_shared_queue() -> None:
    per_worker = Configuration("gthread", 4, 1, "per_worker", True)
    shared = Configuration("gthread", 4, 1, "shared", True)
    kinds = [RequestKind("/mixed", 1, 0.005, 0.04)]
    tails = [simulate(kinds, c, 2, 70, 3000).p99_s for c in (per_worker, shared)]
    assert tails[0] > 1.5 * tails[1]


def test_the_tail_grows_with_the_rate_and_the_same_seed_gives_the_same_run() -> None:
    config = Configuration("gthread", 2, 4, "per_worker", True)
    kinds = [CPU, WAIT]
    tails = [simulate(kinds, config, 2, rate, 2000).p99_s for rate in (20, 50, 80)]
    assert tails == sorted(tails)
    assert simulate(kinds, config, 2, 50, 2000) == simulate(kinds, config, 2, 50, 2000)


def test_a_measured_tail_is_drawn_from_not_averaged_away() -> None:
    # The same mean CPU (10 ms): every request alike, or one in 20 taking 100 ms.
    spread = tuple([0.1] * 2 + [0.1 / 38 * 2] * 38)  # 40 quantiles: 5 % at 100 ms, the rest ~5.3 ms
    steady = RequestKind("/cpu", 1, cpu_s=0.01, wait_s=0.0)
    tailed = RequestKind("/cpu", 1, cpu_s=0.0053, wait_s=0.0, cpu_spread_s=spread)
    assert tailed.demand_s == pytest.approx(steady.demand_s, rel=0.01)
    config = Configuration("gthread", 1, 4, "per_worker", True)
    assert ceiling_per_s([tailed], config, cores=1) == pytest.approx(ceiling_per_s([steady], config, cores=1))
    runs = [simulate([kind], config, cores=1, rate_per_s=50, requests=4000) for kind in (steady, tailed)]
    assert runs[1].served_per_s == pytest.approx(runs[0].served_per_s, rel=0.05)  # the same work...
    assert runs[1].p99_s > 2 * runs[0].p99_s  # ...and a tail the mean hides
    assert runs[1].p99_s > 0.1  # a 100 ms request is in the p99


def test_a_warm_up_is_served_and_not_judged() -> None:
    # A proof judges its window, after its warm-up: the simulation serves the warm-up's requests (the
    # queue they leave is the window's start) and counts only those sent after it.
    config = sync(2)
    times = [0.0, 0.0, 0.0, 0.0, 1.0]  # four at once, then one alone on an idle server
    run = simulate([CPU], config, 2, 5, len(times), arrivals=times, judged_from_s=0.5)
    assert run.latencies_s == pytest.approx((CPU.cpu_s,))
    assert run.served_per_s == pytest.approx(1 / (1.0 + CPU.cpu_s - 0.5))
    everything = simulate([CPU], config, 2, 5, len(times), arrivals=times)
    assert everything.latencies_s == pytest.approx((0.02, 0.02, 0.02, 0.04, 0.04))


def test_an_event_loops_work_in_threads_runs_beside_it_not_after() -> None:
    """On an event loop, CPU a request ran in a thread (`lab-elsewhere`) shares the core with the
    loop's next request instead of holding it: 100 ms in a thread, then 20 ms on the loop 5 ms
    later, one core. Beside: the loop's request gets half the core, 40 ms; the thread's ends at
    5 + 40 + 75 = 120 ms. On the loop, one after the other: 100 ms, then 115."""
    handed = RequestKind("/handed", 1, 0.1, 0.0, elsewhere_share=1.0)
    on_loop = RequestKind("/loop", 1, 0.02, 0.0)
    latencies = {}
    for beside in (True, False):
        config = Configuration("uvicorn", 1, None, "per_worker", False, threads_beside=beside)
        run = simulate([handed, on_loop], config, 1, 1, 2, arrivals=[0.0, 0.005], picked=[0, 1])
        latencies[beside] = run.latencies_s
    assert latencies[True] == pytest.approx((0.04, 0.12))
    assert latencies[False] == pytest.approx((0.1, 0.115))


def test_where_a_requests_cpu_ran_matters_only_beside_an_event_loop() -> None:
    """Among threads, work handed to another thread shares the core as the request's own does, and
    a greenlet's pool runs on its hub, in turn: the share changes nothing there, nor on an event
    loop whose requests hand nothing over; beside a loop it shortens the tail."""
    said = [
        RequestKind("/cpu", 1, 0.02, 0.0, 0.001, elsewhere_share=0.9),
        RequestKind("/mixed", 2, 0.005, 0.03),
    ]
    unsaid = [RequestKind("/cpu", 1, 0.02, 0.0, 0.001), RequestKind("/mixed", 2, 0.005, 0.03)]
    loop = Configuration("uvicorn", 2, None, "per_worker", False)
    beside = Configuration("uvicorn", 2, None, "per_worker", False, threads_beside=True)
    for config in (
        Configuration("gthread", 2, 4, "per_worker", True),
        Configuration("gevent", 2, 100, "per_worker", False),
        loop,
    ):
        assert simulate(said, config, 2, 60, 1500) == simulate(unsaid, config, 2, 60, 1500), config
    assert simulate(unsaid, beside, 2, 60, 1500) == simulate(unsaid, loop, 2, 60, 1500)
    assert simulate(said, beside, 2, 60, 1500).p99_s < simulate(unsaid, beside, 2, 60, 1500).p99_s


def test_after_its_work_in_threads_a_request_answers_on_the_loop_in_turn() -> None:
    """50 ms in a thread and 10 ms of the server's own to answer, no wait, sent just before 100 ms
    on the loop, one core: the thread's work ends beside the loop's at 99 ms, but its answer waits
    for the loop's request to end (150 ms) and takes 10 ms more."""
    handed = RequestKind("/handed", 1, 0.05, 0.0, overhead_s=0.01, elsewhere_share=1.0)
    on_loop = RequestKind("/loop", 1, 0.1, 0.0)
    config = Configuration("uvicorn", 1, None, "per_worker", False, threads_beside=True)
    run = simulate([handed, on_loop], config, 1, 1, 2, arrivals=[0.0, 0.001], picked=[0, 1])
    assert run.latencies_s == pytest.approx((0.149, 0.16))


def test_work_in_threads_beside_a_loop_uses_the_cores_a_process_can_use() -> None:
    """Two requests in threads beside one loop, on a process measured to use 1.6 cores (work that
    releases the GIL): 1.6 cores between them, not one."""
    handed = RequestKind("/handed", 1, 0.1, 0.0, cores_per_process=1.6, elsewhere_share=1.0)
    config = Configuration("uvicorn", 1, None, "per_worker", False, threads_beside=True)
    both = simulate([handed], config, 2, 1, 2, arrivals=[0.0, 0.0])
    assert both.latencies_s == pytest.approx((0.2 / 1.6, 0.2 / 1.6))


def test_the_cores_each_process_gets_are_kept_only_while_they_stay_the_same() -> None:
    # The event loop keeps each process's share of the cores between events that start or end no
    # CPU phase (each process's speed): before every step, what it kept is what working them out
    # afresh gives, on sync workers, threads, greenlets and an event loop with work beside it.
    kept_steps = []

    def served(run: events.Run) -> None:  # as Run.serve does, checked before each step
        while len(run.latencies) < len(run.times):
            if run.speeds_known:
                kept = [process.speed for process in run.processes], run.client_speed
                client = bool(run.client)
                fresh = share_cores(run.processes, run.cores, run.parallel, run.config.preemptive, client)
                assert kept == ([process.speed for process in run.processes], fresh)
                kept_steps.append(run.now)
            run.step()

    both = RequestKind("/both", 1, cpu_s=0.01, wait_s=0.02, elsewhere_share=0.5)
    handed = RequestKind("/handed", 1, cpu_s=0.01, wait_s=0.0, elsewhere_share=1.0)  # all in threads
    configurations = [
        sync(3),
        Configuration("gthread", 2, 4, "per_worker", True),
        Configuration("gevent", 2, 100, "per_worker", False),
        Configuration("uvicorn", 2, None, "per_worker", False, threads_beside=True),
    ]
    for config in configurations:
        for mix in (
            [CPU, WAIT, both, handed],
            [dataclasses.replace(k, client_s=0.004) for k in (CPU, WAIT, both, handed)],
        ):
            served(prepared(mix, config, 2.0, *sends(mix, 60.0, 400), 400))  # (and a local client)
    assert len(kept_steps) > 800  # a fair share of the steps ran on what was kept


def test_a_sync_workers_close_holds_its_slot_off_every_core_after_the_answer() -> None:
    # 20 ms of CPU, then 10 ms until the client closed: a slot serves 1 / 30 ms, the cores 1 / 20 ms.
    closing = RequestKind("/cpu", 1, cpu_s=0.02, wait_s=0.0, close_s=0.01)
    overloaded = simulate([closing], sync(2), cores=2, rate_per_s=400, requests=3000)
    assert overloaded.served_per_s == pytest.approx(2 / 0.03, rel=0.03)
    assert ceiling_per_s([closing], sync(2), cores=2) == pytest.approx(2 / 0.03)
    # Off every core: four workers still use both cores (they compute while the others close).
    assert simulate([closing], sync(4), cores=2, rate_per_s=400, requests=3000).served_per_s == pytest.approx(
        2 / 0.02, rel=0.03
    )
    # The answer reached the client before the close: next to no load, its latency is its CPU.
    quiet = simulate([closing], sync(2), cores=2, rate_per_s=5, requests=200)
    assert quiet.latencies_s[len(quiet.latencies_s) // 2] == pytest.approx(0.02)  # the median


@pytest.mark.parametrize(("rate_per_s", "kept_up"), [(80.0, True), (150.0, True), (240.0, False)])
def test_a_run_predicted_on_its_first_sends_serves_what_all_would(rate_per_s: float, kept_up: bool) -> None:
    # A proof's prediction simulates its first sends only: its rate is the whole run's, as the proof
    # measures it (the judged answered over the time to the last answer), below the knee and past it.
    config = Configuration("gthread", 2, 4, "per_worker", True)
    duration_s, warmup_s = 60.0, 12.0
    every = proof_run([CPU, WAIT], config, 2, rate_per_s, duration_s, 10**6, warmup_s, draws=3)
    first = proof_run([CPU, WAIT], config, 2, rate_per_s, duration_s, 800, warmup_s, draws=3)
    if kept_up:
        judged, from_s, last_s = proof_window(rate_per_s, duration_s, warmup_s)
        assert every.per_s == pytest.approx(judged / (last_s - from_s), rel=0.01)  # all its sends, served
        assert first.per_s == pytest.approx(every.per_s, rel=0.005)
    else:
        assert every.per_s < 0.8 * rate_per_s
        assert first.per_s == pytest.approx(every.per_s, rel=0.03)


def test_a_whole_run_s_rate_is_its_own_where_all_its_sends_were_simulated() -> None:
    times = poisson_arrivals(80.0, 2000)
    run = simulate([CPU, WAIT], sync(8), 2, 80.0, len(times), arrivals=times, judged_from_s=5.0)
    judged = [t for t in times if t >= 5.0]
    assert run.served_over(len(judged), 5.0, judged[-1]) == pytest.approx(run.served_per_s, rel=1e-9)
    # Its own sends' rate, the drain put after a last send a blink later: the same, by the formula.
    assert run.served_over(len(judged), 5.0, judged[-1] + 1e-9) == pytest.approx(run.served_per_s, rel=1e-6)
    assert run.growth < GROWING / 5  # kept up: no queue grew


def test_a_whole_run_s_rate_puts_the_drain_after_its_last_send_as_its_queue_grew() -> None:
    def simulated(growth: float) -> Simulated:
        # 400 judged sends from 2 s to 6 s (100/s), the last answered 0.2 s after the last send.
        return Simulated(100.0, (0.01,) * 400, 6.0, 6.2, 2.0, growth)

    # Twice as many sends over twice the span: the drain alone, or grown 0.005 s a second for 4 s more.
    assert simulated(0.0).served_over(800, 2.0, 10.0) == pytest.approx(800 / (8.0 + 0.2))
    assert simulated(0.005).served_over(800, 2.0, 10.0) == pytest.approx(800 / (8.0 + 0.2 + 0.005 * 4))
    # A queue growing GROWING or faster: read at the rate it served, not drawn on.
    assert simulated(GROWING).served_over(800, 2.0, 10.0) == pytest.approx(400 / 4.2)


def test_a_queue_that_grows_is_read_as_the_rate_it_serves() -> None:
    overloaded = simulate([CPU], sync(2), cores=2, rate_per_s=150, requests=3000)
    # Latency grows by what arrives beyond what it serves: 150/s into 100/s, half a second a second.
    assert overloaded.growth == pytest.approx(150 / 100 - 1, rel=0.1)
    last_s = 10 * overloaded.last_arrival_s  # a run ten times as long
    assert overloaded.served_over(round(150 * last_s), 0.0, last_s) == pytest.approx(2 / CPU.cpu_s, rel=0.03)
