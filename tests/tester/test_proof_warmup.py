"""A proof run predicts its own window from its warm-up: the CPU its first seconds' requests used
in the configuration proved, measured during the run, before the window it predicts. A real
gunicorn sync server whose /cpu path burns 20 ms, proved on a plan that took it for 5 ms (the
Flask shop's requests used 0.77 to 1.19 times the CPU the plan drew from the flows minutes before):
the warm-up's prediction follows the CPU really used, on the cores the machine left the server
meanwhile, and the window is judged against it. A proposal whose requests cost other CPU than its
plan drew (their own, the server's, the local client's) is sized again on it (proposal/resize.py)."""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from labtester import machine
from labtester.launcher import RunningTarget
from labtester.load import Sample
from labtester.proposal.lab import resized_note, sized_again
from labtester.proposal.plan import Planned
from labtester.proposal.prove import offer_levels
from labtester.proposal.resize import resized
from labtester.proposal.warmup import overhead_per_request
from labtester.rawlog import RawLog
from labtester.scenarios.common import decode, encode
from labtester.scenarios.sizing import SHAPE, window_of
from labtester.settings import LabSettings
from labtester.sizing import window
from labtester.sizing.arrivals import proof_arrivals
from labtester.sizing.caveat import NOT_HELD, RATE_KINDS, Caveat
from labtester.sizing.document import KindCost, Level, Objective, PodSize, SizedSummary, warmup_of
from labtester.sizing.families import families
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.proof import PATTERN_SEEDS
from labtester.sizing.search import search
from labtester.sizing.serving import rate_caveats
from labtester.sizing.sized import Found
from labtester.targets import DEFAULT_VALUES
from tests.services.apps import CONFIGURATIONS, serve_app

SYNC = next(c for c in CONFIGURATIONS if c["name"] == "sync-1x")
CPU = "/cpu?ms=20"
RATE, DURATION_S = 40.0, 6.0  # 2 workers of 20 ms: 0.4 of their cores at the rate, 0.1 as planned
SENDS = PATTERN_SEEDS[2]  # the level's sends, as a plan chooses them (sizing/proof.py): not the first seed's


@pytest.fixture(scope="module")
def two_sync_workers() -> Iterator[RunningTarget]:
    target = serve_app("tests.services.bare_app:wsgi", SYNC, [CPU], LAB_WORKERS="2")
    # A fresh worker's first requests cost its server more (first allocations and code paths): a
    # warm-up of some 50 requests on a cold pair once read 3.9 ms of server CPU a request against
    # its run's 1.8. A lab's proofs warm up on thousands; the tests here are about a warm server.
    with httpx.Client(base_url=target.url) as client, ThreadPoolExecutor(4) as pool:
        for answer in pool.map(lambda _: client.get(CPU), range(40)):
            answer.raise_for_status()
    yield target
    target.stop()


class Kept:
    """The records a proof writes (the raw log's interface)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record_type: str, **fields: Any) -> None:
        self.records.append({"type": record_type, **fields})


def server_cpu(target: RunningTarget) -> float:
    """The server's processes' CPU seconds, as the proof reads them."""
    return sum(sum(p.cpu_times()[:2]) for p in target.tree())


def planned(cpu_s: float, sustained_s: float | None = None) -> SizedSummary:
    """gunicorn sync x 2 as a plan would have it, its one kind taken to cost `cpu_s`; with
    `sustained_s`, its level carries the p99 of that long at its rate (as the proposal's do)."""
    kind = KindCost(name=CPU, weight=1, cpu_s=cpu_s, wait_s=0.0, overhead_s=0.0003, cores_per_process=1)
    summary = SizedSummary(
        role="proposed", family="sync", server="gunicorn", label="gunicorn sync, 2 workers", processes=2,
        threads=1, env={}, memory_bytes=0, accept="shared", preemptive=True, sustainable_per_s=RATE,
        predicted_p99_s=0.0, pod=PodSize(cores=2, memory_bytes=1 << 30, source="test"),
        objective=Objective(p99_s=1.0, why="test"), kinds=[kind],
    )  # fmt: skip
    # The plan's prediction of the window, as plan.py makes it: on the plan's CPU (none measured).
    run = window.predicted_window(summary, RATE, 2, DURATION_S, warmup_of(DURATION_S), {}, seed=SENDS)
    held = window.sustained_on(summary, RATE, 2, sustained_s, {}) if sustained_s else None
    level = Level(
        offered_per_s=RATE, seed=SENDS, predicted_per_s=run.per_s, predicted_p99_s=run.p99_s,
        sustained_p99_s=held, sustained_s=sustained_s,
    )  # fmt: skip
    return summary.model_copy(update={"levels": [level], "predicted_p99_s": run.p99_s})


@pytest.fixture(scope="module")
def a_quarter_planned(two_sync_workers: RunningTarget) -> Kept:
    """One proof run of a plan that took the requests for a quarter of the CPU they use."""
    kept = Kept()
    times = (DURATION_S, 10.0)
    offer_levels(
        "proved",
        two_sync_workers.url,
        planned(0.005, sustained_s=60),
        kept,
        times,
        {},
        lambda: server_cpu(two_sync_workers),
    )
    return kept


def test_the_warm_up_predicts_the_window_from_the_cpu_it_measured(a_quarter_planned: Kept) -> None:
    kept = a_quarter_planned
    (run,) = [r for r in kept.records if r.get("kind") == "run"]
    warmup = run["warmup"]
    assert run["warmup_s"] == pytest.approx(warmup_of(DURATION_S))
    # Made from the warm-up's requests alone, once the run was over (beside the sends, its simulation
    # held the sender's GIL and stalled the window's first sends), from the cores read at its end.
    rows = run["samples"]["rows"]
    # The sends its level names (the plan's choice), each request's from its own schedule.
    assert run["seed"] == SENDS != PATTERN_SEEDS[0]
    assert sorted(s.scheduled_s for s in decode(run["samples"])) == pytest.approx(
        proof_arrivals(RATE, DURATION_S, SENDS)
    )
    sent_early = sum(1 for row in rows if row[1] < run["warmup_s"])
    assert 0 < warmup["requests"] <= sent_early
    first_judged = min(row[2] for row in rows if row[1] >= run["warmup_s"])  # its sent_s
    assert run["warmup_s"] <= warmup["cores_read_at_s"] <= first_judged < run["wall_s"] <= warmup["made_at_s"]
    assert 2.5 < warmup["cpu_ratio"] < 8, warmup  # 20 ms used where the plan said 5
    # The cores the rest of the machine left the server over the warm-up, read from its processes.
    assert 0 < warmup["cores_free"] <= os.cpu_count(), warmup
    assert warmup["cores"] == pytest.approx(min(warmup["cores_free"], 2))
    # The server's own CPU per request at the run's rate: its processes' over the warm-up (a part of
    # the run's) beyond what the requests used by its end, near what the whole run measured.
    assert 0 < warmup["server_cpu_s"] < run["server_cpu_s"], (warmup, run["server_cpu_s"])
    assert warmup["overhead_s"] == warmup["warmup_overhead_s"]
    whole = overhead_per_request([run])
    assert whole is not None and 0 < warmup["overhead_s"] < 0.02  # more than nothing, under the work
    assert 0.5 < warmup["overhead_s"] / whole < 2, (warmup["overhead_s"], whole)
    (level,) = SHAPE.analyse(kept.records, None, LabSettings()).levels
    assert level.warmup_predicted_p99_s == warmup["predicted_p99_s"]
    low, high = level.band()  # the warm-up's: the least and the most of its draws' p99
    assert low <= level.warmup_predicted_p99_s <= high
    assert level.requests < len(run["samples"]["rows"])  # the window only: the warm-up is not judged
    assert level.measured_p99_s is not None and level.warmup_predicted_p99_s is not None
    # The plan's p99 (its CPU a quarter of what was used) against the warm-up's: the run's own is nearer.
    plan_off = abs(math.log(level.measured_p99_s / level.predicted_p99_s))
    warm_off = abs(math.log(level.measured_p99_s / level.warmup_predicted_p99_s))
    assert warm_off < plan_off, level
    # Every answer carried its process's full collections so far (lab-gc): the warm-up counted them
    # (a real server: a figure, none or more), and so did the window.
    assert warmup["full_collections_per_request"] is not None, warmup
    assert level.full_collections_per_request is not None
    assert level.warmup_full_collections_per_request == warmup["full_collections_per_request"]


def test_the_sustained_p99_is_worked_out_again_on_the_cpu_the_run_used(a_quarter_planned: Kept) -> None:
    # The plan took the requests for a quarter of the CPU they use: minutes of traffic at the rate,
    # on what the run's requests used and the server's own CPU per request it measured, queue longer.
    (run,) = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    (level,) = SHAPE.analyse(a_quarter_planned.records, None, LabSettings()).levels
    held = run["sustained"]
    assert level.sustained_p99_s is not None and level.sustained_used_p99_s == held["p99_s"]
    assert level.sustained_used_p99_s > 2 * level.sustained_p99_s, level
    assert level.sustained_cpu_ratio == held["cpu_ratio"] and 2.5 < held["cpu_ratio"] < 8, held
    answered = [s for s in decode(run["samples"]) if s.ok and s.cpu_s is not None]
    overhead = (run["server_cpu_s"] - sum(s.cpu_s or 0.0 for s in answered)) / len(answered)
    assert held["overhead_s"] == pytest.approx(max(0.0, overhead))  # the run's own, not the plan's


def test_a_second_level_adds_what_the_first_run_measured(two_sync_workers: RunningTarget) -> None:
    # Two levels, as a proof offers them: the second's warm-up adds the first run's requests' CPU;
    # the server's own CPU per request each takes from its own warm-up, at its own rate (it falls as
    # the rate rises), not from the first run (its processes' beyond the requests' own).
    summary = planned(0.02)
    summary = summary.model_copy(update={"levels": [summary.levels[0]] * 2})
    kept = Kept()
    times = (DURATION_S, 10.0)
    offer_levels(
        "proved", two_sync_workers.url, summary, kept, times, {}, lambda: server_cpu(two_sync_workers)
    )
    first, second = [r for r in kept.records if r.get("kind") == "run"]
    answered = [s for s in decode(first["samples"]) if s.ok and s.cpu_s is not None]
    assert second["warmup"]["requests"] > len(answered)  # the first run's, and its own warm-up's
    for run in (first, second):
        assert run["warmup"]["overhead_s"] == run["warmup"]["warmup_overhead_s"], run["warmup"]
        assert 0 < run["warmup"]["overhead_s"] < 0.02  # the server's own: more than nothing, under the work


def test_a_proposal_whose_requests_used_other_cpu_than_planned_is_sized_again_on_it(
    a_quarter_planned: Kept,
) -> None:
    runs = {"sized-proposed": [r for r in a_quarter_planned.records if r.get("kind") == "run"]}
    (sync,) = [f for f in families("wsgi", DEFAULT_VALUES)[0] if f.name == "sync"]
    memory = Memory(0, 64 << 20)
    first = planned(0.005)
    again = resized([Planned(first, sync, memory)], runs, DURATION_S, kept_per_s=0.0)
    assert again is not None and again.summary.role == "resized" and again.summary.levels
    used = window.cpu_used(first.kinds, [s for s in window_of(runs["sized-proposed"][0])[1] if s.ok])[CPU]
    # Sized on what the window's requests used and what the server spent beside them: the whole's
    # ratio to the plan's (5 ms and its 0.3 ms), and the kind's CPU drawn from it.
    server = overhead_per_request(runs["sized-proposed"])
    assert server is not None and 0 < server < 0.02  # the server's own: more than nothing, under the work
    assert again.summary.resized_on == pytest.approx((statistics.mean(used) + server) / 0.0053)
    assert again.summary.resized_on > 2.5  # 20 ms burnt, 5 planned
    (kind,) = again.summary.kinds
    assert kind.mean_cpu_s == pytest.approx(statistics.mean(used), rel=0.1)
    assert kind.overhead_s == pytest.approx(server) and kind.client_s == 0.0  # the plan had no local client
    # The knobs searched again: on four times the CPU it sustains less than on the plan's.
    on_plan = search(
        [sync], {"sync": window.measured_kinds(first.kinds, {})}, {"sync": memory},
        Pod(2, 1 << 30), first.objective.p99_s, DURATION_S,
    )  # fmt: skip
    assert on_plan.proposed is not None
    assert again.summary.sustainable_per_s < on_plan.proposed.rate_per_s / 2

    def again_of(summary: SizedSummary, kept_per_s: float = 0.0, *more: Planned) -> Planned | None:
        return resized([Planned(summary, sync, memory), *more], runs, DURATION_S, kept_per_s)

    # A plan on the CPU the requests used stands; only a proposal is sized again.
    assert again_of(planned(statistics.mean(used))) is None
    assert again_of(first.model_copy(update={"role": "family"})) is None
    # Nothing above what the proposal's proof served keeping the objective: sized on more CPU, it
    # would be offered less than it was proved to serve.
    assert again_of(first, again.summary.sustainable_per_s) is None
    # Nor what was proved already (its label, within DEPARTS of its rate).
    assert again_of(first, 0.0, again) is None
    # On less CPU than drawn, more than the proposal served: sized again.
    generous = planned(4 * statistics.mean(used))
    assert (more := again_of(generous, RATE)) is not None and more.summary.sustainable_per_s > RATE
    # With a target rate, what the first search said of the rate gives way to what this one says.
    first_said = rate_caveats(Found(None, {}, 0.0, 0, serves_rate=True, held=False, tried=3), 10, 1.0)
    objective = first.objective.model_copy(update={"rate_per_s": 10.0})
    assumed = Caveat(text="assumed")
    rated = first.model_copy(update={"objective": objective, "caveats": [*first_said, assumed]})
    assert (targeted := again_of(rated)) is not None and targeted.summary.sustainable_per_s == 10.0
    assert targeted.summary.caveats == [assumed]  # the new search kept the rate sustained: nothing to say
    # A target rate's re-sizing is not held to what the first proof served (it serves the rate).
    assert again_of(rated, 10.0) is not None


def test_a_target_rate_sized_again_that_no_configuration_keeps_over_minutes_says_so(
    a_quarter_planned: Kept,
) -> None:
    # The proof's requests, each taken at 20 ms exactly: two sync workers serve 80/s within p99
    # 0.1 s in a proof's run (0.086 s in the model) and no number of them over minutes of it (0.135
    # s and more: two cores bind). The plan, on 5 ms, had one worker serve it.
    (run,) = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    exact = [dataclasses.replace(s, cpu_s=0.02) if s.cpu_s is not None else s for s in decode(run["samples"])]
    # And the server's own 0.3 ms a request beside them, as planned (the processes' CPU written so).
    spent = 0.0203 * sum(1 for s in exact if s.ok and s.cpu_s is not None)
    runs = {"sized-proposed": [{**run, "samples": encode(exact), "server_cpu_s": spent}]}
    (sync,) = [f for f in families("wsgi", DEFAULT_VALUES)[0] if f.name == "sync"]
    target = Objective(p99_s=0.1, why="P99=", rate_per_s=80.0)
    one = planned(0.005).model_copy(
        update={
            "objective": target,
            "label": "gunicorn sync, 1 worker",
            "processes": 1,
            "sustainable_per_s": 80,
        }
    )
    again = resized([Planned(one, sync, Memory(0, 64 << 20))], runs, DURATION_S, kept_per_s=80.0)
    assert again is not None and again.summary.label == "gunicorn sync, 2 workers"
    (caveat,) = [c.text for c in again.summary.caveats if c.kind in RATE_KINDS]
    assert NOT_HELD in caveat and "likely needs a bigger pod or a lower rate" in caveat  # every count walked
    # At 98/s nothing on two cores serves it in a proof's run on that CPU: the pod it would need.
    beyond = one.model_copy(update={"objective": target.model_copy(update={"rate_per_s": 98.0})})
    needs = resized([Planned(beyond, sync, Memory(0, 64 << 20))], runs, DURATION_S, kept_per_s=0.0)
    assert needs is not None and needs.summary.role == "needed" and not needs.summary.runs_here
    assert needs.summary.needs_pod is not None and needs.summary.needs_pod.cores == 4
    assert needs.summary.resized_on is not None and needs.summary.resized_on > 3  # 20 ms, 5 planned
    assert resized_note(needs.summary).startswith("sizing: on the CPU the proofs measured (")
    assert "nothing in the pod serves 98/s: the pod it would need has 4 cores" in resized_note(needs.summary)


def test_each_family_is_sized_again_on_its_own_proofs_and_overloaded_runs_are_left_out(
    a_quarter_planned: Kept,
) -> None:
    # The same measured requests stand for two families' proofs: sync planned on what they used,
    # gthread on a quarter of it. Only gthread's moved: the search runs on its measured CPU.
    measured = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    used = window.cpu_used(planned(0.005).kinds, [s for s in window_of(measured[0])[1] if s.ok])[CPU]
    server = overhead_per_request(measured)
    assert server is not None
    # sync planned on all its proof measured: its requests' own and the server's beside them.
    on_measured = planned(statistics.mean(used))
    kind = on_measured.kinds[0].model_copy(update={"overhead_s": server})
    sync, gthread = sync_and_gthread(on_measured.model_copy(update={"kinds": [kind]}))
    runs = {"sized-proposed": measured, "sized-gthread": measured}
    again = resized([sync, gthread], runs, DURATION_S, 0.0)
    assert again is not None
    ratio = (statistics.mean(used) + server) / 0.0053
    expected = pytest.approx(ratio) if again.family.name == "gthread" else None
    assert again.summary.resized_on == expected  # its own family's, or none where it did not move
    # A run that failed requests was overloaded: its CPU is left out, and nothing else moved.
    (run,) = measured
    assert resized([sync, gthread], {"sized-gthread": [overloaded(run)]}, DURATION_S, 0.0) is None


def sync_and_gthread(sync_plan: SizedSummary) -> tuple[Planned, Planned]:
    """sync planned as given (the proposal), and gthread's best planned on a quarter of the CPU."""
    wsgi = {f.name: f for f in families("wsgi", DEFAULT_VALUES)[0]}
    memory = Memory(0, 64 << 20)
    gthread_plan = planned(0.005).model_copy(update={"role": "family", "family": "gthread"})
    return Planned(sync_plan, wsgi["sync"], memory), Planned(gthread_plan, wsgi["gthread"], memory)


def overloaded(run: dict[str, Any]) -> dict[str, Any]:
    """The run with its last answered request failed (a timeout): overloaded."""
    samples = decode(run["samples"])
    failed = [dataclasses.replace(s, error="timeout") if s is samples[-1] else s for s in samples]
    return {**run, "samples": encode(failed)}


def test_a_configuration_its_proofs_overloaded_is_not_proposed_again_at_the_rate_it_failed_at(
    a_quarter_planned: Kept,
) -> None:
    # Both planned on a quarter of what their requests used; sync's proof measured it. Sized again,
    # gthread on its plan's CPU comes first, far above RATE.
    measured = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    (run,) = measured
    sync, gthread = sync_and_gthread(planned(0.005))
    unheld = resized([sync, gthread], {"sized-proposed": measured}, DURATION_S, 0.0)
    assert unheld is not None and unheld.family.name == "gthread"
    # Where that very configuration's proof failed requests at RATE (overloaded: its CPU left out,
    # its plan's stands), its family is searched no more: sync, on what its proof measured.
    gthread = dataclasses.replace(
        gthread, summary=gthread.summary.model_copy(update={"label": unheld.summary.label})
    )
    runs = {"sized-proposed": measured, "sized-gthread": [overloaded(run)]}
    again = resized([sync, gthread], runs, DURATION_S, 0.0)
    assert again is not None and again.family.name == "sync", again and again.summary.label
    assert again.summary.resized_on is not None and again.summary.resized_on > 2.5  # 20 ms burnt, 5 planned
    # Another of its configurations overloaded, or this one only far above its rate: not held.
    other = dataclasses.replace(gthread, summary=gthread.summary.model_copy(update={"label": "another"}))
    assert (elsewhere := resized([sync, other], runs, DURATION_S, 0.0)) is not None
    assert elsewhere.family.name == "gthread"
    high = {**overloaded(run), "offered_per_s": 2 * unheld.summary.sustainable_per_s}
    higher = resized([sync, gthread], {**runs, "sized-gthread": [high]}, DURATION_S, 0.0)
    assert higher is not None and higher.family.name == "gthread"
    # One family only: where its proposal is held, nothing is sized again.
    alone = resized([sync], {"sized-proposed": measured}, DURATION_S, 0.0)
    assert alone is not None
    held = Planned(
        sync.summary.model_copy(update={"role": "fixed", "label": alone.summary.label}),
        sync.family,
        sync.memory,
    )
    failing = {"sized-proposed": measured, "sized-fixed-sync": [overloaded(run)]}
    assert resized([sync, held], failing, DURATION_S, 0.0) is None


def test_where_the_server_and_the_client_spent_more_than_planned_the_proposal_is_sized_again(
    a_quarter_planned: Kept,
) -> None:
    # The run's requests as if each had said 1 ms of its 20 (a server's own work no header holds, as
    # a light path's wake-ups between requests): planned at 1 ms, the requests' own CPU stands, the
    # server's is the rest of the processes' CPU, and a local client's is what the run's client spent.
    (run,) = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    light = [
        dataclasses.replace(s, cpu_s=0.001) if s.cpu_s is not None else s for s in decode(run["samples"])
    ]
    runs = {"sized-proposed": [{**run, "samples": encode(light)}]}
    (sync,) = [f for f in families("wsgi", DEFAULT_VALUES)[0] if f.name == "sync"]
    client = 0.0001  # the plan's local client, a tenth of a millisecond a request
    kind = planned(0.001).kinds[0].model_copy(update={"client_s": client})
    plan = planned(0.001).model_copy(update={"kinds": [kind]})
    again = resized([Planned(plan, sync, Memory(0, 64 << 20))], runs, DURATION_S, kept_per_s=0.0)
    assert again is not None and again.summary.role == "resized"
    (moved,) = again.summary.kinds
    server = overhead_per_request(runs["sized-proposed"])
    assert server is not None and server > 0.015  # the 19 ms no header held
    sent = len(decode(run["samples"]))
    spent = machine.use_recorded(run["machine"]).tester_s / sent
    assert moved.overhead_s == pytest.approx(server) and moved.client_s == pytest.approx(spent)
    assert moved.mean_cpu_s == pytest.approx(0.001)  # the requests' own as planned
    assert again.summary.resized_on == pytest.approx((0.001 + server + spent) / (0.001 + 0.0003 + client))
    # Sized on all of it: no more than two cores serve of it (on the plan's 1.4 ms, over 1,400/s).
    assert again.summary.sustainable_per_s <= 2 / (0.001 + server + spent)


def test_a_target_rate_met_in_a_proof_is_sized_again_where_minutes_of_it_miss_on_the_cpu_used(
    a_quarter_planned: Kept, tmp_path: Path
) -> None:
    # The proof's records as the lab's raw log holds them, the plan asking RATE= at its level's rate:
    # its run met p99 1 s. Where the sustained figure on the CPU the run used holds, the proposal
    # stands; where it misses (here written so), the lab sizes again on that CPU.
    rated = planned(0.005, sustained_s=60)
    rated = rated.model_copy(update={"objective": rated.objective.model_copy(update={"rate_per_s": RATE})})
    (run,) = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    (sync,) = [f for f in families("wsgi", DEFAULT_VALUES)[0] if f.name == "sync"]
    proposal = [Planned(rated, sync, Memory(0, 64 << 20))]

    def sized_again_with(sustained_p99_s: float) -> Planned | None:
        directory = tmp_path / f"{sustained_p99_s}"
        log = RawLog(directory)
        plan = {"target": "sized-proposed", "scenario": SHAPE.name, "kind": "plan", "client": 0}
        log.write("scenario", **plan, plan=rated.model_dump(mode="json"))
        held = {**run["sustained"], "p99_s": sustained_p99_s}
        fields = {k: v for k, v in run.items() if k != "type"}
        log.write("scenario", **{**fields, "target": "sized-proposed", "sustained": held})
        log.close()
        return sized_again(LabSettings(), directory, proposal, DURATION_S)

    assert sized_again_with(0.5) is None
    again = sized_again_with(1.5)
    assert again is not None and again.summary.role == "resized" and again.summary.resized_on is not None


def test_a_re_sizing_stops_the_processes_as_often_as_the_proofs_counted(a_quarter_planned: Kept) -> None:
    # The run's answers as if each process had run a full collection of 5 ms every tenth of its
    # answers (their Server-Timing's lab-gc): the plan counted none, the re-sizing takes the proofs'.
    (run,) = [r for r in a_quarter_planned.records if r.get("kind") == "run"]
    answered: dict[int | None, int] = {}

    def counting(sample: Sample) -> Sample:
        seen = answered[sample.pid] = answered.get(sample.pid, -1) + 1
        return dataclasses.replace(sample, collections=seen // 10, collections_cpu_s=0.005 * (seen // 10))

    counted = [counting(s) if s.pid is not None else s for s in decode(run["samples"])]
    runs = {"sized-proposed": [{**run, "samples": encode(counted)}]}
    (sync,) = [f for f in families("wsgi", DEFAULT_VALUES)[0] if f.name == "sync"]
    again = resized([Planned(planned(0.005), sync, Memory(0, 64 << 20))], runs, DURATION_S, kept_per_s=0.0)
    assert again is not None
    (moved,) = again.summary.kinds
    per_pid = [n for pid, n in answered.items() if pid is not None]  # answers after each one's first
    assert moved.full_collections_per_request == pytest.approx(sum(n // 10 for n in per_pid) / sum(per_pid))
    assert moved.full_collection_cpu_s == pytest.approx(0.005)
