"""Where a proof run's slowest requests spent their time, measured: waiting to be sent (the
client's loop), before the app was called (connecting where a new connection was needed, the
network, the server's accept, read and hand-off to a thread, and the queue behind the process's
earlier requests), in the app (its CPU, its waits, its threads' time on a run queue), and after its
response headers (the rest of the answer, back to the client). The app's call is stamped on the
server's clock (Server-Timing `lab-start`), the sends on the client's: the split is made only where
both are one machine's clock (the local lab; on a cluster the tester's and the server's nodes may
differ by more than the parts), and dropped where a stamp says otherwise (an app called before its
request was sent, or its answer at the client before the app's headers).

On the Flask shop's light path (`/products/7`, 2026-11-30 13:35) the model predicted p99 1.6-2.3 ms
for the proposal and each family's best, and their proofs measured 8.1 ms to 0.25 s: their slowest
requests spent 0.4-3.2 ms in the app and most of the rest before it, in the server. That is what
the split names: time in the server the model's CPU does not account for (README: what part of it
is a queue and what a thread being handed its next request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from labtester.findings.wording import seconds
from labtester.sizing.quantiles import percentile

if TYPE_CHECKING:  # the results document reads no load client
    from labtester.load import Sample

SLOWEST = 99.0  # the percentile from which a request is one of the slowest (a p99's own requests)
STAMPED = 0.5  # of the slowest, at least this share stamped by the app's call, else no split
CLOCKS_S = 0.001  # one in a hundred apps called this long before its request was sent: two clocks


class TailSplit(BaseModel):
    """The mean of each part over the window's requests at or above its p99 (from the scheduled send)."""

    requests: int  # how many were split (the slowest answered with the app's call stamped)
    slowest: int = 0  # how many were the slowest (at or above the p99), stamped or not
    latency_s: float  # their mean latency from the scheduled send: the sum of the four parts
    sending_s: float  # scheduled -> sent: the client's loop
    before_app_s: float  # sent -> the app called: network, accept, read, hand-off, the process's queue
    in_app_s: float  # the app's call to its response headers
    run_queue_s: float  # of in_app_s, its threads' time on a run queue for a core
    after_app_s: float  # the response headers -> the whole response at the client

    def said(self) -> str:
        """`its slowest 1 % (469) took 23 ms on average: 1.8 ms to be sent, 19 ms before the app, ...`"""
        queued = self.run_queue_s >= 0.05 * self.in_app_s
        queue = f" (a run queue's {seconds(self.run_queue_s)})" if queued else ""
        count = f"{self.requests}" if self.requests == self.slowest else f"{self.requests} of {self.slowest}"
        return (
            f"its slowest {100 - SLOWEST:g} % ({count}) took {seconds(self.latency_s)} on average: "
            f"{seconds(self.sending_s)} to be sent, {seconds(self.before_app_s)} before the app, "
            f"{seconds(self.in_app_s)} in it{queue}, {seconds(self.after_app_s)} after it"
        )


def tail_split(samples: Sequence[Sample], origin_at: float | None) -> TailSplit | None:
    """The split of `samples`' slowest (those with a status, as their p99 is taken), on the run's
    client clock started at `origin_at` (epoch seconds); None where that clock is not the server's
    (no `origin_at`, or one in a hundred of the run's apps called before its request was sent or
    answered after its answer arrived: a clock behind or ahead, not one request's stamp) or fewer
    than STAMPED of the slowest were stamped (answered by a layer before the app: a server's 503)."""
    answered = [s for s in samples if s.status is not None]
    if origin_at is None or not answered:
        return None
    stamped_all = [s for s in answered if s.started_at is not None and s.app_s is not None]
    around = [_around_app(s, origin_at) for s in stamped_all]  # (before the app, after it) each
    if not around or any(percentile(sorted(a[side] for a in around), 1) < -CLOCKS_S for side in (0, 1)):
        return None
    edge = percentile(sorted(s.from_schedule_s for s in answered), SLOWEST)
    slowest = sum(1 for s in answered if s.from_schedule_s >= edge)
    split = [(s, a[0]) for s, a in zip(stamped_all, around, strict=True) if s.from_schedule_s >= edge]
    if not split or len(split) < STAMPED * slowest:
        return None
    stamped = [s for s, _ in split]
    n = len(stamped)
    sending = sum(s.sent_s - s.scheduled_s for s in stamped) / n
    before = sum(b for _, b in split) / n
    in_app = sum(s.app_s or 0.0 for s in stamped) / n
    latency = sum(s.from_schedule_s for s in stamped) / n
    return TailSplit(
        requests=n,
        slowest=slowest,
        latency_s=latency,
        sending_s=sending,
        before_app_s=before,
        in_app_s=in_app,
        run_queue_s=sum(s.queued_s or 0.0 for s in stamped) / n,
        after_app_s=latency - sending - before - in_app,
    )


def _around_app(sample: Sample, origin_at: float) -> tuple[float, float]:
    """Its time from its send to the app's call, and from the app's headers to the answer."""
    before = (sample.started_at or 0.0) - (origin_at + sample.sent_s)
    return before, sample.latency_s - before - (sample.app_s or 0.0)
