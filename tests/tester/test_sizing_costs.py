"""The sizing's inputs from the flows: what a process can use on a path is the work's, so it is
taken from every configuration that measured the path, not only the family's own (whose measured
configuration, with as many processes as cores, can never show more than one core each)."""

from __future__ import annotations

import pytest

from labtester.info import TargetInfo
from labtester.proposal.costs import close_of, kinds_of
from labtester.scenarios.flow.analyse import FlowSummary, PathFlow
from labtester.scenarios.flow.cost import PathAccount
from labtester.scenarios.flow.whole import slot_delay
from labtester.sizing.families import RULES, Family
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
