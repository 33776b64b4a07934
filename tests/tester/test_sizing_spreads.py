"""The spreads sizing draws from, read back from flow records: a path's CPU from its requests under
load in the family's own configurations, its wait from its requests alone, net of their time on a
run queue (a busy machine's delay for a core is not the path's wait)."""

from __future__ import annotations

import pytest

from labtester.load import Sample
from labtester.proposal.spreads import spread_of
from labtester.rawlog import Record
from labtester.scenarios.common import encode


def served(cpu_s: float, app_s: float, queued_s: float | None) -> Sample:
    return Sample("/p", 0.0, 0.0, app_s, 200, None, cpu_s=cpu_s, app_s=app_s, queued_s=queued_s)


def flow(target: str, loaded: list[Sample], alone: list[Sample]) -> Record:
    return {
        "type": "scenario", "scenario": "flow", "kind": "run", "target": target, "endpoint": "/p",
        "samples": encode(loaded), "baseline": encode(alone),
    }  # fmt: skip


def test_cpu_under_load_is_the_familys_and_the_wait_alone_is_net_of_the_run_queue() -> None:
    # 20 ms of CPU that waited 30 ms for a core beside another process, and waits 50 ms itself.
    alone = [served(0.02, 0.1, 0.03)] * 6
    records = [
        flow("gthread", [served(0.02, 0.2, 0.0)] * 10 + [served(0.06, 0.2, 0.0)] * 10, alone),
        flow("sync-1x", [served(0.5, 0.6, 0.0)] * 20, alone),  # another family's: not this one's CPU
    ]
    measured = spread_of(records, "/p", ["gthread"])
    assert sum(measured.cpu_s) / len(measured.cpu_s) == pytest.approx(0.04)
    assert min(measured.cpu_s) == pytest.approx(0.02) and max(measured.cpu_s) == pytest.approx(0.06)
    assert measured.wait_s and all(w == pytest.approx(0.05) for w in measured.wait_s)


def test_without_a_queue_measured_the_wait_is_the_apps_time_less_its_cpu() -> None:
    records = [flow("gthread", [served(0.02, 0.1, None)] * 10, [served(0.02, 0.1, None)] * 6)]
    assert all(w == pytest.approx(0.08) for w in spread_of(records, "/p", ["gthread"]).wait_s)
    assert spread_of(records, "/other", ["gthread"]).cpu_s == ()  # nothing measured: no spread


def test_cpu_under_load_holds_what_was_charged_after_the_headers() -> None:
    # A streamed body: 10 ms in each header, and the processes charged 30 ms a request in all.
    record = flow("gthread", [served(0.01, 0.1, None)] * 10, [served(0.01, 0.1, None)] * 6)
    record["charged_cpu_s"] = 0.3
    measured = spread_of([record], "/p", ["gthread"])
    assert measured.cpu_s and all(c == pytest.approx(0.03) for c in measured.cpu_s)


def test_cpu_is_what_the_path_cost_in_the_familys_mix_where_it_ran_one() -> None:
    # 20 ms under its own flow, 30 ms beside the mix's other requests (in its configuration's mix,
    # as the proof sends it); another path's and another family's mix requests are not its.
    alone = [served(0.02, 0.1, None)] * 6
    other = Sample("/q", 0.0, 0.0, 0.1, 200, None, cpu_s=0.5, app_s=0.5)
    mix = {
        "type": "scenario", "scenario": "flow", "kind": "run", "target": "gthread", "mix": True,
        "samples": encode([served(0.03, 0.2, None)] * 10 + [other] * 10),
    }  # fmt: skip
    elsewhere = {**mix, "target": "sync-1x", "samples": encode([served(0.5, 0.6, None)] * 10)}
    records = [flow("gthread", [served(0.02, 0.2, None)] * 10, alone), mix, elsewhere]
    measured = spread_of(records, "/p", ["gthread"])
    assert measured.cpu_s and all(c == pytest.approx(0.03) for c in measured.cpu_s)
    # No mix ran (one path, an older document): the path's own flow.
    assert all(c == pytest.approx(0.02) for c in spread_of(records[:1], "/p", ["gthread"]).cpu_s)


def test_the_share_of_cpu_elsewhere_is_the_familys_requests_on_the_path_and_none_unsaid() -> None:
    # 40 ms a request: 10 of it in a thread under the path's own flow, 30 in the mix: (10 x 10 +
    # 10 x 30) / (20 x 40) = 0.5; another path's and another family's requests (all elsewhere) are
    # not its; what the processes charged after the headers (20 ms a request: a streamed body, on
    # the loop) is of its CPU; a server that did not say where its CPU ran says nothing.
    def handed(path: str, cpu_s: float, elsewhere_s: float | None) -> Sample:
        return Sample(path, 0.0, 0.0, 0.1, 200, None, cpu_s=cpu_s, app_s=0.1, elsewhere_s=elsewhere_s)

    alone = [served(0.02, 0.1, None)] * 6
    mix = {
        "type": "scenario", "scenario": "flow", "kind": "run", "target": "uvicorn", "mix": True,
        "samples": encode([handed("/p", 0.04, 0.03)] * 10 + [handed("/q", 0.5, 0.5)] * 10),
    }  # fmt: skip
    other_family = flow("granian-asgi", [handed("/p", 0.04, 0.04)] * 10, alone)
    own = flow("uvicorn", [handed("/p", 0.04, 0.01)] * 10, alone)
    records = [own, mix, other_family]
    assert spread_of(records, "/p", ["uvicorn"]).elsewhere_share == pytest.approx(0.5)
    streamed = {**own, "charged_cpu_s": 10 * 0.06}  # 20 ms more a request, after its headers
    assert spread_of([streamed, mix], "/p", ["uvicorn"]).elsewhere_share == pytest.approx(0.4 / 1.2)
    unsaid = [flow("uvicorn", [handed("/p", 0.04, None)] * 10, alone)]
    assert spread_of(unsaid, "/p", ["uvicorn"]).elsewhere_share == 0.0
