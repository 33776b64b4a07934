"""The sizing's inputs from the flows: what a process can use on a path is the work's, so it is
taken from every configuration that measured the path, not only the family's own (whose measured
configuration, with as many processes as cores, can never show more than one core each)."""

from __future__ import annotations

import dataclasses

import pytest

from labtester.info import TargetInfo
from labtester.proposal.costs import close_of, family_floor, kinds_of, objective
from labtester.proposal.plan import _floors
from labtester.scenarios.flow.analyse import FlowSummary, PathFlow
from labtester.scenarios.flow.cost import PathAccount
from labtester.scenarios.flow.whole import slot_delay
from labtester.settings import LabSettings
from labtester.sizing.candidates import candidates
from labtester.sizing.families import RULES, Family
from labtester.sizing.floor import POINTS
from labtester.sizing.kinds import RequestKind
from labtester.sizing.pod import MIB, Memory, Pod
from labtester.sizing.quantiles import percentile
from labtester.sizing.search import Search
from tests.tester.test_flow_conclusion import conclude, flow, results
from tests.tester.test_flow_prediction import PATH, empty, info


def measured(path: str, cores_per_process: float) -> PathFlow:
    account = PathAccount(
        requests=120,
        process_cpu_per_request_s=0.041,
        request_cpu_per_request_s=0.04,
        server_cpu_per_request_s=0.001,
        no_request_cpu_per_request_s=0.0,
        share=1.0,
        cores_per_process=cores_per_process,
    )
    return flow(path, 12, 0.9, slots=None).model_copy(update={"account": account})


def family(name: str, server: str, target: str) -> Family:
    return Family(name, server, "asgi", RULES[(server, "asgi")], fixed_targets=(target,))


def test_a_familys_cores_per_process_are_the_most_any_configuration_measured_on_the_path() -> None:
    found = results(
        {
            # One worker used 1.3 cores on /a (SQL that releases the GIL) and 1.9 on /b.
            "uvicorn-1w": [measured("/a", 1.3), measured("/b", 1.9)],
            # Two workers on two cores: never more than one each, whatever the work.
            "granian-asgi-2w": [measured("/a", 1.0), measured("/b", 0.7)],
        },
        paths=["/a", "/b"],
    )
    conclusion = conclude(found)
    for each in (
        family("granian-asgi", "granian", "granian-asgi-2w"),
        family("uvicorn", "uvicorn", "uvicorn-1w"),
    ):
        kinds, _ = kinds_of(found, conclusion, each)
        # Each path its own figure: /b's 1.9 is not /a's.
        assert {k.name: k.cores_per_process for k in kinds} == {"/a": 1.3, "/b": 1.9}, each.name
        # The family's own CPU per request is still its own flows'.
        assert all(k.overhead_s == pytest.approx(0.001) for k in kinds)


def test_a_path_no_configuration_saw_use_more_than_a_core_takes_one() -> None:
    found = results({"uvicorn-2w": [measured("/a", 0.8)], "granian-asgi-2w": [measured("/a", 0.95)]})
    (kind,), _ = kinds_of(found, conclude(found), family("granian-asgi", "granian", "granian-asgi-2w"))
    assert kind.cores_per_process == 1.0


def test_a_sync_workers_close_is_the_delay_its_empty_requests_fitted_and_half_the_clients_turn() -> None:
    def target(execution: str) -> TargetInfo:
        served = info(2, execution=execution)
        served.endpoints[PATH] = served.endpoints[PATH].model_copy(update={"slots": 2})
        return served

    delay = slot_delay(empty(), target("workers").endpoints[PATH], 50, 2)
    assert delay is not None and delay > 0
    found = results({"sync-1x": [measured(PATH, 1.0)], "gthread": [measured(PATH, 1.0)]}, paths=[PATH])
    for each in found.targets:
        sync_worker = each.name == "sync-1x"
        each.info = target("workers" if sync_worker else "threads")
        fitted = empty(slot_delay_s=delay if sync_worker else None)  # as serving_cost fits it (test_merge)
        each.scenarios["flow"] = FlowSummary(flows=[measured(PATH, 1.0)], serving_cost=fitted)
    sync = Family("sync", "gunicorn", "wsgi", RULES[("gunicorn", "sync")], fixed_targets=("sync-1x",))
    gthread = Family(
        "gthread", "gunicorn", "wsgi", RULES[("gunicorn", "gthread")], fixed_targets=("gthread",)
    )
    assert close_of(found, sync) == pytest.approx(delay + 0.0002 / 2)  # the client's 0.2 ms a request
    (kind,), _ = kinds_of(found, conclude(found), sync)
    assert kind.close_s == close_of(found, sync)
    # Threads keep their connections open: nothing is held after the answer.
    assert close_of(found, gthread) == 0.0
    (threaded,), said = kinds_of(found, conclude(found), gthread)
    assert threaded.close_s == 0.0 and not said
    # Empty requests that never kept both workers busy fit no delay: said, and taken as none.
    sync_flow = next(t for t in found.targets if t.name == "sync-1x").scenarios["flow"]
    two_users = empty(users=2)
    unfit = slot_delay(two_users, target("workers").endpoints[PATH], 2, 2)
    sync_flow.serving_cost = two_users.model_copy(update={"slot_delay_s": unfit})
    assert unfit is None and close_of(found, sync) is None
    (unfitted,), said = kinds_of(found, conclude(found), sync)
    assert unfitted.close_s == 0.0 and any("no delay was fitted" in s for s in said), said


# A light path as httpbin's /json: 0.4 ms of the server's CPU, 0.1 ms of the client's; alone, the
# client saw each take 0.5 to 3 ms more (its timers, the loopback, the wake-ups).
LIGHT = RequestKind("/json", 1, 0.0003, 0.0, 0.0001, client_s=0.0001)
FLOOR = tuple(0.0005 + 0.0025 * i / (POINTS - 1) for i in range(POINTS))
GTHREAD = Family("gthread", "gunicorn", "wsgi", RULES[("gunicorn", "gthread")], fixed_targets=("gthread",))


def test_the_default_objective_stands_above_a_request_alone_as_the_client_saw_it() -> None:
    settings = LabSettings()
    without = objective(settings, [LIGHT])
    # On the work alone, 4x its 0.5 ms: below what a request alone took here at its p99.
    assert without.p99_s == pytest.approx(4 * (LIGHT.alone_s + LIGHT.client_s))
    assert without.p99_s < percentile(FLOOR, 99)
    goal = objective(settings, [LIGHT], FLOOR)
    alone = LIGHT.alone_s + LIGHT.client_s
    mean, slowest = alone + sum(FLOOR) / POINTS, alone + percentile(FLOOR, 99)
    assert goal.p99_s == pytest.approx(max(4 * mean, 2 * slowest)) and "beyond the work" in goal.why, goal
    assert goal.p99_s > 2 * percentile(FLOOR, 99)
    # A floor of rare long waits (a timer that wakes late): its p99 sets the objective, not its mean.
    tail = (0.0003,) * (POINTS - 4) + (0.004, 0.006, 0.008, 0.01)
    rare = objective(settings, [LIGHT], tail)
    assert rare.p99_s == pytest.approx(2 * (alone + percentile(tail, 99))) and "slowest" in rare.why, rare
    # Given, P99= stands as it is.
    assert objective(LabSettings(p99=0.001), [LIGHT], FLOOR).p99_s == 0.001


def test_a_familys_floor_is_its_fixed_configurations_and_the_plans_predictions_carry_it() -> None:
    found = results({"gthread": [measured(PATH, 1.0)], "sync-1x": [measured(PATH, 1.0)]}, paths=[PATH])
    higher = tuple(2 * q for q in FLOOR)
    for each, floor in zip(found.targets, (FLOOR, higher), strict=True):
        each.scenarios["flow"] = FlowSummary(
            flows=[measured(PATH, 1.0)], serving_cost=empty(floor_s=list(floor))
        )
    assert family_floor(found, GTHREAD) == pytest.approx(FLOOR)
    both = dataclasses.replace(GTHREAD, fixed_targets=("gthread", "sync-1x"))
    assert family_floor(found, both) == pytest.approx([1.5 * q for q in FLOOR])  # quantile by quantile
    uvicorn = Family("uvicorn", "uvicorn", "asgi", RULES[("uvicorn", "asgi")], fixed_targets=("uvicorn",))
    assert family_floor(found, uvicorn) == ()
    # A family whose empty requests measured none draws the least measured: the loopback's and the
    # client's are every family's.
    sync = dataclasses.replace(GTHREAD, name="sync", fixed_targets=("sync-1x",))
    floors = _floors(found, [GTHREAD, sync, uvicorn])
    assert floors["uvicorn"] == floors["gthread"] == pytest.approx(FLOOR) and floors["sync"] == pytest.approx(
        higher
    )
    # With next to no load, the search's p99 is a request's own time and the floor's p99 on top.
    pod, kinds = Pod(cores=2, memory_bytes=1 << 30), {"gthread": [LIGHT]}
    (candidate, *_) = candidates(GTHREAD, [LIGHT], pod, Memory(40 * MIB, 60 * MIB))
    rate = 0.01 * candidate.ceiling_per_s
    bare = Search(kinds, pod, 1.0, 20).p99(candidate, rate)
    floored = Search(kinds, pod, 1.0, 20, floors={"gthread": FLOOR}).p99(candidate, rate)
    assert bare < percentile(FLOOR, 99) < floored < bare + FLOOR[-1] + 1e-9, (bare, floored)
