"""The sizing's inputs from the flows: what a process can use on a path is the work's, so it is
taken from every configuration that measured the path, not only the family's own (whose measured
configuration, with as many processes as cores, can never show more than one core each)."""

from __future__ import annotations

import pytest

from labtester.proposal.costs import kinds_of
from labtester.scenarios.flow.analyse import PathFlow
from labtester.scenarios.flow.cost import PathAccount
from labtester.sizing.families import RULES, Family
from tests.tester.test_flow_conclusion import conclude, flow, results


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
