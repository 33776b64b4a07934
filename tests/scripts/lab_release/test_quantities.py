"""scripts/lab_release/quantities.py: Kubernetes quantities as run-lab's preflight reads them."""

from __future__ import annotations

from lab_release.quantities import cpu_cores, memory_bytes


def test_quantities() -> None:
    assert cpu_cores("250m") == 0.25 and cpu_cores("2") == 2.0
    assert memory_bytes("512Mi") == 512 * 2**20 and memory_bytes("1G") == 10**9
    assert memory_bytes("1048576") == 2**20
    # As a kind node reports its allocatable memory.
    assert memory_bytes("24684084Ki") == 24684084 * 2**10 and memory_bytes("3k") == 3000
