"""The answers about a team's app, from its conclusion (conclude.py): how each configuration should
serve it, then, per path, what one request costs and what each configuration serves beside
Little's law. Every number comes from the typed results."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from labtester.findings.wording import milliseconds, plural
from labtester.scenarios.flow.analyse import flows
from labtester.scenarios.flow.answers import flow_line
from labtester.scenarios.flow.conclude import AppConclusion, Configuration, PathServed
from labtester.scenarios.flow.report import PREDICTION_AGREEMENT
from labtester.views import Answer, Chart, number

if TYPE_CHECKING:
    from labtester.results import Results


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def cost(path: PathServed) -> str:
    """`/search used 38 ms of CPU and waited 120 ms`: one request alone, as the server measured it."""
    if path.cpu_s is None or path.wait_s is None:
        return f"{path.path} (its CPU unmeasured: no Server-Timing header)"
    return f"{path.path} used {milliseconds(path.cpu_s)} of CPU and waited {milliseconds(path.wait_s)}"


def _agrees(served: Configuration) -> bool:
    ratio = served.requests_per_s / served.predicted_per_s if served.predicted_per_s else 0.0
    return abs(ratio - 1) <= PREDICTION_AGREEMENT


def _ceiling(served: Configuration) -> str:
    if served.ceiling_per_s is None:
        return f"no predicted ceiling ({served.why})"
    return f"predicted ceiling {number(served.ceiling_per_s)}/s, bound by {served.why}"


def recommendation(conclusion: AppConclusion) -> Answer | None:
    chosen = conclusion.recommendation
    if chosen is None:
        return None
    app, within = conclusion.app or "the app", f"{conclusion.acceptable_p99:g}x"
    answer = f"{chosen.label}: the highest rate with a p99 within {within} of the best on every path."
    if chosen.beyond:
        closest = f", at most {chosen.worst_p99_ratio:.1f}x the best" if chosen.worst_p99_ratio else ""
        answer = (
            f"{chosen.label}, with a caveat: no configuration kept its p99 within {within} of the best "
            f"on every path; this one came closest{closest}, but not within {within} on "
            f"{', '.join(chosen.beyond)}."
        )
    evidence = []
    for path in conclusion.paths:
        served = next((s for s in path.configurations if s.target == chosen.target), None)
        best = next((s.target for s in path.configurations if s.p99_s == path.best_p99_s), None)
        if served is not None:
            beside = "the best" if best == chosen.target else f"the best {_s(path.best_p99_s)} on {best}"
            evidence.append(
                f"{path.path}: {chosen.target} {number(served.requests_per_s)}/s at p99 "
                f"{_s(served.p99_s)} ({beside}); {_ceiling(served)}"
            )
    return Answer(
        order=1,
        key="app-recommendation",
        question=f"How should {app} be served?",
        answer=answer,
        evidence=". ".join(evidence) + ".",
    )


def path_answer(path: PathServed, conclusion: AppConclusion, results: Results, order: int) -> Answer:
    """`/search used 38 ms of CPU and waited 120 ms: on 2 cores, gthread serves X/s and sync-1x Y/s,
    as Little's law predicts (X', Y')`."""
    measured = [s for s in path.configurations if s.requests_per_s > 0]
    served = ", ".join(f"{s.target} {number(s.requests_per_s)}/s" for s in measured)
    predicted = ", ".join(number(s.predicted_per_s) for s in measured)
    agree = "as Little's law predicts" if all(map(_agrees, measured)) else "where Little's law predicts"
    cores = f"on {plural(conclusion.cores, 'core')}, " if conclusion.cores else ""
    p99 = ", ".join(f"{s.target} {_s(s.p99_s)}" for s in path.configurations)
    binds = ", ".join(f"{s.target} {s.binding}" for s in path.configurations)
    lines = [flow_line(t, f) for t, f in flows(results) if f.endpoint == path.path]
    return Answer(
        order=order,
        key=f"app-{re.sub(r'[^A-Za-z0-9]+', '-', path.path).strip('-') or 'root'}",
        question=f"What does {path.path} cost, and what does each configuration serve?",
        answer=f"{cost(path)} alone: {cores}it was served at {served}, {agree} ({predicted}).",
        evidence=f"p99: {p99}. What bound each in this run: {binds}.",
        chart=Chart(
            name=f"answer-app-{order}",
            title=f"{path.path}: requests/s over time, per configuration",
            x_label="seconds since the first user",
            y_label="requests / s",
            reference="Little's law",
            integer_x=False,
            lines=lines,
        ),
    )


def answers(results: Results) -> list[Answer]:
    conclusion = results.conclusions.get("flow")
    if not isinstance(conclusion, AppConclusion):
        return []
    found = [recommendation(conclusion)]
    found += [path_answer(p, conclusion, results, 2 + i) for i, p in enumerate(conclusion.paths)]
    return [answer for answer in found if answer is not None]
