"""A proof counts its own full garbage collections (sizing/collected.py): each answer carries its
process's count so far (Server-Timing `lab-gc`), so a run's answers tell how many ran in it, per
process and never across the gap between two runs; its warm-up's count, with the plan's beside it,
is what the prediction of its window stops the processes for."""

from __future__ import annotations

import random

import pytest

from labtester.load import Sample
from labtester.proposal.warmup import Warmup
from labtester.sizing import window
from labtester.sizing.collected import Counted, counted_in, measured_collections
from labtester.sizing.document import KindCost, Objective, PodSize, SizedSummary

MS = 0.001


def answer(
    pid: int, collections: int | None, cpu_s: float = 0.0, sent_s: float = 0.0, status: int | None = 200
) -> Sample:
    error = None if status == 200 else f"HTTP {status}" if status else "timeout"
    return Sample(
        "/a", sent_s, sent_s, 0.01, status, error, cpu_s=0.001, pid=pid,
        collections=collections, collections_cpu_s=cpu_s if collections is not None else None,
    )  # fmt: skip


def test_a_runs_collections_are_each_process_s_counter_moved_over_its_answers() -> None:
    # pid 1 answered 5 times and ran 2 (30 ms); pid 2 answered 4 times (one a 500, its headers the
    # lab's too) and ran 1 (20 ms); a request that timed out carries nothing; pid 3 answered once:
    # no stretch to count over.
    run = [
        answer(1, 10, 0.5), answer(2, 4, 0.1), answer(1, 11, 0.515), answer(1, 11, 0.515),
        answer(2, 5, 0.12), answer(1, 12, 0.53), answer(1, None, status=None), answer(2, 5, 0.12),
        answer(1, 12, 0.53), answer(3, 7, 0.2), answer(2, 5, 0.12, status=500),
    ]  # fmt: skip
    counted = counted_in(run)
    assert counted is not None
    assert (counted.collections, counted.answers) == (3, 4 + 3)
    assert counted.cpu_s == pytest.approx(0.05)


def test_two_runs_are_counted_apart_and_a_server_without_the_counter_has_none() -> None:
    # Between the runs pid 1 ran 40 collections (another load, its drain): not in either run.
    first, second = [answer(1, 0), answer(1, 1)], [answer(1, 41), answer(1, 41), answer(1, 42)]
    counted = counted_in(first, second)
    assert counted == Counted(2, 0.0, 3)
    assert counted_in([answer(1, None), answer(1, None)]) is None
    assert counted_in([answer(1, 3), answer(2, 4)]) is None  # no process answered twice


def kind(per_request: float, cpu_s: float, weight: float = 1.0, name: str = "/a") -> KindCost:
    return KindCost(
        name=name, weight=weight, cpu_s=0.3 * MS, wait_s=0.0, overhead_s=0.1 * MS, cores_per_process=1,
        full_collections_per_request=per_request, full_collection_cpu_s=cpu_s,
    )  # fmt: skip


def test_the_plans_figure_weighs_two_collections_beside_what_a_proof_counted() -> None:
    # The plan: one in 4,650 of 30 ms on /a, none on /b (equal weights): one in 9,300 over the mix.
    plan = [kind(1 / 4650, 0.030), kind(0.0, 0.0, name="/b")]
    # A warm-up's 6,000 answers with none counted: not taken for none running.
    none_seen = measured_collections(Counted(0, 0.0, 6000), plan)
    assert none_seen is not None
    assert none_seen[0] == pytest.approx(2 / (6000 + 2 * 9300))
    assert none_seen[1] == pytest.approx(0.030)
    # A whole run's 40,000 with 16 of 40 ms: its own count decides.
    many = measured_collections(Counted(16, 0.640, 40000), plan)
    assert many is not None
    assert many[0] == pytest.approx(18 / (40000 + 2 * 9300))
    assert 1 / 3300 < many[0] < 1 / 2500
    assert many[1] == pytest.approx((0.640 + 2 * 0.030) / 18)
    # Alone (a window's own, to explain it): what was counted.
    assert measured_collections(Counted(16, 0.640, 40000), plan, worth=0.0) == pytest.approx(
        (16 / 40000, 0.040)
    )
    # A plan that counted none: the proof's alone; nothing counted: the plan's.
    assert measured_collections(Counted(3, 0.09, 6000), [kind(0.0, 0.0)]) == pytest.approx((3 / 6000, 0.03))
    assert measured_collections(None, plan) is None


def test_a_collections_cpu_is_its_processs_whichever_kind_set_it_off() -> None:
    # The plan: /a one in 4,650 of 30 ms, /b none; counted: one in 2,000 of 40 ms over the mix. /a
    # keeps the plan's share of them (all: one in 1,000 of its own), each 40 ms, not scaled by a
    # mean over kinds that ran none.
    plan = [kind(1 / 4650, 0.030), kind(0.0, 0.0, name="/b")]
    a, b = window.measured_kinds(plan, {}, collections=(1 / 2000, 0.040))
    assert a.full_collections_per_request == pytest.approx(1 / 1000) and b.full_collections_per_request == 0
    assert a.full_collection_cpu_s == pytest.approx(0.040)
    # A plan that counted none: every kind alike, as counted.
    none_planned = [kind(0.0, 0.0), kind(0.0, 0.0, name="/b")]
    for each in window.measured_kinds(none_planned, {}, collections=(1 / 2000, 0.040)):
        assert each.full_collections_per_request == pytest.approx(1 / 2000)
        assert each.full_collection_cpu_s == pytest.approx(0.040)


def gthread_plan(per_request: float) -> SizedSummary:
    """httpbin's /json and /delay/0.05 on gthread 2 x 32, as the flows measured them, with one full
    collection every 1 / `per_request` requests of 30 ms."""
    json_kind, delay_kind = (
        KindCost(
            name=name, weight=1, cpu_s=cpu_s, wait_s=wait_s, overhead_s=0.1 * MS, cores_per_process=1,
            full_collections_per_request=per_request, full_collection_cpu_s=0.030,
        )
        for name, cpu_s, wait_s in (("/json", 0.3 * MS, 0.0), ("/delay/0.05", 0.3 * MS, 0.05))
    )  # fmt: skip
    return SizedSummary(
        role="proposed", family="gthread", server="gunicorn", label="gunicorn gthread, 2 x 32",
        processes=2, threads=32, env={}, memory_bytes=0, accept="per_worker", preemptive=True,
        sustainable_per_s=1700.0, predicted_p99_s=0.0,
        pod=PodSize(cores=2, memory_bytes=1 << 30, source="test"),
        objective=Objective(p99_s=0.1, why="test"), kinds=[json_kind, delay_kind],
    )  # fmt: skip


def warm_up(summary: SizedSummary, every: int | None) -> Warmup:
    """A warm-up of 4 s at 1,700/s whose answers counted one full collection every `every`
    requests over the two processes (None: a server without the counter), predicted after it."""
    warmup = Warmup(summary, 1700.0, 20.0, lambda: None)
    draw, answers, ran = random.Random(5), [], [0, 0]
    for i in range(int(1700 * warmup.ends_s)):
        pid = draw.randrange(2)
        if every and i % every == every - 1:
            ran[pid] += 1
        answers.append(answer(pid, ran[pid] if every else None, 0.030 * ran[pid], i / 1700))
    warmup.end(lambda: warmup.ends_s)
    warmup.after(answers, 0.0)
    return warmup


def test_a_warm_up_that_counted_more_collections_than_planned_predicts_a_longer_tail() -> None:
    summary = gthread_plan(1 / 4650)
    planned, doubled = warm_up(summary, None), warm_up(summary, 2350)
    assert planned.made["full_collections_per_request"] is None  # not counted: the plan's stand
    counted = doubled.made["full_collections_per_request"]
    assert 1 / 4650 < counted < 1 / 2350  # the warm-up's 2 in 5,000ish, the plan's worth two beside
    assert doubled.made["predicted_p99_s"] > planned.made["predicted_p99_s"], (doubled.made, planned.made)
    assert doubled.made["predicted_per_s"] == pytest.approx(planned.made["predicted_per_s"], rel=0.02)
