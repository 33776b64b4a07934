"""The configurations a search may propose: each one of a family's knobs within the pod, with what
it holds in memory and its ceiling. One constructor, so the team's own configuration (the flows'
pick) is rated exactly as the search rates its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labtester.sizing.configuration import Configuration
from labtester.sizing.drawn import mean_of
from labtester.sizing.families import Family
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import ceiling_per_s
from labtester.sizing.pod import Memory, Pod


@dataclass(frozen=True)
class Candidate:
    family: Family
    processes: int
    per_process: int | None
    memory_bytes: int
    ceiling_per_s: float

    @property
    def configuration(self) -> Configuration:
        return self.family.configuration(self.processes, self.per_process)

    @property
    def label(self) -> str:
        return self.family.label(self.processes, self.per_process)


def candidate_of(
    family: Family,
    kinds: Sequence[RequestKind],
    pod: Pod,
    memory: Memory,
    processes: int,
    per_process: int | None,
) -> Candidate:
    """The configuration with these knobs: its memory, and its ceiling on the cores the pod leaves
    the server once the client's CPU per request is counted beside the requests'."""
    config = family.configuration(processes, per_process)
    ceiling = ceiling_per_s(kinds, config, pod.cores / _cpu_share(kinds, pod))
    return Candidate(family, processes, per_process, memory.of(processes, per_process), ceiling)


def candidates(family: Family, kinds: Sequence[RequestKind], pod: Pod, memory: Memory) -> list[Candidate]:
    """Every configuration of the family within the pod's memory, smallest first."""
    most = max(1, round(family.rule.processes_per_core * pod.cores))
    found = [
        candidate_of(family, kinds, pod, memory, processes, per_process)
        for processes in range(1, most + 1)
        for per_process in family.per_process_choices()
        if memory.of(processes, per_process) <= pod.memory_bytes
    ]
    return sorted(found, key=lambda c: (c.memory_bytes, c.processes))


def _cpu_share(kinds: Sequence[RequestKind], pod: Pod) -> float:
    """How much more CPU a request costs on the pod's cores once the client's share is counted."""
    demand = mean_of(kinds, "demand_s")
    return (demand + mean_of(kinds, "client_s")) / demand if demand > 0 else 1.0
