"""What the flow answers (ASGI against WSGI threads on the study's fan-out flow) and its rows of
the side-by-side comparison: requests/s against Little's law, and the median response time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labtester.findings.wording import plural
from labtester.scenarios.flow.analyse import PathFlow, flows
from labtester.scenarios.flow.report import (
    PREDICTION_AGREEMENT,
    STUDY_ASGI_MEDIAN_S,
    STUDY_ASGI_PER_S,
    STUDY_WSGI_MEDIAN_S,
    STUDY_WSGI_PER_S,
    asgi_wsgi_pairs,
    same_server,
)
from labtester.scenarios.flow.settings import FAN_OUT
from labtester.views import Answer, Cell, Chart, ComparisonRow, Line

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


def _steady(summary: PathFlow) -> list[float]:
    """Requests answered in each whole second with every user running: the figure's noise."""
    last = summary.wall_s - 1
    return [float(s.requests) for s in summary.over_time if summary.steady_from_s <= s.t < last]


def flow_line(target: TargetResult, summary: PathFlow) -> Line:
    seconds = summary.over_time
    return Line(
        label=target.name,
        x=[s.t for s in seconds],
        y=[float(s.requests) for s in seconds],
        reference=[summary.prediction.per_s] * len(seconds),
    )


def _why(wsgi: TargetResult, w: PathFlow) -> str:
    info = wsgi.info
    held = f"{info.workers} x {info.threads} threads" if info else "its threads"
    if w.prediction.binding == "slots":
        return (
            f"every one of {wsgi.name}'s {held} is held for the whole request, waits included, so it "
            "completes at most threads / time per request (Little's law: thread-pool exhaustion, not "
            "Python's speed)"
        )
    return f"{wsgi.name} was bound by its {w.prediction.binding} here, not by its {held}"


def answer(results: Results) -> Answer | None:
    pairs = asgi_wsgi_pairs(results)
    if not pairs:
        return None
    (asgi, a), (wsgi, w) = pairs[0]
    if not w.requests_per_s or not a.requests_per_s:
        return None
    measured = a.requests_per_s / w.requests_per_s
    predicted = a.prediction.per_s / w.prediction.per_s if w.prediction.per_s else None
    ahead = "ahead" if measured > 1 else "behind"
    beside = f"Little's law here: {predicted:.1f}x; " if predicted else ""
    return Answer(
        order=60,
        key="asgi-wsgi",
        question="ASGI against WSGI threads on a fan-out flow?",
        answer=f"{asgi.name} (ASGI) came out {ahead}, at {measured:.1f}x the requests/s: {_why(wsgi, w)}.",
        evidence=(
            f"With {plural(w.params.users, 'user')}: {a.requests_per_s:.1f} against {w.requests_per_s:.1f} "
            f"requests/s ({beside}the study: {STUDY_ASGI_PER_S / STUDY_WSGI_PER_S:.1f}x), median "
            f"{a.latency_s.get('p50', 0):.2f} s against {w.latency_s.get('p50', 0):.2f} s (the study: "
            f"{STUDY_ASGI_MEDIAN_S} s against {STUDY_WSGI_MEDIAN_S} s)."
            + "".join(f" {same_server(pair)}" for pair in pairs[1:])
        ),
        chart=Chart(
            name="answer-asgi-wsgi",
            title="fan-out flow: requests/s over time",
            x_label="seconds since the first user",
            y_label="requests / s",
            reference="Little's law",
            integer_x=False,
            lines=[flow_line(target, summary) for pair in pairs for target, summary in pair],
        ),
    )


def comparison(results: Results) -> list[ComparisonRow]:
    """Per path: requests/s against Little's law and the median, a cell per target; for a team's
    paths also the p99 the recommendation weighs."""
    by_path: dict[str, list[tuple[TargetResult, PathFlow]]] = {}
    for target, flow in flows(results):
        if flow.latency_s:  # a flow with no success has no figure to set beside another
            by_path.setdefault(flow.endpoint, []).append((target, flow))
    return [row for endpoint, pairs in by_path.items() for row in _rows(endpoint, pairs)]


def _rows(endpoint: str, pairs: list[tuple[TargetResult, PathFlow]]) -> list[ComparisonRow]:
    users = "/".join(sorted({str(f.params.users) for _, f in pairs}))
    # The fan-out keeps the keys earlier runs were compared by; a team's path is named in its own.
    key, label = (
        (f"flow/{users}", f"flow {users} users")
        if endpoint == FAN_OUT
        else (
            f"flow/{endpoint}/{users}",
            f"{endpoint} flow {users} users",
        )
    )
    cpu_bound = any(f.prediction.binding == "cpu" for _, f in pairs)
    rate = ComparisonRow(
        key=f"{key}/rate",
        shape="flow",
        label=f"{label} req/s",
        unit="req/s",
        reference="Little's law",
        tolerance=PREDICTION_AGREEMENT,
        cpu_bound=cpu_bound,
        cells={
            t.name: Cell(
                value=f.requests_per_s,
                reference=f.prediction.per_s,
                ratio=f.requests_per_s / f.prediction.per_s if f.prediction.per_s else None,
                samples=_steady(f),
            )
            for t, f in pairs
        },
    )
    quantiles = ("p50", "p99") if endpoint != FAN_OUT else ("p50",)
    return [rate, *(_latency_row(key, label, q, cpu_bound, pairs) for q in quantiles)]


def _latency_row(
    key: str, label: str, quantile: str, cpu_bound: bool, pairs: list[tuple[TargetResult, PathFlow]]
) -> ComparisonRow:
    return ComparisonRow(
        key=f"{key}/{quantile}",
        shape="flow",
        label=f"{label} {'median' if quantile == 'p50' else quantile} s",
        unit="s",
        reference="none",
        tolerance=PREDICTION_AGREEMENT,
        cpu_bound=cpu_bound,
        cells={
            t.name: Cell(
                value=f.latency_s[quantile],
                samples=[v for s in f.over_time if (v := getattr(s, quantile)) is not None],
            )
            for t, f in pairs
            if quantile in f.latency_s
        },
    )
