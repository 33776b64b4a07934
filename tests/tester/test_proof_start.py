"""Which of the sizing's configurations start together before their proofs: in the plan's order,
as many as the memory share holds by their predicted memory, each at least alone. Their starting
and proving on real servers is test_sizing_app's."""

from __future__ import annotations

from typing import Any, cast

from labtester.proposal.plan import Planned
from labtester.proposal.starting import started_together
from labtester.sizing.document import Level, PodSize, SizedSummary
from labtester.sizing.families import Family
from labtester.sizing.pod import Memory

MB = 1 << 20


def planned(memory_mb: int, needs_pod: bool = False, offered: bool = True) -> Planned:
    """A planned configuration of this predicted memory; `needs_pod`: predicted only, never started;
    not `offered`: no rate to offer it (no proposal's either), never started."""
    pod = PodSize(cores=8, memory_bytes=1 << 40, source="a bigger pod") if needs_pod else None
    levels = [Level(offered_per_s=4.0, predicted_per_s=4.0, predicted_p99_s=0.3)] if offered else []
    fields: dict[str, Any] = {
        "memory_bytes": memory_mb * MB,
        "needs_pod": pod,
        "levels": levels,
    }  # all it reads
    summary = SizedSummary.model_construct(**fields)
    return Planned(summary, cast(Family, None), Memory(0, 0))  # the family only defines how it starts


def test_configurations_start_together_while_the_memory_share_holds_them() -> None:
    a, b, c = planned(100), planned(100), planned(100)
    assert started_together([a, b, c], 1000 * MB) == [[a, b, c]]
    assert started_together([a, b, c], 250 * MB) == [[a, b], [c]]


def test_one_configuration_beyond_the_share_starts_alone_and_the_plans_order_is_kept() -> None:
    a, big, b = planned(100), planned(500), planned(100)
    assert started_together([a, big, b], 250 * MB) == [[a], [big], [b]]


def test_a_configuration_only_predicted_takes_no_memory() -> None:
    a, needed, b = planned(100), planned(10**6, needs_pod=True), planned(100)
    assert started_together([a, needed, b], 250 * MB) == [[a, needed, b]]


def test_a_configuration_with_no_rate_to_offer_takes_no_memory() -> None:
    a, unoffered, b = planned(100), planned(10**6, offered=False), planned(100)
    assert started_together([a, unoffered, b], 250 * MB) == [[a, unoffered, b]]
