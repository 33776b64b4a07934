"""A request's CPU by the company it keeps in its process (sizing/overlap.py): measured from the
flows (their requests alone, their ramp, their load), drawn in the simulation at the company each
request meets as it starts."""

from __future__ import annotations

import math

import pytest

from labtester.load import Sample
from labtester.proposal.spreads import spread_of
from labtester.rawlog import Record
from labtester.scenarios.common import encode
from labtester.sizing.configuration import Configuration
from labtester.sizing.document import KindCost
from labtester.sizing.kinds import FEWEST, RequestKind
from labtester.sizing.model import ceiling_per_s, simulate
from labtester.sizing.overlap import FEWEST_AT, Company, at, curve_of
from labtester.sizing.window import measured_kinds, measured_ratios, scaled_kinds, used_ratio


def in_app(start: float, app_s: float, cpu_s: float, pid: int = 1, path: str = "/p") -> Sample:
    return Sample(path, start, start, app_s, 200, None, cpu_s=cpu_s, app_s=app_s, pid=pid, started_at=start)


def test_company_is_the_others_of_its_process_in_the_app_on_average_over_its_time() -> None:
    one = in_app(0.0, 1.0, 0.1)
    half = in_app(0.5, 1.0, 0.1)  # beside `one` for its second half
    whole = in_app(0.0, 1.0, 0.1)  # beside `one` throughout
    elsewhere = in_app(0.0, 1.0, 0.1, pid=2)  # another process's: no company
    company = Company([one, half, whole, elsewhere])
    assert company.others(one) == pytest.approx(1.5)
    assert company.others(half) == pytest.approx(1.0)  # each of the two for its first half
    assert company.others(elsewhere) == 0.0
    assert company.share(one) == pytest.approx(1.0)  # the union: someone beside it all along
    assert company.others(Sample("/p", 0.0, 0.0, 1.0, 200, None)) is None  # no pid, start or time


def test_the_curve_holds_a_point_per_bucket_of_company_measured_often_enough() -> None:
    alone = [(0.0, 0.30)] * FEWEST_AT
    beside_two = [(1.8, 0.20), (2.2, 0.22)] + [(2.0, 0.21)] * (FEWEST_AT - 2)
    crowded = [(30.0, 0.18)] * (FEWEST_AT - 1)  # too few to be a point
    curve = curve_of(alone + beside_two + crowded)
    assert [c for c, _ in curve] == [0.0, pytest.approx(2.0)]
    assert [cpu for _, cpu in curve] == [0.30, pytest.approx(0.21)]
    assert curve_of(alone + crowded) == ()  # one point is no curve
    # Between points, linear in log(1 + company); flat beyond the company measured.
    assert at(curve, 0.0) == 0.30 and at(curve, 40.0) == pytest.approx(0.21)
    middle = math.expm1((math.log1p(0.0) + math.log1p(2.0)) / 2)
    assert at(curve, middle) == pytest.approx((0.30 + 0.21) / 2)


def flow(loaded: list[Sample], alone: list[Sample]) -> Record:
    return {
        "type": "scenario", "scenario": "flow", "kind": "run", "target": "uvicorn", "endpoint": "/p",
        "samples": encode(loaded), "baseline": encode(alone),
    }  # fmt: skip


def test_a_flows_requests_alone_and_under_load_give_the_paths_cpu_by_company() -> None:
    # Alone (the baseline, but its first request) 80 ms; four at a time in one process, 250 ms.
    alone = [in_app(10.0 * i, 0.1, 0.08) for i in range(5)]
    loaded = [in_app(100.0 + i // 4, 1.0, 0.25) for i in range(20)]  # 5 rounds of 4 together
    measured = spread_of([flow(loaded, alone)], "/p", ["uvicorn"])
    assert [c for c, _ in measured.cpu_by_company] == [0.0, pytest.approx(3.0)]
    assert [cpu for _, cpu in measured.cpu_by_company] == [pytest.approx(0.08), pytest.approx(0.25)]
    assert sum(measured.cpu_s) / len(measured.cpu_s) == pytest.approx(0.25)  # the spread: under load


def kind(curve: tuple[tuple[float, float], ...] = ()) -> RequestKind:
    # 20 ms of CPU under load (the spread's mean), and 30 ms of waiting.
    return RequestKind("/p", 1, 0.02, 0.03, cpu_spread_s=(0.02,) * 9, cpu_by_company=curve)


THREADS = Configuration("gthread", 1, 8, "per_worker", True)
SYNC = Configuration("sync", 2, 1, "shared", True)


def p99(config: Configuration, curve: tuple[tuple[float, float], ...]) -> float:
    return simulate([kind(curve)], config, 2.0, 30.0, 3000).p99_s


def test_each_simulated_request_costs_the_cpu_of_the_company_it_meets() -> None:
    # Threads in one process meet company: from the same 20 ms alone, CPU that grows with it
    # queues them longer, CPU that falls with it shorter, than CPU that does not move.
    rising = ((0.0, 0.02), (4.0, 0.05))
    falling = ((0.0, 0.02), (4.0, 0.005))
    flat = p99(THREADS, ())
    assert p99(THREADS, falling) < flat < p99(THREADS, rising)
    # A sync worker serves one request at a time: every request is alone in its process, and costs
    # the curve's CPU alone (here the spread's mean: the same run as without a curve).
    assert p99(SYNC, rising) == p99(SYNC, ())
    assert p99(SYNC, ((0.0, 0.04), (4.0, 0.05))) > p99(SYNC, ())


def test_the_cpu_a_proof_used_is_set_against_what_the_plan_drew_at_the_company_it_kept() -> None:
    # The plan drew 250 ms on average (the flows, in company), 80 ms alone. A proof's requests alone
    # that used 80 ms used what the plan drew for them; three at a time, 214.7 ms (in log(1 +
    # company), 2 others is 0.79 of the way from 80 at 0 to 250 at 3): 1.0 as well. Without the
    # curve, against the mean.
    curve = [[0.0, 0.08], [3.0, 0.25]]
    planned = KindCost(name="/p", weight=1, cpu_s=0.08, wait_s=0.0, overhead_s=0.0, cores_per_process=1,
                       cpu_spread_s=[0.25] * 9, cpu_by_company=curve)  # fmt: skip
    alone = [in_app(10.0 * i, 0.1, 0.08) for i in range(5)]
    threes = [in_app(100.0 + i // 3, 1.0, 0.21468) for i in range(9)]
    assert used_ratio([planned], alone) == pytest.approx(1.0)
    assert used_ratio([planned], threes) == pytest.approx(1.0, rel=1e-3)
    flat = planned.model_copy(update={"cpu_by_company": []})
    assert used_ratio([flat], alone) == pytest.approx(0.08 / 0.25)
    # Its company is among the run's requests it is given (a proof's whole run), not only those judged.
    assert used_ratio([planned], threes[:1], threes) == pytest.approx(1.0, rel=1e-3)
    assert used_ratio([planned], threes[:1]) == pytest.approx(0.21468 / 0.08)
    # Where the proof measured a kind's CPU, that is what its own run's prediction draws, at the
    # company it met: the curve goes; a kind it did not measure keeps it.
    (measured,) = measured_kinds([planned], {"/p": [0.2] * FEWEST})
    (kept,) = measured_kinds([planned], {})
    assert measured.cpu_by_company == () and kept.cpu_by_company == ((0.0, 0.08), (3.0, 0.25))


def test_a_resizing_draws_the_cpu_proofs_used_moving_with_company_as_the_flows_did() -> None:
    # The plan: /p 80 ms alone, 250 ms beside 3 others; /q 10 ms, no curve. A proof's /p requests,
    # three at a time, used 1.2x what the plan drew for them there; it answered too few /q to say.
    curve = [[0.0, 0.08], [3.0, 0.25]]
    p = KindCost(name="/p", weight=1, cpu_s=0.08, wait_s=0.0, overhead_s=0.0, cores_per_process=1,
                 cpu_spread_s=[0.25] * 9, cpu_by_company=curve)  # fmt: skip
    q = p.model_copy(update={"name": "/q", "cpu_s": 0.01, "cpu_spread_s": [0.01] * 9, "cpu_by_company": []})
    threes = [in_app(100.0 + i // 3, 1.0, 0.21468 * 1.2) for i in range(9)]
    few = [in_app(200.0 + i, 0.1, 0.05, path="/q") for i in range(FEWEST - 1)]
    together, ratios = measured_ratios([p, q], threes + few)
    assert list(ratios) == ["/p"] and ratios["/p"] == pytest.approx(1.2, rel=1e-3)
    assert together == ratios["/p"]  # over the kinds measured enough: /q's few are left out
    # A re-sized configuration may meet other company than the proof's (another process count):
    # each request there draws 1.2x the plan's CPU at its company, alone as in company.
    scaled, kept = scaled_kinds([p, q], ratios)
    near = {"rel": 1e-3}
    assert scaled.cpu_by_company == (pytest.approx((0.0, 0.096), **near), pytest.approx((3.0, 0.3), **near))
    assert scaled.mean_cpu_s == pytest.approx(0.3, **near) and scaled.cpu_s == pytest.approx(0.096, **near)
    assert [scaled.cpu_scale(n) for n in (0, 3)] == [pytest.approx(0.32), pytest.approx(1.0)]
    assert kept == measured_kinds([q], {})[0]
    assert scaled_kinds([p, q], {}) == measured_kinds([p, q], {})


def test_a_ceiling_is_at_the_company_where_a_request_costs_least() -> None:
    # Little's law's bound on a configuration: 20 ms alone where the spread says 50 ms under load,
    # so one core serves up to 50/s, not 20/s; a curve that never goes below the mean moves nothing.
    rising = RequestKind(
        "/p", 1, 0.02, 0.0, cpu_spread_s=(0.05,) * 9, cpu_by_company=((0.0, 0.02), (8.0, 0.08))
    )
    flat = RequestKind("/p", 1, 0.02, 0.0, cpu_spread_s=(0.05,) * 9)
    one = Configuration("uvicorn", 1, None, "per_worker", False)
    assert ceiling_per_s([rising], one, 1.0) == pytest.approx(50.0)
    assert ceiling_per_s([flat], one, 1.0) == pytest.approx(20.0)
    above = RequestKind(
        "/p", 1, 0.02, 0.0, cpu_spread_s=(0.05,) * 9, cpu_by_company=((0.0, 0.06), (8.0, 0.08))
    )
    assert ceiling_per_s([above], one, 1.0) == pytest.approx(20.0)


def test_a_request_whose_process_is_not_known_is_in_the_spread_and_not_on_the_curve() -> None:
    alone = [in_app(10.0 * i, 0.1, 0.08) for i in range(5)]
    loaded = [in_app(100.0 + i // 4, 1.0, 0.25) for i in range(20)]
    unknown = [Sample("/p", 0.0, 0.0, 1.0, 200, None, cpu_s=0.9, app_s=1.0)] * 5  # no pid
    measured = spread_of([flow(loaded + unknown, alone)], "/p", ["uvicorn"])
    assert max(measured.cpu_s) == pytest.approx(0.9)
    assert [cpu for _, cpu in measured.cpu_by_company] == [pytest.approx(0.08), pytest.approx(0.25)]
