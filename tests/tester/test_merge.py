"""The merge joins each step's records across clients, and only across clients: a step a client
ran twice (a sweep level given twice) stays two runs, each joining every client's n-th record."""

from __future__ import annotations

from typing import Any

from labtester.assembly import merged


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
