"""Without a target rate: a configuration is proposed at the most it keeps the objective at over
minutes of traffic too, not only in a proof's 20 s. A proof's run starts from idle, so near the
knee its p99 is short of where a queue gets to over minutes: sqladmin (from PyPI) at P99=0.2 was
proposed on uvicorn with 4 workers at 54.9/s, a proof's run predicted at 0.19 s and minutes of it
at 0.27 s, and its proof measured 0.26 s. The team's configuration is sized the same way (the answer
compares the two), and another family's best is proposed instead where minutes of BETTER times the
proposal's rate keep the objective on it.

Minutes of a rate are SUSTAINED_SEEDS runs of up to 40,000 requests (0.08-0.25 s of CPU each at
45-87/s of the bench's mix and sqladmin's costs), their figure the one the proposal's level
shows. Where they miss, the rate is bisected on the first seed's run alone, then confirmed on all
of them (the first one reused). The screens the walk with a target rate takes (held.py: 150 s,
0.02-0.04 s) read a queue at the knee too short to bisect on: the bench's mix on gunicorn sync 6
workers, 0.33 s screened at 52/s against an objective of 0.4 s, 0.41 s over minutes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace

from labtester.sizing.candidates import Candidate
from labtester.sizing.document import sustained_length
from labtester.sizing.held import minutes_p99, model_key
from labtester.sizing.model import sustained_runs
from labtester.sizing.search import BETTER, Search
from labtester.sizing.sized import Found, Sized

LOWEST = 0.75  # of the rate a proof's run keeps: the bisection looks no lower (its 80 % level is proved)
BISECTIONS = 3  # to 1/32 of the rate
CONFIRMS = 2  # full figures: at the rate the bisection settles on, then STEP below it
STEP = 0.95


@dataclass
class _Minutes:
    """Minutes of rates on the search's state: each first run made once, by what the model simulates
    (held.model_key: gthread's and granian-wsgi's alike are one run)."""

    state: Search
    firsts: dict[tuple[object, ...], float | None] = field(default_factory=dict)
    screens: dict[tuple[object, ...], float | None] = field(default_factory=dict)

    def first(self, candidate: Candidate, rate: float) -> float | None:
        """The p99 of the first of minutes_p99's runs; None where minutes of the rate are not simulated."""
        key = (*model_key(self.state, candidate), rate)
        if key not in self.firsts:
            state, length = self.state, sustained_length(rate)
            if length is None:
                self.firsts[key] = None
            else:
                kinds, config = state.kinds[candidate.family.name], candidate.configuration
                runs = sustained_runs(kinds, config, state.pod.cores, rate, length, state.floor(candidate))
                state.simulations += 1
                self.firsts[key] = next(runs)
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


def kept_over_minutes(minutes: _Minutes, sized: Sized, said: bool = True) -> Sized:
    """`sized` (at a rate a proof's run keeps) at the most of that rate minutes of which keep the
    objective too, with that figure (`sustained_p99_s`); as it was, with its figure, where minutes of
    it are not simulated, keep it already, or no rate confirmed below it does (the answer says so;
    not `said`: without the figure there, which nothing shows)."""
    candidate, rate, objective = sized.candidate, sized.rate_per_s, minutes.state.objective_s
    first = minutes.first(candidate, rate) if rate > 0 else None
    if first is None or first <= objective:  # its figure, which may yet miss (the answer says so)
        return replace(sized, sustained_p99_s=first and minutes.figure(candidate, rate))
    low, high = LOWEST * rate, rate
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if minutes.may_keep(candidate, middle) else (low, middle)
    for _ in range(CONFIRMS):
        if (kept := minutes.keeps(candidate, low)) is not None:
            return kept
        low *= STEP
    return replace(sized, sustained_p99_s=minutes.figure(candidate, rate) if said else None)


def over_minutes(state: Search, found: Found) -> Found:
    """The search's answer with no target rate, its proposal and the team's configuration at rates
    minutes of which keep the objective (`kept_over_minutes`); a contender (Found.contenders) whose
    best keeps BETTER times the proposal's rate over minutes and in a proof's run is proposed there."""
    if found.proposed is None:
        return found
    made, minutes = state.simulations, _Minutes(state)
    first = kept = kept_over_minutes(minutes, found.proposed)
    for sized in sorted(found.best_by_family.values(), key=lambda s: -s.rate_per_s):
        above = BETTER * kept.rate_per_s
        if sized.rate_per_s <= above or above <= 0:
            break
        contends = sized.candidate.family.name in found.contenders
        if contends and sized.candidate.label != kept.candidate.label:
            kept = minutes.keeps(sized.candidate, above) or kept
    best = {**found.best_by_family, first.candidate.family.name: first, kept.candidate.family.name: kept}
    team = found.fixed
    if team is not None:
        same = next((s for s in (first, kept) if s.candidate.label == team.candidate.label), None)
        at_minutes = same or kept_over_minutes(minutes, team, said=False)  # its plan shows no minutes
        best = {name: at_minutes if sized is team else sized for name, sized in best.items()}
        team = at_minutes
    simulations = found.simulations + state.simulations - made
    return dataclasses.replace(found, proposed=kept, best_by_family=best, fixed=team, simulations=simulations)
