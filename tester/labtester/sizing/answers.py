"""The sizing in words: the headline that comes first, the answer with its chart (predicted
against measured per family), and the table of every configuration proved."""

from __future__ import annotations

from rich import box
from rich.table import Table

from labtester.findings.wording import seconds
from labtester.sizing.caveat import NO_RATE, Caveat
from labtester.sizing.document import DEPARTS, Level, Objective, SizedSummary, SizingConclusion
from labtester.sizing.words import (
    band,
    costs_said,
    from_warmup,
    gib,
    goal,
    kept_goal,
    measured,
    minutes,
    over_minutes,
    sustained,
)
from labtester.views import Answer, Chart, Line


def decided(conclusion: SizingConclusion) -> SizingConclusion:
    """The conclusion with its answer: the configuration it names (`chosen`: the proposal, unless
    its proof missed the objective where another's kept it) and the headline saying so."""
    best = conclusion.proved_best()
    proposed = conclusion.proposed
    chosen = best[0].label if best else proposed.label if proposed else None
    return conclusion.model_copy(update={"chosen": chosen, "headline": _headline(conclusion, best)})


def _headline(conclusion: SizingConclusion, best: tuple[SizedSummary, Level] | None) -> str:
    """`Serve X with gunicorn gthread, 2 workers x 24 threads, on 2 cores and 1 GiB: predicted ...`:
    the answer a team reads first, with only how far a proof departed; what the run predicted from
    its warm-up, the band of its draws and what explains a departure are in each proof's evidence."""
    pod = f"{conclusion.pod.cores:g} cores and {gib(conclusion.pod.memory_bytes)}"
    proposed = conclusion.proposed
    aim = goal(conclusion.objective.p99_s)
    needed, rate = conclusion.needed, conclusion.objective.rate_per_s
    if proposed is None and needed is not None and needed.needs_pod is not None and rate is not None:
        needs = _needs(needed, conclusion.objective)
        return f"No configuration on {pod} serves {rate:g}/s at {aim}; {needs}."
    if proposed is None:
        said = [c.text.rstrip(".") for c in conclusion.caveats if c.kind in ("no-rate", "not-served")]
        return f"No configuration on {pod} meets {aim}: {'; '.join(said) or NO_RATE}."
    level = proposed.at_sustainable()
    serves = (
        f"{rate:g}/s with the smallest configuration that does, " if rate is not None else "the app with "
    )
    if best is not None and best[0].role == "resized" and best[1] == best[0].at_sustainable():
        text = _resized(serves, pod, proposed, best[0]) + _not_over_minutes(proposed, conclusion.objective)
        chosen = best[0].label
    elif best is not None:
        text = _decided_by_proof(serves, pod, conclusion.objective, proposed, *best)
        chosen = best[0].label
    else:
        text = (
            f"Serve {serves}{proposed.label}, on {pod}: predicted {proposed.sustainable_per_s:.1f}/s at p99 "
            f"{seconds(proposed.predicted_p99_s)}, {measured(level)}"
        )
        departs = _departed(level, conclusion.pod.cores)
        if departs:
            text += f" ({', '.join(departs)})"
        if (level is None or level.measured_per_s is None) and proposed.error:
            text += f" ({proposed.error})"
        if level is not None and level.measured_per_s is not None and not level.met(conclusion.objective):
            text += f"; its proof missed {aim}, and no configuration proved met it"
        chosen = proposed.label
    fixed = conclusion.fixed
    fixed_level = fixed.at_sustainable() if fixed else None
    if fixed is not None and fixed.label == chosen:
        text += "; the best of the fixed configurations is this one already"
    elif fixed is not None and fixed_level is not None and fixed_level.measured_per_s is not None:
        sized = "sized the same way" if fixed.sustainable_per_s > 0 else f"at the proposal's rate ({NO_RATE})"
        text += f"; the best of the fixed configurations, {fixed.label}, {sized}, {measured(fixed_level)}"
    elif conclusion.fixed_best is not None:
        served = conclusion.fixed_best.flows_per_s
        text += f"; the best of the fixed configurations served {served:.1f}/s in the flows"
    if best is None and needed is not None and needed.needs_pod is not None and rate is not None:
        # Sized again on the proofs' CPU, nothing in the pod served the rate (the proposal is named).
        text += (
            f"; sized again on the CPU the proofs measured ({_moved(needed)}), no configuration on {pod} "
            f"serves {rate:g}/s at {aim} in the model: {_needs(needed, conclusion.objective)}"
        )
    named = best[0] if best is not None else proposed  # the summary whose levels the answer gave
    return text + "." + sustained(named, conclusion.objective, best[1].offered_per_s if best else None)


def _resized(serves: str, pod: str, proposed: SizedSummary, resized: SizedSummary) -> str:
    """The answer where the proposal was sized again on the CPU the proofs measured, and the
    new proposal's own proof kept the objective."""
    level, first = resized.at_sustainable(), proposed.at_sustainable()
    departs = _departed(level, resized.pod.cores)
    again = f" ({', '.join(departs)})" if departs else ""
    first_as = "" if proposed.label == resized.label else f" as {proposed.label}"
    return (
        f"Serve {serves}{resized.label}, on {pod}: sized again on the CPU the proofs measured "
        f"({_moved(resized)}), "
        f"predicted {resized.sustainable_per_s:.1f}/s at p99 {seconds(resized.predicted_p99_s)}, "
        f"{measured(level)}{again}; first sized on the flows' CPU{first_as}, predicted "
        f"{proposed.sustainable_per_s:.1f}/s at p99 {seconds(proposed.predicted_p99_s)}, {measured(first)}"
    )


def _departed(level: Level | None, cores: float) -> list[str]:
    """How far a proof departed, briefly, and the cores the machine left it where it left fewer than
    the pod's by more than DEPARTS: a departure the machine made, not the model."""
    if level is None or not (said := level.departures(brief=True)):
        return []
    free = level.cores_free
    if free is not None and free < (1 - DEPARTS) * cores:
        said.append(f"the machine and its load client left it {free:.2f} of the pod's {cores:g} cores")
    return said


def _moved(again: SizedSummary) -> str:
    """Whose CPU moved, where the proposal was sized again (role resized or needed)."""
    if again.resized_on is None:
        return "its family's as the flows gave it, another's moved"
    cost = f"{again.resized_on:.2f}x the CPU the plan drew: its own, the server's and the load client's"
    return f"a request of its family cost {cost}"


def _needs(needed: SizedSummary, objective: Objective) -> str:
    """`the pod it would need has 4 cores and 2 GiB: uvicorn, 3 workers, predicted ...`"""
    pod = needed.needs_pod
    bigger = f"{pod.cores:g} cores and {gib(pod.memory_bytes)}" if pod is not None else "more"
    top = needed.at_sustainable()
    held = top.sustained_p99_s if top is not None else None
    misses = (
        ", which traffic that stays at the rate misses in the model: it may need a bigger pod still, or"
        " a configuration the walk did not reach"
        if held is not None and held > objective.p99_s
        else ""
    )
    return (
        f"the pod it would need has {bigger}: {needed.label}, predicted {needed.sustainable_per_s:.1f}/s at "
        f"p99 {seconds(needed.predicted_p99_s)}{over_minutes(top) if top else ''}{misses} (not proved: this "
        "machine is not that pod)"
    )


def _not_over_minutes(proposed: SizedSummary, objective: Objective) -> str:
    """`, which traffic that stays at the rate misses: ...`, where the proposal's proof met the
    objective at RATE= and the sustained figure (on the CPU it used) does not keep it."""
    level = proposed.at_sustainable()
    if objective.rate_per_s is None or level is None or not level.met(objective) or level.holds(objective):
        return ""
    on = " on the CPU its requests used" if level.sustained_used_p99_s is not None else ""
    return (
        f", which traffic that stays at the rate misses: p99 {seconds(level.sustained_said_p99_s or 0.0)} "
        f"over {minutes(level.sustained_s or 0.0)} in the model{on}"
    )


def _decided_by_proof(
    serves: str, pod: str, objective: Objective, proposed: SizedSummary, chosen: SizedSummary, met: Level
) -> str:
    """The answer where the proposal did not keep the objective and a proof run did: that run's
    configuration, at the rate it was proved at (the proof decides, not the model)."""
    aim = kept_goal(objective.p99_s, met)
    missed = proposed.at_sustainable()
    kept = (
        f"its proof kept {aim} at {met.offered_per_s:.1f}/s offered, {measured(met)} (predicted "
        f"{met.predicted_per_s:.1f}/s at p99 {seconds(met.predicted_p99_s)})"
    )
    if chosen.label == proposed.label:
        return (
            f"Serve {serves}{chosen.label}, on {pod}, at up to {met.offered_per_s:.1f}/s: {kept}; at the "
            f"{proposed.sustainable_per_s:.1f}/s the model predicted for it, the proof missed it: "
            f"{measured(missed)}"
        )
    return (
        f"Serve {serves}{chosen.label}, on {pod}: {kept}; the model's pick, {proposed.label}, predicted "
        f"{proposed.sustainable_per_s:.1f}/s at p99 {seconds(proposed.predicted_p99_s)}, "
        + (
            f"{measured(missed)}{_not_over_minutes(proposed, objective)}"
            if missed is not None and missed.met(objective)
            else f"missed it in its proof: {measured(missed)}"
        )
    )


def _proof(summary: SizedSummary) -> str:
    """Each of its proof runs, predicted beside measured; or why there was none."""
    if not summary.levels:
        return summary.error or "not proved"
    runs = ", ".join(
        f"at {lv.offered_per_s:.1f}/s predicted {lv.predicted_per_s:.1f}/s "
        f"p99 {seconds(lv.predicted_p99_s)}{band(lv.p99_band_s)}{over_minutes(lv)}{from_warmup(lv)}, "
        f"{measured(lv)}" + (f" ({', '.join(lv.departures())})" if lv.departures() else "")
        for lv in summary.levels
    )
    return runs if summary.sustainable_per_s > 0 else f"{NO_RATE}; offered the proposal's rates, {runs}"


def answer(conclusion: SizingConclusion) -> Answer:
    """The headline, then a line of evidence per configuration proved and one of its costs; each
    caveat on a line of its own, one said of several configurations said once for all of them."""
    proved = conclusion.each()
    evidence = "\n".join(f"{s.label} ({s.role}): {_proof(s).rstrip('.')}." for s in proved)
    # The costs the named configuration was sized on: the re-sizing's where it is the one named.
    best, again = conclusion.proved_best(), conclusion.resized
    shown = best[0] if best is not None and best[0].role == "resized" else conclusion.proposed
    shown = shown or next(iter(proved), None)  # nothing proposed: the first configuration planned
    costs = costs_said(shown.kinds if shown else [])
    resizing = f"; {again.simulations} more in {again.search_cpu_s:.2f} s to size again" if again else ""
    return Answer(
        order=0,
        key="sizing",
        question=f"How should this app be served on {conclusion.pod.cores:g} cores and "
        f"{gib(conclusion.pod.memory_bytes)} for {goal(conclusion.objective.p99_s)} "
        f"({conclusion.objective.why})?",
        answer=conclusion.headline,
        evidence=f"{evidence}\nCosts per request: {costs}. The search took "
        f"{conclusion.search_cpu_s:.2f} s of CPU ({conclusion.simulations} simulations{resizing}).",
        caveat="\n".join(_grouped(conclusion.caveats)) or None,
        chart=_chart(proved),
    )


def _grouped(caveats: list[Caveat]) -> list[str]:
    """Each caveat once: `A; B: each worker accepts ...` where A's and B's said the same."""
    said: dict[str, list[str | None]] = {}
    for caveat in caveats:
        owners = said.setdefault(caveat.text.rstrip("."), [])
        owners += [] if caveat.about in owners else [caveat.about]
    lines = []
    for text, owners in said.items():  # said of no configuration in particular: of all of them
        named = "" if None in owners else "; ".join(o for o in owners if o)
        lines.append(f"{named}: {text}." if named else f"{text}.")
    return lines


def _chart(proved: list[SizedSummary]) -> Chart | None:
    lines = [
        Line(
            label=s.family if s.role not in ("fixed", "resized", "needed") else f"{s.family} ({s.role})",
            x=[lv.offered_per_s for lv in sorted(s.levels, key=lambda lv: lv.offered_per_s)],
            y=[lv.measured_per_s for lv in sorted(s.levels, key=lambda lv: lv.offered_per_s)],
            reference=[lv.predicted_per_s for lv in sorted(s.levels, key=lambda lv: lv.offered_per_s)],
        )
        for s in proved
        if s.levels
    ]
    if not lines:
        return None
    return Chart(
        name="sizing",
        title="Sizing: served against offered, per family",
        x_label="offered (req/s)",
        y_label="served (req/s)",
        reference="predicted",
        lines=lines,
        integer_x=False,
    )


def table(conclusion: SizingConclusion) -> Table:
    table = Table(
        title="Sizing: each configuration proved at each rate, predicted beside measured (pred: the plan's, "
        "from the flows; sustained: p99 over minutes of the rate, on the CPU its run used where proved; "
        "warm-up's: p99 from what its run measured before its window; meas: after its warm-up)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in ("configuration", "role", "memory", "offered", "pred/s", "meas/s", "pred p99 s",
                   "sustained", "warm-up's", "meas p99 s", "failed", "load"):  # fmt: skip
        left = column in ("configuration", "role")
        table.add_column(column, justify="left" if left else "right", no_wrap=column == "configuration")
    for s in conclusion.each():
        # Its family and knobs ("gevent 2x250"), once, on its first rate: the full label is in the answers.
        short = f"{s.family} {s.processes}" + (f"x{s.threads}" if s.per_process_unit else "")
        for i, lv in enumerate(sorted(s.levels, key=lambda lv: lv.offered_per_s)):
            named = i == 0
            table.add_row(
                short if named else "", s.role if named else "", gib(s.memory_bytes) if named else "",
                f"{lv.offered_per_s:.1f}", f"{lv.predicted_per_s:.1f}",
                "-" if lv.measured_per_s is None else f"{lv.measured_per_s:.1f}", f"{lv.predicted_p99_s:.3f}",
                "-" if lv.sustained_said_p99_s is None else f"{lv.sustained_said_p99_s:.3f}",
                "-" if lv.warmup_predicted_p99_s is None else f"{lv.warmup_predicted_p99_s:.3f}",
                "-" if lv.measured_p99_s is None else f"{lv.measured_p99_s:.3f}", str(lv.failed),
                "-" if lv.load_average is None else f"{lv.load_average:.1f}",
            )  # fmt: skip
    return table
