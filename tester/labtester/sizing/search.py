"""The search: per family, the configuration within the pod's memory with the most throughput
whose simulated p99 meets the objective (with a target rate, the smallest that serves it: serving.py).

Simulations are what costs, so Little's law prunes first: a configuration cannot sustain more
than its ceiling (slots over the time a request holds one, cores over its CPU), so a family whose
best ceiling is below the best rate found is not simulated, and within a family only the smallest
configurations near its highest ceiling are (more threads than the rate needs buy no throughput,
and cost memory and the GIL's contention). Each sustainable rate is a bisection on the rate with
the same simulated requests, so its steps are smooth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from labtester.sizing.arrivals import SEED
from labtester.sizing.candidates import Candidate, candidates
from labtester.sizing.document import MOST_PREDICTED, warmup_of
from labtester.sizing.families import Family
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import REPLICATIONS, Predicted, Runs, simulate
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.proof import proof_run
from labtester.sizing.sized import Found, Sized

# The most of its ceiling a configuration is sized to: the ceiling rests on measured costs, good to
# about a tenth, and a queue at 98 % of the real one grows without end.
HEADROOM = 0.9
KNEE = 0.97  # the family's climb starts at its smallest configuration within this of its highest ceiling
BETTER = 1.03  # a neighbour is better when it sustains this much more
BISECTIONS = 6
REFINEMENTS = 5  # steps down from the search's rate to one a proof's run meets over several seeds
REFINE_STEP = 0.9
# Bisections between the rate met and the step above it that missed: a tenth's step alone made two
# configurations' rates a step apart by where each one's steps fell (the choice is within BETTER).
REFINE_BISECTIONS = 2
CHECKS = REPLICATIONS  # simulated runs behind each refinement's p99: a proof run's prediction
AGREEING = CHECKS // 2 + 1  # of them, as many as decide their median's side where they agree
SEARCH_REQUESTS = (400, 1200)  # fewest and most simulated requests per run during the search
QUIET = 0.01  # of a configuration's ceiling: next to no queue, its requests' own time sets its p99


@dataclass
class Search:
    kinds: dict[str, list[RequestKind]]  # by family: the mix with that family's own costs
    pod: Pod
    objective_s: float
    duration_s: float  # of a proof run: a simulated run as long as the proof's (its queue builds as long)
    simulations: int = 0
    runs: Runs = field(default_factory=Runs)  # the proof runs simulated, kept for the plan's levels
    # By family: what its requests alone took beyond the model (sizing/floor.py), on every latency.
    floors: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    proved_here: bool = True  # False: a bigger pod's (serving._needed), whose proof runs one seed's sends

    def floor(self, candidate: Candidate) -> tuple[float, ...]:
        return self.floors.get(candidate.family.name, ())

    @property
    def warmup_s(self) -> float:
        return warmup_of(self.duration_s)

    def requests(self, rate_per_s: float) -> int:
        fewest, most = SEARCH_REQUESTS
        return int(min(most, max(fewest, rate_per_s * self.duration_s)))

    def p99(self, candidate: Candidate, rate_per_s: float, requests: int | None = None) -> float:
        self.simulations += 1
        kinds = self.kinds[candidate.family.name]
        run = simulate(
            kinds,
            candidate.configuration,
            self.pod.cores,
            rate_per_s,
            requests or self.requests(rate_per_s),
            floor_s=self.floor(candidate),
        )
        return run.p99_s

    def quiet_p99(self, candidate: Candidate) -> float:
        """Its p99 with next to no load (QUIET of its ceiling, the search's most requests): its requests'
        own time, which no rate on any pod brings lower (more cores make no request alone faster)."""
        rate = QUIET * candidate.ceiling_per_s
        return self.p99(candidate, rate, SEARCH_REQUESTS[1]) if rate > 0 else math.inf

    def least_alone(self, configurations: Iterable[Candidate]) -> tuple[float, Candidate] | None:
        """The least of these configurations' p99 with next to no load (`quiet_p99`), and whose."""
        return min(((self.quiet_p99(c), c) for c in configurations), key=lambda pair: pair[0], default=None)

    def refined(self, sized: Sized) -> Sized:
        """The rate the search found, stepped down until the proof's own run at it is predicted to
        meet the objective (`proof_run`: its sends, the typical of several seeds', as many draws as
        its prediction: sizing/proof.py), then bisected
        up toward the step that missed: the search's one Poisson draw per rate is biased up at the
        highest rate whose draw met it, and on the Flask shop a proposal refined on three other
        seeds was predicted p99 0.70 s against 0.56 on the very sends of its proof."""
        rate, missed = sized.rate_per_s, 0.0
        for _ in range(REFINEMENTS):
            if rate <= 0:
                break
            p99 = self.proof_p99(sized.candidate, rate)
            if p99 <= self.objective_s:
                met = Sized(sized.candidate, rate, p99, proved=True)
                for _ in range(REFINE_BISECTIONS if missed else 0):
                    middle = (met.rate_per_s + missed) / 2
                    p99 = self.proof_p99(sized.candidate, middle)
                    if p99 <= self.objective_s:
                        met = Sized(sized.candidate, middle, p99, proved=True)
                    else:
                        missed = middle
                return replace(met, p99_s=self.proof_figure(met.candidate, met.rate_per_s))
            missed, rate = rate, rate * REFINE_STEP
        return Sized(sized.candidate, rate, sized.p99_s) if rate > 0 else sized

    def proof_p99(self, candidate: Candidate, rate_per_s: float) -> float:
        """The p99 a proof's run at this rate is predicted to have, on its side of the objective:
        over CHECKS draws, or where the first AGREEING of them fall on one side, theirs (the median
        of all is on that side too; `proof_figure` for the figure). Each kept for its level (`runs`)."""
        for draws in (AGREEING, CHECKS):
            predicted = self._proof(candidate, rate_per_s, draws)
            least, most = predicted.p99_band_s
            if most <= self.objective_s or least > self.objective_s:
                break
        return predicted.p99_s

    def proof_figure(self, candidate: Candidate, rate_per_s: float) -> float:
        """The p99 a proof's run at this rate is predicted to have, over CHECKS draws."""
        return self._proof(candidate, rate_per_s, CHECKS).p99_s

    def _proof(self, candidate: Candidate, rate_per_s: float, draws: int) -> Predicted:
        kinds, config = self.kinds[candidate.family.name], candidate.configuration
        made = len(self.runs.made)
        sends = (self.pod.cores, rate_per_s, self.duration_s, MOST_PREDICTED, self.warmup_s, draws)
        seed = None if self.proved_here else SEED  # None: the typical sends, those a proof here offers
        predicted = proof_run(kinds, config, *sends, self.floor(candidate), self.runs, seed=seed)
        self.simulations += len(self.runs.made) - made
        return predicted

    def sustainable(self, candidate: Candidate, above: float = 0.0) -> Sized | None:
        """The highest rate whose p99 meets the objective, by bisection below the ceiling; with
        `above`, None unless it sustains more than that (one simulation says so)."""
        high = HEADROOM * candidate.ceiling_per_s
        if high <= above:
            return None
        p99 = self.p99(candidate, high)
        if p99 <= self.objective_s:
            return Sized(candidate, high, p99)
        low, low_p99 = 0.0, float("nan")
        if above:
            probe = min(high, above * BETTER)
            probe_p99 = self.p99(candidate, probe)
            if probe_p99 > self.objective_s:
                return None
            low, low_p99 = probe, probe_p99
        for _ in range(BISECTIONS if not above else BISECTIONS - 2):
            middle = (low + high) / 2
            p99 = self.p99(candidate, middle)
            if p99 <= self.objective_s:
                low, low_p99 = middle, p99
            else:
                high = middle
        return Sized(candidate, low, low_p99)


def best_of_family(search: Search, found: list[Candidate], climb: bool = True) -> Sized | None:
    """The family's best: from its smallest configuration near its highest ceiling, one more
    process or the next count of threads (connections) while that sustains more (a climb: more
    slots cut the queue for a slot until the cores bind, then buy nothing); else that first one."""
    if not found:
        return None
    highest = max(c.ceiling_per_s for c in found)
    by_knobs = {(c.processes, c.per_process): c for c in found}
    choices = list(found[0].family.per_process_choices())
    best = search.sustainable(next(c for c in found if c.ceiling_per_s >= KNEE * highest))
    assert best is not None  # nothing to beat: a rate, maybe 0
    while climb:
        at = best.candidate
        index = choices.index(at.per_process)
        neighbours = [(at.processes + 1, at.per_process)]
        if index + 1 < len(choices):
            neighbours.insert(0, (at.processes, choices[index + 1]))
        better = None
        for knobs in neighbours:
            sized = search.sustainable(by_knobs[knobs], above=best.rate_per_s) if knobs in by_knobs else None
            if sized is not None and sized.rate_per_s > best.rate_per_s:  # not one more with no rate
                better = sized
                break
        if better is None:
            break
        best = better
    return best


def search(
    families: list[Family],
    kinds: dict[str, list[RequestKind]],
    memory: dict[str, Memory],
    pod: Pod,
    objective_s: float,
    duration_s: float,
    fixed: Candidate | None = None,
    runs: Runs | None = None,
    floors: Mapping[str, tuple[float, ...]] | None = None,
) -> Found:
    """The most throughput (with a target rate, sizing/serving.py's `sized_for` instead). `fixed`:
    the configuration the team runs (the flows' pick), sized the same way and a candidate of its
    family: the climb is local and may pass it by. `runs`: where the proof runs it simulates are
    kept (the plan's levels draw on them). `floors`: each family's (Search.floors)."""
    started = time.thread_time()
    state = Search(
        kinds, pod, objective_s, duration_s, runs=runs if runs is not None else Runs(), floors=floors or {}
    )
    found = {f.name: candidates(f, kinds[f.name], pod, memory[f.name]) for f in families}
    best: dict[str, Sized] = {}
    order = sorted(found, key=lambda name: -max((c.ceiling_per_s for c in found[name]), default=0.0))
    # A prediction that cannot hold is not proposed where another can, nor climbed: it is sized at
    # its first configuration and proved beside the proposal (the proof decides).
    holding = {f.name for f in families if f.holds(kinds[f.name], objective_s)}
    for name in order:
        sized = best_of_family(state, found[name], climb=name in holding or not holding)
        if sized is not None:
            best[name] = sized
    # The team's configuration contends as its family's search has it: as the family's best where
    # it is the climb's own, refined, or sustains more than the climb found.
    searched = _as_searched(fixed, found)
    team = size_fixed(state, searched or fixed)
    if searched is not None and team is not None and (family := searched.family.name) in best:
        climbed = best[family]
        if searched.label == climbed.candidate.label or team.rate_per_s > climbed.rate_per_s:
            best[family] = team
    # A family no rate of which keeps the objective is proved beside a proposal, never proposed; nor
    # one whose requests alone miss it: a rate its short runs met was a lucky draw (sqladmin's list
    # page, 64-ms collections every 42: alone 93 ms at the p99 against an objective of 87 ms, it was
    # proposed at 14.9/s, where a short run had read 80 ms).
    rated = {
        name: s
        for name, s in best.items()
        if s.rate_per_s > 0 and state.quiet_p99(s.candidate) <= objective_s
    }
    pool = [s for name, s in rated.items() if name in holding] or list(rated.values())
    proposed = chosen(pool)
    if proposed is not None:  # the rate it is proposed at (the team's is already)
        refined = proposed if proposed is team else state.refined(proposed)
        proposed = _challenged(state, refined, pool, team if searched else None)
        best[proposed.candidate.family.name] = proposed
    cpu_s, contenders = time.thread_time() - started, frozenset(s.candidate.family.name for s in pool)
    return Found(proposed, best, cpu_s, state.simulations, fixed=team, contenders=contenders)


def chosen(pool: list[Sized]) -> Sized | None:
    """The most throughput of these; rates within BETTER of the most are one rate, as the model tells
    them apart: of those, the least memory."""
    most = max((s.rate_per_s for s in pool), default=0.0)
    near = [s for s in pool if s.rate_per_s * BETTER >= most]
    return min(near, key=lambda s: (s.candidate.memory_bytes, -s.rate_per_s), default=None)


def _challenged(state: Search, proposed: Sized, pool: list[Sized], team: Sized | None) -> Sized:
    """The proposal, or one that sustains more than BETTER times its refined rate: refining lowers
    a rate, so another family's best found higher may sustain more in a proof's run (on the sizing
    test's app, gthread found at 158/s was refined to 128/s, sync found at 156/s was not checked):
    each is checked at BETTER times that, refined only where it meets it; `team`, refined, as it is."""
    families = {s.candidate.family.name for s in pool}  # those a proposal may come from
    if team and team.candidate.family.name in families and team.rate_per_s > BETTER * proposed.rate_per_s:
        proposed = team
    for sized in sorted(pool, key=lambda s: -s.rate_per_s):
        above = BETTER * proposed.rate_per_s
        if sized.candidate.label == proposed.candidate.label or sized.rate_per_s <= above:
            continue
        p99 = state.proof_p99(sized.candidate, above)
        if p99 <= state.objective_s:
            refined = state.refined(sized)  # where its steps all missed, a rate no proof met: checked
            met = refined.rate_per_s > above and (
                refined.proved or state.proof_p99(sized.candidate, refined.rate_per_s) <= state.objective_s
            )
            proposed = refined if met else Sized(sized.candidate, above, p99)
    return proposed


def _as_searched(fixed: Candidate | None, found: dict[str, list[Candidate]]) -> Candidate | None:
    """The team's configuration as its family's search has it (its ceiling on the cores the client
    leaves, the knobs its family has), None where the search has no such configuration (beyond the
    pod's memory or processes, or greenlets that accept fewer connections than a proof's client may
    hold: candidates.holds_the_clients): then it is sized as given, and never proposed."""
    if fixed is None:
        return None
    return next((c for c in found.get(fixed.family.name, []) if c.label == fixed.label), None)


def size_fixed(state: Search, fixed: Candidate | None) -> Sized | None:
    """The team's configuration sized as a proposal is: its sustainable rate, refined."""
    sized = state.sustainable(fixed) if fixed is not None else None
    return state.refined(sized) if sized is not None else None
