"""The app's conclusion from its flows: each path's cost, every configuration beside Little's law,
and the recommendation (the highest rate at an acceptable p99 on every path)."""

from __future__ import annotations

from typing import Any

import pytest

from labtester.results import Results, RunInfo, TargetResult
from labtester.scenarios import SHAPES
from labtester.scenarios.flow.advice import cost
from labtester.scenarios.flow.analyse import FlowSummary, PathFlow
from labtester.scenarios.flow.conclude import AppConclusion, app_conclusion
from labtester.scenarios.flow.cost import PathAccount
from labtester.scenarios.flow.prediction import Prediction
from labtester.scenarios.flow.settings import FlowSettings


def flow(
    path: str, rate: float, p99: float, *, slots: float | None, failures: dict[str, int] | None = None
) -> PathFlow:
    prediction = Prediction(
        per_request_s=0.16,
        slots=slots,
        cpu_per_request_s=0.04,
        cores=2,
        cores_free=2,
        per_s=rate,
        binding="slots",
    )
    return PathFlow(
        endpoint=path,
        path=path,
        params=FlowSettings(),
        wall_s=10,
        requests=int(rate * 10),
        failures=failures or {},
        requests_per_s=rate,
        steady_from_s=1,
        latency_s={"p50": p99 / 2, "p99": p99} if rate else {},
        prediction=prediction,
        over_time=[],
        cpu_s=0.04,
        wait_s=0.12,
    )


def results(flows: dict[str, list[PathFlow]], **settings: Any) -> Results:
    targets = [
        TargetResult(
            name=name,
            url="http://x",
            measure=True,
            ready=True,
            info=None,
            scenarios={"flow": FlowSummary(flows=f)},
        )
        for name, f in flows.items()
    ]
    run = RunInfo(
        id="r",
        started_at=0,
        finished_at=1,
        status="complete",
        settings={"app": "shop:app", "paths": ["/a"], **settings},
    )
    return Results(run=run, stability=None, targets=targets)


def conclude(found: Results) -> AppConclusion:
    conclusion = app_conclusion(found)
    assert conclusion is not None
    return conclusion


def test_the_highest_rate_whose_p99_is_within_twice_the_best_is_recommended() -> None:
    found = results(
        {
            "sync-1x": [flow("/a", 12, 1.2, slots=2)],
            "gthread": [flow("/a", 48, 0.30, slots=16)],
            "gevent": [flow("/a", 50, 0.70, slots=200)],  # faster, but its p99 is 2.3x the best
        }
    )
    conclusion = conclude(found)
    (path,) = conclusion.paths
    assert [c.target for c in path.configurations] == ["gevent", "gthread", "sync-1x"]
    assert path.best_p99_s == pytest.approx(0.30) and [c.acceptable for c in path.configurations] == [
        False,
        True,
        False,
    ]
    assert conclusion.recommendation is not None and conclusion.recommendation.target == "gthread"
    # The knob: with 3x the best p99 acceptable, gevent's rate wins.
    assert conclude(results(found_flows(found), acceptable_p99=3)).recommendation.target == "gevent"  # type: ignore[union-attr]


def found_flows(found: Results) -> dict[str, list[PathFlow]]:
    return {t.name: t.scenarios["flow"].flows for t in found.targets}  # type: ignore[attr-defined]


def test_every_path_weighs_and_one_that_errs_everywhere_is_left_out() -> None:
    found = results(
        {
            "sync-1x": [
                flow("/a", 10, 0.5, slots=2),
                flow("/b", 90, 0.2, slots=2),
                flow("/x", 0, 0, slots=2, failures={"HTTP 500": 9}),
            ],
            "gthread": [
                flow("/a", 40, 0.5, slots=16),
                flow("/b", 60, 0.2, slots=16),
                flow("/x", 0, 0, slots=16, failures={"HTTP 500": 9}),
            ],
        }
    )
    conclusion = conclude(found)
    assert [p.path for p in conclusion.paths] == ["/a", "/b"] and conclusion.unanswered == ["/x"]
    # gthread: 1.0 and 0.67 of the best rates; sync-1x: 0.25 and 1.0: the geometric mean picks gthread.
    assert conclusion.recommendation is not None and conclusion.recommendation.target == "gthread"
    assert conclusion.recommendation.score == pytest.approx((1.0 * 60 / 90) ** 0.5)


def test_a_configuration_that_fails_requests_is_never_acceptable() -> None:
    found = results(
        {"a": [flow("/a", 50, 0.3, slots=4, failures={"timeout": 2})], "b": [flow("/a", 20, 0.5, slots=4)]}
    )
    conclusion = conclude(found)
    assert conclusion.paths[0].best_p99_s == pytest.approx(0.5)
    assert conclusion.recommendation is not None and conclusion.recommendation.target == "b"


def test_the_ceiling_and_why_from_littles_law_for_the_configuration_alone() -> None:
    # 2 slots held 0.16 s: 12.5/s; 2 cores over 0.04 CPU s: 50/s. The slots bind.
    (served,) = conclude(results({"sync-1x": [flow("/a", 12, 1.2, slots=2)]})).paths[0].configurations
    assert served.ceiling_per_s == pytest.approx(12.5) and served.ceiling_binding == "slots"
    assert served.why == "its 2 slots, each held 160 ms a request"
    (served,) = conclude(results({"gevent": [flow("/a", 48, 0.5, slots=200)]})).paths[0].configurations
    assert served.ceiling_per_s == pytest.approx(50) and served.ceiling_binding == "cpu"
    assert served.why == "its 2 cores at 40 ms of CPU a request"


def test_the_recommendation_is_the_first_answer_with_its_numbers() -> None:
    found = results({"sync-1x": [flow("/a", 12, 1.2, slots=2)], "gthread": [flow("/a", 48, 0.3, slots=16)]})
    found.conclusions = {"flow": conclude(found)}
    answers = SHAPES["flow"].answers(found)
    assert [a.key for a in answers] == ["app-recommendation", "app-a"]
    recommendation, path = answers
    assert recommendation.question == "How should shop:app be served?" and recommendation.answer.startswith(
        "gthread"
    )
    assert (
        "/a: gthread 48.0/s at p99 0.30 s (the best); predicted ceiling 50.0/s, bound by its 2 cores"
        in recommendation.evidence
    )
    assert path.answer.startswith(
        "/a used 40 ms of CPU and waited 120 ms alone: it was served at gthread 48.0/s, sync-1x 12.0/s"
    )


def test_where_none_is_acceptable_everywhere_the_one_that_came_closest_is_named_with_a_caveat() -> None:
    found = results(
        {
            # Acceptable on /a and /c, but /b's p99 is 6x the best: the most paths, the worst tail.
            "sync-2x": [
                flow("/a", 24, 0.5, slots=4),
                flow("/b", 40, 0.6, slots=4),
                flow("/c", 20, 0.5, slots=4),
            ],
            "gthread": [
                flow("/a", 19, 1.2, slots=16),
                flow("/b", 119, 0.25, slots=16),
                flow("/c", 20, 0.6, slots=16),
            ],
            "gevent": [
                flow("/a", 10, 4.0, slots=200),
                flow("/b", 116, 0.1, slots=200),
                flow("/c", 9, 0.5, slots=200),
            ],
        }
    )
    conclusion = conclude(found)
    # gthread misses 2x on /a and /b, by the least: its worst p99 is 2.5x the best (sync-2x's 6x,
    # gevent's 8x), though sync-2x is acceptable on more paths and gevent has the best rates on /b.
    assert conclusion.recommendation is not None and conclusion.recommendation.target == "gthread"
    assert conclusion.recommendation.beyond == ["/a", "/b"]
    assert conclusion.recommendation.worst_p99_ratio == pytest.approx(2.5)
    found.conclusions = {"flow": conclusion}
    (answer, *_) = SHAPES["flow"].answers(found)
    assert (
        answer.answer.startswith("gthread, with a caveat:")
        and "came closest, at most 2.5x the best" in answer.answer
    )
    assert answer.answer.endswith("but not within 2x on /a, /b.")


def test_a_path_every_configuration_failed_is_named_with_its_counts_not_left_out() -> None:
    found = results(
        {
            "sync-1x": [flow("/a", 12, 1.2, slots=2), flow("/x", 8, 0.9, slots=2, failures={"timeout": 3})],
            "gthread": [
                flow("/a", 48, 0.3, slots=16),
                flow("/x", 30, 0.4, slots=16, failures={"HTTP 500": 2, "reset": 1}),
            ],
        }
    )
    conclusion = conclude(found)
    assert conclusion.unanswered == ["/x"] and [p.path for p in conclusion.failed] == ["/x"]
    counts = {s.target: (s.requests, s.failed, s.error_answers) for s in conclusion.failed[0].configurations}
    assert counts == {"sync-1x": (80, 3, 0), "gthread": (300, 1, 2)}
    found.conclusions = {"flow": conclusion}
    answers = SHAPES["flow"].answers(found)
    assert [a.key for a in answers] == ["app-recommendation", "app-a", "app-x"]
    recommendation, _, failed = answers
    said = (
        "/x failed on every configuration (sync-1x 3 of 80 failed; gthread 1 of 300 failed, 2 error answers)"
    )
    assert recommendation.answer.startswith("gthread") and f"It leaves out {said}" in recommendation.answer
    assert failed.answer == f"Not measured: {said}."


def test_with_every_path_failed_the_recommendation_says_so() -> None:
    found = results({"sync-1x": [flow("/x", 8, 0.9, slots=2, failures={"timeout": 3})]})
    found.conclusions = {"flow": conclude(found)}
    (recommendation, failed) = SHAPES["flow"].answers(found)
    assert recommendation.answer == (
        "No recommendation: no path was served without failures. "
        "/x failed on every configuration (sync-1x 3 of 80 failed)."
    )
    assert failed.key == "app-x"


def test_where_the_cpu_was_not_accounted_for_the_answers_say_lower_bound_and_at_most() -> None:
    found = results({"gevent": [flow("/a", 48, 0.5, slots=200)]})
    account = PathAccount(
        requests=480,
        process_cpu_per_request_s=0.1,
        request_cpu_per_request_s=0.04,
        server_cpu_per_request_s=0.0003,
        no_request_cpu_per_request_s=0.0,
        share=0.403,
        cores_per_process=0.9,
    )
    found.targets[0].scenarios["flow"].flows[0].account = account  # type: ignore[attr-defined]
    found.conclusions = {"flow": conclude(found)}
    recommendation, path = SHAPES["flow"].answers(found)
    assert "Its CPU per request is a lower bound on /a" in recommendation.answer
    assert (
        "predicted ceiling at most 50.0/s" in recommendation.evidence
        and "only 40 %" in recommendation.evidence
    )
    assert "Its CPU per request is a lower bound on gevent" in path.answer and "gevent 40 %" in path.evidence


def test_a_path_that_runs_its_cpu_in_threads_says_so_with_the_share() -> None:
    # Two configurations: 95 % and 99 % of the path's CPU ran in threads it handed work to (an ASGI
    # app's executor); the answer takes their median. A path that ran it all on its own thread
    # says nothing of it.
    handed = {
        "uvicorn": [flow("/a", 12, 1.2, slots=None).model_copy(update={"elsewhere_share": 0.95})],
        "granian-asgi": [flow("/a", 14, 1.0, slots=None).model_copy(update={"elsewhere_share": 0.99})],
    }
    conclusion = conclude(results(handed))
    assert conclusion.paths[0].elsewhere_share == pytest.approx(0.97)
    said = "/a used 40 ms of CPU (97 % of it in threads it handed work to) and waited 120 ms"
    assert cost(conclusion.paths[0]) == said
    own = conclude(results({"uvicorn": [flow("/a", 12, 1.2, slots=None)]}))
    assert cost(own.paths[0]) == "/a used 40 ms of CPU and waited 120 ms"
