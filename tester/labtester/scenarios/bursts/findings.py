"""What the bursts showed, per endpoint: the shape and why, interference, departures, failures."""

from __future__ import annotations

from labtester.findings import Finding
from labtester.findings import cause as causes
from labtester.findings.answered import Counts, app_answers, is_answer
from labtester.findings.shape import concurrency
from labtester.findings.wording import label, plural, times
from labtester.info import TargetInfo
from labtester.model import ONE_CORE_PER_PROCESS
from labtester.scenarios.bursts.analyse import MODEL_AGREEMENT, BurstRun, BurstsSummary, EndpointBursts, Point
from labtester.scenarios.bursts.repeats import enough


def _shape(name: str, info: TargetInfo, endpoint: EndpointBursts) -> Finding | None:
    measured = [p for p in endpoint.points if p.makespan is not None and p.model_s]
    if not measured or not endpoint.single_s:
        return None
    largest = measured[-1]
    assert largest.makespan is not None and largest.model_s is not None
    x_single = largest.makespan.median / endpoint.single_s
    # A team's path declares no work: mostly CPU or mostly waiting is what it measured alone.
    mostly_cpu = (endpoint.cpu_s or 0.0) >= (endpoint.wait_s or 0.0) if endpoint.work == "app" else None
    how = causes.execution(info.endpoints[endpoint.name], info, endpoint.capacity.cores, mostly_cpu)
    shape = concurrency(largest.n, largest.overlap or largest.n)
    model = (
        f"processor sharing over their measured work predicts {times(largest.model_s / endpoint.single_s)}"
    )
    ratio = f" (measured/model {largest.ratio:.2f})" if largest.ratio is not None else ""
    hindered = any(r.verdict == "interference" for r in largest.runs)
    spread = _uneven_spread(info, endpoint, largest)
    return Finding(
        kind="shape",
        target=name,
        subject=endpoint.name,
        text=(
            f"{label(name, info)}: {largest.n} simultaneous {endpoint.name} requests took {times(x_single)}, "
            f"{shape}: {how}; {model}{ratio}{spread}"
            + ("; the machine slowed them (interference)." if hindered else ".")
        ),
    )


def _uneven_spread(info: TargetInfo, endpoint: EndpointBursts, point: Point) -> str:
    """Where each process runs its requests on one core, how unevenly the OS handed them out."""
    execution = info.endpoints[endpoint.name].execution
    measured = [r for r in point.runs if r.verdict != "failed"]
    most = max((r.most_on_one_process or 0 for r in measured), default=0)
    even = causes.even_share(point.n, info.workers)
    one_core_each = endpoint.work == "cpu" and execution in ONE_CORE_PER_PROCESS
    if info.workers < 2 or not one_core_each or most <= even:
        return ""
    held = _held(info, endpoint, most)
    return (
        f"; one worker took {most} of the {point.n} requests where an even spread gives it {even} "
        f"(the OS hands connections to whichever worker accepts first: accept fairness{held}), "
        "and the model takes the spread as measured"
    )


def _held(info: TargetInfo, endpoint: EndpointBursts, most: int) -> str:
    """Where the busiest worker took more requests than it runs at once, and the server says its
    workers admit that many connections: why they waited there rather than go to a free worker."""
    runs_each = (endpoint.slots or 0) / info.workers
    if info.admits_per_worker is None or info.admits_per_worker <= runs_each or most <= runs_each:
        return ""
    return (
        f"; each worker admits up to {info.admits_per_worker} connections while it runs "
        f"{plural(runs_each, 'request')} at a time, so the rest wait on the worker that took them"
    )


def _interference(name: str, info: TargetInfo, endpoint: EndpointBursts) -> Finding | None:
    hit = [r for p in endpoint.points for r in p.runs if r.verdict == "interference"]
    if not hit:
        return None
    runs = sum(len(p.runs) for p in endpoint.points)
    worst = min(hit, key=lambda r: r.share or 1.0)
    takers = sorted({r.cause for r in hit if r.cause})
    lost = [r.accounting.lost_core_s for r in hit if r.accounting]
    return Finding(
        kind="interference",
        target=name,
        subject=endpoint.name,
        text=(
            f"{label(name, info)} {endpoint.name}: {len(hit)} of {plural(runs, 'burst')} ran slower than "
            f"their measured work allows because {' and '.join(takers)} took CPU "
            f"({sum(lost):.2f} CPU s lost; at worst n={worst.n} got "
            f"{(worst.share or 0) * 100:.0f} % of the CPU "
            "the model allows). The machine, not the server."
        ),
    )


def _departures(name: str, info: TargetInfo, endpoint: EndpointBursts) -> list[Finding]:
    found = []
    for point in endpoint.points:
        departing = [r for r in point.runs if r.verdict == "departs"]
        ratio = point.ratio_unhindered
        if ratio is None or not departing or abs(ratio - 1) <= MODEL_AGREEMENT:
            continue
        run = _median_run(departing)
        assert run.makespan_s is not None and run.ratio is not None
        assumption = causes.departure(
            info.endpoints[endpoint.name],
            info,
            n=point.n,
            ratio=run.ratio,
            most_on_one_process=run.most_on_one_process,
            server_cpu_s=run.accounting.target_s if run.accounting else None,
            work_cpu_s=run.cpu_s,
            delivery_lag_s=run.delivery_lag_s,
            makespan_s=run.makespan_s,
        )
        found.append(
            Finding(
                kind="departure",
                target=name,
                subject=endpoint.name,
                text=(
                    f"{label(name, info)}: {point.n} simultaneous {endpoint.name} requests took "
                    f"{ratio:.2f} x what processor sharing over their measured work predicts "
                    f"({endpoint.capacity.description}), with no interference measured. "
                    f"The assumption that failed: {assumption}."
                ),
            )
        )
    return found


def _median_run(runs: list[BurstRun]) -> BurstRun:
    return sorted(runs, key=lambda r: r.ratio or 0.0)[len(runs) // 2]


def _failures(name: str, info: TargetInfo, endpoint: EndpointBursts) -> list[Finding]:
    """Failed requests; on a team's paths, an HTTP status is the app's answer (app_answers)."""
    found = [
        Finding(
            kind="failure",
            target=name,
            subject=endpoint.name,
            text=f"{label(name, info)}: {count} {endpoint.name} request(s) failed: {error}.",
        )
        for error, count in sorted(endpoint.failures.items())
        if endpoint.work != "app" or not is_answer(error)
    ]
    check = endpoint.metrics
    if check and not check.matches:
        found.append(
            Finding(
                kind="failure",
                target=name,
                subject=endpoint.name,
                text=(
                    f"{label(name, info)}: the server counted {check.counted:g} {endpoint.name} requests, "
                    f"the tester sent {check.sent}."
                ),
            )
        )
    return found


def endpoint_findings(name: str, info: TargetInfo, endpoint: EndpointBursts) -> list[Finding]:
    found = [f for f in (_shape(name, info, endpoint), _interference(name, info, endpoint)) if f]
    return [*found, *_departures(name, info, endpoint), *_failures(name, info, endpoint)]


def points_missing(endpoint: EndpointBursts | None, burst_max: int, repeats: int) -> list[str]:
    """The burst sizes short of their repeats: fewer than R, unless a majority agreed (repeats.py)."""
    have: dict[int, Point] = {p.n: p for p in endpoint.points} if endpoint else {}
    return [
        f"n={n}: {len(have[n].runs) if n in have else 0} of {repeats} repeats"
        for n in range(1, burst_max + 1)
        if n not in have or not enough([run.ratio for run in have[n].runs], repeats)
    ]


def answers_across(summaries: list[tuple[str, BurstsSummary]]) -> list[Finding]:
    """Per path of a team's app, what it answered that was not a success, on every configuration."""
    counts: dict[str, Counts] = {}
    for name, summary in summaries:
        for endpoint in (e for e in summary.endpoints if e.work == "app"):
            counts.setdefault(endpoint.name, []).append((name, endpoint.sent, endpoint.failures))
    found = [app_answers(path, "burst", per_target) for path, per_target in counts.items()]
    return [finding for finding in found if finding is not None]
