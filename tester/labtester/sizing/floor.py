"""The floor: the time a request alone takes beyond the model's serving of it (its CPU and the
server's, the load client's on the same cores: events.py), as measured where the proof runs.

It is what no core of the model holds: the client's timer waking late, the loopback, the
server's accept and wake-ups. On the Flask shop's /products/7 under granian-wsgi 2 x 1
(2026-11-30), requests alone took 1.3-1.8 ms at the median where the model served them in 0.4;
added to the model's latencies (the client as a thread, events.py), the median at 2,107/s and
2,634/s came to 1.47 and 1.53 ms against 1.29 and 1.55 measured, and the p99 to 3.5 ms against
4.6 and 7.1, where the model alone said 1.0 and 1.3 (and five runs of one rate measured 6.3 to 11.6:
one run's p99 at thousands a second moves by 1.8x on two shared cores).
It is measured per configuration, alone: a short run of the mix at a low rate before its proof
(proposal/alone.py), its latencies against the model's of the same sends, quantile by quantile:
alone, the model's latencies barely spread (the requests seldom meet), so each quantile's
difference is the floor's, which the model then adds to each request as a draw of its own. One
floor for every kind of the mix (a heavy kind's own error is in it too: its time dwarfs it).
The plan, before any proof, draws each family's from its fixed configurations' empty requests
alone (scenarios/flow/servingcost.py: evenly spaced, they seldom meet, so the model's time of each
is its CPU on the cores), and the default objective stands above it (proposal/costs.py)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from labtester.sizing.quantiles import percentile

POINTS = 200  # quantiles of the floor: its p99 is among the draws (40 would stop at the 98.75th)
FEWEST = 100  # fewer requests alone than this measure no floor
ALONE_SHARE = 0.2  # of a rate the configuration serves: requests that seldom meet one another
ALONE_REQUESTS = 400
ALONE_MOST_S = 3.0


class Floor(BaseModel):
    """A configuration's floor as its proof measured it (results.json): its requests alone, at
    `offered_per_s` for `duration_s`, and what each took beyond the model (`quantiles_s`, POINTS of
    them; empty where too few were answered)."""

    offered_per_s: float
    duration_s: float
    requests: int
    client_cpu_s: float  # the local client's CPU per request there (0: elsewhere)
    quantiles_s: list[float] = []

    def at(self, point: float) -> float | None:
        """Its `point`-th percentile (None: none measured)."""
        return percentile(self.quantiles_s, point) if self.quantiles_s else None


def floor_of(measured_s: Sequence[float], modelled_s: Sequence[float]) -> tuple[float, ...]:
    """The floor: each of POINTS evenly spaced quantiles of the measured latencies of requests
    alone less the same quantile of the model's latencies of the same sends, never below none.
    Empty where fewer than FEWEST were measured."""
    if len(measured_s) < FEWEST or not modelled_s:
        return ()
    measured, modelled = sorted(measured_s), sorted(modelled_s)
    points = [100 * (i + 0.5) / POINTS for i in range(POINTS)]
    return tuple(max(0.0, percentile(measured, p) - percentile(modelled, p)) for p in points)
