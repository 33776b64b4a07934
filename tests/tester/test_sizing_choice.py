"""The choice among families: rates compared as a proof's run meets them (refined), a family found
higher than the proposal's refined rate checked against it, and the team's own configuration
(the flows' pick) sized the same way and never beaten by a proposal the model rates lower."""

from __future__ import annotations

import dataclasses
from functools import cache
from types import SimpleNamespace

import pytest

from labtester.proposal.plan import _fixed, _planned
from labtester.sizing.candidates import Candidate, candidate_of, candidates
from labtester.sizing.document import Objective, PodSize, SizedSummary
from labtester.sizing.families import RULES, Family
from labtester.sizing.pod import MIB, Pod
from labtester.sizing.proof import PATTERNS
from labtester.sizing.search import (
    AGREEING,
    BETTER,
    CHECKS,
    REFINE_STEP,
    Search,
    _challenged,
    search,
    size_fixed,
)
from labtester.sizing.sized import Sized
from tests.tester.test_sizing_search import KINDS, MEMORY, MIX, POD, SEARCHED

OBJECTIVE_S = 0.4


def state() -> Search:
    return Search(KINDS, POD, OBJECTIVE_S, 20)


@cache
def candidate(family: str, processes: int, per_process: int | None) -> Candidate:
    found = next(f for f in SEARCHED if f.name == family)
    return next(
        c
        for c in candidates(found, MIX, POD, MEMORY[family])
        if (c.processes, c.per_process) == (processes, per_process)
    )


def test_refining_steps_down_to_a_rate_the_proof_meets_then_bisects_toward_the_step_that_missed() -> None:
    searching = state()
    found = searching.sustainable(candidate("sync", 6, 1))
    assert found is not None
    refined = searching.refined(found)
    # The steps a tenth apart: the first the proof's run meets, and the one above it, which missed.
    steps = [found.rate_per_s * REFINE_STEP**k for k in range(6)]
    met = next(k for k, rate in enumerate(steps) if searching.proof_p99(found.candidate, rate) <= OBJECTIVE_S)
    assert met >= 1, "the search's rate is biased up: its proof misses it here"
    assert steps[met] < refined.rate_per_s < steps[met - 1]  # between them: bisected, not the step
    assert refined.p99_s == searching.proof_p99(found.candidate, refined.rate_per_s) <= OBJECTIVE_S


def test_a_family_found_above_the_proposals_refined_rate_that_meets_more_in_a_proof_is_proposed() -> None:
    searching = state()
    sync = searching.sustainable(candidate("sync", 6, 1))
    assert sync is not None
    # A proposal whose refined rate is far below what sync 6 sustains in a proof's run.
    low = Sized(candidate("gthread", 1, 4), 0.6 * sync.rate_per_s, 0.0)
    chosen = _challenged(searching, low, [low, sync], team=None)
    assert chosen.candidate.label == sync.candidate.label
    assert chosen.rate_per_s > BETTER * low.rate_per_s
    assert searching.proof_p99(chosen.candidate, chosen.rate_per_s) <= OBJECTIVE_S


def test_a_family_found_higher_that_misses_better_than_the_proposal_in_a_proof_is_not_proposed() -> None:
    searching = state()
    found = searching.sustainable(candidate("sync", 6, 1))
    assert found is not None
    sync = searching.refined(found)
    # One sync worker, said to be found at ten times the proposal's rate: its proof misses at BETTER x.
    one = Sized(candidate("sync", 1, 1), 10 * sync.rate_per_s, 0.0)
    before = searching.simulations
    assert _challenged(searching, sync, [sync, one], team=None) == sync
    # Checked once, at BETTER times the proposal's rate (on AGREEING draws where they agree, the
    # sends chosen on one draw of each seed's: sizing/proof.py).
    assert searching.simulations - before in (PATTERNS - 1 + AGREEING, PATTERNS - 1 + CHECKS)


def test_the_teams_configuration_is_proposed_where_it_sustains_more_than_better_times_the_proposal() -> None:
    searching = state()
    team = size_fixed(searching, candidate("sync", 6, 1))
    assert team is not None and team.rate_per_s > 0
    low = Sized(candidate("gthread", 1, 4), 0.5 * team.rate_per_s, 0.0)
    climbed = Sized(candidate("sync", 2, 1), 0.4 * team.rate_per_s, 0.0)  # its family's, below the proposal
    assert _challenged(searching, low, [low, climbed], team) == team
    # Not where its family is not one the proposal may come from (a prediction that cannot hold).
    others = Sized(candidate("uvicorn", 1, None), 0.5 * team.rate_per_s, 0.0)
    assert _challenged(searching, others, [others], team) == others


def test_the_search_sizes_the_teams_configuration_refined_and_as_its_familys_best() -> None:
    # The gthread family's climb ends at 3 workers x 4 threads on this mix (test_sizing_search): as
    # the team's configuration too, its family's best is that configuration refined, not as found.
    fixed = candidate("gthread", 3, 4)
    searching = state()
    found = search(SEARCHED, KINDS, MEMORY, POD, OBJECTIVE_S, 20, fixed)
    assert found.fixed is not None and found.proposed is not None
    again = size_fixed(searching, fixed)
    assert again is not None and found.fixed.rate_per_s == again.rate_per_s
    gthread = found.best_by_family["gthread"]
    assert gthread.candidate.label == fixed.label and gthread.rate_per_s == found.fixed.rate_per_s
    without = search(SEARCHED, KINDS, MEMORY, POD, OBJECTIVE_S, 20)
    assert without.best_by_family["gthread"].rate_per_s > gthread.rate_per_s  # as found: biased up
    assert found.proposed.rate_per_s * BETTER >= found.fixed.rate_per_s


def test_a_challenger_refined_below_the_rate_its_check_met_is_proposed_at_that_rate() -> None:
    searching = state()
    found = searching.sustainable(candidate("sync", 6, 1))
    assert found is not None
    refined = searching.refined(found)
    # Its bisection stops within a quarter step: a rate 1 % above still meets in a proof's run here.
    above = 1.01 * refined.rate_per_s
    assert searching.proof_p99(found.candidate, above) <= OBJECTIVE_S
    low = Sized(candidate("gthread", 1, 4), above / BETTER, 0.0)
    chosen = _challenged(searching, low, [low, found], team=None)
    assert chosen.candidate.label == found.candidate.label and chosen.rate_per_s == pytest.approx(above)


def test_a_challenger_whose_refining_missed_at_every_step_is_proposed_at_the_rate_its_check_met() -> None:
    searching = state()
    found = searching.sustainable(candidate("sync", 6, 1))
    assert found is not None
    sustained = searching.refined(found).rate_per_s
    # Said to be found at ten times that: its five steps down (to 0.59 x) all miss, and refining
    # falls through to a rate no proof met.
    inflated = Sized(found.candidate, 10 * sustained, 0.0)
    low = Sized(candidate("gthread", 1, 4), 0.9 * sustained / BETTER, 0.0)
    chosen = _challenged(searching, low, [low, inflated], team=None)
    assert chosen.candidate.label == found.candidate.label
    assert chosen.rate_per_s == pytest.approx(0.9 * sustained)  # the rate its check met, not 5.9 x


def test_the_teams_configuration_beyond_the_pod_is_sized_but_never_proposed() -> None:
    sync = SEARCHED[:1]
    small = Pod(cores=POD.cores, memory_bytes=200 * MIB)  # two sync workers at the most
    fixed = candidate("sync", 6, 1)  # as the team runs it, on a bigger machine
    found = search(sync, KINDS, MEMORY, small, OBJECTIVE_S, 20, fixed)
    assert found.proposed is not None and found.fixed is not None
    assert found.fixed.rate_per_s > BETTER * found.proposed.rate_per_s  # it would win, were it in the pod
    assert found.proposed.candidate.processes <= 2 and found.proposed.candidate.label != fixed.label
    assert found.best_by_family["sync"].candidate.label != fixed.label


def test_each_other_familys_best_is_planned_at_a_rate_its_proof_meets_as_the_proposal_is() -> None:
    searching = state()
    found = search(SEARCHED, KINDS, MEMORY, POD, OBJECTIVE_S, 20)
    assert found.proposed is not None
    pod = PodSize(cores=POD.cores, memory_bytes=POD.memory_bytes, source="CORES=")
    context = SizedSummary(
        role="proposed", family="", server="", label="", processes=0, threads=None, env={}, memory_bytes=0,
        sustainable_per_s=0.0, predicted_p99_s=0.0, pod=pod, objective=Objective(p99_s=OBJECTIVE_S, why=""),
    )  # fmt: skip
    rows = [
        p.summary for p in _planned(found, None, searching, context, MEMORY) if p.summary.role == "family"
    ]
    lowered = 0
    for row in rows:
        climbed = found.best_by_family[row.family]
        assert row.label == climbed.candidate.label and 0 < row.sustainable_per_s <= climbed.rate_per_s
        assert searching.proof_p99(climbed.candidate, row.sustainable_per_s) <= OBJECTIVE_S
        lowered += row.sustainable_per_s < climbed.rate_per_s
    assert len(rows) == len(SEARCHED) - 1 and lowered  # the climb's one draw was biased up somewhere


@pytest.mark.parametrize(
    ("family", "workers", "slots", "knobs"),
    [("sync", 6, 6, (6, 1)), ("gthread", 2, 16, (2, 8)), ("granian-asgi", 2, 1024, (2, None))],
)
def test_the_teams_configuration_is_rated_as_the_search_rates_its_own(
    family: str, workers: int, slots: int, knobs: tuple[int, int | None]
) -> None:
    # The flows' pick becomes a candidate through the same constructor as the search's: on a pod
    # whose client shares the cores, its ceiling counts the client's CPU as theirs does (it did not,
    # and the team's sync x 6 started its bisection above what its cores allow); a family with no
    # knob runs what its rule fixes, whatever slots its server reports (granian's ASGI says 1,024,
    # its backpressure: taken as 512 threads a process, 511 MiB more than it holds).
    pod = POD
    with_client = [dataclasses.replace(k, client_s=0.01) for k in MIX]
    rules = {
        **{f.name: f for f in SEARCHED},
        "granian-asgi": Family("granian-asgi", "granian", "asgi", RULES[("granian", "asgi")]),
    }
    team_family = dataclasses.replace(rules[family], fixed_targets=("team",))
    app = SimpleNamespace(work="app", slots=slots)
    results = SimpleNamespace(
        targets=[SimpleNamespace(name="team", info=SimpleNamespace(workers=workers, endpoints={"/cpu": app}))]
    )
    kinds = {team_family.name: with_client}
    team = _fixed(
        results, "team", [team_family], {family: MEMORY["sync"]}, Search(kinds, pod, OBJECTIVE_S, 20)
    )  # type: ignore[arg-type]
    found = candidates(team_family, with_client, pod, MEMORY["sync"])
    searched = next(c for c in found if (c.processes, c.per_process) == knobs)
    assert team == searched
    alone = candidate_of(team_family, MIX, POD, MEMORY["sync"], *knobs)  # no client on the cores
    assert team is not None and team.ceiling_per_s < alone.ceiling_per_s
