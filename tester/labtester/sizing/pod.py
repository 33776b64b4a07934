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

    @classmethod
    def of(cls, size: PodSize) -> Pod:
        """The pod a plan's `PodSize` (results.json's) describes."""
        return cls(size.cores, size.memory_bytes)


@dataclass(frozen=True)
class Memory:
    """What a configuration holds: its master, then per process and per request slot."""

    master_bytes: int
    process_bytes: int
    slot_bytes: int = THREAD_BYTES

    def of(self, processes: int, per_process: int | None) -> int:
        slots = 1 if per_process is None else per_process
        return self.master_bytes + processes * (self.process_bytes + max(0, slots - 1) * self.slot_bytes)
