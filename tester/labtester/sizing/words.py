"""The sizing's words shared by its headline and its answer: a level's measured figures, the
sustained sentence (traffic that stays at a rate); and the answer's evidence: the run's own
prediction from its warm-up, the band of its draws, the stops a kind's collections drew."""

from __future__ import annotations

from collections.abc import Sequence

from labtester.findings.wording import seconds, seconds_between
from labtester.sizing.document import DEPARTS, KindCost, Level, Objective, SizedSummary


def gib(size: int) -> str:
    return f"{size / (1 << 30):.3g} GiB" if size >= 1 << 30 else f"{size / (1 << 20):.0f} MiB"


def goal(p99_s: float) -> str:
    """`p99 0.55 s`; under a tenth of a second `p99 1.2 ms` (a light path's: 0.00 s said nothing)."""
    return f"p99 {seconds(p99_s)}"


def kept_goal(p99_s: float, level: Level | None) -> str:
    """The objective a proof run kept (Level.met): where its p99 was above it, within the bar one
    run's p99 is held to, said so (datasette's "kept p99 0.72 s ... at p99 0.78 s" read as a slip)."""
    p99 = level.measured_p99_s if level is not None else None
    if p99 is not None and p99 > p99_s:
        return f"{goal(p99_s)} (within the {DEPARTS * 100:.0f} % one run's p99 is held to)"
    return goal(p99_s)


def measured(level: Level | None) -> str:
    if level is None or level.measured_per_s is None:
        return "not measured"
    p99 = seconds(level.measured_p99_s) if level.measured_p99_s is not None else "-"
    return f"measured {level.measured_per_s:.1f}/s at p99 {p99}"


def minutes(length_s: float) -> str:
    return "1 minute" if round(length_s) == 60 else f"{length_s / 60:.2g} minutes"


def over_minutes(level: Level) -> str:
    held, length_s, used = level.sustained_p99_s, level.sustained_s, level.sustained_used_p99_s
    if held is None or not length_s:
        return ""
    ratio = f" ({level.sustained_cpu_ratio:.2f}x the plan's)" if level.sustained_cpu_ratio else ""
    on_used = (
        "" if used is None else f" on the plan's CPU, {seconds(used)} on the CPU its requests used{ratio}"
    )
    return f" (sustained for {minutes(length_s)}: {seconds(held)}{on_used})"


def used_cpu(held: list[Level]) -> str:
    """`, on the CPU its proofs' requests used (1.46-1.49x the plan's),`: where the figures are so."""
    if not (on_used := [lv.sustained_used_p99_s is not None for lv in held]) or not any(on_used):
        return ","
    where = "" if all(on_used) else " where measured"
    ratios = sorted(r for lv in held if (r := lv.sustained_cpu_ratio))
    span = "-".join(dict.fromkeys(f"{r:.2f}" for r in ratios[:1] + ratios[-1:]))
    return f", on the CPU its proofs' requests used{where}" + (f" ({span}x the plan's)," if span else ",")


def band(p99s: list[float]) -> str:
    """` (0.42-0.55 s in one run)`: where the prediction's draws put one run's p99."""
    return f" ({seconds_between(*p99s)} in one run)" if len(p99s) == 2 else ""


def sustained(summary: SizedSummary | None, objective: Objective, up_to: float | None = None) -> str:
    """` Sustained for 10 minutes on gunicorn sync, 7 workers, the model puts p99 at ...`: what a
    team running at the named configuration's rates sees, which no 20-s proof measures; the most of
    them that keeps the objective so. Empty where its levels have no such figure (not the
    proposal's, or a rate too high for minutes of it to be simulated). `up_to`: the rate the answer
    named, where a proof decided it: no rate above it, which that proof missed, is spoken of."""
    up = up_to or float("inf")
    held = sorted(
        (
            lv
            for lv in (summary.levels if summary else [])
            if lv.sustained_said_p99_s is not None and lv.sustained_s and lv.offered_per_s <= up
        ),
        key=lambda lv: -lv.offered_per_s,
    )
    if summary is None or not held:
        return ""
    each = " and ".join(
        f"{seconds(lv.sustained_said_p99_s or 0.0)} at {lv.offered_per_s:.1f}/s" for lv in held
    )
    kept = [lv for lv in held if (lv.sustained_said_p99_s or 0.0) <= objective.p99_s]
    aim = goal(objective.p99_s)
    if kept and kept[0] is held[0]:
        verdict = f"{aim} holds for traffic that stays at {held[0].offered_per_s:.1f}/s"
    elif kept:
        top, most = held[0].offered_per_s, kept[0].offered_per_s
        verdict = f"traffic that stays at the rate keeps {aim} at {most:.1f}/s, not at {top:.1f}/s"
    else:
        verdict = f"traffic that stays at any rate offered misses {aim}"
    said = f"{minutes(held[0].sustained_s or 0.0)} on {summary.label}{used_cpu(held)}"
    return f" Sustained for {said} the model puts p99 at {each}: {verdict}."


def from_warmup(level: Level | None) -> str:
    """` (p99 0.40 s on the CPU measured before its window, 1.08x the plan's, and the 1.95 cores its
    first 4 s left it, a full collection every 2,957 requests)`: the run's own prediction (its
    warm-up's, and the configuration's runs before)."""
    if level is None or level.warmup_predicted_p99_s is None:
        return ""
    ratio = f", {level.warmup_cpu_ratio:.2f}x the plan's" if level.warmup_cpu_ratio is not None else ""
    free, client = level.warmup_cores_free, level.warmup_client_cpu_s
    left = f", and the {free:.2f} cores its first {level.warmup_s:g} s left it" if free is not None else ""
    if left and client:
        left += f" and its client ({client * 1000:.2f} ms a request)"
    if collections := level.warmup_full_collections_per_request:  # counted there, the plan's beside
        left += f", a full collection every {1 / collections:,.0f} requests"
    return (
        f" (p99 {seconds(level.warmup_predicted_p99_s)} on the CPU measured before its window{ratio}{left})"
    )


def costs_said(kinds: Sequence[KindCost]) -> str:
    """`/json 0.3 ms CPU (mean) + 0.1 ms server's + 0 ms wait, a full collection every 4,762 requests
    (25 ms), ...`: what each kind cost the model, the stops its collections drew where it drew any."""
    said = []
    for k in kinds:
        cost = f"{k.name} {k.mean_cpu_s * 1000:.1f} ms CPU (mean) + {k.overhead_s * 1000:.1f} ms server's "
        cost += f"+ {k.wait_s * 1000:.0f} ms wait"
        if k.full_collections_per_request > 0:
            every, cpu_ms = 1 / k.full_collections_per_request, k.full_collection_cpu_s * 1000
            cost += f", a full collection every {every:,.0f} requests ({cpu_ms:.0f} ms)"
        said.append(cost)
    return ", ".join(said)
