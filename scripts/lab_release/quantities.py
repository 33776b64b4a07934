"""Kubernetes CPU and memory quantities, and the pair of them a pod requests or a node offers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_SUFFIXES = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
# A node's allocatable memory comes in Ki ("24684084Ki"); decimal kilo is a lower-case k.
_QUANTITY = re.compile(r"^([0-9.]+(?:[eE][0-9]+)?)(m|k|[KMGTPE]i|[MGTPE])?$")


def cpu_cores(quantity: str | int | float) -> float:
    """A Kubernetes CPU quantity in cores: "250m" -> 0.25, "2" -> 2.0."""
    text = str(quantity)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def memory_bytes(quantity: str | int | float) -> int:
    """A Kubernetes memory quantity in bytes: "512Mi", "1G", "1048576"."""
    match = _QUANTITY.match(str(quantity))
    if not match:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    number, suffix = match.groups()
    if suffix == "m":
        return int(float(number) / 1000)
    return int(float(number) * _SUFFIXES[suffix or ""])


def gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


@dataclass(frozen=True)
class Resources:
    """CPU (cores) and memory (bytes)."""

    cpu: float = 0.0
    memory: int = 0

    def __post_init__(self) -> None:
        # Millicores are what Kubernetes counts: sums compare exactly, without float residue.
        object.__setattr__(self, "cpu", round(self.cpu, 3))

    @classmethod
    def of(cls, quantities: dict[str, Any] | None) -> Resources:
        quantities = quantities or {}
        return cls(cpu_cores(quantities.get("cpu", 0)), memory_bytes(quantities.get("memory", 0)))

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory)

    def fits_in(self, room: Resources) -> bool:
        return self.cpu <= room.cpu and self.memory <= room.memory

    def __str__(self) -> str:
        return f"{self.cpu:.2f} CPU and {gib(self.memory)}"


def total(items: Iterable[Resources]) -> Resources:
    result = Resources()
    for item in items:
        result += item
    return result
