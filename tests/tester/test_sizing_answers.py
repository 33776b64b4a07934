"""The sizing's answer comes first and says what was asked: the most a pod serves, the smallest
configuration that serves RATE=, or the pod RATE= would need; and how the proposal stands against
the best of the fixed configurations, measured in the same run."""

from __future__ import annotations

from typing import Any

from labtester.sizing.answers import answer, headline
from labtester.sizing.document import Level, Objective, PodSize, SizedSummary, SizingConclusion

POD = PodSize(cores=2, memory_bytes=1 << 30, source="CORES= and MEMORY=")


def sized(role: str, label: str, rate: float, measured: float | None, **more: Any) -> SizedSummary:
    level = Level(
        offered_per_s=rate,
        predicted_per_s=rate,
        predicted_p99_s=0.3,
        measured_per_s=measured,
        measured_p99_s=0.32,
    )
    return SizedSummary.model_validate(
        {
            "role": role, "family": label.split(",")[0], "server": "gunicorn", "label": label, "processes": 2,
            "threads": 8, "env": {}, "memory_bytes": 300 << 20, "sustainable_per_s": rate,
            "predicted_p99_s": 0.3,
            "levels": [level] if measured is not None else [], "pod": POD, "objective": OBJECTIVE, **more,
        }
    )  # fmt: skip


OBJECTIVE = Objective(p99_s=0.4, why="P99=")


def conclusion(**fields: Any) -> SizingConclusion:
    return SizingConclusion(
        pod=POD, objective=fields.pop("objective", OBJECTIVE), families=[], headline="", **fields
    )


def test_the_proposal_against_the_best_fixed_configuration_measured_in_the_run() -> None:
    proposed = sized("proposed", "gunicorn gthread, 2 workers x 24 threads", 118, 114)
    fixed = sized("fixed", "gunicorn gthread, 2 workers x 8 threads", 71, 70)
    text = headline(conclusion(proposed=proposed, fixed=fixed))
    assert text.startswith(
        "Serve the app with gunicorn gthread, 2 workers x 24 threads, on 2 cores and 1 GiB"
    )
    assert "predicted 118.0/s at p99 0.30 s, measured 114.0/s at p99 0.32 s" in text
    assert "the best of the fixed configurations, gunicorn gthread, 2 workers x 8 threads" in text
    assert "measured 70.0/s" in text
    already = headline(conclusion(proposed=proposed, fixed=proposed))
    assert "the best of the fixed configurations is this one already" in already


def test_a_target_rate_is_served_by_the_smallest_configuration_that_does() -> None:
    goal = Objective(p99_s=0.4, why="P99=", rate_per_s=50)
    proposed = sized("proposed", "gunicorn gthread, 1 worker x 6 threads", 50, 49)
    text = headline(conclusion(proposed=proposed, objective=goal))
    assert text.startswith(
        "Serve 50/s with the smallest configuration that does, gunicorn gthread, 1 worker x 6"
    )


def test_a_target_rate_beyond_the_pod_names_the_pod_it_would_need() -> None:
    goal = Objective(p99_s=0.4, why="P99=", rate_per_s=500)
    bigger = POD.model_copy(update={"cores": 16, "memory_bytes": 8 << 30})
    needed = sized("needed", "uvicorn, 19 workers", 500, None, needs_pod=bigger, error="not proved")
    found = conclusion(proposed=None, needed=needed, objective=goal)
    text = headline(found)
    assert text.startswith("No configuration on 2 cores and 1 GiB serves 500/s at p99 0.40 s")
    assert "the pod it would need has 16 cores and 8 GiB: uvicorn, 19 workers, predicted 500.0/s" in text
    found.headline = text
    assert answer(found).answer == text
