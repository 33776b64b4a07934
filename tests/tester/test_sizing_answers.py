"""The sizing's answer comes first and says what was asked: the most a pod serves, the smallest
configuration that serves RATE=, or the pod RATE= would need; and how the proposal stands against
the best of the fixed configurations, measured in the same run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from labtester.proposal.lab import resized_note
from labtester.proposal.values import proved_proposal, write_proposal
from labtester.report.console import answer_lines
from labtester.report.tables import rich_table
from labtester.sizing.answers import answer, decided, table
from labtester.sizing.caveat import NO_RATE, Caveat
from labtester.sizing.document import (
    KindCost,
    Level,
    Objective,
    PodSize,
    SizedSummary,
    SizingConclusion,
)
from labtester.sizing.tail import TailSplit
from labtester.sizing.words import from_warmup, goal

POD = PodSize(cores=2, memory_bytes=1 << 30, source="CORES= and MEMORY=")


def sized(role: str, label: str, rate: float, measured: float | None, **more: Any) -> SizedSummary:
    level = Level(
        offered_per_s=rate,
        predicted_per_s=rate,
        predicted_p99_s=0.3,
        measured_per_s=measured,
        measured_p99_s=0.32,
    )
    return SizedSummary.model_validate(
        {
            "role": role, "family": label.split(",")[0], "server": "gunicorn", "label": label, "processes": 2,
            "threads": 8, "env": {}, "memory_bytes": 300 << 20, "sustainable_per_s": rate,
            "predicted_p99_s": 0.3,
            "levels": [level] if measured is not None else [], "pod": POD, "objective": OBJECTIVE, **more,
        }
    )  # fmt: skip


OBJECTIVE = Objective(p99_s=0.4, why="P99=")


def headline(found: SizingConclusion) -> str:
    return decided(found).headline


def conclusion(**fields: Any) -> SizingConclusion:
    return SizingConclusion(
        pod=POD,
        objective=fields.pop("objective", OBJECTIVE),
        families=fields.pop("families", []),
        headline="",
        **fields,
    )


def test_the_proposal_against_the_best_fixed_configuration_measured_in_the_run() -> None:
    proposed = sized("proposed", "gunicorn gthread, 2 workers x 24 threads", 118, 114)
    fixed = sized("fixed", "gunicorn gthread, 2 workers x 8 threads", 71, 70)
    text = headline(conclusion(proposed=proposed, fixed=fixed))
    assert text.startswith(
        "Serve the app with gunicorn gthread, 2 workers x 24 threads, on 2 cores and 1 GiB"
    )
    assert "predicted 118.0/s at p99 0.30 s, measured 114.0/s at p99 0.32 s" in text
    assert "the best of the fixed configurations, gunicorn gthread, 2 workers x 8 threads" in text
    assert "measured 70.0/s" in text
    already = conclusion(proposed=proposed, fixed=proposed)
    assert "the best of the fixed configurations is this one already" in headline(already)
    # Named once in the evidence and the table, also as read back from results.json (two objects).
    read_back = SizingConclusion.model_validate_json(already.model_dump_json())
    assert read_back.each() == [proposed]
    assert answer(decided(read_back)).evidence.count(proposed.label) == 1
    assert table(read_back).row_count == len(proposed.levels) == 1


def test_a_target_rate_is_served_by_the_smallest_configuration_that_does() -> None:
    goal = Objective(p99_s=0.4, why="P99=", rate_per_s=50)
    proposed = sized("proposed", "gunicorn gthread, 1 worker x 6 threads", 50, 49)
    text = headline(conclusion(proposed=proposed, objective=goal))
    assert text.startswith(
        "Serve 50/s with the smallest configuration that does, gunicorn gthread, 1 worker x 6"
    )


def test_a_target_rate_beyond_the_pod_names_the_pod_it_would_need() -> None:
    goal = Objective(p99_s=0.4, why="P99=", rate_per_s=500)
    bigger = POD.model_copy(update={"cores": 16, "memory_bytes": 8 << 30})
    needed = sized("needed", "uvicorn, 19 workers", 500, None, needs_pod=bigger, error="not proved")
    found = conclusion(proposed=None, needed=needed, objective=goal)
    text = headline(found)
    assert text.startswith("No configuration on 2 cores and 1 GiB serves 500/s at p99 0.40 s")
    assert "the pod it would need has 16 cores and 8 GiB: uvicorn, 19 workers, predicted 500.0/s" in text
    found.headline = text
    assert answer(found).answer == text
    # Its figure over minutes of the rate is said, and where that misses the objective, so is that.
    for over_minutes, misses in ((0.35, False), (0.6, True)):
        top = Level(offered_per_s=500, predicted_per_s=500, predicted_p99_s=0.3, sustained_p99_s=over_minutes,
                    sustained_s=80)  # fmt: skip
        walked = needed.model_copy(update={"levels": [top]})
        text = headline(conclusion(proposed=None, needed=walked, objective=goal))
        assert f"predicted 500.0/s at p99 0.30 s (sustained for 1.3 minutes: {over_minutes:.2f} s)" in text
        assert ("which traffic that stays at the rate misses in the model" in text) is misses


def proved(role: str, label: str, *runs: tuple[float, float, float, float]) -> SizedSummary:
    """A configuration and its proof runs: (offered, predicted, measured, measured p99) each."""
    levels = [
        Level(offered_per_s=o, predicted_per_s=p, predicted_p99_s=0.59, measured_per_s=m, measured_p99_s=p99)
        for o, p, m, p99 in runs
    ]
    return sized(role, label, runs[-1][0], runs[-1][2]).model_copy(update={"levels": levels})


def test_where_the_proposals_proof_misses_the_objective_the_proof_decides(tmp_path: Path) -> None:
    # The Flask shop's proof (2026-11-26, objective p99 0.60 s): gevent, proposed, missed it at
    # both its levels; sync x 4 kept it at 80 % of its predicted rate.
    goal = Objective(p99_s=0.6, why="4x the mix's mean time alone")
    gevent = proved(
        "proposed",
        "gunicorn gevent, 2 workers x 100 connections",
        (14.5, 14.7, 14.4, 0.82),
        (18.1, 18.1, 17.0, 6.1),
    )
    sync = proved("family", "gunicorn sync, 4 workers", (16.0, 16.3, 15.9, 0.41), (20.0, 20.0, 19.0, 1.01))
    granian = proved(
        "family", "granian-wsgi, 4 workers x 4 threads", (11.7, 11.9, 11.6, 0.65), (14.6, 14.8, 14.2, 0.56)
    )
    found = conclusion(proposed=gevent, families=[sync, granian], objective=goal)
    text = headline(found)
    assert text.startswith(
        "Serve the app with gunicorn sync, 4 workers, on 2 cores and 1 GiB: its proof kept p99 0.60 s"
    )
    assert "at 16.0/s offered, measured 15.9/s at p99 0.41 s" in text
    assert "the model's pick, gunicorn gevent, 2 workers x 100 connections, predicted 18.1/s" in text
    assert "missed it in its proof: measured 17.0/s at p99 6.10 s" in text
    assert found.proved_best() == (sync, sync.levels[0])
    assert decided(found).chosen == sync.label  # derived with the headline, once
    # The proposal file `make run-lab PROPOSAL=` deploys names it too, at the rate it was proved at.
    kept = proved_proposal(found)
    assert kept is not None and (kept.label, kept.role, kept.sustainable_per_s) == (
        sync.label,
        "proposed",
        16.0,
    )
    written = yaml.safe_load(write_proposal(tmp_path, kept, "shop:app", "wsgi", ["/report"]).read_text())
    assert written["app"]["predicted"]["label"] == "gunicorn sync, 4 workers"
    # Its own lower level met it: the proposal stands, at that rate.
    steady = proved(
        "proposed", "gunicorn sync, 4 workers", (16.0, 16.3, 15.9, 0.41), (20.0, 20.0, 19.0, 1.01)
    )
    text = headline(conclusion(proposed=steady, objective=goal))
    assert text.startswith(
        "Serve the app with gunicorn sync, 4 workers, on 2 cores and 1 GiB, at up to 16.0/s"
    )
    # A proof that kept it: the model's proposal is the answer, and its file stays.
    kept_by_model = conclusion(proposed=granian.model_copy(update={"role": "proposed"}), objective=goal)
    assert kept_by_model.proved_best() is None and proved_proposal(kept_by_model) is None
    # Nothing kept it: the proposal, and that said.
    text = headline(conclusion(proposed=gevent, objective=goal))
    assert text.startswith("Serve the app with gunicorn gevent") and "no configuration proved met it" in text


def test_a_departure_names_the_cpu_the_proofs_requests_used_against_what_the_model_drew() -> None:
    # The Flask shop's gevent at 18.1/s: its /report used 1.32x the CPU drawn from the flows.
    level = Level(
        offered_per_s=18.1, predicted_per_s=18.1, predicted_p99_s=0.59, measured_per_s=17.0,
        measured_p99_s=6.1, cores_free=1.96, cpu_used_ratio=1.32, explained_per_s=17.4, explained_p99_s=1.88,
    )  # fmt: skip
    said = level.departures()
    assert said[0] == "p99 10.34x predicted"
    assert said[1] == (
        "the machine and its load client left it 1.96 cores and its requests used 1.32x the CPU the model "
        "drew; with the client beside it, the model predicts 17.4/s at p99 1.88 s"
    )


def test_a_departure_and_the_warm_ups_prediction_say_the_full_collections_each_counted() -> None:
    # httpbin's gthread 2 x 24 at 1,143/s: its warm-up counted one every 2,957 requests (with the
    # plan's beside it), its window one every 3,064; the model stopped the processes as often.
    level = Level(
        offered_per_s=1143, predicted_per_s=1100, predicted_p99_s=0.070, measured_per_s=1140,
        measured_p99_s=0.19, cores_free=1.72, cpu_used_ratio=0.71, explained_per_s=1100,
        explained_p99_s=0.077, full_collections_per_request=1 / 3064, warmup_s=4, warmup_predicted_per_s=1100,
        warmup_predicted_p99_s=0.077, warmup_full_collections_per_request=1 / 2957,
    )  # fmt: skip
    said = level.departures()[1]
    assert "0.71x the CPU the model drew, a full collection every 3,064 requests; with" in said
    assert from_warmup(level).endswith(", a full collection every 2,957 requests)")
    none_counted = level.model_copy(update={"full_collections_per_request": 0.0})
    assert "full collection" not in none_counted.departures()[1]


def test_a_proof_run_is_judged_against_the_prediction_it_made_from_its_warm_up() -> None:
    # gunicorn sync x 5 at 20.6/s: the plan drew /report's CPU from the flows (p99 0.46 s); the
    # run's first 4 s used 1.13x that, and the window after them was predicted at p99 0.78 s.
    warm = Level(
        offered_per_s=20.6, predicted_per_s=20.2, predicted_p99_s=0.46, measured_per_s=19.9,
        measured_p99_s=0.84, warmup_s=4, warmup_cpu_ratio=1.13, warmup_predicted_per_s=20.0,
        warmup_predicted_p99_s=0.78,
    )  # fmt: skip
    assert warm.departures() == []  # 0.84 against 0.78: within 15 %
    off = warm.model_copy(update={"warmup_predicted_p99_s": 0.6})
    assert off.departures() == ["p99 1.40x predicted before its window (1.83x the plan's)"]
    # With the band the prediction's draws give one run, the departure says where the run fell.
    banded = off.model_copy(update={"warmup_p99_band_s": [0.5, 0.9], "p99_band_s": [0.4, 0.5]})
    said = "p99 1.40x predicted before its window (1.83x the plan's), within the 0.50-0.90 s its draws give"
    said += " one run"
    assert banded.departures() == [said]
    # A run recorded without a warm-up is judged against the plan, as before.
    plain = warm.model_copy(
        update={"warmup_s": 0, "warmup_predicted_per_s": None, "warmup_predicted_p99_s": None}
    )
    assert plain.departures() == ["p99 1.83x predicted"]
    proposed = sized("proposed", "gunicorn sync, 5 workers", 20.6, 19.9).model_copy(update={"levels": [warm]})
    found = conclusion(proposed=proposed)
    # What the run predicted from its warm-up is in its proof's evidence; the headline, read first,
    # names only how far a proof departed, briefly.
    warmed = "(p99 0.78 s on the CPU measured before its window, 1.13x the plan's)"
    assert warmed not in headline(found) and warmed in answer(decided(found)).evidence
    departed = headline(conclusion(proposed=proposed.model_copy(update={"levels": [banded]})))
    brief = "(p99 1.40x predicted before its window, 1.83x the plan's);"
    assert f"measured 19.9/s at p99 0.84 s {brief}" in departed
    # Where the machine left the run fewer cores than the pod's, the headline says so: that
    # departure is the machine's, not the model's.
    starved = banded.model_copy(update={"cores_free": 1.2})
    said = headline(conclusion(proposed=proposed.model_copy(update={"levels": [starved]})))
    assert "1.83x the plan's, the machine and its load client left it 1.20 of the pod's 2 cores);" in said
    assert "the machine left it" not in departed  # (it left that run all of them)


def test_a_departure_names_the_cpu_a_kind_used_beside_another_request_of_its_process() -> None:
    # The Flask shop's granian-wsgi 2 x 8 at 6.1/s: /report used 1.98x the CPU beside another
    # /report in its worker than alone in it; /checkout's 1.05 is not worth a word.
    level = Level(
        offered_per_s=6.1, predicted_per_s=6.0, predicted_p99_s=0.50, measured_per_s=6.0,
        measured_p99_s=0.74, cores_free=1.98, cpu_used_ratio=1.02, explained_per_s=6.0, explained_p99_s=0.65,
        shared_cpu_ratio={"/report": 1.98, "/checkout": 1.05},
    )  # fmt: skip
    named = "a /report beside another in its process used 1.98x the CPU of one alone in it"
    assert named in level.departures()
    assert not any("/checkout" in line for line in level.departures())
    # Said where no cores were measured (a cluster's pod) too: it explains the CPU, not the cores.
    assert named in level.model_copy(update={"cores_free": None}).departures()
    # Within the prediction, nothing to explain: not said.
    kept = level.model_copy(update={"measured_p99_s": 0.52})
    assert kept.departures() == []


def test_a_configuration_no_rate_of_which_keeps_the_objective_is_proved_at_the_proposals_rates() -> None:
    # The Django shop as ASGI (2026-11-27, objective p99 0.64 s): uvicorn's /report drew up to 0.70 s
    # of CPU from its own flows, so no rate of its kept the objective in the model; its clause was
    # empty and it was "proved at 0.0/s". Now it is offered the proposal's rates, and says why.
    goal = Objective(p99_s=0.64, why="2x its slowest request alone")
    granian = proved("proposed", "granian-asgi, 2 workers", (6.0, 6.0, 6.0, 0.38), (7.5, 7.3, 7.4, 0.70))
    uvicorn = proved("fixed", "uvicorn, 2 workers", (6.0, 6.0, 5.9, 0.61), (7.5, 7.3, 7.2, 0.90))
    uvicorn = uvicorn.model_copy(update={"sustainable_per_s": 0.0})
    found = conclusion(proposed=granian, fixed=uvicorn, objective=goal)
    text = headline(found)
    assert text.startswith("Serve the app with granian-asgi, 2 workers")
    assert (
        f"the best of the fixed configurations, uvicorn, 2 workers, at the proposal's rate ({NO_RATE}), "
        "measured 7.2/s at p99 0.90 s" in text
    )
    said = answer(decided(found)).evidence
    assert f"uvicorn, 2 workers (fixed): {NO_RATE}; offered the proposal's rates, at 6.0/s predicted" in said
    # No proposal: nothing kept it at any rate, and the answer says so rather than end in a colon.
    assert headline(conclusion(proposed=None, fixed=uvicorn, objective=goal)) == (
        f"No configuration on 2 cores and 1 GiB meets p99 0.64 s: {NO_RATE}."
    )
    # Where there was not even a proposal's rate, it was not proved, and says so.
    alone = uvicorn.model_copy(update={"levels": [], "error": f"{NO_RATE}, and there is no proposal"})
    said = answer(decided(conclusion(proposed=granian, fixed=alone, objective=goal))).evidence
    assert f"uvicorn, 2 workers (fixed): {NO_RATE}, and there is no proposal" in said


def test_a_proposal_sized_again_on_the_proofs_cpu_is_the_answer_where_its_proof_kept_the_objective(
    tmp_path: Path,
) -> None:
    # datasette's (2026-11-27, objective p99 1.08 s): granian-asgi, 2 workers, proposed at 6.4/s on
    # the flows' CPU, missed it (its requests used 1.34x that); uvicorn, 2 workers kept it at 4.2/s.
    goal = Objective(p99_s=1.08, why="4x the mix's mean time alone")
    label = "granian-asgi, 2 workers"
    first = proved("proposed", label, (5.2, 5.1, 5.1, 1.84), (6.4, 6.3, 6.2, 1.66))
    uvicorn = proved("family", "uvicorn, 2 workers", (3.4, 3.3, 3.2, 0.75), (4.2, 4.1, 4.1, 1.03))
    again = proved("resized", label, (3.9, 3.9, 3.8, 0.70), (4.9, 4.8, 4.8, 1.10))
    again = again.model_copy(update={"resized_on": 1.31})
    found = conclusion(proposed=first, families=[uvicorn], resized=again, objective=goal)
    text = headline(found)
    assert text.startswith(f"Serve the app with {label}, on 2 cores and 1 GiB: sized again on the CPU")
    moved = (
        "(a request of its family cost 1.31x the CPU the plan drew: its own, the server's and the load "
        "client's)"
    )
    assert f"{moved}, predicted 4.9/s at p99 0.30 s" in text
    assert "measured 4.8/s at p99 1.10 s" in text
    assert (
        "first sized on the flows' CPU, predicted 6.4/s at p99 0.30 s, measured 6.2/s at p99 1.66 s" in text
    )
    assert decided(found).chosen == label and found.proved_best() == (again, again.levels[-1])
    kept = proved_proposal(found)
    assert kept is not None and (kept.role, kept.sustainable_per_s) == ("proposed", 4.9)
    # Each is in the evidence and the table, the re-sizing after the proposal.
    assert [s.role for s in found.each()] == ["proposed", "resized", "family"]
    assert table(found).row_count == 6
    # Sized again because another family's CPU moved, not its own: said so.
    unmoved = found.model_copy(update={"resized": again.model_copy(update={"resized_on": None})})
    assert "(its family's as the flows gave it, another's moved)" in headline(unmoved)
    assert resized_note(unmoved.resized).startswith(
        f"sizing: sized again on the CPU the proofs measured: {label}"
    )
    assert "(1.31x the plan's for its family)" in resized_note(again)
    # The evidence gives the costs it was sized on, and what sizing it again took.
    on_plan, on_proofs = (
        [KindCost(name="table", weight=1, cpu_s=cpu, wait_s=0.0, overhead_s=0.001, cores_per_process=1)]
        for cpu in (0.2, 0.3)
    )
    costed = conclusion(
        proposed=first.model_copy(update={"kinds": on_plan}), families=[uvicorn], objective=goal,
        resized=again.model_copy(update={"kinds": on_proofs, "search_cpu_s": 0.3, "simulations": 15}),
    )  # fmt: skip
    evidence = answer(decided(costed)).evidence
    assert "table 300.0 ms CPU" in evidence and "; 15 more in 0.30 s to size again)" in evidence
    # Where the proposal stands (its proof served more), its own.
    kept_levels = [lv.model_copy(update={"measured_p99_s": 0.9}) for lv in first.levels]
    standing = first.model_copy(update={"kinds": on_plan, "levels": kept_levels})
    costed = costed.model_copy(update={"proposed": standing})
    assert costed.proved_best() is None and "table 200.0 ms CPU" in answer(decided(costed)).evidence


def test_a_proof_kept_the_objective_within_its_bar_says_so() -> None:
    # A proof run keeps the objective within DEPARTS (one run's p99 is that noisy): datasette's
    # answer read "its proof kept p99 0.72 s ..., measured 3.8/s at p99 0.78 s", a slip to a reader.
    goal = Objective(p99_s=0.6, why="4x the mix's mean time alone")
    gevent = proved(
        "proposed", "gunicorn gevent, 2 workers", (14.5, 14.7, 14.4, 0.82), (18.1, 18.1, 17.0, 6.1)
    )
    within = proved("family", "gunicorn sync, 4 workers", (16.0, 16.3, 15.9, 0.66), (20.0, 20.0, 19.0, 1.01))
    text = headline(conclusion(proposed=gevent, families=[within], objective=goal))
    assert "its proof kept p99 0.60 s (within the 15 % one run's p99 is held to) at 16.0/s offered" in text
    assert "measured 15.9/s at p99 0.66 s" in text
    under = proved("family", "gunicorn sync, 4 workers", (16.0, 16.3, 15.9, 0.41), (20.0, 20.0, 19.0, 1.01))
    text = headline(conclusion(proposed=gevent, families=[under], objective=goal))
    assert "its proof kept p99 0.60 s at 16.0/s offered" in text and "within the" not in text


def test_a_re_sizing_is_named_only_where_no_other_proof_served_more_keeping_the_objective() -> None:
    goal = Objective(p99_s=1.08, why="4x the mix's mean time alone")
    label = "granian-asgi, 2 workers"
    first = proved("proposed", label, (5.2, 5.1, 5.1, 1.84), (6.4, 6.3, 6.2, 1.66))
    uvicorn = proved("family", "uvicorn, 2 workers", (3.4, 3.3, 3.2, 0.75), (4.2, 4.1, 4.1, 1.03))
    again = proved("resized", label, (3.9, 3.9, 3.8, 0.70), (4.9, 4.8, 4.8, 1.10))
    # Its proof missed at its rate: the proof decides among all, and the answer says it at the rate
    # that kept it (not the re-sizing's prediction at the rate that missed).
    missed = again.model_copy(update={"levels": [again.levels[0], uvicorn.levels[0].model_copy(
        update={"offered_per_s": 4.9, "measured_per_s": 4.8, "measured_p99_s": 1.4})]})  # fmt: skip
    found = conclusion(proposed=first, families=[uvicorn], resized=missed, objective=goal)
    assert found.proved_best() == (uvicorn, uvicorn.levels[-1])
    faster = uvicorn.model_copy(update={"levels": [uvicorn.levels[0]]})  # its 4.2/s run gone: 3.2/s
    found = conclusion(proposed=first, families=[faster], resized=missed, objective=goal)
    assert found.proved_best() == (missed, missed.levels[0])
    text = headline(found)
    assert text.startswith(
        f"Serve the app with {label}, on 2 cores and 1 GiB, at up to 3.9/s: its proof kept"
    )
    assert "sized again" not in text
    # Another family kept it serving more than the re-sizing: that one.
    busier = proved("family", "uvicorn, 4 workers", (4.8, 4.7, 4.7, 0.9), (6.0, 5.9, 5.9, 1.0))
    found = conclusion(proposed=first, families=[busier], resized=again, objective=goal)
    assert found.proved_best() == (busier, busier.levels[-1])
    # The proposal's own proof kept it at a higher rate than the re-sizing's: the proposal stands.
    held = proved("proposed", label, (5.2, 5.1, 5.1, 0.84), (6.4, 6.3, 6.2, 1.06))
    found = conclusion(proposed=held, families=[uvicorn], resized=again, objective=goal)
    assert found.proved_best() is None and decided(found).chosen == label
    assert headline(found).startswith(f"Serve the app with {label}, on 2 cores and 1 GiB: predicted 6.4/s")
    # With RATE=, the smallest configuration proved to serve it stands, whatever the re-sizing measured.
    serving = Objective(p99_s=1.08, why="P99=", rate_per_s=4.0)
    small = proved("proposed", "uvicorn, 1 worker", (3.2, 3.2, 3.2, 0.5), (4.0, 4.0, 4.0, 0.9))
    bigger = proved("resized", "uvicorn, 2 workers", (3.2, 3.2, 3.2, 0.4), (4.0, 4.0, 4.1, 0.6))
    found = conclusion(proposed=small, resized=bigger, objective=serving)
    assert found.proved_best() is None and decided(found).chosen == "uvicorn, 1 worker"


def test_with_a_target_rate_a_proposal_that_misses_it_over_minutes_gives_way_to_one_that_holds() -> None:
    # Django shop as ASGI at RATE=12 (2026-11-29): the smallest for a proof met p99 0.4 s in its
    # 20 s, and the model, on the CPU its requests used, put ten minutes of the rate above it.
    serving = Objective(p99_s=0.4, why="P99=", rate_per_s=12.0)

    def at_rate(role: str, label: str, p99: float, sustained: float | None) -> SizedSummary:
        summary = proved(role, label, (9.6, 9.6, 9.6, p99 / 2), (12.0, 12.0, 12.0, p99))
        top = summary.levels[-1].model_copy(update={"sustained_p99_s": 0.3, "sustained_s": 600.0,
                                                    "sustained_used_p99_s": sustained})  # fmt: skip
        return summary.model_copy(update={"levels": [summary.levels[0], top]})

    small = at_rate("proposed", "uvicorn, 2 workers", 0.35, 0.61)
    bigger = at_rate("resized", "uvicorn, 3 workers", 0.2, 0.18)
    found = conclusion(proposed=small, resized=bigger, objective=serving)
    assert found.proved_best() == (bigger, bigger.levels[-1])
    text = headline(found)
    assert text.startswith("Serve 12/s with the smallest configuration that does, uvicorn, 3 workers")
    assert (
        "which traffic that stays at the rate misses: p99 0.61 s over 10 minutes in the model on the CPU its "
        "requests used" in text
    )
    # Another family's best that holds, where the re-sizing does not: it, and the reason.
    gthread = at_rate("family", "gunicorn gthread, 2 workers x 4 threads", 0.3, 0.33)
    slow = at_rate("resized", "uvicorn, 3 workers", 0.2, 0.5)
    found = conclusion(proposed=small, families=[gthread], resized=slow, objective=serving)
    assert found.proved_best() == (gthread, gthread.levels[-1])
    text = headline(found)
    assert "the model's pick, uvicorn, 2 workers, predicted 12.0/s at p99 0.30 s, measured 12.0/s" in text
    assert "missed it in its proof" not in text and "which traffic that stays at the rate misses" in text
    # None holds: the proposal stands, and the sustained sentence says the rate is missed.
    found = conclusion(proposed=small, resized=slow, objective=serving)
    assert found.proved_best() is None and decided(found).chosen == "uvicorn, 2 workers"
    assert "misses p99 0.40 s" in headline(found)
    # Held on the CPU used: it stands, as before.
    holding = at_rate("proposed", "uvicorn, 2 workers", 0.35, 0.39)
    assert conclusion(proposed=holding, resized=bigger, objective=serving).proved_best() is None


def test_with_a_target_rate_the_smallest_configuration_whose_proof_kept_it_is_named() -> None:
    # httpbin at RATE=500 (2026-12-02 05:51): the proposal's proof missed; its re-sizing, gthread 1 x 24
    # (105 MiB), kept the rate, as did gevent 1 x 500 (165 MiB), and the fixed gevent 2 x 100 (183 MiB)
    # kept 1,583/s offered. The answer named the fixed one, for serving the most: the question was the
    # smallest that serves 500/s.
    serving = Objective(p99_s=0.11, why="P99=", rate_per_s=500.0)

    def at(
        role: str, label: str, mib: int, processes: int, *runs: tuple[float, float, float, float]
    ) -> SizedSummary:
        return proved(role, label, *runs).model_copy(
            update={"memory_bytes": mib << 20, "processes": processes}
        )

    first, again, greenlets, fixed = (at(*row) for row in (
        ("proposed", "granian-wsgi, 1 worker x 16 threads", 116, 1,
         (400, 401.6, 401.0, 0.13), (500, 501.4, 479.4, 0.87)),
        ("resized", "gunicorn gthread, 1 worker x 24 threads", 105, 1,
         (400, 401.6, 400.6, 0.066), (500, 501.3, 500.5, 0.078)),
        ("family", "gunicorn gevent, 1 worker x 500 connections", 165, 1,
         (400, 401.6, 401.0, 0.062), (500, 501.4, 500.3, 0.065)),
        ("fixed", "gunicorn gevent, 2 workers x 100 connections", 183, 2,
         (1582.9, 1585.2, 1578.3, 0.102), (1978.6, 1976.9, 1758.7, 0.231)),
    ))  # fmt: skip
    found = conclusion(proposed=first, families=[greenlets], resized=again, fixed=fixed, objective=serving)
    assert found.proved_best() == (again, again.levels[-1])
    assert headline(found).startswith(
        "Serve 500/s with the smallest configuration that does, gunicorn gthread, 1 worker x 24 threads"
    )
    # Without the re-sizing: the smaller of the two that kept it, not the one serving the most.
    found = conclusion(proposed=first, families=[greenlets], fixed=fixed, objective=serving)
    assert found.proved_best() == (greenlets, greenlets.levels[-1])
    assert decided(found).chosen == greenlets.label
    # Kept only below the rate, or not kept, is not named; of one memory, the fewer processes.
    below = at(
        "family", "gunicorn sync, 1 worker", 60, 1, (400, 401.6, 401.0, 0.05), (500, 501.4, 430.0, 0.9)
    )
    twin = fixed.model_copy(update={"memory_bytes": 165 << 20})
    found = conclusion(proposed=first, families=[below, greenlets], fixed=twin, objective=serving)
    assert found.proved_best() == (greenlets, greenlets.levels[-1])
    # Of one configuration, its level nearest the rate: the fixed one, had it kept both, at 1,583/s.
    both = fixed.model_copy(
        update={"levels": [fixed.levels[0], fixed.levels[1].model_copy(update={"measured_p99_s": 0.1})]}
    )
    assert conclusion(proposed=first, fixed=both, objective=serving).proved_best() == (both, both.levels[0])
    # A proposal whose proof did not run gives way to its re-sizing alone, smaller ones beside it or not.
    unrun = first.model_copy(
        update={"levels": [lv.model_copy(update={"measured_per_s": None}) for lv in first.levels]}
    )
    small = greenlets.model_copy(update={"memory_bytes": 50 << 20})
    assert conclusion(proposed=unrun, families=[small], resized=again, objective=serving).proved_best() == (
        again,
        again.levels[-1],
    )
    assert conclusion(proposed=unrun, families=[small], objective=serving).proved_best() is None
    # The proposal's own proof kept it: it stands, smaller or not.
    kept = first.model_copy(update={"levels": greenlets.levels})
    assert conclusion(proposed=kept, resized=again, objective=serving).proved_best() is None


def test_a_target_rate_that_the_proofs_cpu_puts_beyond_the_pod_names_the_pod_it_would_need() -> None:
    # datasette at RATE=4.5 (2026-11-29): granian-asgi, 1 worker, sized on the flows' CPU, whose
    # proofs' requests used 1.52x it; on that, nothing on the pod serves 4.5/s.
    serving = Objective(p99_s=1.05, why="P99=", rate_per_s=4.5)
    first = proved("proposed", "granian-asgi, 1 worker", (3.6, 3.5, 3.5, 1.24), (4.5, 4.4, 4.3, 1.18))
    bigger = POD.model_copy(update={"cores": 4, "memory_bytes": 2 << 30})
    needed = sized("needed", "granian-asgi, 3 workers", 4.5, None, needs_pod=bigger, error="not proved")
    needed = needed.model_copy(update={"resized_on": 1.52})
    text = headline(conclusion(proposed=first, needed=needed, objective=serving))
    assert text.startswith("Serve 4.5/s with the smallest configuration that does, granian-asgi, 1 worker")
    assert text.endswith(
        "; sized again on the CPU the proofs measured (a request of its family cost 1.52x the CPU the "
        "plan drew: its own, the server's and the load client's), no configuration on 2 cores and 1 GiB "
        "serves 4.5/s at p99 1.05 s in the model: the pod it would need has 4 cores and 2 GiB: "
        "granian-asgi, 3 workers, predicted 4.5/s at p99 0.30 s (not proved: this machine is not that pod)."
    )  # after what was measured beside it (the fixed configurations'), so "this one" is never the pod's
    # Without a re-sizing, nothing of the kind is said; nor where a proof named another that kept it.
    assert "would need" not in headline(conclusion(proposed=first, objective=serving))
    missed = first.model_copy(
        update={"levels": [lv.model_copy(update={"measured_p99_s": 1.5}) for lv in first.levels]}
    )
    uvicorn = proved("family", "uvicorn, 2 workers", (3.6, 3.5, 3.6, 0.8), (4.5, 4.4, 4.5, 0.9))
    named = conclusion(proposed=missed, families=[uvicorn], needed=needed, objective=serving)
    assert named.proved_best() == (uvicorn, uvicorn.levels[-1]) and "would need" not in headline(named)


def test_an_objective_under_a_tenth_of_a_second_is_said_in_milliseconds() -> None:
    # A light path's default objective (4x its 0.3 ms alone) read "p99 0.00 s".
    assert goal(0.55) == "p99 0.55 s"
    assert goal(0.082) == "p99 82 ms"
    assert goal(0.0012) == "p99 1.2 ms"
    assert goal(0.0004) == "p99 0.40 ms"
    # And so is every p99 its answer gives: predicted, measured, the band of one run's draws.
    level = Level(
        offered_per_s=3241.4, predicted_per_s=3216.5, predicted_p99_s=0.0026, p99_band_s=[0.0021, 0.0034],
        measured_per_s=2724.4, measured_p99_s=1.1, warmup_predicted_per_s=3200.0,
        warmup_predicted_p99_s=0.0019, warmup_p99_band_s=[0.0015, 0.0024], sustained_p99_s=0.0031,
        sustained_s=300,
    )  # fmt: skip
    light = sized("proposed", "granian-wsgi, 2 workers x 1 threads", 3241.4, None, predicted_p99_s=0.0026)
    light = light.model_copy(update={"levels": [level], "objective": Objective(p99_s=0.0028, why="")})
    found = conclusion(proposed=light, objective=light.objective)
    text = headline(found)
    assert "predicted 3241.4/s at p99 2.6 ms, measured 2724.4/s at p99 1.10 s" in text, text
    evidence = answer(decided(found)).evidence
    assert (
        "(2.1-3.4 ms in one run)" in evidence and "beyond the 1.5-2.4 ms its draws give one run" in evidence
    )
    assert "(p99 1.9 ms on the CPU measured before its window" in evidence
    assert "(sustained for 5 minutes: 3.1 ms)" in evidence, evidence
    said = (text + evidence).replace("took 0.00 s of CPU", "")  # the search's CPU seconds are not a p99
    assert "0.00 s" not in said and "0.00-" not in said


def test_each_configuration_proved_is_a_line_of_evidence_and_a_caveat_several_share_is_said_once() -> None:
    # The Flask shop's light path (2026-11-30): one paragraph of 60 lines, the same caveat three times.
    queue = "each worker accepts connections into its own queue (the model deals each request at random)"
    first = sized("proposed", "granian-wsgi, 3 workers x 1 threads", 2922.5, 2899.3)
    other = sized("family", "gunicorn gthread, 4 workers x 1 threads", 1833.5, 1825.1)
    plain = sized("family", "gunicorn sync, 6 workers", 1421.4, 1421.7)
    found = conclusion(
        proposed=first,
        families=[other, plain],
        caveats=[
            Caveat(kind="model", about=first.label, text=f"{queue}."),
            Caveat(kind="model", about=other.label, text=f"{queue}."),
            Caveat(kind="model", about=first.label, text=queue),  # the same, said again: named once
            Caveat(text="the client shares the cores."),
            Caveat(about=plain.label, text="the client shares the cores."),  # said of all already
            # A plain sentence (a results.json from before caveats had fields): said of the whole sizing.
            "the proof runs here, on 2",
        ],
    )
    said = answer(decided(found))
    lines = said.evidence.splitlines()
    assert [line.split(" (")[0] for line in lines[:3]] == [first.label, other.label, plain.label]
    assert lines[3].startswith("Costs per request:") and len(lines) == 4
    assert said.caveat is not None
    assert said.caveat.splitlines() == [
        f"{first.label}; {other.label}: {queue}.",
        "the client shares the cores.",
        "the proof runs here, on 2.",
    ]
    # Printed so: each caveat, and each configuration's evidence, starts a line of its own.
    printed = answer_lines([said], width=100)
    assert sum(line.startswith("  ! ") for line in printed) == 3
    assert [line for line in printed if line.startswith(f"  {plain.label} (")], printed


def test_caveats_written_as_sentences_are_read_back_with_their_kind_and_configuration() -> None:
    # Schema 6 wrote each caveat as a sentence led by its configuration's label: a run's raw plan,
    # a proposal file or a results.json of then, read again, says them as it did.
    label = "gunicorn gevent, 4 workers x 100 connections"
    old = [
        f"{label}: each worker accepts connections into its own queue.",
        "no configuration within the pod serves 10/s at p99 0.40 s",
        "none of the 3 configurations screened that serve 10/s at p99 0.40 s in a proof's run keeps it "
        "over minutes of that rate in the model: the proposal is the smallest for a proof's run",
        "no rate keeps the objective in the model (its p99 about 0.50 s even with next to no load)",
        "the pod has 2 cores and this machine 4: the proof runs here, on 4",
        "sync: its own CPU per request not measured, taken as 0",
    ]
    summary = sized("proposed", "gunicorn sync, 1 worker", 10, 10).model_dump(mode="json")
    read = SizedSummary.model_validate({**summary, "caveats": old}).caveats
    assert [c.kind for c in read] == ["model", "not-served", "not-held", "no-rate", "assumed", "assumed"]
    assert read[0].about == label and read[0].text.startswith("each worker accepts")
    assert all(c.about is None for c in read[1:])
    assert [c.said() for c in read] == old


def test_a_departure_says_where_the_runs_slowest_requests_spent_their_time() -> None:
    # granian-wsgi 3 x 1 at 2,922.5/s: p99 17 ms against 2.2 ms; its slowest in the server, not the app.
    split = TailSplit(
        requests=240, slowest=240, latency_s=0.023, sending_s=0.0018, before_app_s=0.019, in_app_s=0.00067,
        run_queue_s=0.00037, after_app_s=0.0019,
    )  # fmt: skip
    level = Level(
        offered_per_s=2922.5, predicted_per_s=2883.4, predicted_p99_s=0.0022, measured_per_s=2899.3,
        measured_p99_s=0.017, slowest=split,
    )  # fmt: skip
    told = (
        "its slowest 1 % (240) took 23 ms on average: 1.8 ms to be sent, 19 ms before the app, 0.67 ms in it"
    )
    assert any(line.startswith(told) for line in level.departures()), level.departures()
    assert "(a run queue's 0.37 ms)" in " ".join(level.departures())
    # Within the prediction, nothing to explain: not said.
    assert level.model_copy(update={"measured_p99_s": 0.0023}).departures() == []


def test_the_table_names_each_configuration_once_by_its_knobs_and_fits_a_log_line() -> None:
    # Read in `kubectl logs` (140 columns): each configuration's family and knobs on one line, on its
    # first rate only, and every header whole, with the longest knobs a pod sizes (granian-asgi's
    # 16 x 128: "gunicorn gthread 16x128", with its server, wrapped two headers); in the report,
    # each named once over both its rates.
    def two_levels(role: str, family: str, processes: int, threads: int, unit: str) -> SizedSummary:
        one = sized(role, f"{family}, a long label past any table cell", 1400, 1398)
        low, high = (one.levels[0].model_copy(update={"offered_per_s": rate}) for rate in (1120.0, 1400.0))
        knobs = {"family": family, "processes": processes, "threads": threads, "per_process_unit": unit}
        return one.model_copy(update={"levels": [high, low], **knobs})

    found = conclusion(
        proposed=two_levels("proposed", "granian-wsgi", 2, 32, "threads"),
        families=[
            two_levels("family", "sync", 16, 1, ""),
            two_levels("family", "granian-asgi", 16, 128, "threads"),
        ],
    )
    console = Console(width=140, record=True)
    console.print(table(found))
    lines = console.export_text().splitlines()
    assert not any("…" in line for line in lines)
    assert any("pred p99 s" in line and "meas p99 s" in line for line in lines)
    named = [line.split()[:2] for line in lines if line.strip().startswith(("granian", "sync"))]
    assert named == [["granian-wsgi", "2x32"], ["sync", "16"], ["granian-asgi", "16x128"]]
    offered = [line.split()[-9] for line in lines if "1398.0" in line]
    assert offered == ["1120.0", "1400.0"] * 3  # each configuration's rates, lowest first
    html = rich_table(table(found))
    assert '<th scope="row"></th>' not in html  # no row header left empty on a configuration's second rate
    for name in ("granian-wsgi 2x32", "sync 16", "granian-asgi 16x128"):
        assert html.count(f'<th scope="row" rowspan="2">{name}</th>') == 1
    assert html.count('<td rowspan="2">proposed</td>') == 1
    assert html.count("<tr>") == 7  # the header and six rates, each its own row
