"""What a search finds: a configuration sized at a rate, and the search's whole answer (search.py,
and with a target rate serving.py)."""

from __future__ import annotations

from dataclasses import dataclass

from labtester.sizing.candidates import Candidate
from labtester.sizing.pod import Pod


@dataclass(frozen=True)
class Sized:
    candidate: Candidate
    rate_per_s: float  # the most it sustains with its p99 within the objective (0: none)
    p99_s: float  # simulated at that rate
    sustained_p99_s: float | None = None  # over minutes of that rate, where the search worked it out
    proved: bool = False  # p99_s is a proof run's at rate_per_s (refined; a rate's smallest), not a search's


@dataclass(frozen=True)
class Found:
    proposed: Sized | None
    # Each family's best; with a target rate, its smallest serving it, or where every family's
    # requests alone miss the objective, its highest-ceiling configuration at no rate (serving.py).
    best_by_family: dict[str, Sized]
    # The search's own CPU: its thread's (time.thread_time). The process's counted numpy's BLAS
    # threads too, which spin on after an analysis: 0.10 s more of a 0.83 s search after a product.
    cpu_s: float
    simulations: int
    serves_rate: bool | None = None  # with a target rate: whether anything in the pod serves it
    needed: Sized | None = None  # where nothing in the pod serves it: the smallest on a pod that does
    needed_pod: Pod | None = None  # (and keeps it over minutes of it, where one walked does: held)
    # With a target rate: whether the proposal (or the needed) keeps the objective over minutes of
    # it (None: not asked, or a rate so high that minutes of it are not simulated); where not, how
    # many configurations the walk screened (held.py) and whether it walked every family to its end.
    held: bool | None = None
    tried: int = 0
    tried_all: bool = False
    fixed: Sized | None = None  # the team's configuration (the flows' pick), sized the same way
    contenders: frozenset[str] = frozenset()  # with no target rate: the families a proposal may come from
    minutes_cpu_s: float = 0.0  # of cpu_s, with no target rate: minutes of the proposal's rate (minutes.py)
