"""The server's own CPU per request over a proof's warm-up (proposal/warmup.py): its processes' CPU
beyond what its requests used by the time it was read, each request counted by the share of its
time in the app that had passed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from labtester.load import Sample
from labtester.proposal.warmup import Warmup
from tests.tester.test_proof_collected import gthread_plan

ORIGIN = 1_000.0  # the epoch of the run's clock, as the server stamps its requests


def requests() -> Iterator[Sample]:
    # 100 answered in the warm-up's 4 s, 2 ms of CPU each; one half through its 100 ms in the app
    # (40 ms of CPU) as the CPU is read at 4 s; one that reached the app after.
    for i in range(100):
        sent_s = i * 0.04
        yield Sample("/json", sent_s, sent_s, 0.003, 200, None, 0.002, 0.002, started_at=ORIGIN + sent_s)
    yield Sample("/json", 3.95, 3.95, 0.2, 200, None, 0.040, 0.100, started_at=ORIGIN + 3.95)
    yield Sample("/json", 4.5, 4.5, 0.003, 200, None, 0.002, 0.002, started_at=ORIGIN + 4.5)


def warmed_up(server_cpu_s: float | None) -> Warmup:
    read = iter([0.0, server_cpu_s])  # the serving processes' CPU at the warm-up's start and end
    warmup = Warmup(gthread_plan(0.0), 100.0, 20.0, lambda: next(read))
    warmup.end(lambda: 4.0)
    return warmup


def test_a_request_at_work_as_the_cpu_is_read_counts_by_the_share_of_it_done() -> None:
    own = warmed_up(1.0).own_overhead(list(requests()), ORIGIN)
    assert own == pytest.approx((1.0 - 100 * 0.002 - 0.5 * 0.040) / 100.5)


def test_without_the_server_s_stamps_the_requests_answered_by_then_count_whole() -> None:
    unstamped = [dataclasses.replace(s, started_at=None) for s in requests()]
    whole = pytest.approx((1.0 - 100 * 0.002) / 100)
    assert warmed_up(1.0).own_overhead(unstamped, ORIGIN) == whole
    # A server on another machine: its stamps are on another clock, so not read.
    assert warmed_up(1.0).own_overhead(list(requests()), None) == whole


def test_where_the_processes_cpu_was_not_read_or_nothing_was_done_there_is_none() -> None:
    assert warmed_up(None).own_overhead(list(requests()), ORIGIN) is None  # not read
    assert warmed_up(0.0).own_overhead(list(requests()), ORIGIN) is None  # read as nothing
    at_work = list(requests())[100:101]  # half a request done: not a figure per request
    assert warmed_up(1.0).own_overhead(at_work, ORIGIN) is None
