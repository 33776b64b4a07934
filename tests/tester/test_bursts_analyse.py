"""Each burst judged by its own measured work and the CPU it really got: agreement, interference
with its cause, departures with an assumption the target's configuration can break."""

from __future__ import annotations

from typing import Any

import pytest

from labtester.findings import cause
from labtester.info import TargetInfo
from labtester.model import capacity
from labtester.scenarios.bursts.analyse import CapacityView, EndpointBursts, Point, burst_run
from labtester.scenarios.bursts.findings import endpoint_findings
from labtester.scenarios.bursts.served import path_wait, served
from labtester.stats import spread

RELEASE = 1_000.0


def info(
    execution: str = "workers", workers: int = 4, cores: int = 2, work: str = "cpu", admits: int | None = None
) -> TargetInfo:
    return TargetInfo.model_validate(
        {
            "admits_per_worker": admits,
            "name": "t",
            "framework": "flask",
            "server": "gunicorn",
            "workers": workers,
            "effective_cores": cores,
            "cores_source": "setting",
            "kernel": {"name": "k", "loops_per_iteration": 1, "max_iterations": 10, "work_cap_seconds": 1},
            "endpoints": {
                "e": {"name": "e", "path": "/e/{n}", "work": work, "execution": execution, "slots": workers}
            },
        }
    )


def record(
    cpu_s: list[float],
    makespan_s: float,
    *,
    pids: list[int] | None = None,
    others_s: float = 0.0,
    throttled_s: float = 0.0,
    steal_s: float = 0.0,
) -> dict[str, Any]:
    """A burst as the raw log holds it: requests released together, each finishing at the end."""
    pids = pids or list(range(len(cpu_s)))
    target_s = sum(cpu_s)
    requests = [
        {
            "sent_at": RELEASE,
            "received_at": RELEASE + makespan_s,
            "status": 200,
            "error": None,
            "body": {
                "started_at": RELEASE + 0.001 * (i + 1),
                "finished_at": RELEASE + makespan_s - 0.001,
                "duration_s": makespan_s,
                "cpu_s": c,
                "pid": pids[i],
            },
        }
        for i, c in enumerate(cpu_s)
    ]

    def snapshot(busy: float, steal: float, at: float) -> dict[str, Any]:
        return {"at": at, "busy_s": busy, "steal_s": steal, "cpus": 2, "tester_s": 0.0}

    return {
        "n": len(cpu_s),
        "repeat": 0,
        "phase": "burst",
        "released_at": RELEASE,
        "requests": requests,
        "machine": {
            "before": snapshot(100.0, 5.0, RELEASE),
            "after": snapshot(100.0 + target_s + others_s, 5.0 + steal_s, RELEASE + makespan_s),
        },
        "target_cpu": {
            "before": {"cpu_s": 10.0, "cgroup_cpu": {"throttled_s": 1.0}},
            "after": {"cpu_s": 10.0 + target_s, "cgroup_cpu": {"throttled_s": 1.0 + throttled_s}},
        },
    }


def judge(rec: dict[str, Any], target: TargetInfo) -> Any:
    endpoint = target.endpoints["e"]
    return burst_run(rec, endpoint, capacity(endpoint, target), None)


def test_a_burst_that_took_what_sharing_its_measured_work_allows_agrees() -> None:
    # 3 requests of 0.5 CPU s on 4 workers and 2 cores: 0.75 s, whatever T calibration found.
    run = judge(record([0.5, 0.5, 0.5], 0.76), info())
    assert run.verdict == "agrees" and run.model_s == pytest.approx(0.75)
    assert run.ratio == pytest.approx(0.76 / 0.75) and run.share == pytest.approx(0.75 / 0.76)


def test_a_slower_cpu_is_absorbed_by_the_measured_work() -> None:
    # The same requests on a CPU running 25 % slower measure 25 % more CPU seconds: still agrees.
    assert judge(record([0.625] * 3, 0.95), info()).verdict == "agrees"


@pytest.mark.parametrize(
    ("taker", "machine"),
    [
        ("other processes", {"others_s": 0.9}),
        ("steal by the hypervisor", {"steal_s": 0.9}),
        ("cgroup CPU throttling", {"throttled_s": 0.9}),
    ],
)
def test_a_burst_slowed_by_the_machine_is_interference_named_by_its_taker(taker: str, machine: Any) -> None:
    # The model allows 0.75 s on 2 cores; it took 1.2 s: 0.9 CPU s lost, all taken by `taker`.
    run = judge(record([0.5, 0.5, 0.5], 1.2, **machine), info())
    assert run.verdict == "interference" and run.cause == taker
    assert run.accounting is not None and run.accounting.lost_core_s == pytest.approx(0.9)


def test_a_slow_burst_the_machine_cannot_explain_departs() -> None:
    run = judge(record([0.5, 0.5, 0.5], 1.2, others_s=0.1), info())
    assert run.verdict == "departs" and run.cause is None


def departure_for(target: TargetInfo, n: int, most_on_one_process: int) -> str:
    return cause.departure(
        target.endpoints["e"],
        target,
        n=n,
        ratio=1.4,
        most_on_one_process=most_on_one_process,
        server_cpu_s=None,
        work_cpu_s=None,
        delivery_lag_s=None,
        makespan_s=1.0,
    )


def test_accept_fairness_is_blamed_only_where_several_worker_processes_take_requests() -> None:
    assert "accept fairness" in departure_for(info("workers", workers=4), n=3, most_on_one_process=2)
    # 3 requests over 2 gthread workers: 2 on one of them is the even spread, not unfairness.
    assert "accept fairness" not in departure_for(info("threads", workers=2), n=3, most_on_one_process=2)
    assert "accept fairness" in departure_for(info("threads", workers=2), n=3, most_on_one_process=3)
    # One gevent worker, a thread pool, an event loop: one process takes every request anyway.
    for execution, workers in (("greenlets", 1), ("thread_pool", 1), ("event_loop", 1), ("threads", 1)):
        assert "accept fairness" not in departure_for(
            info(execution, workers=workers), n=3, most_on_one_process=3
        )
    # Two event loops: each keeps the requests it took.
    assert "accept fairness" in departure_for(info("event_loop", workers=2), n=5, most_on_one_process=5)
    # A process pool spreads work itself: never the OS's accept.
    assert "accept fairness" not in departure_for(info("process_pool", workers=1), n=3, most_on_one_process=3)


def test_failed_requests_make_a_failed_run_with_nothing_inferred() -> None:
    rec = record([0.5, 0.5], 0.6)
    rec["requests"][1].update(status=None, error="connection reset", body=None)
    run = judge(rec, info())
    assert run.verdict == "failed" and run.failures == {"connection reset": 1} and run.model_s is None


def test_release_offset_spread_and_delivery_lag_come_from_the_servers_clocks() -> None:
    run = judge(record([0.5, 0.5, 0.5], 0.76), info())
    assert run.release_offset_s == pytest.approx(0.001)
    assert run.start_spread_s == pytest.approx(0.002)  # three starts, 1 ms apart, all before a finish
    assert run.delivery_lag_s == pytest.approx(0.001)


def test_a_worker_that_keeps_what_it_took_is_named_in_the_shape_not_a_departure() -> None:
    """Two event loops, one of which took 4 of 5 requests: the model runs them where they ran (4 x
    one, not 3 x), and the shape says why they waited there: a worker admits more connections
    than its loop runs, where the server says so."""
    target = info("event_loop", workers=2, admits=512)
    pids = [1, 1, 2, 1, 1]
    runs = [judge(record([0.5] * 5, 2.02, pids=pids), target) for _ in range(3)]
    assert {r.verdict for r in runs} == {"agrees"} and runs[0].model_s == pytest.approx(2.0)
    point = Point(
        n=5, runs=runs, makespan=spread([2.02] * 3), model_s=2.0, ratio=1.01, ratio_unhindered=1.01, overlap=2
    )
    endpoint = EndpointBursts(
        name="e",
        path="/e/{n}",
        work="cpu",
        execution="event_loop",
        slots=2,
        capacity=CapacityView(slots=2, cores=2, description=""),
        argument=1,
        single_s=0.5,
        baseline=[],
        points=[point],
        metrics=None,
        failures={},
    )
    (shape,) = endpoint_findings("t", target, endpoint)  # no departure beside it
    assert shape.kind == "shape"
    assert "one worker took 4 of the 5 requests where an even spread gives it 3" in shape.text
    assert "each worker admits up to 512 connections while it runs 1 request at a time" in shape.text
    (unsaid,) = endpoint_findings("t", info("event_loop", workers=2), endpoint)
    assert "accept fairness" in unsaid.text and "admits" not in unsaid.text
    # Threads that run all 4 at once: none waited on the worker, they shared its core.
    on_threads = endpoint.model_copy(update={"execution": "threads", "slots": 16})
    (shared,) = endpoint_findings("t", info("threads", workers=2, admits=512), on_threads)
    assert "accept fairness" in shared.text and "admits" not in shared.text


def header_request(started: float, cpu_s: float, app_s: float, pid: int, received: float) -> dict[str, Any]:
    """A reply as the raw log holds it when the response carried Server-Timing (no JSON body)."""
    return {
        "sent_at": RELEASE,
        "received_at": received,
        "status": 200,
        "error": None,
        "body": None,
        "cpu_s": cpu_s,
        "app_s": app_s,
        "pid": pid,
        "started_at": started,
    }


def app_info(execution: str, workers: int, slots: int | None) -> TargetInfo:
    fields = info(execution, workers=workers).model_dump()
    fields["endpoints"] = {
        "/search": {
            "name": "/search",
            "path": "/search",
            "work": "app",
            "execution": execution,
            "slots": slots,
        }
    }
    return TargetInfo.model_validate(fields)


def test_the_header_is_read_first_and_mixed_work_is_its_cpu_then_the_paths_wait() -> None:
    # 2 sync workers on 2 cores; each request 0.04 CPU s then 0.12 s of waiting, alone: 0.16 s.
    # 4 at once: the waits hold the workers, two rounds of 0.16 s.
    target = app_info("workers", 2, 2)
    endpoint = target.endpoints["/search"]
    alone = [header_request(RELEASE + 0.001, 0.04, 0.161, 1, RELEASE + 0.163)]
    wait = path_wait(alone)
    assert wait == pytest.approx(0.121)
    starts = [0.001, 0.002, 0.163, 0.164]
    requests = [
        header_request(RELEASE + s, 0.04, 0.161, 1 + i % 2, RELEASE + s + 0.162) for i, s in enumerate(starts)
    ]
    rec = {**record([0.04] * 4, 0.33), "requests": requests}
    run = burst_run(rec, endpoint, capacity(endpoint, target), None, wait)
    assert run.model_s == pytest.approx(2 * (0.04 + 0.121))
    assert run.cpu_s == pytest.approx(0.16) and run.distinct_pids == 2
    assert run.release_offset_s == pytest.approx(0.001) and run.max_overlap == 2


def test_a_reply_without_the_header_falls_back_to_the_body() -> None:
    # An older target: the body's start, finish and CPU, exactly as before the header existed.
    rec = record([0.5, 0.5, 0.5], 0.76)
    assert all(served(r) is not None and served(r).source == "body" for r in rec["requests"])  # type: ignore[union-attr]
    assert path_wait(rec["requests"]) is None
    assert judge(rec, info()).model_s == pytest.approx(0.75)


def test_each_clients_makespan_is_taken_on_its_own_clock() -> None:
    # Two clients, client 1's clock 5 s ahead of client 0's: its release and its replies both read
    # 5 s later. Each client's own release to its own last reply is 0.76 s; the skew is not a delay.
    two = record([0.5, 0.5, 0.5], 0.76)
    skew = 5.0
    two["requests"][2] |= {
        "client": 1,
        "sent_at": RELEASE + skew,
        "received_at": RELEASE + skew + 0.70,
    }
    two["releases"] = {"0": RELEASE, "1": RELEASE + skew}
    assert judge(two, info()).makespan_s == pytest.approx(0.76)
    two["requests"][2]["received_at"] = RELEASE + skew + 0.80  # client 1's last reply is the latest
    assert judge(two, info()).makespan_s == pytest.approx(0.80)
