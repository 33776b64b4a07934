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

# A proof's client holds at most this many requests unanswered, each on a connection of its own
# (its sends beyond them count as failed, not sent: a server that far behind has failed the
# objective already, and a backlog of given-up requests would load the next run).
MOST_OUTSTANDING = 500


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
    """Every configuration of the family within the pod's memory, smallest first; on greenlets,
    only those that accept every connection a proof's client may hold (`holds_the_clients`)."""
    most = max(1, round(family.rule.processes_per_core * pod.cores))
    found = [
        candidate_of(family, kinds, pod, memory, processes, per_process)
        for processes in range(1, most + 1)
        for per_process in family.per_process_choices()
        if memory.of(processes, per_process) <= pod.memory_bytes
        and holds_the_clients(family, processes, per_process)
    ]
    return sorted(found, key=lambda c: (c.memory_bytes, c.processes))


def holds_the_clients(family: Family, processes: int, per_process: int | None) -> bool:
    """Whether its workers accept every connection a proof's client may open. A gevent worker holds
    a connection for as long as the client keeps it alive, idle or not, and accepts no more past its
    count: a connection beyond waits unaccepted until a kept-alive one idles out (gunicorn's
    keepalive, 2 s), a cliff where threads would queue. Measured on httpbin (/json, /delay/0.05) at
    2,050/s: 2 x 100 left 88 requests waiting 0.5-3.1 s as the client's connections passed 200, and
    served 1,863/s; 2 x 250 served 2,027/s, none over 0.2 s. Conservative at low rates, where the
    client holds a few: the memory of every connection is counted, each greenlet made only as used."""
    if not family.rule.greenlets or per_process is None:
        return True
    return processes * per_process >= MOST_OUTSTANDING


def _cpu_share(kinds: Sequence[RequestKind], pod: Pod) -> float:
    """How much more CPU a request costs on the pod's cores once the client's share is counted."""
    demand = mean_of(kinds, "demand_s")
    return (demand + mean_of(kinds, "client_s")) / demand if demand > 0 else 1.0
