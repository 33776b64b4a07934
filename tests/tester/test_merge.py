"""The merge joins each step's records across clients, and only across clients: a step a client
ran twice (a sweep level given twice) stays two runs, each joining every client's n-th record."""

from __future__ import annotations

from typing import Any

import pytest

from labtester.assembly import merged
from labtester.info import KernelInfo, TargetInfo
from labtester.load import Sample
from labtester.scenarios.common import encode
from labtester.scenarios.flow.servingcost import COST_STEP, serving_cost
from labtester.scenarios.flow.whole import slot_delay
from tests.tester.test_flow_prediction import PATH, info

INFO = TargetInfo(
    name="t",
    framework="wsgi",
    server="gunicorn",
    workers=2,
    effective_cores=2,
    cores_source="test",
    kernel=KernelInfo(name="k", loops_per_iteration=1, max_iterations=1, work_cap_seconds=1),
    endpoints={},
)


def record(client: int, run: int, step: str = "c=2") -> dict[str, Any]:
    step_of = {"type": "scenario", "scenario": "sweep", "target": "t", "step": step}
    return {**step_of, "client": client, "run": run}


def test_a_step_run_twice_stays_two_runs_each_joined_across_clients() -> None:
    records = [record(0, 1), record(1, 1), record(0, 2), record(1, 2), record(0, 1, step="c=4")]
    joined = merged(records)
    assert [(r["step"], r["run"]) for r in joined] == [("c=2", 1), ("c=2", 2), ("c=4", 1)]


def test_records_of_other_kinds_pass_through_in_order() -> None:
    other = {"type": "census", "target": "t"}
    assert merged([other, record(0, 1), record(1, 1)]) == [other, record(0, 1)]


def test_a_flows_cost_record_keeps_its_empty_requests_through_the_merge() -> None:
    # As servingcost.measure writes it: the flow's records carry their spawns as "users", which the
    # merge recounts, so the empty requests' own count goes by another name.
    answers = [Sample("/healthz", i / 1000, i / 1000, 0.001, 200, None, cpu_s=0.0001) for i in range(100)]
    at = {"busy_s": 0.0, "steal_s": 0.0, "cpus": 2, "tester_s": 0.0}
    cost = {
        "type": "scenario",
        "scenario": "flow",
        "target": "t",
        "kind": "cost",
        "client": 0,
        "step": COST_STEP,
        "idle": {"cpu_before_s": 0.7, "cpu_after_s": 1.0, "wall_s": 3.0},  # 0.1 s a second at rest
        "cpu_before_s": 1.0,
        "cpu_after_s": 1.03,
        "charged_cpu_s": 0.0,
        "lab_reads_cpu_s": 0.01,
        "lab_reads": 100,
        "server_thread_cpu_s": None,
        "machine": {"before": {**at, "at": 0.0}, "after": {**at, "at": 0.1, "busy_s": 0.1, "tester_s": 0.02}},
        "local": True,
        "empty_users": 50,
        "empty": encode(answers),
    }
    (joined,) = merged([cost])
    serving = serving_cost(joined, INFO)
    assert serving.users == 50 and serving.requests == 100
    assert serving.empty_per_s == pytest.approx(100 / 0.1)  # from the first send to the last answer
    # The processes' 0.03 s over the 0.1 s, less what they spend at rest: 0.02 s on 100 requests.
    assert serving.process_cpu_per_request_s == pytest.approx(0.02 / 100)
    threads = info(2, execution="threads")
    threads.endpoints[PATH] = threads.endpoints[PATH].model_copy(update={"slots": 2})
    assert serving_cost(joined, threads).slot_delay_s is None  # threads keep their connections open
    # On two sync workers the delay is fitted once, here, and the flows and the sizing take it from
    # the cost (it was fitted again by each: analyse.py per flow, the sizing's close_of).
    workers = info(2, execution="workers")
    endpoint = workers.endpoints[PATH].model_copy(update={"slots": 2})
    workers.endpoints[PATH] = endpoint
    fitted = serving_cost(joined, workers)
    assert fitted.slot_delay_s is not None and fitted.slot_delay_s > 0
    assert fitted.slot_delay_s == slot_delay(fitted, endpoint, 50, workers.effective_cores)
    # A record from before the empty requests' users were kept: the flows' users, as the flows had.
    older = {k: v for k, v in joined.items() if k != "empty_users"}
    assert serving_cost(older, workers, flows_users=50).slot_delay_s == fitted.slot_delay_s
    assert serving_cost(older, workers).slot_delay_s is None  # no users known: none fitted
