"""What the flows of a team's app say together: each path's cost alone (CPU and wait), every
configuration's rate and p99 on it beside Little's law, and the recommendation.

The recommendation is the configuration with the highest rate among those whose p99 is acceptable
on every path the app answered: within `acceptable_p99` (a knob of the settings, default 2) times
the best p99 any configuration reached on that path, with no failed request and no error answer.
Several paths weigh alike: the rate on each over the best rate on it, geometric mean. Where no
configuration is acceptable on every path, the one that came closest is chosen: its worst p99 over
the best on that path is the least (a configuration that is fine on most paths but holds one for
30 s is no answer), and the paths where its p99 is not acceptable are named. Its
predicted ceiling is Little's law for the configuration alone, whatever the load: the fewer of its
slots over the time a request holds one and its cores over the CPU a request uses (its own and the
server's). Where the serving processes' CPU was not accounted for (under 90 %, cost.py), the CPU a
request uses is a lower bound there, and the ceiling an upper one. A path on which every
configuration failed some requests (timeouts, resets, error answers) cannot be judged by its p99:
it is named with its counts (`failed`), never dropped in silence.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from labtester.findings.answered import is_answer
from labtester.findings.wording import milliseconds, plural
from labtester.scenarios.flow.analyse import PathFlow, flows
from labtester.scenarios.flow.cost import ACCOUNTED_SHARE
from labtester.scenarios.flow.prediction import Binding, Prediction
from labtester.scenarios.flow.settings import FAN_OUT

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


class Configuration(BaseModel):
    """One configuration's flow on one path."""

    target: str
    label: str  # `gthread (gunicorn, 2 workers x 8 threads)`
    requests_per_s: float
    predicted_per_s: float  # Little's law for this run (users, slots, CPU)
    binding: Binding
    ceiling_per_s: float | None  # Little's law for the configuration alone (slots, CPU)
    ceiling_binding: Binding | None
    why: str  # what binds the ceiling, in words, with its figures
    p50_s: float | None
    p99_s: float | None
    failed: int  # requests that got no answer (timeouts, resets...)
    error_answers: int  # answers the app gave that were not a success (404, 500...)
    acceptable: bool  # p99 within acceptable_p99 x the best, nothing failed, no error answer
    requests: int = 0  # requests of the flow, answered or not
    accounted_share: float | None = None  # of the serving processes' CPU (PathAccount.share)

    @property
    def lower_bound(self) -> bool:
        """Its CPU per request is a lower bound: too little of the processes' CPU accounted for."""
        return self.accounted_share is not None and self.accounted_share < ACCOUNTED_SHARE


class PathServed(BaseModel):
    path: str
    cpu_s: float | None  # CPU one request used alone, typical: the median over the configurations' medians
    # Its mean alone, over the configurations' means: the demand the sizing's model takes (a rate
    # follows the mean; a skewed spread's median is below it). None where unmeasured.
    cpu_mean_s: float | None = None
    # What a process's first request of it used, paid once (cold.py), over configurations: not above.
    cold_cpu_s: float | None = None
    wait_s: float | None  # what it waited alone: the app's time less its CPU (least over configurations)
    elsewhere_share: float = 0.0  # of its CPU, the share it ran off its own thread (median of configurations)
    best_p99_s: float | None
    configurations: list[Configuration]  # by rate, highest first
    best: str | None  # the highest rate at an acceptable p99 on this path


class PathFailed(BaseModel):
    """A path on which every configuration failed some requests or answered no success."""

    path: str
    configurations: list[Configuration]  # each with its requests, failed and error answers


class Recommendation(BaseModel):
    target: str
    label: str
    score: float  # geometric mean over the paths of its rate over the best rate there
    beyond: list[str] = []  # paths where its p99 was not acceptable (none acceptable everywhere)
    worst_p99_ratio: float | None = None  # its highest p99 over the best p99, over the paths


class AppConclusion(BaseModel):
    shape: Literal["flow"] = "flow"
    app: str | None
    acceptable_p99: float
    cores: int | None  # of the configurations (their effective cores)
    paths: list[PathServed]  # the paths the app answered with a success somewhere
    unanswered: list[str]  # paths no configuration served without a failure (see `failed`)
    recommendation: Recommendation | None  # None: no path the app answered with a success
    failed: list[PathFailed] = []  # the unanswered paths, with every configuration's counts


def _configuration(target: TargetResult, flow: PathFlow) -> Configuration:
    p99 = flow.latency_s.get("p99") if flow.requests_per_s > 0 else None
    ceiling = flow.prediction.ceiling()
    return Configuration(
        target=target.name,
        label=target.info.label(target.name) if target.info else target.name,
        requests_per_s=flow.requests_per_s,
        predicted_per_s=flow.prediction.per_s,
        binding=flow.prediction.binding,
        ceiling_per_s=ceiling[0] if ceiling else None,
        ceiling_binding=ceiling[1] if ceiling else None,
        why=_why(flow.prediction, ceiling[1] if ceiling else None),
        p50_s=flow.latency_s.get("p50"),
        p99_s=p99,
        failed=sum(count for error, count in flow.failures.items() if not is_answer(error)),
        error_answers=sum(count for error, count in flow.failures.items() if is_answer(error)),
        acceptable=False,
        requests=flow.requests,
        accounted_share=flow.account.share if flow.account else None,
    )


def _why(prediction: Prediction, binding: Binding | None) -> str:
    """`its 16 slots, each held 160 ms a request`: what limits the configuration, and by how much."""
    p = prediction
    if binding == "slots" and p.slots is not None:
        closing = (
            f" ({milliseconds(p.round_trip_s)} of it beside the local client and until it closed)"
            if p.round_trip_s is not None
            else ""
        )
        return f"its {plural(p.slots, 'slot')}, each held {milliseconds(p.slot_hold_s)} a request{closing}"
    if binding == "cpu" and p.served_cpu_s:
        server = p.server_cpu_per_request_s
        whose = f" ({milliseconds(server)} of it the server's own)" if server else ""
        cpu = f"{milliseconds(p.served_cpu_s)} of CPU a request{whose}"
        return f"its {plural(round(p.cores, 2), 'core')} at {cpu}"
    return "neither slots nor CPU: no limit was found below the load"


def _path(path: str, pairs: list[tuple[TargetResult, PathFlow]], within: float) -> PathServed | None:
    served = sorted((_configuration(t, f) for t, f in pairs), key=lambda s: -s.requests_per_s)
    p99s = [s.p99_s for s in served if s.p99_s is not None and not s.failed and not s.error_answers]
    if not p99s:
        return None
    best_p99 = min(p99s)
    for s in served:
        s.acceptable = s.p99_s is not None and s.p99_s <= within * best_p99 and not s.failed
        s.acceptable = s.acceptable and not s.error_answers
    cpu = [f.cpu_s for _, f in pairs if f.cpu_s is not None]
    cpu_mean = [f.cpu_mean_s for _, f in pairs if f.cpu_mean_s is not None]
    cold = [f.cold_cpu_s for _, f in pairs if f.cold_cpu_s is not None]
    wait = [f.wait_s for _, f in pairs if f.wait_s is not None]
    said = [f.elsewhere_share for _, f in pairs if f.elsewhere_share is not None]  # where it was said
    return PathServed(
        path=path,
        cpu_s=statistics.median(cpu) if cpu else None,
        cpu_mean_s=statistics.fmean(cpu_mean) if cpu_mean else None,
        cold_cpu_s=statistics.fmean(cold) if cold else None,
        wait_s=min(wait) if wait else None,  # a busy machine only adds to a wait: the least is the path's
        elsewhere_share=statistics.median(said) if said else 0.0,
        best_p99_s=best_p99,
        configurations=served,
        best=next((s.target for s in served if s.acceptable), None),
    )


def _recommend(paths: list[PathServed]) -> Recommendation | None:
    """The best geometric mean of rate over best rate among the configurations acceptable on every
    path; where none is, the one whose worst p99 over the best came closest, naming where it is
    not acceptable."""
    ratios: dict[str, list[float]] = {}
    beyond: dict[str, list[str]] = {}
    worst: dict[str, float] = {}  # the highest p99 over the path's best; inf: failures or errors
    labels: dict[str, str] = {}
    for path in paths:
        best_rate = max(s.requests_per_s for s in path.configurations)
        for s in path.configurations:
            if s.requests_per_s > 0 and best_rate > 0:
                ratios.setdefault(s.target, []).append(s.requests_per_s / best_rate)
                beyond.setdefault(s.target, []).extend([] if s.acceptable else [path.path])
                tail = math.inf
                if s.p99_s is not None and path.best_p99_s and not s.failed and not s.error_answers:
                    tail = s.p99_s / path.best_p99_s
                worst[s.target] = max(worst.get(s.target, 0.0), tail)
                labels[s.target] = s.label
    measured = {name: r for name, r in ratios.items() if len(r) == len(paths)}  # served every path
    if not measured:
        return None
    candidates = [name for name in measured if not beyond[name]]
    if not candidates:
        closest = min(worst[name] for name in measured)
        candidates = [name for name in measured if worst[name] == closest]
    mean = {name: math.exp(statistics.fmean(map(math.log, measured[name]))) for name in candidates}
    chosen = max(mean, key=lambda name: mean[name])
    return Recommendation(
        target=chosen,
        label=labels[chosen],
        score=mean[chosen],
        beyond=beyond[chosen],
        worst_p99_ratio=worst[chosen] if math.isfinite(worst[chosen]) else None,
    )


def app_conclusion(results: Results) -> AppConclusion | None:
    """The app's conclusion, where the flows ran against a team's paths; else None."""
    by_path: dict[str, list[tuple[TargetResult, PathFlow]]] = {}
    for target, flow in flows(results):
        if flow.endpoint != FAN_OUT:
            by_path.setdefault(flow.endpoint, []).append((target, flow))
    if not by_path:
        return None
    settings = results.lab_settings()
    found = {path: _path(path, pairs, settings.acceptable_p99) for path, pairs in by_path.items()}
    paths = [served for served in found.values() if served is not None]
    cores = {t.info.effective_cores for pairs in by_path.values() for t, _ in pairs if t.info}
    unanswered = [path for path, served in found.items() if served is None]
    failed = [
        PathFailed(path=path, configurations=[_configuration(t, f) for t, f in by_path[path]])
        for path in unanswered
    ]
    return AppConclusion(
        app=settings.app,
        acceptable_p99=settings.acceptable_p99,
        cores=min(cores) if cores else None,
        paths=paths,
        unanswered=unanswered,
        recommendation=_recommend(paths),
        failed=failed,
    )
