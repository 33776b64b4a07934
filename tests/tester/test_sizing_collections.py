"""Full garbage collections in the sizing's model (sizing/events.py, proposal/fullgc.py): each stops
its process, only its own, as often as its requests set one off; a thread whose wait ended meanwhile
answers once it is over, an event loop's answer once the CPU ahead of it ran; a wait ending as a
stop ends is settled; a kind's demand grows by its collections; and on a waiting mix on threads they
raise the tail, not the rate."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from labtester.proposal.fullgc import collections_of, with_collections
from labtester.scenarios.flow.cost import PathAccount
from labtester.sizing.configuration import Configuration
from labtester.sizing.drawn import prepared
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import simulate

MS = 0.001
GTHREAD = Configuration("gthread", 2, 32, "per_worker", True)


def collecting(name: str, per_request: float, cpu_ms: float, **costs: float) -> RequestKind:
    return RequestKind(
        name, 1, full_collections_per_request=per_request, full_collection_cpu_s=cpu_ms * MS, **costs
    )


def latencies(
    kinds: list[RequestKind],
    config: Configuration,
    times: list[float],
    picked: list[int],
    phases: list[float] | None = None,
) -> list[float]:
    """Each request's latency, by its index; `phases`: each process's allocations toward its first
    collection (else the seed's)."""
    run = prepared(kinds, config, 2.0, list(times), list(picked), len(times))
    for process, phase in zip(run.processes, phases or [], strict=False):
        process.to_collect = phase
    run.serve()
    by_request = dict(zip(run.answered, run.latencies, strict=True))
    return [by_request[r] for r in range(len(times))]


def test_a_process_stops_as_often_as_its_requests_set_a_collection_off() -> None:
    # One process, a request every 100 ms (none meets another): every fourth sets one off.
    kind = collecting("/a", 0.25, 10, cpu_s=1 * MS, wait_s=0.0)
    times = [i * 0.1 for i in range(40)]
    served = latencies([kind], Configuration("sync", 1, 1, "shared", True), times, [0] * 40, [0.0])
    stopped = [i for i, latency in enumerate(served) if latency > 5 * MS]
    assert stopped == list(range(3, 40, 4))
    assert [served[i] for i in stopped] == pytest.approx([11 * MS] * 10)  # the collection, then its CPU
    assert [s for i, s in enumerate(served) if i not in stopped] == pytest.approx([1 * MS] * 30)


def test_a_collection_stops_only_its_own_process() -> None:
    # Two sync workers on a shared queue: the first request goes to the first worker, the second
    # (while it computes) to the second, whose allocations are then due (0.75 + 0.3).
    kind = collecting("/a", 0.3, 20, cpu_s=1 * MS, wait_s=0.0)
    sync = Configuration("sync", 2, 1, "shared", True)
    first, second = latencies([kind], sync, [0.0, 0.5 * MS], [0, 0], [0.0, 0.75])
    assert first == pytest.approx(1 * MS)  # computed through the other's stop
    assert second == pytest.approx(21 * MS)


def test_a_thread_whose_wait_ended_during_a_collection_answers_after_it() -> None:
    waits = RequestKind("/wait", 1, cpu_s=0.0, wait_s=5 * MS)
    one_process = Configuration("gthread", 1, 4, "per_worker", True)
    args = (one_process, [0.0, 1 * MS], [0, 1], [0.0])
    waited, collected = latencies([waits, collecting("/g", 1.0, 20, cpu_s=1 * MS, wait_s=0.0)], *args)
    assert waited == pytest.approx(21 * MS)  # its wait ended at 5 ms, inside the stop (1 ms to 21 ms)
    assert collected == pytest.approx(21 * MS)  # the stop, then its own CPU (from 1 ms to 22 ms)
    alone, _ = latencies([waits, RequestKind("/g", 1, cpu_s=1 * MS, wait_s=0.0)], *args)
    assert alone == pytest.approx(5 * MS)


def test_on_an_event_loop_an_answer_after_a_collection_waits_for_the_cpu_ahead_of_it() -> None:
    # Greenlets: the answer's CPU (the server's, 1 ms) after the wait runs once the stop is over,
    # behind the request that set it off (in turn: 21-22 ms, then 22-23 ms).
    waits = RequestKind("/wait", 1, cpu_s=0.0, wait_s=5 * MS, overhead_s=1 * MS)
    loop = Configuration("gevent", 1, 100, "per_worker", False)
    kinds = [waits, collecting("/g", 1.0, 20, cpu_s=1 * MS, wait_s=0.0)]
    waited, collected = latencies(kinds, loop, [0.0, 1 * MS], [0, 1], [0.0])
    assert collected == pytest.approx(21 * MS)
    assert waited == pytest.approx(23 * MS)
    unstopped, _ = latencies(
        [waits, RequestKind("/g", 1, cpu_s=1 * MS, wait_s=0.0)], loop, [0.0, 1 * MS], [0, 1]
    )
    assert unstopped == pytest.approx(6 * MS)


def test_a_wait_ending_as_a_collection_ends_is_answered_and_the_run_goes_on() -> None:
    # Exact in binary: the wait and the stop both end at 0.25 s (a tie the run must settle).
    waits = RequestKind("/wait", 1, cpu_s=0.0, wait_s=0.25)
    kinds = [waits, collecting("/g", 1.0, 250, cpu_s=0.125, wait_s=0.0)]
    one_process = Configuration("gthread", 1, 4, "per_worker", True)
    waited, collected, after = latencies(kinds, one_process, [0.0, 0.0, 0.5], [0, 1, 0], [0.0])
    assert waited == pytest.approx(0.25)
    assert collected == pytest.approx(0.375)
    assert after == pytest.approx(0.25)


def test_a_kinds_demand_grows_by_its_collections_and_nothing_else_moves() -> None:
    kind = RequestKind(
        "/a", 1, cpu_s=0.4 * MS, wait_s=0.05, overhead_s=0.1 * MS, cpu_spread_s=(0.3 * MS, 0.5 * MS)
    )
    stopping = with_collections(kind, 1 / 2350, 30 * MS)
    assert stopping.demand_s == pytest.approx(kind.demand_s + 30 * MS / 2350)
    assert stopping.cpu_spread_s == kind.cpu_spread_s and stopping.overhead_s == kind.overhead_s
    assert with_collections(kind, 0.0, 30 * MS) == kind


def flow(path: str, requests: int, collections: float | None, cpu_s: float | None) -> tuple[Any, Any]:
    account = PathAccount(
        requests=requests,
        process_cpu_per_request_s=0.001,
        request_cpu_per_request_s=0.0008,
        server_cpu_per_request_s=0.0002,
        no_request_cpu_per_request_s=0.0,
        full_collections_per_request=None if collections is None else collections / requests,
        full_collection_cpu_s=cpu_s,
        share=1.0,
        cores_per_process=1.0,
    )
    return None, SimpleNamespace(endpoint=path, account=account)


def test_a_paths_collections_are_its_flows_and_one_takes_the_mean_of_all_the_familys() -> None:
    flows = [flow("/a", 10_000, 2, 0.030), flow("/a", 30_000, 2, 0.020), flow("/b", 5_000, 4, 0.025)]
    per_request, cpu_s = collections_of(flows, "/a")
    assert per_request == pytest.approx(4 / 40_000)
    assert cpu_s == pytest.approx((2 * 0.030 + 2 * 0.020 + 4 * 0.025) / 8)
    assert collections_of(flows, "/b")[0] == pytest.approx(4 / 5_000)
    # None counted on the path (a server without the counter, or none ran): no stops.
    assert collections_of([flow("/a", 1_000, None, None)], "/a") == (0.0, 0.0)
    assert collections_of([flow("/a", 1_000, 0, None)], "/a") == (0.0, 0.0)


def test_stops_hold_the_tail_of_a_waiting_mix_on_threads_not_its_rate() -> None:
    # httpbin's /json and /delay/0.05 on gthread 2 x 32 at 1,690/s (2026-12-01): a full collection
    # every 2,350 requests a worker, 30 ms of CPU each; offered so, it measured p99 95-295 ms.
    json = RequestKind("/json", 1, cpu_s=0.3 * MS, wait_s=0.0, overhead_s=0.1 * MS)
    delay = RequestKind("/delay", 1, cpu_s=0.6 * MS, wait_s=0.05, overhead_s=0.2 * MS)
    without = simulate([json, delay], GTHREAD, 2.0, 1690, 30000)
    stopping = [with_collections(k, 1 / 2350, 30 * MS) for k in (json, delay)]
    stopped = simulate(stopping, GTHREAD, 2.0, 1690, 30000)
    assert stopped.p99_s > without.p99_s + 10 * MS
    assert stopped.served_per_s == pytest.approx(without.served_per_s, rel=0.02)
