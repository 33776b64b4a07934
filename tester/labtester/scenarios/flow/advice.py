"""The answers about a team's app, from its conclusion (conclude.py): how each configuration should
serve it, then, per path, what one request costs and what each configuration serves beside
Little's law, with the share of the serving processes' CPU accounted for; a path that failed on
every configuration is named with its counts. Every number comes from the typed results."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from labtester.findings.wording import milliseconds, plural
from labtester.scenarios.flow.analyse import flows
from labtester.scenarios.flow.answers import flow_line
from labtester.scenarios.flow.conclude import AppConclusion, Configuration, PathFailed, PathServed
from labtester.scenarios.flow.report import PREDICTION_AGREEMENT
from labtester.views import Answer, Chart, number

if TYPE_CHECKING:
    from labtester.results import Results


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


SKEWED = 0.1  # a mean this far from the median is shown beside it: the rates follow the mean
ELSEWHERE_NOTABLE = 0.1  # a share of a path's CPU run in threads worth saying (an event loop runs it beside)


def cost(path: PathServed) -> str:
    """`/search used 38 ms of CPU and waited 120 ms`: one request alone, as the server measured it
    (the median), with the mean beside it where a skewed spread puts it apart, the share it ran
    in threads where that is a tenth or more (an event loop runs it beside, not in turn), and what a
    process's first of it used where that is more (its one-time costs: cold.py)."""
    if path.cpu_s is None or path.wait_s is None:
        return f"{path.path} (its CPU unmeasured: no Server-Timing header)"
    used = milliseconds(path.cpu_s)
    mean = path.cpu_mean_s
    if mean is not None and path.cpu_s > 0 and abs(mean / path.cpu_s - 1) > SKEWED:
        used = f"{used} (median; mean {milliseconds(mean)}, which the rates follow)"
    where = ""
    if path.elsewhere_share >= ELSEWHERE_NOTABLE:
        where = f" ({path.elsewhere_share * 100:.0f} % of it in threads it handed work to)"
    first = ""
    if path.cold_cpu_s is not None and path.cold_cpu_s > (1 + SKEWED) * (mean or path.cpu_s):
        first = f"; a process's first of it used {milliseconds(path.cold_cpu_s)}, once (not in these figures)"
    return f"{path.path} used {used} of CPU{where} and waited {milliseconds(path.wait_s)}{first}"


def _agrees(served: Configuration) -> bool:
    ratio = served.requests_per_s / served.predicted_per_s if served.predicted_per_s else 0.0
    return abs(ratio - 1) <= PREDICTION_AGREEMENT


def _share(served: Configuration) -> str:
    return "-" if served.accounted_share is None else f"{served.accounted_share * 100:.0f} %"


def _ceiling(served: Configuration) -> str:
    if served.ceiling_per_s is None:
        return f"no predicted ceiling ({served.why})"
    if served.lower_bound and served.ceiling_binding == "cpu":
        return (
            f"predicted ceiling at most {number(served.ceiling_per_s)}/s, bound by {served.why}, a lower "
            f"bound: only {_share(served)} of its processes' CPU was accounted for"
        )
    return f"predicted ceiling {number(served.ceiling_per_s)}/s, bound by {served.why}"


def _counts(served: Configuration) -> str:
    """`sync-1x 3 of 120 failed, 2 error answers`."""
    parts = [f"{served.failed} of {served.requests} failed"] if served.failed else []
    parts += [plural(served.error_answers, "error answer")] if served.error_answers else []
    return f"{served.target} {', '.join(parts) or f'no success timed of {served.requests}'}"


def failed_path(path: PathFailed) -> str:
    """`/x failed on every configuration (sync-1x 3 of 120 failed; gthread 2 error answers)`."""
    return f"{path.path} failed on every configuration ({'; '.join(map(_counts, path.configurations))})"


def recommendation(conclusion: AppConclusion) -> Answer | None:
    chosen = conclusion.recommendation
    app, within = conclusion.app or "the app", f"{conclusion.acceptable_p99:g}x"
    failed = "; ".join(map(failed_path, conclusion.failed))
    if chosen is None:
        if not failed:
            return None
        return Answer(
            order=1,
            key="app-recommendation",
            question=f"How should {app} be served?",
            answer=f"No recommendation: no path was served without failures. {failed}.",
            evidence="A path's p99 is judged only where its requests succeeded; see the findings.",
        )
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
    low = [
        path.path
        for path in conclusion.paths
        for served in path.configurations
        if served.target == chosen.target and served.lower_bound
    ]
    if low:
        answer += (
            f" Its CPU per request is a lower bound on {', '.join(low)} (under 90 % of its processes' "
            "CPU accounted for): its ceilings there are upper bounds."
        )
    if failed:
        answer += f" It leaves out {failed}: fix that path, then measure it again."
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
    shares = ", ".join(f"{s.target} {_share(s)}" for s in path.configurations)
    low = [s.target for s in path.configurations if s.lower_bound]
    bound = (
        f" Its CPU per request is a lower bound on {', '.join(low)}: less than 90 % of the serving "
        "processes' CPU was accounted for there, so the predictions there are upper bounds."
        if low
        else ""
    )
    lines = [flow_line(t, f) for t, f in flows(results) if f.endpoint == path.path]
    return Answer(
        order=order,
        key=_key(path.path),
        question=f"What does {path.path} cost, and what does each configuration serve?",
        answer=f"{cost(path)} alone: {cores}it was served at {served}, {agree} ({predicted}).{bound}",
        evidence=f"p99: {p99}. What bound each in this run: {binds}. The serving processes' CPU "
        f"accounted for (the requests', the server's own, no request's, the lab's reads): {shares}.",
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


def _key(path: str) -> str:
    return f"app-{re.sub(r'[^A-Za-z0-9]+', '-', path).strip('-') or 'root'}"


def failed_answer(path: PathFailed, order: int) -> Answer:
    """A path no configuration served without failures: said with the counts, not left out."""
    return Answer(
        order=order,
        key=_key(path.path),
        question=f"What does {path.path} cost, and what does each configuration serve?",
        answer=f"Not measured: {failed_path(path)}.",
        evidence="Its rate and p99 are not judged where requests failed; the findings hold them by type.",
    )


def answers(results: Results) -> list[Answer]:
    conclusion = results.conclusions.get("flow")
    if not isinstance(conclusion, AppConclusion):
        return []
    found = [recommendation(conclusion)]
    found += [path_answer(p, conclusion, results, 2 + i) for i, p in enumerate(conclusion.paths)]
    after = 2 + len(conclusion.paths)
    found += [failed_answer(p, after + i) for i, p in enumerate(conclusion.failed)]
    return [answer for answer in found if answer is not None]
