"""The pod a configuration is sized for, and the memory each configuration holds in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labtester.sizing.document import PodSize

MIB = 1 << 20
THREAD_BYTES = MIB // 2  # a Python thread's stack touched and its state, where none was measured
CONNECTION_BYTES = MIB // 8  # a greenlet and its connection's buffers


@dataclass(frozen=True)
class Pod:
    cores: float
    memory_bytes: int
    client_cpu_s: float = 0.0  # the load client's CPU per request where it shares the cores (locally)

    @classmethod
    def of(cls, size: PodSize) -> Pod:
        """The pod a plan's `PodSize` (results.json's) describes."""
        return cls(size.cores, size.memory_bytes, size.client_cpu_s)

    def cores_left(self, rate_per_s: float) -> float:
        """The cores the server has at this rate, once the client took its share."""
        return max(0.05 * self.cores, self.cores - rate_per_s * self.client_cpu_s)


@dataclass(frozen=True)
class Memory:
    """What a configuration holds: its master, then per process and per request slot."""

    master_bytes: int
    process_bytes: int
    slot_bytes: int = THREAD_BYTES

    def of(self, processes: int, per_process: int | None) -> int:
        slots = 1 if per_process is None else per_process
        return self.master_bytes + processes * (self.process_bytes + max(0, slots - 1) * self.slot_bytes)
