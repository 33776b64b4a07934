"""What the plan's CPU is spent on, spent once: a refinement decides on the draws that decide it,
the plan's levels draw on the refinement's runs, and a request's company is read from running
sums. Each gives the answer the longer way gives."""

from __future__ import annotations

import random

import pytest

from labtester.load import Sample
from labtester.sizing.candidates import Candidate, candidates
from labtester.sizing.document import MOST_PREDICTED
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import BAND_DRAWS
from labtester.sizing.overlap import Company
from labtester.sizing.proof import PATTERN_SEEDS, PATTERNS, proof_run
from labtester.sizing.search import AGREEING, CHECKS, Search
from tests.tester.test_sizing_search import MEMORY, POD, SEARCHED

OBJECTIVE_S = 0.4
# Kinds whose requests vary (spreads), so that a proof's draws differ from one another.
MIX = [
    RequestKind("/cpu", 1, 0.05, 0.0, 0.001, cpu_spread_s=(0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08)),
    RequestKind("/wait", 1, 0.0, 0.1, 0.001, wait_spread_s=(0.05, 0.08, 0.1, 0.12, 0.15)),
]


def gthread() -> tuple[Search, Candidate]:
    family = next(f for f in SEARCHED if f.name == "gthread")
    candidate = next(c for c in candidates(family, MIX, POD, MEMORY[family.name]) if c.per_process == 8)
    return Search({family.name: MIX}, POD, OBJECTIVE_S, 20), candidate


def test_a_refinement_decides_as_the_median_of_all_its_draws_on_fewer_where_they_agree() -> None:
    state, candidate = gthread()
    sides, early, rates = set(), [], (10.0, 20.0, 22.0, 24.0, 30.0, 34.0, 40.0)
    for rate in rates:
        before = state.simulations
        decided = state.proof_p99(candidate, rate) <= OBJECTIVE_S
        sends = (rate, 20, MOST_PREDICTED, state.warmup_s, CHECKS)
        every = proof_run(MIX, candidate.configuration, POD.cores, *sends, seed=None)  # all five, afresh
        assert decided == (every.p99_s <= OBJECTIVE_S), rate
        sides.add(decided)
        # The sends chosen on one draw of each pattern's, that draw the first of theirs.
        early.append(state.simulations - before == PATTERNS - 1 + AGREEING)
    assert sides == {True, False}  # rates on both sides of the objective
    # Far from the objective, either way, AGREEING draws decide; at its edge, all of them.
    assert early[0] and early[-1] and not all(early)


def test_the_plans_level_at_the_refined_rate_draws_on_the_refinements_runs() -> None:
    state, candidate = gthread()
    config, rate = candidate.configuration, 30.0
    state.proof_p99(candidate, rate)
    refined = len(state.runs.made)
    assert refined in (PATTERNS - 1 + AGREEING, PATTERNS - 1 + CHECKS)
    sends = (rate, 20, MOST_PREDICTED, state.warmup_s, BAND_DRAWS)
    level = proof_run(MIX, config, POD.cores, *sends, runs=state.runs, seed=None)
    seed = level.seed
    assert len(state.runs.made) == PATTERNS - 1 + BAND_DRAWS  # only the draws the refinement had not made
    assert level == proof_run(MIX, config, POD.cores, *sends, seed=seed)  # the same prediction made afresh
    # Anything else the runs depend on is a run of its own: the rate, the cores, the configuration,
    # the kinds, the floor, the sends.
    fewer = next(c for c in candidates(candidate.family, MIX, POD, MEMORY["gthread"]) if c.per_process == 2)
    other_seed = next(s for s in PATTERN_SEEDS if s != seed)
    others = [
        proof_run(MIX, config, POD.cores, 0.9 * rate, *sends[1:], runs=state.runs, seed=seed),
        proof_run(MIX, config, 0.5, *sends, runs=state.runs, seed=seed),
        proof_run(MIX, fewer.configuration, POD.cores, *sends, runs=state.runs, seed=seed),
        proof_run(MIX[:1], config, POD.cores, *sends, runs=state.runs, seed=seed),
        proof_run(MIX, config, POD.cores, *sends, floor_s=(0.01, 0.02), runs=state.runs, seed=seed),
        proof_run(MIX, config, POD.cores, *sends, runs=state.runs, seed=other_seed),
    ]
    # The other sends' first draw was made to choose between them.
    assert len(state.runs.made) == PATTERNS - 1 + (1 + len(others)) * BAND_DRAWS - 1
    assert all(other != level for other in others)


def in_app(start: float, app_s: float, pid: int) -> Sample:
    return Sample("/p", start, start, app_s, 200, None, cpu_s=0.0, app_s=app_s, pid=pid, started_at=start)


def brute_force(request: Sample, neighbours: list[Sample]) -> float:
    """The others of its process in the app beside it, summed pair by pair, over its time."""
    start, end = request.started_at or 0.0, (request.started_at or 0.0) + (request.app_s or 0.0)
    overlap = 0.0
    for other in neighbours:
        if other is request or other.pid != request.pid:
            continue
        a, b = other.started_at or 0.0, (other.started_at or 0.0) + (other.app_s or 0.0)
        overlap += max(0.0, min(end, b) - max(start, a))
    return overlap / (end - start)


def test_a_requests_company_from_running_sums_is_its_overlaps_pair_by_pair() -> None:
    draw = random.Random(7)
    # Epoch-like stamps, light requests beside a few slow ones, two processes.
    requests = [
        in_app(1.8e9 + draw.uniform(0, 2), draw.choice((0.0001, 0.001, 0.3)), draw.choice((1, 2)))
        for _ in range(400)
    ]
    # Spans that end where another starts, and one twice (two requests, the same times).
    first = requests[0]
    start, app_s = first.started_at or 0.0, first.app_s or 0.0
    requests[1:3] = [in_app(start + app_s, 0.001, first.pid or 1), in_app(start, app_s, first.pid or 1)]
    members, outsiders = requests[:300], requests[300:]  # the second: not among the company's
    company = Company(members)
    for request in requests:
        assert company.others(request) == pytest.approx(brute_force(request, members), abs=1e-6)
    assert any(company.others(r) for r in outsiders) and max(map(company.others, members)) > 1
    assert Company([]).others(requests[0]) == 0.0
