"""The full garbage collections a family's requests set off, as its flows measured them, and each
request kind with them: the model stops a process for each (sizing/events.py).

A collection runs on whatever thread's allocation set it off, so its CPU is in some measured
figures, and not in the ones the model draws: the spread of what a path's requests used (evenly
spaced quantiles, the highest at the 98.75th percentile) leaves out the one request in thousands
that ran one. It is added as stops, not taken off anything: those that ran between requests are in
the server's own share too, and a kind's CPU by company (means, overlap.py) holds those of its
requests, counted twice there (at most the stops' CPU: 12 us a request below).
On httpbin's /json and /delay/0.05 under gthread (2 x 32 threads) a worker ran one about every
2,350 requests, 20 to 43 ms of CPU each, which as a stop of every thread held the slowest 1 %
(README, "Garbage collection stops a process").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labtester.sizing.kinds import RequestKind

if TYPE_CHECKING:
    from labtester.results import TargetResult
    from labtester.scenarios.flow.analyse import PathFlow


def collections_of(flows: Sequence[tuple[TargetResult, PathFlow]], path: str) -> tuple[float, float]:
    """The full collections per request on `path` over the family's flows of it, and the CPU of one
    over all its flows; (0, 0) where none was counted (a server without the counter, or none ran)."""
    count = cpu_s = 0.0
    on_path = requests = 0.0
    for _, flow in flows:
        account = flow.account
        if account is None or account.full_collections_per_request is None:
            continue
        ran = account.full_collections_per_request * account.requests
        count += ran
        cpu_s += ran * (account.full_collection_cpu_s or 0.0)
        if flow.endpoint == path:
            on_path, requests = on_path + ran, requests + account.requests
    if count <= 0 or requests <= 0:
        return 0.0, 0.0
    return on_path / requests, cpu_s / count


def with_collections(kind: RequestKind, per_request: float, cpu_s: float) -> RequestKind:
    """The kind with its full collections, each a stop of its process (its demand grows by theirs)."""
    if per_request <= 0 or cpu_s <= 0:
        return kind
    return dataclasses.replace(kind, full_collections_per_request=per_request, full_collection_cpu_s=cpu_s)
