"""What a proof run's requests tell about how a kind's CPU moves with the requests beside it, and
the kinds a proof's measured figures make."""

from __future__ import annotations

from labtester.load import Sample
from labtester.sizing.document import KindCost
from labtester.sizing.kinds import FEWEST
from labtester.sizing.window import measured_kinds, shared_cpu_ratio

REPORT = KindCost(name="/report", weight=1, cpu_s=0.14, wait_s=0.0, overhead_s=0.0005, cores_per_process=1.0)
CHECKOUT = KindCost(
    name="/checkout", weight=1, cpu_s=0.002, wait_s=0.15, overhead_s=0.0005, cores_per_process=1.0
)


def request(path: str, pid: int, started_at: float, app_s: float, cpu_s: float) -> Sample:
    return Sample(path, 0.0, 0.0, app_s, 200, None, cpu_s=cpu_s, app_s=app_s, pid=pid, started_at=started_at)


def alone(count: int, pid: int = 1) -> list[Sample]:
    """/report requests one after another in one process: 140 ms of CPU each."""
    return [request("/report", pid, 10.0 + n, 0.15, 0.14) for n in range(count)]


def beside(pairs: int, pid: int = 2) -> list[Sample]:
    """Two /report at once in one process for all their time: 300 ms of CPU each."""
    return [request("/report", pid, 30.0 + n, 0.6, 0.30) for n in range(pairs) for _ in range(2)]


def test_a_kinds_cpu_beside_another_computing_request_of_its_process_over_alone_in_it() -> None:
    assert FEWEST == 5  # the counts below sit at its edge, so a request put on the wrong side shows
    assert shared_cpu_ratio([REPORT], alone(5) + beside(3)) == {"/report": 0.30 / 0.14}
    assert shared_cpu_ratio([REPORT], alone(4) + beside(3)) == {}  # 4 alone: too few to say


def test_beside_another_process_or_a_waiting_request_is_alone_in_its_own() -> None:
    other_process = [request("/report", 3, 50.0, 0.15, 0.14), request("/report", 4, 50.0, 0.15, 0.14)]
    assert shared_cpu_ratio([REPORT], alone(3) + other_process + beside(3)) == {"/report": 0.30 / 0.14}
    waiting = [request("/report", 5, 70.0, 0.15, 0.14), request("/checkout", 5, 70.0, 0.15, 0.002)]
    assert shared_cpu_ratio([REPORT, CHECKOUT], alone(4) + waiting + beside(3)) == {"/report": 0.30 / 0.14}


def test_a_request_beside_another_for_less_than_half_its_time_is_on_neither_side() -> None:
    # Two /report overlapping 0.1 s of their 0.5 s: not alone, not beside.
    partly = [request("/report", 6, 90.0, 0.5, 0.2), request("/report", 6, 90.4, 0.5, 0.2)]
    two_pairs = beside(2)  # 4 beside: one short of FEWEST, so the partly-overlapping would tip it
    assert shared_cpu_ratio([REPORT], alone(5) + two_pairs + partly) == {}
    assert shared_cpu_ratio([REPORT], alone(4) + partly + beside(3)) == {}  # nor alone


def test_a_kind_that_mostly_waits_gets_no_ratio() -> None:
    waits = [request("/checkout", 1, 10.0 + n, 0.15, 0.002) for n in range(6)]
    waits += [request("/checkout", 2, 30.0 + n, 0.15, 0.004) for n in range(6) for _ in range(2)]
    assert shared_cpu_ratio([CHECKOUT], waits) == {}


def test_time_with_company_counts_once_however_many_kept_it() -> None:
    # A in the app 0-1 s; B and C both beside it for the same 0.3 s: 30 % of A's time, not 60 %.
    trio = [request("/report", 7, 100.0, 1.0, 0.9), request("/report", 7, 100.0, 0.3, 0.9)]
    trio.append(request("/report", 7, 100.0, 0.3, 0.9))
    # B and C are each beside the others all their time: 2 beside; A is on neither side.
    assert shared_cpu_ratio([REPORT], alone(5) + beside(1) + trio) == {}  # 2 + 2 beside: too few
    assert shared_cpu_ratio([REPORT], alone(5) + beside(2) + trio) == {"/report": 0.30 / 0.14}  # 4 + 2


def test_a_neighbour_outside_the_measured_requests_still_keeps_one_company() -> None:
    # The window's requests alone, but each began beside a warm-up request of its process.
    window = alone(5) + [request("/report", 8, 200.0 + n, 0.6, 0.30) for n in range(5)]
    warmup = [request("/report", 8, 200.0 + n, 0.6, 0.30) for n in range(5)]
    assert shared_cpu_ratio([REPORT], window) == {}  # seen alone: 10 alone, 0 beside
    assert shared_cpu_ratio([REPORT], window, window + warmup) == {"/report": 0.30 / 0.14}


def test_a_request_whose_response_said_no_process_or_time_is_left_out() -> None:
    unplaced = [Sample("/report", 0.0, 0.0, 0.1, 200, None, cpu_s=9.0) for _ in range(6)]
    unplaced += [request("/report", 9, 300.0, 0.0, 9.0) for _ in range(6)]  # no time in the app
    assert shared_cpu_ratio([REPORT], alone(5) + beside(3) + unplaced) == {"/report": 0.30 / 0.14}


def test_the_servers_and_the_clients_cpu_measured_over_the_mix_keep_each_kinds_share_of_it() -> None:
    # The plan: /report costs the server 1.5 ms a request, /checkout 0.5 (a mean of 1 ms), and the
    # client 0.2 and 0.1; the proof measured 2 ms and 0.3 over the mix: each kind's, twice its own.
    plan = [
        REPORT.model_copy(update={"overhead_s": 0.0015, "client_s": 0.0002}),
        CHECKOUT.model_copy(update={"overhead_s": 0.0005, "client_s": 0.0001}),
    ]
    report, checkout = measured_kinds(plan, {}, overhead_s=0.002, client_s=0.0003)
    assert (report.overhead_s, checkout.overhead_s) == (0.003, 0.001)
    assert (round(report.client_s, 9), round(checkout.client_s, 9)) == (0.0004, 0.0002)
    # Where the plan had none, each kind takes the measured figure; unmeasured, the plan's stands.
    none = [k.model_copy(update={"overhead_s": 0.0, "client_s": 0.0}) for k in plan]
    assert {k.overhead_s for k in measured_kinds(none, {}, overhead_s=0.002)} == {0.002}
    assert [k.overhead_s for k in measured_kinds(plan, {})] == [0.0015, 0.0005]
