"""What the report shows of the flow: per target the Locust table beside the Little's-law
prediction; the ASGI/WSGI ratio beside the study's published one; requests/s, latency percentiles,
users and requests in flight over time (the charts Locust users know)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

from labtester.findings.wording import plural
from labtester.plotting import gaps, plt, save_png
from labtester.scenarios.common import failures_text, ms
from labtester.scenarios.flow.analyse import PathFlow, flows
from labtester.scenarios.flow.prediction import Prediction
from labtester.scenarios.flow.settings import FAN_OUT

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult

# The seed study (8 CPUs, Locust up to 1,000 users, 5 minutes): FastAPI/uvicorn against Flask on
# gunicorn gthread with 8 workers x 8 threads.
STUDY_ASGI_PER_S, STUDY_WSGI_PER_S = 218.85, 40.6
STUDY_ASGI_MEDIAN_S, STUDY_WSGI_MEDIAN_S = 1.4, 9.9
# One side of the study's comparison: a target and its flow.
Side = tuple["TargetResult", PathFlow]
# Measured within this share of the prediction counts as agreeing with it.
PREDICTION_AGREEMENT = 0.2


def _agreement(summary: PathFlow) -> float:
    return summary.requests_per_s / summary.prediction.per_s if summary.prediction.per_s else float("nan")


def table(results: Results) -> Table:
    result = Table(
        title="Flow: users ramped Locust-style against each path (fan-out: k waits, then a downstream "
        "call); predicted = Little's law: min(users, slots, CPU) / time per request; cpu acct = the "
        "serving processes' CPU accounted for (the requests', the server's own, no request's, the lab's "
        "reads)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "target",
        "path",
        "users",
        "req/s",
        "predicted",
        "bound by",
        "meas/pred",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "cpu acct",
        "fails",
    ):
        left = column in ("target", "path", "bound by", "fails")
        result.add_column(column, justify="left" if left else "right")
    for target, f in flows(results):
        if not f.latency_s:
            continue  # no success to time: its failures are in the findings
        latency = f.latency_s
        result.add_row(
            target.name,
            f.endpoint,
            str(f.params.users),
            f"{f.requests_per_s:.1f}",
            f"{f.prediction.per_s:.1f}",
            f.prediction.binding,
            f"{_agreement(f):.2f}",
            *(ms(latency.get(p)) for p in ("p50", "p95", "p99")),
            "-" if f.account is None else f"{f.account.share * 100:.0f} %",
            failures_text(f.failures),
        )
    return result


def target_text(target: TargetResult, f: PathFlow) -> str:
    p, latency = f.prediction, f.latency_s
    slots = "no limit" if p.slots is None else plural(p.slots, "slot")
    alone, median, p99 = p.per_request_s * 1000, latency.get("p50", 0) * 1000, latency.get("p99", 0) * 1000
    against = "" if f.endpoint == FAN_OUT else f" on {f.endpoint}"
    if not f.latency_s:
        ramped = "no answer was a success" if f.loaded else "not loaded: every request alone erred"
        return f"flow of {f.params.users} users{against}: {ramped} (failures: {failures_text(f.failures)})."
    return (
        f"flow of {f.params.users} users{against}: {f.requests_per_s:.1f} req/s, median {median:.0f} ms, "
        f"p99 {p99:.0f} ms; Little's law predicts {p.per_s:.1f} req/s ({slots}, "
        f"{alone:.0f} ms per request alone, bound by {_binding(p)}): measured/predicted {_agreement(f):.2f}; "
        f"failures: {failures_text(f.failures)}."
    )


def _binding(p: Prediction) -> str:
    if p.binding == "slots" and p.round_trip_s is not None:
        return (
            f"slots: each held {p.slot_hold_s * 1000:.2f} ms a request, {p.round_trip_s * 1000:.2f} ms of it "
            "beside its CPU and wait: computing beside the local client, then waiting until it closed "
            "(a sync worker's cycle, with the delay its empty requests fitted)"
        )
    if p.binding != "cpu" or p.cpu_per_request_s is None:
        return p.binding
    measured = "each request's own, from its Server-Timing" if p.cpu_source == "server-timing" else "measured"
    besides = ""
    if p.server_cpu_per_request_s is not None:
        besides = f" + {p.server_cpu_per_request_s * 1000:.2f} ms the server's own"
    if p.client_cpu_per_request_s is not None:
        besides += f" + {p.client_cpu_per_request_s * 1000:.2f} ms the local client's"
    free = (
        ""
        if p.cores_free is None
        else f", {p.cores_free:.2f} CPUs free to it: its own use plus what stayed idle, the downstream "
        "and others having taken the rest; on a saturated machine that is the share it got, "
        "so the prediction explains the rate rather than checks it"
    )
    return (
        f"cpu: {p.cpu_per_request_s * 1000:.1f} ms of CPU per request ({measured}){besides}, on "
        f"{p.cores:.2f} usable cores{free}"
    )


def _sides(results: Results, execution: str) -> list[Side]:
    """The targets whose fan-out ran as `execution` says (/info): async waits (ASGI), or threads
    held for the whole request (WSGI threads)."""
    return [
        (t, f)
        for t, f in flows(results)
        if f.endpoint == FAN_OUT and t.info and t.info.endpoints[FAN_OUT].execution == execution
    ]


def asgi_wsgi_pairs(results: Results) -> list[tuple[Side, Side]]:
    """The study's two sides, ASGI against WSGI threads, wherever both ran: first the first of each
    on different servers (the study's uvicorn against gunicorn gthread), then each server that ran
    both itself (granian), the one comparison that changes only the interface."""
    asgi, wsgi = _sides(results, "async"), _sides(results, "threads")

    def server(side: Side) -> str | None:
        return side[0].info.server if side[0].info else None

    same = [(a, w) for a in asgi for w in wsgi if server(a) == server(w)]
    paired = {id(side) for pair in same for side in pair}
    across = [(a, w) for a in asgi for w in wsgi if id(a) not in paired and id(w) not in paired][:1]
    return across + same


def asgi_wsgi(results: Results) -> tuple[Side, Side] | None:
    """The first of those pairs: the one the answer and the comparison lead with."""
    pairs = asgi_wsgi_pairs(results)
    return pairs[0] if pairs else None


def comparison(results: Results) -> str | None:
    """The study's comparison redone here: ASGI (uvicorn) against WSGI threads (gunicorn gthread)."""
    pair = asgi_wsgi(results)
    if pair is None:
        return None
    (asgi, a), (wsgi, w) = pair
    if not w.requests_per_s or not w.latency_s.get("p50") or wsgi.info is None:
        return None
    measured = a.requests_per_s / w.requests_per_s
    predicted = a.prediction.per_s / w.prediction.per_s
    study = STUDY_ASGI_PER_S / STUDY_WSGI_PER_S
    info = wsgi.info
    medians = f"{a.latency_s.get('p50', 0):.2f} s against {w.latency_s['p50']:.2f} s"
    return (
        f"ASGI against WSGI threads: {asgi.name} served {measured:.1f}x the requests/s of {wsgi.name} "
        f"(study: {study:.1f}x; Little's law here: {predicted:.1f}x), median {medians} "
        f"(study: {STUDY_ASGI_MEDIAN_S} s against {STUDY_WSGI_MEDIAN_S} s). "
        "They differ because the study had 8 CPUs, 8 x 8 threads and up to 1,000 users, where here "
        f"{wsgi.name} has {info.workers} x {info.threads} threads on {info.effective_cores} cores and "
        f"{w.params.users} users, and the downstream mock shares this host: the ratio follows users / slots, "
        "as Little's law says." + "".join(f" {same_server(pair)}" for pair in asgi_wsgi_pairs(results)[1:])
    )


def same_server(pair: tuple[Side, Side]) -> str:
    """The same comparison on one server that runs both kinds of app: only the interface differs."""
    (asgi, a), (wsgi, w) = pair
    server = asgi.info.server if asgi.info else "one server"
    measured = a.requests_per_s / w.requests_per_s if w.requests_per_s else float("nan")
    predicted = a.prediction.per_s / w.prediction.per_s if w.prediction.per_s else float("nan")
    return (
        f"On {server} alone, {asgi.name} (ASGI) served {measured:.1f}x the requests/s of {wsgi.name} "
        f"(WSGI threads; Little's law here: {predicted:.1f}x), median {a.latency_s.get('p50', 0):.2f} s "
        f"against {w.latency_s.get('p50', 0):.2f} s."
    )


def plot(results: Results, path: Path) -> Path | None:
    rows = flows(results)
    if not rows:
        return None
    figure, axes = plt.subplots(len(rows), 3, figsize=(12, 2.6 * len(rows)), squeeze=False, sharex=True)
    for (target, f), (rate, latency, load) in zip(rows, axes, strict=True):
        t = [s.t for s in f.over_time]
        rate.plot(t, [s.requests for s in f.over_time], label="req/s")
        rate.plot(t, [s.failures for s in f.over_time], color="red", label="failures/s")
        rate.axhline(f.prediction.per_s, linestyle="--", color="grey", label="Little's law")
        for key, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
            latency.plot(t, gaps(getattr(s, key) for s in f.over_time), linestyle=style, label=key)
        load.plot(t, [s.users for s in f.over_time], label="users")
        load.plot(t, [s.in_flight for s in f.over_time], label="in flight")
        rate.set_ylabel(target.name if f.endpoint == FAN_OUT else f"{target.name} {f.endpoint}")
        for axis, title in ((rate, "requests/s"), (latency, "response time s"), (load, "users, in flight")):
            axis.set_title(title, fontsize=8)
            axis.grid(alpha=0.3)
            axis.legend(fontsize=6)
    for axis in axes[-1]:
        axis.set_xlabel("seconds since start")
    figure.suptitle("flow: the charts Locust draws, per target", fontsize=10)
    figure.tight_layout()
    return save_png(figure, path)
