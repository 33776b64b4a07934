"""The whole mix at once: after each request's own flow, users ramped as in the flow, each picking
its next request by weight from its own seeded random stream, so what one request does to a
configuration (a path holding a worker) shows on the others. Measured per request name and
overall: rate, p50/p99, failures (the flow's `mix`, one answer line per configuration).

The per-request flows stay: each request measured alone is what feeds the model (its CPU, its
wait); the mix is what production sees.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from labtester.findings.wording import plural
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import (
    decode,
    failures_by_type,
    failures_text,
    latency_table,
    ramp_users,
)
from labtester.scenarios.flow.settings import FlowSettings
from labtester.scenarios.together import DROPPED, Together
from labtester.traffic import Chooser, Outgoing, Traffic
from labtester.views import Answer, number

MIX_STEP = "flow mix"
ALL = "all"  # the overall figures' name
POINTS = (50, 99)


class MixServed(BaseModel):
    """One request of the mix (or all of them): what was sent and how it was answered."""

    name: str
    weight: float | None = None  # its weight in the traffic; None: the whole mix
    requests: int  # sent (answered or failed)
    failures: dict[str, int]
    requests_per_s: float  # answered with a success, per second of the window
    latency_s: dict[str, float]  # of the successes: min, median, mean, max, p50, p99


class MixFlow(BaseModel):
    """The mix, users ramped as in the flow: per request name and overall, with every user running."""

    users: int
    duration_s: float
    wall_s: float
    steady_from_s: float  # every user started: the rates count from here
    overall: MixServed
    requests: list[MixServed]


def served(
    samples: list[Sample], weights: dict[str, float], from_s: float, to_s: float, from_schedule: bool
) -> tuple[MixServed, list[MixServed]]:
    """Overall and per name: every sample counted, successes finished in [from_s, to_s] for the
    rate; latency from the send, or (open loop) from the schedule."""
    window = max(to_s - from_s, 1e-9)

    def one(name: str, weight: float | None, chosen: list[Sample]) -> MixServed:
        sent = [s for s in chosen if s.error != DROPPED]
        done = [s for s in sent if s.ok]
        latencies = [s.from_schedule_s if from_schedule else s.latency_s for s in done]
        in_window = sum(1 for s in done if from_s <= s.sent_s + s.latency_s <= to_s)
        return MixServed(
            name=name,
            weight=weight,
            requests=len(chosen),
            failures=failures_by_type(chosen),
            requests_per_s=in_window / window,
            latency_s=latency_table(latencies, POINTS),
        )

    per_name = [one(name, weight, [s for s in samples if s.path == name]) for name, weight in weights.items()]
    return one(ALL, None, samples), per_name


async def measure_mix(
    client: LoadClient, traffic: Traffic, settings: FlowSettings, together: Together
) -> tuple[list[Sample], list[tuple[float, int]]]:
    """This client's users of the mix, each (by its number of all clients') with its own chooser."""
    choosers: dict[int, Chooser] = {}

    def next_request(user: int) -> Outgoing:
        chooser = choosers.get(user)
        if chooser is None:
            chooser = choosers[user] = traffic.chooser(user)
        return chooser()

    return await ramp_users(
        client,
        next_request,
        settings.users,
        settings.spawn_rate,
        settings.duration_s,
        settings.think_s,
        together.crew,
    )


def weights_of(traffic: Traffic) -> dict[str, float]:
    return {request.label: request.weight for request in traffic.requests}


def mix_record(settings: FlowSettings, traffic: Traffic, users: Any) -> Record:
    """The mix's own fields of its record (the step's samples and wall time beside them)."""
    return {"params": settings.model_dump(), "weights": weights_of(traffic), "users": users, "mix": True}


def mix_flow(record: Record) -> MixFlow:
    params, wall = record["params"], float(record["wall_s"])
    steady_from = min(wall, (params["users"] - 1) / params["spawn_rate"])
    overall, per_name = served(decode(record["samples"]), record["weights"], steady_from, wall, False)
    return MixFlow(
        users=params["users"],
        duration_s=params["duration_s"],
        wall_s=wall,
        steady_from_s=steady_from,
        overall=overall,
        requests=per_name,
    )


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


def line(target: str, mix: MixFlow) -> str:
    """`gthread: 41.3/s, p50 0.12 s, p99 0.80 s, no failures (GET /a 31.0/s p99 0.50 s; ...)`."""

    def figures(served: MixServed) -> str:
        p50, p99 = (_s(served.latency_s.get(point)) for point in ("p50", "p99"))
        return f"{number(served.requests_per_s)}/s, p50 {p50}, p99 {p99}"

    failed = sum(mix.overall.failures.values())
    failures = (
        f"{plural(failed, 'failure')} ({failures_text(mix.overall.failures)})" if failed else "no failures"
    )
    each = "; ".join(f"{r.name} {figures(r)}" for r in mix.requests)
    return f"{target}: {figures(mix.overall)}, {failures} [{each}]"


def answer(mixes: list[tuple[str, MixFlow]], order: int) -> Answer | None:
    """One line per configuration (its name, its mix): the mix's rate, p50, p99 and failures,
    overall and per request."""
    if not mixes:
        return None
    best_name, best = max(mixes, key=lambda pair: pair[1].overall.requests_per_s)
    weights = ", ".join(f"{r.name} x{r.weight:g}" for r in best.requests)
    return Answer(
        order=order,
        key="app-mix",
        question="What does each configuration serve of the whole mix, every request at once?",
        answer=(
            f"{best_name} served the most of the mix ({weights}): {number(best.overall.requests_per_s)}/s "
            f"with {plural(best.users, 'user')}."
        ),
        evidence="\n".join(f"{line(name, mix)}." for name, mix in mixes),  # a line per configuration
    )
