"""Without a target rate: the proposal is sized at the most it keeps the objective at over minutes
of traffic too, not only in a proof's 20 s. A proof's run starts from idle, so near the knee its
p99 is short of where a queue gets to over minutes: sqladmin (from PyPI) at P99=0.2 was proposed on
uvicorn with 4 workers at 54.9/s, a proof's run predicted at 0.19 s and minutes of it at 0.27 s, and
its proof measured 0.26 s. The team's configuration is sized the same way (the answer compares the
two), and so is another family's best that may keep more than the proposal over minutes, which is
then proposed where it does (`over_minutes`).

Minutes of a rate are SUSTAINED_SEEDS runs of up to 40,000 requests (0.08-0.25 s of CPU each at
45-87/s of the bench's mix and sqladmin's costs); where the first two agree on a side of the
objective, the third is not made (held.minutes_p99). Where minutes of the rate miss, it is bisected
on the first seed's run alone, then confirmed on all of them (the first one reused). The screens
the walk with a target rate takes (held.py: 150 s, 0.02-0.04 s) read a queue at the knee too short
to bisect on (the bench's mix on gunicorn sync 6 workers, 0.33 s screened at 52/s against an
objective of 0.4 s, 0.41 s over minutes), so one only spares a run where it misses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace

from labtester.sizing.candidates import Candidate
from labtester.sizing.held import minutes_p99, minutes_runs, model_key
from labtester.sizing.search import BETTER, Search
from labtester.sizing.sized import Found, Sized

LOWEST = 0.5  # of the rate a proof's run keeps: no rate below it is tried
RESOLUTION = 5  # the bisection stops within 1/2**RESOLUTION of the rate (4 steps from LOWEST)
CONFIRMS = 2  # full figures: at the rate the bisection settles on, then STEP below it (not below LOWEST)
STEP = 0.95


@dataclass
class Minutes:
    """Minutes of rates on the search's state: each first run made once, by what the model simulates
    (held.model_key: gthread's and granian-wsgi's alike are one run)."""

    state: Search
    firsts: dict[tuple[object, ...], float | None] = field(default_factory=dict)
    screens: dict[tuple[object, ...], float | None] = field(default_factory=dict)

    def first(self, candidate: Candidate, rate: float) -> float | None:
        """The p99 of the first of minutes_p99's runs; None where minutes of the rate are not simulated."""
        key = (*model_key(self.state, candidate), rate)
        if key not in self.firsts:
            runs = minutes_runs(self.state, candidate, rate)
            self.firsts[key] = None if runs is None else next(runs)
        return self.firsts[key]

    def figure(self, candidate: Candidate, rate: float) -> float | None:
        first = self.first(candidate, rate)
        return None if first is None else minutes_p99(self.state, candidate, rate, made=(first,))

    def may_keep(self, candidate: Candidate, rate: float) -> bool:
        """Whether the first run keeps the objective, where a screen (a shorter run, which reads a
        queue shorter) does first: one that misses spares the run."""
        objective, key = self.state.objective_s, (*model_key(self.state, candidate), rate)
        if key not in self.screens:
            self.screens[key] = minutes_p99(self.state, candidate, rate, screen=True)
        screened = self.screens[key]
        first = self.first(candidate, rate) if screened is not None and screened <= objective else None
        return first is not None and first <= objective

    def keeps(self, candidate: Candidate, rate: float) -> Sized | None:
        """Sized at `rate` where minutes of it keep the objective and a proof's run does, else None."""
        objective = self.state.objective_s
        if not self.may_keep(candidate, rate):
            return None
        full = self.figure(candidate, rate)
        if full is None or full > objective or self.state.proof_p99(candidate, rate) > objective:
            return None
        p99 = self.state.proof_figure(candidate, rate)
        return Sized(candidate, rate, p99, sustained_p99_s=full, proved=True)


def kept_over_minutes(minutes: Minutes, sized: Sized, least: float = 0.0) -> Sized:
    """`sized` (at a rate a proof's run keeps) at the most of that rate minutes of which keep the
    objective too, with that figure (`sustained_p99_s`); as it was, with its figure, where minutes of
    it are not simulated, keep it already, or no rate confirmed from LOWEST of it (or `least`) up
    does (its figure then misses, and the answer says so)."""
    candidate, rate, objective = sized.candidate, sized.rate_per_s, minutes.state.objective_s
    full = minutes.figure(candidate, rate) if rate > 0 else None
    lowest = max(LOWEST * rate, least)
    if full is None or full <= objective or lowest >= rate:  # (at `least` or over: nothing to try)
        return replace(sized, sustained_p99_s=full)
    low, high = lowest, rate
    while (high - low) * 2**RESOLUTION > rate * (1 + 1e-9):  # (no step more for a rounding's sake)
        middle = (low + high) / 2
        low, high = (middle, high) if minutes.may_keep(candidate, middle) else (low, middle)
    for _ in range(CONFIRMS):
        if low >= lowest and (kept := minutes.keeps(candidate, low)) is not None:
            return kept
        low *= STEP
    return replace(sized, sustained_p99_s=full)


def over_minutes(state: Search, found: Found) -> Found:
    """The search's answer with no target rate, its proposal and the team's configuration at the most
    minutes of which keep the objective (`kept_over_minutes`). A contending family's best (Found.
    contenders) whose first run of minutes keeps BETTER times the proposal's rate is sized so too,
    and proposed where it keeps more than that; the other families' bests stay at the rates a proof's
    run keeps (sizing each would take the bench's mix from 1.0 s of CPU to 3.0)."""
    if found.proposed is None:
        return found
    made, minutes = state.simulations, Minutes(state)
    proposed = first = kept_over_minutes(minutes, found.proposed)
    for sized in sorted(found.best_by_family.values(), key=lambda s: -s.rate_per_s):
        above = BETTER * proposed.rate_per_s
        if sized.rate_per_s <= above or above <= 0:
            break
        candidate = sized.candidate
        if candidate.family.name not in found.contenders or candidate.label == proposed.candidate.label:
            continue
        if minutes.may_keep(candidate, above):  # the most it keeps, judged above `above` only
            contender = kept_over_minutes(minutes, sized if sized.proved else state.refined(sized), above)
            if contender.rate_per_s > above and (contender.sustained_p99_s or 0.0) <= state.objective_s:
                proposed = contender
    best = {**found.best_by_family, first.candidate.family.name: first}
    best[proposed.candidate.family.name] = proposed
    team = found.fixed
    if team is not None:
        same = next((s for s in (first, proposed) if s.candidate.label == team.candidate.label), None)
        at_minutes = same or kept_over_minutes(minutes, team)
        best = {name: at_minutes if sized is team else sized for name, sized in best.items()}
        team = at_minutes
    simulations = found.simulations + state.simulations - made
    return dataclasses.replace(
        found, proposed=proposed, best_by_family=best, fixed=team, simulations=simulations
    )
