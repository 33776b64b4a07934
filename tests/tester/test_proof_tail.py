"""A proof run says where its slowest requests spent their time (sizing/tail.py): sent, before the
app (the server's queue among it), in the app, after it, on the one clock the local lab's client
and server share. A real gunicorn sync server, a 40-ms wait a request: under its workers the
slowest spent it in the app; offered half again what its workers serve, before it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from labtester.load import Sample
from labtester.proposal.openloop import offer
from labtester.sizing.quantiles import percentile
from labtester.sizing.tail import TailSplit, tail_split
from tests.conftest import Configured

WAIT_S = 0.04
WAIT = f"/test/io-bound/{WAIT_S * 1000:.0f}"
CLOCKS_S = 0.002  # two readings of one clock, in two processes, apart by less than this


@dataclass(frozen=True)
class Kind:
    name: str
    weight: float


def _split(url: str, rate_per_s: float) -> TailSplit:
    samples, _, origin_at = asyncio.run(offer(url, [Kind(WAIT, 1.0)], rate_per_s, 3.0, 30.0))
    assert all(s.ok for s in samples)
    split = tail_split(samples, origin_at)
    assert split is not None and split.requests >= 1
    # Its requests are the run's slowest: a p99's own, at or above it, about one in a hundred.
    p99 = percentile(sorted(s.from_schedule_s for s in samples), 99)
    assert split.latency_s >= p99 and split.requests <= max(1, 0.02 * len(samples)), (split, p99)
    assert tail_split(samples, None) is None  # no shared clock (a cluster's): not split
    # Each part measured on its own clock reading is a time, never negative beyond the clock's grain.
    for part in (split.sending_s, split.before_app_s, split.in_app_s, split.after_app_s):
        assert part > -CLOCKS_S, split
    assert split.in_app_s >= WAIT_S  # the app's own wait is in it
    return split


def test_a_queue_before_the_app_and_a_wait_in_it_are_told_apart(configured: Configured) -> None:
    target = configured("flask-1x")  # gunicorn sync: a worker per core, one request at a time each
    workers = httpx.get(f"{target.url}/info", timeout=30).json()["workers"]
    calm = _split(target.url, 0.1 * workers / WAIT_S)
    over = _split(target.url, 1.5 * workers / WAIT_S)
    # Half again what the workers serve: a backlog builds over the run, before the app, where the
    # calm run's slowest waited far less there.
    assert over.before_app_s > 5 * over.in_app_s, over
    assert over.before_app_s > 5 * calm.before_app_s, (over, calm)


def sample(at_s: float, latency_s: float, started_after_send_s: float | None, status: int = 200) -> Sample:
    started = None if started_after_send_s is None else ORIGIN + at_s + started_after_send_s
    app = None if started is None else latency_s / 2
    return Sample("/p", at_s, at_s, latency_s, status, None, started_at=started, app_s=app)


ORIGIN = 1_800_000_000.0


def test_a_split_needs_one_clock_and_the_slowest_stamped() -> None:
    fast = [sample(i / 100, 0.001, 0.0002) for i in range(198)]
    slow = [sample(2.0, 0.050, 0.010), sample(2.1, 0.060, 0.020)]
    split = tail_split(fast + slow, ORIGIN)
    assert split is not None and split.requests == split.slowest == 2
    assert abs(split.before_app_s - 0.015) < 1e-6 and abs(split.in_app_s - 0.0275) < 1e-6
    assert abs(split.after_app_s - (0.055 - 0.015 - 0.0275)) < 1e-6
    # One request stamped late (its worker preempted between two readings): still split.
    assert tail_split([*fast[1:], sample(0.0, 0.001, -0.005), *slow], ORIGIN) is not None
    # Every app called 5 ms before its request was sent: the client's clock is not the server's.
    behind = [
        sample(s.scheduled_s, s.latency_s, (s.started_at or 0.0) - ORIGIN - s.sent_s - 0.005)
        for s in fast + slow
    ]
    assert tail_split(behind, ORIGIN) is None
    # Of the 10 slowest (the p99 of 910 falls between the 900 fast and them), 4 stamped by the app's
    # call and 6 answered by a layer before it (a server's own 503): not split on the few stamped;
    # 6 stamped of the 10: split on those 6.
    many = [sample(i / 500, 0.001 + i * 1e-7, 0.0002) for i in range(900)]
    slowest = [sample(2.0 + i / 100, 0.050 + i / 1000, 0.010) for i in range(10)]
    unstamped = [sample(s.scheduled_s, s.latency_s, None, 503) for s in slowest]
    assert tail_split(many + slowest[:4] + unstamped[4:], ORIGIN) is None
    half = tail_split(many + slowest[:6] + unstamped[6:], ORIGIN)
    assert half is not None and (half.requests, half.slowest) == (6, 10), half
    # Every answer at the client before the app's headers: the server's clock ahead, not split.
    ahead = [
        sample(s.scheduled_s, s.latency_s, (s.started_at or 0.0) - ORIGIN - s.sent_s + 0.005)
        for s in fast + slow
    ]
    assert tail_split(ahead, ORIGIN) is None
