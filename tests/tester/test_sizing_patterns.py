"""A proof's sends are the typical of several seeds' (sizing/proof.py): on a heavy-tailed mix one
20-s run's p99 is set by how its sends fall, so one seed's sends, the same at every rate, decided
whether a configuration serves a rate by that seed's luck. On sqladmin's measured costs (its list
page sets off a 64-ms collection every 42 requests), at P99=0.2."""

from __future__ import annotations

from labtester.proposal.plan import LEVELS, _levels
from labtester.sizing.candidates import candidates
from labtester.sizing.document import MOST_PREDICTED
from labtester.sizing.model import sustained_p99
from labtester.sizing.pod import Memory
from labtester.sizing.proof import PATTERN_SEEDS, proof_run
from labtester.sizing.search import CHECKS
from tests.tester.test_sizing_alone import ASGI, SQLADMIN, sqladmin

OBJECTIVE_S = 0.2
MINUTES_S = 300.0


def test_a_target_rate_minutes_of_which_keep_the_objective_is_served_in_the_pod() -> None:
    # On the first seed's sends, 40/s missed 0.2 s in a proof's run on every configuration of 2
    # cores (granian-asgi 4 workers: 0.258 s predicted), and a pod of 4 was named, where minutes of
    # 40/s keep it on 2 (0.16-0.19 s).
    found, _ = sqladmin(OBJECTIVE_S, 40)
    assert found.serves_rate and found.needed_pod is None and found.held is True
    proposed = found.proposed
    assert proposed is not None and proposed.candidate.processes <= 4
    assert proposed.p99_s <= OBJECTIVE_S
    assert proposed.sustained_p99_s is not None and proposed.sustained_p99_s <= OBJECTIVE_S


def test_the_proposals_level_below_its_rate_keeps_the_objective_too() -> None:
    # The proposal's rate is one a typical 20 s keeps, so its level at 80 % keeps it too: on the
    # first seed's sends, 50.8/s was proposed at a predicted 0.187 s, and its 80 % level, 40.6/s,
    # predicted 0.242 s: the proof would have said the lower rate misses.
    found, state = sqladmin(OBJECTIVE_S)
    proposed = found.proposed
    assert proposed is not None and proposed.rate_per_s > 0
    levels = _levels(state, proposed, proposed.rate_per_s, with_sustained=False)
    assert [round(lv.offered_per_s / proposed.rate_per_s, 2) for lv in levels] == list(LEVELS)
    assert all(lv.predicted_p99_s <= OBJECTIVE_S for lv in levels), levels
    assert levels[0].predicted_p99_s < levels[-1].predicted_p99_s  # less load, a shorter tail
    # Each level's sends are its own choice among the seeds, and the proof offers them (Level.seed).
    assert {lv.seed for lv in levels} <= set(PATTERN_SEEDS)


def test_the_typical_sends_predict_nearer_minutes_of_the_rate_than_one_seeds() -> None:
    # granian-asgi 4 workers, at rates on both sides of its proposal's: the typical sends' p99 is
    # nearer what minutes of each rate give than the first seed's, every time within a fifth of it.
    _, state = sqladmin(OBJECTIVE_S)
    family = next(f for f in ASGI if f.name == "granian-asgi")
    kinds = state.kinds[family.name]
    memory = Memory(**SQLADMIN["memory"][family.name])
    four = next(c for c in candidates(family, kinds, state.pod, memory) if c.processes == 4)
    config, floor = four.configuration, state.floor(four)
    typical_off = first_off = 0.0
    for rate in (35.0, 40.0, 45.0, 50.0):
        sends = (state.pod.cores, rate, state.duration_s, MOST_PREDICTED, state.warmup_s, CHECKS, floor)
        minutes = sustained_p99(kinds, config, state.pod.cores, rate, MINUTES_S, floor)
        typical = proof_run(kinds, config, *sends, seed=None)
        first = proof_run(kinds, config, *sends, seed=PATTERN_SEEDS[0])
        assert abs(typical.p99_s / minutes - 1) < 0.2, (rate, typical.p99_s, minutes)
        typical_off += abs(typical.p99_s - minutes)
        first_off += abs(first.p99_s - minutes)
    assert typical_off < 0.5 * first_off, (typical_off, first_off)
