"""A request's CPU against the company it keeps in its process: how many other requests of the
same process were in the app beside it, on average over its time there.

A kind's CPU per request is not one figure. The Django shop's /report (a sync view, as ASGI) used
105 ms alone and 251 ms beside 44 others in a one-worker uvicorn flow of 50 users; datasette's
50-row page went the other way, 341 ms alone and 172-185 ms beside 2 to 25 others. The flows
measure mostly in company, the rates a proposal serves mostly alone or beside one or two, so the
CPU the plan drew from the flows was 0.56-0.59x (Django) and 1.54x (datasette) what the proofs'
requests used. So each kind carries its CPU by company (`curve_of`, from what spreads.py reads: the
requests alone before each flow's ramp, and the flow's, or its mix's, requests), and the
simulation draws each request's CPU at the company it meets when it starts (events.py): the
curve's axis is the time-weighted company over a request's stay, the simulation's the company at
its start; at steady state the two agree on average, less so in a burst or from an idle start.
The curve is piecewise linear in log(1 + company), flat beyond the company measured.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from labtester.load import Sample

# Bucket edges of company (others beside, time-weighted): alone, one, two, about 4, 8, 16, more.
EDGES = (0.5, 1.5, 3.0, 6.0, 12.0, 24.0)
FEWEST_AT = 3  # requests behind one point of the curve (a flow's baseline holds 4 alone)

Curve = tuple[tuple[float, float], ...]  # (company, mean CPU), by company


def curve_of(measured: Sequence[tuple[float, float]]) -> Curve:
    """(company, CPU) pairs to the curve: per bucket of company with FEWEST_AT requests or more,
    their mean company and mean CPU; none where fewer than two buckets have that many."""
    buckets: dict[int, list[tuple[float, float]]] = {}
    for company, cpu in measured:
        buckets.setdefault(bisect.bisect_right(EDGES, company), []).append((company, cpu))
    points = tuple(
        (sum(c for c, _ in pairs) / len(pairs), sum(cpu for _, cpu in pairs) / len(pairs))
        for _, pairs in sorted(buckets.items())
        if len(pairs) >= FEWEST_AT
    )
    return points if len(points) >= 2 else ()


def at(curve: Curve, company: float) -> float:
    """The curve's CPU at this company: interpolated in log(1 + company), flat beyond its ends."""
    if company <= curve[0][0]:
        return curve[0][1]
    if company >= curve[-1][0]:
        return curve[-1][1]
    upper = bisect.bisect_right(curve, company, key=lambda point: point[0])
    (c0, cpu0), (c1, cpu1) = curve[upper - 1], curve[upper]
    x, x0, x1 = math.log1p(company), math.log1p(c0), math.log1p(c1)
    return cpu0 + (cpu1 - cpu0) * (x - x0) / (x1 - x0)


def _span(s: Sample) -> tuple[int, float, float] | None:
    """(process, start, end) of a request's time in the app, where its response said them."""
    if s.pid is None or s.started_at is None or not s.app_s:
        return None
    return s.pid, s.started_at, s.started_at + s.app_s


class Company:
    """Requests' times in the app by process, to ask who kept one company there. Processes are
    told apart by pid alone: one server's, as a flow or a proof runs (replicas could share pids)."""

    def __init__(self, requests: Sequence[Sample]) -> None:
        self.spans: dict[int, list[tuple[float, float, int]]] = {}  # by process: (start, end, id)
        for s in requests:
            if (place := _span(s)) is not None:
                self.spans.setdefault(place[0], []).append((place[1], place[2], id(s)))
        self.longest: dict[int, float] = {}  # by process: the longest time one request was in the app
        self.members = {id_ for spans in self.spans.values() for _, _, id_ in spans}
        self.counts: dict[int, _Counted] = {}  # by process: how many were in the app, over time
        for pid, spans in self.spans.items():
            spans.sort()  # by start
            self.longest[pid] = max(b - a for a, b, _ in spans)
            self.counts[pid] = _Counted(spans)

    def _beside(self, request: Sample) -> tuple[float, float, list[tuple[float, float]]] | None:
        """The request's start and end in the app, and the others' times within them."""
        if (place := _span(request)) is None:
            return None
        pid, start, end = place
        spans = self.spans.get(pid, [])
        # Only those that started within the longest time in the app before its end can reach it.
        low = bisect.bisect_left(spans, start - self.longest.get(pid, 0.0), key=lambda span: span[0])
        near = spans[low : bisect.bisect_left(spans, end, key=lambda span: span[0])]
        return (
            start,
            end,
            [(max(start, a), min(end, b)) for a, b, other in near if other != id(request) and b > start],
        )

    def share(self, request: Sample) -> float | None:
        """The share of the request's time in the app that another of its process was in it too:
        the union of their overlaps, counted once however many kept it company."""
        if (beside := self._beside(request)) is None:
            return None
        start, end, overlaps = beside
        covered, reached = 0.0, start
        for a, b in sorted(overlaps):
            if b > reached:
                covered += b - max(a, reached)
                reached = b
        return covered / (end - start)

    def others(self, request: Sample) -> float | None:
        """How many others of its process were in the app beside it, on average over its time: the
        integral of how many were in it over its time, less its own (from running sums: a flow's
        one slow request put a light path's hundreds of neighbours in every other's window, and
        this was most of a plan's CPU there)."""
        if (place := _span(request)) is None:
            return None
        pid, start, end = place
        counted = self.counts.get(pid)
        inside = counted.between(start, end) if counted is not None else 0.0
        if id(request) in self.members:
            inside -= end - start
        return max(0.0, inside) / (end - start)


class _Counted:
    """How many of a process's requests were in the app at any time, and its running integral."""

    def __init__(self, spans: Sequence[tuple[float, float, int]]) -> None:
        steps = sorted([(a, 1) for a, _, _ in spans] + [(b, -1) for _, b, _ in spans])
        self.origin = steps[0][0] if steps else 0.0  # times from here: sums of small differences
        self.times: list[float] = []
        self.counts: list[int] = []  # in the app from each time on
        self.integrals: list[float] = []  # request-seconds in the app up to each time
        count, integral, previous = 0, 0.0, 0.0
        for at_s, change in steps:
            t = at_s - self.origin
            integral += count * (t - previous)
            count += change
            self.times.append(t)
            self.counts.append(count)
            self.integrals.append(integral)
            previous = t

    def _up_to(self, at_s: float) -> float:
        t = at_s - self.origin
        k = bisect.bisect_right(self.times, t) - 1
        return 0.0 if k < 0 else self.integrals[k] + self.counts[k] * (t - self.times[k])

    def between(self, start: float, end: float) -> float:
        """Request-seconds in the app from `start` to `end`."""
        return self._up_to(end) - self._up_to(start)
