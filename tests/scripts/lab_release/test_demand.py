"""scripts/lab_release/demand.py: placing a release's pods onto the nodes' free room."""

from __future__ import annotations

from lab_release.demand import PodDemand, Room, place
from lab_release.quantities import Resources


def test_placement_is_per_node_not_just_the_sum() -> None:
    """Two nodes with 1 CPU free each hold two 1-CPU pods, not one 2-CPU pod."""
    free = [Room(name, Resources(1.0, 2**30)) for name in ("a", "b")]
    small = PodDemand("small", Resources(1.0, 2**20), Resources(1.0, 2**20))
    big = PodDemand("big", Resources(2.0, 2**20), Resources(2.0, 2**20))
    assert place([small, small], free) == []
    assert place([big], free) == [big]
